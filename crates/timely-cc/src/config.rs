//! Parameters of one TIMELY instance, validated and precomputed once.
//!
//! Everything here runs when the configuration is built (it may divide: it is not on the
//! per-event path). [`Config::new`] is a `const fn`, so a firmware image can build its
//! configuration at compile time: `const CFG: Config = match Config::new(Params::DEFAULT) { .. }`.

pub use cc_math::Ratio;

/// The user-facing parameters (TIMELY §4–§6, names as in docs/timely.md; every rate in bit/s, every
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
    /// EWMA weight `α` of the newest RTT difference (Algorithm 1), in `[1/16, 1]`.
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
    /// The paper's parameters (TIMELY §6 defaults, docs/timely.md § "API"): 10 Gb/s line, min 10
    /// Mb/s, max = init = line rate, `T_low` 50 µs, `T_high` 500 µs, `minRTT` 20 µs, `α` 0.875, `β`
    /// 0.8, `δ` 10 Mb/s, HAI `N` = 5 after 5 completions; optional rules off.
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
    /// A rate parameter (`min_rate_bps`, `max_rate_bps`, `init_rate_bps`, `delta_bps`) is not
    /// within 1/8192 (1.2e-4) of a multiple of the 128 b/s rate unit — e.g. anything below
    /// 64 b/s or a `delta_bps` of 100. Every rate ≥ 524 288 b/s passes.
    RateNotRepresentable,
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
    /// `alpha` outside [`[1/16, 1]`](MIN_ALPHA_INV) or with a zero denominator.
    AlphaOutOfRange,
    /// `beta` outside `(0, 1]` or with a zero denominator.
    BetaOutOfRange,
    /// `beta / min_rtt_ns` too small to represent (the gradient constant would keep fewer than
    /// 16 significant bits).
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
/// Fractional bits of RTTs (`Q27.4` ns, resolution 1/16 ns).
pub const RTT_FRAC_BITS: u32 = 4;
/// The largest `T_high`: `2^27 − 1` ns ≈ 134.2 ms, so that a saturated RTT
/// ([`RTT_SAT_Q4`]) is always above it.
pub const MAX_RTT_NS: u32 = (1 << 27) - 1;
/// Every RTT saturates here: `2^31 − 1` in `Q27.4` ns ≈ 134.2 ms (docs/timely.md § "Conventions",
/// on both sides of the comparison); `rtt_diff` stays within `±RTT_SAT_Q4` (in `Q27.36`).
pub const RTT_SAT_Q4: u32 = (1 << 31) - 1;
/// `α` must be at least `1/MIN_ALPHA_INV` (below it the residual countdown of a run of
/// identical RTTs would not fit its `i16`).
pub const MIN_ALPHA_INV: u32 = 16;

