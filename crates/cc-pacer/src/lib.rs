//! TIMELY's third engine (Mittal et al., SIGCOMM 2015, §3: "rate control"): a segment pacer
//! that schedules many flows at their rates, for NIC firmware — `no_std`, no allocation, no
//! floats, no division per event, no panics. It also serves HPCC (Li et al., SIGCOMM 2019),
//! which paces at `R = W/T` and caps the bytes in flight at `W`.
//!
//! One [`Pacer`] holds up to `N` flows (`heapless` storage) and one two-level timing wheel
//! (docs/pacer.md). Per flow: its rate, as a time per byte computed once per rate change
//! ([`set_rate`](Pacer::set_rate), through cc-math's reciprocal); its segment size; its backlog
//! ([`enqueue`](Pacer::enqueue) splits messages into segments); for HPCC flows a window and the
//! bytes in flight ([`on_ack`](Pacer::on_ack)). [`next`](Pacer::next) hands out the next segment
//! that may leave, with the time it leaves; [`earliest`](Pacer::earliest) says when to call again.
//!
//! ```
//! use cc_pacer::{Config, FlowMode, FlowSpec, Instant, Pacer, Rate};
//! let cfg = Config::new(Rate::from_bps(100_000_000_000)).unwrap(); // a 100 Gb/s NIC
//! let mut p: Pacer<16> = Pacer::new(&cfg);
//! let f = p.add_flow(FlowSpec::paced(16_384, Rate::from_bps(10_000_000_000))).unwrap();
//! p.enqueue(f, 40_000, Instant::from_ns(0)).unwrap();      // three segments: 16 + 16 + 7.2 KiB
//! let s = p.next(Instant::from_ns(0)).unwrap();
//! assert_eq!((s.flow, s.bytes, s.t_send), (f, 16_384, Instant::from_ns(0)));
//! // 16 KiB at 10 Gb/s take 13 107.2 ns: the next segment may leave 209 716/16 ns later.
//! assert_eq!(p.next(Instant::from_ns(13_000)), None);
//! assert_eq!(p.earliest(), Some(Instant::from_raw(209_716)));
//! let s = p.next(Instant::from_ns(13_108)).unwrap();
//! assert_eq!((s.bytes, s.t_send.raw()), (16_384, 209_716));
//! ```
//!
//! # Semantics (the f64 reference in `sim-host` implements the same description)
//! * **Pacing.** After a segment of `b` bytes leaves at `t`, its flow's next segment may leave at
//!   `t + gap(b)`, `gap(b) = ⌈b·tpb/2^18⌉` time units ([`rate`] has the formats). A segment leaves
//!   at `max(due, line_free)`: the NIC's line ([`Config`]) carries one segment at a time, for
//!   `⌈b·tpb_line/2^18⌉`.
//! * **Order.** Due times fall into slots of 64 ns; slots are served in time order, and a slot
//!   serves its flows in the order they were scheduled (FIFO). A flow never leaves before its due
//!   time: a flow at the head of a slot whose due time has not come holds the slot (by less than
//!   64 ns).
//! * **Lazy update (§5 of the paper).** [`set_rate`](Pacer::set_rate) only stores the new time per
//!   byte; each flow remembers the one its due time was computed with. When a waiting
//!   segment's slot time comes and the rate has dropped since, it is due at
//!   `t_last + gap_now(b_last)`: it leaves then, or is re-filed in that later slot. A rate
//!   increase never moves a waiting segment earlier; it takes effect from the next gap.
//! * **Idle flows.** A flow that runs out of data stays in the wheel until its due time passes
//!   (so a new message is still paced after the last one), then leaves; a flow that is scheduled
//!   again from outside the wheel (new data, window opened) may send at once.
//! * **Windows (HPCC).** A window flow sends at most `W − in_flight` bytes (a shorter segment if
//!   need be); with nothing left it leaves the wheel until [`on_ack`](Pacer::on_ack) or
//!   [`set_window`](Pacer::set_window) opens the window again.
//! * **Hybrid pacing (§5).** With [`Config::with_hybrid`], a hybrid flow's segment leaves as
//!   bursts of at most `burst_bytes`, one burst every `⌈b·tpb_hw/2^18⌉` (a NIC rate limiter at
//!   the fixed sub-line rate), and the next segment starts no earlier than
//!   `segment start + gap(segment)` at the flow's rate, nor before the last burst has drained.
//!
//! # Time
//! [`Instant`]: `u32` in 1/16 ns, wrapping every 268.4 ms. Stored times stay within half a wrap of
//! the caller's `now` provided **some method taking `now` is called at least every 67 ms** (a
//! timer armed at [`earliest`](Pacer::earliest) does this while anything is scheduled: no gap is
//! longer than 67.1 ms; an idle pacer needs a periodic tick) and `now` never goes backwards.
//!
//! # Cost
//! Per event a bounded amount of work independent of `N`: [`next`](Pacer::next) reads two bitmap
//! words, pops one list head, does two multiplies and appends to one list;
//! [`set_rate`](Pacer::set_rate) is one reciprocal (table, one correction, exact fix-up) and a
//! store. A page's flows filed ahead in level 1 are moved into level 0 during the page before
//! it, at most four per call of `next` while [`earliest`](Pacer::earliest) asks for the calls
//! (all at once only when a caller let that page's time come first). docs/pacer.md has the
//! measured instruction counts.
//!
//! # State size (riscv32)
//! Per flow: 20 bytes of pacing state plus 4 bytes of wheel link, plus 8 bytes for flows that can
//! be window or hybrid flows (the first `X` flows). The wheel: 12 820 bytes whatever `N`.
#![doc = "\n"]
#![doc = include_str!("../docs/formats.md")]
#![no_std]
#![forbid(unsafe_code)]
#![deny(
    clippy::float_arithmetic,
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::unwrap_used,
    clippy::cast_possible_truncation
)]

