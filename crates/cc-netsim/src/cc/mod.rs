//! Every congestion controller of the closed loop behind one trait, and the one registry that
//! lists them.
//!
//! An algorithm is two things:
//!
//! * an [`Algo`]: the run's setup, parsed once from the scenario's `[params]` and `--set` (the
//!   `replay --set` keys of the algorithm), holding the firmware configuration and the f64
//!   reference's parameters together. It makes each flow's controller, fixed-point or
//!   reference, from its own configuration: a flow cannot run against another algorithm's
//!   setup.
//! * a [`FlowCc`] per flow: the sender's controller, called by the NIC and the transport on
//!   every event a NIC delivers to firmware (a packet sent, an ACK or NACK with its INT bytes,
//!   ECN echo and RTT sample, a CNP, a probe response), answering with the rate and the
//!   window the NIC applies. Everything an algorithm keeps per flow (TIMELY's outstanding
//!   segments, HPCC's per-RTT mark, the DOCA PCC context) lives in it, not in the engine.
//!
//! [`REGISTRY`] is the one table of algorithms: the scenario's `algorithm` names an entry, and
//! the entry builds the setup. The engine never looks at which algorithm runs.

pub mod cats;
pub mod dcqcn;
pub mod dctcp;
pub mod hpcc;
mod hpcc_ns3;
pub(crate) mod keys;
pub mod pcc;
pub mod timely;

use super::record::{Format, Recorder};
use super::scenario::{ControllerKind, Loaded};
use cc_trace::Param;

/// Builds an algorithm's setup from the scenario and `--set`; the error names the file and
/// the key.
pub type Build = fn(&Loaded, &[Param]) -> Result<Box<dyn Algo>, String>;

/// One algorithm of the registry.
pub struct Entry {
    /// The scenario's `algorithm` value.
    pub name: &'static str,
    /// The parameters its setup parses (for the reader of the table and of `--help`).
    pub setup: &'static str,
    /// Keys whose default the topology gives (the NIC rate; a telemetry port's speed code):
    /// their origin in the report is the scenario's `topology.host_rate_bps`.
    pub topo_keys: &'static [&'static str],
    /// Why the run does not apply parameter `key` of a scenario (CATS's conductor keys under
    /// `scheduler = "fifo"`), decided before the setup is built; `None`: it applies.
    pub refuses: fn(&Loaded, &str) -> Option<&'static str>,
    /// The scenario's top-level keys only this algorithm reads (`reaction`,
    /// `pcc_inflight_cap`, `web`): another algorithm's scenario giving one is refused.
    pub scenario_keys: &'static [&'static str],
    /// Whether switches stamp INT when the scenario's `topology.int` is not given.
    pub int_default: bool,
    /// Whether the algorithm cannot run without INT (`topology.int = false` is refused).
    pub needs_int: bool,
    /// `[params]` / `--set` keys read only by its `--controller ns3` side (HPCC:
    /// `rate_ai_bps`, ns-3's `RATE_AI`); another controller given one refuses it.
    pub ns3_keys: &'static [&'static str],
    /// Under `switch_model = "ns3"`: the bytes ns-3's `IntHeader` takes in every data packet
    /// and ACK for the algorithm's `CC_MODE`, whatever the switches stamp (third.cc sets its
    /// mode from `CC_MODE`: HPCC's NORMAL, five 8-byte hops and a 2-byte count, 42; TIMELY's
    /// TS, an 8-byte timestamp; NONE, 0, for the others; `IntHeader::GetStaticSize` in
    /// `src/network/utils/int-header.cc`).
    pub ns3_int_bytes: u32,
    /// Builds the run's setup from the scenario and `--set` (errors name the file and key).
    pub build: Build,
}

/// Every algorithm `sim-host sim` runs. Adding one is a folder under `sim/cc/` and a line here.
pub static REGISTRY: &[Entry] = &[
    timely::ENTRY,
    hpcc::ENTRY,
    pcc::ENTRY,
    cats::ENTRY,
    dcqcn::ENTRY,
    dctcp::ENTRY,
];

/// The registry entry named `name`.
pub fn entry(name: &str) -> Option<&'static Entry> {
    REGISTRY.iter().find(|e| e.name == name)
}

/// The names of the registry, in its order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name).collect()
}

