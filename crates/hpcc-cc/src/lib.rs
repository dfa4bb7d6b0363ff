//! HPCC (Li et al., SIGCOMM 2019) INT-driven window control in fixed point: `no_std`, no
//! allocation, no floats, no panics and no run-time division on the per-ACK path.
//!
//! * [`int`]: the INT block on the wire (paper §4.1, Figure 7): a zero-copy [`IntView`] and an
//!   [`encode`](int::encode)r, with typed [`IntError`]s.
//! * [`Config`]: the paper's parameters, validated, with every reciprocal precomputed
//!   (`1/T`, `1/(12.5·T)`, `1/(12.5·T²)`, the rate scale `8/T`).
//! * [`State`]: one flow's state (64 bytes at 5 hops), updated by [`State::on_ack`] (Algorithm 1):
//!   one out-of-line function for a one-hop block, one for the loop over any number of hops,
//!   the same numerics in both.
//! * [`HopSample`]: the units of a hop record laid out as Fig. 7's INT hop (queue length,
//!   transmitted bytes); [`IntHop`] is INT's, and [`State::on_hop_words`] runs the same
//!   Algorithm 1 on records of another format (e.g. cc-pcc's switch telemetry).
//!
//! # Number formats
//! The table at the end of this page (the crate's `docs/formats.md`, which the repository's
//! docs/hpcc.md links to).
//!
//! ## Range of `u'` and `U`
//! The largest `u'` an INT block can carry is bounded by its fields: the queue term is at most
//! `65535·80 B / (1.25 B/ns · 1000 ns) = 4194.2` (10G hop, the smallest allowed `T`), the rate
//! term at most `(2^20 − 1)·128 B / (1 ns · 1.25 B/ns) = 107 374 080` (a counter glitch: the whole
//! 20-bit counter in one nanosecond). So `u' < 1.08e8 < 2^27` and `U`, a convex combination of
//! `u'` values, too: Q32.32 holds every reachable value with 5 bits to spare, nothing saturates
//! and the fixed side follows the f64 reference everywhere (test
//! `largest_u_the_wire_can_carry_is_not_saturated` in `crates/sim-host/tests/suite/hpcc_regressions.rs`).
//!
//! ## The `U` EWMA
//! With `u = N/(12.5·T·τ)` and `τ = Δts < T`, `(τ/T)·u = N/(12.5·T²)`: τ cancels, so the EWMA
//! needs no reciprocal. The common ACK takes the fast step (`ewma_fast`): `U` in Q4.28, `τ/T` in Q0.32, one
//! `mulhu` for `N/(12.5·T²)`, within 2^-27 of the exact step (proptest
//! `fast_ewma_is_within_two_q28_units`). Everything else (`U ≥ 16`, `N ≥ 2^32`, `τ < T/256`,
//! `T < 4 635` ns)
//! takes the exact step (`ewma_q32`), out of line: `U ← U + round(D)`,
//! `D = N·2^32/(12.5·T²) − (τ/T)·U` kept with 32 fractional bits below the Q32.32 unit (`τ/T`
//! with 64 bits; shift-free `u64` constants), and at least one unit (2^-32) toward `u` whenever
//! `D ≠ 0`: no rounding dead band (proptest `ewma_step_is_exact_to_a_unit`). docs/hpcc.md has
//! each format's measured share of the window error.
//!
//! `τ ≥ T` (an ACK gap of a whole base RTT) sets `U = u = N/(12.5·T·Δts)`, the one place that
//! takes a reciprocal of `Δts` (refined to 2^-30, so `U` is `u` to about 2^-29 relative, not
//! exactly). The `U ≥ η` test on it is nevertheless exact: `u ≥ η ⇔ 2·η_den·N ≥ 25·T·η_num·Δts`
//! is decided in integers and the stored `U` is placed on that side of `⌈η·2^32⌉`, so on
//! `u = η` exactly the fixed side takes MD as the reference's rational test does.
//!
//! ## The busiest hop
//! Per hop `u' = N/(12.5·T·Δts)` with an exact integer `N` (see `hop_numerator`); `T` is common,
//! so `u'_i > u'_j ⇔ N_i·Δts_j > N_j·Δts_i`, compared exactly in integers. The strict `>` keeps
//! the first hop on an exact tie, and its `Δts` is `τ`.
//!
//! ## Sequence numbers
//! `ack_seq`, `snd_nxt` and `lastUpdateSeq` are `u32` byte (or packet) sequence numbers compared
//! in serial-number order modulo 2^32 (RFC 1982): `a` is after `b` iff
//! `0 < (a − b) mod 2^32 < 2^31`. A flow's sequence numbers may wrap (a 100 Gb/s flow passes 2^32
//! bytes every 0.34 s); Algorithm 1's `ack.seq > lastUpdateSeq` stays right across the wrap as
//! long as the two are less than 2^31 apart.
#![doc = "\n"]
#![doc = include_str!("../docs/formats.md")]
#![no_std]
#![forbid(unsafe_code)]
#![deny(
    clippy::float_arithmetic,
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::unwrap_used,
    clippy::cast_possible_truncation
)]

mod config;
pub mod int;

use cc_math::RECIP;
use cc_math::word::{mul_64x64, mul_u64_u32, mul_wide, mulhu, shr64_small};
pub use config::{Config, ConfigError, MIN_W_MIN_BYTES, Params, Ratio};
use core::num::NonZeroU32;
pub use fixed::types::{U24F8, U32F32};
pub use int::{DEFAULT_MAX_HOPS, EncodeError, Hop, IntError, IntView, Speed};

/// Fractional bits of the window (Q24.8 bytes).
pub const W_FRAC_BITS: u32 = 8;
/// Fractional bits of the utilisation `U` and of the per-hop `u'` (Q32.32 in a `u64`).
pub const U_FRAC_BITS: u32 = 32;
/// `U = 1.0` in Q32.32.
pub const U_ONE: u64 = 1 << U_FRAC_BITS;

