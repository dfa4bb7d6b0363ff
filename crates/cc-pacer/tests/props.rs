//! Property tests (docs/pacer.md § 5), on random workloads (fixed seeds: proptest's default runner
//! with its regression file):
//! * no flow exceeds its rate over any interval by more than one segment;
//! * the scheduler is work-conserving up to the line rate: a segment leaves within one slot
//!   (64 ns) of the moment the line and some flow are both ready;
//! * equal-rate flows get equal bytes within one segment;
//! * a flow whose rate drops while its segment waits never sends earlier than the new rate
//!   allows (after the lazy update);
//! * window flows never have more than `W` in flight.
#![allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::float_arithmetic
)]

use cc_pacer::{
    Config, FlowId, FlowMode, FlowSpec, Instant, Pacer, Rate, Segment, gap, time_per_byte,
};
use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, RngSeed};

/// 1/16 ns per slot.
const SLOT: u64 = 1 << cc_pacer::SLOT_SHIFT;

/// A send with its time unwrapped to 1/16 ns since the start.
#[derive(Clone, Copy, Debug)]
struct Sent {
    flow: usize,
    bytes: u32,
    t: u64,
}

/// Drains `next(now)`; unwraps send times against `now_units` (absolute 1/16 ns).
fn drain<const N: usize, const X: usize>(
    p: &mut Pacer<N, X>,
    now_units: u64,
    out: &mut Vec<Sent>,
    mut each: impl FnMut(&Pacer<N, X>, &Segment),
) {
    let now = Instant::from_raw(now_units as u32);
    while let Some(s) = p.next(now) {
        let t = now_units - now.since(s.t_send) as u64;
        assert!(
            now.since(s.t_send) >= 0,
            "sent in the future: {s:?} at {now_units}"
        );
        out.push(Sent {
            flow: s.flow.index(),
            bytes: s.bytes,
            t,
        });
        each(p, &s);
    }
}

fn cfg(line_bps: u64) -> Config {
    Config::new(Rate::from_bps(line_bps)).unwrap()
}

fn seg_of(i: usize) -> u32 {
    [16_384, 4_096, 65_536, 1_024][i % 4]
}

