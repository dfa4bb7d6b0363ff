//! The topology's path classes and their base RTTs, and the `T` and initial window derived from
//! them, as the HPCC authors' ns-3 simulator derives them (`simulation/scratch/third.cc` at
//! commit `9f4be2a`, `main`: `maxRtt` is the longest base RTT of any host pair, `maxBdp` the
//! largest bandwidth-delay product; with `GLOBAL_T 1` every flow runs with `T = maxRtt` and
//! starts with the window `maxBdp`).
//!
//! A base RTT here is the engine's own: a full data packet (`mtu_bytes` of payload, the header,
//! the INT bytes it carries on each link) serialised on every link of the path, store and
//! forward, its ACK (with the INT it echoes) serialised on every link back, and the
//! propagation delay both ways; no queue anywhere. ns-3's formula (`CalculateRoute`: twice
//! the propagation plus one payload's serialisation per link, one way, each rounded down to the
//! ns) is listed beside it.

use super::engine::{MAX_HOPS, Wire, int_wire_bytes};
use super::scenario::SwitchModel;
use super::scenario::{Loaded, TopoKind};
use cc_trace::Param;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The source of a parameter whose default the topology of scenario `file` gives
/// (`base_rtt_ns`: the longest base RTT), as a parameter error names it.
pub fn topology_source(file: &Path) -> PathBuf {
    PathBuf::from(format!(
        "scenario {} topology (its longest base RTT)",
        file.display()
    ))
}

/// One class of host pairs whose paths have the same shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathClass {
    /// What the path goes through (`same leaf`, `via a spine`).
    pub name: &'static str,
    /// Ordered host pairs of the class.
    pub pairs: u64,
    /// Links one way.
    pub links: u32,
    /// Switches one way.
    pub switches: u32,
    /// The engine's base RTT, ps.
    pub base_rtt_ps: u64,
    /// ns-3's base RTT of the same path (`third.cc`'s formula), ns.
    pub ns3_base_rtt_ns: u64,
    /// The slowest link of the path, b/s.
    pub bottleneck_bps: u64,
    /// Bandwidth-delay product: the base RTT (rounded up to the ns) at the bottleneck, bytes.
    pub bdp_bytes: u64,
}

/// Every path class of the topology and what follows from them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Paths {
    /// The classes with at least one host pair, shortest path first.
    pub classes: Vec<PathClass>,
    /// The longest base RTT, ns (rounded up): the `T` ns-3 runs with.
    pub longest_rtt_ns: u64,
    /// The largest bandwidth-delay product, bytes: ns-3's initial window.
    pub largest_bdp_bytes: u64,
    /// The host links' rate, b/s (the NIC rate).
    pub host_rate_bps: u64,
}

/// One link of a path: rate (b/s) and propagation delay (ns).
type Link = (u64, u64);

/// The paths of `l`'s topology, with INT on the data packets when the switches stamp it (the
/// scenario's `topology.int`, or its algorithm's default).
pub fn of(l: &Loaded) -> Paths {
    let int_on =
        l.sc.topology
            .int
            .unwrap_or(l.sc.algorithm.entry().int_default);
    paths(l, int_on)
}

/// The paths of `l`'s topology, with INT on the data packets when `int_on`.
pub fn paths(l: &Loaded, int_on: bool) -> Paths {
    let t = &l.sc.topology;
    let ns3 = (t.switch_model == SwitchModel::Ns3).then(|| l.sc.algorithm.entry().ns3_int_bytes);
    let host: Link = (t.host_rate_bps, t.host_delay_ns);
    let fab: Link = (
        t.fabric_rate_bps.unwrap_or(t.host_rate_bps),
        t.fabric_delay_ns.unwrap_or(t.host_delay_ns),
    );
    let n = u64::from(l.hosts);
    let g = |v: Option<u32>| u64::from(v.unwrap_or(0));
    // (name, ordered pairs, fabric links one way)
    let shapes: Vec<(&'static str, u64, u32)> = match t.kind {
        TopoKind::Star => vec![("same switch", n * n.saturating_sub(1), 0)],
        TopoKind::Dumbbell => {
            let (a, b) = (g(t.left_hosts), g(t.right_hosts));
            vec![
                (
                    "same switch",
                    a * a.saturating_sub(1) + b * b.saturating_sub(1),
                    0,
                ),
                ("across the fabric link", 2 * a * b, 1),
            ]
        }
        TopoKind::LeafSpine => {
            let (leaves, hpl) = (g(t.leaves), g(t.hosts_per_leaf));
            vec![
                ("same leaf", leaves * hpl * hpl.saturating_sub(1), 0),
                ("via a spine", n * (n - hpl.min(n)), 2),
            ]
        }
        TopoKind::FatTree => {
            let f = t.fat_tree();
            let (hpt, per_pod) = (u64::from(f.hosts_per_tor), u64::from(f.tors_per_pod));
            let pod_hosts = per_pod * hpt;
            vec![
                (
                    "same ToR",
                    u64::from(f.tors()) * hpt * hpt.saturating_sub(1),
                    0,
                ),
                (
                    "same pod, via aggregation",
                    n * (pod_hosts - hpt.min(pod_hosts)),
                    2,
                ),
                ("across pods, via a core", n * (n - pod_hosts.min(n)), 4),
            ]
        }
    };
    let mtu = l.sc.mtu_bytes;
    let classes: Vec<PathClass> = shapes
        .into_iter()
        .filter(|s| s.1 > 0)
        .map(|(name, pairs, fab_links)| {
            let mut links = vec![host];
            links.extend(std::iter::repeat_n(fab, fab_links as usize));
            links.push(host);
            class(name, pairs, &links, mtu, int_on, ns3)
        })
        .collect();
    Paths {
        longest_rtt_ns: classes
            .iter()
            .map(|c| c.base_rtt_ps.div_ceil(1_000))
            .max()
            .unwrap_or(0),
        largest_bdp_bytes: classes.iter().map(|c| c.bdp_bytes).max().unwrap_or(0),
        host_rate_bps: t.host_rate_bps,
        classes,
    }
}

