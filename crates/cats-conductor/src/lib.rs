//! CATS conductor: five-queue priority scheduler with debt-based hysteresis, `no_std`.
//!
//! The application tags messages with a priority P0 (highest) … P4 and hands them to the
//! conductor as *descriptors* (an opaque handle plus a length: the firmware keeps the payload
//! wherever it likes). Each call of [`Conductor::next_chunk`] makes one scheduling decision and
//! names one MSS-sized piece of one message for the transport, following the CATS paper
//! ("A Case for CATS", the Conductor and its hysteresis debt scheme) with the conventions pinned
//! in docs/cats.md § "Semantics":
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

use heapless::Deque;

pub use config::{Config, ConfigError, MAX_MULTIPLIER, Multiplier, multiplier_from_ratio};

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
    ///
    /// cbindgen:ignore
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

/// The branch one decision took, as [`Conductor::next_chunk_into`] returns it.
///
/// The one definition of these codes: the discriminants are the C ABI's values (cc-ffi returns
/// this type as it is; cbindgen writes it into the header as `CcCatsDecision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u32)]
pub enum DecisionCode {
    /// No queue holds data; the record is untouched.
    Empty = 0,
    /// The record is the chunk to feed the transport; the debts have been updated.
    Send = 1,
    /// The chosen chunk (the record's `prio`, `len_bytes`) is longer than `space_bytes`:
    /// nothing was sent (`handle`, `offset_bytes` and `last` are 0). The debts are unchanged
    /// unless `deadlock_resolved` is 1: with `space_bytes > 0` a deadlock resolution is kept, as
    /// in the authors' released conductor (docs/cats.md, [`Decision::NoSpace`]).
    NoSpace = 2,
}

/// One decision as plain integers, in C layout: what [`Conductor::next_chunk_into`] writes.
/// It is the C ABI's `CcCatsChunk` (cc-ffi exports this type under that name and hands its
/// caller's record over as it is); [`Decision`] says the same in Rust types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(C)]
pub struct ChunkRecord {
    /// The queue chosen, 0 (highest) ..= 4.
    pub prio: u32,
    /// The message's handle, as given to `enqueue` (`cc_cats_enqueue`).
    pub handle: u32,
    /// Offset of the chunk within its message, bytes.
    pub offset_bytes: u32,
    /// Chunk length, bytes: `min(mss, bytes left in the message)`.
    pub len_bytes: u32,
    /// 1 when this chunk finishes its message (the descriptor has left the queue), else 0.
    pub last: u8,
    /// 1 when the deadlock rule (CATS Eq. 2) ran in this decision and its result was kept (on
    /// `Send`, and on `NoSpace` when `space_bytes > 0`).
    pub deadlock_resolved: u8,
}

/// The hysteresis state of one connection: the debts `D_0..D_3` and which queues are In-Debt.
///
/// `size_of::<State>() == 20` (four `u32` debts, two `u8` masks, padding), asserted in a test.
/// Debts are bytes in `u32`. In operation `D_p < H_p + MSS ≤ 2^24 + 2^16`. A state seeded from
/// raw parts has its debts capped at [`State::MAX_DEBT_BYTES`] (2^31), which keeps every debt
/// below `2^31 + 2^16` for good: a queue only sends while Eligible, an Eligible queue's debt
/// stays at most 2^31 (it grows only by sending, and a send that reaches `H_p ≤ 2^24` makes it
/// In-Debt), one chunk adds at most 65 535, and an In-Debt queue's debt only falls. So the
/// per-chunk debt addition cannot wrap and needs no saturation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct State {
    debt_bytes: [u32; 4],
    /// The complement of the In-Debt mask: bit `p` clear when queue `p` (p < 4) is In-Debt, every
    /// other bit set, so that a decision's Eligible non-empty queues are one `and` with the
    /// non-empty mask. Invariant: a bit is clear only for `D_p > 0`.
    eligible: u8,
    /// Bit `p` set when `D_p > 0` (derived from `debt_bytes`; lets payback skip debt-free queues).
    owing: u8,
}

impl Default for State {
    fn default() -> Self {
        Self::new()
    }
}

