//! Worked examples and invariants of the conductor, through its public API only.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use cats_conductor::{
    Chunk, Conductor, Config, ConfigError, Decision, Descriptor, EnqueueError, Multiplier, Prio,
    State, multiplier_from_ratio,
};
use proptest::prelude::*;

const Q: u32 = 65_536; // 1.0 in Q16.16

fn m(bits: [u32; 5]) -> [Multiplier; 5] {
    bits.map(Multiplier::from_bits)
}

fn cfg_mss(mss: u32) -> Config {
    let d = Config::default();
    Config::new(
        mss,
        [60_000, 30_000, 15_000, 6_000],
        [30_000, 15_000, 7_500, 3_000],
        Prio::ALL.map(|p| d.multiplier(p)),
    )
    .unwrap()
}

fn desc(handle: u32, len: u32) -> Descriptor {
    Descriptor {
        handle,
        len_bytes: len,
    }
}

/// Feeds until the conductor returns nothing; returns the chunks.
fn feed<const N: usize>(c: &mut Conductor<N>, cfg: &Config, space: &mut u32) -> Vec<Chunk> {
    let mut out = Vec::new();
    while let Some(ch) = c.next_chunk(cfg, *space).chunk() {
        *space -= ch.len_bytes;
        out.push(ch);
    }
    out
}

#[test]
fn default_is_the_papers_configuration() {
    let c = Config::default();
    assert_eq!(c.mss_bytes(), 1460);
    assert_eq!(c.high_bytes(Prio::P0), Some(60_000));
    assert_eq!(c.high_bytes(Prio::P3), Some(6_000));
    assert_eq!(c.low_bytes(Prio::P2), Some(7_500));
    assert_eq!(c.high_bytes(Prio::P4), None);
    assert_eq!(c.multiplier(Prio::P0).to_bits(), Q / 4);
    assert_eq!(c.multiplier(Prio::P3).to_bits(), Q * 3 / 2);
    assert_eq!(c.m_total().to_bits(), Q * 21 / 4); // 5.25
    // Paper: "for P3 at MSS_max = 1460 B, 0.285 < 0.402": 1.5/5.25 = 0.2857 < 3000/7460 = 0.4021.
    assert!(c.eq1_holds());
    assert_eq!(c.eq1_violations(), 0);
}

#[test]
fn config_rejects_bad_watermarks_and_reports_eq1() {
    let mm = m([Q / 4, Q / 2, Q, 3 * Q / 2, 2 * Q]);
    let h = [60_000, 30_000, 15_000, 6_000];
    assert_eq!(
        Config::new(1460, h, [30_000, 30_000, 7_500, 3_000], mm),
        Err(ConfigError::LowNotBelowHigh(Prio::P1))
    );
    assert_eq!(
        Config::new(1460, h, [30_000, 15_000, 0, 3_000], mm),
        Err(ConfigError::LowIsZero(Prio::P2))
    );
    assert_eq!(
        Config::new(0, h, [30_000, 15_000, 7_500, 3_000], mm),
        Err(ConfigError::MssOutOfRange)
    );
    assert_eq!(
        Config::new(1460, h, [30_000, 15_000, 7_500, 3_000], m([0; 5])),
        Err(ConfigError::MultiplierSumZero)
    );
    assert_eq!(
        Config::new(
            1460,
            h,
            [30_000, 15_000, 7_500, 3_000],
            m([0, 0, 0, 0, (1 << 22) + 1])
        ),
        Err(ConfigError::MultiplierTooLarge(Prio::P4))
    );
    // L3 = 600: 1.5/5.25 = 0.2857 ≥ 600/(6000 + 1460) = 0.0804 → Eq. 1 fails for P3 only.
    let c = Config::new(1460, h, [30_000, 15_000, 7_500, 600], mm).unwrap();
    assert!(!c.eq1_holds());
    assert_eq!(c.eq1_violations(), 0b1000);
    // Boundary: Eq. 1 is strict. M0 = 1.0, others 0 except M4 = 1.0: M0/Mt = 0.5; with H0 = 100,
    // MSS = 100, L0 = 100: L/(H+MSS) = 0.5 → not strictly less → violated.
    let c = Config::new(
        100,
        [200, 200, 200, 200],
        [100, 150, 150, 150],
        m([Q, 0, 0, 0, Q]),
    );
    let c = c.unwrap();
    assert_eq!(c.eq1_violations() & 1, 1);
}

