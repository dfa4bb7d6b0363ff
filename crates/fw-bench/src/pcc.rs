//! DOCA-shaped event streams for the DOCA PCC adapter's rows of `fw-bench counts`
//! (`crates/cc-pcc`): one flow per algorithm, driven in a closed loop by the host build of the
//! adapter, so every event is one the platform would deliver after the previous answers.
//!
//! Each stream is generated deterministically (fixed seeds, [`Lcg`]) from a small fluid model
//! of one bottleneck port at line rate, shared with cross traffic that changes every 50 µs:
//! * the flow's TX events every 2 µs (± 0.5 µs), with the bytes (32-byte units) and 4 KiB
//!   packets sent at the adapter's rate since the previous one (coalesced counts); an ACK event
//!   every third TX event, a NACK every 200th, a CNP every 300th, with coalesced counts;
//! * a probe sent 300 ns after every TX event that requests one (HPCC: its departure reported
//!   by a TX event of its own flagged `RTT_REQ_SENT`, the platform's departure flag, as the
//!   simulator's NICs do); the network RTT is 8 µs plus the port's queueing delay; the responder (its own
//!   clock, offset from the NIC's) turns the request around in 1–5 µs; one probe in 40 is lost
//!   (the adapter's timeout ends it), one in 60 is answered 400 µs late and (HPCC) one answer
//!   in 50 is delivered twice;
//! * the NIC's 32-bit clock starts 50 µs before it wraps, so the wrap falls inside the first
//!   probes; the responder's and the switch's clocks wrap too.
//!
//! HPCC's probe responses carry, as their raw data (in place of the timestamps), the
//! switch-telemetry record of the bottleneck port (100 Gb/s) as the probe passed it: the queue in 256-byte cells, the port's cumulative transmitted bytes
//! (a 32-bit counter starting 1 MiB before it wraps) and the switch's clock. Once, the flow is
//! quiet for 2 ms (longer than the telemetry gap the hop's counters span at 100 Gb/s) and once
//! the switch index changes (a path change).
//!
//! Every answer the rv images give is checked against the host build's (the [`Step::answer`]
//! computed here); the row label is the event's type and what the adapter did with it. For
//! TIMELY the branch of Algorithm 1 is found by running `timely_cc::State::on_rtt` on the flow
//! before the event with the probe's RTT, and the label is only given if that reproduces the
//! adapter's state after the event exactly.

use anyhow::{Result, ensure};
use cc_pcc::{
    Ack, Counter, Counters, EVENT_BYTES, Event, FlowContext, HpccFlow, HpccPccConfig, Rtt,
    TELEMETRY_BYTES, TimelyFlow, TimelyPccConfig, Tx, hpcc_on_event, timely_on_event, tx_flag,
};
use timely_cc::U28F4;

use crate::cases::Lcg;

/// TIMELY adapter parameters of the stream (ids of `cc_pcc::TIMELY_PARAMS`): a 100 Gb/s port,
/// 100 Mb/s floor, `T_low` 10 µs, `T_high` 100 µs and `minRTT` 8 µs for the stream's 8 µs base
/// RTT, `δ` 2 Gb/s (at 100 Mb/s, the paper's 10 Mb/s scaled from 10 to 100 Gb/s, the flow
/// spends nearly every probe climbing back in the `low` branch), the rest the defaults.
pub const TIMELY_VALUES: [u32; cc_pcc::TIMELY_PARAM_NUM] = [
    100_000,
    100,
    1 << 20,
    10_000,
    100_000,
    8_000,
    875,
    800,
    2_000,
    5,
    5,
    300_000,
    0,
];

/// HPCC adapter parameters: the table's defaults (100 Gb/s, `T` 13 µs, a 100G switch port).
pub const HPCC_VALUES: [u32; cc_pcc::HPCC_PARAM_NUM] =
    [100_000, 13_000, 950, 5, 80, 100, 5, 300_000];

/// One event for the server: its bytes (the 44 event bytes, and for HPCC the 12 telemetry
/// bytes), the host build's answer and the row label.
#[derive(Clone, Debug)]
pub struct Step {
    /// Event bytes (44) or event and telemetry bytes (56).
    pub bytes: Vec<u8>,
    /// `probe_pcc_*_on_event`'s result `<< 32 | fold(context, counters)`.
    pub answer: u64,
    /// Row label: event type and outcome.
    pub case: String,
    /// Nanoseconds since the stream started (for errors).
    pub t_ns: u64,
}

