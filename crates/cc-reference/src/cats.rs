//! The f64 reference of the CATS conductor, written from the paper's text ("A Case for CATS",
//! Conductor: state update, payback, deadlock resolution, Eq. 1–2) and the conventions of
//! docs/cats.md § "Semantics", not from the fixed-point crate. Debts and multipliers are `f64`;
//! queues hold the bytes left of each message in a `VecDeque`.

use alloc::collections::VecDeque;

/// Parameters, in the paper's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct RefParams {
    /// Largest chunk, bytes.
    pub mss: f64,
    /// High watermarks `H_0..H_3`, bytes.
    pub high: [f64; 4],
    /// Low watermarks `L_0..L_3`, bytes.
    pub low: [f64; 4],
    /// Payback multipliers `M_0..M_4`.
    pub mult: [f64; 5],
    /// Messages a queue may hold (the firmware's capacity; an enqueue beyond it is refused).
    pub capacity: usize,
}

/// What one decision did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RefDecision {
    /// No data queued.
    Empty,
    /// The chosen chunk is larger than the free space.
    NoSpace,
    /// Sent `bytes` from queue `prio`.
    Send {
        /// Queue.
        prio: usize,
        /// Chunk length.
        bytes: u64,
        /// The deadlock rule ran first.
        deadlock: bool,
    },
}

/// The reference conductor.
#[derive(Debug, Clone)]
pub struct RefConductor {
    /// Parameters.
    pub p: RefParams,
    /// Bytes left of each queued message, per priority.
    pub queues: [VecDeque<u64>; 5],
    /// `D_0..D_3`.
    pub debt: [f64; 4],
    /// In-Debt flags of P0..P3.
    pub in_debt: [bool; 4],
    /// Deadlock resolutions (each one is kept, whether or not its chunk fitted).
    pub deadlocks: u64,
    /// Debts that Eq. 2's `L−1` clamp lowered (the scaled debt was ≥ L).
    pub clamps: u64,
}

impl RefConductor {
    /// Empty queues, zero debts.
    pub fn new(p: RefParams) -> Self {
        Self {
            p,
            queues: Default::default(),
            debt: [0.0; 4],
            in_debt: [false; 4],
            deadlocks: 0,
            clamps: 0,
        }
    }

    /// Queues a message; `false` (refused, nothing changes) for 0 bytes or a full queue.
    pub fn enqueue(&mut self, prio: usize, bytes: u64) -> bool {
        if bytes == 0 || self.queues[prio].len() >= self.p.capacity {
            return false;
        }
        self.queues[prio].push_back(bytes);
        true
    }

    fn eligible(&self, q: usize) -> bool {
        q == 4 || !self.in_debt[q]
    }

    fn pick(&self) -> Option<usize> {
        (0..5).find(|&q| !self.queues[q].is_empty() && self.eligible(q))
    }

    /// One decision with `space` bytes free in the send buffer. As the authors' released
    /// conductor (tcp-cats.cc, `ConductorFeedData`): with no free space it stops before
    /// choosing, so nothing changes; otherwise it chooses — resolving a deadlock if needed, and
    /// keeping that resolution — and only then finds out whether the chunk fits.
    pub fn next(&mut self, space: u64) -> RefDecision {
        if self.queues.iter().all(VecDeque::is_empty) {
            return RefDecision::Empty;
        }
        if space == 0 {
            return RefDecision::NoSpace;
        }
        let mut debt = self.debt;
        let mut in_debt = self.in_debt;
        let mut deadlock = false;
        let mut clamps = 0;
        let chosen = match self.pick() {
            Some(q) => q,
            None => {
                // Deadlock resolution (Eq. 2): M_total is the sum of all five multipliers.
                deadlock = true;
                let m_total: f64 = self.p.mult.iter().sum();
                for q in 0..4 {
                    if self.queues[q].is_empty() || debt[q] <= 0.0 {
                        continue;
                    }
                    // D·M_q is exact in f64 (an integer times a multiple of 2^-16, far below
                    // 2^53); one correctly rounded division cannot cross an integer (see docs).
                    let scaled = libm::trunc(debt[q] * self.p.mult[q] / m_total);
                    let cap = self.p.low[q] - 1.0;
                    if scaled > cap {
                        clamps += 1;
                    }
                    debt[q] = scaled.min(cap);
                    if debt[q] < self.p.low[q] {
                        in_debt[q] = false;
                    }
                }
                (0..5)
                    .find(|&q| !self.queues[q].is_empty() && (q == 4 || !in_debt[q]))
                    .expect("Eq. 2 clamps every non-empty queue below L")
            }
        };
        let left = *self.queues[chosen]
            .front()
            .expect("chosen queue is non-empty");
        let n = left.min(self.p.mss as u64);
        if deadlock {
            // The resolution stands whether or not the chunk fits.
            self.debt = debt;
            self.in_debt = in_debt;
            self.deadlocks += 1;
            self.clamps += clamps;
        }
        if n > space {
            return RefDecision::NoSpace;
        }
        // Send n bytes from `chosen`.
        if left == n {
            self.queues[chosen].pop_front();
        } else {
            *self.queues[chosen].front_mut().expect("non-empty") = left - n;
        }
        let nf = n as f64;
        if chosen < 4 {
            debt[chosen] += nf;
            if debt[chosen] >= self.p.high[chosen] {
                in_debt[chosen] = true;
            }
        }
        let pay = libm::trunc(nf * self.p.mult[chosen]);
        for i in 0..chosen.min(4) {
            if debt[i] > 0.0 {
                debt[i] = (debt[i] - pay).max(0.0);
                if in_debt[i] && debt[i] < self.p.low[i] {
                    in_debt[i] = false;
                }
            }
        }
        self.debt = debt;
        self.in_debt = in_debt;
        RefDecision::Send {
            prio: chosen,
            bytes: n,
            deadlock,
        }
    }
}

