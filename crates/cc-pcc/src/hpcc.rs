//! HPCC (Li et al., SIGCOMM 2019) on DOCA PCC events: one hop of switch telemetry per probe
//! response, Algorithm 1 from hpcc-cc (`State::on_hop_words` with [`DocaHop`]), the window out
//! as the rate `W/T` in Q20 of line rate.
//!
//! Per event type (docs/pcc.md has the table):
//! * **TX**: coalesced counts added; `RTT_REQ_SENT` in the flags marks the requested probe's
//!   departure (its timeout runs from there); the shared probe policy requests a probe when none
//!   is outstanding or the outstanding one timed out.
//! * **RTT**: the response's 12 bytes of raw data are one hop's telemetry (they overlay the
//!   timestamps: a telemetry response has none, so it is matched by state, not by time). A
//!   response repeating the last telemetry is a duplicate; with no probe outstanding it is
//!   unsolicited; while the outstanding probe has not left it is late (it answers one given up);
//!   all three are counted and ignored. Otherwise it answers the departed probe: one step of
//!   Algorithm 1; every answered probe is one "RTT" for `Wc` (HPCC Alg. 1 l.22: the probe number
//!   stands for the sequence number, so each answered probe updates `Wc`).
//! * **ACK, NACK, CNP** and any other type: counted, no rate change (HPCC has no rule for them).
//!
//! The telemetry record is packed into hpcc-cc's hop-word layout (`code << 60 | ts << 36 |
//! tx << 16 | qlen`) with its own units: timestamp mod 2^24 ns, transmitted bytes in 32-byte
//! units mod 2^20, queue in 256-byte cells, the link speed code from the parameters.

use crate::counters::{Counter, Counters, count_event};
use crate::event::{Event, EventType, TELEMETRY_BYTES, Telemetry, tx_flag};
use crate::probe::{self, FLAG_PROBE_DEPARTED, FLAG_PROBE_OUT, FLAG_STARTED};
use crate::{CONTEXT_WORDS, FlowContext, PccResult, Q20_ONE};
use cc_math::Scale;
use cc_math::wrap::wrapping_delta;
use hpcc_cc::{
    Config, ConfigError, HopSample, HpccBranch, Params, Ratio, RawParts, State, U24F8, U32F32,
};

/// Hops the adapter's flow keeps: one (the DOCA telemetry sample returns one hop).
pub const HOPS: usize = 1;

/// `S = 1600 Gb/s / link speed` per INT speed code (1 = 10G … 9 = 1.6T; 0 for the others).
const S_BY_CODE: [u32; 16] = [0, 160, 64, 40, 32, 16, 8, 4, 2, 1, 0, 0, 0, 0, 0, 0];

/// The DOCA switch-telemetry hop as an hpcc-cc hop record: INT's bit layout, the telemetry's
/// units (256-byte queue cells, 32-byte tx units: multiples of 16 bytes, at most 256, as
/// [`HopSample`] requires; the hop's numerator integers are `16·S` and `2·S`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DocaHop;

impl HopSample for DocaHop {
    const QUEUE_UNIT_BYTES: u32 = Telemetry::CELL_BYTES;
    const TX_UNIT_BYTES: u32 = 32;
}

impl DocaHop {
    /// Packs a decoded record for a link of speed `code` (1 ..= 9).
    #[inline]
    #[must_use]
    pub fn word(t: &Telemetry, code: u8) -> u64 {
        (u64::from(code & 0xF) << 60)
            | (u64::from(t.tx_ts_ns & 0xFF_FFFF) << 36)
            | (u64::from((t.tx_bytes >> 5) & 0xF_FFFF) << 16)
            | u64::from(t.qlen_256b_cells)
    }
}

/// Ids of [`HPCC_PARAMS`].
pub mod hpcc_id {
    /// NIC line rate, Mb/s.
    pub const LINE_RATE_MBPS: u32 = 0;
    /// Base RTT `T`, ns.
    pub const BASE_RTT_NS: u32 = 1;
    /// `η`, thousandths.
    pub const ETA_MILLI: u32 = 2;
    /// `maxStage`.
    pub const MAX_STAGE: u32 = 3;
    /// `W_AI`, bytes.
    pub const W_AI_BYTES: u32 = 4;
    /// Lowest rate, Mb/s.
    pub const MIN_RATE_MBPS: u32 = 5;
    /// Speed code of the measured switch port (1 = 10G … 9 = 1.6T).
    pub const LINK_SPEED_CODE: u32 = 6;
    /// Probe timeout, ns.
    pub const PROBE_TIMEOUT_NS: u32 = 7;
}

