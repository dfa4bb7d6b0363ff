//! Deterministic fixture generators: a small fluid simulation of one HPCC sender (driven by the
//! f64 reference) over a path of switches, emitting the INT each ACK would carry.
//!
//! Per ACK (ACK-clocked, one `pkt_bytes` packet per ACK):
//! * the sender's rate is `min(W/T, NIC rate)`; the next ACK arrives `pkt/rate` ns later
//!   (plus up to ±3 % uniform jitter);
//! * every hop receives `copies × rate` (identical copies of this flow: a symmetric incast) plus a
//!   background load (a piecewise-linear function of time, as a fraction of the hop's rate);
//!   its queue integrates arrival − capacity (clamped to [0, 5 MB]); it transmits at its capacity
//!   while the queue is non-empty, otherwise at the arrival rate;
//! * the INT records, per hop, `ts` (the ACK time plus a per-hop offset and jitter, mod 2^24),
//!   the cumulative transmitted bytes (/128, mod 2^20) and the queue (/80);
//! * the reference sender consumes that INT and sets the next window.
//!
//! The feedback has no extra delay, so this is a plausibility model for exercising every branch
//! and number range, not a network simulator. Only `+ − × /` on f64 are used (no libm), so the
//! files are bit-identical on every IEEE-754 machine.

use super::reference::{RefHop, RefParams, Reference, encode_int};
use rand_core::Rng;
use rand_pcg::Pcg64Mcg;
use std::fmt::Write as _;

/// Background load of a hop: piecewise-linear points `(t_ns, fraction of the hop's rate)`,
/// repeating with `period_ns` (0: no repetition; the last value holds).
#[derive(Debug, Clone)]
pub struct Load {
    /// Points, increasing in time, starting at 0.
    pub points: Vec<(f64, f64)>,
    /// Repetition period.
    pub period_ns: f64,
}

impl Load {
    /// A constant load.
    pub fn constant(x: f64) -> Load {
        Load {
            points: vec![(0.0, x)],
            period_ns: 0.0,
        }
    }

    /// The load at time `t`.
    pub fn at(&self, t: f64) -> f64 {
        let t = if self.period_ns > 0.0 {
            t - (t / self.period_ns).floor() * self.period_ns
        } else {
            t
        };
        let mut prev = self.points[0];
        for &p in &self.points[1..] {
            if t < p.0 {
                let f = (t - prev.0) / (p.0 - prev.0);
                return prev.1 + (p.1 - prev.1) * f;
            }
            prev = p;
        }
        prev.1
    }
}

/// One switch egress on the path.
#[derive(Debug, Clone)]
pub struct HopSpec {
    /// Speed code (1..=9).
    pub code: u8,
    /// Background load.
    pub load: Load,
    /// Copies of this flow crossing the hop (≥ 1).
    pub copies: f64,
}

/// A path (what `path_id` names).
#[derive(Debug, Clone)]
pub struct PathSpec {
    /// Path id (12 bits).
    pub id: u16,
    /// Its hops.
    pub hops: Vec<HopSpec>,
}

/// A scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// RNG seed.
    pub seed: u64,
    /// Number of ACKs.
    pub acks: usize,
    /// Parameters (the trace's `# set` lines).
    pub params: RefParams,
    /// Packet size, bytes.
    pub pkt_bytes: f64,
    /// Paths in use: `(first ACK, path)`; the first starts at ACK 0.
    pub paths: Vec<(usize, PathSpec)>,
    /// Initial `ts` of every hop (ns; wraps at 2^24).
    pub ts0: u64,
    /// Initial transmitted-byte counter of every hop (bytes; wraps at 2^27).
    pub tx0: f64,
    /// Every this many ACKs, repeat the previous INT unchanged (Δts = 0: branch `skip`); 0 = never.
    pub dup_every: usize,
    /// Every this many ACKs, send a malformed INT (branch `bad`); 0 = never.
    pub bad_every: usize,
}

