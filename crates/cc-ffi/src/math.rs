//! cc-math through the C ABI: the division-free reciprocal.

use core::num::NonZeroU32;

use crate::{CcStatus, block};

/// `1/x = mant_q31 · 2^-shift` (see `cc_math::Recip`): `mant_q31 ∈ (2^30, 2^31]` is `1/m` in
/// Q1.31 for the normalised mantissa `m ∈ [1, 2)`; `shift ∈ [31, 62]`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcRecip {
    /// Mantissa of the reciprocal, Q1.31.
    pub mant_q31: u32,
    /// Right shift: `1/x = mant_q31 / 2^shift`.
    pub shift: u32,
}

/// `round(a · 2^16 / x)` without dividing (table reciprocal; relative error < 2^-14 plus
/// rounding). `x = 0` returns `UINT64_MAX` ("infinite"): check `x` first if that matters.
/// 67 rv32imac instructions, part of them emulating `clz` (rv32imac has no Zbb); 46 built with
/// `+zbb` (the native `clz`); see docs/performance.md.
#[unsafe(no_mangle)]
pub extern "C" fn cc_recip_q16(x: u32, a: u32) -> u64 {
    match NonZeroU32::new(x) {
        Some(x) => cc_math::RECIP.recip(x).mul_scaled(a, 16),
        None => u64::MAX,
    }
}

/// The reciprocal of `x`, for callers who divide many numbers by the same `x`: compute it once,
/// then use [`cc_recip_mul_scaled`]. Returns `CC_STATUS_ZERO_DIVISOR` (and leaves `*out`
/// untouched) for `x = 0`.
///
/// # Safety
/// `out` is non-null, aligned and valid for writes (undefined behaviour otherwise; checked in
/// debug builds only).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_recip(x: u32, out: *mut CcRecip) -> CcStatus {
    let Some(x) = NonZeroU32::new(x) else {
        return CcStatus::ZeroDivisor;
    };
    let r = cc_math::RECIP.recip(x);
    // SAFETY: caller contract on `out`.
    unsafe {
        block::out(
            out,
            CcRecip {
                mant_q31: r.mant_q31,
                shift: r.shift,
            },
        );
    }
    CcStatus::Ok
}

/// `round(a · 2^frac_bits / x)` from a reciprocal made by [`cc_recip`] (`frac_bits ≤ 31`;
/// larger values act as 31). A `CcRecip` not made by `cc_recip` gives an unspecified (but
/// defined, non-trapping) result: the shift is clamped to the valid range.
#[unsafe(no_mangle)]
pub extern "C" fn cc_recip_mul_scaled(r: CcRecip, a: u32, frac_bits: u32) -> u64 {
    let shift = r.shift.clamp(31, 62);
    cc_math::Recip {
        mant_q31: r.mant_q31,
        shift,
    }
    .mul_scaled(a, frac_bits)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn q16_matches_cc_math_and_saturates_at_zero() {
        // 1_000_000 / 12_345 = 81.0045… → ·2^16 = 5_308_712.6 (table error ≤ 1.5e-5 relative)
        let got = cc_recip_q16(12_345, 1_000_000);
        let want = 1_000_000f64 * 65_536.0 / 12_345.0;
        assert!(
            (got as f64 - want).abs() <= 1.0 + want * 1.6e-5,
            "{got} vs {want}"
        );
        assert_eq!(cc_recip_q16(0, 5), u64::MAX);
    }

    #[test]
    fn recip_then_mul_equals_one_shot() {
        let mut r = CcRecip {
            mant_q31: 0,
            shift: 0,
        };
        // SAFETY: `r` is a live local.
        assert_eq!(unsafe { cc_recip(600, &mut r) }, CcStatus::Ok);
        assert_eq!(cc_recip_mul_scaled(r, 500, 16), cc_recip_q16(600, 500));
        // SAFETY: as above.
        assert_eq!(unsafe { cc_recip(0, &mut r) }, CcStatus::ZeroDivisor);
        // A forged shift is clamped, not a shift overflow.
        let _ = cc_recip_mul_scaled(
            CcRecip {
                mant_q31: 1 << 31,
                shift: 99,
            },
            7,
            16,
        );
    }
}
