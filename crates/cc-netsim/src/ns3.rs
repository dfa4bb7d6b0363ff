//! The HPCC authors' ns-3 simulator's files (alibaba-edu/High-Precision-Congestion-Control,
//! `simulation/scratch/third.cc`): its topology and flow files read into a scenario, and a
//! run's `fct.txt`, `pfc.txt`, `qlen.txt` (with the `topology.txt` and `flow.txt` that describe
//! the run) written in its formats. docs/sim.md ("ns-3 file formats") gives the formats, the
//! node and address mapping and every difference.

use super::engine::Sim;
use super::scenario::{self, FlowGroup, GroupKind, Loaded, TopoKind};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// ns-3's first port number of a (source, destination) host pair; each new flow of the pair
/// takes the next one (`portNumder` in third.cc).
pub const FIRST_SPORT: u16 = 10000;
/// The destination port ns-3's analysis reads as an ordinary flow (`fct_analysis.py -t 0`).
pub const DPORT_NORMAL: u32 = 100;
/// The destination port it reads as an incast flow (`-t 1`).
pub const DPORT_INCAST: u32 = 200;
/// The priority group our flows are written with (the one `mix/flow.txt` uses).
pub const PG_DATA: u32 = 3;
/// ns-3's queues per port (`SwitchMmu::qCnt`): a priority group must be below it.
const PG_COUNT: u32 = 8;
/// `qlen.txt`: a dump is written at each multiple of this time, ns (third.cc's
/// `qlen_dump_interval`).
pub const QLEN_DUMP_INTERVAL_NS: u64 = 100_000_000;

/// ns-3's IPv4 address of node `id` (`node_id_to_ip` in third.cc): 11.x.y.1 with the id in the
/// two middle bytes.
pub fn node_ip(id: u32) -> u32 {
    0x0b00_0001 + (id / 256) * 0x0001_0000 + (id % 256) * 0x0000_0100
}

/// One link of an ns-3 topology file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// One end (ns-3 node id).
    pub a: u32,
    /// The other end.
    pub b: u32,
    /// Rate, b/s.
    pub rate_bps: u64,
    /// Propagation delay, ns.
    pub delay_ns: u64,
    /// Its line in the file (0 for links made from a scenario).
    pub line: usize,
}

/// An ns-3 topology file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// Node count (hosts and switches; ids `0..nodes`).
    pub nodes: u32,
    /// The switches' ids, in the file's order.
    pub switches: Vec<u32>,
    /// The links, in the file's order (which gives each node's interface numbers).
    pub links: Vec<Link>,
}

/// One line of an ns-3 flow file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    /// Source host (ns-3 node id).
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Priority group.
    pub pg: u32,
    /// Destination port.
    pub dport: u32,
    /// Bytes.
    pub size: u64,
    /// Start, ns.
    pub start_ns: u64,
    /// Its line in the file.
    pub line: usize,
}

/// Whitespace-separated tokens with their line numbers, read as they are asked for: ns-3 reads
/// both files with `>>`, so line breaks carry no meaning, but every error names the line of the
/// token at fault.
struct Tokens<'a> {
    file: &'a Path,
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
    cur: std::str::SplitWhitespace<'a>,
    line: usize,
    /// The line of the last token read (for "the file ends" errors).
    last: usize,
}

impl<'a> Tokens<'a> {
    fn new(file: &'a Path, text: &'a str) -> Tokens<'a> {
        Tokens {
            file,
            lines: text.lines().enumerate(),
            cur: "".split_whitespace(),
            line: 0,
            last: 1,
        }
    }

    fn token(&mut self) -> Option<(usize, &'a str)> {
        loop {
            if let Some(t) = self.cur.next() {
                self.last = self.line;
                return Some((self.line, t));
            }
            let (i, l) = self.lines.next()?;
            self.line = i + 1;
            self.cur = l.split_whitespace();
        }
    }

    fn err(&self, line: usize, msg: impl std::fmt::Display) -> String {
        format!("{}: line {line}: {msg}", self.file.display())
    }

    fn next(&mut self, what: &str) -> Result<(usize, &'a str), String> {
        self.token()
            .ok_or_else(|| self.err(self.last, format!("the file ends where {what} is expected")))
    }

    fn uint(&mut self, what: &str, max: u64) -> Result<(usize, u64), String> {
        let (line, t) = self.next(what)?;
        let v: u64 = t
            .parse()
            .map_err(|_| self.err(line, format!("{what} {t:?} is not a whole number")))?;
        if v > max {
            return Err(self.err(line, format!("{what} {v} is above {max}")));
        }
        Ok((line, v))
    }

    fn node(&mut self, what: &str, nodes: u32) -> Result<(usize, u32), String> {
        let (line, v) = self.uint(what, u64::from(u32::MAX))?;
        if v >= u64::from(nodes) {
            return Err(self.err(
                line,
                format!(
                    "{what} {v}: no such node (the file declares {})",
                    scenario::count_ids(nodes, "node")
                ),
            ));
        }
        Ok((line, v as u32))
    }

    fn end(&mut self, what: &str) -> Result<(), String> {
        match self.token() {
            Some((line, t)) => Err(self.err(
                line,
                format!("{t:?} after {what}: the first line's count does not match the lines"),
            )),
            None => Ok(()),
        }
    }
}

