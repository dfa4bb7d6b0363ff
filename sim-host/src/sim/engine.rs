//! The packet-level discrete-event engine.
//!
//! * Time is integer picoseconds; events are ordered by `(time, sequence number)` in a binary
//!   heap (one `u128` per event), so a run is a pure function of the scenario and the seed
//!   (`rand_pcg::Pcg64Mcg`).
//! * Packets live in a slab recycled through a free list: memory follows the packets in
//!   flight, not the duration.
//! * Links have a rate and a propagation delay; a port serialises one packet at a time (ACKs
//!   before data, strict priority). Switch egress queues share a buffer per switch or have
//!   one each; a data packet that does not fit is dropped (ACKs are never dropped). INT is
//!   stamped at dequeue in the HPCC wire format (speed code, ts mod 2^24, tx bytes/128 mod
//!   2^20, qlen/80), and ECN CE marks data enqueued above a threshold.
//! * A host NIC serves its flows earliest-eligible-first: HPCC flows are paced at `W/T` and
//!   limited by the window (`inflight < W`), TIMELY flows send each TSO segment at line rate
//!   and then wait `segment/rate`. Receivers ACK every k-th packet (and a flow's or a
//!   segment's last), and NACK a gap (go-back-N; a retransmission timer covers a lost tail).

use super::cc::{Ack, Cx, FlowCc, ProbeResponse, Reply, Sent};
use super::ctrl::Setup;
use super::record::Recorder;
use super::scenario::{BufferKind, ControllerKind, GroupKind, Loaded, TopoKind};
use super::stats::{Hist, Stats};
use rand_core::Rng;
use rand_pcg::Pcg64Mcg;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

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
/// Bytes of a probe and of its response on the wire (no payload).
pub const PROBE_BYTES: u32 = 64;
// A probe keeps its timestamps and telemetry in the hop words (INT is for data packets).
const _: () = assert!(MAX_HOPS >= 4);

#[derive(Clone, Copy, Default)]
struct Pkt {
    flow: u32,
    /// Data: first byte; ACK/NACK: the next byte expected.
    seq: u64,
    payload: u32,
    wire: u32,
    kind: u8,
    ecn: bool,
    nhop: u8,
    path_id: u16,
    /// Data: when the sender put it on the wire (ps), echoed by the ACK.
    t_sent_ps: u64,
    hops: [u64; MAX_HOPS],
    /// The port of the receiving node it arrived through (PFC's ingress accounting).
    in_port: u32,
}

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
/// port, host or flow id (30 bits). The heap key is `time (44 bits, ps) | sequence number (36
/// bits) | event (48 bits)` in one `u128`: events pop in (time, order of scheduling), 16 bytes
/// per heap entry.
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
        _ => Ev::Pfc { port: b, on: a },
    }
}

const T_MAX_PS: u64 = (1 << 44) - 1;
const SEQ_MASK: u64 = (1 << 36) - 1;

struct Port {
    node: u32,
    peer: u32,
    rate_bps: u64,
    delay_ps: u64,
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
}

struct Switch {
    ports: Vec<u32>,
    used_bytes: u64,
    max_used_bytes: u64,
    id: u16,
}

struct Host {
    port: u32,
    active: Vec<u32>,
    wake_at: u64,
}

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
    /// Ideal FCT for its size (`size/line rate + base RTT`), ps.
    pub ideal_ps: u64,
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
    next_send_ps: u64,
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
    record: bool,
    /// Algorithm cats: the application and conductor feeding this flow ([`super::web`]).
    pub web: Option<Box<super::web::WebFlow>>,
}

