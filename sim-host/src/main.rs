//! The `sim-host` command line. Exit codes: 0 within tolerance, 1 fidelity outside tolerance,
//! 2 bad input or usage.

use clap::{Parser, Subcommand};
use sim_host::replay::{self, KindArg, Mode, ReplayOpts, TolOverride};
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
tolerance; 2 bad input or usage (the message names the file, the line and what is wrong).";

const TIMELY_HELP: &str =
    "Trace: CSV, header row `t_send_ns,t_complete_ns,bytes`, one completion per row \
(NIC clock, ns; segment bytes). `#` lines are comments; `# set KEY=VALUE` lines before the first \
data row set parameters (`--set` wins; `--set timely.KEY=VALUE` in `replay all`).

Keys (default, unit):
  line_rate_bps           10000000000  b/s (also max/init unless set)
  min_rate_bps            10000000     b/s
  max_rate_bps            line rate    b/s
  init_rate_bps           max rate     b/s
  t_low_ns                50000        ns
  t_high_ns               500000       ns (≤ 134217727)
  min_rtt_ns              20000        ns
  alpha                   0.875        ratio in [1/16, 1] (decimal or a/b)
  beta                    0.8          ratio in (0, 1]
  delta_bps               10000000     b/s
  hai_n                   5            multiplier
  hai_after               5            completions (≤ 255)
  app_limited             off          ratio of the rate (§5 rule), or off
  per_completion_scaling  false        true/false (§5 rule)";

const HPCC_HELP: &str =
    "Trace: CSV, header row `t_ns,ack_seq,snd_nxt,int`, one ACK per row (the INT \
block as lowercase hex, as on the wire), or a RoCEv2 capture (.pcap/.pcapng/.cap, any case): one \
result per flow. `# set KEY=VALUE` lines before the first data row set parameters (`--set` wins; \
`--set hpcc.KEY=VALUE` in `replay all`).

Keys (default, unit):
  nic_rate_bps   100000000000  b/s
  base_rtt_ns    13000         ns (T)
  eta            0.95          ratio in (0, 1]
  max_stage      5             stages
  w_ai_bytes     80            bytes
  min_rate_bps   100000000     b/s";

const CATS_HELP: &str =
    "Trace: CSV, header row `t_ns,event,prio,bytes`; events `enqueue` (prio 0-4, \
bytes), `ack` (bytes of send buffer freed), `feed`. `# set KEY=VALUE` lines before the first data \
row set parameters (`--set` wins; `--set cats.KEY=VALUE` in `replay all`).

Keys (default, unit):
  mss_bytes      1460              bytes (1-65535)
  snd_buf_bytes  131072            bytes free at the start
  h0 h1 h2 h3    60000 30000 15000 6000  high watermarks, bytes
  l0 l1 l2 l3    50 % of h         low watermarks, bytes
  m0 m1 m2 m3 m4 0.25 0.5 1 1.5 2  payback multipliers (decimal)";

const PACER_HELP: &str = "Trace: CSV, header row `t_ns,event,flow,value`, rows in time order; events \
`rate` (b/s), `window` (bytes; makes a window flow), `enqueue` (bytes), `ack` (bytes), `tick` (flow \
and value may be empty). Both schedules must agree on the order of segments and within 1 ns on \
every send time (docs/pacer.md). `# set KEY=VALUE` lines before the first data row set parameters \
(`--set` wins; `--set pacer.KEY=VALUE` in `replay all`).

Keys (default, unit):
  line_rate_bps      (trace)        b/s
  seg_bytes          (trace)        bytes per segment
  seg_bytes.<flow>                  bytes per segment of one flow
  init_rate_bps      line rate      b/s before a flow's first `rate` row
  hybrid_rate_bps    off            b/s of the hybrid burst pacer (§5)
  burst_bytes        (trace)        bytes per hybrid burst";

const ALL_HELP: &str = "Every kind, recognised by each file's header row (captures are hpcc); a \
directory is walked (links followed, each file once). `--set KEY=VALUE` applies to every kind that \
has KEY; `--set KIND.KEY=VALUE` to one kind; a key no kind has is a usage error. See `replay timely \
--help`, `replay hpcc --help`, `replay cats --help` for each format and its keys.";

/// Options shared by every `replay` kind.
#[derive(clap::Args)]
struct ReplayArgs {
    /// A trace file, `-` for standard input, or a directory of traces.
    path: PathBuf,
    /// Override a parameter, e.g. --set beta=0.5 (repeatable). Wins over `# set` lines.
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
    /// after every event.
    #[arg(long, value_enum, default_value_t = Mode::Free)]
    mode: Mode,
    /// Minimum branch (or order) agreement, 0..1 [default: 0.999; cats 1.0].
    #[arg(long, value_name = "RATIO")]
    min_agreement: Option<f64>,
    /// Maximum p99 relative error of the rate/window [default: 1e-3].
    #[arg(long, value_name = "RATIO")]
    max_p99_rel_err: Option<f64>,
    /// Maximum relative error of the rate/window [default: 1e-2].
    #[arg(long, value_name = "RATIO")]
    max_rel_err: Option<f64>,
}

