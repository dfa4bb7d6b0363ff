//! TIMELY (Mittal et al., SIGCOMM 2015) on DOCA PCC events: RTTs from probe responses,
//! Algorithm 1 from `timely_cc::State::on_rtt`, the rate out as Q20 of line rate.
//!
//! Per event type (docs/pcc.md has the table and the reasons):
//! * **TX**: coalesced counts added to the counters; the probe policy runs (below).
//! * **RTT**: a response to the outstanding probe gives one RTT sample to Algorithm 1;
//!   any other response is counted (late or unsolicited) and ignored.
//! * **ACK, NACK, CNP**: counted (events and coalesced counts), no rate change: TIMELY's only
//!   input is the RTT, and the paper has no rule for loss or ECN.
//! * **Any other type** (NULL, FW, ROCE_TX_FOR_ACK_NACK, undefined codes): counted, rate
//!   unchanged.
//!
//! Probe policy: at most one probe outstanding per flow. A TX event with no probe outstanding
//! requests one (`rtt_req`) and remembers the TX event's timestamp as the request time; a TX
//! event whose outstanding probe is at least `PROBE_TIMEOUT_NS` old counts it as timed out and
//! requests a new one. A response is the outstanding probe's answer when its request-send
//! timestamp is not before the request time (serial order on the 32-bit clock: the probe leaves
//! after it was requested); an answer to a probe that timed out carries an earlier timestamp and
//! is counted late, a response with no probe outstanding unsolicited. The RTT template's
//! responses carry the three timestamps (no raw data), so matching by timestamp is exact; the
//! TX flag `RTT_REQ_SENT` is not needed here (HPCC uses it: [`crate::hpcc`]).

use crate::counters::{Counter, Counters, count_event};
use crate::event::{Event, EventType};
use crate::params::TimelyPccConfig;
use crate::{CONTEXT_WORDS, FlowContext, PccResult};
use cc_math::wrap::wrapping_delta;
use timely_cc::{I60F68, RTT_SAT_Q4, RawParts, State, U28F4};

use crate::probe::{self, FLAG_PROBE_OUT, FLAG_STARTED};

/// One flow's state, unpacked from its 48-byte context: TIMELY's 24-byte state, the probe's
/// request time and the flags. [`load`](Self::load) and [`store`](Self::store) move it to and
/// from the platform's twelve words (layout in docs/pcc.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TimelyFlow {
    /// Algorithm 1's state.
    pub timely: State,
    /// When the outstanding probe was requested (TX event timestamp), ns.
    pub probe_req_ts_ns: u32,
    /// `FLAG_*` bits.
    flags: u32,
}

const _: () = assert!(core::mem::size_of::<TimelyFlow>() <= 4 * CONTEXT_WORDS);

impl TimelyFlow {
    /// A new flow at the configured initial rate, no probe outstanding.
    #[must_use]
    pub const fn new(cfg: &TimelyPccConfig) -> Self {
        Self {
            timely: State::new(&cfg.timely),
            probe_req_ts_ns: 0,
            flags: FLAG_STARTED,
        }
    }

    /// Whether a probe is outstanding.
    #[must_use]
    pub const fn probe_outstanding(&self) -> bool {
        self.flags & FLAG_PROBE_OUT != 0
    }

