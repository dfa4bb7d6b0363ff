//! Sweeps: scenarios × controllers × seeds, split into shards for a batch scheduler's job array
//! (`sim-host sim A.toml B.toml --seeds 1..8 --shard I/N --results DIR`), and `sim-host merge`
//! combining the result files into tables and figures.
//!
//! * The job list is the same on every shard (scenarios in the order given, then controllers,
//!   then seeds); shard `I` of `N` runs the jobs whose index is `I` modulo `N`. Each runs on its
//!   own core (rayon).
//! * Each result is a self-describing JSON file (the report, the scenario's text, controller,
//!   seed and `--set` parameters) named by a hash of all of these: rerunning a job rewrites the
//!   same file. `merge` identifies a run by the file's content (experiment digest, controller,
//!   seed), never by its name, and keeps one row per run: a copy is counted once and named, a
//!   second file of a run with other content is an error naming both, so merging is idempotent
//!   and a sharded sweep merges to exactly the unsharded one.
//! * `merge` writes the table (one row per run), a summary across seeds (mean, sd, min, max
//!   per scenario, controller and metric) and one figure per scenario (each metric per seed,
//!   fixed point beside the f64 reference).

use super::scenario::ControllerKind;
use super::{Report, SimOpts, run_loaded, scenario};
use cc_trace::Param;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// One job of a sweep.
#[derive(Debug, Clone)]
pub struct Job {
    /// The scenario file.
    pub file: PathBuf,
    /// Controller.
    pub controller: ControllerKind,
    /// Seed (`None`: the scenario's own).
    pub seed: Option<u64>,
}

/// `I/N`.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("--shard {s:?}: expected I/N, e.g. 0/8"))?;
    let i: usize = i
        .trim()
        .parse()
        .map_err(|_| format!("--shard {s:?}: I is not a number"))?;
    let n: usize = n
        .trim()
        .parse()
        .map_err(|_| format!("--shard {s:?}: N is not a number"))?;
    if n == 0 || i >= n {
        return Err(format!("--shard {s:?}: need 0 <= I < N"));
    }
    Ok((i, n))
}

/// `1,2,5` or `1..4` (4 excluded) or a mix: `1..3,10`.
pub fn parse_seeds(s: &str) -> Result<Vec<u64>, String> {
    let mut v = Vec::new();
    for part in s.split(',') {
        let p = part.trim();
        if let Some((a, b)) = p.split_once("..") {
            let a: u64 = a.parse().map_err(|_| format!("--seeds: bad range {p:?}"))?;
            let b: u64 = b.parse().map_err(|_| format!("--seeds: bad range {p:?}"))?;
            if b <= a || b - a > 100_000 {
                return Err(format!("--seeds: empty or huge range {p:?}"));
            }
            v.extend(a..b);
        } else {
            v.push(p.parse().map_err(|_| format!("--seeds: bad seed {p:?}"))?);
        }
    }
    // Each seed is one run: a seed given twice would run twice and merge as a missing job.
    let mut seen = std::collections::BTreeSet::new();
    if let Some(dup) = v.iter().find(|&&x| !seen.insert(x)) {
        return Err(format!(
            "--seeds: seed {dup} is given more than once (each seed is one run)"
        ));
    }
    Ok(v)
}

/// Every job, in the one order every shard agrees on.
/// Every job, in the one order every shard agrees on; no seeds: each scenario's own.
pub fn jobs(files: &[PathBuf], controllers: &[ControllerKind], seeds: &[u64]) -> Vec<Job> {
    let seeds: Vec<Option<u64>> = if seeds.is_empty() {
        vec![None]
    } else {
        seeds.iter().copied().map(Some).collect()
    };
    let mut v = Vec::new();
    for f in files {
        for &c in controllers {
            for &s in &seeds {
                v.push(Job {
                    file: f.clone(),
                    controller: c,
                    seed: s,
                });
            }
        }
    }
    v
}

/// FNV-1a, 64 bits (stable across platforms and versions, unlike `std`'s hasher).
fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01B3);
    }
    h
}

/// The result file's name for a job: `<scenario name>-<hash>.json`, the hash over the scenario
/// text, the controller, the seed and the `--set` parameters.
pub fn result_name(
    name: &str,
    text: &str,
    controller: ControllerKind,
    seed: u64,
    set: &[Param],
) -> String {
    let set: Vec<String> = set
        .iter()
        .map(|p| format!("{}={}", p.key, p.value))
        .collect();
    format!(
        "{name}-{:016x}.json",
        job_hash(text, controller.name(), seed, &set)
    )
}