/// Number of HPCC parameters.
pub const HPCC_PARAM_NUM: usize = 8;

use crate::params::ParamDef;

/// The HPCC parameter table, in id order. Defaults: the paper's §5 setup (hpcc-cc's
/// `Params::PAPER`: 100 Gb/s, `T` 13 µs, `η` 0.95, `maxStage` 5, `W_AI` 80 B, 100 Mb/s floor), a
/// 100G switch port and the RTT template's 300 µs probe timeout.
pub const HPCC_PARAMS: [ParamDef; HPCC_PARAM_NUM] = [
    ParamDef {
        id: hpcc_id::LINE_RATE_MBPS,
        name: "LINE_RATE_MBPS",
        default: 100_000,
        min: 1,
        max: 10_000_000,
        unit: "Mb/s",
    },
    ParamDef {
        id: hpcc_id::BASE_RTT_NS,
        name: "BASE_RTT_NS",
        default: 13_000,
        min: 1_000,
        max: 0xFF_FFFF,
        unit: "ns",
    },
    ParamDef {
        id: hpcc_id::ETA_MILLI,
        name: "ETA_MILLI",
        default: 950,
        min: 1,
        max: 1000,
        unit: "1/1000",
    },
    ParamDef {
        id: hpcc_id::MAX_STAGE,
        name: "MAX_STAGE",
        default: 5,
        min: 0,
        max: 255,
        unit: "",
    },
    ParamDef {
        id: hpcc_id::W_AI_BYTES,
        name: "W_AI_BYTES",
        default: 80,
        min: 0,
        max: 0xFF_FFFF,
        unit: "bytes",
    },
    ParamDef {
        id: hpcc_id::MIN_RATE_MBPS,
        name: "MIN_RATE_MBPS",
        default: 100,
        min: 1,
        max: 10_000_000,
        unit: "Mb/s",
    },
    ParamDef {
        id: hpcc_id::LINK_SPEED_CODE,
        name: "LINK_SPEED_CODE",
        default: 5,
        min: 1,
        max: 9,
        unit: "INT speed code",
    },
    ParamDef {
        id: hpcc_id::PROBE_TIMEOUT_NS,
        name: "PROBE_TIMEOUT_NS",
        default: 300_000,
        min: 1_000,
        max: (1 << 31) - 1,
        unit: "ns",
    },
];

/// Why HPCC parameter values were refused (the configuration in force is unchanged).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum HpccParamError {
    /// `base + num` runs past the table.
    IdOutOfTable {
        /// First id given.
        base: u32,
        /// Values given.
        num: u32,
    },
    /// A value outside its row's `[min, max]`.
    OutOfRange {
        /// The parameter id.
        id: u32,
        /// The value given.
        value: u32,
    },
    /// The set is not a valid hpcc-cc configuration (e.g. `W_max = line·T` of 16 MiB or more).
    Hpcc(ConfigError),
}

/// The validated HPCC adapter configuration: values in force and every derived constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HpccPccConfig {
    values: [u32; HPCC_PARAM_NUM],
    pub(crate) hpcc: Config,
    /// `W_q8 ↦ W/W_max·2^20` = `(W/T)/line` in Q20, rounded to nearest.
    q20: Scale,
    speed_code: u8,
    probe_timeout_ns: u32,
    /// A telemetry gap (NIC clock) from which the hop restarts: half the shorter wrap of the
    /// 24-bit timestamp (2^23 ns) and of the 20-bit count of 32-byte units at link speed.
    gap_ns: u32,
}