/// One generated ACK.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckRow {
    /// Receive time at the sender, ns.
    pub t_ns: u64,
    /// Cumulative ACK (bytes).
    pub ack_seq: u64,
    /// Next byte to send, at the time of the ACK.
    pub snd_nxt: u64,
    /// The INT block as on the wire.
    pub int: Vec<u8>,
}

struct HopState {
    q: f64,
    tx: f64,
    ts_off: f64,
}

fn uniform(rng: &mut Pcg64Mcg) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Runs a scenario.
pub fn simulate(sc: &Scenario) -> Vec<AckRow> {
    let mut rng = Pcg64Mcg::new(u128::from(sc.seed) | 1 << 100);
    let p = sc.params;
    let mut sender = Reference::new(p);
    let nic = p.nic_rate_bps / 8e9; // bytes/ns
    let mut t = 0.0f64;
    let mut acked: u64 = 0;
    let mut rows = Vec::with_capacity(sc.acks);
    let mut path_ix = 0usize;
    let mut hops: Vec<HopState> = Vec::new();
    let mut last_int: Vec<u8> = Vec::new();
    for k in 0..sc.acks {
        if path_ix + 1 < sc.paths.len() && k >= sc.paths[path_ix + 1].0 {
            path_ix += 1;
            hops.clear();
        }
        let path = &sc.paths[path_ix].1;
        if hops.is_empty() {
            for (i, _) in path.hops.iter().enumerate() {
                hops.push(HopState {
                    q: 0.0,
                    tx: sc.tx0 + (i as f64) * 1_000_003.0 * 128.0 + t,
                    ts_off: (i as f64) * 700.0 + 250.0,
                });
            }
        }
        let rate = (sender.w / p.base_rtt_ns).min(nic).max(1e-6);
        let dt = (sc.pkt_bytes / rate * (0.97 + 0.06 * uniform(&mut rng))).min(5e6);
        t += dt;
        let mut int_hops = Vec::with_capacity(path.hops.len());
        for (h, st) in path.hops.iter().zip(hops.iter_mut()) {
            let cap = super::reference::SPEED_GBPS[usize::from(h.code)] / 8.0;
            let arrival = h.copies * rate + h.load.at(t) * cap;
            let q_new = (st.q + (arrival - cap) * dt).clamp(0.0, 5e6);
            let sent = if st.q > 0.0 || q_new > 0.0 {
                (st.q + arrival * dt - q_new).max(0.0)
            } else {
                arrival * dt
            };
            st.q = q_new;
            st.tx += sent;
            let jitter = (uniform(&mut rng) * 20.0).floor();
            let ts = (sc.ts0 as f64 + t + st.ts_off + jitter).floor() as u64;
            int_hops.push(RefHop {
                code: h.code,
                ts: (ts & 0xFF_FFFF) as u32,
                tx: ((st.tx / 128.0).floor() as u64 & 0xF_FFFF) as u32,
                qlen: (st.q / 80.0).floor().min(65_535.0) as u32,
            });
        }
        let mut int = encode_int(path.id, &int_hops);
        if sc.dup_every > 0 && k % sc.dup_every == sc.dup_every - 1 && !last_int.is_empty() {
            int = last_int.clone();
        } else if sc.bad_every > 0 && k % sc.bad_every == sc.bad_every / 2 {
            // Alternate the malformations: reserved speed code, truncated block.
            if (k / sc.bad_every).is_multiple_of(2) {
                int[2] = (int[2] & 0x0F) | 0xC0;
            } else {
                int.pop();
            }
        }
        acked += sc.pkt_bytes as u64;
        let inflight = ((sender.w / sc.pkt_bytes).ceil() as u64).max(1) * sc.pkt_bytes as u64;
        let snd_nxt = acked + inflight;
        sender.on_ack(acked, snd_nxt, &int);
        if !(sc.bad_every > 0 && k % sc.bad_every == sc.bad_every / 2) {
            last_int = int.clone();
        }
        rows.push(AckRow {
            t_ns: t.floor() as u64,
            ack_seq: acked,
            snd_nxt,
            int,
        });
    }
    rows
}

