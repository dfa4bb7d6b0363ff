//! Scenario files (TOML): topology, workload, algorithm and its parameters, duration, seed.
//! Every table refuses unknown keys; every impossible value is an error naming the file and
//! the key ([`ScenarioError`], exit 2).

mod check;

pub use check::check_flow_ids;

use super::cc::Entry;
use cc_trace::Param;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// A bad scenario: the file, the key and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The scenario file.
    pub file: PathBuf,
    /// The key (dotted path), empty when the whole file is at fault.
    pub key: String,
    /// What is wrong.
    pub msg: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.file.display(), self.msg)
        } else {
            write!(
                f,
                "{}: key `{}`: {}",
                self.file.display(),
                self.key,
                self.msg
            )
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Which algorithm every flow runs: an entry of the controller registry
/// ([`super::cc::REGISTRY`]), named by the scenario's `algorithm`.
#[derive(Clone, Copy)]
pub struct Algorithm(&'static Entry);

impl Algorithm {
    /// The algorithm named `name` in the registry.
    pub fn named(name: &str) -> Option<Algorithm> {
        super::cc::entry(name).map(Algorithm)
    }

    /// The scenario's spelling, and the name of its registry entry.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// Its registry entry.
    pub fn entry(self) -> &'static Entry {
        self.0
    }

    /// Whether the algorithm reads the scenario's top-level `key` (`reaction`,
    /// `pcc_inflight_cap`, `web`).
    pub fn reads(self, key: &str) -> bool {
        self.0.scenario_keys.contains(&key)
    }
}

impl PartialEq for Algorithm {
    fn eq(&self, other: &Algorithm) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Algorithm {}

impl std::fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Algorithm {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Algorithm, D::Error> {
        let name = String::deserialize(d)?;
        Algorithm::named(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown variant `{name}`, expected one of `{}`",
                super::cc::names().join("`, `")
            ))
        })
    }
}

/// Which algorithms read the scenario's top-level `key`, for an error message.
fn readers(key: &str) -> String {
    let names: Vec<&str> = super::cc::REGISTRY
        .iter()
        .filter(|e| e.scenario_keys.contains(&key))
        .map(|e| e.name)
        .collect();
    names.join(" or ")
}

/// What feeds a CATS scenario's transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheduler {
    /// The CATS conductor: one MSS at a time, highest eligible priority first.
    #[default]
    Cats,
    /// Strictly in application order (the baseline: a plain TCP socket).
    Fifo,
}

impl Scheduler {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::Cats => "cats",
            Scheduler::Fifo => "fifo",
        }
    }
}

fn default_true() -> bool {
    true
}

/// `[web]` (algorithm `cats`): the page and how it is sent.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSpec {
    /// The page: a CATS event trace (`t_ns,event,prio,bytes`, relative to the scenario) whose
    /// `enqueue` rows at `t_ns = 0` are the page's messages, in application order, and whose
    /// `# set` lines are the conductor's parameters (`[params]`, then `--set`, win). Its `ack`
    /// and `feed` rows are not used: the closed loop makes its own.
    pub page: String,
    /// cats or fifo.
    #[serde(default)]
    pub scheduler: Scheduler,
    /// scheduler cats: also run the FIFO baseline on the same network and report both and the
    /// first-contentful-paint improvement.
    #[serde(default = "default_true")]
    pub baseline: bool,
    /// Pacing rate on the wire, b/s (default: the slowest link's rate, the bottleneck).
    pub pacing_rate_bps: Option<u64>,
    /// Bytes in flight at most (default: twice the bottleneck's bandwidth-delay product).
    pub window_bytes: Option<u64>,
    /// Slow start: the window starts at this many packets and grows by the bytes each ACK
    /// newly acknowledges (RFC 5681 §3.1), up to `window_bytes`; absent: the window is
    /// `window_bytes` from the first packet.
    pub initial_window_packets: Option<u32>,
}

/// The page of a CATS scenario, read from `[web] page`.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// Messages `(priority 0..=4, bytes)` in application order.
    pub messages: Vec<(u8, u32)>,
    /// The trace's `# set` lines.
    pub params: Vec<Param>,
}

