//! `sim-host slowdown`: FCT slowdown by flow size, binned as the HPCC authors'
//! `analysis/fct_analysis.py` bins it (alibaba-edu/High-Precision-Congestion-Control at
//! 9f4be2a): finished flows sorted by size, cut into 20 bins of 5 % of the flows each, and per
//! bin the size range and the p50/p95/p99 slowdown. The inputs are `sim --out`'s per-flow CSV
//! (`NAME_flows.csv`) or an ns-3 `fct.txt` (ours from `--ns3-out`, or ns-3's own); inputs
//! with the same label are merged into one series (seeds of one controller), and every series
//! is a line of the Fig. 10/11-style plot. docs/sim.md, "Slowdown analysis".

use cc_output::output::{commit_temp, refuse_inputs, temp_beside};
use cc_output::plot::{LEGEND_PX, PALETTE, draw_legend};
use cc_trace::InputError;
use plotters::prelude::*;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Bins per series: 5 % of the flows each (`fct_analysis.py`'s default `-s 5`).
pub const BINS: usize = 20;
/// A bin's percentiles rest on fewer flows than this: flagged (docs/sim.md, "Slowdown analysis").
pub const FEW_FLOWS: usize = 100;
/// The header of `sim --out`'s per-flow CSV.
pub const FLOWS_HEADER: &str =
    "flow,group,src,dst,size_bytes,start_ns,status,bytes_acked,fct_ns,ideal_fct_ns,slowdown";

/// How one sized flow ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// Finished.
    Finished {
        /// Its flow completion time, ns.
        fct_ns: f64,
        /// The slowdown's denominator (our ideal FCT, or ns-3's standalone FCT), ns.
        ideal_ns: f64,
    },
    /// Started and not finished at the end of the run.
    Unfinished,
    /// Stopped by its group's `stop_ns` before it had sent every byte.
    Stopped,
}

/// One sized flow of an input.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flow {
    /// Bytes.
    pub size: u64,
    /// Start, ns.
    pub start_ns: u64,
    /// How it ended.
    pub outcome: Outcome,
}

/// The format of an input file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `sim --out`'s `NAME_flows.csv`: every flow, finished or not; the denominator is our ideal
    /// FCT (`ideal_fct_ns`).
    FlowsCsv,
    /// ns-3's `fct.txt`: finished flows only; the denominator is ns-3's standalone FCT.
    Ns3Fct,
}

/// One input file, read whole.
#[derive(Debug, Clone)]
pub struct Input {
    /// The file.
    pub path: PathBuf,
    /// Its format.
    pub format: Format,
    /// Its sized flows (after `--dport`).
    pub flows: Vec<Flow>,
    /// Long flows (no size): not in the analysis, counted.
    pub long: usize,
    /// fct.txt lines left out by `--dport`.
    pub other_dport: usize,
}

fn num<T: std::str::FromStr>(p: &Path, line: u64, what: &str, v: &str) -> Result<T, InputError> {
    v.parse::<T>()
        .map_err(|_| InputError::at(p, line, format!("{what}: cannot read {v:?} as a number")))
}

fn ns(p: &Path, line: u64, what: &str, v: &str) -> Result<f64, InputError> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(InputError::at(
            p,
            line,
            format!("{what}: {v:?} is not a non-negative number of ns"),
        )),
    }
}

/// Reads `p`: a per-flow CSV when its first line is [`FLOWS_HEADER`], an ns-3 `fct.txt`
/// otherwise. `dport`: keep only fct.txt lines with this destination port (refused for a
/// per-flow CSV, which has no ports).
pub fn read(p: &Path, dport: Option<u16>) -> Result<Input, InputError> {
    let text =
        std::fs::read_to_string(p).map_err(|e| InputError::file(p, format!("cannot read: {e}")))?;
    let format = if text.lines().next().map(str::trim_end) == Some(FLOWS_HEADER) {
        Format::FlowsCsv
    } else {
        Format::Ns3Fct
    };
    let mut inp = Input {
        path: p.to_path_buf(),
        format,
        flows: Vec::new(),
        long: 0,
        other_dport: 0,
    };
    match format {
        Format::FlowsCsv => {
            if dport.is_some() {
                return Err(InputError::file(
                    p,
                    "--dport selects fct.txt lines; a per-flow CSV has no ports",
                ));
            }
            for (i, l) in text.lines().enumerate().skip(1) {
                let ln = i as u64 + 1;
                let f: Vec<&str> = l.trim_end().split(',').collect();
                if f.len() != 11 {
                    return Err(InputError::at(
                        p,
                        ln,
                        format!("{} fields, the header has 11", f.len()),
                    ));
                }
                let (size, start, status) = (f[4], f[5], f[6]);
                if size.is_empty() {
                    // A long flow (status long or stopped): no size, no FCT.
                    if status != "long" && status != "stopped" {
                        return Err(InputError::at(
                            p,
                            ln,
                            format!("status {status:?} without a size_bytes"),
                        ));
                    }
                    inp.long += 1;
                    continue;
                }
                let size: u64 = num(p, ln, "size_bytes", size)?;
                let start_ns: u64 = num(p, ln, "start_ns", start)?;
                let outcome = match status {
                    "finished" => {
                        let fct_ns = ns(p, ln, "fct_ns", f[8])?;
                        let ideal_ns = ns(p, ln, "ideal_fct_ns", f[9])?;
                        if ideal_ns <= 0.0 {
                            return Err(InputError::at(
                                p,
                                ln,
                                "ideal_fct_ns is 0: the slowdown is undefined",
                            ));
                        }
                        Outcome::Finished { fct_ns, ideal_ns }
                    }
                    "unfinished" => Outcome::Unfinished,
                    "stopped" => Outcome::Stopped,
                    s => {
                        return Err(InputError::at(
                            p,
                            ln,
                            format!(
                                "status {s:?} of a sized flow: finished, unfinished or stopped"
                            ),
                        ));
                    }
                };
                inp.flows.push(Flow {
                    size,
                    start_ns,
                    outcome,
                });
            }
        }
        Format::Ns3Fct => {
            for (i, l) in text.lines().enumerate() {
                let ln = i as u64 + 1;
                let t: Vec<&str> = l.split_whitespace().collect();
                if t.len() != 8 {
                    return Err(InputError::at(
                        p,
                        ln,
                        format!(
                            "{} fields: an fct.txt line is `sip dip sport dport size start_ns \
                             fct_ns standalone_fct_ns` (8), a per-flow CSV starts with `{}`",
                            t.len(),
                            FLOWS_HEADER
                        ),
                    ));
                }
                for (k, what) in [(0, "sip"), (1, "dip")] {
                    if u32::from_str_radix(t[k], 16).is_err() {
                        return Err(InputError::at(
                            p,
                            ln,
                            format!("{what}: {:?} is not a 32-bit hex address", t[k]),
                        ));
                    }
                }
                let _sport: u16 = num(p, ln, "sport", t[2])?;
                let port: u16 = num(p, ln, "dport", t[3])?;
                let size: u64 = num(p, ln, "size", t[4])?;
                let start_ns: u64 = num(p, ln, "start_ns", t[5])?;
                let fct: u64 = num(p, ln, "fct_ns", t[6])?;
                let standalone: u64 = num(p, ln, "standalone_fct_ns", t[7])?;
                if standalone == 0 {
                    return Err(InputError::at(
                        p,
                        ln,
                        "standalone_fct_ns is 0: the slowdown is undefined",
                    ));
                }
                if dport.is_some_and(|d| d != port) {
                    inp.other_dport += 1;
                    continue;
                }
                inp.flows.push(Flow {
                    size,
                    start_ns,
                    outcome: Outcome::Finished {
                        fct_ns: fct as f64,
                        ideal_ns: standalone as f64,
                    },
                });
            }
        }
    }
    Ok(inp)
}

