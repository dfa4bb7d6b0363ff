//! Parameters of the conductor: MSS, watermarks and payback multipliers, validated once and with
//! every ratio the per-decision path needs precomputed.

use crate::Prio;
use cc_math::word::mulhu;

/// A payback multiplier `M`: unsigned Q16.16 (`fixed::types::U16F16`, `M = bits / 65 536`).
///
/// * Range: `0 ..= 64.0` ([`MAX_MULTIPLIER`], checked by [`Config::new`]); resolution
///   `2^-16 ≈ 1.5e-5`.
/// * The paper's defaults 0.25 / 0.5 / 1.0 / 1.5 / 2.0 are exact (16 384 / 32 768 / 65 536 / 98 304
///   / 131 072), so `trunc(N·M)` of the paper is computed exactly: `(N·bits) >> 16` is the floor of
///   the exact real product `N·bits/65 536`, and for `N ≥ 0` floor = trunc.
/// * A value that is not a multiple of `2^-16` (e.g. 0.3) cannot be held; [`multiplier_from_ratio`]
///   rounds it to the nearest step, and the firmware then runs *that* multiplier. The host replay
///   quantises `m0…m4` the same way before handing them to both sides and says so in its summary.
pub type Multiplier = fixed::types::U16F16;

/// Largest multiplier [`Config::new`] accepts: 64.0.
pub const MAX_MULTIPLIER: Multiplier = Multiplier::from_bits(1 << 22);

/// `num / den` rounded to the nearest Q16.16 step (ties up); `None` if `den == 0` or the value
/// does not fit in 32 bits. For configuration time only (it divides).
pub const fn multiplier_from_ratio(num: u32, den: u32) -> Option<Multiplier> {
    if den == 0 {
        return None;
    }
    // round(num·2^16/den) = floor((2·num·2^16 + den) / (2·den)); all in u128, no overflow.
    let n = (num as u128) << 17;
    let d = (den as u128) << 1;
    #[allow(clippy::arithmetic_side_effects)] // d > 0; n < 2^49, + den < 2^33: no overflow
    let q = (n + den as u128) / d;
    if q > u32::MAX as u128 {
        None
    } else {
        #[allow(clippy::cast_possible_truncation)] // checked just above
        Some(Multiplier::from_bits(q as u32))
    }
}

/// Why a configuration was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ConfigError {
    /// `mss_bytes` must be in `1 ..= 65 535`.
    MssOutOfRange,
    /// `H_p` must be at most [`Config::MAX_HIGH_BYTES`] (16 MiB).
    HighTooLarge(Prio),
    /// `L_p` must be greater than 0.
    LowIsZero(Prio),
    /// `H_p > L_p` is required.
    LowNotBelowHigh(Prio),
    /// A multiplier above [`MAX_MULTIPLIER`] (64.0).
    MultiplierTooLarge(Prio),
    /// `M_total = ΣM_k` must be positive (the deadlock rule divides by it).
    MultiplierSumZero,
}

/// Validated conductor parameters, shared by every connection that uses them.
///
/// `Config::default()` is the paper's configuration (§ "Evaluation": "High Watermarks (H0..3) were
/// set to {60,30,15,6} KB, with corresponding Low Watermarks (L0..3) set to 50 % of their
/// respective High Watermarks. The Payback Multipliers (M0..4) were configured as
/// {0.25,0.5,1.0,1.5,2.0}"), with KB read as 1 000 bytes (docs/cats.md § "Semantics"), and
/// `mss_bytes` 1 460.
///
/// Everything the per-decision path needs is precomputed here (no division at run time):
/// * `m_total_q16 = Σ M_k` (Q16.16, exact);
/// * `ratio_q32[p] = floor(M_p / M_total · 2^32)`, used with one exact correction step so the
///   deadlock rule's `trunc(D·M_p/M_total)` is the exact floor of the rational `D·m_p/m_total`
///   (see [`crate::Conductor::next_chunk`]);
/// * the Eq. 1 verdict per queue.
///
/// Built in a `const` context it can be checked at compile time:
///
/// ```
/// use cats_conductor::{Config, Multiplier};
/// const CFG: Config = match Config::new(
///     1460,
///     [60_000, 30_000, 15_000, 6_000],
///     [30_000, 15_000, 7_500, 3_000],
///     [
///         Multiplier::from_bits(16_384),  // 0.25
///         Multiplier::from_bits(32_768),  // 0.5
///         Multiplier::from_bits(65_536),  // 1.0
///         Multiplier::from_bits(98_304),  // 1.5
///         Multiplier::from_bits(131_072), // 2.0
///     ],
/// ) {
///     Ok(c) => c,
///     Err(_) => panic!("invalid CATS configuration"),
/// };
/// // Refuse, at compile time, a configuration that relies on the L−1 clamp for liveness.
/// const _: () = assert!(CFG.eq1_holds());
/// assert_eq!(CFG, Config::default());
/// ```
///
/// and a configuration that breaks Eq. 1 fails the build:
///
/// ```compile_fail
/// use cats_conductor::{Config, Multiplier};
/// const CFG: Config = match Config::new(
///     1460,
///     [60_000, 30_000, 15_000, 6_000],
///     [30_000, 15_000, 7_500, 600], // L3 = 600: 1.5/5.25 = 0.286 ≥ 600/7460 = 0.080
///     [Multiplier::from_bits(16_384), Multiplier::from_bits(32_768),
///      Multiplier::ONE, Multiplier::from_bits(98_304), Multiplier::from_bits(131_072)],
/// ) {
///     Ok(c) => c,
///     Err(_) => panic!("invalid CATS configuration"),
/// };
/// const _: () = assert!(CFG.eq1_holds());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Config {
    mss_bytes: u32,
    high_bytes: [u32; 4],
    low_bytes: [u32; 4],
    mult_q16: [u32; 5],
    m_total_q16: u32,
    /// `min(floor(m_p · 2^32 / m_total), 2^32 − 1)` (the floor reaches 2^32 only when every
    /// other multiplier is 0).
    ratio_q32: [u32; 4],
    /// Bit `p` set when Eq. 1 fails for queue `p`.
    eq1_violations: u8,
}

