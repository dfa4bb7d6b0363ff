//! Division-free reciprocal: `1/x` for any non-zero `u32` from a small table.
//!
//! # Method
//! HPCC §4.3 replaced the NIC's per-ACK divisions with a table of `1/n` (about 10 KB for
//! `1 ≤ n ≤ 2^22`). We store `1/m` only on the mantissa interval `m ∈ [1, 2]`, so one table serves
//! every magnitude:
//!
//! 1. Normalise: `s = leading_zeros(x)`, `m = x << s` (bit 31 set), so `x = (m/2^31)·2^(31−s)`.
//! 2. The `K` bits after the leading one select segment `i`; the remaining bits are the position
//!    `f ∈ [0, 1)` inside it.
//! 3. Interpolate linearly between `T[i]` and `T[i+1]`, where (the generating formula)
//!    `T[i] = round(2^31 / (1 + i/2^K))`, `i = 0 ..= 2^K`: `r = T[i] − (T[i] − T[i+1])·f`.
//! 4. `1/x ≈ r · 2^(s − 62)`, returned as a mantissa (`Q1.31`, value in `(0.5, 1]`) and a right
//!    shift so callers can keep as many fractional bits as they need.
//!
//! # Error bound
//! The chord of the convex `1/m` over a segment of width `h = 2^-K` lies above the curve by at
//! most `h²/8 · max(2/m³)`; relative to `1/m` that is at most `h²/4 · 1/m² ≤ h²/4`. For `K = 7`
//! (the default [`RECIP`]) `h²/4 = 2^-16 ≈ 1.53e-5`; quantising the table and the interpolation step to
//! `2^-31` adds below `2^-29`. The exhaustive test over every 24-bit input measures a
//! maximum relative error of about `1.5e-5 < 2^-14`. The error is one-sided: the interpolated
//! reciprocal is never below the true one by more than the table rounding (`2^-31`).
//!
//! Size against error (measured by `size_vs_error` in the tests; docs/hpcc.md has the table):
//! `K = 5`: 33 entries, 132 B, ≈ 2.4e-4; `K = 6`: 260 B, ≈ 6.1e-5; `K = 7`: 516 B, ≈ 1.5e-5;
//! `K = 8`: 1028 B, ≈ 3.8e-6. The paper's table: ≈ 10 KB.
//!
//! # Ends
//! `x = 0` has no reciprocal: the API takes [`NonZeroU32`], so the caller decides what a zero
//! means (HPCC skips a hop with `Δts = 0`). Powers of two are exact (`f = 0`, `T[0] = 2^31`).

use crate::word::{mul_wide, mulhu};
use core::num::NonZeroU32;

/// A reciprocal table with `LEN = 2^K + 1` entries of `u32`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecipTable<const LEN: usize> {
    table: [u32; LEN],
}

/// The table every crate uses: `K = 7`, 129 entries, 516 bytes of `.rodata`,
/// maximum relative error ≈ 1.5e-5 (< 2^-14).
pub static RECIP: RecipTable<129> = RecipTable::new();

/// `1/x` as `mant_q31 · 2^-shift` (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Recip {
    /// `1/m` for the normalised mantissa `m ∈ [1, 2)`, in `Q1.31`: a value in `(2^30, 2^31]`.
    pub mant_q31: u32,
    /// `1/x = mant_q31 / 2^shift`; `shift ∈ [31, 62]` (`31` for `x = 1`, `62` for `x ≥ 2^31`).
    pub shift: u32,
}

impl<const LEN: usize> RecipTable<LEN> {
    /// Index bits `K` (`LEN = 2^K + 1`).
    pub const BITS: u32 = {
        assert!(
            LEN >= 3 && (LEN - 1).is_power_of_two() && LEN - 1 <= 1 << 15,
            "LEN must be 2^K + 1 with 1 ≤ K ≤ 15"
        );
        (LEN - 1).trailing_zeros()
    };

