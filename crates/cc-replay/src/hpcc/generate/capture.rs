//! The frames of the shipped capture fixtures: flows made by the INT trace generator
//! ([`super::simulate`]) and written as RoCEv2 frames (`cc_trace::capture::write`).

use super::{HopSpec, Scenario};
use cc_trace::capture::{CaptureFlow, frames_of};

/// A capture fixture's flow: `acks` ACKs of 1000-byte packets over one path of `hops`, its INT
/// timestamps starting at `seed · ts_step_ns`, the paper's parameters, no duplicates, no bad INT.
fn one_path(
    seed: u64,
    acks: usize,
    ts_step_ns: u64,
    id: u16,
    hops: Vec<super::HopSpec>,
) -> super::Scenario {
    super::Scenario {
        seed,
        acks,
        params: cc_reference::hpcc::RefParams::default(),
        pkt_bytes: 1000.0,
        paths: vec![(0, super::PathSpec { id, hops })],
        ts0: ts_step_ns * seed,
        tx0: 0.0,
        dup_every: 0,
        bad_every: 0,
        seq0: 0,
        ties: None,
        queue_noise_bytes: 0.0,
    }
}

/// The frames of the shipped capture: two flows (from 10.0.0.1 QP 17 to 10.0.0.2 QP 721, from
/// 10.0.0.3 QP 34 to 10.0.0.2 QP 738) over two 1-hop/2-hop paths, 400 ACKs each, with the data
/// packets they pace out. PSNs start at 0.
pub fn capture_frames() -> Vec<(u64, Vec<u8>)> {
    use super::{Load, simulate};
    let mk = |seed: u64, id: u16, hops: Vec<HopSpec>| one_path(seed, 400, 1_000_000, id, hops);
    let burst = Load {
        points: vec![
            (0.0, 0.2),
            (10_000.0, 0.2),
            (10_001.0, 3.0),
            (15_000.0, 3.0),
            (15_001.0, 0.2),
        ],
        period_ns: 25_000.0,
    };
    let flow = |src: [u8; 4], qp: u32, sc: Scenario| CaptureFlow {
        src,
        dst: [10, 0, 0, 2],
        data_qp: 0x2C0 + qp,
        ack_qp: qp,
        sport: 0xC000 + qp as u16,
        psn0: 0,
        pkt_bytes: 1000,
        seq0: 0,
        rows: simulate(&sc),
    };
    frames_of(&[
        flow(
            [10, 0, 0, 1],
            17,
            mk(
                11,
                0x0B1,
                vec![HopSpec {
                    code: 5,
                    load: burst.clone(),
                    copies: 2.0,
                }],
            ),
        ),
        flow(
            [10, 0, 0, 3],
            34,
            mk(
                12,
                0x0B2,
                vec![
                    HopSpec {
                        code: 7,
                        load: Load::constant(0.3),
                        copies: 1.0,
                    },
                    HopSpec {
                        code: 5,
                        load: burst,
                        copies: 2.0,
                    },
                ],
            ),
        ),
    ])
}

/// The frames of the PSN-wrap capture: two long flows whose 24-bit PSNs wrap (first PSN
/// `2^24 − 1 600` and `2^24 − 200`), 3 000 ACKs each, so that ACKs before and after the wrap
/// (and ACKs in flight across it) are replayed. From 10.0.1.1 QP 0x51 to 10.0.2.1 QP 0x151 over
/// 100G ToR up, 400G spine, 100G ToR down (incast bursts on the last port); from 10.0.1.2 QP
/// 0x52 to 10.0.2.1 QP 0x152 over a 400G spine port and a 25G ToR down port (a slower
/// receiver).
pub fn psn_wrap_frames() -> Vec<(u64, Vec<u8>)> {
    psn_wrap_frames_with([(1 << 24) - 1_600, (1 << 24) - 200])
}