/// Serialisation of `bytes` at `rate_bps`, ps, rounded up (as the engine's).
fn ser_ps(bytes: u32, rate_bps: u64) -> u64 {
    (u128::from(bytes) * 8_000_000_000_000).div_ceil(u128::from(rate_bps)) as u64
}

fn class(
    name: &'static str,
    pairs: u64,
    links: &[Link],
    mtu: u32,
    int_on: bool,
    ns3: Option<u32>,
) -> PathClass {
    let switches = links.len() as u32 - 1;
    let stamped = switches.min(MAX_HOPS as u32);
    let mut rtt_ps = 0;
    let mut ns3_ns = 0;
    for (k, &(rate, delay_ns)) in links.iter().enumerate() {
        // The data packet on link k: payload, header, INT header and the k hops stamped so far
        // (a switch stamps its hop at dequeue, before the packet's bytes go on its link).
        let int = int_wire_bytes(int_on, ns3, (k as u32).min(MAX_HOPS as u32));
        rtt_ps += ser_ps(mtu + Wire::of(ns3.is_some()).data_hdr + int, rate) + 2 * delay_ns * 1_000;
        // The ACK echoes every hop.
        let ack_int = int_wire_bytes(int_on, ns3, stamped);
        rtt_ps += ser_ps(Wire::of(ns3.is_some()).ack + ack_int, rate);
        // third.cc, CalculateRoute: txDelay += payload·8·10^9 / bw (integer division).
        ns3_ns += 2 * delay_ns + u64::from(mtu) * 8_000_000_000 / rate;
    }
    let bottleneck = links.iter().map(|l| l.0).min().unwrap_or(0);
    PathClass {
        name,
        pairs,
        links: links.len() as u32,
        switches,
        base_rtt_ps: rtt_ps,
        ns3_base_rtt_ns: ns3_ns,
        bottleneck_bps: bottleneck,
        // third.cc: bdp = rtt · bw / 10^9 / 8.
        bdp_bytes: (u128::from(rtt_ps.div_ceil(1_000)) * u128::from(bottleneck) / 8_000_000_000)
            as u64,
    }
}

/// The parameters of scenario `l` whose defaults its topology gives, among `keys`
/// (`base_rtt_ns`: the longest base RTT), with the source [`topology_source`]; they go before
/// the scenario's.
pub fn topology_params(l: &Loaded, keys: &[&str]) -> Vec<Param> {
    let p = of(l);
    keys.iter()
        .filter_map(|&k| match k {
            "base_rtt_ns" => Some((k, p.longest_rtt_ns, topology_source(&l.file))),
            "win_bytes" => Some((k, p.largest_bdp_bytes, topology_bdp_source(&l.file))),
            _ => None,
        })
        .map(|(k, v, source)| Param {
            key: k.into(),
            value: v.to_string(),
            source,
            line: None,
        })
        .collect()
}

/// The source of a window taken from the topology (DCTCP's `win_bytes`: ns-3's `maxBdp`).
pub fn topology_bdp_source(file: &Path) -> PathBuf {
    PathBuf::from(format!(
        "scenario {} topology (its largest bandwidth-delay product)",
        file.display()
    ))
}

/// What the report says of the paths and the `T` in force.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathsReport {
    /// The path classes.
    pub classes: Vec<PathClass>,
    /// The longest base RTT, ns.
    pub longest_rtt_ns: u64,
    /// The largest bandwidth-delay product, bytes.
    pub largest_bdp_bytes: u64,
    /// The `T` the controllers run with, ns, when the algorithm takes one (`base_rtt_ns`).
    pub t_ns: Option<u64>,
    /// Where it came from: `topology` (the longest base RTT) or the parameter's origin.
    pub t_origin: Option<String>,
    /// A `T` given that differs from the longest base RTT: what it does to the window.
    pub warning: Option<String>,
}

impl PathsReport {
    /// The report of `p` with the `T` in force (`value`, `origin`), if the algorithm has one.
    pub fn new(p: &Paths, t: Option<(u64, String)>) -> PathsReport {
        let warning = t.as_ref().and_then(|(v, o)| {
            (*v != p.longest_rtt_ns && p.longest_rtt_ns > 0).then(|| {
                // HPCC's window starts at (and never exceeds) the NIC rate × T.
                let w = u128::from(*v) * u128::from(p.host_rate_bps) / 8_000_000_000;
                format!(
                    "base_rtt_ns = {v} ({o}) differs from the topology's longest base RTT, \
                     {} ns: every flow starts with a window of {w} B (NIC rate × T), {:.2}× \
                     the largest bandwidth-delay product ({} B)",
                    p.longest_rtt_ns,
                    w as f64 / p.largest_bdp_bytes.max(1) as f64,
                    p.largest_bdp_bytes
                )
            })
        });
        PathsReport {
            classes: p.classes.clone(),
            longest_rtt_ns: p.longest_rtt_ns,
            largest_bdp_bytes: p.largest_bdp_bytes,
            t_ns: t.as_ref().map(|t| t.0),
            t_origin: t.map(|t| t.1),
            warning,
        }
    }
}
