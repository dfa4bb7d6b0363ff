//! TIMELY (Mittal et al., SIGCOMM 2015) RTT-gradient rate control in fixed point, for NIC
//! firmware: `no_std`, no allocation, no floats, no panics and no division per event.
//!
//! One [`State`] per flow (24 bytes), one shared [`Config`] (validated and precomputed once, can
//! be built at compile time), one call per completion: [`State::on_completion`] returns the new
//! rate and the [`TimelyBranch`] of Algorithm 1 that was taken.
//!
//! ```
//! use timely_cc::{TimelyBranch, Completion, Config, State, U28F4};
//! let cfg = Config::DEFAULT;
//! let mut st = State::new(&cfg);
//! // First valid sample: remembered, rate unchanged.
//! let u = st.on_completion(&cfg, &Completion::new(0, 101_200, 1_500));
//! assert_eq!(u.branch, TimelyBranch::Init);
//! // 601.2 µs after sending 1500 B at 10 Gb/s: the RTT engine removes ⌊1500·M/2^32⌋ =
//! // 19 199 sixteenths of a ns of serialisation (M = ⌊2^32·12.8⌋), so the RTT is
//! // 600 000 ns + 1/16 ns: above T_high, rate·(1 − 0.8·(1 − 500/600)) = 0.8667 · 10 Gb/s.
//! let u = st.on_completion(&cfg, &Completion::new(0, 601_200, 1_500));
//! assert_eq!(u.rtt_ns, U28F4::from_bits(600_000 * 16 + 1)); // 600 000 + 1/16 ns
//! assert_eq!(u.rtt_ns.to_num::<f64>(), 600_000.0625);
//! assert_eq!(u.branch, TimelyBranch::High);
//! assert!((u.rate_bps as i64 - 8_666_666_667).abs() < 1_000, "{}", u.rate_bps);
//! ```
//!
//! # Conventions (the f64 reference in `sim-host` follows the same)
//! * RTT engine (§3), one exact integer convention for both sides (docs/timely.md § "Conventions"):
//!   with `M = ⌊2^32·128·10^9 / line_rate_bps⌋` (computed once in [`Config`]), `rtt_q4 =
//!   clamp(16·(t_complete − t_send) − ⌊bytes·M / 2^32⌋, 0, 2^31 − 1)`: the RTT in 1/16 ns,
//!   serialisation removed, saturating at ≈ 134.2 ms. An event with `t_complete < t_send` is
//!   rejected: no state change, [`TimelyBranch::Skip`].
//! * First valid sample: `prev_rtt = rtt`, `rtt_diff = 0`, rate unchanged ([`TimelyBranch::Init`]).
//! * Then Algorithm 1 with the HAI counter, then clamp to `[min_rate, max_rate]`.
//!
//! # Number formats
//! The table at the end of this page (the crate's `docs/formats.md`, which the repository's
//! docs/timely.md links to).
//!
//! The EWMA keeps 64 bits below the RTT's resolution. Its sign picks `inc`/`hai` or `dec`, and
//! with `Q.4` inputs and a dyadic `α` (7/8) the EWMA often cancels exactly but for the tail of
//! older differences (e.g. `−16 ns`, one identical sample, then `+0.25 ns`: `−1.75·1/8 + 0.21875
//! = 0` plus a tail of 10^-12 ns). The f64 reference keeps such tails to 2^-53 of the terms;
//! 64 fraction bits keep them too, where 32 bits lose them (docs/timely.md measures both).
//!
//! # The EWMA of identical RTTs
//! During a run of equal RTTs, `rtt_diff` decays by `(1 − α)` per event. Real arithmetic keeps
//! a vanishing positive (or negative) gradient for ever; the f64 reference keeps it until `g`
//! underflows below 2^-1075 (≈ 360 events at the defaults), then takes the increase branches.
//! Here, at the first identical sample a residual countdown is set to the number of identical
//! samples the f64 gradient needs to underflow from the current magnitude (computed from α and
//! minRTT in [`Config`]); `rtt_diff` keeps decaying and steering the rate, and once it reaches
//! 0 (or stalls at −2^-68 ns) only the countdown's sign remains, with no effect on the rate.
//! docs/timely.md measures the agreement.
#![doc = "\n"]
#![doc = include_str!("../docs/formats.md")]
#![no_std]
#![forbid(unsafe_code)]
#![deny(
    clippy::float_arithmetic,
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::unwrap_used,
    clippy::cast_possible_truncation
)]

mod config;

pub use config::{
    Config, ConfigError, MAX_RATE_BPS, MAX_RTT_NS, MIN_ALPHA_INV, Params, RATE_UNIT_BPS,
    RTT_FRAC_BITS, RTT_SAT_Q4, Ratio,
};
/// The fixed-point formats at this crate's boundary: an RTT in ns as `U28F4` (`FixedU32<U4>`,
/// 1/16 ns), the RTT-difference EWMA in ns as `I60F68` (`FixedI128<U68>`, 96 significant bits).
pub use fixed::types::{I60F68, U28F4};

/// The largest RTT (`2^27 − 1/16` ns ≈ 134.2 ms, bits [`RTT_SAT_Q4`]): every longer one
/// saturates here.
pub const RTT_MAX: U28F4 = U28F4::from_bits(RTT_SAT_Q4);

use cc_math::word::mulhu;
use core::num::NonZeroU32;

/// One completion event (§3): a segment sent at `t_send_ns`, acknowledged at `t_complete_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Completion {
    /// When the segment was sent (NIC clock, ns).
    pub t_send_ns: u64,
    /// When its completion arrived (same clock, ns).
    pub t_complete_ns: u64,
    /// Segment size; its serialisation delay at the line rate is removed from the RTT.
    pub bytes: u32,
    /// The flow's measured sending rate, for the optional application-limited rule (§5);
    /// `None`: unknown, treated as not application-limited.
    pub sending_rate_bps: Option<u64>,
}

impl Completion {
    /// A completion without a sending-rate measurement.
    #[must_use]
    pub const fn new(t_send_ns: u64, t_complete_ns: u64, bytes: u32) -> Self {
        Self {
            t_send_ns,
            t_complete_ns,
            bytes,
            sending_rate_bps: None,
        }
    }
}

/// The branch of TIMELY's Algorithm 1 an event took.
///
/// The one definition of the branch codes: the discriminants are the C ABI's values (cc-ffi
/// returns this type, cbindgen writes it into the header as `CcTimelyBranch`), and fw-bench and
/// the host read codes back with `from_code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum TimelyBranch {
    /// Rejected (`t_complete < t_send`): nothing changed.
    Skip = 0,
    /// First valid sample: remembered, rate unchanged.
    Init = 1,
    /// `rtt < T_low`: `rate += δ`.
    Low = 2,
    /// `rtt > T_high`: `rate ← rate·(1 − β·(1 − T_high/rtt))`.
    High = 3,
    /// `g ≤ 0` after `hai_after` such events in a row: `rate += N·δ`.
    Hai = 4,
    /// `g ≤ 0`: `rate += δ`.
    Inc = 5,
    /// `g > 0`: `rate ← rate·(1 − β·g)`.
    Dec = 6,
}

impl TimelyBranch {
    /// Every branch, in code order.
    pub const ALL: [TimelyBranch; 7] = [
        TimelyBranch::Skip,
        TimelyBranch::Init,
        TimelyBranch::Low,
        TimelyBranch::High,
        TimelyBranch::Hai,
        TimelyBranch::Inc,
        TimelyBranch::Dec,
    ];