#[test]
fn multiplier_from_ratio_rounds_to_nearest() {
    assert_eq!(multiplier_from_ratio(1, 4).unwrap().to_bits(), 16_384);
    assert_eq!(multiplier_from_ratio(3, 2).unwrap().to_bits(), 98_304);
    // 0.3·65536 = 19660.8 → 19661
    assert_eq!(multiplier_from_ratio(3, 10).unwrap().to_bits(), 19_661);
    assert_eq!(multiplier_from_ratio(1, 0), None);
}

#[test]
fn state_sizes() {
    // Documented in docs/cats.md: 4 debts + 2 masks, padded.
    assert_eq!(core::mem::size_of::<State>(), 20);
    assert_eq!(core::mem::size_of::<Descriptor>(), 8);
    // Conductor<N>: 5 heapless::Deque<Descriptor, N> (8·N slots + front/back usize + full flag,
    // padded to the usize alignment) + head cache 3·5·4 + State 20 + mask 1, padded.
    // 32-bit (fw-probe asserts riscv32): deque 8·N + 9 → align 4.
    //   N = 16: 5·140 + 60 + 20 + 1 = 781 → 784;  N = 1: 5·20 + 81 = 181 → 184.
    // 64-bit: deque 8·N + 17 → align 8.
    //   N = 16: 5·152 + 81 = 841 → 848;  N = 1: 5·32 + 81 = 241 → 248.
    #[cfg(target_pointer_width = "32")]
    {
        assert_eq!(core::mem::size_of::<Conductor<16>>(), 784);
        assert_eq!(core::mem::align_of::<Conductor<16>>(), 4);
        assert_eq!(core::mem::size_of::<Conductor<1>>(), 184);
    }
    #[cfg(target_pointer_width = "64")]
    {
        assert_eq!(core::mem::size_of::<Conductor<16>>(), 848);
        assert_eq!(core::mem::align_of::<Conductor<16>>(), 8);
        assert_eq!(core::mem::size_of::<Conductor<1>>(), 248);
    }
}

#[test]
fn enqueue_rejects_zero_length_and_full_queue() {
    let mut c: Conductor<2> = Conductor::new();
    assert_eq!(
        c.enqueue(Prio::P2, desc(7, 0)),
        Err(EnqueueError::ZeroLength(desc(7, 0)))
    );
    c.enqueue(Prio::P2, desc(1, 10)).unwrap();
    c.enqueue(Prio::P2, desc(2, 10)).unwrap();
    assert_eq!(
        c.enqueue(Prio::P2, desc(3, 10)),
        Err(EnqueueError::QueueFull(desc(3, 10)))
    );
    assert_eq!(c.queued_messages(Prio::P2), 2);
    assert_eq!(c.next_chunk(&Config::default(), 0).chunk(), None);
}

#[test]
fn chunks_never_span_messages_and_respect_space() {
    let cfg = cfg_mss(1000);
    let mut c: Conductor<4> = Conductor::new();
    c.enqueue(Prio::P1, desc(10, 2500)).unwrap();
    c.enqueue(Prio::P1, desc(11, 300)).unwrap();
    // 999 bytes free: the 1000-byte chunk does not fit: nothing is sent, no debt.
    assert_eq!(
        c.next_chunk(&cfg, 999),
        Decision::NoSpace {
            prio: Prio::P1,
            len_bytes: 1000,
            deadlock_resolved: false
        }
    );
    assert_eq!(c.state(), State::new());
    let mut space = 10_000;
    let got: Vec<_> = feed(&mut c, &cfg, &mut space)
        .iter()
        .map(|ch| (ch.handle, ch.offset_bytes, ch.len_bytes, ch.last))
        .collect();
    assert_eq!(
        got,
        [
            (10, 0, 1000, false),
            (10, 1000, 1000, false),
            (10, 2000, 500, true), // the tail of message 10, not 1000 bytes across into 11
            (11, 0, 300, true)
        ]
    );
    assert_eq!(c.next_chunk(&cfg, 10_000), Decision::Empty);
    assert_eq!(c.state().debt_of(Prio::P1), 2800);
}