/// Which implementation runs each flow's controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum ControllerKind {
    /// The fixed-point firmware crate, through its public API.
    #[default]
    Fixed,
    /// The f64 reference written from the paper.
    Reference,
    /// HPCC as the authors' ns-3 simulator computes it (their arithmetic, for runs on the
    /// ns-3 switch model that must agree with theirs flow by flow); HPCC only.
    Ns3,
}

impl ControllerKind {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            ControllerKind::Fixed => "fixed",
            ControllerKind::Reference => "reference",
            ControllerKind::Ns3 => "ns3",
        }
    }
}

/// How HPCC senders react to ACKs (HPCC §3.2, Fig. 13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reaction {
    /// The paper's algorithm: per-ACK updates against the per-RTT reference window.
    #[default]
    Hpcc,
    /// Per-ACK only: the reference window moves on every ACK.
    PerAck,
    /// Per-RTT only: one update per round trip, other ACKs ignored.
    PerRtt,
}

/// Topology kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TopoKind {
    /// Every host on one switch (N-to-1 incast).
    Star,
    /// Two switches joined by one fabric link; `left_hosts` on the first, `right_hosts` on the
    /// second.
    Dumbbell,
    /// Two-tier leaf-spine (a small fat tree), ECMP by a hash of the flow id.
    LeafSpine,
    /// Three-tier fat tree wired as the HPCC authors' `simulation/mix/fat.txt`: pods of ToRs
    /// each linked to every aggregation switch of its pod, aggregation switch `i` of every pod
    /// linked to core plane `i`; ECMP by a hash of the flow id at the ToR and the aggregation
    /// switch. The shape keys default to the paper's tree ([`FatTree::PAPER`]).
    FatTree,
}

/// The shape of a `fat_tree` topology. Switch numbering (after the hosts, as in `fat.txt`):
/// the ToRs pod by pod, then the aggregation switches pod by pod (plane order within a pod),
/// then the cores plane by plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FatTree {
    /// Pods.
    pub pods: u32,
    /// ToR switches per pod.
    pub tors_per_pod: u32,
    /// Aggregation switches per pod (= core planes).
    pub aggs_per_pod: u32,
    /// Cores each aggregation switch links to (the cores of its plane).
    pub cores_per_agg: u32,
    /// Hosts per ToR.
    pub hosts_per_tor: u32,
}

impl FatTree {
    /// The HPCC paper's tree (the authors' `mix/fat.txt`): 5 pods of 4 ToRs and 4
    /// aggregation switches, 16 cores in 4 planes, 16 hosts per ToR: 320 hosts, 20 ToRs, 20
    /// aggregation and 16 core switches.
    pub const PAPER: FatTree = FatTree {
        pods: 5,
        tors_per_pod: 4,
        aggs_per_pod: 4,
        cores_per_agg: 4,
        hosts_per_tor: 16,
    };

    /// Hosts.
    pub fn hosts(&self) -> u32 {
        self.pods * self.tors_per_pod * self.hosts_per_tor
    }

    /// ToR switches.
    pub fn tors(&self) -> u32 {
        self.pods * self.tors_per_pod
    }

    /// Aggregation switches.
    pub fn aggs(&self) -> u32 {
        self.pods * self.aggs_per_pod
    }

    /// Core switches.
    pub fn cores(&self) -> u32 {
        self.aggs_per_pod * self.cores_per_agg
    }

    /// The ToR of host `h`.
    pub fn tor_of(&self, h: u32) -> u32 {
        h / self.hosts_per_tor
    }

    /// The pod of host `h`.
    pub fn pod_of(&self, h: u32) -> u32 {
        self.tor_of(h) / self.tors_per_pod
    }
}

/// Switch buffer sharing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferKind {
    /// One pool per switch shared by its egress queues.
    #[default]
    Shared,
    /// `buffer_bytes` per egress port.
    PerPort,
}

