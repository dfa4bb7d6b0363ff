//! The `sim-host` command line. Exit codes: 0 within tolerance, 1 fidelity outside tolerance,
//! 2 bad input or usage.

use clap::{Parser, Subcommand};
use sim_host::kinds::Kind;
use sim_host::replay::{self, Mode, ReplayOpts, TolOverride};
use sim_host::trace::{Param, parse_cli_set};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "sim-host",
    version,
    about = "Replay congestion-control traces through the fixed-point crates and f64 references, side by side"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

const EXIT_CODES: &str = "Exit codes: 0 every trace within tolerance; 1 a fidelity figure outside \
tolerance; 2 bad input or usage (the message names the file, the line and what is wrong), or a \
trace or capture flow with nothing meaningful to compare (reported as NOTHING TO COMPARE with the \
reason).";

const ALL_HELP: &str = "Every kind, recognised by each file's header row (captures are hpcc); a \
directory is walked (links inside it followed as long as they stay inside it, each file once). \
`--set KEY=VALUE` applies to every kind that has KEY; `--set KIND.KEY=VALUE` to one kind; a key no \
kind has, or that no trace of the run uses, is a usage error (exit 2). Every report lists the \
parameters in force and where each came from. `replay KIND --help` gives each kind's format and \
keys.";