    /// Builds the table at compile time: `T[i] = round(2^31 / (1 + i/2^K)) = round(2^(31+K) / (2^K + i))`.
    #[must_use]
    #[allow(
        clippy::arithmetic_side_effects,
        clippy::indexing_slicing,
        clippy::cast_possible_truncation
    )] // const evaluation: any overflow, bad index or lost bit is a compile error (assert above the cast)
    pub const fn new() -> Self {
        let k = Self::BITS;
        let mut table = [0u32; LEN];
        let mut i = 0;
        while i < LEN {
            let n = (1u64 << k) + i as u64;
            let v = ((1u64 << (31 + k)) + n / 2) / n;
            assert!(v <= 1 << 31);
            table[i] = v as u32;
            i += 1;
        }
        Self { table }
    }

    /// Size of the table in bytes (what it adds to `.rodata`).
    #[must_use]
    pub const fn size_bytes(&self) -> usize {
        core::mem::size_of::<[u32; LEN]>()
    }

    /// The raw entries (for documentation and tests).
    #[must_use]
    pub const fn entries(&self) -> &[u32; LEN] {
        &self.table
    }

    /// `1/x` for any non-zero `x`, division-free (about ten instructions on rv32imac).
    #[inline]
    #[must_use]
    pub fn recip(&self, x: NonZeroU32) -> Recip {
        // Normalise: bit 31 of m is the leading one; s = leading_zeros(x) ∈ 0 ..= 31.
        let (m, s) = normalize(x);
        Recip {
            mant_q31: self.interpolate(m),
            shift: 62u32.wrapping_sub(s), // s ≤ 31
        }
    }

    /// `≈ 2^62/m` for a normalised `m` (bit 31 set) by linear interpolation in the table: a
    /// value in `(2^30, 2^31]`, at most ≈ 1.5e-5 above the true one (for `K = 7`).
    #[inline]
    #[must_use]
    // Proven in the comments below: K ≤ 15 (checked when BITS is evaluated), so 31 − K, 1 << K,
    // K + 1 and idx + 1 cannot overflow; the product is of two values below 2^32 (< 2^64) and
    // its high word fits u32.
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)]
    pub fn interpolate(&self, m: u32) -> u32 {
        let k = Self::BITS;
        // K index bits after the leading one; masked, so idx < 2^K and idx + 1 ≤ 2^K < LEN.
        let idx = ((m >> (31 - k)) & ((1u32 << k) - 1)) as usize;
        // The remaining 31 − K bits, top-aligned: the position inside the segment,
        // f = frac / 2^32 ∈ [0, 1).
        let frac = m.wrapping_shl(k + 1);
        // `get` keeps the path panic-free; the mask above already proves both are in range.
        let t0 = self.table.get(idx).copied().unwrap_or(1 << 31);
        let t1 = self.table.get(idx + 1).copied().unwrap_or(t0);
        // r = T[i] − (T[i] − T[i+1])·f. T is strictly decreasing (wrapping_sub cannot wrap), and
        // (T[i] − T[i+1])·f < T[i] − T[i+1], so the subtraction below cannot wrap either.
        // The product's high word is one `mulhu` on rv32.
        t0.wrapping_sub(mulhu(t0.wrapping_sub(t1), frac))
    }

    /// `1/x` from the table refined by one Newton–Raphson step ([`newton`]; tables with
    /// `K ≥ 7`, whose error is below `2^-15`), which squares the
    /// relative error: from the table's ≤ 1.51e-5 (one-sided, always above the true value) to
    /// ≤ 2^-30 (the `Q1.31` rounding). Same format as [`recip`](Self::recip).
    ///
    /// Why refine: the table's error is one-sided, so where a reciprocal feeds a value that
    /// multiplies itself from step to step (HPCC's reference window `Wc`), it would compound;
    /// the refined value has no useful bias.
    #[inline]
    #[must_use]
    pub fn recip_refined(&self, x: NonZeroU32) -> Recip {
        let (m, s) = normalize(x);
        Recip {
            mant_q31: self.recip_norm_refined(m),
            shift: 62u32.wrapping_sub(s), // s ≤ 31
        }
    }

    /// `2^62/m` for a normalised `m` (bit 31 set), table and one Newton step: the result is in
    /// `(2^30, 2^31 + 1]`, relative error ≤ 2^-30. For callers that already hold a normalised
    /// mantissa, so the normalisation is not repeated.
    #[inline]
    #[must_use]
    pub fn recip_norm_refined(&self, m: u32) -> u32 {
        const {
            assert!(
                Self::BITS >= 7,
                "one Newton step needs a table error below 2^-15"
            )
        };
        newton(m, self.interpolate(m))
    }
}