/// A decimal number as `(digits, digits after the point)`, exactly.
fn decimal(s: &str) -> Option<(u128, u32)> {
    let (i, f) = s.split_once('.').unwrap_or((s, ""));
    if i.is_empty() && f.is_empty() || !(i.bytes().chain(f.bytes())).all(|c| c.is_ascii_digit()) {
        return None;
    }
    if i.len() + f.len() > 30 {
        return None;
    }
    let mut m: u128 = 0;
    for c in i.bytes().chain(f.bytes()) {
        m = m * 10 + u128::from(c - b'0');
    }
    Some((m, f.len() as u32))
}

/// `value × unit` exactly, `None` when it is not a whole number or too large.
fn scaled(num: &str, unit: u128) -> Option<Result<u64, ()>> {
    let (m, k) = decimal(num)?;
    let p = 10u128.pow(k);
    let v = m.checked_mul(unit)?;
    Some(if v % p == 0 {
        u64::try_from(v / p).map_err(|_| ())
    } else {
        Err(())
    })
}

/// Splits `100Gbps` into `("100", "Gbps")`.
fn split_unit(s: &str) -> (&str, &str) {
    let at = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    s.split_at(at)
}

/// An ns-3 `DataRate` string (`100Gbps`, `25Gb/s`, `400Gbps`, `1.5Mbps`, byte forms `GBps`),
/// b/s.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let (num, unit) = split_unit(s);
    let factor: u128 = match unit {
        "bps" | "b/s" => 1,
        "kbps" | "Kbps" | "kb/s" | "Kb/s" => 1_000,
        "Mbps" | "Mb/s" => 1_000_000,
        "Gbps" | "Gb/s" => 1_000_000_000,
        "Bps" | "B/s" => 8,
        "kBps" | "KBps" | "kB/s" | "KB/s" => 8_000,
        "MBps" | "MB/s" => 8_000_000,
        "GBps" | "GB/s" => 8_000_000_000,
        "" => return Err(format!("rate {s:?} has no unit (ns-3 writes e.g. 100Gbps)")),
        u => {
            return Err(format!(
                "rate {s:?}: unit {u:?} is not one of bps, Kbps, Mbps, Gbps, b/s, Kb/s, Mb/s, \
                 Gb/s or their byte forms (Bps, …)"
            ));
        }
    };
    match scaled(num, factor) {
        None => Err(format!("rate {s:?}: {num:?} is not a decimal number")),
        Some(Err(())) => Err(format!("rate {s:?} is not a whole number of b/s")),
        Some(Ok(0)) => Err(format!("rate {s:?} is zero")),
        Some(Ok(v)) => Ok(v),
    }
}

/// An ns-3 `Time` string (`0.001ms`, `1000ns`, `1us`, `2s`), ns.
pub fn parse_delay(s: &str) -> Result<u64, String> {
    let (num, unit) = split_unit(s);
    let ps: u128 = match unit {
        "s" => 1_000_000_000_000,
        "ms" => 1_000_000_000,
        "us" => 1_000_000,
        "ns" => 1_000,
        "ps" => 1,
        "" => {
            return Err(format!(
                "delay {s:?} has no unit (ns-3 writes e.g. 0.001ms)"
            ));
        }
        u => {
            return Err(format!(
                "delay {s:?}: unit {u:?} is not one of s, ms, us, ns, ps"
            ));
        }
    };
    match scaled(num, ps) {
        None => Err(format!("delay {s:?}: {num:?} is not a decimal number")),
        Some(Ok(v)) if v % 1000 == 0 => Ok(v / 1000),
        Some(_) => Err(format!(
            "delay {s:?} is not a whole number of ns (the engine's link delays are in ns)"
        )),
    }
}

