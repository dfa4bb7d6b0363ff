//! Parameters of one TIMELY instance, validated and precomputed once.
//!
//! Everything here runs when the configuration is built (it may divide: it is not on the
//! per-event path). [`Config::new`] is a `const fn`, so a firmware image can build its
//! configuration at compile time: `const CFG: Config = match Config::new(Params::DEFAULT) { .. }`.

/// A ratio `num / den` of two integers (firmware has no floats): `alpha`, `beta`, the
/// application-limited threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Ratio {
    /// Numerator.
    pub num: u32,
    /// Denominator (must be non-zero).
    pub den: u32,
}

impl Ratio {
    /// `num / den`.
    #[must_use]
    pub const fn new(num: u32, den: u32) -> Self {
        Self { num, den }
    }

    /// `round(num · 2^bits / den)`; `None` if `den = 0` or the value exceeds `2^bits`
    /// (`bits ≤ 32`, so the product fits `u64`).
    #[allow(clippy::arithmetic_side_effects)] // const, den ≠ 0 checked; num·2^32 < 2^64
    const fn to_fixed(self, bits: u32) -> Option<u64> {
        if self.den == 0 || self.num > self.den {
            return None;
        }
        let den = self.den as u64;
        Some(((self.num as u64) << bits).saturating_add(den / 2) / den)
    }
}

/// The user-facing parameters (TIMELY §4–§6, names as in the issue; every rate in bit/s, every
/// time in ns). Build a [`Config`] from them with [`Config::new`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Params {
    /// NIC line rate, used to remove the serialisation delay from the RTT (§3). ≥ 1 Mb/s.
    pub line_rate_bps: u64,
    /// Lowest rate the controller will set.
    pub min_rate_bps: u64,
    /// Highest rate the controller will set (§5 caps it at 10 Gb/s, the line rate).
    pub max_rate_bps: u64,
    /// Rate before the first completion.
    pub init_rate_bps: u64,
    /// `T_low`: below it the rate only increases additively (§4.3).
    pub t_low_ns: u32,
    /// `T_high`: above it the rate decreases multiplicatively regardless of gradient (§4.3).
    pub t_high_ns: u32,
    /// `minRTT`, the gradient's normaliser (Algorithm 1).
    pub min_rtt_ns: u32,
    /// EWMA weight `α` of the newest RTT difference (Algorithm 1).
    pub alpha: Ratio,
    /// Multiplicative decrease factor `β` (Algorithm 1), in `(0, 1]`.
    pub beta: Ratio,
    /// Additive increase step `δ` (Algorithm 1).
    pub delta_bps: u64,
    /// `N`, the HAI multiplier (Algorithm 1: N = 5).
    pub hai_n: u32,
    /// Completions with `g ≤ 0` in a row before HAI starts (Algorithm 1: 5). ≤ 255.
    pub hai_after: u32,
    /// Optional §5 application-limited rule: increase only when the flow's sending rate is at
    /// least this fraction of the target rate (the paper uses 80 %). `None` (default): off.
    pub app_limited: Option<Ratio>,
    /// Optional §5 per-completion scaling: when several completions arrive per `minRTT`, scale
    /// every rate change by `min(1, bytes·8 / (rate·minRTT))`. Default: off.
    pub per_completion_scaling: bool,
}

impl Params {
    /// The parameters (TIMELY §6 defaults): 10 Gb/s line, min 10 Mb/s, max = init = line
    /// rate, `T_low` 50 µs, `T_high` 500 µs, `minRTT` 20 µs, `α` 0.875, `β` 0.8, `δ` 10 Mb/s,
    /// HAI `N` = 5 after 5 completions; optional rules off.
    pub const DEFAULT: Self = Self {
        line_rate_bps: 10_000_000_000,
        min_rate_bps: 10_000_000,
        max_rate_bps: 10_000_000_000,
        init_rate_bps: 10_000_000_000,
        t_low_ns: 50_000,
        t_high_ns: 500_000,
        min_rtt_ns: 20_000,
        alpha: Ratio::new(7, 8),
        beta: Ratio::new(4, 5),
        delta_bps: 10_000_000,
        hai_n: 5,
        hai_after: 5,
        app_limited: None,
        per_completion_scaling: false,
    };
}

