//! HPCC through the C ABI (`cc_hpcc_*`).
//!
//! One [`CcHpccConfig`] (validated, every reciprocal precomputed; shared by every flow) and one
//! 64-byte [`CcHpccFlow`] per flow (up to 5 hops). Per ACK: [`cc_hpcc_on_ack`] takes the raw INT
//! block exactly as it follows the UDP header (pointer + length), writes the new window (Q24.8
//! bytes) and returns the branch; [`cc_hpcc_on_ack_ex`] also gives the pacing rate. A malformed
//! block returns `CC_HPCC_BRANCH_BAD` and changes nothing. Semantics: `docs/hpcc.md`.

use core::num::NonZeroU32;
use hpcc_cc::{
    Config, DEFAULT_MAX_HOPS, HpccBranch, Params, Ratio, RawParts, State, U24F8, U32F32,
};

use crate::{CcStatus, block};

/// Bytes of a [`CcHpccFlow`] block (`size_of` the Rust `hpcc_cc::State`, 5 hops).
pub const CC_HPCC_FLOW_BYTES: usize = 64;
/// Bytes of a [`CcHpccConfig`] block (at least `size_of` the Rust `hpcc_cc::Config`).
pub const CC_HPCC_CONFIG_BYTES: usize = 256;
/// Largest `nhop` a flow accepts (`hpcc_cc::DEFAULT_MAX_HOPS`).
pub const CC_HPCC_MAX_HOPS: u32 = 5;
const _: () = assert!(CC_HPCC_MAX_HOPS as usize == DEFAULT_MAX_HOPS);

/// Opaque per-flow state (64 bytes: the previous INT packed as on the wire, `U`, `W`, `Wc`,
/// `lastUpdateSeq`, `incStage`). Allocate one per flow, initialise with [`cc_hpcc_flow_init`].
#[repr(C, align(8))]
pub struct CcHpccFlow {
    _opaque: [u8; CC_HPCC_FLOW_BYTES],
}
block::fits!(CcHpccFlow, State);

/// Opaque validated configuration, written by [`cc_hpcc_config_init`]; read-only afterwards.
#[repr(C, align(8))]
pub struct CcHpccConfig {
    _opaque: [u8; CC_HPCC_CONFIG_BYTES],
}
block::fits!(CcHpccConfig, Config);

/// Plain-integer HPCC parameters (docs/hpcc.md § 2 names). [`cc_hpcc_params_default`] fills in the
/// paper's: 100 Gb/s, `T` = 13 µs, `η` = 95/100, `maxStage` 5, `W_AI` 80 B, min 100 Mb/s.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcHpccParams {
    /// NIC line rate, bit/s (`W_max = nic_rate·T`): 1 Mb/s ..= 10 Tb/s, `W_max` < 16 MiB.
    pub nic_rate_bps: u64,
    /// Lowest pacing rate, bit/s (`W_min = min_rate·T` ≥ 16 bytes).
    pub min_rate_bps: u64,
    /// Base RTT `T`, ns: 1 000 ..= 16 777 215.
    pub base_rtt_ns: u32,
    /// `η = eta_num / eta_den` ∈ (0, 1].
    pub eta_num: u32,
    /// Denominator of `η` (non-zero).
    pub eta_den: u32,
    /// Additive increase `W_AI`, bytes (≤ `W_max`).
    pub w_ai_bytes: u32,
    /// `maxStage` (≤ 255).
    pub max_stage: u32,
}

/// What [`cc_hpcc_on_ack_ex`] reports besides the branch.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcHpccUpdate {
    /// Pacing rate `R = W/T`, bit/s.
    pub rate_bps: u64,
    /// Window `W` after the ACK, Q24.8 bytes (`>> 8` for whole bytes).
    pub window_q8_bytes: u32,
}

/// Raw per-flow state (for saving, restoring or forcing it): see `hpcc_cc::RawParts`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcHpccState {
    /// `U`, Q32.32.
    pub u_q32: u64,
    /// The stored INT's hop words (big-endian decoded, `B << 60 | ts << 36 | tx << 16 | qlen`).
    pub hops: [u64; 5],
    /// `W`, Q24.8 bytes.
    pub w_q8: u32,
    /// `Wc`, Q24.8 bytes.
    pub wc_q8: u32,
    /// `lastUpdateSeq`.
    pub last_update_seq: u32,
    /// The stored INT's header `nhop << 12 | path_id` (meaningful when `has_int` is non-zero).
    pub int_header: u16,
    /// Non-zero once an INT block was stored.
    pub has_int: u8,
    /// `incStage`.
    pub inc_stage: u8,
}