/// How switches and NICs treat ACKs, INT and PFC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchModel {
    /// ACKs in their own strict-priority class (never paused, never dropped), INT growing by
    /// 8 bytes a hop, PFC with static per-port thresholds (`pfc_xoff_bytes`), pause frames
    /// that take the link's propagation delay only.
    #[default]
    Default,
    /// As the HPCC authors' ns-3 simulator (alibaba-edu/High-Precision-Congestion-Control):
    /// ACKs in the data class (queued, buffered and paused with data; routed by a hash of
    /// their own), a fixed 42-byte INT header on every data packet and ACK, a shared buffer
    /// whose PFC threshold is dynamic (per-port reserve and headroom), pause and resume
    /// frames as packets on the link. Lossless: PFC is always on.
    Ns3,
}

fn default_host_delay() -> u64 {
    1_000
}
fn default_buffer() -> u64 {
    32 << 20
}

/// `[topology]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// star, dumbbell, leaf_spine or fat_tree.
    pub kind: TopoKind,
    /// star: number of hosts.
    pub hosts: Option<u32>,
    /// dumbbell: hosts on the first switch.
    pub left_hosts: Option<u32>,
    /// dumbbell: hosts on the second switch.
    pub right_hosts: Option<u32>,
    /// leaf_spine: leaves.
    pub leaves: Option<u32>,
    /// leaf_spine: spines.
    pub spines: Option<u32>,
    /// leaf_spine: hosts per leaf.
    pub hosts_per_leaf: Option<u32>,
    /// fat_tree: pods (default 5).
    pub pods: Option<u32>,
    /// fat_tree: ToR switches per pod (default 4).
    pub tors_per_pod: Option<u32>,
    /// fat_tree: aggregation switches per pod, one per core plane (default 4).
    pub aggs_per_pod: Option<u32>,
    /// fat_tree: cores per plane, each linked to every aggregation switch of its plane
    /// (default 4).
    pub cores_per_agg: Option<u32>,
    /// fat_tree: hosts per ToR (default 16).
    pub hosts_per_tor: Option<u32>,
    /// Host link rate, b/s (a HPCC INT speed when INT is on).
    pub host_rate_bps: u64,
    /// Host link propagation delay, ns.
    #[serde(default = "default_host_delay")]
    pub host_delay_ns: u64,
    /// Switch-to-switch link rate, b/s (dumbbell, leaf_spine).
    pub fabric_rate_bps: Option<u64>,
    /// Switch-to-switch propagation delay, ns (default: the host delay).
    pub fabric_delay_ns: Option<u64>,
    /// Buffer per switch (shared) or per egress port, bytes.
    #[serde(default = "default_buffer")]
    pub buffer_bytes: u64,
    /// shared or per_port.
    #[serde(default)]
    pub buffer: BufferKind,
    /// ECN with one threshold: a data packet leaving a switch egress queue longer than this,
    /// bytes, is marked CE (Kmin = Kmax of [`super::ecn`]; off by default).
    pub ecn_threshold_bytes: Option<u64>,
    /// `[topology.ecn]`: ns-3's RED-like marking with Kmin/Kmax/Pmax per egress link rate
    /// ([`super::ecn`]); an empty table is ns-3's maps as they are.
    pub ecn: Option<super::ecn::EcnSpec>,
    /// Stamp INT at switch dequeue (default: on for hpcc, off for timely).
    pub int: Option<bool>,
    /// PFC (IEEE 802.1Qbb), off unless set: a switch pauses the upstream sender of an ingress
    /// port when the data bytes that arrived through that port and are still buffered exceed
    /// this, bytes.
    pub pfc_xoff_bytes: Option<u64>,
    /// PFC: the switch resumes the upstream sender when those bytes fall to this or below
    /// (default: `pfc_xoff_bytes` − 2 MTU-sized packets).
    pub pfc_xon_bytes: Option<u64>,
    /// default or ns3 (see [`SwitchModel`]).
    #[serde(default)]
    pub switch_model: SwitchModel,
    /// `switch_model = "ns3"`: ns-3's `INT_MULTI` (`run.py --mi`): switches stamp bytes and
    /// queue lengths in units of 128 and 80 bytes times this (1 ..= 64; default 1, ns-3's).
    pub int_multi: Option<u32>,
}

