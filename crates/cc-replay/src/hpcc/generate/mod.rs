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
//!
//! Knobs beyond the model: the flow's initial byte sequence number (`seq0`, so a trace can cross
//! the 2^32 wrap of the `u32` columns), planted exact ties between the busiest hop and another
//! one ([`TieSpec`]), path changes, repeated and malformed INT blocks.

pub mod capture;

use super::reference::{RefHop, RefParams, RefState, encode_int, hop_utilisation};
use cc_trace::hpcc::AckRow;
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
    /// The flow's first byte sequence number (the CSV columns are taken modulo 2^32, so a
    /// `seq0` just below 2^32 makes the trace cross the wrap).
    pub seq0: u64,
    /// Exact ties planted between the busiest hop and another hop; `None`: never.
    pub ties: Option<TieSpec>,
    /// A standing queue of other traffic in every hop's `qlen` report: uniform in
    /// `[0, queue_noise_bytes)`, drawn per report (the model's own queue is unchanged); 0: none.
    pub queue_noise_bytes: f64,
}

/// Planted exact ties: on every `every`-th ACK (when the previous INT was a normal one of the
/// same path), the busiest hop `b` of the model (exact `u'`) gets a partner `s` (another hop
/// whose speed is `r ≥ 1` times `b`'s, chosen at random) whose reported telemetry is rewritten
/// so that `u'_s = u'_b` **exactly** while `Δts_s = c·Δts_b` (`c ∈ 2..=6`: the partner's
/// sample is older). With `S` the hop's 1600/G factor and `D = r·q_b − q_s` (queue difference,
/// 80-B units), HPCC Eqn 2 gives the tie when
///
/// `Δtx_s = r·c·Δtx_b + 5·c·Δts_b·D / (8T)`,
///
/// an integer when `D` is a multiple of `8T / gcd(8T, 5·c·Δts_b)`. The generator picks `c`, a
/// timestamp jitter of `b` (0–63 ns, which moves `Δts_b`) and the multiple `D` nearest to the
/// model's queues, with `q_s` no larger than the partner's previous `qlen` (HPCC Alg. 1 uses the
/// smaller of the two), and keeps the plant only if the pair is still the busiest (exact
/// check). The partner's counters then continue from the planted values. The two hops have
/// different `Δts`, so which one wins the tie (the first on the path) decides `τ`.
#[derive(Debug, Clone, Copy)]
pub struct TieSpec {
    /// Try every this many ACKs.
    pub every: usize,
}

