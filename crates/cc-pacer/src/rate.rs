//! Rates, the per-byte pacing interval they turn into, and gaps.
//!
//! # Formats (the documented rounding; the f64 reference applies the same two steps)
//! * A rate is a [`Rate`]: `u32` in units of 128 b/s (`timely_cc`'s format), 128 b/s ..
//!   ≈ 549.7 Gb/s.
//! * A rate becomes a **time per byte** `tpb = ⌈10^9·2^18 / r⌉` in units of 2^-22 ns (1/16 ns in
//!   `Q14.18`), computed once per rate change by [`time_per_byte`] (no division: cc-math's
//!   reciprocal table, one correction step, an exact fix-up; its const form, which divides,
//!   builds the configuration). Rounding up means the pacer never
//!   paces faster than asked. Rates below [`Rate::MIN`] (61 036 units ≈ 7.81 Mb/s) are paced at
//!   `Rate::MIN`: `tpb` then fits `u32` and the longest gap (64 KiB) is 2^30 time units (67.1 ms).
//! * A segment (or burst) of `b ≤ 65 536` bytes occupies `gap = ⌈b·tpb / 2^18⌉` time units of
//!   1/16 ns: one `mulhu` and a carry on rv32 ([`gap`]).
//!
//! Together: the real gap `8b/R` is rounded up twice, by less than `b·2^-22` ns through `tpb` and
//! less than 1/16 ns through the gap; both roundings are exact integer operations, so the crate and
//! the reference compute identical times.

use cc_math::RECIP;

/// A sending rate in units of 128 b/s (the unit of `timely_cc`'s rate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Rate(u32);

/// `10^9·2^18`: `tpb = ⌈K / r⌉` (the time of one byte at `r` units of 128 b/s, in 2^-22 ns).
pub const TPB_NUMERATOR: u64 = 1_000_000_000 << 18;

/// Fraction bits of `tpb` below the 1/16-ns time unit.
pub const TPB_FRAC_BITS: u32 = 18;

impl Rate {
    /// One unit, in b/s.
    ///
    /// cbindgen:ignore
    pub const UNIT_BPS: u64 = 128;
    /// The slowest rate the pacer paces at: `⌈K / (2^32 − 1)⌉` = 61 036 units (≈ 7.81 Mb/s), so
    /// that `tpb` fits `u32`. A slower [`Rate`] is paced at this one.
    pub const MIN: Rate = Rate(61_036);
    /// The fastest representable rate, `(2^32 − 1)·128` b/s ≈ 549.7 Gb/s.
    pub const MAX: Rate = Rate(u32::MAX);

    /// A rate of `units · 128` b/s.
    #[must_use]
    pub const fn from_units(units: u32) -> Self {
        Self(units)
    }

    /// `⌊bps / 128⌋` units (rounded down, so the rate paced is never above `bps`), saturating at
    /// [`Rate::MAX`].
    #[must_use]
    pub const fn from_bps(bps: u64) -> Self {
        let u = bps >> 7;
        if u > u32::MAX as u64 {
            Self::MAX
        } else {
            #[allow(clippy::cast_possible_truncation)] // checked just above
            Self(u as u32)
        }
    }

    /// The rate in units of 128 b/s.
    #[must_use]
    pub const fn units(self) -> u32 {
        self.0
    }

    /// The rate in b/s.
    #[must_use]
    pub const fn bps(self) -> u64 {
        (self.0 as u64) << 7
    }

    /// The rate the pacer actually paces at: `max(self, MIN)`.
    #[must_use]
    pub const fn paced(self) -> Rate {
        if self.0 < Self::MIN.0 {
            Self::MIN
        } else {
            self
        }
    }
}

/// `⌈K / r⌉` for `r = max(rate, Rate::MIN)` by integer division: the **const form** of
/// [`time_per_byte`], for configuration built in `const` context (line and hybrid rates). Never
/// on the per-event path; the property test `time_per_byte_equals_its_const_form` (and a sweep of
/// the whole range) proves the two equal.
#[must_use]
#[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // r ≥ MIN: K/r < 2^32
pub(crate) const fn time_per_byte_const(rate: Rate) -> u32 {
    let r = rate.paced().0 as u64;
    TPB_NUMERATOR.div_ceil(r) as u32
}

/// `lz8(b)` = leading zeros of the byte `b` as a `u8` (8 for 0): the normalisation of
/// [`time_per_byte`] in one load on cores without a count-leading-zeros instruction.
const LZ8: [u8; 256] = {
    let mut t = [8u8; 256];
    let mut b: usize = 1;
    while b < 256 {
        #[allow(clippy::indexing_slicing, clippy::cast_possible_truncation)] // b < 256; lz ≤ 7
        {
            t[b] = (b as u8).leading_zeros() as u8;
        }
        b = b.wrapping_add(1);
    }
    t
};