/// Flow group kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupKind {
    /// One flow from each `src` to `dst`; without `size_bytes` it lasts until `stop_ns` or the
    /// end (long-lived: excluded from the FCT statistics, included in Jain's index).
    Long,
    /// One flow of `size_bytes` from each `src` to `dst`, all at `start_ns` (+ stagger).
    Incast,
    /// Poisson arrivals on every host at `load` of its link, sizes from `cdf`, uniform
    /// destinations.
    Poisson,
    /// Poisson arrivals of incast events over the whole network: each event picks one receiver
    /// uniformly and `fan_in` distinct senders uniformly among the other hosts, each sending
    /// `size_bytes` at the event's time; the events' bytes are `load` of the network's capacity
    /// (every host link's rate summed), so the mean gap between events is
    /// `fan_in·size_bytes·8 / (load·hosts·host_rate_bps)`. The incast of HPCC Fig. 11
    /// (HPCC §5: 60 senders, 500 KB each), as its first author specified it (2 % of the capacity,
    /// Poisson events; alibaba-edu/High-Precision-Congestion-Control issue #36).
    PoissonIncast,
}

/// `[[flows]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowGroup {
    /// long, incast, poisson or poisson_incast.
    pub kind: GroupKind,
    /// Source hosts (long, incast).
    #[serde(default)]
    pub src: Vec<u32>,
    /// Destination host (long, incast).
    pub dst: Option<u32>,
    /// Start, ns.
    #[serde(default)]
    pub start_ns: u64,
    /// Start of the k-th source = `start_ns + k·stagger_ns`.
    #[serde(default)]
    pub stagger_ns: u64,
    /// Flow size, bytes (incast, poisson_incast: required; long: optional).
    pub size_bytes: Option<u64>,
    /// Long flows stop sending new data here; Poisson arrivals (and incast events) stop here. ns.
    pub stop_ns: Option<u64>,
    /// Poisson: average load of each host link; poisson_incast: the incasts' share of the
    /// network's capacity (every host link's rate summed). 0 < load < 1.
    pub load: Option<f64>,
    /// poisson_incast: senders per incast event, 1 ..= hosts − 1.
    pub fan_in: Option<u32>,
    /// Poisson: the flow-size CDF file (`size_bytes,cdf_percent`), relative to the scenario.
    pub cdf: Option<String>,
}

fn default_sample() -> u64 {
    1_000
}
fn default_buckets() -> Vec<u64> {
    vec![3_000, 12_000, 50_000, 200_000, 1_000_000, 5_000_000]
}

/// `[output]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Queue-length sampling interval (every switch egress port that has carried data), ns.
    #[serde(default = "default_sample")]
    pub sample_ns: u64,
    /// Flow ids recorded by `--record` (default: flow 0).
    pub record_flows: Option<Vec<u32>>,
    /// Flow ids whose rates are plotted (default: the first 16).
    pub track_flows: Option<Vec<u32>>,
    /// Jain's index over long flows' goodput from here (ns; default: half the duration).
    pub jain_from_ns: Option<u64>,
    /// ... to here (ns; default: the end).
    pub jain_to_ns: Option<u64>,
    /// Queue and RTT samples are taken from here on (ns; default 0): steady state only.
    #[serde(default)]
    pub stats_from_ns: u64,
    /// Upper bounds of the flow-size buckets, bytes (a last bucket takes the rest).
    #[serde(default = "default_buckets")]
    pub size_buckets_bytes: Vec<u64>,
    /// The ideal FCT slowdowns are taken against: `bound` or `ns3` (see [`IdealFct`]).
    #[serde(default)]
    pub ideal_fct: IdealFct,
}

/// `[output] ideal_fct`: what a flow's slowdown divides its FCT by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdealFct {
    /// The engine's lower bound of the FCT on the flow's path (no flow finishes below it:
    /// an invariant).
    #[default]
    Bound,
    /// ns-3's "standalone" FCT (`qp_finish` in the HPCC authors' third.cc): the path's base
    /// RTT with one full packet's serialisation on every link, plus the bytes with headers
    /// at the slowest link; a small flow can finish below it, and its slowdown is then 1, as
    /// their fct_analysis.py takes it.
    Ns3,
}

