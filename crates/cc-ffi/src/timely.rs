//! TIMELY through the C ABI (`cc_timely_*`).
//!
//! One [`CcTimelyConfig`] (validated, precomputed; shared by every flow) and one 16-byte
//! [`CcTimelyFlow`] per flow. Per completion: [`cc_timely_on_completion`] (the common call,
//! all arguments in registers) or [`cc_timely_on_completion_ex`] (with the flow's measured
//! sending rate for the optional application-limited rule, and the RTT). Semantics:
//! `docs/timely.md`.

use timely_cc::{Completion, Config, Params, Ratio, RawParts, State, TimelyBranch, TimelyOutcome};

use crate::{CcStatus, block};

/// Bytes of a [`CcTimelyFlow`] block (`size_of` the Rust `timely_cc::State`).
pub const CC_TIMELY_FLOW_BYTES: usize = 24;
/// Bytes of a [`CcTimelyConfig`] block (`size_of` the Rust `timely_cc::Config`).
pub const CC_TIMELY_CONFIG_BYTES: usize = 208;

/// Opaque per-flow state (24 bytes). Allocate one per flow, initialise with
/// [`cc_timely_flow_init`].
#[repr(C, align(8))]
pub struct CcTimelyFlow {
    _opaque: [u8; CC_TIMELY_FLOW_BYTES],
}
block::fits!(CcTimelyFlow, State);

/// Opaque validated configuration, written by [`cc_timely_config_init`]; read-only afterwards.
#[repr(C, align(8))]
pub struct CcTimelyConfig {
    _opaque: [u8; CC_TIMELY_CONFIG_BYTES],
}
block::fits!(CcTimelyConfig, Config);

/// Plain-integer TIMELY parameters (every rate in bit/s, every time in ns; ratios as
/// numerator/denominator). [`cc_timely_params_default`] fills in the paper's.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcTimelyParams {
    /// NIC line rate (serialisation delay is removed from the RTT). ≥ 1 Mb/s.
    pub line_rate_bps: u64,
    /// Lowest rate the controller sets.
    pub min_rate_bps: u64,
    /// Highest rate the controller sets (≤ 549.7 Gb/s).
    pub max_rate_bps: u64,
    /// Rate before the first completion.
    pub init_rate_bps: u64,
    /// Additive increase step `δ`.
    pub delta_bps: u64,
    /// `T_low`, ns.
    pub t_low_ns: u32,
    /// `T_high`, ns (`1 ..= 2^27 − 1`, `timely_cc::MAX_RTT_NS`).
    pub t_high_ns: u32,
    /// `minRTT`, ns (the gradient's normaliser).
    pub min_rtt_ns: u32,
    /// EWMA weight `α = alpha_num / alpha_den` ∈ [1/16, 1].
    pub alpha_num: u32,
    /// Denominator of `α` (non-zero).
    pub alpha_den: u32,
    /// Decrease factor `β = beta_num / beta_den` ∈ (0, 1].
    pub beta_num: u32,
    /// Denominator of `β` (non-zero).
    pub beta_den: u32,
    /// HAI multiplier `N` (≥ 1).
    pub hai_n: u32,
    /// Completions with `g ≤ 0` in a row before HAI (≤ 255).
    pub hai_after: u32,
    /// Optional application-limited rule: increase only while the sending rate is at least
    /// `app_limited_num / app_limited_den` of the target. `app_limited_den = 0`: off.
    pub app_limited_num: u32,
    /// Denominator of the application-limited fraction; 0 turns the rule off.
    pub app_limited_den: u32,
    /// Non-zero: scale every rate change by `min(1, bytes·8 / (rate·minRTT))` (§5).
    pub per_completion_scaling: u32,
}

/// A completion with everything [`cc_timely_on_completion_ex`] can use.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcTimelyCompletion {
    /// When the segment was sent (NIC clock, ns).
    pub t_send_ns: u64,
    /// When its completion arrived (same clock, ns).
    pub t_complete_ns: u64,
    /// The flow's measured sending rate, bit/s, for the application-limited rule; 0 = unknown.
    pub sending_rate_bps: u64,
    /// Segment size, bytes.
    pub bytes: u32,
}

/// What [`cc_timely_on_completion_ex`] reports besides the branch.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcTimelyUpdate {
    /// The rate after the event, bit/s (a multiple of 128).
    pub rate_bps: u64,
    /// The measured RTT, Q27.4 ns (1/16 ns; serialisation removed; saturated at 2^31 − 1;
    /// 0 for `SKIP`).
    pub rtt_q4: u64,
    /// 1 when the application-limited rule suppressed an increase.
    pub app_limited: u32,
}