/// One run's algorithm setup: both sides' configuration, shared by every flow of the run.
pub trait Algo: Send + Sync {
    /// The parameters the controllers run with, `(key, value, what a default follows)`, as
    /// `replay` lists them.
    fn values(&self) -> Vec<(String, String, Option<&'static str>)>;

    /// A new flow's controller: the firmware crate (`Fixed`) or the f64 reference.
    fn new_flow(&self, kind: ControllerKind) -> Box<dyn FlowCc>;

    /// A new flow's application when the algorithm feeds the transport itself (CATS: the page
    /// through the conductor); `None`: the flow's bytes are all there from its start.
    fn new_app(&self, _kind: ControllerKind) -> Option<Box<super::web::WebFlow>> {
        None
    }

    /// The NIC sends in TSO segments of this many bytes (the next segment is due a segment's
    /// time at the flow's rate after the start of this one) and the receiver ACKs each
    /// segment's last packet; `None`: every packet is paced at the flow's rate.
    fn segment_bytes(&self) -> Option<u64> {
        None
    }

    /// The least retransmission timeout, ps (0: the engine's datacenter timeout).
    fn min_rto_ps(&self) -> u64 {
        0
    }

    /// Width of the RTT histogram's buckets, ns (2^20 buckets).
    fn rtt_bucket_ns(&self) -> u64 {
        10
    }

    /// Receivers send a flow a CNP when CE-marked data arrives, at most one per this
    /// interval, ps; `None` (the default): the algorithm reads no CNPs and none are sent.
    fn cnp_interval_ps(&self) -> Option<u64> {
        None
    }

    /// Why the algorithm has no fixed-point side (no firmware crate), or `None` when it has
    /// one. A run or sweep asking for `--controller fixed` is then refused with this reason.
    fn reference_only(&self) -> Option<&'static str> {
        None
    }

    /// Whether the algorithm has a side computed as the HPCC authors' ns-3 simulator computes
    /// it (`--controller ns3`); the others refuse that controller.
    fn has_ns3_side(&self) -> bool {
        false
    }

    /// The replay format `--record` writes a flow's events in.
    fn record_format(&self) -> Format;

    /// The algorithm's own counters over the run (the DOCA PCC adapter's counter array), or
    /// `None` when it keeps none.
    fn counters(&self) -> Option<cc_pcc::Counters> {
        None
    }

    /// Why nothing meaningful ran, given the run's counters (the DOCA PCC adapter never got an
    /// RTT probe answered), or `None`.
    fn nothing_ran(&self, _c: &super::engine::Counters) -> Option<String> {
        None
    }
}

/// What a controller is told with every event: when, which flow, its NIC's clock and, when
/// the flow is recorded, the recorder.
pub struct Cx<'a> {
    /// Now, ps.
    pub now_ps: u64,
    /// The flow id (the DOCA PCC flow tag; the recorder's file).
    pub flow: u32,
    /// The sending host (whose NIC clock the events carry).
    pub src: u32,
    /// The recorder, when the flow is recorded.
    pub rec: Option<&'a mut Recorder>,
}

impl Cx<'_> {
    /// Now, ns.
    pub fn now_ns(&self) -> u64 {
        self.now_ps / 1_000
    }

    /// The sender's NIC clock now, ns on 32 bits.
    pub fn nic_clock_ns(&self) -> u32 {
        super::engine::nic_clock(self.src, self.now_ps)
    }
}

/// A data packet the NIC just put on the wire.
pub struct Sent {
    /// Its first byte.
    pub seq: u64,
    /// Its payload, bytes.
    pub payload: u32,
    /// Its bytes on the wire.
    pub wire: u32,
    /// With [`Algo::segment_bytes`]: the TSO segment `(first byte, end)` this packet starts,
    /// or `None` when it continues one.
    pub segment: Option<(u64, u64)>,
}

/// An ACK or NACK reaching the sender, after the transport applied it.
pub struct Ack<'a> {
    /// The receiver's next expected byte.
    pub seq: u64,
    /// A NACK (the receiver saw a gap at `seq`).
    pub nack: bool,
    /// The sender's cumulative ACK after this one.
    pub snd_una: u64,
    /// The sender's next byte to send (after a NACK's go-back).
    pub snd_nxt: u64,
    /// The INT block echoed, as on the wire (empty without INT).
    pub int: &'a [u8],
    /// ECN echo: the data packet it acknowledges was marked CE.
    pub ecn_echo: bool,
    /// RTT sample: the acknowledged packet's send time to now, ps.
    pub rtt_ps: u64,
}

/// A DOCA PCC RTT probe's response reaching its sender.
pub struct ProbeResponse {
    /// The request's send time, sender's NIC clock, ns.
    pub req_send_ns: u32,
    /// The request's arrival, responder's NIC clock, ns.
    pub req_recv_ns: u32,
    /// The response's send time, responder's NIC clock, ns.
    pub resp_send_ns: u32,
    /// The switch-telemetry record of the receiver's edge port.
    pub telemetry: [u8; cc_pcc::TELEMETRY_BYTES],
}

/// A controller's answer to one event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[must_use]
pub struct Reply {
    /// The flow asks the NIC for an RTT probe.
    pub probe: bool,
    /// The branch of the last algorithm step the event ran (`None`: it ran none, or the
    /// algorithm names no branches: the DOCA PCC adapter answers with a rate and a probe
    /// request only).
    pub branch: Option<&'static str>,
    /// The algorithm set its rate on this event, even to the value it had: under
    /// `switch_model = "ns3"` the NIC then re-checks its pending wake-up, as ns-3's
    /// `RdmaHw::ChangeRate` does on every HPCC update (`false`: only a changed rate counts).
    pub rate_set: bool,
}

