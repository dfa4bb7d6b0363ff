//! Scenario tests with worked numbers: pacing, the line, FIFO order in a slot, the lazy update,
//! idle flows, windows, hybrid bursts, pages and the clock wrap.
#![allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::panic
)]
extern crate std;
use super::*;
use std::boxed::Box;
use std::vec::Vec;

const G10: u64 = 10_000_000_000;
const G100: u64 = 100_000_000_000;

fn ns(t: u64) -> Instant {
    Instant::from_ns(t)
}

fn cfg() -> Config {
    Config::new(Rate::from_bps(G100)).unwrap()
}

/// Drains `next(now)`.
fn drain<const N: usize, const X: usize>(p: &mut Pacer<N, X>, now: Instant) -> Vec<Segment> {
    let mut v = Vec::new();
    while let Some(s) = p.next(now) {
        v.push(s);
    }
    v
}

#[test]
fn sizes() {
    assert_eq!(core::mem::size_of::<Flow>(), 24); // 20 of pacing state, 4 of wheel link
    assert_eq!(core::mem::size_of::<Ext>(), 8);
    assert_eq!(core::mem::size_of::<Wheel>(), 12_820);
}

#[test]
fn one_flow_is_paced_at_its_rate() {
    let mut p: Pacer<4> = Pacer::new(&cfg());
    let f = p
        .add_flow(FlowSpec::paced(16_384, Rate::from_bps(G10)))
        .unwrap();
    assert_eq!(
        p.enqueue(f, 100_000, ns(1_000)).unwrap(),
        Enqueued::Scheduled
    );
    let mut t = Vec::new();
    let mut now = 1_000u64;
    while p.flow(f).unwrap().backlog > 0 {
        t.extend(drain(&mut p, ns(now)));
        now += 100;
    }
    // 100 000 B = 6 × 16 384 + 1 696: seven segments, 209 716 units (13 107.25 ns) apart.
    assert_eq!(t.len(), 7);
    assert_eq!(t[6].bytes, 1_696);
    for w in t.windows(2) {
        assert_eq!(w[1].t_send.since(w[0].t_send), 209_716);
    }
    assert_eq!(t[0].t_send, ns(1_000));
    // After the last (short) segment the flow keeps its pacing memory until that gap passes.
    assert!(p.flow(f).unwrap().scheduled);
}

#[test]
fn the_line_carries_one_segment_at_a_time() {
    // Two flows at 80 Gb/s each on a 100 Gb/s line: 16 KiB take 1 310.72 ns on the line.
    let mut p: Pacer<4> = Pacer::new(&cfg());
    let a = p
        .add_flow(FlowSpec::paced(16_384, Rate::from_bps(80_000_000_000)))
        .unwrap();
    let b = p
        .add_flow(FlowSpec::paced(16_384, Rate::from_bps(80_000_000_000)))
        .unwrap();
    p.enqueue(a, 1 << 20, ns(0)).unwrap();
    p.enqueue(b, 1 << 20, ns(0)).unwrap();
    let mut segs = Vec::new();
    for now in (0..200_000u64).step_by(50) {
        segs.extend(drain(&mut p, ns(now)));
    }
    let wire = gap(16_384, cfg().line_tpb());
    assert_eq!(wire, 20_972);
    // Back to back on the line, alternating (FIFO order in a slot), never faster than the line.
    for w in segs.windows(2) {
        assert!(w[1].t_send.since(w[0].t_send) >= wire as i32, "{w:?}");
        assert_ne!(w[0].flow, w[1].flow);
    }
    let sent: u64 = segs.iter().map(|s| u64::from(s.bytes)).sum();
    // 2 MiB at 100 Gb/s ≈ 167.8 µs: the line is the limit, and it is kept busy.
    assert_eq!(sent, 2 << 20);
    let span = segs.last().unwrap().t_send.since(segs[0].t_send) as u64;
    assert_eq!(span, (segs.len() as u64 - 1) * u64::from(wire));
}

#[test]
fn fifo_within_a_slot_and_head_of_line() {
    // Three flows scheduled at the same instant leave in the order they were scheduled.
    let mut p: Pacer<4> = Pacer::new(&cfg());
    let ids: Vec<FlowId> = (0..3)
        .map(|_| {
            p.add_flow(FlowSpec::paced(1_024, Rate::from_bps(G10)))
                .unwrap()
        })
        .collect();
    for &f in ids.iter().rev() {
        p.enqueue(f, 1_024, ns(5_000)).unwrap();
    }
    let s = drain(&mut p, ns(10_000));
    let order: Vec<FlowId> = s.iter().map(|s| s.flow).collect();
    assert_eq!(order, [ids[2], ids[1], ids[0]]);
}