/// Which part of HPCC's Algorithm 1 an ACK took.
///
/// The one definition of the branch codes: the discriminants are the C ABI's values (cc-ffi
/// returns this type, cbindgen writes it into the header as `CcHpccBranch`), and fw-bench and
/// the host read codes back with `from_code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum HpccBranch {
    /// Malformed INT: rejected, state unchanged.
    Bad = 0,
    /// First INT of the flow: stored, `last_update_seq = snd_nxt`, window unchanged.
    Init = 1,
    /// `path_id` or `nhop` changed: INT re-stored, `last_update_seq = snd_nxt`, window unchanged.
    Resync = 2,
    /// Every hop had `Δts = 0`: INT stored, nothing else changed.
    Skip = 3,
    /// `U ≥ η` or `incStage ≥ maxStage`: `W = Wc/(U/η) + W_AI` (HPCC Alg. 1 l.12–13).
    Md = 4,
    /// Otherwise: `W = Wc + W_AI` (HPCC Alg. 1 l.16–17).
    Ai = 5,
}

impl HpccBranch {
    /// Every branch, in code order.
    pub const ALL: [HpccBranch; 6] = [
        HpccBranch::Bad,
        HpccBranch::Init,
        HpccBranch::Resync,
        HpccBranch::Skip,
        HpccBranch::Md,
        HpccBranch::Ai,
    ];

    /// The branch with C ABI code `code` (its discriminant), `None` for any other value.
    #[must_use]
    pub const fn from_code(code: u8) -> Option<HpccBranch> {
        match code {
            0 => Some(HpccBranch::Bad),
            1 => Some(HpccBranch::Init),
            2 => Some(HpccBranch::Resync),
            3 => Some(HpccBranch::Skip),
            4 => Some(HpccBranch::Md),
            5 => Some(HpccBranch::Ai),
            _ => None,
        }
    }

    /// Lower-case name (`init`, `resync`, `skip`, `bad`, `md`, `ai`), as in the replay output.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            HpccBranch::Init => "init",
            HpccBranch::Resync => "resync",
            HpccBranch::Skip => "skip",
            HpccBranch::Bad => "bad",
            HpccBranch::Md => "md",
            HpccBranch::Ai => "ai",
        }
    }
}

/// What one ACK produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Update {
    /// The window `W` after the ACK, bytes.
    pub window_bytes: U24F8,
    /// Pacing rate `R = W/T`, bit/s.
    pub rate_bps: u64,
    /// The branch taken.
    pub branch: HpccBranch,
}

// `fixed` has no defmt support: the window goes out as its raw Q24.8 bits.
#[cfg(feature = "defmt")]
impl defmt::Format for Update {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "Update {{ window_q8: {}, rate_bps: {}, branch: {} }}",
            self.window_bytes.to_bits(),
            self.rate_bps,
            self.branch
        );
    }
}

#[cfg(feature = "defmt")]
impl<const MAX_HOPS: usize> defmt::Format for RawParts<MAX_HOPS> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "RawParts {{ w_q8: {}, wc_q8: {}, u_q32: {}, last_update_seq: {}, inc_stage: {}, int_header: {}, hops: {} }}",
            self.w_bytes.to_bits(),
            self.wc_bytes.to_bits(),
            self.u.to_bits(),
            self.last_update_seq,
            self.inc_stage,
            self.int_header,
            self.hops
        );
    }
}

/// A flow's state from its raw integer parts (for re-seeding it, e.g. the host's forced mode).
/// Any values are accepted; the update stays panic-free and saturating on all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawParts<const MAX_HOPS: usize = DEFAULT_MAX_HOPS> {
    /// `W`, bytes.
    pub w_bytes: U24F8,
    /// `Wc`, bytes.
    pub wc_bytes: U24F8,
    /// `U` (normalised inflight, 1.0 = the link's `B·T`).
    pub u: U32F32,
    /// `lastUpdateSeq`.
    pub last_update_seq: u32,
    /// `incStage`.
    pub inc_stage: u8,
    /// The stored INT's header (`nhop << 12 | path_id`), `None` before the first INT.
    pub int_header: Option<u16>,
    /// The stored INT's hop words as on the wire (big-endian decoded); unused ones are 0.
    pub hops: [u64; MAX_HOPS],
}

/// One stored hop: its 8 wire bytes as two big-endian words,
/// `[B << 28 | ts << 4 | tx >> 16, (tx & 0xFFFF) << 16 | qlen]` (the wire word's halves).
type HopPrev = [u32; 2];

/// One flow's HPCC state.
///
/// Size: `8·MAX_HOPS + 24` bytes: **64 bytes** at the default 5 hops (asserted in a test), one
/// cache line. The previous INT is kept as on the wire (two big-endian words per hop); `U` is a
/// Q32.32 `u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct State<const MAX_HOPS: usize = DEFAULT_MAX_HOPS> {
    hops: [HopPrev; MAX_HOPS],
    u_q32: u64,
    w_q8: u32,
    wc_q8: u32,
    last_update_seq: u32,
    int_header: u16,
    inc_stage: u8,
    has_int: bool,
}

/// The [`HopPrev`] of one hop's 8 wire bytes.
#[inline(always)]
const fn hop_prev(c: [u8; 8]) -> HopPrev {
    let [b0, b1, b2, b3, b4, b5, b6, b7] = c;
    [
        u32::from_be_bytes([b0, b1, b2, b3]),
        u32::from_be_bytes([b4, b5, b6, b7]),
    ]
}

/// The wire word (`B << 60 | ts << 36 | tx << 16 | qlen`) of a [`HopPrev`].
const fn hop_wire(h: HopPrev) -> u64 {
    ((h[0] as u64) << 32) | h[1] as u64
}

/// The [`HopPrev`] of a wire word.
const fn hop_of_wire(w: u64) -> HopPrev {
    hop_prev(w.to_be_bytes())
}

impl<const MAX_HOPS: usize> State<MAX_HOPS> {
    /// Initial state (docs/hpcc.md § 2): `W = Wc = W_max`, `U = 1`, `incStage = 0`,
    /// `lastUpdateSeq = 0`, no stored INT.
    #[must_use]
    pub const fn new(cfg: &Config) -> Self {
        Self {
            hops: [[0; 2]; MAX_HOPS],
            w_q8: cfg.w_max_q8,
            wc_q8: cfg.w_max_q8,
            u_q32: U_ONE,
            last_update_seq: 0,
            int_header: 0,
            inc_stage: 0,
            has_int: false,
        }
    }

