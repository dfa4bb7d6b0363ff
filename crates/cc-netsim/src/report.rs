//! What a run reports: the [`Report`] (its buckets, loads, `--record` and PCC parts), built from
//! the network as the run left it.

use crate::scenario::{self, ControllerKind, GroupKind};
use crate::{ctrl, ecn, engine, ns3, paths, stats, web};
use serde::Serialize;

/// One flow-size bucket: the slowdown percentiles of its finished flows, and the flows that did
/// not finish.
#[derive(Debug, Clone, Serialize)]
pub struct Bucket {
    /// Its label (`<= 3 kB`).
    pub bucket: String,
    /// Finished flows in it.
    pub flows: usize,
    /// p50 FCT slowdown of the finished flows (`None`: no flow finished).
    pub p50: Option<f64>,
    /// p95.
    pub p95: Option<f64>,
    /// p99.
    pub p99: Option<f64>,
    /// Flows of this size that started and had not finished at the end of the run (stopped
    /// flows not included).
    pub unfinished: usize,
    /// Their bytes not yet acknowledged at the end.
    pub unfinished_bytes_left: u64,
    /// Flows of this size stopped by their group's `stop_ns` before they had sent every byte.
    pub stopped: usize,
}

/// The load a Poisson (or poisson_incast) group asked for and the load its arrivals made.
#[derive(Debug, Clone, Serialize)]
pub struct GroupLoad {
    /// The group (`flows[i]`).
    pub group: usize,
    /// `load` in the scenario: the mean load of every host link (poisson_incast: the incasts'
    /// share of the network's capacity, the same thing summed over the hosts).
    pub nominal: f64,
    /// The bytes of the flows that arrived, over what every host link could carry from the
    /// group's `start_ns` to its `stop_ns` (or the end).
    pub realised: f64,
    /// Flows that arrived.
    pub flows: usize,
    /// Their bytes.
    pub bytes: u64,
    /// poisson_incast: the incast events that happened (each made `fan_in` flows); `None` for
    /// other kinds.
    pub incasts: Option<usize>,
    /// poisson_incast: senders per event.
    pub fan_in: Option<u32>,
}