/// Reads an ns-3 topology file: `nodes switches links`, the switch ids, then one
/// `src dst rate delay error_rate` per link. A non-zero error rate, a link from a node to
/// itself and a second link between the same two nodes are refused (the engine has neither
/// lossy links nor parallel links).
pub fn parse_topology(file: &Path, text: &str) -> Result<Topology, String> {
    let mut t = Tokens::new(file, text);
    let (_, nodes) = t.uint("the node count", 1 << 16)?;
    let nodes = nodes as u32;
    let (_, n_sw) = t.uint("the switch count", u64::from(nodes))?;
    let (_, n_links) = t.uint("the link count", 1 << 20)?;
    let mut switches = Vec::with_capacity(n_sw as usize);
    let mut is_sw = vec![false; nodes as usize];
    for _ in 0..n_sw {
        let (line, s) = t.node("switch id", nodes)?;
        if std::mem::replace(&mut is_sw[s as usize], true) {
            return Err(t.err(line, format!("switch {s} is listed twice")));
        }
        switches.push(s);
    }
    let mut links: Vec<Link> = Vec::with_capacity(n_links as usize);
    let mut seen: HashMap<(u32, u32), usize> = HashMap::new();
    for _ in 0..n_links {
        let (line, a) = t.node("link source", nodes)?;
        let (_, b) = t.node("link destination", nodes)?;
        let (l, r) = t.next("the link's rate")?;
        let rate_bps = parse_rate(r).map_err(|e| t.err(l, e))?;
        let (l, d) = t.next("the link's delay")?;
        let delay_ns = parse_delay(d).map_err(|e| t.err(l, e))?;
        let (l, e) = t.next("the link's error rate")?;
        let err: f64 = e
            .parse()
            .map_err(|_| t.err(l, format!("error rate {e:?} is not a number")))?;
        if !(err.is_finite() && (0.0..=1.0).contains(&err)) {
            return Err(t.err(l, format!("error rate {e:?} is not in [0, 1]")));
        }
        if err != 0.0 {
            return Err(t.err(
                l,
                format!("error rate {e}: the engine's links do not drop packets at random"),
            ));
        }
        if a == b {
            return Err(t.err(line, format!("a link from node {a} to itself")));
        }
        if let Some(first) = seen.insert((a.min(b), a.max(b)), line) {
            return Err(t.err(
                line,
                format!("a second link between nodes {a} and {b} (the first is on line {first})"),
            ));
        }
        links.push(Link {
            a,
            b,
            rate_bps,
            delay_ns,
            line,
        });
    }
    t.end(&format!("the {n_links} links"))?;
    Ok(Topology {
        nodes,
        switches,
        links,
    })
}

/// Reads an ns-3 flow file: the count, then one `src dst pg dport size start_s` per flow;
/// `is_host` says which node ids are hosts (the others are refused).
pub fn parse_flows(
    file: &Path,
    text: &str,
    is_host: &dyn Fn(u32) -> bool,
) -> Result<Vec<Flow>, String> {
    let mut t = Tokens::new(file, text);
    let (nl, n) = t.uint("the flow count", 1 << 26)?;
    if n == 0 {
        return Err(t.err(
            nl,
            "the file has no flows: the run would carry no traffic and measure nothing",
        ));
    }
    let mut flows: Vec<Flow> = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (line, src) = t.uint("source", u64::from(u32::MAX))?;
        let (_, dst) = t.uint("destination", u64::from(u32::MAX))?;
        let (_, pg) = t.uint("priority group", u64::from(PG_COUNT - 1))?;
        let (_, dport) = t.uint("destination port", u64::from(u16::MAX))?;
        // ns-3 reads the size into a 32-bit `maxPacketCount`.
        let (sl, size) = t.uint("size", u64::from(u32::MAX))?;
        let (tl, st) = t.next("start time")?;
        let (src, dst) = (src as u32, dst as u32);
        for (what, v) in [("source", src), ("destination", dst)] {
            if !is_host(v) {
                return Err(t.err(line, format!("{what} {v} is not a host of the topology")));
            }
        }
        if src == dst {
            return Err(t.err(line, format!("source and destination are both {src}")));
        }
        if size == 0 {
            return Err(t.err(sl, "size 0: a flow carries at least one byte"));
        }
        let secs: f64 = st
            .parse()
            .map_err(|_| t.err(tl, format!("start time {st:?} is not a number of seconds")))?;
        if !(0.0..1.0e6).contains(&secs) {
            return Err(t.err(tl, format!("start time {st:?} is not in [0, 10^6) s")));
        }
        // As ns-3 reads it: `Seconds(double)`, truncated to the ns.
        let start_ns = super::engine::ns3_seconds_ns(secs);
        if let Some(p) = flows.last()
            && start_ns < p.start_ns
        {
            return Err(t.err(
                tl,
                format!(
                    "start time {st} s is before the previous flow's (line {}): ns-3 reads the \
                     file in order and needs the starts in order",
                    p.line
                ),
            ));
        }
        if let Some(p) = flows.first()
            && pg as u32 != p.pg
        {
            return Err(t.err(
                line,
                format!(
                    "priority group {pg}, line {} has {}: the engine has one data class, so \
                     every flow must be in the same group",
                    p.line, p.pg
                ),
            ));
        }
        flows.push(Flow {
            src,
            dst,
            pg: pg as u32,
            dport: dport as u32,
            size,
            start_ns,
            line,
        });
    }
    t.end(&format!("the {n} flows"))?;
    Ok(flows)
}

/// An ns-3 topology recognised as one of the engine's: its `[topology]` shape keys, and the
/// ns-3 id of each of our nodes (hosts `0..hosts`, then the switches in the engine's order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// star, dumbbell or leaf_spine.
    pub kind: TopoKind,
    /// Hosts per edge switch, in the engine's switch order (one entry for a star, two for a
    /// dumbbell, one per leaf).
    pub hosts_per_edge: Vec<u32>,
    /// Spines (leaf-spine).
    pub spines: u32,
    /// The fat tree's shape (kind fat_tree).
    pub fat: Option<scenario::FatTree>,
    /// Host link rate, b/s.
    pub host_rate_bps: u64,
    /// Host link delay, ns.
    pub host_delay_ns: u64,
    /// Switch-to-switch rate and delay, when there are such links.
    pub fabric: Option<(u64, u64)>,
    /// ns-3 id of our node `i`.
    pub ns3_id: Vec<u32>,
}

