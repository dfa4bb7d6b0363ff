//! pacer: the segment pacer (`cc-pacer`) against the f64 reference ([`reference`]), replaying
//! event traces; fixture generators ([`generate`]).
//!
//! Trace: CSV `t_ns,event,flow,value` with `# set KEY=VALUE` lines ([`KEYS`]). Events:
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

pub mod generate;
pub mod reference;

use crate::fixtures::FixtureFile;
use crate::plot::{self, Decimator, Panel, Series};
use crate::replay::ReplayOpts;
use crate::summary::{Agreement, At, Summary};
use crate::trace::{InputError, Param, TraceReader, merged_params};
use cc_pacer::{Config, FlowId, FlowMode, FlowSpec, Instant, Pacer, Rate};
use reference::{RefMode, RefPacer, RefSegment};
use serde::Deserialize;
use std::collections::{HashMap, VecDeque};
use std::io::Write as _;
use std::path::Path;

/// The trace's header row, exactly.
pub const HEADER: &str = "t_ns,event,flow,value";
/// Kind name (summaries, tolerances).
pub const KIND: &str = "pacer";
/// Flows a replay can hold (both sides), all of which may be window or hybrid flows.
pub const CAPACITY: usize = 4096;
/// The largest send-time difference allowed between the two sides, ns (issue 12).
pub const MAX_SEND_TIME_ERR_NS: f64 = 1.0;
/// Parameter keys (`seg_bytes.<flow>` sets one flow's segment size).
pub const KEYS: [&str; 6] = [
    "line_rate_bps",
    "seg_bytes",
    "init_rate_bps",
    "hybrid_rate_bps",
    "burst_bytes",
    "seg_bytes.<flow>",
];

/// The fixed-point pacer a replay runs (boxed: ≈ 120 KB).
pub type Fixed = Pacer<CAPACITY, CAPACITY>;

/// One trace row, as written.
#[derive(Debug, Clone, Deserialize)]
pub struct Row {
    /// Trace time, ns.
    pub t_ns: u64,
    /// `rate`, `window`, `enqueue`, `ack` or `tick`.
    pub event: String,
    /// Flow number (not needed for `tick`).
    pub flow: Option<u32>,
    /// b/s for `rate`, bytes otherwise (not needed for `tick`).
    pub value: Option<u64>,
}

/// A decoded event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Rate, b/s.
    Rate(u32, u64),
    /// Window, bytes.
    Window(u32, u32),
    /// More bytes.
    Enqueue(u32, u32),
    /// Bytes acknowledged.
    Ack(u32, u32),
    /// Nothing.
    Tick,
}

impl Event {
    /// The flow the event is about.
    pub fn flow(self) -> Option<u32> {
        match self {
            Event::Rate(f, _) | Event::Window(f, _) | Event::Enqueue(f, _) | Event::Ack(f, _) => {
                Some(f)
            }
            Event::Tick => None,
        }
    }
}

impl Row {
    /// Decodes the row, naming `path:line` on any problem.
    pub fn event(&self, path: &Path, line: u64) -> Result<Event, InputError> {
        let err = |m: String| InputError::at(path, line, m);
        if self.event == "tick" {
            return Ok(Event::Tick);
        }
        let flow = self
            .flow
            .ok_or_else(|| err(format!("{} needs a flow", self.event)))?;
        let value = self
            .value
            .ok_or_else(|| err(format!("{} needs a value", self.event)))?;
        let bytes = || {
            u32::try_from(value)
                .map_err(|_| err(format!("value {value}: bytes must be < 2^32 in one row")))
        };
        Ok(match self.event.as_str() {
            "rate" => Event::Rate(flow, value),
            "window" => Event::Window(flow, bytes()?),
            "enqueue" => Event::Enqueue(flow, bytes()?),
            "ack" => Event::Ack(flow, bytes()?),
            other => {
                return Err(err(format!(
                    "event {other:?}: expected rate, window, enqueue, ack or tick"
                )));
            }
        })
    }
}