    /// Rebuilds a state from its raw parts.
    #[must_use]
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // i < MAX_HOPS
    pub const fn from_raw_parts(p: RawParts<MAX_HOPS>) -> Self {
        let (has_int, int_header) = match p.int_header {
            Some(h) => (true, h),
            None => (false, 0),
        };
        let mut hops = [[0; 2]; MAX_HOPS];
        let mut i = 0;
        while i < MAX_HOPS {
            hops[i] = hop_of_wire(p.hops[i]);
            i += 1;
        }
        Self {
            hops,
            w_q8: p.w_bytes.to_bits(),
            wc_q8: p.wc_bytes.to_bits(),
            u_q32: p.u.to_bits(),
            last_update_seq: p.last_update_seq,
            int_header,
            inc_stage: p.inc_stage,
            has_int,
        }
    }

    /// The raw parts (inverse of [`from_raw_parts`](Self::from_raw_parts)).
    #[must_use]
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // i < MAX_HOPS
    pub const fn raw_parts(&self) -> RawParts<MAX_HOPS> {
        let mut hops = [0u64; MAX_HOPS];
        let mut i = 0;
        while i < MAX_HOPS {
            hops[i] = hop_wire(self.hops[i]);
            i += 1;
        }
        RawParts {
            w_bytes: U24F8::from_bits(self.w_q8),
            wc_bytes: U24F8::from_bits(self.wc_q8),
            u: U32F32::from_bits(self.u_q32),
            last_update_seq: self.last_update_seq,
            inc_stage: self.inc_stage,
            int_header: if self.has_int {
                Some(self.int_header)
            } else {
                None
            },
            hops,
        }
    }

    /// `W`, bytes.
    #[must_use]
    pub const fn window_bytes(&self) -> U24F8 {
        U24F8::from_bits(self.w_q8)
    }
    /// `U` (normalised inflight).
    #[must_use]
    pub const fn u(&self) -> U32F32 {
        U32F32::from_bits(self.u_q32)
    }

    /// Per-ACK update (paper Algorithm 1, `NewAck`) from the raw INT bytes.
    /// A malformed block is rejected with branch [`HpccBranch::Bad`] and the state unchanged.
    #[inline]
    pub fn on_ack(&mut self, cfg: &Config, ack_seq: u32, snd_nxt: u32, int: &[u8]) -> Update {
        let (w, branch) = self.on_ack_window(cfg, ack_seq, snd_nxt, int);
        Update {
            window_bytes: w,
            rate_bps: cfg.rate_bps(w),
            branch,
        }
    }

    /// [`on_ack`](Self::on_ack) without the pacing rate (saves a 64-bit multiply on 32-bit
    /// cores; [`Config::rate_bps`] gives it when needed): the window after the ACK and the
    /// branch.
    #[inline(always)] // one call level less on the per-ACK path (C ABI entry)
    pub fn on_ack_window(
        &mut self,
        cfg: &Config,
        ack_seq: u32,
        snd_nxt: u32,
        int: &[u8],
    ) -> (U24F8, HpccBranch) {
        // The one acceptance rule of INT blocks (`IntView::parse`'s), without error details.
        let branch = match int {
            [b0, b1, body @ ..] if int::accepts::<MAX_HOPS>(int) => {
                self.step::<IntHop>(cfg, ack_seq, snd_nxt, u16::from_be_bytes([*b0, *b1]), body)
            }
            _ => HpccBranch::Bad,
        };
        (U24F8::from_bits(self.w_q8), branch)
    }

    /// Algorithm 1 on hop records of any [`HopSample`] format laid out as Fig. 7's INT hop:
    /// `header` identifies the path (a change re-stores the records, [`HpccBranch::Resync`]),
    /// `words` holds one 8-byte record per hop (at most `MAX_HOPS`; a shorter or longer slice is
    /// [`HpccBranch::Bad`], nothing changed). `on_ack` is this with [`IntHop`] and the hops of a
    /// validated INT block.
    pub fn on_hop_words<H: HopSample>(
        &mut self,
        cfg: &Config,
        ack_seq: u32,
        snd_nxt: u32,
        header: u16,
        words: &[u8],
    ) -> (U24F8, HpccBranch) {
        let hops = words.len() / int::HOP_BYTES;
        let branch = if words.len().is_multiple_of(int::HOP_BYTES) && hops <= MAX_HOPS {
            self.step::<H>(cfg, ack_seq, snd_nxt, header, words)
        } else {
            HpccBranch::Bad
        };
        (U24F8::from_bits(self.w_q8), branch)
    }

    /// docs/hpcc.md § 2 (`init`, `resync`): first INT or path change: store it, `lastUpdateSeq =
    /// snd_nxt`, W unchanged. Rare (once per path): kept out of line so the per-ACK path saves
    /// fewer registers.
    #[cold]
    #[inline(never)]
    fn store_int(&mut self, snd_nxt: u32, header: u16, body: &[u8]) -> HpccBranch {
        let branch = if self.has_int {
            HpccBranch::Resync
        } else {
            HpccBranch::Init
        };
        self.has_int = true;
        self.int_header = header;
        self.hops = [[0; 2]; MAX_HOPS];
        for (dst, c) in self.hops.iter_mut().zip(body.chunks_exact(int::HOP_BYTES)) {
            if let Ok(c) = <[u8; 8]>::try_from(c) {
                *dst = hop_prev(c);
            }
        }
        self.last_update_seq = snd_nxt;
        branch
    }