/// Recognises a star, a dumbbell or a two-tier leaf-spine in an ns-3 topology; anything else
/// is refused (the engine routes only those), as are host links at more than one rate or
/// delay, fabric links at more than one, a host with other than one link, and leaves with
/// different host counts.
pub fn classify(file: &Path, t: &Topology) -> Result<Shape, String> {
    let err = |line: usize, msg: String| format!("{}: line {line}: {msg}", file.display());
    let n = t.nodes as usize;
    let mut is_sw = vec![false; n];
    for &s in &t.switches {
        is_sw[s as usize] = true;
    }
    let mut host_link: Vec<Option<&Link>> = vec![None; n];
    let mut sw_hosts: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut sw_links: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut host_rd: Option<(u64, u64, usize)> = None;
    let mut fab_rd: Option<(u64, u64, usize)> = None;
    for l in &t.links {
        let (sa, sb) = (is_sw[l.a as usize], is_sw[l.b as usize]);
        let rd = (l.rate_bps, l.delay_ns);
        let slot = if sa && sb { &mut fab_rd } else { &mut host_rd };
        match *slot {
            None => *slot = Some((rd.0, rd.1, l.line)),
            Some((r, d, first)) if (r, d) != rd => {
                let what = if sa && sb { "switch-to-switch" } else { "host" };
                return Err(err(
                    l.line,
                    format!(
                        "{what} link at {} b/s, {} ns; line {first} has {r} b/s, {d} ns: the \
                         engine's topologies have one {what} link rate and delay",
                        rd.0, rd.1
                    ),
                ));
            }
            Some(_) => {}
        }
        match (sa, sb) {
            (false, false) => {
                return Err(err(
                    l.line,
                    format!("a link between hosts {} and {}", l.a, l.b),
                ));
            }
            (true, true) => {
                sw_links[l.a as usize].push(l.b);
                sw_links[l.b as usize].push(l.a);
            }
            _ => {
                let (h, s) = if sa { (l.b, l.a) } else { (l.a, l.b) };
                if let Some(p) = host_link[h as usize] {
                    return Err(err(
                        l.line,
                        format!(
                            "host {h} has a second link (the first is on line {}): the engine's \
                             hosts have one",
                            p.line
                        ),
                    ));
                }
                host_link[h as usize] = Some(l);
                sw_hosts[s as usize].push(h);
            }
        }
    }
    let hosts: Vec<u32> = (0..t.nodes).filter(|&i| !is_sw[i as usize]).collect();
    if let Some(&h) = hosts.iter().find(|&&h| host_link[h as usize].is_none()) {
        return Err(err(1, format!("host {h} has no link")));
    }
    let Some((host_rate_bps, host_delay_ns, _)) = host_rd else {
        return Err(err(1, "no hosts".to_string()));
    };
    let mut edges: Vec<u32> = t.switches.clone();
    edges.retain(|&s| !sw_hosts[s as usize].is_empty());
    edges.sort_unstable();
    let mut cores: Vec<u32> = t.switches.clone();
    cores.retain(|&s| sw_hosts[s as usize].is_empty());
    cores.sort_unstable();
    let n_fab = sw_links.iter().map(Vec::len).sum::<usize>() / 2;
    let kind = match (edges.len(), cores.len()) {
        (1, 0) if n_fab == 0 => Some(TopoKind::Star),
        (2, 0) if n_fab == 1 => Some(TopoKind::Dumbbell),
        (e, c) if e >= 1 && c >= 1 => {
            let full = n_fab == e * c
                && edges.iter().all(|&l| {
                    let mut v = sw_links[l as usize].clone();
                    v.sort_unstable();
                    v == cores
                });
            let even = edges
                .iter()
                .all(|&l| sw_hosts[l as usize].len() == sw_hosts[edges[0] as usize].len());
            (full && even).then_some(TopoKind::LeafSpine)
        }
        _ => None,
    };
    // A three-tier fat tree: switches without hosts that are linked to an edge switch
    // (aggregation) and the rest (cores).
    let (kind, fat, edges, cores) = match kind {
        Some(k) => (Some(k), None, edges, cores),
        None => match fat_tree(&edges, &cores, &sw_hosts, &sw_links, n_fab) {
            Some((f, tors, above)) => (Some(TopoKind::FatTree), Some(f), tors, above),
            None => (None, None, edges, cores),
        },
    };
    let Some(kind) = kind else {
        return Err(err(
            1,
            format!(
                "{} hosts, {} switches with hosts, {} without, {n_fab} switch-to-switch links: \
                 not a star, a dumbbell, a two-tier leaf-spine (every leaf linked once to \
                 every spine, the same hosts on every leaf) or a three-tier fat tree wired as \
                 mix/fat.txt (pods of ToRs each linked once to every aggregation switch of \
                 its pod, aggregation switch i of every pod linked once to each core of plane \
                 i, the same hosts on every ToR), the topologies the engine routes",
                hosts.len(),
                edges.len(),
                cores.len()
            ),
        ));
    };
    let mut ns3_id = Vec::with_capacity(n);
    let mut hosts_per_edge = Vec::new();
    for &e in &edges {
        let mut hs = sw_hosts[e as usize].clone();
        hs.sort_unstable();
        hosts_per_edge.push(hs.len() as u32);
        ns3_id.extend(hs);
    }
    ns3_id.extend(&edges);
    ns3_id.extend(&cores);
    Ok(Shape {
        kind,
        hosts_per_edge,
        spines: cores.len() as u32,
        fat,
        host_rate_bps,
        host_delay_ns,
        fabric: fab_rd.map(|(r, d, _)| (r, d)),
        ns3_id,
    })
}

