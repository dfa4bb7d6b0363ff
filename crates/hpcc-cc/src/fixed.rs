//! Fixed-point helpers: precomputed constant scales and a refined reciprocal.

use cc_math::{RECIP, Recip};
use core::num::NonZeroU32;

/// A constant multiplier `c ≈ mant / 2^shift`, precomputed when the [`Config`](crate::Config)
/// is built (where division is allowed), applied per event with one `u32 × u32 → u64` multiply
/// and a shift.
///
/// `mant` is normalised into `[2^31, 2^32)` whenever `c ≥ 2^-32`, so the constant itself carries
/// 32 significant bits (relative error ≤ 2^-32); `apply` rounds to nearest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Scale {
    /// Mantissa.
    pub mant: u32,
    /// Right shift, `0 ..= 63`.
    pub shift: u32,
}

impl Scale {
    /// `num / den` as a scale; `None` if `den = 0`, the value is `≥ 2^32`, or the operands are so
    /// large that normalising would overflow `u128`.
    #[must_use]
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // const evaluation at config time; each step is range-checked below
    pub const fn from_ratio(num: u128, den: u128) -> Option<Scale> {
        if den == 0 || num == 0 {
            return if den == 0 {
                None
            } else {
                Some(Scale { mant: 0, shift: 0 })
            };
        }
        let mut shift = 0u32;
        loop {
            if num.leading_zeros() <= shift + 1 {
                return None;
            }
            // round(num · 2^shift / den)
            let m = ((num << shift) + den / 2) / den;
            if m >= 1 << 32 {
                return None; // only possible at shift 0: the value is ≥ 2^32
            }
            if m >= 1 << 31 || shift == 63 {
                return Some(Scale {
                    mant: m as u32,
                    shift,
                });
            }
            shift += 1;
        }
    }

    /// `round(x · mant / 2^shift)`. Never overflows: the product is below `2^64` and the rounding
    /// is done as `((p >> (shift − 1)) + 1) >> 1`.
    #[inline]
    #[must_use]
    pub fn apply(self, x: u32) -> u64 {
        // u32 × u32 < 2^64: cannot overflow.
        let p = u64::from(x).wrapping_mul(u64::from(self.mant));
        match self.shift.checked_sub(1) {
            None => p,
            // p >> (shift−1) < 2^64 − 1 for shift ≥ 1... (p < 2^64 − 2^33), so +1 cannot wrap.
            Some(s1) => (p.wrapping_shr(s1).wrapping_add(1)) >> 1,
        }
    }
}

/// `1/x` from cc-math's table refined by one Newton–Raphson step, `r' = r·(2 − x·r)`, which
/// squares the relative error: from the table's ≤ 1.51e-5 (one-sided, always above the true value)
/// to ≤ 2^-30 (the `Q1.31` rounding). Same format as [`Recip`]: `1/x = mant_q31 · 2^-shift`.
///
/// Why refine: the table's error is one-sided, so in free mode it would compound through the
/// reference window `Wc` (one multiplicative step per RTT); the refined value has no useful bias.
///
/// Same table and interpolation as [`cc_math::RecipTable::recip`], inlined here so the
/// normalisation (a 5-step binary search: rv32imac has no count-leading-zeros) is done once and
/// its mantissa reused by the Newton step. Cost on rv32imac: ≈ 15 (normalise) + 8 (table) +
/// 12 (Newton) instructions.
#[inline]
#[must_use]
pub fn recip_refined(x: NonZeroU32) -> Recip {
    // m = x·2^lz, bit 31 set.
    let (m, lz) = cc_math::recip::normalize(x);
    Recip {
        mant_q31: recip_norm(m),
        shift: 62u32.wrapping_sub(lz), // lz ≤ 31
    }
}