/// A run's results.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Scenario name.
    pub scenario: String,
    /// Algorithm.
    pub algorithm: String,
    /// fixed or reference.
    pub controller: String,
    /// The NICs' pacer: fixed (`cc-pacer`) or reference (the f64 reference pacer).
    pub pacer: String,
    /// Flows a NIC's pacer holds at once (`pacer_flows`).
    pub pacer_flows: u32,
    /// Seed used.
    pub seed: u64,
    /// Simulated time, ns.
    pub sim_ns: u64,
    /// Wall time of the event loop, s.
    pub wall_s: f64,
    /// Packet events per second of wall time.
    pub packet_events_per_s: f64,
    /// Every algorithm parameter in force and where its value came from.
    pub params: Vec<ctrl::ParamInForce>,
    /// The ECN marking rules in force per switch egress rate, with their origins (empty: no
    /// marking).
    pub ecn: Vec<ecn::EcnRule>,
    /// `topology.switch_model`: `default` or `ns3`.
    pub switch_model: String,
    /// `output.ideal_fct`: `bound` (the engine's lower bound) or `ns3` (ns-3's standalone
    /// FCT, slowdowns below 1 taken as 1).
    pub ideal_fct: String,
    /// Flows started (sized ones).
    pub flows_sized: usize,
    /// Sized flows finished (their last byte acknowledged, never stopped).
    pub flows_finished: usize,
    /// Sized flows stopped by their group's `stop_ns` before they had sent every byte: not
    /// finished, not in the FCT statistics.
    pub flows_stopped: usize,
    /// Sized flows neither finished nor stopped at the end of the run.
    pub flows_unfinished: usize,
    /// Their bytes not yet acknowledged.
    pub unfinished_bytes_left: u64,
    /// Per Poisson group: nominal and realised load.
    pub load: Vec<GroupLoad>,
    /// Long-lived flows.
    pub flows_long: usize,
    /// FCT slowdown per size bucket.
    pub slowdown: Vec<Bucket>,
    /// Switch egress queue p50/p95/p99/max, bytes (80-byte resolution, rounded down); `None`
    /// when no sample was taken (an empty statistics window).
    pub queue_bytes: Option<[u64; 4]>,
    /// The queue found by arriving data packets p50/p95/p99/max, bytes (80-byte resolution);
    /// `None` when no data packet arrived at a switch in the statistics window.
    pub queue_seen_bytes: Option<[u64; 4]>,
    /// The longest switch queue over the time series, bytes, and when it peaked (ns).
    pub queue_peak: (u64, u64),
    /// First time after the peak when the longest queue is at most two packets, ns (`None`
    /// if it never drains).
    pub queue_drained_ns: Option<u64>,
    /// RTT (data sent → ACK back) p50/p95/p99/max, ns (10-ns resolution, CATS 10 µs; rounded
    /// down); `None` when no ACK came back in the statistics window.
    pub rtt_ns: Option<[u64; 4]>,
    /// Goodput of every flow together over the run, b/s.
    pub goodput_bps: f64,
    /// Jain's index of the long flows' goodput over the fairness window (`None`: no long flow
    /// ran through it).
    pub jain: Option<f64>,
    /// Long flows in Jain's index.
    pub jain_flows: usize,
    /// Their mean goodput over the window (bytes delivered from `jain_from_ns` to
    /// `jain_to_ns`), b/s.
    pub jain_mean_bps: Option<f64>,
    /// Counters (and the invariants' inputs).
    pub counters: engine::Counters,
    /// Algorithm cats: the page's per-priority completion times (and the FIFO baseline's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub web: Option<web::WebReport>,
    /// Algorithm pcc: the probes and the adapter's counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcc: Option<PccReport>,
    /// Invariant violations (empty when all hold).
    pub violations: Vec<String>,
    /// `--ns3-out` and the ns-3 inputs (absent when neither was used).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns3: Option<ns3::Ns3Report>,
    /// The topology's path classes and base RTTs, and the `T` in force with its origin.
    pub paths: Option<paths::PathsReport>,
    /// `--record`: the flows recorded, with their rows, and why these (`None` without
    /// `--record`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<RecordReport>,
    /// Files written.
    pub files: Vec<String>,
}

/// What `--record` recorded.
#[derive(Debug, Clone, Serialize)]
pub struct RecordReport {
    /// Why these flows: `output.record_flows`, or the flow with the most events.
    pub chosen: String,
    /// `(flow, rows)` of each recorded flow.
    pub flows: Vec<(u32, u64)>,
    /// Recorded flows with fewer than 2 rows: a replay of them compares nothing.
    pub too_few: Vec<u32>,
}

/// Algorithm pcc: what the probes did, and the adapter's counters.
#[derive(Debug, Clone, Serialize)]
pub struct PccReport {
    /// RTT probes the NICs sent (the adapter's or the reference's requests).
    pub probes_sent: u64,
    /// Probes dropped at a full buffer.
    pub probes_dropped: u64,
    /// Probe responses that reached their sender.
    pub probe_responses: u64,
    /// The adapter's counters by name, summed over every NIC (fixed controller; the reference
    /// has none).
    pub counters: std::collections::BTreeMap<String, u32>,
}

/// The four quantiles a report gives of a histogram, `None` when it is empty.
fn hist4(h: &stats::Hist) -> Option<[u64; 4]> {
    (h.count() > 0).then(|| [h.quantile(0.5), h.quantile(0.95), h.quantile(0.99), h.max()])
}

