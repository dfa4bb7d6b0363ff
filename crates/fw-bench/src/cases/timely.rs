//! TIMELY through the C ABI: `cc_timely_on_completion` per completion of
//! `fixtures/timely/*.csv` (`t_send_ns,t_complete_ns,bytes`), one flow per fixture, labelled by
//! the branch the call returns. Every simulated result (branch and rate) is checked against the
//! host build of `timely_cc` fed the same completions. The trace is read, and its `# set` lines
//! mapped to a configuration, by cc-trace (`TraceReader`, `timely::params::build`: the
//! configuration `sim-host replay` runs); the C side is given the same parameters as a
//! `CcTimelyParams` (the shipped fixtures all set the paper's defaults).
//!
//! Each fixture contributes at most `limit / fixtures` calls, from its start.

use anyhow::{Result, ensure};
use cc_ffi::timely::CcTimelyParams;
use cc_trace::timely::{HEADER, Row, params};
use timely_cc::{Completion, Params, State, TimelyBranch};

use super::{Ctx, TraceFile, branch_name, fixture_paths, read_trace, words};
use crate::machine::Machine;
use crate::table::Sample;

/// `CcTimelyParams` as laid out by `#[repr(C)]` (same on riscv32 ilp32 and the host: five
/// `u64`, then twelve `u32`, no padding), holding `p` the way `cc_timely_config_init` reads it.
pub(crate) fn params_bytes(p: &Params) -> Vec<u8> {
    let (al_num, al_den) = p.app_limited.map_or((0, 0), |r| (r.num, r.den));
    let mut v = Vec::with_capacity(size_of::<CcTimelyParams>());
    for x in [
        p.line_rate_bps,
        p.min_rate_bps,
        p.max_rate_bps,
        p.init_rate_bps,
        p.delta_bps,
    ] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    for x in [
        p.t_low_ns,
        p.t_high_ns,
        p.min_rtt_ns,
        p.alpha.num,
        p.alpha.den,
        p.beta.num,
        p.beta.den,
        p.hai_n,
        p.hai_after,
        al_num,
        al_den,
        u32::from(p.per_completion_scaling),
    ] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    debug_assert_eq!(v.len(), size_of::<CcTimelyParams>());
    v
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
pub(crate) fn run_on_completion(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run(m, ctx, Entry::CompletionOut)
}

/// `cc_timely_on_completion_rv(cfg, flow, t_send_ns, t_complete_ns, bytes) -> CcTimelyResult` (`timely_cc::TimelyOutcome`).
pub(crate) fn run_on_completion_rv(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run(m, ctx, Entry::CompletionRv)
}

/// `cc_timely_on_rtt(cfg, flow, rtt_q4, bytes) -> CcTimelyResult` (`timely_cc::TimelyOutcome`).
pub(crate) fn run_on_rtt(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run(m, ctx, Entry::Rtt)
}

fn run(m: &mut Machine, ctx: &Ctx, entry: Entry) -> Result<Vec<Sample>> {
    let paths = fixture_paths(ctx, "timely")?;
    let share = ctx.limit.div_ceil(paths.len().max(1)).max(1);
    let mut samples = Vec::new();
    for path in &paths {
        let TraceFile { params: set, rows } = read_trace::<Row>(path, HEADER)?;
        // The fixture's `# set` lines through cc-trace's TIMELY mapping (the configuration
        // `sim-host replay` runs); the C side gets the same parameters through the C ABI.
        let host_cfg = params::build(path, &set)?.cfg;
        m.reset_scratch();
        let params = m.alloc(size_of::<CcTimelyParams>() as u32, 8)?;
        // The byte layout written below is checked against the C ABI's own defaults.
        m.call("cc_timely_params_default", &[params])?;
        ensure!(
            m.read_bytes(params, size_of::<CcTimelyParams>() as u32)?
                == params_bytes(&Params::DEFAULT),
            "CcTimelyParams layout differs from the one fw-bench writes"
        );
        m.write_bytes(params, &params_bytes(host_cfg.params()))?;
        let cfg = m.alloc(cc_ffi::timely::CC_TIMELY_CONFIG_BYTES as u32, 8)?;
        let flow = m.alloc(cc_ffi::timely::CC_TIMELY_FLOW_BYTES as u32, 8)?;
        let out = m.alloc(8, 8)?;
        let r = m.call("cc_timely_config_init", &[cfg, params])?;
        ensure!(
            r.a0 == 0,
            "{}: cc_timely_config_init returned {}",
            path.display(),
            r.a0
        );
        m.call("cc_timely_flow_init", &[flow, cfg])?;
        let mut host = State::new(&host_cfg);
        for &(
            _,
            Row {
                t_send_ns: ts,
                t_complete_ns: tc,
                bytes,
            },
        ) in rows.iter().take(share)
        {
            let ([ts0, ts1], [tc0, tc1]) = (words(ts), words(tc));
            let ev = Completion::new(ts, tc, bytes);
            let (r, rate) = match entry {
                Entry::CompletionOut => {
                    let r = m.call(
                        "cc_timely_on_completion",
                        &[cfg, flow, ts0, ts1, tc0, tc1, bytes, out],
                    )?;
                    let b = m.read_bytes(out, 8)?;
                    let rate =
                        u64::from_le_bytes(b.try_into().map_err(|_| anyhow::anyhow!("rate"))?);
                    (r, rate)
                }
                Entry::CompletionRv => {
                    let r = m.call(
                        "cc_timely_on_completion_rv",
                        &[cfg, flow, ts0, ts1, tc0, tc1, bytes],
                    )?;
                    (r, u64::from(r.a1) * timely_cc::RATE_UNIT_BPS)
                }
                Entry::Rtt => {
                    let Some(rtt) = State::rtt_ns(&host_cfg, &ev).map(|r| r.to_bits()) else {
                        continue;
                    };
                    let r = m.call("cc_timely_on_rtt", &[cfg, flow, rtt, bytes])?;
                    (r, u64::from(r.a1) * timely_cc::RATE_UNIT_BPS)
                }
            };
            let want = host.on_completion(&host_cfg, &ev);
            let name = branch_name(
                r.a0,
                |c| TimelyBranch::from_code(c).map(TimelyBranch::name),
                "a cc_timely entry point",
            )?;
            ensure!(
                name == TimelyBranch::name(want.branch) && rate == want.rate_bps,
                "{}: ({ts}, {tc}, {bytes}): simulated {name} {rate} b/s, host {:?} {} b/s",
                path.display(),
                want.branch,
                want.rate_bps
            );
            samples.push(Sample::of_call(name, &r));
        }
    }
    Ok(samples)
}