#[test]
fn a_rate_drop_while_waiting_moves_the_segment_later() {
    let mut p: Pacer<4> = Pacer::new(&cfg());
    let f = p
        .add_flow(FlowSpec::paced(16_384, Rate::from_bps(G10)))
        .unwrap();
    p.enqueue(f, 50_000, ns(0)).unwrap();
    let s0 = p.next(ns(0)).unwrap();
    assert_eq!(s0.t_send, ns(0));
    // Waiting for 209 716 units (13.1 µs). At 5 µs the rate halves: the segment is due at
    // gap(16 384) at 5 Gb/s = ⌈16 384·6 710 887/2^18⌉ = 419 431 units (26.2 µs).
    assert_eq!(
        p.set_rate(f, Rate::from_bps(5_000_000_000)).unwrap(),
        RateChange::Decrease
    );
    assert_eq!(
        p.flow(f).unwrap().due.raw(),
        209_716,
        "nothing moves at the rate change"
    );
    // At 13.2 µs (the old due time) nothing leaves: the flow is re-filed (lazily).
    assert_eq!(p.next(ns(13_200)), None);
    assert_eq!(p.flow(f).unwrap().due.raw(), 419_431);
    assert_eq!(p.earliest(), Some(Instant::from_raw(419_431)));
    let s1 = p.next(ns(26_300)).unwrap();
    assert_eq!(s1.t_send.raw(), 419_431);
    // An increase does not pull the waiting segment earlier; it applies to the next gap.
    assert_eq!(
        p.set_rate(f, Rate::from_bps(G10)).unwrap(),
        RateChange::Increase
    );
    assert_eq!(p.flow(f).unwrap().due.raw(), 419_431 + 419_431);
    assert_eq!(p.next(ns(52_500)).unwrap().t_send.raw(), 838_862);
    assert_eq!(p.flow(f).unwrap().due.raw(), 838_862 + 209_716);
}

#[test]
fn a_drop_then_a_rise_before_the_due_time_changes_nothing() {
    // The lazy update compares the rate when the segment's time comes with the rate it was
    // scheduled at: a drop undone before then leaves the schedule alone.
    let mut p: Pacer<4> = Pacer::new(&cfg());
    let f = p
        .add_flow(FlowSpec::paced(16_384, Rate::from_bps(G10)))
        .unwrap();
    p.enqueue(f, 50_000, ns(0)).unwrap();
    p.next(ns(0)).unwrap();
    p.set_rate(f, Rate::from_bps(1_000_000_000)).unwrap();
    p.set_rate(f, Rate::from_bps(20_000_000_000)).unwrap();
    assert_eq!(p.next(ns(13_200)).unwrap().t_send.raw(), 209_716);
    // A rise then a smaller drop (still above the scheduling rate): no delay either.
    p.set_rate(f, Rate::from_bps(40_000_000_000)).unwrap();
    p.set_rate(f, Rate::from_bps(30_000_000_000)).unwrap();
    let due = 209_716 + gap(16_384, time_per_byte(Rate::from_bps(20_000_000_000)));
    assert_eq!(p.earliest(), Some(Instant::from_raw(due)));
}

#[test]
fn a_drop_before_the_first_segment_does_not_delay_it() {
    let mut p: Pacer<4> = Pacer::new(&cfg());
    let f = p
        .add_flow(FlowSpec::paced(16_384, Rate::from_bps(G10)))
        .unwrap();
    p.enqueue(f, 1_000, ns(100)).unwrap();
    p.set_rate(f, Rate::from_bps(1_000_000_000)).unwrap();
    assert_eq!(p.next(ns(100)).unwrap().t_send, ns(100));
}