/// The hash of one job (FNV-1a 64): the scenario text, the controller, the seed and the `--set`
/// parameters as `KEY=VALUE` — the result file's name, and what `merge` recomputes from a
/// result's content (so a renamed or copied file is still the same job).
fn job_hash(text: &str, controller: &str, seed: u64, set: &[String]) -> u64 {
    let mut h = fnv(text.as_bytes(), 0xCBF2_9CE4_8422_2325);
    h = fnv(controller.as_bytes(), h);
    h = fnv(&seed.to_le_bytes(), h);
    for kv in set {
        h = fnv(format!("{kv};").as_bytes(), h);
    }
    h
}

/// The tool that wrote a result: `sim-host VERSION` (part of the experiment digest).
pub const TOOL: &str = concat!("sim-host ", env!("CARGO_PKG_VERSION"));

/// What a run actually was, apart from its controller and seed: a digest (FNV-1a 64, hex) of
/// the scenario's text, every algorithm parameter in force and the tool version. Two result
/// files with the same scenario name and different digests are different experiments.
pub fn experiment_digest(text: &str, params: &[super::ctrl::ParamInForce]) -> String {
    digest(
        text,
        params.iter().map(|p| (p.key.as_str(), p.value.as_str())),
        TOOL,
    )
}

/// [`experiment_digest`] over its parts, as a result file holds them (`merge` recomputes it).
fn digest<'a>(text: &str, params: impl Iterator<Item = (&'a str, &'a str)>, tool: &str) -> String {
    let mut h = fnv(text.as_bytes(), 0xCBF2_9CE4_8422_2325);
    for (k, v) in params {
        h = fnv(format!("{k}={v};").as_bytes(), h);
    }
    h = fnv(tool.as_bytes(), h);
    format!("{h:016x}")
}

/// A shard's outcome: the result files written and those whose run violated an invariant.
#[derive(Debug, Clone, Default)]
pub struct Done {
    /// Every result file written.
    pub files: Vec<PathBuf>,
    /// `file: violations` of every job in which an invariant failed (the sweep exits 1).
    pub violated: Vec<String>,
}

impl Done {
    /// The sweep's exit code, as a single run's: 1 when any job violated an invariant, else 0.
    pub fn exit_code(&self) -> i32 {
        if self.violated.is_empty() { 0 } else { 1 }
    }
}

