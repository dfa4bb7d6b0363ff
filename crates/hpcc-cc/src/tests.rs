#![allow(
    clippy::float_arithmetic,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation
)]
extern crate std;
use super::*;
use proptest::prelude::*;
use std::vec::Vec;

fn int1(ts: u32, tx: u32, q: u16) -> [u8; 10] {
    let mut b = [0u8; 10];
    let h = Hop {
        speed: Speed::G100,
        ts_ns: ts,
        tx_units: tx,
        qlen_units: q,
    };
    int::encode::<5>(0x123, &[h], &mut b).unwrap();
    b
}

fn w_bytes(q8: u32) -> f64 {
    f64::from(q8) / 256.0
}
fn u_f(q32: u64) -> f64 {
    q32 as f64 / U_ONE as f64
}

#[test]
fn state_is_one_cache_line_at_5_hops() {
    assert_eq!(core::mem::size_of::<State>(), 64);
    assert_eq!(core::mem::size_of::<State<1>>(), 32);
}

#[test]
fn paper_config_constants() {
    let c = Config::PAPER;
    // W_max = 100 Gb/s · 13 µs = 162 500 B ; W_min = 100 Mb/s · 13 µs = 162.5 B
    assert_eq!(c.w_max_bytes().to_bits(), 162_500 * 256);
    assert_eq!(c.w_min_bytes().to_bits(), 162 * 256 + 128);
    // η·2^32 = 0.95·4 294 967 296 = 4 080 218 931.2, rounded up: `U ≥ η ⇔ U_q32 ≥ eta_q32`.
    assert_eq!(c.eta().to_bits(), 4_080_218_932);
    // R = W/T: 162 500 B / 13 µs = 100 Gb/s (the 32-bit scale is exact to 2^-31 relative)
    assert!(c.rate_bps(c.w_max_bytes()).abs_diff(100_000_000_000) <= 100);
    assert_eq!(Config::default(), c);
}

#[test]
fn config_rejects_invalid_values() {
    let p = Params::PAPER;
    let bad = |q: Params| Config::new(q).unwrap_err();
    assert_eq!(
        bad(Params {
            nic_rate_bps: 0,
            ..p
        }),
        ConfigError::NicRate
    );
    assert_eq!(
        bad(Params {
            base_rtt_ns: 999,
            ..p
        }),
        ConfigError::BaseRtt
    );
    assert_eq!(
        bad(Params {
            base_rtt_ns: 1 << 24,
            ..p
        }),
        ConfigError::BaseRtt
    );
    assert_eq!(
        bad(Params {
            eta: Ratio { num: 0, den: 1 },
            ..p
        }),
        ConfigError::Eta
    );
    assert_eq!(
        bad(Params {
            eta: Ratio { num: 101, den: 100 },
            ..p
        }),
        ConfigError::Eta
    );
    assert_eq!(
        bad(Params {
            eta: Ratio { num: 1, den: 0 },
            ..p
        }),
        ConfigError::Eta
    );
    assert_eq!(
        bad(Params {
            min_rate_bps: 0,
            ..p
        }),
        ConfigError::MinRate
    );
    assert_eq!(
        bad(Params {
            min_rate_bps: p.nic_rate_bps + 1,
            ..p
        }),
        ConfigError::MinRate
    );
    // 10 Tb/s · 16 ms is far beyond 16 MiB.
    assert_eq!(
        bad(Params {
            nic_rate_bps: 10_000_000_000_000,
            base_rtt_ns: 0xFF_FFFF,
            ..p
        }),
        ConfigError::WindowTooLarge
    );
    assert_eq!(
        bad(Params {
            w_ai_bytes: 162_501,
            ..p
        }),
        ConfigError::WAi
    );
    assert!(
        Config::new(Params {
            eta: Ratio { num: 1, den: 1 },
            ..p
        })
        .is_ok()
    );
    // Regression: W_min below 16 bytes is rejected (Q24.8 cannot hold it to 1e-3):
    // 100 Gb/s · 100 µs with min_rate 1 kb/s → W_min = 0.0125 B.
    assert_eq!(
        bad(Params {
            base_rtt_ns: 100_000,
            min_rate_bps: 1000,
            ..p
        }),
        ConfigError::MinRate
    );
    // 16 B exactly (T = 13 µs: min_rate = 16·8/13e-6 = 9 846 154 b/s rounds to 16.0000 B) is fine,
    // 15.9 B is not.
    assert!(
        Config::new(Params {
            min_rate_bps: 9_846_154,
            ..p
        })
        .is_ok()
    );
    assert_eq!(
        bad(Params {
            min_rate_bps: 9_784_615,
            ..p
        }),
        ConfigError::MinRate
    );
}

