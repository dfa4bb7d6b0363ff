//! The NVIDIA DOCA PCC adapter (`cc-pcc`) in every NIC: TIMELY on probe RTTs or HPCC on one hop
//! of switch telemetry (`[params] algorithm`), rate only. Fixed point: the adapter's
//! `timely_on_event` / `hpcc_on_event` on the flow's 48-byte context with the 44-byte event as
//! the platform delivers it; f64: the references of `replay pcc`, on the same fields. The NIC
//! paces every packet at the rate and sends the RTT probes the flow asks for.

use super::{Ack, Algo, Cx, Entry, FlowCc, ProbeResponse, Reply, Sent};
use crate::record::Format;
use crate::scenario::{ControllerKind, Loaded};
use cc_pcc::EventType;
use cc_reference::pcc::{
    RefHpccFlow, RefHpccParams, RefHpccStep, RefTelemetry, RefTimelyFlow, RefTimelyParams,
    RefTimelyStep,
};
use cc_trace::Param;
use cc_trace::pcc::params::Setup as PccSetup;
use std::sync::{Arc, Mutex, PoisonError};

/// The registry line.
pub const ENTRY: Entry = Entry {
    name: "pcc",
    setup: "the `replay pcc --set` keys (`algorithm` = timely | hpcc), line_rate_mbps and \
            HPCC's link_speed_code from the host links",
    topo_keys: &["line_rate_mbps", "link_speed_code"],
    refuses: super::applies_all,
    scenario_keys: &["pcc_inflight_cap"],
    int_default: false,
    needs_int: false,
    ns3_int_bytes: 0,
    ns3_keys: &[],
    build,
};

/// The adapter's tables (both sides), the line rate, the in-flight cap and the counters.
struct Pcc {
    setup: Arc<PccSetup>,
    line_bps: f64,
    /// `pcc_inflight_cap`: `T` in ps (bytes in flight ≤ rate × T).
    cap_ps: Option<u64>,
    /// The adapter's counter array (one per NIC port on the platform; one for the whole
    /// network here: the totals).
    counters: Arc<Mutex<cc_pcc::Counters>>,
}

fn build(l: &Loaded, extra: &[Param]) -> Result<Box<dyn Algo>, String> {
    let s = setup(l, extra)?;
    let cap_ps = match (&s, l.sc.pcc_inflight_cap) {
        (PccSetup::Hpcc(b), true) => {
            Some(u64::from(b.values[cc_pcc::hpcc::hpcc_id::BASE_RTT_NS as usize]) * 1_000)
        }
        _ => None,
    };
    Ok(Box::new(Pcc {
        line_bps: f64::from(s.line_rate_mbps()) * 1e6,
        setup: Arc::new(s),
        cap_ps,
        counters: Arc::new(Mutex::new(cc_pcc::Counters::default())),
    }))
}