/// Runs shard `shard` of the sweep, writing one result file per job into `dir`. Returns the
/// files written and the jobs that violated an invariant, or the first error (exit 2).
pub fn run(jobs: &[Job], shard: (usize, usize), dir: &Path, set: &[Param]) -> Result<Done, String> {
    super::prepare_dir(dir, "--results").map_err(|e| e.to_string())?;
    // Load (and check) every scenario and its parameters first: a bad file or `--set` fails
    // the shard before any run.
    let mut texts = std::collections::BTreeMap::new();
    for j in jobs {
        if !texts.contains_key(&j.file) {
            let text = std::fs::read_to_string(&j.file)
                .map_err(|e| format!("{}: cannot read: {e}", j.file.display()))?;
            texts.insert(j.file.clone(), text);
        }
    }
    // Each job one result file: a scenario given twice, or two files of one text, would run
    // jobs that write one file, and `merge` would report the overwritten ones missing.
    let mut seen = std::collections::BTreeSet::new();
    for j in jobs {
        if !seen.insert((&j.file, j.controller.name(), j.seed)) {
            return Err(format!(
                "{}: the scenario is given more than once: each of its jobs would run twice and \
                 write one result file",
                j.file.display()
            ));
        }
    }
    let mut by_text: std::collections::BTreeMap<&str, &PathBuf> = Default::default();
    for (f, t) in &texts {
        if let Some(first) = by_text.insert(t.as_str(), f) {
            return Err(format!(
                "{} and {}: the same scenario text, so their jobs are the same runs (one result \
                 file for two jobs): give one of them",
                first.display(),
                f.display()
            ));
        }
    }
    // The sweep's identity: every job of every shard, and the `--set` parameters.
    let mut sweep_id = 0xCBF2_9CE4_8422_2325;
    for j in jobs {
        sweep_id = fnv(texts[&j.file].as_bytes(), sweep_id);
        sweep_id = fnv(j.controller.name().as_bytes(), sweep_id);
        sweep_id = fnv(&j.seed.map_or(u64::MAX, |s| s).to_le_bytes(), sweep_id);
    }
    for p in set {
        sweep_id = fnv(format!("{}={};", p.key, p.value).as_bytes(), sweep_id);
    }
    // Every scenario of the sweep — not only this shard's — is loaded and checked with the
    // `--set` parameters and each controller it is swept with before any job runs, so every
    // shard of a sweep is refused alike and at once (a job array never half runs).
    let mut scenarios = std::collections::BTreeMap::new();
    for j in jobs {
        if scenarios.contains_key(&j.file) {
            continue;
        }
        let text = &texts[&j.file];
        let l = scenario::parse(&j.file, text).map_err(|e| e.to_string())?;
        let controllers: Vec<ControllerKind> = jobs
            .iter()
            .filter(|x| x.file == j.file)
            .map(|x| x.controller)
            .collect();
        super::ctrl::check_applied(&l, set, &controllers)?;
        let setup = super::ctrl::Setup::build(&l, set)?;
        let fixed = jobs
            .iter()
            .any(|x| x.file == j.file && x.controller == ControllerKind::Fixed);
        if let (true, Some(why)) = (fixed, setup.algo().reference_only()) {
            return Err(format!(
                "{}: the sweep's fixed controller: algorithm {} has no fixed-point \
                 implementation ({why}); sweep it with the reference controller only",
                j.file.display(),
                setup.entry().name
            ));
        }
        let params = super::ctrl::in_force(&l, set, &setup);
        scenarios.insert(j.file.clone(), (l, params));
    }
    let loaded: Vec<_> = jobs
        .iter()
        .enumerate()
        .filter(|(k, _)| k % shard.1 == shard.0)
        .map(|(k, j)| {
            let (l, params) = &scenarios[&j.file];
            (k, j, &texts[&j.file], l, params)
        })
        .collect();
    let results: Result<Vec<(PathBuf, Vec<String>)>, String> = loaded
        .par_iter()
        .map(|(k, j, text, l, params)| {
            let seed = j.seed.unwrap_or(l.sc.seed);
            let o = SimOpts {
                controller: Some(j.controller),
                seed: Some(seed),
                set: set.to_vec(),
                ..SimOpts::default()
            };
            let (r, _) = run_loaded(l, &o).map_err(|e| e.to_string())?;
            let name = result_name(&l.sc.name, text, j.controller, seed, set);
            let p = dir.join(name);
            let doc = serde_json::json!({
                "scenario_file": j.file.display().to_string(),
                "scenario_text": text,
                "controller": j.controller.name(),
                "seed": seed,
                "set": set.iter().map(|p| format!("{}={}", p.key, p.value)).collect::<Vec<_>>(),
                "params": params,
                "tool": TOOL,
                "experiment": experiment_digest(text, params),
                "sweep": {
                    "id": format!("{sweep_id:016x}"),
                    "job": k,
                    "jobs": jobs.len(),
                    "shard": shard.0,
                    "shards": shard.1,
                },
                "report": strip_timing(&r),
            });
            let body = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
            let tmp = cc_output::output::temp_beside(&p);
            std::fs::write(&tmp, body).map_err(|e| format!("{}: {e}", tmp.display()))?;
            cc_output::output::commit_temp(&tmp, &p).map_err(|e| e.to_string())?;
            Ok((p, r.violations))
        })
        .collect();
    let mut done = Done::default();
    for (p, v) in results? {
        if !v.is_empty() {
            done.violated
                .push(format!("{}: {}", p.display(), v.join("; ")));
        }
        done.files.push(p);
    }
    Ok(done)
}

/// The report without the wall-clock figures (so a rerun writes the same bytes).
fn strip_timing(r: &Report) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("wall_s");
        o.remove("packet_events_per_s");
        o.remove("files");
    }
    v
}

/// One numeric column of the merged table: its CSV name, its axis label on a `merge --plot`
/// figure (with the unit the value is written in) and where it comes from in a result file.
struct Metric {
    column: &'static str,
    label: &'static str,
    get: fn(&serde_json::Value) -> Option<f64>,
}

/// The merged table's numeric columns, in order.
const METRICS: [Metric; 11] = [
    Metric {
        column: "goodput_bps",
        label: "goodput (b/s)",
        get: |r| r["goodput_bps"].as_f64(),
    },
    Metric {
        column: "jain",
        label: "Jain's index",
        get: |r| r["jain"].as_f64(),
    },
    Metric {
        column: "jain_mean_bps",
        label: "mean rate of the long flows in Jain's window (b/s)",
        get: |r| r["jain_mean_bps"].as_f64(),
    },
    Metric {
        column: "queue_found_p95_bytes",
        label: "queue found p95 (bytes)",
        get: |r| r["queue_seen_bytes"][1].as_f64(),
    },
    Metric {
        column: "queue_found_p99_bytes",
        label: "queue found p99 (bytes)",
        get: |r| r["queue_seen_bytes"][2].as_f64(),
    },
    Metric {
        column: "rtt_p99_ns",
        label: "RTT p99 (ns)",
        get: |r| r["rtt_ns"][2].as_f64(),
    },
    Metric {
        column: "flows_finished",
        label: "sized flows finished",
        get: |r| r["flows_finished"].as_f64(),
    },
    Metric {
        column: "flows_unfinished",
        label: "sized flows unfinished at the end",
        get: |r| r["flows_unfinished"].as_f64(),
    },
    Metric {
        column: "flows_stopped",
        label: "sized flows stopped by stop_ns",
        get: |r| r["flows_stopped"].as_f64(),
    },
    Metric {
        column: "slowdown_p99_first_bucket",
        label: "FCT slowdown p99, smallest size bucket",
        get: |r| r["slowdown"][0]["p99"].as_f64(),
    },
    Metric {
        column: "violations",
        label: "invariant violations",
        get: |r| r["violations"].as_array().map(|v| v.len() as f64),
    },
];

