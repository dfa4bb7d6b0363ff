//! The packet-level discrete-event engine: the event loop here, the rest by concern.
//!
//! * Time is integer picoseconds; events are ordered by `(time, sequence number)` (one `u128`
//!   key per event) in FIFO lanes for arrivals, a timing wheel, and a heap for the far future
//!   ([`queue`]),
//!   so a run is a pure function of the scenario and the seed (`rand_pcg::Pcg64Mcg`).
//! * Packets live in a slab recycled through a free list: memory follows the packets in
//!   flight, not the duration.
//! * [`topology`]: hosts, switches and links, routes, the ideal FCT of a path.
//! * [`switch`]: a port serialises one packet at a time (ACKs before data,
//!   strict priority); switch egress queues share a buffer per switch or have one each; a data
//!   packet that does not fit is dropped (ACKs are never dropped); ECN CE marks data as it
//!   leaves a queue, by Kmin/Kmax/Pmax per link rate ([`super::ecn`]); PFC; INT is stamped at dequeue in the HPCC wire format (speed code, ts
//!   mod 2^24, tx bytes/128 mod 2^20, qlen/80).
//! * [`nic`]: a host NIC sends what its pacer hands out when its port is free: the
//!   controller's rate and window go to the pacer ([`pacer`]: `cc-pacer` in a
//!   fixed-point run, the f64 reference pacer in a reference run), which paces each packet (or
//!   each TSO segment, when the algorithm sends in segments); it tells the controller of every
//!   packet sent and sends the RTT probes a controller asks for.
//! * [`transport`]: receivers ACK every k-th packet (and a flow's or a
//!   segment's last) and NACK a gap (go-back-N; a retransmission timer covers a lost tail);
//!   every ACK goes to the flow's controller ([`super::cc::FlowCc`]) with its INT bytes, ECN
//!   echo and RTT sample; when the algorithm reads CNPs, a receiver sends a flow at most one
//!   per CNP interval as CE-marked data arrives, and the sender's controller gets it.
//! * [`workload`]: the flow groups and each flow's start and stop.
//!
//! The engine never looks at which algorithm runs: it calls the flow's controller and applies
//! the rate and window it answers with.

use super::cc::{Ack, Cx, FlowCc, ProbeResponse, Reply, Sent};
use super::ctrl::Setup;
use super::record::Recorder;
use super::scenario::{
    BufferKind, ControllerKind, FatTree, GroupKind, IdealFct, Loaded, SwitchModel, TopoKind,
    Topology,
};
use super::stats::Stats;
use queue::EventQueue;
use rand_core::Rng;
use rand_pcg::Pcg64Mcg;
use std::collections::VecDeque;

mod mmu;
mod nic;
mod ns3;
mod ns3model;
mod ns3nic;
pub mod pacer;
mod queue;
mod switch;
#[cfg(test)]
mod testkit;
mod topology;
mod transport;
mod workload;

pub use mmu::NS3_PFC_BYTES;
pub use ns3::{Ns3Log, Ns3Net, QlenHist};
pub use ns3model::{NS3_ACK_BYTES, NS3_HDR_BYTES, ns3_seconds_ns, ns3_tx_ns};

pub(crate) use nic::nic_clock;

/// Header bytes of a data packet (Ethernet, IP, UDP, BTH, ICRC, FCS), without INT.
pub const HDR_BYTES: u32 = 64;
/// Bytes of an ACK without INT.
pub const ACK_BYTES: u32 = 64;
/// INT header bytes (nhop, path id).
pub const INT_HDR_BYTES: u32 = 2;
/// INT bytes per hop.
pub const INT_HOP_BYTES: u32 = 8;
/// Most INT hops a packet carries (the firmware default).
pub const MAX_HOPS: usize = hpcc_cc::DEFAULT_MAX_HOPS;
const PS_PER_NS: u64 = 1_000;

const KIND_DATA: u8 = 0;
const KIND_ACK: u8 = 1;
const KIND_NACK: u8 = 2;
/// A DOCA PCC RTT probe request (sender → receiver, queued as data in switches).
const KIND_PROBE: u8 = 3;
/// Its response (receiver → sender, as an ACK).
const KIND_PROBE_RESP: u8 = 4;
/// A RoCEv2 congestion notification packet (receiver → sender, in the ACK class).
const KIND_CNP: u8 = 5;
/// Bytes of a CNP on the wire (RoCEv2: a minimum-size frame).
pub const CNP_BYTES: u32 = 64;
/// A PFC pause (`seq` 1) or resume (`seq` 0) frame, `switch_model = "ns3"` (one hop, in the
/// control class).
const KIND_PFC: u8 = 6;
/// Bytes of a probe and of its response on the wire (no payload).
pub const PROBE_BYTES: u32 = 64;
// A probe keeps its timestamps and telemetry in the hop words (INT is for data packets).
const _: () = assert!(MAX_HOPS >= 4);

/// A packet in the slab: 80 bytes, laid out in this order (`repr(C)`, no padding but the
/// tail's), so that `nhop` is its last byte and the loop can prefetch both cache lines it
/// spans ([`Sim::run`]).
#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Pkt {
    /// Data: first byte; ACK/NACK: the next byte expected.
    seq: u64,
    /// Data: when the sender put it on the wire (ps), echoed by the ACK.
    t_sent_ps: u64,
    hops: [u64; MAX_HOPS],
    flow: u32,
    payload: u32,
    wire: u32,
    /// The port of the receiving node it arrived through (PFC's ingress accounting).
    in_port: u32,
    path_id: u16,
    kind: u8,
    ecn: bool,
    nhop: u8,
}
const _: () = assert!(std::mem::size_of::<Pkt>() == 80);