    /// The branch with C ABI code `code` (its discriminant), `None` for any other value.
    #[must_use]
    pub const fn from_code(code: u8) -> Option<TimelyBranch> {
        match code {
            0 => Some(TimelyBranch::Skip),
            1 => Some(TimelyBranch::Init),
            2 => Some(TimelyBranch::Low),
            3 => Some(TimelyBranch::High),
            4 => Some(TimelyBranch::Hai),
            5 => Some(TimelyBranch::Inc),
            6 => Some(TimelyBranch::Dec),
            _ => None,
        }
    }

    /// The branch's name as in traces and reports (`skip`, `init`, `low`, …).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            TimelyBranch::Skip => "skip",
            TimelyBranch::Init => "init",
            TimelyBranch::Low => "low",
            TimelyBranch::High => "high",
            TimelyBranch::Hai => "hai",
            TimelyBranch::Inc => "inc",
            TimelyBranch::Dec => "dec",
        }
    }
}

/// What one event did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Update {
    /// The rate after the event, bit/s (a multiple of 128).
    pub rate_bps: u64,
    /// The branch taken.
    pub branch: TimelyBranch,
    /// The measured RTT, ns (`U28F4`: serialisation removed, clamped to `[0, RTT_MAX]`; 0 for
    /// `Skip`).
    pub rtt_ns: U28F4,
    /// An increase was suppressed by the application-limited rule.
    pub app_limited: bool,
}

// `fixed` has no defmt support: its values are formatted as raw bits (`Q27.4`, `Q59.68`).
#[cfg(feature = "defmt")]
impl defmt::Format for Update {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "Update {{ rate_bps: {}, branch: {}, rtt_q4: {}, app_limited: {} }}",
            self.rate_bps,
            self.branch,
            self.rtt_ns.to_bits(),
            self.app_limited
        );
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for RawParts {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "RawParts {{ rate_u128bps: {}, prev_rtt_q4: {}, rtt_diff_q68: {}, residual: {}, hai_count: {}, started: {} }}",
            self.rate_u128bps,
            self.prev_rtt_ns.to_bits(),
            self.rtt_diff_ns.to_bits(),
            self.residual,
            self.hai_count,
            self.started
        );
    }
}

/// Per-flow TIMELY state: 24 bytes, 4-byte aligned (`size_of` asserted in the tests).
///
/// The residual counter (`i16`) is non-zero only during a run of identical RTTs: its sign is
/// the EWMA's sign, its magnitude the number of further identical samples for which an f64
/// implementation still sees a non-zero gradient (module docs, "The EWMA of identical RTTs").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct State {
    rate_u: u32,
    /// The previous RTT (`Q27.4` ns, ≤ [`RTT_SAT_Q4`] < 2^31), with [`NOT_STARTED`] (bit 31) set
    /// before the first valid sample: the per-event path tests "started" with the sign of the
    /// word it loads anyway.
    prev_rtt_q4: u32,
    /// `rtt_diff` in `Q27.68` ns, 96 bits as three words: the `Q.4` word (floored) and 64
    /// fraction bits below it.
    diff_hi: i32,
    diff_mid: u32,
    diff_lo: u32,
    resid: i16,
    hai_count: u8,
}

/// The raw parts of a [`State`], for saving, restoring or re-seeding it (e.g. the host's forced
/// mode). Formats as in the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RawParts {
    /// Rate in units of 128 b/s (not clamped here: the next event clamps it).
    pub rate_u128bps: u32,
    /// Previous RTT, ns (`U28F4`); clamped to [`RTT_MAX`].
    pub prev_rtt_ns: U28F4,
    /// EWMA of RTT differences, ns (`I60F68`, 96 significant bits: `Q27.68`); clamped to
    /// `±RTT_MAX`.
    pub rtt_diff_ns: I60F68,
    /// Residual countdown (sign of a flushed-out EWMA and the identical samples it has left).
    pub residual: i16,
    /// Completions with `g ≤ 0` in a row (saturating at 255).
    pub hai_count: u8,
    /// Whether the first valid sample has been seen.
    pub started: bool,
}

/// What one event did, in one `u64` (two registers on a 32-bit core): the branch's code in bits
/// 0–7, 1 in bit 8 when the application-limited rule suppressed an increase, the rate in units of
/// 128 b/s in bits 32–63 (the other bits 0). The result of the firmware entry points
/// [`State::on_completion_rate`] and [`State::on_rtt_rate`] and, as it is, of the C ABI's
/// `cc_timely_on_completion_rv` and `cc_timely_on_rtt` (the header's `CcTimelyResult`).
/// A single scalar, not a struct: every out-of-line part returns it and the entry points pass it
/// on unchanged, so they reach those parts by tail calls. [`Update`] adds the RTT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(transparent)]
pub struct TimelyOutcome(u64);

impl TimelyOutcome {
    #[inline(always)]
    const fn new(branch: TimelyBranch, rate_u128bps: u32) -> Self {
        Self(branch as u64 | (rate_u128bps as u64) << OUTCOME_RATE_SHIFT)
    }

    #[inline(always)]
    const fn limited(branch: TimelyBranch, rate_u128bps: u32) -> Self {
        Self(branch as u64 | OUTCOME_APP_LIMITED | (rate_u128bps as u64) << OUTCOME_RATE_SHIFT)
    }

    /// The packed word (layout in the type's docs).
    #[must_use]
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// The branch taken.
    #[must_use]
    #[allow(clippy::cast_possible_truncation)] // the low byte
    pub const fn branch(self) -> TimelyBranch {
        match TimelyBranch::from_code(self.0 as u8) {
            Some(b) => b,
            None => TimelyBranch::Skip, // never: only `new` and `limited` make one
        }
    }

    /// Whether the application-limited rule suppressed an increase.
    #[must_use]
    pub const fn app_limited(self) -> bool {
        self.0 & OUTCOME_APP_LIMITED != 0
    }

    /// The rate after the event in units of 128 bit/s.
    #[must_use]
    #[allow(clippy::cast_possible_truncation)] // the high word
    pub const fn rate_u128bps(self) -> u32 {
        (self.0 >> OUTCOME_RATE_SHIFT) as u32
    }

    /// The rate after the event, bit/s.
    #[must_use]
    #[allow(clippy::arithmetic_side_effects)] // u32 · 128 < 2^39
    pub const fn rate_bps(self) -> u64 {
        self.rate_u128bps() as u64 * RATE_UNIT_BPS
    }

    /// The [`Update`] of this outcome for an RTT of `rtt_q4` (1/16 ns).
    #[inline(always)]
    const fn update(self, rtt_q4: u32) -> Update {
        Update {
            rate_bps: self.rate_bps(),
            branch: self.branch(),
            rtt_ns: U28F4::from_bits(rtt_q4),
            app_limited: self.app_limited(),
        }
    }
}

/// [`TimelyOutcome`]'s bits: the branch code (mask).
pub const OUTCOME_BRANCH_MASK: u64 = 0xff;
/// [`TimelyOutcome`]'s bits: set when the application-limited rule suppressed an increase.
pub const OUTCOME_APP_LIMITED: u64 = 1 << 8;
/// [`TimelyOutcome`]'s bits: the rate (units of 128 b/s) is the word above this shift.
pub const OUTCOME_RATE_SHIFT: u32 = 32;

/// The crate's name for [`TimelyOutcome`] (the C header calls it `CcTimelyResult`).
pub type Outcome = TimelyOutcome;