/// The DOCA PCC setup: the adapter's table from `[params]` then `extra`, with
/// `line_rate_mbps` defaulting to the host link rate (and refused when it differs) and, under
/// HPCC, `link_speed_code` to the speed of the port whose telemetry the probes carry (the
/// receiver's edge link, at the host rate).
fn setup(l: &Loaded, extra: &[Param]) -> Result<PccSetup, String> {
    let host = l.sc.topology.host_rate_bps;
    let topo = |key: &str, value: String| Param {
        key: key.into(),
        value,
        source: l.file.clone(),
        line: None,
    };
    if !host.is_multiple_of(1_000_000) {
        return Err(format!(
            "{}: key `topology.host_rate_bps`: {host} b/s is not a whole number of Mb/s (the \
             adapter's line_rate_mbps)",
            l.file.display()
        ));
    }
    let hpcc = l
        .params
        .iter()
        .chain(extra)
        .rev()
        .find(|p| p.key == "algorithm")
        .is_some_and(|p| p.value.trim() == "hpcc");
    let mut params = vec![topo("line_rate_mbps", (host / 1_000_000).to_string())];
    if hpcc {
        let Some(code) = hpcc_cc::int::SPEED_BPS.iter().position(|&r| r == host) else {
            return Err(format!(
                "{}: key `topology.host_rate_bps`: {host} b/s has no speed code for the \
                 telemetry's link_speed_code (10/25/40/50/100/200/400/800/1600 Gb/s)",
                l.file.display()
            ));
        };
        params.push(topo("link_speed_code", code.to_string()));
        // T: the topology's longest base RTT, as for HPCC.
        params.extend(crate::paths::topology_params(l, &["base_rtt_ns"]));
    }
    params.extend(l.params.iter().cloned());
    params.extend(extra.iter().cloned());
    let s = cc_trace::pcc::params::build(&l.file, &params).map_err(|e| e.to_string())?;
    if l.sc.pcc_inflight_cap && !matches!(s, PccSetup::Hpcc(_)) {
        return Err(format!(
            "{}: key `pcc_inflight_cap`: needs [params] algorithm = \"hpcc\" (the cap is HPCC's \
             window, rate × base_rtt_ns)",
            l.file.display()
        ));
    }
    let line = s.line_rate_mbps();
    if u64::from(line) * 1_000_000 != host {
        return Err(format!(
            "{}: key `params.line_rate_mbps`: {line} Mb/s differs from topology.host_rate_bps \
             {host} b/s",
            l.file.display()
        ));
    }
    Ok(s)
}