/// Recognises a three-tier fat tree wired as the authors' `mix/fat.txt` among `edges` (the
/// switches with hosts, in id order) and `others` (the switches without): its shape, the ns-3
/// ids of the ToRs in the engine's order (pod by pod) and of the switches without hosts
/// (aggregation switches pod by pod and plane by plane within a pod, then the cores plane by
/// plane), or `None`.
///
/// Pods are the edge switches (ToRs) with the same set of neighbours, in order of their
/// lowest ToR; every ToR links once to each aggregation switch of its pod and to nothing
/// else above; a plane is the set of cores one aggregation switch links to, numbered in the
/// first pod's aggregation order; every other pod has exactly one aggregation switch per plane.
fn fat_tree(
    edges: &[u32],
    others: &[u32],
    sw_hosts: &[Vec<u32>],
    sw_links: &[Vec<u32>],
    n_fab: usize,
) -> Option<(scenario::FatTree, Vec<u32>, Vec<u32>)> {
    let sorted = |s: u32| {
        let mut v = sw_links[s as usize].clone();
        v.sort_unstable();
        v
    };
    let hpt = sw_hosts[*edges.first()? as usize].len();
    if edges.iter().any(|&e| sw_hosts[e as usize].len() != hpt) {
        return None;
    }
    // Pods: ToRs grouped by their (aggregation) neighbours.
    let mut pods: Vec<(Vec<u32>, Vec<u32>)> = Vec::new();
    for &e in edges {
        let up = sorted(e);
        match pods.iter_mut().find(|p| p.0 == up) {
            Some(p) => p.1.push(e),
            None => pods.push((up, vec![e])),
        }
    }
    let (app, tpp) = (pods[0].0.len(), pods[0].1.len());
    if pods.len() < 2 || app == 0 || pods.iter().any(|p| p.0.len() != app || p.1.len() != tpp) {
        return None;
    }
    let mut aggs: Vec<u32> = pods.iter().flat_map(|p| p.0.iter().copied()).collect();
    aggs.sort_unstable();
    if aggs.windows(2).any(|w| w[0] == w[1]) || aggs.iter().any(|a| edges.contains(a)) {
        return None;
    }
    // Planes: the cores of each aggregation switch of the first pod.
    let core_set = |a: u32| -> Vec<u32> {
        sorted(a)
            .into_iter()
            .filter(|x| !edges.contains(x))
            .collect()
    };
    let planes: Vec<Vec<u32>> = pods[0].0.iter().map(|&a| core_set(a)).collect();
    let cpa = planes[0].len();
    let mut cores: Vec<u32> = planes.iter().flatten().copied().collect();
    cores.sort_unstable();
    let mut all: Vec<u32> = aggs.iter().chain(&cores).copied().collect();
    all.sort_unstable();
    if cpa == 0
        || planes.iter().any(|p| p.len() != cpa)
        || cores.windows(2).any(|w| w[0] == w[1])
        || all.windows(2).any(|w| w[0] == w[1])
        || all != others
        || n_fab != edges.len() * app + aggs.len() * cpa
    {
        return None;
    }
    let mut order = Vec::with_capacity(others.len());
    for (_, tors) in &pods {
        // This pod's aggregation switches, one per plane, in plane order; each linked to its
        // pod's ToRs and its plane's cores only.
        let pod_aggs = sorted(tors[0]);
        for plane in &planes {
            let a = pod_aggs.iter().copied().find(|&a| core_set(a) == *plane)?;
            let mut down: Vec<u32> = sorted(a)
                .into_iter()
                .filter(|x| edges.contains(x))
                .collect();
            down.sort_unstable();
            let mut want = tors.clone();
            want.sort_unstable();
            if down != want || sorted(a).len() != tpp + cpa {
                return None;
            }
            order.push(a);
        }
    }
    order.extend(planes.iter().flatten());
    let f = scenario::FatTree {
        pods: pods.len() as u32,
        tors_per_pod: tpp as u32,
        aggs_per_pod: app as u32,
        cores_per_agg: cpa as u32,
        hosts_per_tor: hpt as u32,
    };
    let tors = pods.iter().flat_map(|p| p.1.iter().copied()).collect();
    Some((f, tors, order))
}

/// What the ns-3 inputs replaced in the scenario, and the mapping the outputs need.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Ns3Inputs {
    /// `--ns3-topology`: the file (it replaced `[topology]`'s shape keys).
    pub topology: Option<PathBuf>,
    /// The shape it was recognised as.
    pub shape: Option<String>,
    /// `--ns3-flows`: the file (it replaced `[[flows]]`, one group per flow, in its order).
    pub flows: Option<PathBuf>,
    /// ns-3 id of our node `i` (empty: the identity).
    #[serde(skip)]
    pub ns3_id: Vec<u32>,
    /// The topology's links in the file's order (empty: made from the run).
    #[serde(skip)]
    pub links: Vec<Link>,
    /// Per flow group: the flow file's priority group and destination port.
    #[serde(skip)]
    pub pg_dport: Vec<(u32, u32)>,
}