/// [`psn_wrap_frames`] with chosen first PSNs (e.g. `[0, 0]`: the same traffic, no wrap).
pub fn psn_wrap_frames_with(psn0: [u32; 2]) -> Vec<(u64, Vec<u8>)> {
    use super::{Load, simulate};
    let mk = |seed: u64, id: u16, hops: Vec<HopSpec>| Scenario {
        ts0: 5_000_000 + 1_000 * seed,
        tx0: 3_000_000.0 * seed as f64,
        queue_noise_bytes: 8_000.0,
        ..one_path(seed, 3_000, 0, id, hops)
    };
    let incast = Load {
        points: vec![
            (0.0, 0.1),
            (60_000.0, 0.1),
            (60_001.0, 2.5),
            (80_000.0, 2.5),
            (80_001.0, 0.1),
        ],
        period_ns: 150_000.0,
    };
    let hop = |code, load, copies| HopSpec { code, load, copies };
    let flow = |src: [u8; 4], qp: u32, psn0: u32, sc: Scenario| CaptureFlow {
        src,
        dst: [10, 0, 2, 1],
        data_qp: 0x100 + qp,
        ack_qp: qp,
        sport: 0xC000 + qp as u16,
        psn0,
        pkt_bytes: 1000,
        seq0: 0,
        rows: simulate(&sc),
    };
    frames_of(&[
        flow(
            [10, 0, 1, 1],
            0x51,
            psn0[0],
            mk(
                21,
                0x5A1,
                vec![
                    hop(5, Load::constant(0.2), 1.0),
                    hop(7, Load::constant(0.6), 1.0),
                    hop(5, incast, 1.0),
                ],
            ),
        ),
        flow(
            [10, 0, 1, 2],
            0x52,
            psn0[1],
            mk(
                22,
                0x5A2,
                vec![
                    hop(7, Load::constant(0.5), 1.0),
                    hop(2, Load::constant(0.3), 1.0),
                ],
            ),
        ),
    ])
}

/// The frames of `roce_pairs.pcapng`: RoCE conversations as NICs write them, each end with its
/// own QPN, 600 ACKs per flow. From 10.0.3.1 two connections to 10.0.3.2 (QP 0x0A1 → 0x1B1 and
/// QP 0x0A2 → 0x1B2, told apart by their UDP source ports), and traffic back on the first one
/// (10.0.3.2 QP 0x1B1 → 10.0.3.1 QP 0x0A1: both directions of one QP pair, two flows); over
/// 100G, 400G + 100G and 200G paths with bursts.
pub fn roce_pairs_frames() -> Vec<(u64, Vec<u8>)> {
    use super::{Load, simulate};
    let mk = |seed: u64, id: u16, hops: Vec<HopSpec>| one_path(seed, 600, 2_000_000, id, hops);
    let burst = Load {
        points: vec![
            (0.0, 0.1),
            (8_000.0, 0.1),
            (8_001.0, 1.6),
            (11_000.0, 1.6),
            (11_001.0, 0.1),
        ],
        period_ns: 30_000.0,
    };
    let hop = |code, load, copies| HopSpec { code, load, copies };
    let (a, b) = ([10, 0, 3, 1], [10, 0, 3, 2]);
    let flow = |src, dst, ack_qp, data_qp, sport, psn0, sc: Scenario| CaptureFlow {
        src,
        dst,
        data_qp,
        ack_qp,
        sport,
        psn0,
        pkt_bytes: 1000,
        seq0: 0,
        rows: simulate(&sc),
    };
    frames_of(&[
        flow(
            a,
            b,
            0x0A1,
            0x1B1,
            0xD0A1,
            100,
            mk(31, 0x3A1, vec![hop(5, burst.clone(), 1.0)]),
        ),
        flow(
            a,
            b,
            0x0A2,
            0x1B2,
            0xD0A2,
            7_000,
            mk(
                32,
                0x3A2,
                vec![hop(7, Load::constant(0.2), 1.0), hop(5, burst.clone(), 1.0)],
            ),
        ),
        flow(
            b,
            a,
            0x1B1,
            0x0A1,
            0xD0A1,
            0xFF_FF00,
            mk(33, 0x3A3, vec![hop(6, burst, 1.0)]),
        ),
    ])
}