/// The merged table's header.
pub const MERGE_HEADER: &str = "scenario,experiment,controller,seed,hash,goodput_bps,jain,jain_mean_bps,queue_found_p95_bytes,queue_found_p99_bytes,rtt_p99_ns,flows_finished,flows_unfinished,flows_stopped,slowdown_p99_first_bucket,violations";

/// The summary table's header (`merge --summary`).
pub const SUMMARY_HEADER: &str = "scenario,experiment,controller,metric,seeds,mean,sd,min,max";

/// One result file of a sweep: which run it was and its metrics (in [`METRICS`] order; `None`
/// where the run has no such figure, e.g. no sized flow finished).
#[derive(Debug, Clone)]
pub struct Merged {
    /// Scenario name.
    pub scenario: String,
    /// The experiment digest ([`experiment_digest`]).
    pub experiment: String,
    /// `fixed` or `reference`.
    pub controller: String,
    /// Seed.
    pub seed: u64,
    /// The job's hash, recomputed from the file's content (the hash its name carries when
    /// the sweep wrote it).
    pub hash: String,
    /// Metric values.
    values: Vec<Option<f64>>,
}

/// What `merge` read: the rows, and warnings for standard error (a missing shard, a scenario
/// name shared by several experiments).
#[derive(Debug, Clone, Default)]
pub struct MergeResult {
    /// One row per distinct result, sorted by scenario, experiment, controller, seed.
    pub rows: Vec<Merged>,
    /// Warnings.
    pub warnings: Vec<String>,
}

/// The `.json` files directly in `d`.
fn json_files(d: &Path) -> Result<Vec<PathBuf>, String> {
    let rd = std::fs::read_dir(d).map_err(|e| format!("{}: cannot read: {e}", d.display()))?;
    let mut v = Vec::new();
    for e in rd {
        let p = e.map_err(|e| format!("{}: {e}", d.display()))?.path();
        if p.is_file() && p.extension().is_some_and(|x| x == "json") {
            v.push(p);
        }
    }
    v.sort();
    Ok(v)
}

/// A result file's place in its sweep (`sweep` in the file): which sweep, which job of how
/// many, in how many shards.
struct SweepPlace {
    id: String,
    job: u64,
    jobs: u64,
    shards: u64,
}

/// One result file as `merge` reads it.
struct ResultFile {
    /// Its row.
    row: Merged,
    /// The file.
    path: PathBuf,
    /// Its content as compared with another result of the same run: the whole file but where
    /// the scenario file was (`scenario_file`, also inside the parameters' origins) and which
    /// sweep ran it (`sweep`) — a copy, and a rerun of the job in another sweep or from another
    /// directory, compare equal.
    content: serde_json::Value,
    /// Its place in its sweep, when it has one.
    place: Option<SweepPlace>,
}

impl ResultFile {
    /// The file has the name the sweep gives its job: `<scenario>-<hash>.json`.
    fn named_by_sweep(&self) -> bool {
        self.path.file_name().and_then(|n| n.to_str())
            == Some(&format!("{}-{}.json", self.row.scenario, self.row.hash))
    }
}

/// Replaces `from` with a fixed token in every string of `v`.
fn replace_in_strings(v: &mut serde_json::Value, from: &str) {
    use serde_json::Value;
    match v {
        Value::String(s) if !from.is_empty() && s.contains(from) => {
            *s = s.replace(from, "<scenario file>");
        }
        Value::Array(a) => a.iter_mut().for_each(|x| replace_in_strings(x, from)),
        Value::Object(o) => o.values_mut().for_each(|x| replace_in_strings(x, from)),
        _ => {}
    }
}

/// Where `a` and `b` first differ, as `path: A vs B` (values shortened), or `None` when equal.
fn first_difference(a: &serde_json::Value, b: &serde_json::Value, at: &str) -> Option<String> {
    use serde_json::Value;
    let short = |v: Option<&Value>| -> String {
        let s = v.map_or("(absent)".to_string(), Value::to_string);
        if s.chars().count() > 60 {
            format!("{}…", s.chars().take(60).collect::<String>())
        } else {
            s
        }
    };
    let join = |k: &str| {
        if at.is_empty() {
            k.to_string()
        } else {
            format!("{at}.{k}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => {
                        if let Some(d) = first_difference(p, q, &join(k)) {
                            return Some(d);
                        }
                    }
                    (p, q) => return Some(format!("{}: {} vs {}", join(k), short(p), short(q))),
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}[{i}]"))),
        _ if a == b => None,
        _ => Some(format!("{at}: {} vs {}", short(Some(a)), short(Some(b)))),
    }
}