impl Ns3Inputs {
    /// Whether any ns-3 input is in use.
    pub fn any(&self) -> bool {
        self.topology.is_some() || self.flows.is_some()
    }
}

/// Reads `--ns3-topology` and `--ns3-flows` into the loaded scenario: the topology file
/// replaces `[topology]`'s shape keys (kind, host counts, rates, delays; buffer, ECN, PFC and
/// INT keys stay the scenario's), the flow file replaces `[[flows]]` with one sized `long` group
/// per flow, and the result is checked again as a scenario is.
pub fn apply(
    l: &mut Loaded,
    topo: Option<&Path>,
    flows: Option<&Path>,
) -> Result<Ns3Inputs, String> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|e| format!("{}: cannot read: {e}", p.display()))
    };
    let mut inp = Ns3Inputs::default();
    if let Some(p) = topo {
        let t = parse_topology(p, &read(p)?)?;
        let s = classify(p, &t)?;
        let tp = &mut l.sc.topology;
        tp.kind = s.kind;
        let (mut hosts, mut left, mut right, mut leaves, mut spines, mut hpl) =
            (None, None, None, None, None, None);
        match s.kind {
            TopoKind::Star => hosts = Some(s.hosts_per_edge[0]),
            TopoKind::Dumbbell => {
                left = Some(s.hosts_per_edge[0]);
                right = Some(s.hosts_per_edge[1]);
            }
            TopoKind::LeafSpine => {
                leaves = Some(s.hosts_per_edge.len() as u32);
                spines = Some(s.spines);
                hpl = Some(s.hosts_per_edge[0]);
            }
            TopoKind::FatTree => {}
        }
        let f = s.fat;
        (
            tp.pods,
            tp.tors_per_pod,
            tp.aggs_per_pod,
            tp.cores_per_agg,
            tp.hosts_per_tor,
        ) = (
            f.map(|f| f.pods),
            f.map(|f| f.tors_per_pod),
            f.map(|f| f.aggs_per_pod),
            f.map(|f| f.cores_per_agg),
            f.map(|f| f.hosts_per_tor),
        );
        (
            tp.hosts,
            tp.left_hosts,
            tp.right_hosts,
            tp.leaves,
            tp.spines,
            tp.hosts_per_leaf,
        ) = (hosts, left, right, leaves, spines, hpl);
        tp.host_rate_bps = s.host_rate_bps;
        tp.host_delay_ns = s.host_delay_ns;
        tp.fabric_rate_bps = s.fabric.map(|f| f.0);
        tp.fabric_delay_ns = s.fabric.map(|f| f.1);
        inp.shape = Some(format!(
            "{} of {} hosts",
            s.kind_name(),
            s.hosts_per_edge.iter().sum::<u32>()
        ));
        inp.topology = Some(p.to_path_buf());
        inp.ns3_id = s.ns3_id.clone();
        l.ns3_id = s.ns3_id;
        inp.links = t.links;
    }
    if let Some(p) = flows {
        // Our host index of each ns-3 host id.
        let ours: HashMap<u32, u32> = if inp.ns3_id.is_empty() {
            HashMap::new()
        } else {
            let n_hosts = l.sc.topology_hosts();
            inp.ns3_id[..n_hosts as usize]
                .iter()
                .enumerate()
                .map(|(i, &id)| (id, i as u32))
                .collect()
        };
        let n_hosts = l.sc.topology_hosts();
        let is_host = |id: u32| {
            if inp.ns3_id.is_empty() {
                id < n_hosts
            } else {
                ours.contains_key(&id)
            }
        };
        let fl = parse_flows(p, &read(p)?, &is_host)?;
        let to_ours = |id: u32| ours.get(&id).copied().unwrap_or(id);
        if let Some(f) = fl.iter().find(|f| f.start_ns >= l.sc.duration_ns) {
            return Err(format!(
                "{}: line {}: the flow starts at {} ns, not before the scenario's duration_ns \
                 {} ({})",
                p.display(),
                f.line,
                f.start_ns,
                l.sc.duration_ns,
                l.file.display()
            ));
        }
        l.sc.flows = fl
            .iter()
            .map(|f| FlowGroup {
                kind: GroupKind::Long,
                src: vec![to_ours(f.src)],
                dst: Some(to_ours(f.dst)),
                start_ns: f.start_ns,
                stagger_ns: 0,
                size_bytes: Some(f.size),
                stop_ns: None,
                load: None,
                fan_in: None,
                cdf: None,
            })
            .collect();
        inp.pg_dport = fl.iter().map(|f| (f.pg, f.dport)).collect();
        // Checked to be at most 65535 by the parser.
        l.ns3_dport = fl.iter().map(|f| f.dport as u16).collect();
        inp.flows = Some(p.to_path_buf());
    }
    if inp.any() {
        scenario::recheck(l).map_err(|e| e.to_string())?;
    }
    Ok(inp)
}