    /// Algorithm 1 on a validated block (`header`, then `8·nhop` bytes of hops, `nhop ≤
    /// MAX_HOPS`): updates the state, returns the branch. A one-hop block runs
    /// [`update`](Self::update) compiled for one hop, any other compiled for the loop over the
    /// hops: two out-of-line functions, so that each saves only the registers it needs (this
    /// one saves none: it tail-calls one of them).
    #[inline(never)]
    fn step<H: HopSample>(
        &mut self,
        cfg: &Config,
        ack_seq: u32,
        snd_nxt: u32,
        header: u16,
        body: &[u8],
    ) -> HpccBranch {
        match body.first_chunk::<{ int::HOP_BYTES }>() {
            Some(c) if body.len() == int::HOP_BYTES => {
                self.step_one_hop::<H>(cfg, ack_seq, snd_nxt, header, c)
            }
            _ => self.step_hops::<H>(cfg, ack_seq, snd_nxt, header, body),
        }
    }

    /// [`step`](Self::step) for a one-hop block.
    #[inline(never)]
    fn step_one_hop<H: HopSample>(
        &mut self,
        cfg: &Config,
        ack_seq: u32,
        snd_nxt: u32,
        header: u16,
        c: &[u8; int::HOP_BYTES],
    ) -> HpccBranch {
        let Some(prev) = self
            .hops
            .first_mut()
            .filter(|_| self.has_int && header == self.int_header)
        else {
            return self.store_int(snd_nxt, header, c);
        };
        let measured = hop_read(*c, prev).map(|d| (hop_numerator::<H>(cfg, &d), d.dts));
        self.update(cfg, ack_seq, snd_nxt, measured)
    }

    /// [`step`](Self::step) for any number of hops.
    #[inline(never)]
    fn step_hops<H: HopSample>(
        &mut self,
        cfg: &Config,
        ack_seq: u32,
        snd_nxt: u32,
        header: u16,
        body: &[u8],
    ) -> HpccBranch {
        if !self.has_int || header != self.int_header {
            return self.store_int(snd_nxt, header, body);
        }
        let measured = measure_inflight::<H>(cfg, body, &mut self.hops);
        self.update(cfg, ack_seq, snd_nxt, measured)
    }

    /// HPCC Alg. 1 l.8–25 from the busiest hop's `(N, Δts)` (`u' = N/(12.5·T·Δts)`,
    /// [`hop_numerator`]; `None`: no hop measured a rate, [`HpccBranch::Skip`]).
    #[inline(always)]
    fn update(
        &mut self,
        cfg: &Config,
        ack_seq: u32,
        snd_nxt: u32,
        measured: Option<(u64, NonZeroU32)>,
    ) -> HpccBranch {
        let Some((best_n, best_dts)) = measured else {
            return HpccBranch::Skip; // Δts = 0 on every hop: no rate can be measured
        };
        let (t, tau) = (cfg.params.base_rtt_ns, best_dts);
        // HPCC Alg. 1 l.8: τ = min(τ, T)
        // HPCC Alg. 1 l.9: U = (1 − τ/T)·U + (τ/T)·u
        self.u_q32 = if tau.get() >= t {
            // Weight 1: U = u = N/(12.5·T·Δts), placed on the exact side of η (see the fn).
            u_full_weight(cfg, best_n, tau)
        } else {
            // τ = Δts < T: (τ/T)·u = N/(12.5·T²), no reciprocal needed.
            ewma_fast(cfg, self.u_q32, best_n, tau.get())
        };

        // ---- ComputeWind (HPCC Alg. 1 l.11–20) ----
        // HPCC Alg. 1 l.22: ack.seq > lastUpdateSeq, in serial-number order modulo 2^32.
        let update_wc = seq_after(ack_seq, self.last_update_seq);
        // HPCC Alg. 1 l.11: U ≥ η (exact for the stored Q32.32 U: eta_q32 = ⌈η·2^32⌉)
        let (w_q8, branch) = if self.u_q32 >= cfg.eta_q32
            || u32::from(self.inc_stage) >= u32::from(cfg.params.max_stage)
        {
            // Eqn 4 / HPCC Alg. 1 l.12: W = Wc/(U/η) + W_AI
            let w = md_q8(self.wc_q8, self.u_q32, cfg).saturating_add(cfg.w_ai_q8);
            if update_wc {
                self.inc_stage = 0; // HPCC Alg. 1 l.13
            }
            (w, HpccBranch::Md)
        } else {
            // HPCC Alg. 1 l.16: W = Wc + W_AI (saturating: a window)
            let w = self.wc_q8.saturating_add(cfg.w_ai_q8);
            if update_wc {
                self.inc_stage = self.inc_stage.saturating_add(1); // HPCC Alg. 1 l.17
            }
            (w, HpccBranch::Ai)
        };
        // docs/hpcc.md § 2: clamp W to [W_min, W_max]
        self.w_q8 = w_q8.max(cfg.w_min_q8).min(cfg.w_max_q8); // W_min ≤ W_max (config)
        if update_wc {
            // HPCC Alg. 1 l.13/l.17: Wc = W; HPCC Alg. 1 l.23: lastUpdateSeq = snd_nxt
            self.wc_q8 = self.w_q8;
            self.last_update_seq = snd_nxt;
        }
        // HPCC Alg. 1 l.25: R = W/T (computed by the callers that want it: Config::rate_bps)
        branch
    }
}

/// Sequence-number order (RFC 1982 serial-number arithmetic modulo 2^32): `a` is after `b` iff
/// `0 < (a − b) mod 2^32 < 2^31`. A byte sequence number wraps every 4 GiB (every 0.34 s at
/// 100 Gb/s); compared this way the wrap is harmless as long as the two numbers are less than
/// 2^31 apart. Exactly 2^31 apart, neither is after the other. Cost: a subtraction and a signed
/// test against zero.
#[inline(always)]
#[allow(clippy::cast_possible_wrap)] // the reinterpretation as i32 *is* the serial-number test
const fn seq_after(a: u32, b: u32) -> bool {
    // Wrapping: sequence numbers are counters modulo 2^32.
    (cc_math::wrap::wrapping_delta::<32>(a, b) as i32) > 0
}

/// Saturating `u64 → u32`.
#[inline]
fn sat_u32(x: u64) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

