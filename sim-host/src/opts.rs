//! The options of one replay, as the command line gives them: how the fixed side is driven,
//! `--set` parameters, outputs, tolerances. Every module of the replay reads them from here.

use crate::trace::Param;
use crate::trace::kinds::KindInfo;
use serde::Serialize;
use std::path::{Path, PathBuf};

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
    /// `--min-meaningful`: the share of a trace's events that must move the reference's state
    /// for a verdict (`None`: [`crate::driver::MIN_MEANINGFUL_SHARE`]).
    pub min_meaningful: Option<f64>,
    /// The name reports, messages, parameter origins and `--out` give the trace, when it is
    /// not its path: `-` for standard input, which is replayed from a temporary copy (`None`:
    /// the path).
    pub shown_as: Option<PathBuf>,
}

impl ReplayOpts {
    /// The name of the trace at `path` in reports ([`shown_as`](Self::shown_as), else `path`).
    pub fn shown<'a>(&'a self, path: &'a Path) -> &'a Path {
        self.shown_as.as_deref().unwrap_or(path)
    }

    /// The share of events that must be meaningful for a verdict.
    pub fn min_meaningful(&self) -> f64 {
        self.min_meaningful
            .unwrap_or(crate::driver::MIN_MEANINGFUL_SHARE)
    }

    /// The tolerances for `kind`: its defaults with the command line's overrides.
    pub fn tolerances(&self, kind: &KindInfo) -> Tolerances {
        let d = Tolerances::for_kind(kind);
        Tolerances {
            min_agreement: self.tol.min_agreement.unwrap_or(d.min_agreement),
            max_p99_rel_err: self.tol.max_p99_rel_err.unwrap_or(d.max_p99_rel_err),
            max_rel_err: self.tol.max_rel_err.unwrap_or(d.max_rel_err),
        }
    }
}

/// Limits a replay must stay within. Defaults per kind: see [`Tolerances::for_kind`].
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Tolerances {
    /// Minimum agreement ratio (branches or order).
    pub min_agreement: f64,
    /// Maximum p99 relative error.
    pub max_p99_rel_err: f64,
    /// Maximum relative error.
    pub max_rel_err: f64,
}

impl Tolerances {
    /// The documented defaults: TIMELY and HPCC need branch agreement ≥ 99.9 %, p99 ≤ 0.1 % and
    /// max ≤ 1 % relative error (their issues' fidelity targets); CATS needs identical order.
    pub fn for_kind(kind: &KindInfo) -> Self {
        let t = kind.tolerances;
        Self {
            min_agreement: t.min_agreement,
            max_p99_rel_err: t.max_p99_rel_err,
            max_rel_err: t.max_rel_err,
        }
    }
}
