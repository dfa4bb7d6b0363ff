//! `sim-host replay`: one trace or a directory of traces, every kind, in parallel, with one
//! table and CI-friendly exit codes (0 within tolerance, 1 fidelity outside tolerance, 2 bad
//! input or usage, or nothing meaningful to compare).

use cc_replay::files::{find_traces_inside, output_in, replay_file};
use cc_replay::summary::{Summary, pct};
use cc_trace::{InputError, Param, parse_cli_set};
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

use cc_replay::kinds::Kind;
use cc_replay::opts::{Mode, ReplayOpts, TolOverride};

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
    if cc_output::output::stdout_failed() {
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
            cc_output::out!("{}", s.render());
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
    cc_output::outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
}

fn report_error(e: &InputError) -> i32 {
    eprintln!("error: {e}");
    EXIT_INPUT
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
            if let Err(e) = made.and_then(|()| cc_output::output::refuse_inputs(&o, &inputs)) {
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
        cc_output::out!("{}", table(&summaries));
        for s in summaries.iter().filter(|s| !s.within_tolerance) {
            cc_output::outln!();
            cc_output::out!("{}", s.render());
        }
        let differ: Vec<&Summary> = summaries
            .iter()
            .filter(|s| s.params.iter().any(|p| p.differs))
            .collect();
        cc_output::outln!(
            "\nparameters that differ from the defaults (every other one is at its default, set \
             or not; --json lists all with their origins):"
        );
        if differ.is_empty() {
            cc_output::outln!("  none");
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
            cc_output::outln!("  {}: {}", s.trace, list.join(", "));
        }
        let within = summaries.iter().filter(|s| s.within_tolerance).count();
        let fails = summaries.iter().filter(|s| s.outside_tolerance()).count();
        let nothing = summaries.len() - within - fails;
        let skipped = if unknown > 0 {
            format!(", {unknown} unknown skipped")
        } else {
            String::new()
        };
        cc_output::outln!(
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

/// The exit codes, for `replay --help`.
pub const EXIT_CODES: &str = "Exit codes: 0 every trace within tolerance; 1 a fidelity figure outside \
tolerance; 2 bad input or usage (the message names the file, the line and what is wrong), or a \
trace or capture flow with nothing meaningful to compare (reported as NOTHING TO COMPARE with the \
reason).";

/// `replay all --help`: what `all` does.
const ALL_HELP: &str = "Every kind, recognised by each file's header row (captures are hpcc); a \
directory is walked (links inside it followed as long as they stay inside it, each file once). \
`--set KEY=VALUE` applies to every kind that has KEY; `--set KIND.KEY=VALUE` to one kind; a key no \
kind has, or that no trace of the run uses, is a usage error (exit 2). Every report lists the \
parameters in force and where each came from. `replay KIND --help` gives each kind's format and \
keys.";

/// Options shared by every `replay` kind.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// A trace file, `-` for standard input, or a directory of traces.
    pub path: PathBuf,
    /// Set a parameter, KEY=VALUE (repeatable; the keys, defaults and limits are listed below).
    /// Wins over `# set` lines; a key the kind does not have is refused.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_cli_set)]
    pub set: Vec<Param>,
    /// Write one row per event (a directory when PATH is a directory: one file per trace, its
    /// relative path + `.out.csv`). Never an input; written whole or not at all.
    #[arg(long, value_name = "OUT.csv")]
    pub out: Option<PathBuf>,
    /// Draw an SVG plot (a directory when PATH is a directory: relative path + `.svg`).
    #[arg(long, value_name = "OUT.svg")]
    pub plot: Option<PathBuf>,
    /// In a directory, pass over `.csv` files whose header row names no trace kind (without it
    /// they are errors: exit 2).
    #[arg(long)]
    pub skip_unknown: bool,
    /// Print the summary as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// free: both sides run independently; forced: re-seed the fixed side from the reference
    /// after every event (the kinds that have a state to re-seed).
    #[arg(long, value_enum, default_value_t = Mode::Free)]
    pub mode: Mode,
    /// Minimum branch (or order) agreement, a ratio in [0, 1] [default: per kind, below].
    #[arg(long, value_name = "RATIO")]
    pub min_agreement: Option<f64>,
    /// Maximum p99 relative error of the rate or window [default: per kind, below].
    #[arg(long, value_name = "RATIO")]
    max_p99_rel_err: Option<f64>,
    /// Maximum relative error of the rate or window [default: per kind, below].
    #[arg(long, value_name = "RATIO")]
    pub max_rel_err: Option<f64>,
    /// Minimum share of a trace's events that must be meaningful (a step of the algorithm; see
    /// each kind) for a verdict, a ratio in [0, 1] [default: 0.5]. At least one such event is
    /// always needed.
    #[arg(long, value_name = "RATIO")]
    pub min_meaningful: Option<f64>,
}

/// The help of the options whose meaning depends on the kind, from its registry entry: whether
/// it has a forced mode, what its agreement counts and its default limits, whether it has a
/// relative error, what a meaningful event is.
fn kind_options(cmd: clap::Command, k: Kind) -> clap::Command {
    let info = k.info();
    let t = info.tolerances;
    let mode = if info.has_forced_mode {
        "free: both sides run independently; forced: re-seed the fixed side from the reference \
         after every event"
            .to_string()
    } else {
        format!(
            "free, the only mode of {}: it has no state to re-seed (forced is refused)",
            k.name()
        )
    };
    let rel = |what: &str, d: f64| match info.rel_err_of {
        Some(q) => format!("{what} relative error of the {q} [default: {d:e}]"),
        None => format!(
            "Not for {}: it compares the {} of its decisions and has no relative error (refused)",
            k.name(),
            info.agreement
        ),
    };
    let forced = info.has_forced_mode;
    cmd.mut_arg("mode", |a| a.help(mode).hide_possible_values(!forced))
        .mut_arg("min_agreement", |a| {
            a.help(format!(
                "Minimum {} agreement, a ratio in [0, 1] [default: {}]",
                info.agreement, t.min_agreement
            ))
        })
        .mut_arg("max_p99_rel_err", |a| {
            a.help(rel("Maximum p99", t.max_p99_rel_err))
        })
        .mut_arg("max_rel_err", |a| a.help(rel("Maximum", t.max_rel_err)))
        .mut_arg("min_meaningful", |a| {
            a.help(format!(
                "Minimum share of the events that must be meaningful for a verdict, a ratio in \
                 [0, 1] [default: 0.5]; meaningful here: {}. At least one meaningful event is \
                 always needed",
                info.meaningful
            ))
        })
}

/// The per-kind defaults of the tolerances, for `replay all --help`.
fn tolerance_defaults() -> String {
    Kind::all()
        .map(|k| {
            let t = k.info().tolerances;
            match k.info().rel_err_of {
                Some(q) => format!(
                    "{}: {} agreement ≥ {}, {q} error p99 ≤ {:e}, max ≤ {:e}",
                    k.name(),
                    k.info().agreement,
                    t.min_agreement,
                    t.max_p99_rel_err,
                    t.max_rel_err
                ),
                None => format!(
                    "{}: {} agreement ≥ {} (no relative error)",
                    k.name(),
                    k.info().agreement,
                    t.min_agreement
                ),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `replay KIND`: one subcommand per kind of the registry (`cc_replay::kinds::KINDS`), plus
/// `all`; each takes [`ReplayArgs`] and lists its format and keys in `--help`.
pub struct ReplayCmd {
    /// `None`: `all`.
    pub kind: Option<Kind>,
    /// Its options.
    pub args: ReplayArgs,
}

impl clap::FromArgMatches for ReplayCmd {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let Some((name, sub)) = m.subcommand() else {
            return Err(clap::Error::new(clap::error::ErrorKind::MissingSubcommand));
        };
        let kind = match name {
            "all" => None,
            n => Some(
                Kind::named(n)
                    .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidSubcommand))?,
            ),
        };
        Ok(Self {
            kind,
            args: ReplayArgs::from_arg_matches(sub)?,
        })
    }
    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Subcommand for ReplayCmd {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        use clap::Args as _;
        let mut cmd = cmd.subcommand(ReplayArgs::augment_args(
            clap::Command::new("all")
                .about("Every kind, recognised by header row.")
                .after_long_help(format!(
                    "{ALL_HELP}\n\nDefault limits: {}.\n\n{EXIT_CODES}",
                    tolerance_defaults()
                )),
        ));
        for k in Kind::all() {
            cmd = cmd.subcommand(kind_options(
                ReplayArgs::augment_args(
                    clap::Command::new(k.name())
                        .about(format!("{}.", capitalised(k.info().about)))
                        .after_long_help(format!("{}\n{EXIT_CODES}", k.info().help())),
                ),
                k,
            ));
        }
        cmd.subcommand_required(true)
    }
    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }
    fn has_subcommand(name: &str) -> bool {
        name == "all" || Kind::named(name).is_some()
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// `sim-host replay`: the options checked, then [`run`].
pub fn cmd(c: ReplayCmd) -> i32 {
    let ReplayCmd { kind, args: a } = c;

    for (name, v) in [
        ("--min-agreement", a.min_agreement),
        ("--min-meaningful", a.min_meaningful),
    ] {
        if let Some(v) = v
            && !(0.0..=1.0).contains(&v)
        {
            eprintln!("error: {name} {v}: must be a ratio in [0, 1] (0.999 = 99.9 %)");
            return EXIT_INPUT;
        }
    }
    for (name, v) in [
        ("--min-agreement", a.min_agreement),
        ("--max-p99-rel-err", a.max_p99_rel_err),
        ("--max-rel-err", a.max_rel_err),
    ] {
        if let Some(v) = v
            && !(v.is_finite() && v >= 0.0)
        {
            eprintln!("error: {name} {v}: must be a finite number ≥ 0");
            return EXIT_INPUT;
        }
    }
    let opts = ReplayOpts {
        params: a.set,
        out: a.out,
        plot: a.plot,
        mode: a.mode,
        tol: TolOverride {
            min_agreement: a.min_agreement,
            max_p99_rel_err: a.max_p99_rel_err,
            max_rel_err: a.max_rel_err,
        },
        skip_unknown: a.skip_unknown,
        min_meaningful: a.min_meaningful,
        shown_as: None,
    };
    run(kind, &a.path, &opts, a.json)
}