impl State {
    /// Largest debt [`from_raw_parts`](Self::from_raw_parts) keeps (larger values are capped to it): 2^31
    /// bytes, far above any watermark (`H ≤ 2^24`).
    ///
    /// cbindgen:ignore
    pub const MAX_DEBT_BYTES: u32 = 1 << 31;

    /// All debts zero, every queue Eligible (the start of a connection).
    pub const fn new() -> Self {
        Self {
            debt_bytes: [0; 4],
            eligible: u8::MAX,
            owing: 0,
        }
    }

    /// A state from its raw parts: the debts `D_0..D_3` in bytes and the In-Debt flags as a mask
    /// (bit `p` for queue `p`; bits 4..7 are ignored). Used by the host's forced mode.
    ///
    /// Debts above [`MAX_DEBT_BYTES`](Self::MAX_DEBT_BYTES) are capped to it (no reachable state
    /// has one; the cap is what lets the per-chunk debt addition skip saturation). An In-Debt
    /// flag on a queue whose debt is 0 is dropped: in operation In-Debt implies `D ≥ L > 0`, and
    /// such a flag could never be cleared (payback and the deadlock rule only touch queues with
    /// `D > 0`), so the queue would stall for good.
    pub const fn from_raw_parts(debt_bytes: [u32; 4], in_debt_mask: u8) -> Self {
        let mut debts = debt_bytes;
        let mut owing = 0u8;
        let mut p: usize = 0;
        while p < 4 {
            #[allow(clippy::indexing_slicing)] // p < 4 = len
            {
                if debts[p] > Self::MAX_DEBT_BYTES {
                    debts[p] = Self::MAX_DEBT_BYTES;
                }
                if debts[p] > 0 {
                    owing |= 1 << p;
                }
            }
            p = p.wrapping_add(1); // p ≤ 4
        }
        Self {
            debt_bytes: debts,
            eligible: !(in_debt_mask & owing),
            owing,
        }
    }

    /// The debts `D_0..D_3`, bytes.
    pub const fn debt_bytes(&self) -> [u32; 4] {
        self.debt_bytes
    }

    /// The In-Debt mask (bit `p` for queue `p`).
    pub const fn in_debt_mask(&self) -> u8 {
        !self.eligible
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
        self.eligible & (1 << p as u8) == 0
    }
}

/// One connection's conductor: five FIFO queues of up to `N` descriptors each (`N ≥ 1`, checked
/// at compile time), and the hysteresis [`State`].
///
/// Layout, chosen for the per-decision cost (docs/cats.md § "Cost per decision"): each queue is
/// a [`heapless::Deque`] of `N` descriptors; the head message of each queue is also cached —
/// handle, length and bytes already fed — in three `[u32; 5]` arrays indexed by the priority, so
/// a decision that does not finish a message touches only `4·j`-offset words and never the
/// deque (only a finished message pops it and reads the next head). A `Deque<Descriptor, N>` is
/// `8·N` bytes of slots plus two `usize` indices and a `full` flag, so the size depends on the
/// pointer width: `5·(8·N + 9 → align 4) + 60 + 20 + 1 → align 4` on 32-bit targets (`N = 16`:
/// 784 bytes) and `5·(8·N + 17 → align 8) + 60 + 20 + 1 → align 8` on 64-bit hosts (`N = 16`:
/// 848 bytes); asserted in the crate's tests and at compile time in the riscv32 probe. The
/// [`Config`] is not part of it: one config serves every connection.
#[derive(Debug, Clone)]
pub struct Conductor<const N: usize> {
    /// Handle of each queue's head message (valid while the queue is non-empty).
    head_handle: [u32; 5],
    /// Length of each queue's head message, bytes (valid while the queue is non-empty).
    head_len: [u32; 5],
    /// Bytes of each queue's head message already fed (`< head_len`; valid while non-empty).
    head_sent: [u32; 5],
    state: State,
    /// Bit `p` set when queue `p` holds at least one descriptor; bits 5..7 are 0.
    nonempty: u8,
    /// The queues; the front of each (head included, a copy of the cache above).
    queues: [Deque<Descriptor, N>; 5],
}

impl<const N: usize> Default for Conductor<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Conductor<N> {
    /// A queue must hold at least one descriptor (`heapless::Deque` checks the same).
    const CAPACITY_OK: () = assert!(N >= 1, "N ≥ 1");

