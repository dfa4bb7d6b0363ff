//! Random lockstep: cc-pacer against the f64 reference on random event streams (random line
//! rate, hybrid pacing on or off, paced and window flows, rates from 1 Mb/s to 400 Gb/s,
//! messages, ACKs, window changes, polls from 1 ns to 20 ms apart). After every drain both sides
//! must have handed out exactly the same segments at exactly the same times.

use cc_replay::pacer::{Event, Lockstep, setup};
use cc_trace::Param;
use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, RngSeed};
use std::path::{Path, PathBuf};

fn param(k: &str, v: u64) -> Param {
    Param {
        key: k.into(),
        value: v.to_string(),
        source: PathBuf::from("--set"),
        line: None,
    }
}

#[derive(Debug, Clone)]
struct Case {
    line_bps: u64,
    hybrid: Option<(u64, u64)>,
    seg: u64,
    events: Vec<(u64, u8, u32, u64)>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![
            Just(10_000_000_000u64),
            Just(100_000_000_000),
            1_000_000_000u64..400_000_000_000
        ],
        prop::option::of((100_000_000u64..5_000_000_000, 256u64..65_536)),
        prop_oneof![Just(16_384u64), Just(4_096), Just(65_536), Just(256)],
        prop::collection::vec(
            (
                prop_oneof![1u64..2_000, 1u64..200_000, 1u64..20_000_000],
                0u8..6,
                0u32..24,
                any::<u64>(),
            ),
            1..400,
        ),
    )
        .prop_map(|(line_bps, hybrid, seg, evs)| {
            let mut t = 0;
            let events = evs
                .into_iter()
                .map(|(dt, k, f, v)| {
                    t += dt;
                    (t, k, f, v)
                })
                .collect();
            Case {
                line_bps,
                hybrid: hybrid.map(|(r, b)| (r.min(line_bps), b)),
                seg,
                events,
            }
        })
}

proptest! {
    // Deterministic: a fixed seed and no persistence.
    #![proptest_config(PtConfig {
        cases: 200,
        rng_seed: RngSeed::Fixed(0x009a_ce12),
        failure_persistence: None,
        ..PtConfig::default()
    })]

    #[test]
    fn fixed_and_reference_agree(c in case()) {
        let mut params = vec![param("line_rate_bps", c.line_bps), param("seg_bytes", c.seg)];
        if let Some((r, b)) = c.hybrid {
            params.push(param("hybrid_rate_bps", r));
            params.push(param("burst_bytes", b));
        }
        let path = Path::new("random");
        let su = setup(path, &params).unwrap();
        let mut ls = Lockstep::new(su);
        let (mut fx, mut rf) = (Vec::new(), Vec::new());
        let mut window_flows = std::collections::HashSet::new();
        let mut seen = std::collections::HashSet::new();
        for (i, &(t, k, f, v)) in c.events.iter().enumerate() {
            fx.clear();
            rf.clear();
            ls.drain(t, &mut fx, &mut rf);
            prop_assert_eq!(fx.len(), rf.len(), "event {}: {:?} vs {:?}", i, fx, rf);
            for (a, b) in fx.iter().zip(&rf) {
                prop_assert!(a.flow == b.flow && a.bytes == b.bytes && a.t_send == b.t_send,
                    "event {}: fixed {:?} vs reference {:?}", i, a, b);
            }
            // A flow's first event decides its kind: `window` makes it a window flow (not
            // with hybrid pacing, where every flow is hybrid).
            let first = !seen.contains(&f);
            let ev = match k {
                0 => Event::Rate(f, 1_000_000 + v % 400_000_000_000),
                1 if c.hybrid.is_none() && (first || window_flows.contains(&f)) => {
                    window_flows.insert(f);
                    Event::Window(f, (v % 300_000) as u32)
                }
                2 if window_flows.contains(&f) => Event::Ack(f, (v % 100_000) as u32),
                3 => Event::Tick,
                _ => Event::Enqueue(f, (v % 500_000) as u32),
            };
            if ev.flow().is_some() {
                seen.insert(f);
            }
            ls.apply(ev, path, i as u64).unwrap();
        }
    }
}