/// `fw_probe_serve`'s fold of what an event left (`probe/serve.rs`).
pub fn fold(ctx: &FlowContext, counters: &Counters) -> u32 {
    ctx.iter()
        .chain(counters.0.iter())
        .fold(0u32, |acc, &w| acc.rotate_left(5) ^ w)
}

/// `probe_pcc_event_decode`'s result for `bytes`, from the host build's decoder.
pub fn decode_answer(bytes: &[u8; EVENT_BYTES]) -> u32 {
    let e = Event::decode(bytes);
    let [a, b, c] = e.spec;
    u32::from_le_bytes([e.type_code, e.subtype, e.port, e.flags])
        ^ e.flow_tag
        ^ e.sn
        ^ e.ts_ns
        ^ a
        ^ b
        ^ c
}

/// The NIC clock at stream time 0: 50 µs before the 32-bit wrap.
const NIC_T0: u32 = u32::MAX - 50_000 + 1;
/// The responder's clock minus the NIC's (wraps 3 ms into the stream).
const RESPONDER_OFFSET: u32 = 0u32.wrapping_sub(NIC_T0.wrapping_add(3_000_000));
/// The switch's clock minus the NIC's.
const SWITCH_OFFSET: u32 = 0x8000_0000;
/// Line rate of the port and of the flow, b/s.
const LINE_BPS: u64 = 100_000_000_000;
/// Network RTT without queueing, ns.
const BASE_RTT_NS: u64 = 8_000;
/// Flow tag of the streams' flow.
const FLOW_TAG: u32 = 0x0042_0017;

/// The bottleneck port as a fluid queue.
struct Port {
    /// Queue, bytes.
    q: f64,
    /// Transmitted bytes since the start.
    tx: f64,
    /// Cross traffic, b/s.
    cross_bps: f64,
    /// When the cross traffic changes next, ns.
    next_change: u64,
    /// Last update, ns.
    t: u64,
}

impl Port {
    fn new() -> Self {
        Self {
            q: 0.0,
            tx: 0.0,
            cross_bps: 0.0,
            next_change: 0,
            t: 0,
        }
    }

    /// Advances to `t` with the flow sending at `rate_bps`.
    fn advance(&mut self, t: u64, rate_bps: f64, rng: &mut Lcg) {
        while self.t < t {
            if self.t >= self.next_change {
                // Cross traffic 0–70 % of line rate, changing every 50 µs.
                self.cross_bps = LINE_BPS as f64 * 0.7 * f64::from(rng.next_u32() % 1001) / 1000.0;
                self.next_change = self.t + 50_000;
            }
            let until = t.min(self.next_change);
            let dt = (until - self.t) as f64 * 1e-9;
            let line = LINE_BPS as f64 / 8.0;
            let arrive = (rate_bps + self.cross_bps) / 8.0 * dt;
            let served = (self.q + arrive).min(line * dt);
            self.q = (self.q + arrive - served).min(8.0 * 1024.0 * 1024.0);
            self.tx += served;
            self.t = until;
        }
    }

    /// Network RTT now, ns.
    fn rtt_ns(&self) -> u64 {
        BASE_RTT_NS + (self.q * 8.0 / LINE_BPS as f64 * 1e9) as u64
    }
}

/// What happens next in a stream.
#[derive(Clone, Copy, Debug)]
enum Next {
    Tx,
    /// HPCC: the requested probe leaves.
    Departure,
    /// The probe passes the switch (HPCC: the telemetry sample is taken).
    Switch {
        probe: usize,
    },
    /// The probe's response reaches the NIC.
    Response {
        probe: usize,
    },
}

/// A probe in flight.
#[derive(Clone, Copy, Debug, Default)]
struct Probe {
    send: u64,
    recv_resp: u32,
    send_resp: u32,
    telemetry: [u8; TELEMETRY_BYTES],
}

