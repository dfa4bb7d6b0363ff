//! `sim-host sim`: a packet-level, deterministic discrete-event datacenter simulator with the
//! congestion controllers in the loop — each flow runs the fixed-point crate (through its
//! public API, exactly as firmware would) or the f64 reference, chosen per run.
//!
//! * [`scenario`]: the TOML scenario files (unknown keys and impossible values are errors
//!   naming the file and the key).
//! * [`engine`]: the event loop, and by concern the topology, switches (queues, buffer, ECN,
//!   PFC, INT at dequeue), NICs (scheduling, pacing, probes), the transport (ACK every k,
//!   NACK, go-back-N, RTO) and the workload.
//! * [`cc`]: every congestion controller behind one trait, a fixed-point and an f64 side per
//!   algorithm, one folder each, listed in one registry.
//! * [`ctrl`]: the run's setup from the registry, and the parameters in force.
//! * [`stats`], [`record`]: what is measured, and `--record` traces in the replay formats.

pub mod cc;
pub mod ctrl;
pub mod ecn;
pub mod engine;
pub mod ns3;
pub mod paths;
pub mod record;
pub mod scenario;
pub mod stats;
pub mod web;

use cc_trace::Param;
use scenario::{ControllerKind, GroupKind, ScenarioError};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What a run is asked for.
#[derive(Debug, Clone, Default)]
pub struct SimOpts {
    /// `--plot DIR`.
    pub plot: Option<PathBuf>,
    /// `--out DIR`.
    pub out: Option<PathBuf>,
    /// `--record DIR`.
    pub record: Option<PathBuf>,
    /// `--controller` (wins over the scenario's).
    pub controller: Option<ControllerKind>,
    /// `--seed` (wins over the scenario's).
    pub seed: Option<u64>,
    /// `--set KEY=VALUE` (wins over `[params]`).
    pub set: Vec<Param>,
    /// `--ns3-out DIR`: the HPCC ns-3 simulator's files.
    pub ns3_out: Option<PathBuf>,
    /// `--ns3-topology FILE`: an ns-3 topology file replaces `[topology]`'s shape.
    pub ns3_topology: Option<PathBuf>,
    /// `--ns3-flows FILE`: an ns-3 flow file replaces `[[flows]]`.
    pub ns3_flows: Option<PathBuf>,
}

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

/// A failed run: bad scenario (exit 2) or an output that could not be written (exit 2).
#[derive(Debug)]
pub enum SimError {
    /// Scenario or parameter error.
    Scenario(ScenarioError),
    /// Anything else, as text.
    Other(String),
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Scenario(e) => write!(f, "{e}"),
            SimError::Other(e) => write!(f, "{e}"),
        }
    }
}

/// A finished run: its report, the network as the run left it (flows, statistics), and CATS's
/// FIFO baseline run of the same network when one ran. The plots (`--plot`) are drawn from it
/// by the caller.
pub struct Run {
    /// The report; [`Report::files`] lists the files written so far.
    pub report: Report,
    /// The network at the end of the run.
    pub sim: engine::Sim,
    /// CATS: the first flow of the FIFO baseline run, for the comparison.
    pub baseline: Option<Box<web::WebFlow>>,
}

/// Loads `file`, runs it and writes the outputs asked for (all but the plots: see [`Run`]).
pub fn run_file(file: &Path, o: &SimOpts) -> Result<Run, SimError> {
    let l = scenario::load(file).map_err(SimError::Scenario)?;
    run_loaded(&l, o, &mut |_, _| {})
}