mod config;
pub mod rate;
mod time;
mod wheel;

pub use config::{Config, ConfigError};
pub use rate::{Rate, gap, time_per_byte};
pub use time::Instant;
pub use wheel::{L0_SLOTS, L1_PAGES, PAGE_SHIFT, SLOT_SHIFT};

use time::after;
use wheel::{L1_PAGES as L1, NIL, PAGE_MASK, Wheel};

/// Level-1 pages as `u32` (2048), and the mask of a level-1 index.
#[allow(clippy::cast_possible_truncation)]
const L1_32: u32 = L1 as u32;
const L1_MASK32: u32 = L1_32.wrapping_sub(1);
/// Pending flows [`Pacer::next`] moves into level 0 per call (docs/pacer.md §3).
const MOVES_PER_CALL: u32 = 4;
/// The mask of a slot within a page.
#[allow(clippy::cast_possible_truncation)]
const L0_MASK32: u32 = (L0_SLOTS as u32).wrapping_sub(1);

/// A flow's index in its [`Pacer`] (`0 ..`, in the order flows were added).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(transparent)]
pub struct FlowId(u32);

impl FlowId {
    /// The flow's index.
    #[must_use]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
    /// The flow with index `i` (whether it exists is checked by the pacer's methods).
    #[must_use]
    pub const fn from_index(i: u16) -> Self {
        Self(i as u32)
    }
    /// The flow's index as a `u32` (what a C caller passes around).
    #[must_use]
    pub const fn raw(self) -> u32 {
        self.0
    }
    /// The flow with index `i` given as a `u32` (a C caller's flow number; any value: the pacer's
    /// methods refuse one that is not a flow).
    #[must_use]
    pub const fn from_raw(i: u32) -> Self {
        Self(i)
    }
}

/// How a flow is limited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FlowMode {
    /// Paced at its rate (TIMELY).
    Paced,
    /// Paced at its rate and capped at `window_bytes` in flight (HPCC).
    Window {
        /// The initial window, bytes.
        window_bytes: u32,
    },
    /// Paced at its rate segment by segment, each segment leaving as bursts at the configured
    /// hardware rate (TIMELY §5's hybrid pacing; needs [`Config::with_hybrid`]).
    Hybrid,
}

/// A flow to add.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FlowSpec {
    /// Segment size: a multiple of 256 in `256 ..= 65 536` bytes (TIMELY's default 16 KiB).
    pub seg_bytes: u32,
    /// Initial rate.
    pub rate: Rate,
    /// Limits.
    pub mode: FlowMode,
}

impl FlowSpec {
    /// A paced flow.
    #[must_use]
    pub const fn paced(seg_bytes: u32, rate: Rate) -> Self {
        Self {
            seg_bytes,
            rate,
            mode: FlowMode::Paced,
        }
    }
}

/// One segment (a burst, for hybrid flows) that leaves now. Three `u32` words in C layout (a
/// C ABI can hand its caller's segment record to [`Pacer::next_into`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(C)]
pub struct Segment {
    /// Whose.
    pub flow: FlowId,
    /// Its length, bytes (`1 ..= 65 536`).
    pub bytes: u32,
    /// When it leaves: `max(its due time, line free)`, at or before the `now` given to `next`.
    pub t_send: Instant,
}

/// What [`Pacer::next_into`] did.
///
/// The one definition of these codes: the discriminants are the C ABI's values (cc-ffi returns
/// this type as it is; cbindgen writes it into the header as `CcPacerNext`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u32)]
pub enum PacerNext {
    /// Nothing leaves at or before `now`; `*out` untouched.
    None = 0,
    /// `*out` is a segment (a burst for hybrid flows) that leaves now.
    Send = 1,
}

/// Why a call was refused (nothing changed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum PacerError {
    /// No such flow.
    UnknownFlow,
    /// The pacer holds `N` flows already.
    Full,
    /// The segment size is not a multiple of 256 in `256 ..= 65 536`.
    SegmentSize,
    /// Window and hybrid flows need one of the first `X` slots (`X` = the pacer's second
    /// parameter).
    NoExtension,
    /// A hybrid flow on a pacer configured without hybrid pacing.
    NoHybrid,
    /// `on_ack`/`set_window` on a flow that is not a window flow.
    NotWindow,
    /// The backlog would exceed `u32::MAX` bytes.
    BacklogOverflow,
}

/// What [`Pacer::set_rate`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum RateChange {
    /// Same time per byte.
    Unchanged,
    /// Faster: takes effect at the next segment.
    Increase,
    /// Slower: a waiting segment's due time moved later (the lazy update).
    Decrease,
}