/// One hop's telemetry units as Algorithm 1 reads them (Eqn 2, HPCC Alg. 1 l.5), for a record laid
/// out as Fig. 7's INT hop (`B` 4 bits, `ts` 24-bit ns, `tx` a 20-bit counter, `qlen` 16 bits).
/// HPCC's INT hop ([`IntHop`]: 128-byte tx units, 80-byte queue units) is one format; a
/// switch-telemetry record packed into that layout with other units (cc-pcc's) is another:
/// both feed the one Algorithm 1 ([`State::on_hop_words`]), monomorphised per format.
///
/// Units are multiples of 16 bytes and at most 256, so that the hop's numerator is an exact
/// integer below 2^56 (`hop_numerator`; the EWMA's word sizes rest on that bound, module
/// docs).
pub trait HopSample {
    /// Bytes of one queue-length unit (a multiple of 16, at most 256).
    const QUEUE_UNIT_BYTES: u32;
    /// Bytes of one transmitted-bytes counter unit (a multiple of 16, at most 256).
    const TX_UNIT_BYTES: u32;
}

/// HPCC's Fig. 7 INT hop: `tx` in 128-byte units, `qlen` in 80-byte units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntHop;

impl HopSample for IntHop {
    const QUEUE_UNIT_BYTES: u32 = int::QLEN_UNIT_BYTES;
    const TX_UNIT_BYTES: u32 = int::TX_UNIT_BYTES;
}

/// MeasureInflight (HPCC Alg. 1 l.1–7) over every hop of `body`: each hop's record is replaced
/// (HPCC Alg. 1 l.26); the busiest hop's `(N, Δts)` ([`hop_numerator`]), `None` when no hop
/// measured a rate.
///
/// The busiest hop is chosen exactly: `u' = N/(12.5·T·Δts)` with the integer
/// [`hop_numerator`] `N`, so `u'_i > u'_j ⇔ N_i·Δts_j > N_j·Δts_i` (the strict `>` keeps the
/// first hop on a tie; its `Δts` is `τ`).
#[inline(always)]
fn measure_inflight<H: HopSample>(
    cfg: &Config,
    mut rest: &[u8],
    mut hops: &mut [HopPrev],
) -> Option<(u64, NonZeroU32)> {
    let mut best: Option<(u64, NonZeroU32)> = None;
    // Walks the hops and the stored records in step (a `zip` compiles to more loop control).
    while let (Some((c, tail)), Some((prev, htail))) = (
        rest.split_first_chunk::<{ int::HOP_BYTES }>(),
        core::mem::take(&mut hops).split_first_mut(),
    ) {
        rest = tail;
        hops = htail;
        let Some(d) = hop_read(*c, prev) else {
            continue; // Δts = 0: no rate can be measured on this hop
        };
        let n = hop_numerator::<H>(cfg, &d);
        // HPCC Alg. 1 l.6–7: u = u'; τ = Δts, for the largest u'.
        if best.is_none_or(|(n_b, dts_b)| cross_gt(n, dts_b.get(), n_b, d.dts.get())) {
            best = Some((n, d.dts));
        }
    }
    best
}

/// One hop's deltas against its previous record (HPCC Alg. 1 l.5): `Δts` (ns, mod 2^24, non-zero),
/// `Δtx` (tx units, mod 2^20), `qmin = min(qlen, qlen_old)` (queue units) and the speed code.
#[derive(Clone, Copy)]
struct HopDelta {
    dts: NonZeroU32,
    dtx: u32,
    qmin: u32,
    code: u32,
}

/// `S = 1600 Gb/s / B` per speed code (1 = 10G … 9 = 1.6T; 0 for the reserved codes).
const SPEED_S: [u32; 16] = [0, 160, 64, 40, 32, 16, 8, 4, 2, 1, 0, 0, 0, 0, 0, 0];

/// The integer `N = S·(qmin_B·Δts + Δtx_B·T)/16` of a hop, with the queue and tx counts in
/// bytes (`_B`) and `S = 1600 Gb/s / B`, so that `u' = qmin_B/(B·T) + Δtx_B/(B·Δts) =
/// N/(12.5·T·Δts)` (`B` in bytes/ns `= 200/S`). Exact: `S·unit/16` is an integer for every
/// [`HopSample`] (its units are multiples of 16 bytes); `S·unit/16·qmin < 2^12·2^16` times
/// `Δts < 2^24`, `S·unit/16·Δtx < 2^32` times `T < 2^24`: `N < 2^57`.
#[inline(always)]
fn hop_numerator<H: HopSample>(cfg: &Config, d: &HopDelta) -> u64 {
    let s = SPEED_S.get(d.code as usize).copied().unwrap_or(0);
    let a = s
        .wrapping_mul(H::QUEUE_UNIT_BYTES / 16)
        .wrapping_mul(d.qmin);
    let b = s.wrapping_mul(H::TX_UNIT_BYTES / 16).wrapping_mul(d.dtx);
    u64::from(a)
        .wrapping_mul(u64::from(d.dts.get()))
        .wrapping_add(u64::from(b).wrapping_mul(u64::from(cfg.params.base_rtt_ns)))
}

/// `n1·d2 > n2·d1`, exactly (`n < 2^57`, `d < 2^24`).
#[inline(always)]
fn cross_gt(n1: u64, d2: u32, n2: u64, d1: u32) -> bool {
    if (n1 | n2) >> 32 == 0 {
        // Both numerators fit 32 bits (the usual case): 32×32 → 64 products.
        n1.wrapping_mul(u64::from(d2)) > n2.wrapping_mul(u64::from(d1))
    } else {
        mul_u64_u32(n1, d2) > mul_u64_u32(n2, d1)
    }
}

/// Reads one hop's wire bytes `c` against its stored record `prev`, which it replaces
/// (HPCC Alg. 1 l.26: `L = ack.L`, on every ACK): the hop's [`HopDelta`], `None` when `Δts = 0` (no
/// rate can be measured on the hop).
#[inline(always)]
fn hop_read(c: [u8; 8], prev: &mut HopPrev) -> Option<HopDelta> {
    let [old0, old1] = *prev;
    *prev = hop_prev(c);
    let [new0, new1] = *prev;
    // Wrapping: Δts modulo 2^24 (ts sits in bits 4..28 of the first word).
    let dts = NonZeroU32::new(((new0 & !0xF).wrapping_sub(old0 & !0xF) >> 4) & 0xFF_FFFF)?;
    // Wrapping: Δtx modulo 2^20 (tx straddles the two words).
    let tx = |w0: u32, w1: u32| (w0 << 16) | (w1 >> 16);
    Some(HopDelta {
        dts,
        dtx: tx(new0, new1).wrapping_sub(tx(old0, old1)) & 0xF_FFFF,
        qmin: (new1 & 0xFFFF).min(old1 & 0xFFFF),
        code: new0 >> 28,
    })
}