/// A sending rate for the per-event path: unknown is `u64::MAX`, which the
/// application-limited rule never limits (as it does not limit an unknown rate), so that the
/// out-of-line parts take it in two registers.
#[inline(always)]
const fn sending(sending_rate_bps: Option<u64>) -> u64 {
    match sending_rate_bps {
        Some(s) => s,
        None => u64::MAX,
    }
}

/// `prev_rtt_q4`'s marker of a flow before its first valid sample (no RTT reaches bit 31).
const NOT_STARTED: u32 = 1 << 31;
/// RTT spans below this (ns) take the 32-bit RTT engine: `dt·16 < 2^31`, inside the format.
const FAST_DT_NS: u32 = 1 << 27;
/// `|rtt_diff|` never exceeds the RTT's range: `RTT_SAT_Q4` in `Q27.68`.
const DIFF_MAX_Q68: i128 = (RTT_SAT_Q4 as i128) << 64;

/// TIMELY Alg. 1's final clamp of the rate to `[min_rate, max_rate]` (`min ≤ max` by construction).
#[inline(always)]
const fn clamp(cfg: &Config, r: u32) -> u32 {
    if r > cfg.max_rate_u {
        cfg.max_rate_u
    } else if r < cfg.min_rate_u {
        cfg.min_rate_u
    } else {
        r
    }
}

/// `round(rate·cut / 2^32)` subtracted from `rate` (`cut < 2^32`, so the result is ≥ 0): the
/// product's high word plus its low word's top bit (`(p + 2^31) >> 32` without the 64-bit add;
/// `cut_rate_rounds_the_product_to_nearest`).
#[inline(always)]
#[allow(clippy::arithmetic_side_effects)] // round(rate·cut/2^32) ≤ rate
const fn cut_rate(rate: u32, cut_q32: u32) -> u32 {
    rate - mulhu(rate, cut_q32) - (rate.wrapping_mul(cut_q32) >> 31)
}

/// `β·g` in `Q32`, `g = rtt_diff/minRTT`, for `rtt_diff ≥ 0` given by its top 64 bits `d`
/// (`Q27.36` ns): `mulhu(d >> bg_bits, bg_mul)·2` (the 32 bits of `d` below its leading bit,
/// ≤ 2^-31 relative), at least 2^32 (β·g ≥ 1) from `rtt_diff ≥ dthr` on, which compares the
/// `Q.4` word exactly. The fast form in [`State::dec`] is this for `d < dthr·2^32`
/// (`gradient_cut_fast_form_equals_the_general_one`).
#[allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)] // d ≥ 0; < 2^63 · 2^32 in u128, then below 2^62
fn beta_g_q32(cfg: &Config, d: i64) -> u64 {
    let x = (d >> (u32::from(cfg.bg_bits) & 31)) as u64;
    let bg = ((u128::from(x) * u128::from(cfg.bg_mul)) >> 32) << 1;
    if (d >> 32) >= i64::from(cfg.dthr_q4) && bg < 1 << 32 {
        1 << 32
    } else if bg > 1 << 62 {
        // Any cut from 2^32 on takes the rate to 0, scaled (s ≥ 2^-30) or not: so does this.
        1 << 62
    } else {
        bg as u64
    }
}

impl State {
    /// A flow at `init_rate`, before its first completion.
    #[must_use]
    pub const fn new(cfg: &Config) -> Self {
        Self {
            rate_u: cfg.init_rate_u,
            prev_rtt_q4: NOT_STARTED,
            diff_hi: 0,
            diff_mid: 0,
            diff_lo: 0,
            resid: 0,
            hai_count: 0,
        }
    }

    /// A state from its raw parts; `prev_rtt_ns` and `rtt_diff_ns` are clamped to their
    /// ranges (the per-event arithmetic relies on them); the rate is not clamped: the next event
    /// clamps it. A residual whose sign differs from a non-zero `rtt_diff`'s is dropped (0: the
    /// next identical sample starts the countdown from `rtt_diff`): the algorithm itself only
    /// sets a residual with `rtt_diff`'s sign, and the decay step relies on that.
    #[must_use]
    #[allow(clippy::cast_possible_truncation)] // splitting a 96-bit value into its words
    pub const fn from_raw_parts(p: RawParts) -> Self {
        let d = p.rtt_diff_ns.to_bits();
        let d = if d > DIFF_MAX_Q68 {
            DIFF_MAX_Q68
        } else if d < -DIFF_MAX_Q68 {
            -DIFF_MAX_Q68
        } else {
            d
        };
        let prev = p.prev_rtt_ns.to_bits();
        let prev = if prev > RTT_SAT_Q4 { RTT_SAT_Q4 } else { prev };
        Self {
            rate_u: p.rate_u128bps,
            prev_rtt_q4: if p.started { prev } else { prev | NOT_STARTED },
            diff_hi: (d >> 64) as i32,
            diff_mid: (d >> 32) as u32,
            diff_lo: d as u32,
            resid: if (d > 0 && p.residual < 0) || (d < 0 && p.residual > 0) {
                0
            } else {
                p.residual
            },
            hai_count: p.hai_count,
        }
    }

    /// The raw parts (inverse of [`from_raw_parts`](Self::from_raw_parts)).
    #[must_use]
    pub const fn raw_parts(&self) -> RawParts {
        RawParts {
            rate_u128bps: self.rate_u,
            prev_rtt_ns: self.prev_rtt_ns(),
            rtt_diff_ns: I60F68::from_bits(self.diff()),
            residual: self.resid,
            hai_count: self.hai_count,
            started: self.started(),
        }
    }

    /// Rate in units of 128 b/s.
    #[must_use]
    pub const fn rate_u128bps(&self) -> u32 {
        self.rate_u
    }
    /// Rate in bit/s.
    #[must_use]
    #[allow(clippy::arithmetic_side_effects)] // u32 · 128 < 2^39
    pub const fn rate_bps(&self) -> u64 {
        self.rate_u as u64 * RATE_UNIT_BPS
    }
    /// Previous RTT, ns.
    #[must_use]
    pub const fn prev_rtt_ns(&self) -> U28F4 {
        U28F4::from_bits(self.prev_rtt_q4 & !NOT_STARTED)
    }
    /// EWMA of RTT differences, ns.
    #[must_use]
    pub const fn rtt_diff_ns(&self) -> I60F68 {
        I60F68::from_bits(self.diff())
    }
    /// Residual counter: sign of a flushed-out EWMA and the identical samples it has left.
    #[must_use]
    pub const fn residual(&self) -> i16 {
        self.resid
    }
    /// Completions with `g ≤ 0` in a row (saturating at 255).
    #[must_use]
    pub const fn hai_count(&self) -> u8 {
        self.hai_count
    }
    /// Whether the first valid sample has been seen.
    #[must_use]
    pub const fn started(&self) -> bool {
        self.prev_rtt_q4 & NOT_STARTED == 0
    }

    #[inline(always)]
    #[allow(clippy::arithmetic_side_effects)] // joining three words
    const fn diff(&self) -> i128 {
        ((self.diff_hi as i128) << 64) | ((self.diff_mid as i128) << 32) | self.diff_lo as i128
    }

    /// The RTT engine (§3) with the exact convention of docs/timely.md § "Conventions", in 1/16 ns
    /// (`U28F4`): `rtt_q4 = clamp(16·(t_complete − t_send) − ⌊bytes·M / 2^32⌋, 0, 2^31 − 1)` with
    /// `M = ⌊2^32·128·10^9 / line_rate⌋` (the serialisation delay per byte in 1/16 ns, `Q.32`, from
    /// [`Config`]). `None` when `t_complete < t_send`. Any RTT of 134.2 ms or more saturates at
    /// [`RTT_MAX`].
    #[must_use]
    pub fn rtt_ns(cfg: &Config, ev: &Completion) -> Option<U28F4> {
        Self::rtt_q4(cfg, ev).map(U28F4::from_bits)
    }

