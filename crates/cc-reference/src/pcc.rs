//! The f64 reference of TIMELY on DOCA PCC probe events, written from issue 18 and the
//! conventions of docs/pcc.md — not from `cc-pcc`: the probe policy and the RTT of a probe
//! response in plain 64-bit integers (the 32-bit clock's wrap done as `mod 2^32` on `u64`),
//! Algorithm 1 from [`crate::timely`] (its [`on_rtt`](crate::timely::RefState::on_rtt) entry),
//! the rate as an `f64` fraction of line rate.
//!
//! Conventions (docs/pcc.md, "TIMELY on probe RTTs"):
//! * at most one probe outstanding per flow; a TX event with none outstanding requests one at
//!   its own timestamp; a TX event at least `probe_timeout_ns` after the request gives the
//!   probe up (timed out) and requests a new one;
//! * a response answers the outstanding probe when its request-send timestamp is not before
//!   the request time in serial order modulo 2^32 (less than 2^31 ns after it); any other
//!   response is late and ignored;
//! * `rtt = (ts − req_send) mod 2^32 − (resp_send − req_recv) mod 2^32` (the second term left
//!   out with `keep_turnaround`); a negative RTT is invalid (no sample); the RTT saturates at
//!   (2^31 − 1)/16 ns as every TIMELY RTT does; no serialisation delay (a probe has no payload).

use crate::timely::{RefParams, RefState, RefStep};

/// 2^32: the platform's clock wraps here.
const WRAP: u64 = 1 << 32;

/// Parameters of the probe-RTT TIMELY reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefPccParams {
    /// Algorithm 1's parameters (rates in b/s; `max_rate_bps` is the line rate).
    pub timely: RefParams,
    /// Probe timeout, ns.
    pub probe_timeout_ns: u64,
    /// Hand Algorithm 1 the whole probe RTT (responder turnaround kept).
    pub keep_turnaround: bool,
}

/// What one event did in the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RefPccStep {
    /// A TX event: whether it requested a probe, and whether it gave an outstanding one up.
    Tx {
        /// A probe is requested.
        probe: bool,
        /// The outstanding probe timed out.
        timed_out: bool,
    },
    /// A response to the outstanding probe: Algorithm 1's step on its RTT.
    Sample(RefStep),
    /// A response that answers no outstanding probe (ignored).
    Late,
    /// A response whose turnaround exceeds its RTT (no sample).
    Invalid,
    /// Any other event (ACK, NACK, CNP, an undocumented type): rate unchanged.
    Other,
}

/// One flow of the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefPccFlow {
    /// Algorithm 1's state.
    pub timely: RefState,
    /// The outstanding probe's request time (ns on the 32-bit clock), if any.
    pub probe_req_ns: Option<u64>,
}

/// `(a − b) mod 2^32` for two 32-bit clock readings.
fn since(a: u32, b: u32) -> u64 {
    (u64::from(a) + WRAP - u64::from(b)) % WRAP
}

impl RefPccFlow {
    /// A new flow at the initial rate, no probe outstanding.
    pub fn new(p: &RefPccParams) -> Self {
        Self {
            timely: RefState::new(&p.timely),
            probe_req_ns: None,
        }
    }

    /// The rate as a fraction of line rate.
    pub fn rate_fraction(&self, p: &RefPccParams) -> f64 {
        self.timely.rate_bps / p.timely.max_rate_bps
    }

    /// A TX event at `now`.
    pub fn on_tx(&mut self, p: &RefPccParams, now: u32) -> RefPccStep {
        let timed_out = match self.probe_req_ns {
            Some(req) if since(now, req as u32) < p.probe_timeout_ns => {
                return RefPccStep::Tx {
                    probe: false,
                    timed_out: false,
                };
            }
            Some(_) => true,
            None => false,
        };
        self.probe_req_ns = Some(u64::from(now));
        RefPccStep::Tx {
            probe: true,
            timed_out,
        }
    }

    /// An RTT probe response at `ts` with the three timestamps it carries.
    pub fn on_response(
        &mut self,
        p: &RefPccParams,
        ts: u32,
        req_send: u32,
        req_recv: u32,
        resp_send: u32,
    ) -> RefPccStep {
        let Some(req) = self.probe_req_ns else {
            return RefPccStep::Late;
        };
        if since(req_send, req as u32) >= WRAP / 2 {
            return RefPccStep::Late;
        }
        self.probe_req_ns = None;
        let mut rtt = since(ts, req_send) as i64;
        if !p.keep_turnaround {
            rtt -= since(resp_send, req_recv) as i64;
        }
        if rtt < 0 {
            return RefPccStep::Invalid;
        }
        let rtt_ns = (rtt as f64).min(f64::from((1u32 << 31) - 1) / 16.0);
        RefPccStep::Sample(self.timely.on_rtt(&p.timely, rtt_ns, 0, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> RefPccParams {
        RefPccParams {
            timely: RefParams::default(),
            probe_timeout_ns: 300_000,
            keep_turnaround: false,
        }
    }

    #[test]
    fn an_rtt_across_the_clock_wrap_is_measured_modulo_2_32() {
        let p = params();
        let mut f = RefPccFlow::new(&p);
        let t0 = u32::MAX - 1_000;
        assert!(matches!(
            f.on_tx(&p, t0),
            RefPccStep::Tx { probe: true, .. }
        ));
        // Sent 100 ns after the request, answered 30 µs later (past the wrap), turnaround 2 µs.
        let s = f.on_response(&p, t0.wrapping_add(30_100), t0 + 100, 7, 2_007);
        assert!(
            matches!(s, RefPccStep::Sample(r) if r.rtt_ns == Some(28_000.0)),
            "{s:?}"
        );
    }

    #[test]
    fn a_response_from_before_the_request_is_late() {
        let p = params();
        let mut f = RefPccFlow::new(&p);
        f.on_tx(&p, 1_000_000);
        assert_eq!(
            f.on_response(&p, 1_100_000, 999_000, 0, 0),
            RefPccStep::Late
        );
        assert!(f.probe_req_ns.is_some());
    }
}