/// Reads one result file: its row, its comparable content and its place in its sweep. Every
/// identifying field must be there with its type, and the experiment digest must be the one
/// its scenario text, parameters and tool give (a file edited by hand is refused).
fn read_result(p: &Path) -> Result<ResultFile, String> {
    let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a sweep result: {e}", p.display()))?;
    let r = &v["report"];
    if !r.is_object() {
        return Err(format!("{}: not a sweep result (no report)", p.display()));
    }
    let experiment = v["experiment"].as_str().ok_or_else(|| {
        format!(
            "{}: no experiment digest (written by an older sim-host): rerun its sweep",
            p.display()
        )
    })?;
    // Every identifying field present and of its type: a wrong one is refused, never read as
    // empty or 0.
    let string = |what: &str, x: &serde_json::Value| -> Result<String, String> {
        x.as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{}: field `{what}`: {x} is not a string", p.display()))
    };
    let seed = v["seed"].as_u64().ok_or_else(|| {
        format!(
            "{}: field `seed`: {} is not a non-negative integer",
            p.display(),
            v["seed"]
        )
    })?;
    let controller = string("controller", &v["controller"])?;
    let scenario_text = string("scenario_text", &v["scenario_text"])?;
    let scenario_file = string("scenario_file", &v["scenario_file"])?;
    let tool = string("tool", &v["tool"])?;
    let set: Vec<String> = v["set"]
        .as_array()
        .and_then(|a| a.iter().map(|x| x.as_str().map(str::to_string)).collect())
        .ok_or_else(|| {
            format!(
                "{}: field `set`: {} is not a list of KEY=VALUE strings",
                p.display(),
                v["set"]
            )
        })?;
    let params: Vec<(&str, &str)> = v["params"]
        .as_array()
        .and_then(|a| {
            a.iter()
                .map(|x| Some((x["key"].as_str()?, x["value"].as_str()?)))
                .collect()
        })
        .ok_or_else(|| {
            format!(
                "{}: field `params`: not a list of {{key, value}} strings",
                p.display()
            )
        })?;
    let scenario = string("report.scenario", &r["scenario"])?;
    // The report says which run it is too: it must be this one.
    if r["seed"].as_u64() != Some(seed) || r["controller"].as_str() != Some(controller.as_str()) {
        return Err(format!(
            "{}: fields `seed` {seed} and `controller` {controller:?} disagree with the \
             report's ({}, {}): edited by hand?",
            p.display(),
            r["seed"],
            r["controller"]
        ));
    }
    let recomputed = digest(&scenario_text, params.into_iter(), &tool);
    if recomputed != experiment {
        return Err(format!(
            "{}: field `experiment` {experiment:?} is not the digest of the scenario text, \
             parameters and tool the file holds ({recomputed}): edited by hand?",
            p.display()
        ));
    }
    let sw = &v["sweep"];
    let place = match (
        sw["id"].as_str(),
        sw["job"].as_u64(),
        sw["jobs"].as_u64(),
        sw["shards"].as_u64(),
    ) {
        (Some(id), Some(job), Some(jobs), Some(shards)) if job < jobs && shards > 0 => {
            Some(SweepPlace {
                id: id.to_string(),
                job,
                jobs,
                shards,
            })
        }
        (None, None, None, None) => None,
        _ => {
            return Err(format!(
                "{}: field `sweep`: {sw} is not a job's place in a sweep (id, job < jobs, \
                 shards > 0)",
                p.display()
            ));
        }
    };
    let row = Merged {
        scenario,
        experiment: experiment.to_string(),
        hash: format!("{:016x}", job_hash(&scenario_text, &controller, seed, &set)),
        controller,
        seed,
        values: METRICS.iter().map(|m| (m.get)(r)).collect(),
    };
    let mut content = v.clone();
    if let Some(o) = content.as_object_mut() {
        o.remove("scenario_file");
        o.remove("sweep");
        for k in ["params", "report"] {
            if let Some(x) = o.get_mut(k) {
                replace_in_strings(x, &scenario_file);
            }
        }
    }
    Ok(ResultFile {
        row,
        path: p.to_path_buf(),
        content,
        place,
    })
}