/// MeasureInflight by hand (paper Eqn 2, HPCC Alg. 1 l.4–9), T = 13 µs, 100G hop (B = 12.5 B/ns,
/// B·T = 162 500 B):
///   previous hop: ts = 1 000, tx = 0, qlen = 100 (8 000 B)
///   this hop:     ts = 2 000, tx = 100 (12 800 B), qlen = 200
///   Δts = 1 000 ns, txRate = 12 800/1 000 = 12.8 B/ns, txRate/B = 1.024
///   min(qlen) = 100·80 = 8 000 B, 8 000/162 500 = 0.049 231
///   u' = 1.073 231 ; τ = 1 000 < T, τ/T = 0.076 923
///   U = (1 − 0.076 923)·1 + 0.076 923·1.073 231 = 1.005 633
/// ComputeWind: U ≥ η → W = Wc/(U/η) + W_AI = 162 500·0.95/1.005 633 + 80 = 153 590.2 B.
#[test]
fn worked_measure_inflight_then_md() {
    let c = Config::PAPER;
    let mut s: State = State::new(&c);
    let a = s.on_ack(&c, 0, 1_000, &int1(1_000, 0, 100));
    assert_eq!(a.branch, HpccBranch::Init);
    assert_eq!(a.window_bytes.to_bits(), c.w_max_bytes().to_bits());
    let b = s.on_ack(&c, 1_001, 2_000, &int1(2_000, 100, 200));
    assert_eq!(b.branch, HpccBranch::Md);
    let u = u_f(s.u().to_bits());
    assert!((u - 1.005_633).abs() < 1e-6, "U = {u}");
    let w = w_bytes(b.window_bytes.to_bits());
    let want = 162_500.0 * 0.95 / (1.0 + (1.024 + 8_000.0 / 162_500.0 - 1.0) / 13.0) + 80.0;
    assert!((w - 153_590.2).abs() < 0.1, "W = {w}");
    assert!((w - want).abs() / want < 1e-6, "W = {w}, want {want}");
    // updateWc was true (1 001 > 1 000): Wc = W, lastUpdateSeq = 2 000.
    let r = s.raw_parts();
    assert_eq!(r.wc_bytes.to_bits(), b.window_bytes.to_bits());
    assert_eq!(r.last_update_seq, 2_000);
    assert_eq!(r.inc_stage, 0);
}

/// ComputeWind by hand (HPCC Alg. 1 l.11–20) with U = 0.5 exactly (τ ≥ T, so U = u):
///   hop: Δts = 16 384 ns, Δtx = 800 units = 102 400 B → txRate = 6.25 B/ns, /B = 0.5; qlen 0.
///   AI (U < η, incStage 0 < 5): W = Wc + W_AI = 100 000 + 80 = 100 080 B; incStage → 1.
///   With incStage = 5 (= maxStage): MD, W = Wc/(U/η) + W_AI = 50 000·0.95/0.5 + 80 = 95 080 B.
#[test]
fn worked_compute_wind_ai_and_md() {
    let c = Config::PAPER;
    let prev = int1(100, 7, 0);
    let view = IntView::<5>::parse(&prev).unwrap();
    let mut hops = [0u64; 5];
    hops[0] = view.hop_words().next().unwrap();
    let base = RawParts {
        w_bytes: U24F8::from_bits(100_000 * 256),
        wc_bytes: U24F8::from_bits(100_000 * 256),
        u: U32F32::from_bits(U_ONE),
        last_update_seq: 10,
        inc_stage: 0,
        int_header: Some(view.header()),
        hops,
    };
    let next = int1(100 + 16_384, 807, 0);

    let mut s: State = State::from_raw_parts(base);
    let up = s.on_ack(&c, 11, 50, &next);
    assert_eq!(up.branch, HpccBranch::Ai);
    // 800·128 B / 16 384 ns / 12.5 B/ns = 0.5 exactly; 128/B = 10.24 is not a binary fraction,
    // so the fixed side is within a few units of 2^-32.
    assert!(
        s.u().to_bits().abs_diff(U_ONE / 2) <= 4,
        "{}",
        s.u().to_bits()
    );
    assert_eq!(up.window_bytes.to_bits(), 100_080 * 256);
    assert_eq!(s.raw_parts().inc_stage, 1);
    assert_eq!(s.raw_parts().last_update_seq, 50);
    // R = W/T = 100 080 B / 13 µs = 61.587 7 Gb/s
    assert!((up.rate_bps as f64 - 100_080.0 * 8.0 / 13e-6).abs() < 100.0);

    // Not an update ACK (ack_seq ≤ lastUpdateSeq): W moves, Wc and incStage do not.
    let mut s: State = State::from_raw_parts(base);
    let up = s.on_ack(&c, 10, 50, &next);
    assert_eq!(up.branch, HpccBranch::Ai);
    assert_eq!(s.raw_parts().inc_stage, 0);
    assert_eq!(s.raw_parts().wc_bytes.to_bits(), 100_000 * 256);

    let mut s: State = State::from_raw_parts(RawParts {
        wc_bytes: U24F8::from_bits(50_000 * 256),
        inc_stage: 5,
        ..base
    });
    let up = s.on_ack(&c, 11, 50, &next);
    assert_eq!(up.branch, HpccBranch::Md);
    let w = w_bytes(up.window_bytes.to_bits());
    assert!((w - 95_080.0).abs() < 0.01, "W = {w}");
    assert_eq!(s.raw_parts().inc_stage, 0);
}