/// Many slow flows, so that most segments are filed pages ahead (level 1) and pages hold many
/// flows: up to 300 flows, rates from 10 Mb/s to 2 Gb/s, 16 KiB segments on a 100 Gb/s line,
/// messages and rate changes from 1 µs to 2 ms apart.
fn many_slow_flows() -> impl Strategy<Value = (Vec<(u64, bool, u32, u64)>, bool)> {
    (
        prop::collection::vec(
            (
                prop_oneof![1_000u64..20_000, 20_000u64..2_000_000],
                prop::bool::weighted(0.3),
                0u32..300,
                any::<u64>(),
            ),
            1..300,
        ),
        any::<bool>(),
    )
        .prop_map(|(evs, dense)| {
            let mut t = 0;
            let events = evs
                .into_iter()
                .map(|(dt, rate, f, v)| {
                    t += dt;
                    (t, rate, f, v)
                })
                .collect();
            (events, dense)
        })
}

proptest! {
    #![proptest_config(PtConfig {
        cases: 64,
        rng_seed: RngSeed::Fixed(0x009a_ce19),
        failure_persistence: None,
        ..PtConfig::default()
    })]

    /// The pacer moves a page's level-1 list into level 0 a few flows per call while it is
    /// polled at `earliest()`, and the whole list at once when it is polled only at the events:
    /// either way it hands out the reference's segments in the reference's order.
    #[test]
    fn pages_moved_a_few_flows_per_call_keep_the_reference_order(
        (events, dense) in many_slow_flows()
    ) {
        let params = vec![param("line_rate_bps", 100_000_000_000), param("seg_bytes", 16_384)];
        let path = Path::new("random");
        let mut ls = Lockstep::new(setup(path, &params).unwrap());
        let (mut fx, mut rf) = (Vec::new(), Vec::new());
        let mut compared = 0usize;
        let mut t_prev = 0u64;
        for (i, &(t, rate, f, v)) in events.iter().enumerate() {
            // Dense: also drain at every `earliest()` before the event (at least 1 ns on).
            let mut polls = vec![];
            if dense {
                let mut now = t_prev;
                while polls.len() < 20_000 {
                    ls.drain(now, &mut fx, &mut rf);
                    let Some(e) = ls.fixed.earliest() else { break };
                    let ahead = e.since(cc_pacer::Instant::from_ns(now));
                    let next = if ahead > 0 { now + (ahead as u64).div_ceil(16) } else { now + 1 };
                    if next >= t {
                        break;
                    }
                    polls.push(next);
                    now = next;
                }
            }
            ls.drain(t, &mut fx, &mut rf);
            prop_assert_eq!(fx.len(), rf.len(), "event {}: {:?} vs {:?}", i, fx, rf);
            for (a, b) in fx.iter().zip(&rf) {
                prop_assert!(a.flow == b.flow && a.bytes == b.bytes && a.t_send == b.t_send,
                    "event {}: fixed {:?} vs reference {:?}", i, a, b);
            }
            compared += fx.len();
            fx.clear();
            rf.clear();
            let ev = if rate {
                Event::Rate(f, 10_000_000 + v % 2_000_000_000)
            } else {
                Event::Enqueue(f, (v % 400_000) as u32)
            };
            ls.apply(ev, path, i as u64).unwrap();
            t_prev = t;
        }
        // Everything still queued, drained every 20 ms (the time contract's tick) for 300 ms.
        for k in 1..=15 {
            ls.drain(t_prev + k * 20_000_000, &mut fx, &mut rf);
        }
        prop_assert_eq!(fx.len(), rf.len());
        for (a, b) in fx.iter().zip(&rf) {
            prop_assert!(a.flow == b.flow && a.bytes == b.bytes && a.t_send == b.t_send,
                "end: fixed {:?} vs reference {:?}", a, b);
        }
        compared += fx.len();
        prop_assert!(compared > 0);
    }
}
