//! The f64 reference of HPCC's sender (paper Algorithm 1, Eqn 1–4) with the conventions of
//! docs/hpcc.md § 1–2, written from the paper and that page, not from the fixed-point crate.
//! It also has its own INT decoder (Figure 7), so the firmware parser is checked too.
//!
//! Two decisions are taken exactly rather than in f64, because they are comparisons of exact
//! rational numbers where one ulp would pick the other branch:
//! * the busiest hop (`u' > u`, HPCC Alg. 1 l.6): every `u'` is the rational
//!   `(640·qmin·Δts + 1024·Δtx·T) / (G·T·Δts)` (Eqn 2 with `B = G/8` bytes/ns for a `G` Gb/s
//!   link), compared by 128-bit cross products; the first hop keeps an exact tie;
//! * `U ≥ η` when `τ ≥ T` (`U = u`, a rational, against `η = η_num/η_den`).
//!
//! Sequence numbers are compared in serial-number order modulo 2^32 ([`seq_after`]).

/// Link rate per speed code, bit/s (docs/hpcc.md § 1: 1 = 10G … 9 = 1.6T; 0 and 10–15 reserved).
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
    /// Base RTT T, ns (a whole number: the exact hop comparison uses it as an integer).
    pub base_rtt_ns: f64,
    /// Numerator of η (η is a ratio, so `U ≥ η` can be decided exactly on a rational `U`).
    pub eta_num: u64,
    /// Denominator of η (non-zero).
    pub eta_den: u64,
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
            eta_num: 95,
            eta_den: 100,
            max_stage: 5,
            w_ai_bytes: 80.0,
            min_rate_bps: 100e6,
        }
    }
}

impl RefParams {
    /// η as a number.
    pub fn eta(&self) -> f64 {
        self.eta_num as f64 / self.eta_den as f64
    }
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

/// A non-negative rational number `num / den` (`den > 0`), for exact comparisons.
#[derive(Debug, Clone, Copy)]
pub struct Rational {
    /// Numerator.
    pub num: u128,
    /// Denominator.
    pub den: u128,
}

impl Rational {
    /// `self > other`, exactly (cross products: numerators and denominators here are below 2^64,
    /// so the products fit 128 bits).
    pub fn gt(self, other: Rational) -> bool {
        self.num * other.den > other.num * self.den
    }
    /// `self ≥ other`, exactly.
    pub fn ge(self, other: Rational) -> bool {
        self.num * other.den >= other.num * self.den
    }
}

/// One hop's `u'` (Eqn 2, HPCC Alg. 1 l.4–5) between the stored INT `l` and the ACK's `h`, or
/// `None` when `Δts = 0` (no rate can be measured): `(u' as f64, u' as an exact rational, Δts)`.
///
/// `txRate = Δtx·128/Δts` bytes/ns; `u' = min(qlen)·80/(B·T) + txRate/B` with `B = G/8` bytes/ns,
/// so `u' = (640·qmin·Δts + 1024·Δtx·T) / (G·T·Δts)`: numerator < 2^55, denominator < 2^59.
/// The f64 value is computed as the paper writes it (`q/(B·T) + txRate/B`).
pub fn hop_utilisation(l: &RefHop, h: &RefHop, t_ns: f64) -> Option<(f64, Rational, u32)> {
    let dts = h.ts.wrapping_sub(l.ts) & 0xFF_FFFF;
    if dts == 0 {
        return None;
    }
    let dtx = h.tx.wrapping_sub(l.tx) & 0xF_FFFF;
    let qmin = h.qlen.min(l.qlen);
    let b = h.bytes_per_ns();
    let tx_rate = f64::from(dtx) * 128.0 / f64::from(dts); // bytes/ns
    let u = f64::from(qmin) * 80.0 / (b * t_ns) + tx_rate / b;
    let t = t_ns as u128;
    let g = SPEED_GBPS[usize::from(h.code)] as u128;
    let exact = Rational {
        num: 640 * u128::from(qmin) * u128::from(dts) + 1024 * u128::from(dtx) * t,
        den: g * t * u128::from(dts),
    };
    Some((u, exact, dts))
}

/// Serial-number order modulo 2^32 (RFC 1982; docs/hpcc.md § 2, "Sequence numbers"): `a` is after
/// `b` iff `0 < (a − b) mod 2^32 < 2^31`. Trace sequence numbers are `u32`; larger values (the
/// generators' true byte counts) are taken modulo 2^32 as well.
pub fn seq_after(a: u64, b: u64) -> bool {
    const M: u64 = 1 << 32;
    let d = (a % M + M - b % M) % M;
    0 < d && d < M / 2
}

/// A decoded INT block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefInt {
    /// Hop count.
    pub nhop: u8,
    /// Path id (12 bits).
    pub path_id: u16,
    /// The hops.
    pub hops: heapless::Vec<RefHop, MAX_HOPS>,
}

