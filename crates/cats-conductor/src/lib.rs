//! CATS conductor: five-queue priority scheduler with debt-based hysteresis, `no_std`.
//!
//! The application tags messages with a priority P0 (highest) … P4 and hands them to the
//! conductor as *descriptors* (an opaque handle plus a length: the firmware keeps the payload
//! wherever it likes). Each call of [`Conductor::next_chunk`] makes one scheduling decision and
//! names one MSS-sized piece of one message for the transport, following the CATS paper
//! ("A Case for CATS", the Conductor and its hysteresis debt scheme) with the conventions pinned
//! in the project's issue 4:
//!
//! * pick the highest-priority queue that is non-empty and Eligible;
//! * after sending `N` bytes from queue `j`: if `j < 4`, `D_j += N`, and `D_j ≥ H_j` makes it
//!   In-Debt (P4 has no watermarks and never accrues debt);
//! * payback: for every `i < j` with `D_i > 0`, `D_i = max(0, D_i − trunc(N·M_j))`, and an In-Debt
//!   queue becomes Eligible when `D_i < L_i` (strict) — whether or not queue `i` is empty;
//! * deadlock (data queued, no non-empty queue Eligible): every non-empty `p < 4` with `D_p > 0`
//!   gets `D_p = min(trunc(D_p·M_p/M_total), L_p − 1)` (Eq. 2) and becomes Eligible; then pick
//!   again.
//!
//! Cost per decision does not depend on queue depth: non-empty and In-Debt queues are bitmasks,
//! the pick is a lowest-set-bit, only the head descriptor of one queue is touched, and the payback
//! loop visits only the queues that owe debt. No division, no float, no panic path (the riscv32
//! probe proves the last by linking). See `docs/cats.md` for the full semantics, number formats,
//! the starvation bound and the state size.
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

pub use config::{Config, ConfigError, Multiplier};
use heapless::Deque;

/// A priority: P0 is the highest, P4 the lowest (bulk; no watermarks, never in debt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum Prio {
    /// Highest priority.
    P0 = 0,
    /// Second.
    P1 = 1,
    /// Third.
    P2 = 2,
    /// Fourth.
    P3 = 3,
    /// Lowest (bulk): never accrues debt.
    P4 = 4,
}

impl Prio {
    /// All priorities, highest first.
    pub const ALL: [Prio; 5] = [Prio::P0, Prio::P1, Prio::P2, Prio::P3, Prio::P4];

    /// `0 ..= 4`.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The priority with this index, if `i ≤ 4`.
    pub const fn from_index(i: usize) -> Option<Prio> {
        match i {
            0 => Some(Prio::P0),
            1 => Some(Prio::P1),
            2 => Some(Prio::P2),
            3 => Some(Prio::P3),
            4 => Some(Prio::P4),
            _ => None,
        }
    }

    /// Index into the watermark/debt arrays (`None` for P4).
    pub const fn watermark_index(self) -> Option<usize> {
        match self {
            Prio::P4 => None,
            p => Some(p as usize),
        }
    }
}

/// A message handed to the conductor: an opaque handle (buffer index, pointer bits, …) and its
/// length. The conductor never looks at the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Descriptor {
    /// Opaque to the conductor; returned in every [`Chunk`] of this message.
    pub handle: u32,
    /// Message length, bytes (> 0).
    pub len_bytes: u32,
}

/// Why [`Conductor::enqueue`] refused a descriptor. Nothing is dropped silently: the caller gets
/// the descriptor back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum EnqueueError {
    /// A zero-length message would never produce a chunk and would wedge its queue.
    ZeroLength(Descriptor),
    /// The priority's queue holds its capacity `N` already.
    QueueFull(Descriptor),
}

/// One piece of one message for the transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Chunk {
    /// The queue it came from.
    pub prio: Prio,
    /// The message's handle.
    pub handle: u32,
    /// Offset of the chunk within the message, bytes.
    pub offset_bytes: u32,
    /// Chunk length: `min(mss, bytes left in the message)`, bytes (> 0).
    pub len_bytes: u32,
    /// This chunk finishes the message (its descriptor has left the queue).
    pub last: bool,
}

