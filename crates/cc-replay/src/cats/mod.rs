//! cats: f64 reference, event-trace format, lockstep replay and fixture generators.
//!
//! Trace: CSV `t_ns,event,prio,bytes` with `# set KEY=VALUE` lines (keys `mss_bytes`,
//! `snd_buf_bytes`, `h0`…`h3`, `l0`…`l3`, `m0`…`m4`). Events:
//! * `enqueue`: queue a message of `bytes` at `prio` (0–4), then make exactly one feed attempt;
//! * `ack`: `bytes` of send-buffer space become free, then feed until nothing is sent;
//! * `feed`: feed until nothing is sent.
//!
//! The send buffer starts with `snd_buf_bytes` free (default 131 072); each chunk fed uses its
//! length. Both sides (fixed-point crate, f64 reference) run the same events with their own
//! queues, debts and free space; the chunks they feed are compared in order.
//!
//! Files, as in every algorithm folder: [`reference`](mod@reference) (the f64 reference, from the paper),
//! [`params`] (both sides' configuration from `# set` and `--set`), [`lockstep`] (both sides
//! driven by one event), `generate` (fixture generators); this module holds the trace row and
//! the algorithm's place in the one replay driver (`Replay`).

#[cfg(feature = "generate")]
pub mod generate;
pub mod lockstep;
pub use cc_reference::cats as reference;
pub use cc_trace::cats::{
    DEFAULT_SND_BUF_BYTES, Event, HEADER, INFO, MAX_CHUNKS_PER_EVENT, QUEUE_CAPACITY, Row, params,
};

pub use params::{Setup, setup};

use crate::kinds::Kind;
use crate::opts::ReplayOpts;
use crate::summary::{At, Summary};
use cc_output::plot::{self, Envelope, Panel};
use cc_trace::{InputError, Param};
use lockstep::{Lockstep, StepOut};
use reference::starvation_bound_bytes;
use std::path::Path;

/// Per-side bookkeeping of what was fed.
#[derive(Debug, Clone, Default)]
struct Tally {
    bytes_out: [u64; 5],
    /// Chunk number of the last chunk of each priority.
    last_chunk: [Option<u64>; 5],
    /// Bytes sent by others while each queue held data and waited.
    wait: [u64; 5],
    /// Per queue: the longest such wait, and the chunk that ended it or was last in it.
    worst_wait: [u64; 5],
    worst_wait_at: [u64; 5],
    deadlocks: u64,
}

impl Tally {
    /// Records chunk `k` of `n` bytes from `prio`; `waiting` = queues that held data before it.
    fn chunk(&mut self, k: u64, prio: usize, n: u64, waiting: u8) {
        self.bytes_out[prio] += n;
        self.last_chunk[prio] = Some(k);
        for q in 0..5 {
            if q == prio {
                self.wait[q] = 0;
            } else if waiting & (1 << q) != 0 {
                self.wait[q] += n;
                if self.wait[q] > self.worst_wait[q] {
                    self.worst_wait[q] = self.wait[q];
                    self.worst_wait_at[q] = k;
                }
            }
        }
    }

    fn completion_order(&self) -> String {
        let mut v: Vec<(u64, usize)> = (0..5)
            .filter_map(|p| self.last_chunk[p].map(|k| (k, p)))
            .collect();
        v.sort();
        v.iter()
            .map(|(k, p)| format!("P{p} (chunk {k})"))
            .collect::<Vec<_>>()
            .join(" → ")
    }
}

/// Per-priority counts P0..P4, as a JSON array of numbers.
fn per_prio(v: &[u64; 5]) -> serde_json::Value {
    v.iter().map(|&x| serde_json::Value::from(x)).collect()
}