#[derive(Clone, Copy, Debug)]
enum Ev {
    Arrive {
        node: u32,
        pkt: u32,
    },
    TxDone {
        port: u32,
    },
    Wake {
        host: u32,
    },
    Start {
        flow: u32,
    },
    /// `switch_model = "ns3"`: flow `flow`'s application starting, `hop` zero-delay events
    /// after its start ([`ns3nic`]).
    AppStart {
        flow: u32,
        hop: u32,
    },
    Stop {
        flow: u32,
    },
    Poisson {
        group: u32,
        host: u32,
    },
    Rto {
        flow: u32,
    },
    Sample,
    JainMark,
    JainEnd,
    /// A PFC frame reaches the sender side of `port`: pause (`on` = 1) or resume its data.
    Pfc {
        port: u32,
        on: u32,
    },
    /// DOCA PCC: `host` sends the response to the probe `pkt` (after its turnaround).
    Respond {
        host: u32,
        pkt: u32,
    },
}

/// An event packed into 48 bits: the kind (4 bits), a node or group id (14 bits), a packet,
/// port, host or flow id (30 bits). The queue key is `time (44 bits, ps) | sequence number (36
/// bits) | event (48 bits)` in one `u128`: events pop in (time, order of scheduling), 16 bytes
/// per pending event.
fn pack(ev: Ev) -> u128 {
    let (k, a, b): (u128, u32, u32) = match ev {
        Ev::Arrive { node, pkt } => (0, node, pkt),
        Ev::TxDone { port } => (1, 0, port),
        Ev::Wake { host } => (2, 0, host),
        Ev::Start { flow } => (3, 0, flow),
        Ev::Stop { flow } => (4, 0, flow),
        Ev::Poisson { group, host } => (5, group, host),
        Ev::Rto { flow } => (6, 0, flow),
        Ev::Sample => (7, 0, 0),
        Ev::JainMark => (8, 0, 0),
        Ev::Pfc { port, on } => (9, on, port),
        Ev::JainEnd => (10, 0, 0),
        Ev::Respond { host, pkt } => (11, host, pkt),
        Ev::AppStart { flow, hop } => (12, hop, flow),
    };
    debug_assert!(a < 1 << 14 && b < 1 << 30);
    (k << 44) | (u128::from(a & 0x3FFF) << 30) | u128::from(b & 0x3FFF_FFFF)
}

fn unpack(x: u128) -> Ev {
    let a = ((x >> 30) & 0x3FFF) as u32;
    let b = (x & 0x3FFF_FFFF) as u32;
    match (x >> 44) & 0xF {
        0 => Ev::Arrive { node: a, pkt: b },
        1 => Ev::TxDone { port: b },
        2 => Ev::Wake { host: b },
        3 => Ev::Start { flow: b },
        4 => Ev::Stop { flow: b },
        5 => Ev::Poisson { group: a, host: b },
        6 => Ev::Rto { flow: b },
        7 => Ev::Sample,
        8 => Ev::JainMark,
        10 => Ev::JainEnd,
        11 => Ev::Respond { host: a, pkt: b },
        12 => Ev::AppStart { flow: b, hop: a },
        _ => Ev::Pfc { port: b, on: a },
    }
}

/// How many arrivals ahead (in the first lane) the loop prefetches the packet.
const PREFETCH_AHEAD: usize = 4;
/// Lanes of the event queue, one per link delay; links of further delays use the wheel.
const MAX_LANES: usize = 8;
const NO_LANE: u8 = u8::MAX;

const T_MAX_PS: u64 = (1 << 44) - 1;
const SEQ_MASK: u64 = (1 << 36) - 1;

struct Port {
    node: u32,
    peer: u32,
    rate_bps: u64,
    /// Serialisation time of one byte when the rate divides 8·10^12 b/s·ps (the rates in
    /// use: 10, 25, 40, 100, 400 Gb/s), else 0 and [`ser_ps`] divides.
    ps_per_byte: u64,
    delay_ps: u64,
    /// The event-queue lane of this link's delay (`NO_LANE`: none).
    lane: u8,
    speed_code: u8,
    is_switch: bool,
    q_ack: VecDeque<u32>,
    q_data: VecDeque<u32>,
    q_bytes: u64,
    cur: Option<u32>,
    tx_bytes: u64,
    /// When the current transmission ends (ps): the next may not start earlier.
    free_at_ps: u64,
    /// Transmissions that started before the previous one ended (must stay 0).
    overlaps: u64,
    max_q_bytes: u64,
    /// Has carried data (queue samples are taken on such ports only).
    carried_data: bool,
    /// The port at the other end of the link (the one facing this one).
    rev: u32,
    /// PFC: data that arrived through this port and is still buffered in this switch, bytes.
    ingress_bytes: u64,
    /// PFC: this port asked its upstream to pause and has not resumed it yet.
    pause_sent: bool,
    /// PFC: the downstream side paused this port's data (ACKs still go).
    paused: bool,
    /// PFC: when the current pause started (ps), for the paused-time total.
    paused_since_ps: u64,
    /// `switch_model = "ns3"`: bytes of this ingress port held in its headroom.
    hdrm_bytes: u64,
    /// `switch_model = "ns3"`: this ingress port's headroom, bytes.
    headroom_bytes: u64,
    /// `switch_model = "ns3"`: the α shift of this ingress port's dynamic threshold.
    pfc_shift: u32,
    /// `switch_model = "ns3"`: transmissions take ns-3's time, truncated to the ns
    /// ([`ns3_tx_ns`]).
    ns3_time: bool,
    /// `switch_model = "ns3"`: the sequence number the current transmission's arrival took
    /// when it started (ns-3 schedules the arrival then, `QbbChannel::TransmitStart`).
    arrive_seq: u64,
}

/// A switch's tier: a leaf or ToR (and the one switch of a star, the two of a dumbbell), a
/// fat tree's aggregation switch, a spine or core.
const TIER_EDGE: u8 = 0;
const TIER_AGG: u8 = 1;
const TIER_CORE: u8 = 2;

struct Switch {
    ports: Vec<u32>,
    /// `TIER_EDGE`, `TIER_AGG` or `TIER_CORE` (routing).
    tier: u8,
    /// A fat tree's ToR or aggregation switch: its pod (else 0).
    pod: u32,
    used_bytes: u64,
    max_used_bytes: u64,
    id: u16,
    /// `switch_model = "ns3"`: bytes of the shared pool in use.
    shared_used_bytes: u64,
    /// `switch_model = "ns3"`: the headrooms of its ports, summed, bytes.
    total_headroom_bytes: u64,
    /// `switch_model = "ns3"`: the reserves of its ports, summed, bytes.
    total_reserve_bytes: u64,
}