    /// Unpacks a context; `None` for a context never stored (all flags clear: a new flow).
    ///
    /// Words: 0 rate (128 b/s units), 1 previous RTT (Q27.4 ns), 2–4 the RTT-difference EWMA
    /// (Q27.68 ns: high, middle, low word), 5 residual (bits 0–15) · HAI count (16–23) ·
    /// started (24), 6 probe request time, 7 flags, 8–11 zero.
    #[inline]
    #[must_use]
    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)] // word fields
    pub fn load(ctx: &FlowContext) -> Option<Self> {
        let [rate, prev, d_hi, d_mid, d_lo, misc, probe, flags, ..] = *ctx;
        if flags & FLAG_STARTED == 0 {
            return None;
        }
        let diff = (i128::from(d_hi as i32) << 64) | (i128::from(d_mid) << 32) | i128::from(d_lo);
        Some(Self {
            timely: State::from_raw_parts(RawParts {
                rate_u128bps: rate,
                prev_rtt_ns: U28F4::from_bits(prev),
                rtt_diff_ns: I60F68::from_bits(diff),
                residual: misc as u16 as i16,
                hai_count: (misc >> 16) as u8,
                started: (misc >> 24) & 1 != 0,
            }),
            probe_req_ts_ns: probe,
            flags,
        })
    }

    /// Packs the flow into a context (the inverse of [`load`](Self::load)).
    #[inline]
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // word fields
    pub fn store(&self, ctx: &mut FlowContext) {
        let p = self.timely.raw_parts();
        let d = p.rtt_diff_ns.to_bits();
        *ctx = [
            p.rate_u128bps,
            p.prev_rtt_ns.to_bits(),
            (d >> 64) as u32,
            (d >> 32) as u32,
            d as u32,
            u32::from(p.residual as u16)
                | (u32::from(p.hai_count) << 16)
                | (u32::from(p.started) << 24),
            self.probe_req_ts_ns,
            self.flags,
            0,
            0,
            0,
            0,
        ];
    }

    /// One event of this flow: updates the state and the counters, returns the rate in Q20
    /// and whether to send a probe.
    #[inline]
    pub fn on_event(
        &mut self,
        cfg: &TimelyPccConfig,
        ev: &Event,
        counters: &mut Counters,
    ) -> PccResult {
        let mut rtt_req = false;
        match count_event(ev, counters) {
            Some(EventType::Tx) => rtt_req = self.probe_policy(cfg, ev.ts_ns, counters),
            Some(EventType::Rtt) => self.on_probe_response(cfg, ev, counters),
            _ => {}
        }
        let (rate_q20, clamp) = cfg.rate_q20(self.timely.rate_u128bps());
        match clamp {
            1 => counters.inc(Counter::RateClampedHigh),
            -1 => counters.inc(Counter::RateClampedLow),
            _ => {}
        }
        PccResult { rate_q20, rtt_req }
    }

    /// The probe policy on a TX event at `now`: whether to request a probe.
    #[inline(always)]
    fn probe_policy(&mut self, cfg: &TimelyPccConfig, now: u32, counters: &mut Counters) -> bool {
        probe::on_tx(
            &mut self.probe_req_ts_ns,
            &mut self.flags,
            now,
            cfg.probe_timeout_ns,
            counters,
        )
    }

    /// A probe response: one RTT sample for Algorithm 1 if it answers the outstanding probe.
    #[inline(always)]
    fn on_probe_response(&mut self, cfg: &TimelyPccConfig, ev: &Event, counters: &mut Counters) {
        let r = ev.rtt();
        if !probe::answers_by_send_time(
            self.probe_req_ts_ns,
            &mut self.flags,
            r.req_send_ts_ns,
            counters,
        ) {
            return;
        }
        // RTT template: RTT = event timestamp − request send timestamp (32-bit wrapping).
        let rtt = wrapping_delta::<32>(ev.ts_ns, r.req_send_ts_ns);
        // Default convention: minus the responder's turnaround (response send − request
        // receive, both on the responder's clock, wrapping).
        let rtt = if cfg.keep_turnaround {
            rtt
        } else {
            let turnaround = wrapping_delta::<32>(r.resp_send_ts_ns, r.req_recv_ts_ns);
            let Some(net) = rtt.checked_sub(turnaround) else {
                counters.inc(Counter::RttInvalid);
                return;
            };
            net
        };
        // ns → Q27.4 ns, saturating at RTT_MAX (≈ 134.2 ms) as timely-cc does.
        let rtt_q4 = if rtt > RTT_SAT_Q4 >> 4 {
            RTT_SAT_Q4
        } else {
            rtt << 4
        };
        // TIMELY Alg. 1 (timely-cc): the probe carries no payload, so no serialisation delay
        // to remove and no per-completion scaling (bytes 0, off in this configuration).
        let _ = self
            .timely
            .on_rtt_rate(&cfg.timely, U28F4::from_bits(rtt_q4), 0, None);
    }
}

/// `doca_pcc_dev_user_algo` for TIMELY: decodes nothing itself (takes the decoded event),
/// loads the flow from its context (a new flow if the context was never stored), handles the
/// event and stores the flow back.
#[inline]
pub fn timely_on_event(
    cfg: &TimelyPccConfig,
    ctx: &mut FlowContext,
    ev: &Event,
    counters: &mut Counters,
) -> PccResult {
    let mut flow = TimelyFlow::load(ctx).unwrap_or_else(|| {
        counters.inc(Counter::NewFlows);
        TimelyFlow::new(cfg)
    });
    let out = flow.on_event(cfg, ev, counters);
    flow.store(ctx);
    out
}