/// The parameters of one replay.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The fixed side's NIC.
    pub cfg: Config,
    /// Line rate, units of 128 b/s.
    pub line_units: u64,
    /// Hybrid pacing: rate (units) and burst bytes.
    pub hybrid: Option<(u64, u64)>,
    /// Default segment size.
    pub seg_bytes: u32,
    /// Per-flow segment sizes.
    pub seg_of: HashMap<u32, u32>,
    /// Initial rate of a flow, b/s.
    pub init_rate_bps: u64,
}

/// Builds the configuration from `# set`/`--set` parameters (later wins).
pub fn setup(path: &Path, params: &[Param]) -> Result<Setup, InputError> {
    let mut line_bps = 100_000_000_000u64;
    let mut seg: u32 = 16_384;
    let mut init: Option<u64> = None;
    let mut hybrid_bps: Option<u64> = None;
    let mut burst: u32 = 4_096;
    let mut seg_of = HashMap::new();
    let mut last: HashMap<&str, &Param> = HashMap::new();
    let check_seg = |p: &Param, v: u32| {
        if (256..=65_536).contains(&v) && v.is_multiple_of(256) {
            Ok(v)
        } else {
            Err(p.error(format!(
                "parameter {}: a segment is a multiple of 256 in 256..=65536 bytes, got {v}",
                p.key
            )))
        }
    };
    for p in params {
        match p.key.as_str() {
            "line_rate_bps" => line_bps = p.parse()?,
            "seg_bytes" => seg = check_seg(p, p.parse()?)?,
            "init_rate_bps" => init = Some(p.parse()?),
            "hybrid_rate_bps" => hybrid_bps = Some(p.parse()?),
            "burst_bytes" => burst = p.parse()?,
            k => {
                if let Some(f) = k.strip_prefix("seg_bytes.") {
                    let f: u32 = f.parse().map_err(|_| {
                        p.error(format!("parameter {k}: expected seg_bytes.<flow number>"))
                    })?;
                    seg_of.insert(f, check_seg(p, p.parse()?)?);
                } else {
                    return Err(p.error(format!(
                        "unknown parameter {k:?} (pacer keys: {})",
                        KEYS.join(", ")
                    )));
                }
            }
        }
        last.insert(
            match p.key.as_str() {
                k if k.starts_with("seg_bytes.") => "seg_bytes.<flow>",
                "line_rate_bps" => "line_rate_bps",
                "seg_bytes" => "seg_bytes",
                "init_rate_bps" => "init_rate_bps",
                "hybrid_rate_bps" => "hybrid_rate_bps",
                _ => "burst_bytes",
            },
            p,
        );
    }
    let blame = |key: &str, msg: String| match last.get(key) {
        Some(p) => p.error(msg),
        None => InputError::file(path, msg),
    };
    let line = Rate::from_bps(line_bps);
    let mut cfg = Config::new(line).map_err(|_| {
        blame(
            "line_rate_bps",
            format!(
                "line_rate_bps {line_bps}: must be ≥ {} b/s",
                Rate::MIN.bps()
            ),
        )
    })?;
    let hybrid = match hybrid_bps {
        None => None,
        Some(h) => {
            cfg = cfg.with_hybrid(Rate::from_bps(h), burst).map_err(|e| {
                blame(
                    "hybrid_rate_bps",
                    format!(
                        "hybrid pacing {h} b/s with {burst}-byte bursts: {e:?} (the rate must \
                         be in {}..=line_rate_bps b/s, bursts 1..=65536 bytes)",
                        Rate::MIN.bps()
                    ),
                )
            })?;
            Some((u64::from(Rate::from_bps(h).units()), u64::from(burst)))
        }
    };
    Ok(Setup {
        cfg,
        line_units: u64::from(line.units()),
        hybrid,
        seg_bytes: seg,
        seg_of,
        init_rate_bps: init.unwrap_or(line_bps),
    })
}

