//! pacer: the segment pacer (`cc-pacer`) against the f64 reference ([`reference`](mod@reference)), replaying
//! event traces; fixture generators (`generate`).
//!
//! Trace: CSV `t_ns,event,flow,value` with `# set KEY=VALUE` lines ([`params`]). Events:
//! * `rate`: the flow's rate is `value` b/s (paced at `⌊value/128⌋` units of 128 b/s);
//! * `window`: the flow's window is `value` bytes (a window flow; see below);
//! * `enqueue`: `value` more bytes for the flow;
//! * `ack`: `value` bytes of the (window) flow acknowledged;
//! * `tick`: nothing (`flow` and `value` may be empty): the pacer is asked at this time.
//!
//! Rows are in time order. Before each row at time `t`, both sides hand out every segment that
//! leaves at or before `t` (`next(t)` until it returns nothing); then the row's event is applied
//! to both. A flow is created at its first row: a window flow if that row is `window` (window =
//! `value`), a hybrid flow if the trace sets `hybrid_rate_bps`, else a paced flow; its rate is
//! `init_rate_bps` until a `rate` row, its segment size `seg_bytes` (or `seg_bytes.<flow>`).
//!
//! The two schedules must agree exactly on the order of segments (flow and length) and within
//! 1 ns on every send time (by construction of the documented roundings they agree exactly: the
//! summary reports the largest difference).
//!
//! Files, as in every algorithm folder: [`reference`](mod@reference) (the f64 reference, from the paper),
//! [`params`] (both sides' configuration from `# set` and `--set`), [`lockstep`] (both sides
//! driven by one event), `generate` (fixture generators); this module holds the trace row and
//! the algorithm's place in the one replay driver (`Replay`).

#[cfg(feature = "generate")]
pub mod generate;
pub mod lockstep;
pub use cc_reference::pacer as reference;
pub use cc_trace::pacer::{Event, HEADER, INFO, Row, params};

pub use lockstep::{FixedSegment, Lockstep};
pub use params::{Setup, setup};

use crate::driver::Tally;
use crate::kinds::Kind;
use crate::opts::ReplayOpts;
use crate::summary::{At, Summary};
use cc_output::plot::{self, Envelope, Panel};
use cc_pacer::Pacer;
use cc_trace::{InputError, Param};
use reference::RefSegment;
use std::collections::VecDeque;
use std::path::Path;

/// Flows a replay can hold (both sides), all of which may be window or hybrid flows.
pub const CAPACITY: usize = 4096;
/// The largest send-time difference allowed between the two sides, ns (docs/pacer.md § 4).
pub const MAX_SEND_TIME_ERR_NS: f64 = 1.0;

/// The fixed-point pacer a replay runs (boxed: ≈ 120 KB).
pub type Fixed = Pacer<CAPACITY, CAPACITY>;

/// Per-flow totals (reference side) for the summary's checks.
#[derive(Debug, Clone, Default)]
struct FlowTotals {
    bytes: u64,
    segments: u64,
}

/// pacer in the host's registry of trace kinds ([`crate::kinds`]).
pub static ENTRY: crate::kinds::KindEntry = crate::kinds::KindEntry {
    info: &INFO,
    replay,
    #[cfg(feature = "generate")]
    fixtures,
};

/// pacer as a [`Kind`].
pub const KIND: crate::kinds::Kind = crate::kinds::Kind(&ENTRY);

/// Replays one trace; one summary (the one driver, [`crate::driver`]).
pub fn replay(path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    crate::driver::replay_csv::<Replay>(path, opts)
}

/// The pacer in the replay driver: both schedules, matched segment by segment.
pub struct Replay {
    ls: Lockstep,
    hybrid: Option<(u64, u64)>,
    max_dt: f64,
    worst: Option<(u64, f64)>,
    pending_fx: VecDeque<FixedSegment>,
    pending_rf: VecDeque<RefSegment>,
    fx: Vec<FixedSegment>,
    rf: Vec<RefSegment>,
    seg_no: u64,
    last_t: Option<(u64, u64)>,
    per_flow: Vec<FlowTotals>,
    bytes_in: u64,
    /// Bytes sent so far (reference, fixed), for the plot.
    cum: (u64, u64),
    unmatched: usize,
}

impl Replay {
    /// Hands out every segment due at `t` on both sides and compares them in order.
    fn drain(&mut self, t: u64, line: Option<u64>, tally: &mut Tally) -> Result<(), InputError> {
        self.fx.clear();
        self.rf.clear();
        self.ls.drain(t, &mut self.fx, &mut self.rf);
        self.pending_fx.extend(self.fx.iter().copied());
        self.pending_rf.extend(self.rf.iter().copied());
        while let (Some(a), Some(b)) = (
            self.pending_rf.front().copied(),
            self.pending_fx.front().copied(),
        ) {
            self.pending_rf.pop_front();
            self.pending_fx.pop_front();
            let seg_no = self.seg_no;
            let at = At {
                event: seg_no,
                t_ns: t,
                line,
            };
            let same = a.flow == b.flow && a.bytes == b.bytes;
            tally.agreement.add(same, at);
            let dt = (a.t_send - b.t_send).abs();
            if dt > self.max_dt || self.worst.is_none() {
                self.max_dt = self.max_dt.max(dt);
                self.worst = Some((seg_no, dt));
            }
            if self.per_flow.len() <= a.flow {
                self.per_flow.resize(a.flow + 1, FlowTotals::default());
            }
            self.per_flow[a.flow].bytes += a.bytes;
            self.per_flow[a.flow].segments += 1;
            self.cum.0 += a.bytes;
            self.cum.1 += b.bytes;
            tally.plot(
                seg_no,
                a.t_send as u64,
                &[self.cum.0 as f64, self.cum.1 as f64, dt],
                !same,
            );
            if tally.writes_rows() {
                let n = &self.ls.names;
                tally.row(format_args!(
                    "{seg_no},{t},{},{},{},{},{},{}",
                    n[a.flow], a.bytes, a.t_send, n[b.flow], b.bytes, b.t_send
                ))?;
            }
            self.seg_no += 1;
        }
        Ok(())
    }
}