/// `2^62/m` for a normalised `m` (bit 31 set), refined as [`recip_refined`]: the result is in
/// `(2^30, 2^31]` (`Q1.31` of `1/(m/2^31)`), relative error ≤ 2^-30. For callers that already
/// hold a normalised mantissa (the MD step's `U`), so the binary search is not repeated.
#[inline]
#[must_use]
pub fn recip_norm(m: u32) -> u32 {
    let table = RECIP.entries();
    // 7 index bits after the leading one (< 128: both reads in range of the 129 entries),
    // the remaining 24 bits, top-aligned, are the position f inside the segment.
    let idx = ((m >> 24) & 0x7F) as usize;
    let frac = m.wrapping_shl(8);
    let t0 = table.get(idx).copied().unwrap_or(1 << 31);
    let t1 = table.get(idx.wrapping_add(1)).copied().unwrap_or(t0);
    // r = T[i] − (T[i] − T[i+1])·f (T decreasing; the step is below T[i] − T[i+1]).
    #[allow(clippy::cast_possible_truncation)] // high word of a u32 × u32 product
    let step = (u64::from(t0.wrapping_sub(t1)).wrapping_mul(u64::from(frac)) >> 32) as u32;
    let r = t0.wrapping_sub(step);
    // p = m·r in Q2.62 ≈ 2^62·(1 + δ), |δ| ≤ 1.6e-5; m < 2^32, r ≤ 2^31 so p < 2^63.
    let p = u64::from(m).wrapping_mul(u64::from(r));
    // d = p − 2^62 (as i64: |d| ≤ 2^62·2^-15 = 2^47).
    #[allow(clippy::cast_possible_wrap)] // p < 2^63
    let d = (p as i64).wrapping_sub(1i64 << 62);
    // r' = r − r·d/2^62 = r − (r·(d >> 16)) >> 46 ; |d >> 16| ≤ 2^31, |r·(d>>16)| < 2^62.
    let corr = i64::from(r).wrapping_mul(d >> 16) >> 46;
    // The refined mantissa stays in (2^30, 2^31 + 1]: a u32.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let r = i64::from(r).wrapping_sub(corr) as u32;
    r
}

/// `(hi·2^32 + lo) >> sh` for `sh ∈ 1 ..= 31`, with 32-bit operations only (a variable 64-bit
/// shift is a branchy sequence on rv32). Bits above 2^64 of the result are dropped (callers
/// prove the result fits).
#[inline(always)]
#[must_use]
pub fn shr64_small(hi: u32, lo: u32, sh: u32) -> u64 {
    let r_lo = (lo >> sh) | hi.wrapping_shl(32u32.wrapping_sub(sh));
    let r_hi = hi >> sh;
    (u64::from(r_hi) << 32) | u64::from(r_lo)
}

#[cfg(test)]
#[allow(
    clippy::float_arithmetic,
    clippy::unwrap_used,
    clippy::cast_possible_truncation,
    clippy::arithmetic_side_effects
)]
mod tests {
    extern crate std;
    use super::*;

    fn val(r: Recip) -> f64 {
        f64::from(r.mant_q31) * (-f64::from(r.shift)).exp2()
    }

    #[test]
    fn scale_is_accurate() {
        // 80 · 2^22 / (12.5 · 13000): the 100G queue coefficient at T = 13 µs.
        let s = Scale::from_ratio(80 << 22, 162_500).unwrap();
        assert!(s.mant >= 1 << 31);
        let want = 1000.0 * 80.0 * 4_194_304.0 / 162_500.0;
        assert!((s.apply(1000) as f64 - want).abs() <= 0.5 + want * 1e-9);
        assert_eq!(Scale::from_ratio(1, 0), None);
        assert_eq!(Scale::from_ratio(1 << 32, 1), None);
        assert_eq!(Scale::from_ratio(0, 5).unwrap().apply(77), 0);
        // x = u32::MAX with the largest mantissa: no overflow.
        let big = Scale::from_ratio((1 << 32) - 1, 1).unwrap();
        assert_eq!(
            big.apply(u32::MAX),
            u64::from(u32::MAX) * u64::from(u32::MAX)
        );
    }

    /// Every 24-bit Δts (the input range HPCC uses it for): refined error ≤ 2^-29.
    #[test]
    fn refined_recip_exhaustive_24_bit() {
        let mut worst = 0.0f64;
        for x in 1u32..(1 << 24) {
            let got = val(recip_refined(NonZeroU32::new(x).unwrap()));
            let want = 1.0 / f64::from(x);
            worst = worst.max(((got - want) / want).abs());
        }
        std::println!("refined reciprocal: max relative error {worst:.3e} over 1..2^24");
        assert!(worst <= 2f64.powi(-29), "{worst:e}");
    }

    #[test]
    fn refined_recip_top_of_range() {
        for x in [
            u32::MAX,
            u32::MAX - 1,
            1 << 31,
            (1 << 31) + 12345,
            3_000_000_000,
        ] {
            let got = val(recip_refined(NonZeroU32::new(x).unwrap()));
            let want = 1.0 / f64::from(x);
            assert!(((got - want) / want).abs() <= 2f64.powi(-29));
        }
    }
}