impl Default for OutputSpec {
    fn default() -> Self {
        Self {
            sample_ns: default_sample(),
            record_flows: None,
            track_flows: None,
            jain_from_ns: None,
            jain_to_ns: None,
            stats_from_ns: 0,
            size_buckets_bytes: default_buckets(),
            ideal_fct: IdealFct::Bound,
        }
    }
}

fn default_mtu() -> u32 {
    1_000
}
fn default_seg() -> u32 {
    16_384
}
fn default_pacer_flows() -> u32 {
    super::engine::pacer::PACER_FLOWS as u32
}
fn default_ack_every() -> u32 {
    1
}

/// A scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name (output file names).
    pub name: String,
    /// What it reproduces.
    #[serde(default)]
    pub description: String,
    /// timely or hpcc.
    pub algorithm: Algorithm,
    /// fixed or reference (`--controller` wins).
    #[serde(default)]
    pub controller: ControllerKind,
    /// RNG seed (`--seed` wins).
    #[serde(default)]
    pub seed: u64,
    /// Simulated time, ns.
    pub duration_ns: u64,
    /// Payload bytes per packet.
    #[serde(default = "default_mtu")]
    pub mtu_bytes: u32,
    /// TIMELY: TSO segment bytes (one completion per segment).
    #[serde(default = "default_seg")]
    pub segment_bytes: u32,
    /// Receivers ACK every k-th packet (and the last of a flow or TIMELY segment).
    #[serde(default = "default_ack_every")]
    pub ack_every: u32,
    /// NIC send jitter: each TIMELY segment (HPCC packet) leaves up to this much later than
    /// its pacing time, uniform (scheduling noise that real NICs have), ns.
    #[serde(default)]
    pub send_jitter_ns: u64,
    /// The NICs' pacer: `fixed` (`cc-pacer`) or `reference` (the f64 reference pacer); by
    /// default the controller's side.
    #[serde(default)]
    pub pacer: Option<ControllerKind>,
    /// Flows a NIC's pacer holds at once (`1 ..= 1024`); a flow that starts while its NIC's
    /// pacer is full waits for a finished flow's slot.
    #[serde(default = "default_pacer_flows")]
    pub pacer_flows: u32,
    /// HPCC: hpcc, per_ack or per_rtt.
    #[serde(default)]
    pub reaction: Reaction,
    /// Algorithm pcc with HPCC: the NIC also limits the bytes in flight to the rate × `T`
    /// (the window HPCC enforces). DOCA PCC takes a rate only and has no such limit: this is
    /// for measuring what its absence costs.
    #[serde(default)]
    pub pcc_inflight_cap: bool,
    /// The algorithm's parameters, exactly the keys of `replay timely|hpcc|cats --set`.
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    /// cats: the page and the sender.
    pub web: Option<WebSpec>,
    /// The network.
    pub topology: Topology,
    /// The workload.
    #[serde(default)]
    pub flows: Vec<FlowGroup>,
    /// What to measure.
    #[serde(default)]
    pub output: OutputSpec,
}

/// A flow-size CDF: `(size_bytes, cumulative fraction)`, increasing, ending at 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Cdf {
    /// The points.
    pub points: Vec<(f64, f64)>,
}