/// "within" when every queue's worst wait is within its own bound, else the queues that exceed.
pub fn starvation_verdict(worst_wait: &[u64; 5], bounds: &[f64; 5]) -> String {
    let exceeded: Vec<String> = (0..5)
        .filter(|&q| worst_wait[q] as f64 > bounds[q])
        .map(|q| format!("P{q}"))
        .collect();
    if exceeded.is_empty() {
        "within".to_string()
    } else {
        format!("EXCEEDS for {}", exceeded.join(", "))
    }
}

/// cats in the host's registry of trace kinds ([`crate::kinds`]).
pub static ENTRY: crate::kinds::KindEntry = crate::kinds::KindEntry {
    info: &INFO,
    replay,
    #[cfg(feature = "generate")]
    fixtures,
};

/// cats as a [`Kind`].
pub const KIND: crate::kinds::Kind = crate::kinds::Kind(&ENTRY);

/// Replays one trace; one summary (the one driver, [`crate::driver`]).
pub fn replay(path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    crate::driver::replay_csv::<Replay>(path, opts)
}

/// CATS in the replay driver: the lockstep of both conductors plus the tallies the report adds
/// (bytes per priority, completion order, starvation gaps and their bounds, deadlocks).
pub struct Replay {
    su: Setup,
    ls: Lockstep,
    step: StepOut,
    t_fx: Tally,
    t_rf: Tally,
    bytes_in: [u64; 5],
    min_msg: u64,
    refused_mismatch: u64,
    chunk_no: u64,
    /// Cumulative bytes per priority, chunk by chunk (reference, fixed), for the plot.
    cum_rf: [u64; 5],
    cum_fx: [u64; 5],
}

impl crate::driver::SideBySide for Replay {
    const KIND: Kind = KIND;
    const OUT_HEADER: &'static str = "chunk,t_ns,prio_ref,bytes_ref,prio_fixed,bytes_fixed";
    // Cumulative bytes per priority, reference (0–4) and fixed (5–9).
    const PLOT_SERIES: usize = 10;
    // CATS makes decisions, not estimates: no relative error; fidelity is the chunk order (and
    // the byte counts that follow from it).
    type Setup = Setup;
    type Row = Row;

    fn setup(trace: &Path, params: &[Param]) -> Result<Setup, InputError> {
        setup(trace, params)
    }

    fn new(su: &Setup, mode: crate::opts::Mode) -> Self {
        Self {
            su: su.clone(),
            ls: Lockstep::new(su, mode),
            step: StepOut::default(),
            t_fx: Tally::default(),
            t_rf: Tally::default(),
            bytes_in: [0; 5],
            min_msg: u64::MAX,
            refused_mismatch: 0,
            chunk_no: 0,
            cum_rf: [0; 5],
            cum_fx: [0; 5],
        }
    }