#[test]
fn idle_flow_keeps_its_pacing_memory_then_forgets_it() {
    let mut p: Pacer<4> = Pacer::new(&cfg());
    let f = p
        .add_flow(FlowSpec::paced(16_384, Rate::from_bps(G10)))
        .unwrap();
    p.enqueue(f, 16_384, ns(0)).unwrap();
    assert_eq!(p.next(ns(0)).unwrap().bytes, 16_384);
    // A new message 1 µs later still waits for the gap (13.1 µs).
    p.enqueue(f, 100, ns(1_000)).unwrap();
    assert_eq!(p.next(ns(1_000)), None);
    assert_eq!(p.next(ns(13_200)).unwrap().t_send.raw(), 209_716);
    // Gap after 100 B at 10 Gb/s: 80 ns = 1 280 units. At 1 ms the memory has expired: the flow
    // left the wheel and a new message goes at once.
    assert_eq!(p.next(ns(1_000_000)), None);
    assert!(!p.flow(f).unwrap().scheduled);
    p.enqueue(f, 100, ns(1_000_000)).unwrap();
    assert_eq!(p.next(ns(1_000_000)).unwrap().t_send, ns(1_000_000));
}

#[test]
fn window_caps_bytes_in_flight() {
    let mut p: Pacer<4, 4> = Pacer::new(&cfg());
    let f = p
        .add_flow(FlowSpec {
            seg_bytes: 4_096,
            rate: Rate::from_bps(G100),
            mode: FlowMode::Window {
                window_bytes: 10_000,
            },
        })
        .unwrap();
    p.enqueue(f, 1 << 20, ns(0)).unwrap();
    let s = drain(&mut p, ns(10_000));
    // 4 096 + 4 096 + 1 808 = 10 000 bytes, then the window is closed.
    assert_eq!(
        s.iter().map(|s| s.bytes).collect::<Vec<_>>(),
        [4_096, 4_096, 1_808]
    );
    assert_eq!(p.flow(f).unwrap().window, Some((10_000, 10_000)));
    assert!(!p.flow(f).unwrap().scheduled);
    assert_eq!(
        p.on_ack(f, 3_000, ns(20_000)).unwrap(),
        WindowChange::Reopened
    );
    let s = drain(&mut p, ns(20_000));
    assert_eq!(s.len(), 1);
    assert_eq!((s[0].bytes, s[0].t_send), (3_000, ns(20_000)));
    // Shrinking the window below what is in flight sends nothing more.
    p.set_window(f, 5_000, ns(21_000)).unwrap();
    p.on_ack(f, 4_000, ns(22_000)).unwrap();
    assert!(drain(&mut p, ns(30_000)).is_empty());
    assert_eq!(
        p.set_window(f, 20_000, ns(31_000)).unwrap(),
        WindowChange::Reopened
    );
    assert_eq!(drain(&mut p, ns(31_000))[0].bytes, 4_096);
    assert_eq!(
        p.on_ack(FlowId::from_index(3), 1, ns(0)),
        Err(PacerError::UnknownFlow)
    );
}

#[test]
fn hybrid_segments_leave_as_bursts() {
    // 64 KiB segments at 1 Gb/s, bursts of 4 KiB at a 700 Mb/s hardware rate.
    let c = cfg()
        .with_hybrid(Rate::from_bps(700_000_000), 4_096)
        .unwrap();
    let mut p: Pacer<4, 4> = Pacer::new(&c);
    let f = p
        .add_flow(FlowSpec {
            seg_bytes: 65_536,
            rate: Rate::from_bps(1_000_000_000),
            mode: FlowMode::Hybrid,
        })
        .unwrap();
    p.enqueue(f, 3 * 65_536, ns(0)).unwrap();
    let mut segs = Vec::new();
    for now in (0..3_000_000u64).step_by(1_000) {
        segs.extend(drain(&mut p, ns(now)));
    }
    assert_eq!(segs.len(), 48);
    let hw = gap(4_096, time_per_byte(Rate::from_bps(700_000_000)));
    // Bursts of a segment are spaced by the hardware rate (46.8 µs); the hardware rate is below
    // the flow's, so a segment's 16 bursts take longer than its gap and the next segment follows
    // the last burst's drain.
    for w in segs.windows(2) {
        assert_eq!(w[1].t_send.since(w[0].t_send), hw as i32);
    }
}