    /// [`rtt_ns`](Self::rtt_ns) as raw `Q27.4` bits: the general form, on 64-bit words.
    fn rtt_q4(cfg: &Config, ev: &Completion) -> Option<u32> {
        // §3: RTT = t_completion − t_send − seg. size / NIC line rate
        let dt_ns = ev.t_complete_ns.checked_sub(ev.t_send_ns)?;
        Some(Self::rtt_q4_of_span(cfg, dt_ns, ev.bytes))
    }

    /// [`rtt_q4`](Self::rtt_q4) of a span `dt_ns = t_complete − t_send ≥ 0`.
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // b·M_hi < 2^49, b·M_lo < 2^64; result ≤ RTT_SAT
    fn rtt_q4_of_span(cfg: &Config, dt_ns: u64, bytes: u32) -> u32 {
        // Saturating: a span of 2^60 ns or more is far past the clamp either way.
        let dt_q4 = dt_ns.saturating_mul(1 << RTT_FRAC_BITS);
        let b = u64::from(bytes);
        // ⌊b·M / 2^32⌋ = b·M_hi + ⌊b·M_lo / 2^32⌋ exactly (M = M_hi·2^32 + M_lo).
        let ser_q4 = b * u64::from(cfg.ser_m_hi) + ((b * u64::from(cfg.ser_m_lo)) >> 32);
        let rtt = dt_q4.saturating_sub(ser_q4);
        if rtt > RTT_SAT_Q4 as u64 {
            RTT_SAT_Q4
        } else {
            rtt as u32
        }
    }

    /// [`rtt_q4`](Self::rtt_q4)'s fast form, on 32-bit words, for the common case only: both
    /// timestamps in the same 2^32-ns window with `0 ≤ t_complete − t_send < 2^27` ns, a
    /// segment of at most `ser_cap_bytes` (so `bytes·M_hi + mulhu(bytes, M_lo)` fits a word)
    /// that serialises for no longer than the span. `None` for every other event (the general
    /// form then decides), never a different RTT (`rtt_engine_fast_form_equals_the_general_one`).
    #[inline(always)]
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // ranges beside each step
    fn rtt_q4_fast(cfg: &Config, ev: &Completion) -> Option<u32> {
        if (ev.t_complete_ns >> 32) != (ev.t_send_ns >> 32) {
            return None;
        }
        // Same high word: t_complete ≥ t_send exactly when the low words' difference does not
        // borrow (a completion before its send is the general form's skip).
        let (dt, before) = (ev.t_complete_ns as u32).overflowing_sub(ev.t_send_ns as u32);
        if before || dt >= FAST_DT_NS || ev.bytes > cfg.ser_cap_bytes {
            return None;
        }
        // bytes ≤ ser_cap_bytes: ⌊bytes·M/2^32⌋ < 2^32 (config).
        let ser_q4 = ev.bytes * cfg.ser_m_hi + mulhu(ev.bytes, cfg.ser_m_lo);
        let dt_q4 = dt << RTT_FRAC_BITS; // < 2^31
        if ser_q4 > dt_q4 {
            return None;
        }
        Some(dt_q4 - ser_q4)
    }

    /// Feeds one completion through the RTT engine ([`rtt_ns`](Self::rtt_ns)) and Algorithm 1;
    /// returns the new rate, the branch and the RTT. The same state change as
    /// [`on_completion_rate`](Self::on_completion_rate), which firmware calls.
    pub fn on_completion(&mut self, cfg: &Config, ev: &Completion) -> Update {
        let o = self.on_completion_rate(cfg, ev);
        let rtt = match o.branch() {
            TimelyBranch::Skip => 0,
            _ => Self::rtt_q4(cfg, ev).unwrap_or(0),
        };
        o.update(rtt)
    }

    /// One completion for firmware: the RTT engine and Algorithm 1, the rate and the branch
    /// returned in two registers. Division-free, panic-free; a leaf on its common path (spans
    /// below 134 ms on 32-bit words, Algorithm 1 with every rare case — long spans, rejected
    /// events, the first sample, the start of a run of identical RTTs, `T_high`, the optional
    /// §5 rules, an increase below `min_rate` — out of line, reached by tail calls).
    #[inline(always)]
    pub fn on_completion_rate(&mut self, cfg: &Config, ev: &Completion) -> Outcome {
        match Self::rtt_q4_fast(cfg, ev) {
            Some(rtt) => self.step::<false>(cfg, rtt, ev.bytes, sending(ev.sending_rate_bps)),
            None => Self::on_completion_general(
                cfg,
                self,
                ev.t_complete_ns.wrapping_sub(ev.t_send_ns),
                ev.t_complete_ns < ev.t_send_ns,
                ev.bytes,
                sending(ev.sending_rate_bps),
            ),
        }
    }

    /// [`on_completion_rate`](Self::on_completion_rate) for every event its RTT engine's fast
    /// form leaves: the general RTT engine on the span `dt_ns = t_complete − t_send` (wrapping;
    /// `before`: `t_complete < t_send`), then Algorithm 1 (or [`TimelyBranch::Skip`]).
    #[cold]
    #[inline(never)]
    fn on_completion_general(
        cfg: &Config,
        st: &mut Self,
        dt_ns: u64,
        before: bool,
        bytes: u32,
        sending_bps: u64,
    ) -> Outcome {
        if before {
            return Outcome::new(TimelyBranch::Skip, st.rate_u);
        }
        let rtt = Self::rtt_q4_of_span(cfg, dt_ns, bytes);
        st.step::<false>(cfg, rtt, bytes, sending_bps)
    }

    /// The rate computation engine (§3) on its own, for firmware that measured the RTT itself
    /// (a NIC that reports it, or an RX path that computed it): Algorithm 1 for one RTT sample
    /// `rtt_ns` (serialisation delay removed as [`rtt_ns`](Self::rtt_ns) does;
    /// values above [`RTT_SAT_Q4`] saturate there). `bytes` (segment size) is used only by
    /// per-completion scaling and `sending_rate_bps` only by the application-limited rule (§5).
    /// Never returns [`TimelyBranch::Skip`]. `on_completion(ev)` is exactly
    /// `on_rtt(rtt_ns(ev), ev.bytes, ev.sending_bps)` for every event that is not skipped:
    /// both run the same code.
    pub fn on_rtt(
        &mut self,
        cfg: &Config,
        rtt_ns: U28F4,
        bytes: u32,
        sending_rate_bps: Option<u64>,
    ) -> Update {
        let rtt = Self::saturate(rtt_ns);
        self.step::<false>(cfg, rtt, bytes, sending(sending_rate_bps))
            .update(rtt)
    }

    /// [`on_rtt`](Self::on_rtt) for firmware: the rate and the branch in two registers.
    #[inline(always)]
    pub fn on_rtt_rate(
        &mut self,
        cfg: &Config,
        rtt_ns: U28F4,
        bytes: u32,
        sending_rate_bps: Option<u64>,
    ) -> Outcome {
        self.step::<false>(
            cfg,
            Self::saturate(rtt_ns),
            bytes,
            sending(sending_rate_bps),
        )
    }

    #[inline(always)]
    const fn saturate(rtt_ns: U28F4) -> u32 {
        let rtt_q4 = rtt_ns.to_bits();
        if rtt_q4 > RTT_SAT_Q4 {
            RTT_SAT_Q4
        } else {
            rtt_q4
        }
    }