impl Shape {
    fn kind_name(&self) -> &'static str {
        match self.kind {
            TopoKind::Star => "star",
            TopoKind::Dumbbell => "dumbbell",
            TopoKind::LeafSpine => "leaf_spine",
            TopoKind::FatTree => "fat_tree",
        }
    }
}

/// Refuses, before the run, a scenario whose flows `--ns3-out`'s files could not hold: ns-3
/// reads a flow's size into a 32-bit count (`maxPacketCount` in third.cc's `FlowInput`), so a
/// sized group or a CDF with a size above 2^32 − 1 bytes is refused, naming its key (never
/// written wrapped).
pub fn check_exportable(l: &Loaded) -> Result<(), scenario::ScenarioError> {
    let max = u64::from(u32::MAX);
    for (i, g) in l.sc.flows.iter().enumerate() {
        if let Some(s) = g.size_bytes
            && s > max
        {
            return Err(l.err(
                &format!("flows[{i}].size_bytes"),
                format!("{s} B: --ns3-out's flow.txt holds sizes up to {max} B (ns-3 reads a 32-bit count)"),
            ));
        }
        let top = l
            .cdfs
            .get(i)
            .and_then(Option::as_ref)
            .and_then(|c| c.points.last())
            .map_or(0.0, |p| p.0);
        if top > max as f64 {
            return Err(l.err(
                &format!("flows[{i}].cdf"),
                format!("its largest size, {top} B, is above what --ns3-out's flow.txt holds ({max} B: ns-3 reads a 32-bit count)"),
            ));
        }
    }
    Ok(())
}

/// What `--ns3-out` wrote, for the report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Ns3Report {
    /// The inputs, when the run read ns-3 files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Ns3Inputs>,
    /// Lines of `fct.txt` (finished flows).
    pub fct_lines: usize,
    /// Sized flows that did not finish: ns-3 writes no line for them, nor do we.
    pub unfinished_not_written: usize,
    /// Flows stopped by their group's `stop_ns` (ns-3 has no such stop): not written.
    pub stopped_not_written: usize,
    /// Long flows without a size: ns-3's flows always have one, so neither `flow.txt` nor
    /// `fct.txt` has them.
    pub unsized_not_written: usize,
    /// Lines of `pfc.txt`.
    pub pfc_lines: usize,
    /// `time:` blocks of `qlen.txt`.
    pub qlen_dumps: usize,
}

/// `b/s` as ns-3 writes a rate.
fn rate_text(bps: u64) -> String {
    for (f, u) in [
        (1_000_000_000, "Gbps"),
        (1_000_000, "Mbps"),
        (1_000, "Kbps"),
    ] {
        if bps.is_multiple_of(f) {
            return format!("{}{u}", bps / f);
        }
    }
    format!("{bps}bps")
}