/// The starvation bound of docs/cats.md § "Starvation bound": the most bytes other queues can send
/// while queue `p` holds data and is not served, for MSS `p.mss` and messages of at least
/// `min_msg_bytes`. `f64::INFINITY` when some lower queue's effective multiplier
/// `M_j − 1/MSS − 1/min_msg` is not positive (its truncated payback may be 0 per chunk).
pub fn starvation_bound_bytes(p: &RefParams, min_msg_bytes: f64, prio: usize) -> f64 {
    let mss = p.mss;
    let per_byte_chunks = 1.0 / mss + 1.0 / min_msg_bytes.min(mss).max(1.0);
    let (x, m_hi, resolutions) = if prio < 4 {
        let m_lo = p.mult[prio + 1..]
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let m_eff = m_lo - per_byte_chunks;
        if m_eff <= 0.0 {
            return f64::INFINITY;
        }
        // Phase 1 (prio In-Debt): lower queues must pay back H_p + MSS − L_p; the partly sent
        // head message of each lower queue adds one chunk each; the last chunk overshoots by ≤ MSS.
        let lower = (4 - prio) as f64;
        let x = (p.high[prio] + mss - p.low[prio] + lower) / m_eff + mss;
        let m_hi = p.mult[prio + 1..].iter().copied().fold(0.0, f64::max);
        (x, m_hi, 2.0)
    } else {
        (0.0, 0.0, 1.0)
    };
    // Higher queues i < prio, from the lowest of them up: each sends at most its debt headroom
    // (H_i + MSS − 1), once more if a deadlock resolution cleared its debt, plus what it was paid.
    let mut t = [0.0f64; 5];
    let mut total = x;
    for i in (0..prio).rev() {
        let paid: f64 = (i + 1..prio).map(|j| p.mult[j] * t[j]).sum::<f64>() + m_hi * x;
        t[i] = resolutions * (p.high[i] + mss - 1.0) + paid;
        total += t[i];
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn paper(mss: f64) -> RefParams {
        RefParams {
            mss,
            high: [60_000.0, 30_000.0, 15_000.0, 6_000.0],
            low: [30_000.0, 15_000.0, 7_500.0, 3_000.0],
            mult: [0.25, 0.5, 1.0, 1.5, 2.0],
            capacity: 64,
        }
    }

    #[test]
    fn web_page_starts_p0_first_after_the_enqueue_feeds() {
        let mut c = RefConductor::new(paper(1000.0));
        let mut order = Vec::new();
        for (p, b) in [
            (4, 150_000),
            (3, 60_000),
            (2, 40_000),
            (1, 25_000),
            (0, 8_000),
        ] {
            assert!(c.enqueue(p, b));
            if let RefDecision::Send { prio, .. } = c.next(1 << 20) {
                order.push(prio);
            }
        }
        while let RefDecision::Send { prio, .. } = c.next(1 << 20) {
            order.push(prio);
            if order.len() == 13 {
                break;
            }
        }
        assert_eq!(order, [4, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    }

    /// The reference evaluates Eq. 2 as `(D·M_p)/M_total` (one rounding, exact for trunc, see
    /// docs/cats.md); check it against the exact integer floor `D·m_p/m_total` of the Q16 values
    /// for the paper's multipliers over the whole debt range a default queue can reach.
    #[test]
    fn deadlock_scaling_matches_the_exact_floor() {
        let q16 = [16_384u64, 32_768, 65_536, 98_304];
        let total: u64 = 344_064; // 5.25 · 65 536
        for (p, &m) in q16.iter().enumerate() {
            let mp = m as f64 / 65_536.0;
            for d in 1..=61_460u64 {
                let exact = (d * m / total) as f64;
                assert_eq!((d as f64 * mp / 5.25).trunc(), exact, "P{p} D={d}");
            }
        }
    }

    #[test]
    fn bound_is_finite_for_the_paper_defaults() {
        let p = paper(1460.0);
        for q in 0..5 {
            let b = starvation_bound_bytes(&p, 1460.0, q);
            assert!(b.is_finite() && b > 0.0, "P{q}: {b}");
        }
        // P4 (docs/cats.md): 7 459 + 27 647.5 + 70 295 + 135 442.5 = 240 844 bytes.
        let b4 = starvation_bound_bytes(&p, 1460.0, 4);
        assert!((b4 - 240_844.0).abs() < 1e-6, "{b4}");
        // A zero multiplier below P0 leaves no finite bound for P0.
        let mut z = paper(1460.0);
        z.mult[4] = 0.0;
        assert!(starvation_bound_bytes(&z, 1460.0, 0).is_infinite());
    }
}