/// HPCC Alg. 1 l.9 with weight `τ/T = 1` (`Δts ≥ T`): `U = u = N/(12.5·T·Δts)` in Q32.32
/// ([`u_q32_of`], within its `2^-29` relative), placed on the **exact** side of `η` so that
/// ComputeWind's `U ≥ η` test (`U ≥ ⌈η·2^32⌉`) gives the exact answer for `u`, as the reference's
/// rational test does, even when `u = η` exactly:
///
/// `u ≥ η ⇔ N/(12.5·T·Δts) ≥ η_num/η_den ⇔ 2·η_den·N ≥ 25·T·η_num·Δts`,
///
/// integers below `2^33·2^56 = 2^89` and `25·2^24·2^32·2^24 < 2^85`: two 64×64-bit word products.
/// Only computed when the rounded `u` is within 256 units (2^-24) of `η` (elsewhere its side is
/// already right); when it is on the wrong side it moves to `⌈η·2^32⌉` or one unit below: by no
/// more than its own error plus one unit.
#[cold]
#[inline(never)]
fn u_full_weight(cfg: &Config, n: u64, dts: NonZeroU32) -> u64 {
    let u = u_q32_of(cfg, n, dts);
    // η ≤ 1, and below 2 the rounded u is within 2^32·(2^-29 + 2^-30 + 2^-32)·2 + 1 < 32 units
    // of the exact one: outside ±256 units of ⌈η·2^32⌉ its side is already right (a u ≥ 2 is
    // far above, a u far below wraps to a huge difference), so no exact test is needed.
    if u.wrapping_sub(cfg.eta_q32).wrapping_add(256) > 512 {
        return u;
    }
    // A tail call: u_full_weight itself needs no stack frame.
    u_exact_side_of_eta(cfg, u, n, dts)
}

/// `u` moved to the exact side of `⌈η·2^32⌉`: `u ≥ η ⇔ 2·η_den·N ≥ 25·T·η_num·Δts`, compared in
/// 128-bit words. Rarer still (`u` within 2^-24 of `η`): out of line.
#[cold]
#[inline(never)]
fn u_exact_side_of_eta(cfg: &Config, u: u64, n: u64, dts: NonZeroU32) -> u64 {
    let eta = cfg.params.eta;
    // 2·η_den < 2^33; 25·T·η_num < 25·2^24·2^32 < 2^61: no wrap.
    let [l0, l1, l2, l3] = mul_64x64(n, u64::from(eta.den).wrapping_mul(2));
    let k = u64::from(cfg.params.base_rtt_ns)
        .wrapping_mul(u64::from(eta.num))
        .wrapping_mul(25);
    let [r0, r1, r2, r3] = mul_64x64(k, u64::from(dts.get()));
    // Most significant word first: lexicographic order is numeric order.
    if (l3, l2, l1, l0) >= (r3, r2, r1, r0) {
        u.max(cfg.eta_q32)
    } else {
        u.min(cfg.eta_q32.saturating_sub(1))
    }
}

/// `u = N/(12.5·T·Δts)` in Q32.32, `= N·(2^33/(25·T))/Δts`: one reciprocal per ACK.
///
/// `2^33/(25T) = c·2^-cs` (`c ∈ [2^31, 2^32)`, `cs ∈ 13 ..= 27` for `T ∈ [1000, 2^24)`),
/// `1/Δts = m·2^-s` (`m ∈ (2^30, 2^31]`, `s ∈ 31 ..= 54`). `k = c·m >> 32` (one `mulhu`,
/// `k < 2^31 + 1`, relative rounding ≤ 2^-29); `N·k < 2^88` is shifted right by
/// `cs + s − 32 ∈ 12 ..= 49` (truncating). The result is `< 2^59` (`u' < 2^27`: module
/// docs).
#[inline(always)] // into its one caller, the out-of-line `u_full_weight`
#[allow(clippy::cast_possible_truncation)] // high word of c·m < 2^63 + 2^32
fn u_q32_of(cfg: &Config, n: u64, dts: NonZeroU32) -> u64 {
    let r = RECIP.recip_refined(dts);
    let k = (u64::from(cfg.u_scale.mant).wrapping_mul(u64::from(r.mant_q31)) >> 32) as u32;
    let (mid, low) = mul_u64_u32(n, k);
    let (mid_hi, mid_lo) = ((mid >> 32) as u32, mid as u32);
    let sh = cfg.u_scale.shift.wrapping_add(r.shift).wrapping_sub(32);
    // Truncating: the dropped part is below one Q32.32 unit (2^-32), far below k's 2^-29.
    match sh.checked_sub(32) {
        // sh ≥ 32: mid >> (sh − 32) (the low word is all fraction).
        Some(0) => mid,
        Some(e) => shr64_small(mid_hi, mid_lo, e),
        // sh ∈ 12 ..= 31: (mid·2^32 + low) >> sh; bits above 2^64 are zero (result < 2^59).
        None => {
            let r_hi = shr64_small(mid_hi, mid_lo, sh) as u32;
            let r_lo = shr64_small(mid_lo, low, sh) as u32;
            (u64::from(r_hi) << 32) | u64::from(r_lo)
        }
    }
}