/// What [`Pacer::enqueue`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Enqueued {
    /// The flow was already scheduled: the bytes wait behind its backlog.
    Queued,
    /// The flow was idle: it is scheduled now.
    Scheduled,
    /// Window flow with a closed window: it waits for an ACK.
    WindowClosed,
}

/// What [`Pacer::on_ack`] / [`Pacer::set_window`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum WindowChange {
    /// Bookkeeping only.
    Updated,
    /// The window opened for a flow that was waiting for it: it is scheduled now.
    Reopened,
}

/// A flow's state as plain numbers (for hosts, tests and C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FlowView {
    /// Bytes queued, not yet sent.
    pub backlog: u32,
    /// Time per byte (2^-22 ns).
    pub tpb: u32,
    /// Segment size, bytes.
    pub seg_bytes: u32,
    /// When its next segment may leave (meaningful while `scheduled`).
    pub due: Instant,
    /// In the wheel.
    pub scheduled: bool,
    /// `(window, in flight)` for window flows.
    pub window: Option<(u32, u32)>,
}

const IN_WHEEL: u8 = 1;
const WINDOW: u8 = 2;
const HYBRID: u8 = 4;
/// Scheduled from outside the wheel: no segment's gap is pending, so a rate drop cannot delay it.
const FRESH: u8 = 8;

/// Per-flow state: 20 bytes of pacing state and the 4-byte wheel link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Flow {
    /// When the next segment may leave (an [`Instant`]'s raw units), as scheduled.
    due: u32,
    /// Time per byte now, 2^-22 ns ([`rate`]).
    tpb: u32,
    /// The time per byte `due` was computed with (the lazy update compares the two).
    tpb_sched: u32,
    /// Bytes queued.
    backlog: u32,
    /// Size − 1 of the segment whose gap set `due` (hybrid: of the current segment).
    last_m1: u16,
    /// Segment size / 256 − 1.
    seg_m1: u8,
    flags: u8,
    /// The wheel's link word: the next flow in its list (low half) and the slot it was filed
    /// for (high half). Here rather than in an array of its own: the common case of `next`
    /// reaches it from the flow's address, with the flow table's bound.
    link: u32,
}

impl wheel::Links for [Flow] {
    #[inline(always)]
    fn link(&self, f: u16) -> Option<u32> {
        self.get(usize::from(f)).map(|fl| fl.link)
    }
    #[inline(always)]
    fn link_mut(&mut self, f: u16) -> Option<&mut u32> {
        self.get_mut(usize::from(f)).map(|fl| &mut fl.link)
    }
}

impl Flow {
    #[inline(always)]
    fn seg_bytes(&self) -> u32 {
        (u32::from(self.seg_m1) + 1) << 8
    }

    /// A segment of `bytes` starts at `t`: the flow's next segment may start `gap(bytes)` later
    /// at its current rate, which it remembers for the lazy update (`tpb_sched`, `last_m1`).
    /// Returns that time: the due time of a paced or window flow, the next segment's earliest
    /// start of a hybrid flow.
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)] // 1 ≤ bytes ≤ 65 536
    fn pace(&mut self, t: u32, bytes: u32) -> u32 {
        self.tpb_sched = self.tpb;
        self.last_m1 = bytes.wrapping_sub(1) as u16;
        t.wrapping_add(gap(bytes, self.tpb))
    }
}

/// Extension for window flows `(window, in flight)` and hybrid flows
/// `(next segment's earliest start, bytes left in the current segment)`: 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct Ext {
    a: u32,
    b: u32,
}

/// The pacer: up to `N` flows (`N ≤ 65 535`), the first `X ≤ N` of which may be window or hybrid
/// flows.
///
/// Size on riscv32: `12 820` (wheel) `+ 24` + `N·24` (flows: 20 bytes of pacing state and the
/// 4-byte wheel link each) + `X·8`
/// (45 612 bytes for `Pacer<1024, 1024>`).
///
/// In C order: the scalars and the wheel's level-0 maps and lists first, so that the common
/// case of [`next`](Self::next) reaches them by a load's offset from the pacer's address.
///
/// C sees it as cc-ffi's opaque `CcPacer` block; the line below keeps cbindgen from reading it.
///
/// cbindgen:ignore
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Pacer<const N: usize, const X: usize = 0> {
    line_free: u32,
    /// The page level 0 holds (time >> 20, modulo 4096).
    page: u32,
    line_tpb: u32,
    hw_tpb: u32,
    burst_bytes: u32,
    wheel: Wheel,
    flows: heapless::Vec<Flow, N>,
    ext: [Ext; X],
    /// Pending flows moved into level 0 so far (tests).
    #[cfg(test)]
    moved: usize,
}

/// What a window or hybrid flow at the head of the wheel did.
enum ExtSend {
    /// The segment or burst is in the caller's record.
    Sent,
    /// Out of the wheel (window closed): look at the next head.
    WindowClosed,
    LineBusy,
}

impl<const N: usize, const X: usize> Pacer<N, X> {
    const CHECK: () = assert!(N < NIL as usize && X <= N, "N < 65 535 and X ≤ N");