/// Both sides, driven in lockstep by trace events.
pub struct Lockstep {
    /// The firmware crate.
    pub fixed: Box<Fixed>,
    /// The f64 reference.
    pub reference: RefPacer,
    setup: Setup,
    /// Trace flow number → index on both sides.
    ids: HashMap<u32, usize>,
    /// The trace's flow number of each index.
    pub names: Vec<u32>,
    now_ns: u64,
}

/// A segment from the fixed side with its send time unwrapped to ns on the trace's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedSegment {
    /// Flow index.
    pub flow: usize,
    /// Bytes.
    pub bytes: u64,
    /// When, ns.
    pub t_send: f64,
}

impl Lockstep {
    /// Both sides for `setup`.
    pub fn new(setup: Setup) -> Self {
        Self {
            fixed: Box::new(Pacer::new(&setup.cfg)),
            reference: RefPacer::new(setup.line_units, setup.hybrid),
            setup,
            ids: HashMap::new(),
            names: Vec::new(),
            now_ns: 0,
        }
    }

    /// The reference's first filed flow and its key (debugging).
    pub fn reference_first(&self) -> Option<((u64, u64), usize)> {
        self.reference.first()
    }

    /// Every segment that leaves at or before `t_ns`, from each side.
    pub fn drain(
        &mut self,
        t_ns: u64,
        fixed: &mut Vec<FixedSegment>,
        reference: &mut Vec<RefSegment>,
    ) {
        self.now_ns = t_ns;
        let now = Instant::from_ns(t_ns);
        while let Some(s) = self.fixed.next(now) {
            // t_send ≤ now, within half a wrap: unwrap against the trace's clock.
            let back = now.since(s.t_send);
            let units = (u128::from(t_ns) * 16) as f64 - f64::from(back);
            fixed.push(FixedSegment {
                flow: s.flow.index(),
                bytes: u64::from(s.bytes),
                t_send: units / 16.0,
            });
        }
        let now_f = t_ns as f64;
        while let Some(s) = self.reference.next(now_f) {
            reference.push(s);
        }
    }

    fn flow(
        &mut self,
        name: u32,
        first: Event,
        path: &Path,
        line: u64,
    ) -> Result<usize, InputError> {
        if let Some(&i) = self.ids.get(&name) {
            return Ok(i);
        }
        let seg = self
            .setup
            .seg_of
            .get(&name)
            .copied()
            .unwrap_or(self.setup.seg_bytes);
        let rate = match first {
            Event::Rate(_, bps) => bps,
            _ => self.setup.init_rate_bps,
        };
        let r = Rate::from_bps(rate);
        let (mode, rmode, window) = match first {
            Event::Window(_, w) => (FlowMode::Window { window_bytes: w }, RefMode::Window, w),
            _ if self.setup.hybrid.is_some() => (FlowMode::Hybrid, RefMode::Hybrid, 0),
            _ => (FlowMode::Paced, RefMode::Paced, 0),
        };
        let id = self
            .fixed
            .add_flow(FlowSpec {
                seg_bytes: seg,
                rate: r,
                mode,
            })
            .map_err(|e| {
                InputError::at(
                    path,
                    line,
                    format!("flow {name}: cannot add it ({e:?}; at most {CAPACITY} flows)"),
                )
            })?;
        let j = self.reference.add_flow(
            u64::from(seg),
            u64::from(r.units()),
            rmode,
            u64::from(window),
        );
        debug_assert_eq!(id.index(), j);
        self.ids.insert(name, j);
        self.names.push(name);
        Ok(j)
    }

