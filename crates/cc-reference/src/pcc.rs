//! The f64 reference of TIMELY on DOCA PCC probe events, written from the conventions of
//! docs/pcc.md (§ "Probes", § "TIMELY on probe RTTs") — not from `cc-pcc`: the probe policy and the
//! RTT of a probe response in plain 64-bit integers (the 32-bit clock's wrap done as `mod 2^32` on
//! `u64`), Algorithm 1 from [`crate::timely`] (its [`on_rtt`](crate::timely::RefState::on_rtt)
//! entry), the rate as an `f64` fraction of line rate.
//!
//! Conventions (docs/pcc.md, "TIMELY on probe RTTs"):
//! * at most one probe outstanding per flow; a TX event with none outstanding requests one at
//!   its own timestamp; a TX event at least `probe_timeout_ns` after the request gives the
//!   probe up (timed out) and requests a new one;
//! * a response answers the outstanding probe when its request-send timestamp is not before
//!   the request time in serial order modulo 2^32 (less than 2^31 ns after it); a response
//!   from before it is late, one with no probe outstanding unsolicited, both ignored;
//! * `rtt = (ts − req_send) mod 2^32 − (resp_send − req_recv) mod 2^32` (the second term left
//!   out with `keep_turnaround`); a negative RTT is invalid (no sample); the RTT saturates at
//!   (2^31 − 1)/16 ns as every TIMELY RTT does; no serialisation delay (a probe has no payload).

use crate::timely::{RefParams, RefState, RefStep};

/// 2^32: the platform's clock wraps here.
const WRAP: u64 = 1 << 32;

/// Parameters of the probe-RTT TIMELY reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefTimelyParams {
    /// Algorithm 1's parameters (rates in b/s; `max_rate_bps` is the line rate).
    pub timely: RefParams,
    /// Probe timeout, ns.
    pub probe_timeout_ns: u64,
    /// Hand Algorithm 1 the whole probe RTT (responder turnaround kept).
    pub keep_turnaround: bool,
}

/// What one event did in the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RefTimelyStep {
    /// A TX event: whether it requested a probe, and whether it gave an outstanding one up.
    Tx {
        /// A probe is requested.
        probe: bool,
        /// The outstanding probe timed out.
        timed_out: bool,
    },
    /// A response to the outstanding probe: Algorithm 1's step on its RTT.
    Sample(RefStep),
    /// A response that left before the outstanding probe was requested: the answer to a probe
    /// given up (ignored).
    Late,
    /// A response with no probe outstanding (ignored).
    Unsolicited,
    /// A response whose turnaround exceeds its RTT (no sample).
    Invalid,
    /// Any other event (ACK, NACK, CNP, an undocumented type): rate unchanged.
    Other,
}

/// One flow of the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefTimelyFlow {
    /// Algorithm 1's state.
    pub timely: RefState,
    /// The outstanding probe's request time (ns on the 32-bit clock), if any.
    pub probe_req_ns: Option<u64>,
}

/// `(a − b) mod 2^32` for two 32-bit clock readings.
fn since(a: u32, b: u32) -> u64 {
    (u64::from(a) + WRAP - u64::from(b)) % WRAP
}

/// The probe policy on a TX event at `now`: a probe is requested when none is outstanding or
/// the outstanding one is at least `timeout_ns` old (given up).
fn probe_on_tx(req: &mut Option<u64>, now: u32, timeout_ns: u64) -> RefTimelyStep {
    let timed_out = match *req {
        Some(r) if since(now, r as u32) < timeout_ns => {
            return RefTimelyStep::Tx {
                probe: false,
                timed_out: false,
            };
        }
        Some(_) => true,
        None => false,
    };
    *req = Some(u64::from(now));
    RefTimelyStep::Tx {
        probe: true,
        timed_out,
    }
}

/// Whether a response whose request left at `req_send` answers the outstanding probe (then no
/// longer outstanding): it left at or after the request, in serial order modulo 2^32. `Err`
/// says why not.
fn probe_answers(req: &mut Option<u64>, req_send: u32) -> Result<(), RefTimelyStep> {
    match *req {
        None => Err(RefTimelyStep::Unsolicited),
        Some(r) if since(req_send, r as u32) < WRAP / 2 => {
            *req = None;
            Ok(())
        }
        Some(_) => Err(RefTimelyStep::Late),
    }
}