/// Raw per-flow state (for saving, restoring or forcing it): see `timely_cc::State::from_raw_parts`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcTimelyState {
    /// Rate in units of 128 bit/s.
    pub rate_u128bps: u32,
    /// Previous RTT, Q27.4 ns (≤ 2^31 − 1; larger values are clamped).
    pub prev_rtt_q4: u32,
    /// EWMA of RTT differences, Q27.4 ns (floored; the whole EWMA, `Q27.68` ns, is this word
    /// and the two fraction words below, |·| ≤ (2^31 − 1)·2^64, larger values clamped).
    pub rtt_diff_q4: i32,
    /// Bits 63..32 of the EWMA's 64 fraction bits below its Q4 word.
    pub rtt_diff_frac_hi: u32,
    /// Bits 31..0 of the EWMA's 64 fraction bits below its Q4 word.
    pub rtt_diff_frac_lo: u32,
    /// Residual counter: sign of a sub-resolution EWMA and the identical samples it has left.
    pub residual: i16,
    /// Completions with `g ≤ 0` in a row.
    pub hai_count: u8,
    /// 1 once the first valid sample was seen.
    pub started: u8,
}

/// Fills `*out` with the paper's defaults (TIMELY §6, docs/timely.md § "API"): 10 Gb/s line, min 10
/// Mb/s, max = init = line rate, `T_low` 50 µs, `T_high` 500 µs, `minRTT` 20 µs, `α` 7/8, `β` 4/5,
/// `δ` 10 Mb/s, HAI `N` = 5 after 5; optional rules off.
///
/// # Safety
/// `out` is non-null, aligned and valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_timely_params_default(out: *mut CcTimelyParams) {
    let p = Params::DEFAULT;
    let (al_num, al_den) = p.app_limited.map_or((0, 0), |r| (r.num, r.den));
    let v = CcTimelyParams {
        line_rate_bps: p.line_rate_bps,
        min_rate_bps: p.min_rate_bps,
        max_rate_bps: p.max_rate_bps,
        init_rate_bps: p.init_rate_bps,
        delta_bps: p.delta_bps,
        t_low_ns: p.t_low_ns,
        t_high_ns: p.t_high_ns,
        min_rtt_ns: p.min_rtt_ns,
        alpha_num: p.alpha.num,
        alpha_den: p.alpha.den,
        beta_num: p.beta.num,
        beta_den: p.beta.den,
        hai_n: p.hai_n,
        hai_after: p.hai_after,
        app_limited_num: al_num,
        app_limited_den: al_den,
        per_completion_scaling: u32::from(p.per_completion_scaling),
    };
    // SAFETY: caller contract.
    unsafe { block::out(out, v) }
}

/// Validates `*params` and writes the configuration (precomputing every reciprocal; the only
/// TIMELY call that divides). `CC_STATUS_INVALID_CONFIG` (block untouched) if out of range.
///
/// # Safety
/// `cfg` is a writable [`CcTimelyConfig`] block; `params` is readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_timely_config_init(
    cfg: *mut CcTimelyConfig,
    params: *const CcTimelyParams,
) -> CcStatus {
    // SAFETY: caller contract.
    let p: &CcTimelyParams = unsafe { block::param(params) };
    let params = Params {
        line_rate_bps: p.line_rate_bps,
        min_rate_bps: p.min_rate_bps,
        max_rate_bps: p.max_rate_bps,
        init_rate_bps: p.init_rate_bps,
        t_low_ns: p.t_low_ns,
        t_high_ns: p.t_high_ns,
        min_rtt_ns: p.min_rtt_ns,
        alpha: Ratio::new(p.alpha_num, p.alpha_den),
        beta: Ratio::new(p.beta_num, p.beta_den),
        delta_bps: p.delta_bps,
        hai_n: p.hai_n,
        hai_after: p.hai_after,
        app_limited: (p.app_limited_den != 0)
            .then_some(Ratio::new(p.app_limited_num, p.app_limited_den)),
        per_completion_scaling: p.per_completion_scaling != 0,
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

/// Initialises a flow at the configured initial rate, before its first completion.
///
/// # Safety
/// `flow` is a writable [`CcTimelyFlow`] block; `cfg` was initialised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_timely_flow_init(flow: *mut CcTimelyFlow, cfg: *const CcTimelyConfig) {
    // SAFETY: caller contract.
    unsafe { block::init(flow, State::new(block::get(cfg))) }
}

/// One completion (segment of `bytes` sent at `t_send_ns`, completed at `t_complete_ns`, NIC
/// clock): the RTT engine and Algorithm 1. Writes the new rate (bit/s) to `*out_rate_bps` and
/// returns the branch (`SKIP` when `t_complete_ns < t_send_ns`: nothing changed).
/// [`cc_timely_on_completion_rv`] is the same call with the result in registers (cheaper).
///
/// # Safety
/// `cfg` and `flow` were initialised; `out_rate_bps` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_timely_on_completion(
    cfg: *const CcTimelyConfig,
    flow: *mut CcTimelyFlow,
    t_send_ns: u64,
    t_complete_ns: u64,
    bytes: u32,
    out_rate_bps: *mut u64,
) -> TimelyBranch {
    // SAFETY: caller contract.
    let (c, st) = unsafe { (block::get(cfg), block::get_mut(flow)) };
    let o = st.on_completion_rate(c, &Completion::new(t_send_ns, t_complete_ns, bytes));
    // SAFETY: caller contract.
    unsafe { block::out(out_rate_bps, o.rate_bps()) };
    o.branch()
}