    /// Applies one event to both sides (after [`drain`](Self::drain) at its time).
    pub fn apply(&mut self, ev: Event, path: &Path, line: u64) -> Result<(), InputError> {
        let Some(name) = ev.flow() else {
            return Ok(());
        };
        let i = self.flow(name, ev, path, line)?;
        let id = FlowId::from_index(i as u16);
        let now = Instant::from_ns(self.now_ns);
        let now_f = self.now_ns as f64;
        let bad =
            |e: cc_pacer::PacerError| InputError::at(path, line, format!("flow {name}: {e:?}"));
        match ev {
            Event::Rate(_, bps) => {
                let r = Rate::from_bps(bps);
                self.fixed.set_rate(id, r).map_err(bad)?;
                self.reference.set_rate(i, u64::from(r.units()));
            }
            Event::Window(_, w) => {
                self.fixed.set_window(id, w, now).map_err(|e| {
                    InputError::at(
                        path,
                        line,
                        format!("flow {name}: {e:?} (a window flow's first row must be `window`)"),
                    )
                })?;
                self.reference.set_window(i, u64::from(w), now_f);
            }
            Event::Enqueue(_, b) => {
                self.fixed.enqueue(id, b, now).map_err(bad)?;
                self.reference.enqueue(i, u64::from(b), now_f);
            }
            Event::Ack(_, b) => {
                self.fixed.on_ack(id, b, now).map_err(|e| {
                    InputError::at(
                        path,
                        line,
                        format!("flow {name}: {e:?} (ack is for window flows)"),
                    )
                })?;
                self.reference.on_ack(i, u64::from(b), now_f);
            }
            Event::Tick => {}
        }
        Ok(())
    }
}

/// Per-flow tallies (reference side) for the summary's checks.
#[derive(Debug, Clone, Default)]
struct FlowTally {
    bytes: u64,
    segments: u64,
}