/// An input path: a file as given; a directory (`sim --out` / `--ns3-out`) gives its one
/// `*_flows.csv`, or its `fct.txt` when it has no per-flow CSV.
pub fn resolve(p: &Path) -> Result<PathBuf, InputError> {
    if !p.is_dir() {
        return Ok(p.to_path_buf());
    }
    let rd = std::fs::read_dir(p).map_err(|e| InputError::file(p, format!("cannot read: {e}")))?;
    let mut csvs: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|f| {
            f.is_file()
                && f.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with("_flows.csv") && !n.starts_with('.'))
        })
        .collect();
    csvs.sort();
    match csvs.len() {
        1 => Ok(csvs.remove(0)),
        0 if p.join("fct.txt").is_file() => Ok(p.join("fct.txt")),
        0 => Err(InputError::file(
            p,
            "a directory without a *_flows.csv (sim --out) or an fct.txt (sim --ns3-out)",
        )),
        _ => Err(InputError::file(
            p,
            format!(
                "{} per-flow CSVs ({}): name the file",
                csvs.len(),
                csvs.iter()
                    .filter_map(|f| f.file_name().and_then(|n| n.to_str()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// One bin: 5 % of a series' finished flows, by size.
#[derive(Debug, Clone, PartialEq)]
pub struct Bin {
    /// The fraction of the flows below it (0, 0.05, … 0.95).
    pub from: f64,
    /// Flows in it.
    pub flows: usize,
    /// Its smallest and largest size, bytes (`None` when empty).
    pub size: Option<(u64, u64)>,
    /// p50, p95, p99 slowdown (`None` when empty).
    pub pct: Option<[f64; 3]>,
}

impl Bin {
    /// Its percentiles rest on fewer than [`FEW_FLOWS`] flows.
    pub fn few(&self) -> bool {
        self.flows < FEW_FLOWS
    }
}

/// Counts of a series' flows that are not in its bins, and its realised load.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Counts {
    /// Sized flows read.
    pub sized: usize,
    /// Finished flows in the bins.
    pub finished: usize,
    /// Flows that started before the warm-up ended (any outcome), left out.
    pub warmup: usize,
    /// Unfinished flows started after the warm-up (per-flow CSV only; fct.txt has none).
    pub unfinished: usize,
    /// Stopped flows started after the warm-up.
    pub stopped: usize,
    /// Long flows (no size).
    pub long: usize,
    /// fct.txt lines of another destination port (`--dport`).
    pub other_dport: usize,
    /// Finished flows whose slowdown was below 1 and counted as 1 (`fct_analysis.py`'s rule).
    pub clamped: usize,
    /// Bytes of the sized flows (any outcome) started in the window.
    pub window_bytes: u64,
    /// The window: from the warm-up's end to the last start (or `--end-ns`), ns.
    pub window_ns: (u64, u64),
    /// `8·window_bytes / (runs · window · capacity)`, with `--capacity-bps`; runs = the
    /// series' inputs.
    pub load: Option<f64>,
}

/// One series: a label and its bins.
#[derive(Debug, Clone)]
pub struct Series {
    /// Its label (legend and CSV).
    pub label: String,
    /// Its input files.
    pub files: Vec<PathBuf>,
    /// What is not in the bins.
    pub counts: Counts,
    /// The 20 bins.
    pub bins: Vec<Bin>,
    /// Per input file, in order: the run it came from ([`RunInfo::describe`]) or why that is
    /// not known.
    pub runs: Vec<String>,
    /// What the report must say about the series' inputs taken together: runs of different
    /// scenarios or controllers pooled, the same run twice, or that this cannot be told.
    pub notes: Vec<String>,
}

/// The run an input came from, as the `sim --out` summary beside it says
/// (`NAME_summary.json` beside `NAME_flows.csv`; for an fct.txt, the one `*_summary.json` in its
/// directory, which `--out` and `--ns3-out` into one directory give).
#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    /// The summary file.
    pub summary: PathBuf,
    /// The scenario's name.
    pub scenario: String,
    /// Its algorithm.
    pub algorithm: String,
    /// `fixed` or `reference`.
    pub controller: String,
    /// The seed.
    pub seed: u64,
    /// Every parameter in force, `KEY=VALUE` (a scenario run with other parameters is another
    /// experiment).
    pub params: Vec<String>,
}

impl RunInfo {
    /// `scenario S (algorithm), controller C, seed N (SUMMARY)`.
    pub fn describe(&self) -> String {
        format!(
            "scenario {} ({}), controller {}, seed {} ({})",
            self.scenario,
            self.algorithm,
            self.controller,
            self.seed,
            self.summary.display()
        )
    }
}

/// The summary beside `inp` (see [`RunInfo`]), checked against it: its count of finished flows
/// must be the file's. `Err`: why the run is not known.
pub fn run_info(inp: &Input) -> Result<RunInfo, String> {
    let dir = inp
        .path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    };
    let summary = match inp.format {
        Format::FlowsCsv => {
            let name = inp
                .path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix("_flows.csv"))
                .ok_or("not named NAME_flows.csv, so no NAME_summary.json can be beside it")?;
            let p = dir.join(format!("{name}_summary.json"));
            if !p.is_file() {
                return Err(format!("no {} beside it", p.display()));
            }
            p
        }
        Format::Ns3Fct => {
            let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map_err(|e| format!("{}: cannot read: {e}", dir.display()))?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|f| {
                    f.is_file()
                        && f.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.ends_with("_summary.json"))
                })
                .collect();
            found.sort();
            match found.len() {
                1 => found.remove(0),
                0 => return Err("no sim --out summary (*_summary.json) beside it".into()),
                n => {
                    return Err(format!(
                        "{n} sim --out summaries beside it ({}): which is its run is not known",
                        found
                            .iter()
                            .map(|f| f.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
        }
    };
    let not_one = |what: &str| format!("{}: not a sim --out summary ({what})", summary.display());
    let text = std::fs::read_to_string(&summary)
        .map_err(|e| format!("{}: cannot read: {e}", summary.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| not_one(&e.to_string()))?;
    let string = |k: &str| {
        v[k].as_str()
            .map(str::to_string)
            .ok_or_else(|| not_one(&format!("no string `{k}`")))
    };
    let params = v["params"]
        .as_array()
        .and_then(|a| {
            a.iter()
                .map(|x| Some(format!("{}={}", x["key"].as_str()?, x["value"].as_str()?)))
                .collect::<Option<Vec<String>>>()
        })
        .ok_or_else(|| not_one("no `params` list"))?;
    let info = RunInfo {
        scenario: string("scenario")?,
        algorithm: string("algorithm")?,
        controller: string("controller")?,
        seed: v["seed"].as_u64().ok_or_else(|| not_one("no `seed`"))?,
        params,
        summary: summary.clone(),
    };
    let finished = v["flows_finished"]
        .as_u64()
        .ok_or_else(|| not_one("no `flows_finished`"))?;
    // fct.txt holds the finished flows only (some left out by --dport).
    let here = match inp.format {
        Format::FlowsCsv => inp
            .flows
            .iter()
            .filter(|f| matches!(f.outcome, Outcome::Finished { .. }))
            .count(),
        Format::Ns3Fct => inp.flows.len() + inp.other_dport,
    } as u64;
    if here != finished {
        return Err(format!(
            "{} says {finished} flows finished, the file has {here}: it is another run's",
            summary.display()
        ));
    }
    Ok(info)
}

/// What the inputs of one series are, taken together (their runs, by [`run_info`]): the notes
/// of [`Series::notes`]. Runs of different scenarios (name, algorithm or parameters) or of
/// different controllers pooled, or inputs whose run is not known.
pub fn pooled_runs(inputs: &[&Input], runs: &[Result<RunInfo, String>]) -> Vec<String> {
    let mut notes = Vec::new();
    if inputs.len() < 2 {
        return notes;
    }
    let unknown: Vec<String> = inputs
        .iter()
        .zip(runs)
        .filter_map(|(i, r)| {
            r.as_ref()
                .err()
                .map(|e| format!("{}: {e}", i.path.display()))
        })
        .collect();
    if !unknown.is_empty() {
        notes.push(format!(
            "cannot tell whether its {} inputs are runs of one scenario and controller: {}",
            inputs.len(),
            unknown.join("; ")
        ));
    }
    let known: Vec<(&Input, &RunInfo)> = inputs
        .iter()
        .zip(runs)
        .filter_map(|(i, r)| r.as_ref().ok().map(|r| (*i, r)))
        .collect();
    // Groups of files by a property, in order of first appearance.
    let groups = |key: &dyn Fn(&RunInfo) -> String| -> Vec<(String, Vec<String>)> {
        let mut g: Vec<(String, Vec<String>)> = Vec::new();
        for (i, r) in &known {
            let k = key(r);
            let f = i.path.display().to_string();
            match g.iter_mut().find(|(x, _)| *x == k) {
                Some((_, v)) => v.push(f),
                None => g.push((k, vec![f])),
            }
        }
        g
    };
    let list = |g: &[(String, Vec<String>)]| -> String {
        g.iter()
            .map(|(k, f)| format!("{k} ({})", f.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let by_name = groups(&|r: &RunInfo| format!("{} ({})", r.scenario, r.algorithm));
    let by_scenario =
        groups(&|r: &RunInfo| format!("{} ({}) [{}]", r.scenario, r.algorithm, r.params.join(" ")));
    if by_name.len() > 1 {
        notes.push(format!(
            "pools runs of different scenarios: {}",
            list(&by_name)
        ));
    } else if by_scenario.len() > 1 {
        // One scenario name, other parameters in force: each run's values of the keys that
        // differ.
        let key = |kv: &str| kv.split('=').next().unwrap_or(kv).to_string();
        let mut keys: Vec<String> = known
            .iter()
            .flat_map(|(_, r)| r.params.iter())
            .filter(|kv| !known.iter().all(|(_, r)| r.params.contains(kv)))
            .map(|kv| key(kv))
            .collect();
        keys.sort();
        keys.dedup();
        let differing = groups(&|r: &RunInfo| {
            keys.iter()
                .map(|k| {
                    r.params
                        .iter()
                        .find(|kv| key(kv) == *k)
                        .cloned()
                        .unwrap_or_else(|| format!("{k} not in force"))
                })
                .collect::<Vec<_>>()
                .join(" ")
        });
        notes.push(format!(
            "pools runs of scenario {} with different parameters in force: {}",
            known[0].1.scenario,
            list(&differing)
        ));
    }
    let by_controller = groups(&|r: &RunInfo| format!("controller {}", r.controller));
    if by_controller.len() > 1 {
        notes.push(format!(
            "pools runs of different controllers: {}",
            list(&by_controller)
        ));
    }
    let by_run = groups(&|r: &RunInfo| {
        format!(
            "scenario {} [{}], controller {}, seed {}",
            r.scenario,
            r.params.join(" "),
            r.controller,
            r.seed
        )
    });
    for (k, f) in &by_run {
        if f.len() > 1 {
            notes.push(format!(
                "{} are runs of one scenario, controller and seed ({}): one run twice? Its \
                 flows would count twice",
                f.join(" and "),
                k.split(" [").next().unwrap_or(k)
            ));
        }
    }
    notes
}

/// `fct_analysis.py`'s percentile: `a[int(len(a)·p)]` of the sorted list.
pub fn pctl(sorted: &[f64], p: f64) -> Option<f64> {
    let i = ((sorted.len() as f64 * p) as usize).min(sorted.len().checked_sub(1)?);
    sorted.get(i).copied()
}

/// What the analysis is asked for.
#[derive(Debug, Clone, Copy, Default)]
pub struct Opts {
    /// Flows that start before this are left out, ns.
    pub warmup_ns: u64,
    /// The end of the load window, ns [default: the last start].
    pub end_ns: Option<u64>,
    /// Host link rate × hosts, b/s: turns the window's bytes into a load.
    pub capacity_bps: Option<f64>,
    /// fct.txt: only this destination port (`--dport`).
    pub dport: Option<u16>,
}

/// Bins the flows of `inputs` (one series).
pub fn analyse(label: &str, inputs: &[&Input], o: &Opts) -> Series {
    let mut c = Counts::default();
    let mut fin: Vec<(u64, f64)> = Vec::new();
    let mut last_start = 0;
    for inp in inputs {
        c.long += inp.long;
        c.other_dport += inp.other_dport;
        c.sized += inp.flows.len();
        for f in &inp.flows {
            if f.start_ns < o.warmup_ns {
                c.warmup += 1;
                continue;
            }
            last_start = last_start.max(f.start_ns);
            match f.outcome {
                Outcome::Finished { fct_ns, ideal_ns } => {
                    let s = fct_ns / ideal_ns;
                    if s < 1.0 {
                        c.clamped += 1;
                    }
                    fin.push((f.size, s.max(1.0)));
                }
                Outcome::Unfinished => c.unfinished += 1,
                Outcome::Stopped => c.stopped += 1,
            }
        }
    }
    let end = o.end_ns.unwrap_or(last_start);
    c.window_ns = (o.warmup_ns, end);
    c.window_bytes = inputs
        .iter()
        .flat_map(|i| &i.flows)
        .filter(|f| f.start_ns >= o.warmup_ns && f.start_ns <= end)
        .map(|f| f.size)
        .sum();
    c.load = o.capacity_bps.filter(|_| end > o.warmup_ns).map(|cap| {
        // Each input is one run of the network: merged runs share the capacity k times.
        let runs = inputs.len().max(1) as f64;
        c.window_bytes as f64 * 8.0 / ((end - o.warmup_ns) as f64 * 1e-9 * cap * runs)
    });
    c.finished = fin.len();
    // By size; equal sizes by slowdown (theirs: `sort -n -k 2`, ties by the line's text,
    // which starts with the slowdown).
    fin.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let n = fin.len();
    let bins = (0..BINS)
        .map(|i| {
            // fct_analysis.py: l = i·n/100, r = (i + step)·n/100 in integers, i = 0, 5, … 95.
            let (l, r) = (i * n / BINS, (i + 1) * n / BINS);
            let d = &fin[l..r];
            let mut s: Vec<f64> = d.iter().map(|x| x.1).collect();
            s.sort_by(f64::total_cmp);
            let pct = match (pctl(&s, 0.5), pctl(&s, 0.95), pctl(&s, 0.99)) {
                (Some(a), Some(b), Some(c)) => Some([a, b, c]),
                _ => None,
            };
            Bin {
                from: i as f64 / BINS as f64,
                flows: d.len(),
                size: d.first().zip(d.last()).map(|(a, b)| (a.0, b.0)),
                pct,
            }
        })
        .collect();
    Series {
        label: label.to_string(),
        files: inputs.iter().map(|i| i.path.clone()).collect(),
        counts: c,
        bins,
        runs: Vec::new(),
        notes: Vec::new(),
    }
}

/// The options in force, for the report and the CSV's head.
fn params(o: &Opts) -> String {
    format!(
        "warmup_ns {}, end_ns {}, capacity_bps {}, dport {}",
        o.warmup_ns,
        o.end_ns.map_or("last start".into(), |e| e.to_string()),
        o.capacity_bps
            .map_or("not given".into(), |c| format!("{c:.0}")),
        o.dport.map_or("any".into(), |d| d.to_string())
    )
}

/// The report: per series, what went in and what was left out, and every bin with few flows.
pub fn text(series: &[Series], o: &Opts) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "slowdown by flow size: {BINS} bins of 5 % of the finished flows (as fct_analysis.py); {}",
        params(o)
    );
    for r in series {
        let c = &r.counts;
        let files: Vec<String> = r.files.iter().map(|f| f.display().to_string()).collect();
        let _ = writeln!(s, "{}: {}", r.label, files.join(", "));
        for (f, run) in files.iter().zip(&r.runs) {
            let _ = writeln!(s, "  {f}: {run}");
        }
        for n in &r.notes {
            let _ = writeln!(s, "  note: {n}");
        }
        let _ = writeln!(
            s,
            "  {} sized flows: {} finished in the bins ({} slowdowns below 1 counted as 1), \
             {} started in the warm-up (left out), {} unfinished, {} stopped; {} long flows \
             (no size); {} lines of another --dport",
            c.sized,
            c.finished,
            c.clamped,
            c.warmup,
            c.unfinished,
            c.stopped,
            c.long,
            c.other_dport
        );
        let load = match (c.load, o.capacity_bps) {
            (Some(l), _) => format!("realised load {l:.3}"),
            (None, Some(_)) => "no load: the window is empty".into(),
            (None, None) => "no load without --capacity-bps".into(),
        };
        let _ = writeln!(
            s,
            "  window {}..{} ns: {} B started; {load}",
            c.window_ns.0, c.window_ns.1, c.window_bytes
        );
        let _ = writeln!(
            s,
            "  from   flows   size (B)              p50      p95      p99"
        );
        for b in &r.bins {
            let size = b
                .size
                .map_or(String::from("-"), |(a, z)| format!("{a}..{z}"));
            let pct = b
                .pct
                .map_or(String::from("       -        -        -"), |p| {
                    format!("{:>8.3} {:>8.3} {:>8.3}", p[0], p[1], p[2])
                });
            let few = if b.few() { "  (few flows)" } else { "" };
            let _ = writeln!(s, "  {:.2} {:>7}   {size:<20} {pct}{few}", b.from, b.flows);
        }
    }
    s
}

/// The warnings: bins under [`FEW_FLOWS`] flows, series without a finished flow.
pub fn warnings(series: &[Series]) -> Vec<String> {
    let mut w = Vec::new();
    for r in series {
        for n in &r.notes {
            w.push(format!("{}: {n}", r.label));
        }
        let few = r.bins.iter().filter(|b| b.few()).count();
        if few > 0 {
            w.push(format!(
                "{}: {few} of {BINS} bins rest on fewer than {FEW_FLOWS} flows ({} finished \
                 flows; {} are needed for every bin)",
                r.label,
                r.counts.finished,
                FEW_FLOWS * BINS
            ));
        }
    }
    w
}

/// The CSV: `#` lines with each series' counts, then one row per series and bin.
pub fn csv(series: &[Series], o: &Opts) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# sim-host slowdown: {}", params(o));
    for r in series {
        let c = &r.counts;
        let _ = writeln!(
            s,
            "# {}: sized {}, finished {}, clamped {}, warmup {}, unfinished {}, stopped {}, \
             long {}, other_dport {}, window_ns {}..{}, window_bytes {}, load {}",
            r.label,
            c.sized,
            c.finished,
            c.clamped,
            c.warmup,
            c.unfinished,
            c.stopped,
            c.long,
            c.other_dport,
            c.window_ns.0,
            c.window_ns.1,
            c.window_bytes,
            c.load.map_or(String::new(), |l| format!("{l:.4}"))
        );
        for (f, run) in r.files.iter().zip(&r.runs) {
            let _ = writeln!(s, "# {}: input {}: {run}", r.label, f.display());
        }
        for n in &r.notes {
            let _ = writeln!(s, "# {}: note: {n}", r.label);
        }
    }
    s.push_str(
        "series,bin,from_fraction,flows,size_min_bytes,size_max_bytes,p50,p95,p99,few_flows\n",
    );
    for r in series {
        for (i, b) in r.bins.iter().enumerate() {
            let (a, z) = b.size.map_or((String::new(), String::new()), |(a, z)| {
                (a.to_string(), z.to_string())
            });
            let p = b.pct.map_or(",,".into(), |p| {
                format!("{:.4},{:.4},{:.4}", p[0], p[1], p[2])
            });
            let _ = writeln!(
                s,
                "{},{i},{:.2},{},{a},{z},{p},{}",
                r.label,
                b.from,
                b.flows,
                b.few()
            );
        }
    }
    s
}

/// `1000` → `1K`, `2.5e6` → `2.5M`: flow sizes on the plot's axis.
pub fn size_label(v: f64) -> String {
    cc_output::plot::format_si(v)
        .replace('k', "K")
        .trim_end()
        .to_string()
}

/// The Fig. 10/11-style figure: three panels (p50, p95, p99 slowdown) against the bins'
/// largest flow size on a log axis, one line per series, legends above the panels.
pub fn plot(path: &Path, series: &[Series], title: &str) -> Result<(), String> {
    let tmp = temp_beside(path);
    match draw(&tmp, series, title) {
        Ok(()) => commit_temp(&tmp, path).map_err(|e| e.to_string()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(format!("{}: {e}", path.display()))
        }
    }
}

fn draw(path: &Path, series: &[Series], title: &str) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("cannot draw plot: {e}");
    let pts = |r: &Series, k: usize| -> Vec<(f64, f64)> {
        r.bins
            .iter()
            .filter_map(|b| Some((b.size?.1.max(1) as f64, b.pct?[k])))
            .collect()
    };
    let all: Vec<(f64, f64)> = series.iter().flat_map(|r| pts(r, 2)).collect();
    let lows: Vec<(f64, f64)> = series.iter().flat_map(|r| pts(r, 0)).collect();
    let x_lo = all.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x_hi = all.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    if !x_lo.is_finite() {
        return Err("no bin has a flow: nothing to plot".into());
    }
    // Whole decades around the sizes, so the axis reads 1K, 10K, 100K, …
    let x_lo = 10f64.powf(x_lo.log10().floor());
    let x_hi = 10f64.powf(x_hi.log10().ceil()).max(x_lo * 10.0);
    let root = SVGBackend::new(path, (1000, 1000)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root
        .titled(title, ("sans-serif", 20))
        .map_err(|e| err(&e))?;
    let areas = root.split_evenly((3, 1));
    for (k, (area, name)) in areas.iter().zip(["p50", "p95", "p99"]).enumerate() {
        let (legend, plot_area) = area.split_vertically(LEGEND_PX);
        let entries: Vec<(String, RGBColor)> = series
            .iter()
            .enumerate()
            .map(|(i, r)| (r.label.clone(), PALETTE[i % PALETTE.len()]))
            .collect();
        draw_legend(&legend, &entries)?;
        let y_hi = series
            .iter()
            .flat_map(|r| pts(r, k))
            .map(|p| p.1)
            .fold(1.0, f64::max);
        let y_lo = lows.iter().map(|p| p.1).fold(1.0, f64::min);
        let pad = ((y_hi - y_lo) * 0.05).max(0.05);
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(10)
            .margin_right(30) // room for the last decade's label
            .x_label_area_size(35)
            .y_label_area_size(70)
            .build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo - pad)..(y_hi + pad))
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("flow size (bytes; each point: the largest flow of a 5 % bin)")
            .y_desc(format!("{name} FCT slowdown"))
            .x_label_formatter(&|v| size_label(*v))
            .y_label_formatter(&|v| format!("{v:.1}"))
            .draw()
            .map_err(|e| err(&e))?;
        for (i, r) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let p = pts(r, k);
            chart
                .draw_series(LineSeries::new(p.iter().copied(), color.stroke_width(2)))
                .map_err(|e| err(&e))?;
            chart
                .draw_series(p.iter().map(|&xy| Circle::new(xy, 3, color.filled())))
                .map_err(|e| err(&e))?;
        }
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// `sim-host slowdown`: 0 the analysis was written, 2 a bad input, option or output (nothing
/// is written then) or a series without a finished flow after the warm-up.
pub fn cli(
    inputs: &[PathBuf],
    labels: &[String],
    o: &Opts,
    out: Option<&Path>,
    plot_to: Option<&Path>,
) -> i32 {
    match run(inputs, labels, o, out, plot_to) {
        Ok((text, warns)) => {
            cc_output::out!("{text}");
            for w in warns {
                eprintln!("warning: {w}");
            }
            if cc_output::output::stdout_failed() {
                2
            } else {
                0
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

fn run(
    inputs: &[PathBuf],
    labels: &[String],
    o: &Opts,
    out: Option<&Path>,
    plot_to: Option<&Path>,
) -> Result<(String, Vec<String>), String> {
    if !labels.is_empty() && labels.len() != inputs.len() {
        return Err(format!(
            "--label: {} labels for {} inputs (give one per input, or none)",
            labels.len(),
            inputs.len()
        ));
    }
    if let Some(e) = o.end_ns.filter(|&e| e <= o.warmup_ns) {
        return Err(format!(
            "--end-ns {e}: the load window ends at or before the warm-up's end ({} ns)",
            o.warmup_ns
        ));
    }
    if let (Some(a), Some(b)) = (out, plot_to)
        && cc_output::output::same_file(a, b)
    {
        return Err(format!("{}: --out and --plot name one file", a.display()));
    }
    let files: Vec<PathBuf> = inputs
        .iter()
        .map(|p| resolve(p))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let ins: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    for p in out.iter().chain(plot_to.iter()) {
        refuse_inputs(p, &ins).map_err(|e| e.to_string())?;
    }
    // One file given twice (also through a directory standing for it): its flows would count
    // twice, or a series would be compared with itself.
    for (j, b) in files.iter().enumerate() {
        if let Some(i) = files[..j]
            .iter()
            .position(|a| cc_output::output::same_file(a, b))
        {
            return Err(format!(
                "{}: given twice (input {} {} and input {} {}): its flows would count twice; \
                 give it once",
                b.display(),
                i + 1,
                inputs[i].display(),
                j + 1,
                inputs[j].display()
            ));
        }
    }
    let read: Vec<Input> = files
        .iter()
        .map(|p| read(p, o.dport))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    // Files with the same bytes: a copy, or one run twice.
    let digests: Vec<(u64, u64)> = files
        .iter()
        .map(|p| file_digest(p).map_err(|e| format!("{}: cannot read: {e}", p.display())))
        .collect::<Result<_, _>>()?;
    // Series in order of first appearance; inputs with one label are merged.
    let mut order: Vec<String> = Vec::new();
    let label_of = |i: usize| -> String {
        labels
            .get(i)
            .cloned()
            .unwrap_or_else(|| inputs[i].display().to_string())
    };
    for i in 0..inputs.len() {
        let l = label_of(i);
        if !order.contains(&l) {
            order.push(l);
        }
    }
    let mut identical_warnings = Vec::new();
    for j in 0..files.len() {
        for i in 0..j {
            if digests[i] != digests[j]
                || std::fs::read(&files[i]).ok() != std::fs::read(&files[j]).ok()
            {
                continue;
            }
            let (a, b) = (files[i].display(), files[j].display());
            if label_of(i) == label_of(j) {
                return Err(format!(
                    "{a} and {b} are identical: in series {} each flow would count twice; \
                     give one of them (a copy, one run twice, or runs whose flows came out the \
                     same, such as seeds of a scenario without randomness: one says all)",
                    label_of(i)
                ));
            }
            identical_warnings.push(format!(
                "{a} (series {}) and {b} (series {}) are identical: the two series show one run",
                label_of(i),
                label_of(j)
            ));
        }
    }
    let runs: Vec<Result<RunInfo, String>> = read.iter().map(run_info).collect();
    let mut series: Vec<Series> = Vec::new();
    for l in &order {
        let mine: Vec<usize> = (0..inputs.len()).filter(|&i| &label_of(i) == l).collect();
        // Two inputs of one series that one summary describes: one run, read twice (its
        // per-flow CSV and its fct.txt).
        for (n, &j) in mine.iter().enumerate() {
            if let Ok(b) = &runs[j]
                && let Some(&i) = mine[..n]
                    .iter()
                    .find(|&&i| runs[i].as_ref().is_ok_and(|a| a.summary == b.summary))
            {
                return Err(format!(
                    "{} and {} are one run ({}): in series {l} each finished flow would count \
                     twice; give one of them",
                    files[i].display(),
                    files[j].display(),
                    b.describe()
                ));
            }
        }
        let ins: Vec<&Input> = mine.iter().map(|&i| &read[i]).collect();
        let rs: Vec<Result<RunInfo, String>> = mine.iter().map(|&i| runs[i].clone()).collect();
        let mut r = analyse(l, &ins, o);
        r.notes = pooled_runs(&ins, &rs);
        r.runs = rs
            .iter()
            .map(|x| match x {
                Ok(info) => info.describe(),
                Err(why) => format!("run not known: {why}"),
            })
            .collect();
        series.push(r);
    }
    for r in &series {
        if r.counts.finished == 0 {
            let c = &r.counts;
            return Err(format!(
                "{}: no finished flow started after the warm-up ({} ns): nothing to bin \
                 ({} sized flows read: {} in the warm-up, {} unfinished, {} stopped; {} lines \
                 of another --dport)",
                r.label, o.warmup_ns, c.sized, c.warmup, c.unfinished, c.stopped, c.other_dport
            ));
        }
    }
    if let Some(p) = out {
        let tmp = temp_beside(p);
        if let Err(e) = std::fs::write(&tmp, csv(&series, o)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(format!("{}: cannot write: {e}", p.display()));
        }
        commit_temp(&tmp, p).map_err(|e| e.to_string())?;
    }
    if let Some(p) = plot_to {
        plot(
            p,
            &series,
            &format!(
                "FCT slowdown by flow size (bins of 5 % of the finished flows, warm-up {} ns)",
                o.warmup_ns
            ),
        )?;
    }
    let mut warns = identical_warnings;
    warns.extend(warnings(&series));
    Ok((text(&series, o), warns))
}

/// A file's length and FNV-1a 64 hash (to find identical inputs).
fn file_digest(p: &Path) -> std::io::Result<(u64, u64)> {
    use std::io::Read;
    let mut f = std::fs::File::open(p)?;
    let (mut len, mut h) = (0u64, 0xCBF2_9CE4_8422_2325u64);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok((len, h));
        }
        len += n as u64;
        for b in &buf[..n] {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01B3);
        }
    }
}

/// `slowdown --help`'s exit codes.
pub const SLOWDOWN_EXIT_CODES: &str = "Exit codes: 0 the analysis was written; 2 an unreadable or \
malformed input (file, line and what is wrong), a --label count other than the input count, \
--dport with a per-flow CSV, an output naming an input, a file given twice, identical files or \
one run's per-flow CSV and fct.txt in one series (each flow would count twice), --end-ns at or \
before --warmup-ns, or a series with no finished flow after the warm-up (nothing is written \
then). Each input's run is named from the sim --out summary beside it; a series pooling runs of \
different scenarios, parameters or controllers is said in a note and a warning.";

/// `sim-host slowdown`'s options.
#[derive(clap::Args)]
pub struct SlowdownArgs {
    /// Per-flow CSVs (`sim --out`) or ns-3 fct.txt files; inputs with one --label merge.
    #[arg(required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
    /// The series name of each input, in order (legend, CSV) [default: the path].
    #[arg(long, value_name = "NAME")]
    pub label: Vec<String>,
    /// Leave out flows that start before this time, ns.
    #[arg(long, value_name = "NS", default_value_t = 0)]
    pub warmup_ns: u64,
    /// The end of the load window, ns [default: the last flow start].
    #[arg(long, value_name = "NS")]
    pub end_ns: Option<u64>,
    /// Host link rate times hosts, b/s: reports the window's realised load.
    #[arg(long, value_name = "BPS")]
    pub capacity_bps: Option<f64>,
    /// fct.txt: keep only this destination port (100 normal, 200 incast, as fct_analysis.py -t).
    #[arg(long, value_name = "PORT")]
    pub dport: Option<u16>,
    /// Write the bins as CSV.
    #[arg(long, value_name = "FILE.csv")]
    pub out: Option<PathBuf>,
    /// Draw p50/p95/p99 slowdown against flow size (log axis), one line per series.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// `sim-host slowdown`: the options checked, then [`cli`].
pub fn cmd(a: SlowdownArgs) -> i32 {
    let SlowdownArgs {
        inputs,
        label,
        warmup_ns,
        end_ns,
        capacity_bps,
        dport,
        out,
        plot,
    } = a;

    if let Some(c) = capacity_bps.filter(|c| !(c.is_finite() && *c > 0.0)) {
        eprintln!("error: --capacity-bps {c}: a positive number of b/s");
        return crate::replay::EXIT_INPUT;
    }
    let o = Opts {
        warmup_ns,
        end_ns,
        capacity_bps,
        dport,
    };
    cli(&inputs, &label, &o, out.as_deref(), plot.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fin(size: u64, start_ns: u64, slowdown: f64) -> Flow {
        Flow {
            size,
            start_ns,
            outcome: Outcome::Finished {
                fct_ns: slowdown * 1000.0,
                ideal_ns: 1000.0,
            },
        }
    }

    fn input(flows: Vec<Flow>) -> Input {
        Input {
            path: PathBuf::from("t"),
            format: Format::FlowsCsv,
            flows,
            long: 0,
            other_dport: 0,
        }
    }

    /// 40 flows, sizes 1..=40 and slowdown = 1 + size/100: two flows per bin, `a[int(2·p)]`
    /// is the larger one for p95/p99 and also for p50 (int(1.0) = 1).
    #[test]
    fn bins_are_five_percent_of_the_flows_with_fct_analysis_percentiles() {
        let flows: Vec<Flow> = (1..=40)
            .rev()
            .map(|s| fin(s, 0, 1.0 + s as f64 / 100.0))
            .collect();
        let r = analyse("x", &[&input(flows)], &Opts::default());
        assert_eq!(r.bins.len(), 20);
        for (i, b) in r.bins.iter().enumerate() {
            let lo = 2 * i as u64 + 1;
            assert_eq!(b.flows, 2);
            assert_eq!(b.size, Some((lo, lo + 1)));
            let hi = 1.0 + (lo + 1) as f64 / 100.0;
            assert_eq!(b.pct, Some([hi, hi, hi]));
            assert!((b.from - i as f64 * 0.05).abs() < 1e-12);
            assert!(b.few());
        }
    }

    /// 2000 flows of one size, slowdowns 1.000 … 2.999 shuffled: 100 per bin; bin k holds
    /// the flows of rank 100k … 100k+99 (ties by slowdown), p50 is its 51st, p95 its 96th,
    /// p99 its 100th.
    #[test]
    fn percentiles_are_fct_analysis_indices_and_ties_sort_by_slowdown() {
        let flows: Vec<Flow> = (0..2000u64)
            .map(|i| fin(1000, 0, 1.0 + ((i * 7919) % 2000) as f64 / 1000.0))
            .collect();
        let r = analyse("x", &[&input(flows)], &Opts::default());
        for (k, b) in r.bins.iter().enumerate() {
            let base = 1.0 + (100 * k) as f64 / 1000.0;
            let p = b.pct.unwrap();
            assert!((p[0] - (base + 0.050)).abs() < 1e-9, "{k}: {p:?}");
            assert!((p[1] - (base + 0.095)).abs() < 1e-9, "{k}: {p:?}");
            assert!((p[2] - (base + 0.099)).abs() < 1e-9, "{k}: {p:?}");
            assert!(!b.few());
        }
        assert!(warnings(&[r]).is_empty());
    }

    /// 30 flows: bins of 1 or 2 (l = ⌊i·30/20⌋), as fct_analysis.py cuts them.
    #[test]
    fn bin_edges_follow_integer_division_of_the_count() {
        let flows: Vec<Flow> = (1..=30).map(|s| fin(s, 0, 1.0)).collect();
        let r = analyse("x", &[&input(flows)], &Opts::default());
        let sizes: Vec<usize> = r.bins.iter().map(|b| b.flows).collect();
        assert_eq!(
            sizes,
            [1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2]
        );
        assert_eq!(r.bins[1].size, Some((2, 3)));
        assert_eq!(r.bins[19].size, Some((29, 30)));
    }

    #[test]
    fn unfinished_flows_are_counted_in_the_slowdown_report() {
        let mut flows = vec![fin(100, 500, 1.5), fin(200, 2000, 0.5), fin(300, 3000, 2.0)];
        flows.push(Flow {
            size: 400,
            start_ns: 4000,
            outcome: Outcome::Unfinished,
        });
        flows.push(Flow {
            size: 500,
            start_ns: 100,
            outcome: Outcome::Unfinished,
        });
        flows.push(Flow {
            size: 600,
            start_ns: 5000,
            outcome: Outcome::Stopped,
        });
        let mut inp = input(flows);
        inp.long = 2;
        let o = Opts {
            warmup_ns: 1000,
            end_ns: None,
            capacity_bps: Some(8e9),
            dport: None,
        };
        let r = analyse("x", &[&inp], &o);
        let c = &r.counts;
        assert_eq!(
            (
                c.sized,
                c.finished,
                c.warmup,
                c.unfinished,
                c.stopped,
                c.long
            ),
            (6, 2, 2, 1, 1, 2)
        );
        assert_eq!(c.clamped, 1);
        // Window 1000..5000 ns: 200 + 300 + 400 + 600 B started in it.
        assert_eq!(c.window_ns, (1000, 5000));
        assert_eq!(c.window_bytes, 1500);
        // 1500 B · 8 / (4 µs · 8 Gb/s) = 0.375.
        assert!((c.load.unwrap() - 0.375).abs() < 1e-12);
        let t = text(std::slice::from_ref(&r), &o);
        assert!(t.contains("1 unfinished"), "{t}");
        assert!(t.contains("2 started in the warm-up"), "{t}");
        assert!(t.contains("realised load 0.375"), "{t}");
        let s = csv(&[r], &o);
        assert!(
            s.contains("warmup 2, unfinished 1, stopped 1, long 2"),
            "{s}"
        );
    }

    #[test]
    fn a_bin_under_100_flows_is_flagged() {
        let flows: Vec<Flow> = (0..1999u64).map(|i| fin(i, 0, 1.0)).collect();
        let r = analyse("hpcc", &[&input(flows)], &Opts::default());
        // 1999 flows: ⌊(k+1)·1999/20⌋ − ⌊k·1999/20⌋ is 99 for some bins.
        let few: Vec<usize> = r.bins.iter().filter(|b| b.few()).map(|b| b.flows).collect();
        assert!(!few.is_empty() && few.iter().all(|&n| n == 99), "{few:?}");
        let w = warnings(std::slice::from_ref(&r));
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("hpcc: "), "{w:?}");
        assert!(csv(&[r], &Opts::default()).contains(",99,"));
    }

    #[test]
    fn merged_inputs_of_one_label_form_one_series() {
        let a = input((1..=20).map(|s| fin(s, 0, 1.0)).collect());
        let b = input((21..=40).map(|s| fin(s, 0, 2.0)).collect());
        let o = Opts {
            capacity_bps: Some(1e9),
            end_ns: Some(1000),
            ..Opts::default()
        };
        let r = analyse("fixed", &[&a, &b], &o);
        assert_eq!(r.counts.finished, 40);
        // 820 B over two runs of 1 µs at 1 Gb/s: 8·820 / (2 · 1000) = 3.28.
        assert_eq!(r.counts.window_bytes, 820);
        assert!((r.counts.load.unwrap() - 3.28).abs() < 1e-12);
        assert_eq!(r.bins[19].size, Some((39, 40)));
        assert_eq!(r.bins[19].pct, Some([2.0, 2.0, 2.0]));
    }

    #[test]
    fn size_labels_read_as_bytes() {
        assert_eq!(size_label(1e3), "1K");
        assert_eq!(size_label(1e4), "10K");
        assert_eq!(size_label(1e6), "1M");
        assert_eq!(size_label(1e7), "10M");
    }
}