struct Host {
    port: u32,
    wake_at: u64,
    /// The NIC's pacer ([`pacer`]).
    pacer: pacer::NicPacer,
    /// The flow in each pacer slot (`NO_FLOW`: free or draining).
    slot_flow: Vec<u32>,
    /// Slots out of the wheel with nothing queued, ready for a new flow.
    free: Vec<u16>,
    /// Slots of finished flows, reusable once out of the wheel.
    draining: Vec<u16>,
    /// Flows waiting for a slot (the pacer is full), in order of arrival.
    waiting: VecDeque<u32>,
    /// With TSO segments: the flow whose segment is being sent.
    cur: Option<u32>,
    /// Send jitter: the segment taken last leaves at this time (ps).
    hold_until: u64,
    /// A wake-up armed to keep an idle pacer's clock within its contract (ps).
    tick_at: u64,
    /// `switch_model = "ns3"`: the NIC's queue pairs (flows), in its round-robin order
    /// ([`ns3nic`]).
    ns3_qps: Vec<u32>,
    /// `switch_model = "ns3"`: the index of the queue pair served last.
    ns3_rrlast: u32,
    /// `switch_model = "ns3"`: the pending wake-up (ns-3's `m_nextSend`): its time and its
    /// event's sequence number.
    ns3_next_send: Option<(u64, u64)>,
}

/// A flow's two hosts and the ECMP choices ([`Sim::ecmp`]) of its two directions: data and
/// probes (hashed on the flow id), and what goes back to the sender (the same key, or under
/// `switch_model = "ns3"` one of its own). A digit is below the spines or the aggregation
/// switches per pod or the cores per aggregation switch, each at most 1024 (the scenario's
/// bounds), so `u16` holds it.
#[derive(Clone, Copy)]
struct Ends {
    src: u32,
    dst: u32,
    fwd: [u16; 2],
    rev: [u16; 2],
}

/// Where a host sits, for routing: its edge switch (leaf or ToR) and its port index there;
/// in a fat tree, its pod and its ToR's index among the pod's ToRs (an aggregation switch's
/// port towards it).
#[derive(Clone, Copy, Default)]
struct HostLoc {
    edge: u32,
    edge_port: u32,
    pod: u32,
    pod_port: u32,
}

/// A flow's last segment from its pacer (the pacing check).
#[derive(Clone, Copy)]
struct LastSeg {
    /// When it left, 1/16 ns.
    t_send: u64,
    /// The gap its bytes take at the pacer's rate then, 1/16 ns.
    gap: u64,
    /// The pacer's rate then, units of 128 b/s.
    rate: u32,
    /// The controller's rate then, b/s.
    req_bps: f64,
    /// Its bytes.
    bytes: u32,
}

/// The pacer slot of each NIC's line flow ([`Sim::line_taken`]): the port's time on anything
/// but paced data.
const LINE_SLOT: u16 = 0;

/// No flow in a pacer slot.
const NO_FLOW: u32 = u32::MAX;
/// A flow without a pacer slot.
const NO_SLOT: u16 = u16::MAX;
/// An idle pacer is called at least this often (its contract: every 67 ms), ps.
const PACER_TICK_PS: u64 = 32_000_000_000;
/// TSO: segments of a flow queued in the pacer ahead (topped up as they leave): what a stopped
/// flow leaves queued, handed out later with nothing to send, stays below this many.
const PACER_AHEAD: u64 = 2;

/// One flow's sender and receiver state.
pub struct Flow {
    /// Source host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Bytes the sender may send (`u64::MAX` while a long flow runs; a stopped flow's is what
    /// it had sent when it stopped).
    pub size: u64,
    /// The flow's size as generated (`u64::MAX` for a long flow): its ideal FCT and its size
    /// bucket.
    pub size_bytes: u64,
    /// The `[[flows]]` group it belongs to.
    pub group: u32,
    /// Long-lived (not in the FCT statistics).
    pub long: bool,
    /// Start, ps.
    pub start_ps: u64,
    /// Completion (last byte acknowledged), ps.
    pub done_ps: Option<u64>,
    /// Ideal FCT for its size (`size/line rate + base RTT`), ps: a lower bound of its FCT.
    pub ideal_ps: u64,
    /// The ideal FCT its slowdown divides by (`output.ideal_fct`), ps.
    pub slowdown_ideal_ps: u64,
    /// Bytes delivered in order to the receiver.
    pub delivered: u64,
    /// Bytes delivered at the start of the fairness window (`output.jain_from_ns`).
    pub delivered_mark: Option<u64>,
    /// Bytes delivered at the end of the fairness window (`output.jain_to_ns`, or the run's
    /// end).
    pub delivered_end: Option<u64>,
    /// When its group's `stop_ns` stopped it before it had sent all its bytes, ps. A stopped
    /// flow is not a finished flow: it is left out of the FCT statistics and counted apart.
    pub stopped_ps: Option<u64>,
    snd_nxt: u64,
    snd_una: u64,
    /// Its slot in the NIC's pacer (`NO_SLOT`: not admitted yet).
    slot: u16,
    /// Bytes the pacer may still hand out or has handed out and the NIC has not sent
    /// (the pacer's backlog + `grant`): TSO payload bytes, or one packet's wire bytes.
    avail: u64,
    /// Bytes the pacer handed out that the NIC has not sent yet.
    grant: u64,
    /// Per-packet pacing: the wire bytes of the packet queued in the pacer (0: none).
    pq: u32,
    /// Window flows: what the pacer counts in flight, bytes.
    p_inflight: u64,
    /// The rate (128 b/s units) and window last given to the pacer.
    p_rate: u32,
    /// The time per byte of `p_rate` (the pacing check's gaps, computed as the crate does).
    p_tpb: u32,
    p_window: u32,
    /// When it started waiting for a pacer slot, ps.
    wait_since: Option<u64>,
    /// Its last segment from the pacer.
    last_seg: Option<LastSeg>,
    /// Its source port, as ns-3 gives it when the flow starts (each host pair's from 10000 in
    /// order of start; 0 before).
    pub sport: u16,
    /// Its destination port, as ns-3 names it (the flow file's, or 100; 200 for incast).
    pub dport: u16,
    /// `switch_model = "ns3"`: when its queue pair may send next, ps ([`ns3nic`]).
    ns3_next_avail_ps: u64,
    /// `switch_model = "ns3"`: its rate as the NIC paces it, b/s (ns-3's `m_rate`).
    ns3_rate_bps: u64,
    /// `switch_model = "ns3"`: its last packet's bytes on the wire.
    ns3_last_pkt: u32,
    /// The sender's congestion controller.
    cc: Box<dyn FlowCc>,
    /// Its rate, b/s, as last read.
    rate_bps: f64,
    /// Its window, bytes, as last read.
    window: Option<f64>,
    /// With TSO segments: the segment being sent `(start, end)` and when its first packet
    /// went on the wire (ps).
    seg: Option<(u64, u64)>,
    seg_t_send_ps: u64,
    rcv_next: u64,
    rcv_count: u32,
    nack_for: Option<u64>,
    last_progress_ps: u64,
    rto_armed: bool,
    /// When the receiver last sent this flow a CNP, ps.
    cnp_last_ps: Option<u64>,
    record: bool,
    /// Algorithm cats: the application and conductor feeding this flow ([`super::web`]).
    pub web: Option<Box<super::web::WebFlow>>,
}