#[test]
fn hybrid_rate_bounds_segments_when_slower() {
    // The flow at 100 Mb/s, the hardware at 10 Gb/s: 16 bursts back to back at 10 Gb/s, then
    // the rest of the 64 KiB segment's 5.24 ms gap.
    let c = cfg().with_hybrid(Rate::from_bps(G10), 4_096).unwrap();
    let mut p: Pacer<4, 4> = Pacer::new(&c);
    let f = p
        .add_flow(FlowSpec {
            seg_bytes: 65_536,
            rate: Rate::from_bps(100_000_000),
            mode: FlowMode::Hybrid,
        })
        .unwrap();
    p.enqueue(f, 2 * 65_536, ns(0)).unwrap();
    let mut segs = Vec::new();
    for now in (0..12_000_000u64).step_by(500) {
        segs.extend(drain(&mut p, ns(now)));
    }
    assert_eq!(segs.len(), 32);
    let seg_gap = gap(65_536, time_per_byte(Rate::from_bps(100_000_000)));
    assert_eq!(segs[16].t_send.since(segs[0].t_send), seg_gap as i32);
    // A rate drop during the first segment's bursts does not slow them; it delays segment 2.
    let mut p2: Pacer<4, 4> = Pacer::new(&c);
    let f2 = p2
        .add_flow(FlowSpec {
            seg_bytes: 65_536,
            rate: Rate::from_bps(100_000_000),
            mode: FlowMode::Hybrid,
        })
        .unwrap();
    p2.enqueue(f2, 2 * 65_536, ns(0)).unwrap();
    let first = drain(&mut p2, ns(0));
    assert_eq!(first.len(), 1);
    p2.set_rate(f2, Rate::from_bps(50_000_000)).unwrap();
    let mut segs2 = first;
    for now in (0..30_000_000u64).step_by(500) {
        segs2.extend(drain(&mut p2, ns(now)));
    }
    assert_eq!(segs2.len(), 32);
    for i in 1..16 {
        assert_eq!(segs2[i].t_send, segs[i].t_send);
    }
    let slow_gap = gap(65_536, time_per_byte(Rate::from_bps(50_000_000)));
    assert_eq!(segs2[16].t_send.since(segs2[0].t_send), slow_gap as i32);
    let _ = f;
}

#[test]
fn slow_flows_cross_pages_and_the_clock_wrap() {
    // Eight flows at 10 Mb/s with 64 KiB segments (52.4 ms apart), over 1.2 s: several clock
    // wraps, every page of level 1 in use. Each flow's segments are exactly one gap apart.
    let mut p: Pacer<8> = Pacer::new(&cfg());
    let ids: Vec<FlowId> = (0..8)
        .map(|_| {
            p.add_flow(FlowSpec::paced(65_536, Rate::from_bps(10_000_000)))
                .unwrap()
        })
        .collect();
    let g = gap(65_536, time_per_byte(Rate::from_bps(10_000_000))) as u64;
    let mut last: Vec<Option<u64>> = std::vec![None; 8];
    let mut count = 0;
    let mut now = 0u64;
    while now < 1_200_000_000 {
        // Flow i starts at i·7 ms.
        if now.is_multiple_of(7_000_000) && now / 7_000_000 < 8 {
            p.enqueue(ids[(now / 7_000_000) as usize], u32::MAX / 2, ns(now))
                .unwrap();
        }
        while let Some(s) = p.next(ns(now)) {
            // Unwrap the send time against `now`.
            let t = now * 16 - Instant::from_ns(now).since(s.t_send) as u64;
            if let Some(l) = last[s.flow.index()] {
                assert_eq!(t - l, g, "flow {}", s.flow.index());
            }
            last[s.flow.index()] = Some(t);
            count += 1;
        }
        now += 1_000_000;
    }
    assert!(count > 8 * 20, "{count}");
}

#[test]
fn many_flows_in_one_slot_keep_fifo_through_level_one() {
    // 64 flows queued at one instant behind a busy line: all first segments (slot 0, in the
    // order the flows were scheduled), then all second segments.
    let mut p: Pacer<128> = Pacer::new(&Config::new(Rate::from_bps(400_000_000_000)).unwrap());
    let ids: Vec<FlowId> = (0..128)
        .map(|_| {
            p.add_flow(FlowSpec::paced(256, Rate::from_bps(G10)))
                .unwrap()
        })
        .collect();
    // Each of the first 64 sends one 256 B segment at t=0; its pacing memory (204.8 ns) keeps
    // it in the wheel. Re-queue them at t = 0, so they are due at 3 277 units (slot 3).
    for &f in &ids[..64] {
        p.enqueue(f, 512, ns(0)).unwrap();
    }
    let first = drain(&mut p, ns(0));
    assert!(!first.is_empty());
    let rest = drain(&mut p, ns(1_000_000));
    let order: Vec<usize> = first.iter().chain(&rest).map(|s| s.flow.index()).collect();
    assert_eq!(order.len(), 128);
    // Every flow sent its two segments, first segments in flow order.
    assert_eq!(&order[..64], &(0..64).collect::<Vec<_>>()[..]);
}