/// Fills `*out` with the paper's parameters (see [`CcHpccParams`]).
///
/// # Safety
/// `out` is non-null, aligned and valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_hpcc_params_default(out: *mut CcHpccParams) {
    let p = Params::PAPER;
    let v = CcHpccParams {
        nic_rate_bps: p.nic_rate_bps,
        min_rate_bps: p.min_rate_bps,
        base_rtt_ns: p.base_rtt_ns,
        eta_num: p.eta.num,
        eta_den: p.eta.den,
        w_ai_bytes: p.w_ai_bytes,
        max_stage: u32::from(p.max_stage),
    };
    // SAFETY: caller contract.
    unsafe { block::out(out, v) }
}

/// Validates `*params` and writes the configuration (precomputing the per-speed-code integer
/// scales of Eqn 2, `2^32/T` and the rate scale; the only HPCC call that divides).
/// `CC_STATUS_INVALID_CONFIG` (block untouched) if out of range.
///
/// # Safety
/// `cfg` is a writable [`CcHpccConfig`] block; `params` is readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_hpcc_config_init(
    cfg: *mut CcHpccConfig,
    params: *const CcHpccParams,
) -> CcStatus {
    // SAFETY: caller contract.
    let p: &CcHpccParams = unsafe { block::param(params) };
    let Ok(max_stage) = u8::try_from(p.max_stage) else {
        return CcStatus::InvalidConfig;
    };
    let params = Params {
        nic_rate_bps: p.nic_rate_bps,
        base_rtt_ns: p.base_rtt_ns,
        eta: Ratio {
            num: p.eta_num,
            den: p.eta_den,
        },
        max_stage,
        w_ai_bytes: p.w_ai_bytes,
        min_rate_bps: p.min_rate_bps,
    };
    match Config::new(params) {
        Ok(c) => {
            // SAFETY: caller contract.
            unsafe { block::init(cfg, c) };
            CcStatus::Ok
        }
        Err(_) => CcStatus::InvalidConfig,
    }
}

/// Initialises a flow (`W = Wc = W_max`, `U = 1`, no stored INT).
///
/// # Safety
/// `flow` is a writable [`CcHpccFlow`] block; `cfg` was initialised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_hpcc_flow_init(flow: *mut CcHpccFlow, cfg: *const CcHpccConfig) {
    // SAFETY: caller contract.
    unsafe { block::init(flow, State::new(block::get(cfg))) }
}

/// The INT bytes as a slice; `int` may be null only when `len` is 0.
///
/// # Safety
/// `int` is valid for reads of `len` bytes (or `len` is 0).
#[inline(always)]
unsafe fn int_bytes<'a>(int: *const u8, len: u32) -> &'a [u8] {
    match NonZeroU32::new(len) {
        None => &[],
        Some(n) => {
            debug_assert!(!int.is_null(), "null INT pointer with a non-zero length");
            // SAFETY: caller contract: `int` is readable for `len` bytes (u8: any alignment).
            unsafe { core::slice::from_raw_parts(int, n.get() as usize) }
        }
    }
}

/// The borrowed views both per-ACK calls work on.
///
/// # Safety
/// As [`cc_hpcc_on_ack`]: `cfg` and `flow` initialised blocks, `int` readable for `int_len` bytes.
#[inline(always)]
unsafe fn ack_args<'a>(
    cfg: *const CcHpccConfig,
    flow: *mut CcHpccFlow,
    int: *const u8,
    int_len: u32,
) -> (&'a Config, &'a mut State, &'a [u8]) {
    // SAFETY: forwarded caller contract.
    unsafe {
        (
            block::get(cfg),
            block::get_mut(flow),
            int_bytes(int, int_len),
        )
    }
}

