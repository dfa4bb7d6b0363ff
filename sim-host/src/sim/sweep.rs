//! Sweeps: scenarios × controllers × seeds, split into shards for a batch scheduler's job array
//! (`sim-host sim A.toml B.toml --seeds 1..8 --shard I/N --results DIR`), and `sim-host merge`
//! combining the result files into tables and figures.
//!
//! * The job list is the same on every shard (scenarios in the order given, then controllers,
//!   then seeds); shard `I` of `N` runs the jobs whose index is `I` modulo `N`. Each runs on its
//!   own core (rayon).
//! * Each result is a self-describing JSON file (the report, the scenario's text, controller,
//!   seed and `--set` parameters) named by a hash of all of these: rerunning a job rewrites the
//!   same file, and `merge` keeps one row per hash, so merging is idempotent and a sharded sweep
//!   merges to exactly the unsharded one.
//! * `merge` writes the table (one row per result), a summary across seeds (mean, sd, min, max
//!   per scenario, controller and metric) and one figure per scenario (each metric per seed,
//!   fixed point beside the f64 reference).

use super::scenario::ControllerKind;
use super::{Report, SimOpts, run_loaded, scenario};
use crate::trace::Param;
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
    let mut h = fnv(text.as_bytes(), 0xCBF2_9CE4_8422_2325);
    h = fnv(controller.name().as_bytes(), h);
    h = fnv(&seed.to_le_bytes(), h);
    for p in set {
        h = fnv(format!("{}={};", p.key, p.value).as_bytes(), h);
    }
    format!("{name}-{h:016x}.json")
}

/// Runs shard `shard` of the sweep, writing one result file per job into `dir`. Returns the
/// files written, or the first error (exit 2).
pub fn run(
    jobs: &[Job],
    shard: (usize, usize),
    dir: &Path,
    set: &[Param],
) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    // Load (and check) every scenario first: a bad file fails the shard before any run.
    let mine: Vec<&Job> = jobs
        .iter()
        .enumerate()
        .filter(|(k, _)| k % shard.1 == shard.0)
        .map(|(_, j)| j)
        .collect();
    let mut loaded = Vec::new();
    for j in &mine {
        let text = std::fs::read_to_string(&j.file)
            .map_err(|e| format!("{}: cannot read: {e}", j.file.display()))?;
        let l = scenario::parse(&j.file, &text).map_err(|e| e.to_string())?;
        loaded.push((*j, text, l));
    }
    loaded
        .par_iter()
        .map(|(j, text, l)| {
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
                "report": strip_timing(&r),
            });
            let body = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
            let tmp = crate::output::temp_beside(&p);
            std::fs::write(&tmp, body).map_err(|e| format!("{}: {e}", tmp.display()))?;
            crate::output::commit_temp(&tmp, &p).map_err(|e| e.to_string())?;
            Ok(p)
        })
        .collect()
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
const METRICS: [Metric; 9] = [
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
pub const MERGE_HEADER: &str = "scenario,controller,seed,hash,goodput_bps,jain,jain_mean_bps,queue_found_p95_bytes,queue_found_p99_bytes,rtt_p99_ns,flows_finished,slowdown_p99_first_bucket,violations";

/// The summary table's header (`merge --summary`).
pub const SUMMARY_HEADER: &str = "scenario,controller,metric,seeds,mean,sd,min,max";

/// One result file of a sweep: which run it was and its metrics (in [`METRICS`] order; `None`
/// where the run has no such figure, e.g. no sized flow finished).
#[derive(Debug, Clone)]
pub struct Merged {
    /// Scenario name.
    pub scenario: String,
    /// `fixed` or `reference`.
    pub controller: String,
    /// Seed.
    pub seed: u64,
    /// The result file's hash.
    pub hash: String,
    /// Metric values.
    values: Vec<Option<f64>>,
}

/// Reads every result file under `dirs`: one entry per distinct hash, sorted by scenario,
/// controller, seed (so merging is idempotent and shards merge to the unsharded sweep).
pub fn merge(dirs: &[PathBuf]) -> Result<Vec<Merged>, String> {
    let mut rows = std::collections::BTreeMap::new();
    for d in dirs {
        let rd = std::fs::read_dir(d).map_err(|e| format!("{}: cannot read: {e}", d.display()))?;
        for e in rd {
            let p = e.map_err(|e| e.to_string())?.path();
            if p.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let hash = p
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| s.rsplit('-').next())
                .unwrap_or("")
                .to_string();
            let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            let v: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| format!("{}: not a sweep result: {e}", p.display()))?;
            let r = &v["report"];
            if !r.is_object() {
                return Err(format!("{}: not a sweep result (no report)", p.display()));
            }
            let m = Merged {
                scenario: r["scenario"].as_str().unwrap_or("").to_string(),
                controller: v["controller"].as_str().unwrap_or("").to_string(),
                seed: v["seed"].as_u64().unwrap_or(0),
                hash,
                values: METRICS.iter().map(|m| (m.get)(r)).collect(),
            };
            let key = (
                m.scenario.clone(),
                m.controller.clone(),
                m.seed,
                m.hash.clone(),
            );
            rows.insert(key, m);
        }
    }
    Ok(rows.into_values().collect())
}