/// One Newton–Raphson step for `2^62/m`: `r' = r·(2 − m·r/2^62)`, for a normalised `m` (bit 31
/// set) and an `r` within `2^-15` relative of `2^62/m` (what [`RecipTable::interpolate`] gives):
/// the relative error squares (≤ 2^-30 after the `Q1.31` rounding).
///
/// All in 32-bit words: `m·r = 2^62·(1 + δ)`, `|δ| ≤ 2^-15`, so `d = m·r − 2^62` has
/// `|d| ≤ 2^47` and `d >> 16` fits an `i32`; `r·(d >> 16) >> 46` is the high word of one
/// signed 32×32 product, shifted. Cost on rv32imac: two `mul`, two high-word products and a few
/// shifts.
#[inline]
#[must_use]
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)] // word splits of products whose ranges are given above
pub const fn newton(m: u32, r: u32) -> u32 {
    let (p_lo, p_hi) = mul_wide(m, r);
    // d >> 16 = (p_hi − 2^30)·2^16 + p_lo/2^16, in i32 (|d >> 16| ≤ 2^31).
    let d16 = (p_hi.wrapping_sub(1 << 30) << 16 | (p_lo >> 16)) as i32;
    // corr = r·d/2^62 = (r·(d >> 16)) >> 46: the high word (>> 32) then >> 14.
    let corr = ((r as i64).wrapping_mul(d16 as i64) >> 46) as i32;
    (r as i32).wrapping_sub(corr) as u32
}

/// `(x << s, s)` with `s = leading_zeros(x)`, so bit 31 of the first value is set.
///
/// rv32imac has no count-leading-zeros instruction: `u32::leading_zeros` compiles there to a
/// bit-smearing population count of about 30 instructions. This five-step binary search costs at
/// most 15 and shifts as it goes. With the Zbb extension the native instruction is used instead.
#[inline]
#[must_use]
pub const fn normalize(x: NonZeroU32) -> (u32, u32) {
    if cfg!(target_feature = "zbb") {
        let s = x.leading_zeros();
        return (x.get().wrapping_shl(s), s);
    }
    let mut m = x.get();
    let mut s = 0u32;
    // Each step: if the top `k` bits are clear, shift them out. `s` stays ≤ 31 because x ≠ 0;
    // wrapping_* only because the lint cannot see that bound.
    if m <= 0x0000_FFFF {
        s = s.wrapping_add(16);
        m = m.wrapping_shl(16);
    }
    if m <= 0x00FF_FFFF {
        s = s.wrapping_add(8);
        m = m.wrapping_shl(8);
    }
    if m <= 0x0FFF_FFFF {
        s = s.wrapping_add(4);
        m = m.wrapping_shl(4);
    }
    if m <= 0x3FFF_FFFF {
        s = s.wrapping_add(2);
        m = m.wrapping_shl(2);
    }
    if m <= 0x7FFF_FFFF {
        s = s.wrapping_add(1);
        m = m.wrapping_shl(1);
    }
    (m, s)
}

impl<const LEN: usize> Default for RecipTable<LEN> {
    fn default() -> Self {
        Self::new()
    }
}

impl Recip {
    /// `a / x`, rounded to nearest (ties up); the result is at most `a + 1`, so `u64` holds it.
    #[inline]
    #[must_use]
    pub fn mul_u32(self, a: u32) -> u64 {
        self.mul_scaled(a, 0)
    }

