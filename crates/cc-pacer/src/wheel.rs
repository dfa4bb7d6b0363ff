//! The two-level timing wheel: FIFO lists of flow indices, linked through a per-flow `u32`: the
//! next flow in the list (low half) and the slot the flow was filed for (high half: slot within
//! its page, bit 31 set when it was parked beyond the horizon).
//!
//! * **Level 0** holds two *pages*, the current one and the next: 2 × 1024 slots of 2^10 time
//!   units (64 ns), a page being 2^20 units (≈ 65.5 µs). Page `p` lives in half `p & 1`. Each
//!   slot is a FIFO list (head, tail); per half a 1024-bit map with a 32-bit summary finds the
//!   first non-empty slot in two count-trailing-zeros.
//! * **Level 1** holds the pages after those two up to the horizon (≈ 134 ms, half the clock's
//!   wrap), one LIFO list per page, with a 2048-bit map and a 64-bit summary.
//! * **Pending**: the level-1 list of the next page, taken out of level 1 in one step when that
//!   page became the next one, and moved into its level-0 slots a few flows per call.
//!
//! A flow due in the current or the next page is appended to its level-0 slot; a flow due in a
//! later page is pushed on that page's level-1 list. When the current page's slots are empty and
//! the next page has started, the next page becomes the current one and the page after it becomes
//! the next one: its level-1 list becomes the pending list (one step). Pending flows are pushed at
//! the *front* of the slot they were filed for: the pending list is last-in-first-out, so the two
//! reversals leave the moved flows of every slot in the order they were scheduled, and all of
//! them in front of the flows filed into that slot directly (those were all scheduled later: a
//! page takes direct filings only once it is the next one, and its level-1 list was closed then).
//! A page's slots are served only once it is the current page, and it becomes the current page
//! only with nothing pending. So a slot always serves its flows in scheduling order — the order
//! the documentation and the f64 reference specify — whether they came through level 1 or not.
//!
//! Every operation touches a bounded number of words. Moving the pending list is the one piece
//! of work that grows with the number of flows; the scheduler does it at most a few flows per
//! call (docs/pacer.md §3), in full only when the next page's time has come before enough calls
//! did it.

/// Marks the end of a list and an empty slot.
pub(crate) const NIL: u16 = u16::MAX;
/// log2 of the slot width in time units (1/16 ns): 2^10 = 64 ns.
pub const SLOT_SHIFT: u32 = 10;
/// log2 of the page length in time units: 1024 slots of 64 ns = 2^20 units ≈ 65.5 µs.
pub const PAGE_SHIFT: u32 = 20;
/// Slots per page (level 0 holds two pages).
pub const L0_SLOTS: usize = 1 << (PAGE_SHIFT - SLOT_SHIFT);
/// Pages in level 1: the horizon is `L1_PAGES − 1` pages ahead of the current one.
pub const L1_PAGES: usize = 2048;
/// Page numbers wrap with the clock: `2^32 >> PAGE_SHIFT` = 4096.
pub(crate) const PAGE_MASK: u32 = (1 << (32 - PAGE_SHIFT)) - 1;

/// Level-0 slots of both pages, and the mask of an index into them (page parity, slot).
const L0_BOTH: usize = 2 * L0_SLOTS;
const L0_MASK: usize = L0_BOTH - 1;
const L1_MASK: usize = L1_PAGES - 1;
/// Map words per level-0 page.
const L0_WORDS: usize = L0_SLOTS / 32;
const L1_WORDS: usize = L1_PAGES / 32;

/// The wheel's lists and maps (12 820 bytes). In C order, the words the common case of `next`
/// reads first: within 2 KiB of the pacer's start they are reached by one load's offset, with
/// no base address to build (or keep in a register) for each.
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Wheel {
    /// The head of the pending list plus one, modulo 2^16 (0: nothing pending, so that the
    /// common case of `next` tests it against zero): the next page's flows filed through level
    /// 1, still to be moved into its level-0 slots.
    pending_p1: u16,
    /// Per level-0 half (page parity) the summary of its map.
    l0_sum: [u32; 2],
    l1_sum: [u32; 2],
    /// Per level-0 half 32 words: bit `s` of half `h` is slot `s` of the page of parity `h`.
    l0_bits: [u32; 2 * L0_WORDS],
    /// Per level-0 slot (index `(page & 1) << 10 | slot`) its list's head and tail.
    l0: [[u16; 2]; L0_BOTH],
    l1_bits: [u32; L1_WORDS],
    l1_head: [u16; L1_PAGES],
}

/// Bit of a link word: the flow was parked in the horizon's last page, not filed for its slot.
pub(crate) const PARKED: u32 = 1 << 31;