proptest! {
    // Deterministic: a fixed seed and no persistence, so CI runs the same cases every time.
    #![proptest_config(PtConfig {
        cases: 32,
        rng_seed: RngSeed::Fixed(0x009a_ce12),
        failure_persistence: None,
        ..PtConfig::default()
    })]

    /// Constant rates, random messages and polling: for every flow and every pair of its sends
    /// i < j, the bytes of sends i..j−1 take no longer at its rate than t_j − t_i, so the bytes
    /// in [t_i, t_j] exceed rate·(t_j − t_i) by at most the last segment.
    #[test]
    fn no_flow_exceeds_its_rate(
        rates in prop::collection::vec(10_000_000u64..20_000_000_000, 1..12),
        msgs in prop::collection::vec((0usize..12, 1u32..300_000, 0u64..1_000_000), 1..60),
        poll in 300u64..3_000,
    ) {
        let mut p: Pacer<16> = Pacer::new(&cfg(100_000_000_000));
        let n = rates.len();
        for (i, &r) in rates.iter().enumerate() {
            p.add_flow(FlowSpec::paced(seg_of(i), Rate::from_bps(r))).unwrap();
        }
        let mut msgs = msgs;
        msgs.sort_by_key(|m| m.2);
        let mut sent = Vec::new();
        let mut mi = 0;
        let mut now_ns = 0u64;
        while now_ns < 1_500_000 {
            while mi < msgs.len() && msgs[mi].2 <= now_ns {
                let (f, b, _) = msgs[mi];
                drain(&mut p, now_ns * 16, &mut sent, |_, _| {});
                p.enqueue(FlowId::from_index((f % n) as u16), b, Instant::from_ns(now_ns)).unwrap();
                mi += 1;
            }
            drain(&mut p, now_ns * 16, &mut sent, |_, _| {});
            now_ns += poll;
        }
        for (f, &rate) in rates.iter().enumerate() {
            let tpb = time_per_byte(Rate::from_bps(rate));
            let mine: Vec<&Sent> = sent.iter().filter(|s| s.flow == f).collect();
            for i in 0..mine.len() {
                let mut need = 0u64;
                for j in i + 1..mine.len() {
                    need += u64::from(gap(mine[j - 1].bytes, tpb));
                    prop_assert!(mine[j].t - mine[i].t >= need,
                        "flow {f}: sends {i}..{j} in {} units, the rate needs {need}", mine[j].t - mine[i].t);
                    // In rate terms: bytes in [t_i, t_j] ≤ rate·span + one segment.
                    let bytes: u64 = mine[i..=j].iter().map(|s| u64::from(s.bytes)).sum();
                    let span_ns = (mine[j].t - mine[i].t) as f64 / 16.0;
                    let allowed = Rate::from_bps(rate).paced().bps() as f64 * span_ns / 8e9
                        + f64::from(seg_of(f)) + 1.0;
                    prop_assert!(bytes as f64 <= allowed, "flow {f}: {bytes} > {allowed}");
                }
            }
        }
    }

    /// Backlogged flows: a segment leaves within one slot of the moment both the line and some
    /// flow are ready (work conservation: the line never idles while a segment is due, beyond a
    /// head-of-slot wait below 64 ns); equal-rate flows stay within one segment of each other.
    /// (Utilisation itself is not asserted: a flow delayed by the line is paced from when it
    /// actually left, so unequal rates adding up to a little over the line can leave it idle
    /// while every flow is pacing.)
    #[test]
    fn work_conserving_and_fair(
        n in 2usize..40,
        over in 1.05f64..3.0,
        equal in any::<bool>(),
        seed in any::<u64>(),
        poll in 300u64..5_000,
    ) {
        let line = 100_000_000_000u64;
        let mut p: Pacer<64> = Pacer::new(&cfg(line));
        let share = line as f64 * over / n as f64;
        let mut x = seed | 1;
        let mut rates = Vec::new();
        for _ in 0..n {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            let r = if equal { share } else { share * (0.5 + (x % 1000) as f64 / 1000.0) };
            rates.push(r as u64);
            p.add_flow(FlowSpec::paced(16_384, Rate::from_bps(r as u64))).unwrap();
        }
        for f in 0..n {
            p.enqueue(FlowId::from_index(f as u16), u32::MAX / 2, Instant::from_ns(0)).unwrap();
        }
        let line_tpb = cfg(line).line_tpb();
        let mut sent: Vec<Sent> = Vec::new();
        // After each send: when the line frees, and the earliest due time of any flow.
        let mut ready: Vec<(u64, u64)> = Vec::new();
        let mut now_ns = 0u64;
        let mut bytes = vec![0u64; n];
        while now_ns < 200_000 {
            let base = now_ns * 16;
            let before = sent.len();
            let now = Instant::from_raw(base as u32);
            let abs = |t: Instant| (base as i64 - i64::from(now.since(t))) as u64;
            drain(&mut p, base, &mut sent, |p, _| {
                let lf = abs(p.line_free());
                let min_due = (0..n)
                    .filter_map(|f| p.flow(FlowId::from_index(f as u16)))
                    .filter(|v| v.scheduled && v.backlog > 0)
                    .map(|v| abs(v.due))
                    .min()
                    .unwrap_or(u64::MAX);
                ready.push((lf, min_due));
            });
            for s in &sent[before..] {
                bytes[s.flow] += u64::from(s.bytes);
            }
            if equal {
                let (lo, hi) = (bytes.iter().min().unwrap(), bytes.iter().max().unwrap());
                prop_assert!(hi - lo <= 16_384, "unequal shares: {bytes:?}");
            }
            now_ns += poll;
        }
        prop_assert!(sent.len() > 10);
        for k in 1..sent.len() {
            let (lf, min_due) = ready[k - 1];
            let ready_at = lf.max(min_due);
            prop_assert!(sent[k].t < ready_at + SLOT,
                "send {k} at {} but line and a flow were ready at {ready_at}", sent[k].t);
        }
        if equal {
            // Equal rates over the line: the flows take turns and the line stays busy but for
            // the head-of-slot waits (< 64 ns per 1 311 ns segment).
            let busy: u64 = sent.iter().map(|s| u64::from(gap(s.bytes, line_tpb))).sum();
            let last = sent.last().unwrap();
            let span = last.t - sent[0].t + u64::from(gap(last.bytes, line_tpb));
            prop_assert!(busy as f64 >= 0.95 * span as f64, "line busy {busy} of {span}");
        }
    }

    /// A drop while a segment waits: the next segment leaves no earlier than the last one's
    /// gap at the new rate allows; a rise does not pull it earlier than scheduled.
    #[test]
    fn a_drop_is_never_beaten(
        r0 in 50_000_000u64..20_000_000_000,
        factor in 0.05f64..3.0,
        at_frac in 0.0f64..1.0,
        seg_i in 0usize..4,
        others in 0usize..20,
    ) {
        let mut p: Pacer<32> = Pacer::new(&cfg(100_000_000_000));
        let f = p.add_flow(FlowSpec::paced(seg_of(seg_i), Rate::from_bps(r0))).unwrap();
        for i in 0..others {
            let g = p.add_flow(FlowSpec::paced(16_384, Rate::from_bps(1_000_000_000 + i as u64 * 100_000_000))).unwrap();
            p.enqueue(g, 1 << 20, Instant::from_ns(0)).unwrap();
        }
        p.enqueue(f, 1 << 22, Instant::from_ns(0)).unwrap();
        let mut sent = Vec::new();
        let mut now = 0u64;
        while !sent.iter().any(|s: &Sent| s.flow == 0) {
            drain(&mut p, now, &mut sent, |_, _| {});
            now += 64;
        }
        let first = *sent.iter().find(|s| s.flow == 0).unwrap();
        let old = time_per_byte(Rate::from_bps(r0));
        let due = first.t + u64::from(gap(first.bytes, old));
        // Change the rate somewhere before the waiting segment's due time.
        let at = now.max(first.t) + ((due.saturating_sub(now)) as f64 * at_frac) as u64;
        while now < at {
            drain(&mut p, now, &mut sent, |_, _| {});
            now += 64;
        }
        if sent.iter().filter(|s| s.flow == 0).count() > 1 {
            return Ok(()); // it left before the change (the change came too late)
        }
        let r1 = ((r0 as f64) * factor) as u64;
        p.set_rate(f, Rate::from_bps(r1)).unwrap();
        let new = time_per_byte(Rate::from_bps(r1));
        while sent.iter().filter(|s| s.flow == 0).count() < 2 {
            drain(&mut p, now, &mut sent, |_, _| {});
            now += 64;
        }
        let second = sent.iter().filter(|s| s.flow == 0).nth(1).unwrap();
        let earliest = first.t + u64::from(gap(first.bytes, old.max(new)));
        prop_assert!(second.t >= earliest, "left at {} before {earliest}", second.t);
    }

    /// Window flows with random ACKs and window changes: never more than W in flight.
    #[test]
    fn windows_are_never_exceeded(
        flows in prop::collection::vec((1_000u32..200_000, 100_000_000u64..50_000_000_000), 1..10),
        events in prop::collection::vec((0usize..10, 0u8..3, 1u32..100_000), 1..200),
    ) {
        let mut p: Pacer<16, 16> = Pacer::new(&cfg(100_000_000_000));
        let n = flows.len();
        let mut w: Vec<u32> = Vec::new();
        for (i, &(win, r)) in flows.iter().enumerate() {
            p.add_flow(FlowSpec {
                seg_bytes: seg_of(i),
                rate: Rate::from_bps(r),
                mode: FlowMode::Window { window_bytes: win },
            }).unwrap();
            w.push(win);
        }
        let mut inflight = vec![0u64; n];
        let mut now = 0u64;
        let mut sent = Vec::new();
        for (k, &(f, kind, v)) in events.iter().enumerate() {
            let f = f % n;
            let id = FlowId::from_index(f as u16);
            let before = sent.len();
            drain(&mut p, now, &mut sent, |_, _| {});
            for s in &sent[before..] {
                inflight[s.flow] += u64::from(s.bytes);
                prop_assert!(inflight[s.flow] <= u64::from(w[s.flow]),
                    "event {k}: flow {} has {} in flight, window {}", s.flow, inflight[s.flow], w[s.flow]);
            }
            let t = Instant::from_raw(now as u32);
            match kind {
                0 => { p.enqueue(id, v * 4, t).unwrap(); }
                1 => {
                    let a = u64::from(v).min(inflight[f]);
                    inflight[f] -= a;
                    p.on_ack(id, a as u32, t).unwrap();
                }
                _ => {
                    w[f] = v * 2;
                    p.set_window(id, v * 2, t).unwrap();
                }
            }
            let view = p.flow(id).unwrap();
            prop_assert_eq!(view.window, Some((w[f], inflight[f] as u32)));
            now += 1_000 + u64::from(v % 20_000);
        }
    }
}