    fn step(
        &mut self,
        trace: &Path,
        line: u64,
        row: &Row,
        tally: &mut crate::driver::Tally,
    ) -> Result<(), InputError> {
        let at = |e: u64| At {
            event: e,
            t_ns: row.t_ns,
            line: Some(line),
        };
        tally.events += 1;
        let ev = row.event(trace, line)?;
        if !matches!(ev, Event::Enqueue { .. }) {
            // What this event may feed: every chunk queued (the reference's queues; an enqueue
            // feeds at most one).
            let mss = self.su.cfg.mss_bytes().max(1);
            let queues = || self.ls.reference().queues.iter().flatten();
            // Σ ⌈left/mss⌉ ≤ (Σ left + n·(mss − 1))/mss: the exact count (a division per queued
            // message, on every event) only when this bound is over the limit.
            let (n, bytes) = queues().fold((0u64, 0u64), |(n, b), &left| {
                (n + 1, b.saturating_add(left))
            });
            let bound = bytes.saturating_add(n.saturating_mul(u64::from(mss) - 1)) / u64::from(mss);
            let queued: u64 = if bound > MAX_CHUNKS_PER_EVENT {
                queues().map(|&left| left.div_ceil(u64::from(mss))).sum()
            } else {
                bound
            };
            if queued > MAX_CHUNKS_PER_EVENT {
                return Err(InputError::at(
                    trace,
                    line,
                    format!(
                        "{} with {queued} chunks of MSS {mss} queued: one event may feed at most \
                         {MAX_CHUNKS_PER_EVENT} chunks (the replay compares them in memory)",
                        row.event
                    ),
                ));
            }
        }
        self.ls.step(ev, &mut self.step);
        let step = &self.step;
        if let (Event::Enqueue { prio, len_bytes }, Some((ok_fx, ok_rf))) = (ev, step.accepted) {
            if ok_rf {
                self.bytes_in[prio.index()] += u64::from(len_bytes);
                self.min_msg = self.min_msg.min(u64::from(len_bytes));
            }
            match (ok_fx, ok_rf) {
                (false, false) => tally.skipped += 1,
                (true, true) => {}
                _ => self.refused_mismatch += 1,
            }
        }
        self.t_fx.deadlocks += step.fixed_deadlocks;
        for (k, f) in step.fixed.iter().enumerate() {
            self.t_fx
                .chunk(self.chunk_no + k as u64, f.prio, f.bytes, f.waiting);
        }
        for (k, f) in step.reference.iter().enumerate() {
            self.t_rf
                .chunk(self.chunk_no + k as u64, f.prio, f.bytes, f.waiting);
        }
        for (a, b) in step.pairs() {
            let chunk_no = self.chunk_no;
            tally.agreement.add(a.is_some() && a == b, at(chunk_no));
            if tally.writes_rows() {
                let cell = |c: Option<(usize, u64)>| match c {
                    Some((q, n)) => (q.to_string(), n.to_string()),
                    None => (String::new(), String::new()),
                };
                let ((pr, br), (pf, bf)) = (cell(a), cell(b));
                tally.row(format_args!("{chunk_no},{},{pr},{br},{pf},{bf}", row.t_ns))?;
            }
            // Cumulative bytes per priority after *this* chunk (not after the whole event,
            // which can feed a hundred chunks at once and would draw them as one step).
            if let Some((q, n)) = a {
                self.cum_rf[q] += n;
            }
            if let Some((q, n)) = b {
                self.cum_fx[q] += n;
            }
            if tally.plots() {
                let ys: Vec<f64> = self
                    .cum_rf
                    .iter()
                    .chain(&self.cum_fx)
                    .map(|&b| b as f64)
                    .collect();
                tally.plot(chunk_no, chunk_no, &ys, !(a.is_some() && a == b));
            }
            self.chunk_no += 1;
        }
        Ok(())
    }