/// Why an INT block is malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntError {
    /// Fewer than the 2 header bytes.
    TooShort(usize),
    /// `nhop` above [`MAX_HOPS`].
    TooManyHops(u8),
    /// The length is not `2 + 8·nhop` (got, want).
    Length(usize, usize),
    /// A hop (index) with a reserved speed code.
    ReservedSpeed(usize, u8),
}

impl core::fmt::Display for IntError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::TooShort(n) => write!(f, "too short: {n} bytes, the header is 2"),
            Self::TooManyHops(n) => write!(f, "nhop {n} is above the maximum of {MAX_HOPS}"),
            Self::Length(got, want) => write!(f, "length {got} is not 2 + 8·nhop = {want}"),
            Self::ReservedSpeed(i, code) => write!(f, "hop {i}: reserved speed code {code}"),
        }
    }
}

/// Decodes an INT block (Figure 7, docs/hpcc.md § 1); `Err` says why it is malformed.
pub fn decode_int(b: &[u8]) -> Result<RefInt, IntError> {
    if b.len() < 2 {
        return Err(IntError::TooShort(b.len()));
    }
    let nhop = b[0] >> 4;
    let path_id = (u16::from(b[0] & 0x0F) << 8) | u16::from(b[1]);
    if usize::from(nhop) > MAX_HOPS {
        return Err(IntError::TooManyHops(nhop));
    }
    let want = 2 + 8 * usize::from(nhop);
    if b.len() != want {
        return Err(IntError::Length(b.len(), want));
    }
    let mut hops = heapless::Vec::new();
    for (i, h) in b[2..].chunks(8).enumerate() {
        let code = h[0] >> 4;
        if !(1..=9).contains(&code) {
            return Err(IntError::ReservedSpeed(i, code));
        }
        let ts = (u32::from(h[0] & 0x0F) << 20)
            | (u32::from(h[1]) << 12)
            | (u32::from(h[2]) << 4)
            | u32::from(h[3] >> 4);
        let tx = (u32::from(h[3] & 0x0F) << 16) | (u32::from(h[4]) << 8) | u32::from(h[5]);
        let qlen = (u32::from(h[6]) << 8) | u32::from(h[7]);
        // nhop ≤ MAX_HOPS (checked above): every hop fits.
        let _ = hops.push(RefHop { code, ts, tx, qlen });
    }
    Ok(RefInt {
        nhop,
        path_id,
        hops,
    })
}

