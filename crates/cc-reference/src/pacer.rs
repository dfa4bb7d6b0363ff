//! The f64 reference pacer, written from the description in docs/pacer.md (independent of
//! `cc-pacer`: no wheel, no pages, no wrapping clock, no reciprocal table).
//!
//! * Times are `f64` nanoseconds on an unbounded clock. Every time the description produces is a
//!   multiple of 1/16 ns, which `f64` holds exactly up to 2^49 ns (6.5 days).
//! * The two documented roundings are integer operations and are done as such: the time per byte
//!   `tpb = ⌈10^9·2^18 / r⌉` (units of 2^-22 ns) and a gap `⌈b·tpb / 2^18⌉` sixteenths of a ns,
//!   both by `u128` division.
//! * The schedule is an ordered map keyed by `(slot, sequence number)`: `slot = ⌊due / 64 ns⌋`,
//!   and the sequence number counts every scheduling of any flow. The first key is the next flow
//!   to consider: slots in time order, a slot's flows in the order they were scheduled.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

/// Slot width, ns (the description's 64 ns).
pub const SLOT_NS: f64 = 64.0;
/// The slowest pacing rate, units of 128 b/s.
pub const MIN_RATE_UNITS: u64 = 61_036;
/// `10^9·2^18`.
pub const TPB_NUM: u128 = 1_000_000_000u128 << 18;

/// `⌈10^9·2^18 / max(r, MIN)⌉`, `r` in units of 128 b/s.
pub fn tpb(rate_units: u64) -> u64 {
    let r = u128::from(rate_units.max(MIN_RATE_UNITS));
    TPB_NUM.div_ceil(r) as u64
}

/// `⌈b·tpb / 2^18⌉ / 16` ns.
pub fn gap_ns(bytes: u64, tpb: u64) -> f64 {
    let units = (u128::from(bytes) * u128::from(tpb)).div_ceil(1 << 18);
    units as f64 / 16.0
}

/// How a reference flow is limited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefMode {
    /// Rate only.
    Paced,
    /// Rate and a window.
    Window,
    /// Rate per segment, bursts at the hardware rate.
    Hybrid,
}

/// One flow.
#[derive(Debug, Clone)]
pub struct RefFlow {
    /// Limits.
    pub mode: RefMode,
    /// Segment size, bytes.
    pub seg: u64,
    /// Time per byte now.
    pub tpb: u64,
    /// The time per byte `due` (hybrid: `next_seg`) was computed with.
    pub tpb_sched: u64,
    /// Bytes queued.
    pub backlog: u64,
    /// When the next segment (or burst) may leave, ns.
    pub due: f64,
    /// Bytes of the segment whose gap set `due` (hybrid: the current segment).
    pub last: u64,
    /// Scheduled.
    pub scheduled: bool,
    /// Scheduled from outside (no gap pending).
    pub fresh: bool,
    /// Window, bytes (window flows).
    pub window: u64,
    /// In flight, bytes (window flows).
    pub inflight: u64,
    /// Hybrid: earliest start of the next segment, ns.
    pub next_seg: f64,
    /// Hybrid: bytes left in the current segment.
    pub seg_left: u64,
}

/// One segment (burst) that left.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefSegment {
    /// Flow index.
    pub flow: usize,
    /// Bytes.
    pub bytes: u64,
    /// When, ns.
    pub t_send: f64,
}

/// The reference pacer.
#[derive(Debug, Clone)]
pub struct RefPacer {
    line_tpb: u64,
    hw_tpb: u64,
    burst: u64,
    line_free: f64,
    flows: Vec<RefFlow>,
    order: BTreeMap<(u64, u64), usize>,
    seq: u64,
    /// Flows found early at their slot's time and re-filed later (rate drops).
    pub refiled: u64,
    /// Idle flows whose pacing memory expired.
    pub expired: u64,
    /// Window flows that found their window closed.
    pub closed: u64,
}

fn slot(t_ns: f64) -> u64 {
    libm::floor(t_ns / SLOT_NS) as u64
}

impl RefPacer {
    /// A pacer on a line of `line_units` (128 b/s), with hybrid pacing `(hw_units, burst_bytes)`.
    pub fn new(line_units: u64, hybrid: Option<(u64, u64)>) -> Self {
        let (hw_tpb, burst) = hybrid.map_or((0, 0), |(r, b)| (tpb(r), b));
        Self {
            line_tpb: tpb(line_units),
            hw_tpb,
            burst,
            line_free: 0.0,
            flows: Vec::new(),
            order: BTreeMap::new(),
            seq: 0,
            refiled: 0,
            expired: 0,
            closed: 0,
        }
    }

    /// Adds a flow; returns its index.
    pub fn add_flow(&mut self, seg: u64, rate_units: u64, mode: RefMode, window: u64) -> usize {
        self.flows.push(RefFlow {
            mode,
            seg,
            tpb: tpb(rate_units),
            tpb_sched: tpb(rate_units),
            backlog: 0,
            due: 0.0,
            last: 1,
            scheduled: false,
            fresh: false,
            window,
            inflight: 0,
            next_seg: 0.0,
            seg_left: 0,
        });
        self.flows.len() - 1
    }

    /// Where flow `f` is filed: `(slot, sequence number)`.
    pub fn key_of(&self, f: usize) -> Option<(u64, u64)> {
        self.order.iter().find(|(_, g)| **g == f).map(|(k, _)| *k)
    }

    /// The first filed flow and its key.
    pub fn first(&self) -> Option<((u64, u64), usize)> {
        self.order.first_key_value().map(|(k, f)| (*k, *f))
    }

    /// The flows.
    pub fn flows(&self) -> &[RefFlow] {
        &self.flows
    }