impl Flow {
    /// Bytes acknowledged (the sender's cumulative ACK).
    pub fn acked(&self) -> u64 {
        self.snd_una
    }

    /// Every byte it may send is acknowledged (ns-3's `RdmaQueuePair::IsFinished`): the flow
    /// finishes.
    fn all_acked(&self) -> bool {
        self.snd_una >= self.size
    }

    /// The stream offset the sender may send up to: the flow's size, or what a CATS
    /// application has fed so far.
    fn send_limit(&self) -> u64 {
        self.web
            .as_ref()
            .map_or(self.size, |w| w.fed().min(self.size))
    }
}

/// Counters the invariants are checked on.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Counters {
    /// Data packets put on the wire by hosts (retransmissions included).
    pub sent: u64,
    /// Data packets that reached their destination host.
    pub delivered: u64,
    /// Data packets dropped at a full buffer.
    pub dropped: u64,
    /// Data packets still in the network at the end.
    pub in_flight: u64,
    /// ACKs and NACKs sent.
    pub acks: u64,
    /// NACKs sent.
    pub nacks: u64,
    /// Go-back-N retransmission timeouts.
    pub timeouts: u64,
    /// Data packets marked ECN CE.
    pub ecn_marked: u64,
    /// Events processed (all kinds).
    pub events: u64,
    /// Packet events (arrivals, transmission ends, NIC wake-ups).
    pub packet_events: u64,
    /// Ports whose transmissions ever overlapped (must be 0).
    pub link_overlaps: u64,
    /// Largest switch buffer occupancy seen (shared: per switch; per port: per port), bytes.
    pub max_buffer_used_bytes: u64,
    /// The buffer limit, bytes.
    pub buffer_bytes: u64,
    /// Packets in the slab at its largest (memory bound).
    pub max_packets_alive: u64,
    /// PFC pause frames sent (0 with PFC off).
    pub pfc_pauses: u64,
    /// PFC: time ports spent paused, summed over ports, ns.
    pub pfc_paused_ns: u64,
    /// DOCA PCC: RTT probes sent (0 for the other algorithms).
    pub probes_sent: u64,
    /// DOCA PCC: probes dropped at a full buffer.
    pub probes_dropped: u64,
    /// `switch_model = "ns3"`: ACKs, NACKs and probe responses dropped at an ingress port
    /// whose headroom and threshold were both full (0 in a lossless run).
    pub acks_dropped: u64,
    /// DOCA PCC: probe responses that reached their sender.
    pub probe_responses: u64,
    /// CNPs receivers sent (0 unless the algorithm reads CNPs).
    pub cnps_sent: u64,
    /// CNPs that reached their sender's controller.
    pub cnps_received: u64,
    /// Segments the NICs' pacers handed out (TSO segments, or packets).
    pub pacer_segments: u64,
    /// The most flows one NIC's pacer held (its flow table's high-water mark).
    pub pacer_max_flows: u64,
    /// Flows that waited for a pacer slot (a NIC's pacer was full when they started).
    pub pacer_waits: u64,
    /// Times a NIC's pacer with room refused a flow (must stay 0: such a flow never sends).
    pub pacer_refused: u64,
    /// Their time waiting, summed, ns.
    pub pacer_wait_ns: u64,
    /// Line time the NICs' ports spent on anything but paced data (ACKs, NACKs, probes, PFC
    /// pauses, send-jitter holds), given to each pacer's line flow, bytes.
    pub pacer_line_bytes: u64,
    /// Bytes the pacers handed out with nothing left to send (a stopped or finished flow, a
    /// go-back-N that moved the data): not sent.
    pub pacer_unused_bytes: u64,
    /// Rates below the pacer's slowest (61 036 × 128 b/s ≈ 7.81 Mb/s) given to a pacer, which
    /// paces them at that rate.
    pub pacer_rate_floor: u64,
    /// Segments a pacer handed out before their flow's previous segment's time plus its gap
    /// at the rate it left with (must stay 0: the NIC never sends faster than the pacer's
    /// rate).
    pub pacer_early: u64,
    /// Consecutive segments of a flow that left exactly one pacing gap apart at an unchanged
    /// rate (the flow was paced, not idle or held by the line).
    pub pacer_paced_pairs: u64,
    /// Over those: the gap's relative error against the controller's rate (`gap / (8·bytes /
    /// rate) − 1`), summed (the pacer's roundings: the rate down to 128 b/s, then the two
    /// ceilings of docs/pacer.md §1).
    pub pacer_gap_err_sum: f64,
    /// The smallest of those errors (negative: a gap shorter than the rate asks).
    pub pacer_gap_err_min: f64,
    /// The largest excess of a gap over the one the controller's rate asks, ns.
    pub pacer_gap_excess_max_ns: f64,
}