#[test]
fn bad_resync_and_skip() {
    let c = Config::PAPER;
    let mut s: State = State::new(&c);
    s.on_ack(&c, 0, 10, &int1(0, 0, 0));
    let before = s;
    // Reserved speed code: rejected, state unchanged.
    let mut bad = int1(5, 5, 5);
    bad[2] &= 0x0F;
    assert_eq!(s.on_ack(&c, 1, 11, &bad).branch, HpccBranch::Bad);
    assert_eq!(s.on_ack(&c, 1, 11, &bad[..9]).branch, HpccBranch::Bad);
    assert_eq!(s, before);
    // Same ts: every hop skipped; the INT is still stored.
    let same = int1(0, 9, 9);
    assert_eq!(s.on_ack(&c, 1, 11, &same).branch, HpccBranch::Skip);
    assert_eq!(
        s.raw_parts().hops[0],
        IntView::<5>::parse(&same)
            .unwrap()
            .hop_words()
            .next()
            .unwrap()
    );
    assert_eq!(s.window_bytes().to_bits(), before.window_bytes().to_bits());
    // Path change: resync, lastUpdateSeq = snd_nxt.
    let mut other = [0u8; 10];
    int::encode::<5>(
        0x124,
        &[Hop {
            speed: Speed::G25,
            ts_ns: 7,
            tx_units: 0,
            qlen_units: 0,
        }],
        &mut other,
    )
    .unwrap();
    assert_eq!(s.on_ack(&c, 2, 99, &other).branch, HpccBranch::Resync);
    assert_eq!(s.raw_parts().last_update_seq, 99);
}

/// A wrap of the 24-bit timestamp and of the 20-bit byte counter between two ACKs gives the small
/// true deltas, not a huge rate.
#[test]
fn counter_wraps_between_acks_give_small_deltas() {
    let c = Config::PAPER;
    let mut s: State = State::new(&c);
    s.on_ack(&c, 0, 10, &int1((1 << 24) - 500, (1 << 20) - 4, 0));
    // Δts = 1 000 ns, Δtx = 8 units = 1 024 B → txRate/B = 1.024/12.5 = 0.081 92 ; τ/T = 1/13
    s.on_ack(&c, 11, 20, &int1(500, 4, 0));
    let want = 1.0 + (0.081_92 - 1.0) / 13.0;
    assert!(
        (u_f(s.u().to_bits()) - want).abs() < 1e-6,
        "{}",
        u_f(s.u().to_bits())
    );
}

#[test]
fn first_hop_wins_ties_and_max_hop_sets_tau() {
    let c = Config::PAPER;
    let mk = |ts: [u32; 2], tx: [u32; 2]| {
        let hops = [0, 1].map(|i| Hop {
            speed: Speed::G100,
            ts_ns: ts[i],
            tx_units: tx[i],
            qlen_units: 0,
        });
        let mut b = [0u8; 18];
        int::encode::<5>(1, &hops, &mut b).unwrap();
        b
    };
    // Hop 1 busier (u' = 1.024 vs 0.512) with Δts = 2 000: τ = 2 000 → U = 1 + (1.024−1)·2/13
    let mut s: State = State::new(&c);
    s.on_ack(&c, 0, 1, &mk([0, 0], [0, 0]));
    s.on_ack(&c, 2, 3, &mk([1_000, 2_000], [50, 200]));
    assert!((u_f(s.u().to_bits()) - (1.0 + 0.024 * 2.0 / 13.0)).abs() < 1e-6);
    // Equal u' = 1.024 on both: the first hop's τ (1 000) is used.
    let mut s: State = State::new(&c);
    s.on_ack(&c, 0, 1, &mk([0, 0], [0, 0]));
    s.on_ack(&c, 2, 3, &mk([1_000, 2_000], [100, 200]));
    assert!((u_f(s.u().to_bits()) - (1.0 + 0.024 / 13.0)).abs() < 1e-6);
}

/// docs/hpcc.md § 2 ("Sequence numbers"): a long flow's byte sequence numbers pass 2^32 (a 100 Gb/s
/// flow every 0.34 s). `lastUpdateSeq` = 2^32 − 500; the next ACK carries 300 (wrapped: 800 after
/// it in serial order), so it is an update ACK: Wc follows W and `lastUpdateSeq` moves to `snd_nxt`
/// = 2 000. Then 1 000 (before 2 000: W moves, Wc does not) and 2 100 (after it: update again). A
/// plain `>` (300 > 4 294 966 796 is false) froze Wc at the wrap for good.
#[test]
fn wc_updates_after_seq_wraps_2_pow_32() {
    let c = Config::PAPER;
    let mut s: State = State::new(&c);
    let last = u32::MAX - 499; // 2^32 − 500
    assert_eq!(
        s.on_ack(&c, last - 1000, last, &int1(0, 0, 0)).branch,
        HpccBranch::Init
    );
    assert_eq!(s.raw_parts().last_update_seq, last);
    // Δts 1 000, Δtx 8 units: u' = 0.081 92, U falls below η, AI: W = Wc + W_AI, Wc = W.
    let up = s.on_ack(&c, 300, 2_000, &int1(1_000, 8, 0));
    assert_eq!(up.branch, HpccBranch::Ai);
    let r = s.raw_parts();
    assert_eq!(
        (r.wc_bytes.to_bits(), r.last_update_seq, r.inc_stage),
        (up.window_bytes.to_bits(), 2_000, 1)
    );
    let up = s.on_ack(&c, 1_000, 3_000, &int1(2_000, 16, 0));
    assert_eq!(up.branch, HpccBranch::Ai);
    assert_eq!(
        s.raw_parts(),
        RawParts {
            w_bytes: U24F8::from_bits(up.window_bytes.to_bits()),
            u: U32F32::from_bits(s.u().to_bits()),
            hops: s.raw_parts().hops,
            ..r
        }
    );
    let up = s.on_ack(&c, 2_100, 4_000, &int1(3_000, 24, 0));
    let r = s.raw_parts();
    assert_eq!(
        (r.wc_bytes.to_bits(), r.last_update_seq, r.inc_stage),
        (up.window_bytes.to_bits(), 4_000, 2)
    );
}

