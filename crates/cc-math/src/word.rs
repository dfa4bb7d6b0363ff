//! Word products and shifts on a 32-bit core: the building blocks every fixed-point step in the
//! algorithm crates is made of.
//!
//! On rv32 a `u32 × u32 → u64` product is one `mul` (low word) and one `mulhu` (high word); a
//! `u64 × u64` product is four of each plus carries, and a variable 64-bit shift is a branchy
//! sequence. These helpers make the 32-bit form explicit, so callers pay only for the words they
//! use.

/// `a·b >> 32`: the high word of the 64-bit product (rv32: one `mulhu`).
#[inline(always)]
#[must_use]
#[allow(clippy::cast_possible_truncation)] // (2^32 − 1)^2 < 2^64; the high word fits u32
pub const fn mulhu(a: u32, b: u32) -> u32 {
    ((a as u64).wrapping_mul(b as u64) >> 32) as u32
}

/// `a·b` as `(low word, high word)` (rv32: `mul` + `mulhu`).
#[inline(always)]
#[must_use]
#[allow(clippy::cast_possible_truncation)] // word split of an exact u64 product
pub const fn mul_wide(a: u32, b: u32) -> (u32, u32) {
    let p = (a as u64).wrapping_mul(b as u64);
    (p as u32, (p >> 32) as u32)
}

/// `a·b` as four 32-bit words, least significant first (32×32 products only; when the high word
/// of `a` is 0 two of the four products are skipped).
#[inline(always)]
#[must_use]
#[allow(clippy::cast_possible_truncation)] // word splits; column sums < 2^34
pub const fn mul_64x64(a: u64, b: u64) -> [u32; 4] {
    let (a0, a1) = (a as u32, (a >> 32) as u32);
    let (b0, b1) = (b as u32, (b >> 32) as u32);
    let (p0, c0) = mul_wide(a0, b0);
    let (l, h) = mul_wide(a0, b1);
    if a1 == 0 {
        // c0 + l < 2^33; h ≤ 2^32 − 2, so h + carry fits.
        let (p1, c1) = c0.overflowing_add(l);
        return [p0, p1, h.wrapping_add(c1 as u32), 0];
    }
    let (l2, h2) = mul_wide(a1, b0);
    let (l3, h3) = mul_wide(a1, b1);
    // Column sums (each < 2^34; the full product < 2^128, so the top word does not wrap).
    let t1 = (c0 as u64).wrapping_add(l as u64).wrapping_add(l2 as u64);
    let t2 = (t1 >> 32)
        .wrapping_add(h as u64)
        .wrapping_add(h2 as u64)
        .wrapping_add(l3 as u64);
    let p3 = h3.wrapping_add((t2 >> 32) as u32);
    [p0, t1 as u32, t2 as u32, p3]
}

/// `n·d` for `n < 2^56`, `d < 2^32` as `(n·d >> 32, n·d mod 2^32)`: two 32×32 products. The
/// first value is below `2^56 + 2^32`; for a larger `n` its top bits are lost.
#[inline(always)]
#[must_use]
#[allow(clippy::cast_possible_truncation)] // word splits
pub const fn mul_u64_u32(n: u64, d: u32) -> (u64, u32) {
    let p0 = (n as u32 as u64).wrapping_mul(d as u64);
    let p1 = (n >> 32).wrapping_mul(d as u64); // < 2^24·2^32 for n < 2^56
    (p1.wrapping_add(p0 >> 32), p0 as u32)
}

/// `(hi·2^32 + lo) >> sh` for `sh ∈ 1 ..= 31`, with 32-bit operations only (a variable 64-bit
/// shift is a branchy sequence on rv32). Bits above 2^64 of the result are dropped (callers
/// prove the result fits).
#[inline(always)]
#[must_use]
pub const fn shr64_small(hi: u32, lo: u32, sh: u32) -> u64 {
    let r_lo = (lo >> (sh & 31)) | hi.wrapping_shl(32u32.wrapping_sub(sh));
    let r_hi = hi >> (sh & 31);
    ((r_hi as u64) << 32) | r_lo as u64
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn products_are_exact(a in any::<u64>(), b in any::<u64>(), x in any::<u32>(), y in any::<u32>()) {
            let [p0, p1, p2, p3] = mul_64x64(a, b);
            let want = u128::from(a) * u128::from(b);
            let got = u128::from(p0) | u128::from(p1) << 32 | u128::from(p2) << 64 | u128::from(p3) << 96;
            prop_assert_eq!(got, want);
            let (lo, hi) = mul_wide(x, y);
            prop_assert_eq!(u64::from(lo) | u64::from(hi) << 32, u64::from(x) * u64::from(y));
            prop_assert_eq!(mulhu(x, y), hi);
        }

        #[test]
        fn u64_by_u32(n in 0u64..1 << 56, d in any::<u32>()) {
            let (hi, lo) = mul_u64_u32(n, d);
            let want = u128::from(n) * u128::from(d);
            prop_assert_eq!(u128::from(hi) << 32 | u128::from(lo), want);
        }

        #[test]
        fn shift(hi in any::<u32>(), lo in any::<u32>(), sh in 1u32..32) {
            let want = (u64::from(hi) << 32 | u64::from(lo)) >> sh;
            prop_assert_eq!(shr64_small(hi, lo, sh), want);
        }
    }
}
