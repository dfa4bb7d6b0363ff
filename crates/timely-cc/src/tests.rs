//! Unit tests: worked numbers from the paper's Algorithm 1 and the defaults, the branch
//! rules, config validation, and proptest invariants (rate within bounds, nothing panics).
#![allow(
    clippy::float_arithmetic,
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::panic
)]
extern crate std;
use super::*;
use proptest::prelude::*;

const CFG: Config = Config::DEFAULT;

/// A completion whose RTT (after removing serialisation) is exactly `rtt_ns`: 1500 B at
/// 10 Gb/s serialise in exactly 1200 ns.
fn ev(t: u64, rtt_ns: u64) -> Completion {
    Completion::new(t, t + rtt_ns + 1200, 1500)
}

fn started(rtt_ns: u64) -> State {
    let mut st = State::new(&CFG);
    assert_eq!(st.on_completion(&CFG, &ev(0, rtt_ns)).branch, Branch::Init);
    st
}

#[test]
fn state_is_16_bytes() {
    assert_eq!(core::mem::size_of::<State>(), 16);
}

#[test]
fn default_config_is_the_papers() {
    let p = CFG.params();
    assert_eq!(p.line_rate_bps, 10_000_000_000);
    assert_eq!(
        (p.t_low_ns, p.t_high_ns, p.min_rtt_ns),
        (50_000, 500_000, 20_000)
    );
    assert_eq!((p.alpha, p.beta), (Ratio::new(7, 8), Ratio::new(4, 5)));
    assert_eq!(CFG.alpha_q16, 57_344); // 0.875 exactly
    assert_eq!(State::new(&CFG).rate_bps(), 10_000_000_000);
}

#[test]
fn serialisation_delay_is_removed() {
    // 16 KB at 10 Gb/s: 16384·8/10 = 13107.2 ns → Q4 209715.2 → 209715.
    let e = Completion::new(1_000, 1_000 + 113_107, 16_384);
    let q4 = State::rtt_q4(&CFG, &e).unwrap();
    assert_eq!(q4, 113_107 * 16 - 209_715); // 99 999.8125 ns
    // Faster than its own serialisation: clamped at 0.
    assert_eq!(
        State::rtt_q4(&CFG, &Completion::new(0, 10, 16_384)),
        Some(0)
    );
}

#[test]
fn completion_before_send_is_skipped_without_state_change() {
    let mut st = started(100_000);
    let before = st;
    let u = st.on_completion(&CFG, &Completion::new(1_000, 999, 64));
    assert_eq!(u.branch, Branch::Skip);
    assert_eq!(st, before);
    let mut fresh = State::new(&CFG);
    assert_eq!(
        fresh.on_completion(&CFG, &Completion::new(5, 4, 0)).branch,
        Branch::Skip
    );
    assert!(!fresh.started());
}

#[test]
fn first_sample_only_initialises() {
    let mut st = State::new(&CFG);
    let u = st.on_completion(&CFG, &ev(0, 30_000));
    assert_eq!((u.branch, u.rate_bps), (Branch::Init, 10_000_000_000));
    assert_eq!(st.prev_rtt_q4(), 30_000 * 16);
    assert_eq!(st.rtt_diff_q7(), 0);
}

#[test]
fn decrease_above_t_high_worked_number() {
    // rtt 600 µs: 1 − 0.8·(1 − 500/600) = 0.86667 → 8.6667 Gb/s.
    let mut st = started(100_000);
    let u = st.on_completion(&CFG, &ev(10, 600_000));
    assert_eq!(u.branch, Branch::High);
    let want = 10e9 * (1.0 - 0.8 * (1.0 - 500.0 / 600.0));
    assert!(
        (u.rate_bps as f64 - want).abs() <= 128.0,
        "{} vs {want}",
        u.rate_bps
    );
    // rtt 1 ms: 1 − 0.8·0.5 = 0.6 → 6 Gb/s of the 8.667.
    let u = st.on_completion(&CFG, &ev(20, 1_000_000));
    assert!(
        (u.rate_bps as f64 - want * 0.6).abs() <= 256.0,
        "{}",
        u.rate_bps
    );
    assert_eq!(st.hai_count(), 0);
}