/// The simulator.
pub struct Sim {
    now: u64,
    seq: u64,
    queue: EventQueue,
    pkts: Vec<Pkt>,
    free: Vec<u32>,
    ports: Vec<Port>,
    switches: Vec<Switch>,
    hosts: Vec<Host>,
    /// Every flow, in id order.
    pub flows: Vec<Flow>,
    /// Each flow's ends and ECMP choices, beside `flows` so that a switch routing a packet
    /// reads 16 bytes instead of a flow's state.
    ends: Vec<Ends>,
    /// Each host's place in the topology (routing).
    loc: Vec<HostLoc>,
    setup: Setup,
    controller: ControllerKind,
    topo: TopoKind,
    hosts_per_leaf: u32,
    left_hosts: u32,
    spines: u32,
    /// The fat tree's shape (kind `fat_tree`).
    fat: FatTree,
    n_hosts: u32,
    buffer: BufferKind,
    buffer_bytes: u64,
    /// ECN marking rules per egress link rate (empty: no marking) and their random stream,
    /// drawn from the seed apart from the workload's.
    ecn: Vec<super::ecn::EcnRule>,
    ecn_rng: Pcg64Mcg,
    /// CNP generation: at most one CNP per flow per this interval, ps (`None`: the algorithm
    /// reads none, and receivers send none).
    cnp_interval_ps: Option<u64>,
    /// PFC `(xoff, xon)` thresholds per ingress port, bytes (`None`: PFC off).
    pfc: Option<(u64, u64)>,
    int_on: bool,
    /// `topology.switch_model = "ns3"` ([`mmu`]).
    ns3_switch: bool,
    /// Header bytes of each packet kind ([`Wire::of`] the switch model).
    wire: Wire,
    /// `switch_model = "ns3"`: ns-3's INT header for the algorithm ([`int_wire_bytes`]).
    ns3_int_bytes: Option<u32>,
    /// `switch_model = "ns3"`: ns-3's `INT_MULTI` (`None`: the default model's INT).
    ns3_int_multi: Option<u32>,
    /// `switch_model = "ns3"`: ns-3's ECMP ([`ns3model`]).
    ns3_ecmp: Option<Box<ns3model::Ns3Ecmp>>,
    /// The next source port of each (source, destination) host pair (ns-3's `portNumder`).
    next_sport: std::collections::HashMap<(u32, u32), u16>,
    /// Each flow group's destination port, as ns-3 names it.
    group_dport: Vec<u16>,
    /// `output.ideal_fct = "ns3"`: slowdowns against ns-3's standalone FCT.
    ideal_ns3: bool,
    mtu: u32,
    /// TSO segment bytes when the algorithm sends in segments (the controller's events and the
    /// receiver's ACKs follow them).
    seg_bytes: Option<u64>,
    /// The pacer's segments: `seg_bytes` when a segment holds more than one packet; `None`
    /// (every packet paced alone, at its wire bytes) otherwise, as for a one-packet segment
    /// (TIMELY's ns-3 preset) the two are the same schedule.
    pace_seg: Option<u64>,
    ack_every: u32,
    jitter_ps: u64,
    /// The NICs pace through `cc-pacer` (else the f64 reference).
    pacer_fixed: bool,
    /// Flows a NIC's pacer holds at once (≤ [`pacer::PACER_FLOWS`]).
    pacer_cap: usize,
    rng: Pcg64Mcg,
    end_ps: u64,
    sample_ps: u64,
    rto_ps: u64,
    /// Counters.
    pub c: Counters,
    /// Statistics.
    pub stats: Stats,
    /// `--record` writers.
    pub rec: Recorder,
    cdfs: Vec<Option<super::scenario::Cdf>>,
    groups: Vec<super::scenario::FlowGroup>,
    host_rate_bps: u64,
    track: Vec<u32>,
    jain_from_ps: u64,
    jain_to_ps: u64,
    stats_from_ps: u64,
    next_plot_ps: u64,
    plot_ps: u64,
    last_delivered: Vec<u64>,
    /// Bytes delivered in order, summed over the flows (the plotted total).
    delivered_bytes: u64,
    int_buf: [u8; 2 + 8 * MAX_HOPS],
    /// `--ns3-out`: the PFC frames and queue histograms (`None` without `--ns3-out`).
    ns3_log: Option<Box<Ns3Log>>,
}

/// Bytes on the wire of each packet kind beside its payload and its INT, per switch model:
/// the default model's ([`HDR_BYTES`], [`ACK_BYTES`]) or ns-3's ([`NS3_HDR_BYTES`],
/// [`NS3_ACK_BYTES`]). (PFC frames go on the wire only under ns-3's: [`NS3_PFC_BYTES`].)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wire {
    /// A data packet's headers.
    pub data_hdr: u32,
    /// An ACK or NACK.
    pub ack: u32,
}

impl Wire {
    /// The sizes of the default model (`ns3` false) or of `switch_model = "ns3"`.
    pub const fn of(ns3: bool) -> Wire {
        if ns3 {
            Wire {
                data_hdr: NS3_HDR_BYTES,
                ack: NS3_ACK_BYTES,
            }
        } else {
            Wire {
                data_hdr: HDR_BYTES,
                ack: ACK_BYTES,
            }
        }
    }
}

/// INT bytes on the wire of a packet that carries `hops` hops: under `switch_model = "ns3"`
/// (`ns3` = the algorithm's [`Entry::ns3_int_bytes`](super::cc::Entry)) ns-3's fixed header for
/// the algorithm, whatever the hops stamped; else none without INT (`int_on` false), or the
/// header and 8 bytes a hop.
pub fn int_wire_bytes(int_on: bool, ns3: Option<u32>, hops: u32) -> u32 {
    match (int_on, ns3) {
        (_, Some(b)) => b,
        (false, None) => 0,
        (true, None) => INT_HDR_BYTES + INT_HOP_BYTES * hops,
    }
}