impl Default for Params {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Why a [`Params`] set was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ConfigError {
    /// `line_rate_bps` below 1 Mb/s (the serialisation-delay constant would not fit).
    LineRateTooLow,
    /// A rate parameter is zero (`min_rate_bps`, `max_rate_bps`, `init_rate_bps` or `delta_bps`).
    ZeroRate,
    /// `min_rate_bps > max_rate_bps`.
    MinAboveMax,
    /// `init_rate_bps` outside `[min_rate_bps, max_rate_bps]`.
    InitOutOfRange,
    /// `max_rate_bps` above [`MAX_RATE_BPS`] (the rate format's top).
    RateTooHigh,
    /// `t_low_ns > t_high_ns`.
    TLowAboveTHigh,
    /// `t_high_ns` above [`MAX_RTT_NS`] (the RTT format's top) or zero.
    THighOutOfRange,
    /// `min_rtt_ns` is zero.
    ZeroMinRtt,
    /// `alpha` outside `[0, 1]` or with a zero denominator.
    AlphaOutOfRange,
    /// `beta` outside `(0, 1]` or with a zero denominator.
    BetaOutOfRange,
    /// `beta / min_rtt_ns` too small to represent (below `2^-40` per ns).
    BetaOverMinRttTooSmall,
    /// `hai_n` is zero.
    ZeroHaiN,
    /// `hai_after` above 255 (the counter is a `u8`).
    HaiAfterTooLarge,
    /// The application-limited ratio is outside `(0, 1]` or has a zero denominator.
    AppLimitedOutOfRange,
}

/// Unit of the rate format: one step is 128 bit/s (see [`crate::State`]).
pub const RATE_UNIT_BPS: u64 = 128;
/// The largest rate the `u32` rate format holds: `(2^32 − 1) · 128` ≈ 549.7 Gb/s.
pub const MAX_RATE_BPS: u64 = (u32::MAX as u64) * RATE_UNIT_BPS;
/// Fractional bits of RTTs (`Q28.4` ns, resolution 1/16 ns).
pub const RTT_FRAC_BITS: u32 = 4;
/// Fractional bits of the RTT-difference EWMA (`Q24.7` ns, resolution 1/128 ns).
pub const DIFF_FRAC_BITS: u32 = 7;
/// The largest RTT the stored `Q28.4` format holds: `2^28 − 1/16` ns ≈ 268 ms.
pub const MAX_RTT_NS: u32 = (1 << 28) - 1;

/// A validated configuration with every constant the per-event path needs precomputed.
///
/// Fixed-point constants (all computed by [`Config::new`]):
/// * rates in units of 128 bit/s (`u32`),
/// * `T_low`, `T_high` in `Q28.4` ns (kept in `u64` for comparisons with the unsaturated RTT),
/// * `α` in `Q0.16` (exact for 0.875), `β` in `Q2.30`,
/// * `β/minRTT` as a normalised mantissa and shift (relative error ≤ 2^-31),
/// * the serialisation delay per byte as a normalised mantissa and shift (relative error ≤ 2^-31).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Config {
    pub(crate) params: Params,
    pub(crate) min_rate_u: u32,
    pub(crate) max_rate_u: u32,
    pub(crate) init_rate_u: u32,
    pub(crate) delta_u: u32,
    pub(crate) t_low_q4: u64,
    pub(crate) t_high_q4: u32,
    pub(crate) alpha_q16: u32,
    pub(crate) beta_q30: u32,
    /// `β / (minRTT · 2^7)` · 2^(30 + beta_g_shift): `β·g` in Q30 = `diff_q7 · beta_g_mul >> beta_g_shift`.
    pub(crate) beta_g_mul: u32,
    pub(crate) beta_g_shift: u32,
    /// Serialisation delay in Q4 ns = `bytes · ser_mul >> ser_shift`.
    pub(crate) ser_mul: u32,
    pub(crate) ser_shift: u32,
    pub(crate) hai_n: u32,
    pub(crate) hai_after: u8,
    /// Per-completion scaling: `bytes · 8e9 / (128 · minRTT)` in Q8 (`0`: off).
    pub(crate) scale_mul_q8: u64,
}

/// `round(x / 128)`, as the `u32` rate format (caller checked `x ≤ MAX_RATE_BPS`).
#[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // x ≤ MAX_RATE_BPS: (x+64)/128 < 2^32
const fn rate_units(x: u64) -> u32 {
    let u = x.saturating_add(RATE_UNIT_BPS / 2) / RATE_UNIT_BPS;
    if u > u32::MAX as u64 {
        u32::MAX
    } else {
        u as u32
    }
}

/// Normalises `num · 2^extra / den` to a mantissa in `[2^31, 2^32)` and a shift, so that the
/// value equals `mant · 2^-shift` within 2^-31 relative. `shift` is capped at `max_shift` (the
/// mantissa is then smaller). `None` if the value is zero at the cap.
#[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // const; den ≠ 0; all in u128
const fn normalise(num: u128, den: u128, extra: u32, max_shift: u32) -> Option<(u32, u32)> {
    let mut shift = max_shift;
    loop {
        // mant = round(num · 2^(extra + shift) / den)
        let total = extra + shift;
        let m = if total >= 100 {
            return None;
        } else {
            ((num << total) + den / 2) / den
        };
        if m < (1u128 << 32) {
            if m == 0 {
                return None;
            }
            return Some((m as u32, shift));
        }
        if shift == 0 {
            return None;
        }
        shift -= 1;
    }
}