/// `s = leading_zeros(r)` for `r ≥ 2^15` (`s ≤ 16`): with Zbb the instruction; otherwise one
/// test per byte and a 256-byte table (rates of 2.1 Gb/s and more take the first test).
#[inline(always)]
fn leading_zeros_rate(r: u32) -> u32 {
    if cfg!(target_feature = "zbb") {
        return r.leading_zeros();
    }
    let lz = |b: u32| u32::from(LZ8.get((b & 0xFF) as usize).copied().unwrap_or(8));
    if r >> 24 != 0 {
        lz(r >> 24)
    } else if r >> 16 != 0 {
        lz(r >> 16).wrapping_add(8)
    } else {
        16
    }
}

/// `tpb = ⌈10^9·2^18 / r⌉` for `r = max(rate, Rate::MIN)`, exactly, without a division.
///
/// `r = m·2^-s` with `m` normalised (bit 31 set, `s ≤ 16` since `r ≥ 2^15`); cc-math's table
/// gives `y ≈ 2^62/m` (`Q1.31`, relative error ≤ 1.53e-5, one-sided up to 2^-31).
/// 1. `q0 = ⌊4·10^9·y / 2^32⌋·2^(s−14)` ≈ `K/r`: `|q0 − K/r| ≤ 1.53e-5·2^32 + 4 < 65 720`.
/// 2. One correction with the same reciprocal: `e = K − q0·r` (exact; `|e| < 2^(49−s)`),
///    `e' = e >> (18 − s)` (`|e'| < 2^31`), `δ = round(e'·y / 2^44)` ≈ `e/r`, error
///    ≤ `1.53e-5·65 720 + 0.5 + 2^-11` < 1.6: `q1 = q0 + δ`, `|q1 − K/r| < 1.6`.
/// 3. Exact: with `e1 = K − q1·r` (`|e1| < 1.6·r`), `⌈K/r⌉ = q1 + c`: for `e1 > 0`,
///    `c = 1 + [e1 > r]`; otherwise `c = −[e1 ≤ −r]`.
///
/// The host tests compare it with its const form (`time_per_byte_const`, which divides) over a
/// sweep of the whole range and random and near-integer quotients.
#[must_use]
#[inline(always)]
#[allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)] // ranges proven in the comments
pub fn time_per_byte(rate: Rate) -> u32 {
    let r = if rate.0 < Rate::MIN.0 {
        Rate::MIN.0
    } else {
        rate.0
    };
    // s = leading_zeros(r) ∈ [0, 16] (r ≥ 2^15), m = r << s normalised.
    let s = leading_zeros_rate(r);
    let y = RECIP.interpolate(r.wrapping_shl(s));
    // 1. x ≈ 4e9·2^30/m < 2^31.
    let x = ((4_000_000_000u64 * y as u64) >> 32) as u32;
    // A right shift by 14 − s for s ≤ 14 (its sign tells, one test against zero).
    let down = 14u32.wrapping_sub(s) as i32;
    let q0 = if down >= 0 {
        x >> down
    } else {
        // r < 2^17 (below 16.8 Mb/s): K/r ≥ 2^31; saturate rather than wrap.
        let sh = s - 14;
        if x >> (32 - sh) != 0 {
            u32::MAX
        } else {
            x << sh
        }
    };
    // 2. e = K − q0·r, |e| < 2^(49−s) ≤ 2^49.
    let e = TPB_NUMERATOR as i64 - (q0 as u64 * r as u64) as i64;
    // e' = e >> k, k = 18 − s ∈ [2, 18], from the two words (|e'| < 2^31).
    let k = 18 - s;
    let ep = ((e as u32) >> k) | (((e >> 32) as u32) << (32 - k));
    // δ = round(e'·y / 2^44): the high word of the signed × unsigned product, then 12 bits
    // (rounded with 2^11 − 1, an immediate: the rounding error is within [−0.5, 0.5 + 2^-12]).
    let hi = ((ep as i32 as i64 * y as i64) >> 32) as i32;
    let delta = (hi + ((1 << 11) - 1)) >> 12;
    let q1 = q0.wrapping_add(delta as u32);
    // 3. e1 = K − q1·r, |e1| < 1.6·r: the ceiling is q1 + c, c ∈ {−1, 0, 1, 2}.
    // In 32-bit words: e1 = hi·2^32 + lo, hi ∈ {−2, −1, 0, 1}. hi > 0: e1 ≥ 2^32 > r, so
    // c = 2; hi = 0: c = [lo > 0] + [lo > r]; hi = −1: e1 = lo − 2^32, c = −[lo ≤ 2^32 − r];
    // hi = −2: e1 < −2^32 < −r, c = −1.
    let p = q1 as u64 * r as u64;
    let (lo, borrow) = (TPB_NUMERATOR as u32).overflowing_sub(p as u32);
    let hi = ((TPB_NUMERATOR >> 32) as u32)
        .wrapping_sub((p >> 32) as u32)
        .wrapping_sub(borrow as u32) as i32;
    if hi == 0 {
        q1.wrapping_add((lo != 0) as u32)
            .wrapping_add((lo > r) as u32)
    } else if hi > 0 {
        q1.wrapping_add(2)
    } else if hi == -1 {
        q1.wrapping_sub((lo <= r.wrapping_neg()) as u32)
    } else {
        q1.wrapping_sub(1)
    }
}