/// Replays one trace; one summary.
pub fn replay(path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    let mut rdr = TraceReader::open(path)?;
    rdr.expect_header(HEADER)?;
    let params = merged_params(rdr.params(), &opts.params);
    let su = setup(path, &params)?;
    let hybrid = su.hybrid;
    let mut ls = Lockstep::new(su);

    let mut out = match &opts.out {
        Some(p) => {
            let f = std::fs::File::create(p)
                .map_err(|e| InputError::file(p, format!("cannot create: {e}")))?;
            let mut w = std::io::BufWriter::new(f);
            writeln!(
                w,
                "segment,t_ns,flow_ref,bytes_ref,t_send_ref_ns,flow_fixed,bytes_fixed,t_send_fixed_ns"
            )
            .map_err(|e| InputError::file(p, format!("cannot write: {e}")))?;
            Some((p.clone(), w))
        }
        None => None,
    };

    let mut agreement = Agreement::new("order");
    let mut max_dt = 0.0f64;
    let mut worst: Option<(u64, f64)> = None;
    let mut pending_fx: VecDeque<FixedSegment> = VecDeque::new();
    let mut pending_rf: VecDeque<RefSegment> = VecDeque::new();
    let (mut fx, mut rf) = (Vec::new(), Vec::new());
    let mut seg_no = 0u64;
    let mut events = 0u64;
    let mut last_t: Option<(u64, u64)> = None;
    let mut tally: Vec<FlowTally> = Vec::new();
    let mut bytes_in = 0u64;
    let mut plot_pts: Decimator<(f64, f64)> = Decimator::new(4000);
    let mut cum = 0u64;

    let mut step = |ls: &mut Lockstep,
                    t: u64,
                    line: Option<u64>,
                    agreement: &mut Agreement,
                    out: &mut Option<(std::path::PathBuf, std::io::BufWriter<std::fs::File>)>|
     -> Result<(), InputError> {
        fx.clear();
        rf.clear();
        ls.drain(t, &mut fx, &mut rf);
        pending_fx.extend(fx.iter().copied());
        pending_rf.extend(rf.iter().copied());
        while let (Some(a), Some(b)) = (pending_rf.front().copied(), pending_fx.front().copied()) {
            pending_rf.pop_front();
            pending_fx.pop_front();
            let at = At {
                event: seg_no,
                t_ns: t,
                line,
            };
            agreement.add(a.flow == b.flow && a.bytes == b.bytes, at);
            let dt = (a.t_send - b.t_send).abs();
            if dt > max_dt || worst.is_none() {
                max_dt = max_dt.max(dt);
                worst = Some((seg_no, dt));
            }
            if tally.len() <= a.flow {
                tally.resize(a.flow + 1, FlowTally::default());
            }
            tally[a.flow].bytes += a.bytes;
            tally[a.flow].segments += 1;
            cum += a.bytes;
            let c = cum;
            plot_pts.offer(seg_no, || (a.t_send, c as f64));
            if let Some((p, w)) = out.as_mut() {
                writeln!(
                    w,
                    "{seg_no},{t},{},{},{},{},{},{}",
                    ls.names[a.flow], a.bytes, a.t_send, ls.names[b.flow], b.bytes, b.t_send
                )
                .map_err(|e| InputError::file(p, format!("cannot write: {e}")))?;
            }
            seg_no += 1;
        }
        Ok(())
    };

    while let Some(row) = rdr.next_row::<Row>() {
        let (line, row) = row?;
        if let Some((t0, l0)) = last_t
            && row.t_ns < t0
        {
            return Err(InputError::at(
                path,
                line,
                format!(
                    "t_ns {} is before line {l0}'s {t0}: rows must be in time order",
                    row.t_ns
                ),
            ));
        }
        last_t = Some((row.t_ns, line));
        let ev = row.event(path, line)?;
        events += 1;
        step(&mut ls, row.t_ns, Some(line), &mut agreement, &mut out)?;
        if let Event::Enqueue(_, b) = ev {
            bytes_in += u64::from(b);
        }
        ls.apply(ev, path, line)?;
    }
    // Segments one side produced and the other did not.
    let unmatched = pending_fx.len() + pending_rf.len();
    for _ in 0..unmatched {
        let at = At {
            event: seg_no,
            t_ns: last_t.map_or(0, |t| t.0),
            line: None,
        };
        agreement.add(false, at);
        seg_no += 1;
    }
    if let Some((p, mut w)) = out {
        w.flush()
            .map_err(|e| InputError::file(&p, format!("cannot write: {e}")))?;
    }

    let trace = path.display().to_string();
    let mut s = Summary::new(KIND, trace.clone(), opts.mode, agreement);
    s.events = events;
    s.detail("segments", seg_no);
    s.detail("flows", ls.names.len() as u64);
    let bytes_out: u64 = tally.iter().map(|t| t.bytes).sum();
    s.detail(
        "bytes",
        format!(
            "{bytes_in} enqueued, {bytes_out} sent, {} left",
            bytes_in.saturating_sub(bytes_out)
        ),
    );
    s.detail(
        "max |Δt_send|",
        format!(
            "{max_dt} ns{}",
            worst
                .filter(|_| max_dt > 0.0)
                .map_or(String::new(), |(k, _)| format!(" (segment {k})"))
        ),
    );
    let r = &ls.reference;
    s.detail(
        "reference events",
        format!(
            "{} lazy re-files (rate drops), {} pacing memories expired, {} window closures",
            r.refiled, r.expired, r.closed
        ),
    );
    if let Some((hu, b)) = hybrid {
        s.detail("hybrid", format!("bursts of {b} B at {} b/s", hu * 128));
    }
    if unmatched > 0 {
        s.detail("unmatched segments", unmatched as u64);
    }
    s.bound("max |Δt_send| (ns)", max_dt, MAX_SEND_TIME_ERR_NS);
    let mut tol = opts.tolerances(KIND);
    if opts.tol.min_agreement.is_none() {
        // The pacer's order must be identical (issue 12), as CATS's.
        tol.min_agreement = 1.0;
    }
    s.judge(tol);

    if let Some(p) = &opts.plot {
        let pts: Vec<(f64, f64)> = plot_pts
            .samples()
            .iter()
            .map(|(_, (t, c))| (t / 1e6, *c))
            .collect();
        let panels = vec![Panel {
            y_label: "bytes sent (all flows)".into(),
            series: vec![Series {
                name: "reference (f64)".into(),
                points: pts,
                color: plot::REF,
            }],
        }];
        plot::draw(p, &format!("pacer: {trace}"), "time (ms)", &panels)
            .map_err(|e| InputError::file(p, e))?;
    }
    Ok(vec![s])
}

/// The shipped fixtures of this kind.
pub fn fixtures() -> Vec<FixtureFile> {
    generate::all()
}