impl Default for Config {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl Config {
    /// Largest high watermark accepted: 16 MiB (keeps every debt below 2^25, so every product in
    /// the per-decision path fits in 64 bits).
    ///
    /// cbindgen:ignore
    pub const MAX_HIGH_BYTES: u32 = 1 << 24;

    /// The paper's parameters (see the type's documentation).
    pub const DEFAULT: Config = match Config::new(
        1460,
        [60_000, 30_000, 15_000, 6_000],
        [30_000, 15_000, 7_500, 3_000],
        [
            Multiplier::from_bits(16_384),
            Multiplier::from_bits(32_768),
            Multiplier::from_bits(65_536),
            Multiplier::from_bits(98_304),
            Multiplier::from_bits(131_072),
        ],
    ) {
        Ok(c) => c,
        Err(_) => panic!("the default configuration is valid"),
    };

    /// Validates and precomputes. `high_bytes`/`low_bytes` are `H_0..H_3`/`L_0..L_3` (P4 has no
    /// watermarks); `mult` is `M_0..M_4`. Checks `0 < L_p < H_p ≤ 16 MiB`, `1 ≤ mss ≤ 65 535`,
    /// `M_p ≤ 64` and `ΣM > 0`. A configuration that breaks Eq. 1 is accepted (the L−1 clamp keeps
    /// it live); ask [`eq1_holds`](Self::eq1_holds).
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    // const fn: loops are `while p < 4` over arrays of length ≥ 4 (indices proven in range), and
    // every sum/product is bounded by the checks made before it (commented at each).
    pub const fn new(
        mss_bytes: u32,
        high_bytes: [u32; 4],
        low_bytes: [u32; 4],
        mult: [Multiplier; 5],
    ) -> Result<Self, ConfigError> {
        if mss_bytes == 0 || mss_bytes > 65_535 {
            return Err(ConfigError::MssOutOfRange);
        }
        let mut mult_q16 = [0u32; 5];
        let mut m_total: u32 = 0;
        let mut k = 0;
        while k < 5 {
            if mult[k].to_bits() > MAX_MULTIPLIER.to_bits() {
                return Err(ConfigError::MultiplierTooLarge(Prio::ALL[k]));
            }
            mult_q16[k] = mult[k].to_bits();
            m_total += mult[k].to_bits(); // ≤ 5·2^22 < 2^25
            k += 1;
        }
        if m_total == 0 {
            return Err(ConfigError::MultiplierSumZero);
        }
        let mut ratio_q32 = [0u32; 4];
        let mut eq1_violations = 0u8;
        let mut p = 0;
        while p < 4 {
            let prio = Prio::ALL[p];
            if high_bytes[p] > Self::MAX_HIGH_BYTES {
                return Err(ConfigError::HighTooLarge(prio));
            }
            if low_bytes[p] == 0 {
                return Err(ConfigError::LowIsZero(prio));
            }
            if low_bytes[p] >= high_bytes[p] {
                return Err(ConfigError::LowNotBelowHigh(prio));
            }
            // Configuration time: this is the one division the deadlock rule needs, done once.
            let r = ((mult_q16[p] as u64) << 32) / m_total as u64; // ≤ 2^32
            ratio_q32[p] = if r > u32::MAX as u64 {
                u32::MAX
            } else {
                #[allow(clippy::cast_possible_truncation)] // checked just above
                {
                    r as u32
                }
            };
            // Eq. 1: M_p/M_total < L_p/(H_p + MSS_max)  ⇔  m_p·(H_p + MSS) < L_p·m_total
            // (integers, exact; m_p ≤ 2^22, H+MSS < 2^25, L < 2^24, m_total < 2^25: < 2^50).
            let lhs = mult_q16[p] as u64 * (high_bytes[p] as u64 + mss_bytes as u64);
            let rhs = low_bytes[p] as u64 * m_total as u64;
            if lhs >= rhs {
                eq1_violations |= 1 << p;
            }
            p += 1;
        }
        Ok(Self {
            mss_bytes,
            high_bytes,
            low_bytes,
            mult_q16,
            m_total_q16: m_total,
            ratio_q32,
            eq1_violations,
        })
    }