/// The event loop shared by both streams: which event comes next, with the probe bookkeeping.
struct Stream {
    rng: Lcg,
    port: Port,
    /// Pending (time, what), unsorted (a few at a time).
    pending: Vec<(u64, Next)>,
    probes: Vec<Probe>,
    /// Time of the previous TX event.
    last_tx: u64,
    /// Adapter rate as a fraction of line rate.
    rate_frac: f64,
    tx_count: u64,
    sn: u32,
    /// Quiet from .0 to .1 (no TX events).
    quiet: (u64, u64),
    /// HPCC: a probe's departure is a TX event of its own (`RTT_REQ_SENT`), and responses
    /// carry the telemetry as raw data.
    hpcc: bool,
}

impl Stream {
    fn new(seed: u64, quiet: (u64, u64), hpcc: bool) -> Self {
        Self {
            rng: Lcg::new(seed),
            port: Port::new(),
            pending: vec![(2_000, Next::Tx)],
            probes: Vec::new(),
            last_tx: 0,
            rate_frac: 1.0,
            tx_count: 0,
            sn: 0,
            quiet,
            hpcc,
        }
    }

    fn pop(&mut self) -> (u64, Next) {
        let i = (0..self.pending.len())
            .min_by_key(|&i| self.pending[i].0)
            .unwrap_or(0);
        let (t, n) = self.pending.swap_remove(i);
        let rate = self.rate_frac * LINE_BPS as f64;
        self.port.advance(t, rate, &mut self.rng);
        (t, n)
    }

    fn nic(t: u64) -> u32 {
        NIC_T0.wrapping_add(t as u32)
    }

    /// The TX event at `t` (and the ACK/NACK/CNP events it brings), scheduling the next TX.
    fn tx_event(&mut self, t: u64) -> Vec<Event> {
        let gap = t - self.last_tx;
        let bytes = (self.rate_frac * LINE_BPS as f64 / 8.0 * gap as f64 * 1e-9) as u64;
        let units = (bytes / 32).min(u64::from(u16::MAX)) as u32;
        let packets = bytes.div_ceil(4096).clamp(1, u64::from(u16::MAX)) as u32;
        self.last_tx = t;
        self.tx_count += 1;
        self.sn = self.sn.wrapping_add(packets);
        let ts = Self::nic(t);
        let first = Self::nic(self.last_tx.saturating_sub(gap / 2));
        let tx = ev(
            3,
            self.sn,
            ts,
            Event::tx_spec(&Tx {
                first_ts_ns: first,
                packets: packets as u16,
                sent_32b_units: units as u16,
                qpn: 0x1d2,
            }),
        );
        let mut evs = vec![tx];
        for (every, code) in [(3, 4u8), (200, 5), (300, 2)] {
            if self.tx_count.is_multiple_of(every) {
                let n = 1 + self.rng.next_u32() % 8;
                evs.push(ev(
                    code,
                    self.sn,
                    ts,
                    Event::ack_spec(&Ack {
                        first_ts_ns: first,
                        first_sn: self.sn.wrapping_sub(n),
                        coalesced: n as u16,
                    }),
                ));
            }
        }
        let mut next = t + 1_500 + u64::from(self.rng.next_u32() % 1_001);
        if (self.quiet.0..self.quiet.1).contains(&next) {
            next = self.quiet.1;
        }
        self.pending.push((next, Next::Tx));
        evs
    }

    /// A probe requested by the event at `t` leaves 300 ns later; under HPCC its departure is
    /// then reported by a TX event flagged `RTT_REQ_SENT` (no packets of its own).
    fn requested(&mut self, t: u64) {
        if self.hpcc {
            self.pending.push((t + 300, Next::Departure));
        } else {
            self.send_probe(t + 300);
        }
    }

    /// HPCC: the TX event that reports the probe leaving at `t`.
    fn departure(&mut self, t: u64) -> Event {
        self.send_probe(t);
        let ts = Self::nic(t);
        let mut e = ev(
            3,
            self.sn,
            ts,
            Event::tx_spec(&Tx {
                first_ts_ns: ts,
                packets: 0,
                sent_32b_units: 0,
                qpn: 0x1d2,
            }),
        );
        e.flags = tx_flag::RTT_REQ_SENT;
        e
    }