/// The CSV text of a trace: comments, `# set` lines, header, rows.
pub fn to_csv(description: &str, p: &RefParams, rows: &[AckRow]) -> Vec<u8> {
    let mut s = String::with_capacity(rows.len() * 64);
    for l in description.lines() {
        let _ = writeln!(s, "# {l}");
    }
    let _ = writeln!(s, "# set nic_rate_bps={}", p.nic_rate_bps as u64);
    let _ = writeln!(s, "# set base_rtt_ns={}", p.base_rtt_ns as u64);
    let _ = writeln!(s, "# set eta={}", p.eta());
    let _ = writeln!(s, "# set max_stage={}", p.max_stage);
    let _ = writeln!(s, "# set w_ai_bytes={}", p.w_ai_bytes as u64);
    let _ = writeln!(s, "# set min_rate_bps={}", p.min_rate_bps as u64);
    let _ = writeln!(s, "{}", super::HEADER);
    for r in rows {
        let _ = write!(s, "{},{},{},", r.t_ns, r.ack_seq, r.snd_nxt);
        for b in &r.int {
            let _ = write!(s, "{b:02x}");
        }
        s.push('\n');
    }
    s.into_bytes()
}

fn hop(code: u8, load: Load, copies: f64) -> HopSpec {
    HopSpec { code, load, copies }
}

/// 1-hop incast: 4 identical senders (this flow ×4) on a 100G port, plus a burst of other
/// senders every 500 µs (7× the port rate for 20 µs): the queue builds to MBs (U ≫ 1) and drains.
pub fn incast_1hop() -> Scenario {
    let burst = Load {
        points: vec![
            (0.0, 0.0),
            (300_000.0, 0.0),
            (300_001.0, 7.0),
            (320_000.0, 7.0),
            (320_001.0, 0.0),
        ],
        period_ns: 500_000.0,
    };
    Scenario {
        seed: 1,
        acks: 20_000,
        params: RefParams::default(),
        pkt_bytes: 1000.0,
        paths: vec![(
            0,
            PathSpec {
                id: 0x0A1,
                hops: vec![hop(5, burst, 4.0)],
            },
        )],
        ts0: 123_456,
        tx0: 5_000_000.0,
        dup_every: 0,
        bad_every: 0,
    }
}

/// 5 hops of mixed speeds (100G, 400G, 40G, 200G, 10G); a heavy background moves from hop to hop
/// every 600 µs, so the most utilised hop (and τ) keeps changing.
pub fn multihop_moving() -> Scenario {
    let codes = [5u8, 7, 3, 6, 1];
    let period = 600_000.0 * codes.len() as f64;
    let hops = codes
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let start = 600_000.0 * i as f64;
            let heavy = 0.85 + 0.05 * i as f64;
            let mut pts = vec![(0.0, 0.1)];
            pts.push((start + 1.0, 0.1));
            pts.push((start + 100_000.0, heavy));
            pts.push((start + 500_000.0, heavy));
            pts.push((start + 600_000.0, 0.1));
            hop(
                c,
                Load {
                    points: pts,
                    period_ns: period,
                },
                1.0,
            )
        })
        .collect();
    Scenario {
        seed: 2,
        acks: 20_000,
        params: RefParams::default(),
        pkt_bytes: 1000.0,
        paths: vec![(0, PathSpec { id: 0x5C3, hops })],
        ts0: 9_999_999,
        tx0: 77_000_000.0,
        dup_every: 0,
        bad_every: 0,
    }
}