/// 600 flows whose second segments all fall in level-1 pages (1.3 ms ahead), run to the end
/// twice: polled at every `earliest()`, and polled once every 3 ms. Returns the segments and,
/// for the first run, the most pending flows one call moved and how many calls moved some.
fn six_hundred_flows(poll_at_earliest: bool) -> (Vec<Segment>, usize, usize) {
    // 16 KiB at 100 Mb/s: a 1.31 ms gap (20 pages); the 400 Gb/s line spreads the 600 first
    // segments over 600 · 327.7 ns = 197 µs, i.e. the second ones over three or four pages.
    let mut p: Box<Pacer<600>> = Box::new(Pacer::new(
        &Config::new(Rate::from_bps(400_000_000_000)).unwrap(),
    ));
    for _ in 0..600 {
        let f = p
            .add_flow(FlowSpec::paced(16_384, Rate::from_bps(100_000_000)))
            .unwrap();
        p.enqueue(f, 3 * 16_384, ns(0)).unwrap();
    }
    let (mut segs, mut most, mut calls_moving) = (Vec::new(), 0, 0);
    let mut now = 0u32;
    for _ in 0..200_000 {
        loop {
            let before = p.moved;
            let s = p.next(Instant::from_raw(now));
            if p.moved > before {
                most = most.max(p.moved - before);
                calls_moving += 1;
            }
            let Some(s) = s else { break };
            segs.push(s);
        }
        let Some(e) = p.earliest() else { break };
        now = if poll_at_earliest {
            if e.is_after(Instant::from_raw(now)) {
                e.raw()
            } else {
                now + 1
            }
        } else {
            now + 3 * 16_000_000 / 1_000 * 1_000 // 3 ms
        };
    }
    (segs, most, calls_moving)
}

#[test]
fn a_page_of_level_one_is_moved_a_few_flows_per_call() {
    let (dense, most, calls) = six_hundred_flows(true);
    assert_eq!(dense.len(), 1_800);
    // Polled at `earliest`, no call moves more than MOVES_PER_CALL flows of a page's list.
    assert!(most as u32 <= MOVES_PER_CALL, "{most}");
    assert!(calls >= 600 / MOVES_PER_CALL as usize, "{calls}");
    // Polled every 3 ms, whole pages are moved in one call, and the segments are the same:
    // same order, same send times (they are virtual: `max(due, line free)`).
    let (sparse, most_sparse, _) = six_hundred_flows(false);
    assert!(most_sparse > MOVES_PER_CALL as usize, "{most_sparse}");
    assert_eq!(dense, sparse);
}

#[test]
fn errors() {
    let mut p: Pacer<2> = Pacer::new(&cfg());
    assert_eq!(
        p.add_flow(FlowSpec::paced(100, Rate::from_bps(G10))),
        Err(PacerError::SegmentSize)
    );
    assert_eq!(
        p.add_flow(FlowSpec {
            seg_bytes: 1024,
            rate: Rate::from_bps(G10),
            mode: FlowMode::Window { window_bytes: 1 }
        }),
        Err(PacerError::NoExtension)
    );
    assert_eq!(
        p.add_flow(FlowSpec {
            seg_bytes: 1024,
            rate: Rate::from_bps(G10),
            mode: FlowMode::Hybrid
        }),
        Err(PacerError::NoHybrid)
    );
    let f = p
        .add_flow(FlowSpec::paced(65_536, Rate::from_bps(G10)))
        .unwrap();
    p.add_flow(FlowSpec::paced(256, Rate::from_bps(G10)))
        .unwrap();
    assert_eq!(
        p.add_flow(FlowSpec::paced(256, Rate::from_bps(G10))),
        Err(PacerError::Full)
    );
    assert_eq!(p.on_ack(f, 1, ns(0)), Err(PacerError::NotWindow));
    p.enqueue(f, u32::MAX, ns(0)).unwrap();
    assert_eq!(p.enqueue(f, 1, ns(0)), Err(PacerError::BacklogOverflow));
    assert_eq!(
        p.set_rate(FlowId::from_index(9), Rate::MIN),
        Err(PacerError::UnknownFlow)
    );
    assert_eq!(Config::new(Rate::from_units(5)), Err(ConfigError::LineRate));
    assert_eq!(
        cfg().with_hybrid(Rate::from_bps(G100 * 2), 1),
        Err(ConfigError::HybridRate)
    );
    assert_eq!(
        cfg().with_hybrid(Rate::from_bps(G10), 0),
        Err(ConfigError::BurstBytes)
    );
}

