//! Unit tests: worked numbers from the paper's Algorithm 1 and its §6 defaults, the branch
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

/// A completion whose RTT is exactly `rtt_ns` (a zero-byte segment: nothing to serialise).
fn ev(t: u64, rtt_ns: u64) -> Completion {
    Completion::new(t, t + rtt_ns, 0)
}

/// A state from raw parts with `rtt_diff` given in `Q.4` ns.
fn raw(rate: u32, prev: u32, diff_q4: i64, resid: i16, cnt: u8, started: bool) -> State {
    State::from_raw_parts(RawParts {
        rate_u128bps: rate,
        prev_rtt_ns: U28F4::from_bits(prev),
        rtt_diff_ns: I60F68::from_bits(i128::from(diff_q4) << 64),
        residual: resid,
        hai_count: cnt,
        started,
    })
}

/// `rtt_diff` in `Q.4` ns (floored).
fn diff_q4(st: &State) -> i64 {
    (st.rtt_diff_ns().to_bits() >> 64) as i64
}

fn started(rtt_ns: u64) -> State {
    let mut st = State::new(&CFG);
    assert_eq!(
        st.on_completion(&CFG, &ev(0, rtt_ns)).branch,
        TimelyBranch::Init
    );
    st
}

#[test]
fn state_is_24_bytes() {
    assert_eq!(core::mem::size_of::<State>(), 24);
    assert_eq!(core::mem::align_of::<State>(), 4);
    // The C block CcTimelyConfig (cc-ffi) must hold it; 208 on a 64-bit host.
    assert!(
        core::mem::size_of::<Config>() <= 208,
        "{}",
        core::mem::size_of::<Config>()
    );
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
    assert_eq!(CFG.one_minus_alpha_q32, 1 << 29); // 1 − 0.875 = 1/8 exactly
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
    assert_eq!(u.branch, TimelyBranch::Skip);
    assert_eq!(st, before);
    let mut fresh = State::new(&CFG);
    assert_eq!(
        fresh.on_completion(&CFG, &Completion::new(5, 4, 0)).branch,
        TimelyBranch::Skip
    );
    assert!(!fresh.started());
}

#[test]
fn first_sample_only_initialises() {
    let mut st = State::new(&CFG);
    let u = st.on_completion(&CFG, &ev(0, 30_000));
    assert_eq!((u.branch, u.rate_bps), (TimelyBranch::Init, 10_000_000_000));
    assert_eq!(st.prev_rtt_ns().to_bits(), 30_000 * 16);
    assert_eq!(diff_q4(&st), 0);
}

#[test]
fn decrease_above_t_high_worked_number() {
    // rtt 600 µs: 1 − 0.8·(1 − 500/600) = 0.86667 → 8.6667 Gb/s.
    let mut st = started(100_000);
    let u = st.on_completion(&CFG, &ev(10, 600_000));
    assert_eq!(u.branch, TimelyBranch::High);
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
        "{} vs {want}",
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
    assert_eq!(u.branch, TimelyBranch::Dec);
    assert_eq!(diff_q4(&st), 3_500 * 16);
    assert!((u.rate_bps as f64 - 8.6e9).abs() <= 128.0, "{}", u.rate_bps);
}

#[test]
fn low_rtt_adds_delta_and_leaves_the_hai_counter() {
    let mut st = raw(1_000_000_000 / 128, 100_000 * 16, -128, 0, 3, true);
    let u = st.on_completion(&CFG, &ev(0, 40_000));
    assert_eq!(u.branch, TimelyBranch::Low);
    assert_eq!(u.rate_bps, 1_010_000_000);
    assert_eq!(st.hai_count(), 3);
}