    /// `a · 2^frac_bits / x`, rounded to nearest: the quotient with `frac_bits` fractional bits
    /// (`frac_bits ≤ 31`; larger values are treated as 31).
    ///
    /// Range: `a · mant_q31 < 2^63`; the shift right is `shift − frac_bits ≥ 0`, so nothing
    /// overflows and the result is below `2^63`.
    #[inline]
    #[must_use]
    // a·mant < 2^63 (mant ≤ 2^31); shift ≥ 31 ≥ frac_bits; prod + 2^(sh−1) < 2^64: proven below.
    #[allow(clippy::arithmetic_side_effects)]
    pub fn mul_scaled(self, a: u32, frac_bits: u32) -> u64 {
        let frac_bits = if frac_bits > 31 { 31 } else { frac_bits };
        let prod = u64::from(a) * u64::from(self.mant_q31); // < 2^63
        // shift ≥ 31 ≥ frac_bits for every Recip that `recip` makes, so sh ∈ 0 ..= 62; the
        // saturation and the cap only keep a hand-made Recip from shifting out of range.
        let sh = if self.shift > 62 { 62 } else { self.shift }.saturating_sub(frac_bits);
        if sh == 0 {
            prod
        } else {
            // Round to nearest: add half an ulp before truncating (prod + 2^(sh−1) < 2^64).
            (prod + (1u64 << (sh - 1))) >> sh
        }
    }
}

#[cfg(test)]
#[allow(
    clippy::float_arithmetic,
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::indexing_slicing,
    clippy::unwrap_used
)]
mod tests {
    extern crate std;
    use super::*;
    use proptest::prelude::*;
    use std::{println, vec::Vec};

    fn value(r: Recip) -> f64 {
        f64::from(r.mant_q31) * (-(r.shift as f64)).exp2()
    }

    fn nz(x: u32) -> NonZeroU32 {
        NonZeroU32::new(x).unwrap()
    }

    /// Maximum relative error of `table` over every input in `1 ..= max`.
    fn max_rel_error<const LEN: usize>(table: &RecipTable<LEN>, max: u32) -> (f64, u32) {
        let mut worst = (0.0f64, 1u32);
        for x in 1..=max {
            let got = value(table.recip(nz(x)));
            let want = 1.0 / f64::from(x);
            let err = ((got - want) / want).abs();
            if err > worst.0 {
                worst = (err, x);
            }
        }
        worst
    }

    #[test]
    fn table_matches_its_formula() {
        // T[i] = round(2^31 / (1 + i/128)), recomputed here in f64.
        for (i, &t) in RECIP.entries().iter().enumerate() {
            let want = (2f64.powi(31) / (1.0 + i as f64 / 128.0)).round();
            assert_eq!(f64::from(t), want, "entry {i}");
        }
        assert_eq!(RECIP.entries()[0], 1 << 31);
        assert_eq!(RECIP.entries()[128], 1 << 30);
        assert_eq!(RECIP.size_bytes(), 516);
    }

    #[test]
    fn powers_of_two_are_exact() {
        for s in 0..32 {
            let x = 1u32 << s;
            assert_eq!(value(RECIP.recip(nz(x))), 1.0 / f64::from(x), "x = 2^{s}");
        }
    }

    /// The table's documented bound (this module's docs): max relative error ≤ 2^-14 over every
    /// 24-bit input.
    #[test]
    fn exhaustive_24_bit_error_below_2_pow_minus_14() {
        let (err, at) = max_rel_error(&RECIP, (1 << 24) - 1);
        println!("K=7: max relative error {err:.3e} at x = {at}");
        assert!(
            err <= 2f64.powi(-14),
            "max relative error {err:e} at x = {at}"
        );
        // And the bound derived in the module docs, h²/4 + quantisation.
        assert!(err <= 2f64.powi(-16) + 2f64.powi(-22), "{err:e}");
    }

    /// Mantissa segments repeat for every exponent, so large inputs behave like 24-bit ones;
    /// sample the top of the range to be sure nothing overflows there.
    #[test]
    fn top_of_u32_range() {
        for x in (u32::MAX - 100_000)..=u32::MAX {
            let got = value(RECIP.recip(nz(x)));
            let want = 1.0 / f64::from(x);
            assert!(((got - want) / want).abs() <= 2f64.powi(-16) + 2f64.powi(-22));
        }
    }

