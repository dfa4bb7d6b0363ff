//! Parameters of one HPCC instance (shared by its flows), validated and precomputed once.
//!
//! Everything here runs when the configuration is built (it may divide: it is not on the
//! per-ACK path). [`Config::new`] is a `const fn`, so a firmware image can build its
//! configuration at compile time: `const CFG: Config = match Config::new(Params::PAPER) { .. }`.

use cc_math::Scale;
use fixed::types::{U24F8, U32F32};

/// Smallest accepted `W_min`, bytes: the Q24.8 window then resolves `W_min` to `2^-8/16 = 2.4e-4`
/// relative (a W_min of a fraction of a byte is not representable).
pub const MIN_W_MIN_BYTES: u32 = 16;

pub use cc_math::Ratio;

/// The configuration as a user writes it. Field names are the trace `# set` keys.
///
/// `Default` is the paper's simulation setup (§5, "Parameters"): 100 Gb/s NIC, base RTT
/// `T = 13 µs`, `η = 95 %`, `maxStage = 5`, `W_AI = 80` bytes; `min_rate_bps` = 100 Mb/s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Params {
    /// NIC line rate, bit/s (`W_max = nic_rate · T`). 1 Mb/s ..= 10 Tb/s.
    pub nic_rate_bps: u64,
    /// Base RTT `T`, ns. 1 000 ..= 16 777 215 (the 24-bit INT timestamp range).
    pub base_rtt_ns: u32,
    /// Target utilisation `η`, in `(0, 1]`.
    pub eta: Ratio,
    /// AI steps before a multiplicative step (`maxStage`).
    pub max_stage: u8,
    /// Additive increase `W_AI`, bytes (`≤ W_max`).
    pub w_ai_bytes: u32,
    /// Lowest pacing rate, bit/s (`W_min = min_rate · T`), `0 < min_rate ≤ nic_rate`.
    pub min_rate_bps: u64,
}

impl Params {
    /// The paper's parameters (see the type's documentation).
    pub const PAPER: Params = Params {
        nic_rate_bps: 100_000_000_000,
        base_rtt_ns: 13_000,
        eta: Ratio { num: 95, den: 100 },
        max_stage: 5,
        w_ai_bytes: 80,
        min_rate_bps: 100_000_000,
    };
}

impl Default for Params {
    fn default() -> Self {
        Self::PAPER
    }
}

/// Why a configuration was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ConfigError {
    /// `nic_rate_bps` outside 1 Mb/s ..= 10 Tb/s.
    NicRate,
    /// `base_rtt_ns` outside 1 000 ..= 16 777 215.
    BaseRtt,
    /// `η` not in `(0, 1]` (or a zero denominator).
    Eta,
    /// `min_rate_bps` is 0 or above `nic_rate_bps`, or `W_min = min_rate·T` is below
    /// [`MIN_W_MIN_BYTES`] (16 bytes).
    MinRate,
    /// `W_max = nic_rate · T` is 16 MiB or more (the Q24.8 window range).
    WindowTooLarge,
    /// `w_ai_bytes` is above `W_max`.
    WAi,
}

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            ConfigError::NicRate => "nic_rate_bps must be in 1e6 ..= 1e13",
            ConfigError::BaseRtt => "base_rtt_ns must be in 1000 ..= 16777215",
            ConfigError::Eta => "eta must be in (0, 1]",
            ConfigError::MinRate => {
                "min_rate_bps must be > 0 and ≤ nic_rate_bps, and W_min = min_rate_bps·base_rtt_ns ≥ 16 bytes"
            }
            ConfigError::WindowTooLarge => {
                "W_max = nic_rate_bps·base_rtt_ns must stay below 16 MiB (Q24.8 window)"
            }
            ConfigError::WAi => "w_ai_bytes must not exceed W_max = nic_rate·T",
        })
    }
}