/// Encodes an INT block (for generators and tests).
#[cfg(feature = "alloc")]
pub fn encode_int(path_id: u16, hops: &[RefHop]) -> alloc::vec::Vec<u8> {
    let mut v = alloc::vec::Vec::with_capacity(2 + 8 * hops.len());
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
pub struct RefState {
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
    /// lastUpdateSeq (compared modulo 2^32, see [`seq_after`]).
    pub last_update_seq: u64,
    /// The stored INT (`L` in Algorithm 1).
    pub prev: Option<RefInt>,
}

impl RefState {
    /// Initial state (docs/hpcc.md § 2): W = Wc = W_max, U = 1, incStage 0, lastUpdateSeq 0, no
    /// INT.
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
    /// `ack_seq` and `snd_nxt` are sequence numbers modulo 2^32 ([`seq_after`]).
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
        // MeasureInflight: the busiest hop (largest u', exactly; the first hop keeps a tie)
        let t = self.p.base_rtt_ns;
        let mut best: Option<(f64, Rational, u32)> = None; // (u, u exact, τ)
        for (h, l) in ack.hops.iter().zip(&prev.hops) {
            let Some(hop) = hop_utilisation(l, h, t) else {
                continue; // Δts = 0
            };
            match best {
                Some((_, u, _)) if !hop.1.gt(u) => {}
                _ => best = Some(hop),
            }
        }
        self.prev = Some(ack); // L = ack.L
        let Some((u, u_exact, dts)) = best else {
            return "skip";
        };
        let tau = f64::from(dts).min(t);
        self.u = (1.0 - tau / t) * self.u + (tau / t) * u;
        let eta = self.p.eta();
        // U ≥ η: when τ ≥ T, U = u is the exact rational u_exact; compare it exactly.
        let u_at_least_eta = if tau >= t {
            u_exact.ge(Rational {
                num: u128::from(self.p.eta_num),
                den: u128::from(self.p.eta_den),
            })
        } else {
            self.u >= eta
        };
        // NewAck / ComputeWind
        let update_wc = seq_after(ack_seq, self.last_update_seq);
        let branch;
        let mut w;
        if u_at_least_eta || self.inc_stage >= self.p.max_stage {
            w = self.wc / (self.u / eta) + self.p.w_ai_bytes;
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

    /// The tie of docs/hpcc.md § 2 ("The busiest hop"): two 400G hops, qmin 253 / 298, Δtx/Δts
    /// 111/832 and 735/5600 (T = 13 µs): u' = (640·253·832 + 1024·111·13000)/(400·13000·832) =
    /// 0.372 676 9… on both, exactly (f64 makes the second one ulp larger). The first hop wins: τ =
    /// 832, not 5 600.
    #[test]
    fn exact_tie_goes_to_the_first_hop() {
        let hop = |ts, tx, qlen| RefHop {
            code: 7,
            ts,
            tx,
            qlen,
        };
        let (a0, b0) = (hop(1_000, 50, 400), hop(9_000, 70, 400));
        let (a1, b1) = (hop(1_832, 161, 253), hop(14_600, 805, 298));
        let t = 13_000.0;
        let (ua, ea, da) = hop_utilisation(&a0, &a1, t).unwrap();
        let (ub, eb, db) = hop_utilisation(&b0, &b1, t).unwrap();
        assert!(ub > ua, "f64 breaks the tie: {ua} vs {ub}");
        assert!(!ea.gt(eb) && !eb.gt(ea) && ea.ge(eb));
        assert_eq!((da, db), (832, 5_600));
        let mut r = RefState::new(RefParams::default());
        r.on_ack(0, 1, &encode_int(3, &[a0, b0]));
        // U = 1 + (0.372 677 − 1)·832/13 000 = 0.959 85 ≥ η: MD.
        assert_eq!(r.on_ack(2, 3, &encode_int(3, &[a1, b1])), "md");
        let want = 1.0 + (ua - 1.0) * 832.0 / 13_000.0;
        assert!((r.u - want).abs() < 1e-12, "U {} vs {want}", r.u);
    }

    #[test]
    fn seq_after_is_serial_number_order_mod_2_pow_32() {
        assert!(seq_after(1, 0) && !seq_after(0, 1) && !seq_after(5, 5));
        assert!(seq_after(300, (1 << 32) - 500) && !seq_after((1 << 32) - 500, 300));
        assert!(!seq_after(1 << 31, 0) && !seq_after(0, 1 << 31));
        // Values above 2^32 are sequence numbers modulo 2^32.
        assert!(seq_after((1 << 32) + 10, 5) && !seq_after(5, (1 << 32) + 10));
    }

    /// τ ≥ T and u = η exactly (100G, Δts 16 384, Δtx 1 520 units: u = 194 560/204 800 = 0.95):
    /// MD, as `U ≥ η` says; one unit less of Δtx: AI.
    #[test]
    fn u_equal_to_eta_at_full_weight_is_md() {
        for (dtx, want) in [(1_520, "md"), (1_519, "ai")] {
            let mut r = RefState::new(RefParams::default());
            let h = |ts, tx| {
                encode_int(
                    1,
                    &[RefHop {
                        code: 5,
                        ts,
                        tx,
                        qlen: 0,
                    }],
                )
            };
            r.on_ack(0, 1, &h(100, 7));
            assert_eq!(r.on_ack(2, 3, &h(100 + 16_384, 7 + dtx)), want, "Δtx {dtx}");
        }
    }

    /// The worked example of the firmware tests, from the paper's formulas in f64.
    #[test]
    fn worked_example() {
        let mut r = RefState::new(RefParams::default());
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