/// A validated configuration with every constant the per-event path needs precomputed.
///
/// Fixed-point constants (all computed by [`Config::new`]):
/// * rates in units of 128 bit/s (`u32`); `δ` and `N·δ` (saturated),
/// * `T_low`, `T_high` in `Q27.4` ns,
/// * `1 − α` in `Q0.32` (exact for every `α` whose denominator is a power of two),
/// * `β·g` as `mulhu(diff_q36 >> bg_bits, bg_mul) · 2` (`Q0.32`, mantissa ≥ 2^31: ≤ 2^-31 relative)
///   and the `rtt_diff` from which `β·g ≥ 1`,
/// * the serialisation delay per byte `M = ⌊2^32·128·10^9 / line_rate⌋` (1/16 ns, `Q.32`),
/// * the residual horizon constants (see [`crate::State`], "the EWMA of identical RTTs").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Config {
    pub(crate) params: Params,
    pub(crate) min_rate_u: u32,
    pub(crate) max_rate_u: u32,
    pub(crate) init_rate_u: u32,
    pub(crate) delta_u: u32,
    /// `N·δ` (saturated): the HAI step.
    pub(crate) delta_hai_u: u32,
    pub(crate) t_low_q4: u32,
    pub(crate) t_high_q4: u32,
    /// `1 − α` in `Q0.32`, rounded (`0` for `α = 1`, ≤ `15/16·2^32`).
    pub(crate) one_minus_alpha_q32: u32,
    /// `β·T_high` (`T_high` in `Q.4`) as a mantissa `bt_norm = ⌊β·T_high·2^e⌋`, `e ≤ 31` the
    /// largest exponent that keeps it below 2^32, and `bt_shift = e + 1`: `β·T_high/rtt` in
    /// `Q29` is `mulhu(bt_norm, r) >> (bt_shift − s)` for the reciprocal `r ≈ 2^62/(rtt·2^s)`
    /// of the normalised `rtt` (`State::high`).
    pub(crate) bt_norm: u32,
    pub(crate) bt_shift: u8,
    /// `k` when `1 − α = 2^-k` (`1 ≤ k ≤ 31`; the paper's `α = 7/8` is `k = 3`): the EWMA's
    /// `(1 − α)·rtt_diff` is then a shift. 0 for any other `α` (a product, out of line).
    pub(crate) oma_shift: u32,
    /// `β` in `Q1.31` (≤ 2^31), for the `T_high` branch.
    pub(crate) beta_q31: u32,
    /// Smallest `rtt_diff` (Q4 ns) with `β·rtt_diff/minRTT ≥ 1` (capped at 2^30: unreachable).
    pub(crate) dthr_q4: u32,
    /// `β·g` in Q32 = `mulhu(rtt_diff_q36 >> bg_bits, bg_mul) << 1` for
    /// `0 ≤ rtt_diff_q36 < dthr_q4·2^32` (`1 ≤ bg_bits ≤ 31`: the shifted value is < 2^32).
    pub(crate) bg_bits: u8,
    /// `32 − bg_bits` (1..=31).
    pub(crate) bg_lshift: u8,
    pub(crate) bg_mul: u32,
    /// Serialisation delay in Q4 ns = `⌊bytes·M / 2^32⌋ = bytes·ser_m_hi + mulhu(bytes,
    /// ser_m_lo)` with `M = ⌊2^32·128·10^9 / line_rate⌋` (docs/timely.md § "Conventions").
    pub(crate) ser_m_hi: u32,
    pub(crate) ser_m_lo: u32,
    /// The smallest segment whose delay is ≥ 2^31 Q4 (134 ms, more than any span the 32-bit
    /// engine sees), or `u32::MAX` when `M < 2^32`: larger segments are capped to it there,
    /// which keeps the RTT at 0 and `bytes·ser_m_hi + mulhu(..)` below 2^32.
    pub(crate) ser_cap_bytes: u32,
    /// The HAI step from this many `g ≤ 0` completions in a row (the count + 1, compared
    /// before it saturates at 255, so ≤ 256): `hai_after`, or 256 when `N = 1`, where the
    /// "HAI" step is `δ` and reported as `inc` ([`Self::hai_branch`]).
    pub(crate) hai_from: u32,
    /// The branch the HAI step reports: `Hai`, or `Inc` when `N = 1` (HAI would equal `inc`).
    pub(crate) hai_branch: crate::TimelyBranch,
    /// The increase `rate + δ` needs no clamp and no saturation exactly when
    /// `rate − inc_lo < inc_span` (wrapping): see [`IncRange`]. Span 0 while an optional §5
    /// rule is on, so that every increase takes the general path, which applies the rule.
    pub(crate) inc: IncRange,
    /// The same for the HAI step `N·δ`.
    pub(crate) hai: IncRange,
    /// The gradient decrease takes its inline form while `rtt_diff`'s `Q.4` word is below
    /// this: `dthr_q4`, or 0 (never) while per-completion scaling is on.
    pub(crate) dec_fast_below: u32,
    /// `max − min + 1` (≥ 1, ≤ 2^32 − 1 since `min ≥ 1`): `r` needs no clamp exactly when
    /// `r − min < rate_span` (wrapping).
    pub(crate) rate_span: u32,
    /// Residual horizon: `1075 − 4 − log2 minRTT` in `Q16` (see `State::residual_events`).
    pub(crate) resid_c_q16: i32,
    /// `2^32 / log2(1/(1−α))_Q16`; 0 when `α = 1` (no residual).
    pub(crate) resid_inv_l: u32,
    /// Per-completion scaling: `8·10^9 / 128 = 62 500 000` when on (`0`: off), so that
    /// `s = bytes·scale_num / (rate_u·minRTT)` is a ratio of two exact integers.
    pub(crate) scale_num: u32,
}

