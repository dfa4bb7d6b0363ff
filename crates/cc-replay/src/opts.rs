//! The options of one replay, as the command line gives them: how the fixed side is driven,
//! `--set` parameters, outputs, tolerances. Every module of the replay reads them from here.

use crate::kinds::Kind;
use cc_trace::kinds::KindInfo;
use cc_trace::{InputError, Param};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// How the fixed-point side is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
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
    /// max ≤ 1 % relative error (their fidelity targets: docs/timely.md § "Measured fidelity",
    /// docs/hpcc.md § 8); CATS needs identical order.
    pub fn for_kind(kind: &KindInfo) -> Self {
        let t = kind.tolerances;
        Self {
            min_agreement: t.min_agreement,
            max_p99_rel_err: t.max_p99_rel_err,
            max_rel_err: t.max_rel_err,
        }
    }
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