    /// Size against error for a few table sizes (reported in docs/hpcc.md; run with
    /// `cargo test -p cc-math --release size_vs_error -- --nocapture` to see the numbers).
    #[test]
    fn size_vs_error() {
        let mut rows = Vec::new();
        macro_rules! row {
            ($len:literal) => {{
                const T: RecipTable<$len> = RecipTable::new();
                let (err, _) = max_rel_error(&T, (1 << 20) - 1);
                let bound = (2f64.powi(-(RecipTable::<$len>::BITS as i32))).powi(2) / 4.0;
                println!(
                    "K={:2} entries={:4} bytes={:5} max_rel_err={:.3e} bound={:.3e}",
                    RecipTable::<$len>::BITS,
                    $len,
                    T.size_bytes(),
                    err,
                    bound
                );
                assert!(err <= bound + 2f64.powi(-22));
                rows.push(err);
            }};
        }
        row!(33);
        row!(65);
        row!(129);
        row!(257);
        // Each doubling of the table divides the error by about four.
        for w in rows.windows(2) {
            assert!(w[1] < w[0] / 3.0);
        }
    }

    #[test]
    fn division_by_table_matches_integer_division() {
        // a / x with rounding: within one unit plus the relative error.
        for &(a, x) in &[
            (1_000_000u32, 3u32),
            (u32::MAX, 7),
            (500_000, 600_000),
            (13_000, 13_000),
        ] {
            let got = RECIP.recip(nz(x)).mul_u32(a) as f64;
            let want = f64::from(a) / f64::from(x);
            assert!(
                (got - want).abs() <= 1.0 + want * 2f64.powi(-16),
                "{a}/{x}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn normalize_matches_leading_zeros() {
        for s in 0..32 {
            for x in [1u32 << s, (1u32 << s) | 1, ((1u64 << (s + 1)) - 1) as u32] {
                let (m, got) = normalize(nz(x));
                assert_eq!(got, x.leading_zeros(), "x = {x:#x}");
                assert_eq!(m, x << got);
            }
        }
    }

    /// Every 24-bit input (HPCC's Δts range): refined error ≤ 2^-29.
    #[test]
    fn refined_recip_exhaustive_24_bit() {
        let mut worst = 0.0f64;
        for x in 1u32..(1 << 24) {
            let got = value(RECIP.recip_refined(nz(x)));
            let want = 1.0 / f64::from(x);
            worst = worst.max(((got - want) / want).abs());
        }
        println!("refined reciprocal: max relative error {worst:.3e} over 1..2^24");
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
            let got = value(RECIP.recip_refined(nz(x)));
            let want = 1.0 / f64::from(x);
            assert!(((got - want) / want).abs() <= 2f64.powi(-29));
        }
    }

    /// The refinement is generic in the table size (any `K ≥ 7`, see [`newton`]).
    #[test]
    fn refined_larger_table() {
        const T: RecipTable<257> = RecipTable::new();
        for x in (1u32..(1 << 20)).step_by(7) {
            let got = value(T.recip_refined(nz(x)));
            let want = 1.0 / f64::from(x);
            assert!(((got - want) / want).abs() <= 2f64.powi(-29), "{x}");
        }
    }

    proptest! {
        #[test]
        fn normalize_any(x in 1u32..) {
            prop_assert_eq!(normalize(nz(x)), (x << x.leading_zeros(), x.leading_zeros()));
        }

        #[test]
        fn mul_scaled_tracks_true_quotient(a in any::<u32>(), x in 1u32.., bits in 0u32..=31) {
            let got = RECIP.recip(nz(x)).mul_scaled(a, bits) as f64;
            let want = f64::from(a) * 2f64.powi(bits as i32) / f64::from(x);
            prop_assert!((got - want).abs() <= 1.0 + want * (2f64.powi(-16) + 2f64.powi(-22)),
                "{a}<<{bits}/{x}: {got} vs {want}");
        }
    }
}