    /// Empty queues, zero debts.
    pub const fn new() -> Self {
        let () = Self::CAPACITY_OK;
        Self {
            head_handle: [0; 5],
            head_len: [0; 5],
            head_sent: [0; 5],
            state: State::new(),
            nonempty: 0,
            queues: [const { Deque::new() }; 5],
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
        let p = prio.index();
        if desc.len_bytes == 0 {
            return Err(EnqueueError::ZeroLength(desc));
        }
        let Some(q) = self.queues.get_mut(p) else {
            return Err(EnqueueError::QueueFull(desc)); // p ≤ 4: unreachable
        };
        q.push_back(desc).map_err(EnqueueError::QueueFull)?;
        let bit = 1u8 << p;
        if self.nonempty & bit == 0 {
            // The queue was empty: the new message is its head.
            self.set_head(p, desc);
            self.nonempty |= bit;
        }
        Ok(())
    }

    /// Caches `desc` as queue `p`'s head message, nothing of it sent yet.
    #[inline(always)]
    fn set_head(&mut self, p: usize, desc: Descriptor) {
        if let (Some(h), Some(l), Some(s)) = (
            self.head_handle.get_mut(p),
            self.head_len.get_mut(p),
            self.head_sent.get_mut(p),
        ) {
            *h = desc.handle;
            *l = desc.len_bytes;
            *s = 0;
        }
    }

    /// One scheduling decision (CATS Conductor/Feeder: "selects the single highest-priority
    /// eligible data chunk" and feeds one MSS-sized piece of it).
    ///
    /// `space_bytes` is the transport's free send-buffer space. Returns [`Decision::Empty`] when
    /// no queue holds data, [`Decision::NoSpace`] when the chosen chunk is longer than
    /// `space_bytes` (nothing sent; debts unchanged except for a kept deadlock resolution, see
    /// there), else [`Decision::Send`] after updating the debts. The decision is
    /// [`next_chunk_into`](Self::next_chunk_into)'s, read back into Rust types.
    #[inline]
    pub fn next_chunk(&mut self, cfg: &Config, space_bytes: u32) -> Decision {
        let mut r = ChunkRecord::default();
        let code = self.next_chunk_into(cfg, space_bytes, &mut r);
        #[allow(clippy::cast_possible_truncation)] // prio ≤ 4
        let prio = Prio::from_index(r.prio as usize).unwrap_or(Prio::P4);
        let deadlock_resolved = r.deadlock_resolved != 0;
        match code {
            DecisionCode::Empty => Decision::Empty,
            DecisionCode::NoSpace => Decision::NoSpace {
                prio,
                len_bytes: r.len_bytes,
                deadlock_resolved,
            },
            DecisionCode::Send => Decision::Send {
                chunk: Chunk {
                    prio,
                    handle: r.handle,
                    offset_bytes: r.offset_bytes,
                    len_bytes: r.len_bytes,
                    last: r.last != 0,
                },
                deadlock_resolved,
            },
        }
    }

    /// [`next_chunk`](Self::next_chunk) writing the decision into `out` (caller storage, e.g. a
    /// C caller's record; untouched on [`DecisionCode::Empty`]).
    ///
    /// The chunk is written as soon as it is known, before the debts are updated, so few
    /// values stay live; the deadlock rule is an out-of-line tail call with the same arguments,
    /// so the common path saves no registers.
    #[inline(always)]
    pub fn next_chunk_into(
        &mut self,
        cfg: &Config,
        space_bytes: u32,
        out: &mut ChunkRecord,
    ) -> DecisionCode {
        let nonempty = self.nonempty;
        if nonempty == 0 {
            return DecisionCode::Empty;
        }
        // Pick the highest-priority queue that is non-empty and Eligible (lowest set bit; P4's
        // bit is never In-Debt).
        let eligible = nonempty & self.state.eligible;
        if eligible == 0 {
            // Deadlock: data queued, but every non-empty queue is In-Debt (so P4 is empty).
            return self.next_chunk_deadlock(cfg, space_bytes, out);
        }
        self.feed(cfg, space_bytes, pick(eligible), false, out)
    }

    /// [`next_chunk_into`](Self::next_chunk_into) when no non-empty queue is Eligible.
    #[cold]
    #[inline(never)]
    fn next_chunk_deadlock(
        &mut self,
        cfg: &Config,
        space_bytes: u32,
        out: &mut ChunkRecord,
    ) -> DecisionCode {
        let nonempty = self.nonempty;
        // CATS Eq. 2, for each non-empty p < 4 with D_p > 0:
        //   D_p = min(trunc(D_p · M_p / M_total), L_p − 1), Eligible when D_p < L_p.
        // As the authors' released conductor (tcp-cats.cc): with no free space at all the
        // decision stops before choosing, so nothing changes (we still name the chunk it would
        // choose); with some space the resolution is kept even if the chosen chunk then does
        // not fit. After it the chosen queue is Eligible, so it never runs twice in a row.
        // Eq. 2 leaves every non-empty owing queue p < 4 Eligible (D_p ≤ L_p − 1 < L_p), so
        // the choice is known from the bits alone; the debts are scaled (in place) only when
        // the resolution is kept.
        let resolved = nonempty & self.state.owing & 0x0F;
        let eligible = nonempty & (self.state.eligible | resolved);
        if eligible == 0 {
            // Unreachable: In-Debt implies D > 0 (`State::from_raw_parts` keeps that invariant), so
            // every In-Debt non-empty queue is in `resolved`.
            return DecisionCode::Empty;
        }
        let keep = space_bytes > 0;
        if keep {
            resolve_deadlock(&mut self.state, cfg, resolved);
        }
        self.feed(cfg, space_bytes, pick(eligible), keep, out)
    }

    /// Feeds one chunk of queue `prio` (non-empty and Eligible; `deadlock_resolved`: the
    /// deadlock rule ran in this decision and its result is kept) into `out`.
    #[inline(always)]
    fn feed(
        &mut self,
        cfg: &Config,
        space_bytes: u32,
        prio: Prio,
        deadlock_resolved: bool,
        out: &mut ChunkRecord,
    ) -> DecisionCode {
        let j = prio.index();
        let (Some(&handle), Some(&len), Some(&sent)) = (
            self.head_handle.get(j),
            self.head_len.get(j),
            self.head_sent.get(j),
        ) else {
            return DecisionCode::Empty; // j ≤ 4
        };
        // Chunk = min(mss, bytes left in the head message): a chunk never spans two messages.
        // Wrapping is exact: `sent < len` always (a finished message leaves the queue; the
        // cache is private).
        let left = len.wrapping_sub(sent);
        let mss = cfg.mss_bytes();
        let n = if left < mss { left } else { mss };
        #[allow(clippy::cast_possible_truncation)] // j ≤ 4
        let p = j as u32;
        if n > space_bytes {
            *out = ChunkRecord {
                prio: p,
                handle: 0,
                offset_bytes: 0,
                len_bytes: n,
                last: 0,
                deadlock_resolved: u8::from(deadlock_resolved),
            };
            return DecisionCode::NoSpace;
        }
        let last = left <= mss; // n == left: this chunk finishes the message
        *out = ChunkRecord {
            prio: p,
            handle,
            offset_bytes: sent,
            len_bytes: n,
            last: u8::from(last),
            deadlock_resolved: u8::from(deadlock_resolved),
        };
        let bit = 1u8 << j;
        if last {
            self.pop_head(j, bit);
        } else if let Some(s) = self.head_sent.get_mut(j) {
            // sent + n < len: no wrap.
            *s = sent.wrapping_add(n);
        }
        account(&mut self.state, cfg, j, bit, n);
        DecisionCode::Send
    }

    /// Removes queue `j`'s finished head message and caches the next one, if any.
    #[inline(always)]
    fn pop_head(&mut self, j: usize, bit: u8) {
        let Some(q) = self.queues.get_mut(j) else {
            return; // j ≤ 4
        };
        // The popped descriptor is the cached head, already reported in its chunks.
        let _ = q.pop_front();
        match q.front() {
            Some(&next) => self.set_head(j, next),
            // Emptied: the stale head cache is overwritten by the next enqueue.
            None => self.nonempty &= !bit,
        }
    }
}

/// The queue each mask of Eligible non-empty queues picks: its lowest set bit, as a [`Prio`]
/// (entry 0 is never used; masks hold bits 0..4, the entries above 31 repeat the pattern so the
/// table needs no index mask). rv32imac has no `ctz` instruction and the generic bit trick costs
/// ~13 instructions; this is one load, and its result is already the `Prio` the chunk reports.
const PICK: [Prio; 256] = {
    let mut t = [Prio::P4; 256];
    let mut m: usize = 1;
    while m < 256 {
        #[allow(clippy::indexing_slicing)] // m < 256; m & 31 ≠ 0 gives trailing_zeros ≤ 4
        {
            t[m] = match Prio::from_index((m & 31).trailing_zeros() as usize) {
                Some(p) => p,
                None => Prio::P4,
            };
        }
        m = m.wrapping_add(1);
    }
    t
};

#[inline(always)]
fn pick(mask: u8) -> Prio {
    PICK.get(usize::from(mask)).copied().unwrap_or(Prio::P4)
}

/// The state update after sending `n` bytes from queue `j` (`bit = 1 << j`).
#[inline(always)]
fn account(st: &mut State, cfg: &Config, j: usize, bit: u8, n: u32) {
    // CATS "State Update": D_j(t+1) = D_j(t) + N; D_j ≥ H_j ⇒ In-Debt. P4 (j = 4) has no
    // watermarks and never accrues debt. Wrapping is exact: D_j ≤ 2^31 before (an Eligible
    // queue, see `State`) and N ≤ 65 535.
    if let Some(d) = st.debt_bytes.get_mut(j) {
        let old = *d;
        let nd = old.wrapping_add(n);
        *d = nd;
        // D_j > 0 now (N ≥ 1); its owing bit is already set unless D_j was 0.
        if old == 0 {
            core::hint::cold_path();
            st.owing |= bit;
        }
        if nd >= cfg.high(j) {
            st.eligible &= !bit;
        }
    }
    // Payback: for all i < j with D_i > 0: D_i(t+1) = max(0, D_i(t) − trunc(N × M_j)); an
    // In-Debt queue becomes Eligible when D_i < L_i (strict). Empty queues are paid too.
    // In u32: no zero-extension of the byte masks on rv32.
    let owing_above = u32::from(st.owing) & u32::from(bit).wrapping_sub(1);
    if owing_above != 0 {
        payback(st, cfg, j, n, owing_above);
    }
}

/// Payback of the queues in `owing_above` (all `i < j` with `D_i > 0`) after `n` bytes from `j`.
#[inline(always)]
fn payback(st: &mut State, cfg: &Config, j: usize, n: u32, owing_above: u32) {
    let pay = cfg.payback(j, n);
    // A fixed 4-step loop the compiler unrolls: constant indices and offsets, no bit scan, and
    // few live registers (a data-dependent loop needed callee-saved registers in every call).
    for i in 0..4 {
        if owing_above & (1u32 << i) == 0 {
            continue;
        }
        if let Some(d) = st.debt_bytes.get_mut(i) {
            let nd = d.saturating_sub(pay); // max(0, ·)
            *d = nd;
            if nd == 0 {
                st.owing &= !(1u8 << i);
            }
            // Marking Eligible a queue that is not In-Debt changes nothing, so no test.
            if nd < cfg.low(i) {
                st.eligible |= 1u8 << i;
            }
        }
    }
}

/// CATS Eq. 2 for every queue in `resolved` (the non-empty queues `p < 4` with `D_p > 0`).
#[inline(always)] // into the out-of-line deadlock path: no second call and frame
fn resolve_deadlock(st: &mut State, cfg: &Config, resolved: u8) {
    for p in 0..4 {
        if resolved & (1u8 << p) == 0 {
            continue;
        }
        let low = cfg.low(p);
        if let Some(d) = st.debt_bytes.get_mut(p) {
            // D_p = min(trunc(D_p·M_p/M_total), L_p − 1)   (L_p ≥ 1 by Config::new)
            let scaled = cfg.scale_down(p, *d);
            let cap = low.wrapping_sub(1);
            let nd = if scaled < cap { scaled } else { cap };
            *d = nd;
            if nd == 0 {
                st.owing &= !(1u8 << p);
            }
        }
    }
    // Eligible when D_p < L_p: always true after the clamp.
    st.eligible |= resolved;
}

// The README (what crates.io shows) runs its example as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