/// A validated configuration with every constant the per-ACK path needs precomputed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Config {
    pub(crate) params: Params,
    pub(crate) w_max_q8: u32,
    pub(crate) w_min_q8: u32,
    pub(crate) w_ai_q8: u32,
    /// `η` in Q1.31 (multiplies `Wc`).
    pub(crate) eta_q31: u32,
    /// `⌈η·2^32⌉`: `U ≥ η` for a Q32.32 `U` exactly when `U ≥ eta_q32` (an integer `U` is
    /// `≥ η·2^32` iff it is `≥` the ceiling).
    pub(crate) eta_q32: u64,
    /// `⌊2^64/T⌋` (the EWMA weight `τ/T` in Q0.64 is `τ` times this).
    pub(crate) inv_t64: u64,
    /// `W_q8 ↦ W·8/T` in bit/s.
    pub(crate) rate: Scale,
    /// `N ↦ N·2^32/(12.5·T)` (times `1/Δts` gives `u'` in Q32.32): `2^33/(25·T)`.
    pub(crate) u_scale: Scale,
    /// `(τ/T)·u = N/(12.5·T²)` when `τ = Δts < T`, with 64 fractional bits: `N·a_mul`, or
    /// `N·a_mul >> 32` when `a_drop` (see [`ewma_q32`](crate::ewma_q32)).
    pub(crate) a_mul: u64,
    /// `a_mul = 2^97/(25·T²)` (`T > 13 107` ns) rather than `2^65/(25·T²)`.
    pub(crate) a_drop: bool,
    /// `1/T = inv_t_mant·2^-(32 + inv_t_shift)` (`inv_t_mant ∈ [2^31, 2^32)`, `inv_t_shift ∈
    /// 9 ..= 24`): the EWMA weight `τ/T` in Q0.32 is `τ·inv_t_mant >> inv_t_shift`
    /// (fast EWMA, [`ewma_fast`](crate::ewma_fast)).
    pub(crate) inv_t_mant: u32,
    pub(crate) inv_t_shift: u32,
    /// `(τ/T)·u = N/(12.5·T²)` in Q4.28 for `N < 2^32`: `mulhu(N, a28_mant) >> a28_shift`
    /// (`a28_mant ∈ [2^31, 2^32)`); `a28_shift = u32::MAX` when `T` is too small for this form
    /// (`2^29/(25·T²) ≥ 1`, `T < 4 635` ns): the exact EWMA then runs on every ACK.
    pub(crate) a28_mant: u32,
    pub(crate) a28_shift: u32,
    /// `⌊η·2^32⌋`, at most `2^32 − 1` (`η = 1`): folds `η` into `1/U` with one `mulhu` (fast MD).
    pub(crate) eta_mul: u32,
}

/// `round(n / d)` for const evaluation (`d > 0`).
#[allow(clippy::arithmetic_side_effects)] // const: d > 0 checked by callers, n + d/2 < 2^128
const fn div_round(n: u128, d: u128) -> u128 {
    (n + d / 2) / d
}

