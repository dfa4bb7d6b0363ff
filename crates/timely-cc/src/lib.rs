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
//! | rate | `u32`, units of 128 b/s | 0 ..≈ 549.7 Gb/s | 128 b/s (1.3e-5 of 10 Mb/s) | clamped to `[min, max]`; increases saturate |
//! | RTT (stored `prev_rtt`, branch tests) | `u32` `Q26.4` ns | 0 .. 67.1 ms | 1/16 ns | saturates at 67.1 ms, above any valid `T_high`; the `T_high` ratio uses the unsaturated `u64` value |
//! | `rtt_diff` (EWMA) | `i32` `Q26.4` ns | ±67.1 ms (the RTT's range: never saturates) | 1/16 ns | a non-zero value below the resolution is kept as a residual (below) |
//! | `α` | `Q0.32` | `[1/16, 1]` | 2^-32 | 1 is stored as `1 − 2^-32`, which rounds to the exact result |
//! | `β·g` | `Q0.32` via a normalised mantissa | `[0, 1)`; `≥ 1` → `min_rate` | ≤ 2^-31 | — |
//! | HAI counter | `u8` | 0..255 | 1 | saturates at 255 (`hai_after ≤ 255`, so `count ≥ hai_after` is unchanged) |
//! | residual counter | `i16` | ±32 767 | 1 event | — |
//!
//! # The EWMA of identical RTTs
//! After a run of equal RTTs, `rtt_diff` decays by `(1 − α)` per event. Real arithmetic keeps
//! a vanishing positive (or negative) gradient for ever; the f64 reference keeps it until `g`
//! underflows below 2^-1075 (≈ 351 events after it drops below 1/32 ns at the defaults), then
//! takes the increase branches. The EWMA here is exact before rounding; when the result is
//! non-zero but rounds to 0 (or, for α < 1/2, when a hold stops decaying), `rtt_diff` is set to
//! 0 and a residual counter keeps its sign for as many further identical samples as the f64
//! gradient needs to underflow from that magnitude (computed from α and minRTT in [`Config`]).
//! The residual steers the branch only: `rtt_diff = 0` makes the `dec` factor exactly 1.
//! docs/timely.md measures the agreement.
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
/// RTT in `Q26.4` ns (≤ [`config::RTT_SAT_Q4`]), `rtt_diff` in `Q26.4` ns (|·| ≤ `RTT_SAT_Q4`),
/// the residual counter, the HAI counter, whether a first sample was seen.
///
/// The residual counter (`i16`) is non-zero only while `rtt_diff` is 0 but the exact EWMA is
/// not: its sign is the EWMA's sign, its magnitude the number of further identical samples
/// for which an f64 implementation still sees a non-zero gradient (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct State {
    rate_u: u32,
    prev_rtt_q4: u32,
    rtt_diff_q4: i32,
    resid: i16,
    hai_count: u8,
    /// 0 before the first valid sample, 1 after (a `u8`, not a `bool`: the fast path tests it
    /// with one load and one branch).
    started: u8,
}

/// RTT spans below this (ns) take the 32-bit path: `dt·16 < 2^30` fits the stored format.
const FAST_DT_NS: u64 = 1 << 26;
const DIFF_MAX_Q4: i32 = RTT_SAT_Q4 as i32;

/// `x·y >> 32` (`mulhu`).
#[inline(always)]
#[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // u32·u32 < 2^64; >> 32 fits u32
const fn mulhu(x: u32, y: u32) -> u32 {
    ((x as u64 * y as u64) >> 32) as u32
}

/// Alg. 1's final clamp of the rate to `[min_rate, max_rate]` (`min ≤ max` by construction).
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

/// `clamp(rate + step)` with `rate + step` saturating (as the general path computes it), with
/// one range test when no clamp and no saturation can occur (`config::IncRange`).
#[inline(always)]
#[allow(clippy::arithmetic_side_effects)] // inside the range, rate + step ≤ max (IncRange)
const fn increase(cfg: &Config, rate: u32, range: config::IncRange, step: u32) -> u32 {
    if rate.wrapping_sub(range.lo) < range.span {
        rate + step
    } else {
        clamp(cfg, rate.saturating_add(step))
    }
}