impl Sim {
    /// [`int_wire_bytes`] of this run.
    fn int_wire_bytes(&self, hops: u32) -> u32 {
        int_wire_bytes(self.int_on, self.ns3_int_bytes, hops)
    }
}

/// `8·10^12 / rate_bps` when it is a whole number of ps per byte, else 0.
fn ps_per_byte(rate_bps: u64) -> u64 {
    if rate_bps > 0 && 8_000_000_000_000 % rate_bps == 0 {
        8_000_000_000_000 / rate_bps
    } else {
        0
    }
}

impl Sim {
    /// Prefetches packet `pi`: its first and its last byte, i.e. both cache lines it spans
    /// ([`Pkt`]). A prefetch does not wait for the line, unlike a load.
    #[inline]
    fn prefetch_pkt(&self, pi: u32) {
        let pk = &self.pkts[pi as usize];
        mem_prefetch::prefetch_read_data::<_, 3>(pk);
        mem_prefetch::prefetch_read_data::<_, 3>(&pk.nhop);
    }
}

impl Port {
    /// [`ser_ps`] of `bytes` on this port's link: one multiply when the rate divides
    /// 8·10^12 b/s·ps (`ps_per_byte`, exact), else the division; under `switch_model =
    /// "ns3"` ns-3's time, in whole ns ([`ns3_tx_ns`]).
    #[inline]
    fn ser_ps(&self, bytes: u32) -> u64 {
        match self.ps_per_byte {
            0 if self.ns3_time => ns3_tx_ns(bytes, self.rate_bps) * PS_PER_NS,
            0 => ser_ps(bytes, self.rate_bps),
            b => u64::from(bytes) * b,
        }
    }
}

/// Serialisation time of `bytes` at `rate_bps`, ps, rounded up.
fn ser_ps(bytes: u32, rate_bps: u64) -> u64 {
    // ceil(bytes·8·10^12 / rate)
    (u128::from(bytes) * 8_000_000_000_000).div_ceil(u128::from(rate_bps)) as u64
}