    /// An empty pacer for the NIC `cfg`.
    #[must_use]
    pub const fn new(cfg: &Config) -> Self {
        let () = Self::CHECK;
        Self {
            line_free: 0,
            page: 0,
            line_tpb: cfg.line_tpb,
            hw_tpb: cfg.hw_tpb,
            burst_bytes: cfg.burst_bytes,
            flows: heapless::Vec::new(),
            ext: [Ext { a: 0, b: 0 }; X],
            wheel: Wheel::new(),
            #[cfg(test)]
            moved: 0,
        }
    }

    /// Empties the pacer in place for the NIC `cfg` (no flows, nothing scheduled), without a
    /// temporary of its size on the stack: for a pacer in static or caller-provided memory.
    pub fn reset(&mut self, cfg: &Config) {
        self.line_free = 0;
        self.page = 0;
        self.line_tpb = cfg.line_tpb;
        self.hw_tpb = cfg.hw_tpb;
        self.burst_bytes = cfg.burst_bytes;
        self.flows.clear();
        self.ext.fill(Ext::default());
        self.wheel.reset();
    }

    /// Number of flows added.
    #[must_use]
    pub fn len(&self) -> usize {
        self.flows.len()
    }

    /// No flow added yet.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Adds a flow (idle, nothing queued).
    ///
    /// # Errors
    /// [`PacerError::Full`], [`PacerError::SegmentSize`], [`PacerError::NoExtension`],
    /// [`PacerError::NoHybrid`].
    #[allow(clippy::cast_possible_truncation)] // i < N < 65 535; seg/256 − 1 ≤ 255 (checked)
    pub fn add_flow(&mut self, spec: FlowSpec) -> Result<FlowId, PacerError> {
        let s = spec.seg_bytes;
        if !(256..=65_536).contains(&s) || s & 255 != 0 {
            return Err(PacerError::SegmentSize);
        }
        let i = self.flows.len();
        let (flags, ext) = match spec.mode {
            FlowMode::Paced => (0, Ext::default()),
            FlowMode::Window { window_bytes } => (
                WINDOW,
                Ext {
                    a: window_bytes,
                    b: 0,
                },
            ),
            FlowMode::Hybrid if self.hw_tpb == 0 => return Err(PacerError::NoHybrid),
            FlowMode::Hybrid => (HYBRID, Ext::default()),
        };
        if flags != 0 {
            let Some(x) = self.ext.get_mut(i) else {
                return Err(PacerError::NoExtension);
            };
            *x = ext;
        }
        let tpb = time_per_byte(spec.rate);
        let fl = Flow {
            due: 0,
            tpb,
            tpb_sched: tpb,
            backlog: 0,
            last_m1: 0,
            seg_m1: ((s >> 8).wrapping_sub(1)) as u8,
            flags,
            link: u32::from(NIL),
        };
        self.flows.push(fl).map_err(|_| PacerError::Full)?;
        Ok(FlowId::from_index(i as u16))
    }

    /// A flow's state.
    #[must_use]
    pub fn flow(&self, flow: FlowId) -> Option<FlowView> {
        let i = flow.index();
        let fl = self.flows.get(i)?;
        let window = if fl.flags & WINDOW != 0 {
            self.ext.get(i).map(|x| (x.a, x.b))
        } else {
            None
        };
        Some(FlowView {
            backlog: fl.backlog,
            tpb: fl.tpb,
            seg_bytes: fl.seg_bytes(),
            due: Instant::from_raw(fl.due),
            scheduled: fl.flags & IN_WHEEL != 0,
            window,
        })
    }

    /// Sets a flow's rate: one reciprocal (cc-math table, one correction, exact fix-up) and a
    /// store. Nothing moves in the wheel: a segment that is waiting is checked against the new
    /// rate when its time comes (the lazy update, in [`next`](Self::next)); an increase applies
    /// from the next segment on.
    ///
    /// # Errors
    /// [`PacerError::UnknownFlow`].
    #[inline]
    pub fn set_rate(&mut self, flow: FlowId, rate: Rate) -> Result<RateChange, PacerError> {
        let tpb = time_per_byte(rate);
        let Some(fl) = self.flows.get_mut(flow.index()) else {
            return Err(PacerError::UnknownFlow);
        };
        let old = fl.tpb;
        fl.tpb = tpb;
        Ok(if tpb > old {
            RateChange::Decrease
        } else if tpb < old {
            RateChange::Increase
        } else {
            RateChange::Unchanged
        })
    }

    /// The lazy update (TIMELY §5): a flow whose rate dropped since its due time was computed is
    /// due `gap_now(b_last) − gap_then(b_last)` later; a hybrid flow between segments starts its
    /// next segment that much later (bursts within a segment keep their pace). Returns the
    /// effective due time and, for hybrid flows, the next segment's earliest start.
    #[inline(never)]
    fn lazy_due(&self, i: usize, fl: &Flow) -> (u32, u32) {
        let x = self.ext.get(i).copied().unwrap_or_default();
        if fl.tpb <= fl.tpb_sched || fl.flags & FRESH != 0 {
            return (fl.due, x.a);
        }
        let b = u32::from(fl.last_m1).wrapping_add(1);
        let d = gap(b, fl.tpb).wrapping_sub(gap(b, fl.tpb_sched));
        if fl.flags & HYBRID == 0 {
            (fl.due.wrapping_add(d), x.a)
        } else if x.b == 0 {
            let v = x.a.wrapping_add(d);
            (if after(v, fl.due) { v } else { fl.due }, v)
        } else {
            (fl.due, x.a)
        }
    }

