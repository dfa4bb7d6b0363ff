//! Random lockstep: cc-pacer against the f64 reference on random event streams (random line
//! rate, hybrid pacing on or off, paced and window flows, rates from 1 Mb/s to 400 Gb/s,
//! messages, ACKs, window changes, polls from 1 ns to 20 ms apart). After every drain both sides
//! must have handed out exactly the same segments at exactly the same times.

use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, RngSeed};
use sim_host::pacer::{Event, Lockstep, setup};
use sim_host::trace::Param;
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