#[test]
fn hai_after_five_non_positive_gradients() {
    // Falling RTT in the gradient zone: g < 0 every time; counter 1..4 → inc, 5.. → hai.
    let mut st = raw(1_000_000_000 / 128, 300_000 * 16, 0, 0, 0, true);
    let mut rate = 1_000_000_000u64;
    for i in 1..=8u64 {
        let u = st.on_completion(&CFG, &ev(i, 300_000 - i * 1_000));
        if i < 5 {
            assert_eq!(u.branch, TimelyBranch::Inc, "event {i}");
            rate += 10_000_000;
        } else {
            assert_eq!(u.branch, TimelyBranch::Hai, "event {i}");
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
    assert_eq!((u.branch, u.rate_bps), (TimelyBranch::Dec, 10_000_000));
}

/// Regression (`rtt_diff` Q24.7 saturated at ±16.7 ms while RTTs reached 268 ms): a 50 ms
/// spike must leave the EWMA exact, so the later small rise keeps the reference's sign (`inc`).
#[test]
fn rtt_spike_of_50ms_does_not_saturate_the_ewma() {
    let mut st = State::new(&CFG);
    let mut branches = std::vec::Vec::new();
    for (i, rtt) in [60_000u64, 50_000_000, 60_000, 60_000, 60_000, 130_000]
        .into_iter()
        .enumerate()
    {
        let u = st.on_completion(&CFG, &Completion::new(0, rtt, 0));
        branches.push(u.branch);
        if i == 1 {
            // 0.875 · (50 ms − 60 µs) exactly, in Q4.
            assert_eq!(diff_q4(&st), 699_160_000);
        }
    }
    // f64: d = 43.6975 ms, −37.29 ms, −4.66 ms, −0.583 ms, then 0.875·70 µs − 0.073 ms < 0?
    let mut d = 0.0f64;
    let mut prev = 60_000.0f64;
    for r in [50_000_000.0f64, 60_000.0, 60_000.0, 60_000.0, 130_000.0] {
        d = 0.125 * d + 0.875 * (r - prev);
        prev = r;
    }
    let want = if d <= 0.0 {
        TimelyBranch::Inc
    } else {
        TimelyBranch::Dec
    };
    assert_eq!(branches[5], want, "f64 rtt_diff {d}");
    assert_eq!(
        branches,
        [
            TimelyBranch::Init,
            TimelyBranch::High,
            TimelyBranch::Inc,
            TimelyBranch::Inc,
            TimelyBranch::Inc,
            want
        ]
    );
}

/// docs/timely.md § "Conventions": every RTT of 2^31 − 1 Q4 (134.2 ms) or more saturates there, on
/// the RTT engine's output, `prev_rtt` and the `T_high` ratio alike.
#[test]
fn rtt_above_134ms_saturates() {
    let mut st = started(100_000);
    let u = st.on_completion(&CFG, &Completion::new(0, 300_000_000, 0));
    assert_eq!(u.branch, TimelyBranch::High);
    assert_eq!(u.rtt_ns.to_bits(), RTT_SAT_Q4);
    assert_eq!(st.prev_rtt_ns().to_bits(), RTT_SAT_Q4);
    // 1 − 0.8·(1 − 500 µs/134.2177 ms) = 0.202980…
    let sat_ns = f64::from(RTT_SAT_Q4) / 16.0;
    let want = 10e9 * (1.0 - 0.8 * (1.0 - 500_000.0 / sat_ns));
    assert!((u.rate_bps as f64 - want).abs() <= 256.0, "{}", u.rate_bps);
    assert!(diff_q4(&st) > 0 && diff_q4(&st) <= i64::from(RTT_SAT_Q4));
    // A span of 2^27 ns exactly (the 32-bit engine's limit) and one of u64::MAX ns.
    assert_eq!(
        State::rtt_q4(&CFG, &Completion::new(0, 1 << 27, 0)),
        Some(RTT_SAT_Q4)
    );
    assert_eq!(
        State::rtt_q4(&CFG, &Completion::new(0, u64::MAX, 0)),
        Some(RTT_SAT_Q4)
    );
    assert_eq!(
        State::rtt_q4(&CFG, &Completion::new(0, (1 << 27) - 1, 0)),
        Some(RTT_SAT_Q4 - 15)
    );
}

/// Regression: with per-completion scaling, `β·g` was clamped to 2 before the scaling, so
/// `1 − s·(β·g)` stayed positive for a small segment where the reference reaches `min_rate`.
#[test]
fn per_completion_scaling_of_a_huge_gradient_reaches_min_rate() {
    let cfg = Config::new(Params {
        per_completion_scaling: true,
        ..Params::DEFAULT
    })
    .unwrap();
    let mut st = State::new(&cfg);
    st.on_completion(&cfg, &Completion::new(0, 223_679, 16_384));
    st.on_completion(&cfg, &Completion::new(0, 63_355, 16_384));
    let u = st.on_completion(&cfg, &Completion::new(0, 493_577, 1_779));
    assert_eq!((u.branch, u.rate_bps), (TimelyBranch::Dec, 10_000_000));
}

/// Found by the `timely_api` fuzz target: per-completion scaling held `8e9/(128·minRTT)` with 8
/// fraction bits and truncated `bytes·` that to whole rate units before dividing by the rate, so
/// `s` lost precision as minRTT grew (6 % at minRTT 1.07 s, 6e-5 at 1 ms: the docs promise
/// 1.5e-5) and for small segments. `T_high` cuts, scaled, against `s` and the factor in f64:
/// now within one rate unit and 1e-8 of the rate.
#[test]
fn per_completion_scaling_lost_precision_with_a_long_min_rtt() {
    // (minRTT ns, segment bytes, rate b/s): the fuzz case first.
    for (min_rtt, bytes, rate) in [
        (1_073_761_824u32, 520_093_760u32, 400e9),
        (1_000_000, 1_500, 1e9),
        (20_000, 64, 100e6),
        (250_000_000, 9_000, 25e9),
        (4_000_000_000, 1, 10e6),
    ] {
        let cfg = Config::new(Params {
            line_rate_bps: 400_000_000_000,
            max_rate_bps: 400_000_000_000,
            init_rate_bps: 400_000_000_000,
            min_rtt_ns: min_rtt,
            per_completion_scaling: true,
            ..Params::DEFAULT
        })
        .unwrap();
        let mut st = raw((rate / 128.0) as u32, 100_000 * 16, 0, 0, 0, true);
        let u = st.on_completion(&cfg, &Completion::new(0, 150_000_000, bytes));
        assert_eq!(u.branch, TimelyBranch::High);
        let rtt = f64::from(u.rtt_ns.to_bits()) / 16.0;
        let cut = 0.8 * (1.0 - 500_000.0 / rtt);
        let s = (f64::from(bytes) * 8.0 / (rate * f64::from(min_rtt) * 1e-9)).min(1.0);
        let want = rate * (1.0 - s * cut);
        let err = (u.rate_bps as f64 - want).abs();
        assert!(
            err <= 128.0 + 1e-8 * rate,
            "minRTT {min_rtt} ns, {bytes} B at {rate:e} b/s (s = {s:.3e}): {} vs {want:.0}",
            u.rate_bps
        );
    }
}

/// Found by the `timely_api` fuzz target: the config saturates `δ` and `N·δ` at the rate
/// format's top (549.7 Gb/s), which no unscaled increase can tell from the real step (it
/// reaches `max_rate` either way), but per-completion scaling then took `s` of the saturated
/// step: `s·δ` fell short where the reference's landed inside `[min, max]`.
#[test]
fn per_completion_scaling_of_a_step_past_the_rate_format_used_the_saturated_step() {
    // (δ b/s, N, HAI counter before, rate b/s, bytes): the fuzz case's δ on `inc`, then N·δ = 1 Tb/s on `hai`.
    for (delta, n, cnt, rate, bytes) in [
        (
            28_146_423_956_018_816u64,
            5u32,
            0u8,
            87_307_747_072f64,
            4u32,
        ),
        (200_000_000_000, 5, 10, 10e9, 2_000),
    ] {
        let cfg = Config::new(Params {
            line_rate_bps: 100_000_000_000,
            max_rate_bps: 100_000_000_000,
            init_rate_bps: 100_000_000_000,
            min_rtt_ns: 1_658_400,
            delta_bps: delta,
            hai_n: n,
            per_completion_scaling: true,
            ..Params::DEFAULT
        })
        .unwrap();
        // prev RTT 200 µs, now 100 µs: g < 0.
        let mut st = raw((rate / 128.0) as u32, 200_000 * 16, 0, 0, cnt, true);
        let u = st.on_completion(&cfg, &Completion::new(0, 100_000, bytes));
        let s = f64::from(bytes) * 8.0 / (rate * 1_658_400e-9);
        let step = if cnt >= 5 {
            f64::from(n) * delta as f64
        } else {
            delta as f64
        };
        let want = (rate + s * step).min(100e9);
        assert!(want < 100e9, "the case must land inside the bounds");
        // `s` is Q30 (2^-31 absolute, rounded): the step is s·N·δ to N·δ·2^-31.
        assert!(
            (u.rate_bps as f64 - want).abs() <= 256.0 + step * 2f64.powi(-31),
            "{:?}: {} vs {want:.0}",
            u.branch,
            u.rate_bps
        );
    }
}

/// Found by the `timely_api` fuzz target: the 32-bit RTT engine took `t_complete − t_send`
/// modulo 2^64, so a `t_complete` that wrapped past 2^64 ns to just after 0 (here 47 µs before
/// the wrap to 68.5 µs after it) was measured as a 116 µs RTT instead of being rejected like
/// every other `t_complete < t_send` (and unlike `State::rtt_q4`, which said `None`).
#[test]
fn t_complete_wrapped_past_2_pow_64_was_measured_as_a_short_rtt() {
    let wrapped = Completion::new(u64::MAX - 47_296, 68_536, 4_096);
    assert_eq!(State::rtt_q4(&CFG, &wrapped), None);
    for started in [false, true] {
        let mut st = raw(1_000_000, 30_000 * 16, 0, 0, 0, started);
        let before = st;
        let u = st.on_completion(&CFG, &wrapped);
        assert_eq!((u.branch, u.rtt_ns.to_bits()), (TimelyBranch::Skip, 0));
        assert_eq!(st, before);
    }
    // The same span just below 2^64 (no wrap): measured.
    let late = Completion::new(u64::MAX - 200_000, u64::MAX - 200_000 + 115_832, 0);
    let mut st = State::new(&CFG);
    assert_eq!(st.on_completion(&CFG, &late).rtt_ns.to_bits(), 115_832 * 16);
    // Across a 2^32 ns boundary of the high word (no wrap of the u64): measured.
    let across = Completion::new((1 << 32) - 1_000, (1 << 32) + 9_000, 0);
    assert_eq!(
        State::new(&CFG)
            .on_completion(&CFG, &across)
            .rtt_ns
            .to_bits(),
        10_000 * 16
    );
}

/// f64 model of a hold after a step: the number of identical samples after the step for which
/// the f64 gradient is still > 0.
fn f64_dec_events(alpha: f64, step_ns: f64, holds: usize) -> usize {
    let mut d = alpha * step_ns;
    let mut n = 0;
    for _ in 0..holds {
        d *= 1.0 - alpha;
        if d / 20_000.0 > 0.0 {
            n += 1;
        }
    }
    n
}

/// Regression: after a rise, a hold of identical RTTs left `rtt_diff` at +1 ulp for ever
/// and the rate drifted down by 3.1e-7 per event. Now: the residual keeps `dec` exactly as long
/// as the f64 gradient is non-zero (±1 event), with no effect on the rate, then increases.
#[test]
fn identical_rtts_after_a_rise_do_not_drift_the_rate() {
    for (num, den) in [(7u32, 8u32), (1, 2), (3, 10), (1, 16), (1, 1), (99, 100)] {
        let cfg = Config::new(Params {
            alpha: Ratio::new(num, den),
            ..Params::DEFAULT
        })
        .unwrap();
        let alpha = f64::from(num) / f64::from(den);
        for step in [1_000u64, 37, 5_000] {
            let mut st = State::new(&cfg);
            st.on_completion(&cfg, &ev(0, 100_000));
            st.on_completion(&cfg, &ev(1, 100_000 + step));
            let holds = 30_000;
            let mut decs = 0;
            let mut last_dec_rate = None;
            let mut rate_at_residual = None;
            for i in 0..holds {
                let u = st.on_completion(&cfg, &ev(2 + i as u64, 100_000 + step));
                if u.branch == TimelyBranch::Dec {
                    assert_eq!(decs, i, "α {alpha} step {step}: dec after an increase");
                    decs += 1;
                    last_dec_rate = Some(u.rate_bps);
                    if st.rtt_diff_ns().to_bits() == 0 {
                        // A residual: the rate no longer moves.
                        let r = *rate_at_residual.get_or_insert(u.rate_bps);
                        assert_eq!(u.rate_bps, r, "α {alpha} step {step} event {i}");
                    }
                } else {
                    assert!(matches!(u.branch, TimelyBranch::Inc | TimelyBranch::Hai));
                }
            }
            let want = f64_dec_events(alpha, step as f64, holds);
            // α ≥ 1/2: ±1 event. Below, the hold stalls at a value that is only known to ±½ ulp
            // (up to one bit of magnitude): ±(1 + 1/log2(1/(1−α))) events.
            let tol = if alpha >= 0.5 {
                1
            } else {
                1 + (1.0 / (1.0 / (1.0 - alpha)).log2()).ceil() as usize
            };
            assert!(
                decs.abs_diff(want) <= tol,
                "α {alpha} step {step}: fixed {decs} dec events, f64 {want}"
            );
            assert!(last_dec_rate.is_some() || want <= 1);
        }
    }
}

/// Regression: `alpha = 0`, one that rounds to 0, and small ones that lose the EWMA's
/// accuracy were accepted.
#[test]
fn alpha_zero_or_below_one_sixteenth_is_rejected() {
    for (num, den) in [(0u32, 1u32), (1, 1_000_000), (1, 1_000), (1, 17), (2, 1)] {
        let p = Params {
            alpha: Ratio::new(num, den),
            ..Params::DEFAULT
        };
        assert_eq!(
            Config::new(p),
            Err(ConfigError::AlphaOutOfRange),
            "{num}/{den}"
        );
    }
    for (num, den) in [(1u32, 16u32), (1, 1), (875, 1000)] {
        let p = Params {
            alpha: Ratio::new(num, den),
            ..Params::DEFAULT
        };
        assert!(Config::new(p).is_ok(), "{num}/{den}");
    }
}

/// Regression: rates were rounded silently to the 128 b/s unit (δ = 100 b/s became 128).
#[test]
fn rates_not_representable_in_128bps_units_are_rejected() {
    let d = Params::DEFAULT;
    for p in [
        Params {
            delta_bps: 100,
            ..d
        },
        Params {
            min_rate_bps: 100,
            ..d
        },
        Params {
            min_rate_bps: 10_000,
            ..d
        },
    ] {
        assert_eq!(
            Config::new(p),
            Err(ConfigError::RateNotRepresentable),
            "{p:?}"
        );
    }
    for p in [
        Params {
            delta_bps: 128,
            ..d
        },
        Params {
            min_rate_bps: 524_288 + 13,
            ..d
        },
    ] {
        assert!(Config::new(p).is_ok(), "{p:?}");
    }
}

#[test]
fn log2_q16_is_accurate() {
    for x in [1u64, 2, 3, 5, 20_000, 123_456_789, u64::MAX, 1 << 40] {
        let got = f64::from(config::log2_q16(x)) / 65_536.0;
        assert!((got - (x as f64).log2()).abs() < 1e-4, "{x}: {got}");
    }
}

/// The 32-bit squaring (Q30 mantissa) is at most one Q16 unit below the exact floor, over every
/// bit length and mantissas spread across `[1, 2)` (powers of two exact).
#[test]
fn log2_q16_is_the_floor_or_one_unit_below() {
    let mut worst = 0i64;
    for int in 0..64u32 {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ u64::from(int);
        for k in 0..2_000u64 {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let x = if k == 0 {
                1u64 << int
            } else {
                (1u64 << int) | (seed >> (64 - int.max(1))) >> 1
            };
            let x = x.max(1);
            let got = i64::from(config::log2_q16(x));
            // floor(log2(x)·2^16) from f64 (53-bit log2: exact enough away from unit edges).
            let exact = (x as f64).log2() * 65_536.0;
            let want = exact.floor() as i64;
            if (exact - exact.round()).abs() < 1e-6 && exact.round() as i64 != want {
                continue; // too close to a unit edge for f64 to say which side
            }
            assert!(
                got == want || got == want - 1,
                "x = {x}: {got} vs floor {want} ({exact})"
            );
            worst = worst.max(want - got);
        }
        assert_eq!(config::log2_q16(1u64 << int), int << 16, "2^{int} is exact");
    }
    assert!(worst <= 1);
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
    let mut st = raw(1_000_000_000 / 128, 100_000 * 16, 0, 0, 0, true);
    // Sending at 700 Mb/s < 80 % of 1 Gb/s: no increase.
    let mut e = ev(0, 40_000);
    e.sending_rate_bps = Some(700_000_000);
    let u = st.on_completion(&cfg, &e);
    assert!(u.app_limited && u.rate_bps == 1_000_000_000 && u.branch == TimelyBranch::Low);
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
    let mut st = raw(1_000_000_000 / 128, 100_000 * 16, 0, 0, 0, true);
    let u = st.on_completion(&cfg, &Completion::new(0, 40_000 + 1_200, 1_500));
    assert!(
        (u.rate_bps as f64 - 1.006e9).abs() < 1_000.0,
        "{}",
        u.rate_bps
    );
    // A large segment (s = 1): unscaled.
    let mut st = raw(1_000_000_000 / 128, 100_000 * 16, 0, 0, 0, true);
    let u = st.on_completion(&cfg, &Completion::new(0, 40_000 + 52_429, 65_536));
    assert_eq!(u.rate_bps, 1_010_000_000);
}

proptest! {
    /// The rate engine alone (`on_rtt`) does exactly what `on_completion` does after the RTT
    /// engine, for every event that is not skipped, with RTT spans on both sides of the 32-bit
    /// engine's limit (2^27 ns) and segment sizes past its cap at low line rates.
    #[test]
    fn on_rtt_matches_on_completion(
        evs in proptest::collection::vec((0u64..1_000_000, 0u64..200_000_000, 0u32..70_000, 0u8..6), 1..300),
        rate: u32, cnt: u8, opt in 0usize..3,
        line in prop_oneof![Just(10_000_000_000u64), Just(1_000_000), Just(25_000_000_000), Just(400_000_000_000), 1_000_000u64..500_000_000_000],
    ) {
        let cfg = Config::new(Params {
            app_limited: (opt == 1).then_some(Ratio::new(4, 5)),
            per_completion_scaling: opt == 2,
            line_rate_bps: line,
            min_rate_bps: 1_000_000,
            max_rate_bps: line,
            init_rate_bps: line,
            delta_bps: 1_000_000,
            ..Params::DEFAULT
        }).unwrap();
        let mut a = raw(rate, 0, 0, 0, cnt, false);
        let mut b = a;
        let mut last = 0;
        for (i, (rtt, long, bytes, kind)) in evs.into_iter().enumerate() {
            // Mostly realistic RTTs, often repeated, sometimes > 67 ms or reversed (skip).
            let (ts, tc) = match kind {
                0 => (i as u64 + long, i as u64),
                1 => (i as u64, i as u64 + long),
                2 | 3 => (i as u64, i as u64 + last),
                _ => (i as u64, i as u64 + rtt),
            };
            last = tc.saturating_sub(ts);
            let sr = (i % 3 == 0).then_some(u64::from(bytes) * 100_000);
            let e = Completion { t_send_ns: ts, t_complete_ns: tc, bytes, sending_rate_bps: sr };
            let ua = a.on_completion(&cfg, &e);
            match State::rtt_q4(&cfg, &e) {
                None => prop_assert_eq!(ua.branch, TimelyBranch::Skip),
                Some(r) => {
                    let ub = b.on_rtt(&cfg, U28F4::from_bits(r), bytes, sr);
                    prop_assert_eq!(ua, ub);
                }
            }
            prop_assert_eq!(a, b);
        }
    }

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
            if u.branch == TimelyBranch::Skip {
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
    fn arbitrary_raw_state_is_safe(rate: u32, prev: u32, diff: i128, resid: i16, cnt: u8, s: bool, t: u64, d in 0u64..300_000_000, bytes: u32) {
        let mut st = State::from_raw_parts(RawParts { rate_u128bps: rate, prev_rtt_ns: U28F4::from_bits(prev), rtt_diff_ns: I60F68::from_bits(diff), residual: resid, hai_count: cnt, started: s });
        let u = st.on_completion(&CFG, &Completion::new(t, t.saturating_add(d), bytes));
        prop_assert!((10_000_000..=10_000_000_000).contains(&u.rate_bps) || u.branch == TimelyBranch::Init);
    }
}

/// Regression: with `N = 1` and the HAI counter saturated at 255, the fast path compared the
/// unsaturated count (256) with a "never" threshold of 256 and took `hai`; the general path
/// (and Algorithm 1: `N = 1` is never hyperactive) takes `inc`.
#[test]
fn hai_never_with_n_1_and_saturated_counter() {
    let cfg = Config::new(Params {
        hai_n: 1,
        hai_after: 0,
        ..Params::DEFAULT
    })
    .unwrap();
    let mut st = raw(1_000_000, 100_000 * 16, 0, 0, 255, true);
    let u = st.on_completion(&cfg, &Completion::new(0, 90_000, 0));
    assert_eq!(u.branch, TimelyBranch::Inc);
    assert_eq!(st.hai_count(), 255);
}

proptest! {
    /// The EWMA's shift form (`1 − α = 2^-k`) is the product form bit for bit, for every
    /// dyadic `α` and any state and sample in range.
    #[test]
    fn ewma_shift_equals_the_product_for_dyadic_alpha(
        k in 1u32..=4,
        h in -(1i32 << 30)..(1i32 << 30),
        m: u32,
        l: u32,
        nd in -(1i32 << 30)..(1i32 << 30),
    ) {
        let den = 1u32 << k;
        let cfg = Config::new(Params { alpha: Ratio::new(den - 1, den), ..Params::DEFAULT }).unwrap();
        prop_assert_eq!(cfg.oma_shift, k);
        prop_assert_eq!(ewma(&cfg, h, m, l, nd), ewma_product(&cfg, h, m, l, nd));
    }
}

#[test]
fn non_dyadic_alpha_takes_the_product_form() {
    let cfg = Config::new(Params {
        alpha: Ratio::new(9, 10),
        ..Params::DEFAULT
    })
    .unwrap();
    assert_eq!(cfg.oma_shift, 0);
    assert_eq!(CFG.oma_shift, 3); // the paper's α = 7/8
}

#[test]
fn branch_codes_round_trip_through_from_code() {
    for (i, b) in TimelyBranch::ALL.iter().enumerate() {
        assert_eq!(*b as u8, i as u8, "ALL is in code order");
        assert_eq!(TimelyBranch::from_code(*b as u8), Some(*b));
    }
    for code in 7..=255u8 {
        assert_eq!(TimelyBranch::from_code(code), None);
    }
}

/// Found by `fuzz/timely_api` (a harness budget, not a defect): δ = 9 999 914 b/s is held as
/// 78 124 units of 128 b/s (9 999 872 b/s, accepted: within δ/8192 of the grid), so a HAI step of
/// N = 9 is 378 b/s short of 9·δ. The step is N times the rounded δ: off by at most N·64 b/s.
#[test]
fn hai_step_is_n_times_delta_rounded_to_the_rate_grid() {
    let p = Params {
        delta_bps: 9_999_914,
        hai_n: 9,
        ..Params::DEFAULT
    };
    let c = Config::new(p).unwrap();
    assert_eq!(c.delta_u, 78_124);
    assert_eq!(c.delta_hai_u, 9 * 78_124);
    let off = (9 * 9_999_914) - u64::from(c.delta_hai_u) * 128;
    assert_eq!(off, 378);
    assert!(off <= 9 * 64);
}

/// The countdown's `log2 |rtt_diff|` from the three words equals the 128-bit form it replaced
/// (`log2_q16` of the top 64 bits plus the bits shifted out), on magnitudes of every length.
#[test]
fn residual_events_from_words_equals_the_128_bit_form() {
    for alpha in [Ratio::new(7, 8), Ratio::new(1, 2), Ratio::new(3, 16)] {
        let cfg = Config::new(Params {
            alpha,
            ..Params::DEFAULT
        })
        .unwrap();
        let old = |mag: u128| -> i16 {
            let sh = 64u32.saturating_sub(mag.leading_zeros());
            let log2 = i64::from(config::log2_q16((mag >> sh) as u64)) + (i64::from(sh) << 16);
            let x = log2 - (64 << 16) + i64::from(cfg.resid_c_q16);
            if x <= 0 || cfg.resid_inv_l == 0 {
                return 0;
            }
            let q = ((x as u64) * u64::from(cfg.resid_inv_l)).div_ceil(1 << 32);
            q.saturating_sub(1).min(i16::MAX as u64) as i16
        };
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for bits in 1..=96u32 {
            for k in 0..300 {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let r = (u128::from(seed) << 64) | u128::from(seed.rotate_left(17) ^ k);
                let mag = (r >> (128 - bits)) | (1u128 << (bits - 1));
                let (hi, mid, lo) = ((mag >> 64) as u32, (mag >> 32) as u32, mag as u32);
                assert_eq!(
                    State::residual_events(&cfg, hi, mid, lo),
                    old(mag),
                    "mag {mag:#x}"
                );
            }
        }
    }
}

/// Configurations the fast-versus-general properties run on: the paper's, a 1 Mb/s and a
/// 400 Gb/s line (large and zero `M_hi`), `β = 1` with a short minRTT (a low `dthr`), HAI with
/// `N = 1`.
fn fast_form_configs() -> [Config; 5] {
    [
        CFG,
        Config::new(Params {
            line_rate_bps: 1_000_000,
            min_rate_bps: 128_000,
            max_rate_bps: 1_000_064,
            init_rate_bps: 1_000_064,
            delta_bps: 128_000,
            ..Params::DEFAULT
        })
        .unwrap(),
        Config::new(Params {
            line_rate_bps: 400_000_000_000,
            max_rate_bps: 400_000_000_000,
            init_rate_bps: 400_000_000_000,
            ..Params::DEFAULT
        })
        .unwrap(),
        Config::new(Params {
            beta: Ratio::new(1, 1),
            min_rtt_ns: 1_000,
            ..Params::DEFAULT
        })
        .unwrap(),
        Config::new(Params {
            hai_n: 1,
            ..Params::DEFAULT
        })
        .unwrap(),
    ]
}

proptest! {
    /// The RTT engine's 32-bit fast form gives the general form's RTT whenever it gives one, and
    /// gives one for every event inside its domain (same 2^32-ns window, span < 2^27 ns,
    /// segment ≤ `ser_cap_bytes`, serialisation ≤ the span).
    #[test]
    fn rtt_engine_fast_form_equals_the_general_one(
        c in 0usize..5,
        t_send: u64,
        dt in prop_oneof![0u64..2_000_000, 0u64..(1 << 28), ((1u64 << 32) - (1 << 28))..(1u64 << 32), any::<u64>()],
        bytes in prop_oneof![0u32..70_000, any::<u32>()],
        before: bool,
    ) {
        let cfg = fast_form_configs()[c];
        let t_complete = if before { t_send.wrapping_sub(dt) } else { t_send.wrapping_add(dt) };
        let ev = Completion::new(t_send, t_complete, bytes);
        let general = State::rtt_q4(&cfg, &ev);
        match State::rtt_q4_fast(&cfg, &ev) {
            Some(fast) => prop_assert_eq!(Some(fast), general),
            None => {
                let inside = t_complete >> 32 == t_send >> 32
                    && t_complete >= t_send
                    && t_complete - t_send < 1 << 27
                    && bytes <= cfg.ser_cap_bytes
                    && general.is_some_and(|r| r > 0 || (t_complete - t_send) * 16 == 0);
                prop_assert!(!inside, "fast form declined an event inside its domain");
            }
        }
    }

    /// An increase gives the rate the general one ([`State::grow`]) gives, for any rate, on
    /// configurations without an optional rule and with the application-limited rule firing
    /// (sending rate 0); its range is where the sum needs no clamp and no saturation.
    #[test]
    fn increase_fast_form_equals_the_general_one(
        c in 0usize..6,
        rate in prop_oneof![any::<u32>(), 0u32..100_000, (u32::MAX - 100_000)..=u32::MAX],
        hai: bool,
    ) {
        let (cfg, sending) = match fast_form_configs().get(c) {
            Some(cfg) => (*cfg, u64::MAX),
            None => (
                Config::new(Params { app_limited: Some(Ratio::new(1, 2)), ..Params::DEFAULT }).unwrap(),
                0,
            ),
        };
        let (branch, range, step) = if hai {
            (TimelyBranch::Hai, cfg.hai, cfg.delta_hai_u)
        } else {
            (TimelyBranch::Inc, cfg.inc, cfg.delta_u)
        };
        let mut fast = State::from_raw_parts(RawParts { rate_u128bps: rate, started: true, ..RawParts::default() });
        let mut general = fast;
        let a = fast.increase(&cfg, branch, range, step, 1500, sending);
        let b = State::grow(&cfg, &mut general, branch, 1500, sending);
        prop_assert_eq!(a, b);
        prop_assert_eq!(fast, general);
        if cfg.params.app_limited.is_none() {
            let inline = rate.wrapping_sub(range.lo) < range.span;
            let sum = u64::from(rate) + u64::from(step);
            prop_assert_eq!(
                inline,
                sum <= u64::from(cfg.max_rate_u) && sum >= u64::from(cfg.min_rate_u)
            );
        }
    }

    /// The gradient decrease's inline form (no scaling: below `dthr` one `mulhu`, from `dthr`
    /// on `min_rate`; clamped) gives the rate the general form ([`beta_g_q32`],
    /// [`State::apply_cut`]) gives, for any rate, inside the bounds or not.
    #[test]
    fn gradient_cut_fast_form_equals_the_general_one(
        c in 0usize..5,
        rate in prop_oneof![any::<u32>(), 70_000u32..80_000_000],
        d_frac in 1u64..=u64::MAX,
        hi_share in 0u32..=2000,
    ) {
        let cfg = fast_form_configs()[c];
        // rtt_diff > 0 with its Q.4 word anywhere in [0, 2·dthr] (from dthr on: β·g ≥ 1).
        let hi = (u64::from(cfg.dthr_q4) * u64::from(hi_share) / 1000).min(i32::MAX as u64) as u32;
        let st = State {
            rate_u: rate,
            prev_rtt_q4: 0,
            diff_hi: hi as i32,
            diff_mid: (d_frac >> 32) as u32,
            diff_lo: d_frac as u32,
            resid: 0,
            hai_count: 3,
        };
        let (mut fast, mut general) = (st, st);
        let a = fast.dec(&cfg, 1500, false);
        let b = State::dec_general(&cfg, &mut general, 1500);
        prop_assert_eq!(a, b);
        prop_assert_eq!(fast, general);
    }

    /// A positive countdown with `rtt_diff = 0` cuts by nothing: the inline form (the clamp
    /// test alone) gives what the general form (`β·g` of 0, [`State::apply_cut`]) gives, on
    /// every configuration (scaling on too) and rate, inside the bounds or not.
    #[test]
    fn vanished_gradient_cut_equals_the_general_one(
        c in 0usize..6,
        rate in prop_oneof![any::<u32>(), 70_000u32..80_000_000],
        resid in 1i16..=i16::MAX,
    ) {
        let cfg = match fast_form_configs().get(c) {
            Some(cfg) => *cfg,
            None => Config::new(Params { per_completion_scaling: true, ..Params::DEFAULT }).unwrap(),
        };
        let st = State::from_raw_parts(RawParts { rate_u128bps: rate, residual: resid, hai_count: 3, started: true, ..RawParts::default() });
        let (mut fast, mut general) = (st, st);
        let a = fast.dec(&cfg, 1500, true);
        let b = State::dec_general(&cfg, &mut general, 1500);
        prop_assert_eq!(a, b);
        prop_assert_eq!(fast, general);
    }
}

/// A run of identical RTTs past the point where `rtt_diff` reaches 0 counts the residual down
/// and takes `dec` (positive) or the increases (negative) without moving `rtt_diff`, and the
/// rate of a `dec` only clamps.
#[test]
fn a_vanished_gradient_counts_down_and_leaves_the_rate() {
    for (resid, branch) in [(3i16, TimelyBranch::Dec), (-3, TimelyBranch::Inc)] {
        let rtt = 60_000u32 << 4; // between T_low and T_high
        let mut st = raw(CFG.init_rate_u / 2, rtt, 0, resid, 0, true);
        for left in (0..resid.abs()).rev() {
            let before = st.rate_u128bps();
            let o = st.on_rtt_rate(&CFG, U28F4::from_bits(rtt), 1500, None);
            assert_eq!(o.branch(), branch);
            assert_eq!(st.residual().abs(), left);
            assert_eq!(st.rtt_diff_ns().to_bits(), 0);
            if branch == TimelyBranch::Dec {
                assert_eq!(st.rate_u128bps(), before);
            }
        }
        // The countdown over: g = 0, an increase.
        let o = st.on_rtt_rate(&CFG, U28F4::from_bits(rtt), 1500, None);
        assert_eq!(o.branch(), TimelyBranch::Inc);
    }
}

/// A fast form that never ran would make the properties above vacuous: on the paper's
/// configuration each takes its inline path on ordinary inputs.
#[test]
fn fast_forms_take_ordinary_events() {
    let ev = Completion::new(1_000, 61_000, 1_500);
    assert!(State::rtt_q4_fast(&CFG, &ev).is_some());
    let rate = CFG.init_rate_u / 2;
    assert!(rate.wrapping_sub(CFG.inc.lo) < CFG.inc.span);
    assert!(rate.wrapping_sub(CFG.hai.lo) < CFG.hai.span);
    const { assert!(CFG.dec_fast_below > 0) };
}

proptest! {
    /// The rounded cut on words is `rate − ⌊(rate·cut + 2^31) / 2^32⌋`, the 64-bit form.
    #[test]
    fn cut_rate_rounds_the_product_to_nearest(rate: u32, cut: u32) {
        let p = u64::from(rate) * u64::from(cut);
        prop_assert_eq!(u64::from(cut_rate(rate, cut)), u64::from(rate) - ((p + (1 << 31)) >> 32));
    }
}

proptest! {
    /// The `T_high` cut is within 2^-28 of the exact `β·(1 − T_high/rtt)` (the refined
    /// reciprocal's 2^-30 relative, the `Q29` floor, `β`'s and the mantissa's rounding, the
    /// added 2^-31), never below 0, for every `T_high`, `β` and `rtt` above `T_high`.
    #[test]
    fn t_high_cut_is_within_the_bound(
        t_high_ns in 1u32..=MAX_RTT_NS,
        above in prop_oneof![1u32..=RTT_SAT_Q4, 1u32..100_000],
        beta_num in 1u32..=1000,
    ) {
        let cfg = Config::new(Params { t_low_ns: 0, t_high_ns, beta: Ratio::new(beta_num, 1000), ..Params::DEFAULT }).unwrap();
        let rtt = cfg.t_high_q4.saturating_add(above).min(RTT_SAT_Q4);
        prop_assume!(rtt > cfg.t_high_q4);
        let beta = f64::from(beta_num) / 1000.0;
        let want = beta * (1.0 - f64::from(cfg.t_high_q4) / f64::from(rtt));
        let got = f64::from(t_high_cut_q32(&cfg, rtt)) / 2f64.powi(32);
        prop_assert!((got - want).abs() <= 2f64.powi(-28), "rtt {rtt}: {got} vs {want}");
    }

    /// The table normalisation is cc-math's: the same mantissa and shift for every `x ≠ 0`.
    #[test]
    fn normalize_by_table_equals_cc_math_normalize(bits in 0u32..32, x: u32) {
        let x = core::num::NonZeroU32::new((x >> bits) | (1 << (31 - bits))).unwrap();
        prop_assert_eq!(normalize_by_table(x), cc_math::recip::normalize(x));
    }
}

/// `from_raw_parts` keeps a residual only with `rtt_diff`'s sign (or with `rtt_diff = 0`, either
/// sign): a residual against a non-zero `rtt_diff`'s sign is dropped, and the next identical
/// sample starts the countdown from `rtt_diff` as after any other sample.
#[test]
fn a_residual_against_rtt_diffs_sign_is_dropped_by_from_raw_parts() {
    for (diff_q4, resid, kept) in [
        (5i64, -7i16, 0i16),
        (-5, 7, 0),
        (5, 7, 7),
        (-5, -7, -7),
        (0, 7, 7),
        (0, -7, -7),
    ] {
        let st = raw(CFG.init_rate_u, 60_000 << 4, diff_q4, resid, 0, true);
        assert_eq!(st.residual(), kept, "rtt_diff {diff_q4}, residual {resid}");
    }
    // The dropped one behaves as a fresh run: the same as a state built with residual 0.
    let mut a = raw(CFG.init_rate_u / 2, 60_000 << 4, 5, -7, 0, true);
    let mut b = raw(CFG.init_rate_u / 2, 60_000 << 4, 5, 0, 0, true);
    let rtt = U28F4::from_bits(60_000 << 4);
    assert_eq!(
        a.on_rtt_rate(&CFG, rtt, 1500, None),
        b.on_rtt_rate(&CFG, rtt, 1500, None)
    );
    assert_eq!(a, b);
}

/// A completion that arrives before its send is skipped even when the two times share their
/// high 32 bits and the low words' difference wraps to a small span (the fuzzer's case:
/// `t_send` 4 286 543 145 ns, `t_complete` 444 457 ns, a wrapped span of 8.9 ms).
#[test]
fn a_completion_long_before_its_send_in_one_2_32_window_is_skipped() {
    let cfg = Config::default();
    let mut st = State::new(&cfg);
    let before = st;
    let ev = Completion::new(4_286_543_145, 444_457, 4_194_556);
    assert_eq!(st.on_completion(&cfg, &ev).branch, TimelyBranch::Skip);
    assert_eq!(st, before);
    assert_eq!(State::rtt_ns(&cfg, &ev), None);
}