/// The result of one scheduling decision, with the branch taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Decision {
    /// No queue holds data.
    Empty,
    /// The chosen chunk (`prio`, `len_bytes`) does not fit in the free send-buffer space. Nothing
    /// was sent. The debts are unchanged unless choosing needed the deadlock rule and
    /// `space_bytes > 0`: then, as in the authors' released conductor, the resolution is kept
    /// (`deadlock_resolved`) and the chosen queue stays Eligible for the next decision. With
    /// `space_bytes == 0` nothing at all changes (the released conductor does not choose when
    /// the buffer is full); `prio`/`len_bytes` then name the chunk the rule would lead to.
    NoSpace {
        /// The queue that was chosen.
        prio: Prio,
        /// The chunk length that did not fit.
        len_bytes: u32,
        /// The deadlock rule ran and its result was kept (only when `space_bytes > 0`).
        deadlock_resolved: bool,
    },
    /// Feed this chunk to the transport; the debts have been updated.
    Send {
        /// What to send.
        chunk: Chunk,
        /// The deadlock rule ran before the pick.
        deadlock_resolved: bool,
    },
}

impl Decision {
    /// The chunk to send, if any.
    pub const fn chunk(&self) -> Option<Chunk> {
        match self {
            Decision::Send { chunk, .. } => Some(*chunk),
            _ => None,
        }
    }

    /// Whether the deadlock rule ran in this decision.
    pub const fn deadlock_resolved(&self) -> bool {
        match self {
            Decision::Send {
                deadlock_resolved, ..
            }
            | Decision::NoSpace {
                deadlock_resolved, ..
            } => *deadlock_resolved,
            Decision::Empty => false,
        }
    }
}

/// The hysteresis state of one connection: the debts `D_0..D_3` and which queues are In-Debt.
///
/// `size_of::<State>() == 20` (four `u32` debts, two `u8` masks, padding), asserted in a test.
/// Debts are bytes in `u32`; in normal operation `D_p < H_p + MSS ≤ 2^24 + 2^16`, so no debt can
/// overflow; the additions saturate anyway so that a state seeded from arbitrary raw parts cannot
/// wrap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct State {
    debt_bytes: [u32; 4],
    /// Bit `p` (p < 4) set when queue `p` is In-Debt.
    in_debt: u8,
    /// Bit `p` set when `D_p > 0` (derived from `debt_bytes`; lets payback skip debt-free queues).
    owing: u8,
}

impl State {
    /// All debts zero, every queue Eligible (the start of a connection).
    pub const fn new() -> Self {
        Self {
            debt_bytes: [0; 4],
            in_debt: 0,
            owing: 0,
        }
    }

    /// A state from its raw parts: the debts `D_0..D_3` in bytes and the In-Debt flags as a mask
    /// (bit `p` for queue `p`; bits 4..7 are ignored). Used by the host's forced mode.
    ///
    /// An In-Debt flag on a queue whose debt is 0 is dropped: in operation In-Debt implies
    /// `D ≥ L > 0`, and such a flag could never be cleared (payback and the deadlock rule only
    /// touch queues with `D > 0`), so the queue would stall for good.
    pub const fn from_raw(debt_bytes: [u32; 4], in_debt_mask: u8) -> Self {
        let mut owing = 0u8;
        let mut p: usize = 0;
        while p < 4 {
            #[allow(clippy::indexing_slicing)] // p < 4 = len
            if debt_bytes[p] > 0 {
                owing |= 1 << p;
            }
            p = p.wrapping_add(1); // p ≤ 4
        }
        Self {
            debt_bytes,
            in_debt: in_debt_mask & owing,
            owing,
        }
    }

    /// The debts `D_0..D_3`, bytes.
    pub const fn debt_bytes(&self) -> [u32; 4] {
        self.debt_bytes
    }

