//! `sim-host replay`: one trace or a directory of traces, every kind, in parallel, with one
//! table and CI-friendly exit codes (0 within tolerance, 1 fidelity outside tolerance, 2 bad
//! input or usage).

use crate::summary::{Summary, Tolerances, pct};
use crate::trace::{InputError, Param, sniff_header};
use crate::{cats, hpcc, timely};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Exit code: everything within tolerance.
pub const EXIT_OK: i32 = 0;
/// Exit code: some fidelity figure outside tolerance.
pub const EXIT_FIDELITY: i32 = 1;
/// Exit code: bad input or usage.
pub const EXIT_INPUT: i32 = 2;

/// How the fixed-point side is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize)]
pub enum Mode {
    /// The two sides run independently: one early disagreement shows as a lasting offset.
    #[default]
    Free,
    /// After every event the fixed-point state is re-seeded from the reference state (quantised
    /// through the firmware crate's public constructor), so errors do not accumulate.
    Forced,
}

impl Mode {
    /// `free` or `forced`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Free => "free",
            Mode::Forced => "forced",
        }
    }
}

/// The trace kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KindArg {
    /// Every kind, recognised by each trace's header row.
    All,
    /// TIMELY RTT traces.
    Timely,
    /// HPCC INT traces and pcap/pcapng captures.
    Hpcc,
    /// CATS conductor event traces.
    Cats,
}

/// A concrete trace kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// TIMELY.
    Timely,
    /// HPCC.
    Hpcc,
    /// CATS.
    Cats,
}

impl Kind {
    /// All kinds.
    pub const ALL: [Kind; 3] = [Kind::Timely, Kind::Hpcc, Kind::Cats];

    /// The kind's name, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Timely => "timely",
            Kind::Hpcc => "hpcc",
            Kind::Cats => "cats",
        }
    }

    /// The CSV header row that identifies the kind.
    pub fn header(self) -> &'static str {
        match self {
            Kind::Timely => timely::HEADER,
            Kind::Hpcc => hpcc::HEADER,
            Kind::Cats => cats::HEADER,
        }
    }

    fn matches(self, arg: KindArg) -> bool {
        matches!(
            (arg, self),
            (KindArg::All, _)
                | (KindArg::Timely, Kind::Timely)
                | (KindArg::Hpcc, Kind::Hpcc)
                | (KindArg::Cats, Kind::Cats)
        )
    }

    /// Recognises a file's kind: captures are HPCC; CSV files by their header row.
    pub fn detect(path: &Path) -> Result<Kind, InputError> {
        if is_capture(path) {
            return Ok(Kind::Hpcc);
        }
        let header = sniff_header(path)?;
        Kind::ALL
            .into_iter()
            .find(|k| k.header() == header)
            .ok_or_else(|| {
                let known: Vec<String> = Kind::ALL
                    .iter()
                    .map(|k| format!("{}: {}", k.name(), k.header()))
                    .collect();
                InputError::file(
                    path,
                    format!(
                        "header row {header:?} is not a known trace kind ({})",
                        known.join("; ")
                    ),
                )
            })
    }

    fn replay(self, path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
        let sums = match self {
            Kind::Timely => timely::replay(path, opts),
            Kind::Hpcc => hpcc::replay(path, opts),
            Kind::Cats => cats::replay(path, opts),
        }?;
        // A trace with a header and nothing else would "pass" vacuously: say so instead.
        if sums.iter().all(|s| s.events == 0) {
            return Err(InputError::file(
                path,
                "no events after the header row: nothing to compare",
            ));
        }
        Ok(sums)
    }
}

/// A pcap or pcapng capture (by extension).
pub fn is_capture(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("pcap" | "pcapng" | "cap")
    )
}

/// Tolerance overrides from the command line (`None`: the kind's default).
#[derive(Debug, Clone, Copy, Default)]
pub struct TolOverride {
    /// `--min-agreement`.
    pub min_agreement: Option<f64>,
    /// `--max-p99-rel-err`.
    pub max_p99_rel_err: Option<f64>,
    /// `--max-rel-err`.
    pub max_rel_err: Option<f64>,
}