    /// The MSS: the largest chunk, bytes.
    pub const fn mss_bytes(&self) -> u32 {
        self.mss_bytes
    }

    /// `H_p`, bytes (`None` for P4, which has no watermarks).
    #[allow(clippy::indexing_slicing)] // watermark_index() < 4 = len
    pub const fn high_bytes(&self, p: Prio) -> Option<u32> {
        match p.watermark_index() {
            Some(i) => Some(self.high_bytes[i]),
            None => None,
        }
    }

    /// `L_p`, bytes (`None` for P4).
    #[allow(clippy::indexing_slicing)] // watermark_index() < 4 = len
    pub const fn low_bytes(&self, p: Prio) -> Option<u32> {
        match p.watermark_index() {
            Some(i) => Some(self.low_bytes[i]),
            None => None,
        }
    }

    /// `M_p`.
    #[allow(clippy::indexing_slicing)] // index() ≤ 4 < 5 = len
    pub const fn multiplier(&self, p: Prio) -> Multiplier {
        Multiplier::from_bits(self.mult_q16[p.index()])
    }

    /// `M_total = Σ M_k` over all five queues.
    pub const fn m_total(&self) -> Multiplier {
        Multiplier::from_bits(self.m_total_q16)
    }

    /// Whether Eq. 1 (`M_i/M_total < L_i/(H_i + MSS)`, with `MSS_max = mss_bytes`) holds for every
    /// `i < 4`. When it does, the deadlock rule's scaling alone makes every deadlocked queue
    /// eligible and the `L−1` clamp never changes a value; when it does not, the clamp is what
    /// keeps the conductor live. Usable in `const` context.
    pub const fn eq1_holds(&self) -> bool {
        self.eq1_violations == 0
    }

    /// Bit `p` set when Eq. 1 fails for queue `p`.
    pub const fn eq1_violations(&self) -> u8 {
        self.eq1_violations
    }

    // ---- per-decision helpers (no division) ----

    #[inline(always)]
    pub(crate) fn high(&self, i: usize) -> u32 {
        self.high_bytes.get(i).copied().unwrap_or(u32::MAX)
    }

    #[inline(always)]
    pub(crate) fn low(&self, i: usize) -> u32 {
        self.low_bytes.get(i).copied().unwrap_or(0)
    }

    /// `trunc(N·M_j)` for a chunk of `n_bytes ≤ 65 535` (`n ≤ mss`): `(N·m_j) >> 16`, the exact
    /// floor of the real product, computed as the high word of `(N·2^16)·m_j` — one `mulhu` on
    /// rv32 (`N·2^16 < 2^32`; the result is `< 2^16·2^22/2^16 = 2^22`, so it fits in u32).
    #[inline(always)]
    pub(crate) fn payback(&self, j: usize, n_bytes: u32) -> u32 {
        let m = self.mult_q16.get(j).copied().unwrap_or(0);
        let n_q16 = n_bytes.wrapping_shl(Multiplier::FRAC_NBITS); // n < 2^16: exact
        mulhu(n_q16, m)
    }

    /// `trunc(D·M_p/M_total)`, exactly, in 32-bit arithmetic (rv32: one `mulhu`, two `mul`).
    ///
    /// With `r = ratio_q32[p]` (`floor(m_p·2^32/m_t)`, capped at `2^32 − 1`), `q0 = (D·r) >> 32`
    /// is the true quotient `q = floor(D·m_p/m_t)` or `q − 1`: `r` is below the exact ratio by less
    /// than one unit of 2^-32, times `D < 2^32` that is less than 1. The remainder
    /// `rem = D·m_p − q0·m_t` is then in `[0, 2·m_t)`, which is `< 2^26` (`m_t < 2^25`), so
    /// computing it modulo 2^32 with wrapping products gives it exactly; `q = q0 + (rem ≥ m_t)`.
    /// The result is `≤ D`, so it fits in u32.
    #[inline(always)]
    pub(crate) fn scale_down(&self, p: usize, debt: u32) -> u32 {
        let r = self.ratio_q32.get(p).copied().unwrap_or(0);
        let m_p = self.mult_q16.get(p).copied().unwrap_or(0);
        let q0 = mulhu(debt, r);
        let rem = debt
            .wrapping_mul(m_p)
            .wrapping_sub(q0.wrapping_mul(self.m_total_q16));
        if rem >= self.m_total_q16 {
            q0.wrapping_add(1) // q0 < q ≤ D: no wrap
        } else {
            q0
        }
    }
}