/// `CcTimelyResult` (`timely_cc::TimelyOutcome`, a `uint64_t`): the branch code is
/// `r & CC_TIMELY_RESULT_BRANCH_MASK`.
pub const CC_TIMELY_RESULT_BRANCH_MASK: u64 = 0xff;
/// `CcTimelyResult`: set when the application-limited rule suppressed an increase.
pub const CC_TIMELY_RESULT_APP_LIMITED: u64 = 0x100;
/// `CcTimelyResult`: the rate in units of 128 bit/s is `(uint32_t)(r >> CC_TIMELY_RESULT_RATE_SHIFT)`.
pub const CC_TIMELY_RESULT_RATE_SHIFT: u32 = 32;
// The header's values are the crate's.
const _: () = assert!(
    CC_TIMELY_RESULT_BRANCH_MASK == timely_cc::OUTCOME_BRANCH_MASK
        && CC_TIMELY_RESULT_APP_LIMITED == timely_cc::OUTCOME_APP_LIMITED
        && CC_TIMELY_RESULT_RATE_SHIFT == timely_cc::OUTCOME_RATE_SHIFT
);

/// [`cc_timely_on_completion`] with the result returned in registers instead of through a
/// pointer: the branch and the rate in units of 128 bit/s. The cheapest per-completion call
/// (docs/timely.md measures it); same semantics, same state.
///
/// # Safety
/// `cfg` and `flow` were initialised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_timely_on_completion_rv(
    cfg: *const CcTimelyConfig,
    flow: *mut CcTimelyFlow,
    t_send_ns: u64,
    t_complete_ns: u64,
    bytes: u32,
) -> TimelyOutcome {
    // SAFETY: caller contract.
    let (c, st) = unsafe { (block::get(cfg), block::get_mut(flow)) };
    st.on_completion_rate(c, &Completion::new(t_send_ns, t_complete_ns, bytes))
}

/// The rate computation engine (TIMELY §3) alone, for firmware that has the RTT already (the
/// NIC reports it, or the RX path computed it): Algorithm 1 for one sample `rtt_q4` in 1/16 ns
/// with the segment's serialisation delay already removed (`t_complete − t_send −
/// bytes·8/line_rate`, clamped at 0). `bytes` matters only with per-completion scaling. Never
/// returns `SKIP`. For every completion that is not skipped, the same as
/// [`cc_timely_on_completion_rv`] with that completion (the same code runs).
///
/// # Safety
/// `cfg` and `flow` were initialised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_timely_on_rtt(
    cfg: *const CcTimelyConfig,
    flow: *mut CcTimelyFlow,
    rtt_q4: u32,
    bytes: u32,
) -> TimelyOutcome {
    // SAFETY: caller contract.
    let (c, st) = unsafe { (block::get(cfg), block::get_mut(flow)) };
    // Values above 2^31 − 1 saturate there (as the RTT engine's own do).
    st.on_rtt_rate(c, timely_cc::U28F4::from_bits(rtt_q4), bytes, None)
}

/// [`cc_timely_on_completion`] with the flow's sending rate (application-limited rule) and the
/// full result (rate, RTT, whether the rule suppressed an increase) in `*out`.
///
/// # Safety
/// `cfg` and `flow` were initialised; `ev` is readable; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_timely_on_completion_ex(
    cfg: *const CcTimelyConfig,
    flow: *mut CcTimelyFlow,
    ev: *const CcTimelyCompletion,
    out: *mut CcTimelyUpdate,
) -> TimelyBranch {
    // SAFETY: caller contract.
    let (cfg, st, ev) = unsafe { (block::get(cfg), block::get_mut(flow), block::param(ev)) };
    let u = st.on_completion(
        cfg,
        &Completion {
            t_send_ns: ev.t_send_ns,
            t_complete_ns: ev.t_complete_ns,
            bytes: ev.bytes,
            sending_rate_bps: (ev.sending_rate_bps != 0).then_some(ev.sending_rate_bps),
        },
    );
    let r = CcTimelyUpdate {
        rate_bps: u.rate_bps,
        rtt_q4: u64::from(u.rtt_ns.to_bits()),
        app_limited: u32::from(u.app_limited),
    };
    // SAFETY: caller contract.
    unsafe { block::out(out, r) };
    u.branch
}