/// The paper's worst-case web page (§ Evaluation): P4 150 000, P3 60 000, P2 40 000, P1 25 000 and
/// P0 8 000 bytes queued in that order at one instant, MSS 1 000, default H/L/M.
///
/// Why the first five chunks are P4, P3, P2, P1, P0: the Interceptor calls the Conductor after
/// every `Send`, so each enqueue makes exactly one feed attempt, and at that moment the queue
/// just filled is the highest-priority non-empty one (all debts are 0, everyone Eligible). Then
/// P0 is the highest non-empty Eligible queue and its debt (8 000) never reaches H0 = 60 000, so
/// it finishes; then P1 (25 000 < H1 = 30 000) finishes, paying P0 back 500 per chunk
/// (trunc(1000 × 0.5)). Then P2 sends until D2 ≥ H2 = 15 000 (14 more chunks: 1 000 + 14 000),
/// paying P1 back 1 000 per chunk (25 000 → 11 000); then P3 (D3 1 000 → 6 000 after 5 chunks,
/// In-Debt), paying 1 500 per chunk: D2 15 000 → 7 500 (not < L2 = 7 500, still In-Debt), D1
/// 11 000 → 3 500. Now P2 and P3 are In-Debt, P0 and P1 empty: P4 sends one chunk, paying
/// trunc(1000 × 2.0) = 2 000: D2 → 5 500 < 7 500, Eligible again, so P2 resumes.
#[test]
fn web_page_first_chunks_by_hand() {
    let cfg = cfg_mss(1000);
    let mut c: Conductor<8> = Conductor::new();
    let mut space = 131_072u32;
    let mut order = Vec::new();
    for (p, len) in [
        (Prio::P4, 150_000),
        (Prio::P3, 60_000),
        (Prio::P2, 40_000),
        (Prio::P1, 25_000),
        (Prio::P0, 8_000),
    ] {
        c.enqueue(p, desc(p as u32, len)).unwrap();
        // exactly one feed attempt per enqueue
        if let Some(ch) = c.next_chunk(&cfg, space).chunk() {
            space -= ch.len_bytes;
            order.push(ch.prio);
        }
    }
    use Prio::*;
    assert_eq!(order, [P4, P3, P2, P1, P0]);
    order.extend(feed(&mut c, &cfg, &mut space).iter().map(|ch| ch.prio));
    let mut want = vec![P4, P3, P2, P1, P0];
    want.extend([P0; 7]); // P0 finishes: chunk 11
    want.extend([P1; 24]); // P1 finishes: chunk 35
    want.extend([P2; 14]); // D2 = 15 000 = H2 → In-Debt
    want.extend([P3; 5]); // D3 = 6 000 = H3 → In-Debt
    want.push(P4); // pays D2 back below L2
    want.push(P2);
    assert_eq!(&order[..want.len()], &want[..]);
    assert_eq!(
        order.len(),
        131,
        "131 072 bytes of buffer hold 131 chunks of 1 000"
    );
    // Total bytes are unchanged: draining everything sends exactly 283 000 bytes.
    space = u32::MAX;
    let rest: u32 = feed(&mut c, &cfg, &mut space)
        .iter()
        .map(|ch| ch.len_bytes)
        .sum();
    assert_eq!(rest + 131 * 1000, 283_000);
}