impl Config {
    /// Validates `p` and precomputes every reciprocal (this is the only place that divides).
    ///
    /// # Errors
    /// [`ConfigError`] naming the first invalid parameter.
    #[allow(
        clippy::arithmetic_side_effects,
        clippy::cast_possible_truncation,
        clippy::indexing_slicing
    )] // bounded by the checks right above each step
    pub const fn new(p: Params) -> Result<Config, ConfigError> {
        if p.nic_rate_bps < 1_000_000 || p.nic_rate_bps > 10_000_000_000_000 {
            return Err(ConfigError::NicRate);
        }
        if p.base_rtt_ns < 1_000 || p.base_rtt_ns > 0xFF_FFFF {
            return Err(ConfigError::BaseRtt);
        }
        if p.eta.den == 0 || p.eta.num == 0 || p.eta.num > p.eta.den {
            return Err(ConfigError::Eta);
        }
        if p.min_rate_bps == 0 || p.min_rate_bps > p.nic_rate_bps {
            return Err(ConfigError::MinRate);
        }
        let t = p.base_rtt_ns as u128;
        // W = rate·T/8e9 bytes; in Q24.8: rate·T·256/8e9 = rate·T·32/1e9.
        let w_max = div_round(p.nic_rate_bps as u128 * t * 32, 1_000_000_000);
        if w_max >= 1 << 32 {
            return Err(ConfigError::WindowTooLarge);
        }
        let w_min = div_round(p.min_rate_bps as u128 * t * 32, 1_000_000_000);
        if w_min < (MIN_W_MIN_BYTES as u128) * 256 {
            return Err(ConfigError::MinRate);
        }
        let w_ai = p.w_ai_bytes as u128 * 256;
        if w_ai > w_max {
            return Err(ConfigError::WAi);
        }
        let eta_q31 = div_round((p.eta.num as u128) << 31, p.eta.den as u128) as u32;
        // Rounded up, so that the integer test `U ≥ ⌈η·2^32⌉` is exactly `U ≥ η` (η ≤ 1: fits).
        let eta_q32 = ((p.eta.num as u128) << 32).div_ceil(p.eta.den as u128) as u64;
        // ⌊2^64/T⌋ < 2^54.
        let inv_t64 = ((1u128 << 64) / t) as u64;
        // rate_bps = W_q8/256 bytes · 8 bits / (T ns · 1e-9) = W_q8 · 8e9 / (256·T)
        let Some(rate) = Scale::from_ratio(8_000_000_000, 256 * t) else {
            return Err(ConfigError::BaseRtt);
        };
        // u' = N/(12.5·T·Δts), so u'·2^32 = N · (2^33/(25·T)) / Δts.
        let Some(u_scale) = Scale::from_ratio(1 << 33, 25 * t) else {
            return Err(ConfigError::BaseRtt);
        };
        // (τ/T)·u with 64 fractional bits = N·2^65/(25·T²): that constant when it has ≥ 32
        // significant bits (T ≤ 13 107), else 2^97/(25·T²) (< 2^64) and the product's low
        // word dropped (T ≥ 1000, so 25·T² ≥ 2.5e7: neither can exceed 2^64 − 1).
        let a_small = div_round(1 << 65, 25 * t * t);
        let (a_mul, a_drop) = if a_small >= 1 << 32 {
            (a_small as u64, false)
        } else {
            (div_round(1 << 97, 25 * t * t) as u64, true)
        };
        // Fast EWMA constants: 2^32/T < 2^22; N·2^29/(25·T²) as mulhu(N, mant) >> (shift − 32).
        let Some(inv_t) = Scale::from_ratio(1, t) else {
            return Err(ConfigError::BaseRtt);
        };
        let (a28_mant, a28_shift) = match Scale::from_ratio(1 << 29, 25 * t * t) {
            Some(sc) if sc.shift >= 32 && sc.shift < 64 => (sc.mant, sc.shift - 32),
            _ => (0, u32::MAX),
        };
        let eta_full = ((p.eta.num as u128) << 32) / p.eta.den as u128;
        let eta_mul = if eta_full > u32::MAX as u128 {
            u32::MAX
        } else {
            eta_full as u32
        };
        Ok(Config {
            params: p,
            w_max_q8: w_max as u32,
            w_min_q8: w_min as u32,
            w_ai_q8: w_ai as u32,
            eta_q31,
            eta_q32,
            inv_t64,
            rate,
            u_scale,
            a_mul,
            a_drop,
            inv_t_mant: inv_t.mant,
            inv_t_shift: inv_t.shift - 32, // T ≥ 1000: shift ≥ 41
            a28_mant,
            a28_shift,
            eta_mul,
        })
    }

    /// The paper's configuration ([`Params::PAPER`]), validated at compile time.
    pub const PAPER: Config = match Config::new(Params::PAPER) {
        Ok(c) => c,
        #[allow(clippy::panic)] // compile-time only: a const evaluation failure is a build error
        Err(_) => panic!("the paper's parameters are valid"),
    };

    /// The parameters this config was built from.
    #[must_use]
    pub const fn params(&self) -> &Params {
        &self.params
    }
    /// `W_max = nic_rate · T`, bytes.
    #[must_use]
    pub const fn w_max_bytes(&self) -> U24F8 {
        U24F8::from_bits(self.w_max_q8)
    }
    /// `W_min = min_rate · T`, bytes.
    #[must_use]
    pub const fn w_min_bytes(&self) -> U24F8 {
        U24F8::from_bits(self.w_min_q8)
    }
    /// `η`, rounded up to the Q32.32 grid: a `U` satisfies `U ≥ η` exactly when `U ≥ eta()`.
    #[must_use]
    pub const fn eta(&self) -> U32F32 {
        U32F32::from_bits(self.eta_q32)
    }

    /// Pacing rate `R = W/T` for a window, bit/s.
    #[inline]
    #[must_use]
    pub fn rate_bps(&self, w_bytes: U24F8) -> u64 {
        self.rate.apply(w_bytes.to_bits())
    }
}

impl Default for Config {
    fn default() -> Self {
        Self::PAPER
    }
}