impl Cdf {
    /// Reads `size_bytes,cdf_percent` rows (`#` comments, one header row): sizes finite and
    /// non-negative with no flows below 1 byte, percentages in `[0, 100]`, both non-decreasing,
    /// the last percentage 100.
    pub fn load(path: &Path) -> Result<Cdf, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
        let mut points = Vec::new();
        let mut header = false;
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            if !header {
                if l != "size_bytes,cdf_percent" {
                    return Err(format!(
                        "line {}: header must be `size_bytes,cdf_percent`",
                        i + 1
                    ));
                }
                header = true;
                continue;
            }
            let (a, b) = l
                .split_once(',')
                .ok_or_else(|| format!("line {}: expected `size,percent`", i + 1))?;
            let s: f64 = a
                .trim()
                .parse()
                .map_err(|_| format!("line {}: bad size {a:?}", i + 1))?;
            let c: f64 = b
                .trim()
                .parse()
                .map_err(|_| format!("line {}: bad percent {b:?}", i + 1))?;
            // Sizes are finite byte counts and percentages within [0, 100]. A flow has at least
            // one byte: a point below 1 byte may only open the CDF at 0 % (`0,0`); one that puts
            // flows there (mass on empty flows, which sampling would turn into 1-byte flows
            // without a word) is refused.
            if !s.is_finite() || s < 0.0 {
                return Err(format!(
                    "line {}: size {a:?}: a flow size is a finite, non-negative number of bytes",
                    i + 1
                ));
            }
            if !(0.0..=100.0).contains(&c) {
                return Err(format!(
                    "line {}: percent {b:?}: a cumulative percentage is within [0, 100]",
                    i + 1
                ));
            }
            if s < 1.0 && c > 0.0 {
                return Err(format!(
                    "line {}: {c} % of flows at {s} bytes: a flow has at least 1 byte (only \
                     `0,0` may open the CDF)",
                    i + 1
                ));
            }
            if let Some(&(ps, pc)) = points.last()
                && (s < ps || c < pc * 100.0)
            {
                return Err(format!("line {}: not increasing", i + 1));
            }
            points.push((s, c / 100.0));
        }
        match points.last() {
            Some(&(_, c)) if (c - 1.0).abs() < 1e-9 => Ok(Cdf { points }),
            _ => Err("the CDF must end at 100".into()),
        }
    }

    /// The size at cumulative fraction `u` (linear between points), at least 1 byte.
    pub fn sample(&self, u: f64) -> u64 {
        let mut prev = (0.0, 0.0);
        for &(s, c) in &self.points {
            if u <= c {
                let f = if c > prev.1 {
                    (u - prev.1) / (c - prev.1)
                } else {
                    1.0
                };
                return (prev.0 + f * (s - prev.0)).round().max(1.0) as u64;
            }
            prev = (s, c);
        }
        prev.0.max(1.0) as u64
    }

    /// The mean size, bytes (piecewise linear).
    pub fn mean(&self) -> f64 {
        let mut m = 0.0;
        let mut prev = (0.0, 0.0);
        for &(s, c) in &self.points {
            m += (c - prev.1) * (s + prev.0) / 2.0;
            prev = (s, c);
        }
        m.max(1.0)
    }
}

/// A loaded, checked scenario.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The file.
    pub file: PathBuf,
    /// Its contents.
    pub sc: Scenario,
    /// The algorithm parameters as `Param`s (source: the file).
    pub params: Vec<Param>,
    /// CDFs per flow group (Poisson groups only).
    pub cdfs: Vec<Option<Cdf>>,
    /// Total hosts.
    pub hosts: u32,
    /// cats: the page.
    pub page: Option<Page>,
    /// `--ns3-topology`: the ns-3 node id of each of our nodes (hosts, then switches; empty:
    /// the identity). The ns-3 switch model hashes with these ids and the addresses made from
    /// them.
    pub ns3_id: Vec<u32>,
    /// The top-level keys the file gives (not the defaults), for the checks that a key is read.
    pub given: std::collections::BTreeSet<String>,
    /// `--ns3-flows`: each flow group's destination port (empty: ns-3's defaults by kind,
    /// [`crate::ns3::DPORT_NORMAL`] and [`crate::ns3::DPORT_INCAST`]).
    pub ns3_dport: Vec<u16>,
}

impl Loaded {
    /// An error about `key`.
    pub fn err(&self, key: &str, msg: impl Into<String>) -> ScenarioError {
        ScenarioError {
            file: self.file.clone(),
            key: key.to_string(),
            msg: msg.into(),
        }
    }
}