/// Where the flows' link words live (the flow table).
pub(crate) trait Links {
    /// `f`'s link word (`None`: not a flow).
    fn link(&self, f: u16) -> Option<u32>;
    /// `f`'s link word, to write.
    fn link_mut(&mut self, f: u16) -> Option<&mut u32>;
}

/// Sets the next flow after `f` (the low half of its link word).
#[inline(always)]
fn set_next<L: Links + ?Sized>(link: &mut L, f: u16, to: u16) {
    if let Some(l) = link.link_mut(f) {
        *l = (*l & 0xFFFF_0000) | u32::from(to);
    }
}

/// Writes `f`'s whole link word: next flow `to`, filed for `key`.
#[inline(always)]
fn set_link<L: Links + ?Sized>(link: &mut L, f: u16, to: u16, key: u32) {
    if let Some(l) = link.link_mut(f) {
        *l = u32::from(to) | (key << 16);
    }
}

/// The next flow after `f`.
#[inline(always)]
#[allow(clippy::cast_possible_truncation)] // the low half is the next index
fn get<L: Links + ?Sized>(link: &L, f: u16) -> u16 {
    link.link(f).map_or(NIL, |l| l as u16)
}

/// The key (slot within its page, and [`PARKED`] >> 16) `f` was filed with.
#[inline(always)]
pub(crate) fn key_of<L: Links + ?Sized>(link: &L, f: u16) -> u32 {
    link.link(f).map_or(0, |l| l >> 16)
}

impl Wheel {
    pub(crate) const fn new() -> Self {
        Self {
            pending_p1: 0,
            l0_sum: [0; 2],
            l1_sum: [0; 2],
            l0_bits: [0; 2 * L0_WORDS],
            l0: [[NIL; 2]; L0_BOTH],
            l1_bits: [0; L1_WORDS],
            l1_head: [NIL; L1_PAGES],
        }
    }

    /// Empties every list, in place.
    pub(crate) fn reset(&mut self) {
        self.pending_p1 = 0;
        self.l0.fill([NIL; 2]);
        self.l0_bits.fill(0);
        self.l0_sum = [0; 2];
        self.l1_head.fill(NIL);
        self.l1_bits.fill(0);
        self.l1_sum = [0; 2];
    }