    /// Algorithm 1 for one sample `rtt ≤ RTT_SAT_Q4`: the one implementation, in the paper's
    /// order. `GENERAL = false` is the inline common path: it hands the whole event to
    /// [`step_general`](Self::step_general) (this code with `GENERAL = true`, out of line)
    /// before changing anything when the flow has not started, `α` is not dyadic, or a run of
    /// identical RTTs starts; `T_high`, the optional §5 rules and an increase below `min_rate`
    /// are out of line in both.
    /// Every out-of-line part returns the [`Outcome`] itself, so the common path calls nothing
    /// but tail calls and needs no stack frame.
    #[inline(always)]
    #[allow(
        clippy::arithmetic_side_effects,
        clippy::cast_possible_truncation,
        clippy::cast_possible_wrap,
        clippy::cast_sign_loss
    )] // ranges beside each step
    fn step<const GENERAL: bool>(
        &mut self,
        cfg: &Config,
        rtt: u32,
        bytes: u32,
        sending_bps: u64,
    ) -> Outcome {
        let prev = self.prev_rtt_q4;
        if !GENERAL && ((prev as i32) < 0 || cfg.oma_shift == 0) {
            return Self::step_general(cfg, self, rtt, bytes, sending_bps);
        }
        if GENERAL && prev & NOT_STARTED != 0 {
            // docs/timely.md § Conventions: the first sample sets prev_rtt, rtt_diff = 0, rate unchanged.
            self.prev_rtt_q4 = rtt;
            self.diff_hi = 0;
            self.diff_mid = 0;
            self.diff_lo = 0;
            self.resid = 0;
            return Outcome::new(TimelyBranch::Init, self.rate_u);
        }
        // TIMELY Alg. 1: new_rtt_diff = new_rtt − prev_rtt ; prev_rtt = new_rtt
        // Both in [0, 2^31): the difference fits i32.
        let nd = rtt as i32 - prev as i32;
        let (h, m, l) = (self.diff_hi, self.diff_mid, self.diff_lo);
        // `rtt_diff` is 0 and stays 0: a `g > 0` from the countdown alone cuts by nothing.
        let mut vanished = false;
        // TIMELY Alg. 1: rtt_diff = (1 − α)·rtt_diff + α·new_rtt_diff
        let g_pos = if nd != 0 {
            let (h2, m2, l2) = ewma(cfg, h, m, l, nd);
            self.prev_rtt_q4 = rtt;
            self.diff_hi = h2;
            self.diff_mid = m2;
            self.diff_lo = l2;
            self.resid = 0;
            // g = rtt_diff/minRTT > 0 ⇔ rtt_diff > 0.
            h2 > 0 || (h2 == 0 && (m2 | l2) != 0)
        } else if (h as u32 | m | l) == 0 {
            // A run of identical RTTs (common on NIC clocks) after `rtt_diff` has reached 0
            // (module docs): (1 − α)·0 = 0, only the countdown's sign remains (none: g = 0)
            // and counts down; `g > 0` then cuts the rate by nothing.
            let r = self.resid;
            self.resid = r - r.signum();
            vanished = true;
            r > 0
        } else {
            // A run of identical RTTs with `rtt_diff ≠ 0`: new_rtt_diff = 0, the EWMA decays,
            // plus the residual countdown (started at the run's first sample).
            let mut r = self.resid;
            if r == 0 {
                if !GENERAL {
                    return Self::step_general(cfg, self, rtt, bytes, sending_bps);
                }
                r = self.countdown_start(cfg);
            }
            self.hold(cfg, r)
        };
        if rtt < cfg.t_low_q4 {
            // TIMELY Alg. 1: if new_rtt < T_low: rate ← rate + δ   (HAI counter untouched)
            return self.increase(
                cfg,
                TimelyBranch::Low,
                cfg.inc,
                cfg.delta_u,
                bytes,
                sending_bps,
            );
        }
        if rtt > cfg.t_high_q4 {
            // TIMELY Alg. 1: if new_rtt > T_high: rate ← rate · (1 − β·(1 − T_high/new_rtt))
            return Self::high(cfg, self, rtt, bytes);
        }
        if !g_pos {
            // TIMELY Alg. 1: normalized_gradient ≤ 0: N = hai_n after hai_after such events in a
            // row, else 1. The count saturates at 255 (it only needs "≥ hai_after"):
            // `hai_from ≤ 256`, so below it `c` fits the u8; at or above it `c ≤ 256`.
            let c = u32::from(self.hai_count) + 1;
            if c < cfg.hai_from {
                self.hai_count = c as u8;
                // TIMELY Alg. 1: rate ← rate + δ
                return self.increase(
                    cfg,
                    TimelyBranch::Inc,
                    cfg.inc,
                    cfg.delta_u,
                    bytes,
                    sending_bps,
                );
            }
            self.hai_count = (c - (c >> 8)) as u8;
            // TIMELY Alg. 1: rate ← rate + N·δ (`hai_branch` is `Inc` when N = 1)
            return self.increase(
                cfg,
                cfg.hai_branch,
                cfg.hai,
                cfg.delta_hai_u,
                bytes,
                sending_bps,
            );
        }
        // TIMELY Alg. 1: rate ← rate · (1 − β · normalized_gradient)
        self.hai_count = 0;
        self.dec(cfg, bytes, vanished)
    }

    /// [`step`](Self::step) for every case its common path leaves (module docs of `step`).
    #[cold]
    #[inline(never)]
    fn step_general(
        cfg: &Config,
        st: &mut Self,
        rtt: u32,
        bytes: u32,
        sending_bps: u64,
    ) -> Outcome {
        st.step::<true>(cfg, rtt, bytes, sending_bps)
    }

    /// TIMELY Alg. 1's EWMA for an identical RTT (`new_rtt_diff = 0`): `rtt_diff ← (1 −
    /// α)·rtt_diff` with the residual countdown `r ≠ 0` or just started. `rtt_diff` keeps decaying
    /// and steering the rate; once it stalls (reaches 0, or stays at its value: `−1` ulp for a
    /// shift) or the f64 gradient flushes after this sample (`|r| ≤ 1`), only the countdown's sign
    /// remains, with no effect on the rate. Returns whether `g > 0`: the sign of `r`, which is
    /// `rtt_diff`'s.
    #[inline(always)]
    #[allow(clippy::arithmetic_side_effects)] // countdown toward 0 (|r| ≤ i16::MAX)
    fn hold(&mut self, cfg: &Config, r: i16) -> bool {
        let (h, m, l) = (self.diff_hi, self.diff_mid, self.diff_lo);
        // (1 − α)·d, floored: the EWMA step with new_rtt_diff = 0.
        let (mut h2, mut m2, mut l2) = ewma(cfg, h, m, l, 0);
        // The countdown, one sample toward 0; at 0 (|r| ≤ 1) the f64 gradient flushes after
        // this sample. Stalled: the step changed nothing (the `Q.4` word first: it changes on
        // most samples).
        let r2 = r - r.signum();
        if r2 == 0 || (h2 == h && (m2 ^ m) | (l2 ^ l) == 0) {
            (h2, m2, l2) = (0, 0, 0);
        }
        self.diff_hi = h2;
        self.diff_mid = m2;
        self.diff_lo = l2;
        self.resid = r2;
        // g > 0 ⇔ r > 0: the countdown has rtt_diff's sign (set so at the run's first sample,
        // kept so by `from_raw_parts`), the floored shift keeps that sign until rtt_diff is 0, and
        // from then on the countdown's sign is the gradient's.
        r > 0
    }

    /// The countdown at the first identical sample of a run: `±residual_events(|rtt_diff|)`
    /// with `rtt_diff`'s sign (out of line: once per run). `rtt_diff ≠ 0`.
    #[allow(clippy::arithmetic_side_effects, clippy::cast_sign_loss)] // 0 ≤ k ≤ i16::MAX: −k fits
    fn countdown_start(&self, cfg: &Config) -> i16 {
        let (h, m, l) = (self.diff_hi, self.diff_mid, self.diff_lo);
        // |rtt_diff| as three words (the two's-complement negation of a negative one).
        let (mh, mm, ml) = if h < 0 {
            let (l2, c) = (!l).overflowing_add(1);
            let (m2, c2) = (!m).overflowing_add(u32::from(c));
            ((!(h as u32)).wrapping_add(u32::from(c2)), m2, l2)
        } else {
            (h as u32, m, l)
        };
        let k = Self::residual_events(cfg, mh, mm, ml);
        if h < 0 { -k } else { k }
    }

    /// Identical samples for which an f64 EWMA of magnitude `mag·2^-68` ns (before the first
    /// of them; `mag = hi·2^64 + mid·2^32 + lo ≠ 0`) keeps a non-zero gradient: the `k ≥ 1` with
    /// `g0·(1−α)^k > 2^-1075`, i.e. `k < (log2 mag − 64 + C)/L` with `C = 1075 − 4 − log2 minRTT`
    /// and `L = log2(1/(1−α))` from the config; 0 when `α = 1`; capped at `i16::MAX`.
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // x < 2^27, inv_l < 2^32: < 2^59
    fn residual_events(cfg: &Config, hi: u32, mid: u32, lo: u32) -> i16 {
        // log2 of the 96-bit magnitude from its leading word: the bit index of its leading 1
        // and the 31 bits from there down (the next word fills in below a short leading word).
        let (word, next, base) = if hi != 0 {
            (hi, mid, 64)
        } else if mid != 0 {
            (mid, lo, 32)
        } else {
            (lo, 0, 0)
        };
        let z = word.leading_zeros(); // < 32: word ≠ 0
        let top = (word << z) | ((next >> 1) >> (31 - z)); // leading 1 at bit 31
        let log2 = config::log2_q16_mant(base + 31 - z, top >> 1);
        let x = i64::from(log2) - (64 << 16) + i64::from(cfg.resid_c_q16);
        if x <= 0 || cfg.resid_inv_l == 0 {
            return 0;
        }
        // ceil(x·inv_l / 2^32) − 1
        let q = ((x as u64) * u64::from(cfg.resid_inv_l)).div_ceil(1 << 32);
        q.saturating_sub(1).min(i16::MAX as u64) as i16
    }

    /// `rate ← clamp(rate + step)` for `branch` (`Low`, `Inc`, `Hai`; `step` is `δ`, or `N·δ`
    /// for HAI, saturated). Inline while no optional §5 rule is on (`config::IncRange`; its
    /// span is 0 then) and the sum needs no clamp or reaches `max_rate`; every other case is
    /// [`grow`](Self::grow), which computes the same in full
    /// (`increase_fast_form_equals_the_general_one`).
    #[inline(always)]
    #[allow(clippy::arithmetic_side_effects)] // inside the range, rate + step ≤ max (IncRange)
    fn increase(
        &mut self,
        cfg: &Config,
        branch: TimelyBranch,
        range: config::IncRange,
        step: u32,
        bytes: u32,
        sending_bps: u64,
    ) -> Outcome {
        let rate = self.rate_u;
        if rate.wrapping_sub(range.lo) < range.span {
            let r = rate + step;
            self.rate_u = r;
            return Outcome::new(branch, r);
        }
        if range.span != 0 && rate >= range.lo {
            // No optional rule (span ≠ 0) and rate > max − step: rate + step passes max, the
            // clamp gives max (a flow at its maximum rate).
            self.rate_u = cfg.max_rate_u;
            return Outcome::new(branch, cfg.max_rate_u);
        }
        Self::grow(cfg, self, branch, bytes, sending_bps)
    }

    /// The increase of `branch` in full: `rate ← clamp(rate + n·δ)` with `n = N` for `Hai`,
    /// else 1 (saturating: rates), unless an optional §5 rule changes it: the
    /// application-limited rule suppresses it (the rate is only clamped), per-completion
    /// scaling scales the step.
    #[cold]
    #[inline(never)]
    #[allow(clippy::arithmetic_side_effects)] // u64 · u32 < 2^96, · 2^30 < 2^126 in u128
    fn grow(
        cfg: &Config,
        st: &mut Self,
        branch: TimelyBranch,
        bytes: u32,
        sending_bps: u64,
    ) -> Outcome {
        if let Some(r) = cfg.params.app_limited {
            // §5: increase only if sending·den ≥ num·rate (exact in u128). An unknown sending
            // rate (`u64::MAX`) never limits: num ≤ den and rate < 2^39.
            if u128::from(sending_bps) * u128::from(r.den)
                < u128::from(r.num) * u128::from(st.rate_bps())
            {
                st.rate_u = clamp(cfg, st.rate_u);
                return Outcome::limited(branch, st.rate_u);
            }
        }
        let (n, step) = match branch {
            TimelyBranch::Hai => (cfg.params.hai_n, cfg.delta_hai_u),
            _ => (1, cfg.delta_u),
        };
        let step = match st.scale_q30(cfg, bytes) {
            None => step,
            // s·n·δ from δ itself, not from `step`: the config saturates δ and N·δ at the rate
            // format's top, which no unscaled increase can tell apart (it reaches max_rate
            // either way) but s·δ can. δ < 2^64, n < 2^32, s ≤ 2^30: < 2^126; to units of
            // 128 b/s (2^(30+7)), rounded.
            Some(s) => {
                let full = u128::from(cfg.params.delta_bps) * u128::from(n) * u128::from(s);
                u32::try_from((full + (1 << 36)) >> 37).unwrap_or(u32::MAX)
            }
        };
        st.rate_u = clamp(cfg, st.rate_u.saturating_add(step));
        Outcome::new(branch, st.rate_u)
    }

    /// TIMELY Alg. 1 `rate ← rate·(1 − β·g)` for `g > 0`, `g = rtt_diff/minRTT`: `β·g` by
    /// [`beta_g_q32`], then [`apply_cut`](Self::apply_cut); inline while per-completion scaling
    /// is off, where below `dthr` `β·g` is one shift and one `mulhu` and from `dthr` on
    /// `β·g ≥ 1` takes the rate to `min_rate`. `vanished`: `rtt_diff = 0` with a positive
    /// countdown (a run of identical RTTs), so `β·g = 0` and the cut is the clamp alone. The
    /// general form [`dec_general`](Self::dec_general) computes the same
    /// (`gradient_cut_fast_form_equals_the_general_one`,
    /// `vanished_gradient_cut_equals_the_general_one`).
    #[inline(always)]
    #[allow(
        clippy::arithmetic_side_effects,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )] // rtt_diff > 0: its high word is ≥ 0; below dthr the shifted value is < 2^32
    fn dec(&mut self, cfg: &Config, bytes: u32, vanished: bool) -> Outcome {
        let h = self.diff_hi as u32;
        let r = if vanished {
            // rtt_diff = 0: β·g = 0, the rate is only clamped.
            self.rate_u
        } else if h < cfg.dec_fast_below {
            // d >> bg_bits on two words (h < dthr ≤ 2^bg_bits: h's part fits).
            let x = (self.diff_mid >> (u32::from(cfg.bg_bits) & 31))
                | (h << (u32::from(cfg.bg_lshift) & 31));
            // β·g < 1 in Q32: mulhu < 2^31, so << 1 fits.
            cut_rate(self.rate_u, mulhu(x, cfg.bg_mul) << 1)
        } else if cfg.dec_fast_below != 0 {
            // rtt_diff ≥ dthr without scaling: β·g ≥ 1, the rate reaches 0: min_rate after
            // the clamp.
            0
        } else {
            return Self::dec_general(cfg, self, bytes);
        };
        // Finally clamp rate to [min_rate, max_rate].
        self.rate_u = clamp(cfg, r);
        Outcome::new(TimelyBranch::Dec, self.rate_u)
    }

    /// [`dec`](Self::dec) in full: `β·g` at full width ([`beta_g_q32`]), then
    /// [`apply_cut`](Self::apply_cut) (scaled by [`cut_scaled`](Self::cut_scaled) while
    /// per-completion scaling is on).
    #[cold]
    #[inline(never)]
    fn dec_general(cfg: &Config, st: &mut Self, bytes: u32) -> Outcome {
        let d = (i64::from(st.diff_hi) << 32) | i64::from(st.diff_mid);
        let cut = beta_g_q32(cfg, d);
        if cfg.scale_num != 0 {
            return Self::cut_scaled(cfg, st, TimelyBranch::Dec, cut, bytes);
        }
        st.apply_cut(cfg, cut);
        Outcome::new(TimelyBranch::Dec, st.rate_u)
    }

    /// The cut of `branch` (`Dec` or `High`) scaled by §5's `s`: `rate ← clamp(rate·(1 − s·cut))`.
    /// The cut `s·cut` is formed at full width before anything is clamped, so `s·cut ≥ 1`
    /// reaches `min_rate` as in the reference.
    #[cold]
    #[inline(never)]
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // cut ≤ 2^62, s ≤ 2^30: the product >> 30 ≤ 2^62
    fn cut_scaled(
        cfg: &Config,
        st: &mut Self,
        branch: TimelyBranch,
        cut: u64,
        bytes: u32,
    ) -> Outcome {
        let s = st.scale_q30(cfg, bytes).unwrap_or(1 << 30);
        st.apply_cut(cfg, ((u128::from(cut) * u128::from(s)) >> 30) as u64);
        Outcome::new(branch, st.rate_u)
    }

    /// `rate ← clamp(rate·(1 − cut))` for a Q32 cut of any size (≥ 1: rate 0, then `min_rate`).
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)] // cut < 2^32 checked
    fn apply_cut(&mut self, cfg: &Config, cut_q32: u64) {
        let r = if cut_q32 >= 1 << 32 {
            0
        } else {
            cut_rate(self.rate_u, cut_q32 as u32)
        };
        self.rate_u = clamp(cfg, r);
    }

    /// TIMELY Alg. 1 `T_high` branch: `rate ← rate·(1 − β·(1 − T_high/rtt))` (`rtt > T_high`),
    /// optionally scaled (§5); the HAI counter restarts. The cut `β − β·T_high/rtt` from
    /// [`t_high_cut_q32`], then [`apply_cut`](Self::apply_cut).
    #[cold]
    #[inline(never)]
    fn high(cfg: &Config, st: &mut Self, rtt_q4: u32, bytes: u32) -> Outcome {
        st.hai_count = 0;
        let cut = u64::from(t_high_cut_q32(cfg, rtt_q4));
        if cfg.scale_num != 0 {
            return Self::cut_scaled(cfg, st, TimelyBranch::High, cut, bytes);
        }
        st.apply_cut(cfg, cut);
        Outcome::new(TimelyBranch::High, st.rate_u)
    }

    /// §5 per-completion scaling `s = min(1, bytes·8/(rate·minRTT))` in Q30; `None` when off.
    /// With the rate in units of 128 b/s and minRTT in ns, `s = bytes·62 500 000 / (rate_u·minRTT)`:
    /// a ratio of two exact integers, taken by [`ratio_q30`] (≤ 2^-30 relative after shifting
    /// both below 2^32 together).
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // ranges beside each step
    fn scale_q30(&self, cfg: &Config, bytes: u32) -> Option<u32> {
        if cfg.scale_num == 0 {
            return None;
        }
        // bytes < 2^32, scale_num < 2^26: num < 2^58. rate_u, minRTT < 2^32: den < 2^64.
        let num = u64::from(bytes) * u64::from(cfg.scale_num);
        let den = u64::from(self.rate_u) * u64::from(cfg.params.min_rtt_ns);
        if num >= den {
            return Some(1 << 30); // s ≥ 1 (also rate 0)
        }
        // num < den: shift both until num fits 32 bits (num ≥ 2^31 then, so ≤ 2^-31 lost on
        // each; den >> k ≥ num >> k stays non-zero).
        let k = 32u32.saturating_sub(num.leading_zeros());
        Some(ratio_q30((num >> k) as u32, den >> k))
    }
}