    /// The In-Debt mask (bit `p` for queue `p`).
    pub const fn in_debt_mask(&self) -> u8 {
        self.in_debt
    }

    /// `D_p` (0 for P4).
    pub const fn debt_of(&self, p: Prio) -> u32 {
        match p.watermark_index() {
            #[allow(clippy::indexing_slicing)] // watermark_index < 4
            Some(i) => self.debt_bytes[i],
            None => 0,
        }
    }

    /// Whether queue `p` is In-Debt (never for P4).
    pub const fn is_in_debt(&self, p: Prio) -> bool {
        self.in_debt & (1 << p as u8) != 0
    }
}

/// One connection's conductor: five queues of up to `N` descriptors each, the offset already sent
/// of each queue's head message, and the hysteresis [`State`].
///
/// Size on a 32-bit target: `5·(8·N + 12) + 5·4 + 20 + 1`, rounded up to 4 — a heapless `Deque`
/// of 8-byte descriptors is `8·N` plus two `usize` indices and a flag; for `N = 16` that is 744
/// bytes (asserted at compile time in the riscv32 probe; the host's 64-bit layout, 808 bytes, in a
/// test). The [`Config`] is not part of it: one config serves every connection.
#[derive(Debug, Clone)]
pub struct Conductor<const N: usize> {
    queues: [Deque<Descriptor, N>; 5],
    /// Bytes of each queue's head message already fed.
    head_sent_bytes: [u32; 5],
    state: State,
    /// Bit `p` set when queue `p` holds at least one descriptor.
    nonempty: u8,
}

impl<const N: usize> Default for Conductor<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Conductor<N> {
    /// Empty queues, zero debts.
    pub const fn new() -> Self {
        Self {
            queues: [
                Deque::new(),
                Deque::new(),
                Deque::new(),
                Deque::new(),
                Deque::new(),
            ],
            head_sent_bytes: [0; 5],
            state: State::new(),
            nonempty: 0,
        }
    }

    /// The hysteresis state.
    pub const fn state(&self) -> State {
        self.state
    }

    /// Replaces the hysteresis state (forced replay, or restoring a saved connection).
    pub fn set_state(&mut self, state: State) {
        self.state = state;
    }

    /// Bit `p` set when queue `p` holds data.
    pub const fn nonempty_mask(&self) -> u8 {
        self.nonempty
    }

    /// Messages waiting in queue `p` (including a partly sent head).
    pub fn queued_messages(&self, p: Prio) -> usize {
        self.queues.get(p.index()).map_or(0, Deque::len)
    }

    /// Appends a message to queue `prio`. Makes no scheduling decision: call
    /// [`next_chunk`](Self::next_chunk) afterwards (CATS's Interceptor calls the Conductor after
    /// every `Send`).
    pub fn enqueue(&mut self, prio: Prio, desc: Descriptor) -> Result<(), EnqueueError> {
        if desc.len_bytes == 0 {
            return Err(EnqueueError::ZeroLength(desc));
        }
        let Some(q) = self.queues.get_mut(prio.index()) else {
            return Err(EnqueueError::QueueFull(desc));
        };
        q.push_back(desc).map_err(EnqueueError::QueueFull)?;
        self.nonempty |= 1 << prio as u8;
        Ok(())
    }

