//! Property: on random RTT sequences (random walks with runs of repeats, mixed segment sizes,
//! occasional rejected events) the fixed-point crate tracks the f64 reference.

use proptest::prelude::*;
use sim_host::replay::Mode;
use sim_host::summary::rel_err;
use sim_host::timely::lockstep::Lockstep;
use sim_host::timely::params;
use std::path::Path;

fn walk() -> impl Strategy<Value = Vec<(i64, u8, u8)>> {
    // (RTT step in ns, repeats, segment-size choice)
    proptest::collection::vec((-40_000i64..40_000, 1u8..30, 0u8..4), 1..60)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn fixed_tracks_f64_on_random_rtt_sequences(steps in walk(), start in 0u64..700_000) {
        let both = params::build(Path::new("prop"), &[]).unwrap();
        for mode in [Mode::Free, Mode::Forced] {
            let mut ls = Lockstep::new(&both, mode);
            let mut rtt = start as i64;
            let mut t = 0u64;
            let (mut n, mut agree, mut worst) = (0u32, 0u32, 0f64);
            for &(d, reps, sz) in &steps {
                rtt = (rtt + d).clamp(0, 1_500_000);
                let bytes = [1_500u32, 4_096, 16_384, 65_536][usize::from(sz)];
                let ser = u64::from(bytes) * 8 / 10; // whole ns for these sizes (65536 → 52428.8: rounded)
                for _ in 0..reps {
                    t += 13_000;
                    let (s, c) = if sz == 3 && reps == 29 { (t + 5, t) } else { (t, t + rtt as u64 + ser) };
                    let o = ls.step(s, c, bytes);
                    n += 1;
                    agree += u32::from(o.branch_ref == o.branch_fixed);
                    worst = worst.max(rel_err(o.rate_fixed_bps as f64, o.rate_ref_bps));
                }
            }
            prop_assert!(f64::from(agree) >= 0.99 * f64::from(n), "{mode:?}: {agree}/{n}");
            prop_assert!(worst <= 1e-2, "{mode:?}: worst {worst:e}");
        }
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
            set.push(sim_host::trace::parse_cli_set("app_limited=0.8").unwrap());
        }
        if scale {
            set.push(sim_host::trace::parse_cli_set("per_completion_scaling=true").unwrap());
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