/// TIMELY Alg. 1: `rtt_diff ← (1 − α)·rtt_diff + α·new_rtt_diff` in `Q27.68` ns, on the three words
/// `(h, m, l)` of `d = h·2^64 + m·2^32 + l`, with `new_rtt_diff = nd` in `Q.4` (`N = nd·2^64`):
/// * `⌊(1 − α)·d⌋`: for `1 − α = 2^-k` (the paper's `α = 7/8`: `k = 3`) `d` shifted right by
///   `k` across the three words; for any other `α` the product with `(1 − α)` in `Q0.32`
///   ([`ewma_product`], out of line). Both floor (≤ 2^-68 ns per event) and agree bit for bit
///   where both apply.
/// * `α·N = α_q32·nd·2^32` (exact; for `α = 1`, stored as `1 − 2^-32`, `|nd|·2^-68` ns low).
///
/// The result is a convex combination of `d` and `N` (`|·| < 2^95`): its top 64 bits fit an
/// `i64` at every step below.
#[inline(always)]
#[allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)] // ranges beside each step
fn ewma(cfg: &Config, h: i32, m: u32, l: u32, nd: i32) -> (i32, u32, u32) {
    let k = cfg.oma_shift;
    if k == 0 {
        return ewma_product(cfg, h, m, l, nd);
    }
    // 1 ≤ k ≤ 31 (config): both shift counts are in 1..=31.
    let (s, r) = (k & 31, (32 - k) & 31);
    let l2 = (l >> s) | (m << r);
    let m2 = (m >> s) | ((h as u32) << r);
    let h2 = h >> s; // arithmetic: floors
    // α·N in the top 64 bits is nd·(2^32 − 2^(32−k)) = nd·2^32 − nd·2^(32−k) exactly: the
    // second term's words are (nd >> k, nd << (32 − k)) (arithmetic shift), subtracted with
    // its borrow. The sum is a convex combination: its top 64 bits fit an i64.
    let (t_hi, t_lo) = (nd >> s, (nd as u32) << r);
    let m3 = m2.wrapping_sub(t_lo);
    let borrow = i32::from(m2 < t_lo);
    let h3 = h2.wrapping_add(nd).wrapping_sub(t_hi).wrapping_sub(borrow);
    (h3, m3, l2)
}

