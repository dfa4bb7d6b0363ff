//! The segment pacer through the C ABI: `cc_pacer_next` and `cc_pacer_set_rate` with 16, 256
//! and 1024 flows in one `CcPacer` block.
//!
//! Workload (synthetic: the cost question is per event, not per trace): a 100 Gb/s line, `n`
//! backlogged flows with 16 KiB segments (every eighth 4 KiB, every eighth 64 KiB) whose rates
//! share about 1.2× the line, uniformly spread ±50 %. The harness runs the pacer the way
//! firmware does: at `earliest` it calls `cc_pacer_next` until `NONE`, and after every segment it
//! sets that flow's rate as TIMELY would after the segment's completion (a random walk: +10 Mb/s
//! two times in three, ×0.8–0.95 otherwise, within ±4× the flow's share). Every simulated call is
//! checked against the host build of `cc_pacer::Pacer` fed the same events.

use anyhow::{Result, ensure};
use cc_ffi::pacer::{CC_PACER_BYTES, CC_PACER_CAPACITY};
use cc_pacer::{Config, FlowId, FlowSpec, Instant, Pacer, Rate, RateChange};

use super::{Ctx, Lcg};
use crate::machine::Machine;
use crate::table::Sample;

/// The flow counts measured.
pub(super) const FLOWS: [usize; 3] = [16, 256, 1024];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    Next,
    SetRate,
}

fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn run_n(m: &mut Machine, n: usize, calls: usize, keep: Keep, out: &mut Vec<Sample>) -> Result<()> {
    m.reset_scratch();
    let line = Rate::from_bps(100_000_000_000);
    let params = m.push_bytes(&words(&[line.units(), 0, 4_096]), 4)?;
    let blk = m.alloc(CC_PACER_BYTES as u32, 8)?;
    let seg_out = m.alloc(12, 4)?;
    let spec = m.alloc(16, 4)?;
    let flow_out = m.alloc(4, 4)?;
    let t_out = m.alloc(4, 4)?;
    let r = m.call("cc_pacer_init", &[blk, params])?;
    ensure!(r.a0 == 0, "cc_pacer_init returned {}", r.a0);
    let mut host: Box<Pacer<CC_PACER_CAPACITY, CC_PACER_CAPACITY>> =
        Box::new(Pacer::new(&Config::new(line).expect("100 Gb/s")));
    let mut rng = Lcg::new(0x9ace + n as u64);
    let share = 1.2 * 100e9 / n as f64;
    let mut rates = Vec::with_capacity(n);
    for i in 0..n {
        let seg = match i % 8 {
            3 => 4_096,
            5 => 65_536,
            _ => 16_384,
        };
        let rate = share * (0.5 + f64::from(rng.next_u32() % 1000) / 1000.0);
        rates.push(rate);
        let units = Rate::from_bps(rate as u64).units();
        m.write_bytes(spec, &words(&[seg, units, 0, 0]))?;
        let r = m.call("cc_pacer_add_flow", &[blk, spec, flow_out])?;
        ensure!(
            r.a0 == 0 && m.read_u32(flow_out)? == i as u32,
            "add_flow {i}: {}",
            r.a0
        );
        host.add_flow(FlowSpec::paced(seg, Rate::from_units(units)))
            .map_err(|e| anyhow::anyhow!("host add_flow: {e:?}"))?;
    }
    // Everyone backlogged from t = 0 (64 MiB each).
    for i in 0..n {
        let r = m.call("cc_pacer_enqueue", &[blk, i as u32, 64 << 20, 0])?;
        let h = host
            .enqueue(FlowId::from_index(i as u16), 64 << 20, Instant::from_raw(0))
            .map_err(|e| anyhow::anyhow!("host enqueue: {e:?}"))?;
        ensure!(r.a0 == h as u32, "enqueue {i}: {} vs {h:?}", r.a0);
    }
    let label = |what: &str| format!("{n} flows, {what}");
    let mut kept = 0;
    let mut now = 0u32;
    let mut guard = 0usize;
    while kept < calls {
        guard += 1;
        ensure!(guard < 50 * calls + 10_000, "{n} flows: no progress");
        // Drain at `now`.
        loop {
            let r = m.call("cc_pacer_next", &[blk, now, seg_out])?;
            let h = host.next(Instant::from_raw(now));
            let sent = r.a0 == 1;
            ensure!(
                sent == h.is_some(),
                "{n} flows: next at {now}: {} vs {h:?}",
                r.a0
            );
            if keep == Keep::Next {
                out.push(Sample::of_call(
                    label(if sent { "send" } else { "none" }),
                    &r,
                ));
                kept += 1;
            }
            let Some(h) = h else { break };
            let b = m.read_bytes(seg_out, 12)?;
            let w = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            ensure!(
                (w(0), w(4), w(8)) == (h.flow.index() as u32, h.bytes, h.t_send.raw()),
                "{n} flows: segment ({}, {}, {}) vs host {h:?}",
                w(0),
                w(4),
                w(8)
            );
            // The segment's completion updates its flow's rate (TIMELY-like walk).
            let f = h.flow.index();
            let x = rates[f];
            let nx = if rng.next_u32() % 3 < 2 {
                x + 10e6
            } else {
                x * (0.8 + f64::from(rng.next_u32() % 150) / 1000.0)
            }
            .clamp(share / 4.0, share * 4.0);
            rates[f] = nx;
            let units = Rate::from_bps(nx as u64).units();
            let r = m.call("cc_pacer_set_rate", &[blk, f as u32, units])?;
            let hc = host
                .set_rate(h.flow, Rate::from_units(units))
                .map_err(|e| anyhow::anyhow!("host set_rate: {e:?}"))?;
            ensure!(r.a0 == hc as u32, "set_rate: {} vs {hc:?}", r.a0);
            if keep == Keep::SetRate {
                let what = match hc {
                    RateChange::Increase => "increase",
                    RateChange::Decrease => "decrease",
                    RateChange::Unchanged => "unchanged",
                };
                out.push(Sample::of_call(label(what), &r));
                kept += 1;
            }
            if kept >= calls {
                break;
            }
        }
        // Sleep until the pacer's next event, as firmware's timer would.
        let r = m.call("cc_pacer_earliest", &[blk, t_out])?;
        let h = host.earliest();
        ensure!((r.a0 == 1) == h.is_some(), "earliest: {} vs {h:?}", r.a0);
        let Some(h) = h else { break };
        let t = m.read_u32(t_out)?;
        ensure!(t == h.raw(), "earliest {t} vs host {}", h.raw());
        // At least one time unit on, so a head-of-line wait cannot spin.
        now = if Instant::from_raw(t).is_after(Instant::from_raw(now)) {
            t
        } else {
            now.wrapping_add(1)
        };
    }
    Ok(())
}

fn run(m: &mut Machine, ctx: &Ctx, keep: Keep) -> Result<Vec<Sample>> {
    let per = ctx.limit.div_ceil(FLOWS.len()).max(1);
    let mut out = Vec::new();
    for n in FLOWS {
        run_n(m, n, per, keep, &mut out)?;
    }
    Ok(out)
}

/// `cc_pacer_next(p, now_q4, &segment) -> CcPacerNext`, labelled by flow count and outcome.
pub(super) fn run_next(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run(m, ctx, Keep::Next)
}

/// `cc_pacer_set_rate(p, flow, rate_u128bps) -> CcPacerRate`, labelled by flow count and
/// direction.
pub(super) fn run_set_rate(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run(m, ctx, Keep::SetRate)
}