/// Serial-number order: `a` after `b` iff `0 < (a − b) mod 2^32 < 2^31`; exactly 2^31 apart,
/// neither is after the other.
#[test]
fn seq_after_is_serial_number_order() {
    assert!(seq_after(1, 0) && !seq_after(0, 1) && !seq_after(7, 7));
    assert!(seq_after(5, u32::MAX - 5) && !seq_after(u32::MAX - 5, 5));
    assert!(seq_after((1 << 31) - 1, 0) && !seq_after(1 << 31, 0) && !seq_after(0, 1 << 31));
    assert!(seq_after(0, (1 << 31) + 1));
}

/// docs/hpcc.md § 2 ("`U ≥ η` when τ ≥ T"): with τ ≥ T, U = u and the `U ≥ η` test is exact on `u =
/// η`: 100G hop, T = 13 000, Δts = 16 384 ≥ T, qlen 0, Δtx = 1 520 units: u = 1 520·128 B / (16 384
/// ns · 12.5 B/ns) = 194 560 / 204 800 = 0.95 = η exactly → MD, with W = Wc/(U/η) + W_AI = Wc +
/// W_AI. One unit less of Δtx (u = 0.949 375) → AI.
#[test]
fn eta_test_is_exact_when_u_equals_eta_at_full_weight() {
    let c = Config::PAPER;
    for (dtx, want) in [
        (1_520, HpccBranch::Md),
        (1_519, HpccBranch::Ai),
        (1_521, HpccBranch::Md),
    ] {
        let mut s: State = State::new(&c);
        s.on_ack(&c, 0, 1, &int1(100, 7, 0));
        let r = s.raw_parts();
        s = State::from_raw_parts(RawParts {
            wc_bytes: U24F8::from_bits(100_000 * 256),
            ..r
        });
        let up = s.on_ack(&c, 2, 3, &int1(100 + 16_384, 7 + dtx, 0));
        assert_eq!(up.branch, want, "Δtx {dtx}");
        let u = u_f(s.u().to_bits());
        let exact = f64::from(dtx) * 128.0 / (16_384.0 * 12.5);
        assert!((u - exact).abs() < 1e-8, "Δtx {dtx}: U {u} vs {exact}");
        if dtx == 1_520 {
            assert_eq!(s.u().to_bits(), c.eta().to_bits(), "exactly η: the ceiling");
            // W = Wc·η/U + W_AI = Wc + W_AI to within the rounding of Wc·η and 1/U.
            assert!((w_bytes(up.window_bytes.to_bits()) - 100_080.0).abs() < 0.01);
        }
    }
}

#[test]
fn zero_utilisation_goes_to_w_max_not_a_division_by_zero() {
    let c = Config::PAPER;
    let mut s: State = State::new(&c);
    s.on_ack(&c, 0, 1, &int1(0, 0, 0));
    // Idle link for a long time: u' = 0, τ ≥ T → U = 0 exactly; incStage forced to maxStage.
    let mut st = s.raw_parts();
    st.inc_stage = 5;
    st.wc_bytes = U24F8::from_bits(c.w_min_bytes().to_bits());
    let mut s: State = State::from_raw_parts(st);
    let up = s.on_ack(&c, 2, 3, &int1(20_000, 0, 0));
    assert_eq!(s.u().to_bits(), 0);
    assert_eq!(up.branch, HpccBranch::Md);
    assert_eq!(up.window_bytes.to_bits(), c.w_max_bytes().to_bits());
}

fn arb_hop() -> impl Strategy<Value = Hop> {
    (1u8..=9, 0u32..(1 << 24), 0u32..(1 << 20), any::<u16>()).prop_map(|(c, ts, tx, q)| Hop {
        speed: Speed::from_code(c).unwrap(),
        ts_ns: ts,
        tx_units: tx,
        qlen_units: q,
    })
}

