//! The f64 references (`cc-reference`, soft float on rv32imac) over the same fixture events as
//! the fixed-point cases, through `crates/ref-probe`'s `ref_*` exports: TIMELY per completion of
//! `fixtures/timely/*.csv`, HPCC per ACK of `fixtures/hpcc/*.csv` (1 and 5 hops). Labels are
//! the branch the host build of the same reference takes, and every simulated result (the
//! rate's or window's `f64` bits) must equal the host's: soft float and the host FPU round
//! alike, so any difference is a defect of the harness.
//!
//! The references keep Rust-laid-out state, so a run cannot be re-seeded mid-trace: each
//! fixture is replayed from its start and the first `limit / fixtures` matching events are
//! measured (the fixed-point HPCC case spreads its samples over the trace instead).

use anyhow::{Result, ensure};
use cc_reference::{hpcc as rh, timely as rt};
use cc_trace::timely::{HEADER as TIMELY_HEADER, Row as TimelyRow, params};

use super::hpcc::{hop_label, nhop, parse};
use super::{Ctx, TraceFile, fixture_paths, read_trace, words};
use crate::machine::Machine;
use crate::table::Sample;

/// Bytes reserved for a reference context (parameters and state): more than either needs.
const CTX_BYTES: u32 = 512;
/// `ref_hpcc_on_ack`'s INT buffer: the header and 5 hops.
const INT_MAX_BYTES: usize = 2 + 8 * rh::MAX_HOPS;

fn f64_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `ref_timely_on_completion` per completion.
pub(super) fn run_timely(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    let paths = fixture_paths(ctx, "timely")?;
    let share = ctx.limit.div_ceil(paths.len().max(1)).max(1);
    let mut samples = Vec::new();
    for path in &paths {
        let TraceFile { params: set, rows } = read_trace::<TimelyRow>(path, TIMELY_HEADER)?;
        let p = params::build(path, &set)?.reference;
        m.reset_scratch();
        // The order ref_timely_init documents.
        let pv = [
            p.line_rate_bps as f64,
            p.min_rate_bps,
            p.max_rate_bps,
            p.init_rate_bps,
            p.t_low_ns,
            p.t_high_ns,
            p.min_rtt_ns,
            p.alpha,
            p.beta,
            p.delta_bps,
            p.hai_n,
            p.hai_after as f64,
            p.app_limited.unwrap_or(0.0),
            f64::from(u8::from(p.per_completion_scaling)),
        ];
        let pa = m.push_bytes(&f64_bytes(&pv), 8)?;
        let c = m.push_bytes(&[0; CTX_BYTES as usize], 8)?;
        m.call("ref_timely_init", &[c, pa])?;
        let mut host = rt::RefState::new(&p);
        for &(
            _,
            TimelyRow {
                t_send_ns: ts,
                t_complete_ns: tc,
                bytes,
            },
        ) in rows.iter().take(share)
        {
            let ([ts0, ts1], [tc0, tc1]) = (words(ts), words(tc));
            let r = m.call("ref_timely_on_completion", &[c, ts0, ts1, tc0, tc1, bytes])?;
            let want = host.on_completion(&p, ts, tc, bytes, None);
            ensure!(
                r.ret_u64() == host.rate_bps.to_bits(),
                "{}: ({ts}, {tc}, {bytes}): simulated rate {} b/s, host {} b/s",
                path.display(),
                f64::from_bits(r.ret_u64()),
                host.rate_bps
            );
            samples.push(Sample::of_call(want.branch, &r));
        }
    }
    Ok(samples)
}

fn run_hpcc(m: &mut Machine, ctx: &Ctx, hops: usize) -> Result<Vec<Sample>> {
    let mut traces = Vec::new();
    for path in fixture_paths(ctx, "hpcc")? {
        // The fixture as the fixed-point HPCC case reads it.
        let t = parse(&path)?;
        if t.acks.iter().any(|a| nhop(&a.2) == hops) {
            traces.push((path, t.setup.refp, t.acks));
        }
    }
    ensure!(!traces.is_empty(), "no HPCC fixture has {hops}-hop ACKs");
    let share = ctx.limit.div_ceil(traces.len()).max(1);
    let label = hop_label(hops);
    let mut samples = Vec::new();
    for (path, p, acks) in &traces {
        m.reset_scratch();
        let pv = [
            p.nic_rate_bps,
            p.base_rtt_ns,
            p.eta_num as f64,
            p.eta_den as f64,
            f64::from(p.max_stage),
            p.w_ai_bytes,
            p.min_rate_bps,
        ];
        let pa = m.push_bytes(&f64_bytes(&pv), 8)?;
        let c = m.push_bytes(&[0; CTX_BYTES as usize], 8)?;
        let int = m.alloc(INT_MAX_BYTES as u32, 8)?;
        m.call("ref_hpcc_init", &[c, pa])?;
        let mut host = rh::RefState::new(*p);
        let mut measured = 0usize;
        for (ack, nxt, bytes) in acks {
            if measured >= share {
                break;
            }
            let mut buf = [0u8; INT_MAX_BYTES];
            let n = bytes.len().min(INT_MAX_BYTES);
            buf[..n].copy_from_slice(&bytes[..n]);
            m.write_bytes(int, &buf)?;
            let r = m.call("ref_hpcc_on_ack", &[c, *ack, *nxt, int, bytes.len() as u32])?;
            // The probe sees at most INT_MAX_BYTES: the host gets the same (longer blocks are
            // malformed either way).
            let branch = host.on_ack(u64::from(*ack), u64::from(*nxt), &bytes[..n]);
            ensure!(
                r.ret_u64() == host.w.to_bits(),
                "{}: ack {ack}: simulated W {}, host {}",
                path.display(),
                f64::from_bits(r.ret_u64()),
                host.w
            );
            if nhop(bytes) == hops {
                measured += 1;
                samples.push(Sample::of_call(format!("{label}, {branch}"), &r));
            }
        }
    }
    Ok(samples)
}

/// `ref_hpcc_on_ack` on 1-hop ACKs.
pub(super) fn run_hpcc_1hop(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run_hpcc(m, ctx, 1)
}

/// `ref_hpcc_on_ack` on 5-hop ACKs.
pub(super) fn run_hpcc_5hop(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run_hpcc(m, ctx, 5)
}