impl Config {
    /// Validates `p` and precomputes the per-event constants. `const`: usable at compile time.
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // const; every step range-checked above it
    pub const fn new(p: Params) -> Result<Self, ConfigError> {
        if p.line_rate_bps < 1_000_000 {
            return Err(ConfigError::LineRateTooLow);
        }
        if p.min_rate_bps == 0 || p.max_rate_bps == 0 || p.init_rate_bps == 0 || p.delta_bps == 0 {
            return Err(ConfigError::ZeroRate);
        }
        if p.min_rate_bps > p.max_rate_bps {
            return Err(ConfigError::MinAboveMax);
        }
        if p.max_rate_bps > MAX_RATE_BPS {
            return Err(ConfigError::RateTooHigh);
        }
        if p.init_rate_bps < p.min_rate_bps || p.init_rate_bps > p.max_rate_bps {
            return Err(ConfigError::InitOutOfRange);
        }
        if p.t_high_ns == 0 || p.t_high_ns > MAX_RTT_NS {
            return Err(ConfigError::THighOutOfRange);
        }
        if p.t_low_ns > p.t_high_ns {
            return Err(ConfigError::TLowAboveTHigh);
        }
        if p.min_rtt_ns == 0 {
            return Err(ConfigError::ZeroMinRtt);
        }
        let alpha_q16 = match p.alpha.to_fixed(16) {
            Some(a) => a as u32,
            None => return Err(ConfigError::AlphaOutOfRange),
        };
        let beta_q30 = match p.beta.to_fixed(30) {
            Some(b) if b > 0 => b as u32,
            _ => return Err(ConfigError::BetaOutOfRange),
        };
        if p.hai_n == 0 {
            return Err(ConfigError::ZeroHaiN);
        }
        if p.hai_after > 255 {
            return Err(ConfigError::HaiAfterTooLarge);
        }
        if let Some(r) = p.app_limited
            && (r.den == 0 || r.num == 0 || r.num > r.den)
        {
            return Err(ConfigError::AppLimitedOutOfRange);
        }
        // β·g in Q30 = diff_q7 · β / (minRTT · 2^7) · 2^30 = diff_q7 · [β·2^23/minRTT]:
        // mantissa = round(β_num · 2^(23 + shift) / (β_den · minRTT)).
        let (beta_g_mul, beta_g_shift) = match normalise(
            p.beta.num as u128,
            p.beta.den as u128 * p.min_rtt_ns as u128,
            23,
            62,
        ) {
            Some(x) => x,
            None => return Err(ConfigError::BetaOverMinRttTooSmall),
        };
        if beta_g_mul < (1 << 16) {
            return Err(ConfigError::BetaOverMinRttTooSmall);
        }
        // Serialisation delay per byte in Q4 ns: 8e9 · 2^4 / line_rate.
        let (ser_mul, ser_shift) =
            match normalise(8_000_000_000u128 << 4, p.line_rate_bps as u128, 0, 40) {
                Some(x) => x,
                None => return Err(ConfigError::LineRateTooLow),
            };
        // Per-completion scaling: completions per minRTT at rate R (units of 128 b/s) is
        // R·128·minRTT / (bytes·8e9); its inverse is bytes · [8e9 / (128·minRTT)] / R.
        let scale_mul_q8 = if p.per_completion_scaling {
            ((8_000_000_000u128 << 8) / (128 * p.min_rtt_ns as u128)) as u64
        } else {
            0
        };
        if rate_units(p.min_rate_bps) == 0 || rate_units(p.delta_bps) == 0 {
            // Below half a rate unit (64 b/s): would round to zero.
            return Err(ConfigError::ZeroRate);
        }
        Ok(Self {
            params: p,
            min_rate_u: rate_units(p.min_rate_bps),
            max_rate_u: rate_units(p.max_rate_bps),
            init_rate_u: rate_units(p.init_rate_bps),
            delta_u: rate_units(if p.delta_bps > MAX_RATE_BPS {
                MAX_RATE_BPS
            } else {
                p.delta_bps
            }),
            t_low_q4: (p.t_low_ns as u64) << RTT_FRAC_BITS,
            t_high_q4: p.t_high_ns << RTT_FRAC_BITS,
            alpha_q16,
            beta_q30,
            beta_g_mul,
            beta_g_shift,
            ser_mul,
            ser_shift,
            hai_n: p.hai_n,
            hai_after: p.hai_after as u8,
            scale_mul_q8,
        })
    }

    /// The parameters this configuration was built from.
    #[must_use]
    pub const fn params(&self) -> &Params {
        &self.params
    }

    /// The defaults ([`Params::DEFAULT`]), built at compile time.
    #[allow(clippy::panic)] // const evaluation: a failure is a compile error, never a run-time panic
    pub const DEFAULT: Self = match Self::new(Params::DEFAULT) {
        Ok(c) => c,
        Err(_) => panic!("the default parameters are valid"),
    };
}

impl Default for Config {
    fn default() -> Self {
        Self::DEFAULT
    }
}
