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

#[derive(Subcommand)]
enum Cmd {
    /// Replay a trace (or every trace under a directory) and report fidelity.
    Replay {
        /// Trace kind: all (recognised by header row), timely, hpcc, cats.
        #[arg(value_enum)]
        kind: KindArg,
        /// A trace file (.csv; for hpcc also .pcap/.pcapng/.cap, any case), `-` for standard
        /// input, or a directory of them (every file visited once, links followed).
        path: PathBuf,
        /// Override a parameter (a Config field name), e.g. --set beta=0.5; repeatable. Wins over
        /// `# set` lines.
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_cli_set)]
        set: Vec<Param>,
        /// Write one row per event (a directory when PATH is a directory: one file per trace,
        /// its relative path + `.out.csv`). Never an input; written whole or not at all.
        #[arg(long, value_name = "OUT.csv")]
        out: Option<PathBuf>,
        /// Draw an SVG plot (a directory when PATH is a directory: relative path + `.svg`).
        #[arg(long, value_name = "OUT.svg")]
        plot: Option<PathBuf>,
        /// In a directory, pass over `.csv` files whose header row names no trace kind (without
        /// it they are errors: exit 2).
        #[arg(long)]
        skip_unknown: bool,
        /// Print the summary as JSON instead of text.
        #[arg(long)]
        json: bool,
        /// free: both sides run independently; forced: re-seed the fixed side from the reference after every event.
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
    },
    /// In-band network telemetry (HPCC) helpers.
    Int {
        #[command(subcommand)]
        cmd: IntCmd,
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
        Cmd::Replay {
            kind,
            path,
            set,
            out,
            plot,
            json,
            mode,
            skip_unknown,
            min_agreement,
            max_p99_rel_err,
            max_rel_err,
        } => {
            if let Some(v) = min_agreement
                && !(0.0..=1.0).contains(&v)
            {
                eprintln!("error: --min-agreement {v}: must be a ratio in [0, 1] (0.999 = 99.9 %)");
                return ExitCode::from(replay::EXIT_INPUT as u8);
            }
            for (name, v) in [
                ("--min-agreement", min_agreement),
                ("--max-p99-rel-err", max_p99_rel_err),
                ("--max-rel-err", max_rel_err),
            ] {
                if let Some(v) = v
                    && !(v.is_finite() && v >= 0.0)
                {
                    eprintln!("error: {name} {v}: must be a finite number ≥ 0");
                    return ExitCode::from(replay::EXIT_INPUT as u8);
                }
            }
            let opts = ReplayOpts {
                params: set,
                out,
                plot,
                mode,
                tol: TolOverride {
                    min_agreement,
                    max_p99_rel_err,
                    max_rel_err,
                },
                skip_unknown,
            };
            replay::run(kind, &path, &opts, json)
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
        Cmd::Fixtures { dir, check, only } => {
            use sim_host::replay::Kind;
            let kinds: Vec<Kind> = match only {
                None | Some(KindArg::All) => Kind::ALL.to_vec(),
                Some(KindArg::Timely) => vec![Kind::Timely],
                Some(KindArg::Hpcc) => vec![Kind::Hpcc],
                Some(KindArg::Cats) => vec![Kind::Cats],
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