proptest! {
    /// Whatever the INT says, W stays within [W_min, W_max] and nothing panics.
    #[test]
    fn window_always_within_bounds(
        acks in proptest::collection::vec((any::<u32>(), any::<u32>(), 0u16..4, proptest::collection::vec(arb_hop(), 0..=5)), 1..60),
        eta in 1u32..=100, stage in 0u8..10, ai in 0u32..2000,
    ) {
        let c = Config::new(Params { eta: Ratio { num: eta, den: 100 }, max_stage: stage, w_ai_bytes: ai, ..Params::PAPER }).unwrap();
        let mut s: State = State::new(&c);
        for (ack, nxt, path, hops) in acks {
            let mut b = [0u8; 42];
            let n = int::encode::<5>(path, &hops, &mut b).unwrap();
            let up = s.on_ack(&c, ack, nxt, &b[..n]);
            prop_assert!(up.window_bytes.to_bits() >= c.w_min_bytes().to_bits() && up.window_bytes.to_bits() <= c.w_max_bytes().to_bits());
            prop_assert_eq!(up.rate_bps, c.rate_bps(up.window_bytes));
        }
    }

    /// Arbitrary bytes and arbitrary raw state: no panic, bad INT leaves the state unchanged.
    #[test]
    fn no_input_panics(
        blocks in proptest::collection::vec((
            proptest::collection::vec(any::<u8>(), 0..50),
            proptest::option::of((0u16..4, proptest::collection::vec(arb_hop(), 0..=5))),
        ), 1..20),
        w in any::<u32>(), wc in any::<u32>(), u in any::<u64>(), st in any::<u8>(),
        hops in any::<[u64; 5]>(), hdr in any::<Option<u16>>(), seq in any::<u32>(),
    ) {
        let c = Config::PAPER;
        let mut s: State = State::from_raw_parts(RawParts { w_bytes: U24F8::from_bits(w), wc_bytes: U24F8::from_bits(wc), u: U32F32::from_bits(u), last_update_seq: seq, inc_stage: st, int_header: hdr, hops });
        for (b, valid) in blocks {
            // Half the blocks are valid INT (the random bytes alone almost never are).
            let mut buf = [0u8; 42];
            let b = match valid {
                Some((path, hs)) => {
                    let n = int::encode::<5>(path, &hs, &mut buf).unwrap();
                    buf[..n].to_vec()
                }
                None => b,
            };
            let before = s;
            let up = s.on_ack(&c, seq.wrapping_add(1), seq, &b);
            // on_ack accepts exactly what IntView::parse accepts (one rule: int::accepts).
            if IntView::<5>::parse(&b).is_err() {
                prop_assert_eq!(up.branch, HpccBranch::Bad);
                prop_assert_eq!(s, before);
            } else {
                prop_assert_ne!(up.branch, HpccBranch::Bad);
            }
        }
    }
}

#[test]
fn raw_parts_round_trip() {
    let c = Config::PAPER;
    let mut s: State = State::new(&c);
    s.on_ack(&c, 0, 1, &int1(1, 2, 3));
    let v: Vec<_> = [s]
        .iter()
        .map(|x| State::from_raw_parts(x.raw_parts()))
        .collect();
    assert_eq!(v[0], s);
}

/// The hop numerator: `u' = N/(12.5·T·Δts)` equals Eqn 2 written with B in bytes/ns, for every
/// speed code (so the integers `S·unit/16` with `S = 1600/G` are right), from the deltas the
/// stored record and the wire bytes give (counters wrapping between the two).
#[test]
fn hop_numerator_is_eqn_2() {
    for t in [1_000u32, 13_000, 1_000_000, 0xFF_FFFF] {
        let c = Config::new(Params {
            base_rtt_ns: t,
            min_rate_bps: 1_000_000_000,
            nic_rate_bps: 1_000_000_000,
            ..Params::PAPER
        })
        .unwrap();
        for speed in Speed::ALL {
            for (q_old, q_new, dts, dtx) in [
                (0u16, 0u16, 1u32, 0u32),
                (900, 915, 41, 2),
                (65535, 65535, 1, (1 << 20) - 1),
                (3, 70, 0xFF_FFFF, 77_777),
                (10, 5, 1000, 100),
            ] {
                let hop = |ts: u32, tx: u32, q: u16| {
                    Hop {
                        speed,
                        ts_ns: ts & 0xFF_FFFF,
                        tx_units: tx & 0xF_FFFF,
                        qlen_units: q,
                    }
                    .to_word()
                    .to_be_bytes()
                };
                let mut prev = hop_prev(hop(0xFF_FFF0, 0xF_FFF0, q_old));
                let d = hop_read(hop(0xFF_FFF0 + dts, 0xF_FFF0 + dtx, q_new), &mut prev).unwrap();
                assert_eq!(
                    (d.dts.get(), d.dtx, d.qmin),
                    (dts, dtx, u32::from(q_old.min(q_new)))
                );
                let n = hop_numerator::<IntHop>(&c, &d);
                let b = speed.bps() as f64 / 8e9; // bytes per ns
                let want = f64::from(q_old.min(q_new)) * 80.0 / (b * f64::from(t))
                    + f64::from(dtx) * 128.0 / (f64::from(dts) * b);
                let got = n as f64 / (12.5 * f64::from(t) * f64::from(dts));
                assert!(
                    (got - want).abs() <= want * 1e-12,
                    "{speed:?} T {t}: {got} vs {want}"
                );
                assert!(n < 1 << 56);
            }
        }
        // Δts = 0: skipped.
        let w = Hop {
            speed: Speed::G100,
            ts_ns: 5,
            tx_units: 1,
            qlen_units: 1,
        }
        .to_word()
        .to_be_bytes();
        let mut prev = hop_prev(w);
        assert!(hop_read(w, &mut prev).is_none());
    }
}