/// The report of a finished run (without its parameters, paths, `--record` part, web part and
/// files: [`crate::run_loaded`] adds them).
pub(crate) fn report(
    l: &scenario::Loaded,
    sim: &engine::Sim,
    controller: ControllerKind,
    seed: u64,
    wall: f64,
) -> Report {
    let st = &sim.stats;
    let sized = || sim.flows.iter().filter(|f| !f.long);
    let unfinished = |f: &&engine::Flow| f.done_ps.is_none() && f.stopped_ps.is_none();
    let bucket_of = |size: u64| {
        st.buckets
            .iter()
            .position(|&u| size <= u)
            .unwrap_or(st.buckets.len())
    };
    let mut slowdown: Vec<Bucket> = st
        .slowdown
        .iter()
        .enumerate()
        .map(|(i, v)| Bucket {
            bucket: st.bucket_label(i),
            flows: v.len(),
            p50: stats::quantile(v, 0.5),
            p95: stats::quantile(v, 0.95),
            p99: stats::quantile(v, 0.99),
            unfinished: 0,
            unfinished_bytes_left: 0,
            stopped: 0,
        })
        .collect();
    for f in sized() {
        let b = &mut slowdown[bucket_of(f.size_bytes)];
        if f.stopped_ps.is_some() {
            b.stopped += 1;
        } else if f.done_ps.is_none() {
            b.unfinished += 1;
            b.unfinished_bytes_left += f.size_bytes - f.acked();
        }
    }
    let end_ns = sim.end_ns();
    let from_ns = l.sc.output.jain_from_ns.unwrap_or(end_ns / 2);
    let to_ns = l.sc.output.jain_to_ns.unwrap_or(end_ns).min(end_ns);
    let span_s = (to_ns.saturating_sub(from_ns)) as f64 * 1e-9;
    // Goodput of the long flows over [from, to]: bytes delivered between the two marks. A flow
    // stopped before the window's end is left out.
    let to_ps = to_ns * 1_000;
    let shares: Vec<f64> = sim
        .flows
        .iter()
        .filter(|f| f.long && f.stopped_ps.is_none_or(|t| t >= to_ps))
        .filter_map(|f| match (f.delivered_mark, f.delivered_end) {
            (Some(a), Some(b)) if span_s > 0.0 => Some((b - a) as f64 * 8.0 / span_s),
            _ => None,
        })
        .collect();
    let total: u64 = sim.flows.iter().map(|f| f.delivered).sum();
    let load =
        l.sc.flows
            .iter()
            .enumerate()
            .filter_map(|(gi, g)| {
                let nominal = g.load?;
                let stop = g.stop_ns.unwrap_or(end_ns).min(end_ns);
                let window_s = stop.saturating_sub(g.start_ns) as f64 * 1e-9;
                let mine = || sim.flows.iter().filter(|f| f.group as usize == gi);
                let bytes: u64 = mine().map(|f| f.size_bytes).sum();
                let capacity = f64::from(l.hosts) * l.sc.topology.host_rate_bps as f64 * window_s;
                let flows = mine().count();
                let fan_in = g.fan_in.filter(|_| g.kind == GroupKind::PoissonIncast);
                Some(GroupLoad {
                    group: gi,
                    nominal,
                    realised: bytes as f64 * 8.0 / capacity.max(1e-9),
                    flows,
                    bytes,
                    incasts: fan_in.map(|k| flows / k.max(1) as usize),
                    fan_in,
                })
            })
            .collect();
    let peak = st
        .series
        .iter()
        .map(|p| (p.queue_max_bytes, p.t_ns))
        .fold((0, 0), |a, b| if b.0 > a.0 { b } else { a });
    let two_pkts = 2 * u64::from(l.sc.mtu_bytes + engine::HDR_BYTES + 64);
    let queue_drained_ns = st
        .series
        .iter()
        .find(|p| p.t_ns > peak.1 && p.queue_max_bytes <= two_pkts)
        .map(|p| p.t_ns);
    let c = &sim.c;
    let mut violations = Vec::new();
    if c.sent != c.delivered + c.dropped + c.in_flight {
        violations.push("packets not conserved".to_string());
    }
    if c.probe_responses + c.probes_dropped > c.probes_sent {
        violations.push("more probes answered or dropped than sent".into());
    }
    if let Some(v) = sim.setup().algo().nothing_ran(c) {
        violations.push(v);
    }
    if c.in_flight != sim.data_packets_alive() {
        violations.push(format!(
            "in flight {} but {} data packets alive",
            c.in_flight,
            sim.data_packets_alive()
        ));
    }
    if c.link_overlaps > 0 {
        violations.push(format!(
            "{} ports overlapped transmissions",
            c.link_overlaps
        ));
    }
    if c.pacer_refused > 0 {
        violations.push(format!(
            "a NIC's pacer refused a flow it had room for {} times (its segment or rate): those flows never sent",
            c.pacer_refused
        ));
    }
    if c.pacer_early > 0 {
        violations.push(format!(
            "{} segments left their NIC's pacer before their pacing gap",
            c.pacer_early
        ));
    }
    if c.max_buffer_used_bytes > c.buffer_bytes {
        violations.push("a buffer above its size".into());
    }
    if st.below_ideal > 0 {
        violations.push(format!(
            "{} flows finished below their ideal FCT",
            st.below_ideal
        ));
    }
    // A run that measured nothing is not a healthy run (docs/robustness.md §6b, "meaningless
    // runs").
    let finished = sim.flows.iter().filter(|f| f.done_ps.is_some()).count();
    if finished == 0 && c.acks == 0 {
        violations.push(format!(
            "nothing was measured: no flow finished and no receiver sent an ACK ({} data packets delivered; ack_every {} packets)",
            c.delivered, l.sc.ack_every
        ));
    }
    Report {
        scenario: l.sc.name.clone(),
        algorithm: l.sc.algorithm.name().to_string(),
        controller: controller.name().into(),
        pacer: l.sc.pacer.unwrap_or(controller).name().into(),
        pacer_flows: l.sc.pacer_flows,
        seed,
        sim_ns: end_ns,
        wall_s: wall,
        packet_events_per_s: c.packet_events as f64 / wall.max(1e-9),
        params: Vec::new(),
        ecn: sim.ecn_rules().to_vec(),
        switch_model: match l.sc.topology.switch_model {
            scenario::SwitchModel::Default => "default",
            scenario::SwitchModel::Ns3 => "ns3",
        }
        .into(),
        ideal_fct: match l.sc.output.ideal_fct {
            scenario::IdealFct::Bound => "bound",
            scenario::IdealFct::Ns3 => "ns3",
        }
        .into(),
        flows_sized: sized().count(),
        flows_finished: sized()
            .filter(|f| f.done_ps.is_some() && f.stopped_ps.is_none())
            .count(),
        flows_stopped: sized().filter(|f| f.stopped_ps.is_some()).count(),
        flows_unfinished: sized().filter(unfinished).count(),
        unfinished_bytes_left: sized()
            .filter(unfinished)
            .map(|f| f.size_bytes - f.acked())
            .sum(),
        load,
        flows_long: sim.flows.iter().filter(|f| f.long).count(),
        slowdown,
        queue_bytes: hist4(&st.queue),
        queue_seen_bytes: hist4(&st.queue_seen),
        queue_peak: peak,
        queue_drained_ns,
        rtt_ns: hist4(&st.rtt),
        goodput_bps: total as f64 * 8.0 / (end_ns.max(1) as f64 * 1e-9),
        jain: stats::jain(&shares),
        jain_flows: shares.len(),
        jain_mean_bps: (!shares.is_empty())
            .then(|| shares.iter().sum::<f64>() / shares.len() as f64),
        counters: c.clone(),
        web: None,
        pcc: sim.setup().algo().counters().map(|pc| PccReport {
            probes_sent: c.probes_sent,
            probes_dropped: c.probes_dropped,
            probe_responses: c.probe_responses,
            counters: cc_pcc::COUNTER_NAMES
                .iter()
                .zip(pc.0)
                .filter(|(_, v)| *v > 0)
                .map(|(n, v)| ((*n).to_string(), v))
                .collect(),
        }),
        violations,
        ns3: None,
        paths: None,
        recorded: None,
        files: Vec::new(),
    }
}