/// The merged table: one CSV row per result.
pub fn table(rows: &[Merged]) -> String {
    let mut s = String::from(MERGE_HEADER);
    s.push('\n');
    for m in rows {
        s.push_str(&format!(
            "{},{},{},{}",
            m.scenario, m.controller, m.seed, m.hash
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

/// Groups the rows by (scenario, controller), in row order.
fn groups(rows: &[Merged]) -> Vec<((&str, &str), Vec<&Merged>)> {
    let mut g: Vec<((&str, &str), Vec<&Merged>)> = Vec::new();
    for m in rows {
        let k = (m.scenario.as_str(), m.controller.as_str());
        match g.last_mut() {
            Some((last, v)) if *last == k => v.push(m),
            _ => g.push((k, vec![m])),
        }
    }
    g
}

/// `merge --summary`: per scenario, controller and metric, the seeds it has a value for and
/// their mean, sample standard deviation (empty for one seed), minimum and maximum.
pub fn summary(rows: &[Merged]) -> String {
    let mut s = String::from(SUMMARY_HEADER);
    s.push('\n');
    for ((sc, ctrl), ms) in groups(rows) {
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
                "{sc},{ctrl},{},{},{mean},{sd},{lo},{hi}\n",
                metric.column,
                xs.len()
            ));
        }
    }
    s
}

/// `merge --plot DIR`: one figure per scenario, `DIR/<scenario>.sweep.svg`, one panel per metric
/// that has a non-zero value, the value per seed with one series per controller (fixed point beside the
/// f64 reference). Returns the files written.
pub fn plot(rows: &[Merged], dir: &Path) -> Result<Vec<PathBuf>, String> {
    use crate::plot::{FIXED, OTHER, Panel, REF, Series, draw};
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let all = groups(rows);
    let mut files = Vec::new();
    // The groups are in row order, so one scenario's controllers are adjacent.
    for g in all.chunk_by(|a, b| a.0.0 == b.0.0) {
        let sc = g[0].0.0;
        let mut panels = Vec::new();
        for (k, metric) in METRICS.iter().enumerate() {
            if metric.column == "violations" {
                continue;
            }
            let series: Vec<Series> = g
                .iter()
                .map(|((_, ctrl), ms)| Series {
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
            // A metric that is zero in every run (no sized flow in a long-flow scenario) says
            // nothing as a panel.
            if series.iter().any(|s| s.points.iter().any(|p| p.1 != 0.0)) {
                panels.push(Panel {
                    markers: true,
                    ..Panel::new(metric.label, series)
                });
            }
        }
        let path = dir.join(format!("{sc}.sweep.svg"));
        draw(
            &path,
            &format!("{sc}: per seed, fixed point and f64 reference"),
            "seed",
            &panels,
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
        files.push(path);
    }
    Ok(files)
}

/// `sim-host merge DIR... [--out FILE] [--summary FILE] [--plot DIR]`: the table to `out` or
/// standard output, the summary and figures when asked. Exit 0, or 2 (one line on stderr naming
/// the file) when a result cannot be read or an output cannot be written.
pub fn merge_cli(
    dirs: &[PathBuf],
    out: Option<&Path>,
    summary_to: Option<&Path>,
    plot_to: Option<&Path>,
) -> i32 {
    let write = |p: &Path, text: String| {
        std::fs::write(p, text).map_err(|e| format!("{}: cannot write: {e}", p.display()))
    };
    let run = || -> Result<(), String> {
        let rows = merge(dirs)?;
        if let Some(p) = summary_to {
            write(p, summary(&rows))?;
        }
        if let Some(d) = plot_to {
            for f in plot(&rows, d)? {
                eprintln!("wrote {}", f.display());
            }
        }
        match out {
            Some(p) => write(p, table(&rows)),
            None => {
                crate::out!("{}", table(&rows));
                Ok(())
            }
        }
    };
    match run() {
        // A closed pipe (`| head`) is not worth a message, but the exit code says it.
        Ok(()) if crate::output::stdout_failed() => crate::replay::EXIT_INPUT,
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            crate::replay::EXIT_INPUT
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_and_seeds_parse() {
        assert_eq!(parse_shard("1/4").unwrap(), (1, 4));
        assert!(parse_shard("4/4").is_err());
        assert!(parse_shard("1").is_err());
        assert_eq!(parse_seeds("1..4,9").unwrap(), vec![1, 2, 3, 9]);
        assert!(parse_seeds("4..1").is_err());
    }
}
