//! The NIC's pacer: every host paces its flows through `cc-pacer` (`Pacer<1024, 1024>`, its
//! public API as firmware calls it) or through the f64 reference `cc_reference::pacer::RefPacer`,
//! one per host, chosen per run (the scenario's `pacer`, by default the controller's side).
//!
//! * Time: the engine's picoseconds become the pacer's 1/16-ns units, rounded down
//!   ([`units_of`]); `cc-pacer` gets them as its `u32` `Instant` (wrapping every 268 ms), the
//!   reference on an unbounded `f64` clock in ns. A pacer time becomes the first picosecond at
//!   or after it ([`ps_of`]). The pacer's clock starts with the run, not at the NIC clock's
//!   offset (`nic_clock`): `Pacer::new` stores its line's free time as instant 0, so a pacer
//!   whose first `now` lies between 2^31 and 2^32 − 2^30 units after 0 finds its line busy
//!   until the clock wraps past 0 (up to 134 ms; docs/pacer.md §7).
//! * Rates: the controller's b/s become units of 128 b/s rounded down, saturating at
//!   `u32::MAX` units (≈ 549.7 Gb/s); both pacers then pace a rate below 61 036 units
//!   (≈ 7.81 Mb/s) at that rate (counted by the engine).

use cc_pacer::{Config, FlowId, FlowMode, FlowSpec, Instant, Pacer, Rate};
use cc_reference::pacer::{RefMode, RefPacer, gap_ns, tpb};

/// Flows a NIC's pacer holds at once besides its line flow (`N` − 1 and `X` − 1 of
/// `Pacer<N, X>`: every flow may be a window flow).
pub const PACER_FLOWS: usize = 1024;

type FixedPacer = Pacer<{ PACER_FLOWS + 1 }, { PACER_FLOWS + 1 }>;

/// The engine's picoseconds in the pacer's 1/16-ns units (rounded down).
pub(super) fn units_of(ps: u64) -> u64 {
    ps * 2 / 125
}

/// The first picosecond at or after `u` 1/16-ns units.
pub(super) fn ps_of(u: u64) -> u64 {
    (u * 125).div_ceil(2)
}

/// The controller's rate (b/s) in the pacer's units of 128 b/s: rounded down, saturating.
pub(super) fn rate_units(bps: f64) -> u32 {
    Rate::from_bps(bps as u64).units()
}

/// One segment handed out: the pacer's flow slot, its bytes and when it leaves (units).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Seg {
    pub slot: u16,
    pub bytes: u32,
    pub t_send: u64,
}

/// A host NIC's pacer, either side.
pub(super) enum NicPacer {
    /// `cc-pacer`.
    Fixed { p: Box<FixedPacer> },
    /// The f64 reference; the engine keeps its line's free time (the reference has no getter).
    Ref {
        p: Box<RefPacer>,
        line_tpb: u64,
        line_free: f64,
    },
}

fn ns(u: u64) -> f64 {
    u as f64 / 16.0
}

impl NicPacer {
    /// A pacer on a line of `line_bps` (checked by the scenario: within the pacer's rates), with
    /// its line flow in slot 0: a paced flow at the line rate in segments of 64 KiB, to which
    /// the NIC gives the line time its port spends on anything but paced data.
    pub(super) fn new(fixed: bool, line_bps: u64) -> Self {
        let mut p = Self::empty(fixed, line_bps);
        let line = Rate::from_bps(line_bps).units();
        let _ = p.add(1 << 16, line, None);
        p
    }

    fn empty(fixed: bool, line_bps: u64) -> Self {
        let line = Rate::from_bps(line_bps);
        if fixed {
            let cfg = Config::new(line).unwrap_or(Config::DEFAULT);
            NicPacer::Fixed {
                p: Box::new(Pacer::new(&cfg)),
            }
        } else {
            NicPacer::Ref {
                p: Box::new(RefPacer::new(u64::from(line.units()), None)),
                line_tpb: tpb(u64::from(line.units())),
                line_free: 0.0,
            }
        }
    }

    /// The pacer's instant for `u` units since the run's start (modulo 2^32).
    fn instant(u: u64) -> Instant {
        Instant::from_raw(u as u32)
    }

    /// Flows added so far (slots in use or reusable).
    pub(super) fn len(&self) -> usize {
        match self {
            NicPacer::Fixed { p, .. } => p.len(),
            NicPacer::Ref { p, .. } => p.flows().len(),
        }
    }