fn value_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Reads and checks a scenario file.
pub fn load(file: &Path) -> Result<Loaded, ScenarioError> {
    let e0 = |key: &str, msg: String| ScenarioError {
        file: file.to_path_buf(),
        key: key.to_string(),
        msg,
    };
    let text = std::fs::read_to_string(file).map_err(|e| e0("", format!("cannot read: {e}")))?;
    parse(file, &text)
}

/// Parses and checks scenario text (`file` names it in errors and anchors relative paths).
pub fn parse(file: &Path, text: &str) -> Result<Loaded, ScenarioError> {
    let sc: Scenario = toml::from_str(text).map_err(|e| {
        let msg = e.message().to_string();
        // serde's unknown-field message names the key; a span gives the line.
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        let key = msg
            .strip_prefix("unknown field `")
            .and_then(|r| r.split('`').next())
            .unwrap_or("")
            .to_string();
        ScenarioError {
            file: file.to_path_buf(),
            key,
            msg: match line {
                Some(l) => format!("line {l}: {msg}"),
                None => msg,
            },
        }
    })?;
    let mut params = Vec::new();
    for (k, v) in &sc.params {
        let value = value_text(v).ok_or_else(|| ScenarioError {
            file: file.to_path_buf(),
            key: format!("params.{k}"),
            msg: "must be a number, a string or a boolean".into(),
        })?;
        params.push(Param {
            key: k.clone(),
            value,
            source: file.to_path_buf(),
            line: None,
        });
    }
    let hosts = sc.topology_hosts();
    let mut l = Loaded {
        file: file.to_path_buf(),
        sc,
        params,
        cdfs: Vec::new(),
        hosts,
        page: None,
        ns3_id: Vec::new(),
        ns3_dport: Vec::new(),
        given: std::collections::BTreeSet::new(),
    };
    // A file's groups; an ns-3 flow file's flows (one group each, `--ns3-flows`) are not
    // bounded by it.
    if l.sc.flows.len() > 255 {
        return Err(l.err("flows", "at most 255 flow groups"));
    }
    check::check(&mut l)?;
    // The file parsed as a scenario, so it parses as a table.
    let raw: toml::Table = toml::from_str(text).unwrap_or_default();
    check::keys::given(&l, &raw)?;
    l.given = raw.keys().cloned().collect();
    Ok(l)
}

impl Scenario {
    /// The topology's host count (0 when a count it needs is missing; `check` refuses that).
    pub fn topology_hosts(&self) -> u32 {
        let t = &self.topology;
        match t.kind {
            TopoKind::Star => t.hosts.unwrap_or(0),
            TopoKind::Dumbbell => t.left_hosts.unwrap_or(0) + t.right_hosts.unwrap_or(0),
            TopoKind::LeafSpine => t.leaves.unwrap_or(0) * t.hosts_per_leaf.unwrap_or(0),
            // `check` bounds every count, so the product does not overflow once checked.
            TopoKind::FatTree => {
                let f = t.fat_tree();
                f.pods
                    .saturating_mul(f.tors_per_pod)
                    .saturating_mul(f.hosts_per_tor)
            }
        }
    }
}

impl Topology {
    /// The fat tree's shape: each key given, or the paper's ([`FatTree::PAPER`]).
    pub fn fat_tree(&self) -> FatTree {
        let p = FatTree::PAPER;
        FatTree {
            pods: self.pods.unwrap_or(p.pods),
            tors_per_pod: self.tors_per_pod.unwrap_or(p.tors_per_pod),
            aggs_per_pod: self.aggs_per_pod.unwrap_or(p.aggs_per_pod),
            cores_per_agg: self.cores_per_agg.unwrap_or(p.cores_per_agg),
            hosts_per_tor: self.hosts_per_tor.unwrap_or(p.hosts_per_tor),
        }
    }
}

/// Checks a loaded scenario again after its topology or flows were replaced (`--ns3-topology`,
/// `--ns3-flows`), as [`parse`] checks a file.
pub fn recheck(l: &mut Loaded) -> Result<(), ScenarioError> {
    l.hosts = l.sc.topology_hosts();
    l.cdfs = Vec::new();
    l.page = None;
    check::check(l)
}