fn mix(x: u64) -> u64 {
    // splitmix64 finaliser: the ECMP hash of a flow id.
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn uniform(rng: &mut Pcg64Mcg) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

impl Sim {
    /// Builds the network and the workload of a checked scenario.
    pub fn new(
        l: &Loaded,
        setup: Setup,
        controller: ControllerKind,
        seed: u64,
        rec: Recorder,
    ) -> Sim {
        let sc = &l.sc;
        let t = &sc.topology;
        let int_on = t.int.unwrap_or(setup.entry().int_default);
        let n_hosts = l.hosts;
        let cnp_interval_ps = setup.algo().cnp_interval_ps();
        let ns3_int_bytes =
            (t.switch_model == SwitchModel::Ns3).then(|| setup.entry().ns3_int_bytes);
        let mut sim = Sim {
            now: 0,
            seq: 0,
            // Replaced once the links' delays are known.
            queue: EventQueue::new(0, 0),
            pkts: Vec::new(),
            free: Vec::new(),
            ports: Vec::new(),
            switches: Vec::new(),
            hosts: Vec::new(),
            flows: Vec::new(),
            ends: Vec::new(),
            loc: Vec::new(),
            seg_bytes: setup.algo().segment_bytes(),
            pace_seg: setup
                .algo()
                .segment_bytes()
                .filter(|&s| s > u64::from(sc.mtu_bytes)),
            setup,
            controller,
            topo: t.kind,
            hosts_per_leaf: t.hosts_per_leaf.unwrap_or(1),
            left_hosts: t.left_hosts.unwrap_or(0),
            spines: t.spines.unwrap_or(1),
            fat: t.fat_tree(),
            n_hosts,
            buffer: t.buffer,
            buffer_bytes: t.buffer_bytes,
            // Checked when the scenario was loaded.
            ecn: super::ecn::rules(l).unwrap_or_else(|e| panic!("{e}")),
            ecn_rng: Pcg64Mcg::new(0xEC4E_C4EC_u128 ^ (u128::from(seed) << 64 | u128::from(seed))),
            cnp_interval_ps,
            pfc: t.pfc_xoff_bytes.map(|x| {
                (
                    x,
                    t.pfc_xon_bytes
                        .unwrap_or(x.saturating_sub(2 * u64::from(sc.mtu_bytes))),
                )
            }),
            int_on,
            ns3_switch: t.switch_model == SwitchModel::Ns3,
            wire: Wire::of(t.switch_model == SwitchModel::Ns3),
            ns3_ecmp: None,
            ns3_int_bytes,
            ns3_int_multi: (t.switch_model == SwitchModel::Ns3).then(|| t.int_multi.unwrap_or(1)),
            next_sport: std::collections::HashMap::new(),
            group_dport: sc
                .flows
                .iter()
                .enumerate()
                .map(|(g, x)| match l.ns3_dport.get(g) {
                    Some(&d) => d,
                    None if matches!(x.kind, GroupKind::Incast | GroupKind::PoissonIncast) => {
                        super::ns3::DPORT_INCAST as u16
                    }
                    None => super::ns3::DPORT_NORMAL as u16,
                })
                .collect(),
            ideal_ns3: sc.output.ideal_fct == IdealFct::Ns3,
            mtu: sc.mtu_bytes,
            ack_every: sc.ack_every,
            jitter_ps: sc.send_jitter_ns * PS_PER_NS,
            pacer_fixed: sc.pacer.unwrap_or(controller) == ControllerKind::Fixed,
            pacer_cap: sc.pacer_flows as usize,
            rng: Pcg64Mcg::new(0xC0FF_EE00_D00D_u128 ^ (u128::from(seed) << 64 | u128::from(seed))),
            end_ps: sc.duration_ns * PS_PER_NS,
            sample_ps: sc.output.sample_ns * PS_PER_NS,
            rto_ps: 0,
            c: Counters {
                buffer_bytes: t.buffer_bytes,
                ..Counters::default()
            },
            stats: Stats::new(
                &sc.output.size_buckets_bytes,
                sc.output.ideal_fct == IdealFct::Ns3,
            ),
            rec,
            cdfs: l.cdfs.clone(),
            groups: sc.flows.clone(),
            host_rate_bps: t.host_rate_bps,
            track: Vec::new(),
            jain_from_ps: sc.output.jain_from_ns.unwrap_or(sc.duration_ns / 2) * PS_PER_NS,
            jain_to_ps: sc
                .output
                .jain_to_ns
                .unwrap_or(sc.duration_ns)
                .min(sc.duration_ns)
                * PS_PER_NS,
            stats_from_ps: sc.output.stats_from_ns * PS_PER_NS,
            next_plot_ps: 0,
            plot_ps: (sc.duration_ns * PS_PER_NS / 600).max(sc.output.sample_ns * PS_PER_NS),
            last_delivered: Vec::new(),
            delivered_bytes: 0,
            int_buf: [0; 2 + 8 * MAX_HOPS],
            ns3_log: None,
        };
        sim.build_topology(t);
        if sim.ns3_switch {
            sim.ns3_ecmp = Some(Box::new(ns3model::Ns3Ecmp::new(&sim, &l.ns3_id)));
        }
        // The wheel spans two of the slowest hop (a link's delay and a full packet's
        // serialisation), so that arrivals and transmissions fall inside it.
        let hop_ps = sim
            .ports
            .iter()
            .map(|p| p.delay_ps + ser_ps(sc.mtu_bytes + 200, p.rate_bps))
            .max()
            .unwrap_or(0);
        // One lane of the queue per link delay (up to MAX_LANES): a link's arrivals are
        // scheduled a fixed delay after the transmissions end, in time order.
        let mut delays: Vec<u64> = sim.ports.iter().map(|p| p.delay_ps).collect();
        delays.sort_unstable();
        delays.dedup();
        delays.truncate(MAX_LANES);
        for p in &mut sim.ports {
            p.lane = delays
                .binary_search(&p.delay_ps)
                .map_or(NO_LANE, |i| i as u8);
        }
        debug_assert_eq!(sim.queue.len(), 0);
        sim.queue = EventQueue::new(2 * hop_ps, delays.len());
        if sim.ns3_switch {
            sim.ns3_mmu_setup();
        }
        let host_delay = t.host_delay_ns * PS_PER_NS;
        let fab_rate = t.fabric_rate_bps.unwrap_or(t.host_rate_bps);
        let fab_delay = t.fabric_delay_ns.unwrap_or(t.host_delay_ns) * PS_PER_NS;
        // Retransmission timeout: generous against the largest queueing delay.
        let worst_q_ps = ser_ps(
            t.buffer_bytes.min(u64::from(u32::MAX)) as u32,
            t.host_rate_bps.min(fab_rate),
        );
        sim.rto_ps = (worst_q_ps + 4 * (host_delay + fab_delay) + 100_000_000).min(10_000_000_000);
        sim.rto_ps = sim.rto_ps.max(sim.setup.algo().min_rto_ps());
        sim.stats.rtt = super::stats::Hist::new(sim.setup.algo().rtt_bucket_ns(), 1 << 20);
        sim.schedule_groups();
        sim.track = sc
            .output
            .track_flows
            .clone()
            .unwrap_or_else(|| (0..16).collect());
        sim.last_delivered = vec![0; sim.track.len()];
        sim.stats.tracked = sim.track.clone();
        sim.push(0, Ev::Sample);
        if sim.jain_from_ps < sim.end_ps {
            sim.push(sim.jain_from_ps, Ev::JainMark);
        }
        if sim.jain_to_ps < sim.end_ps {
            sim.push(sim.jain_to_ps, Ev::JainEnd);
        }
        sim
    }

    fn key(&mut self, t: u64, ev: Ev) -> u128 {
        // Times past 2^44 ps (17.6 s) are after every scenario's end: they never run.
        self.seq = (self.seq + 1) & SEQ_MASK;
        (u128::from(t.min(T_MAX_PS)) << 84) | (u128::from(self.seq) << 48) | pack(ev)
    }

    fn push(&mut self, t: u64, ev: Ev) {
        let key = self.key(t, ev);
        self.queue.push(key);
    }

    /// [`push`](Self::push) for an event a link's delay after now, in the link's lane, in the
    /// order of sequence number `seq` (taken earlier, [`Port::arrive_seq`]) when it is not 0.
    fn push_lane(&mut self, lane: u8, t: u64, ev: Ev, seq: u64) {
        let key = if seq == 0 {
            self.key(t, ev)
        } else {
            (u128::from(t.min(T_MAX_PS)) << 84) | (u128::from(seq) << 48) | pack(ev)
        };
        match lane {
            NO_LANE => self.queue.push(key),
            l => self.queue.push_lane(usize::from(l), key),
        }
    }

    fn alloc(&mut self, p: Pkt) -> u32 {
        if let Some(i) = self.free.pop() {
            self.pkts[i as usize] = p;
            i
        } else {
            self.pkts.push(p);
            self.c.max_packets_alive = self.pkts.len() as u64;
            (self.pkts.len() - 1) as u32
        }
    }

    fn release(&mut self, i: u32) {
        self.free.push(i);
    }

    /// Runs to the end of the scenario; `progress` is called about every 2^16 events with
    /// the simulated time (ns).
    pub fn run(&mut self, mut progress: impl FnMut(u64)) {
        while let Some(it) = self.queue.pop() {
            let t = (it >> 84) as u64;
            if t > self.end_ps {
                self.queue.push(it);
                break;
            }
            self.now = t;
            self.c.events += 1;
            // Prefetch the packet of an arrival a few events ahead: it was last touched a
            // link's delay earlier, tens of thousands of events ago, and is out of the cache.
            if let Some(next) = self.queue.peek_lane(0, PREFETCH_AHEAD)
                && let Ev::Arrive { pkt, .. } = unpack(next)
            {
                self.prefetch_pkt(pkt);
            }
            if self.c.events & 0xFFFF == 0 {
                progress(self.now / PS_PER_NS);
            }
            match unpack(it) {
                Ev::Arrive { node, pkt } => {
                    self.c.packet_events += 1;
                    if self.pkts[pkt as usize].kind == KIND_PFC {
                        self.pfc_rx(pkt);
                    } else if node < self.n_hosts {
                        self.host_rx(node, pkt);
                    } else {
                        self.switch_rx(node - self.n_hosts, pkt);
                    }
                }
                Ev::TxDone { port } => {
                    self.c.packet_events += 1;
                    self.tx_done(port);
                }
                Ev::Wake { host } if self.ns3_switch => {
                    self.c.packet_events += 1;
                    self.ns3_wake(host, ((it >> 48) as u64) & SEQ_MASK);
                }
                Ev::Wake { host } => {
                    self.c.packet_events += 1;
                    if self.hosts[host as usize].wake_at == self.now {
                        self.hosts[host as usize].wake_at = u64::MAX;
                    }
                    self.host_try_send(host);
                }
                Ev::Start { flow } if self.ns3_switch => {
                    self.push(self.now, Ev::AppStart { flow, hop: 1 });
                }
                Ev::AppStart { flow, hop: 1 } => {
                    self.push(self.now, Ev::AppStart { flow, hop: 2 });
                }
                Ev::Start { flow } | Ev::AppStart { flow, .. } => self.start_flow(flow),
                Ev::Stop { flow } => self.stop_flow(flow),
                Ev::Poisson { group, host } => self.poisson(group, host),
                Ev::Rto { flow } => self.rto(flow),
                Ev::Sample => self.sample(),
                Ev::Pfc { port, on } => self.pfc_frame(port, on != 0),
                Ev::JainMark => {
                    for f in &mut self.flows {
                        if f.long && f.stopped_ps.is_none() && f.start_ps <= self.now {
                            f.delivered_mark = Some(f.delivered);
                        }
                    }
                }
                Ev::JainEnd => self.jain_end(),
                Ev::Respond { host, pkt } => {
                    self.c.packet_events += 1;
                    self.respond(host, pkt);
                }
            }
        }
        self.now = self.now.max(self.end_ps);
        if self.jain_to_ps >= self.end_ps {
            self.jain_end();
        }
        self.c.in_flight = self.c.sent - self.c.delivered - self.c.dropped;
        self.c.link_overlaps = self.ports.iter().filter(|p| p.overlaps > 0).count() as u64;
        let end = self.now;
        for pt in &mut self.ports {
            if pt.paused {
                self.c.pfc_paused_ns += (end - pt.paused_since_ps) / PS_PER_NS;
                pt.paused_since_ps = end;
            }
        }
        self.c.max_buffer_used_bytes = match self.buffer {
            BufferKind::Shared => self.switches.iter().map(|s| s.max_used_bytes).max(),
            BufferKind::PerPort => self
                .ports
                .iter()
                .filter(|p| p.is_switch)
                .map(|p| p.max_q_bytes)
                .max(),
        }
        .unwrap_or(0);
    }

    /// The end of the fairness window: every long flow's bytes delivered so far.
    fn jain_end(&mut self) {
        for f in &mut self.flows {
            if f.delivered_mark.is_some() && f.delivered_end.is_none() {
                f.delivered_end = Some(f.delivered);
            }
        }
    }

    /// Data packets in the network now (counted in the slab, independently of the counters).
    pub fn data_packets_alive(&self) -> u64 {
        let mut free = vec![false; self.pkts.len()];
        for &i in &self.free {
            free[i as usize] = true;
        }
        self.pkts
            .iter()
            .zip(free)
            .filter(|(p, f)| !f && p.kind == KIND_DATA)
            .count() as u64
    }

    /// `(tx bytes, rate b/s)` per port (the link-rate invariant).
    pub fn port_tx(&self) -> Vec<(u64, u64)> {
        self.ports
            .iter()
            .map(|p| (p.tx_bytes, p.rate_bps))
            .collect()
    }

    /// The ECN marking rules the switches run with, one per egress link rate.
    pub fn ecn_rules(&self) -> &[super::ecn::EcnRule] {
        &self.ecn
    }

    /// The run's controller setup.
    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    /// The end time, ns.
    pub fn end_ns(&self) -> u64 {
        self.end_ps / PS_PER_NS
    }

    fn sample(&mut self) {
        let mut qmax = 0;
        let keep = self.now >= self.stats_from_ps;
        for p in &self.ports {
            if p.is_switch && p.carried_data {
                if keep {
                    self.stats.queue.add(p.q_bytes);
                }
                qmax = qmax.max(p.q_bytes);
            }
        }
        self.ns3_sample(keep);
        if self.now >= self.next_plot_ps {
            let dt = (self.now + self.plot_ps - self.next_plot_ps).max(1);
            let mut rates = Vec::with_capacity(self.track.len());
            let mut goodput = Vec::with_capacity(self.track.len());
            for (k, &f) in self.track.iter().enumerate() {
                match self.flows.get(f as usize) {
                    Some(fl) if fl.start_ps <= self.now && fl.done_ps.is_none() => {
                        rates.push(fl.rate_bps);
                        goodput.push(
                            (fl.delivered - self.last_delivered[k]) as f64 * 8e12 / dt as f64,
                        );
                        self.last_delivered[k] = fl.delivered;
                    }
                    Some(fl) => {
                        rates.push(f64::NAN);
                        goodput.push(f64::NAN);
                        self.last_delivered[k] = fl.delivered;
                    }
                    None => {
                        rates.push(f64::NAN);
                        goodput.push(f64::NAN);
                    }
                }
            }
            self.stats.series_point(
                self.now / PS_PER_NS,
                qmax,
                self.delivered_bytes,
                rates,
                goodput,
            );
            self.next_plot_ps = self.now + self.plot_ps;
        }
        if self.now + self.sample_ps <= self.end_ps {
            self.push(self.now + self.sample_ps, Ev::Sample);
        }
    }
}