impl RefTimelyFlow {
    /// A new flow at the initial rate, no probe outstanding.
    pub fn new(p: &RefTimelyParams) -> Self {
        Self {
            timely: RefState::new(&p.timely),
            probe_req_ns: None,
        }
    }

    /// The rate as a fraction of line rate.
    pub fn rate_fraction(&self, p: &RefTimelyParams) -> f64 {
        self.timely.rate_bps / p.timely.max_rate_bps
    }

    /// A TX event at `now`.
    pub fn on_tx(&mut self, p: &RefTimelyParams, now: u32) -> RefTimelyStep {
        probe_on_tx(&mut self.probe_req_ns, now, p.probe_timeout_ns)
    }

    /// An RTT probe response at `ts` with the three timestamps it carries.
    pub fn on_response(
        &mut self,
        p: &RefTimelyParams,
        ts: u32,
        req_send: u32,
        req_recv: u32,
        resp_send: u32,
    ) -> RefTimelyStep {
        if let Err(why) = probe_answers(&mut self.probe_req_ns, req_send) {
            return why;
        }
        let mut rtt = since(ts, req_send) as i64;
        if !p.keep_turnaround {
            rtt -= since(resp_send, req_recv) as i64;
        }
        if rtt < 0 {
            return RefTimelyStep::Invalid;
        }
        let rtt_ns = (rtt as f64).min(f64::from((1u32 << 31) - 1) / 16.0);
        RefTimelyStep::Sample(self.timely.on_rtt(&p.timely, rtt_ns, 0, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> RefTimelyParams {
        RefTimelyParams {
            timely: RefParams::default(),
            probe_timeout_ns: 300_000,
            keep_turnaround: false,
        }
    }

    #[test]
    fn an_rtt_across_the_clock_wrap_is_measured_modulo_2_32() {
        let p = params();
        let mut f = RefTimelyFlow::new(&p);
        let t0 = u32::MAX - 1_000;
        assert!(matches!(
            f.on_tx(&p, t0),
            RefTimelyStep::Tx { probe: true, .. }
        ));
        // Sent 100 ns after the request, answered 30 µs later (past the wrap), turnaround 2 µs.
        let s = f.on_response(&p, t0.wrapping_add(30_100), t0 + 100, 7, 2_007);
        assert!(
            matches!(s, RefTimelyStep::Sample(r) if r.rtt_ns == Some(28_000.0)),
            "{s:?}"
        );
    }

    #[test]
    fn a_response_from_before_the_request_is_late() {
        let p = params();
        let mut f = RefTimelyFlow::new(&p);
        f.on_tx(&p, 1_000_000);
        assert_eq!(
            f.on_response(&p, 1_100_000, 999_000, 0, 0),
            RefTimelyStep::Late
        );
        assert!(f.probe_req_ns.is_some());
    }
}

/// Parameters of the HPCC-on-telemetry reference (docs/pcc.md, "HPCC on switch telemetry").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefHpccParams {
    /// Algorithm 1's parameters (`nic_rate_bps` is the line rate).
    pub hpcc: crate::hpcc::RefParams,
    /// The switch port's speed code (1 = 10G … 9 = 1.6T).
    pub link_code: u8,
    /// Probe timeout, ns.
    pub probe_timeout_ns: u64,
}

impl RefHpccParams {
    /// The telemetry gap from which the hop restarts: half the shorter wrap of the record's
    /// counters as the adapter keeps them — the byte count in 32-byte units modulo 2^20
    /// (2^25 bytes at the link's speed) and the timestamp modulo 2^24 ns — in whole ns.
    pub fn gap_ns(&self) -> u64 {
        let link_bps = crate::hpcc::SPEED_GBPS[usize::from(self.link_code)] * 1e9;
        let bytes_half = libm::floor((1u64 << 24) as f64 * 8.0 * 1e9 / link_bps) as u64;
        bytes_half.min(1 << 23)
    }
}

/// One hop of switch telemetry (the 12-byte record, decoded here independently: queue in
/// 256-byte cells big-endian in bytes 0–1, switch index byte 2, transmitted bytes 4–7, transmit
/// timestamp 8–11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefTelemetry {
    /// Queue, bytes.
    pub qlen_bytes: u64,
    /// Switch index (the path id: another switch is a path change).
    pub index: u8,
    /// Transmitted bytes, cumulative modulo 2^32.
    pub tx_bytes: u32,
    /// Transmit timestamp, ns modulo 2^32.
    pub ts_ns: u32,
}

impl RefTelemetry {
    /// Decodes the 12 bytes.
    pub fn decode(b: &[u8; 12]) -> Self {
        let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        Self {
            qlen_bytes: u64::from(u16::from_be_bytes([b[0], b[1]])) * 256,
            index: b[2],
            tx_bytes: be(4),
            ts_ns: be(8),
        }
    }
}

/// Where an HPCC flow's probe is (docs/pcc.md, "Probes"): telemetry responses carry no
/// timestamps, so the departure comes from the TX event flagged `RTT_REQ_SENT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefProbe {
    /// None outstanding.
    Idle,
    /// Requested at this time (ns, 32-bit clock), not yet left.
    Requested(u32),
    /// Left at this time.
    Departed(u32),
}

