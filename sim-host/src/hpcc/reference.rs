//! The f64 reference of HPCC's sender (paper Algorithm 1, Eqn 1–4) with the conventions of the
//! HPCC issue (§2), written from the paper and the issue text, not from the fixed-point crate.
//! It also has its own INT decoder (Figure 7), so the firmware parser is checked too.

/// Link rate per speed code, bit/s (issue §1: 1 = 10G … 9 = 1.6T; 0 and 10–15 reserved).
pub const SPEED_GBPS: [f64; 10] = [
    0.0, 10.0, 25.0, 40.0, 50.0, 100.0, 200.0, 400.0, 800.0, 1600.0,
];

/// Maximum hops the reference accepts (the firmware default).
pub const MAX_HOPS: usize = 5;

/// Parameters in plain numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefParams {
    /// NIC rate, bit/s.
    pub nic_rate_bps: f64,
    /// Base RTT T, ns.
    pub base_rtt_ns: f64,
    /// η.
    pub eta: f64,
    /// maxStage.
    pub max_stage: u32,
    /// W_AI, bytes.
    pub w_ai_bytes: f64,
    /// Minimum rate, bit/s.
    pub min_rate_bps: f64,
}

impl Default for RefParams {
    /// The paper's simulation parameters (§5): 100G, T = 13 µs, η = 0.95, maxStage 5, W_AI 80 B.
    fn default() -> Self {
        Self {
            nic_rate_bps: 100e9,
            base_rtt_ns: 13_000.0,
            eta: 0.95,
            max_stage: 5,
            w_ai_bytes: 80.0,
            min_rate_bps: 100e6,
        }
    }
}

impl RefParams {
    /// `W_max = nic_rate·T`, bytes.
    pub fn w_max(&self) -> f64 {
        self.nic_rate_bps / 8.0 * self.base_rtt_ns * 1e-9
    }
    /// `W_min = min_rate·T`, bytes.
    pub fn w_min(&self) -> f64 {
        self.min_rate_bps / 8.0 * self.base_rtt_ns * 1e-9
    }
}

/// One hop of an INT block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefHop {
    /// Speed code, 1..=9.
    pub code: u8,
    /// Timestamp, ns mod 2^24.
    pub ts: u32,
    /// Transmitted bytes in 128-byte units, mod 2^20.
    pub tx: u32,
    /// Queue length, 80-byte units.
    pub qlen: u32,
}

impl RefHop {
    /// Link rate in bytes per ns.
    pub fn bytes_per_ns(&self) -> f64 {
        SPEED_GBPS[usize::from(self.code)] / 8.0
    }
}

/// A decoded INT block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefInt {
    /// Hop count.
    pub nhop: u8,
    /// Path id (12 bits).
    pub path_id: u16,
    /// The hops.
    pub hops: Vec<RefHop>,
}

/// Decodes an INT block (Figure 7, issue §1); `Err` says why it is malformed.
pub fn decode_int(b: &[u8]) -> Result<RefInt, String> {
    if b.len() < 2 {
        return Err(format!("too short: {} bytes, the header is 2", b.len()));
    }
    let nhop = b[0] >> 4;
    let path_id = (u16::from(b[0] & 0x0F) << 8) | u16::from(b[1]);
    if usize::from(nhop) > MAX_HOPS {
        return Err(format!("nhop {nhop} is above the maximum of {MAX_HOPS}"));
    }
    let want = 2 + 8 * usize::from(nhop);
    if b.len() != want {
        return Err(format!("length {} is not 2 + 8·nhop = {want}", b.len()));
    }
    let mut hops = Vec::with_capacity(usize::from(nhop));
    for (i, h) in b[2..].chunks(8).enumerate() {
        let code = h[0] >> 4;
        if !(1..=9).contains(&code) {
            return Err(format!("hop {i}: reserved speed code {code}"));
        }
        let ts = (u32::from(h[0] & 0x0F) << 20)
            | (u32::from(h[1]) << 12)
            | (u32::from(h[2]) << 4)
            | u32::from(h[3] >> 4);
        let tx = (u32::from(h[3] & 0x0F) << 16) | (u32::from(h[4]) << 8) | u32::from(h[5]);
        let qlen = (u32::from(h[6]) << 8) | u32::from(h[7]);
        hops.push(RefHop { code, ts, tx, qlen });
    }
    Ok(RefInt {
        nhop,
        path_id,
        hops,
    })
}

/// Encodes an INT block (for generators and tests).
pub fn encode_int(path_id: u16, hops: &[RefHop]) -> Vec<u8> {
    let mut v = Vec::with_capacity(2 + 8 * hops.len());
    let hdr = ((hops.len() as u16) << 12) | (path_id & 0x0FFF);
    v.extend_from_slice(&hdr.to_be_bytes());
    for h in hops {
        let w = (u64::from(h.code) << 60)
            | (u64::from(h.ts & 0xFF_FFFF) << 36)
            | (u64::from(h.tx & 0xF_FFFF) << 16)
            | u64::from(h.qlen & 0xFFFF);
        v.extend_from_slice(&w.to_be_bytes());
    }
    v
}