/// Runs a loaded scenario and writes the outputs asked for (all but the plots: see [`Run`]).
///
/// `progress(t_ns, end_ns)` is called as simulated time advances (the caller may draw a bar).
pub fn run_loaded(
    l: &scenario::Loaded,
    o: &SimOpts,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Run, SimError> {
    let with_ns3;
    let (l, ns3_in) = if o.ns3_topology.is_some() || o.ns3_flows.is_some() {
        let mut m = l.clone();
        let inp = ns3::apply(&mut m, o.ns3_topology.as_deref(), o.ns3_flows.as_deref())
            .map_err(SimError::Other)?;
        with_ns3 = m;
        (&with_ns3, inp)
    } else {
        (l, ns3::Ns3Inputs::default())
    };
    ctrl::check_applied(l, &o.set, &[o.controller.unwrap_or(l.sc.controller)])
        .map_err(SimError::Other)?;
    let setup = ctrl::Setup::build(l, &o.set).map_err(SimError::Other)?;
    let params = ctrl::in_force(l, &o.set, &setup);
    let controller = o.controller.unwrap_or(l.sc.controller);
    if controller == ControllerKind::Ns3 {
        let name = setup.entry().name;
        if !setup.algo().has_ns3_side() {
            return Err(SimError::Other(format!(
                "controller ns3: algorithm {name} has no side computed as the HPCC authors' ns-3 simulator computes it (hpcc has)"
            )));
        }
        if o.record.is_some() {
            return Err(SimError::Other(
                "--record with controller ns3: a replay compares the fixed-point crate with the reference; record a fixed or reference run".into(),
            ));
        }
    }
    if let Some(why) = setup.algo().reference_only() {
        let name = setup.entry().name;
        if controller == ControllerKind::Fixed {
            let from = if o.controller.is_some() {
                "--controller fixed".to_string()
            } else {
                format!(
                    "{}: key `controller` (fixed, the default)",
                    l.file.display()
                )
            };
            return Err(SimError::Other(format!(
                "{from}: algorithm {name} has no fixed-point implementation ({why}); \
                 run it with --controller reference"
            )));
        }
        if o.record.is_some() {
            return Err(SimError::Other(format!(
                "--record: algorithm {name} has no replay trace kind ({why}): replay compares \
                 a fixed-point side with the reference"
            )));
        }
    }
    let seed = o.seed.unwrap_or(l.sc.seed);
    let sc = &l.sc;
    if o.ns3_out.is_some() {
        ns3::check_exportable(l).map_err(SimError::Scenario)?;
    }
    // Every output directory is made and checked before the run.
    for (d, what) in [
        (&o.out, "--out"),
        (&o.plot, "--plot"),
        (&o.record, "--record"),
        (&o.ns3_out, "--ns3-out"),
    ] {
        if let Some(d) = d {
            prepare_dir(d, what)?;
        }
    }
    // The flows to record: `output.record_flows`, or else the flow whose controller records
    // the most events (a counting pass of the same, deterministic run), so that the trace has
    // something to compare.
    let (record_flows, chosen) = match (&o.record, &sc.output.record_flows) {
        (None, _) => (Vec::new(), String::new()),
        (Some(_), Some(v)) if v.is_empty() => {
            return Err(SimError::Scenario(l.err(
                "output.record_flows",
                "[] with --record: nothing would be recorded (list the flows, or leave the key out for the flow with the most events)",
            )));
        }
        (Some(_), Some(v)) => (v.clone(), "output.record_flows".to_string()),
        (Some(_), None) => {
            let s0 = ctrl::Setup::build(l, &o.set).map_err(SimError::Other)?;
            let mut c = engine::Sim::new(l, s0, controller, seed, record::Recorder::counting());
            c.run(|_| {});
            match c.rec.busiest() {
                Some((id, n)) => (
                    vec![id],
                    format!(
                        "flow {id}, the one with the most recorded events ({n}) of the run's {} flows (output.record_flows not given)",
                        c.flows.len()
                    ),
                ),
                None => (
                    vec![0],
                    "flow 0: no flow recorded an event (output.record_flows not given)".into(),
                ),
            }
        }
    };
    let rec = match &o.record {
        Some(d) => record::Recorder::new(
            d,
            &record_flows,
            &sc.name,
            vec![
                format!(
                    "recorded by `sim-host sim {}` (controller {}, seed {seed})",
                    l.file.display(),
                    controller.name()
                ),
                format!("{}: {}", sc.name, sc.description.replace('\n', " ")),
            ],
            sc.mtu_bytes,
        ),
        None => record::Recorder::none(),
    };
    let mut sim = engine::Sim::new(l, setup, controller, seed, rec);
    sim.ns3_buffer_check()
        .map_err(|e| SimError::Scenario(l.err("topology.buffer_bytes", e)))?;
    if o.ns3_out.is_some() {
        sim.log_ns3();
    }
    let end_ns = sim.end_ns();
    let t0 = Instant::now();
    sim.run(|t| progress(t, end_ns));
    let wall = t0.elapsed().as_secs_f64();
    // Flow ids of Poisson workloads exist only once the run made them.
    scenario::check_flow_ids(l, sim.flows.len()).map_err(SimError::Scenario)?;
    let rec = std::mem::take(&mut sim.rec);
    let recorded = o.record.as_ref().map(|_| {
        let flows: Vec<(u32, u64)> = record_flows
            .iter()
            .map(|&id| (id, rec.rows().get(&id).copied().unwrap_or(0)))
            .collect();
        RecordReport {
            chosen: chosen.clone(),
            too_few: flows.iter().filter(|f| f.1 < 2).map(|f| f.0).collect(),
            flows,
        }
    });
    let mut files: Vec<String> = rec
        .finish()
        .map_err(SimError::Other)?
        .into_iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut rep = report(l, &sim, controller, seed, wall);
    let t = params
        .iter()
        .find(|p| p.key == "base_rtt_ns")
        .and_then(|p| Some((p.value.parse::<u64>().ok()?, p.origin.clone())));
    rep.paths = Some(paths::PathsReport::new(&paths::of(l), t));
    rep.params = params;
    rep.recorded = recorded;
    // CATS: the FIFO baseline on the same network, for the comparison.
    let baseline = match (&sc.web, sim.flows.first().and_then(|f| f.web.as_ref())) {
        (Some(w), Some(_)) if w.scheduler == scenario::Scheduler::Cats && w.baseline => {
            let mut lb = l.clone();
            if let Some(wb) = &mut lb.sc.web {
                wb.scheduler = scenario::Scheduler::Fifo;
            }
            let sb = ctrl::Setup::build(&lb, &o.set).map_err(SimError::Other)?;
            let mut b = engine::Sim::new(&lb, sb, controller, seed, record::Recorder::none());
            b.run(|_| {});
            b.flows.swap_remove(0).web
        }
        _ => None,
    };
    if let Some(w) = sim.flows.first().and_then(|f| f.web.as_ref()) {
        rep.web = Some(web::WebReport::new(
            w.run_report(),
            baseline.as_ref().map(|b| b.run_report()),
        ));
        if let Some(v) = web::violations(w)
            .into_iter()
            .chain(baseline.as_deref().and_then(web::violations))
            .next()
        {
            rep.violations.push(v);
        }
    }
    let mut staged = Staged::new();
    if let Some(d) = &o.out {
        staged.extend(write_out(d, &sc.name, &sim, &rep)?);
    }
    let web_flow = sim.flows.first().and_then(|f| f.web.as_deref());
    if let (Some(w), Some(r), Some(d)) = (web_flow, &rep.web, &o.out) {
        staged.extend(web::out_files(d, &sc.name, r, w, baseline.as_deref()));
    }
    if let Some(d) = &o.ns3_out {
        let (fs, r) = ns3::files(&sim, &ns3_in);
        staged.extend(fs.into_iter().map(|(name, text)| (d.join(name), text)));
        rep.ns3 = Some(r);
    } else if ns3_in.any() {
        rep.ns3 = Some(ns3::Ns3Report {
            inputs: Some(ns3_in.clone()),
            ..ns3::Ns3Report::default()
        });
    }
    let dir = l.file.parent().unwrap_or(Path::new(""));
    let mut inputs: Vec<PathBuf> = vec![l.file.clone()];
    inputs.extend(o.ns3_topology.iter().chain(&o.ns3_flows).cloned());
    inputs.extend(
        sc.flows
            .iter()
            .filter_map(|g| g.cdf.as_ref())
            .map(|c| dir.join(c)),
    );
    inputs.extend(sc.web.as_ref().map(|w| dir.join(&w.page)));
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    files.extend(commit_all(staged, &inputs)?);
    rep.files = files;
    Ok(Run {
        report: rep,
        sim,
        baseline,
    })
}

/// The four quantiles a report gives of a histogram, `None` when it is empty.
fn hist4(h: &stats::Hist) -> Option<[u64; 4]> {
    (h.count() > 0).then(|| [h.quantile(0.5), h.quantile(0.95), h.quantile(0.99), h.max()])
}

fn report(
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
    // A run that measured nothing is not a healthy run (issue 32 §2).
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

fn other(p: &Path, e: impl std::fmt::Display) -> SimError {
    SimError::Other(format!("{}: {e}", p.display()))
}

/// Files staged in memory: `(path, contents)`, written together by [`commit_all`].
type Staged = Vec<(PathBuf, String)>;

/// Writes every staged file to a temporary beside it, then renames them all into place: a
/// failure leaves none of them (and any earlier file of that name untouched). A file that would
/// replace one of `inputs` (the scenario, its CDFs, a CATS page) is refused before any is
/// written.
fn commit_all(files: Staged, inputs: &[&Path]) -> Result<Vec<String>, SimError> {
    for (p, _) in &files {
        cc_output::output::refuse_inputs(p, inputs).map_err(|e| SimError::Other(e.to_string()))?;
    }
    let mut tmps = Vec::with_capacity(files.len());
    let cleanup = |tmps: &[(PathBuf, PathBuf)]| {
        for (t, _) in tmps {
            let _ = std::fs::remove_file(t);
        }
    };
    for (p, text) in files {
        let t = cc_output::output::temp_beside(&p);
        if let Err(e) = std::fs::write(&t, text) {
            let _ = std::fs::remove_file(&t);
            cleanup(&tmps);
            return Err(other(&p, format!("cannot write: {e}")));
        }
        tmps.push((t, p));
    }
    let mut done = Vec::new();
    for (i, (t, p)) in tmps.iter().enumerate() {
        if let Err(e) = cc_output::output::commit_temp(t, p) {
            cleanup(&tmps[i + 1..]);
            return Err(SimError::Other(e.to_string()));
        }
        done.push(p.display().to_string());
    }
    Ok(done)
}

/// Makes `d` (and its parents) and checks a file can be created in it: run before the
/// simulation, so a bad output directory is reported before the run, not after it.
pub fn prepare_dir(d: &Path, what: &str) -> Result<(), SimError> {
    std::fs::create_dir_all(d).map_err(|e| other(d, format!("{what}: cannot create: {e}")))?;
    let probe = cc_output::output::temp_beside(&d.join(".sim-host-probe"));
    std::fs::File::create(&probe).map_err(|e| other(d, format!("{what}: cannot write: {e}")))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// `--out`: the per-flow CSV, the time series and the summary JSON, staged.
fn write_out(d: &Path, name: &str, sim: &engine::Sim, rep: &Report) -> Result<Staged, SimError> {
    use std::fmt::Write as _;
    let mut files = Staged::new();
    let mut s = String::from(
        "flow,group,src,dst,size_bytes,start_ns,status,bytes_acked,fct_ns,ideal_fct_ns,slowdown\n",
    );
    for (i, f) in sim.flows.iter().enumerate() {
        let _ = write!(s, "{i},{},{},{},", f.group, f.src, f.dst);
        if f.long {
            let status = if f.stopped_ps.is_some() {
                "stopped"
            } else {
                "long"
            };
            let _ = writeln!(s, ",{},{status},{},,,", f.start_ps / 1000, f.acked());
            continue;
        }
        let ideal = f.slowdown_ideal_ps as f64 / 1e3;
        let head = format!("{},{}", f.size_bytes, f.start_ps / 1000);
        match (f.done_ps, f.stopped_ps) {
            (_, Some(_)) => {
                let _ = writeln!(s, "{head},stopped,{},,{ideal:.3},", f.acked());
            }
            (Some(t), None) => {
                let fct = (t - f.start_ps) as f64 / 1e3;
                let _ = writeln!(
                    s,
                    "{head},finished,{},{fct:.3},{ideal:.3},{:.4}",
                    f.acked(),
                    if sim.stats.clamp_slowdown {
                        (fct / ideal).max(1.0)
                    } else {
                        fct / ideal
                    }
                );
            }
            (None, None) => {
                let _ = writeln!(s, "{head},unfinished,{},,{ideal:.3},", f.acked());
            }
        }
    }
    files.push((d.join(format!("{name}_flows.csv")), s));
    let st = &sim.stats;
    let k = st.series.first().map_or(0, |p| p.rates_bps.len());
    let mut s = String::from("t_ns,queue_max_bytes,delivered_bytes");
    for i in 0..k {
        let f = st.tracked.get(i).copied().unwrap_or(i as u32);
        let _ = write!(s, ",rate_flow{f}_bps,goodput_flow{f}_bps");
    }
    s.push('\n');
    for pt in &st.series {
        let _ = write!(
            s,
            "{},{},{}",
            pt.t_ns, pt.queue_max_bytes, pt.delivered_bytes
        );
        for (r, g) in pt.rates_bps.iter().zip(&pt.goodput_bps) {
            let f = |v: &f64| {
                if v.is_finite() {
                    format!("{v:.0}")
                } else {
                    String::new()
                }
            };
            let _ = write!(s, ",{},{}", f(r), f(g));
        }
        s.push('\n');
    }
    files.push((d.join(format!("{name}_timeseries.csv")), s));
    let p = d.join(format!("{name}_summary.json"));
    let j = serde_json::to_string_pretty(rep).map_err(|e| other(&p, e))?;
    files.push((p, j + "\n"));
    Ok(files)
}