/// HPCC Alg. 1 l.9 for `τ = Δts < T` in 32-bit words: `U' = U − (τ/T)·U + N/(12.5·T²)` with `U` in
/// Q4.28 (one `u32`), the weight `w = τ/T` in Q0.32 (`τ·(2^32/T)`: one 32×32 product) and
/// `A = (τ/T)·u = N/(12.5·T²)` as one `mulhu` and a shift — about 20 instructions where the
/// exact 96-bit step ([`ewma_q32`]) costs about 80.
///
/// Taken when `U < 16`, `N < 2^32`, `τ/T ≥ 2^-8` and the result stays below 16 (the common case: `U` is near
/// `η` in steady state; `N ≥ 2^32` needs a standing queue of tens of KB at a 100G hop over a
/// whole `T`); otherwise the exact step runs (out of line). Needs `T ≥ 4 635` ns
/// (`N·2^29/(25·T²)` below `N`), else the exact step runs on every ACK.
///
/// Error per step, in units of 2^-28: dropping `U`'s low 4 bits `< 1`, `⌊w·U⌋` `< 1` (up),
/// `⌊A⌋` `< 1` (down), `w` itself `≤ w·2^-31 + 2^-32` (`< 2^-2` for `U < 16`): the step is within
/// `2^-27` of the exact one (test `fast_ewma_is_within_two_q28_units`), and `U` settles within
/// `≈ (T/τ)·2^-28 ≤ 2^-20` of a constant `u` (`T/τ ≤ 2^8`; smaller weights take the exact step).
/// Its share of the window error is measured in docs/hpcc.md.
#[inline(always)]
#[allow(clippy::cast_possible_truncation)] // word splits
fn ewma_fast(cfg: &Config, big_u: u64, n: u64, tau: u32) -> u64 {
    let (u_lo, u_hi) = (big_u as u32, (big_u >> 32) as u32);
    let n32 = n as u32;
    if (u_hi >> 4) | ((n >> 32) as u32) == 0 && cfg.a28_shift < 32 {
        // U in Q4.28 (the low 4 bits of the Q32.32 word are dropped).
        let u28 = (u_hi << 28) | (u_lo >> 4);
        // w = τ/T in Q0.32 = τ·mant >> s, s ∈ 9 ..= 24 (τ < T, so w < 2^32: the low word
        // of the shifted product; relative error ≤ 2^-31 plus the floor).
        let (p_lo, p_hi) = mul_wide(tau, cfg.inv_t_mant);
        let w = shr64_small(p_hi, p_lo, cfg.inv_t_shift) as u32;
        // T/τ > 256: each step moves U by so little that the 2^-28 quantisation would matter
        // (U settles within ≈ (T/τ)·2^-28 of u): the exact step.
        if w >> 24 == 0 {
            return ewma_q32(cfg, big_u, n, tau);
        }
        // (1 − w)·U: w < 1, so w·U ≤ U and the subtraction cannot wrap.
        let keep = u28.wrapping_sub(mulhu(w, u28));
        // A = N·2^29/(25·T²) in Q4.28 (mulhu < 2^32; the shift < 32 is checked above).
        let a = mulhu(n32, cfg.a28_mant) >> cfg.a28_shift;
        if let Some(u) = keep.checked_add(a) {
            return (u64::from(u >> 28) << 32) | u64::from(u << 4);
        }
    }
    ewma_q32(cfg, big_u, n, tau)
}

/// `(1 − τ/T)·U + (τ/T)·u` for `τ = Δts < T`, in Q32.32, without a reciprocal: with
/// `u = N/(12.5·T·τ)`, `(τ/T)·u = N/(12.5·T²)` (τ cancels), so the step is
/// `D = A − B`, `A = N·2^32/(12.5·T²)`, `B = w·U` (units of 2^-32), `w = τ/T`, and
/// `U' = U + round(D)`, at least one unit toward `u` when `D ≠ 0` (no rounding dead band).
///
/// Both terms are kept with 32 fractional bits below the unit (96-bit words) and every constant
/// is a `u64` that needs no shift (a shift by a config value is a branchy sequence on rv32):
/// * `w·2^64 = τ·⌊2^64/T⌋` (`τ < T`, so `< 2^64`; error `< τ·2^-64`, relative `< 2^-40`);
/// * `A·2^32 = N·M`, with `M = 2^65/(25·T²)` when that is `≥ 2^32` (`T ≤ 13 107` ns, relative
///   rounding `≤ 2^-33`), else `M = 2^97/(25·T²)` (`< 2^64`, `≥ 2^44`) and the low word of
///   `N·M` dropped.
///
/// So `D` is exact to a fraction of a unit plus the constants' relative `2^-33`: a constant `u`
/// is reached to within about one unit (2^-32), with no bias from rounding `w` (a Q0.32 `w`
/// would stop `≈ T/τ` units away). `A < 2^59` units (`A ≤ u'`, module
/// docs), so every product fits its words.
#[cold]
#[inline(never)]
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)] // word splits; two's complement of the 96-bit difference
fn ewma_q32(cfg: &Config, big_u: u64, n: u64, tau: u32) -> u64 {
    // w = τ·K (K = ⌊2^64/T⌋ < 2^54): the true product is < 2^64, so the high word's wrap-free.
    let (k0, k1) = (cfg.inv_t64 as u32, (cfg.inv_t64 >> 32) as u32);
    let (w0, c) = mul_wide(tau, k0);
    let w = (u64::from(c.wrapping_add(tau.wrapping_mul(k1))) << 32) | u64::from(w0);
    // B = U·w with 32 fractional bits below the unit: words 1..=3 of the 128-bit product.
    let [_, b0, b1, b2] = mul_64x64(big_u, w);
    // A = N·M: words 0..=2, or 1..=3 for the second form of M.
    let [p0, p1, p2, p3] = mul_64x64(n, cfg.a_mul);
    let (a0, a1, a2) = if cfg.a_drop {
        (p1, p2, p3)
    } else {
        (p0, p1, p2)
    };
    // D = A − B (96-bit two's complement), rounded to whole units: (D + 2^31) >> 32.
    let (d0, borrow) = a0.overflowing_sub(b0);
    let a_hi = (u64::from(a2) << 32) | u64::from(a1);
    let b_hi = (u64::from(b2) << 32) | u64::from(b1);
    let d_hi = a_hi.wrapping_sub(b_hi).wrapping_sub(u64::from(borrow)) as i64;
    let (_, carry) = d0.overflowing_add(1 << 31);
    let mut step = d_hi.wrapping_add(i64::from(carry));
    if step == 0 {
        // D ∈ (−½, ½): d_hi is −1 (D < 0: one unit down) or 0 (one unit up unless D = 0).
        step = d_hi | i64::from(d0 != 0);
    }
    // Saturating at both ends: only raw parts (U near 0 or 2^64 with nonsense) could reach them.
    big_u.saturating_add_signed(step)
}