/// The reference sender state.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// Parameters.
    pub p: RefParams,
    /// Window W, bytes.
    pub w: f64,
    /// Reference window Wc, bytes.
    pub wc: f64,
    /// Normalised inflight U.
    pub u: f64,
    /// incStage.
    pub inc_stage: u32,
    /// lastUpdateSeq.
    pub last_update_seq: u64,
    /// The stored INT (`L` in Algorithm 1).
    pub prev: Option<RefInt>,
}

impl Reference {
    /// Initial state (issue §2): W = Wc = W_max, U = 1, incStage 0, lastUpdateSeq 0, no INT.
    pub fn new(p: RefParams) -> Self {
        Self {
            p,
            w: p.w_max(),
            wc: p.w_max(),
            u: 1.0,
            inc_stage: 0,
            last_update_seq: 0,
            prev: None,
        }
    }

    /// Pacing rate R = W/T, bit/s.
    pub fn rate_bps(&self) -> f64 {
        self.w * 8.0 / (self.p.base_rtt_ns * 1e-9)
    }

    /// One ACK; returns the branch name (`init`, `resync`, `skip`, `bad`, `md`, `ai`).
    pub fn on_ack(&mut self, ack_seq: u64, snd_nxt: u64, int: &[u8]) -> &'static str {
        let Ok(ack) = decode_int(int) else {
            return "bad"; // malformed: rejected, nothing changes
        };
        let Some(prev) = &self.prev else {
            self.prev = Some(ack);
            self.last_update_seq = snd_nxt;
            return "init";
        };
        if prev.path_id != ack.path_id || prev.nhop != ack.nhop {
            self.prev = Some(ack);
            self.last_update_seq = snd_nxt;
            return "resync";
        }
        // MeasureInflight
        let t = self.p.base_rtt_ns;
        let mut best: Option<(f64, f64)> = None; // (u, τ)
        for (h, l) in ack.hops.iter().zip(&prev.hops) {
            let dts = f64::from(h.ts.wrapping_sub(l.ts) & 0xFF_FFFF);
            if dts == 0.0 {
                continue;
            }
            let dtx = f64::from(h.tx.wrapping_sub(l.tx) & 0xF_FFFF) * 128.0;
            let tx_rate = dtx / dts; // bytes/ns
            let b = h.bytes_per_ns();
            let q = f64::from(h.qlen.min(l.qlen)) * 80.0;
            let u1 = q / (b * t) + tx_rate / b;
            match best {
                Some((u, _)) if u1 <= u => {}
                _ => best = Some((u1, dts)),
            }
        }
        self.prev = Some(ack); // L = ack.L
        let Some((u, tau)) = best else {
            return "skip";
        };
        let tau = tau.min(t);
        self.u = (1.0 - tau / t) * self.u + (tau / t) * u;
        // NewAck / ComputeWind
        let update_wc = ack_seq > self.last_update_seq;
        let branch;
        let mut w;
        if self.u >= self.p.eta || self.inc_stage >= self.p.max_stage {
            w = self.wc / (self.u / self.p.eta) + self.p.w_ai_bytes;
            if update_wc {
                self.inc_stage = 0;
            }
            branch = "md";
        } else {
            w = self.wc + self.p.w_ai_bytes;
            if update_wc {
                self.inc_stage += 1;
            }
            branch = "ai";
        }
        if w.is_nan() || w > self.p.w_max() {
            w = self.p.w_max();
        }
        if w < self.p.w_min() {
            w = self.p.w_min();
        }
        self.w = w;
        if update_wc {
            self.wc = w;
            self.last_update_seq = snd_nxt;
        }
        branch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_matches_hand_layout() {
        // nhop 1, path 0xABC; hop: B=5, ts=0xABCDEF, tx=0x12345, qlen=0x6789
        let b = [0x1A, 0xBC, 0x5A, 0xBC, 0xDE, 0xF1, 0x23, 0x45, 0x67, 0x89];
        let i = decode_int(&b).unwrap();
        assert_eq!((i.nhop, i.path_id), (1, 0xABC));
        assert_eq!(
            i.hops[0],
            RefHop {
                code: 5,
                ts: 0xABCDEF,
                tx: 0x12345,
                qlen: 0x6789
            }
        );
        assert_eq!(encode_int(0xABC, &i.hops), b.to_vec());
    }

    /// The worked example of the firmware tests, from the paper's formulas in f64.
    #[test]
    fn worked_example() {
        let mut r = Reference::new(RefParams::default());
        let h = |ts, tx, q| {
            encode_int(
                0x123,
                &[RefHop {
                    code: 5,
                    ts,
                    tx,
                    qlen: q,
                }],
            )
        };
        assert_eq!(r.on_ack(0, 1000, &h(1000, 0, 100)), "init");
        assert_eq!(r.on_ack(1001, 2000, &h(2000, 100, 200)), "md");
        assert!((r.u - 1.005_633).abs() < 1e-6);
        assert!((r.w - 153_590.2).abs() < 0.1, "{}", r.w);
    }
}