/// Options shared by every `replay` kind.
#[derive(clap::Args)]
struct ReplayArgs {
    /// A trace file, `-` for standard input, or a directory of traces.
    path: PathBuf,
    /// Set a parameter, KEY=VALUE (repeatable; the keys, defaults and limits are listed below).
    /// Wins over `# set` lines; a key the kind does not have is refused.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_cli_set)]
    set: Vec<Param>,
    /// Write one row per event (a directory when PATH is a directory: one file per trace, its
    /// relative path + `.out.csv`). Never an input; written whole or not at all.
    #[arg(long, value_name = "OUT.csv")]
    out: Option<PathBuf>,
    /// Draw an SVG plot (a directory when PATH is a directory: relative path + `.svg`).
    #[arg(long, value_name = "OUT.svg")]
    plot: Option<PathBuf>,
    /// In a directory, pass over `.csv` files whose header row names no trace kind (without it
    /// they are errors: exit 2).
    #[arg(long)]
    skip_unknown: bool,
    /// Print the summary as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// free: both sides run independently; forced: re-seed the fixed side from the reference
    /// after every event (the kinds that have a state to re-seed).
    #[arg(long, value_enum, default_value_t = Mode::Free)]
    mode: Mode,
    /// Minimum branch (or order) agreement, a ratio in [0, 1] [default: per kind, below].
    #[arg(long, value_name = "RATIO")]
    min_agreement: Option<f64>,
    /// Maximum p99 relative error of the rate or window [default: per kind, below].
    #[arg(long, value_name = "RATIO")]
    max_p99_rel_err: Option<f64>,
    /// Maximum relative error of the rate or window [default: per kind, below].
    #[arg(long, value_name = "RATIO")]
    max_rel_err: Option<f64>,
    /// Minimum share of a trace's events that must be meaningful (a step of the algorithm; see
    /// each kind) for a verdict, a ratio in [0, 1] [default: 0.5]. At least one such event is
    /// always needed.
    #[arg(long, value_name = "RATIO")]
    min_meaningful: Option<f64>,
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

/// `replay KIND`: one subcommand per kind of the registry (`sim_host::kinds::KINDS`), plus
/// `all`; each takes [`ReplayArgs`] and lists its format and keys in `--help`.
struct ReplayCmd {
    /// `None`: `all`.
    kind: Option<Kind>,
    args: ReplayArgs,
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

/// `slowdown --help`'s exit codes.
const SLOWDOWN_EXIT_CODES: &str = "Exit codes: 0 the analysis was written; 2 an unreadable or \
malformed input (file, line and what is wrong), a --label count other than the input count, \
--dport with a per-flow CSV, an output naming an input, a file given twice, identical files or \
one run's per-flow CSV and fct.txt in one series (each flow would count twice), --end-ns at or \
before --warmup-ns, or a series with no finished flow after the warm-up (nothing is written \
then). Each input's run is named from the sim --out summary beside it; a series pooling runs of \
different scenarios, parameters or controllers is said in a note and a warning.";

#[derive(Subcommand)]
enum Cmd {
    /// Replay a trace (or every trace under a directory) and report fidelity.
    #[command(after_long_help = EXIT_CODES)]
    Replay {
        #[command(subcommand)]
        kind: ReplayCmd,
    },
    /// In-band network telemetry (HPCC) helpers.
    Int {
        #[command(subcommand)]
        cmd: IntCmd,
    },
    /// Run a closed-loop packet-level simulation of a scenario (TOML) with the fixed-point
    /// controllers or the f64 references in the loop.
    #[command(after_long_help = sim_help())]
    Sim {
        /// The scenario file (fixtures/scenarios/*.toml); several with --results (a sweep).
        #[arg(required = true, num_args = 1..)]
        scenario: Vec<PathBuf>,
        /// Sweep: write one self-describing result file per (scenario, controller, seed) into
        /// DIR, named by a hash of all three; without --controller both controllers run.
        #[arg(long, value_name = "DIR")]
        results: Option<PathBuf>,
        /// Sweep: run the I-th of N shares of the jobs (0-based), e.g. a job array index.
        #[arg(long, value_name = "I/N", requires = "results")]
        shard: Option<String>,
        /// Sweep: seeds, e.g. 1..9 (9 excluded) or 1,4,7 [default: each scenario's].
        #[arg(long, value_name = "LIST", requires = "results")]
        seeds: Option<String>,
        /// Write SVG figures into this directory.
        #[arg(long, value_name = "DIR")]
        plot: Option<PathBuf>,
        /// Write the per-flow CSV, the time series and the summary JSON into this directory.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Record the chosen flows' TIMELY completions / HPCC ACKs / CATS conductor events as
        /// replayable CSV traces (HPCC also as a pcapng capture).
        #[arg(long, value_name = "DIR")]
        record: Option<PathBuf>,
        /// fixed: the firmware crates; reference: the f64 references (cats: the conductor); ns3: HPCC in the authors' ns-3 arithmetic
        /// [default: the scenario's].
        #[arg(long, value_enum)]
        controller: Option<sim_host::sim::scenario::ControllerKind>,
        /// RNG seed [default: the scenario's].
        #[arg(long)]
        seed: Option<u64>,
        /// Override an algorithm parameter (the `replay --set` keys), repeatable.
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_cli_set)]
        set: Vec<Param>,
        /// Write the HPCC authors' ns-3 simulator's files into this directory: fct.txt,
        /// pfc.txt, qlen.txt, and the topology.txt and flow.txt of the run (docs/sim.md).
        #[arg(long, value_name = "DIR")]
        ns3_out: Option<PathBuf>,
        /// Read the network from an ns-3 topology file: a star, a dumbbell, a two-tier
        /// leaf-spine (leaf_spine) or a three-tier fat tree (fat_tree) wired as the authors'
        /// mix/fat.txt, recognised from its links; it replaces the scenario's [topology] shape
        /// keys (docs/robustness.md §6g).
        #[arg(long, value_name = "FILE")]
        ns3_topology: Option<PathBuf>,
        /// Read the flows from an ns-3 flow file; they replace the scenario's [[flows]].
        #[arg(long, value_name = "FILE")]
        ns3_flows: Option<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Combine sweep result files (`sim --results DIR`) into one CSV table, one row per run
    /// (idempotent): a run is identified by the file's content (experiment, controller, seed),
    /// a duplicate file is counted once and named, two files of one run that differ are an
    /// error.
    Merge {
        /// Directories of result files.
        #[arg(required = true, num_args = 1..)]
        dirs: Vec<PathBuf>,
        /// Write the table here instead of standard output.
        #[arg(long, value_name = "FILE.csv")]
        out: Option<PathBuf>,
        /// Also write the summary across seeds (mean, sd, min, max per scenario, controller and
        /// metric) as CSV.
        #[arg(long, value_name = "FILE.csv")]
        summary: Option<PathBuf>,
        /// Also draw one SVG per scenario into this directory: every metric per seed, the
        /// fixed-point controller beside the f64 reference.
        #[arg(long, value_name = "DIR")]
        plot: Option<PathBuf>,
    },
    /// FCT slowdown by flow size as the HPCC authors' fct_analysis.py bins it: finished flows
    /// sorted by size, 20 bins of 5 % of the flows, p50/p95/p99 per bin; reads `sim --out`'s
    /// NAME_flows.csv or an ns-3 fct.txt (docs/sim.md, "Slowdown analysis").
    #[command(after_long_help = SLOWDOWN_EXIT_CODES)]
    Slowdown {
        /// Per-flow CSVs (`sim --out`) or ns-3 fct.txt files; inputs with one --label merge.
        #[arg(required = true, num_args = 1..)]
        inputs: Vec<PathBuf>,
        /// The series name of each input, in order (legend, CSV) [default: the path].
        #[arg(long, value_name = "NAME")]
        label: Vec<String>,
        /// Leave out flows that start before this time, ns.
        #[arg(long, value_name = "NS", default_value_t = 0)]
        warmup_ns: u64,
        /// The end of the load window, ns [default: the last flow start].
        #[arg(long, value_name = "NS")]
        end_ns: Option<u64>,
        /// Host link rate times hosts, b/s: reports the window's realised load.
        #[arg(long, value_name = "BPS")]
        capacity_bps: Option<f64>,
        /// fct.txt: keep only this destination port (100 normal, 200 incast, as fct_analysis.py -t).
        #[arg(long, value_name = "PORT")]
        dport: Option<u16>,
        /// Write the bins as CSV.
        #[arg(long, value_name = "FILE.csv")]
        out: Option<PathBuf>,
        /// Draw p50/p95/p99 slowdown against flow size (log axis), one line per series.
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<PathBuf>,
    },
    /// Regenerate the shipped fixtures (deterministic), or check that they are unchanged.
    Fixtures {
        /// Where the fixtures live.
        #[arg(long, default_value = "fixtures")]
        dir: PathBuf,
        /// Compare instead of writing; exit 1 if any file differs.
        #[arg(long)]
        check: bool,
        #[arg(long, value_parser = sim_host::kinds::parse_kind, help = only_help())]
        only: Option<Kind>,
    },
}

/// `fixtures --only`'s help: every kind of the registry.
fn only_help() -> String {
    format!(
        "Only this kind ({})",
        Kind::all().map(Kind::name).collect::<Vec<_>>().join(", ")
    )
}

/// `sim --help`'s text after the options: the scenario's keys, with the algorithms of the
/// controller registry and the `[params]` each parses.
fn sim_help() -> String {
    let registry = sim_host::sim::cc::REGISTRY;
    let names: Vec<&str> = registry.iter().map(|e| e.name).collect();
    let params: Vec<String> = registry
        .iter()
        .map(|e| format!("{}: {}", e.name, e.setup))
        .collect();
    format!(
        "Scenario: TOML with name, algorithm ({}), controller, seed, \
duration_ns, mtu_bytes, segment_bytes, ack_every, reaction, [params] ({}), \
[web] (cats: page, scheduler cats|fifo, baseline, pacing_rate_bps, window_bytes, initial_window_packets), [topology] (star|dumbbell|leaf_spine|fat_tree), [[flows]] (long|incast|poisson|poisson_incast) and [output]; see \
docs/sim.md. Several scenarios with --results DIR make a sweep (scenario x controller x seed, \
--seeds, --shard I/N for a job array; combine with `sim-host merge`). Exit codes: 0 the run \
finished and every invariant held; 1 an \
invariant failed; 2 a bad scenario (the message names the file and the key) or an output that \
could not be written.",
        names.join("|"),
        params.join("; ")
    )
}

#[derive(Subcommand)]
enum IntCmd {
    /// Pretty-print one INT block given as hex (as on the wire, after the UDP header).
    Decode {
        /// The INT block, hex (spaces, colons and a 0x prefix are ignored).
        hex: String,
    },
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                replay::EXIT_INPUT
            } else {
                0
            };
            let _ = e.print();
            return ExitCode::from(code as u8);
        }
    };
    let code = match cli.cmd {
        Cmd::Replay { kind } => {
            let ReplayCmd { kind, args: a } = kind;
            for (name, v) in [
                ("--min-agreement", a.min_agreement),
                ("--min-meaningful", a.min_meaningful),
            ] {
                if let Some(v) = v
                    && !(0.0..=1.0).contains(&v)
                {
                    eprintln!("error: {name} {v}: must be a ratio in [0, 1] (0.999 = 99.9 %)");
                    return ExitCode::from(replay::EXIT_INPUT as u8);
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
                    return ExitCode::from(replay::EXIT_INPUT as u8);
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
            replay::run(kind, &a.path, &opts, a.json)
        }
        Cmd::Int {
            cmd: IntCmd::Decode { hex },
        } => match sim_host::hpcc::int_decode(&hex) {
            Ok(text) => {
                cc_output::out!("{text}");
                0
            }
            Err(e) => {
                eprintln!("error: {e}");
                replay::EXIT_INPUT
            }
        },
        Cmd::Sim {
            scenario,
            results,
            shard,
            seeds,
            plot,
            out,
            record,
            controller,
            seed,
            set,
            ns3_out,
            ns3_topology,
            ns3_flows,
            json,
        } => match results {
            Some(dir) => {
                use sim_host::sim::{scenario::ControllerKind, sweep};
                if plot.is_some()
                    || out.is_some()
                    || record.is_some()
                    || seed.is_some()
                    || json
                    || ns3_out.is_some()
                    || ns3_topology.is_some()
                    || ns3_flows.is_some()
                {
                    eprintln!(
                        "error: a sweep (--results) takes --seeds, --shard, --controller and --set only"
                    );
                    return ExitCode::from(replay::EXIT_INPUT as u8);
                }
                let parsed = shard
                    .as_deref()
                    .map_or(Ok((0, 1)), sweep::parse_shard)
                    .and_then(|sh| {
                        seeds
                            .as_deref()
                            .map_or(Ok(Vec::new()), sweep::parse_seeds)
                            .map(|sd| (sh, sd))
                    });
                match parsed {
                    Err(e) => {
                        eprintln!("error: {e}");
                        replay::EXIT_INPUT
                    }
                    Ok((sh, sd)) => {
                        let cs = match controller {
                            Some(c) => vec![c],
                            None => vec![ControllerKind::Fixed, ControllerKind::Reference],
                        };
                        let jobs = sweep::jobs(&scenario, &cs, &sd);
                        match sweep::run(&jobs, sh, &dir, &set) {
                            Ok(done) => {
                                cc_output::outln!(
                                    "shard {}/{}: {} of {} jobs, results in {}",
                                    sh.0,
                                    sh.1,
                                    done.files.len(),
                                    jobs.len(),
                                    dir.display()
                                );
                                for v in &done.violated {
                                    eprintln!("INVARIANTS VIOLATED: {v}");
                                }
                                if sim_host::output::stdout_failed() {
                                    2
                                } else {
                                    done.exit_code()
                                }
                            }
                            Err(e) => {
                                eprintln!("error: {e}");
                                replay::EXIT_INPUT
                            }
                        }
                    }
                }
            }
            None => {
                if scenario.len() != 1 {
                    eprintln!("error: several scenarios are a sweep: give --results DIR");
                    return ExitCode::from(replay::EXIT_INPUT as u8);
                }
                let o = sim_host::sim::SimOpts {
                    plot,
                    out,
                    record,
                    controller,
                    seed,
                    set,
                    ns3_out,
                    ns3_topology,
                    ns3_flows,
                };
                sim_host::sim::cli(&scenario[0], &o, json)
            }
        },
        Cmd::Merge {
            dirs,
            out,
            summary,
            plot,
        } => sim_host::sim::sweep::merge_cli(
            &dirs,
            out.as_deref(),
            summary.as_deref(),
            plot.as_deref(),
        ),
        Cmd::Slowdown {
            inputs,
            label,
            warmup_ns,
            end_ns,
            capacity_bps,
            dport,
            out,
            plot,
        } => {
            if let Some(c) = capacity_bps.filter(|c| !(c.is_finite() && *c > 0.0)) {
                eprintln!("error: --capacity-bps {c}: a positive number of b/s");
                return ExitCode::from(replay::EXIT_INPUT as u8);
            }
            let o = sim_host::sim::slowdown::Opts {
                warmup_ns,
                end_ns,
                capacity_bps,
                dport,
            };
            sim_host::sim::slowdown::cli(&inputs, &label, &o, out.as_deref(), plot.as_deref())
        }
        Cmd::Fixtures { dir, check, only } => {
            let kinds: Vec<Kind> = match only {
                Some(k) => vec![k],
                None => Kind::all().collect(),
            };
            if check && !dir.is_dir() {
                eprintln!(
                    "error: {}: not a directory (fixtures --check compares the files in it)",
                    dir.display()
                );
                return ExitCode::from(replay::EXIT_INPUT as u8);
            }
            sim_host::fixtures::run(&dir, &kinds, check)
        }
    };
    // One rule for every subcommand: a write to standard output that failed (a full disk, a
    // closed pipe) leaves an incomplete output, which is an error with a message and exit 2.
    let code = if sim_host::output::stdout_failed() {
        eprintln!(
            "error: cannot write to standard output (a full disk or a closed pipe): the output \
             is incomplete"
        );
        replay::EXIT_INPUT
    } else {
        code
    };
    ExitCode::from(code as u8)
}