impl Flow {
    /// Bytes acknowledged (the sender's cumulative ACK).
    pub fn acked(&self) -> u64 {
        self.snd_una
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
    /// DOCA PCC: probe responses that reached their sender.
    pub probe_responses: u64,
}

/// The simulator.
pub struct Sim {
    now: u64,
    seq: u64,
    heap: BinaryHeap<Reverse<u128>>,
    pkts: Vec<Pkt>,
    free: Vec<u32>,
    ports: Vec<Port>,
    switches: Vec<Switch>,
    hosts: Vec<Host>,
    /// Every flow, in id order.
    pub flows: Vec<Flow>,
    setup: Setup,
    controller: ControllerKind,
    topo: TopoKind,
    hosts_per_leaf: u32,
    left_hosts: u32,
    spines: u32,
    n_hosts: u32,
    buffer: BufferKind,
    buffer_bytes: u64,
    ecn_bytes: Option<u64>,
    /// PFC `(xoff, xon)` thresholds per ingress port, bytes (`None`: PFC off).
    pfc: Option<(u64, u64)>,
    int_on: bool,
    mtu: u32,
    /// TSO segment bytes when the algorithm sends in segments.
    seg_bytes: Option<u64>,
    ack_every: u32,
    jitter_ps: u64,
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
    int_buf: [u8; 2 + 8 * MAX_HOPS],
}

fn ser_ps(bytes: u32, rate_bps: u64) -> u64 {
    // ceil(bytes·8·10^12 / rate)
    (u128::from(bytes) * 8_000_000_000_000).div_ceil(u128::from(rate_bps)) as u64
}

/// Host `h`'s NIC clock at `t_ps`, ns on 32 bits (wrapping every 4.29 s), with an
/// offset of its own (a hash of the host id: clocks of different hosts differ, and some wrap
/// during a run).
pub(crate) fn nic_clock(h: u32, t_ps: u64) -> u32 {
    (t_ps / PS_PER_NS).wrapping_add(mix(0xD0CA_0000 ^ u64::from(h))) as u32
}

/// DOCA PCC: switch `sw`'s clock at `t_ps`, ns on 32 bits, with an offset of its own.
fn switch_clock(sw: u32, t_ps: u64) -> u32 {
    (t_ps / PS_PER_NS).wrapping_add(mix(0x5717_0000 ^ u64::from(sw))) as u32
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
        let mut sim = Sim {
            now: 0,
            seq: 0,
            heap: BinaryHeap::new(),
            pkts: Vec::new(),
            free: Vec::new(),
            ports: Vec::new(),
            switches: Vec::new(),
            hosts: Vec::new(),
            flows: Vec::new(),
            seg_bytes: setup.algo().segment_bytes(),
            setup,
            controller,
            topo: t.kind,
            hosts_per_leaf: t.hosts_per_leaf.unwrap_or(1),
            left_hosts: t.left_hosts.unwrap_or(0),
            spines: t.spines.unwrap_or(1),
            n_hosts,
            buffer: t.buffer,
            buffer_bytes: t.buffer_bytes,
            ecn_bytes: t.ecn_threshold_bytes,
            pfc: t.pfc_xoff_bytes.map(|x| {
                (
                    x,
                    t.pfc_xon_bytes
                        .unwrap_or(x.saturating_sub(2 * u64::from(sc.mtu_bytes))),
                )
            }),
            int_on,
            mtu: sc.mtu_bytes,
            ack_every: sc.ack_every,
            jitter_ps: sc.send_jitter_ns * PS_PER_NS,
            rng: Pcg64Mcg::new(0xC0FF_EE00_D00D_u128 ^ (u128::from(seed) << 64 | u128::from(seed))),
            end_ps: sc.duration_ns * PS_PER_NS,
            sample_ps: sc.output.sample_ns * PS_PER_NS,
            rto_ps: 0,
            c: Counters {
                buffer_bytes: t.buffer_bytes,
                ..Counters::default()
            },
            stats: Stats::new(&sc.output.size_buckets_bytes),
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
            int_buf: [0; 2 + 8 * MAX_HOPS],
        };
        // Hosts first (node ids 0..n_hosts), each with its one port.
        let host_delay = t.host_delay_ns * PS_PER_NS;
        let fab_rate = t.fabric_rate_bps.unwrap_or(t.host_rate_bps);
        let fab_delay = t.fabric_delay_ns.unwrap_or(t.host_delay_ns) * PS_PER_NS;
        let n_sw = match t.kind {
            TopoKind::Star => 1,
            TopoKind::Dumbbell => 2,
            TopoKind::LeafSpine => t.leaves.unwrap_or(0) + t.spines.unwrap_or(0),
        };
        for s in 0..n_sw {
            sim.switches.push(Switch {
                ports: Vec::new(),
                used_bytes: 0,
                max_used_bytes: 0,
                id: ((s + 1) & 0xFFF) as u16,
            });
        }
        for _ in 0..n_hosts {
            sim.hosts.push(Host {
                port: 0,
                active: Vec::new(),
                wake_at: u64::MAX,
            });
        }
        let sw_node = |s: u32| n_hosts + s;
        match t.kind {
            TopoKind::Star => {
                for h in 0..n_hosts {
                    sim.link(h, sw_node(0), t.host_rate_bps, host_delay);
                }
            }
            TopoKind::Dumbbell => {
                let lh = sim.left_hosts;
                for h in 0..n_hosts {
                    let s = if h < lh { 0 } else { 1 };
                    sim.link(h, sw_node(s), t.host_rate_bps, host_delay);
                }
                sim.link(sw_node(0), sw_node(1), fab_rate, fab_delay);
            }
            TopoKind::LeafSpine => {
                let leaves = t.leaves.unwrap_or(0);
                for h in 0..n_hosts {
                    sim.link(
                        h,
                        sw_node(h / sim.hosts_per_leaf),
                        t.host_rate_bps,
                        host_delay,
                    );
                }
                for l in 0..leaves {
                    for s in 0..sim.spines {
                        sim.link(sw_node(l), sw_node(leaves + s), fab_rate, fab_delay);
                    }
                }
            }
        }
        // Retransmission timeout: generous against the largest queueing delay.
        let worst_q_ps = ser_ps(
            t.buffer_bytes.min(u64::from(u32::MAX)) as u32,
            t.host_rate_bps.min(fab_rate),
        );
        sim.rto_ps = (worst_q_ps + 4 * (host_delay + fab_delay) + 100_000_000).min(10_000_000_000);
        sim.rto_ps = sim.rto_ps.max(sim.setup.algo().min_rto_ps());
        sim.stats.rtt = super::stats::Hist::new(sim.setup.algo().rtt_bucket_ns(), 1 << 20);
        // Workload.
        let groups = sim.groups.clone();
        for (gi, g) in groups.iter().enumerate() {
            match g.kind {
                GroupKind::Long | GroupKind::Incast => {
                    for (k, &src) in g.src.iter().enumerate() {
                        let start = (g.start_ns + k as u64 * g.stagger_ns) * PS_PER_NS;
                        let f =
                            sim.add_flow(src, g.dst.unwrap_or(0), g.size_bytes, start, gi as u32);
                        sim.push(start, Ev::Start { flow: f });
                        if let Some(stop) = g.stop_ns {
                            sim.push(stop * PS_PER_NS, Ev::Stop { flow: f });
                        }
                    }
                }
                GroupKind::Poisson => {
                    for h in 0..n_hosts {
                        let dt = sim.poisson_gap(gi);
                        sim.push(
                            g.start_ns * PS_PER_NS + dt,
                            Ev::Poisson {
                                group: gi as u32,
                                host: h,
                            },
                        );
                    }
                }
            }
        }
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

    fn link(&mut self, a: u32, b: u32, rate_bps: u64, delay_ps: u64) {
        let code = hpcc_cc::int::SPEED_BPS
            .iter()
            .position(|&r| r == rate_bps)
            .unwrap_or(0) as u8;
        for (x, y) in [(a, b), (b, a)] {
            let id = self.ports.len() as u32;
            let is_switch = x >= self.n_hosts;
            self.ports.push(Port {
                node: x,
                peer: y,
                rate_bps,
                delay_ps,
                speed_code: code,
                is_switch,
                q_ack: VecDeque::new(),
                q_data: VecDeque::new(),
                q_bytes: 0,
                cur: None,
                tx_bytes: 0,
                free_at_ps: 0,
                overlaps: 0,
                max_q_bytes: 0,
                carried_data: false,
                // The two ports of a link are created together, each facing the other.
                rev: if x == a { id + 1 } else { id - 1 },
                ingress_bytes: 0,
                pause_sent: false,
                paused: false,
                paused_since_ps: 0,
            });
            if is_switch {
                self.switches[(x - self.n_hosts) as usize].ports.push(id);
            } else {
                self.hosts[x as usize].port = id;
            }
        }
    }

    /// Switches on the path from `src` to `dst` (for the base RTT and the INT hop count) and
    /// the links: `(fabric links, switch hops)`.
    fn path_shape(&self, src: u32, dst: u32) -> (u64, u64) {
        match self.topo {
            TopoKind::Star => (0, 1),
            TopoKind::Dumbbell => {
                let same = (src < self.left_hosts) == (dst < self.left_hosts);
                if same { (0, 1) } else { (1, 2) }
            }
            TopoKind::LeafSpine => {
                if src / self.hosts_per_leaf == dst / self.hosts_per_leaf {
                    (0, 1)
                } else {
                    (2, 3)
                }
            }
        }
    }

    fn add_flow(
        &mut self,
        src: u32,
        dst: u32,
        size: Option<u64>,
        start_ps: u64,
        group: u32,
    ) -> u32 {
        let id = self.flows.len() as u32;
        let cc = self.setup.algo().new_flow(self.controller);
        let web = self.setup.algo().new_app(self.controller);
        let size = size.or(web.as_ref().map(|w| w.total_bytes()));
        let rate = cc.rate_bps();
        let window = cc.window_bytes();
        let (fab_links, sw_hops) = self.path_shape(src, dst);
        let hp = &self.ports[self.hosts[src as usize].port as usize];
        let host_rate = hp.rate_bps;
        let host_delay = hp.delay_ps;
        // Fabric rate/delay: any switch-to-switch port.
        let (fab_rate, fab_delay) = self
            .ports
            .iter()
            .find(|p| p.is_switch && p.peer >= self.n_hosts)
            .map_or((host_rate, host_delay), |p| (p.rate_bps, p.delay_ps));
        let int_bytes = |hops: u64| {
            if self.int_on {
                INT_HDR_BYTES + INT_HOP_BYTES * hops as u32
            } else {
                0
            }
        };
        // Base RTT: propagation both ways, an ACK's serialisation per link back, and a
        // header-only packet's serialisation on every link after the first.
        let links = 2 + fab_links;
        let prop = 2 * (2 * host_delay + fab_links * fab_delay);
        let ack_wire = ACK_BYTES + int_bytes(sw_hops);
        let ack_ser = 2 * ser_ps(ack_wire, host_rate) + fab_links * ser_ps(ack_wire, fab_rate);
        let hdr_ser = ser_ps(HDR_BYTES, host_rate) + (links - 2) * ser_ps(HDR_BYTES, fab_rate);
        let base_rtt = prop + ack_ser + hdr_ser;
        let size_v = size.unwrap_or(u64::MAX);
        let ideal = if size.is_some() {
            // Every packet's bytes at the host's line rate plus the base RTT; when a fabric link
            // on the path is slower (the CATS dumbbell's 2 Mb/s bottleneck behind 100 Mb/s host
            // links), every packet's bytes at that rate plus propagation and the ACK's
            // serialisation, if that is longer. Both are lower bounds of the FCT.
            let pk = size_v.div_ceil(u64::from(self.mtu));
            let wire = u128::from(size_v + pk * u64::from(HDR_BYTES + int_bytes(0)));
            let at = |rate: u64| (wire * 8_000_000_000_000).div_ceil(u128::from(rate)) as u64;
            let first_link = at(host_rate) + base_rtt;
            if fab_links > 0 && fab_rate < host_rate {
                first_link.max(at(fab_rate) + prop + ack_ser)
            } else {
                first_link
            }
        } else {
            0
        };
        let record = self.rec.wants(id);
        self.flows.push(Flow {
            src,
            dst,
            size: size_v,
            size_bytes: size_v,
            group,
            long: size.is_none(),
            start_ps,
            done_ps: None,
            ideal_ps: ideal,
            delivered: 0,
            delivered_mark: None,
            delivered_end: None,
            stopped_ps: None,
            snd_nxt: 0,
            snd_una: 0,
            next_send_ps: start_ps,
            cc,
            rate_bps: rate,
            window,
            seg: None,
            seg_t_send_ps: 0,
            rcv_next: 0,
            rcv_count: 0,
            nack_for: None,
            last_progress_ps: start_ps,
            rto_armed: false,
            record,
            web,
        });
        if record {
            let lines = self.setup.set_lines();
            self.rec
                .open(id, self.setup.algo().record_format(), &lines, src, dst);
        }
        id
    }

    fn poisson_gap(&mut self, g: usize) -> u64 {
        let load = self.groups[g].load.unwrap_or(0.5);
        let mean = self.cdfs[g].as_ref().map_or(1.0, |c| c.mean());
        // Flows per second per host so that the offered load is `load` of the host link.
        let lambda = load * self.host_rate_bps as f64 / (8.0 * mean);
        let u = uniform(&mut self.rng);
        (-u.ln() / lambda * 1e12) as u64
    }

    fn push(&mut self, t: u64, ev: Ev) {
        // Times past 2^44 ps (17.6 s) are after every scenario's end: they never run.
        self.seq = (self.seq + 1) & SEQ_MASK;
        let key = (u128::from(t.min(T_MAX_PS)) << 84) | (u128::from(self.seq) << 48) | pack(ev);
        self.heap.push(Reverse(key));
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
        while let Some(Reverse(it)) = self.heap.pop() {
            let t = (it >> 84) as u64;
            if t > self.end_ps {
                self.heap.push(Reverse(it));
                break;
            }
            self.now = t;
            self.c.events += 1;
            if self.c.events & 0xFFFF == 0 {
                progress(self.now / PS_PER_NS);
            }
            match unpack(it) {
                Ev::Arrive { node, pkt } => {
                    self.c.packet_events += 1;
                    if node < self.n_hosts {
                        self.host_rx(node, pkt);
                    } else {
                        self.switch_rx(node - self.n_hosts, pkt);
                    }
                }
                Ev::TxDone { port } => {
                    self.c.packet_events += 1;
                    self.tx_done(port);
                }
                Ev::Wake { host } => {
                    self.c.packet_events += 1;
                    if self.hosts[host as usize].wake_at == self.now {
                        self.hosts[host as usize].wake_at = u64::MAX;
                    }
                    self.host_try_send(host);
                }
                Ev::Start { flow } => {
                    let f = &mut self.flows[flow as usize];
                    if let Some(w) = &mut f.web {
                        w.start(self.now / PS_PER_NS, &mut self.rec, flow, f.record);
                    }
                    let src = self.flows[flow as usize].src;
                    self.hosts[src as usize].active.push(flow);
                    self.host_try_send(src);
                }
                Ev::Stop { flow } => {
                    let f = &mut self.flows[flow as usize];
                    let sent = f.snd_nxt.max(f.snd_una);
                    // A flow that has sent every byte is not stopped: it finishes as usual.
                    if f.done_ps.is_none() && sent < f.size {
                        f.size = sent;
                        f.stopped_ps = Some(self.now);
                        if f.snd_una >= f.size {
                            self.finish_flow(flow);
                        }
                    }
                }
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

    /// The run's controller setup.
    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    /// The end time, ns.
    pub fn end_ns(&self) -> u64 {
        self.end_ps / PS_PER_NS
    }

    fn poisson(&mut self, group: u32, host: u32) {
        let g = group as usize;
        let stop = self.groups[g]
            .stop_ns
            .map_or(self.end_ps, |s| s * PS_PER_NS);
        if self.now >= stop {
            return;
        }
        let u = uniform(&mut self.rng);
        let size = self.cdfs[g].as_ref().map_or(1, |c| c.sample(u));
        let mut dst = (self.rng.next_u64() % u64::from(self.n_hosts - 1)) as u32;
        if dst >= host {
            dst += 1;
        }
        let f = self.add_flow(host, dst, Some(size), self.now, group);
        self.hosts[host as usize].active.push(f);
        self.host_try_send(host);
        let dt = self.poisson_gap(g);
        self.push(self.now + dt.max(1), Ev::Poisson { group, host });
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
            let total: u64 = self.flows.iter().map(|f| f.delivered).sum();
            self.stats
                .series_point(self.now / PS_PER_NS, qmax, total, rates, goodput);
            self.next_plot_ps = self.now + self.plot_ps;
        }
        if self.now + self.sample_ps <= self.end_ps {
            self.push(self.now + self.sample_ps, Ev::Sample);
        }
    }

    fn route(&self, sw: u32, dst: u32, flow: u32) -> u32 {
        let ports = &self.switches[sw as usize].ports;
        let i = match self.topo {
            TopoKind::Star => dst,
            TopoKind::Dumbbell => {
                let lh = self.left_hosts;
                let right = self.n_hosts - lh;
                match (sw, dst < lh) {
                    (0, true) => dst,
                    (0, false) => lh,
                    (_, false) => dst - lh,
                    (_, true) => right,
                }
            }
            TopoKind::LeafSpine => {
                let hpl = self.hosts_per_leaf;
                let leaves = self.n_hosts / hpl;
                if sw < leaves {
                    if dst / hpl == sw {
                        dst % hpl
                    } else {
                        hpl + (mix(u64::from(flow)) % u64::from(self.spines)) as u32
                    }
                } else {
                    dst / hpl
                }
            }
        };
        ports[i as usize]
    }

    fn switch_rx(&mut self, sw: u32, pi: u32) {
        let p = self.pkts[pi as usize];
        // Data and probes go forward in the data class; ACKs, NACKs and probe responses back.
        let forward = matches!(p.kind, KIND_DATA | KIND_PROBE);
        let dst = if forward {
            self.flows[p.flow as usize].dst
        } else {
            self.flows[p.flow as usize].src
        };
        let port = self.route(sw, dst, p.flow);
        if !forward {
            self.ports[port as usize].q_ack.push_back(pi);
        } else {
            let w = u64::from(p.wire);
            let s = &mut self.switches[sw as usize];
            let pt = &mut self.ports[port as usize];
            let fits = match self.buffer {
                BufferKind::Shared => s.used_bytes + w <= self.buffer_bytes,
                BufferKind::PerPort => pt.q_bytes + w <= self.buffer_bytes,
            };
            if !fits {
                if p.kind == KIND_PROBE {
                    self.c.probes_dropped += 1;
                } else {
                    self.c.dropped += 1;
                }
                self.release(pi);
                return;
            }
            if self.now >= self.stats_from_ps {
                self.stats.queue_seen.add(pt.q_bytes);
            }
            s.used_bytes += w;
            s.max_used_bytes = s.max_used_bytes.max(s.used_bytes);
            pt.q_bytes += w;
            pt.max_q_bytes = pt.max_q_bytes.max(pt.q_bytes);
            if let Some((xoff, _)) = self.pfc {
                let ing = &mut self.ports[p.in_port as usize];
                ing.ingress_bytes += w;
                if ing.ingress_bytes > xoff && !ing.pause_sent {
                    ing.pause_sent = true;
                    self.c.pfc_pauses += 1;
                    let (up, delay) = (ing.rev, ing.delay_ps);
                    self.push(self.now + delay, Ev::Pfc { port: up, on: 1 });
                }
            }
            let pt = &mut self.ports[port as usize];
            if self.ecn_bytes.is_some_and(|k| pt.q_bytes > k) {
                self.pkts[pi as usize].ecn = true;
                self.c.ecn_marked += 1;
            }
            pt.q_data.push_back(pi);
        }
        self.start_tx(port);
    }

    /// Starts the next transmission on an idle port (switch queues, or a host's ACKs; a host
    /// port with no ACK pulls data from the NIC scheduler).
    fn start_tx(&mut self, port: u32) {
        let pt = &mut self.ports[port as usize];
        if pt.cur.is_some() {
            return;
        }
        let pi = if let Some(a) = pt.q_ack.pop_front() {
            if !pt.is_switch {
                // The NIC stamps a probe's request send time and a response's send time as
                // they go on the wire.
                let h = pt.node;
                let pk = &mut self.pkts[a as usize];
                match pk.kind {
                    KIND_PROBE => pk.t_sent_ps = self.now,
                    KIND_PROBE_RESP => pk.hops[1] = u64::from(nic_clock(h, self.now)),
                    _ => {}
                }
            }
            a
        } else if pt.paused {
            return;
        } else if let Some(d) = pt.q_data.pop_front() {
            let w = u64::from(self.pkts[d as usize].wire);
            if let (true, Some((_, xon))) = (pt.is_switch, self.pfc) {
                self.pfc_dequeued(self.pkts[d as usize].in_port, w, xon);
            }
            let pt = &mut self.ports[port as usize];
            pt.q_bytes -= w;
            pt.carried_data = true;
            if pt.is_switch {
                let sw = (pt.node - self.n_hosts) as usize;
                self.switches[sw].used_bytes -= w;
                if self.pkts[d as usize].kind == KIND_PROBE {
                    // The switch-telemetry record of the port the probe leaves through; the
                    // last switch's (the receiver's edge port) is the one delivered.
                    let tx = pt.tx_bytes + u64::from(self.pkts[d as usize].wire);
                    let clock = switch_clock(sw as u32, self.now);
                    let q = pt.q_bytes;
                    let pk = &mut self.pkts[d as usize];
                    pk.hops[2] = (tx & 0xFFFF_FFFF) | (u64::from(clock) << 32);
                    pk.hops[3] = q | ((sw as u64 & 0xFF) << 48);
                } else if self.int_on {
                    let id = self.switches[sw].id;
                    let pk = &mut self.pkts[d as usize];
                    if usize::from(pk.nhop) < MAX_HOPS {
                        pk.wire += INT_HOP_BYTES;
                        let tx = pt.tx_bytes + u64::from(pk.wire);
                        let hop = hpcc_cc::Hop {
                            speed: hpcc_cc::Speed::from_code(pt.speed_code)
                                .unwrap_or(hpcc_cc::Speed::G100),
                            ts_ns: ((self.now / PS_PER_NS) & 0xFF_FFFF) as u32,
                            tx_units: ((tx / 128) & 0xF_FFFF) as u32,
                            qlen_units: (pt.q_bytes / 80).min(u64::from(u16::MAX)) as u16,
                        };
                        pk.hops[usize::from(pk.nhop)] = hop.to_word();
                        pk.nhop += 1;
                        pk.path_id ^= id;
                    }
                }
            }
            d
        } else {
            if !pt.is_switch {
                let h = pt.node;
                self.host_try_send(h);
            }
            return;
        };
        self.transmit(port, pi);
    }

    fn transmit(&mut self, port: u32, pi: u32) {
        let wire = self.pkts[pi as usize].wire;
        let pt = &mut self.ports[port as usize];
        if self.now < pt.free_at_ps {
            pt.overlaps += 1;
        }
        let d = ser_ps(wire, pt.rate_bps);
        pt.free_at_ps = self.now + d;
        pt.tx_bytes += u64::from(wire);
        pt.cur = Some(pi);
        self.push(self.now + d, Ev::TxDone { port });
    }

    /// PFC: a data packet that arrived through `in_port` left this switch's buffer; resume the
    /// upstream sender once the port's buffered bytes are down to XON.
    fn pfc_dequeued(&mut self, in_port: u32, w: u64, xon: u64) {
        let ing = &mut self.ports[in_port as usize];
        ing.ingress_bytes -= w;
        if ing.pause_sent && ing.ingress_bytes <= xon {
            ing.pause_sent = false;
            let (up, delay) = (ing.rev, ing.delay_ps);
            self.push(self.now + delay, Ev::Pfc { port: up, on: 0 });
        }
    }

    /// PFC: a pause or resume frame arrives at the sender side of `port` (after the link's
    /// propagation delay; the frame itself is not serialised). The packet being sent finishes;
    /// data waits while paused, ACKs do not (they travel in another priority class).
    fn pfc_frame(&mut self, port: u32, on: bool) {
        let now = self.now;
        let pt = &mut self.ports[port as usize];
        if on == pt.paused {
            return;
        }
        pt.paused = on;
        if on {
            pt.paused_since_ps = now;
        } else {
            self.c.pfc_paused_ns += (now - pt.paused_since_ps) / PS_PER_NS;
            self.start_tx(port);
        }
    }

    fn tx_done(&mut self, port: u32) {
        let pt = &mut self.ports[port as usize];
        let Some(pi) = pt.cur.take() else {
            return;
        };
        let (peer, delay, rev) = (pt.peer, pt.delay_ps, pt.rev);
        self.pkts[pi as usize].in_port = rev;
        self.push(
            self.now + delay,
            Ev::Arrive {
                node: peer,
                pkt: pi,
            },
        );
        self.start_tx(port);
    }

    /// The NIC scheduler: when the host port is idle, send one packet of the eligible flow
    /// that is due first, or wake up when one is due.
    fn host_try_send(&mut self, h: u32) {
        let port = self.hosts[h as usize].port;
        if self.ports[port as usize].cur.is_some() {
            return;
        }
        if !self.ports[port as usize].q_ack.is_empty() {
            self.start_tx(port);
            return;
        }
        if self.ports[port as usize].paused {
            // PFC: the NIC sends no data until the switch resumes it.
            return;
        }
        let mut best: Option<(u64, u32)> = None;
        let mut i = 0;
        while i < self.hosts[h as usize].active.len() {
            let fid = self.hosts[h as usize].active[i];
            let f = &self.flows[fid as usize];
            if f.done_ps.is_some() {
                self.hosts[h as usize].active.swap_remove(i);
                continue;
            }
            i += 1;
            if f.snd_nxt >= f.send_limit() {
                continue;
            }
            if let Some(w) = f.window
                && (f.snd_nxt - f.snd_una) as f64 >= w
            {
                continue;
            }
            if best.is_none_or(|(t, b)| (f.next_send_ps, fid) < (t, b)) {
                best = Some((f.next_send_ps, fid));
            }
        }
        let Some((t, fid)) = best else {
            return;
        };
        if t > self.now {
            let host = &mut self.hosts[h as usize];
            if host.wake_at > t || host.wake_at < self.now {
                host.wake_at = t;
                self.push(t, Ev::Wake { host: h });
            }
            return;
        }
        self.send_data(fid, port);
    }

    fn send_data(&mut self, fid: u32, port: u32) {
        let now = self.now;
        let mtu = u64::from(self.mtu);
        let int_hdr = if self.int_on { INT_HDR_BYTES } else { 0 };
        let f = &mut self.flows[fid as usize];
        let mut payload = mtu.min(f.send_limit() - f.snd_nxt);
        let mut segment = None;
        if let Some(seg) = self.seg_bytes {
            let boundary = (f.snd_nxt / seg + 1) * seg;
            payload = payload.min(boundary - f.snd_nxt);
            if f.seg.is_none_or(|s| s.1 <= f.snd_nxt) {
                let end = boundary.min(f.size);
                f.seg = Some((f.snd_nxt, end));
                f.seg_t_send_ps = now;
                segment = f.seg;
            }
        }
        let pk = Pkt {
            flow: fid,
            seq: f.snd_nxt,
            payload: payload as u32,
            wire: payload as u32 + HDR_BYTES + int_hdr,
            kind: KIND_DATA,
            t_sent_ps: now,
            ..Pkt::default()
        };
        f.snd_nxt += payload;
        let sent = Sent {
            seq: pk.seq,
            payload: pk.payload,
            wire: pk.wire,
            segment,
        };
        let mut cx = Cx {
            now_ps: now,
            flow: fid,
            src: f.src,
            rec: if f.record { Some(&mut self.rec) } else { None },
        };
        if let Some(reply) = f.cc.on_send(&mut cx, &sent) {
            self.apply(fid, reply);
        }
        let f = &mut self.flows[fid as usize];
        // Pacing.
        let rate = f.rate_bps.max(1.0);
        if let Some((s0, s1)) = f.seg {
            if f.snd_nxt >= s1 {
                let gap = ((s1 - s0) as f64 * 8e12 / rate) as u64;
                f.next_send_ps = (f.seg_t_send_ps + gap).max(now);
            } else {
                f.next_send_ps = now;
            }
        } else {
            let gap = (f64::from(pk.wire) * 8e12 / rate) as u64;
            f.next_send_ps = now + gap;
        }
        if self.jitter_ps > 0 && f.next_send_ps > now {
            f.next_send_ps += self.rng.next_u64() % (self.jitter_ps + 1);
        }
        let arm = !f.rto_armed;
        if arm {
            f.rto_armed = true;
            f.last_progress_ps = f.last_progress_ps.max(now);
        }
        self.c.sent += 1;
        let pi = self.alloc(pk);
        self.transmit(port, pi);
        if arm {
            self.push(now + self.rto_ps, Ev::Rto { flow: fid });
        }
    }

    fn rto(&mut self, fid: u32) {
        let now = self.now;
        let rto = self.rto_ps;
        let f = &mut self.flows[fid as usize];
        f.rto_armed = false;
        if f.done_ps.is_some() || f.snd_una >= f.snd_nxt {
            return;
        }
        if now >= f.last_progress_ps + rto {
            // Go back to the first unacknowledged byte.
            self.c.timeouts += 1;
            f.snd_nxt = f.snd_una;
            f.seg = None;
            f.cc.on_timeout();
            f.next_send_ps = now;
            f.last_progress_ps = now;
            let src = f.src;
            f.rto_armed = true;
            self.push(now + rto, Ev::Rto { flow: fid });
            self.host_try_send(src);
        } else {
            f.rto_armed = true;
            let t = f.last_progress_ps + rto;
            self.push(t, Ev::Rto { flow: fid });
        }
    }

    fn host_rx(&mut self, h: u32, pi: u32) {
        let p = self.pkts[pi as usize];
        match p.kind {
            KIND_DATA => {
                self.c.delivered += 1;
                self.data_rx(h, pi, p);
            }
            KIND_PROBE => {
                // The responder stamps the request's arrival on its own clock and answers
                // after a turnaround of 300–700 ns (uniform; drawn from a hash of the arrival
                // time, so the workload's random stream is the same as without probes).
                self.pkts[pi as usize].hops[0] = u64::from(nic_clock(h, self.now));
                let turnaround = (300 + mix(self.now ^ 0x7A2A) % 401) * PS_PER_NS;
                self.push(self.now + turnaround, Ev::Respond { host: h, pkt: pi });
            }
            KIND_PROBE_RESP => {
                self.release(pi);
                self.probe_rx(p);
            }
            _ => {
                self.release(pi);
                self.ack_rx(p);
            }
        }
    }

    /// DOCA PCC: the receiver `h` sends the response to probe `pi` (its send time is stamped
    /// when it goes on the wire).
    fn respond(&mut self, h: u32, pi: u32) {
        let pk = &mut self.pkts[pi as usize];
        pk.kind = KIND_PROBE_RESP;
        pk.wire = PROBE_BYTES;
        let port = self.hosts[h as usize].port;
        self.ports[port as usize].q_ack.push_back(pi);
        self.start_tx(port);
    }

    /// After a controller ran on an event of flow `fid`: its new rate and window, and an RTT
    /// probe when it asks for one.
    fn apply(&mut self, fid: u32, reply: Reply) {
        let f = &mut self.flows[fid as usize];
        f.rate_bps = f.cc.rate_bps();
        f.window = f.cc.window_bytes();
        if reply.probe {
            let src = f.src;
            let pk = Pkt {
                flow: fid,
                wire: PROBE_BYTES,
                kind: KIND_PROBE,
                ..Pkt::default()
            };
            self.c.probes_sent += 1;
            let pi = self.alloc(pk);
            let port = self.hosts[src as usize].port;
            // It goes when the port is next free (every caller ends with a transmission or
            // `host_try_send`, which sends the port's control packets first).
            self.ports[port as usize].q_ack.push_back(pi);
        }
    }

    /// DOCA PCC: a probe response reaches its sender: an RTT event with the request's send
    /// time (sender's clock), its receive time and the response's send time (responder's
    /// clock) and the switch-telemetry record.
    fn probe_rx(&mut self, p: Pkt) {
        self.c.probe_responses += 1;
        let f = &self.flows[p.flow as usize];
        if f.done_ps.is_some() {
            return;
        }
        let cells = (p.hops[3] & 0xFFFF_FFFF_FFFF) / u64::from(cc_pcc::Telemetry::CELL_BYTES);
        let tel = cc_pcc::Telemetry {
            qlen_256b_cells: cells.min(u64::from(u16::MAX)) as u16,
            index: (p.hops[3] >> 48) as u8,
            flags: 0,
            tx_bytes: p.hops[2] as u32,
            tx_ts_ns: (p.hops[2] >> 32) as u32,
        }
        .encode();
        let r = ProbeResponse {
            req_send_ns: nic_clock(f.src, p.t_sent_ps),
            req_recv_ns: p.hops[0] as u32,
            resp_send_ns: p.hops[1] as u32,
            telemetry: tel,
        };
        let f = &mut self.flows[p.flow as usize];
        let mut cx = Cx {
            now_ps: self.now,
            flow: p.flow,
            src: f.src,
            rec: if f.record { Some(&mut self.rec) } else { None },
        };
        let reply = f.cc.on_probe_response(&mut cx, &r);
        self.apply(p.flow, reply);
        let src = self.flows[p.flow as usize].src;
        self.host_try_send(src);
    }

    fn data_rx(&mut self, h: u32, pi: u32, p: Pkt) {
        let seg = self.seg_bytes;
        let ack_every = self.ack_every;
        let now_ns = self.now / PS_PER_NS;
        let f = &mut self.flows[p.flow as usize];
        let reply = if p.seq == f.rcv_next {
            f.rcv_next += u64::from(p.payload);
            f.delivered = f.rcv_next;
            if let Some(w) = &mut f.web {
                w.on_deliver(f.rcv_next, now_ns);
            }
            f.rcv_count += 1;
            f.nack_for = None;
            let last =
                f.rcv_next >= f.size || seg.is_some_and(|s| f.rcv_next.is_multiple_of(s));
            if f.rcv_count >= ack_every || last {
                f.rcv_count = 0;
                Some(KIND_ACK)
            } else {
                None
            }
        } else if p.seq > f.rcv_next && f.nack_for != Some(f.rcv_next) {
            f.nack_for = Some(f.rcv_next);
            Some(KIND_NACK)
        } else {
            None
        };
        let rcv = f.rcv_next;
        match reply {
            Some(kind) => {
                // Reuse the data packet's slot for the ACK, echoing its INT.
                let int_len = if self.int_on {
                    INT_HDR_BYTES + INT_HOP_BYTES * u32::from(p.nhop)
                } else {
                    0
                };
                let pk = &mut self.pkts[pi as usize];
                pk.kind = kind;
                pk.seq = rcv;
                pk.payload = 0;
                pk.wire = ACK_BYTES + int_len;
                self.c.acks += 1;
                if kind == KIND_NACK {
                    self.c.nacks += 1;
                }
                let port = self.hosts[h as usize].port;
                self.ports[port as usize].q_ack.push_back(pi);
                self.start_tx(port);
            }
            None => self.release(pi),
        }
    }

    fn int_bytes(&mut self, p: &Pkt) -> usize {
        if !self.int_on {
            return 0;
        }
        let hdr = (u16::from(p.nhop) << 12) | (p.path_id & 0x0FFF);
        self.int_buf[..2].copy_from_slice(&hdr.to_be_bytes());
        for i in 0..usize::from(p.nhop) {
            self.int_buf[2 + 8 * i..10 + 8 * i].copy_from_slice(&p.hops[i].to_be_bytes());
        }
        2 + 8 * usize::from(p.nhop)
    }

    fn ack_rx(&mut self, p: Pkt) {
        let now = self.now;
        let now_ns = now / PS_PER_NS;
        if now >= self.stats_from_ps {
            self.stats.rtt.add((now - p.t_sent_ps) / PS_PER_NS);
        }
        let fid = p.flow;
        let n = self.int_bytes(&p);
        let int = self.int_buf;
        let f = &mut self.flows[fid as usize];
        if f.done_ps.is_some() {
            return;
        }
        if p.seq > f.snd_una {
            f.snd_una = p.seq;
            f.last_progress_ps = now;
        }
        let nack = p.kind == KIND_NACK;
        if nack && p.seq < f.snd_nxt {
            f.snd_nxt = p.seq.max(f.snd_una);
            if f.seg.is_some_and(|s| s.1 > f.snd_nxt) {
                f.seg = None;
            }
            f.cc.on_rewind(f.snd_nxt);
            f.next_send_ps = f.next_send_ps.min(now);
        }
        if let Some(w) = &mut f.web {
            w.on_ack(f.snd_una, now_ns, &mut self.rec, fid, f.record);
        }
        let ack = Ack {
            seq: p.seq,
            nack,
            snd_una: f.snd_una,
            snd_nxt: f.snd_nxt,
            int: &int[..n],
            ecn_echo: p.ecn,
            rtt_ps: now - p.t_sent_ps,
        };
        let mut cx = Cx {
            now_ps: now,
            flow: fid,
            src: f.src,
            rec: if f.record { Some(&mut self.rec) } else { None },
        };
        let reply = f.cc.on_ack(&mut cx, &ack);
        self.apply(fid, reply);
        let f = &mut self.flows[fid as usize];
        if f.snd_una >= f.size {
            self.finish_flow(fid);
        }
        let src = self.flows[fid as usize].src;
        self.host_try_send(src);
    }

    fn finish_flow(&mut self, fid: u32) {
        let now = self.now;
        let f = &mut self.flows[fid as usize];
        f.done_ps = Some(now);
        if !f.long && f.stopped_ps.is_none() {
            let fct = now - f.start_ps;
            self.stats
                .flow_done(f.size_bytes, fct as f64 / 1e3, f.ideal_ps as f64 / 1e3);
        }
    }

    /// Hist of the queue (public for tests).
    pub fn queue_hist(&self) -> &Hist {
        &self.stats.queue
    }
}