#[test]
fn gradient_decrease_worked_number() {
    // prev 100 µs, new 104 µs: new_diff = 4 µs, rtt_diff = 0.875·4000 = 3500 ns,
    // g = 3500/20000 = 0.175, factor 1 − 0.8·0.175 = 0.86 → 8.6 Gb/s.
    let mut st = started(100_000);
    let u = st.on_completion(&CFG, &ev(10, 104_000));
    assert_eq!(u.branch, Branch::Dec);
    assert_eq!(st.rtt_diff_q7(), 3_500 * 128);
    assert!((u.rate_bps as f64 - 8.6e9).abs() <= 128.0, "{}", u.rate_bps);
}

#[test]
fn low_rtt_adds_delta_and_leaves_the_hai_counter() {
    let mut st = State::from_raw(1_000_000_000 / 128, 100_000 * 16, -128, 3, true);
    let u = st.on_completion(&CFG, &ev(0, 40_000));
    assert_eq!(u.branch, Branch::Low);
    assert_eq!(u.rate_bps, 1_010_000_000);
    assert_eq!(st.hai_count(), 3);
}

#[test]
fn hai_after_five_non_positive_gradients() {
    // Falling RTT in the gradient zone: g < 0 every time; counter 1..4 → inc, 5.. → hai.
    let mut st = State::from_raw(1_000_000_000 / 128, 300_000 * 16, 0, 0, true);
    let mut rate = 1_000_000_000u64;
    for i in 1..=8u64 {
        let u = st.on_completion(&CFG, &ev(i, 300_000 - i * 1_000));
        if i < 5 {
            assert_eq!(u.branch, Branch::Inc, "event {i}");
            rate += 10_000_000;
        } else {
            assert_eq!(u.branch, Branch::Hai, "event {i}");
            rate += 50_000_000;
        }
        assert_eq!(u.rate_bps, rate);
    }
}

#[test]
fn rate_is_clamped_to_min_and_max() {
    // At max: increases stay at max.
    let mut st = started(30_000);
    assert_eq!(
        st.on_completion(&CFG, &ev(1, 30_000)).rate_bps,
        10_000_000_000
    );
    // Huge gradient: factor negative → min rate.
    let mut st = started(60_000);
    let u = st.on_completion(&CFG, &ev(1, 400_000)); // g = 0.875·340000/20000 ≫ 1
    assert_eq!((u.branch, u.rate_bps), (Branch::Dec, 10_000_000));
}

/// Regression (identical-RTT EWMA): after a rise, a run of equal RTTs must keep `rtt_diff > 0`
/// (the exact EWMA's sign), not round to 0 and flip to the increase branches.
#[test]
fn identical_rtts_keep_the_ewma_sign() {
    let mut st = started(100_000);
    st.on_completion(&CFG, &ev(1, 101_000)); // rising: rtt_diff = 875 ns
    for i in 0..500u64 {
        let u = st.on_completion(&CFG, &ev(2 + i, 101_000));
        assert_eq!(u.branch, Branch::Dec, "event {i}");
        assert!(st.rtt_diff_q7() > 0);
    }
    // After the run the diff is one ulp and the rate barely moves per event.
    assert_eq!(st.rtt_diff_q7(), 1);
    // And falling: stays negative, so the increase branches continue.
    let mut st = started(100_000);
    st.on_completion(&CFG, &ev(1, 99_000));
    for i in 0..500u64 {
        let b = st.on_completion(&CFG, &ev(2 + i, 99_000)).branch;
        assert!(matches!(b, Branch::Inc | Branch::Hai));
    }
    assert_eq!(st.rtt_diff_q7(), -1);
}

