//! Properties: on random NIC-like traces (random line rates, segment-size mixes, plateau
//! lengths, step sizes and spikes) the fixed-point crate meets the fidelity targets (docs/timely.md, "Measured fidelity") against the
//! f64 reference in free mode; nothing panics on arbitrary events.

use cc_replay::opts::Mode;
use cc_replay::summary::{At, ErrStats, rel_err};
use cc_replay::timely::generate::{NicKnobs, NicTrace};
use cc_replay::timely::lockstep::Lockstep;
use cc_replay::timely::params;
use cc_trace::parse_cli_set;
use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, RngSeed};
use std::path::Path;

fn knobs() -> impl Strategy<Value = NicKnobs> {
    (
        prop_oneof![
            Just(10_000_000_000u64),
            Just(25_000_000_000),
            Just(40_000_000_000),
            Just(100_000_000_000),
            Just(400_000_000_000),
        ],
        (1_000u64..100_000, 100_000u64..900_000),
        (1u64..20, 20u64..1_500),
        (0.0f64..0.6, 0.0f64..0.4, 0.0f64..0.3),
        0.0f64..0.05,
        0.0f64..1.0,
    )
        .prop_map(
            |(line, level, plateau, (p1, p16, pj), p_spike, p_odd_size)| NicKnobs {
                line_rate_bps: line,
                level_ns: level,
                plateau,
                p_step_1ns: p1,
                p_step_16ns: p16,
                p_jump: pj,
                p_spike,
                p_odd_size,
            },
        )
}

proptest! {
    // Deterministic: a fixed seed and no persistence, so CI runs the same 48 traces every time.
    #![proptest_config(PtConfig {
        cases: 48,
        rng_seed: RngSeed::Fixed(0x7E1E8),
        failure_persistence: None,
        ..PtConfig::default()
    })]
    /// The fidelity targets in free mode: branch agreement ≥ 99.9 % and rate relative error
    /// p99 ≤ 1e-3 (and max ≤ 1e-2, the tool's default) on 4000-event NIC-like traces.
    #[test]
    fn nic_like_traces_meet_the_targets_in_free_mode(k in knobs(), seed in any::<u64>()) {
        let line = format!("line_rate_bps={}", k.line_rate_bps);
        let both = params::build(Path::new("prop"), &[parse_cli_set(&line).unwrap()]).unwrap();
        let mut ls = Lockstep::new(&both, Mode::Free);
        let (mut n, mut agree) = (0u64, 0u64);
        let mut err = ErrStats::default();
        for (i, (s, c, b)) in NicTrace::new(k, u128::from(seed)).take(4_000).enumerate() {
            let o = ls.step(s, c, b);
            n += 1;
            agree += u64::from(o.branch_ref == o.branch_fixed);
            let at = At { event: i as u64, t_ns: c, line: None };
            err.add(rel_err(o.rate_fixed_bps as f64, o.rate_ref_bps), at);
        }
        let e = err.summary("rate");
        prop_assert!(agree as f64 >= 0.999 * n as f64, "{agree}/{n} agree ({k:?})");
        prop_assert!(e.p99 <= 1e-3, "p99 {:e} ({k:?})", e.p99);
        prop_assert!(e.max <= 1e-2, "max {:e} ({k:?})", e.max);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Nothing panics on any event, with any of the optional rules, in either mode.
    #[test]
    fn arbitrary_events_never_panic(
        evs in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<u32>()), 1..100),
        app in any::<bool>(), scale in any::<bool>(),
    ) {
        let mut set = Vec::new();
        if app {
            set.push(parse_cli_set("app_limited=0.8").unwrap());
        }
        if scale {
            set.push(parse_cli_set("per_completion_scaling=true").unwrap());
        }
        let both = params::build(Path::new("prop"), &set).unwrap();
        for mode in [Mode::Free, Mode::Forced] {
            let mut ls = Lockstep::new(&both, mode);
            for &(s, c, b) in &evs {
                let o = ls.step(s, c, b);
                prop_assert!((10e6..=10e9).contains(&o.rate_ref_bps));
                prop_assert!((10_000_000..=10_000_000_000).contains(&o.rate_fixed_bps));
            }
        }
    }
}