/// The EWMA's second term for the product form: `⌊(1 − α)·d⌋` (its top 64 bits `r_top` and
/// low word `l`) plus `α·N`, which lies in the top 64 bits: `α_q32·nd` (|·| < 2^63; one
/// `i32 × u32` product) with `α_q32 = 2^32 − (1 − α)_q32` (`α = 1`: `2^32 − 1`, the EWMA is
/// then `new_diff` less `|new_diff|·2^-68` ns).
#[inline(always)]
#[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // convex combination: < 2^63
fn plus_alpha_n(cfg: &Config, r_top: i64, l: u32, nd: i32) -> (i32, u32, u32) {
    let alpha_q32 = match cfg.one_minus_alpha_q32 {
        0 => u32::MAX,
        oma => oma.wrapping_neg(),
    };
    let top = r_top + i64::from(nd) * i64::from(alpha_q32);
    ((top >> 32) as i32, top as u32, l)
}

/// [`ewma`] for an `α` with `1 − α` not a power of two: `⌊(1 − α)·d⌋ = (1−α)_q32·h·2^32 +
/// (1−α)_q32·m + mulhu((1−α)_q32, l)` (three word products).
#[cold]
#[inline(never)]
#[allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)] // ranges beside each step
fn ewma_product(cfg: &Config, h: i32, m: u32, l: u32, nd: i32) -> (i32, u32, u32) {
    let oma = cfg.one_minus_alpha_q32;
    let p_l = u64::from(mulhu(l, oma)); // < 2^32
    let p_m = u64::from(m) * u64::from(oma); // < 2^64
    let p_h = i64::from(h) * i64::from(oma); // |·| < 2^63
    // R = p_h·2^32 + p_m + p_l: low word, then the top 64 bits (|R| ≤ |d| < 2^95).
    let t0 = u64::from(p_m as u32) + p_l; // < 2^33
    let r_top = p_h + ((p_m >> 32) + (t0 >> 32)) as i64; // (p_m >> 32) + carry < 2^32
    plus_alpha_n(cfg, r_top, t0 as u32, nd)
}

