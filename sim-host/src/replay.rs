//! `sim-host replay`: one trace or a directory of traces, every kind, in parallel, with one
//! table and CI-friendly exit codes (0 within tolerance, 1 fidelity outside tolerance, 2 bad
//! input or usage, or nothing meaningful to compare).

use crate::summary::{Summary, pct};
use crate::trace::{InputError, sniff_header};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Exit code: everything within tolerance.
pub const EXIT_OK: i32 = 0;
/// Exit code: some fidelity figure outside tolerance.
pub const EXIT_FIDELITY: i32 = 1;
/// Exit code: bad input or usage, or a trace (or capture flow) with nothing meaningful to
/// compare.
pub const EXIT_INPUT: i32 = 2;

pub use crate::kind::Kind;
pub use crate::opts::{Mode, ReplayOpts, TolOverride};
pub use crate::trace::is_capture;

impl Kind {
    /// Recognises a file's kind: captures are HPCC; CSV files by their header row.
    pub fn detect(path: &Path) -> Result<Kind, InputError> {
        if is_capture(path)
            && let Some(k) = Kind::all().find(|k| k.info().reads_captures)
        {
            return Ok(k);
        }
        let (line, header) = sniff_header(path)?;
        Kind::all().find(|k| k.header() == header).ok_or_else(|| {
            let known: Vec<String> = Kind::all()
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
}

/// A CSV trace (by extension, in any case).
fn is_csv(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
}

impl ReplayOpts {
    /// Checks the command line before anything runs. `kind` is the kind replayed (`None`:
    /// `replay all`). On a one-kind replay every `--set` key must be that kind's (bare, or as
    /// `KIND.KEY`); in `replay all` a bare `KEY` must belong to at least one kind and `KIND.KEY`
    /// must name a kind and one of its keys. A refusal names the kinds that have the key and the
    /// closest key of the kind replayed. A key given twice is refused (one value would be
    /// dropped), and so is `--mode forced` for a kind without a forced mode.
    pub fn check(&self, kind: Option<Kind>) -> Result<(), InputError> {
        // A key given twice: only the last would apply, the first would be dropped.
        for (i, p) in self.params.iter().enumerate() {
            if let Some(q) = self.params[i + 1..].iter().find(|q| q.key == p.key) {
                return Err(p.error(format!(
                    "--set {} given twice ({} and {}): only one value can apply",
                    p.key, p.value, q.value
                )));
            }
        }
        for p in &self.params {
            let (prefix, key) = match p.key.split_once('.') {
                Some((k, rest)) if Kind::named(k).is_some() => (Kind::named(k), rest),
                _ => (None, p.key.as_str()),
            };
            let owners: Vec<&str> = Kind::all()
                .filter(|k| k.has_key(key) && prefix.is_none_or(|x| x == *k))
                .map(Kind::name)
                .collect();
            let problem = match kind {
                Some(k) if prefix.is_some_and(|x| x != k) => Some(format!(
                    "parameter {:?} is for {} traces, and this is a {} replay",
                    p.key,
                    prefix.map_or("", Kind::name),
                    k.name()
                )),
                Some(k) if !k.has_key(key) => Some(format!(
                    "{} has no parameter {key:?}{}{}",
                    k.name(),
                    if owners.is_empty() {
                        String::new()
                    } else {
                        format!(" (it is a parameter of {})", owners.join(", "))
                    },
                    match k.info().closest_key(key) {
                        Some(c) => format!("; did you mean {c}?"),
                        None => format!("; {} keys: {}", k.name(), k.info().key_list()),
                    }
                )),
                Some(_) => None,
                None if owners.is_empty() => Some(format!(
                    "parameter {:?} belongs to no trace kind ({})",
                    p.key,
                    Kind::all()
                        .map(|k| format!("{}: {}", k.name(), k.info().key_list()))
                        .collect::<Vec<_>>()
                        .join("; ")
                )),
                None => None,
            };
            if let Some(m) = problem {
                return Err(p.error(m));
            }
        }
        if let Some(k) = kind
            && k.info().rel_err_of.is_none()
            && let Some(flag) = self.rel_err_limit()
        {
            return Err(InputError::file(
                Path::new(flag),
                format!(
                    "{} compares the {} of its decisions and has no relative error to limit; \
                     leave it out",
                    k.name(),
                    k.info().agreement
                ),
            ));
        }
        if let Some(k) = kind
            && self.mode == Mode::Forced
            && !k.info().has_forced_mode
        {
            return Err(InputError::file(
                Path::new("--mode"),
                format!(
                    "--mode forced: {} has no forced mode (its replay has no state to re-seed); \
                     leave --mode out",
                    k.name()
                ),
            ));
        }
        Ok(())
    }

    /// In `replay all`, once the kinds of the traces are known: every `--set` parameter must
    /// apply to at least one of them (a parameter that applies to nothing replayed would be
    /// reported as given and change nothing), and `--mode forced` needs a kind that has it.
    pub fn check_used(&self, kinds: &[Kind]) -> Result<(), InputError> {
        for p in &self.params {
            if !kinds.iter().any(|k| k.applies(p)) {
                let present: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
                return Err(p.error(format!(
                    "parameter {:?} applies to no trace of this run (its kinds: {}; the run has \
                     {})",
                    p.key,
                    Kind::all()
                        .filter(|k| k.applies(p))
                        .map(Kind::name)
                        .collect::<Vec<_>>()
                        .join(", "),
                    if present.is_empty() {
                        "no traces".into()
                    } else {
                        present.join(", ")
                    }
                )));
            }
        }
        if let Some(flag) = self.rel_err_limit()
            && !kinds.iter().any(|k| k.info().rel_err_of.is_some())
        {
            return Err(InputError::file(
                Path::new(flag),
                "no trace of this run has a relative error to limit (its kinds compare the order \
                 of decisions)",
            ));
        }
        if self.mode == Mode::Forced && !kinds.iter().any(|k| k.info().has_forced_mode) {
            return Err(InputError::file(
                Path::new("--mode"),
                "--mode forced: no trace of this run has a forced mode",
            ));
        }
        Ok(())
    }

    /// The relative-error limit given on the command line, if any (its option's name).
    fn rel_err_limit(&self) -> Option<&'static str> {
        if self.tol.max_p99_rel_err.is_some() {
            Some("--max-p99-rel-err")
        } else if self.tol.max_rel_err.is_some() {
            Some("--max-rel-err")
        } else {
            None
        }
    }

    /// The options for one kind: `KIND.KEY=VALUE` applies to that kind only (as `KEY`), a bare
    /// `KEY` to every kind that has it. A kind without a forced mode replays free (in `replay
    /// all`; a one-kind replay refuses `--mode forced` for it, [`check`](Self::check)).
    pub fn for_kind(&self, kind: Kind) -> ReplayOpts {
        let mut o = self.clone();
        o.params = self
            .params
            .iter()
            .filter(|p| kind.applies(p))
            .map(|p| {
                let mut q = p.clone();
                if let Some((k, key)) = p.key.split_once('.')
                    && k == kind.name()
                {
                    q.key = key.to_string();
                }
                q
            })
            .collect();
        if !kind.info().has_forced_mode {
            o.mode = Mode::Free;
        }
        o
    }
}

/// What one file produced.
enum Outcome {
    Done(Vec<Summary>),
    Failed(InputError),
}

/// Runs `sim-host replay KIND PATH`; returns the exit code. Prints the report to stdout and
/// errors to stderr.
pub fn run(kind: Option<Kind>, path: &Path, opts: &ReplayOpts, json: bool) -> i32 {
    if let Err(e) = opts.check(kind) {
        return report_error(&e);
    }
    // A pipe (`-`, `/dev/stdin`, a process substitution `<(…)`) can be read once only:
    // spooled to a temporary file first, as standard input is.
    let is_pipe = path != Path::new("-")
        && std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
    let code = if path == Path::new("-") {
        run_stdin(kind, opts, json, Box::new(std::io::stdin().lock()), path)
    } else if is_pipe {
        match std::fs::File::open(path) {
            Ok(f) => run_stdin(kind, opts, json, Box::new(f), path),
            Err(e) => report_error(&InputError::file(path, format!("cannot open: {e}"))),
        }
    } else if path.is_dir() {
        run_dir(kind, path, opts, json)
    } else {
        run_file(kind, path, opts, json)
    };
    // A failed write of the report: exit 2 (the binary also says so, for every subcommand).
    if crate::output::stdout_failed() {
        return EXIT_INPUT;
    }
    code
}

/// A trace that can be read once only (`-`, a pipe such as `/dev/stdin` or `<(…)`), copied into
/// a temporary file (a capture when it starts with a pcap or pcapng magic number, CSV otherwise)
/// and replayed from there; reports name it `shown`.
fn run_stdin(
    kind: Option<Kind>,
    opts: &ReplayOpts,
    json: bool,
    mut input: Box<dyn std::io::Read + '_>,
    shown: &Path,
) -> i32 {
    use std::io::Read as _;
    let dir = std::env::temp_dir().join(format!("sim-host-stdin-{}", std::process::id()));
    let mut spool = |dir: &Path| -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let raw = dir.join("input");
        let mut f = std::fs::File::create(&raw)?;
        std::io::copy(&mut input, &mut f)?;
        drop(f);
        let mut magic = [0u8; 4];
        let n = std::fs::File::open(&raw)?.read(&mut magic)?;
        let capture = n == 4
            && matches!(
                magic,
                [0xd4, 0xc3, 0xb2, 0xa1]
                    | [0xa1, 0xb2, 0xc3, 0xd4]
                    | [0x4d, 0x3c, 0xb2, 0xa1]
                    | [0xa1, 0xb2, 0x3c, 0x4d]
                    | [0x0a, 0x0d, 0x0d, 0x0a]
            );
        let named = dir.join(if capture { "stdin.pcapng" } else { "stdin.csv" });
        std::fs::rename(&raw, &named)?;
        Ok(named)
    };
    let code = match spool(&dir) {
        Ok(tmp) => run_file_named(kind, &tmp, shown, opts, json),
        Err(e) => report_error(&InputError::file(shown, format!("cannot read: {e}"))),
    };
    let _ = std::fs::remove_dir_all(&dir);
    code
}

fn run_file(kind: Option<Kind>, path: &Path, opts: &ReplayOpts, json: bool) -> i32 {
    run_file_named(kind, path, path, opts, json)
}

/// Replays `path`, naming it `shown` in reports and errors.
fn run_file_named(
    kind: Option<Kind>,
    path: &Path,
    shown: &Path,
    opts: &ReplayOpts,
    json: bool,
) -> i32 {
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
    report_nothing_compared(&sums);
    for e in &errors {
        eprintln!("error: {e}");
    }
    code
}

/// Says on standard error why each result with nothing meaningful to compare has no verdict
/// (its reason names the trace).
fn report_nothing_compared(sums: &[Summary]) {
    for s in sums {
        if let Some(why) = &s.nothing_to_compare {
            if why.contains(&s.trace) {
                eprintln!("error: {why}");
            } else {
                eprintln!("error: {}: {why}", s.trace);
            }
        }
    }
}

/// Exit code of a run: 2 if any input failed or any result compared nothing meaningful (a CSV
/// trace and a capture flow alike), else 1 if any result is outside tolerance.
fn exit_code(sums: &[Summary], errors: &[InputError]) -> i32 {
    if !errors.is_empty() || sums.iter().any(|s| s.nothing_to_compare.is_some()) {
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
    let within = sums.iter().filter(|s| s.within_tolerance).count();
    let outside = sums.iter().filter(|s| s.outside_tolerance()).count();
    let nothing = sums
        .iter()
        .filter(|s| s.nothing_to_compare.is_some())
        .count();
    serde_json::json!({
        "schema": JSON_SCHEMA_ID,
        "results": sums,
        "errors": errors,
        "summary": {
            "results": sums.len(),
            "within_tolerance": within,
            "outside_tolerance": outside,
            "nothing_to_compare": nothing,
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
    kind: Option<Kind>,
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
    if kind.is_some_and(|k| k != detected) {
        return Err(InputError::file(
            shown,
            format!(
                "this is a {} trace (header {:?}), not a {} one",
                detected.name(),
                detected.header(),
                kind.map_or("all", Kind::name)
            ),
        ));
    }
    opts.check_used(&[detected])?;
    let mut o = opts.for_kind(detected);
    if shown != path {
        o.shown_as = Some(shown.to_path_buf());
    }
    detected.replay(path, &o).map_err(rename)
}

fn report_error(e: &InputError) -> i32 {
    eprintln!("error: {e}");
    EXIT_INPUT
}

/// Every trace file below `dir` (sorted): `.csv`, `.pcap`, `.pcapng`, `.cap` in any case.
/// Symbolic links are followed while they stay inside `dir` (one leading out of it, such as `up
/// -> ..`, is passed over with a warning), and every folder and every file is visited once (by
/// canonical path): a link to itself (`self -> .`) adds nothing.
pub fn find_traces(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    Ok(find_traces_inside(dir)?.0)
}

/// An entry of a replayed directory that was not read, and why.
pub type Skipped = (PathBuf, &'static str);

/// [`find_traces`], plus what was passed over and why: links that lead out of `dir` (a link to
/// a file or folder outside the replayed tree, such as `up -> ..`, would replay traces the user
/// did not name) and trace-named entries that are not regular files (a named pipe would block
/// the run forever; a socket or a device is no trace).
pub fn find_traces_inside(dir: &Path) -> Result<(Vec<PathBuf>, Vec<Skipped>), InputError> {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let root = canon(dir);
    let mut skipped = Vec::new();
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
            if p.is_symlink() && !canon(&p).starts_with(&root) {
                skipped.push((p, "a link that leads out of the directory: not followed"));
                continue;
            }
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if !(is_capture(&p) || is_csv(&p)) {
                continue;
            }
            // Only regular files are read: the file type after following links, without
            // opening the file (opening a named pipe blocks until a writer comes).
            match std::fs::metadata(&p).map(|m| m.file_type()) {
                Ok(t) if t.is_file() => {
                    if seen_files.insert(canon(&p)) {
                        out.push(p);
                    }
                }
                Ok(t) => skipped.push((p, special_file_kind(t))),
                Err(_) => skipped.push((p, "a broken link or an unreadable entry: not read")),
            }
        }
    }
    out.sort();
    skipped.sort();
    Ok((out, skipped))
}

/// Why a non-regular file is not read, by its type.
fn special_file_kind(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_fifo() {
            return "a named pipe (FIFO): not read";
        }
        if t.is_socket() {
            return "a socket: not read";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device: not read";
        }
    }
    let _ = t;
    "not a regular file: not read"
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

fn run_dir(kind: Option<Kind>, dir: &Path, opts: &ReplayOpts, json: bool) -> i32 {
    let files = match find_traces_inside(dir) {
        Ok((f, skipped)) => {
            for (p, why) in skipped {
                eprintln!("warning: {}: {why}", p.display());
            }
            f
        }
        Err(e) => return report_error(&e),
    };
    // Recognise kinds first (cheap), keep the requested ones. A file whose header names no
    // kind is an error (it may be a trace with a typo) unless --skip-unknown.
    let mut jobs = Vec::new();
    let mut outcomes: Vec<(PathBuf, Outcome)> = Vec::new();
    let mut unknown = 0usize;
    for f in files {
        match Kind::detect(&f) {
            Ok(k) if kind.is_none_or(|x| x == k) => jobs.push((f, k)),
            Ok(_) => {}
            Err(_) if opts.skip_unknown => unknown += 1,
            Err(e) => outcomes.push((f, Outcome::Failed(e))),
        }
    }
    if jobs.is_empty() && outcomes.is_empty() {
        return report_error(&InputError::file(
            dir,
            format!(
                "no {}traces found (looked for .csv, .pcap, .pcapng, .cap)",
                kind.map_or(String::new(), |k| format!("{} ", k.name()))
            ),
        ));
    }
    let mut kinds: Vec<Kind> = Vec::new();
    for (_, k) in &jobs {
        if !kinds.contains(k) {
            kinds.push(*k);
        }
    }
    if let Err(e) = opts.check_used(&kinds) {
        return report_error(&e);
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
        let differ: Vec<&Summary> = summaries
            .iter()
            .filter(|s| s.params.iter().any(|p| p.differs))
            .collect();
        crate::outln!(
            "\nparameters that differ from the defaults (every other one is at its default, set \
             or not; --json lists all with their origins):"
        );
        if differ.is_empty() {
            crate::outln!("  none");
        }
        for s in differ {
            let list: Vec<String> = s
                .params
                .iter()
                .filter(|p| p.differs)
                .map(|p| {
                    let origin = p.origin.strip_prefix(&format!("{}:", s.trace));
                    match origin {
                        Some(line) => format!("{}={} (line {line})", p.key, p.value),
                        None => format!("{}={} ({})", p.key, p.value, p.origin),
                    }
                })
                .collect();
            crate::outln!("  {}: {}", s.trace, list.join(", "));
        }
        let within = summaries.iter().filter(|s| s.within_tolerance).count();
        let fails = summaries.iter().filter(|s| s.outside_tolerance()).count();
        let nothing = summaries.len() - within - fails;
        let skipped = if unknown > 0 {
            format!(", {unknown} unknown skipped")
        } else {
            String::new()
        };
        crate::outln!(
            "\n{} traces: {within} within tolerance, {fails} outside, {nothing} nothing to \
             compare, {} unreadable{skipped} ({:.1} s)",
            summaries.len() + errors.len(),
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
    report_nothing_compared(&summaries);
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
            if s.agreement.total == 0 {
                // Nothing compared: no agreement to show.
                "-".to_string()
            } else {
                format!("{} {}", s.agreement.what, pct(s.agreement.ratio))
            },
            mx,
            p99,
            if s.nothing_to_compare.is_some() {
                "NOTHING TO COMPARE"
            } else if s.within_tolerance {
                "PASS"
            } else {
                "FAIL"
            }
        );
    }
    t
}