    /// Queues `bytes` more for `flow` (a message; it leaves in segments). An idle flow is
    /// scheduled at `now`.
    ///
    /// # Errors
    /// [`PacerError::UnknownFlow`], [`PacerError::BacklogOverflow`].
    pub fn enqueue(
        &mut self,
        flow: FlowId,
        bytes: u32,
        now: Instant,
    ) -> Result<Enqueued, PacerError> {
        let i = flow.index();
        let Some(fl) = self.flows.get_mut(i) else {
            return Err(PacerError::UnknownFlow);
        };
        let Some(b) = fl.backlog.checked_add(bytes) else {
            return Err(PacerError::BacklogOverflow);
        };
        fl.backlog = b;
        if fl.flags & IN_WHEEL != 0 || b == 0 {
            return Ok(Enqueued::Queued);
        }
        if fl.flags & WINDOW != 0 && self.ext.get(i).is_some_and(|x| x.a <= x.b) {
            return Ok(Enqueued::WindowClosed);
        }
        self.schedule_now(i, now.raw());
        Ok(Enqueued::Scheduled)
    }

    /// `bytes` of a window flow were acknowledged (in flight decreases, saturating at 0); a flow
    /// waiting for its window is scheduled at `now` if the window has room.
    ///
    /// # Errors
    /// [`PacerError::UnknownFlow`], [`PacerError::NotWindow`].
    pub fn on_ack(
        &mut self,
        flow: FlowId,
        bytes: u32,
        now: Instant,
    ) -> Result<WindowChange, PacerError> {
        let x = self.window_ext(flow)?;
        x.b = x.b.saturating_sub(bytes);
        Ok(self.maybe_reopen(flow.index(), now.raw()))
    }

    /// Sets a window flow's window (HPCC's `W`); a flow waiting for its window is scheduled at
    /// `now` if the window has room.
    ///
    /// # Errors
    /// [`PacerError::UnknownFlow`], [`PacerError::NotWindow`].
    pub fn set_window(
        &mut self,
        flow: FlowId,
        window_bytes: u32,
        now: Instant,
    ) -> Result<WindowChange, PacerError> {
        let x = self.window_ext(flow)?;
        x.a = window_bytes;
        Ok(self.maybe_reopen(flow.index(), now.raw()))
    }

    fn window_ext(&mut self, flow: FlowId) -> Result<&mut Ext, PacerError> {
        let i = flow.index();
        let fl = self.flows.get(i).ok_or(PacerError::UnknownFlow)?;
        if fl.flags & WINDOW == 0 {
            return Err(PacerError::NotWindow);
        }
        self.ext.get_mut(i).ok_or(PacerError::NotWindow)
    }

    fn maybe_reopen(&mut self, i: usize, now: u32) -> WindowChange {
        let open = self.ext.get(i).is_some_and(|x| x.a > x.b);
        let waiting = self
            .flows
            .get(i)
            .is_some_and(|fl| fl.flags & IN_WHEEL == 0 && fl.backlog > 0);
        if open && waiting {
            self.schedule_now(i, now);
            WindowChange::Reopened
        } else {
            WindowChange::Updated
        }
    }

    /// Puts an unscheduled flow in the wheel at `now` (no pacing debt).
    #[allow(clippy::cast_possible_truncation)] // i < N < 65 535
    fn schedule_now(&mut self, i: usize, now: u32) {
        if self.wheel.is_empty() {
            self.page = now >> PAGE_SHIFT;
        }
        self.refresh(now);
        let Some(fl) = self.flows.get_mut(i) else {
            return;
        };
        fl.due = now;
        fl.flags |= IN_WHEEL | FRESH;
        if fl.flags & HYBRID != 0
            && let Some(x) = self.ext.get_mut(i)
        {
            *x = Ext { a: now, b: 0 };
        }
        self.insert(i as u16, now);
    }

    /// Keeps `line_free` within half a wrap of `now` while the line is idle.
    #[inline]
    fn refresh(&mut self, now: u32) {
        if Instant::from_raw(now).since(Instant::from_raw(self.line_free)) > 1 << 30 {
            self.line_free = now.wrapping_sub(1 << 30);
        }
    }

    /// Files flow `f`, due at `due`, in the wheel (appended: FIFO within its slot).
    #[inline(always)]
    fn insert(&mut self, f: u16, due: u32) {
        let dpage = (due >> PAGE_SHIFT).wrapping_sub(self.page) & PAGE_MASK;
        if dpage < 2 {
            // The current or the next page: level 0 (its index is the due time's slot number
            // modulo 2048: the page's parity and the slot).
            self.wheel.l0_push_back(
                self.flows.as_mut_slice(),
                (due >> wheel::SLOT_SHIFT) as usize,
                f,
            );
        } else {
            self.insert_far(f, due, dpage);
        }
    }

    /// A page after the next: level 1 (beyond the horizon, which the time contract rules out:
    /// the last page, to be re-filed when it comes). Inlined: a call would make `next`'s common
    /// case save registers.
    #[inline(always)]
    fn insert_far(&mut self, f: u16, due: u32, dpage: u32) {
        let (page, key) = if (dpage as usize) < L1 {
            (due >> PAGE_SHIFT, (due >> wheel::SLOT_SHIFT) & L0_MASK32)
        } else {
            (self.page.wrapping_add(L1_MASK32), wheel::PARKED >> 16)
        };
        self.wheel
            .l1_push(self.flows.as_mut_slice(), page as usize, f, key);
    }

