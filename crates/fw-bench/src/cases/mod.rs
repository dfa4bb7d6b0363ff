//! The benchmark cases: one [`Case`] per (algorithm, entry point); each returns labelled samples.
//!
//! # Adding an algorithm (mechanical)
//! 1. Write `cases/<kind>.rs` with one `fn run_<entry>(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>>`
//!    per entry point. It reads the events of `ctx.fixtures/<kind>/*.csv` with `read_trace`
//!    (cc-trace's trace reader; the `# set` parameters go through cc-trace's parameter builder
//!    for the kind, so the benchmark runs exactly the configuration `sim-host replay` would),
//!    makes at most `ctx.limit` calls, copies the config and flow state into scratch memory once (`m.push_bytes`), then
//!    for each event calls the exported symbol with `m.call(symbol, &[cfg, flow, …])` and labels
//!    the sample with the branch the callee reports (e.g. the `CcTimelyBranch` written to an out
//!    pointer, read back with `m.read_u32`). State stays in simulated memory between calls, so
//!    each call sees the state the previous events left, as on the NIC.
//! 2. Add a `Case { … }` line to [`CASES`] with the goal per row (docs/performance.md § "The
//!    budget") (a `fn(&str) -> Option<Goal>` of the case label).
//! 3. Add the symbol prefix to `names::PREFIX_CRATES` if it is new (size attribution).
//!
//! Nothing else changes: the table, the goals column, `--profile` and `scripts/perf-report.sh`
//! pick the new rows up.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use cc_trace::{Param, TraceReader, merged_params};
use serde::de::DeserializeOwned;

use crate::machine::Machine;
use crate::table::{Goal, Sample};

mod cats;
pub(crate) mod hpcc;
mod pacer;
mod recip;
mod reference;
pub(crate) mod timely;

/// Which ELF a case runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Image {
    /// `crates/fw-probe` release build: the `probe_*` functions.
    Probe,
    /// `examples/c-firmware` build: the C firmware linked with the `cc-ffi` staticlib, i.e. the
    /// `cc_*` C ABI functions exactly as firmware calls them.
    CFirmware,
    /// `crates/ref-probe` release build: the f64 references (soft float), `ref_*` functions.
    Reference,
}

/// Inputs shared by every case.
#[derive(Clone, Debug)]
pub struct Ctx {
    /// The `fixtures/` directory (traces the cases draw events from).
    pub fixtures: PathBuf,
    /// Maximum number of calls per case (CI passes a small number).
    pub limit: usize,
}

/// The `*.csv` traces of `ctx.fixtures/<kind>/`, sorted by name.
pub(crate) fn fixture_paths(ctx: &Ctx, kind: &str) -> Result<Vec<PathBuf>> {
    let dir = ctx.fixtures.join(kind);
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    paths.sort();
    Ok(paths)
}

/// The name of the branch a call returned in `a0`: its low byte is the algorithm crate's
/// `#[repr(u8)]` branch code, which `name` decodes (`None`: no such code); a result struct
/// returned in registers leaves the padding bytes above it undefined.
fn branch_name(
    a0: u32,
    name: impl Fn(u8) -> Option<&'static str>,
    entry: &str,
) -> Result<&'static str> {
    let code = a0.to_le_bytes()[0];
    name(code).with_context(|| format!("{entry} returned branch {code}"))
}

/// A 64-bit argument as the two words the ilp32 calling convention passes, low first.
#[allow(clippy::cast_possible_truncation)] // the split itself
fn words(x: u64) -> [u32; 2] {
    [x as u32, (x >> 32) as u32]
}

/// A whole fixture as cc-trace's [`TraceReader`] reads it.
pub(crate) struct TraceFile<T> {
    /// The `# set` parameters, merged as `sim-host replay` merges them (no `--set` here).
    pub(crate) params: Vec<Param>,
    /// Every data row with its line number.
    pub(crate) rows: Vec<(u64, T)>,
}

/// Reads `path` with cc-trace's [`TraceReader`], checking the header row is `header`. Errors
/// name the file and line.
pub(crate) fn read_trace<T: DeserializeOwned>(path: &Path, header: &str) -> Result<TraceFile<T>> {
    let mut r = TraceReader::open(path)?;
    r.expect_header(header)?;
    let params = merged_params(r.params(), &[]);
    let mut rows = Vec::new();
    while let Some(row) = r.next_row::<T>() {
        rows.push(row?);
    }
    Ok(TraceFile { params, rows })
}

/// One benchmarked entry point.
pub struct Case {
    /// Row label: `TIMELY`, `HPCC`, `CATS`, `cc-math`.
    pub algorithm: &'static str,
    /// The exported symbol called (shown in the table).
    pub symbol: &'static str,
    /// The ELF it lives in.
    pub image: Image,
    /// The goal (docs/performance.md § "The budget") for the median of each row (by its case
    /// label), if any.
    pub goal: fn(&str) -> Option<Goal>,
    /// Runs the calls and returns labelled samples.
    pub run: fn(&mut Machine, &Ctx) -> Result<Vec<Sample>>,
}

fn no_goal(_: &str) -> Option<Goal> {
    None
}

const fn at_most(median_max: u64) -> Option<Goal> {
    Some(Goal { median_max })
}