impl GroupKind {
    /// The `[[flows]]` keys a group of this kind reads; a group giving any other is refused
    /// ([`check::keys::given`]).
    pub fn reads(self) -> &'static [&'static str] {
        match self {
            GroupKind::Long | GroupKind::Incast => &[
                "kind",
                "src",
                "dst",
                "start_ns",
                "stagger_ns",
                "size_bytes",
                "stop_ns",
            ],
            GroupKind::Poisson => &["kind", "start_ns", "stop_ns", "load", "cdf"],
            GroupKind::PoissonIncast => &[
                "kind",
                "start_ns",
                "stop_ns",
                "load",
                "fan_in",
                "size_bytes",
            ],
        }
    }

    /// Its `kind` value.
    pub fn name(self) -> &'static str {
        match self {
            GroupKind::Long => "long",
            GroupKind::Incast => "incast",
            GroupKind::Poisson => "poisson",
            GroupKind::PoissonIncast => "poisson_incast",
        }
    }

    /// Its flows arrive during the run (Poisson arrivals, incast events), instead of all being
    /// known from the start.
    pub fn arrives(self) -> bool {
        matches!(self, GroupKind::Poisson | GroupKind::PoissonIncast)
    }
}

/// `n` things with ids from 0, in words: "7 hosts, 0 to 6", "1 flow, 0", "no flows".
pub fn count_ids(n: u32, what: &str) -> String {
    match n {
        0 => format!("no {what}s"),
        1 => format!("1 {what}, 0"),
        n => format!("{n} {what}s, 0 to {}", n - 1),
    }
}

/// Reads a page: the `enqueue` rows (all at `t_ns = 0`) and the `# set` lines of a CATS trace.
pub fn read_page(path: &Path) -> Result<Page, cc_trace::InputError> {
    use cc_trace::InputError;
    let mut r = cc_trace::TraceReader::open(path)?;
    r.expect_header(cc_trace::cats::HEADER)?;
    let mut messages = Vec::new();
    while let Some(row) = r.next_row::<cc_trace::cats::Row>() {
        let (line, row) = row?;
        if let cc_trace::cats::Event::Enqueue { prio, len_bytes } = row.event(path, line)? {
            if row.t_ns != 0 {
                return Err(InputError::at(
                    path,
                    line,
                    "a page's messages are all queued at t_ns = 0",
                ));
            }
            messages.push((prio.index() as u8, len_bytes));
        }
    }
    if messages.is_empty() {
        return Err(InputError::file(path, "no enqueue rows: the page is empty"));
    }
    Ok(Page {
        messages,
        params: r.params().to_vec(),
    })
}

#[cfg(test)]
mod cdf_tests {
    use super::Cdf;

    fn load(rows: &str) -> Result<Cdf, String> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("c.csv");
        std::fs::write(&p, format!("size_bytes,cdf_percent\n{rows}")).unwrap();
        Cdf::load(&p)
    }

    #[test]
    fn a_cdf_is_refused_with_its_line_unless_sizes_are_bytes_and_percentages_cumulative() {
        assert!(load("100,50\n1000,100\n").is_ok());
        assert!(load("0,0\n100,50\n1000,100\n").is_ok());
        for (rows, line, what) in [
            ("0,50\n1000,100\n", "line 2", "at least 1 byte"),
            ("0.5,10\n1000,100\n", "line 2", "at least 1 byte"),
            ("-5,0\n1000,100\n", "line 2", "non-negative"),
            ("NaN,10\n1000,100\n", "line 2", "non-negative"),
            ("100,-1\n1000,100\n", "line 2", "[0, 100]"),
            ("100,150\n1000,100\n", "line 2", "[0, 100]"),
            ("100,inf\n", "line 2", "[0, 100]"),
            ("100,60\n1000,50\n2000,100\n", "line 3", "not increasing"),
            ("100,50\n1000,90\n", "", "end at 100"),
        ] {
            let e = load(rows).unwrap_err();
            assert!(e.contains(line) && e.contains(what), "{rows:?}: {e}");
        }
    }
}