    /// The current page's slots are empty: make a later page the current one if its time has
    /// come. With flows in the next page (in level 0 or pending) that is the next page, once it
    /// has started: what is still pending is moved first, in full (the calls since it became the
    /// next page were too few to move it a few at a time). Otherwise the current page skips ahead
    /// to `now`'s page, or to the page before the first page filed in level 1 if that comes
    /// first, whose list then becomes the pending one: it is moved during the page before its
    /// own, a few flows per call. Returns whether the current page's slots may now hold flows.
    #[inline(never)]
    fn advance(&mut self, now: u32) -> bool {
        let mut n = (now >> PAGE_SHIFT).wrapping_sub(self.page) & PAGE_MASK;
        if n >= L1_32 {
            // `now` before the current page (outside the time contract): nothing is due.
            n = 0;
        }
        if n == 0 {
            return false;
        }
        let next = self.page.wrapping_add(1);
        if self.wheel.l0_holds(next) || self.wheel.has_pending() {
            self.move_pending(u32::MAX);
            self.turn_to(next);
            return true;
        }
        // Nothing in the current or the next page: the first page filed in level 1 is at least
        // two pages ahead; stop one page before it.
        let step = match self
            .wheel
            .l1_first_from((self.page as usize).wrapping_add(2))
        {
            #[allow(clippy::cast_possible_truncation)] // j < 2048
            Some(j) => n.min(((j as u32).wrapping_sub(self.page) & L1_MASK32).saturating_sub(1)),
            None => n,
        };
        if step == 0 {
            return false;
        }
        self.turn_to(self.page.wrapping_add(step));
        self.wheel.has_pending()
    }

    /// `page` becomes the current page (the slots of the pages before it are empty, nothing is
    /// pending), and the level-1 list of the page after it the pending list.
    #[inline(always)]
    fn turn_to(&mut self, page: u32) {
        self.page = page & PAGE_MASK;
        self.wheel.l1_take(self.page.wrapping_add(1) as usize);
    }

    /// Moves up to `limit` pending flows into the next page's level-0 slots, each to the front of
    /// the slot it was filed for (also if a rate drop has since moved its due time: it is
    /// re-filed when that slot's time comes, as in level 0).
    #[inline(never)]
    fn move_pending(&mut self, limit: u32) {
        let half = (self.page.wrapping_add(1) & 1) << (PAGE_SHIFT - wheel::SLOT_SHIFT);
        let mut left = limit;
        while left != 0 {
            let Some(g) = self.wheel.pending_pop(self.flows.as_slice()) else {
                return;
            };
            left = left.wrapping_sub(1);
            #[cfg(test)]
            {
                self.moved = self.moved.wrapping_add(1);
            }
            let key = wheel::key_of(self.flows.as_slice(), g);
            if key & (wheel::PARKED >> 16) == 0 {
                self.wheel.l0_push_front(
                    self.flows.as_mut_slice(),
                    (half | (key & L0_MASK32)) as usize,
                    g,
                );
            } else {
                // Parked beyond the horizon: filed again from its due time.
                let due = self.flows.get(usize::from(g)).map_or(0, |fl| fl.due);
                self.insert(g, due);
            }
        }
    }

    /// A head of slot `k` due at `due`, after `now`, holds its slot: the slot's time has not
    /// come, or `due` lies within it (less than 64 ns ahead). Otherwise (a rate drop, or the
    /// horizon, moved it to a later slot) it is to be re-filed there.
    #[inline(always)]
    fn holds_slot(&self, k: usize, due: u32, now: u32) -> bool {
        #[allow(clippy::cast_possible_truncation)] // k < 1024
        let slot = (self.page << (PAGE_SHIFT - wheel::SLOT_SHIFT)) | k as u32;
        // The slot's start is `slot << 10`; `due` is in it when the 22-bit slot numbers agree.
        after(slot << wheel::SLOT_SHIFT, now)
            || ((due >> wheel::SLOT_SHIFT) ^ slot) & 0x3F_FFFF == 0
    }

    /// When a segment due at `due` leaves: `t_send = max(due, line_free)` (the line carries one
    /// segment at a time).
    #[inline(always)]
    fn t_send(&self, due: u32) -> u32 {
        if after(self.line_free, due) {
            self.line_free
        } else {
            due
        }
    }

    /// The next segment that leaves at or before `now`, with the time it leaves; `None` when
    /// nothing may leave yet (ask [`earliest`](Self::earliest) when).
    #[inline]
    pub fn next(&mut self, now: Instant) -> Option<Segment> {
        let mut s = Segment {
            flow: FlowId(0),
            bytes: 0,
            t_send: now,
        };
        match self.next_into(now, &mut s) {
            PacerNext::Send => Some(s),
            PacerNext::None => None,
        }
    }

