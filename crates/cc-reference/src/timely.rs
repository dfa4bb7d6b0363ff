//! The f64 reference of TIMELY, written from the paper (Mittal et al., SIGCOMM 2015, Algorithm 1,
//! §3 RTT engine, §5 rules) and the conventions of docs/timely.md § "Conventions" — deliberately
//! not from the fixed-point crate: Algorithm 1 in plain `f64`, no quantisation.
//!
//! The one integer step is the RTT measurement itself (docs/timely.md § "Conventions", "one exact
//! integer convention for both sides"): a NIC measures RTTs in whole units, so the reference
//! computes the same integer RTT in 1/16 ns as the firmware (in 128-bit integers, from the formula
//! on that page) and runs Algorithm 1 on `rtt_q4 / 16` ns. Equal RTTs are then equal on both sides
//! and the comparison tests the algorithm, not the rounding of its input.

/// Parameters in real numbers (names as `timely_cc::Params`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefParams {
    /// NIC line rate, b/s (an integer: the RTT convention divides by it exactly).
    pub line_rate_bps: u64,
    /// Rate floor, b/s.
    pub min_rate_bps: f64,
    /// Rate ceiling, b/s.
    pub max_rate_bps: f64,
    /// Initial rate, b/s.
    pub init_rate_bps: f64,
    /// T_low, ns.
    pub t_low_ns: f64,
    /// T_high, ns.
    pub t_high_ns: f64,
    /// minRTT, ns.
    pub min_rtt_ns: f64,
    /// EWMA weight α.
    pub alpha: f64,
    /// Multiplicative decrease β.
    pub beta: f64,
    /// Additive step δ, b/s.
    pub delta_bps: f64,
    /// HAI multiplier N.
    pub hai_n: f64,
    /// Completions with g ≤ 0 before HAI.
    pub hai_after: u64,
    /// §5 application-limited threshold (fraction of the target rate), if on.
    pub app_limited: Option<f64>,
    /// §5 per-completion scaling.
    pub per_completion_scaling: bool,
}

impl Default for RefParams {
    /// The paper's §6 defaults (docs/timely.md § "API").
    fn default() -> Self {
        Self {
            line_rate_bps: 10_000_000_000,
            min_rate_bps: 10e6,
            max_rate_bps: 10e9,
            init_rate_bps: 10e9,
            t_low_ns: 50_000.0,
            t_high_ns: 500_000.0,
            min_rtt_ns: 20_000.0,
            alpha: 0.875,
            beta: 0.8,
            delta_bps: 10e6,
            hai_n: 5.0,
            hai_after: 5,
            app_limited: None,
            per_completion_scaling: false,
        }
    }
}

/// Reference per-flow state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefState {
    /// Current rate, b/s.
    pub rate_bps: f64,
    /// Previous RTT sample, ns.
    pub prev_rtt_ns: f64,
    /// EWMA of RTT differences, ns.
    pub rtt_diff_ns: f64,
    /// Consecutive completions with g ≤ 0.
    pub hai_count: u64,
    /// A first valid sample has been seen.
    pub started: bool,
}

/// What one event did in the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefStep {
    /// Branch name: skip, init, low, high, hai, inc, dec.
    pub branch: &'static str,
    /// The RTT (ns), `None` for a rejected event.
    pub rtt_ns: Option<f64>,
}

/// The largest RTT, in 1/16 ns: `2^31 − 1` (≈ 134.2 ms); every longer one saturates here.
pub const RTT_MAX_Q4: i128 = (1 << 31) - 1;

/// §3: RTT = t_completion − t_send − seg. size / NIC line rate, with the exact integer
/// convention of docs/timely.md § "Conventions": `M = ⌊2^32·128·10^9 / line_rate⌋`, `ser_q4 =
/// ⌊bytes·M / 2^32⌋`, `rtt_q4 = clamp(16·(t_complete − t_send) − ser_q4, 0, 2^31 − 1)`. `None` when
/// `t_complete < t_send` (the event is rejected).
pub fn rtt_q4(line_rate_bps: u64, t_send_ns: u64, t_complete_ns: u64, bytes: u32) -> Option<u32> {
    if t_complete_ns < t_send_ns {
        return None;
    }
    let m = (128_000_000_000u128 << 32) / u128::from(line_rate_bps.max(1));
    let ser_q4 = (u128::from(bytes) * m) >> 32;
    let span_q4 = i128::from(t_complete_ns - t_send_ns) * 16;
    let rtt = (span_q4 - ser_q4 as i128).clamp(0, RTT_MAX_Q4);
    Some(rtt as u32)
}