    /// A probe leaving at `send`: lost (1 in 40), late (1 in 60) or answered; (HPCC) one answer
    /// in 50 delivered twice.
    fn send_probe(&mut self, send: u64) {
        let k = self.probes.len();
        let rtt = self.port.rtt_ns();
        let turnaround = 1_000 + u64::from(self.rng.next_u32() % 4_001);
        let at_responder = send + rtt / 2;
        let recv_resp = Self::nic(at_responder).wrapping_add(RESPONDER_OFFSET);
        let send_resp = recv_resp.wrapping_add(turnaround as u32);
        self.probes.push(Probe {
            send,
            recv_resp,
            send_resp,
            telemetry: [0; TELEMETRY_BYTES],
        });
        let lost = k % 40 == 39;
        let late = if k % 60 == 59 { 400_000 } else { 0 };
        if !lost {
            self.pending
                .push((send + rtt / 4, Next::Switch { probe: k }));
            self.pending
                .push((send + rtt + turnaround + late, Next::Response { probe: k }));
            if self.hpcc && k % 50 == 49 {
                self.pending.push((
                    send + rtt + turnaround + late + 2_000,
                    Next::Response { probe: k },
                ));
            }
        }
    }

    /// The switch's telemetry record now, for switch `index`.
    fn sample(&mut self, probe: usize, t: u64, index: u8) {
        let cells = (self.port.q / 256.0) as u64;
        let cells = cells.min(u64::from(u16::MAX)) as u16;
        let tx = (self.port.tx as u64 as u32).wrapping_add(u32::MAX - (1 << 20) + 1);
        let clock = Self::nic(t).wrapping_add(SWITCH_OFFSET);
        let [q0, q1] = cells.to_be_bytes();
        let mut rec = [0u8; TELEMETRY_BYTES];
        rec[..4].copy_from_slice(&[q0, q1, index, 0x01]);
        rec[4..8].copy_from_slice(&tx.to_be_bytes());
        rec[8..].copy_from_slice(&clock.to_be_bytes());
        if let Some(p) = self.probes.get_mut(probe) {
            p.telemetry = rec;
        }
    }

    /// The response event of `probe` at `t`: TIMELY's carries the three timestamps, HPCC's the
    /// telemetry record as its raw data.
    fn response(&self, probe: usize, t: u64) -> Event {
        let p = self.probes[probe];
        let spec = if self.hpcc {
            Event::raw_data_spec(&p.telemetry)
        } else {
            Event::rtt_spec(&Rtt {
                req_send_ts_ns: Self::nic(p.send),
                req_recv_ts_ns: p.recv_resp,
                resp_send_ts_ns: p.send_resp,
            })
        };
        ev(6, self.sn, Self::nic(t), spec)
    }
}

fn ev(type_code: u8, sn: u32, ts_ns: u32, spec: [u32; 3]) -> Event {
    Event {
        type_code,
        subtype: if type_code == 5 { 1 } else { 0 },
        port: 1,
        flags: 0,
        flow_tag: FLOW_TAG,
        sn,
        ts_ns,
        spec,
    }
}

/// The label of an event the adapter did not use for Algorithm 1.
fn plain_label(ev: &Event, before: &Counters, after: &Counters) -> String {
    let d = |c: Counter| after.get(c).wrapping_sub(before.get(c));
    match ev.type_code {
        3 if d(Counter::ProbesTimedOut) > 0 => "TX, probe timed out and re-requested".to_owned(),
        3 if d(Counter::ProbesSent) > 0 => "TX, probe requested".to_owned(),
        3 => "TX".to_owned(),
        4 => "ACK".to_owned(),
        5 => "NACK".to_owned(),
        2 => "CNP".to_owned(),
        6 if d(Counter::ProbesLate) > 0 => "RTT, late (ignored)".to_owned(),
        6 if d(Counter::ProbesUnsolicited) > 0 => "RTT, unsolicited (ignored)".to_owned(),
        6 if d(Counter::ProbesDuplicate) > 0 => "RTT, duplicate (ignored)".to_owned(),
        6 if d(Counter::RttInvalid) > 0 => "RTT, invalid turnaround".to_owned(),
        c => format!("type {c}"),
    }
}

