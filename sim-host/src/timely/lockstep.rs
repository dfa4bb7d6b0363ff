//! Drives the fixed-point crate (through its public API) and the f64 reference with the same
//! events, in free or forced mode.

use super::params::Both;
use super::reference::{RefParams, RefState};
use crate::opts::Mode;
use timely_cc::{Completion, Config, I60F68, RTT_SAT_Q4, RawParts, State, U28F4};

/// One event's outcome on both sides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepOut {
    /// The reference's RTT (ns); `None` for a rejected event.
    pub rtt_ns: Option<f64>,
    /// Reference rate after the event, b/s.
    pub rate_ref_bps: f64,
    /// Fixed-point rate after the event, b/s.
    pub rate_fixed_bps: u64,
    /// Reference branch.
    pub branch_ref: &'static str,
    /// Fixed-point branch.
    pub branch_fixed: &'static str,
    /// The one-step result of a fixed state re-seeded from the reference before this event
    /// (equal to the fixed result in forced mode): the per-step error without history.
    pub forced_rate_bps: u64,
    /// The branch of that one-step result.
    pub forced_branch: &'static str,
}

/// Both sides of one flow.
#[derive(Debug, Clone)]
pub struct Lockstep {
    cfg: Config,
    rp: RefParams,
    mode: Mode,
    reference: RefState,
    fixed: State,
    prev_t_send: Option<u64>,
}

/// The reference state quantised into the firmware's raw formats (what forced mode re-seeds
/// with): rate to units of 128 b/s, `prev_rtt` to `Q27.4` ns (exact: both sides measure the
/// same integer RTT), `rtt_diff` to `Q27.68` ns (clamped to the format's range), counter
/// saturated at 255. A non-zero `rtt_diff` that rounds to 0 becomes a residual: its sign, and
/// the number of further identical samples for which the reference's gradient stays non-zero
/// (counted by running the reference's own f64 decay).
pub fn quantise(r: &RefState, rp: &RefParams) -> State {
    let rate_u = (r.rate_bps / 128.0).round().clamp(0.0, f64::from(u32::MAX)) as u32;
    let prev = (r.prev_rtt_ns * 16.0)
        .round()
        .clamp(0.0, f64::from(RTT_SAT_Q4)) as u32;
    let lim = f64::from(RTT_SAT_Q4) * 2f64.powi(64);
    let d = (r.rtt_diff_ns * 2f64.powi(68)).round().clamp(-lim, lim);
    let residual = if d == 0.0 && r.rtt_diff_ns != 0.0 {
        let mut x = r.rtt_diff_ns;
        let mut j = 0i16;
        while j < i16::MAX {
            x = (1.0 - rp.alpha) * x + rp.alpha * 0.0;
            if x / rp.min_rtt_ns == 0.0 {
                break;
            }
            j += 1;
        }
        if r.rtt_diff_ns > 0.0 { j } else { -j }
    } else {
        0
    };
    State::from_raw(RawParts {
        rate_u128bps: rate_u,
        prev_rtt_ns: U28F4::from_bits(prev),
        rtt_diff_ns: I60F68::from_bits(d as i128),
        residual,
        hai_count: r.hai_count.min(255) as u8,
        started: r.started,
    })
}

impl Lockstep {
    /// Both sides at their initial state.
    pub fn new(both: &Both, mode: Mode) -> Self {
        Self {
            cfg: both.cfg,
            rp: both.reference,
            mode,
            reference: RefState::new(&both.reference),
            fixed: State::new(&both.cfg),
            prev_t_send: None,
        }
    }

    /// The reference state.
    pub fn reference(&self) -> &RefState {
        &self.reference
    }

    /// The fixed-point state.
    pub fn fixed(&self) -> &State {
        &self.fixed
    }

    /// Feeds one completion to both sides.
    pub fn step(&mut self, t_send_ns: u64, t_complete_ns: u64, bytes: u32) -> StepOut {
        // The flow's sending rate, for the optional application-limited rule: this segment
        // over the gap since the previous send, in whole b/s (the unit the crate's API takes;
        // both sides get the same measurement, so a rate within half a b/s of the threshold
        // cannot send them different ways).
        let sending = match self.prev_t_send {
            Some(prev) if t_send_ns > prev => {
                Some((f64::from(bytes) * 8e9 / (t_send_ns - prev) as f64).round())
            }
            _ => None,
        };
        self.prev_t_send = Some(t_send_ns);
        let ev = Completion {
            t_send_ns,
            t_complete_ns,
            bytes,
            sending_rate_bps: sending.map(|s| s as u64),
        };
        // One step from the reference's pre-event state (the forced-mode step).
        let mut shadow = quantise(&self.reference, &self.rp);
        let forced = shadow.on_completion(&self.cfg, &ev);
        let r = self
            .reference
            .on_completion(&self.rp, t_send_ns, t_complete_ns, bytes, sending);
        let fixed = match self.mode {
            Mode::Free => self.fixed.on_completion(&self.cfg, &ev),
            Mode::Forced => {
                self.fixed = shadow;
                forced
            }
        };
        StepOut {
            rtt_ns: r.rtt_ns,
            rate_ref_bps: self.reference.rate_bps,
            rate_fixed_bps: fixed.rate_bps,
            branch_ref: r.branch,
            branch_fixed: fixed.branch.name(),
            forced_rate_bps: forced.rate_bps,
            forced_branch: forced.branch.name(),
        }
    }
}