/// TIMELY Alg. 1's `T_high` cut `β·(1 − T_high/rtt)` in `Q32` for `rtt > T_high` (below 2^32, at
/// least 0): `β·T_high/rtt` in `Q29` as one `mulhu` of the config's mantissa of `β·T_high`
/// ([`Config`]'s `bt_norm`) and cc-math's refined reciprocal (table and one Newton step,
/// ≤ 2^-30) of the `rtt` normalised by [`normalize_by_table`], then `β − ·` in `Q31`. Error:
/// ≤ 2^-28 absolute (`t_high_cut_is_within_the_bound`; docs/timely.md's error budget).
#[inline(always)]
#[allow(clippy::arithmetic_side_effects)] // ranges beside each step
fn t_high_cut_q32(cfg: &Config, rtt_q4: u32) -> u32 {
    // rtt > T_high ≥ 16: never 0; 0 would be no cut.
    let Some(x) = NonZeroU32::new(rtt_q4) else {
        return 0;
    };
    // rtt = m·2^-s (m normalised; 1 ≤ s ≤ 31 as rtt < 2^31); r ≈ 2^62/m, so
    // β·T_high/rtt = bt_norm·2^-e · r·2^(s − 62): in Q29, mulhu(bt_norm, r) >> (e + 1 − s),
    // a shift in 0..=31 (e ≤ 31; the quotient is below 2^30 while mulhu is at least ≈ 2^29
    // when bt_norm is normalised, and e = 31 when it is not).
    let (m, s) = normalize_by_table(x);
    let r = cc_math::RECIP.recip_norm_refined(m);
    let bt_q29 = mulhu(cfg.bt_norm, r) >> (u32::from(cfg.bt_shift).wrapping_sub(s) & 31);
    // In Q31 (bt_q29 < 2^30: below 2^32) and 2^-31 more, which keeps the cut below 1 where
    // β = 1 and the ratio vanishes. β − β·T_high/rtt ≥ 0 (the rounding can pass β just above
    // T_high: no cut) and < 2^31: in Q32 below 2^32.
    let bt_q31 = (bt_q29 << 2) | 1;
    cfg.beta_q31.saturating_sub(bt_q31) << 1
}

/// Leading zeros of an 8-bit value in 8 bits (`[0]` = 8), for [`normalize_by_table`].
static CLZ8: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        #[allow(clippy::cast_possible_truncation, clippy::indexing_slicing)] // i < 256; ≤ 8
        {
            t[i] = (i as u8).leading_zeros() as u8;
        }
        i += 1;
    }
    t
};

/// `(x << s, s)` with `s` the leading zeros of `x`: cc-math's [`normalize`] by a 256-byte table
/// on `x`'s leading non-zero byte (a byte test or three and one load: ≈ 7–12 instructions
/// against the five-step search's ≈ 25 on rv32imac; the native `clz` with Zbb). Equal for
/// every `x` (`normalize_by_table_equals_cc_math_normalize`).
///
/// [`normalize`]: cc_math::recip::normalize
#[inline(always)]
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)] // base ≤ 24, table value ≤ 8 (x ≠ 0: its lead byte ≠ 0); the index is masked below 256
fn normalize_by_table(x: NonZeroU32) -> (u32, u32) {
    if cfg!(target_feature = "zbb") {
        return cc_math::recip::normalize(x);
    }
    let x = x.get();
    let (lead, base) = if x >> 24 != 0 {
        (x >> 24, 0)
    } else if x >> 16 != 0 {
        (x >> 16, 8)
    } else if x >> 8 != 0 {
        (x >> 8, 16)
    } else {
        (x, 24)
    };
    let s = base + u32::from(CLZ8[(lead & 0xff) as usize]);
    (x << (s & 31), s)
}

/// `num / den` in Q30 for `num < den` (`den > 0`), division-free: the cc-math table reciprocal
/// refined by one Newton–Raphson step.
///
/// Error bound: the table gives `r0 = (1/m)(1 + ε)`, `|ε| ≤ 1.51e-5`; one Newton step
/// `r1 = r0·(2 − m·r0)` leaves `−ε²` (≤ 2.3e-10) plus the rounding of `e >> 20` (2^-42) and of
/// `r1` to Q31 (2^-31 ≈ 4.7e-10), so `|r1·m − 1| < 1e-9`; the final Q30 rounding adds ≤ 2^-31
/// absolute. Measured over a sweep in the tests.
#[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // ranges beside each step
fn ratio_q30(num: u32, den: u64) -> u32 {
    // Bring den into u32: den = x32 · 2^sh (dropping low bits: relative error ≤ 2^-31).
    let sh = 32u32.saturating_sub(den.leading_zeros());
    let x32 = (den >> sh) as u32; // < 2^32 by choice of sh
    let Some(x) = NonZeroU32::new(x32) else {
        return 0;
    };
    let s = x32.leading_zeros(); // 0..=31
    // ≈ 2^62/m for the normalised m = x·2^s (bit 31 set), table and one Newton step:
    // in (2^30, 2^31 + 1], relative error ≤ 2^-30.
    let r1 = u64::from(cc_math::RECIP.recip_norm_refined(x.get() << s));
    // 1/den = r1 · 2^-(62 − s + sh); num/den in Q30 = num·r1 >> (32 − s + sh).
    let total = 32 - s + sh; // ≥ 1
    let prod = u64::from(num) * r1; // < 2^32 · 2^31.x < 2^64
    let q = if total >= 64 {
        0
    } else {
        (prod >> total) + ((prod >> (total - 1)) & 1)
    };
    q.min(1 << 30) as u32
}

#[cfg(test)]
mod tests;

// The README (what crates.io shows) runs its example as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