/// One ACK: `ack_seq`, the sender's `snd_nxt`, and the INT block as received (`int_len` bytes,
/// `2 + 8·nhop`, network byte order). Writes the window after the ACK (Q24.8 bytes) to
/// `*out_window_q8_bytes` and returns the branch (`BAD`: malformed block, nothing changed; the
/// window written is the unchanged one). Sequence numbers may wrap: `ack_seq` is compared with
/// the stored `snd_nxt` in serial-number order modulo 2^32 (after it iff
/// `0 < (ack_seq − last) mod 2^32 < 2^31`); 24-bit PSNs must be extended to 32 bits first.
///
/// # Safety
/// `cfg` and `flow` were initialised; `int` is readable for `int_len` bytes (may be null when
/// `int_len` is 0); `out_window_q8_bytes` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_hpcc_on_ack(
    cfg: *const CcHpccConfig,
    flow: *mut CcHpccFlow,
    ack_seq: u32,
    snd_nxt: u32,
    int: *const u8,
    int_len: u32,
    out_window_q8_bytes: *mut u32,
) -> HpccBranch {
    // SAFETY: caller contract.
    let (cfg, st, int) = unsafe { ack_args(cfg, flow, int, int_len) };
    let (w, branch) = st.on_ack_window(cfg, ack_seq, snd_nxt, int);
    // SAFETY: caller contract.
    unsafe { block::out(out_window_q8_bytes, w.to_bits()) };
    branch
}

/// [`cc_hpcc_on_ack`] with the pacing rate as well (`*out`).
///
/// # Safety
/// As [`cc_hpcc_on_ack`]; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_hpcc_on_ack_ex(
    cfg: *const CcHpccConfig,
    flow: *mut CcHpccFlow,
    ack_seq: u32,
    snd_nxt: u32,
    int: *const u8,
    int_len: u32,
    out: *mut CcHpccUpdate,
) -> HpccBranch {
    // SAFETY: caller contract.
    let (cfg, st, int) = unsafe { ack_args(cfg, flow, int, int_len) };
    let u = st.on_ack(cfg, ack_seq, snd_nxt, int);
    let r = CcHpccUpdate {
        rate_bps: u.rate_bps,
        window_q8_bytes: u.window_bytes.to_bits(),
    };
    // SAFETY: caller contract.
    unsafe { block::out(out, r) };
    u.branch
}

/// Pacing rate `R = W/T` (bit/s) for a Q24.8 window under `cfg`.
///
/// # Safety
/// `cfg` was initialised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_hpcc_rate_bps(cfg: *const CcHpccConfig, window_q8_bytes: u32) -> u64 {
    // SAFETY: caller contract.
    let cfg = unsafe { block::get(cfg) };
    cfg.rate_bps(U24F8::from_bits(window_q8_bytes))
}

/// Reads the flow's raw state into `*out`.
///
/// # Safety
/// `flow` was initialised; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_hpcc_flow_get_state(flow: *const CcHpccFlow, out: *mut CcHpccState) {
    // SAFETY: caller contract.
    let s = unsafe { block::get(flow) };
    let r = s.raw_parts();
    let v = CcHpccState {
        u_q32: r.u.to_bits(),
        hops: r.hops,
        w_q8: r.w_bytes.to_bits(),
        wc_q8: r.wc_bytes.to_bits(),
        last_update_seq: r.last_update_seq,
        int_header: r.int_header.unwrap_or(0),
        has_int: u8::from(r.int_header.is_some()),
        inc_stage: r.inc_stage,
    };
    // SAFETY: caller contract.
    unsafe { block::out(out, v) }
}

