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
    memo: DecayMemo,
}

/// The reference state quantised into the firmware's raw formats (what forced mode re-seeds
/// with): rate to units of 128 b/s, `prev_rtt` to `Q27.4` ns (exact: both sides measure the
/// same integer RTT), `rtt_diff` to `Q27.68` ns (clamped to the format's range), counter
/// saturated at 255. A non-zero `rtt_diff` that rounds to 0 becomes a residual: its sign, and
/// the number of further identical samples for which the reference's gradient stays non-zero
/// (counted by running the reference's own f64 decay, [`decay_steps`]).
pub fn quantise(r: &RefState, rp: &RefParams) -> State {
    quantise_with(r, rp, &mut DecayMemo::default())
}

/// [`quantise`], with the residual's count taken from `memo` when the reference's `rtt_diff`
/// is the one decay step after the last one counted (identical RTT samples): the same state,
/// bit for bit, without re-running the decay.
fn quantise_with(r: &RefState, rp: &RefParams, memo: &mut DecayMemo) -> State {
    let rate_u = round(r.rate_bps / 128.0).clamp(0.0, f64::from(u32::MAX)) as u32;
    let prev = round(r.prev_rtt_ns * 16.0).clamp(0.0, f64::from(RTT_SAT_Q4)) as u32;
    let lim = f64::from(RTT_SAT_Q4) * 2f64.powi(64);
    let d = round(r.rtt_diff_ns * 2f64.powi(68)).clamp(-lim, lim);
    let residual = if d == 0.0 && r.rtt_diff_ns != 0.0 {
        let j = memo.steps(r.rtt_diff_ns, rp);
        if r.rtt_diff_ns > 0.0 { j } else { -j }
    } else {
        0
    };
    State::from_raw_parts(RawParts {
        rate_u128bps: rate_u,
        prev_rtt_ns: U28F4::from_bits(prev),
        rtt_diff_ns: I60F68::from_bits(d as i128),
        residual,
        hai_count: r.hai_count.min(255) as u8,
        started: r.started,
    })
}

/// `x.round()` (half away from zero) without the library call `f64::round` makes on baseline
/// x86-64, called four times per event here. The same value for every `x`, except that a zero
/// result is +0 (each use clamps, converts or compares it, where −0 and +0 are the same).
fn round(x: f64) -> f64 {
    // Every f64 of magnitude 2^52 or more is a whole number (as are ±∞; NaN stays NaN).
    if x.abs() >= 4_503_599_627_370_496.0 || x.is_nan() {
        return x;
    }
    let t = x as i64 as f64; // x truncated: exact below 2^52
    let f = x - t; // the fraction, exact
    if f >= 0.5 {
        t + 1.0
    } else if f <= -0.5 {
        t - 1.0
    } else {
        t
    }
}

/// The reference's decay of `rtt_diff` after one more identical RTT sample (the EWMA of
/// TIMELY Alg. 1 with a new difference of 0).
fn decay(x: f64, rp: &RefParams) -> f64 {
    (1.0 - rp.alpha) * x + rp.alpha * 0.0
}

/// The number of further identical samples after which the reference's gradient `x / minRTT`
/// is still non-zero: the decay run until the gradient is 0, at most `i16::MAX` steps.
pub fn decay_steps(x: f64, rp: &RefParams) -> i16 {
    let mut x = x;
    let mut j = 0i16;
    while j < i16::MAX {
        x = decay(x, rp);
        if x / rp.min_rtt_ns == 0.0 {
            break;
        }
        j += 1;
    }
    j
}

/// The last [`decay_steps`] counted, as (`next`, `steps`): `steps` for an `x` whose one decay
/// step is `next`.
///
/// While the RTT repeats, the reference's `rtt_diff` moves along exactly this decay, so the
/// next event asks for `next`: [`decay_steps`]`(next)` is `steps − 1` whenever `steps` is
/// neither 0 (the run stopped at `next`) nor the cap (the count was cut short). Anything else
/// is counted afresh: the answer is always [`decay_steps`]'s, only its cost changes (the decay
/// runs through subnormal numbers, hundreds to thousands of steps per event otherwise).
#[derive(Debug, Clone, Copy, Default)]
struct DecayMemo {
    last: Option<(u64, i16)>,
}

impl DecayMemo {
    fn steps(&mut self, x: f64, rp: &RefParams) -> i16 {
        let steps = match self.last {
            Some((next, steps)) if next == x.to_bits() && steps > 0 && steps < i16::MAX => {
                steps - 1
            }
            _ => decay_steps(x, rp),
        };
        self.last = Some((decay(x, rp).to_bits(), steps));
        steps
    }
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
            memo: DecayMemo::default(),
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
                Some(round(f64::from(bytes) * 8e9 / (t_send_ns - prev) as f64))
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
        let mut shadow = quantise_with(&self.reference, &self.rp, &mut self.memo);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `round` is `f64::round` (zeros compared by value): halves, the largest fraction below a
    /// half, both sides of 2^52 and 2^53, infinities, NaN, and a million f64 bit patterns.
    #[test]
    fn round_is_f64_round() {
        let same = |x: f64| {
            let (a, b) = (round(x), x.round());
            assert!(
                a == b || (a.is_nan() && b.is_nan()),
                "{x:e}: {a:e} vs {b:e}"
            );
        };
        for x in [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            0.499_999_999_999_999_94,
            -0.499_999_999_999_999_94,
            4_503_599_627_370_495.5,
            -4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9_007_199_254_740_993.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ] {
            same(x);
        }
        let mut bits = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..1_000_000 {
            bits ^= bits << 13;
            bits ^= bits >> 7;
            bits ^= bits << 17;
            same(f64::from_bits(bits));
            // Magnitudes near the unit, where the fraction matters.
            same(f64::from_bits(bits) % 1e6);
        }
    }

    /// The memo's count is the decay run's, bit for bit: along runs of identical RTTs (the
    /// memo's case, down to a gradient of 0), after jumps (fresh counts), for both signs, with
    /// α from 1/16 (thousands of steps) to 1 (one step) and at the `i16::MAX` cap.
    #[test]
    fn residual_counts_from_the_memo_equal_a_fresh_count() {
        for (alpha, min_rtt) in [
            (0.875, 20_000.0),
            (1.0 / 16.0, 20_000.0),
            (0.5, 1.0),
            (0.3, 7_777.0),
            (1.0, 20_000.0),
            // The gradient never reaches 0 (the smallest subnormal decays to itself).
            (1.0 / 16.0, 1e-300),
        ] {
            let rp = RefParams {
                alpha,
                min_rtt_ns: min_rtt,
                ..RefParams::default()
            };
            let mut memo = DecayMemo::default();
            let mut r = RefState::new(&rp);
            r.started = true;
            let mut hits = 0;
            for start in [1e-21, -3e-22, 5e-30, 1e-300, -4e-310, 1e-318, 2e-21] {
                r.rtt_diff_ns = start;
                for _ in 0..300 {
                    let before = memo.last;
                    let got = quantise_with(&r, &rp, &mut memo);
                    assert_eq!(
                        got,
                        quantise(&r, &rp),
                        "α {alpha}, rtt_diff {:e}",
                        r.rtt_diff_ns
                    );
                    hits += u32::from(before.is_some_and(|(n, _)| n == r.rtt_diff_ns.to_bits()));
                    if r.rtt_diff_ns == 0.0 {
                        break;
                    }
                    r.rtt_diff_ns = decay(r.rtt_diff_ns, &rp);
                }
            }
            assert!(hits > 0, "α {alpha}: the memo was never used");
        }
    }
}
