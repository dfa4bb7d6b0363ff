//! The event queue: FIFO lanes and a timing wheel over the near future, a binary heap for the
//! rest.
//!
//! Every event is one `u128` key, `time (ps) | sequence number | event`, and events leave in
//! key order, i.e. by time and then in the order they were scheduled: exactly the order a
//! single binary heap of the keys gives, so a run does not depend on how the queue is built.
//!
//! * A lane is a FIFO for events that their scheduler pushes in key order: the engine has one
//!   per link delay, for the arrivals over links of that delay (each is scheduled one delay
//!   after a transmission ends, and transmissions end in time order). A key pushed to a lane
//!   out of order goes where [`EventQueue::push`] would put it.
//! * The wheel has [`BUCKETS`] buckets of `2^shift` ps each. An event less than the wheel's
//!   span ahead of the current bucket is appended, unsorted, to its bucket; one further ahead
//!   (timers, the next Poisson arrival on a slow link) goes to the far heap.
//! * The current bucket is a vector sorted in descending key order: popping takes its last
//!   element, and an event scheduled into the current bucket (at the current time, or within
//!   its width) is inserted at its place by binary search.
//! * A pop takes the smaller of the lanes' first keys and the current bucket's. When the
//!   current bucket runs dry, the queue moves to the earliest of the next occupied bucket
//!   (found through a bitmap), the far heap's first event's bucket and the lanes' first
//!   event's bucket, takes that bucket's events and the far heap's events of the same bucket,
//!   and sorts them.
//!
//! Why: on the 320-host fat tree about 30 events fall in every simulated ns and tens of
//! thousands are pending; a binary heap of them spent half of the run in cache-missing
//! sift-downs. Here about half of the events (the arrivals) pass through a lane without being
//! sorted, a push is otherwise an append to a bucket, and a sort touches a few dozen keys that
//! sit together.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Buckets in the wheel (a power of two).
pub(super) const BUCKETS: usize = 2048;
/// The narrowest bucket: 2^11 ps ≈ 2 ns (about 40 events on the 320-host fat tree at 50 %
/// load; narrower buckets measured no faster).
const MIN_SHIFT: u32 = 11;
/// Bits of the key below the time.
const TIME_SHIFT: u32 = 84;

#[inline]
fn time_of(key: u128) -> u64 {
    (key >> TIME_SHIFT) as u64
}

/// See the module documentation.
pub(super) struct EventQueue {
    /// A bucket is `2^shift` ps wide.
    shift: u32,
    /// The absolute index (time >> shift) of the current bucket.
    cur: u64,
    /// The current bucket's events, sorted in descending key order.
    now: Vec<u128>,
    /// The wheel: bucket `b` (absolute) lives at `b mod BUCKETS`; it holds events of bucket
    /// `b` only, for `cur < b < cur + BUCKETS`.
    wheel: Vec<Vec<u128>>,
    /// Bit `i` set: `wheel[i]` is not empty.
    occupied: Vec<u64>,
    /// Events in the wheel (not counting `now`).
    in_wheel: usize,
    /// Events at or beyond `cur + BUCKETS` when they were scheduled.
    far: BinaryHeap<Reverse<u128>>,
    /// Lanes: events that their scheduler pushes in key order (the arrivals over links of one
    /// delay), each lane a FIFO in ascending key order.
    lanes: Vec<VecDeque<u128>>,
}

impl EventQueue {
    /// A queue whose wheel spans at least `horizon_ps` ahead (at least 2^MIN_SHIFT ps per
    /// bucket), with `lanes` lanes.
    pub(super) fn new(horizon_ps: u64, lanes: usize) -> EventQueue {
        let per_bucket = horizon_ps.div_ceil(BUCKETS as u64).max(1);
        let shift = (64 - (per_bucket - 1).leading_zeros()).max(MIN_SHIFT);
        EventQueue {
            shift,
            cur: 0,
            now: Vec::new(),
            wheel: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: vec![0; BUCKETS / 64],
            in_wheel: 0,
            far: BinaryHeap::new(),
            lanes: (0..lanes).map(|_| VecDeque::new()).collect(),
        }
    }