/// Replaces the flow's state by `*state` (any values are accepted; updates stay panic-free).
///
/// # Safety
/// `flow` is a writable [`CcHpccFlow`] block; `state` is readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_hpcc_flow_set_state(flow: *mut CcHpccFlow, state: *const CcHpccState) {
    // SAFETY: caller contract.
    let s: &CcHpccState = unsafe { block::param(state) };
    let v = State::<DEFAULT_MAX_HOPS>::from_raw_parts(RawParts {
        w_bytes: U24F8::from_bits(s.w_q8),
        wc_bytes: U24F8::from_bits(s.wc_q8),
        u: U32F32::from_bits(s.u_q32),
        last_update_seq: s.last_update_seq,
        inc_stage: s.inc_stage,
        int_header: (s.has_int != 0).then_some(s.int_header),
        hops: s.hops,
    });
    // SAFETY: caller contract.
    unsafe { block::init(flow, v) }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;
    use core::mem::MaybeUninit;
    use hpcc_cc::{Hop, Speed, int};

    fn int1(ts: u32, tx: u32, q: u16) -> [u8; 10] {
        let mut b = [0u8; 10];
        let h = Hop {
            speed: Speed::G100,
            ts_ns: ts,
            tx_units: tx,
            qlen_units: q,
        };
        int::encode::<5>(0x123, &[h], &mut b).unwrap();
        b
    }

    #[test]
    fn acks_match_the_crate() {
        let mut p = MaybeUninit::<CcHpccParams>::uninit();
        let mut cfg = MaybeUninit::<CcHpccConfig>::uninit();
        let mut flow = MaybeUninit::<CcHpccFlow>::uninit();
        let rcfg = Config::PAPER;
        let mut rust: State = State::new(&rcfg);
        assert_eq!(core::mem::size_of::<State>(), CC_HPCC_FLOW_BYTES);
        // SAFETY: live locals, initialised in order.
        unsafe {
            cc_hpcc_params_default(p.as_mut_ptr());
            assert_eq!(
                cc_hpcc_config_init(cfg.as_mut_ptr(), p.as_ptr()),
                CcStatus::Ok
            );
            assert_eq!(*block::get(cfg.as_ptr()), rcfg);
            cc_hpcc_flow_init(flow.as_mut_ptr(), cfg.as_ptr());
            let mut w = 0u32;
            let acks = [
                int1(1000, 0, 100),
                int1(2000, 100, 200),
                int1(2800, 170, 0),
                int1(3800, 240, 0),
                int1(3800, 240, 0),
            ];
            for (i, b) in acks.iter().enumerate() {
                let seq = i as u32 * 1000;
                let want = rust.on_ack(&rcfg, seq, seq + 1000, b);
                let got = cc_hpcc_on_ack(
                    cfg.as_ptr(),
                    flow.as_mut_ptr(),
                    seq,
                    seq + 1000,
                    b.as_ptr(),
                    b.len() as u32,
                    &mut w,
                );
                assert_eq!(
                    (got, w),
                    (want.branch, want.window_bytes.to_bits()),
                    "ack {i}"
                );
                assert_eq!(cc_hpcc_rate_bps(cfg.as_ptr(), w), want.rate_bps);
            }
            let mut u = MaybeUninit::<CcHpccUpdate>::uninit();
            let b = int1(4800, 300, 7);
            let want = rust.on_ack(&rcfg, 9000, 9000, &b);
            let got = cc_hpcc_on_ack_ex(
                cfg.as_ptr(),
                flow.as_mut_ptr(),
                9000,
                9000,
                b.as_ptr(),
                10,
                u.as_mut_ptr(),
            );
            let u = u.assume_init();
            assert_eq!(
                (got, u.window_q8_bytes, u.rate_bps),
                (want.branch, want.window_bytes.to_bits(), want.rate_bps)
            );
            // Malformed (null with length 0, a truncated block): BAD, state unchanged.
            let before = *block::get(flow.as_ptr());
            let got = cc_hpcc_on_ack(
                cfg.as_ptr(),
                flow.as_mut_ptr(),
                1,
                2,
                core::ptr::null(),
                0,
                &mut w,
            );
            assert_eq!(got, HpccBranch::Bad);
            let got = cc_hpcc_on_ack(cfg.as_ptr(), flow.as_mut_ptr(), 1, 2, b.as_ptr(), 9, &mut w);
            assert_eq!(got, HpccBranch::Bad);
            assert_eq!(*block::get(flow.as_ptr()), before);
            // State round trip.
            let mut st = MaybeUninit::<CcHpccState>::uninit();
            cc_hpcc_flow_get_state(flow.as_ptr(), st.as_mut_ptr());
            let st = st.assume_init();
            assert_eq!(st.w_q8, rust.window_bytes().to_bits());
            assert_eq!(st.u_q32, rust.u().to_bits());
            cc_hpcc_flow_set_state(flow.as_mut_ptr(), &st);
            assert_eq!(*block::get(flow.as_ptr()), rust);
            // Invalid configs.
            (*p.as_mut_ptr()).eta_den = 0;
            assert_eq!(
                cc_hpcc_config_init(cfg.as_mut_ptr(), p.as_ptr()),
                CcStatus::InvalidConfig
            );
            cc_hpcc_params_default(p.as_mut_ptr());
            (*p.as_mut_ptr()).max_stage = 256;
            assert_eq!(
                cc_hpcc_config_init(cfg.as_mut_ptr(), p.as_ptr()),
                CcStatus::InvalidConfig
            );
        }
    }
}