proptest! {
    /// The EWMA's 64×64 → 128 word product (both the `a_hi = 0` fast path and the full one).
    #[test]
    fn mul_64x64_is_exact(a in any::<u64>(), b in any::<u64>(), small in any::<bool>()) {
        let a = if small { a & 0xFFFF_FFFF } else { a };
        let [p0, p1, p2, p3] = mul_64x64(a, b);
        let got = u128::from(p0) | u128::from(p1) << 32 | u128::from(p2) << 64 | u128::from(p3) << 96;
        prop_assert_eq!(got, u128::from(a) * u128::from(b));
    }

    /// The hop choice is exact: N1·D2 > N2·D1 computed in 128 bits.
    #[test]
    fn cross_products_compare_exactly(n1 in 0u64..(1 << 56), n2 in 0u64..(1 << 56), d1 in 1u32..(1 << 24), d2 in 1u32..(1 << 24), small in any::<bool>()) {
        let (n1, n2) = if small { (n1 >> 24, n2 >> 24) } else { (n1, n2) };
        let want = u128::from(n1) * u128::from(d2) > u128::from(n2) * u128::from(d1);
        prop_assert_eq!(cross_gt(n1, d2, n2, d1), want);
        // Ties are not "greater": the first hop keeps them.
        prop_assert!(!cross_gt(n1, d1, n1, d1));
    }

    /// The reciprocal-free EWMA step against f64 `(1 − τ/T)·U + (τ/T)·u`, u = N/(12.5·T·τ).
    #[test]
    fn ewma_step_matches_f64(u0 in 0u64..(1 << 59), n in 0u64..(1 << 50), tau in 1u32..1000, t in 1_000u32..0xFF_FFFF) {
        prop_assume!(tau < t);
        let c = Config::new(Params { base_rtt_ns: t, min_rate_bps: 1_000_000_000, nic_rate_bps: 1_000_000_000, ..Params::PAPER }).unwrap();
        let got = ewma_q32(&c, u0, n, tau) as f64;
        let w = f64::from(tau) / f64::from(t);
        let u = n as f64 / (12.5 * f64::from(t) * f64::from(tau)) * U_ONE as f64;
        let want = (1.0 - w) * u0 as f64 + w * u;
        // w rounded to 2^-33 (times U), the two products truncated (≤ 1 unit each), the
        // constants to 2^-32 relative.
        prop_assert!((got - want).abs() <= 2.0 + u0 as f64 * 2f64.powi(-32) + want * 2f64.powi(-30), "{got} vs {want}");
    }

    /// One EWMA step moves U by w·(u − U) to within a unit, and by at least one unit toward u
    /// whenever u ≠ U: no dead band and no bias from rounding w, even at T/τ = 2^24
    /// (a Q0.32 w with truncated products would stop ≈ T/τ units away).
    #[test]
    fn ewma_step_is_exact_to_a_unit(u_units in 0u64..(1 << 40), off in -1_000_000i64..1_000_000, tau in 1u32..5000, t in 1_000u32..0xFF_FFFF) {
        prop_assume!(tau < t);
        let c = Config::new(Params { base_rtt_ns: t, min_rate_bps: 1_000_000_000, nic_rate_bps: 1_000_000_000, ..Params::PAPER }).unwrap();
        let k = 12.5 * f64::from(t) * f64::from(tau) / U_ONE as f64; // N per unit of u
        let n = (u_units as f64 * k).round() as u64;
        let u = n as f64 / k; // the exact u (units) this N stands for
        let u0 = (u.round() as i64 + off).max(0) as u64;
        let got = ewma_q32(&c, u0, n, tau);
        let w = f64::from(tau) / f64::from(t);
        let want_step = w * (u - u0 as f64);
        let step = got as f64 - u0 as f64;
        prop_assert!((step - want_step).abs() <= 1.0 + u * 2f64.powi(-30) * w.max(2f64.powi(-20)) + want_step.abs() * 2f64.powi(-30),
            "step {step} vs {want_step} (u {u}, U {u0}, w {w})");
        if (u - u0 as f64).abs() >= 2.0 {
            prop_assert!(step.signum() == (u - u0 as f64).signum() && step.abs() >= 1.0, "step {step} toward {u} from {u0}");
        }
    }

    /// The 32-bit EWMA step is within two Q4.28 units (2^-27) of the exact 96-bit step
    /// (`ewma_q32`, pinned to a unit of 2^-32 by `ewma_step_is_exact_to_a_unit`) wherever it is
    /// taken, and hands everything else to the exact step.
    #[test]
    fn fast_ewma_is_within_two_q28_units(u_units in 0u64..(20u64 << 32), n in 0u64..(1 << 34), tau in 1u32..0xFF_FFFF, t in 1_000u32..0xFF_FFFF) {
        prop_assume!(tau < t);
        let c = Config::new(Params { base_rtt_ns: t, min_rate_bps: 1_000_000_000, nic_rate_bps: 1_000_000_000, ..Params::PAPER }).unwrap();
        let fast = ewma_fast(&c, u_units, n, tau);
        let exact = ewma_q32(&c, u_units, n, tau);
        prop_assert!(fast.abs_diff(exact) <= 2 << 4, "fast {fast} vs exact {exact}");
        if u_units >= 16 << 32 || n >= 1 << 32 || t < 4_635 || exact >= 16 << 32 || u64::from(tau) * 257 < u64::from(t) {
            prop_assert_eq!(fast, exact);
        }
    }

    /// Sequence numbers only matter through their serial differences: adding the same constant
    /// to every `ack_seq` and `snd_nxt` (so that they cross 2^32 anywhere) changes nothing.
    #[test]
    fn a_constant_added_to_every_sequence_number_changes_nothing(
        acks in proptest::collection::vec((0u32..3000, 0u32..20_000, 0u32..2000, 0u32..40, 0u16..2000), 1..200),
        offset in any::<u32>(),
    ) {
        let c = Config::PAPER;
        let (mut a, mut b): (State, State) = (State::new(&c), State::new(&c));
        let (mut seq, mut ts, mut tx) = (0u32, 0u32, 0u32);
        for (dseq, ahead, dts, dtx, q) in acks {
            seq = seq.wrapping_add(dseq);
            ts = (ts + dts) & 0xFF_FFFF;
            tx = (tx + dtx) & 0xF_FFFF;
            let int = int1(ts, tx, q);
            let nxt = seq.wrapping_add(ahead);
            let ua = a.on_ack(&c, seq, nxt, &int);
            let ub = b.on_ack(&c, seq.wrapping_add(offset), nxt.wrapping_add(offset), &int);
            prop_assert_eq!(ua, ub);
            let (ra, rb) = (a.raw_parts(), b.raw_parts());
            prop_assert_eq!(ra.wc_bytes.to_bits(), rb.wc_bytes.to_bits());
            prop_assert_eq!(ra.inc_stage, rb.inc_stage);
            prop_assert_eq!(ra.last_update_seq.wrapping_add(offset), rb.last_update_seq);
        }
    }

    /// With `Δts ≥ T` (weight 1), the branch is MD exactly when the rational `u ≥ η`
    /// (incStage 0): `u = N/(12.5·T·Δts)` against `η_num/η_den` in 128-bit integers, on inputs
    /// placed at, just below and just above `u = η`.
    #[test]
    fn full_weight_eta_test_is_exact(
        code in 1u8..=9, t in 1_000u32..100_000, extra in 0u32..200_000, q in 0u16..2000,
        eta_num in 1u32..=1000, eta_den_extra in 0u32..1000, nudge in -2i64..=2,
    ) {
        let eta_den = eta_num + eta_den_extra;
        let nic = 100_000_000_000;
        let c = Config::new(Params { base_rtt_ns: t, eta: Ratio { num: eta_num, den: eta_den }, nic_rate_bps: nic, min_rate_bps: nic / 10, w_ai_bytes: 0, ..Params::PAPER }).unwrap();
        let speed = Speed::from_code(code).unwrap();
        let dts = t + extra;
        prop_assume!(dts < 1 << 24);
        // Δtx (128-B units) that puts u nearest η: u = q·80/(B·T) + Δtx·128/(Δts·B).
        let b = speed.bps() as f64 / 8e9;
        let eta = f64::from(eta_num) / f64::from(eta_den);
        let q_term = f64::from(q) * 80.0 / (b * f64::from(t));
        let dtx = ((eta - q_term) * f64::from(dts) * b / 128.0).round() as i64 + nudge;
        prop_assume!((0..(1 << 20)).contains(&dtx));
        let dtx = dtx as u32;
        let hop = |ts: u32, tx: u32| { let mut v = [0u8; 10]; int::encode::<5>(1, &[Hop { speed, ts_ns: ts, tx_units: tx, qlen_units: q }], &mut v).unwrap(); v };
        let mut s: State = State::new(&c);
        s.on_ack(&c, 0, 1, &hop(5, 9));
        let up = s.on_ack(&c, 0, 1, &hop((5 + dts) & 0xFF_FFFF, (9 + dtx) & 0xF_FFFF));
        // u = (640·q·Δts + 1024·Δtx·T)/(G·T·Δts) with G in Gb/s.
        let g = u128::from(speed.bps() / 1_000_000_000);
        let num = 640 * u128::from(q) * u128::from(dts) + 1024 * u128::from(dtx) * u128::from(t);
        let den = g * u128::from(t) * u128::from(dts);
        let want = if num * u128::from(eta_den) >= u128::from(eta_num) * den { HpccBranch::Md } else { HpccBranch::Ai };
        prop_assert_eq!(up.branch, want);
    }

    /// MD: Wc·η/U against f64, every magnitude of U.
    #[test]
    fn md_window_matches_f64(wc in 1u32..u32::MAX, u_any in 1u64..u64::MAX, u_near in (1u64 << 30)..(1u64 << 34), near in any::<bool>(), eta in 1u32..=100) {
        // Half the cases with U in [0.25, 4): the fast paths for U ∈ [0.5, 2) and their edges.
        let u = if near { u_near } else { u_any };
        let c = Config::new(Params { eta: Ratio { num: eta, den: 100 }, ..Params::PAPER }).unwrap();
        let got = md_q8(wc, u, &c);
        let a = (f64::from(wc) * f64::from(eta) / 100.0).round();
        let want = a / (u as f64 / U_ONE as f64);
        if want < 4.0e9 {
            // ±1 for the rounding of W, 1/U for the rounding of a = Wc·η (η itself is Q1.31).
            prop_assert!((f64::from(got) - want).abs() <= 1.0 + U_ONE as f64 / u as f64 + want * 2f64.powi(-29), "{got} vs {want}");
        } else {
            prop_assert!(f64::from(got) >= 4.0e9 || got == u32::MAX);
        }
    }
}