    fn finish(self, _tally: &crate::driver::Tally, s: &mut Summary) {
        s.detail("chunks", self.chunk_no);
        s.detail("bytes in", per_prio(&self.bytes_in));
        if self.t_fx.bytes_out == self.t_rf.bytes_out {
            s.detail("bytes out", per_prio(&self.t_fx.bytes_out));
        } else {
            s.detail("bytes out (ref)", per_prio(&self.t_rf.bytes_out));
            s.detail("bytes out (fixed)", per_prio(&self.t_fx.bytes_out));
        }
        let order_fx = self.t_fx.completion_order();
        let order_rf = self.t_rf.completion_order();
        if order_fx == order_rf {
            s.detail("completion order", order_fx);
        } else {
            s.detail("completion (ref)", order_rf);
            s.detail("completion (fixed)", order_fx);
        }
        let min_msg_f = if self.min_msg == u64::MAX {
            1.0
        } else {
            self.min_msg as f64
        };
        // Each queue's worst wait against its own bound (they differ by a factor of ~6 between P0
        // and P3 with the paper's parameters).
        let bounds: [f64; 5] =
            std::array::from_fn(|q| starvation_bound_bytes(&self.su.params, min_msg_f, q));
        let fmt_bound = |b: f64| {
            if b.is_finite() {
                format!("{b:.0}")
            } else {
                "none (a lower multiplier is too small)".to_string()
            }
        };
        let verdict = starvation_verdict(&self.t_fx.worst_wait, &bounds);
        // Headline: the queue that came closest to its bound (an infinite bound counts as 0 %).
        let ratio = |q: usize| self.t_fx.worst_wait[q] as f64 / bounds[q];
        let closest = (0..5)
            .filter(|&q| self.t_fx.worst_wait[q] > 0)
            .max_by(|&a, &b| ratio(a).total_cmp(&ratio(b)));
        s.detail(
            "worst starvation",
            match closest {
                None => format!("none (no queue waited while another sent) ({verdict})"),
                Some(q) => format!(
                    "{} bytes sent while P{q} waited (up to chunk {}); bound {} ({verdict})",
                    self.t_fx.worst_wait[q],
                    self.t_fx.worst_wait_at[q],
                    fmt_bound(bounds[q]),
                ),
            },
        );
        // P0..P4: the worst gap (bytes) and its bound (`null`: no finite bound).
        s.detail(
            "starvation per queue",
            (0..5)
                .map(|q| {
                    serde_json::json!({
                        "gap_bytes": self.t_fx.worst_wait[q],
                        "bound_bytes": bounds[q].is_finite().then(|| bounds[q].floor()),
                    })
                })
                .collect::<serde_json::Value>(),
        );
        if self.t_rf.worst_wait != self.t_fx.worst_wait {
            s.detail("starvation (ref)", per_prio(&self.t_rf.worst_wait));
        }
        s.detail(
            "deadlocks",
            serde_json::json!({
                "resolved": self.t_fx.deadlocks,
                "resolved_ref": self.ls.reference().deadlocks,
                "debts_clamped_to_l_minus_1": self.ls.reference().clamps,
            }),
        );
        s.detail(
            "eq. 1",
            if self.su.cfg.eq1_holds() {
                "holds".to_string()
            } else {
                let v: Vec<String> = (0..4)
                    .filter(|p| self.su.cfg.eq1_violations() & (1 << p) != 0)
                    .map(|p| format!("P{p}"))
                    .collect();
                format!("fails for {} (the L−1 clamp keeps it live)", v.join(", "))
            },
        );
        if !self.su.quantised.is_empty() {
            s.detail(
                "multipliers",
                self.su
                    .quantised
                    .iter()
                    .map(|(k, g, u)| format!("{k} {g} → {u} (Q16)"))
                    .collect::<Vec<_>>()
                    .join("; "),
            );
        }
        if self.refused_mismatch > 0 {
            s.detail("refusals differ", self.refused_mismatch);
        }
        let left_fx: u64 = (0..5)
            .map(|p| self.bytes_in[p].saturating_sub(self.t_fx.bytes_out[p]))
            .sum();
        s.detail("left queued", left_fx);
        // The verdict holds each queue's worst gap (fixed side) to its own bound: a replay whose gap
        // exceeds a bound fails, naming the queue and the excess.
        for (q, (&gap, &bound)) in self.t_fx.worst_wait.iter().zip(&bounds).enumerate() {
            s.bound(format!("P{q} starvation gap (bytes)"), gap as f64, bound);
        }
    }

    fn panels(env: &Envelope, _div: f64) -> Vec<Panel> {
        let panel = |name: &str, first: usize| {
            let mut pn = Panel::new(
                format!("{name}: cumulative bytes"),
                (0..5)
                    .map(|q| env.line(first + q, 1.0, &format!("P{q}"), plot::PALETTE[q]))
                    .collect(),
            );
            pn.marks = Some(("order differs".into(), env.marks()));
            pn
        };
        vec![panel("reference", 0), panel("fixed point", 5)]
    }

    /// CATS orders chunks (many share one timestamp): the x axis is the chunk number.
    fn x_axis(_env: &Envelope) -> (f64, String) {
        (1.0, "chunk number".into())
    }
}

/// The shipped fixtures of this kind.
#[cfg(feature = "generate")]
pub fn fixtures() -> Vec<crate::kinds::FixtureFile> {
    generate::all()
}
