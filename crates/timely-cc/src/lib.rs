//! TIMELY (Mittal et al., SIGCOMM 2015) RTT-gradient rate control in fixed point, for NIC
//! firmware: `no_std`, no allocation, no floats, no panics and no division per event.
//!
//! One [`State`] per flow (16 bytes), one shared [`Config`] (validated and precomputed once, can
//! be built at compile time), one call per completion: [`State::on_completion`] returns the new
//! rate and the [`Branch`] of Algorithm 1 that was taken.
//!
//! ```
//! use timely_cc::{Completion, Config, State, Branch};
//! let cfg = Config::DEFAULT;
//! let mut st = State::new(&cfg);
//! // First valid sample: remembered, rate unchanged.
//! let u = st.on_completion(&cfg, &Completion::new(0, 101_200, 1_500));
//! assert_eq!(u.branch, Branch::Init);
//! // RTT 600 µs (+ the 1.2 µs serialisation of 1500 B at 10 Gb/s): above T_high, so
//! // rate·(1 − 0.8·(1 − 500/600)) = 0.8667 · 10 Gb/s.
//! let u = st.on_completion(&cfg, &Completion::new(0, 601_200, 1_500));
//! assert_eq!(u.branch, Branch::High);
//! assert!((u.rate_bps as i64 - 8_666_666_667).abs() < 200, "{}", u.rate_bps);
//! ```
//!
//! # Conventions (issue 2 §3; the f64 reference in `sim-host` follows the same)
//! * RTT engine (§3): `rtt = t_complete − t_send − bytes·8/line_rate`, clamped at 0. An event
//!   with `t_complete < t_send` is rejected: no state change, [`Branch::Skip`].
//! * First valid sample: `prev_rtt = rtt`, `rtt_diff = 0`, rate unchanged ([`Branch::Init`]).
//! * Then Algorithm 1 with the HAI counter, then clamp to `[min_rate, max_rate]`.
//!
//! # Number formats
//! | quantity | format | range | resolution | at the ends |
//! |---|---|---|---|---|
//! | rate | `u32`, units of 128 b/s | 0 ..≈ 549.7 Gb/s | 128 b/s (1.3e-5 of 10 Mb/s) | clamped to `[min, max]`; products saturate |
//! | RTT (stored `prev_rtt`) | `u32` `Q28.4` ns | 0 .. 268 ms | 1/16 ns | saturates at 268 ms (the current RTT is kept unsaturated in `u64` for the branch tests and the `T_high` ratio) |
//! | `rtt_diff` (EWMA) | `i32` `Q24.7` ns | ±16.7 ms | 1/128 ns | saturates; rounding is sign-preserving (see below) |
//! | `α` | `Q0.16` | `[0, 1]` | 2^-16 (0.875 exact) | — |
//! | `β`, factors | `Q2.30` | `[0, 1]` | 2^-30 | a factor ≤ 0 sets `min_rate` |
//! | `β/minRTT` | mantissa `u32` · 2^-shift | any valid | 2^-31 relative | rejected at build if < 2^-40 /ns |
//! | HAI counter | `u8` | 0..255 | 1 | saturates at 255 (`hai_after ≤ 255`, so `count ≥ hai_after` is unchanged) |
//!
//! # The EWMA of identical RTTs
//! After a run of equal RTTs, `rtt_diff` decays by `(1 − α)` per event. Rounded to nearest, a
//! fixed-point EWMA reaches 0 after a few events and `g ≤ 0` then holds, while the real-number
//! (and f64) value keeps its sign. The EWMA here rounds to nearest but never rounds a non-zero
//! exact result to zero: it keeps one ulp (1/128 ns) of the exact result's sign, so the sign of
//! `rtt_diff` (the branch decision) is that of the exact EWMA of the quantised RTTs. The f64
//! reference keeps the sign too until its gradient underflows the subnormal range (357 equal
//! samples after a 1 µs step at the defaults), where it flushes to 0 and the two differ;
//! docs/timely.md measures it.
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
    Config, ConfigError, DIFF_FRAC_BITS, MAX_RATE_BPS, MAX_RTT_NS, Params, RATE_UNIT_BPS,
    RTT_FRAC_BITS, Ratio,
};

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

/// The branch of Algorithm 1 an event took.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Branch {
    /// Rejected (`t_complete < t_send`): nothing changed.
    Skip,
    /// First valid sample: remembered, rate unchanged.
    Init,
    /// `rtt < T_low`: `rate += δ`.
    Low,
    /// `rtt > T_high`: `rate ← rate·(1 − β·(1 − T_high/rtt))`.
    High,
    /// `g ≤ 0` after `hai_after` such events in a row: `rate += N·δ`.
    Hai,
    /// `g ≤ 0`: `rate += δ`.
    Inc,
    /// `g > 0`: `rate ← rate·(1 − β·g)`.
    Dec,
}