impl RefState {
    /// A fresh flow.
    pub fn new(p: &RefParams) -> Self {
        Self {
            rate_bps: p.init_rate_bps,
            prev_rtt_ns: 0.0,
            rtt_diff_ns: 0.0,
            hai_count: 0,
            started: false,
        }
    }

    /// One completion: `(t_send, t_complete, bytes)`, with the flow's sending rate for the
    /// optional application-limited rule.
    pub fn on_completion(
        &mut self,
        p: &RefParams,
        t_send_ns: u64,
        t_complete_ns: u64,
        bytes: u32,
        sending_rate_bps: Option<f64>,
    ) -> RefStep {
        let Some(rtt_q4) = rtt_q4(p.line_rate_bps, t_send_ns, t_complete_ns, bytes) else {
            return RefStep {
                branch: "skip",
                rtt_ns: None,
            };
        };
        self.on_rtt(p, rtt_q4 as f64 / 16.0, bytes, sending_rate_bps)
    }

    /// One RTT sample (ns) through Algorithm 1 and the §5 rules: what
    /// [`on_completion`](Self::on_completion) does once it has measured the RTT, for callers
    /// that measure it otherwise (probe RTTs). `bytes` is the segment the sample is for (only
    /// per-completion scaling reads it).
    pub fn on_rtt(
        &mut self,
        p: &RefParams,
        rtt: f64,
        bytes: u32,
        sending_rate_bps: Option<f64>,
    ) -> RefStep {
        if !self.started {
            self.started = true;
            self.prev_rtt_ns = rtt;
            self.rtt_diff_ns = 0.0;
            return RefStep {
                branch: "init",
                rtt_ns: Some(rtt),
            };
        }
        // Algorithm 1.
        let new_rtt_diff = rtt - self.prev_rtt_ns;
        self.prev_rtt_ns = rtt;
        self.rtt_diff_ns = (1.0 - p.alpha) * self.rtt_diff_ns + p.alpha * new_rtt_diff;
        let gradient = self.rtt_diff_ns / p.min_rtt_ns;
        // §5: completions per minRTT = minRTT / (bytes·8/rate); scale changes by its inverse.
        let s = if p.per_completion_scaling {
            let seg_time_ns = f64::from(bytes) * 8.0 / self.rate_bps * 1e9;
            (seg_time_ns / p.min_rtt_ns).min(1.0)
        } else {
            1.0
        };
        // §5: increase only when the application sends at ≥ the threshold of the target rate.
        let may_grow = match (p.app_limited, sending_rate_bps) {
            (Some(th), Some(sr)) => sr >= th * self.rate_bps,
            _ => true,
        };
        let branch = if rtt < p.t_low_ns {
            if may_grow {
                self.rate_bps += s * p.delta_bps;
            }
            "low"
        } else if rtt > p.t_high_ns {
            self.hai_count = 0;
            let factor = 1.0 - p.beta * (1.0 - p.t_high_ns / rtt);
            self.rate_bps *= 1.0 - s * (1.0 - factor);
            "high"
        } else if gradient <= 0.0 {
            self.hai_count += 1;
            let n = if self.hai_count >= p.hai_after {
                p.hai_n
            } else {
                1.0
            };
            if may_grow {
                self.rate_bps += s * n * p.delta_bps;
            }
            if n > 1.0 { "hai" } else { "inc" }
        } else {
            self.hai_count = 0;
            let factor = 1.0 - p.beta * gradient;
            self.rate_bps *= 1.0 - s * (1.0 - factor);
            "dec"
        };
        // Clamp; a negative factor ends at min_rate.
        self.rate_bps = self.rate_bps.max(p.min_rate_bps).min(p.max_rate_bps);
        RefStep {
            branch,
            rtt_ns: Some(rtt),
        }
    }
}