/// What one event did in the HPCC reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RefHpccStep {
    /// A TX event (as [`RefTimelyStep::Tx`]).
    Tx {
        /// A probe is requested.
        probe: bool,
        /// The outstanding probe timed out.
        timed_out: bool,
    },
    /// A response repeating the telemetry last used (same switch, same transmit timestamp,
    /// within the gap): ignored, the probe stays outstanding.
    Duplicate,
    /// A response with no probe outstanding: ignored.
    Unsolicited,
    /// An answered probe's telemetry: Algorithm 1's branch (`init`, `resync`, `skip`, `ai`,
    /// `md`) and whether the hop restarted after a gap.
    Sample {
        /// Branch.
        branch: &'static str,
        /// The hop restarted (gap).
        gap: bool,
    },
    /// A response while the outstanding probe has not left: it answers one given up; ignored.
    Late,
    /// Any other event.
    Other,
}

/// One HPCC flow of the reference: Algorithm 1 on one hop per answered probe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefHpccFlow {
    /// Window W, bytes.
    pub w: f64,
    /// Reference window Wc, bytes.
    pub wc: f64,
    /// Normalised inflight U.
    pub u: f64,
    /// incStage.
    pub inc_stage: u32,
    /// The stored hop (`L`).
    pub prev: Option<RefTelemetry>,
    /// NIC time of the previous telemetry.
    pub last_tel_ns: u32,
    /// The probe.
    pub probe: RefProbe,
}

impl RefHpccFlow {
    /// A new flow: `W = Wc = W_max`, `U = 1`, no hop stored.
    pub fn new(p: &RefHpccParams) -> Self {
        Self {
            w: p.hpcc.w_max(),
            wc: p.hpcc.w_max(),
            u: 1.0,
            inc_stage: 0,
            prev: None,
            last_tel_ns: 0,
            probe: RefProbe::Idle,
        }
    }

    /// The rate `W/T` as a fraction of line rate, `W/W_max`.
    pub fn rate_fraction(&self, p: &RefHpccParams) -> f64 {
        self.w / p.hpcc.w_max()
    }

    /// A TX event at `now`; `departed`: its flags carry `RTT_REQ_SENT` (the requested probe
    /// left now, and its timeout counts from now). A probe is requested when none is
    /// outstanding or the outstanding one is `probe_timeout_ns` past its request (not left) or
    /// its departure.
    pub fn on_tx(&mut self, p: &RefHpccParams, now: u32, departed: bool) -> RefHpccStep {
        if departed && let RefProbe::Requested(_) = self.probe {
            self.probe = RefProbe::Departed(now);
        }
        // TIMELY's policy, on the time the probe was requested or left.
        let mut since_ns = match self.probe {
            RefProbe::Idle => None,
            RefProbe::Requested(t) | RefProbe::Departed(t) => Some(u64::from(t)),
        };
        match probe_on_tx(&mut since_ns, now, p.probe_timeout_ns) {
            RefTimelyStep::Tx { probe, timed_out } => {
                if probe {
                    self.probe = RefProbe::Requested(now);
                }
                RefHpccStep::Tx { probe, timed_out }
            }
            _ => RefHpccStep::Other,
        }
    }