    /// One scheduling decision (CATS Conductor/Feeder: "selects the single highest-priority
    /// eligible data chunk" and feeds one MSS-sized piece of it).
    ///
    /// `space_bytes` is the transport's free send-buffer space. Returns [`Decision::Empty`] when
    /// no queue holds data, [`Decision::NoSpace`] when the chosen chunk is longer than
    /// `space_bytes` (nothing sent; debts unchanged except for a kept deadlock resolution, see
    /// there), else [`Decision::Send`] after updating the debts.
    #[inline(always)] // small once the deadlock path is out of line; callers branch on the result
    pub fn next_chunk(&mut self, cfg: &Config, space_bytes: u32) -> Decision {
        let nonempty = self.nonempty & 0x1F;
        if nonempty == 0 {
            return Decision::Empty;
        }
        // Pick the highest-priority queue that is non-empty and Eligible (lowest set bit; P4's
        // bit is never In-Debt).
        let eligible = nonempty & !self.state.in_debt;
        if eligible == 0 {
            // Deadlock: data queued, but every non-empty queue is In-Debt (so P4 is empty).
            // Rare, so out of line: the common path then needs no callee-saved registers.
            return self.next_chunk_deadlock(cfg, space_bytes, nonempty);
        }
        self.feed(cfg, space_bytes, lowest_bit(eligible), false)
    }

    /// [`next_chunk`](Self::next_chunk) when no non-empty queue is Eligible.
    #[cold]
    #[inline(never)]
    fn next_chunk_deadlock(&mut self, cfg: &Config, space_bytes: u32, nonempty: u8) -> Decision {
        // CATS Eq. 2, for each non-empty p < 4 with D_p > 0:
        //   D_p = min(trunc(D_p · M_p / M_total), L_p − 1), Eligible when D_p < L_p.
        // As the authors' released conductor (tcp-cats.cc): with no free space at all the
        // decision stops before choosing, so nothing changes (we still name the chunk it would
        // choose); with some space the resolution is kept even if the chosen chunk then does
        // not fit. After it the chosen queue is Eligible, so it never runs twice in a row.
        let mut next = self.state;
        resolve_deadlock(&mut next, cfg, nonempty);
        let eligible = nonempty & !next.in_debt;
        if eligible == 0 {
            // Unreachable: In-Debt implies D > 0 (`State::from_raw` keeps that invariant), and
            // Eq. 2's clamp leaves every non-empty queue with D_p ≤ L_p − 1 < L_p.
            return Decision::Empty;
        }
        let keep = space_bytes > 0;
        if keep {
            self.state = next;
        }
        self.feed(cfg, space_bytes, lowest_bit(eligible), keep)
    }

    /// Feeds one chunk of queue `j` (non-empty and Eligible; `deadlock_resolved`: the deadlock
    /// rule ran in this decision and its result is kept).
    #[inline(always)]
    fn feed(
        &mut self,
        cfg: &Config,
        space_bytes: u32,
        j: usize,
        deadlock_resolved: bool,
    ) -> Decision {
        let mss = cfg.mss_bytes();
        let Some(q) = self.queues.get_mut(j) else {
            return Decision::Empty; // j ≤ 4: eligible ≠ 0
        };
        let Some(head) = q.front().copied() else {
            return Decision::Empty; // the non-empty mask and the queue never disagree
        };
        let sent = self.head_sent_bytes.get(j).copied().unwrap_or(0);
        // Chunk = min(mss, bytes left in the head message): a chunk never spans two messages.
        // Wrapping is exact: `sent < len` always (a finished message leaves the queue and
        // resets its offset to 0; `head_sent_bytes` is private). Saves the saturation's 3
        // instructions per decision.
        let left = head.len_bytes.wrapping_sub(sent);
        let n = if left < mss { left } else { mss };
        let prio = Prio::from_index(j).unwrap_or(Prio::P4);
        if n > space_bytes {
            return Decision::NoSpace {
                prio,
                len_bytes: n,
                deadlock_resolved,
            };
        }
        // Advance within the message; pop it when finished. Wrapping is exact: `sent + n ≤ len`
        // (n ≤ left = len − sent).
        let new_sent = sent.wrapping_add(n);
        let last = new_sent >= head.len_bytes;
        if let Some(s) = self.head_sent_bytes.get_mut(j) {
            *s = if last { 0 } else { new_sent };
        }
        if last {
            let _ = q.pop_front();
            if q.is_empty() {
                self.nonempty &= !(1u8 << j);
            }
        }
        account(&mut self.state, cfg, j, n);
        Decision::Send {
            chunk: Chunk {
                prio,
                handle: head.handle,
                offset_bytes: sent,
                len_bytes: n,
                last,
            },
            deadlock_resolved,
        }
    }
}

