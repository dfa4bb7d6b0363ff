//! HPCC as the authors' ns-3 simulator computes it (`--controller ns3`): `RdmaHw::HandleAckHp`
//! and `RdmaHw::UpdateRateHp` in `simulation/src/point-to-point/model/rdma-hw.cc` at 9f4be2a,
//! the single-rate variant their `run.py` runs (`MULTI_RATE 0`, `SAMPLE_FEEDBACK 0`, `FAST_REACT
//! 1`, `VAR_WIN 1`), with ns-3's own arithmetic: the utilisation in `double`, rates as whole
//! b/s truncated by ns-3's `DataRate` (`DataRate(bps / c)`), the window `m_win · rate / max
//! rate` in integers.
//!
//! It is HPCC Alg. 1 in the rate domain (`R = Rc / (U/η) + R_AI` for `W = Wc /
//! (U/η) + W_AI`), the same algorithm as the crate and the f64 reference; what it adds is ns-3's
//! rounding, so that a run on the ns-3 switch model (`switch_model = "ns3"`) can agree with
//! ns-3's own run flow by flow (docs/sim.md, "Agreement with ns-3"). Not a firmware
//! implementation and not the paper's reference: an instrument for comparing simulators.
//!
//! Its parameters are the run's HPCC ones: `T` = `base_rtt_ns` (ns-3's `m_baseRtt`), `η`,
//! `maxStage` (`MI_THRESH`), `R_AI` = `rate_ai_bps` (ns-3's `RATE_AI`) or else `W_AI · 8 / T`
//! truncated to b/s, the NIC rate
//! (`m_max_rate`), `min_rate_bps` (`MIN_RATE`), and the window bound `m_win = nic_rate · T / 8`
//! (third.cc's `maxBdp` with `GLOBAL_T 1`).

/// One INT hop as ns-3 keeps it (`IntHop` in `src/network/utils/int-header.h`), in bytes:
/// the wire format's units (`hpcc_cc::int`: 128-byte tx units mod 2^20, 80-byte queue units)
/// times their size.
#[derive(Clone, Copy, Default)]
struct Hop {
    /// Line rate, b/s.
    line_bps: u64,
    /// Timestamp, ns mod 2^24.
    time: u32,
    /// Transmitted bytes / 128, mod 2^20.
    tx_units: u32,
    /// Queue, bytes.
    qlen: u64,
}

/// The hops of an INT block as on the wire: a 2-byte header (`nhop << 12 | path_id`) then
/// 8-byte big-endian words `B:4 | ts:24 | tx:20 | qlen:16`. `None` when the block is malformed.
fn hops(int: &[u8]) -> Option<Vec<Hop>> {
    let (h, rest) = int.split_first_chunk::<2>()?;
    let n = usize::from(u16::from_be_bytes(*h) >> 12);
    if rest.len() != 8 * n {
        return None;
    }
    Some(
        rest.chunks_exact(8)
            .map(|c| {
                let w = u64::from_be_bytes(c.try_into().unwrap_or([0; 8]));
                Hop {
                    // The wire format's speed codes (1 = 10 G … 9 = 1.6 T).
                    line_bps: hpcc_cc::int::SPEED_BPS
                        .get((w >> 60) as usize)
                        .copied()
                        .unwrap_or(0),
                    time: ((w >> 36) & 0xFF_FFFF) as u32,
                    tx_units: ((w >> 16) & 0xF_FFFF) as u32,
                    qlen: (w & 0xFFFF) * 80,
                }
            })
            .collect(),
    )
}

/// One flow's ns-3 HPCC state (`RdmaQueuePair::hp`, `m_rate`).
pub(super) struct Ns3Hpcc {
    /// `m_max_rate`: the NIC rate, b/s.
    max_rate: u64,
    /// `m_rate`: the rate the NIC paces at, b/s.
    rate: u64,
    /// `hp.m_curRate`: the reference rate `Rc`, b/s.
    cur_rate: u64,
    /// `hp.u`, starting at 1.
    u: f64,
    /// `hp.m_incStage`.
    inc_stage: u32,
    /// `hp.m_lastUpdateSeq`.
    last_update_seq: u32,
    /// `hp.hop`: the INT of the last ACK.
    hop: Vec<Hop>,
    /// `m_baseRtt` (T), ns.
    base_rtt_ns: u64,
    /// `m_win`: the window at the NIC rate, bytes.
    win: u64,
    /// `m_targetUtil` (η).
    eta: f64,
    /// `m_miThresh` (maxStage).
    mi_thresh: u32,
    /// `m_rai`, b/s.
    rai: u64,
    /// `m_minRate`, b/s.
    min_rate: u64,
}

