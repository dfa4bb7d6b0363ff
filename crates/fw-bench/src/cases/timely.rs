//! TIMELY through the C ABI: `cc_timely_on_completion` per completion of
//! `fixtures/timely/*.csv` (`t_send_ns,t_complete_ns,bytes`), one flow per fixture, labelled by
//! the branch the call returns. Every simulated result (branch and rate) is checked against the
//! host build of `timely_cc` fed the same completions. All fixtures use the paper's parameters
//! (`cc_timely_params_default`); a trace that sets anything else is refused rather than measured
//! with the wrong configuration.
//!
//! Each fixture contributes at most `limit / fixtures` calls, from its start.

use std::path::Path;

use anyhow::{Context, Result, bail, ensure};
use timely_cc::{Branch, Completion, Config, Params, State};

use super::Ctx;
use crate::machine::Machine;
use crate::table::Sample;

/// `(t_send_ns, t_complete_ns, bytes)` of every row; checks the `# set` lines are the defaults.
fn parse(path: &Path) -> Result<Vec<(u64, u64, u32)>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let d = Params::DEFAULT;
    let mut rows = Vec::new();
    let mut header = false;
    for (no, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), no + 1);
        if let Some(c) = line.strip_prefix('#') {
            if let Some((k, v)) = c
                .trim()
                .strip_prefix("set ")
                .and_then(|s| s.split_once('='))
            {
                let v: f64 = v.trim().parse().with_context(at)?;
                let want = match k.trim() {
                    "line_rate_bps" => d.line_rate_bps as f64,
                    "min_rate_bps" => d.min_rate_bps as f64,
                    "max_rate_bps" => d.max_rate_bps as f64,
                    "init_rate_bps" => d.init_rate_bps as f64,
                    "t_low_ns" => f64::from(d.t_low_ns),
                    "t_high_ns" => f64::from(d.t_high_ns),
                    "min_rtt_ns" => f64::from(d.min_rtt_ns),
                    "alpha" => f64::from(d.alpha.num) / f64::from(d.alpha.den),
                    "beta" => f64::from(d.beta.num) / f64::from(d.beta.den),
                    "delta_bps" => d.delta_bps as f64,
                    "hai_n" => f64::from(d.hai_n),
                    "hai_after" => f64::from(d.hai_after),
                    k => bail!("{}: parameter {k} is not supported by the benchmark", at()),
                };
                ensure!(
                    v == want,
                    "{}: {} = {v} is not the default {want}",
                    at(),
                    k.trim()
                );
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        if !header {
            ensure!(
                line.trim() == "t_send_ns,t_complete_ns,bytes",
                "{}: not a TIMELY trace",
                at()
            );
            header = true;
            continue;
        }
        let f: Vec<&str> = line.trim().split(',').collect();
        ensure!(f.len() == 3, "{}: expected 3 fields", at());
        rows.push((
            f[0].parse().with_context(at)?,
            f[1].parse().with_context(at)?,
            f[2].parse().with_context(at)?,
        ));
    }
    Ok(rows)
}

fn branch_name(code: u32) -> Result<&'static str> {
    Ok(match code {
        0 => "skip",
        1 => "init",
        2 => "low",
        3 => "high",
        4 => "hai",
        5 => "inc",
        6 => "dec",
        c => bail!("a cc_timely entry point returned branch {c}"),
    })
}

/// Which C entry point a run calls.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Entry {
    /// `cc_timely_on_completion(cfg, flow, t_send, t_complete, bytes, &rate) -> branch`.
    CompletionOut,
    /// `cc_timely_on_completion_rv(cfg, flow, t_send, t_complete, bytes) -> {branch, rate_u}`.
    CompletionRv,
    /// `cc_timely_on_rtt(cfg, flow, rtt_q4, bytes) -> {branch, rate_u}`, with the RTT the host
    /// RTT engine computes (skipped events are not sent: the firmware would not have an RTT).
    Rtt,
}

/// `cc_timely_on_completion(cfg, flow, t_send_ns, t_complete_ns, bytes, &rate) -> CcTimelyBranch`.
pub fn run_on_completion(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run(m, ctx, Entry::CompletionOut)
}

/// `cc_timely_on_completion_rv(cfg, flow, t_send_ns, t_complete_ns, bytes) -> CcTimelyResult`.
pub fn run_on_completion_rv(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run(m, ctx, Entry::CompletionRv)
}

/// `cc_timely_on_rtt(cfg, flow, rtt_q4, bytes) -> CcTimelyResult`.
pub fn run_on_rtt(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run(m, ctx, Entry::Rtt)
}

fn run(m: &mut Machine, ctx: &Ctx, entry: Entry) -> Result<Vec<Sample>> {
    let dir = ctx.fixtures.join("timely");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    paths.sort();
    let share = ctx.limit.div_ceil(paths.len().max(1)).max(1);
    let host_cfg = Config::DEFAULT;
    let mut samples = Vec::new();
    for path in &paths {
        let rows = parse(path)?;
        m.reset_scratch();
        let params = m.alloc(
            std::mem::size_of::<cc_ffi::timely::CcTimelyParams>() as u32,
            8,
        )?;
        let cfg = m.alloc(cc_ffi::timely::CC_TIMELY_CONFIG_BYTES as u32, 8)?;
        let flow = m.alloc(cc_ffi::timely::CC_TIMELY_FLOW_BYTES as u32, 8)?;
        let out = m.alloc(8, 8)?;
        m.call("cc_timely_params_default", &[params])?;
        let r = m.call("cc_timely_config_init", &[cfg, params])?;
        ensure!(r.a0 == 0, "cc_timely_config_init returned {}", r.a0);
        m.call("cc_timely_flow_init", &[flow, cfg])?;
        let mut host = State::new(&host_cfg);
        for &(ts, tc, bytes) in rows.iter().take(share) {
            let lo = |x: u64| x as u32;
            let hi = |x: u64| (x >> 32) as u32;
            let ev = Completion::new(ts, tc, bytes);
            let (r, rate) = match entry {
                Entry::CompletionOut => {
                    let r = m.call(
                        "cc_timely_on_completion",
                        &[cfg, flow, lo(ts), hi(ts), lo(tc), hi(tc), bytes, out],
                    )?;
                    let b = m.read_bytes(out, 8)?;
                    let rate =
                        u64::from_le_bytes(b.try_into().map_err(|_| anyhow::anyhow!("rate"))?);
                    (r, rate)
                }
                Entry::CompletionRv => {
                    let r = m.call(
                        "cc_timely_on_completion_rv",
                        &[cfg, flow, lo(ts), hi(ts), lo(tc), hi(tc), bytes],
                    )?;
                    (r, u64::from(r.a1) * timely_cc::RATE_UNIT_BPS)
                }
                Entry::Rtt => {
                    let Some(rtt) = State::rtt_q4(&host_cfg, &ev) else {
                        continue;
                    };
                    let r = m.call("cc_timely_on_rtt", &[cfg, flow, lo(rtt), hi(rtt), bytes])?;
                    (r, u64::from(r.a1) * timely_cc::RATE_UNIT_BPS)
                }
            };
            let want = host.on_completion(&host_cfg, &ev);
            let name = branch_name(r.a0)?;
            ensure!(
                name == Branch::name(want.branch) && rate == want.rate_bps,
                "{}: ({ts}, {tc}, {bytes}): simulated {name} {rate} b/s, host {:?} {} b/s",
                path.display(),
                want.branch,
                want.rate_bps
            );
            samples.push(Sample::new(name, r.instret));
        }
    }
    Ok(samples)
}