#[test]
fn sign_preserving_rounding() {
    assert_eq!(sign_preserving_round_q16(0), 0);
    assert_eq!(sign_preserving_round_q16(1), 1);
    assert_eq!(sign_preserving_round_q16(-1), -1);
    assert_eq!(sign_preserving_round_q16(3 << 16), 3);
    assert_eq!(sign_preserving_round_q16((5 << 16) + (1 << 15)), 6); // ties away
    assert_eq!(sign_preserving_round_q16(-(5 << 16) - (1 << 15)), -6);
    assert_eq!(sign_preserving_round_q16(i64::MAX >> 8), i32::MAX);
}

#[test]
fn ratio_error_bound() {
    // Sweep T_high/rtt over many magnitudes, including rtt above the u32 range.
    let mut worst = 0f64;
    for &num in &[1u32, 800_000, 8_000_000, (1 << 28) - 1, u32::MAX - 1] {
        let mut den = u64::from(num) + 1;
        while den < (1u64 << 50) {
            let q = ratio_q30(num, den) as f64 / 2f64.powi(30);
            let want = f64::from(num) / den as f64;
            worst = worst.max((q - want).abs());
            den = den + den / 7 + 13;
        }
    }
    // ≤ 1e-9 relative (≤ 1e-9 absolute since ratio < 1) plus 2^-31 for the Q30 rounding.
    assert!(worst <= 1e-9 + 2f64.powi(-31), "{worst:e}");
}

#[test]
fn invalid_configs_are_rejected() {
    let d = Params::DEFAULT;
    let bad = [
        (
            Params {
                t_low_ns: 600_000,
                ..d
            },
            ConfigError::TLowAboveTHigh,
        ),
        (
            Params {
                min_rate_bps: 0,
                ..d
            },
            ConfigError::ZeroRate,
        ),
        (Params { delta_bps: 0, ..d }, ConfigError::ZeroRate),
        (
            Params {
                min_rate_bps: 20_000_000_000,
                ..d
            },
            ConfigError::MinAboveMax,
        ),
        (
            Params {
                init_rate_bps: 1_000,
                ..d
            },
            ConfigError::InitOutOfRange,
        ),
        (
            Params {
                beta: Ratio::new(0, 1),
                ..d
            },
            ConfigError::BetaOutOfRange,
        ),
        (
            Params {
                beta: Ratio::new(3, 2),
                ..d
            },
            ConfigError::BetaOutOfRange,
        ),
        (
            Params {
                alpha: Ratio::new(1, 0),
                ..d
            },
            ConfigError::AlphaOutOfRange,
        ),
        (Params { min_rtt_ns: 0, ..d }, ConfigError::ZeroMinRtt),
        (Params { hai_n: 0, ..d }, ConfigError::ZeroHaiN),
        (
            Params {
                hai_after: 256,
                ..d
            },
            ConfigError::HaiAfterTooLarge,
        ),
        (
            Params {
                line_rate_bps: 999_999,
                ..d
            },
            ConfigError::LineRateTooLow,
        ),
        (
            Params {
                t_high_ns: MAX_RTT_NS + 1,
                ..d
            },
            ConfigError::THighOutOfRange,
        ),
        (
            Params {
                max_rate_bps: MAX_RATE_BPS + 1,
                line_rate_bps: MAX_RATE_BPS + 1,
                ..d
            },
            ConfigError::RateTooHigh,
        ),
        (
            Params {
                app_limited: Some(Ratio::new(0, 5)),
                ..d
            },
            ConfigError::AppLimitedOutOfRange,
        ),
    ];
    for (p, e) in bad {
        assert_eq!(Config::new(p), Err(e), "{p:?}");
    }
    // The compile-time constructor accepts the defaults.
    const C: Result<Config, ConfigError> = Config::new(Params::DEFAULT);
    assert!(C.is_ok());
}