#[test]
fn deadlock_scales_debts_and_clamps_below_low() {
    // Default config, MSS 1000. Make P3 In-Debt alone with P4 empty: P3 sends 6 chunks.
    let cfg = cfg_mss(1000);
    let mut c: Conductor<4> = Conductor::new();
    c.enqueue(Prio::P3, desc(1, 6_000)).unwrap();
    c.enqueue(Prio::P3, desc(2, 5_000)).unwrap();
    let mut space = 6_000;
    assert_eq!(feed(&mut c, &cfg, &mut space).len(), 6);
    // The feed loop's last decision found no space: it needed the deadlock rule, but a decision
    // that sends nothing changes nothing.
    assert!(c.state().is_in_debt(Prio::P3));
    assert_eq!(c.state().debt_of(Prio::P3), 6_000);
    // Next decision: P3 is the only non-empty queue and In-Debt → deadlock rule:
    // D3 = min(trunc(6000 × 1.5/5.25), 3000 − 1) = min(trunc(1714.28…), 2999) = 1714.
    let d = c.next_chunk(&cfg, 1_000);
    assert!(d.deadlock_resolved());
    assert_eq!(d.chunk().unwrap().prio, Prio::P3);
    assert_eq!(c.state().debt_of(Prio::P3), 1714 + 1000);
}

/// Review point 1 (regression): a deadlock resolved in a decision whose chunk then did not fit
/// was discarded, unlike the authors' released conductor (tcp-cats.cc: `ConductorFeedData`
/// returns early only when the free space is 0; otherwise `GetNextPriorityToServe` runs
/// `PerformDebtRedistribution` and keeps it, and the too-big `Send` fails afterwards).
/// Trace: MSS 1000, 6 500 B of space, P3 20 000 B fed until nothing, then P4 5 000 B, then an
/// ack of 10 000 B. After six P3 chunks D3 = 6000 ≥ H3 (In-Debt) and 500 B are free: the next
/// decision resolves the deadlock (D3 = min(trunc(6000·1.5/5.25), 2999) = 1714, Eligible) and
/// keeps it, although the 1000-byte chunk does not fit. So when P4 arrives P3 is Eligible and
/// P3 — not P4 — goes first once the ack frees space.
#[test]
fn deadlock_resolution_discarded_when_chunk_does_not_fit() {
    let cfg = cfg_mss(1000);
    let mut c: Conductor<4> = Conductor::new();
    let mut space = 6_500;
    c.enqueue(Prio::P3, desc(1, 20_000)).unwrap();
    let mut chunks = feed(&mut c, &cfg, &mut space); // the enqueue's attempt + `feed`
    assert_eq!(chunks.len(), 6);
    assert_eq!(space, 500);
    // The decision that ended the feed loop resolved the deadlock and kept it.
    assert_eq!(c.state().debt_of(Prio::P3), 1714);
    assert!(!c.state().is_in_debt(Prio::P3));
    c.enqueue(Prio::P4, desc(2, 5_000)).unwrap();
    // The enqueue's one attempt: P3 is Eligible now, its chunk does not fit; no second deadlock.
    assert_eq!(
        c.next_chunk(&cfg, space),
        Decision::NoSpace {
            prio: Prio::P3,
            len_bytes: 1000,
            deadlock_resolved: false
        }
    );
    space += 10_000;
    chunks = feed(&mut c, &cfg, &mut space);
    assert_eq!(chunks[0].prio, Prio::P3, "{chunks:?}");
}