impl HpccPccConfig {
    /// Validates a whole value array (id order) and derives every constant (divides: config
    /// time only).
    ///
    /// # Errors
    /// [`HpccParamError`] naming the first bad value, or hpcc-cc's reason.
    #[allow(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)] // bounded by the table's ranges
    pub fn from_values(v: [u32; HPCC_PARAM_NUM]) -> Result<Self, HpccParamError> {
        for (p, &x) in HPCC_PARAMS.iter().zip(v.iter()) {
            if x < p.min || x > p.max {
                return Err(HpccParamError::OutOfRange { id: p.id, value: x });
            }
        }
        let [line, t, eta, stage, w_ai, min_rate, code, timeout] = v;
        let params = Params {
            nic_rate_bps: u64::from(line) * 1_000_000,
            base_rtt_ns: t,
            eta: Ratio::new(eta, 1000),
            max_stage: stage as u8,
            w_ai_bytes: w_ai,
            min_rate_bps: u64::from(min_rate) * 1_000_000,
        };
        let hpcc = Config::new(params).map_err(HpccParamError::Hpcc)?;
        let w_max = u128::from(hpcc.w_max_bytes().to_bits());
        let q20 = Scale::from_ratio(1 << 20, w_max).ok_or(HpccParamError::OutOfRange {
            id: hpcc_id::LINE_RATE_MBPS,
            value: line,
        })?;
        // 2^20 units of 32 B = 2^25 B wrap in 2^28·1e9/bps ns; half of it, and of 2^24 ns.
        let link_bps = u128::from(S_BY_CODE.get(code as usize).copied().unwrap_or(1).max(1));
        let link_bps = 1_600_000_000_000 / link_bps;
        let tx_half = (1u128 << 27) * 1_000_000_000 / link_bps;
        let gap_ns = tx_half.min(1 << 23) as u32;
        Ok(Self {
            values: v,
            hpcc,
            q20,
            speed_code: code as u8,
            probe_timeout_ns: timeout,
            gap_ns,
        })
    }

    /// `doca_pcc_dev_user_set_algo_params`: all or none.
    ///
    /// # Errors
    /// [`HpccParamError`]; `self` unchanged.
    pub fn set_params(&mut self, base: u32, new_values: &[u32]) -> Result<(), HpccParamError> {
        let num = u32::try_from(new_values.len()).unwrap_or(u32::MAX);
        let mut v = self.values;
        let dst = usize::try_from(base)
            .ok()
            .and_then(|b| v.get_mut(b..b.checked_add(new_values.len())?))
            .ok_or(HpccParamError::IdOutOfTable { base, num })?;
        dst.copy_from_slice(new_values);
        *self = Self::from_values(v)?;
        Ok(())
    }

    /// The table's defaults.
    ///
    /// # Errors
    /// Never for the shipped table (tested).
    pub fn default_values() -> Result<Self, HpccParamError> {
        let mut v = [0u32; HPCC_PARAM_NUM];
        for (x, p) in v.iter_mut().zip(HPCC_PARAMS.iter()) {
            *x = p.default;
        }
        Self::from_values(v)
    }

    /// The values in force.
    #[must_use]
    pub const fn values(&self) -> &[u32; HPCC_PARAM_NUM] {
        &self.values
    }

    /// The hpcc-cc configuration.
    #[must_use]
    pub const fn hpcc(&self) -> &Config {
        &self.hpcc
    }

    /// The telemetry gap from which a hop restarts, ns.
    #[must_use]
    pub const fn gap_ns(&self) -> u32 {
        self.gap_ns
    }

    /// A window as the rate `W/T` in Q20 of line rate (`W/W_max`, `W_max = line·T`):
    /// `round(W·2^20/W_max)`, clamped to `[1, 2^20]`; the second value is `-1`/`+1` on a clamp.
    #[inline]
    #[must_use]
    #[allow(clippy::cast_possible_truncation)] // compared against 2^20 first
    pub fn rate_q20(&self, w: U24F8) -> (u32, i8) {
        // HPCC Alg. 1 l.25: R = W/T; over line rate: (W/T)/(W_max/T) = W/W_max.
        let q = self.q20.apply(w.to_bits());
        if q > u64::from(Q20_ONE) {
            (Q20_ONE, 1)
        } else if q == 0 {
            (1, -1)
        } else {
            (q as u32, 0)
        }
    }
}

/// One HPCC flow unpacked from its 48-byte context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HpccFlow {
    /// Algorithm 1's state, one hop.
    pub hpcc: State<HOPS>,
    /// When the outstanding probe was requested, or, once the TX event with `RTT_REQ_SENT`
    /// marked its departure, when it left, ns.
    pub probe_ts_ns: u32,
    /// NIC timestamp of the last probe response with telemetry, ns.
    pub last_tel_ts_ns: u32,
    /// The switch's transmit timestamp of the last telemetry used, ns (with the switch index
    /// in the flags: what a duplicate response repeats).
    pub last_sample_ts_ns: u32,
    flags: u32,
}

/// Flag bit: a telemetry sample was used (its switch index in [`SAMPLE_INDEX_SHIFT`]'s byte,
/// its transmit timestamp in `last_sample_ts_ns`).
const FLAG_HAS_SAMPLE: u32 = 8;
/// The flags byte that holds the last used sample's switch index.
const SAMPLE_INDEX_SHIFT: u32 = 8;

const _: () = assert!(core::mem::size_of::<HpccFlow>() <= 4 * CONTEXT_WORDS);