/// Reads every result file under `dirs`: one row per run — a run is identified by its content
/// (the experiment digest over the scenario text, the parameters in force and the tool; the
/// controller; the seed), never by the file's name — sorted by scenario, experiment,
/// controller, seed (so merging is idempotent and shards merge to the unsharded sweep). A
/// second file of the same run with the same content (a copy, the job rerun in another sweep
/// or from another directory) is counted once and named in a warning with the file it
/// duplicates; one with other content is an error naming both. A directory given twice is read
/// once (warning). A directory without result files is an error (naming any sub-directory that
/// has some); a file that is not a result of this tool is an error.
pub fn merge(dirs: &[PathBuf]) -> Result<MergeResult, String> {
    type RunKey = (String, String, String, u64);
    let mut runs: std::collections::BTreeMap<RunKey, ResultFile> = Default::default();
    let mut warnings = Vec::new();
    // Sweep id → (jobs, shards, jobs seen).
    let mut sweeps: std::collections::BTreeMap<
        String,
        (u64, u64, std::collections::BTreeSet<u64>),
    > = Default::default();
    let mut read_dirs: Vec<(PathBuf, &PathBuf)> = Vec::new();
    for d in dirs {
        let canon = std::fs::canonicalize(d).unwrap_or_else(|_| d.clone());
        if let Some((_, first)) = read_dirs.iter().find(|(c, _)| *c == canon) {
            warnings.push(format!(
                "{}: given more than once (as {}): read once",
                d.display(),
                first.display()
            ));
            continue;
        }
        read_dirs.push((canon, d));
        let files = json_files(d)?;
        if files.is_empty() {
            let mut below = Vec::new();
            if let Ok(rd) = std::fs::read_dir(d) {
                for e in rd.flatten() {
                    let p = e.path();
                    if p.is_dir() && json_files(&p).is_ok_and(|f| !f.is_empty()) {
                        below.push(p.display().to_string());
                    }
                }
            }
            below.sort();
            let hint = if below.is_empty() {
                String::new()
            } else {
                format!(" ({} has some: give that directory)", below.join(", "))
            };
            return Err(format!(
                "{}: no sweep result files (*.json){hint}",
                d.display()
            ));
        }
        for p in files {
            let f = read_result(&p)?;
            if let Some(s) = &f.place {
                sweeps
                    .entry(s.id.clone())
                    .or_insert_with(|| (s.jobs, s.shards, Default::default()))
                    .2
                    .insert(s.job);
            }
            let m = &f.row;
            let key = (
                m.scenario.clone(),
                m.experiment.clone(),
                m.controller.clone(),
                m.seed,
            );
            let what = format!(
                "scenario {}, experiment {}, controller {}, seed {}",
                m.scenario, m.experiment, m.controller, m.seed
            );
            match runs.get_mut(&key) {
                None => {
                    runs.insert(key, f);
                }
                Some(first) => match first_difference(&first.content, &f.content, "") {
                    None => {
                        // The file under the name the sweep gives the job is the original,
                        // whichever was read first (`x (copy).json` sorts before `x.json`).
                        let (duplicate, original) = if f.named_by_sweep() && !first.named_by_sweep()
                        {
                            let d = std::mem::replace(first, f);
                            (d.path, first.path.clone())
                        } else {
                            (f.path, first.path.clone())
                        };
                        warnings.push(format!(
                            "{}: a duplicate of {} (the same run: {what}; the same content): \
                             counted once",
                            duplicate.display(),
                            original.display()
                        ));
                    }
                    Some(d) => {
                        return Err(format!(
                            "{} and {}: both are the run {what}, but their contents differ \
                             ({d}): keep the right one",
                            first.path.display(),
                            f.path.display()
                        ));
                    }
                },
            }
        }
    }
    let rows: Vec<Merged> = runs.into_values().map(|f| f.row).collect();
    for (id, (jobs, shards, seen)) in &sweeps {
        let missing: Vec<u64> = (0..*jobs).filter(|k| !seen.contains(k)).collect();
        if missing.is_empty() {
            continue;
        }
        // Only shards that have jobs (shard s has one when s < jobs): a sweep of 3 jobs in 4
        // shards leaves shard 3/4 with nothing to run, and nothing to miss.
        let empty_shards: Vec<String> = (0..*shards.min(jobs))
            .filter(|&s| {
                (s..*jobs)
                    .step_by(usize::try_from(*shards).unwrap_or(usize::MAX))
                    .all(|k| !seen.contains(&k))
            })
            .map(|s| format!("{s}/{shards}"))
            .collect();
        let which = if empty_shards.is_empty() {
            String::new()
        } else {
            format!("; no result at all from shard {}", empty_shards.join(", "))
        };
        warnings.push(format!(
            "sweep {id}: {} of {jobs} jobs have no result{which}",
            missing.len()
        ));
    }
    for g in rows.chunk_by(|a, b| a.scenario == b.scenario) {
        let mut exps: Vec<&str> = g.iter().map(|m| m.experiment.as_str()).collect();
        exps.dedup();
        if exps.len() > 1 {
            warnings.push(format!(
                "scenario {}: {} different experiments ({}: different scenario text, parameters \
                 in force or sim-host version); their rows and summaries are kept apart by the \
                 experiment column",
                g[0].scenario,
                exps.len(),
                exps.join(", ")
            ));
        }
    }
    Ok(MergeResult { rows, warnings })
}