/// The TIMELY stream: at most `limit` events.
pub fn timely_steps(limit: usize) -> Result<Vec<Step>> {
    let cfg = TimelyPccConfig::from_values(TIMELY_VALUES)
        .map_err(|e| anyhow::anyhow!("the TIMELY stream's parameters: {e}"))?;
    let mut s = Stream::new(18_001, (0, 0), false);
    let mut ctx: FlowContext = [0; 12];
    let mut counters = Counters::default();
    let mut out = Vec::with_capacity(limit);
    while out.len() < limit {
        let (t, next) = s.pop();
        let events = match next {
            Next::Tx => s.tx_event(t),
            Next::Switch { .. } | Next::Departure => continue,
            Next::Response { probe } => vec![s.response(probe, t)],
        };
        for e in events {
            if out.len() == limit {
                break;
            }
            let bytes = e.encode();
            let before_flow = TimelyFlow::load(&ctx);
            let before = counters;
            let r = timely_on_event(&cfg, &mut ctx, &Event::decode(&bytes), &mut counters);
            let after_flow = TimelyFlow::load(&ctx);
            let used = e.type_code == 6
                && counters.get(Counter::ProbesAnswered) != before.get(Counter::ProbesAnswered)
                && counters.get(Counter::RttInvalid) == before.get(Counter::RttInvalid);
            let case = if used {
                // The RTT convention of docs/pcc.md, to name the branch; checked below.
                let x = e.rtt();
                let rtt = e
                    .ts_ns
                    .wrapping_sub(x.req_send_ts_ns)
                    .wrapping_sub(x.resp_send_ts_ns.wrapping_sub(x.req_recv_ts_ns));
                let (Some(b), Some(a)) = (before_flow, after_flow) else {
                    anyhow::bail!("TIMELY stream at {t} ns: an RTT sample on a new flow");
                };
                let mut st = b.timely;
                let up = st.on_rtt(cfg.timely(), U28F4::from_bits(rtt << 4), 0, None);
                ensure!(
                    st == a.timely,
                    "TIMELY stream at {t} ns: on_rtt({rtt} ns) does not reproduce the adapter's state"
                );
                format!("RTT, {}", up.branch.name())
            } else {
                plain_label(&e, &before, &counters)
            };
            if r.rtt_req {
                s.requested(t);
            }
            s.rate_frac = f64::from(r.rate_q20) / f64::from(1u32 << 20);
            out.push(Step {
                bytes: bytes.to_vec(),
                answer: u64::from(r.rate_q20 ^ u32::from(r.rtt_req)) << 32
                    | u64::from(fold(&ctx, &counters)),
                case,
                t_ns: t,
            });
        }
    }
    Ok(out)
}