    /// Adds a flow: segments of `seg` bytes, a rate, and a window (`Some`: a window flow).
    pub(super) fn add(&mut self, seg: u32, rate: u32, window: Option<u32>) -> Option<u16> {
        match self {
            NicPacer::Fixed { p, .. } => {
                let mode = match window {
                    Some(w) => FlowMode::Window { window_bytes: w },
                    None => FlowMode::Paced,
                };
                let spec = FlowSpec {
                    seg_bytes: seg,
                    rate: Rate::from_units(rate),
                    mode,
                };
                p.add_flow(spec).ok().map(|f| f.index() as u16)
            }
            NicPacer::Ref { p, .. } => {
                let mode = if window.is_some() {
                    RefMode::Window
                } else {
                    RefMode::Paced
                };
                let i = p.add_flow(
                    u64::from(seg),
                    u64::from(rate),
                    mode,
                    u64::from(window.unwrap_or(0)),
                );
                Some(i as u16)
            }
        }
    }

    /// A slot out of the wheel: its bytes still queued (`None`: still scheduled).
    pub(super) fn idle_backlog(&self, slot: u16) -> Option<u32> {
        match self {
            NicPacer::Fixed { p, .. } => p
                .flow(FlowId::from_index(slot))
                .filter(|v| !v.scheduled)
                .map(|v| v.backlog),
            NicPacer::Ref { p, .. } => p
                .flows()
                .get(usize::from(slot))
                .filter(|f| !f.scheduled)
                .map(|f| f.backlog as u32),
        }
    }

    pub(super) fn set_rate(&mut self, slot: u16, rate: u32) {
        match self {
            NicPacer::Fixed { p, .. } => {
                let _ = p.set_rate(FlowId::from_index(slot), Rate::from_units(rate));
            }
            NicPacer::Ref { p, .. } => p.set_rate(usize::from(slot), u64::from(rate)),
        }
    }

    pub(super) fn set_window(&mut self, slot: u16, w: u32, u: u64) {
        match self {
            NicPacer::Fixed { p } => {
                let _ = p.set_window(FlowId::from_index(slot), w, Self::instant(u));
            }
            NicPacer::Ref { p, .. } => p.set_window(usize::from(slot), u64::from(w), ns(u)),
        }
    }

    pub(super) fn on_ack(&mut self, slot: u16, bytes: u32, u: u64) {
        match self {
            NicPacer::Fixed { p } => {
                let _ = p.on_ack(FlowId::from_index(slot), bytes, Self::instant(u));
            }
            NicPacer::Ref { p, .. } => p.on_ack(usize::from(slot), u64::from(bytes), ns(u)),
        }
    }

    /// Queues `bytes` for `slot` (the engine keeps every backlog below `u32::MAX`).
    pub(super) fn enqueue(&mut self, slot: u16, bytes: u32, u: u64) {
        match self {
            NicPacer::Fixed { p } => {
                let _ = p.enqueue(FlowId::from_index(slot), bytes, Self::instant(u));
            }
            NicPacer::Ref { p, .. } => p.enqueue(usize::from(slot), u64::from(bytes), ns(u)),
        }
    }

    /// The next segment that leaves at or before `u`.
    pub(super) fn next(&mut self, u: u64) -> Option<Seg> {
        match self {
            NicPacer::Fixed { p } => {
                let now = Self::instant(u);
                let s = p.next(now)?;
                // `t_send` is at or before `now`, within half a wrap.
                let back = now.since(s.t_send).max(0) as u64;
                Some(Seg {
                    slot: s.flow.index() as u16,
                    bytes: s.bytes,
                    t_send: u.saturating_sub(back),
                })
            }
            NicPacer::Ref {
                p,
                line_tpb,
                line_free,
            } => {
                let s = p.next(ns(u))?;
                *line_free = s.t_send + gap_ns(s.bytes, *line_tpb);
                Some(Seg {
                    slot: s.flow as u16,
                    bytes: s.bytes as u32,
                    // Every time the reference produces is a multiple of 1/16 ns.
                    t_send: (s.t_send * 16.0) as u64,
                })
            }
        }
    }

    /// No segment leaves before this time (units; at or before `u`: call `next` again now).
    pub(super) fn earliest(&self, u: u64) -> Option<u64> {
        match self {
            NicPacer::Fixed { p } => {
                let e = p.earliest()?;
                let d = i64::from(e.since(Self::instant(u)));
                Some(u.saturating_add_signed(d))
            }
            NicPacer::Ref { p, line_free, .. } => {
                let ((s, _), f) = p.first()?;
                let (due, _) = p.effective(f);
                let start = s as f64 * cc_reference::pacer::SLOT_NS;
                let lower = if (due / cc_reference::pacer::SLOT_NS).floor() as u64 == s {
                    due
                } else {
                    start
                };
                Some((lower.max(*line_free) * 16.0).ceil() as u64)
            }
        }
    }
}