/// The merged table: one CSV row per result.
pub fn table(rows: &[Merged]) -> String {
    let mut s = String::from(MERGE_HEADER);
    s.push('\n');
    for m in rows {
        s.push_str(&format!(
            "{},{},{},{},{}",
            m.scenario, m.experiment, m.controller, m.seed, m.hash
        ));
        for v in &m.values {
            s.push(',');
            if let Some(f) = v {
                s.push_str(&format!("{f}"));
            }
        }
        s.push('\n');
    }
    s
}

/// One group of rows: (scenario, experiment, controller).
type GroupKey<'a> = (&'a str, &'a str, &'a str);

/// Groups the rows by (scenario, experiment, controller), in row order.
fn groups(rows: &[Merged]) -> Vec<(GroupKey<'_>, Vec<&Merged>)> {
    let mut g: Vec<(GroupKey<'_>, Vec<&Merged>)> = Vec::new();
    for m in rows {
        let k = (
            m.scenario.as_str(),
            m.experiment.as_str(),
            m.controller.as_str(),
        );
        match g.last_mut() {
            Some((last, v)) if *last == k => v.push(m),
            _ => g.push((k, vec![m])),
        }
    }
    g
}

/// `merge --summary`: per scenario, experiment, controller and metric, the seeds it has a value
/// for and their mean, sample standard deviation (empty for one seed), minimum and maximum.
pub fn summary(rows: &[Merged]) -> String {
    let mut s = String::from(SUMMARY_HEADER);
    s.push('\n');
    for ((sc, exp, ctrl), ms) in groups(rows) {
        for (k, metric) in METRICS.iter().enumerate() {
            let xs: Vec<f64> = ms.iter().filter_map(|m| m.values[k]).collect();
            if xs.is_empty() {
                continue;
            }
            let n = xs.len() as f64;
            let mean = xs.iter().sum::<f64>() / n;
            let sd = if xs.len() > 1 {
                let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
                format!("{}", (ss / (n - 1.0)).sqrt())
            } else {
                String::new()
            };
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            s.push_str(&format!(
                "{sc},{exp},{ctrl},{},{},{mean},{sd},{lo},{hi}\n",
                metric.column,
                xs.len()
            ));
        }
    }
    s
}

/// `merge --plot DIR`: one figure per scenario and experiment, `DIR/<scenario>.sweep.svg`
/// (`DIR/<scenario>-<experiment>.sweep.svg` when the scenario has several experiments), one
/// panel per metric that has a non-zero value, the value per seed with one series per
/// controller (fixed point beside the f64 reference). Returns the files written.
pub fn plot(rows: &[Merged], dir: &Path) -> Result<Vec<PathBuf>, String> {
    use cc_output::plot::{FIXED, OTHER, Panel, REF, Series, draw};
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let all = groups(rows);
    let mut files = Vec::new();
    // The groups are in row order, so one scenario's experiments, and one experiment's
    // controllers, are adjacent.
    for by_scenario in all.chunk_by(|a, b| a.0.0 == b.0.0) {
        let several = by_scenario.iter().any(|g| g.0.1 != by_scenario[0].0.1);
        for g in by_scenario.chunk_by(|a, b| a.0.1 == b.0.1) {
            let (sc, exp, _) = g[0].0;
            let mut panels = Vec::new();
            for (k, metric) in METRICS.iter().enumerate() {
                if metric.column == "violations" {
                    continue;
                }
                let series: Vec<Series> = g
                    .iter()
                    .map(|((_, _, ctrl), ms)| Series {
                        name: (*ctrl).to_string(),
                        points: ms
                            .iter()
                            .filter_map(|m| m.values[k].map(|v| (m.seed as f64, v)))
                            .collect(),
                        color: match *ctrl {
                            "fixed" => FIXED,
                            "reference" => REF,
                            _ => OTHER,
                        },
                    })
                    .filter(|s| !s.points.is_empty())
                    .collect();
                // A metric that is zero in every run (no sized flow in a long-flow scenario)
                // says nothing as a panel.
                if series.iter().any(|s| s.points.iter().any(|p| p.1 != 0.0)) {
                    panels.push(Panel {
                        markers: true,
                        ..Panel::new(metric.label, series)
                    });
                }
            }
            let path = if several {
                dir.join(format!("{sc}-{exp}.sweep.svg"))
            } else {
                dir.join(format!("{sc}.sweep.svg"))
            };
            draw(
                &path,
                &format!("{sc} (experiment {exp}): per seed, fixed point and f64 reference"),
                "seed",
                &panels,
            )
            .map_err(|e| format!("{}: {e}", path.display()))?;
            files.push(path);
        }
    }
    Ok(files)
}

/// Before anything is read or written: no output file of `merge` is one of the result files it
/// reads, and `--out` and `--summary` are not the same file.
fn refuse_merge_outputs(
    dirs: &[PathBuf],
    out: Option<&Path>,
    summary_to: Option<&Path>,
) -> Result<(), String> {
    let outputs: Vec<(&str, &Path)> = [("--out", out), ("--summary", summary_to)]
        .into_iter()
        .filter_map(|(flag, p)| p.map(|p| (flag, p)))
        .collect();
    for d in dirs {
        for input in json_files(d)? {
            if let Some((flag, p)) = outputs
                .iter()
                .find(|(_, p)| cc_output::output::same_file(p, &input))
            {
                return Err(format!(
                    "{}: {flag} names a result file this merge reads: refusing to write over it",
                    p.display()
                ));
            }
        }
    }
    if let [(fa, a), (fb, b)] = outputs[..]
        && cc_output::output::same_file(a, b)
    {
        return Err(format!(
            "{}: {fa} and {fb} name the same file: one would overwrite the other",
            a.display()
        ));
    }
    Ok(())
}

/// `sim-host merge DIR... [--out FILE] [--summary FILE] [--plot DIR]`: the table to `out` or
/// standard output, the summary and figures when asked; warnings (a missing shard, mixed
/// experiments) on standard error. Exit 0, or 2 (one line on stderr naming the file) when a
/// directory holds no result, a result cannot be read or an output cannot be written.
pub fn merge_cli(
    dirs: &[PathBuf],
    out: Option<&Path>,
    summary_to: Option<&Path>,
    plot_to: Option<&Path>,
) -> i32 {
    let write = |p: &Path, text: String| -> Result<(), String> {
        let tmp = cc_output::output::temp_beside(p);
        std::fs::write(&tmp, text).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("{}: cannot write: {e}", p.display())
        })?;
        cc_output::output::commit_temp(&tmp, p).map_err(|e| e.to_string())
    };
    let run = || -> Result<(), String> {
        refuse_merge_outputs(dirs, out, summary_to)?;
        let m = merge(dirs)?;
        for w in &m.warnings {
            eprintln!("warning: {w}");
        }
        let rows = &m.rows;
        if let Some(p) = summary_to {
            write(p, summary(rows))?;
        }
        if let Some(d) = plot_to {
            for f in plot(rows, d)? {
                eprintln!("wrote {}", f.display());
            }
        }
        match out {
            Some(p) => write(p, table(rows)),
            None => {
                cc_output::out!("{}", table(rows));
                Ok(())
            }
        }
    };
    match run() {
        // A closed pipe (`| head`) is not worth a message, but the exit code says it.
        Ok(()) if cc_output::output::stdout_failed() => crate::replay::EXIT_INPUT,
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            crate::replay::EXIT_INPUT
        }
    }
}