impl Ns3Hpcc {
    /// A flow at the NIC rate (`RdmaHw::AddQueuePair`), with the run's parameters; `R_AI`
    /// is `rate_ai_bps` when given, else `W_AI · 8 / T` truncated.
    pub(super) fn new(p: &hpcc_cc::Params, rate_ai_bps: Option<u64>) -> Ns3Hpcc {
        let t = u64::from(p.base_rtt_ns);
        Ns3Hpcc {
            max_rate: p.nic_rate_bps,
            rate: p.nic_rate_bps,
            cur_rate: p.nic_rate_bps,
            u: 1.0,
            inc_stage: 0,
            last_update_seq: 0,
            hop: Vec::new(),
            base_rtt_ns: t,
            win: (u128::from(t) * u128::from(p.nic_rate_bps) / 8_000_000_000) as u64,
            eta: f64::from(p.eta.num) / f64::from(p.eta.den),
            mi_thresh: u32::from(p.max_stage),
            rai: rate_ai_bps
                .unwrap_or((u128::from(p.w_ai_bytes) * 8_000_000_000 / u128::from(t)) as u64),
            min_rate: p.min_rate_bps,
        }
    }

    /// `HandleAckHp`: a full update when the ACK is past `lastUpdateSeq`, else the fast
    /// reaction; the branch taken.
    pub(super) fn ack(&mut self, ack_seq: u32, snd_nxt: u32, int: &[u8]) -> &'static str {
        let Some(ih) = hops(int) else {
            return "bad";
        };
        let fast = ack_seq <= self.last_update_seq;
        if self.last_update_seq == 0 {
            // The first RTT: store the INT.
            self.last_update_seq = snd_nxt;
            self.hop = ih;
            return "init";
        }
        // Each hop's utilisation; the largest, with its interval.
        let (mut big_u, mut dt) = (0.0f64, 0u64);
        let mut updated = false;
        for (i, h) in ih.iter().enumerate() {
            let old = self.hop.get(i).copied().unwrap_or_default();
            updated = true;
            let tau = u64::from(h.time.wrapping_sub(old.time) & 0xFF_FFFF);
            let duration = tau as f64 * 1e-9;
            let bytes = u64::from(h.tx_units.wrapping_sub(old.tx_units) & 0xF_FFFF) * 128;
            let tx_rate = bytes as f64 * 8.0 / duration;
            let u = tx_rate / h.line_bps as f64
                + h.qlen.min(old.qlen) as f64 * self.max_rate as f64
                    / h.line_bps as f64
                    / self.win as f64;
            if u > big_u {
                big_u = u;
                dt = tau;
            }
        }
        self.hop = ih;
        // The branches are named as the crate's (`md`, `ai`; `skip` when no hop was read).
        let mut branch = "skip";
        if updated {
            let dt = dt.min(self.base_rtt_ns);
            let t = self.base_rtt_ns;
            self.u = (self.u * (t - dt) as f64 + big_u * dt as f64) / t as f64;
            let max_c = self.u / self.eta;
            let (mut new_rate, new_stage) = if max_c >= 1.0 || self.inc_stage >= self.mi_thresh {
                branch = "md";
                (
                    ((self.cur_rate as f64 / max_c) as u64).saturating_add(self.rai),
                    0,
                )
            } else {
                branch = "ai";
                (self.cur_rate.saturating_add(self.rai), self.inc_stage + 1)
            };
            new_rate = new_rate.clamp(self.min_rate, self.max_rate);
            self.rate = new_rate;
            if !fast {
                self.cur_rate = new_rate;
                self.inc_stage = new_stage;
            }
        }
        if !fast && snd_nxt > self.last_update_seq {
            self.last_update_seq = snd_nxt;
        }
        branch
    }

    /// `m_rate`, b/s.
    pub(super) fn rate_bps(&self) -> f64 {
        self.rate as f64
    }

    /// `GetWin` with `VAR_WIN`: `m_win · m_rate / m_max_rate`, at least 1 byte.
    pub(super) fn window_bytes(&self) -> f64 {
        let w = u128::from(self.win) * u128::from(self.rate) / u128::from(self.max_rate.max(1));
        (w as u64).max(1) as f64
    }
}