#[test]
fn branch_codes_round_trip_through_from_code() {
    for (i, b) in HpccBranch::ALL.iter().enumerate() {
        assert_eq!(*b as u8, i as u8, "ALL is in code order");
        assert_eq!(HpccBranch::from_code(*b as u8), Some(*b));
    }
    for code in 6..=255u8 {
        assert_eq!(HpccBranch::from_code(code), None);
    }
}

/// `on_hop_words::<IntHop>` on an INT block's hop bytes is `on_ack` on the block: one
/// Algorithm 1 behind both entry points.
#[test]
fn hop_words_of_the_int_format_take_the_same_steps_as_on_ack() {
    let cfg = Config::PAPER;
    let (mut a, mut b) = (State::<5>::new(&cfg), State::<5>::new(&cfg));
    let mut buf = [0u8; 2 + 8 * 2];
    for i in 0..200u32 {
        let hops = [
            Hop {
                speed: Speed::G100,
                ts_ns: i * 1_000,
                tx_units: i * 90,
                qlen_units: (i * 37 % 500) as u16,
            },
            Hop {
                speed: Speed::G40,
                ts_ns: i * 1_100,
                tx_units: i * 30,
                qlen_units: (i * 11 % 90) as u16,
            },
        ];
        let n = int::encode::<5>(0x0ABC, &hops, &mut buf).unwrap();
        let ua = a.on_ack(&cfg, i * 1_000, i * 1_000 + 5_000, &buf[..n]);
        let (w, br) =
            b.on_hop_words::<IntHop>(&cfg, i * 1_000, i * 1_000 + 5_000, 0x2ABC, &buf[2..n]);
        assert_eq!((w, br), (ua.window_bytes, ua.branch), "ACK {i}");
        assert_eq!(a, b);
    }
    // A slice that is not whole hop words, or more than MAX_HOPS of them: bad, nothing changed.
    let before = b;
    assert_eq!(
        b.on_hop_words::<IntHop>(&cfg, 1, 2, 0x2ABC, &buf[2..9]).1,
        HpccBranch::Bad
    );
    assert_eq!(
        b.on_hop_words::<IntHop>(&cfg, 1, 2, 0x6ABC, &[0x50; 48]).1,
        HpccBranch::Bad
    );
    assert_eq!(b, before);
}