impl crate::driver::SideBySide for Replay {
    const KIND: Kind = KIND;
    const OUT_HEADER: &'static str =
        "segment,t_ns,flow_ref,bytes_ref,t_send_ref_ns,flow_fixed,bytes_fixed,t_send_fixed_ns";
    // Bytes sent (reference, fixed) and the send-time difference.
    const PLOT_SERIES: usize = 3;
    // The pacer's fidelity is the order (identical) and the send times (bounded): no relative
    // error.
    type Setup = Setup;
    type Row = Row;

    fn setup(trace: &Path, params: &[Param]) -> Result<Setup, InputError> {
        setup(trace, params)
    }

    fn new(su: &Setup, _mode: crate::opts::Mode) -> Self {
        Self {
            hybrid: su.hybrid,
            ls: Lockstep::new(su.clone()),
            max_dt: 0.0,
            worst: None,
            pending_fx: VecDeque::new(),
            pending_rf: VecDeque::new(),
            fx: Vec::new(),
            rf: Vec::new(),
            seg_no: 0,
            last_t: None,
            per_flow: Vec::new(),
            bytes_in: 0,
            cum: (0, 0),
            unmatched: 0,
        }
    }

    fn step(
        &mut self,
        trace: &Path,
        line: u64,
        row: &Row,
        tally: &mut Tally,
    ) -> Result<(), InputError> {
        if let Some((t0, l0)) = self.last_t
            && row.t_ns < t0
        {
            return Err(InputError::at(
                trace,
                line,
                format!(
                    "t_ns {} is before line {l0}'s {t0}: rows must be in time order",
                    row.t_ns
                ),
            ));
        }
        self.last_t = Some((row.t_ns, line));
        let ev = row.event(trace, line)?;
        tally.events += 1;
        self.drain(row.t_ns, Some(line), tally)?;
        if let Event::Enqueue(_, b) = ev {
            self.bytes_in += u64::from(b);
        }
        self.ls.apply(ev, trace, line)
    }

    fn end(&mut self, tally: &mut Tally) -> Result<(), InputError> {
        // Segments one side produced and the other did not.
        self.unmatched = self.pending_fx.len() + self.pending_rf.len();
        for _ in 0..self.unmatched {
            let at = At {
                event: self.seg_no,
                t_ns: self.last_t.map_or(0, |t| t.0),
                line: None,
            };
            tally.agreement.add(false, at);
            self.seg_no += 1;
        }
        Ok(())
    }

    fn finish(self, _tally: &Tally, s: &mut Summary) {
        s.detail("segments", self.seg_no);
        s.detail("flows", self.ls.names.len() as u64);
        let bytes_out: u64 = self.per_flow.iter().map(|t| t.bytes).sum();
        s.detail(
            "bytes",
            serde_json::json!({
                "enqueued": self.bytes_in,
                "sent": bytes_out,
                "left": self.bytes_in.saturating_sub(bytes_out),
            }),
        );
        s.detail("max |Δt_send| (ns)", self.max_dt);
        if let Some((k, _)) = self.worst.filter(|_| self.max_dt > 0.0) {
            s.detail("max |Δt_send| at segment", k);
        }
        let r = &self.ls.reference;
        s.detail(
            "reference events",
            serde_json::json!({
                "lazy_refiles": r.refiled,
                "pacing_memories_expired": r.expired,
                "window_closures": r.closed,
            }),
        );
        if let Some((hu, b)) = self.hybrid {
            s.detail("hybrid", format!("bursts of {b} B at {} b/s", hu * 128));
        }
        if self.unmatched > 0 {
            s.detail("unmatched segments", self.unmatched as u64);
        }
        s.bound("max |Δt_send| (ns)", self.max_dt, MAX_SEND_TIME_ERR_NS);
    }

    fn panels(env: &Envelope, div: f64) -> Vec<Panel> {
        vec![
            env.ref_vs_fixed(0, div, "bytes sent (all flows)"),
            Panel {
                marks: Some(("order differs".into(), env.marks_in(div))),
                ..Panel::new(
                    "|Δt_send| (ns)",
                    vec![env.line(2, div, "|t_fixed − t_ref|", plot::OTHER)],
                )
            },
        ]
    }
}

/// The shipped fixtures of this kind.
#[cfg(feature = "generate")]
pub fn fixtures() -> Vec<crate::kinds::FixtureFile> {
    generate::all()
}
