//! CATS starvation bound (docs/cats.md § "Starvation bound"), checked by proptest against the
//! fixed-point conductor: while a queue holds data and is not served, other queues send at most
//! `starvation_bound_bytes` bytes.

use cats_conductor::{Conductor, Config, Decision, Descriptor, Multiplier, Prio};
use proptest::prelude::*;
use sim_host::cats::reference::{RefParams, starvation_bound_bytes};

#[derive(Debug, Clone)]
enum Op {
    Enq(usize, u32),
    Ack(u32),
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn no_queue_waits_longer_than_the_bound(
        mss in 200u32..2000,
        h in prop::array::uniform4(1_000u32..40_000),
        lp in prop::array::uniform4(50u32..950),
        // M_k ≥ 0.25 so that every bound is finite with messages ≥ 100 bytes
        mm in prop::array::uniform5(16_384u32..(3 * 65_536)),
        min_msg in 100u32..1000,
        ops in prop::collection::vec(
            prop_oneof![
                3 => (0usize..5, 0u32..30_000).prop_map(|(p, l)| Op::Enq(p, l)),
                2 => (0u32..8_000).prop_map(Op::Ack),
            ],
            1..400),
    ) {
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
        for (k, op) in ops.into_iter().enumerate() {
            match op {
                Op::Enq(p, l) => {
                    let d = Descriptor { handle: k as u32, len_bytes: l.max(min_msg) };
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
            prop_assert!(worst[q] as f64 <= bound[q], "P{} waited {} bytes > bound {}", q, worst[q], bound[q]);
        }
    }
}