    /// [`next`](Self::next) writing the segment into `out` (caller storage: a descriptor ring,
    /// a C caller's record): [`PacerNext::Send`] when a segment leaves (`*out` written),
    /// [`PacerNext::None`] when nothing may leave yet (`*out` untouched).
    ///
    /// The common case is in line: the first slot's head is a paced flow whose rate has not
    /// dropped since it was scheduled, and it either sends or holds its slot (with no flows
    /// pending: a call that hands out nothing moves some). Everything else (turning a page,
    /// moving pending flows, the lazy update, idle flows, windows, hybrid bursts, heads to
    /// re-file) is an out-of-line tail call with the same arguments, so a caller such as the C
    /// ABI reaches it without a second frame; both run the same send path.
    #[inline(always)]
    pub fn next_into(&mut self, now: Instant, out: &mut Segment) -> PacerNext {
        let t = now.raw();
        if let Some(k) = self.wheel.l0_first(self.page) {
            let f = self.wheel.l0_head(k);
            if let Some(fl) = self.flows.get(usize::from(f))
                && fl.tpb <= fl.tpb_sched
            {
                // No lazy update pending: `fl.due` is the due time. A call that hands out
                // nothing while flows are pending moves some (the general path).
                let due = fl.due;
                if after(due, t) {
                    if self.holds_slot(k, due, t) && !self.wheel.has_pending() {
                        self.refresh(t);
                        return PacerNext::None;
                    }
                } else if fl.backlog != 0 && fl.flags & (WINDOW | HYBRID) == 0 {
                    let bytes = fl.seg_bytes().min(fl.backlog);
                    let t_send = self.t_send(due);
                    if !after(t_send, t) {
                        return self.send(k, f, t_send, bytes, None, out);
                    }
                    if !self.wheel.has_pending() {
                        return PacerNext::None; // the line is busy
                    }
                }
            }
        }
        self.next_general(now, out)
    }

    /// The one send path: `bytes` of flow `f`, the head of slot `k`, leave at `t_send` (written
    /// to `out`). A paced or window flow (`hybrid_due: None`) is next due `gap(bytes)` later at
    /// its current rate; a hybrid burst gives its next due time. Pops `f`, occupies the line for
    /// `gap(bytes, line)` and re-files `f`.
    #[inline(always)]
    fn send(
        &mut self,
        k: usize,
        f: u16,
        t_send: u32,
        bytes: u32,
        hybrid_due: Option<u32>,
        out: &mut Segment,
    ) -> PacerNext {
        let mut due = t_send;
        if let Some(fl) = self.flows.get_mut(usize::from(f)) {
            due = match hybrid_due {
                None => fl.pace(t_send, bytes),
                Some(d) => d,
            };
            fl.due = due;
            fl.backlog = fl.backlog.wrapping_sub(bytes); // bytes ≤ backlog
            fl.flags &= !FRESH;
        }
        // The segment first: then nothing of it stays live while `f` is filed.
        *out = Segment {
            flow: FlowId::from_index(f),
            bytes,
            t_send: Instant::from_raw(t_send),
        };
        self.wheel.l0_pop(self.flows.as_slice(), k, f);
        self.line_free = t_send.wrapping_add(gap(bytes, self.line_tpb));
        self.insert(f, due);
        PacerNext::Send
    }

    /// [`next`](Self::next) in general: moving pending flows, turning a page, the lazy update,
    /// idle flows, windows, hybrid bursts, heads that are not due.
    #[inline(never)]
    fn next_general(&mut self, now: Instant, out: &mut Segment) -> PacerNext {
        let now = now.raw();
        self.move_pending(MOVES_PER_CALL);
        loop {
            let Some(k) = self.wheel.l0_first(self.page) else {
                if self.advance(now) {
                    continue;
                }
                self.refresh(now);
                return PacerNext::None;
            };
            let f = self.wheel.l0_head(k);
            let i = usize::from(f);
            let Some(fl) = self.flows.get(i).copied() else {
                // Not an index this API files; drop it rather than loop.
                self.wheel.l0_pop(self.flows.as_slice(), k, f);
                continue;
            };
            let (due, start) = self.lazy_due(i, &fl);
            if after(due, now) {
                if self.holds_slot(k, due, now) {
                    self.refresh(now);
                    return PacerNext::None;
                }
                self.refile(k, f, due, start);
                continue;
            }
            if fl.backlog == 0 {
                // Its pacing memory has expired: it leaves the wheel.
                self.drop_head(k, f);
                continue;
            }
            let t_send = self.t_send(due);
            if fl.flags & (WINDOW | HYBRID) == 0 {
                if after(t_send, now) {
                    return PacerNext::None;
                }
                let bytes = fl.seg_bytes().min(fl.backlog);
                return self.send(k, f, t_send, bytes, None, out);
            }
            match self.send_ext(k, f, fl, t_send, now, out) {
                ExtSend::Sent => return PacerNext::Send,
                ExtSend::WindowClosed => continue,
                ExtSend::LineBusy => return PacerNext::None,
            }
        }
    }

    /// Re-files the head `f` of slot `k` at its lazily moved due time `due` (a hybrid flow
    /// between segments: its next segment's earliest start `start`): the lazy update becomes
    /// the schedule, at the current rate.
    #[inline(never)]
    fn refile(&mut self, k: usize, f: u16, due: u32, start: u32) {
        self.wheel.l0_pop(self.flows.as_slice(), k, f);
        let i = usize::from(f);
        let Some(fl) = self.flows.get_mut(i) else {
            return;
        };
        fl.due = due;
        let between_segments = match self.ext.get_mut(i) {
            Some(x) if fl.flags & HYBRID != 0 => {
                if x.b == 0 {
                    x.a = start;
                }
                x.b == 0
            }
            _ => true,
        };
        if between_segments {
            fl.tpb_sched = fl.tpb;
        }
        self.insert(f, due);
    }

