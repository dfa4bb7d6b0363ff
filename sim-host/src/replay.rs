//! `sim-host replay`: one trace or a directory of traces, every kind, in parallel, with one
//! table and CI-friendly exit codes (0 within tolerance, 1 fidelity outside tolerance, 2 bad
//! input or usage).

use crate::summary::{Summary, Tolerances, pct};
use crate::trace::{InputError, Param, sniff_header};
use crate::{cats, hpcc, pacer, timely};
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
    /// Segment pacer event traces (cc-pacer).
    Pacer,
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
    /// The segment pacer.
    Pacer,
}

impl Kind {
    /// All kinds.
    pub const ALL: [Kind; 4] = [Kind::Timely, Kind::Hpcc, Kind::Cats, Kind::Pacer];

    /// The kind's name, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Timely => "timely",
            Kind::Hpcc => "hpcc",
            Kind::Cats => "cats",
            Kind::Pacer => "pacer",
        }
    }

    /// The kind's name in titles (`TIMELY`, `HPCC`, `CATS`).
    pub fn title(self) -> &'static str {
        match self {
            Kind::Timely => "TIMELY",
            Kind::Hpcc => "HPCC",
            Kind::Cats => "CATS",
            Kind::Pacer => "Pacer",
        }
    }

    /// The parameter keys the kind accepts.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            Kind::Timely => &timely::params::KEYS,
            Kind::Hpcc => &hpcc::KEYS,
            Kind::Cats => &cats::KEYS,
            Kind::Pacer => &pacer::KEYS,
        }
    }

    /// Whether `key` is one of the kind's parameters (the pacer's `seg_bytes.FLOW` included).
    pub fn has_key(self, key: &str) -> bool {
        self.keys().contains(&key)
            || (self == Kind::Pacer
                && key
                    .strip_prefix("seg_bytes.")
                    .is_some_and(|f| f.parse::<u32>().is_ok()))
    }

    /// The CSV header row that identifies the kind.
    pub fn header(self) -> &'static str {
        match self {
            Kind::Timely => timely::HEADER,
            Kind::Hpcc => hpcc::HEADER,
            Kind::Cats => cats::HEADER,
            Kind::Pacer => pacer::HEADER,
        }
    }

    /// The command-line name of a kind argument (`all`, `timely`, …).
    pub fn arg_name(arg: KindArg) -> &'static str {
        match arg {
            KindArg::All => "all",
            KindArg::Timely => "timely",
            KindArg::Hpcc => "hpcc",
            KindArg::Cats => "cats",
            KindArg::Pacer => "pacer",
        }
    }

    fn matches(self, arg: KindArg) -> bool {
        matches!(
            (arg, self),
            (KindArg::All, _)
                | (KindArg::Timely, Kind::Timely)
                | (KindArg::Hpcc, Kind::Hpcc)
                | (KindArg::Cats, Kind::Cats)
                | (KindArg::Pacer, Kind::Pacer)
        )
    }

    /// Recognises a file's kind: captures are HPCC; CSV files by their header row.
    pub fn detect(path: &Path) -> Result<Kind, InputError> {
        if is_capture(path) {
            return Ok(Kind::Hpcc);
        }
        let (line, header) = sniff_header(path)?;
        Kind::ALL
            .into_iter()
            .find(|k| k.header() == header)
            .ok_or_else(|| {
                let known: Vec<String> = Kind::ALL
                    .iter()
                    .map(|k| format!("{}: {}", k.name(), k.header()))
                    .collect();
                InputError::at(
                    path,
                    line,
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
            Kind::Pacer => pacer::replay(path, opts),
        }?;
        // A trace (or a capture's flow) in which nothing was compared would "pass" vacuously:
        // every row skipped, every INT block malformed, no CATS chunk fed. A capture's flow
        // that already fails says why itself (the capture's other flows keep their verdicts).
        for s in sums.iter().filter(|s| s.failures.is_empty()) {
            let compared = match self {
                Kind::Cats | Kind::Pacer => s.agreement.total,
                Kind::Timely | Kind::Hpcc => s.events.saturating_sub(s.skipped),
            };
            if compared == 0 {
                return Err(InputError::file(
                    path,
                    format!(
                        "no comparable events in {} ({} events, {} skipped): nothing to compare",
                        s.trace, s.events, s.skipped
                    ),
                ));
            }
        }
        Ok(sums)
    }
}

/// A pcap or pcapng capture (by extension, in any case: `.pcap`, `.pcapng`, `.cap`).
pub fn is_capture(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "pcap" | "pcapng" | "cap"))
}