/// The HPCC stream: at most `limit` events.
pub fn hpcc_steps(limit: usize) -> Result<Vec<Step>> {
    let cfg = HpccPccConfig::from_values(HPCC_VALUES)
        .map_err(|e| anyhow::anyhow!("the HPCC stream's parameters: {e:?}"))?;
    // Quiet from 10 to 12 ms: longer than the 1.34 ms gap the counters span at 100 Gb/s.
    let mut s = Stream::new(18_002, (10_000_000, 12_000_000), true);
    let mut ctx: FlowContext = [0; 12];
    let mut counters = Counters::default();
    let mut out = Vec::with_capacity(limit);
    while out.len() < limit {
        let (t, next) = s.pop();
        let events = match next {
            Next::Tx => s.tx_event(t),
            Next::Departure => vec![s.departure(t)],
            Next::Switch { probe } => {
                // The path changes to another switch 20 ms into the stream.
                let index = if t < 20_000_000 { 3 } else { 4 };
                s.sample(probe, t, index);
                continue;
            }
            Next::Response { probe } => vec![s.response(probe, t)],
        };
        for e in events {
            // What the C glue hands the adapter: the event's raw data (the telemetry of an RTT
            // response; not read for other events).
            let tel = e.rtt_raw_data();
            if out.len() == limit {
                break;
            }
            let bytes = e.encode();
            let before = counters;
            let mut shadow = ctx;
            let r = hpcc_on_event(&cfg, &mut ctx, &Event::decode(&bytes), &tel, &mut counters);
            // The branch: the same event on a copy, through the flow's own method.
            let mut flow = HpccFlow::load(&shadow).unwrap_or_else(|| HpccFlow::new(&cfg));
            let mut c2 = before;
            let (r2, branch) = flow.on_event(&cfg, &Event::decode(&bytes), &tel, &mut c2);
            flow.store(&mut shadow);
            ensure!(
                r2 == r && shadow == ctx,
                "HPCC stream at {t} ns: HpccFlow::on_event and hpcc_on_event differ"
            );
            let gap = counters.get(Counter::TelemetryGap) != before.get(Counter::TelemetryGap);
            let case = match branch {
                Some(_) if gap => "RTT + 1 hop, after a telemetry gap (restart)".to_owned(),
                Some(b) => format!("RTT + 1 hop, {}", hpcc_cc::HpccBranch::name(b)),
                None => plain_label(&e, &before, &counters),
            };
            if r.rtt_req {
                s.requested(t);
            }
            s.rate_frac = f64::from(r.rate_q20) / f64::from(1u32 << 20);
            let mut b = bytes.to_vec();
            b.extend_from_slice(&tel);
            out.push(Step {
                bytes: b,
                answer: u64::from(r.rate_q20 ^ u32::from(r.rtt_req)) << 32
                    | u64::from(fold(&ctx, &counters)),
                case,
                t_ns: t,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counter `c` after a stream's events, from a fresh host run of the adapter.
    fn timely_counters(steps: &[Step]) -> Counters {
        let cfg = TimelyPccConfig::from_values(TIMELY_VALUES).unwrap();
        let (mut ctx, mut c) = ([0; 12], Counters::default());
        for s in steps {
            let b: [u8; EVENT_BYTES] = s.bytes[..EVENT_BYTES].try_into().unwrap();
            timely_on_event(&cfg, &mut ctx, &Event::decode(&b), &mut c);
        }
        c
    }

    #[test]
    fn the_timely_stream_exercises_probes_wrap_and_every_event_type() {
        let steps = timely_steps(20_000).unwrap();
        assert_eq!(steps.len(), 20_000);
        let c = timely_counters(&steps);
        for k in [
            Counter::EvTx,
            Counter::EvAck,
            Counter::EvNack,
            Counter::EvCnp,
            Counter::ProbesAnswered,
            Counter::ProbesTimedOut,
            Counter::ProbesLate,
        ] {
            assert!(c.get(k) > 0, "{k:?} never counted");
        }
        assert_eq!(c.get(Counter::RttInvalid), 0);
        assert_eq!(c.get(Counter::NewFlows), 1);
        // The NIC clock wraps: timestamps both just below 2^32 and small.
        let ts: Vec<u32> = steps
            .iter()
            .map(|s| u32::from_be_bytes(s.bytes[24..28].try_into().unwrap()))
            .collect();
        assert!(ts.iter().any(|&t| t > u32::MAX - 50_000) && ts.iter().any(|&t| t < 1 << 30));
        // Algorithm 1 takes more than one branch on the probe RTTs.
        let branches: std::collections::BTreeSet<&str> = steps
            .iter()
            .filter(|s| s.case.starts_with("RTT, ") && !s.case.contains("late"))
            .map(|s| s.case.as_str())
            .collect();
        assert!(branches.len() >= 3, "{branches:?}");
    }

    #[test]
    fn the_hpcc_stream_exercises_telemetry_gap_path_change_and_both_branches() {
        let steps = hpcc_steps(20_000).unwrap();
        let cases: std::collections::BTreeSet<&str> =
            steps.iter().map(|s| s.case.as_str()).collect();
        for want in [
            "RTT + 1 hop, ai",
            "RTT + 1 hop, md",
            "RTT + 1 hop, resync",
            "RTT + 1 hop, after a telemetry gap (restart)",
            "RTT, late (ignored)",
            "RTT, unsolicited (ignored)",
            "RTT, duplicate (ignored)",
            "TX, probe timed out and re-requested",
        ] {
            assert!(cases.contains(want), "no {want:?} in {cases:?}");
        }
        // The switch's byte counter wraps.
        let tx: Vec<u32> = steps
            .iter()
            .filter(|s| s.bytes[15] == 6)
            .map(|s| u32::from_be_bytes(s.bytes[48..52].try_into().unwrap()))
            .collect();
        assert!(tx.iter().any(|&b| b > u32::MAX - (1 << 20)) && tx.iter().any(|&b| b < 1 << 30));
    }

    #[test]
    fn the_streams_are_deterministic() {
        let a = timely_steps(500).unwrap();
        let b = timely_steps(500).unwrap();
        assert!(
            a.iter()
                .zip(&b)
                .all(|(x, y)| x.bytes == y.bytes && x.answer == y.answer)
        );
    }
}