#[test]
fn app_limited_rule_suppresses_increases() {
    let cfg = Config::new(Params {
        app_limited: Some(Ratio::new(4, 5)),
        ..Params::DEFAULT
    })
    .unwrap();
    let mut st = State::from_raw(1_000_000_000 / 128, 100_000 * 16, 0, 0, true);
    // Sending at 700 Mb/s < 80 % of 1 Gb/s: no increase.
    let mut e = ev(0, 40_000);
    e.sending_rate_bps = Some(700_000_000);
    let u = st.on_completion(&cfg, &e);
    assert!(u.app_limited && u.rate_bps == 1_000_000_000 && u.branch == Branch::Low);
    // At 800 Mb/s: allowed.
    e.sending_rate_bps = Some(800_000_000);
    let u = st.on_completion(&cfg, &e);
    assert!(!u.app_limited && u.rate_bps == 1_010_000_000);
}

#[test]
fn per_completion_scaling_divides_changes() {
    let cfg = Config::new(Params {
        per_completion_scaling: true,
        ..Params::DEFAULT
    })
    .unwrap();
    // 1 Gb/s, 1500 B: 12 µs per segment, minRTT 20 µs → 1.667 completions per minRTT,
    // s = 12/20 = 0.6: the increase is 0.6·10 Mb/s = 6 Mb/s.
    let mut st = State::from_raw(1_000_000_000 / 128, 100_000 * 16, 0, 0, true);
    let u = st.on_completion(&cfg, &ev(0, 40_000));
    assert!(
        (u.rate_bps as f64 - 1.006e9).abs() < 1_000.0,
        "{}",
        u.rate_bps
    );
    // A large segment (s = 1): unscaled.
    let mut st = State::from_raw(1_000_000_000 / 128, 100_000 * 16, 0, 0, true);
    let u = st.on_completion(&cfg, &Completion::new(0, 40_000 + 52_429, 65_536));
    assert_eq!(u.rate_bps, 1_010_000_000);
}

proptest! {
    #[test]
    fn rate_stays_in_bounds_and_nothing_panics(
        evs in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<u32>(), any::<Option<u64>>()), 1..200),
        app in any::<bool>(), scale in any::<bool>(),
    ) {
        let cfg = Config::new(Params {
            app_limited: app.then_some(Ratio::new(4, 5)),
            per_completion_scaling: scale,
            ..Params::DEFAULT
        }).unwrap();
        let mut st = State::new(&cfg);
        for (a, b, bytes, s) in evs {
            let e = Completion { t_send_ns: a, t_complete_ns: b, bytes, sending_rate_bps: s };
            let before = st;
            let u = st.on_completion(&cfg, &e);
            if u.branch == Branch::Skip {
                prop_assert_eq!(st, before);
            } else {
                prop_assert!((10_000_000..=10_000_000_000).contains(&u.rate_bps));
            }
        }
    }

    #[test]
    fn realistic_rtts_stay_in_bounds(rtts in proptest::collection::vec(0u64..2_000_000, 1..300)) {
        let mut st = State::new(&CFG);
        for (i, r) in rtts.into_iter().enumerate() {
            let u = st.on_completion(&CFG, &ev(i as u64 * 1_000, r));
            prop_assert!((10_000_000..=10_000_000_000).contains(&u.rate_bps));
        }
    }

    #[test]
    fn arbitrary_raw_state_is_safe(rate: u32, prev: u32, diff: i32, cnt: u8, s: bool, t: u64, d in 0u64..10_000_000, bytes: u32) {
        let mut st = State::from_raw(rate, prev, diff, cnt, s);
        let u = st.on_completion(&CFG, &Completion::new(t, t.saturating_add(d), bytes));
        prop_assert!((10_000_000..=10_000_000_000).contains(&u.rate_bps) || u.branch == Branch::Init);
    }
}