/// Options of one replay.
#[derive(Debug, Clone, Default)]
pub struct ReplayOpts {
    /// `--set KEY=VALUE` parameters (they override the trace's `# set` lines).
    pub params: Vec<Param>,
    /// `--out`: per-event CSV (a directory when replaying a directory).
    pub out: Option<PathBuf>,
    /// `--plot`: SVG (a directory when replaying a directory).
    pub plot: Option<PathBuf>,
    /// `--mode`.
    pub mode: Mode,
    /// Tolerance overrides.
    pub tol: TolOverride,
}

impl ReplayOpts {
    /// The tolerances for `kind`: its defaults with the command line's overrides.
    pub fn tolerances(&self, kind: &str) -> Tolerances {
        let d = Tolerances::for_kind(kind);
        Tolerances {
            min_agreement: self.tol.min_agreement.unwrap_or(d.min_agreement),
            max_p99_rel_err: self.tol.max_p99_rel_err.unwrap_or(d.max_p99_rel_err),
            max_rel_err: self.tol.max_rel_err.unwrap_or(d.max_rel_err),
        }
    }
}

/// What one file produced.
enum Outcome {
    Done(Vec<Summary>),
    Failed(InputError),
}

/// Runs `sim-host replay KIND PATH`; returns the exit code. Prints the report to stdout and
/// errors to stderr.
pub fn run(kind: KindArg, path: &Path, opts: &ReplayOpts, json: bool) -> i32 {
    if path.is_dir() {
        run_dir(kind, path, opts, json)
    } else {
        run_file(kind, path, opts, json)
    }
}

fn run_file(kind: KindArg, path: &Path, opts: &ReplayOpts, json: bool) -> i32 {
    let detected = match Kind::detect(path) {
        Ok(k) => k,
        Err(e) => return report_error(&e),
    };
    if !detected.matches(kind) {
        return report_error(&InputError::file(
            path,
            format!(
                "this is a {} trace (header {:?}), not a {:?} one",
                detected.name(),
                detected.header(),
                kind
            ),
        ));
    }
    match detected.replay(path, opts) {
        Ok(sums) => {
            if json {
                let v = if sums.len() == 1 {
                    serde_json::to_value(&sums[0])
                } else {
                    serde_json::to_value(&sums)
                };
                crate::outln!(
                    "{}",
                    serde_json::to_string_pretty(&v.unwrap_or_default()).unwrap_or_default()
                );
            } else {
                for s in &sums {
                    crate::out!("{}", s.render());
                }
            }
            if sums.iter().all(|s| s.within_tolerance) {
                EXIT_OK
            } else {
                EXIT_FIDELITY
            }
        }
        Err(e) => report_error(&e),
    }
}

fn report_error(e: &InputError) -> i32 {
    eprintln!("error: {e}");
    EXIT_INPUT
}