    fn file(&mut self, f: usize) {
        let key = (slot(self.flows[f].due), self.seq);
        self.seq += 1;
        self.order.insert(key, f);
    }

    fn schedule_now(&mut self, f: usize, now: f64) {
        let fl = &mut self.flows[f];
        fl.due = now;
        fl.scheduled = true;
        fl.fresh = true;
        if fl.mode == RefMode::Hybrid {
            fl.next_seg = now;
            fl.seg_left = 0;
        }
        self.file(f);
    }

    /// A new rate (units of 128 b/s). Nothing else changes now: the lazy update compares the
    /// rate when a waiting segment's time comes.
    pub fn set_rate(&mut self, f: usize, rate_units: u64) {
        self.flows[f].tpb = tpb(rate_units);
    }

    /// The lazy update: `(due, next_seg)` of `f` with the rate it has now. If the rate dropped
    /// since `due` was computed, the segment is due later by the difference of the gaps of the
    /// last segment at the two rates (hybrid: the next segment starts that much later).
    pub fn effective(&self, f: usize) -> (f64, f64) {
        let fl = &self.flows[f];
        if fl.tpb <= fl.tpb_sched || fl.fresh {
            return (fl.due, fl.next_seg);
        }
        let d = gap_ns(fl.last, fl.tpb) - gap_ns(fl.last, fl.tpb_sched);
        match fl.mode {
            RefMode::Paced | RefMode::Window => (fl.due + d, fl.next_seg),
            RefMode::Hybrid if fl.seg_left == 0 => {
                let v = fl.next_seg + d;
                (fl.due.max(v), v)
            }
            RefMode::Hybrid => (fl.due, fl.next_seg),
        }
    }

    /// More bytes for `f`; an unscheduled flow is scheduled now (unless its window is closed).
    pub fn enqueue(&mut self, f: usize, bytes: u64, now: f64) {
        let fl = &mut self.flows[f];
        fl.backlog += bytes;
        if fl.scheduled || fl.backlog == 0 {
            return;
        }
        if fl.mode == RefMode::Window && fl.window <= fl.inflight {
            return;
        }
        self.schedule_now(f, now);
    }

    fn reopen(&mut self, f: usize, now: f64) {
        let fl = &self.flows[f];
        if fl.window > fl.inflight && !fl.scheduled && fl.backlog > 0 {
            self.schedule_now(f, now);
        }
    }

    /// `bytes` of window flow `f` acknowledged.
    pub fn on_ack(&mut self, f: usize, bytes: u64, now: f64) {
        let fl = &mut self.flows[f];
        fl.inflight = fl.inflight.saturating_sub(bytes);
        self.reopen(f, now);
    }

    /// Window flow `f`'s window.
    pub fn set_window(&mut self, f: usize, window: u64, now: f64) {
        self.flows[f].window = window;
        self.reopen(f, now);
    }

    /// The next segment that leaves at or before `now`.
    pub fn next(&mut self, now: f64) -> Option<RefSegment> {
        loop {
            let (&(s, q), &f) = self.order.first_key_value()?;
            if s as f64 * SLOT_NS > now {
                return None;
            }
            let (due, next_seg) = self.effective(f);
            if due > now {
                if slot(due) > s {
                    // Its slot's time came but its rate dropped: rescheduled later.
                    self.order.remove(&(s, q));
                    let fl = &mut self.flows[f];
                    fl.due = due;
                    if fl.mode != RefMode::Hybrid || fl.seg_left == 0 {
                        fl.next_seg = next_seg;
                        fl.tpb_sched = fl.tpb;
                    }
                    self.file(f);
                    self.refiled += 1;
                    continue;
                }
                return None;
            }
            let fl = &self.flows[f];
            if fl.backlog == 0 {
                self.order.remove(&(s, q));
                let fl = &mut self.flows[f];
                fl.scheduled = false;
                fl.fresh = false;
                self.expired += 1;
                continue;
            }
            if fl.mode == RefMode::Window && fl.window <= fl.inflight {
                self.order.remove(&(s, q));
                let fl = &mut self.flows[f];
                fl.scheduled = false;
                fl.fresh = false;
                self.closed += 1;
                continue;
            }
            let t_send = due.max(self.line_free);
            if t_send > now {
                return None;
            }
            self.order.remove(&(s, q));
            let (line_tpb, hw_tpb, burst) = (self.line_tpb, self.hw_tpb, self.burst);
            let fl = &mut self.flows[f];
            let bytes = match fl.mode {
                RefMode::Paced | RefMode::Window => {
                    let mut b = fl.seg.min(fl.backlog);
                    if fl.mode == RefMode::Window {
                        b = b.min(fl.window - fl.inflight);
                        fl.inflight += b;
                    }
                    fl.due = t_send + gap_ns(b, fl.tpb);
                    fl.tpb_sched = fl.tpb;
                    fl.last = b;
                    b
                }
                RefMode::Hybrid => {
                    if fl.seg_left == 0 {
                        let seg = fl.seg.min(fl.backlog);
                        fl.next_seg = t_send + gap_ns(seg, fl.tpb);
                        fl.tpb_sched = fl.tpb;
                        fl.seg_left = seg;
                        fl.last = seg;
                    }
                    let b = burst.min(fl.seg_left);
                    fl.seg_left -= b;
                    let drained = t_send + gap_ns(b, hw_tpb);
                    fl.due = if fl.seg_left == 0 {
                        drained.max(fl.next_seg)
                    } else {
                        drained
                    };
                    b
                }
            };
            fl.backlog -= bytes;
            fl.fresh = false;
            self.line_free = t_send + gap_ns(bytes, line_tpb);
            self.file(f);
            return Some(RefSegment {
                flow: f,
                bytes,
                t_send,
            });
        }
    }
}