/// Reads the flow's raw state into `*out`.
///
/// # Safety
/// `flow` was initialised; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_timely_flow_get_state(
    flow: *const CcTimelyFlow,
    out: *mut CcTimelyState,
) {
    // SAFETY: caller contract.
    let s = unsafe { block::get(flow) };
    let p = s.raw_parts();
    // The 96-bit EWMA (|·| < 2^95) split into its three words.
    #[allow(clippy::cast_possible_truncation)]
    let (d_hi, d_mid, d_lo) = (
        (p.rtt_diff_ns.to_bits() >> 64) as i32,
        (p.rtt_diff_ns.to_bits() >> 32) as u32,
        p.rtt_diff_ns.to_bits() as u32,
    );
    let raw = CcTimelyState {
        rate_u128bps: p.rate_u128bps,
        prev_rtt_q4: p.prev_rtt_ns.to_bits(),
        rtt_diff_q4: d_hi,
        rtt_diff_frac_hi: d_mid,
        rtt_diff_frac_lo: d_lo,
        residual: p.residual,
        hai_count: p.hai_count,
        started: u8::from(p.started),
    };
    // SAFETY: caller contract.
    unsafe { block::out(out, raw) }
}

/// Replaces the flow's state by `*state` (`started` non-zero = true).
///
/// # Safety
/// `flow` is a writable [`CcTimelyFlow`] block; `state` is readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_timely_flow_set_state(
    flow: *mut CcTimelyFlow,
    state: *const CcTimelyState,
) {
    // SAFETY: caller contract.
    let s: &CcTimelyState = unsafe { block::param(state) };
    let v = State::from_raw_parts(RawParts {
        rate_u128bps: s.rate_u128bps,
        prev_rtt_ns: timely_cc::U28F4::from_bits(s.prev_rtt_q4),
        rtt_diff_ns: timely_cc::I60F68::from_bits(
            (i128::from(s.rtt_diff_q4) << 64)
                | (i128::from(s.rtt_diff_frac_hi) << 32)
                | i128::from(s.rtt_diff_frac_lo),
        ),
        residual: s.residual,
        hai_count: s.hai_count,
        started: s.started != 0,
    });
    // SAFETY: caller contract.
    unsafe { block::init(flow, v) }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use core::mem::MaybeUninit;

    #[test]
    fn completions_match_the_crate() {
        let mut p = MaybeUninit::<CcTimelyParams>::uninit();
        let mut cfg = MaybeUninit::<CcTimelyConfig>::uninit();
        let mut flow = MaybeUninit::<CcTimelyFlow>::uninit();
        let rcfg = Config::DEFAULT;
        let mut rust = State::new(&rcfg);
        assert_eq!(core::mem::size_of::<State>(), CC_TIMELY_FLOW_BYTES);
        // SAFETY: live locals, initialised in order.
        unsafe {
            cc_timely_params_default(p.as_mut_ptr());
            assert_eq!(
                cc_timely_config_init(cfg.as_mut_ptr(), p.as_ptr()),
                CcStatus::Ok
            );
            cc_timely_flow_init(flow.as_mut_ptr(), cfg.as_ptr());
            let mut rate = 0u64;
            let mut t = 0u64;
            for (i, rtt) in [30_000u64, 40_000, 80_000, 90_000, 85_000, 600_000, 70_000]
                .iter()
                .enumerate()
            {
                t += 100_000;
                let want = rust.on_completion(&rcfg, &Completion::new(t, t + rtt, 16_384));
                let got = cc_timely_on_completion(
                    cfg.as_ptr(),
                    flow.as_mut_ptr(),
                    t,
                    t + rtt,
                    16_384,
                    &mut rate,
                );
                assert_eq!((got, rate), (want.branch, want.rate_bps), "event {i}");
            }
            assert_eq!(
                cc_timely_on_completion(cfg.as_ptr(), flow.as_mut_ptr(), 10, 5, 1, &mut rate),
                TimelyBranch::Skip
            );
            let mut st = MaybeUninit::<CcTimelyState>::uninit();
            cc_timely_flow_get_state(flow.as_ptr(), st.as_mut_ptr());
            let st = st.assume_init();
            assert_eq!(st.rate_u128bps, rust.rate_u128bps());
            cc_timely_flow_set_state(flow.as_mut_ptr(), &st);
            let mut back = MaybeUninit::<CcTimelyState>::uninit();
            cc_timely_flow_get_state(flow.as_ptr(), back.as_mut_ptr());
            assert_eq!(back.assume_init(), st);
            (*p.as_mut_ptr()).beta_den = 0;
            assert_eq!(
                cc_timely_config_init(cfg.as_mut_ptr(), p.as_ptr()),
                CcStatus::InvalidConfig
            );
        }
    }
}