    /// Nothing is scheduled.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.pending_p1 == 0 && self.l0_sum == [0; 2] && self.l1_sum[0] == 0 && self.l1_sum[1] == 0
    }

    /// Level 0 holds flows in the page of parity `page & 1`.
    #[inline]
    pub(crate) fn l0_holds(&self, page: u32) -> bool {
        self.l0_sum
            .get((page & 1) as usize)
            .is_some_and(|&s| s != 0)
    }

    /// The first non-empty level-0 slot of page `page` (one of the two level 0 holds), as an
    /// index `(page & 1) << 10 | slot`.
    #[inline(always)]
    pub(crate) fn l0_first(&self, page: u32) -> Option<usize> {
        let h = (page & 1) as usize;
        let sum = self.l0_sum.get(h).copied().unwrap_or(0);
        if sum == 0 {
            return None;
        }
        let w = (h << 5) | (sum.trailing_zeros() as usize & (L0_WORDS - 1));
        // Bit 31 does not change the lowest set bit of a non-empty word (the summary says it is
        // non-empty) but tells the compiler the count is below 32.
        let word = self.l0_bits.get(w).copied().unwrap_or(0) | 1 << 31;
        Some(((w << 5) | (word.trailing_zeros() as usize & 31)) & L0_MASK)
    }

    /// The flow at the head of level-0 slot `k` (`NIL` if empty).
    #[inline(always)]
    pub(crate) fn l0_head(&self, k: usize) -> u16 {
        self.l0.get(k & L0_MASK).map_or(NIL, |s| s[0])
    }

    /// Removes the head `f` of level-0 slot `k` (the caller read it with [`l0_head`]).
    #[inline(always)]
    pub(crate) fn l0_pop<L: Links + ?Sized>(&mut self, link: &L, k: usize, f: u16) {
        let k = k & L0_MASK;
        let nx = get(link, f);
        if let Some([h, _]) = self.l0.get_mut(k) {
            *h = nx;
        }
        if nx == NIL {
            let w = k >> 5;
            if let Some(word) = self.l0_bits.get_mut(w) {
                *word &= !(1u32 << (k & 31));
                if *word == 0
                    && let Some(s) = self.l0_sum.get_mut(w >> 5)
                {
                    *s &= !(1u32 << (w & 31));
                }
            }
        }
    }

    #[inline(always)]
    fn l0_mark(&mut self, k: usize) {
        let w = k >> 5;
        if let Some(word) = self.l0_bits.get_mut(w) {
            *word |= 1u32 << (k & 31);
        }
        if let Some(s) = self.l0_sum.get_mut((w >> 5) & 1) {
            *s |= 1u32 << (w & 31);
        }
    }

    /// Appends `f` to level-0 slot `k`.
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)] // k < 2048
    pub(crate) fn l0_push_back<L: Links + ?Sized>(&mut self, link: &mut L, k: usize, f: u16) {
        let k = k & L0_MASK;
        set_link(link, f, NIL, k as u32);
        let head = self.l0_head(k);
        if head == NIL {
            if let Some([h, _]) = self.l0.get_mut(k) {
                *h = f;
            }
            self.l0_mark(k);
        } else {
            let t = self.l0.get(k).map_or(NIL, |s| s[1]);
            set_next(link, t, f);
        }
        if let Some([_, t]) = self.l0.get_mut(k) {
            *t = f;
        }
    }

    /// Puts `f` in front of level-0 slot `k` (used when a pending flow is moved).
    #[allow(clippy::cast_possible_truncation)] // k < 2048
    pub(crate) fn l0_push_front<L: Links + ?Sized>(&mut self, link: &mut L, k: usize, f: u16) {
        let k = k & L0_MASK;
        let head = self.l0_head(k);
        set_link(link, f, head, k as u32);
        if head == NIL {
            if let Some([_, t]) = self.l0.get_mut(k) {
                *t = f;
            }
            self.l0_mark(k);
        }
        if let Some([h, _]) = self.l0.get_mut(k) {
            *h = f;
        }
    }

    /// Pushes `f`, filed for `key` (its slot within page `j`, or [`PARKED`] >> 16), on the list
    /// of level-1 page index `j`.
    #[inline(always)]
    pub(crate) fn l1_push<L: Links + ?Sized>(&mut self, link: &mut L, j: usize, f: u16, key: u32) {
        let j = j & L1_MASK;
        let head = self.l1_head.get(j).copied().unwrap_or(NIL);
        set_link(link, f, head, key);
        if let Some(h) = self.l1_head.get_mut(j) {
            *h = f;
        }
        if head == NIL {
            let w = j >> 5;
            if let Some(word) = self.l1_bits.get_mut(w) {
                *word |= 1u32 << (j & 31);
            }
            if let Some(s) = self.l1_sum.get_mut(w >> 5) {
                *s |= 1u32 << (w & 31);
            }
        }
    }

    /// Makes the list of level-1 page index `j` the pending list (which is empty) and takes it
    /// out of level 1: one step, whatever its length.
    pub(crate) fn l1_take(&mut self, j: usize) {
        let j = j & L1_MASK;
        let Some(h) = self.l1_head.get_mut(j) else {
            return;
        };
        self.pending_p1 = h.wrapping_add(1);
        *h = NIL;
        let w = j >> 5;
        if let Some(word) = self.l1_bits.get_mut(w) {
            *word &= !(1u32 << (j & 31));
            if *word == 0
                && let Some(s) = self.l1_sum.get_mut(w >> 5)
            {
                *s &= !(1u32 << (w & 31));
            }
        }
    }

    /// Pops the first flow of the pending list.
    #[inline]
    pub(crate) fn pending_pop<L: Links + ?Sized>(&mut self, link: &L) -> Option<u16> {
        let f = self.pending_p1.wrapping_sub(1);
        if f == NIL {
            return None;
        }
        self.pending_p1 = get(link, f).wrapping_add(1);
        Some(f)
    }

    /// Flows are pending.
    #[inline(always)]
    pub(crate) fn has_pending(&self) -> bool {
        self.pending_p1 != 0
    }

    /// The first non-empty level-1 page index at or after `start`, circularly.
    pub(crate) fn l1_first_from(&self, start: usize) -> Option<usize> {
        let start = start & L1_MASK;
        let w0 = start >> 5;
        let word = |w: usize| self.l1_bits.get(w).copied().unwrap_or(0);
        let here = word(w0) & (u32::MAX << (start & 31));
        if here != 0 {
            return Some((w0 << 5) | here.trailing_zeros() as usize);
        }
        let sum = u64::from(self.l1_sum[0]) | (u64::from(self.l1_sum[1]) << 32);
        // Words after w0, then words up to and including w0 (its bits below `start`).
        #[allow(clippy::cast_possible_truncation)] // w0 < 64
        let above = sum
            & u64::MAX
                .checked_shl((w0 as u32).wrapping_add(1))
                .unwrap_or(0);
        let pick = if above != 0 { above } else { sum };
        if pick == 0 {
            return None;
        }
        let w = pick.trailing_zeros() as usize & (L1_WORDS - 1);
        Some((w << 5) | (word(w).trailing_zeros() as usize & 31))
    }
}
