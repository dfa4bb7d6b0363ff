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
//! * [`run_loaded`] runs a scenario and writes its outputs; the [`Report`] (report.rs) is what
//!   it measured.
//!
//! Its documentation is also for its developers (`cargo doc --document-private-items`): module
//! pages link to the private items they describe.
//!
//! ```
//! use cc_netsim::{SimOpts, run_loaded, scenario};
//! use std::path::Path;
//!
//! let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/scenarios/hpcc_incast_7to1.toml");
//! let loaded = scenario::load(&file).unwrap();
//! // Runs the network with the fixed-point crate in every NIC; nothing is printed or written.
//! let run = run_loaded(&loaded, &SimOpts::default(), &mut |_, _| {}).unwrap();
//! assert!(run.report.violations.is_empty());
//! ```
#![allow(rustdoc::private_intra_doc_links)]

pub mod cc;
pub mod ctrl;
pub mod ecn;
pub mod engine;
pub mod ns3;
pub mod paths;
pub mod record;
mod report;
pub mod scenario;
pub mod stats;
pub mod web;

pub use report::{Bucket, GroupLoad, PccReport, RecordReport, Report};

use cc_trace::Param;
use scenario::{ControllerKind, ScenarioError};
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
    let mut rep = report::report(l, &sim, controller, seed, wall);
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