/// A long flow alone with a slowly varying background (40–60 % of a 100G port): HPCC holds U near
/// η, so the trace is mostly AI steps with a multiplicative step every maxStage updates.
/// Testbed base RTT (paper §5: T = 9 µs), set through `# set`.
pub fn near_eta() -> Scenario {
    let load = Load {
        points: vec![
            (0.0, 0.4),
            (1_000_000.0, 0.6),
            (2_000_000.0, 0.45),
            (3_000_000.0, 0.55),
            (4_000_000.0, 0.4),
        ],
        period_ns: 4_000_000.0,
    };
    Scenario {
        seed: 3,
        acks: 20_000,
        params: RefParams {
            base_rtt_ns: 9_000.0,
            ..RefParams::default()
        },
        pkt_bytes: 1000.0,
        paths: vec![(
            0,
            PathSpec {
                id: 0x0E7,
                hops: vec![hop(5, load, 1.0)],
            },
        )],
        ts0: 42,
        tx0: 0.0,
        dup_every: 0,
        bad_every: 0,
    }
}

/// Counters start just below their wrap (ts 2^24 ns − 0.6 ms, tx bytes 2^27 − 4 MB), so both wrap
/// early; the path changes twice (2 hops → 3 hops, then a new path_id with 3 hops); every 997th
/// ACK repeats the previous INT (skip) and every 1 009th is malformed (bad).
pub fn wrap_pathchange() -> Scenario {
    let a = PathSpec {
        id: 0x111,
        hops: vec![
            hop(5, Load::constant(0.5), 1.0),
            hop(6, Load::constant(0.2), 1.0),
        ],
    };
    let wave = Load {
        points: vec![(0.0, 0.2), (500_000.0, 0.9), (1_000_000.0, 0.2)],
        period_ns: 1_000_000.0,
    };
    let b = PathSpec {
        id: 0x222,
        hops: vec![
            hop(5, Load::constant(0.3), 1.0),
            hop(1, Load::constant(0.0), 1.0),
            hop(4, wave.clone(), 1.0),
        ],
    };
    let c = PathSpec {
        id: 0x333,
        hops: vec![
            hop(2, Load::constant(0.1), 1.0),
            hop(8, wave, 1.0),
            hop(9, Load::constant(0.9), 1.0),
        ],
    };
    Scenario {
        seed: 4,
        acks: 20_000,
        params: RefParams::default(),
        pkt_bytes: 1000.0,
        paths: vec![(0, a), (8_000, b), (14_000, c)],
        ts0: (1 << 24) - 600_000,
        tx0: (1u64 << 27) as f64 - 4_000_000.0,
        dup_every: 997,
        bad_every: 1009,
    }
}

/// The INT trace fixtures: `(file name, description, scenario)`.
pub fn scenarios() -> Vec<(&'static str, &'static str, Scenario)> {
    vec![
        (
            "incast_1hop.csv",
            "1-hop incast: 4 identical senders on a 100G port plus a 7x burst every 500 us;\nqueue builds to MBs (U well above 1) and drains. Generator: sim-host/src/hpcc/generate.rs incast_1hop.",
            incast_1hop(),
        ),
        (
            "multihop_moving.csv",
            "5 hops (100G, 400G, 40G, 200G, 10G); the congested hop moves every 600 us.\nGenerator: sim-host/src/hpcc/generate.rs multihop_moving.",
            multihop_moving(),
        ),
        (
            "near_eta.csv",
            "A long flow near eta (40-60 % background on 100G, T = 9 us): frequent AI steps.\nGenerator: sim-host/src/hpcc/generate.rs near_eta.",
            near_eta(),
        ),
        (
            "wrap_pathchange.csv",
            "24-bit ts and 20-bit tx counters wrap early; path changes at ACK 8000 (2 -> 3 hops) and 14000 (new path_id);\nduplicate INTs (skip) and malformed INTs (bad). Generator: sim-host/src/hpcc/generate.rs wrap_pathchange.",
            wrap_pathchange(),
        ),
    ]
}