/// A CSV trace (by extension, in any case).
fn is_csv(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
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
    /// `--skip-unknown`: in a directory, pass over `.csv` files whose header names no trace
    /// kind instead of failing on them.
    pub skip_unknown: bool,
}

impl ReplayOpts {
    /// Checks `--set` keys before anything runs: `KIND.KEY` must name a kind and one of its
    /// keys; a bare `KEY` must belong to at least one kind.
    pub fn check_params(&self) -> Result<(), InputError> {
        let list = || {
            Kind::ALL
                .iter()
                .map(|k| format!("{}: {}", k.name(), k.keys().join(", ")))
                .collect::<Vec<_>>()
                .join("; ")
        };
        for p in &self.params {
            let ok = Kind::ALL.iter().any(|k| k.has_key(&p.key))
                || p.key.split_once('.').is_some_and(|(kind, key)| {
                    Kind::ALL.iter().any(|k| k.name() == kind && k.has_key(key))
                });
            if !ok {
                return Err(p.error(format!(
                    "parameter {:?} belongs to no trace kind ({})",
                    p.key,
                    list()
                )));
            }
        }
        Ok(())
    }

    /// The options for one kind: `KIND.KEY=VALUE` applies to that kind only (as `KEY`), a bare
    /// `KEY` to every kind that has it.
    pub fn for_kind(&self, kind: Kind) -> ReplayOpts {
        let mut o = self.clone();
        o.params = self
            .params
            .iter()
            .filter_map(|p| {
                if kind.has_key(&p.key) {
                    return Some(p.clone());
                }
                match p.key.split_once('.') {
                    Some((k, key)) if k == kind.name() && kind.has_key(key) => {
                        let mut q = p.clone();
                        q.key = key.to_string();
                        Some(q)
                    }
                    _ => None,
                }
            })
            .collect();
        o
    }

    /// The tolerances for `kind`: its defaults with the command line's overrides.
    pub fn tolerances(&self, kind: Kind) -> Tolerances {
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
    if let Err(e) = opts.check_params() {
        return report_error(&e);
    }
    let code = if path == Path::new("-") {
        run_stdin(kind, opts, json)
    } else if path.is_dir() {
        run_dir(kind, path, opts, json)
    } else {
        run_file(kind, path, opts, json)
    };
    if crate::output::stdout_failed() {
        eprintln!("error: cannot write the report to standard output");
        return EXIT_INPUT;
    }
    code
}

/// `-`: the trace on standard input, read once into a temporary file (a capture when it starts
/// with a pcap or pcapng magic number, CSV otherwise) and replayed from there; reports name it
/// `-`.
fn run_stdin(kind: KindArg, opts: &ReplayOpts, json: bool) -> i32 {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin().lock().read_to_end(&mut bytes) {
        return report_error(&InputError::file(
            Path::new("-"),
            format!("cannot read: {e}"),
        ));
    }
    let magic = bytes.get(..4).map(|m| [m[0], m[1], m[2], m[3]]);
    let capture = matches!(
        magic,
        Some(
            [0xd4, 0xc3, 0xb2, 0xa1]
                | [0xa1, 0xb2, 0xc3, 0xd4]
                | [0x4d, 0x3c, 0xb2, 0xa1]
                | [0xa1, 0xb2, 0x3c, 0x4d]
                | [0x0a, 0x0d, 0x0d, 0x0a]
        )
    );
    let dir = std::env::temp_dir().join(format!("sim-host-stdin-{}", std::process::id()));
    let tmp = dir.join(if capture { "stdin.pcapng" } else { "stdin.csv" });
    let code = match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&tmp, &bytes)) {
        Ok(()) => run_file_named(kind, &tmp, Path::new("-"), opts, json),
        Err(e) => report_error(&InputError::file(
            Path::new("-"),
            format!("cannot buffer: {e}"),
        )),
    };
    let _ = std::fs::remove_dir_all(&dir);
    code
}