/// `round(rate·cut / 2^32)` subtracted from `rate` (`cut < 2^32`, so the result is ≥ 0).
#[inline(always)]
#[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // product < 2^64; result ≤ rate
const fn cut_rate(rate: u32, cut_q32: u32) -> u32 {
    let p = rate as u64 * cut_q32 as u64;
    rate - ((p + (1 << 31)) >> 32) as u32
}

impl State {
    /// A flow at `init_rate`, before its first completion.
    #[must_use]
    pub const fn new(cfg: &Config) -> Self {
        Self {
            rate_u: cfg.init_rate_u,
            prev_rtt_q4: 0,
            rtt_diff_q4: 0,
            resid: 0,
            hai_count: 0,
            started: 0,
        }
    }

    /// A state from its raw parts (see the type's documentation for the formats). `prev_rtt_q4`
    /// is clamped to `RTT_SAT_Q4` and `rtt_diff_q4` to `±RTT_SAT_Q4` (the per-event arithmetic
    /// relies on those ranges); the rate is not clamped: the next event clamps it.
    #[must_use]
    pub const fn from_raw(
        rate_u128bps: u32,
        prev_rtt_q4: u32,
        rtt_diff_q4: i32,
        resid: i16,
        hai_count: u8,
        started: bool,
    ) -> Self {
        Self {
            rate_u: rate_u128bps,
            prev_rtt_q4: if prev_rtt_q4 > RTT_SAT_Q4 {
                RTT_SAT_Q4
            } else {
                prev_rtt_q4
            },
            rtt_diff_q4: if rtt_diff_q4 > DIFF_MAX_Q4 {
                DIFF_MAX_Q4
            } else if rtt_diff_q4 < -DIFF_MAX_Q4 {
                -DIFF_MAX_Q4
            } else {
                rtt_diff_q4
            },
            resid,
            hai_count,
            started: started as u8,
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
    /// Previous RTT, `Q26.4` ns.
    #[must_use]
    pub const fn prev_rtt_q4(&self) -> u32 {
        self.prev_rtt_q4
    }
    /// EWMA of RTT differences, `Q26.4` ns.
    #[must_use]
    pub const fn rtt_diff_q4(&self) -> i32 {
        self.rtt_diff_q4
    }
    /// Residual counter: sign of a sub-resolution EWMA and the identical samples it has left.
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
        self.started != 0
    }

    /// The RTT of a completion in `Q.4` ns (§3): `t_complete − t_send − bytes·8/line_rate`,
    /// clamped at 0; `None` when `t_complete < t_send`. The serialisation delay is truncated to
    /// 1/16 ns (so the RTT is at most 1/16 ns above the exact value).
    #[must_use]
    #[allow(clippy::arithmetic_side_effects)] // products < 2^64 (u32·u32); subtraction saturating
    pub fn rtt_q4(cfg: &Config, ev: &Completion) -> Option<u64> {
        // §3: RTT = t_completion − t_send − seg. size / NIC line rate
        let dt_ns = ev.t_complete_ns.checked_sub(ev.t_send_ns)?;
        // Saturating: a span above 2^60 ns (36 years) is not a real RTT; it stays "huge".
        let dt_q4 = dt_ns.saturating_mul(1 << RTT_FRAC_BITS);
        let b = u64::from(ev.bytes);
        let ser_q4 = b * u64::from(cfg.ser_int) + ((b * u64::from(cfg.ser_frac)) >> 32);
        // Clamped at 0 (a completion faster than its own serialisation).
        Some(dt_q4.saturating_sub(ser_q4))
    }

    /// The 32-bit RTT engine for spans below 2^26 ns (67 ms); the same value as
    /// [`rtt_q4`](Self::rtt_q4).
    #[inline(always)]
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // ranges beside each step
    fn rtt_q4_fast(cfg: &Config, dt_ns: u64, bytes: u32) -> u32 {
        let dt_q4 = (dt_ns as u32) << RTT_FRAC_BITS; // dt < 2^26: < 2^30
        // bytes ≤ ser_max_bytes: bytes·(ser_int + 1) < 2^32. A larger segment serialises for
        // ≥ 2^30 Q4 (config.rs), more than dt: the RTT is 0 either way.
        let b = if bytes > cfg.ser_max_bytes {
            cfg.ser_max_bytes
        } else {
            bytes
        };
        let ser_q4 = b * cfg.ser_int + mulhu(b, cfg.ser_frac);
        dt_q4.saturating_sub(ser_q4)
    }

    /// Feeds one completion through the RTT engine and Algorithm 1; returns the new rate and the
    /// branch. Division-free, panic-free; 32-bit arithmetic except on the `T_high` branch, for
    /// RTT spans ≥ 67 ms and for the optional §5 rules.
    ///
    /// Two implementations of the same semantics: a call-free fast path (inlined,
    /// [`on_completion_fast`](Self::on_completion_fast)) for the common events — RTT span
    /// < 67 ms, `low`/`inc`/`hai`/`dec`, no optional rule, no residual to start — which changes
    /// nothing when it declines, and the general path
    /// ([`on_completion_general`](Self::on_completion_general)) for the rest (the tests check
    /// that both give identical results and states).
    #[inline(always)]
    pub fn on_completion(&mut self, cfg: &Config, ev: &Completion) -> Update {
        match self.on_completion_fast(cfg, ev) {
            Some(u) => u,
            None => self.general_from_parts(
                cfg,
                ev.t_send_ns,
                ev.t_complete_ns,
                ev.bytes,
                ev.sending_rate_bps,
            ),
        }
    }

    /// The general path from the event's fields (so that a caller holding them in registers
    /// does not build the event in memory on the fast path).
    #[cold]
    #[inline(never)]
    fn general_from_parts(
        &mut self,
        cfg: &Config,
        t_send_ns: u64,
        t_complete_ns: u64,
        bytes: u32,
        sending_rate_bps: Option<u64>,
    ) -> Update {
        self.on_completion_general(
            cfg,
            &Completion {
                t_send_ns,
                t_complete_ns,
                bytes,
                sending_rate_bps,
            },
        )
    }

    /// The fast path of [`on_completion`](Self::on_completion) alone (inlined, no calls):
    /// `Some` with exactly what `on_completion` returns, or `None` — state untouched — when the
    /// event needs [`on_completion_general`](Self::on_completion_general). For wrappers that
    /// want the general path out of line (e.g. as a tail call, so the fast path keeps no stack
    /// frame).
    #[inline(always)]
    pub fn on_completion_fast(&mut self, cfg: &Config, ev: &Completion) -> Option<Update> {
        let dt_ns = ev.t_complete_ns.wrapping_sub(ev.t_send_ns);
        if dt_ns >= FAST_DT_NS {
            return None;
        }
        // dt < 2^26 ns: the RTT is < 2^30 (Q4), within the stored format.
        self.rtt_fast(cfg, Self::rtt_q4_fast(cfg, dt_ns, ev.bytes))
    }

    /// The rate computation engine (§3) on its own, for firmware that measured the RTT itself
    /// (a NIC that reports it, or an RX path that computed it): Algorithm 1 for one RTT sample
    /// `rtt_q4` in `Q.4` ns (serialisation delay already removed, as [`rtt_q4`](Self::rtt_q4)
    /// computes it). `bytes` (segment size) is used only by per-completion scaling and
    /// `sending_rate_bps` only by the application-limited rule (§5). Never returns
    /// [`Branch::Skip`]. `on_completion(ev)` is exactly `on_rtt(rtt_q4(ev), ev.bytes,
    /// ev.sending_rate_bps)` for every event that is not skipped: both run the same code.
    #[inline(always)]
    pub fn on_rtt(
        &mut self,
        cfg: &Config,
        rtt_q4: u64,
        bytes: u32,
        sending_rate_bps: Option<u64>,
    ) -> Update {
        match self.on_rtt_fast(cfg, rtt_q4) {
            Some(u) => u,
            None => self.on_rtt_general(cfg, rtt_q4, bytes, sending_rate_bps),
        }
    }

    /// The fast path of [`on_rtt`](Self::on_rtt) alone: `None` (state untouched) when the
    /// sample needs [`on_rtt_general`](Self::on_rtt_general).
    #[inline(always)]
    pub fn on_rtt_fast(&mut self, cfg: &Config, rtt_q4: u64) -> Option<Update> {
        // ≥ 2^32: above any T_high, general path.
        let rtt = u32::try_from(rtt_q4).ok()?;
        self.rtt_fast(cfg, rtt)
    }

    /// The shared fast path: Algorithm 1 for `low`/`inc`/`hai`/`dec` without an optional rule
    /// or a residual to start; `None` (state untouched) otherwise.
    #[inline(always)]
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // as in the general path
    fn rtt_fast(&mut self, cfg: &Config, rtt: u32) -> Option<Update> {
        // fast_lim_q4 = min(T_high, RTT_SAT) + 1, or 0 (never) when an optional rule is on:
        // one compare for "not T_high, within the stored format, no optional rule".
        if rtt >= cfg.fast_lim_q4 || self.started == 0 {
            return None;
        }
        // Alg. 1: new_rtt_diff = new_rtt − prev_rtt; rtt_diff = d + α·(new_rtt_diff − d)
        let nd = rtt as i32 - self.prev_rtt_q4 as i32;
        let d = self.rtt_diff_q4;
        let s = (i64::from(d) << 32) + i64::from(nd - d) * i64::from(cfg.alpha_q32);
        let mut d_new = ((s + (1 << 31)) >> 32) as i32;
        let (r_new, g_sign) = if nd != 0 {
            if d_new == 0 && s != 0 {
                return None; // sub-ulp residual
            }
            (0, d_new)
        } else {
            // Identical RTT: as `hold`, without starting a countdown.
            let r = self.resid;
            if r == 0 {
                if d != 0 {
                    return None; // first identical sample: the countdown starts (general path)
                }
                (0, 0)
            } else {
                if d_new == d || r.unsigned_abs() <= 1 {
                    d_new = 0;
                }
                let sign = if d_new != 0 {
                    d_new
                } else {
                    i32::from(r.signum())
                };
                (r - r.signum(), sign)
            }
        };
        self.prev_rtt_q4 = rtt;
        self.rtt_diff_q4 = d_new;
        self.resid = r_new;
        let branch = if rtt < cfg.t_low_q4 {
            // Alg. 1: rate ← rate + δ (HAI counter untouched)
            self.rate_u = increase(cfg, self.rate_u, cfg.inc, cfg.delta_u);
            Branch::Low
        } else if g_sign <= 0 {
            // Saturating at 255 as in the general path: c ≤ 256, c − (c >> 8) ≤ 255.
            let c = u32::from(self.hai_count) + 1;
            self.hai_count = (c - (c >> 8)) as u8;
            // c is the count before saturation (≤ 256); hai_from ≤ 255 or 257 (never): the
            // same answer as the saturated count (regression test in proptest-regressions).
            if c >= cfg.hai_from {
                // Alg. 1: rate ← rate + N·δ
                self.rate_u = increase(cfg, self.rate_u, cfg.hai, cfg.delta_hai_u);
                Branch::Hai
            } else {
                self.rate_u = increase(cfg, self.rate_u, cfg.inc, cfg.delta_u);
                Branch::Inc
            }
        } else {
            // Alg. 1: rate ← rate·(1 − β·g)
            self.hai_count = 0;
            let du = d_new.unsigned_abs();
            let r = if du >= cfg.dthr_q4 {
                0
            } else {
                cut_rate(
                    self.rate_u,
                    mulhu(du.wrapping_shl(cfg.bg_shift), cfg.bg_mul) << 1,
                )
            };
            // Finally clamp rate to [min_rate, max_rate]: one compare when inside.
            self.rate_u = if r.wrapping_sub(cfg.min_rate_u) < cfg.rate_span {
                r
            } else {
                clamp(cfg, r)
            };
            Branch::Dec
        };
        Some(Update {
            rate_bps: self.rate_bps(),
            branch,
            rtt_q4: u64::from(rtt),
            app_limited: false,
        })
    }

    /// The general path: every event (the reference implementation of the fast path).
    #[inline(never)]
    pub fn on_completion_general(&mut self, cfg: &Config, ev: &Completion) -> Update {
        let dt_ns = ev.t_complete_ns.wrapping_sub(ev.t_send_ns);
        let rtt_q4 = if dt_ns < FAST_DT_NS {
            u64::from(Self::rtt_q4_fast(cfg, dt_ns, ev.bytes))
        } else {
            match Self::rtt_q4(cfg, ev) {
                None => return self.skip(),
                Some(r) => r,
            }
        };
        self.on_rtt_general(cfg, rtt_q4, ev.bytes, ev.sending_rate_bps)
    }

    /// The general path of [`on_rtt`](Self::on_rtt) (and of
    /// [`on_completion_general`](Self::on_completion_general) after the RTT engine): every
    /// sample.
    #[inline(never)]
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // each operation's range is stated beside it
    pub fn on_rtt_general(
        &mut self,
        cfg: &Config,
        rtt_q4: u64,
        bytes: u32,
        sending_rate_bps: Option<u64>,
    ) -> Update {
        // Stored RTT: saturated at 67 ms; `rtt_q4` itself is reported and used for `T_high`.
        let rtt = u32::try_from(rtt_q4).unwrap_or(u32::MAX).min(RTT_SAT_Q4);
        if self.started == 0 {
            // Issue convention: first sample sets prev_rtt, rtt_diff = 0, rate unchanged.
            return self.init(rtt, rtt_q4);
        }
        // Alg. 1: new_rtt_diff = new_rtt − prev_rtt ; prev_rtt = new_rtt
        // Both in [0, 2^30): the difference fits i32.
        let nd = rtt as i32 - self.prev_rtt_q4 as i32;
        self.prev_rtt_q4 = rtt;
        // Alg. 1: rtt_diff = (1 − α)·rtt_diff + α·new_rtt_diff = d + α·(nd − d), exactly in
        // S = d·2^32 + α_q32·(nd − d) (|d|, |nd| < 2^30: |nd − d| < 2^31, |S| < 2^62), then
        // rounded to Q4 (half up). The result is a convex combination: |d'| < 2^30.
        // g = rtt_diff/minRTT has the sign of rtt_diff (minRTT > 0), or of the residual.
        let g_sign = if nd == 0 {
            self.hold(cfg)
        } else {
            let d = self.rtt_diff_q4;
            let s = (i64::from(d) << 32) + i64::from(nd - d) * i64::from(cfg.alpha_q32);
            let d_new = ((s + (1 << 31)) >> 32) as i32;
            self.rtt_diff_q4 = d_new;
            self.resid = 0;
            if d_new == 0 && s != 0 {
                self.sub_ulp(cfg, s)
            } else {
                d_new
            }
        };

        let (branch, app_limited) = if rtt < cfg.t_low_q4 {
            // Alg. 1: if new_rtt < T_low: rate ← rate + δ   (HAI counter untouched)
            (
                Branch::Low,
                self.grow(cfg, cfg.delta_u, bytes, sending_rate_bps),
            )
        } else if rtt > cfg.t_high_q4 {
            // Alg. 1: if new_rtt > T_high: rate ← rate · (1 − β·(1 − T_high/new_rtt))
            self.hai_count = 0;
            self.high(cfg, rtt_q4, bytes);
            (Branch::High, false)
        } else if g_sign <= 0 {
            // Alg. 1: normalized_gradient ≤ 0: N = hai_n after hai_after such events, else 1.
            // Saturating: the counter only needs to know "≥ hai_after (≤ 255)".
            self.hai_count = self.hai_count.saturating_add(1);
            if u32::from(self.hai_count) >= cfg.hai_from {
                // Alg. 1: rate ← rate + N·δ
                (
                    Branch::Hai,
                    self.grow(cfg, cfg.delta_hai_u, bytes, sending_rate_bps),
                )
            } else {
                (
                    Branch::Inc,
                    self.grow(cfg, cfg.delta_u, bytes, sending_rate_bps),
                )
            }
        } else {
            // Alg. 1: rate ← rate · (1 − β · normalized_gradient)
            self.hai_count = 0;
            self.dec(cfg, self.rtt_diff_q4, bytes);
            (Branch::Dec, false)
        };
        // Finally clamp rate to [min_rate, max_rate] (min ≤ max by construction).
        self.rate_u = clamp(cfg, self.rate_u);
        Update {
            rate_bps: self.rate_bps(),
            branch,
            rtt_q4,
            app_limited,
        }
    }

    #[cold]
    #[inline(never)]
    fn skip(&self) -> Update {
        Update {
            rate_bps: self.rate_bps(),
            branch: Branch::Skip,
            rtt_q4: 0,
            app_limited: false,
        }
    }

    #[cold]
    #[inline(never)]
    fn init(&mut self, rtt: u32, rtt_q4: u64) -> Update {
        self.started = 1;
        self.prev_rtt_q4 = rtt;
        self.rtt_diff_q4 = 0;
        self.resid = 0;
        Update {
            rate_bps: self.rate_bps(),
            branch: Branch::Init,
            rtt_q4,
            app_limited: false,
        }
    }

    /// Alg. 1's EWMA for an identical RTT (`new_rtt_diff = 0`): `rtt_diff ← (1 − α)·rtt_diff`,
    /// plus the residual countdown. At the first such sample the countdown is set to the number
    /// of identical samples for which an f64 implementation still sees `g ≠ 0` (from the
    /// current `rtt_diff`, where its relative precision is best); `rtt_diff` keeps decaying and
    /// steering the rate, and once it rounds to 0 (or stalls: α < 1/2) only the countdown's sign
    /// remains, with no effect on the rate. Returns the sign of `g`.
    #[inline(never)]
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // |d| < 2^30: |S| < 2^62; countdown toward 0
    fn hold(&mut self, cfg: &Config) -> i32 {
        let d = self.rtt_diff_q4;
        let mut r = self.resid;
        if r == 0 {
            if d == 0 {
                return 0; // exactly 0: g = 0
            }
            let h = Self::residual_events(cfg, u64::from(d.unsigned_abs()), 0);
            r = if d > 0 { h } else { -h };
        }
        // (1 − α)·d = d − α·d, rounded half up.
        let s = (i64::from(d) << 32) - i64::from(d) * i64::from(cfg.alpha_q32);
        let mut d_new = ((s + (1 << 31)) >> 32) as i32;
        if d_new == d || r.unsigned_abs() <= 1 {
            // Stalled (α < 1/2: the decay rounds back), or the f64 gradient flushes after this
            // sample: the rest is a residual (the sign this time, then 0).
            d_new = 0;
        }
        self.rtt_diff_q4 = d_new;
        self.resid = r - r.signum();
        if d_new != 0 {
            d_new
        } else {
            i32::from(r.signum())
        }
    }

    /// A non-zero EWMA that rounded to 0 outside a hold (`|S| < 2^31`, e.g. `α·new_diff` below
    /// half an ulp): keep its sign, and as a countdown the identical samples an f64
    /// implementation would need to flush it.
    #[cold]
    #[inline(never)]
    #[allow(clippy::arithmetic_side_effects)] // 0 ≤ j ≤ i16::MAX: −j fits
    fn sub_ulp(&mut self, cfg: &Config, s: i64) -> i32 {
        let j = Self::residual_events(cfg, s.unsigned_abs(), 32);
        self.resid = if s > 0 { j } else { -j };
        if s > 0 { 1 } else { -1 }
    }

    /// Identical samples for which an f64 EWMA of magnitude `mag·2^-(4+frac)` ns (before the
    /// first of them) keeps a non-zero gradient: the `k ≥ 1` with `g0·(1−α)^k > 2^-1075`,
    /// i.e. `k < (log2 mag − frac + C)/L` with `C = 1075 − 4 − log2 minRTT` and
    /// `L = log2(1/(1−α))` from the config; 0 when `α = 1`; capped at `i16::MAX`.
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // x < 2^27, inv_l < 2^32: < 2^59
    fn residual_events(cfg: &Config, mag: u64, frac: u32) -> i16 {
        let x =
            i64::from(config::log2_q16(mag)) - (i64::from(frac) << 16) + i64::from(cfg.resid_c_q16);
        if x <= 0 || cfg.resid_inv_l == 0 {
            return 0;
        }
        // ceil(x·inv_l / 2^32) − 1
        let q = ((x as u64) * u64::from(cfg.resid_inv_l)).div_ceil(1 << 32);
        q.saturating_sub(1).min(i16::MAX as u64) as i16
    }

    /// `rate += step` (saturating: rates), unless an optional §5 rule changes it; returns
    /// whether the application-limited rule suppressed it.
    #[inline(always)]
    #[allow(clippy::arithmetic_side_effects)] // saturating
    fn grow(&mut self, cfg: &Config, step: u32, bytes: u32, sending_rate_bps: Option<u64>) -> bool {
        if cfg.optional {
            return self.grow_optional(cfg, step, bytes, sending_rate_bps);
        }
        self.rate_u = self.rate_u.saturating_add(step);
        false
    }

    #[cold]
    #[inline(never)]
    #[allow(clippy::arithmetic_side_effects)] // u64 · u32 < 2^96 in u128
    fn grow_optional(
        &mut self,
        cfg: &Config,
        step: u32,
        bytes: u32,
        sending_rate_bps: Option<u64>,
    ) -> bool {
        if let (Some(s), Some(r)) = (sending_rate_bps, cfg.params.app_limited) {
            // §5: increase only if sending·den ≥ num·rate (exact in u128).
            if u128::from(s) * u128::from(r.den) < u128::from(r.num) * u128::from(self.rate_bps()) {
                return true;
            }
        }
        let step = match self.scale_q30(cfg, bytes) {
            None => step,
            // step · s (≤ 2^30) < 2^62, back to units: ≤ step.
            Some(s) => u32::try_from((u64::from(step) * u64::from(s)) >> 30).unwrap_or(u32::MAX),
        };
        self.rate_u = self.rate_u.saturating_add(step);
        false
    }

    /// Alg. 1 `rate ← rate·(1 − β·g)` for `0 ≤ d < 2^30` (Q4 ns), `g = d/minRTT`.
    #[inline(always)]
    #[allow(clippy::arithmetic_side_effects)] // ranges beside each step
    fn dec(&mut self, cfg: &Config, d: i32, bytes: u32) {
        if cfg.scale_mul_q8 != 0 {
            return self.dec_scaled(cfg, d, bytes);
        }
        let d = d.unsigned_abs();
        self.rate_u = if d >= cfg.dthr_q4 {
            // β·g ≥ 1: the factor is ≤ 0, the rate goes to min_rate.
            0
        } else {
            // β·g in Q32: d << bg_shift < 2^32; mulhu < 2^31, so << 1 fits.
            let bg = mulhu(d.wrapping_shl(cfg.bg_shift), cfg.bg_mul) << 1;
            cut_rate(self.rate_u, bg)
        };
    }

    /// Per-completion scaling (§5) of the gradient decrease: the cut `s·β·g` is formed in full
    /// width before anything is clamped, so `s·β·g ≥ 1` reaches `min_rate` as in the reference.
    #[cold]
    #[inline(never)]
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // u128 ranges beside each step
    fn dec_scaled(&mut self, cfg: &Config, d: i32, bytes: u32) {
        let s = self.scale_q30(cfg, bytes).unwrap_or(1 << 30);
        // β·g in Q32, unclamped: (d << bg_shift)·bg_mul·2 / 2^32 (d < 2^30, shift ≤ 31: < 2^93).
        let bg = ((u128::from(d.unsigned_abs()) << cfg.bg_shift) * u128::from(cfg.bg_mul)) >> 31;
        let cut = (bg * u128::from(s)) >> 30;
        self.apply_cut(cut);
    }

    /// `rate ← rate·(1 − cut)` for a Q32 cut of any size (≥ 1: rate 0, then `min_rate`).
    #[allow(clippy::cast_possible_truncation)] // cut < 2^32 checked
    fn apply_cut(&mut self, cut_q32: u128) {
        self.rate_u = if cut_q32 >= 1 << 32 {
            0
        } else {
            cut_rate(self.rate_u, cut_q32 as u32)
        };
    }

    /// Alg. 1 `T_high` branch: `rate ← rate·(1 − β·(1 − T_high/rtt))` (`rtt > T_high`, full
    /// width), optionally scaled (§5).
    #[cold]
    #[inline(never)]
    #[allow(clippy::arithmetic_side_effects)] // u128 ranges beside each step
    fn high(&mut self, cfg: &Config, rtt_q4: u64, bytes: u32) {
        let ratio_q30 = ratio_q30(cfg.t_high_q4, rtt_q4); // T_high/rtt < 1, in Q30
        // β (Q31, ≤ 2^31) · (1 − ratio) (Q30, ≤ 2^30) → Q61; to Q32.
        let cut =
            (u128::from(cfg.beta_q31) * u128::from((1u32 << 30) - ratio_q30.min(1 << 30))) >> 29;
        let cut = match self.scale_q30(cfg, bytes) {
            None => cut,
            Some(s) => (cut * u128::from(s)) >> 30,
        };
        self.apply_cut(cut);
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