/// `md_q8`'s general normalisation of `U` (outside `[0.5, 2)`): `(x, s1)`, or `None` when the
/// window saturates (`U = 0` or `U < 2^-30`). Rare (MD runs with `U` near `η`): out of line.
#[cold]
#[inline(never)]
fn md_normalise_slow(u_hi: u32, u_lo: u32) -> Option<(u32, u32)> {
    if let Some(hi) = NonZeroU32::new(u_hi) {
        // cc-math's 5-step binary search (rv32imac has no clz; `leading_zeros` costs ~30).
        let (m, lz) = cc_math::recip::normalize(hi);
        // x = U >> k, k = 32 − lz: the low word's top k bits fill in below m.
        return Some((
            m | ((u_lo >> 1) >> (31u32.wrapping_sub(lz))),
            61u32.wrapping_sub(lz),
        ));
    }
    // U = 0: Wc/(0/η) = ∞
    let lo = NonZeroU32::new(u_lo)?;
    let (m, lz) = cc_math::recip::normalize(lo);
    // None: U < 2^-30, the window is astronomically large
    29u32.checked_sub(lz).map(|s1| (m, s1))
}

/// `Wc·η/U` in Q24.8, rounded to nearest, saturating (`U = 0` gives `u32::MAX`, clamped to
/// `W_max` by the caller).
///
/// MD runs with `U` near or above `η`, so `U ∈ [0.5, 2)` is the common case (with `η ≥ 1/2`,
/// as every deployed HPCC): there the Q32.32
/// `U` is already normalised after at most a one-bit shift (`x = U·2^31` or `2U·2^31`, bit 31
/// set), `r = 2^62/x` ([`cc_math::RecipTable::recip_norm_refined`], relative 2^-30), `η` is folded
/// in with one `mulhu` (`e = r·η`) and `W = Wc·e >> 31` (or `>> 30`): two constant shifts, no
/// variable 64-bit shift. Elsewhere [`md_q8_general`] (out of line).
#[inline]
#[allow(clippy::cast_possible_truncation)] // word splits
fn md_q8(wc_q8: u32, u_q32: u64, cfg: &Config) -> u32 {
    let (u_hi, u_lo) = ((u_q32 >> 32) as u32, u_q32 as u32);
    let (x, wide) = match u_hi {
        // η < 1/2 would leave e = r·η with fewer than 31 significant bits: general path.
        _ if cfg.eta_mul < 1 << 31 => return md_q8_general(wc_q8, u_q32, cfg),
        // U ∈ [1, 2): x/2^31 = U, so r·η/2^31 = η/U.
        1 => ((1 << 31) | (u_lo >> 1), false),
        // U ∈ [0.5, 1): x/2^31 = 2U, so r·η/2^30 = η/U.
        0 if u_lo >= 1 << 31 => (u_lo, true),
        _ => return md_q8_general(wc_q8, u_q32, cfg),
    };
    // e = r·η ≤ 2^31 + 1; Wc·e < 2^63.
    let e = mulhu(RECIP.recip_norm_refined(x), cfg.eta_mul);
    let p = u64::from(wc_q8).wrapping_mul(u64::from(e));
    let w = if wide {
        p.wrapping_add(1 << 29) >> 30
    } else {
        p.wrapping_add(1 << 30) >> 31
    };
    sat_u32(w)
}

/// `Wc·η/U` in Q24.8 for any `U` (saturating; `U = 0` gives `u32::MAX`, clamped to `W_max` by
/// the caller).
///
/// `a = Wc·η` (Q24.8, rounded). `U` (Q32.32) is cut to its top 32 significant bits, normalised:
/// `x = U·2^(lz − 32)` with bit 31 set (relative error < 2^-31), `r = 2^62/x` ([`cc_math::RecipTable::recip_norm_refined`]),
/// so `a/U = a·r·2^(lz − 62)`... in words: `W = a·r >> (30 + k)` with `k = 32 − lz` when the high
/// word of `U` is non-zero (`k ∈ 1 ..= 32`), `W = a·r >> (30 − lz)` when only the low word is
/// (`lz` of the low word; `lz = 31` would be a left shift: saturates). Rounded to nearest.
#[cold]
#[inline(never)]
#[allow(clippy::cast_possible_truncation)] // word splits
fn md_q8_general(wc_q8: u32, u_q32: u64, cfg: &Config) -> u32 {
    // Wc·η: u32 × (≤ 2^31) < 2^63; η ≤ 1 so the result fits u32.
    let a = (u64::from(wc_q8)
        .wrapping_mul(u64::from(cfg.eta_q31))
        .wrapping_add(1 << 30)
        >> 31) as u32;
    let (u_hi, u_lo) = ((u_q32 >> 32) as u32, u_q32 as u32);
    // (x normalised, right shift of a·r minus one for the rounding)
    let Some((x, s1)) = md_normalise_slow(u_hi, u_lo) else {
        return u32::MAX;
    };
    let p = u64::from(a).wrapping_mul(u64::from(RECIP.recip_norm_refined(x))); // a < 2^32, r ≤ 2^31 + 1
    // t = p >> s1 (s1 ∈ 0 ..= 60), then round: (t + 1) >> 1, saturating to u32.
    let (p_hi, p_lo) = ((p >> 32) as u32, p as u32);
    let t = match s1.checked_sub(32) {
        Some(e) => u64::from(p_hi >> e),
        None if s1 == 0 => p,
        None => shr64_small(p_hi, p_lo, s1),
    };
    sat_u32(t.wrapping_add(1) >> 1)
}

#[cfg(test)]
mod tests;

// The README (what crates.io shows) runs its example as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