#[derive(Subcommand)]
enum ReplayKind {
    /// Every kind, recognised by header row.
    #[command(after_long_help = format!("{ALL_HELP}\n\n{EXIT_CODES}"))]
    All(ReplayArgs),
    /// TIMELY RTT traces.
    #[command(after_long_help = format!("{TIMELY_HELP}\n\n{EXIT_CODES}"))]
    Timely(ReplayArgs),
    /// HPCC INT traces and RoCEv2 captures.
    #[command(after_long_help = format!("{HPCC_HELP}\n\n{EXIT_CODES}"))]
    Hpcc(ReplayArgs),
    /// CATS conductor event traces.
    #[command(after_long_help = format!("{CATS_HELP}\n\n{EXIT_CODES}"))]
    Cats(ReplayArgs),
    /// Segment pacer event traces (cc-pacer).
    #[command(after_long_help = format!("{PACER_HELP}\n\n{EXIT_CODES}"))]
    Pacer(ReplayArgs),
}

#[derive(Subcommand)]
enum Cmd {
    /// Replay a trace (or every trace under a directory) and report fidelity.
    #[command(after_long_help = EXIT_CODES)]
    Replay {
        #[command(subcommand)]
        kind: ReplayKind,
    },
    /// In-band network telemetry (HPCC) helpers.
    Int {
        #[command(subcommand)]
        cmd: IntCmd,
    },
    /// Run a closed-loop packet-level simulation of a scenario (TOML) with the fixed-point
    /// controllers or the f64 references in the loop.
    #[command(after_long_help = SIM_HELP)]
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
        /// fixed: the firmware crates; reference: the f64 references (cats: the conductor)
        /// [default: the scenario's].
        #[arg(long, value_enum)]
        controller: Option<sim_host::sim::scenario::ControllerKind>,
        /// RNG seed [default: the scenario's].
        #[arg(long)]
        seed: Option<u64>,
        /// Override an algorithm parameter (the `replay --set` keys), repeatable.
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_cli_set)]
        set: Vec<Param>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Combine sweep result files (`sim --results DIR`) into one CSV table, one row per
    /// distinct result (idempotent).
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
    /// Regenerate the shipped fixtures (deterministic), or check that they are unchanged.
    Fixtures {
        /// Where the fixtures live.
        #[arg(long, default_value = "fixtures")]
        dir: PathBuf,
        /// Compare instead of writing; exit 1 if any file differs.
        #[arg(long)]
        check: bool,
        /// Only this kind.
        #[arg(long, value_enum)]
        only: Option<KindArg>,
    },
}

const SIM_HELP: &str = "Scenario: TOML with name, algorithm (timely|hpcc|cats), controller, seed, \
duration_ns, mtu_bytes, segment_bytes, ack_every, reaction, [params] (the `replay --set` keys), \
[web] (cats: page, scheduler cats|fifo, baseline, pacing_rate_bps, window_bytes), [topology] (star|dumbbell|leaf_spine), [[flows]] (long|incast|poisson) and [output]; see \
docs/sim.md. Several scenarios with --results DIR make a sweep (scenario x controller x seed, \
--seeds, --shard I/N for a job array; combine with `sim-host merge`). Exit codes: 0 the run \
finished and every invariant held; 1 an \
invariant failed; 2 a bad scenario (the message names the file and the key) or an output that \
could not be written.";

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
            let (kind, a) = match kind {
                ReplayKind::All(a) => (KindArg::All, a),
                ReplayKind::Timely(a) => (KindArg::Timely, a),
                ReplayKind::Hpcc(a) => (KindArg::Hpcc, a),
                ReplayKind::Cats(a) => (KindArg::Cats, a),
                ReplayKind::Pacer(a) => (KindArg::Pacer, a),
            };
            if let Some(v) = a.min_agreement
                && !(0.0..=1.0).contains(&v)
            {
                eprintln!("error: --min-agreement {v}: must be a ratio in [0, 1] (0.999 = 99.9 %)");
                return ExitCode::from(replay::EXIT_INPUT as u8);
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
            };
            replay::run(kind, &a.path, &opts, a.json)
        }
        Cmd::Int {
            cmd: IntCmd::Decode { hex },
        } => match sim_host::hpcc::int_decode(&hex) {
            Ok(text) => {
                sim_host::out!("{text}");
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
            json,
        } => match results {
            Some(dir) => {
                use sim_host::sim::{scenario::ControllerKind, sweep};
                if plot.is_some() || out.is_some() || record.is_some() || seed.is_some() || json {
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
                                sim_host::outln!(
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
                    progress: true,
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
        Cmd::Fixtures { dir, check, only } => {
            use sim_host::replay::Kind;
            let kinds: Vec<Kind> = match only {
                None | Some(KindArg::All) => Kind::ALL.to_vec(),
                Some(KindArg::Timely) => vec![Kind::Timely],
                Some(KindArg::Hpcc) => vec![Kind::Hpcc],
                Some(KindArg::Cats) => vec![Kind::Cats],
                Some(KindArg::Pacer) => vec![Kind::Pacer],
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
    ExitCode::from(code as u8)
}