/// The rates (units of 128 b/s) for which an increase by `step` lands inside `[min, max]`
/// without saturating: `rate ∈ [lo, lo + span)`, tested as one wrapping subtraction and one
/// unsigned compare, `rate.wrapping_sub(lo) < span`. Outside it (a re-seeded state outside the
/// bounds, or the increase reaching `max`) the caller saturates and clamps in full.
///
/// `lo = max(min − step, 0)` and `lo + span − 1 = max − step`: then `rate + step ≤ max` and
/// `rate + step ≥ min`. `span = 0` (the test never passes) when `step > max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct IncRange {
    pub(crate) lo: u32,
    pub(crate) span: u32,
}

impl IncRange {
    /// `1 ≤ min ≤ max`, `step ≥ 1` (both checked by `Config::new` before); `never`: the empty
    /// range (an optional rule is on).
    #[allow(clippy::arithmetic_side_effects)] // step ≥ 1: max − step + 1 − lo ≤ 2^32 − 1; lo ≤ max − step
    const fn new(min: u32, max: u32, step: u32, never: bool) -> Self {
        if never || step > max {
            return Self { lo: 0, span: 0 };
        }
        let lo = min.saturating_sub(step);
        Self {
            lo,
            span: max - step + 1 - lo,
        }
    }
}

/// `round(x / 128)` as the `u32` rate format, `None` unless within `x/8192` of it
/// (caller checked `x ≤ MAX_RATE_BPS`).
#[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // x ≤ MAX_RATE_BPS: (x+64)/128 < 2^32
const fn rate_units(x: u64) -> Option<u32> {
    let u = x.saturating_add(RATE_UNIT_BPS / 2) / RATE_UNIT_BPS;
    if u == 0 || u > u32::MAX as u64 {
        return None;
    }
    let back = u * RATE_UNIT_BPS;
    let err = back.abs_diff(x);
    if (err as u128) * 8192 > x as u128 {
        return None;
    }
    Some(u as u32)
}

/// `log2(x)` in `Q16` for `x ≥ 1` (0 for 0): integer part from the bit length, 16 fraction bits
/// by repeated squaring of the normalised mantissa, held in 32 bits as Q30 so that each
/// squaring is one 32×32→64 product (`mul` + `mulhu`) on a 32-bit core. Truncated: the result
/// is at most one Q16 unit below `floor(log2(x)·2^16)` (each squaring floors the mantissa by
/// < 2^-30, which grows to < 2^-14 relative in the last bit's mantissa: the sixteenth bit can
/// read 0 where the exact value is a hair above a multiple of 2^-16).
/// `const`, branch-light and division-free, so it also serves the per-event residual path.
#[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // x ≠ 0: int ≤ 63; the top 31 bits in a u32
pub(crate) const fn log2_q16(x: u64) -> u32 {
    if x == 0 {
        return 0;
    }
    let int = 63 - x.leading_zeros(); // 0..=63
    // Mantissa in Q30: [2^30, 2^31), the top 31 bits of x.
    log2_q16_mant(int, ((x << (63 - int)) >> 33) as u32)
}