    /// A probe response at `now` (NIC clock) carrying `tel` as its raw data.
    pub fn on_response(&mut self, p: &RefHpccParams, now: u32, tel: &RefTelemetry) -> RefHpccStep {
        let within_gap = since(now, self.last_tel_ns) < p.gap_ns();
        if within_gap
            && self
                .prev
                .is_some_and(|q| q.index == tel.index && q.ts_ns == tel.ts_ns)
        {
            return RefHpccStep::Duplicate;
        }
        match self.probe {
            RefProbe::Idle => return RefHpccStep::Unsolicited,
            RefProbe::Requested(_) => return RefHpccStep::Late,
            RefProbe::Departed(_) => self.probe = RefProbe::Idle,
        }
        // A gap longer than the counters can span: restart the hop from this sample.
        let gap = self.prev.is_some() && since(now, self.last_tel_ns) >= p.gap_ns();
        if gap {
            self.prev = None;
        }
        self.last_tel_ns = now;
        let sample = |branch| RefHpccStep::Sample { branch, gap };
        let Some(prev) = self.prev.replace(*tel) else {
            return sample("init");
        };
        if prev.index != tel.index {
            return sample("resync");
        }
        let dts = since(tel.ts_ns, prev.ts_ns);
        if dts == 0 {
            return sample("skip");
        }
        let dtx = since(tel.tx_bytes, prev.tx_bytes) as f64;
        let t = p.hpcc.base_rtt_ns;
        // Eqn 2: u' = min(qlen)/(B·T) + txRate/B, B the link's bytes per ns.
        let b = crate::hpcc::SPEED_GBPS[usize::from(p.link_code)] / 8.0;
        let qmin = prev.qlen_bytes.min(tel.qlen_bytes) as f64;
        let u1 = qmin / (b * t) + dtx / dts as f64 / b;
        // HPCC Alg. 1 l.8–9: τ = min(Δts, T); U = (1 − τ/T)·U + (τ/T)·u'.
        let tau = (dts as f64).min(t);
        self.u = (1.0 - tau / t) * self.u + (tau / t) * u1;
        let eta = p.hpcc.eta();
        // ComputeWind; every answered probe is a round, so Wc follows W each time.
        let (mut w, branch) = if self.u >= eta || self.inc_stage >= p.hpcc.max_stage {
            self.inc_stage = 0;
            (self.wc / (self.u / eta) + p.hpcc.w_ai_bytes, "md")
        } else {
            self.inc_stage += 1;
            (self.wc + p.hpcc.w_ai_bytes, "ai")
        };
        if w.is_nan() || w > p.hpcc.w_max() {
            w = p.hpcc.w_max();
        }
        if w < p.hpcc.w_min() {
            w = p.hpcc.w_min();
        }
        self.w = w;
        self.wc = w;
        sample(branch)
    }
}

#[cfg(test)]
mod hpcc_tests {
    use super::*;

    fn params() -> RefHpccParams {
        RefHpccParams {
            hpcc: crate::hpcc::RefParams::default(),
            link_code: 5,
            probe_timeout_ns: 300_000,
        }
    }

    fn tel(ts: u32) -> RefTelemetry {
        RefTelemetry {
            qlen_bytes: 0,
            index: 3,
            tx_bytes: ts,
            ts_ns: ts,
        }
    }

    #[test]
    fn a_telemetry_response_is_taken_only_after_its_probe_left() {
        let p = params();
        let mut f = RefHpccFlow::new(&p);
        assert_eq!(f.on_response(&p, 10, &tel(1)), RefHpccStep::Unsolicited);
        assert!(matches!(
            f.on_tx(&p, 100, false),
            RefHpccStep::Tx { probe: true, .. }
        ));
        assert_eq!(f.on_response(&p, 200, &tel(2)), RefHpccStep::Late);
        f.on_tx(&p, 300, true);
        assert_eq!(f.probe, RefProbe::Departed(300));
        assert!(matches!(
            f.on_response(&p, 9_000, &tel(3)),
            RefHpccStep::Sample { branch: "init", .. }
        ));
        assert_eq!(f.on_response(&p, 9_100, &tel(3)), RefHpccStep::Duplicate);
        assert_eq!(f.probe, RefProbe::Idle);
    }

    #[test]
    fn the_timeout_runs_from_the_departure() {
        let p = params();
        let mut f = RefHpccFlow::new(&p);
        f.on_tx(&p, 0, false);
        f.on_tx(&p, 200_000, true);
        assert!(matches!(
            f.on_tx(&p, 450_000, false),
            RefHpccStep::Tx { probe: false, .. }
        ));
        assert_eq!(
            f.on_tx(&p, 500_000, false),
            RefHpccStep::Tx {
                probe: true,
                timed_out: true
            }
        );
    }
}