impl Branch {
    /// The branch's name as in traces and reports (`skip`, `init`, `low`, …).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Branch::Skip => "skip",
            Branch::Init => "init",
            Branch::Low => "low",
            Branch::High => "high",
            Branch::Hai => "hai",
            Branch::Inc => "inc",
            Branch::Dec => "dec",
        }
    }
}

/// What one event did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Update {
    /// The rate after the event, bit/s (a multiple of 128).
    pub rate_bps: u64,
    /// The branch taken.
    pub branch: Branch,
    /// The measured RTT in `Q.4` ns (serialisation removed, clamped at 0; 0 for `Skip`).
    pub rtt_q4: u64,
    /// An increase was suppressed by the application-limited rule.
    pub app_limited: bool,
}

/// Per-flow TIMELY state: 16 bytes (`size_of` asserted in the tests).
///
/// Raw parts (for re-seeding, e.g. the host's forced mode): rate in units of 128 b/s, previous
/// RTT in `Q28.4` ns, `rtt_diff` in `Q24.7` ns, HAI counter, whether a first sample was seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct State {
    rate_u: u32,
    prev_rtt_q4: u32,
    rtt_diff_q7: i32,
    hai_count: u8,
    started: bool,
}

const ONE_Q30: i64 = 1 << 30;

impl State {
    /// A flow at `init_rate`, before its first completion.
    #[must_use]
    pub const fn new(cfg: &Config) -> Self {
        Self {
            rate_u: cfg.init_rate_u,
            prev_rtt_q4: 0,
            rtt_diff_q7: 0,
            hai_count: 0,
            started: false,
        }
    }