/// docs/performance.md § "The budget": per completion `low`/`inc` ≤ 60, `hai`/`dec` ≤ 70, `high` ≤
/// 120.
fn timely_goal(case: &str) -> Option<Goal> {
    match case {
        "low" | "inc" => at_most(60),
        "hai" | "dec" => at_most(70),
        "high" => at_most(120),
        _ => None,
    }
}

/// docs/performance.md § "The budget": per ACK, 1 hop `ai` ≤ 100 / `md` ≤ 125, 3 hops ≤ 200 / 240,
/// 5 hops ≤ 280 / 330.
fn hpcc_goal(case: &str) -> Option<Goal> {
    match case {
        "1 hop, ai" => at_most(100),
        "1 hop, md" => at_most(125),
        "3 hops, ai" => at_most(200),
        "3 hops, md" => at_most(240),
        "5 hops, ai" => at_most(280),
        "5 hops, md" => at_most(330),
        _ => None,
    }
}

/// docs/performance.md § "The budget": sending ≤ 50, a deadlock resolution ≤ 120.
fn cats_goal(case: &str) -> Option<Goal> {
    match case {
        "send" => at_most(50),
        c if c.ends_with("deadlock resolved") => at_most(120),
        _ => None,
    }
}

/// docs/performance.md § "The budget": `next` sending ≤ 100, nothing due ≤ 60.
fn pacer_next_goal(case: &str) -> Option<Goal> {
    if case.ends_with("send") {
        at_most(100)
    } else {
        at_most(60)
    }
}

/// docs/performance.md § "The budget": `set_rate` ≤ 80.
fn pacer_set_rate_goal(_: &str) -> Option<Goal> {
    at_most(80)
}

/// Every case, in table order.
pub const CASES: &[Case] = &[
    Case {
        algorithm: "cc-math",
        symbol: "probe_cc_math_recip",
        image: Image::Probe,
        goal: no_goal,
        run: recip::run_probe,
    },
    Case {
        algorithm: "cc-math",
        symbol: "cc_recip_q16",
        image: Image::CFirmware,
        goal: no_goal,
        run: recip::run_ffi,
    },
    Case {
        algorithm: "TIMELY",
        symbol: "cc_timely_on_completion",
        image: Image::CFirmware,
        goal: timely_goal,
        run: timely::run_on_completion,
    },
    Case {
        algorithm: "TIMELY",
        symbol: "cc_timely_on_completion_rv",
        image: Image::CFirmware,
        goal: timely_goal,
        run: timely::run_on_completion_rv,
    },
    Case {
        algorithm: "TIMELY",
        symbol: "cc_timely_on_rtt",
        image: Image::CFirmware,
        goal: no_goal,
        run: timely::run_on_rtt,
    },
    // HPCC per ACK, one case per hop count (the goals per hop count and branch of
    // docs/performance.md § "The budget").
    Case {
        algorithm: "HPCC",
        symbol: "cc_hpcc_on_ack",
        image: Image::CFirmware,
        goal: hpcc_goal,
        run: hpcc::run_1hop,
    },
    Case {
        algorithm: "HPCC",
        symbol: "cc_hpcc_on_ack",
        image: Image::CFirmware,
        goal: hpcc_goal,
        run: hpcc::run_3hop,
    },
    Case {
        algorithm: "HPCC",
        symbol: "cc_hpcc_on_ack",
        image: Image::CFirmware,
        goal: hpcc_goal,
        run: hpcc::run_5hop,
    },
    Case {
        algorithm: "CATS",
        symbol: "cc_cats_next_chunk",
        image: Image::CFirmware,
        goal: cats_goal,
        run: cats::run_next_chunk,
    },
    Case {
        algorithm: "CATS",
        symbol: "cc_cats_enqueue",
        image: Image::CFirmware,
        goal: no_goal,
        run: cats::run_enqueue,
    },
    // Pacer at 16, 256 and 1024 flows (goals: docs/performance.md § "The budget").
    Case {
        algorithm: "Pacer",
        symbol: "cc_pacer_next",
        image: Image::CFirmware,
        goal: pacer_next_goal,
        run: pacer::run_next,
    },
    Case {
        algorithm: "Pacer",
        symbol: "cc_pacer_set_rate",
        image: Image::CFirmware,
        goal: pacer_set_rate_goal,
        run: pacer::run_set_rate,
    },
    // The f64 references on the same core (docs/performance.md § "The budget": the fixed crates ≥
    // 30× fewer).
    Case {
        algorithm: "TIMELY f64 ref.",
        symbol: "ref_timely_on_completion",
        image: Image::Reference,
        goal: no_goal,
        run: reference::run_timely,
    },
    Case {
        algorithm: "HPCC f64 ref.",
        symbol: "ref_hpcc_on_ack",
        image: Image::Reference,
        goal: no_goal,
        run: reference::run_hpcc_1hop,
    },
    Case {
        algorithm: "HPCC f64 ref.",
        symbol: "ref_hpcc_on_ack",
        image: Image::Reference,
        goal: no_goal,
        run: reference::run_hpcc_5hop,
    },
];

/// A deterministic 32-bit generator (PCG-style LCG + xorshift output) for synthetic inputs
/// where no fixture exists; fixed seeds keep the table reproducible.
#[derive(Clone, Debug)]
pub struct Lcg(u64);

impl Lcg {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed ^ 0x853c_49e6_748f_ea9b)
    }
    /// The next value.
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let x = ((self.0 >> 18) ^ self.0) >> 27;
        (x as u32).rotate_right((self.0 >> 59) as u32)
    }
}