/// `sim-host merge`'s options.
#[derive(clap::Args)]
pub struct MergeArgs {
    /// Directories of result files.
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// Write the table here instead of standard output.
    #[arg(long, value_name = "FILE.csv")]
    pub out: Option<PathBuf>,
    /// Also write the summary across seeds (mean, sd, min, max per scenario, controller and
    /// metric) as CSV.
    #[arg(long, value_name = "FILE.csv")]
    pub summary: Option<PathBuf>,
    /// Also draw one SVG per scenario into this directory: every metric per seed, the
    /// fixed-point controller beside the f64 reference.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

/// `sim-host merge`.
pub fn merge_cmd(a: MergeArgs) -> i32 {
    let MergeArgs {
        dirs,
        out,
        summary,
        plot,
    } = a;
    merge_cli(&dirs, out.as_deref(), summary.as_deref(), plot.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_with_a_violated_invariant_exits_1() {
        let mut d = Done {
            files: vec![PathBuf::from("a.json"), PathBuf::from("b.json")],
            violated: Vec::new(),
        };
        assert_eq!(d.exit_code(), 0);
        d.violated.push("b.json: packets not conserved".into());
        assert_eq!(d.exit_code(), 1);
    }

    #[test]
    fn shards_and_seeds_parse() {
        assert_eq!(parse_shard("1/4").unwrap(), (1, 4));
        assert!(parse_shard("4/4").is_err());
        assert!(parse_shard("1").is_err());
        assert_eq!(parse_seeds("1..4,9").unwrap(), vec![1, 2, 3, 9]);
        assert!(parse_seeds("4..1").is_err());
        let e = parse_seeds("1,1,2").unwrap_err();
        assert!(e.contains("seed 1") && e.contains("more than once"), "{e}");
        assert!(parse_seeds("1..3,2").is_err());
    }
}