impl Algo for Pcc {
    fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        use cc_trace::kinds::Values as _;
        self.setup.values()
    }

    fn new_flow(&self, kind: ControllerKind) -> Box<dyn FlowCc> {
        let (line_bps, cap_ps) = (self.line_bps, self.cap_ps);
        match (kind, &*self.setup) {
            (ControllerKind::Fixed, s) => Box::new(Flow {
                side: Fixed {
                    // The platform zeroes a new flow's context; the NIC starts at the rate
                    // the adapter gives a new flow (TIMELY's init_rate_q20, HPCC's W_max =
                    // line rate).
                    ctx: [0; cc_pcc::CONTEXT_WORDS],
                    rate_q20: match s {
                        PccSetup::Timely(b) => {
                            b.values[cc_pcc::params::timely_id::INIT_RATE_Q20 as usize]
                        }
                        PccSetup::Hpcc(_) => cc_pcc::Q20_ONE,
                    },
                    setup: self.setup.clone(),
                    counters: self.counters.clone(),
                },
                line_bps,
                cap_ps,
            }),
            // `ns3` is refused for pcc before any flow is made (`Algo::has_ns3_side`).
            (ControllerKind::Reference | ControllerKind::Ns3, PccSetup::Timely(b)) => {
                Box::new(Flow {
                    side: TimelyRef {
                        f: RefTimelyFlow::new(&b.reference),
                        p: b.reference,
                    },
                    line_bps,
                    cap_ps,
                })
            }
            (ControllerKind::Reference | ControllerKind::Ns3, PccSetup::Hpcc(b)) => {
                Box::new(Flow {
                    side: HpccRef {
                        f: RefHpccFlow::new(&b.reference),
                        p: b.reference,
                    },
                    line_bps,
                    cap_ps,
                })
            }
        }
    }

    fn record_format(&self) -> Format {
        Format::Pcc {
            telemetry: matches!(*self.setup, PccSetup::Hpcc(_)),
        }
    }

    fn counters(&self) -> Option<cc_pcc::Counters> {
        Some(*self.counters.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn nothing_ran(&self, c: &crate::engine::Counters) -> Option<String> {
        // Nothing meaningful ran: the adapter never saw an RTT or telemetry sample.
        (c.probe_responses == 0)
            .then(|| "no RTT probe was answered: the controllers never ran Algorithm 1".into())
    }
}

/// One side of the adapter: one platform event; whether the flow asks for an RTT probe.
trait Side: Send {
    const NAME: &'static str;
    /// The RTT responses carry switch telemetry as their raw data (HPCC), not timestamps.
    fn telemetry(&self) -> bool;
    /// One event; whether the flow asks for a probe. An RTT event's telemetry, under HPCC, is
    /// its raw data (`Event::rtt_raw_data`).
    fn event(&mut self, ev: &cc_pcc::Event) -> bool;
    /// The rate, b/s, at line rate `line_bps`.
    fn rate_bps(&self, line_bps: f64) -> f64;
}

/// The adapter: the flow's context as the platform keeps it between events, and the rate of
/// its last answer.
struct Fixed {
    setup: Arc<PccSetup>,
    ctx: cc_pcc::FlowContext,
    /// Rate, Q20 of line rate.
    rate_q20: u32,
    counters: Arc<Mutex<cc_pcc::Counters>>,
}

impl Side for Fixed {
    const NAME: &'static str = "pcc fixed";
    fn telemetry(&self) -> bool {
        matches!(*self.setup, PccSetup::Hpcc(_))
    }
    /// The adapter gets the 44 bytes as delivered, and HPCC their raw data.
    fn event(&mut self, ev: &cc_pcc::Event) -> bool {
        let delivered = cc_pcc::Event::decode(&ev.encode());
        let mut counters = self.counters.lock().unwrap_or_else(PoisonError::into_inner);
        let r = match &*self.setup {
            PccSetup::Timely(b) => {
                cc_pcc::timely_on_event(&b.cfg, &mut self.ctx, &delivered, &mut counters)
            }
            PccSetup::Hpcc(b) => {
                let raw = delivered.rtt_raw_data();
                cc_pcc::hpcc_on_event(&b.cfg, &mut self.ctx, &delivered, &raw, &mut counters)
            }
        };
        self.rate_q20 = r.rate_q20;
        r.rtt_req
    }
    fn rate_bps(&self, line_bps: f64) -> f64 {
        f64::from(self.rate_q20) * line_bps / f64::from(cc_pcc::Q20_ONE)
    }
}

/// TIMELY on probe RTTs, the f64 reference.
struct TimelyRef {
    f: RefTimelyFlow,
    p: RefTimelyParams,
}

impl Side for TimelyRef {
    const NAME: &'static str = "pcc timely reference";
    fn telemetry(&self) -> bool {
        false
    }
    fn event(&mut self, ev: &cc_pcc::Event) -> bool {
        match ev.event_type() {
            Some(EventType::Tx) => matches!(
                self.f.on_tx(&self.p, ev.ts_ns),
                RefTimelyStep::Tx { probe: true, .. }
            ),
            Some(EventType::Rtt) => {
                let r = ev.rtt();
                self.f.on_response(
                    &self.p,
                    ev.ts_ns,
                    r.req_send_ts_ns,
                    r.req_recv_ts_ns,
                    r.resp_send_ts_ns,
                );
                false
            }
            _ => false,
        }
    }
    fn rate_bps(&self, line_bps: f64) -> f64 {
        self.f.rate_fraction(&self.p) * line_bps
    }
}

/// HPCC on switch telemetry, the f64 reference.
struct HpccRef {
    f: RefHpccFlow,
    p: RefHpccParams,
}

impl Side for HpccRef {
    const NAME: &'static str = "pcc hpcc reference";
    fn telemetry(&self) -> bool {
        true
    }
    fn event(&mut self, ev: &cc_pcc::Event) -> bool {
        match ev.event_type() {
            Some(EventType::Tx) => matches!(
                self.f.on_tx(
                    &self.p,
                    ev.ts_ns,
                    ev.flags & cc_pcc::tx_flag::RTT_REQ_SENT != 0
                ),
                RefHpccStep::Tx { probe: true, .. }
            ),
            Some(EventType::Rtt) => {
                let tel = RefTelemetry::decode(&ev.rtt_raw_data());
                self.f.on_response(&self.p, ev.ts_ns, &tel);
                false
            }
            _ => false,
        }
    }
    fn rate_bps(&self, line_bps: f64) -> f64 {
        self.f.rate_fraction(&self.p) * line_bps
    }
}

/// A DOCA PCC flow: its side, the line rate and the in-flight cap.
struct Flow<S> {
    side: S,
    line_bps: f64,
    cap_ps: Option<u64>,
}

impl<S: Side> Flow<S> {
    /// One platform event (`spec`: the union words as the platform fills them; `flags`: the
    /// attribute word's flags) for the side, and its recording.
    fn event(&mut self, cx: &mut Cx<'_>, ty: EventType, flags: u8, spec: [u32; 3]) -> Reply {
        let ev = cc_pcc::Event {
            type_code: ty as u8,
            subtype: if ty == EventType::Nack {
                cc_pcc::nack_subtype::RNR
            } else {
                0
            },
            port: 0,
            flags,
            flow_tag: cx.flow,
            sn: 0,
            ts_ns: cx.nic_clock_ns(),
            spec,
        };
        let probe = self.side.event(&ev);
        if let Some(r) = cx.rec.as_deref_mut() {
            r.pcc_row(cx.flow, &ev);
        }
        Reply {
            probe,
            branch: None,
            rate_set: false,
        }
    }
}

impl<S: Side> Flow<S> {
    /// A TX event now: `packets` and `units` (32 bytes) sent, the flow id as the QPN.
    fn tx_event(&mut self, cx: &mut Cx<'_>, packets: u16, units: u16, flags: u8) -> Reply {
        let spec = cc_pcc::Event::tx_spec(&cc_pcc::Tx {
            first_ts_ns: cx.nic_clock_ns(),
            packets,
            sent_32b_units: units,
            qpn: cx.flow & 0xFF_FFFF,
        });
        self.event(cx, EventType::Tx, flags, spec)
    }
}

impl<S: Side> FlowCc for Flow<S> {
    fn name(&self) -> &'static str {
        S::NAME
    }

    /// A TX event per packet: its bytes in 32-byte units (rounded up), one packet, the flow id
    /// as the QPN.
    fn on_send(&mut self, cx: &mut Cx<'_>, s: &Sent) -> Option<Reply> {
        let units = u16::try_from(s.wire.div_ceil(32)).unwrap_or(u16::MAX);
        Some(self.tx_event(cx, 1, units, 0))
    }

    /// The probe the flow asked for left: a TX event that reports the departure
    /// (`RTT_REQ_SENT`), with no data packets or bytes of its own.
    fn on_probe_sent(&mut self, cx: &mut Cx<'_>) -> Reply {
        self.tx_event(cx, 0, 0, cc_pcc::tx_flag::RTT_REQ_SENT)
    }

    /// An ACK or NACK event: first timestamp, first sequence number, one coalesced.
    fn on_ack(&mut self, cx: &mut Cx<'_>, a: &Ack<'_>) -> Reply {
        let ty = if a.nack {
            EventType::Nack
        } else {
            EventType::Ack
        };
        let spec = cc_pcc::Event::ack_spec(&cc_pcc::Ack {
            first_ts_ns: cx.nic_clock_ns(),
            first_sn: a.seq as u32,
            coalesced: 1,
        });
        self.event(cx, ty, 0, spec)
    }

    /// An RTT event: under TIMELY the request's send time (sender's clock), its receive time
    /// and the response's send time (responder's clock); under HPCC the switch-telemetry
    /// record as the response's raw data, in the same bytes (no timestamps).
    fn on_probe_response(&mut self, cx: &mut Cx<'_>, r: &ProbeResponse) -> Reply {
        let spec = if self.side.telemetry() {
            cc_pcc::Event::raw_data_spec(&r.telemetry)
        } else {
            cc_pcc::Event::rtt_spec(&cc_pcc::Rtt {
                req_send_ts_ns: r.req_send_ns,
                req_recv_ts_ns: r.req_recv_ns,
                resp_send_ts_ns: r.resp_send_ns,
            })
        };
        self.event(cx, EventType::Rtt, 0, spec)
    }

    fn rate_bps(&self) -> f64 {
        self.side.rate_bps(self.line_bps)
    }

    /// The adapter gives a rate only: no window, except with `pcc_inflight_cap` (rate × T).
    fn window_bytes(&self) -> Option<f64> {
        self.cap_ps.map(|t| self.rate_bps() * t as f64 / 8e12)
    }
}