/// Lead's decision on review point 1: with no free space at all nothing changes (the released
/// code returns before choosing), and a kept resolution cannot make "feed until nothing" loop:
/// after it the chosen queue is Eligible, so the next decision finds no deadlock.
#[test]
fn deadlock_with_zero_space_changes_nothing_and_never_repeats() {
    let cfg = cfg_mss(1000);
    let mut c: Conductor<4> = Conductor::new();
    c.set_state(State::from_raw_parts([0, 0, 0, 6_000], 0b1000));
    c.enqueue(Prio::P3, desc(1, 5_000)).unwrap();
    let before = c.state();
    let d = c.next_chunk(&cfg, 0);
    assert_eq!(
        d,
        Decision::NoSpace {
            prio: Prio::P3,
            len_bytes: 1000,
            deadlock_resolved: false
        }
    );
    assert_eq!(c.state(), before);
    // 999 B free: resolved and kept, chunk does not fit.
    let d = c.next_chunk(&cfg, 999);
    assert!(d.deadlock_resolved() && d.chunk().is_none());
    let resolved = c.state();
    assert_eq!(resolved.debt_of(Prio::P3), 1714);
    for _ in 0..3 {
        let d = c.next_chunk(&cfg, 999);
        assert!(!d.deadlock_resolved() && d.chunk().is_none());
        assert_eq!(c.state(), resolved);
    }
}

/// Review point 5 (regression): a state seeded In-Debt with a zero debt
/// (`State::from_raw_parts([0; 4], 0b0001)`) stalled P0 forever: the deadlock rule only touches
/// queues with `D > 0`, so every decision returned `Empty` with data queued. In operation
/// In-Debt implies `D ≥ L > 0`; `from_raw_parts` now restores that invariant.
#[test]
fn seeded_in_debt_state_with_zero_debt_stalls_queue() {
    let cfg = cfg_mss(1000);
    let mut c: Conductor<4> = Conductor::new();
    c.set_state(State::from_raw_parts([0; 4], 0b0001));
    assert!(!c.state().is_in_debt(Prio::P0));
    c.enqueue(Prio::P0, desc(7, 100)).unwrap();
    let ch = c
        .next_chunk(&cfg, 10_000)
        .chunk()
        .expect("P0 must be served");
    assert_eq!((ch.prio, ch.handle, ch.len_bytes), (Prio::P0, 7, 100));
}

#[test]
fn deadlock_clamp_applies_when_eq1_fails() {
    // M3 = 4.0, M_total = 4.0 + 1.0 (M4): ratio 0.8. H3 = 6000, L3 = 1000: Eq. 1 fails.
    let cfg = Config::new(
        1000,
        [60_000, 30_000, 15_000, 6_000],
        [30_000, 15_000, 7_500, 1_000],
        m([0, 0, 0, 4 * Q, Q]),
    )
    .unwrap();
    assert!(!cfg.eq1_holds());
    let mut c: Conductor<4> = Conductor::new();
    c.enqueue(Prio::P3, desc(1, 20_000)).unwrap();
    let mut space = 6_000;
    feed(&mut c, &cfg, &mut space);
    // trunc(6000 × 0.8) = 4800 ≥ L3: the clamp gives L3 − 1 = 999 and P3 is Eligible.
    let d = c.next_chunk(&cfg, 1_000);
    assert!(d.deadlock_resolved() && d.chunk().is_some());
    assert_eq!(c.state().debt_of(Prio::P3), 999 + 1_000);
}

#[test]
fn payback_reaches_empty_higher_queues() {
    let cfg = cfg_mss(1000);
    let mut c: Conductor<4> = Conductor::new();
    c.enqueue(Prio::P0, desc(1, 3_000)).unwrap();
    let mut space = u32::MAX;
    feed(&mut c, &cfg, &mut space);
    assert_eq!(c.state().debt_of(Prio::P0), 3_000);
    // P0 is now empty; a P4 chunk still pays it back trunc(1000 × 2.0) = 2000.
    c.enqueue(Prio::P4, desc(2, 1_000)).unwrap();
    feed(&mut c, &cfg, &mut space);
    assert_eq!(c.state().debt_of(Prio::P0), 1_000);
}

#[test]
fn p4_never_accrues_debt() {
    let cfg = cfg_mss(1000);
    let mut c: Conductor<4> = Conductor::new();
    c.enqueue(Prio::P4, desc(1, 1_000_000)).unwrap();
    let mut space = u32::MAX;
    assert_eq!(feed(&mut c, &cfg, &mut space).len(), 1000);
    assert_eq!(c.state(), State::new());
}