impl HpccFlow {
    /// A new flow at `W_max` (line rate), no probe outstanding.
    #[must_use]
    pub const fn new(cfg: &HpccPccConfig) -> Self {
        Self {
            hpcc: State::new(&cfg.hpcc),
            probe_ts_ns: 0,
            last_tel_ts_ns: 0,
            last_sample_ts_ns: 0,
            flags: FLAG_STARTED,
        }
    }

    /// Whether a probe is outstanding.
    #[must_use]
    pub const fn probe_outstanding(&self) -> bool {
        self.flags & FLAG_PROBE_OUT != 0
    }

    /// Whether the outstanding probe has left the NIC (`RTT_REQ_SENT` seen).
    #[must_use]
    pub const fn probe_departed(&self) -> bool {
        self.flags & FLAG_PROBE_DEPARTED != 0
    }

    /// Unpacks a context; `None` for a context never stored. Words: 0 `W` (Q24.8 B), 1 `Wc`,
    /// 2–3 `U` (Q32.32, high then low), 4 `lastUpdateSeq`, 5 stored header (bits 0–15) ·
    /// `incStage` (16–23) · header present (24), 6–7 the hop word (high, low), 8 probe request
    /// or departure time, 9 flags (bit 0 started, 1 probe outstanding, 2 probe departed, 3 a
    /// sample used; bits 8–15 its switch index), 10 last telemetry time (NIC clock), 11 the last
    /// used sample's switch transmit timestamp.
    #[inline]
    #[must_use]
    #[allow(clippy::cast_possible_truncation)] // word fields
    pub fn load(ctx: &FlowContext) -> Option<Self> {
        let [
            w,
            wc,
            u_hi,
            u_lo,
            lus,
            misc,
            h_hi,
            h_lo,
            probe,
            flags,
            tel,
            sample_ts,
        ] = *ctx;
        if flags & FLAG_STARTED == 0 {
            return None;
        }
        let hpcc = State::from_raw_parts(RawParts {
            w_bytes: U24F8::from_bits(w),
            wc_bytes: U24F8::from_bits(wc),
            u: U32F32::from_bits((u64::from(u_hi) << 32) | u64::from(u_lo)),
            last_update_seq: lus,
            inc_stage: (misc >> 16) as u8,
            int_header: if misc & (1 << 24) != 0 {
                Some(misc as u16)
            } else {
                None
            },
            hops: [(u64::from(h_hi) << 32) | u64::from(h_lo)],
        });
        Some(Self {
            hpcc,
            probe_ts_ns: probe,
            last_tel_ts_ns: tel,
            last_sample_ts_ns: sample_ts,
            flags,
        })
    }

    /// Packs the flow into a context (the inverse of [`load`](Self::load)).
    #[inline]
    #[allow(clippy::cast_possible_truncation)] // word splits
    pub fn store(&self, ctx: &mut FlowContext) {
        let p = self.hpcc.raw_parts();
        let u = p.u.to_bits();
        let [h] = p.hops;
        let misc = match p.int_header {
            Some(hd) => u32::from(hd) | (1 << 24),
            None => 0,
        } | (u32::from(p.inc_stage) << 16);
        *ctx = [
            p.w_bytes.to_bits(),
            p.wc_bytes.to_bits(),
            (u >> 32) as u32,
            u as u32,
            p.last_update_seq,
            misc,
            (h >> 32) as u32,
            h as u32,
            self.probe_ts_ns,
            self.flags,
            self.last_tel_ts_ns,
            self.last_sample_ts_ns,
        ];
    }

    /// One event of this flow (`telemetry`: the RTT event's 12 bytes of raw data as
    /// `doca_pcc_dev_get_rtt_raw_data` returns them, [`Event::rtt_raw_data`] without the SDK;
    /// not read for other events). Returns the rate in Q20 and the probe request; the branch of
    /// Algorithm 1 when a telemetry sample was used.
    #[inline]
    pub fn on_event(
        &mut self,
        cfg: &HpccPccConfig,
        ev: &Event,
        telemetry: &[u8; TELEMETRY_BYTES],
        counters: &mut Counters,
    ) -> (PccResult, Option<HpccBranch>) {
        let mut rtt_req = false;
        let mut branch = None;
        match count_event(ev, counters) {
            Some(EventType::Tx) => {
                if ev.flags & tx_flag::RTT_REQ_SENT != 0 {
                    probe::note_departure(
                        &mut self.probe_ts_ns,
                        &mut self.flags,
                        ev.ts_ns,
                        counters,
                    );
                }
                rtt_req = probe::on_tx(
                    &mut self.probe_ts_ns,
                    &mut self.flags,
                    ev.ts_ns,
                    cfg.probe_timeout_ns,
                    counters,
                );
            }
            Some(EventType::Rtt) => branch = self.on_response(cfg, ev.ts_ns, telemetry, counters),
            _ => {}
        }
        let (rate_q20, clamp) = cfg.rate_q20(self.hpcc.window_bytes());
        match clamp {
            1 => counters.inc(Counter::RateClampedHigh),
            -1 => counters.inc(Counter::RateClampedLow),
            _ => {}
        }
        (PccResult { rate_q20, rtt_req }, branch)
    }