    /// The width of a bucket, ps.
    #[cfg(test)]
    fn bucket_ps(&self) -> u64 {
        1 << self.shift
    }

    /// Events pending.
    pub(super) fn len(&self) -> usize {
        self.now.len()
            + self.in_wheel
            + self.far.len()
            + self.lanes.iter().map(VecDeque::len).sum::<usize>()
    }

    /// Schedules the event `key`; its time is not before the last popped event's.
    #[inline]
    pub(super) fn push(&mut self, key: u128) {
        let b = time_of(key) >> self.shift;
        if b <= self.cur {
            let at = self.now.partition_point(|&k| k > key);
            self.now.insert(at, key);
        } else if b - self.cur < BUCKETS as u64 {
            let i = (b as usize) & (BUCKETS - 1);
            self.wheel[i].push(key);
            self.occupied[i / 64] |= 1 << (i % 64);
            self.in_wheel += 1;
        } else {
            self.far.push(Reverse(key));
        }
    }

    /// Schedules the event `key` in `lane`, whose events are pushed in key order (else it is
    /// scheduled as [`push`](Self::push) does: the order of events never depends on it).
    #[inline]
    pub(super) fn push_lane(&mut self, lane: usize, key: u128) {
        let q = &mut self.lanes[lane];
        if q.back().is_none_or(|&b| b < key) {
            q.push_back(key);
        } else {
            self.push(key);
        }
    }

    /// The `k`-th event of lane `lane` from its head, if any.
    #[inline]
    pub(super) fn peek_lane(&self, lane: usize, k: usize) -> Option<u128> {
        self.lanes[lane].get(k).copied()
    }

    /// The first event in key order, removed.
    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<u128> {
        // The lane whose head comes first (`lk` = u128::MAX, which no key is: none).
        let (mut lane, mut lk) = (0, u128::MAX);
        for i in 0..self.lanes.len() {
            if let Some(&k) = self.lanes[i].front()
                && k < lk
            {
                (lane, lk) = (i, k);
            }
        }
        if self.now.is_empty() {
            // Every wheel and far event is in a bucket after `cur`: a lane event in a bucket
            // up to `cur` goes first; else move on, but not past the lane's first event.
            let lb = if lk == u128::MAX {
                u64::MAX
            } else {
                time_of(lk) >> self.shift
            };
            if lb > self.cur {
                self.advance(lb);
            }
        }
        match self.now.last() {
            Some(&n) if n < lk => self.now.pop(),
            _ if lk != u128::MAX => self.lanes[lane].pop_front(),
            _ => None,
        }
    }

    /// Moves to the next bucket that holds wheel or far events, or to bucket `limit` if that
    /// comes first, and sorts the bucket's events into `now`.
    #[cold]
    fn advance(&mut self, limit: u64) {
        let far_b = self.far.peek().map(|r| time_of(r.0) >> self.shift);
        let wheel_b = (self.in_wheel > 0).then(|| self.next_occupied());
        let next = wheel_b.unwrap_or(u64::MAX).min(far_b.unwrap_or(u64::MAX));
        if next == u64::MAX && limit == u64::MAX {
            return;
        }
        self.cur = next.min(limit);
        let i = (self.cur as usize) & (BUCKETS - 1);
        if wheel_b == Some(self.cur) {
            std::mem::swap(&mut self.now, &mut self.wheel[i]);
            self.occupied[i / 64] &= !(1 << (i % 64));
            self.in_wheel -= self.now.len();
        }
        while let Some(&Reverse(k)) = self.far.peek() {
            if time_of(k) >> self.shift != self.cur {
                break;
            }
            self.now.push(k);
            self.far.pop();
        }
        self.now.sort_unstable_by(|a, b| b.cmp(a));
    }