mod one_path {
    //! `next_into` runs its common case in line and hands everything else to the general path;
    //! the general path alone must give the same segments and leave the same state (256 random
    //! streams over paced, window and hybrid flows: 118 772 segments, 252 of the streams send).
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        Rate(u16, u64),
        Enqueue(u16, u32),
        Ack(u16, u32),
        Window(u16, u32),
        Advance(u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u16..12, 10_000_000u64..200_000_000_000).prop_map(|(f, r)| Op::Rate(f, r)),
            (0u16..12, 1u32..200_000).prop_map(|(f, b)| Op::Enqueue(f, b)),
            (0u16..12, 1u32..100_000).prop_map(|(f, b)| Op::Ack(f, b)),
            (0u16..12, 0u32..200_000).prop_map(|(f, b)| Op::Window(f, b)),
            // 1 unit to 20 ms (1/16 ns units), often less than a slot.
            prop_oneof![1u32..2_048, 1u32..320_000_000].prop_map(Op::Advance),
        ]
    }

    /// Both pacers, the same flows: four paced, four window, four hybrid.
    fn pair() -> (Box<Pacer<12, 12>>, Box<Pacer<12, 12>>) {
        let cfg = Config::new(Rate::from_bps(40_000_000_000))
            .unwrap()
            .with_hybrid(Rate::from_bps(5_000_000_000), 4_096)
            .unwrap();
        let mut p: Box<Pacer<12, 12>> = Box::new(Pacer::new(&cfg));
        for i in 0..12u32 {
            let mode = match i % 3 {
                0 => FlowMode::Paced,
                1 => FlowMode::Window {
                    window_bytes: 50_000,
                },
                _ => FlowMode::Hybrid,
            };
            let seg = [4_096, 16_384, 65_536][(i as usize / 3) % 3];
            p.add_flow(FlowSpec {
                seg_bytes: seg,
                rate: Rate::from_bps(1_000_000_000 * u64::from(i + 1)),
                mode,
            })
            .unwrap();
        }
        (p.clone(), p)
    }

    proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 256,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x0019_face),
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        })]

        #[test]
        fn next_in_line_equals_the_general_path(ops in proptest::collection::vec(op(), 1..300)) {
            let (mut fast, mut general) = pair();
            let mut now = 0u32;
            for op in ops {
                let id = |f: u16| FlowId::from_index(f);
                let t = Instant::from_raw(now);
                match op {
                    Op::Rate(f, r) => {
                        let a = fast.set_rate(id(f), Rate::from_bps(r));
                        prop_assert_eq!(a, general.set_rate(id(f), Rate::from_bps(r)));
                    }
                    Op::Enqueue(f, b) => {
                        prop_assert_eq!(fast.enqueue(id(f), b, t), general.enqueue(id(f), b, t));
                    }
                    Op::Ack(f, b) => {
                        prop_assert_eq!(fast.on_ack(id(f), b, t), general.on_ack(id(f), b, t));
                    }
                    Op::Window(f, b) => {
                        prop_assert_eq!(
                            fast.set_window(id(f), b, t),
                            general.set_window(id(f), b, t)
                        );
                    }
                    Op::Advance(d) => now = now.wrapping_add(d),
                }
                // Drain at `now` both ways: `next_into` (in line when it can) and the general
                // path alone.
                let t = Instant::from_raw(now);
                loop {
                    let blank = Segment { flow: FlowId(0), bytes: 0, t_send: t };
                    let (mut a, mut b) = (blank, blank);
                    let ra = fast.next_into(t, &mut a);
                    let rb = general.next_general(t, &mut b);
                    prop_assert_eq!(ra, rb);
                    prop_assert_eq!(a, b);
                    if ra == PacerNext::None {
                        break;
                    }
                }
                prop_assert_eq!(fast.earliest(), general.earliest());
                prop_assert!(*fast == *general, "states differ after {:?}", t);
            }
        }
    }
}