    /// Takes `f` out of the wheel (from the head of slot `k`).
    fn drop_head(&mut self, k: usize, f: u16) {
        self.wheel.l0_pop(self.flows.as_slice(), k, f);
        if let Some(s) = self.flows.get_mut(usize::from(f)) {
            s.flags &= !(IN_WHEEL | FRESH);
        }
    }

    /// A due window or hybrid flow `fl` with data at the head of slot `k`, leaving at `t_send`:
    /// its segment or burst, into `out`.
    #[inline(never)]
    #[allow(clippy::cast_possible_truncation)] // segment and burst sizes ≤ 65 536
    fn send_ext(
        &mut self,
        k: usize,
        f: u16,
        fl: Flow,
        t_send: u32,
        now: u32,
        out: &mut Segment,
    ) -> ExtSend {
        let i = usize::from(f);
        let Some(mut x) = self.ext.get(i).copied() else {
            // Not a flow `add_flow` makes (window and hybrid flows have their extension).
            self.drop_head(k, f);
            return ExtSend::WindowClosed;
        };
        if fl.flags & WINDOW != 0 {
            let room = x.a.saturating_sub(x.b);
            if room == 0 {
                // Window closed: wait outside the wheel for an ACK.
                self.drop_head(k, f);
                return ExtSend::WindowClosed;
            }
            if after(t_send, now) {
                return ExtSend::LineBusy;
            }
            let bytes = fl.seg_bytes().min(fl.backlog).min(room);
            x.b = x.b.saturating_add(bytes);
            if let Some(e) = self.ext.get_mut(i) {
                *e = x;
            }
            self.send(k, f, t_send, bytes, None, out);
            return ExtSend::Sent;
        }
        // Hybrid: a segment as bursts at the hardware rate.
        if after(t_send, now) {
            return ExtSend::LineBusy;
        }
        if x.b == 0 {
            // A new segment: it starts now, and the next one `gap(segment)` later.
            let seg = fl.seg_bytes().min(fl.backlog);
            if let Some(s) = self.flows.get_mut(i) {
                x.a = s.pace(t_send, seg);
            }
            x.b = seg;
        }
        let bytes = self.burst_bytes.min(x.b);
        x.b = x.b.wrapping_sub(bytes);
        let drained = t_send.wrapping_add(gap(bytes, self.hw_tpb));
        let due = if x.b == 0 && after(x.a, drained) {
            x.a
        } else {
            drained
        };
        if let Some(e) = self.ext.get_mut(i) {
            *e = x;
        }
        self.send(k, f, t_send, bytes, Some(due), out);
        ExtSend::Sent
    }

    /// No segment leaves before this instant (`None`: nothing is scheduled). Calling
    /// [`next`](Self::next) then may still return `None` (an idle flow's pacing memory expired,
    /// flows filed ahead were moved into the wheel's first level): ask again. While flows filed
    /// ahead are being moved (a few per call of `next`) it is the current page's start, at or
    /// before `now`: call again now; with nothing in the current and the next page it is the
    /// start of the page before the first page filed ahead, so that page's flows are moved
    /// during the page before their own.
    #[must_use]
    pub fn earliest(&self) -> Option<Instant> {
        if self.wheel.has_pending() {
            // Flows to move: call again now (the current page has started).
            return Some(Instant::from_raw(self.page << PAGE_SHIFT));
        }
        let next = self.page.wrapping_add(1);
        let first = |page: u32| self.wheel.l0_first(page).map(|k| (page, k));
        let lower = if let Some((page, k)) = first(self.page).or_else(|| first(next)) {
            #[allow(clippy::cast_possible_truncation)] // k < 2048
            let slot = ((page << 10) | k as u32) & 0x3F_FFFF;
            let start = slot << wheel::SLOT_SHIFT;
            let f = usize::from(self.wheel.l0_head(k));
            let due = self.flows.get(f).map_or(start, |fl| self.lazy_due(f, fl).0);
            if due >> wheel::SLOT_SHIFT == slot {
                due
            } else {
                start
            }
        } else {
            // The page before the first page filed in level 1: its flows are moved into level 0
            // during that page, a few per call.
            let j = self
                .wheel
                .l1_first_from((self.page as usize).wrapping_add(2))?;
            #[allow(clippy::cast_possible_truncation)] // j < 2048
            let dist = ((j as u32).wrapping_sub(self.page) & L1_MASK32).max(2);
            (self.page.wrapping_add(dist).wrapping_sub(1) & PAGE_MASK) << PAGE_SHIFT
        };
        let lower = Instant::from_raw(lower);
        Some(lower.max(Instant::from_raw(self.line_free)))
    }

    /// When the line is free again.
    #[must_use]
    pub fn line_free(&self) -> Instant {
        Instant::from_raw(self.line_free)
    }
}

#[cfg(test)]
mod tests;

// The README (what crates.io shows) runs its example as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