/// Every trace file below `dir` (sorted): `.csv`, `.pcap`, `.pcapng`.
pub fn find_traces(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd = std::fs::read_dir(&d)
            .map_err(|e| InputError::file(&d, format!("cannot list directory: {e}")))?;
        for entry in rd {
            let entry =
                entry.map_err(|e| InputError::file(&d, format!("cannot list directory: {e}")))?;
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if is_capture(&p) || p.extension().is_some_and(|e| e == "csv") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The per-trace output file inside a directory given to `--out`/`--plot`.
pub fn output_in(dir: &Path, kind: Kind, trace: &Path, ext: &str) -> PathBuf {
    let stem = trace
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("trace");
    dir.join(format!("{}-{}.{}", kind.name(), stem, ext))
}

fn run_dir(kind: KindArg, dir: &Path, opts: &ReplayOpts, json: bool) -> i32 {
    let files = match find_traces(dir) {
        Ok(f) => f,
        Err(e) => return report_error(&e),
    };
    for d in [&opts.out, &opts.plot].into_iter().flatten() {
        if let Err(e) = std::fs::create_dir_all(d) {
            return report_error(&InputError::file(
                d,
                format!("cannot create output directory: {e}"),
            ));
        }
    }
    // Recognise kinds first (cheap), keep the requested ones.
    let mut jobs = Vec::new();
    let mut outcomes: Vec<(PathBuf, Outcome)> = Vec::new();
    for f in files {
        match Kind::detect(&f) {
            Ok(k) if k.matches(kind) => jobs.push((f, k)),
            Ok(_) => {}
            Err(e) if kind == KindArg::All => outcomes.push((f, Outcome::Failed(e))),
            Err(_) => {}
        }
    }
    if jobs.is_empty() && outcomes.is_empty() {
        return report_error(&InputError::file(
            dir,
            format!("no {kind:?} traces found (looked for .csv, .pcap, .pcapng)"),
        ));
    }
    let bar = ProgressBar::with_draw_target(Some(jobs.len() as u64), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} replaying [{bar:30}] {pos}/{len} traces, {elapsed} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let started = Instant::now();
    let shown = AtomicBool::new(false);
    let done: Vec<(PathBuf, Outcome)> = jobs
        .par_iter()
        .map(|(f, k)| {
            let mut o = opts.clone();
            o.out = opts.out.as_ref().map(|d| output_in(d, *k, f, "csv"));
            o.plot = opts.plot.as_ref().map(|d| output_in(d, *k, f, "svg"));
            let r = match k.replay(f, &o) {
                Ok(s) => Outcome::Done(s),
                Err(e) => Outcome::Failed(e),
            };
            // Show the bar only once the run takes longer than a moment.
            if started.elapsed().as_millis() > 700 && !shown.swap(true, Ordering::Relaxed) {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            bar.inc(1);
            (f.clone(), r)
        })
        .collect();
    bar.finish_and_clear();
    outcomes.extend(done);
    outcomes.sort_by(|a, b| a.0.cmp(&b.0));

    let mut code = EXIT_OK;
    let mut summaries = Vec::new();
    let mut errors = Vec::new();
    for (_, o) in outcomes {
        match o {
            Outcome::Done(s) => summaries.extend(s),
            Outcome::Failed(e) => errors.push(e),
        }
    }
    if summaries.iter().any(|s| !s.within_tolerance) {
        code = EXIT_FIDELITY;
    }
    if !errors.is_empty() {
        code = EXIT_INPUT;
    }
    if json {
        let v = serde_json::json!({
            "traces": summaries,
            "errors": errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "within_tolerance": code == EXIT_OK,
        });
        crate::outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        crate::out!("{}", table(&summaries));
        for s in summaries.iter().filter(|s| !s.within_tolerance) {
            crate::outln!();
            crate::out!("{}", s.render());
        }
        let fails = summaries.iter().filter(|s| !s.within_tolerance).count();
        crate::outln!(
            "\n{} traces: {} within tolerance, {} outside, {} unreadable ({:.1} s)",
            summaries.len() + errors.len(),
            summaries.len() - fails,
            fails,
            errors.len(),
            started.elapsed().as_secs_f64()
        );
    }
    for e in &errors {
        eprintln!("error: {e}");
    }
    code
}

/// One line per trace.
pub fn table(sums: &[Summary]) -> String {
    use std::fmt::Write as _;
    let w = sums.iter().map(|s| s.trace.len()).max().unwrap_or(5).max(5);
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{:<6}  {:<w$}  {:<6}  {:>8}  {:>7}  {:>16}  {:>9}  {:>9}  verdict",
        "kind", "trace", "mode", "events", "skipped", "agreement", "max err", "p99 err"
    );
    for s in sums {
        let (mx, p99) = match &s.rel_err {
            Some(e) => (format!("{:.2e}", e.max), format!("{:.2e}", e.p99)),
            None => ("-".into(), "-".into()),
        };
        let _ = writeln!(
            t,
            "{:<6}  {:<w$}  {:<6}  {:>8}  {:>7}  {:>16}  {:>9}  {:>9}  {}",
            s.kind,
            s.trace,
            s.mode,
            s.events,
            s.skipped,
            format!("{} {}", s.agreement.what, pct(s.agreement.ratio)),
            mx,
            p99,
            if s.within_tolerance { "PASS" } else { "FAIL" }
        );
    }
    t
}