fn run_file(kind: KindArg, path: &Path, opts: &ReplayOpts, json: bool) -> i32 {
    run_file_named(kind, path, path, opts, json)
}

/// Replays `path`, naming it `shown` in reports and errors.
fn run_file_named(kind: KindArg, path: &Path, shown: &Path, opts: &ReplayOpts, json: bool) -> i32 {
    let (sums, errors) = match replay_file(kind, path, shown, opts) {
        Ok(s) => (s, Vec::new()),
        Err(e) => (Vec::new(), vec![e]),
    };
    let code = exit_code(&sums, &errors);
    if json {
        print_json(&sums, &errors, code);
    } else {
        for s in &sums {
            crate::out!("{}", s.render());
        }
    }
    for e in &errors {
        eprintln!("error: {e}");
    }
    code
}

/// Exit code of a run: 2 if any input failed, else 1 if any result is outside tolerance.
fn exit_code(sums: &[Summary], errors: &[InputError]) -> i32 {
    if !errors.is_empty() {
        EXIT_INPUT
    } else if sums.iter().all(|s| s.within_tolerance) {
        EXIT_OK
    } else {
        EXIT_FIDELITY
    }
}

/// Identifies the `schema` of `--json` output (docs/replay.schema.json).
pub const JSON_SCHEMA_ID: &str = "sim-host/replay/1";

/// The one JSON shape of every replay (a file, a capture, a directory): the results (one per
/// trace, or per flow of a capture), the errors as objects, and a summary with the exit code.
pub fn json_report(sums: &[Summary], errors: &[InputError], code: i32) -> serde_json::Value {
    let outside = sums.iter().filter(|s| !s.within_tolerance).count();
    serde_json::json!({
        "schema": JSON_SCHEMA_ID,
        "results": sums,
        "errors": errors,
        "summary": {
            "results": sums.len(),
            "within_tolerance": sums.len() - outside,
            "outside_tolerance": outside,
            "errors": errors.len(),
            "exit_code": code,
        },
    })
}

fn print_json(sums: &[Summary], errors: &[InputError], code: i32) {
    let v = json_report(sums, errors, code);
    crate::outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
}

fn replay_file(
    kind: KindArg,
    path: &Path,
    shown: &Path,
    opts: &ReplayOpts,
) -> Result<Vec<Summary>, InputError> {
    let rename = |mut e: InputError| {
        if e.file == path {
            e.file = shown.to_path_buf();
        }
        e
    };
    for out in [&opts.out, &opts.plot].into_iter().flatten() {
        crate::output::refuse_inputs(out, &[path])?;
    }
    let detected = Kind::detect(path).map_err(rename)?;
    if !detected.matches(kind) {
        return Err(InputError::file(
            shown,
            format!(
                "this is a {} trace (header {:?}), not a {} one",
                detected.name(),
                detected.header(),
                Kind::arg_name(kind)
            ),
        ));
    }
    let mut sums = detected
        .replay(path, &opts.for_kind(detected))
        .map_err(rename)?;
    if shown != path {
        let (from, to) = (path.display().to_string(), shown.display().to_string());
        for s in &mut sums {
            s.trace = s.trace.replacen(&from, &to, 1);
        }
    }
    Ok(sums)
}

fn report_error(e: &InputError) -> i32 {
    eprintln!("error: {e}");
    EXIT_INPUT
}