/// Index of the lowest set bit of a 5-bit mask (8 for 0), by table: rv32imac has no `ctz`
/// instruction and the generic bit trick costs ~13 instructions; this is one load.
const LOWEST_BIT: [u8; 32] = {
    let mut t = [8u8; 32];
    let mut m: usize = 1;
    while m < 32 {
        #[allow(clippy::indexing_slicing, clippy::cast_possible_truncation)] // m < 32; tz ≤ 4
        {
            t[m] = m.trailing_zeros() as u8;
        }
        m = m.wrapping_add(1);
    }
    t
};

#[inline(always)]
fn lowest_bit(mask: u8) -> usize {
    usize::from(
        LOWEST_BIT
            .get(usize::from(mask & 0x1F))
            .copied()
            .unwrap_or(8),
    )
}

/// The state update after sending `n` bytes from queue `j`.
#[inline(always)]
fn account(st: &mut State, cfg: &Config, j: usize, n: u32) {
    // CATS "State Update": D_j(t+1) = D_j(t) + N; D_j ≥ H_j ⇒ In-Debt. P4 (j = 4) has no
    // watermarks and never accrues debt. Saturating: cannot be reached (D < H + MSS ≤ 2^25),
    // but a state seeded from raw parts must not wrap.
    if let Some(d) = st.debt_bytes.get_mut(j) {
        *d = d.saturating_add(n);
        st.owing |= 1 << j;
        if *d >= cfg.high(j) {
            st.in_debt |= 1 << j;
        }
    }
    // Payback: for all i < j with D_i > 0: D_i(t+1) = max(0, D_i(t) − trunc(N × M_j)); an
    // In-Debt queue becomes Eligible when D_i < L_i (strict). Empty queues are paid too.
    let owing_above = st.owing & (1u8 << j).wrapping_sub(1) & 0x0F;
    if owing_above != 0 {
        payback(st, cfg, j, n, owing_above);
    }
}

/// Payback of the queues in `owing_above` (all `i < j` with `D_i > 0`) after `n` bytes from `j`.
#[inline(always)]
fn payback(st: &mut State, cfg: &Config, j: usize, n: u32, owing_above: u8) {
    let pay = cfg.payback(j, n);
    // A fixed 4-step loop the compiler unrolls: constant indices and offsets, no bit scan, and
    // few live registers (a data-dependent loop needed callee-saved registers in every call).
    for i in 0..4 {
        if owing_above & (1u8 << i) == 0 {
            continue;
        }
        if let Some(d) = st.debt_bytes.get_mut(i) {
            *d = d.saturating_sub(pay); // max(0, ·)
            if *d == 0 {
                st.owing &= !(1u8 << i);
            }
            if *d < cfg.low(i) {
                st.in_debt &= !(1u8 << i);
            }
        }
    }
}

/// CATS Eq. 2 for every non-empty queue `p < 4` with `D_p > 0`.
fn resolve_deadlock(st: &mut State, cfg: &Config, nonempty: u8) {
    let mut todo = nonempty & st.owing & 0x0F;
    while todo != 0 {
        let p = lowest_bit(todo);
        todo &= todo.wrapping_sub(1);
        let low = cfg.low(p);
        if let Some(d) = st.debt_bytes.get_mut(p) {
            // D_p = min(trunc(D_p·M_p/M_total), L_p − 1)   (L_p ≥ 1 by Config::new)
            let scaled = cfg.scale_down(p, *d);
            let cap = low.saturating_sub(1);
            *d = if scaled < cap { scaled } else { cap };
            if *d == 0 {
                st.owing &= !(1u8 << p);
            }
            // Eligible when D_p < L_p (always true after the clamp).
            if *d < low {
                st.in_debt &= !(1u8 << p);
            }
        }
    }
}