#[test]
fn forced_state_round_trips_raw_parts() {
    let s = State::from_raw_parts([5, 0, 70_000, 1], 0b1_0100);
    assert_eq!(s.debt_bytes(), [5, 0, 70_000, 1]);
    assert_eq!(s.in_debt_mask(), 0b0100); // bit 4 (P4) ignored
    // Seeded debts are capped at 2^31 so that the per-chunk addition can never wrap.
    let capped = State::from_raw_parts([u32::MAX, 1 << 31, 0, 7], 0b1011);
    assert_eq!(capped.debt_bytes(), [1 << 31, 1 << 31, 0, 7]);
    assert_eq!(capped.in_debt_mask(), 0b1011);
    assert!(s.is_in_debt(Prio::P2) && !s.is_in_debt(Prio::P4));
}

/// A reference model of the conductor's bookkeeping for the proptests: bytes in and out per
/// priority.
#[derive(Debug, Clone)]
enum Op {
    Enq(u8, u32),
    Feed(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..5, 0u32..5_000).prop_map(|(p, l)| Op::Enq(p, l)),
        (0u32..20_000).prop_map(Op::Feed),
    ]
}

fn any_cfg() -> impl Strategy<Value = Config> {
    (
        1u32..3_000,
        prop::array::uniform4(2u32..40_000),
        prop::array::uniform4(1u32..1000),
        prop::array::uniform5(0u32..(4 * Q)),
    )
        .prop_filter_map("valid", |(mss, h, lp, mm)| {
            let l = [0, 1, 2, 3].map(|i| (h[i] * lp[i] / 1000).max(1).min(h[i] - 1));
            Config::new(mss, h, l, m(mm)).ok()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The state's derived masks stay what its raw parts say after every decision: the owing
    /// mask is the queues with `D > 0` (a send sets a queue's owing bit only when its debt was
    /// 0) and the Eligible mask the complement of the In-Debt flags, so rebuilding the state from
    /// its debts and In-Debt mask gives it back.
    #[test]
    fn state_equals_its_raw_parts_after_every_decision(
        cfg in any_cfg(),
        ops in prop::collection::vec(op(), 1..200),
    ) {
        let mut c: Conductor<8> = Conductor::new();
        let mut handle = 0u32;
        let mut decisions = 0usize;
        for o in ops {
            let space = match o {
                Op::Enq(p, l) => {
                    handle += 1;
                    let _ = c.enqueue(Prio::from_index(p as usize).unwrap(), desc(handle, l));
                    1_500
                }
                Op::Feed(space) => space,
            };
            while c.next_chunk(&cfg, space).chunk().is_some() {
                decisions += 1;
                let st = c.state();
                prop_assert_eq!(State::from_raw_parts(st.debt_bytes(), st.in_debt_mask()), st);
                if decisions.is_multiple_of(7) {
                    break;
                }
            }
        }
    }

    /// Byte conservation: per priority, the chunks fed cover every enqueued message exactly once,
    /// in order, with no gap or overlap; after draining, nothing is left and nothing was invented.
    #[test]
    fn conserves_bytes_per_priority(cfg in any_cfg(), ops in prop::collection::vec(op(), 1..200)) {
        let mut c: Conductor<8> = Conductor::new();
        let mut accepted: [Vec<(u32, u32)>; 5] = Default::default();
        let mut seen: [Vec<Chunk>; 5] = Default::default();
        let mut handle = 0u32;
        let record = |ch: Chunk, seen: &mut [Vec<Chunk>; 5]| {
            prop_assert!(ch.len_bytes > 0 && ch.len_bytes <= cfg.mss_bytes());
            seen[ch.prio.index()].push(ch);
            Ok(())
        };
        for o in ops {
            match o {
                Op::Enq(p, l) => {
                    let prio = Prio::from_index(p as usize).unwrap();
                    handle += 1;
                    match c.enqueue(prio, desc(handle, l)) {
                        Ok(()) => accepted[p as usize].push((handle, l)),
                        Err(EnqueueError::ZeroLength(_)) => prop_assert_eq!(l, 0),
                        Err(EnqueueError::QueueFull(_)) => prop_assert_eq!(c.queued_messages(prio), 8),
                    }
                    if let Some(ch) = c.next_chunk(&cfg, 1_500).chunk() { record(ch, &mut seen)?; }
                }
                Op::Feed(mut space) => {
                    while let Some(ch) = c.next_chunk(&cfg, space).chunk() {
                        prop_assert!(ch.len_bytes <= space);
                        space -= ch.len_bytes;
                        record(ch, &mut seen)?;
                    }
                }
            }
        }
        // Drain everything (liveness: with unlimited space the conductor empties every queue).
        let mut guard = 0u64;
        while let Some(ch) = c.next_chunk(&cfg, u32::MAX).chunk() {
            record(ch, &mut seen)?;
            guard += 1;
            prop_assert!(guard < 10_000_000);
        }
        prop_assert_eq!(c.next_chunk(&cfg, u32::MAX), Decision::Empty);
        for p in 0..5 {
            let mut it = seen[p].iter();
            for &(h, len) in &accepted[p] {
                let mut off = 0;
                while off < len {
                    let ch = it.next();
                    prop_assert!(ch.is_some(), "P{} message {} lost at offset {}", p, h, off);
                    let ch = ch.unwrap();
                    prop_assert_eq!((ch.handle, ch.offset_bytes), (h, off));
                    off += ch.len_bytes;
                    prop_assert_eq!(ch.last, off == len);
                }
            }
            prop_assert!(it.next().is_none(), "P{} has chunks nobody enqueued", p);
        }
    }

    /// Liveness after deadlock resolution (review point 6: the old version asserted only the
    /// pre-condition and only with unlimited space). Phase 1 queues one message of `H_p + MSS`
    /// bytes alone, which forces at least one deadlock; phase 2 random messages on P0–P3 (no P4,
    /// so deadlocks recur). Free space is limited and topped up by random acks. For every
    /// resolution: every non-empty queue was In-Debt and P4 empty before; afterwards every
    /// resolved queue holds `D < L` and is Eligible (also when the chunk did not fit); a
    /// resolution is never followed by another one before a chunk is sent; and everything
    /// queued is eventually sent.
    #[test]
    fn live_after_deadlock(cfg in any_cfg(), first in 0usize..4,
                           lens in prop::collection::vec((0u8..4, 1u32..20_000), 1..40),
                           acks in prop::collection::vec(0u32..4_000, 1..50)) {
        let mut c: Conductor<64> = Conductor::new();
        let p0 = Prio::ALL[first];
        let big = cfg.high_bytes(p0).unwrap() + cfg.mss_bytes();
        c.enqueue(p0, desc(1_000, big)).unwrap();
        let mut total = u64::from(big);
        let mut sent = 0u64;
        let mut deadlocks = 0u32;
        let mut space = 0u32;
        let mut ack = acks.iter().cycle();
        let mut last_was_resolution = false;
        for phase in 0..2 {
            if phase == 1 {
                for (i, &(p, l)) in lens.iter().enumerate() {
                    c.enqueue(Prio::from_index(p as usize).unwrap(), desc(i as u32, l)).unwrap();
                    total += u64::from(l);
                }
            }
            let mut guard = 0u64;
            loop {
                guard += 1;
                prop_assert!(guard < 10_000_000, "no progress");
                let before = c.state();
                let ne = c.nonempty_mask();
                let d = c.next_chunk(&cfg, space);
                let after = c.state();
                if d.deadlock_resolved() {
                    prop_assert!(!last_was_resolution, "two resolutions without a chunk sent");
                    prop_assert!(space > 0, "a resolution with no free space");
                    deadlocks += 1;
                    prop_assert_eq!(ne & !before.in_debt_mask() & 0x1F, 0);
                    prop_assert_eq!(ne & 0x10, 0);
                    let sent_from = d.chunk().map(|ch| (ch.prio.index(), ch.len_bytes));
                    for (p, prio) in Prio::ALL[..4].iter().enumerate() {
                        if ne & (1 << p) == 0 || before.debt_bytes()[p] == 0 {
                            continue;
                        }
                        // The resolved debt (payback only lowers queues above the sender).
                        let mut dp = after.debt_bytes()[p];
                        if let Some((j, n)) = sent_from && j == p {
                            dp -= n;
                        }
                        let low = cfg.low_bytes(*prio).unwrap();
                        prop_assert!(dp < low, "P{} resolved to {} ≥ L {}", p, dp, low);
                        if sent_from.map(|(j, _)| j) != Some(p) {
                            prop_assert!(!after.is_in_debt(*prio));
                        }
                    }
                }
                match d {
                    Decision::Empty => break,
                    Decision::NoSpace { .. } => {
                        last_was_resolution |= d.deadlock_resolved();
                        space = space.saturating_add(*ack.next().unwrap() + 1);
                    }
                    Decision::Send { chunk, .. } => {
                        last_was_resolution = false;
                        space -= chunk.len_bytes;
                        sent += u64::from(chunk.len_bytes);
                    }
                }
                prop_assert!(sent <= total);
            }
        }
        prop_assert_eq!(sent, total);
        prop_assert!(deadlocks > 0, "phase 1 must deadlock");
    }

    /// No input panics: arbitrary raw states, configs, enqueues and spaces.
    #[test]
    fn no_input_panics(cfg in any_cfg(), debts in prop::array::uniform4(any::<u32>()), mask in any::<u8>(),
                       ops in prop::collection::vec((0u8..5, any::<u32>(), any::<u32>()), 1..60)) {
        let mut c: Conductor<4> = Conductor::new();
        c.set_state(State::from_raw_parts(debts, mask));
        for (p, l, space) in ops {
            let _ = c.enqueue(Prio::from_index(p as usize).unwrap(), desc(0, l));
            let _ = c.next_chunk(&cfg, space);
        }
    }

    /// The exact deadlock scaling: trunc(D·M_p/M_total) computed without division equals the
    /// exact rational floor, for any debt and multipliers (observed through one deadlock).
    #[test]
    fn deadlock_scaling_is_exact(d in prop_oneof![1u32..(1 << 25), 1u32..=u32::MAX], mm in prop::array::uniform5(0u32..(1 << 22)), p in 0usize..4) {
        let mut mm = mm;
        if mm.iter().all(|&x| x == 0) { mm[4] = 1; }
        let cfg = Config::new(1000, [1 << 24; 4], [(1 << 24) - 1; 4], m(mm)).unwrap();
        let mut c: Conductor<1> = Conductor::new();
        let mut debts = [0u32; 4];
        debts[p] = d;
        c.set_state(State::from_raw_parts(debts, 1 << p));
        c.enqueue(Prio::from_index(p).unwrap(), desc(0, 1)).unwrap();
        let dec = c.next_chunk(&cfg, 1); // sends the 1-byte message after the deadlock rule
        prop_assert!(dec.deadlock_resolved() && dec.chunk().is_some());
        let total: u64 = mm.iter().map(|&x| u64::from(x)).sum();
        // from_raw_parts caps a seeded debt at 2^31 (State::MAX_DEBT_BYTES).
        let d = d.min(State::MAX_DEBT_BYTES);
        let exact = (u128::from(d) * u128::from(mm[p]) / u128::from(total)) as u64;
        let want = exact.min(u64::from((1u32 << 24) - 2)) + 1; // + the 1 byte just sent
        prop_assert_eq!(u64::from(c.state().debt_bytes()[p]), want);
    }
}

#[test]
fn config_size() {
    // docs/cats.md: shared by all connections: 4 + 16 + 16 + 20 + 4 + 16 + 1 → 80 (align 4).
    assert_eq!(core::mem::size_of::<Config>(), 80);
}