proptest! {
    /// A one-hop block takes `step_one_hop`; the loop (`step_hops`) is the same Algorithm 1
    /// compiled for any hop count: on the same one-hop blocks (paths changing, counters wrapping,
    /// Δts ≥ T, Δts = 0) both leave the same state and take the same branch.
    #[test]
    fn the_one_hop_function_and_the_loop_take_the_same_steps(
        acks in proptest::collection::vec((0u32..3000, 0u32..20_000, 0u32..3000, 0u32..60, 0u16..3000, 1u8..=9, 0u16..3), 1..150),
    ) {
        let c = Config::PAPER;
        let (mut a, mut b): (State, State) = (State::new(&c), State::new(&c));
        let (mut seq, mut ts, mut tx) = (0u32, 0u32, 0u32);
        let mut buf = [0u8; 10];
        for (dseq, ahead, dts, dtx, q, code, path) in acks {
            seq = seq.wrapping_add(dseq);
            ts = (ts + dts * 7) & 0xFF_FFFF;
            tx = (tx + dtx) & 0xF_FFFF;
            let hop = Hop { speed: Speed::from_code(code).unwrap(), ts_ns: ts, tx_units: tx, qlen_units: q };
            int::encode::<5>(path, &[hop], &mut buf).unwrap();
            let nxt = seq.wrapping_add(ahead);
            let header = u16::from_be_bytes([buf[0], buf[1]]);
            let ua = a.on_ack(&c, seq, nxt, &buf);
            let bb = b.step_hops::<IntHop>(&c, seq, nxt, header, &buf[2..]);
            prop_assert_eq!(ua.branch, bb);
            prop_assert_eq!(a, b);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]
    /// MD's fast form (U ∈ [0.5, 2), η ≥ 1/2: one-bit normalisation, η folded into the
    /// reciprocal) and its general form (any U, out of line) are the same function of
    /// `(Wc, U, η)` to within their rounding: the general form rounds `a = Wc·η` to a Q24.8 unit
    /// before dividing by `U ≥ 1/2` (up to one unit after the division), both round `W` (half a
    /// unit each) and both reciprocals are within 2^-30 (relative).
    #[test]
    fn md_fast_form_equals_the_general_one_within_their_rounding(wc in 1u32..u32::MAX, u in (1u64 << 31)..(2u64 << 32), eta in 50u32..=100) {
        let c = Config::new(Params { eta: Ratio { num: eta, den: 100 }, ..Params::PAPER }).unwrap();
        let fast = md_q8(wc, u, &c);
        let general = md_q8_general(wc, u, &c);
        let bound = 2.0 + f64::from(fast) * 2f64.powi(-29);
        prop_assert!(f64::from(fast.abs_diff(general)) <= bound, "{fast} vs {general}");
    }
}