/// The five ns-3 files of a finished run: `(name, contents)`, and the counts for the report.
pub fn files(sim: &Sim, inp: &Ns3Inputs) -> (Vec<(&'static str, String)>, Ns3Report) {
    let net = sim.ns3_net();
    let id = |node: u32| inp.ns3_id.get(node as usize).copied().unwrap_or(node);
    let links: Vec<Link> = if inp.links.is_empty() {
        net.links
            .iter()
            .map(|&(a, b, rate_bps, delay_ns)| Link {
                a: id(a),
                b: id(b),
                rate_bps,
                delay_ns,
                line: 0,
            })
            .collect()
    } else {
        inp.links.clone()
    };
    // ns-3 numbers a node's interfaces 1, 2, … in the order of the links that name it (0 is
    // the loopback).
    let mut next_if: HashMap<u32, u32> = HashMap::new();
    let mut if_index: HashMap<(u32, u32), u32> = HashMap::new();
    for l in &links {
        for (x, y) in [(l.a, l.b), (l.b, l.a)] {
            let k = next_if.entry(x).or_insert(0);
            *k += 1;
            if_index.insert((x, y), *k);
        }
    }
    let mut rep = Ns3Report::default();
    let mut out = Vec::new();
    // topology.txt
    let mut s = String::new();
    let mut sw: Vec<u32> = (net.n_hosts..net.n_hosts + net.n_switches)
        .map(id)
        .collect();
    sw.sort_unstable();
    let _ = writeln!(
        s,
        "{} {} {}",
        net.n_hosts + net.n_switches,
        sw.len(),
        links.len()
    );
    let ids: Vec<String> = sw.iter().map(u32::to_string).collect();
    let _ = writeln!(s, "{}", ids.join(" "));
    for l in &links {
        let _ = writeln!(
            s,
            "{} {} {} {}ns 0",
            l.a,
            l.b,
            rate_text(l.rate_bps),
            l.delay_ns
        );
    }
    out.push(("topology.txt", s));
    // flow.txt: the flows in order of start (the engine gave each its ports as ns-3 would
    // when it started: `Flow::sport`).
    let flows = &sim.flows;
    let mut order: Vec<usize> = (0..flows.len())
        .filter(|&i| !flows[i].long || flows[i].size_bytes != u64::MAX)
        .collect();
    rep.unsized_not_written = flows.len() - order.len();
    order.sort_by_key(|&i| (flows[i].start_ps, i));
    let pg_dport = |i: usize| {
        let g = flows[i].group as usize;
        inp.pg_dport.get(g).copied().unwrap_or_else(|| {
            let incast = matches!(
                sim.group_kind(g),
                Some(GroupKind::Incast | GroupKind::PoissonIncast)
            );
            (PG_DATA, if incast { DPORT_INCAST } else { DPORT_NORMAL })
        })
    };
    let mut s = format!("{}\n", order.len());
    for &i in &order {
        let f = &flows[i];
        let ns = f.start_ps / 1000;
        let (pg, dport) = pg_dport(i);
        // Half a ns more than the start: ns-3 truncates the `double` it reads to the ns
        // ([`super::engine::ns3_seconds_ns`]), and `0.070000962` is just below 70000962 ns.
        let _ = writeln!(
            s,
            "{} {} {pg} {dport} {} {}.{:09}5",
            id(f.src),
            id(f.dst),
            f.size_bytes,
            ns / 1_000_000_000,
            ns % 1_000_000_000
        );
    }
    out.push(("flow.txt", s));
    // fct.txt: finished flows in order of completion.
    let mut done: Vec<usize> = Vec::new();
    for &i in &order {
        let f = &flows[i];
        match (f.done_ps, f.stopped_ps) {
            (_, Some(_)) => rep.stopped_not_written += 1,
            (Some(_), None) => done.push(i),
            (None, None) => rep.unfinished_not_written += 1,
        }
    }
    done.sort_by_key(|&i| (flows[i].done_ps, i));
    let mut s = String::new();
    for &i in &done {
        let f = &flows[i];
        let end = f.done_ps.unwrap_or(f.start_ps);
        let (_, dport) = pg_dport(i);
        let _ = writeln!(
            s,
            "{:08x} {:08x} {} {dport} {} {} {} {}",
            node_ip(id(f.src)),
            node_ip(id(f.dst)),
            f.sport,
            f.size_bytes,
            f.start_ps / 1000,
            (end - f.start_ps) / 1000,
            sim.ns3_standalone_fct_ns(f.src, f.dst, f.size_bytes)
        );
    }
    rep.fct_lines = done.len();
    out.push(("fct.txt", s));
    // pfc.txt
    let mut s = String::new();
    for &(t, port, kind) in &net.pfc {
        let (node, peer) = net.port_ends[port as usize];
        let is_sw = u32::from(node >= net.n_hosts);
        let ifx = if_index.get(&(id(node), id(peer))).copied().unwrap_or(0);
        let _ = writeln!(s, "{t} {} {is_sw} {ifx} {kind}", id(node));
    }
    rep.pfc_lines = net.pfc.len();
    out.push(("pfc.txt", s));
    // qlen.txt: per dump, every switch port's histogram of the queue in 1 KB bins, switches in
    // ns-3 id order and ports in interface order.
    let mut s = String::new();
    for (t, hist) in &net.qlen_dumps {
        let _ = writeln!(s, "time: {t}");
        let mut rows: Vec<(u32, u32, &Vec<u32>)> = hist
            .iter()
            .map(|(port, h)| {
                let (node, peer) = net.port_ends[*port as usize];
                let ifx = if_index.get(&(id(node), id(peer))).copied().unwrap_or(0);
                (id(node), ifx, h)
            })
            .collect();
        rows.sort_unstable_by_key(|r| (r.0, r.1));
        for (node, ifx, h) in rows {
            let _ = write!(s, "{node} {ifx}");
            for c in h {
                let _ = write!(s, " {c}");
            }
            s.push('\n');
        }
    }
    rep.qlen_dumps = net.qlen_dumps.len();
    out.push(("qlen.txt", s));
    rep.inputs = inp.any().then(|| inp.clone());
    (out, rep)
}

/// The report's lines about the ns-3 inputs and files.
pub fn text(r: &Ns3Report) -> String {
    let mut s = String::new();
    if let Some(i) = &r.inputs {
        if let (Some(t), Some(shape)) = (&i.topology, &i.shape) {
            let _ = writeln!(
                s,
                "  ns-3 topology {}: a {shape} (replaces [topology]'s shape keys)",
                t.display()
            );
        }
        if let Some(f) = &i.flows {
            let _ = writeln!(
                s,
                "  ns-3 flows {}: {} flows (replace [[flows]])",
                f.display(),
                i.pg_dport.len()
            );
        }
    }
    if r.fct_lines + r.unfinished_not_written + r.stopped_not_written + r.unsized_not_written > 0
        || r.pfc_lines + r.qlen_dumps > 0
    {
        let _ = writeln!(
            s,
            "  ns-3 files: fct.txt {} finished flows (not in it, as ns-3 writes no line for them: \
             {} unfinished, {} stopped, {} without a size); pfc.txt {} frames; qlen.txt {} dumps",
            r.fct_lines,
            r.unfinished_not_written,
            r.stopped_not_written,
            r.unsized_not_written,
            r.pfc_lines,
            r.qlen_dumps
        );
    }
    s
}