    /// A state from its raw parts (see the type's documentation for the formats). No clamping
    /// is applied: the next event clamps the rate.
    #[must_use]
    pub const fn from_raw(
        rate_u128bps: u32,
        prev_rtt_q4: u32,
        rtt_diff_q7: i32,
        hai_count: u8,
        started: bool,
    ) -> Self {
        Self {
            rate_u: rate_u128bps,
            prev_rtt_q4,
            rtt_diff_q7,
            hai_count,
            started,
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
    /// Previous RTT, `Q28.4` ns.
    #[must_use]
    pub const fn prev_rtt_q4(&self) -> u32 {
        self.prev_rtt_q4
    }
    /// EWMA of RTT differences, `Q24.7` ns.
    #[must_use]
    pub const fn rtt_diff_q7(&self) -> i32 {
        self.rtt_diff_q7
    }
    /// Completions with `g ≤ 0` in a row (saturating at 255).
    #[must_use]
    pub const fn hai_count(&self) -> u8 {
        self.hai_count
    }
    /// Whether the first valid sample has been seen.
    #[must_use]
    pub const fn started(&self) -> bool {
        self.started
    }

    /// The RTT of a completion in `Q.4` ns (§3): `t_complete − t_send − bytes·8/line_rate`,
    /// clamped at 0; `None` when `t_complete < t_send`.
    #[must_use]
    #[allow(clippy::arithmetic_side_effects)] // bytes·ser_mul < 2^64; shift < 64; subtraction saturating
    pub fn rtt_q4(cfg: &Config, ev: &Completion) -> Option<u64> {
        // §3: RTT = t_completion − t_send − seg. size / NIC line rate
        let dt_ns = ev.t_complete_ns.checked_sub(ev.t_send_ns)?;
        // Saturating: a span above 2^60 ns (36 years) is not a real RTT; it stays "huge".
        let dt_q4 = dt_ns.saturating_mul(1 << RTT_FRAC_BITS);
        // Serialisation in Q4 ns, rounded to nearest: bytes · (8e9·16/line_rate).
        let prod = u64::from(ev.bytes) * u64::from(cfg.ser_mul); // < 2^64
        let ser_q4 = if cfg.ser_shift == 0 {
            prod
        } else {
            (prod >> cfg.ser_shift) + ((prod >> (cfg.ser_shift - 1)) & 1)
        };
        // Clamped at 0 (a completion faster than its own serialisation).
        Some(dt_q4.saturating_sub(ser_q4))
    }

    /// Feeds one completion through the RTT engine and Algorithm 1; returns the new rate and the
    /// branch. Division-free, panic-free, constant time.
    #[allow(clippy::arithmetic_side_effects)] // each operation's range is stated beside it
    pub fn on_completion(&mut self, cfg: &Config, ev: &Completion) -> Update {
        let Some(rtt_q4) = Self::rtt_q4(cfg, ev) else {
            return Update {
                rate_bps: self.rate_bps(),
                branch: Branch::Skip,
                rtt_q4: 0,
                app_limited: false,
            };
        };
        // Stored RTT saturates at 268 ms (the u32 Q28.4 top).
        let rtt_stored = u32::try_from(rtt_q4).unwrap_or(u32::MAX);
        if !self.started {
            // Issue convention: first sample sets prev_rtt, rtt_diff = 0, rate unchanged.
            self.started = true;
            self.prev_rtt_q4 = rtt_stored;
            self.rtt_diff_q7 = 0;
            return self.update(Branch::Init, rtt_q4, false);
        }
        // Alg. 1: new_rtt_diff = new_rtt − prev_rtt ; prev_rtt = new_rtt
        // Both < 2^32, so the difference fits i64 exactly.
        let new_diff_q4 = i64::from(rtt_stored) - i64::from(self.prev_rtt_q4);
        self.prev_rtt_q4 = rtt_stored;
        // Alg. 1: rtt_diff = (1 − α)·rtt_diff + α·new_rtt_diff   (Q7 · Q16 → Q23, then >> 16)
        // |rtt_diff| < 2^31, 2^16 − α ≤ 2^16: < 2^47; new_diff·8 < 2^36, α ≤ 2^16: < 2^52.
        let alpha = i64::from(cfg.alpha_q16);
        let num = (65_536 - alpha) * i64::from(self.rtt_diff_q7)
            + alpha * (new_diff_q4 << (DIFF_FRAC_BITS - RTT_FRAC_BITS));
        self.rtt_diff_q7 = sign_preserving_round_q16(num);

        let scale_q30 = self.scale_q30(cfg, ev.bytes);
        let (branch, grow) = if rtt_q4 < cfg.t_low_q4 {
            // Alg. 1: if new_rtt < T_low: rate ← rate + δ   (HAI counter untouched)
            (Branch::Low, true)
        } else if rtt_q4 > u64::from(cfg.t_high_q4) {
            // Alg. 1: if new_rtt > T_high: rate ← rate · (1 − β·(1 − T_high/new_rtt))
            self.hai_count = 0;
            let ratio_q30 = ratio_q30(cfg.t_high_q4, rtt_q4); // T_high/rtt < 1, in Q30
            // β (≤ 2^30) · (1 − ratio) (≤ 2^30) < 2^60, back to Q30.
            let cut = (i64::from(cfg.beta_q30) * (ONE_Q30 - i64::from(ratio_q30))) >> 30;
            self.scale_factor(ONE_Q30 - cut, scale_q30);
            (Branch::High, false)
        } else if self.rtt_diff_q7 <= 0 {
            // Alg. 1: normalized_gradient = rtt_diff/minRTT ≤ 0 ⇔ rtt_diff ≤ 0 (minRTT > 0)
            // Saturating: the counter only needs to know "≥ hai_after (≤ 255)".
            self.hai_count = self.hai_count.saturating_add(1);
            // N = hai_n if counter ≥ hai_after else 1; the branch is `hai` when N > 1.
            if self.hai_count >= cfg.hai_after && cfg.hai_n > 1 {
                (Branch::Hai, true)
            } else {
                (Branch::Inc, true)
            }
        } else {
            // Alg. 1: rate ← rate · (1 − β · normalized_gradient), g = rtt_diff/minRTT
            self.hai_count = 0;
            // β·g in Q30: rtt_diff_q7 (0 < · < 2^31) · mul (< 2^32) < 2^63, rounded.
            let prod = self.rtt_diff_q7.unsigned_abs() as u64 * u64::from(cfg.beta_g_mul);
            let sh = cfg.beta_g_shift.min(63);
            let bg = if sh == 0 {
                prod
            } else {
                (prod >> sh) + ((prod >> (sh - 1)) & 1)
            };
            // bg ≥ 2^30 means a factor ≤ 0: rate goes to min_rate.
            let bg = i64::try_from(bg).unwrap_or(i64::MAX).min(2 * ONE_Q30);
            self.scale_factor(ONE_Q30 - bg, scale_q30);
            (Branch::Dec, false)
        };
        let mut limited = false;
        if grow {
            limited = self.app_limited(cfg, ev.sending_rate_bps);
            if !limited {
                // Alg. 1: rate ← rate + N·δ (N = hai_n in HAI mode, else 1). Saturating: rates.
                let n = if branch == Branch::Hai { cfg.hai_n } else { 1 };
                let step = u64::from(cfg.delta_u).saturating_mul(u64::from(n));
                // step < 2^64 / 2^30 is not guaranteed: saturate the product.
                let step = match scale_q30 {
                    None => step,
                    Some(s) => {
                        u64::try_from((u128::from(step) * u128::from(s)) >> 30).unwrap_or(u64::MAX)
                    }
                };
                let step = u32::try_from(step).unwrap_or(u32::MAX);
                self.rate_u = self.rate_u.saturating_add(step);
            }
        }
        // Finally clamp rate to [min_rate, max_rate].
        self.rate_u = self
            .rate_u
            .clamp(cfg.min_rate_u, cfg.max_rate_u.max(cfg.min_rate_u));
        self.update(branch, rtt_q4, limited)
    }

    fn update(&self, branch: Branch, rtt_q4: u64, app_limited: bool) -> Update {
        Update {
            rate_bps: self.rate_bps(),
            branch,
            rtt_q4,
            app_limited,
        }
    }

    /// §5 application-limited rule: an increase is allowed only if the flow sends at ≥ the
    /// configured fraction `num/den` of its target rate: `sending·den ≥ num·rate` (exact, u128).
    #[allow(clippy::arithmetic_side_effects)] // u64 · u32 < 2^96
    fn app_limited(&self, cfg: &Config, sending: Option<u64>) -> bool {
        match (sending, cfg.params.app_limited) {
            (Some(s), Some(r)) => {
                u128::from(s) * u128::from(r.den) < u128::from(r.num) * u128::from(self.rate_bps())
            }
            _ => false,
        }
    }

    /// §5 per-completion scaling `s = min(1, bytes·8/(rate·minRTT))` in Q30; `None` when off.
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // ranges beside each step
    fn scale_q30(&self, cfg: &Config, bytes: u32) -> Option<u32> {
        if cfg.scale_mul_q8 == 0 {
            return None;
        }
        // num = bytes · 8e9/(128·minRTT), Q8; s = num / rate_u.
        let num_q8 = u128::from(bytes) * u128::from(cfg.scale_mul_q8);
        let num = (num_q8 >> 8) as u64;
        let Some(rate) = NonZeroU32::new(self.rate_u) else {
            return Some(1 << 30);
        };
        if num >= u64::from(rate.get()) {
            return Some(1 << 30);
        }
        // num < rate < 2^32: RECIP gives num/rate within 1.5e-5 relative (cc-math).
        let s = cc_math::RECIP.recip(rate).mul_scaled(num as u32, 30);
        Some(s.min(1 << 30) as u32)
    }

    /// `rate ← rate · f` for a Q30 factor `f` (≤ 1), optionally scaled towards 1 by `s`:
    /// `f' = 1 − (1 − f)·s`. A factor ≤ 0 sets the rate to 0 (then clamped to `min_rate`).
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // ranges beside each step
    fn scale_factor(&mut self, f_q30: i64, scale_q30: Option<u32>) {
        // 1 − f ∈ [0, 2^31] here; · s (≤ 2^30) < 2^61.
        let f = match scale_q30 {
            None => f_q30,
            Some(s) => ONE_Q30 - (((ONE_Q30 - f_q30) * i64::from(s)) >> 30),
        };
        if f <= 0 {
            self.rate_u = 0;
            return;
        }
        // rate (< 2^32) · f (≤ 2^30) < 2^62, rounded to nearest; result ≤ rate.
        let r = (u64::from(self.rate_u) * f as u64 + (1 << 29)) >> 30;
        self.rate_u = u32::try_from(r).unwrap_or(u32::MAX);
    }
}

/// `num · 2^-16` rounded to nearest (ties away from zero), but a non-zero `num` never gives 0:
/// it gives one ulp with `num`'s sign (the EWMA's sign stays that of its exact value).
/// Saturates to `i32`.
#[allow(clippy::arithmetic_side_effects)] // |num| < 2^53: adding 2^15 cannot overflow
fn sign_preserving_round_q16(num: i64) -> i32 {
    let mag = (num.unsigned_abs() + (1 << 15)) >> 16;
    let mag = i32::try_from(mag)
        .unwrap_or(i32::MAX)
        .max(i32::from(num != 0));
    if num < 0 { -mag } else { mag }
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
    let m = u64::from(x32 << s); // normalised, bit 31 set: m/2^31 ∈ [1, 2)
    let r0 = u64::from(cc_math::RECIP.recip(x).mant_q31); // ≈ 2^62/m, in (2^30, 2^31]
    // Newton: e = m·r0 − 2^62 (m·r0 < 2^63); r1 = r0 − r0·e/2^62.
    let e = (m * r0) as i64 - (1i64 << 62); // |e| ≤ 2^62 · 1.6e-5 < 2^47
    let r1 = r0 as i64 - ((r0 as i64 * (e >> 20)) >> 42); // r0·(e>>20) < 2^31·2^27
    let r1 = r1.max(0) as u64;
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