/// [`log2_q16`] of a number whose leading 1 is bit `int` (`int < 2^16`) and whose 31 bits from
/// it down are `m` (Q30, `[2^30, 2^31)`): `int·2^16` plus 16 fraction bits by repeated squaring.
#[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // m < 2^31: m² < 2^62
pub(crate) const fn log2_q16_mant(int: u32, mut m: u32) -> u32 {
    let mut frac = 0u32;
    let mut i = 0;
    while i < 16 {
        // m² in Q30, [2^30, 2^32): fits a u32 (one `mul`, one `mulhu`, two shifts and an or).
        let sq = (((m as u64) * (m as u64)) >> 30) as u32;
        // Its top bit is the next fraction bit; renormalise by it without a branch.
        let bit = sq >> 31;
        frac = (frac << 1) | bit;
        m = sq >> bit;
        i += 1;
    }
    (int << 16) | frac
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
        // α ∈ [1/16, 1]; Q0.32, 1 stored as 2^32 − 1.
        let a = p.alpha;
        if a.den == 0 || a.num > a.den || (a.num as u64) * (MIN_ALPHA_INV as u64) < a.den as u64 {
            return Err(ConfigError::AlphaOutOfRange);
        }
        // 1 − α in Q0.32, rounded: ≤ 15/16 · 2^32 (α ≥ 1/16).
        let one_minus_alpha_q32 =
            ((((a.den - a.num) as u128) << 32) + a.den as u128 / 2) / a.den as u128;
        let b = p.beta;
        if b.den == 0 || b.num == 0 || b.num > b.den {
            return Err(ConfigError::BetaOutOfRange);
        }
        let beta_q31 = (((b.num as u64) << 31) + b.den as u64 / 2) / b.den as u64; // ≤ 2^31
        // β·T_high (Q.4) = num·T/den ≤ 2^31 · 2^32: its mantissa with the largest e ≤ 31 that
        // keeps ⌊num·T·2^e/den⌋ below 2^32 (≥ 2^31 unless e = 31).
        let (bt_norm, bt_exp) = {
            let v = b.num as u128 * ((p.t_high_ns as u128) << RTT_FRAC_BITS);
            let mut e = 0u32;
            while e < 31 && (v << (e + 1)) / (b.den as u128) < 1 << 32 {
                e += 1;
            }
            (((v << e) / b.den as u128) as u32, e)
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
        // TIMELY Alg. 1 g = rtt_diff/minRTT; β·g ≥ 1 ⇔ rtt_diff_q4 ≥ 16·minRTT·β_den/β_num =: D.
        let d_num = 16 * p.min_rtt_ns as u128 * b.den as u128;
        let d_den = b.num as u128;
        let dthr = {
            let c = d_num.div_ceil(d_den);
            if c > 1 << 31 { 1u128 << 31 } else { c }
        };
        // rtt_diff (Q4) < dthr ≤ 2^bits, so rtt_diff_q36 >> bits < 2^32 (the top of a u32);
        // multiply by 2^(31+bits)/D (floored, < 2^32 because D > dthr − 1 ≥ 2^(bits−1)).
        let bits = {
            let v = (dthr - 1) as u32;
            let l = 32 - v.leading_zeros();
            if l == 0 { 1 } else { l }
        };
        let bg_mul = {
            let m = (d_den << (31 + bits)) / d_num;
            if m > u32::MAX as u128 {
                u32::MAX
            } else {
                m as u32
            }
        };
        if bg_mul < (1 << 16) {
            return Err(ConfigError::BetaOverMinRttTooSmall);
        }
        // docs/timely.md § Conventions: M = ⌊2^32 · 128·10^9 / line_rate⌋ (serialisation per byte in
        // 1/16 ns, Q.32); M < 2^49 (line ≥ 1 Mb/s).
        let m = (128_000_000_000u128 << 32) / p.line_rate_bps as u128;
        let ser_m_hi = (m >> 32) as u32; // ≤ 128 000
        let ser_m_lo = m as u32;
        // Smallest b with ⌊b·M/2^32⌋ ≥ 2^31, i.e. b·M ≥ 2^63 (≤ 2^31 since M ≥ 2^32 here).
        let ser_cap_bytes = if ser_m_hi == 0 {
            u32::MAX
        } else {
            (1u128 << 63).div_ceil(m) as u32
        };
        // Per-completion scaling: completions per minRTT at rate R (units of 128 b/s) is
        // R·128·minRTT / (bytes·8e9); its inverse is bytes·62 500 000 / (R·minRTT), exact
        // integers on both sides (a precomputed 8e9/(128·minRTT) in Q8 lost precision as
        // minRTT grew: 6 % at 1.07 s).
        let scale_num = if p.per_completion_scaling {
            (8_000_000_000 / RATE_UNIT_BPS) as u32 // 62 500 000 < 2^26
        } else {
            0
        };
        let (min_rate_u, max_rate_u, init_rate_u, delta_u) = match (
            rate_units(p.min_rate_bps),
            rate_units(p.max_rate_bps),
            rate_units(p.init_rate_bps),
            rate_units(if p.delta_bps > MAX_RATE_BPS {
                MAX_RATE_BPS
            } else {
                p.delta_bps
            }),
        ) {
            (Some(a), Some(b), Some(c), Some(d)) => (a, b, c, d),
            _ => return Err(ConfigError::RateNotRepresentable),
        };
        let delta_hai_u = {
            let v = delta_u as u64 * p.hai_n as u64;
            if v > u32::MAX as u64 {
                u32::MAX
            } else {
                v as u32
            }
        };
        // Residual horizon (docs/timely.md): an EWMA of d·2^-4 ns has f64 gradient
        // g0 = d·2^-4/minRTT, which decays by L = log2(1/(1−α)) bits per identical sample and
        // flushes to 0 below 2^-1075: it stays non-zero for k < (log2 d + C)/L samples,
        // C = 1075 − 4 − log2(minRTT).
        let resid_c_q16 = ((1075 - 4) << 16) - log2_q16(p.min_rtt_ns as u64) as i32;
        let resid_inv_l = if a.num == a.den {
            0
        } else {
            let l = log2_q16(a.den as u64) - log2_q16((a.den - a.num) as u64); // ≥ 0.093·2^16
            if l == 0 {
                u32::MAX
            } else {
                ((1u64 << 32) / l as u64) as u32
            }
        };
        let optional = p.per_completion_scaling || p.app_limited.is_some();
        Ok(Self {
            params: p,
            min_rate_u,
            max_rate_u,
            init_rate_u,
            delta_u,
            delta_hai_u,
            t_low_q4: p.t_low_ns << RTT_FRAC_BITS,
            t_high_q4: p.t_high_ns << RTT_FRAC_BITS,
            one_minus_alpha_q32: one_minus_alpha_q32 as u32,
            bt_norm,
            bt_shift: bt_exp as u8 + 1,
            oma_shift: if one_minus_alpha_q32.is_power_of_two() && one_minus_alpha_q32 >= 2 {
                32 - one_minus_alpha_q32.trailing_zeros()
            } else {
                0
            },
            beta_q31: beta_q31 as u32,
            dthr_q4: dthr as u32,
            bg_bits: bits as u8,
            bg_lshift: (32 - bits) as u8,
            bg_mul,
            ser_m_hi,
            ser_m_lo,
            ser_cap_bytes,
            hai_from: if p.hai_n > 1 { p.hai_after } else { 256 },
            hai_branch: if p.hai_n > 1 {
                crate::TimelyBranch::Hai
            } else {
                crate::TimelyBranch::Inc
            },
            inc: IncRange::new(min_rate_u, max_rate_u, delta_u, optional),
            hai: IncRange::new(min_rate_u, max_rate_u, delta_hai_u, optional),
            dec_fast_below: if p.per_completion_scaling {
                0
            } else {
                dthr as u32
            },
            rate_span: max_rate_u - min_rate_u + 1,
            resid_c_q16,
            resid_inv_l,
            scale_num,
        })
    }

    /// The parameters this configuration was built from.
    #[must_use]
    pub const fn params(&self) -> &Params {
        &self.params
    }

    /// The paper's defaults ([`Params::DEFAULT`]), built at compile time.
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
