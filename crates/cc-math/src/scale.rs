//! Constant multipliers precomputed at configuration time and applied per event with one
//! `u32 × u32 → u64` product and a shift.

/// A constant multiplier `c ≈ mant / 2^shift`, precomputed when a configuration
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
        // Start one below the first shift that can normalise: num/den < 2^(bn − bd + 1) (bits
        // of each), so at `31 − (bn − bd) − 1` the mantissa is at most 2^31 and the loop below
        // finds the same shift as from 0, after a step or two instead of up to 63 divisions.
        let (bn, bd) = (128 - num.leading_zeros(), 128 - den.leading_zeros());
        let mut shift = (bd + 30).saturating_sub(bn);
        if shift > 63 {
            shift = 63;
        }
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

#[cfg(test)]
#[allow(
    clippy::float_arithmetic,
    clippy::unwrap_used,
    clippy::cast_possible_truncation,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;

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

    /// The reference: the same search from shift 0 (what `from_ratio` must equal).
    fn from_ratio_naive(num: u128, den: u128) -> Option<Scale> {
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
            let m = ((num << shift) + den / 2) / den;
            if m >= 1 << 32 {
                return None;
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

    proptest::proptest! {
        #[test]
        fn from_ratio_equals_the_search_from_zero(num in 0u128..1 << 100, den in 0u128..1 << 100, a in 0u32..100, b in 0u32..100) {
            let (n, d) = (num >> a, den >> b);
            proptest::prop_assert_eq!(Scale::from_ratio(n, d), from_ratio_naive(n, d));
        }
    }
}