    /// A probe response received at `now` carrying `telemetry` (its raw data): a duplicate,
    /// unsolicited or late response is counted and ignored; the answer to the departed probe
    /// runs Algorithm 1 (its branch). Out of line: one call per probe, while TX and ACK events,
    /// one per packet, keep the small path.
    #[inline(never)]
    fn on_response(
        &mut self,
        cfg: &HpccPccConfig,
        now: u32,
        telemetry: &[u8; TELEMETRY_BYTES],
        counters: &mut Counters,
    ) -> Option<HpccBranch> {
        let t = Telemetry::decode(telemetry);
        if self.repeats_last_sample(cfg, now, &t) {
            counters.inc(Counter::ProbesDuplicate);
            return None;
        }
        if !probe::answers_after_departure(&mut self.flags, counters) {
            return None;
        }
        Some(self.on_telemetry(cfg, now, &t, counters))
    }

    /// Whether a response received at `now` repeats the telemetry last used: the same switch
    /// and the same transmit timestamp, within the gap the hop's counters span (past it the
    /// sample restarts the hop instead). Such a response is a duplicate delivery: it carries
    /// nothing new.
    #[inline(always)]
    fn repeats_last_sample(&self, cfg: &HpccPccConfig, now: u32, t: &Telemetry) -> bool {
        self.flags & FLAG_HAS_SAMPLE != 0
            && (self.flags >> SAMPLE_INDEX_SHIFT) & 0xFF == u32::from(t.index)
            && self.last_sample_ts_ns == t.tx_ts_ns
            && wrapping_delta::<32>(now, self.last_tel_ts_ns) < cfg.gap_ns
    }

    /// One hop of telemetry received at `now` (NIC clock): Algorithm 1.
    #[inline(always)]
    fn on_telemetry(
        &mut self,
        cfg: &HpccPccConfig,
        now: u32,
        t: &Telemetry,
        counters: &mut Counters,
    ) -> HpccBranch {
        let mut raw = self.hpcc.raw_parts();
        // A gap the hop's counters cannot span (half a wrap): restart the hop from this sample.
        if raw.int_header.is_some() && wrapping_delta::<32>(now, self.last_tel_ts_ns) >= cfg.gap_ns
        {
            counters.inc(Counter::TelemetryGap);
            raw.int_header = None;
            self.hpcc = State::from_raw_parts(raw);
        }
        self.last_tel_ts_ns = now;
        self.last_sample_ts_ns = t.tx_ts_ns;
        self.flags = (self.flags & !(0xFF << SAMPLE_INDEX_SHIFT))
            | FLAG_HAS_SAMPLE
            | (u32::from(t.index) << SAMPLE_INDEX_SHIFT);
        // Each answered probe is one round for Wc (HPCC Alg. 1 l.22–23): sequence n after n − 1.
        let seq = raw.last_update_seq.wrapping_add(1);
        // nhop 1, path id = the switch index: another switch is a path change (resync).
        let header = 0x1000 | u16::from(t.index);
        let word = DocaHop::word(t, cfg.speed_code).to_be_bytes();
        self.hpcc
            .on_hop_words::<DocaHop>(&cfg.hpcc, seq, seq, header, &word)
            .1
    }
}

/// `doca_pcc_dev_user_algo` for HPCC: loads the flow (a new flow if never stored), handles
/// the event, stores the flow back.
#[inline]
pub fn hpcc_on_event(
    cfg: &HpccPccConfig,
    ctx: &mut FlowContext,
    ev: &Event,
    telemetry: &[u8; TELEMETRY_BYTES],
    counters: &mut Counters,
) -> PccResult {
    let mut flow = HpccFlow::load(ctx).unwrap_or_else(|| {
        counters.inc(Counter::NewFlows);
        HpccFlow::new(cfg)
    });
    let (out, _) = flow.on_event(cfg, ev, telemetry, counters);
    flow.store(ctx);
    out
}