/// One flow's sender-side congestion controller.
///
/// Every hook is an event the NIC or the transport delivers; the engine then reads
/// [`FlowCc::rate_bps`] and [`FlowCc::window_bytes`] and applies them. A hook a controller
/// does not react to keeps its default, which does nothing: such an event leaves its state,
/// its rate and its window as they were.
pub trait FlowCc: Send {
    /// `fixed` or `reference` and the algorithm, for messages.
    fn name(&self) -> &'static str;

    /// A data packet was put on the wire. `Some` when the event ran the algorithm (the engine
    /// then reads the rate and window again before pacing the next packet).
    fn on_send(&mut self, _cx: &mut Cx<'_>, _s: &Sent) -> Option<Reply> {
        None
    }

    /// An ACK or NACK arrived (its INT bytes, ECN echo and RTT sample in `a`).
    fn on_ack(&mut self, cx: &mut Cx<'_>, a: &Ack<'_>) -> Reply;

    /// A NACK made the sender go back to `snd_nxt`: what was sent from there on is to be sent
    /// again.
    fn on_rewind(&mut self, _snd_nxt: u64) {}

    /// The retransmission timer fired: the sender goes back to its cumulative ACK.
    fn on_timeout(&mut self) {}

    /// A congestion notification packet (RoCEv2 CNP) for this flow arrived. Receivers send
    /// them when the algorithm asks for them ([`Algo::cnp_interval_ps`]): at most one per flow
    /// per interval, as CE-marked data arrives, back in the ACK class.
    fn on_cnp(&mut self, _cx: &mut Cx<'_>) -> Reply {
        Reply::default()
    }

    /// A DOCA PCC RTT probe this flow asked for went on the wire.
    fn on_probe_sent(&mut self, _cx: &mut Cx<'_>) -> Reply {
        Reply::default()
    }

    /// A DOCA PCC RTT probe's response arrived.
    fn on_probe_response(&mut self, _cx: &mut Cx<'_>, _r: &ProbeResponse) -> Reply {
        Reply::default()
    }

    /// The pacing rate, b/s.
    fn rate_bps(&self) -> f64;

    /// The window, bytes: the NIC sends only while bytes in flight are below it; `None`: no
    /// limit.
    fn window_bytes(&self) -> Option<f64>;
}

/// The last `preset` key of `[params]` then `--set` resolved by `named`, or `default`; a value
/// `named` does not know is refused, naming where it was given, what a preset is (`what`: "an
/// hpcc preset") and the presets there are (`names`).
pub(crate) fn preset_in_force<P: Copy>(
    l: &Loaded,
    extra: &[Param],
    what: &str,
    names: &[&str],
    default: P,
    named: impl Fn(&str) -> Option<P>,
) -> Result<P, String> {
    use crate::ctrl::PRESET_KEY;
    let mut preset = default;
    for p in l.params.iter().chain(extra).filter(|p| p.key == PRESET_KEY) {
        preset = named(p.value.trim()).ok_or_else(|| {
            let msg = format!("{:?} is not {what} ({})", p.value, names.join(", "));
            if p.source == std::path::Path::new("--set") {
                format!("--set {PRESET_KEY}: {msg}")
            } else {
                format!("{}: key `params.{PRESET_KEY}`: {msg}", l.file.display())
            }
        })?;
    }
    Ok(preset)
}

/// [`Entry::refuses`] of an algorithm that applies every key it parses.
pub(crate) fn applies_all(_: &Loaded, _: &str) -> Option<&'static str> {
    None
}

/// The parameters of a NIC-rate algorithm: the NIC rate key (`rate_key`) at the host link's
/// rate first, then the scenario's `[params]`, then `extra` (`--set`).
pub(crate) fn with_nic_rate(l: &Loaded, rate_key: &str, extra: &[Param]) -> Vec<Param> {
    let mut params = vec![Param {
        key: rate_key.into(),
        value: l.sc.topology.host_rate_bps.to_string(),
        source: l.file.clone(),
        line: None,
    }];
    params.extend(l.params.iter().cloned());
    params.extend(extra.iter().cloned());
    params
}

/// Where the value of parameter `key` in force came from, to start an error about it:
/// `--set KEY` when the last setting is `--set`'s, else the scenario's `FILE: key
/// `params.KEY``.
pub(crate) fn given_at(l: &Loaded, extra: &[Param], key: &str) -> String {
    if extra.iter().any(|p| p.key == key) {
        format!("--set {key}")
    } else {
        format!("{}: key `params.{key}`", l.file.display())
    }
}

/// Refuses a NIC rate that differs from the host link's.
pub(crate) fn check_nic_rate(
    l: &Loaded,
    extra: &[Param],
    rate_key: &str,
    nic: u64,
) -> Result<(), String> {
    let host = l.sc.topology.host_rate_bps;
    if nic != host {
        return Err(format!(
            "{}: {nic} b/s differs from topology.host_rate_bps {host} b/s ({})",
            given_at(l, extra, rate_key),
            l.file.display()
        ));
    }
    Ok(())
}