/// Every trace file below `dir` (sorted): `.csv`, `.pcap`, `.pcapng`, `.cap` in any case.
/// Symbolic links are followed, but every folder and every file is visited once (by canonical
/// path): a link back up the tree (`up -> ..`) or to itself (`self -> .`) adds nothing.
pub fn find_traces(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let mut out = Vec::new();
    let mut seen_dirs = std::collections::HashSet::new();
    let mut seen_files = std::collections::HashSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if !seen_dirs.insert(canon(&d)) {
            continue;
        }
        let rd = std::fs::read_dir(&d)
            .map_err(|e| InputError::file(&d, format!("cannot list directory: {e}")))?;
        for entry in rd {
            let entry =
                entry.map_err(|e| InputError::file(&d, format!("cannot list directory: {e}")))?;
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if (is_capture(&p) || is_csv(&p)) && seen_files.insert(canon(&p)) {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The per-trace output file inside a directory given to `--out`/`--plot`: the trace's path
/// relative to the replayed directory, with its own extension kept and `suffix` appended
/// (`timely/incast.csv` → `OUT/timely/incast.csv.out.csv`), so two traces never share an
/// output, whatever their folders or extensions.
pub fn output_in(out_dir: &Path, root: &Path, trace: &Path, suffix: &str) -> PathBuf {
    let rel = trace.strip_prefix(root).unwrap_or(trace);
    let mut name = rel.as_os_str().to_os_string();
    name.push(suffix);
    out_dir.join(name)
}

fn run_dir(kind: KindArg, dir: &Path, opts: &ReplayOpts, json: bool) -> i32 {
    let files = match find_traces(dir) {
        Ok(f) => f,
        Err(e) => return report_error(&e),
    };
    // Recognise kinds first (cheap), keep the requested ones. A file whose header names no
    // kind is an error (it may be a trace with a typo) unless --skip-unknown.
    let mut jobs = Vec::new();
    let mut outcomes: Vec<(PathBuf, Outcome)> = Vec::new();
    let mut unknown = 0usize;
    for f in files {
        match Kind::detect(&f) {
            Ok(k) if k.matches(kind) => jobs.push((f, k)),
            Ok(_) => {}
            Err(_) if opts.skip_unknown => unknown += 1,
            Err(e) => outcomes.push((f, Outcome::Failed(e))),
        }
    }
    if jobs.is_empty() && outcomes.is_empty() {
        return report_error(&InputError::file(
            dir,
            format!(
                "no {} traces found (looked for .csv, .pcap, .pcapng, .cap)",
                Kind::arg_name(kind)
            ),
        ));
    }
    // Every output, named before anything is written: never an input, never twice.
    let inputs: Vec<&Path> = jobs.iter().map(|(f, _)| f.as_path()).collect();
    let name = |o: &Option<PathBuf>, f: &Path, suffix: &str| {
        o.as_ref().map(|d| output_in(d, dir, f, suffix))
    };
    for (f, _) in &jobs {
        for o in [name(&opts.out, f, ".out.csv"), name(&opts.plot, f, ".svg")]
            .into_iter()
            .flatten()
        {
            let made = o
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .map_err(|e| InputError::file(&o, format!("cannot create its folder: {e}")));
            if let Err(e) = made.and_then(|()| crate::output::refuse_inputs(&o, &inputs)) {
                return report_error(&e);
            }
        }
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
            let mut o = opts.for_kind(*k);
            o.out = name(&opts.out, f, ".out.csv");
            o.plot = name(&opts.plot, f, ".svg");
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
    code = code.max(exit_code(&summaries, &errors));
    if json {
        print_json(&summaries, &errors, code);
    } else {
        crate::out!("{}", table(&summaries));
        for s in summaries.iter().filter(|s| !s.within_tolerance) {
            crate::outln!();
            crate::out!("{}", s.render());
        }
        let fails = summaries.iter().filter(|s| !s.within_tolerance).count();
        let skipped = if unknown > 0 {
            format!(", {unknown} unknown skipped")
        } else {
            String::new()
        };
        crate::outln!(
            "\n{} traces: {} within tolerance, {} outside, {} unreadable{skipped} ({:.1} s)",
            summaries.len() + errors.len(),
            summaries.len() - fails,
            fails,
            errors.len(),
            started.elapsed().as_secs_f64()
        );
    }
    // Warnings (a capture cut inside a record, …) are not in the table: say them here.
    for s in &summaries {
        for (k, v) in &s.details {
            if k == "warning" {
                eprintln!("warning: {}: {}", s.trace, v.as_str().unwrap_or_default());
            }
        }
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