    /// The absolute index of the first occupied wheel bucket after `cur` (the wheel is not
    /// empty).
    fn next_occupied(&self) -> u64 {
        let words = BUCKETS / 64;
        let start = ((self.cur + 1) as usize) & (BUCKETS - 1);
        let (w0, b0) = (start / 64, start % 64);
        // The first word from bit b0, then the others in turn, then the first word's low bits.
        let first = self.occupied[w0] & (!0u64 << b0);
        let found = if first != 0 {
            w0 * 64 + first.trailing_zeros() as usize
        } else {
            (1..=words)
                .map(|k| (w0 + k) % words)
                .find(|&w| self.occupied[w] != 0)
                .map(|w| w * 64 + self.occupied[w].trailing_zeros() as usize)
                .expect("the wheel is not empty")
        };
        self.cur + 1 + ((found + BUCKETS - start) & (BUCKETS - 1)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::{Rng, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    fn key(t: u64, seq: u64) -> u128 {
        (u128::from(t) << TIME_SHIFT) | (u128::from(seq) << 48)
    }

    /// Runs a random schedule (pushes never before the last pop) through the queue and a
    /// binary heap side by side.
    fn same_order_as_a_heap(horizon_ps: u64, max_ahead_ps: u64, seed: u64) {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut q = EventQueue::new(horizon_ps, 2);
        let mut h = BinaryHeap::new();
        let (mut now, mut seq) = (0u64, 0u64);
        for _ in 0..20_000 {
            for _ in 0..(rng.next_u64() % 3) {
                seq += 1;
                // Ties at `now`, near events and far ones.
                let ahead = match rng.next_u64() % 4 {
                    0 => 0,
                    1 => rng.next_u64() % 2_000,
                    _ => rng.next_u64() % max_ahead_ps,
                };
                // Two lanes of fixed delays (pushed in key order) beside the wheel and the
                // far heap; lane 1 sometimes gets a key out of order (it is then scheduled
                // as any other).
                let (k, lane) = match rng.next_u64() % 5 {
                    0 => (key(now + 1_000_000, seq), Some(0)),
                    1 => (key(now + 7_000_000, seq), Some(1)),
                    2 => (key(now + 3_000_000, seq), Some(1)),
                    _ => (key(now + ahead, seq), None),
                };
                match lane {
                    Some(l) => q.push_lane(l, k),
                    None => q.push(k),
                }
                h.push(Reverse(k));
            }
            let a = q.pop();
            let b = h.pop().map(|r| r.0);
            assert_eq!(a, b);
            if let Some(k) = a {
                now = time_of(k);
            }
            assert_eq!(q.len(), h.len());
        }
        while let Some(Reverse(k)) = h.pop() {
            assert_eq!(q.pop(), Some(k));
        }
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn pops_in_the_order_of_a_binary_heap_within_and_beyond_the_wheel() {
        for seed in 0..4 {
            // Mostly within the span, sometimes far beyond it, and sparse (jumps over empty
            // buckets and whole empty wheels).
            same_order_as_a_heap(2_000_000, 3_000_000, seed);
            same_order_as_a_heap(2_000_000, 500_000_000, seed);
            same_order_as_a_heap(1, 100_000_000_000, seed);
        }
    }

    #[test]
    fn bucket_width_covers_the_horizon() {
        assert_eq!(EventQueue::new(0, 0).bucket_ps(), 1 << MIN_SHIFT);
        assert_eq!(EventQueue::new(1, 0).bucket_ps(), 1 << MIN_SHIFT);
        let q = EventQueue::new(200_000_000_000, 0);
        assert!(q.bucket_ps() * BUCKETS as u64 >= 200_000_000_000);
        assert!(q.bucket_ps() * BUCKETS as u64 / 2 < 200_000_000_000);
    }
}