/// Time units (1/16 ns) that `bytes` take at `tpb`: `⌈bytes·tpb / 2^18⌉`, for `bytes ≤ 65 536`
/// (larger values are treated as 65 536). At most 2^30 (67.1 ms).
#[must_use]
#[inline(always)]
#[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // (b<<14)·tpb < 2^62
pub const fn gap(bytes: u32, tpb: u32) -> u32 {
    let b = if bytes > 65_536 { 65_536 } else { bytes };
    let x = ((b << 14) as u64) * (tpb as u64);
    // ⌊x / 2^32⌋ ≤ 2^30, plus one when anything was cut off: the ceiling.
    (x >> 32) as u32 + ((x as u32) != 0) as u32
}

#[cfg(test)]
#[allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::float_arithmetic,
    clippy::unwrap_used
)]
mod tests {
    extern crate std;
    use super::*;
    use proptest::prelude::*;

    fn exact(r: u32) -> u32 {
        time_per_byte_const(Rate(r))
    }

    #[test]
    fn worked_numbers() {
        // 10 Gb/s = 78 125 000 units: one byte takes 0.8 ns = 12.8 units of 1/16 ns;
        // tpb = ⌈2^18·10^9 / 78 125 000⌉ = 3 355 443.2 → 3 355 444.
        assert_eq!(time_per_byte(Rate::from_bps(10_000_000_000)), 3_355_444);
        // A 16 KiB segment at 10 Gb/s: 13 107.2 ns = 209 715.2 units → 209 716 (⌈⌉ twice).
        assert_eq!(gap(16_384, 3_355_444), 209_716);
        // 100 Gb/s (781 250 000 units): 0.08 ns per byte, tpb = ⌈335 544.32⌉.
        assert_eq!(time_per_byte(Rate::from_bps(100_000_000_000)), 335_545);
        // The slowest rate: tpb just below 2^32, 64 KiB take 2^30 − ε units (67.1 ms).
        assert_eq!(time_per_byte(Rate::MIN), exact(61_036));
        assert!(gap(65_536, time_per_byte(Rate::MIN)) <= 1 << 30);
        assert_eq!(time_per_byte(Rate(1)), time_per_byte(Rate::MIN));
    }

    #[test]
    fn exact_at_the_ends_and_at_powers_of_two() {
        let mut rs = std::vec![
            61_036u32,
            61_037,
            65_535,
            65_536,
            65_537,
            u32::MAX,
            u32::MAX - 1
        ];
        for s in 16..32 {
            rs.extend([(1u32 << s) - 1, 1 << s, (1 << s) + 1]);
        }
        for r in rs {
            assert_eq!(time_per_byte(Rate(r)), exact(r), "r = {r}");
        }
    }

    /// Every 97th rate over the whole range, plus the neighbourhoods of every exact quotient
    /// boundary probed by proptest below.
    #[test]
    fn exact_on_a_sweep() {
        let mut r: u64 = 61_036;
        while r <= u32::MAX as u64 {
            assert_eq!(time_per_byte(Rate(r as u32)), exact(r as u32), "r = {r}");
            r += 97 + (r >> 14);
        }
    }

    #[test]
    fn gap_is_the_ceiling() {
        for &(b, t) in &[(1u32, 1u32), (65_536, u32::MAX), (1500, 335_545), (0, 5)] {
            let want = ((b as u128 * t as u128) + (1 << 18) - 1) >> 18;
            assert_eq!(gap(b, t) as u128, want, "{b} {t}");
        }
    }

    proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 20_000,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x009a_ce12),
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        })]

        #[test]
        fn time_per_byte_equals_its_const_form(r in any::<u32>()) {
            prop_assert_eq!(time_per_byte(Rate(r)), exact(r));
        }

        /// Rates whose quotient is (nearly) an integer: the fix-up's edge.
        #[test]
        fn tpb_exact_near_integer_quotients(q in 61_036u64..(1u64 << 32)) {
            let r = (TPB_NUMERATOR / q) as u32;
            for d in [0u32, 1, 2] {
                let rr = r.saturating_add(d).max(61_036);
                prop_assert_eq!(time_per_byte(Rate(rr)), exact(rr));
            }
        }

        #[test]
        fn gap_matches_u128(b in 0u32..=65_536, t in any::<u32>()) {
            let want = ((b as u128 * t as u128) + (1 << 18) - 1) >> 18;
            prop_assert_eq!(gap(b, t) as u128, want);
        }
    }
}
