//! The `sim-host` command line: the subcommands and their dispatch. Each subcommand's options and
//! its run live in its own module ([`crate::replay`], [`crate::int`], [`crate::sim`],
//! [`crate::sim::sweep`] for `merge`, [`crate::sim::slowdown`], [`crate::fixtures`]), which owns
//! its text, files and exit code; exit codes: 0 within tolerance, 1 fidelity outside tolerance,
//! 2 bad input or usage.

use clap::{Parser, Subcommand};
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

#[derive(Subcommand)]
enum Cmd {
    /// Replay a trace (or every trace under a directory) and report fidelity.
    #[command(after_long_help = crate::replay::EXIT_CODES)]
    Replay {
        #[command(subcommand)]
        kind: crate::replay::ReplayCmd,
    },
    /// In-band network telemetry (HPCC) helpers.
    Int {
        #[command(subcommand)]
        cmd: crate::int::IntCmd,
    },
    /// Run a closed-loop packet-level simulation of a scenario (TOML) with the fixed-point
    /// controllers or the f64 references in the loop.
    #[command(after_long_help = crate::sim::sim_help())]
    Sim(crate::sim::SimArgs),
    /// Combine sweep result files (`sim --results DIR`) into one CSV table, one row per run
    /// (idempotent): a run is identified by the file's content (experiment, controller, seed),
    /// a duplicate file is counted once and named, two files of one run that differ are an
    /// error.
    Merge(crate::sim::sweep::MergeArgs),
    /// FCT slowdown by flow size as the HPCC authors' fct_analysis.py bins it: finished flows
    /// sorted by size, 20 bins of 5 % of the flows, p50/p95/p99 per bin; reads `sim --out`'s
    /// NAME_flows.csv or an ns-3 fct.txt (docs/sim.md, "Slowdown analysis").
    #[command(after_long_help = crate::sim::slowdown::SLOWDOWN_EXIT_CODES)]
    Slowdown(crate::sim::slowdown::SlowdownArgs),
    /// Regenerate the shipped fixtures (deterministic), or check that they are unchanged.
    Fixtures(crate::fixtures::FixturesArgs),
}

/// Parses the command line, runs the subcommand and returns its exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                crate::replay::EXIT_INPUT
            } else {
                0
            };
            let _ = e.print();
            return ExitCode::from(code as u8);
        }
    };
    let code = match cli.cmd {
        Cmd::Replay { kind } => crate::replay::cmd(kind),
        Cmd::Int { cmd } => crate::int::cmd(cmd),
        Cmd::Sim(a) => crate::sim::cmd(a),
        Cmd::Merge(a) => crate::sim::sweep::merge_cmd(a),
        Cmd::Slowdown(a) => crate::sim::slowdown::cmd(a),
        Cmd::Fixtures(a) => crate::fixtures::cmd(a),
    };
    // One rule for every subcommand: a write to standard output that failed (a full disk, a
    // closed pipe) leaves an incomplete output, which is an error with a message and exit 2.
    let code = if cc_output::output::stdout_failed() {
        eprintln!(
            "error: cannot write to standard output (a full disk or a closed pipe): the output \
             is incomplete"
        );
        crate::replay::EXIT_INPUT
    } else {
        code
    };
    ExitCode::from(code as u8)
}
