//! Sweeps: scenarios × controllers × seeds, split into shards for a batch scheduler's job array
//! (`sim-host sim A.toml B.toml --seeds 1..8 --shard I/N --results DIR`), and `sim-host merge`
//! combining the result files into one table.
//!
//! * The job list is the same on every shard (scenarios in the order given, then controllers,
//!   then seeds); shard `I` of `N` runs the jobs whose index is `I` modulo `N`. Each runs on its
//!   own core (rayon).
//! * Each result is a self-describing JSON file (the report, the scenario's text, controller,
//!   seed and `--set` parameters) named by a hash of all of these: rerunning a job rewrites the
//!   same file, and `merge` keeps one row per hash, so merging is idempotent and a sharded sweep
//!   merges to exactly the unsharded one.

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

/// The merged table's header.
pub const MERGE_HEADER: &str = "scenario,controller,seed,hash,goodput_bps,jain,queue_found_p95_bytes,queue_found_p99_bytes,rtt_p99_ns,flows_finished,slowdown_p99_first_bucket,violations";

/// `sim-host merge DIR...`: one row per distinct result file (by name = hash), sorted by
/// scenario, controller, seed. Returns the CSV text.
pub fn merge(dirs: &[PathBuf]) -> Result<String, String> {
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
            let num = |x: &serde_json::Value| match x.as_f64() {
                Some(f) => format!("{f}"),
                None => String::new(),
            };
            let key = (
                r["scenario"].as_str().unwrap_or("").to_string(),
                v["controller"].as_str().unwrap_or("").to_string(),
                v["seed"].as_u64().unwrap_or(0),
                hash.clone(),
            );
            let row = format!(
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                key.0,
                key.1,
                key.2,
                hash,
                num(&r["goodput_bps"]),
                num(&r["jain"]),
                num(&r["queue_seen_bytes"][1]),
                num(&r["queue_seen_bytes"][2]),
                num(&r["rtt_ns"][2]),
                num(&r["flows_finished"]),
                num(&r["slowdown"][0]["p99"]),
                r["violations"].as_array().map_or(0, Vec::len)
            );
            rows.insert(key, row);
        }
    }
    let mut s = String::from(MERGE_HEADER);
    s.push('\n');
    for r in rows.values() {
        s.push_str(r);
        s.push('\n');
    }
    Ok(s)
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
