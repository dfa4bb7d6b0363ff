//! CATS properties on random configurations and traffic, with deterministic seeds:
//! * the starvation bound (docs/cats.md § "Starvation bound") against the fixed-point conductor:
//!   while a queue holds data and is not served, other queues send at most
//!   `starvation_bound_bytes` bytes.

use cats_conductor::{Conductor, Config, Decision, Descriptor, Multiplier, Prio};
use proptest::prelude::*;
use proptest::test_runner::{
    Config as RunnerConfig, RngAlgorithm, TestCaseError, TestRng, TestRunner,
};
use sim_host::cats::reference::{RefParams, starvation_bound_bytes};
use std::cell::RefCell;

#[derive(Debug, Clone)]
enum Op {
    Enq(usize, u32),
    Ack(u32),
}

/// One random starvation case: configuration, shortest message, traffic.
#[derive(Debug, Clone)]
struct StarveCase {
    mss: u32,
    h: [u32; 4],
    lp: [u32; 4],
    mm: [u32; 5],
    min_msg: u32,
    ops: Vec<Op>,
}

fn starve_case() -> impl Strategy<Value = StarveCase> {
    (
        200u32..2000,
        prop::array::uniform4(1_000u32..40_000),
        prop::array::uniform4(50u32..950),
        // M_k ≥ 0.25 so that every bound is finite with messages ≥ 100 bytes
        prop::array::uniform5(16_384u32..(3 * 65_536)),
        100u32..1000,
        prop::collection::vec(
            prop_oneof![
                3 => (0usize..5, 0u32..30_000).prop_map(|(p, l)| Op::Enq(p, l)),
                2 => (0u32..8_000).prop_map(Op::Ack),
            ],
            1..400,
        ),
    )
        .prop_map(|(mss, h, lp, mm, min_msg, ops)| StarveCase {
            mss,
            h,
            lp,
            mm,
            min_msg,
            ops,
        })
}

/// Runs one case on the fixed-point conductor; returns each queue's worst gap / its bound.
fn starve_run(case: &StarveCase) -> Result<[f64; 5], TestCaseError> {
    let StarveCase {
        mss,
        h,
        lp,
        mm,
        min_msg,
        ..
    } = *case;
    let low = [0, 1, 2, 3].map(|i| (h[i] * lp[i] / 1000).clamp(1, h[i] - 1));
    let cfg = Config::new(mss, h, low, mm.map(Multiplier::from_q16_bits)).unwrap();
    let params = RefParams {
        mss: f64::from(mss),
        high: h.map(f64::from),
        low: low.map(f64::from),
        mult: mm.map(|b| f64::from(b) / 65_536.0),
        capacity: 64,
    };
    let bound: [f64; 5] =
        std::array::from_fn(|p| starvation_bound_bytes(&params, f64::from(min_msg), p));
    let mut c: Box<Conductor<64>> = Box::default();
    let mut space = 20_000u32;
    let mut wait = [0u64; 5];
    let mut worst = [0u64; 5];
    let mut feed = |c: &mut Conductor<64>, space: &mut u32, limit: usize| {
        for _ in 0..limit {
            let waiting = c.nonempty_mask();
            match c.next_chunk(&cfg, *space) {
                Decision::Send { chunk, .. } => {
                    *space -= chunk.len_bytes;
                    let j = chunk.prio.index();
                    for q in 0..5 {
                        if q == j {
                            wait[q] = 0;
                        } else if waiting & (1 << q) != 0 {
                            wait[q] += u64::from(chunk.len_bytes);
                            worst[q] = worst[q].max(wait[q]);
                        }
                    }
                }
                _ => break,
            }
        }
    };
    for (k, op) in case.ops.iter().enumerate() {
        match *op {
            Op::Enq(p, l) => {
                let d = Descriptor {
                    handle: k as u32,
                    len_bytes: l.max(min_msg),
                };
                let _ = c.enqueue(Prio::ALL[p], d);
                feed(&mut c, &mut space, 1);
            }
            Op::Ack(b) => {
                space = space.saturating_add(b);
                feed(&mut c, &mut space, usize::MAX);
            }
        }
    }
    space = u32::MAX;
    feed(&mut c, &mut space, usize::MAX);
    prop_assert_eq!(c.next_chunk(&cfg, u32::MAX), Decision::Empty);
    for q in 0..5 {
        prop_assert!(
            worst[q] as f64 <= bound[q],
            "P{} waited {} bytes > bound {}",
            q,
            worst[q],
            bound[q]
        );
    }
    Ok(std::array::from_fn(|q| worst[q] as f64 / bound[q]))
}

/// The starvation bound holds on 200 random configurations and traffic (deterministic seed),
/// and it is not vacuous: over these cases every queue's largest gap reaches at least 50 % of
/// that queue's bound, and some queue's at least 90 % (measured: P0 98.9 %, P1 67.4 %, P2 61.6 %,
/// P3 60.9 %, P4 94.1 %), so a bound at half its value would already fail for every queue.
#[test]
fn no_queue_waits_longer_than_the_bound() {
    let config = RunnerConfig {
        cases: 200,
        failure_persistence: None,
        ..RunnerConfig::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let closest = RefCell::new([0.0f64; 5]);
    let result = runner.run(&starve_case(), |case| {
        let r = starve_run(&case)?;
        let mut c = closest.borrow_mut();
        for q in 0..5 {
            c[q] = c[q].max(r[q]);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let closest = closest.into_inner();
    eprintln!("largest gap / bound per queue: {closest:?}");
    let max = closest.iter().copied().fold(0.0, f64::max);
    assert!(
        closest.iter().all(|&r| r >= 0.5) && max >= 0.9,
        "the bound is not approached: {closest:?}"
    );
}