struct HopState {
    q: f64,
    tx: f64,
    ts_off: f64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The hop's `u'` against its previous report, as an exact rational (`None` when `Δts = 0`).
fn exact_u(last: &RefHop, h: &RefHop, t: f64) -> Option<super::reference::Rational> {
    hop_utilisation(last, h, t).map(|(_, e, _)| e)
}

/// Plants an exact tie into `now` (the model's reports for this ACK; `last` the previous ones),
/// as [`TieSpec`] describes. Returns the changes to apply to the model's hop state:
/// `(hop, timestamp shift ns, tx shift in 128-B units)` for each rewritten hop.
fn plant_tie(
    now: &mut [RefHop],
    last: &[RefHop],
    t_ns: u64,
    rng: &mut Pcg64Mcg,
) -> Option<Vec<(usize, i64, i64)>> {
    let t = t_ns as f64;
    let vals: Vec<_> = now
        .iter()
        .zip(last)
        .map(|(h, l)| exact_u(l, h, t))
        .collect();
    // The busiest hop (the first one on an exact tie).
    let mut b: Option<usize> = None;
    for (i, v) in vals.iter().enumerate() {
        if let Some(v) = v
            && b.is_none_or(|j| v.gt(vals[j].expect("measured")))
        {
            b = Some(i);
        }
    }
    let b = b?;
    let gb = super::reference::SPEED_GBPS[usize::from(now[b].code)] as u64;
    let partners: Vec<usize> = (0..now.len())
        .filter(|&i| {
            let gs = super::reference::SPEED_GBPS[usize::from(now[i].code)] as u64;
            i != b && gs.is_multiple_of(gb)
        })
        .collect();
    if partners.is_empty() {
        return None;
    }
    let s = partners[(rng.next_u64() % partners.len() as u64) as usize];
    let r = super::reference::SPEED_GBPS[usize::from(now[s].code)] as u64 / gb;
    let (lb, ls) = (last[b], last[s]);
    let x_b = u64::from(now[b].tx.wrapping_sub(lb.tx) & 0xF_FFFF);
    let q_b = u64::from(now[b].qlen.min(lb.qlen));
    let d_b0 = u64::from(now[b].ts.wrapping_sub(lb.ts) & 0xFF_FFFF);
    let q_s_max = u64::from(ls.qlen); // q_s ≤ the previous report, so min(q_s, prev) = q_s
    let q_s_model = u64::from(now[s].qlen).min(q_s_max);
    let want_d = (r * q_b) as i64 - q_s_model as i64;
    let f = 8 * t_ns;
    // (cost, c, d_b, D, x_s)
    let mut best: Option<(u64, u64, u64, i64, u64)> = None;
    for jitter in 0..64u64 {
        let d_b = d_b0 + jitter;
        for c in 2..=6u64 {
            if d_b == 0 || c * d_b >= 1 << 24 {
                continue; // Δts of both hops must fit the 24-bit timestamp
            }
            let lattice = (f / gcd(f, 5 * c * d_b)) as i64;
            let lo = (r * q_b) as i64 - q_s_max as i64; // D range: q_s ∈ [0, q_s_max]
            let hi = (r * q_b) as i64;
            let below = want_d.div_euclid(lattice) * lattice;
            for d in [below, below + lattice] {
                if d < lo || d > hi {
                    continue;
                }
                let x_s = (r * c * x_b) as i64 + 5 * (c * d_b) as i64 * d / f as i64;
                if !(0..1 << 20).contains(&x_s) {
                    continue;
                }
                let cost = d.abs_diff(want_d);
                if best.is_none_or(|bst| cost < bst.0) {
                    best = Some((cost, c, d_b, d, x_s as u64));
                }
            }
        }
    }
    let (_, c, d_b, d, x_s) = best?;
    let q_s = ((r * q_b) as i64 - d) as u32;
    let mut nb = now[b];
    nb.ts = (lb.ts + d_b as u32) & 0xFF_FFFF;
    let ns = RefHop {
        code: now[s].code,
        ts: (ls.ts + (c * d_b) as u32) & 0xFF_FFFF,
        tx: (ls.tx + x_s as u32) & 0xF_FFFF,
        qlen: q_s,
    };
    let (ub, us) = (exact_u(&lb, &nb, t)?, exact_u(&ls, &ns, t)?);
    debug_assert!(ub.ge(us) && us.ge(ub), "planted tie is not exact");
    // Still the busiest pair?
    for (i, v) in vals.iter().enumerate() {
        if i != b && i != s && v.is_some_and(|v| v.gt(ub)) {
            return None;
        }
    }
    let shift = |new: u32, old: u32, bits: u32| {
        let m = 1i64 << bits;
        let d = (i64::from(new) - i64::from(old)).rem_euclid(m);
        if d >= m / 2 { d - m } else { d }
    };
    let changes = vec![
        (b, shift(nb.ts, now[b].ts, 24), 0),
        (s, shift(ns.ts, now[s].ts, 24), shift(ns.tx, now[s].tx, 20)),
    ];
    now[b] = nb;
    now[s] = ns;
    Some(changes)
}

fn uniform(rng: &mut Pcg64Mcg) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Runs a scenario.
pub fn simulate(sc: &Scenario) -> Vec<AckRow> {
    let mut rng = Pcg64Mcg::new(u128::from(sc.seed) | 1 << 100);
    let p = sc.params;
    let mut sender = RefState::new(p);
    let nic = p.nic_rate_bps / 8e9; // bytes/ns
    let mut t = 0.0f64;
    let mut acked: u64 = sc.seq0;
    let mut rows = Vec::with_capacity(sc.acks);
    let mut path_ix = 0usize;
    let mut hops: Vec<HopState> = Vec::new();
    let mut last_int: Vec<u8> = Vec::new();
    // The hops of the last INT the sender stored (what HPCC Alg. 1 calls L), on the current path.
    let mut stored: Option<Vec<RefHop>> = None;
    for k in 0..sc.acks {
        if path_ix + 1 < sc.paths.len() && k >= sc.paths[path_ix + 1].0 {
            path_ix += 1;
            hops.clear();
            stored = None;
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
            let others = if sc.queue_noise_bytes > 0.0 {
                uniform(&mut rng) * sc.queue_noise_bytes
            } else {
                0.0
            };
            int_hops.push(RefHop {
                code: h.code,
                ts: (ts & 0xFF_FFFF) as u32,
                tx: ((st.tx / 128.0).floor() as u64 & 0xF_FFFF) as u32,
                qlen: ((st.q + others) / 80.0).floor().min(65_535.0) as u32,
            });
        }
        let dup = sc.dup_every > 0 && k % sc.dup_every == sc.dup_every - 1 && !last_int.is_empty();
        let bad = sc.bad_every > 0 && k % sc.bad_every == sc.bad_every / 2;
        if let (Some(tie), Some(prev)) = (sc.ties, &stored)
            && k % tie.every == tie.every - 1
            && !dup
            && !bad
            && let Some(changes) = plant_tie(&mut int_hops, prev, p.base_rtt_ns as u64, &mut rng)
        {
            for (i, dts, dtx) in changes {
                hops[i].ts_off += dts as f64;
                hops[i].tx += dtx as f64 * 128.0;
            }
        }
        let mut int = encode_int(path.id, &int_hops);
        if dup {
            int = last_int.clone();
        } else if bad {
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
        if !bad {
            last_int = int.clone();
            if !dup {
                stored = Some(int_hops);
            }
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
        // Sequence numbers are u32 on the wire and in the trace: modulo 2^32.
        let _ = write!(
            s,
            "{},{},{},",
            r.t_ns,
            r.ack_seq & 0xFFFF_FFFF,
            r.snd_nxt & 0xFFFF_FFFF
        );
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
        seq0: 0,
        ties: None,
        queue_noise_bytes: 0.0,
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
        seq0: 0,
        ties: None,
        queue_noise_bytes: 0.0,
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
        seq0: 0,
        ties: None,
        queue_noise_bytes: 0.0,
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
        seq0: 0,
        ties: None,
        queue_noise_bytes: 0.0,
    }
}

/// A heavy background that visits each listed hop in turn: `(hop index, peak load)`; each visit
/// ramps up over 100 µs, holds 300 µs, ramps down over 100 µs; `base` elsewhere.
fn moving_load(n_hops: usize, visits: &[(usize, f64)], base: f64) -> Vec<Load> {
    let slot = 600_000.0;
    let period = slot * visits.len() as f64;
    (0..n_hops)
        .map(|h| {
            let mut pts = vec![(0.0, base)];
            for (v, &(hop, peak)) in visits.iter().enumerate() {
                if hop != h {
                    continue;
                }
                let start = slot * v as f64;
                pts.push((start + 1.0, base));
                pts.push((start + 100_000.0, peak));
                pts.push((start + 400_000.0, peak));
                pts.push((start + 500_000.0, base));
            }
            Load {
                points: pts,
                period_ns: period,
            }
        })
        .collect()
}

/// A long 200 Gb/s flow (4 KiB packets, one ACK each) whose byte sequence numbers cross 2^32
/// halfway through: `seq0 = 2^32 − 51 200 000`, 25 000 ACKs (102.4 MB). Five hops of a 3-tier
/// Clos (200G ToR up, 400G agg, 800G core, 400G agg, 200G ToR down); the ToR down port takes
/// an incast burst (1.6× its rate for 40 µs every 400 µs), the agg/core ports a slowly moving
/// 30–90 % background. Wc must keep updating once per RTT after the wrap.
pub fn seq_wrap_long_flow() -> Scenario {
    let codes = [6u8, 7, 8, 7, 6];
    let mut loads = moving_load(codes.len(), &[(1, 0.9), (2, 0.8), (3, 0.9)], 0.3);
    loads[0] = Load::constant(0.1);
    loads[4] = Load {
        points: vec![
            (0.0, 0.2),
            (200_000.0, 0.2),
            (200_001.0, 1.6),
            (240_000.0, 1.6),
            (240_001.0, 0.2),
        ],
        period_ns: 400_000.0,
    };
    let hops = codes
        .iter()
        .zip(loads)
        .map(|(&c, l)| hop(c, l, 1.0))
        .collect();
    Scenario {
        seed: 5,
        acks: 25_000,
        params: RefParams {
            nic_rate_bps: 200e9,
            ..RefParams::default()
        },
        pkt_bytes: 4096.0,
        paths: vec![(0, PathSpec { id: 0x7A1, hops })],
        ts0: 3_141_592,
        tx0: 12_345_678.0,
        dup_every: 0,
        bad_every: 0,
        seq0: (1 << 32) - 51_200_000,
        ties: None,
        queue_noise_bytes: 0.0,
    }
}

/// Exact ties between the busiest hop and another one ([`TieSpec`], tried every 3rd ACK) on a
/// 5-hop path of mixed speeds (100G ToR up, three 400G agg/core ports, 100G ToR down) with
/// congestion moving across the 400G ports and the ToR down port, then (ACK 14 000) a 3-hop path
/// (200G, 400G, 200G): ties between equal speeds and between 100G/200G and 400G hops (speed ratio
/// 4 and 2), where the first hop on the path is sometimes the busiest one, sometimes its partner.
pub fn ties_multihop() -> Scenario {
    let a_codes = [5u8, 7, 7, 7, 5];
    let a_loads = moving_load(
        a_codes.len(),
        &[(1, 0.95), (4, 0.7), (2, 1.02), (3, 0.9), (0, 0.6)],
        0.05,
    );
    let a = PathSpec {
        id: 0x3E5,
        hops: a_codes
            .iter()
            .zip(a_loads)
            .map(|(&c, l)| hop(c, l, 1.0))
            .collect(),
    };
    let b_codes = [6u8, 7, 6];
    let b_loads = moving_load(b_codes.len(), &[(2, 0.8), (1, 0.97), (0, 0.5)], 0.1);
    let b = PathSpec {
        id: 0x3E6,
        hops: b_codes
            .iter()
            .zip(b_loads)
            .map(|(&c, l)| hop(c, l, 1.0))
            .collect(),
    };
    Scenario {
        seed: 6,
        acks: 24_000,
        params: RefParams::default(),
        pkt_bytes: 1000.0,
        paths: vec![(0, a), (14_000, b)],
        ts0: 16_000_000,
        tx0: 1_000_000.0,
        dup_every: 0,
        bad_every: 0,
        seq0: 7_777_777,
        ties: Some(TieSpec { every: 3 }),
        queue_noise_bytes: 40_000.0,
    }
}

/// The INT trace fixtures: `(file name, description, scenario)`.
pub fn scenarios() -> Vec<(&'static str, &'static str, Scenario)> {
    vec![
        (
            "incast_1hop.csv",
            "1-hop incast: 4 identical senders on a 100G port plus a 7x burst every 500 us;\nqueue builds to MBs (U well above 1) and drains. Generator: crates/cc-replay/src/hpcc/generate/mod.rs incast_1hop.",
            incast_1hop(),
        ),
        (
            "multihop_moving.csv",
            "5 hops (100G, 400G, 40G, 200G, 10G); the congested hop moves every 600 us.\nGenerator: crates/cc-replay/src/hpcc/generate/mod.rs multihop_moving.",
            multihop_moving(),
        ),
        (
            "near_eta.csv",
            "A long flow near eta (40-60 % background on 100G, T = 9 us): frequent AI steps.\nGenerator: crates/cc-replay/src/hpcc/generate/mod.rs near_eta.",
            near_eta(),
        ),
        (
            "wrap_pathchange.csv",
            "24-bit ts and 20-bit tx counters wrap early; path changes at ACK 8000 (2 -> 3 hops) and 14000 (new path_id);\nduplicate INTs (skip) and malformed INTs (bad). Generator: crates/cc-replay/src/hpcc/generate/mod.rs wrap_pathchange.",
            wrap_pathchange(),
        ),
        (
            "seq_wrap_long_flow.csv",
            "A long 200G flow (4 KiB per ACK) whose byte sequence numbers cross 2^32 at ACK ~12 500;
5 hops 200G/400G/800G/400G/200G, incast bursts on the last hop. Generator: crates/cc-replay/src/hpcc/generate/mod.rs seq_wrap_long_flow.",
            seq_wrap_long_flow(),
        ),
        (
            "ties_multihop.csv",
            "Exact ties between the busiest hop and another one (different dts) every 3rd ACK when they can be planted;
100G/400G/400G/400G/100G, then 200G/400G/200G from ACK 14000. Generator: crates/cc-replay/src/hpcc/generate/mod.rs ties_multihop.",
            ties_multihop(),
        ),
    ]
}
