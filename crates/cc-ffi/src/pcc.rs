//! The DOCA PCC adapter (`crates/cc-pcc`) through the C ABI (`cc_pcc_*`), for the callbacks of
//! a BlueField-3 user algorithm (`examples/doca-pcc` shows them).
//!
//! * The per-flow state is the platform's own 48-byte context (`uint32_t[12]`), passed as it is;
//!   a zeroed context is a new flow.
//! * One validated configuration per algorithm and port: [`CcPccTimelyConfig`] /
//!   [`CcPccHpccConfig`], made from a whole parameter array in table order
//!   (`cc_pcc_*_config_init`) or from the table's defaults, and changed all-or-none by
//!   `cc_pcc_*_set_params` (`doca_pcc_dev_user_set_algo_params`).
//! * One call per event (`cc_pcc_timely_on_event`, `cc_pcc_hpcc_on_event`) taking the event's
//!   fields in host order ([`CcPccEvent`], filled from the SDK's getters or by
//!   [`cc_pcc_event_decode`] from the 44 bytes as delivered), returning the Q20 rate and the probe
//!   request in registers ([`CcPccResult`]) and adding to the counter array (`uint32_t[26]`; null
//!   when the platform gives none).
//! * The parameter and counter tables (id, default, min, max, name) come from cc-pcc through
//!   [`cc_pcc_param_def`] and [`cc_pcc_counter_name`], so the C side declares exactly what the
//!   adapter validates.
//!
//! Semantics of every event and parameter: docs/pcc.md.

use cc_pcc::{
    COUNTER_NAMES, Counters, Event, FlowContext, HPCC_PARAMS, HpccFlow, HpccPccConfig, PccResult,
    TIMELY_PARAMS, TimelyFlow, TimelyPccConfig, hpcc_on_event, timely_on_event,
};

use crate::{CcStatus, block};

/// Words of the platform's per-flow context (48 bytes).
pub const CC_PCC_CONTEXT_WORDS: usize = 12;
/// Bytes of one BlueField-3 event as delivered (big-endian fields).
pub const CC_PCC_EVENT_BYTES: usize = 44;
/// Bytes of one hop of switch telemetry (the RTT response's raw data).
pub const CC_PCC_TELEMETRY_BYTES: usize = 12;
/// Parameters of the TIMELY algorithm (ids `0 .. 13`).
pub const CC_PCC_TIMELY_PARAM_NUM: usize = 13;
/// Parameters of the HPCC algorithm (ids `0 .. 8`).
pub const CC_PCC_HPCC_PARAM_NUM: usize = 8;
/// Counters of either algorithm (ids `0 .. 26`, one table).
pub const CC_PCC_COUNTER_NUM: usize = 26;
/// Bytes of a name in [`CcPccParamDef`] and [`cc_pcc_counter_name`], the terminating NUL
/// included.
pub const CC_PCC_NAME_BYTES: usize = 24;
/// Bytes of a [`CcPccTimelyConfig`] block.
pub const CC_PCC_TIMELY_CONFIG_BYTES: usize = 320;
/// Bytes of a [`CcPccHpccConfig`] block.
pub const CC_PCC_HPCC_CONFIG_BYTES: usize = 320;

const _: () = assert!(CC_PCC_CONTEXT_WORDS == cc_pcc::CONTEXT_WORDS);
const _: () = assert!(CC_PCC_EVENT_BYTES == cc_pcc::EVENT_BYTES);
const _: () = assert!(CC_PCC_TELEMETRY_BYTES == cc_pcc::TELEMETRY_BYTES);
const _: () = assert!(CC_PCC_TIMELY_PARAM_NUM == cc_pcc::TIMELY_PARAM_NUM);
const _: () = assert!(CC_PCC_HPCC_PARAM_NUM == cc_pcc::HPCC_PARAM_NUM);
const _: () = assert!(CC_PCC_COUNTER_NUM == cc_pcc::COUNTER_NUM);
const _: () = assert!(core::mem::size_of::<Counters>() == 4 * cc_pcc::COUNTER_NUM);

/// Opaque validated TIMELY configuration (parameter values and every constant derived from
/// them). One per port and algorithm slot; read-only between `set_params` calls.
#[repr(C, align(8))]
pub struct CcPccTimelyConfig {
    _opaque: [u8; CC_PCC_TIMELY_CONFIG_BYTES],
}
block::fits!(CcPccTimelyConfig, TimelyPccConfig);

/// Opaque validated HPCC configuration (as [`CcPccTimelyConfig`]).
#[repr(C, align(8))]
pub struct CcPccHpccConfig {
    _opaque: [u8; CC_PCC_HPCC_CONFIG_BYTES],
}
block::fits!(CcPccHpccConfig, HpccPccConfig);

/// Which adapter algorithm a table call is about.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcPccAlgo {
    /// TIMELY on probe RTTs.
    Timely = 0,
    /// HPCC on one hop of switch telemetry.
    Hpcc = 1,
}

/// One event, every field in host order: what the SDK's getters return. The glue fills it from
/// the getters (examples/doca-pcc); a caller that has only the 44 bytes as delivered uses
/// [`cc_pcc_event_decode`], which gives the same values (the layout is docs/pcc.md's table;
/// examples/doca-pcc's `make check` and `make sdk-check` compare the two).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CcPccEvent {
    /// Type (`ev_attr.ev_type`): 2 CNP, 3 TX, 4 ACK, 5 NACK, 6 RTT probe response; any other
    /// (0 NULL, 1 FW, 31 ROCE_TX_FOR_ACK_NACK, undefined codes) is counted and ignored.
    pub type_code: u8,
    /// Subtype (`ev_attr.ev_subtype`; NACK: 1 RNR, 2 out of sequence, 3 duplicate read).
    pub subtype: u8,
    /// Port number (`ev_attr.port_num`).
    pub port: u8,
    /// Flags (`ev_attr.flags`; TX: bit 0 ACK expected, 1 overloaded, 2 RTT request sent).
    pub flags: u8,
    /// Flow tag (`doca_pcc_dev_get_flowtag`).
    pub flow_tag: u32,
    /// Sequence number (`doca_pcc_dev_get_sn`).
    pub sn: u32,
    /// Event timestamp, ns (`doca_pcc_dev_get_timestamp`; 32-bit, wrapping).
    pub ts_ns: u32,
    /// The type-specific union's first three words, each as its getter returns it. TX:
    /// first timestamp, the counters word (`sent_pkts << 16 | sent_32bytes`), the QPN (24
    /// bits). ACK/NACK/CNP: first timestamp, first sequence number, number coalesced (16 bits).
    /// RTT: request send timestamp, request receive timestamp (responder), response send
    /// timestamp (responder) — the same bytes as the response's raw data.
    pub spec: [u32; 3],
}

impl CcPccEvent {
    fn to_event(self) -> Event {
        Event {
            type_code: self.type_code,
            subtype: self.subtype,
            port: self.port,
            flags: self.flags,
            flow_tag: self.flow_tag,
            sn: self.sn,
            ts_ns: self.ts_ns,
            spec: self.spec,
        }
    }
}

/// What one event asks of the platform (`results->rate`, `results->rtt_req`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcPccResult {
    /// Rate as a fraction of line rate, Q20: `1 ..= 1 << 20` (`1 << 20` = line rate).
    pub rate_q20: u32,
    /// 1: request an RTT probe; 0: none.
    pub rtt_req: u32,
}

impl From<PccResult> for CcPccResult {
    fn from(r: PccResult) -> Self {
        CcPccResult {
            rate_q20: r.rate_q20,
            rtt_req: u32::from(r.rtt_req),
        }
    }
}

/// One row of a parameter table (what `doca_pcc_dev_algo_init_param` declares).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcPccParamDef {
    /// Parameter id (index in the platform's parameter array).
    pub id: u32,
    /// Value before any `set_params`.
    pub default_value: u32,
    /// Smallest accepted value.
    pub min: u32,
    /// Largest accepted value.
    pub max: u32,
    /// Name, NUL-terminated (e.g. `"T_LOW_NS"`).
    pub name: [u8; CC_PCC_NAME_BYTES],
}

/// `s` as a NUL-terminated fixed buffer (names are at most 23 bytes: asserted below).
fn name_buf(s: &str) -> [u8; CC_PCC_NAME_BYTES] {
    let mut out = [0u8; CC_PCC_NAME_BYTES];
    for (o, b) in out
        .iter_mut()
        .take(CC_PCC_NAME_BYTES.saturating_sub(1))
        .zip(s.bytes())
    {
        *o = b;
    }
    out
}

#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // compile time: i < len
const fn names_fit() -> bool {
    let mut i = 0;
    while i < TIMELY_PARAMS.len() {
        if TIMELY_PARAMS[i].name.len() >= CC_PCC_NAME_BYTES {
            return false;
        }
        i += 1;
    }
    let mut i = 0;
    while i < HPCC_PARAMS.len() {
        if HPCC_PARAMS[i].name.len() >= CC_PCC_NAME_BYTES {
            return false;
        }
        i += 1;
    }
    let mut i = 0;
    while i < COUNTER_NAMES.len() {
        if COUNTER_NAMES[i].len() >= CC_PCC_NAME_BYTES {
            return false;
        }
        i += 1;
    }
    true
}
const _: () = assert!(
    names_fit(),
    "a parameter or counter name does not fit its buffer"
);

/// Row `id` of `algo`'s parameter table into `*out`. `CC_STATUS_INVALID_INPUT` for an unknown
/// algorithm or an id past the table (`*out` untouched). Initialisation time only.
///
/// # Safety
/// `out` is non-null, aligned and writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_param_def(algo: u32, id: u32, out: *mut CcPccParamDef) -> CcStatus {
    let table: &[cc_pcc::ParamDef] = match algo {
        0 => &TIMELY_PARAMS,
        1 => &HPCC_PARAMS,
        _ => return CcStatus::InvalidInput,
    };
    let Some(p) = usize::try_from(id).ok().and_then(|i| table.get(i)) else {
        return CcStatus::InvalidInput;
    };
    let def = CcPccParamDef {
        id: p.id,
        default_value: p.default,
        min: p.min,
        max: p.max,
        name: name_buf(p.name),
    };
    // SAFETY: caller contract on `out`.
    unsafe { block::out(out, def) };
    CcStatus::Ok
}

/// Name of counter `id` (NUL-terminated) into `*out`. `CC_STATUS_INVALID_INPUT` past the table
/// (`*out` untouched).
///
/// # Safety
/// `out` is non-null and writable for [`CC_PCC_NAME_BYTES`] bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_counter_name(
    id: u32,
    out: *mut [u8; CC_PCC_NAME_BYTES],
) -> CcStatus {
    let Some(n) = usize::try_from(id).ok().and_then(|i| COUNTER_NAMES.get(i)) else {
        return CcStatus::InvalidInput;
    };
    // SAFETY: caller contract on `out`.
    unsafe { block::out(out, name_buf(n)) };
    CcStatus::Ok
}

/// Decodes the 44 bytes of an event as delivered, as the SDK's getters read them (docs/pcc.md's
/// layout table; the union words kept whole, reserved words not read).
///
/// # Safety
/// `bytes` is readable for 44 bytes; `out` is non-null, aligned and writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_event_decode(
    bytes: *const [u8; CC_PCC_EVENT_BYTES],
    out: *mut CcPccEvent,
) {
    // SAFETY: caller contract.
    let e = Event::decode(unsafe { block::param(bytes) });
    let c = CcPccEvent {
        type_code: e.type_code,
        subtype: e.subtype,
        port: e.port,
        flags: e.flags,
        flow_tag: e.flow_tag,
        sn: e.sn,
        ts_ns: e.ts_ns,
        spec: e.spec,
    };
    // SAFETY: caller contract.
    unsafe { block::out(out, c) }
}

/// Borrows the C counter array, or `scratch` when the platform gives none (null).
///
/// # Safety
/// `counters` is null or aligned and valid for reads and writes of 26 words, unaliased.
#[inline(always)]
unsafe fn counters_or(counters: *mut u32, scratch: &mut Counters) -> &mut Counters {
    if counters.is_null() {
        scratch
    } else {
        // SAFETY: `Counters` is `repr(transparent)` over `[u32; 26]` (size asserted above);
        // the caller contract makes the pointer valid for it.
        unsafe { &mut *counters.cast::<Counters>() }
    }
}

/// Reads `num` new values as a slice, or `None` when `num` exceeds `table` (nothing is read).
///
/// # Safety
/// `values` is readable for `num` words when `num ≤ table`.
#[inline]
unsafe fn new_values<'a>(values: *const u32, num: u32, table: usize) -> Option<&'a [u32]> {
    let n = usize::try_from(num).ok()?;
    if n > table || (values.is_null() && n != 0) {
        return None;
    }
    if n == 0 {
        return Some(&[]);
    }
    // SAFETY: caller contract: `values` valid for `num ≤ table` words.
    Some(unsafe { core::slice::from_raw_parts(values, n) })
}

/// Writes the table's defaults into `cfg` (validated at compile time).
///
/// # Safety
/// `cfg` is a writable [`CcPccTimelyConfig`] block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_timely_config_default(cfg: *mut CcPccTimelyConfig) {
    // SAFETY: caller contract.
    unsafe { block::init(cfg, TimelyPccConfig::DEFAULT) }
}

/// Validates a whole value array (13 words, id order) and writes the configuration.
/// `CC_STATUS_INVALID_CONFIG` when a value is outside its row or the set is refused by
/// timely-cc (`cfg` untouched).
///
/// # Safety
/// `cfg` is a writable block; `values` is readable for 13 words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_timely_config_init(
    cfg: *mut CcPccTimelyConfig,
    values: *const [u32; CC_PCC_TIMELY_PARAM_NUM],
) -> CcStatus {
    // SAFETY: caller contract.
    let v = *unsafe { block::param(values) };
    match TimelyPccConfig::from_values(v) {
        Ok(c) => {
            // SAFETY: caller contract.
            unsafe { block::init(cfg, c) };
            CcStatus::Ok
        }
        Err(_) => CcStatus::InvalidConfig,
    }
}

/// `doca_pcc_dev_user_set_algo_params` for TIMELY: sets `num` values from id `base`, all or
/// none (every constant re-derived). `CC_STATUS_INVALID_CONFIG` when the ids run past the
/// table, a value is out of range or the set is invalid: the configuration is unchanged.
///
/// # Safety
/// `cfg` was initialised; `values` is readable for `num` words (not read when `num > 13`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_timely_set_params(
    cfg: *mut CcPccTimelyConfig,
    base: u32,
    num: u32,
    values: *const u32,
) -> CcStatus {
    // SAFETY: caller contract.
    let (c, v) = unsafe {
        (
            block::get_mut(cfg),
            new_values(values, num, CC_PCC_TIMELY_PARAM_NUM),
        )
    };
    match v.map(|v| c.set_params(base, v)) {
        Some(Ok(())) => CcStatus::Ok,
        _ => CcStatus::InvalidConfig,
    }
}

/// The parameter values in force (13 words, id order) into `*out`.
///
/// # Safety
/// `cfg` was initialised; `out` is writable for 13 words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_timely_values(
    cfg: *const CcPccTimelyConfig,
    out: *mut [u32; CC_PCC_TIMELY_PARAM_NUM],
) {
    // SAFETY: caller contract.
    unsafe { block::out(out, *block::get(cfg).values()) }
}

/// `doca_pcc_dev_user_algo` for TIMELY: one event of the flow whose context is `ctx`.
///
/// # Safety
/// `cfg` was initialised; `ctx` is the flow's 12-word context (zeroed for a new flow),
/// writable; `ev` is readable; `counters` is null or writable for 26 words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_timely_on_event(
    cfg: *const CcPccTimelyConfig,
    ctx: *mut [u32; CC_PCC_CONTEXT_WORDS],
    ev: *const CcPccEvent,
    counters: *mut u32,
) -> CcPccResult {
    let mut scratch = Counters::default();
    // SAFETY: caller contract.
    let (c, ctx, ev, k): (_, &mut FlowContext, _, _) = unsafe {
        (
            block::get(cfg),
            &mut *ctx,
            block::param(ev),
            counters_or(counters, &mut scratch),
        )
    };
    timely_on_event(c, ctx, &ev.to_event(), k).into()
}

/// The Q20 rate the flow's stored context holds under `cfg`, read without an event: nothing is
/// changed (neither the context nor any counter; a clamp to `[1, 2^20]` is not counted). A zeroed
/// context (a flow never stored) gives the configured initial rate. For a glue that answers an
/// event it does not hand to the adapter (examples/doca-pcc: a port beyond its configuration
/// table) with the flow's rate as it stands.
///
/// # Safety
/// `cfg` was initialised; `ctx` is readable for 12 words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_timely_rate(
    cfg: *const CcPccTimelyConfig,
    ctx: *const [u32; CC_PCC_CONTEXT_WORDS],
) -> u32 {
    // SAFETY: caller contract.
    let (c, ctx): (_, &FlowContext) = unsafe { (block::get(cfg), &*ctx) };
    let flow = TimelyFlow::load(ctx).unwrap_or_else(|| TimelyFlow::new(c));
    c.rate_q20(flow.timely.rate_u128bps()).0
}

/// Writes the HPCC table's defaults into `cfg`.
///
/// # Safety
/// `cfg` is a writable [`CcPccHpccConfig`] block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_hpcc_config_default(cfg: *mut CcPccHpccConfig) -> CcStatus {
    match HpccPccConfig::default_values() {
        Ok(c) => {
            // SAFETY: caller contract.
            unsafe { block::init(cfg, c) };
            CcStatus::Ok
        }
        Err(_) => CcStatus::InvalidConfig,
    }
}

/// Validates a whole HPCC value array (8 words) and writes the configuration;
/// `CC_STATUS_INVALID_CONFIG` otherwise (`cfg` untouched).
///
/// # Safety
/// `cfg` is a writable block; `values` is readable for 8 words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_hpcc_config_init(
    cfg: *mut CcPccHpccConfig,
    values: *const [u32; CC_PCC_HPCC_PARAM_NUM],
) -> CcStatus {
    // SAFETY: caller contract.
    let v = *unsafe { block::param(values) };
    match HpccPccConfig::from_values(v) {
        Ok(c) => {
            // SAFETY: caller contract.
            unsafe { block::init(cfg, c) };
            CcStatus::Ok
        }
        Err(_) => CcStatus::InvalidConfig,
    }
}

/// `doca_pcc_dev_user_set_algo_params` for HPCC: all or none, as
/// [`cc_pcc_timely_set_params`].
///
/// # Safety
/// `cfg` was initialised; `values` is readable for `num` words (not read when `num > 8`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_hpcc_set_params(
    cfg: *mut CcPccHpccConfig,
    base: u32,
    num: u32,
    values: *const u32,
) -> CcStatus {
    // SAFETY: caller contract.
    let (c, v) = unsafe {
        (
            block::get_mut(cfg),
            new_values(values, num, CC_PCC_HPCC_PARAM_NUM),
        )
    };
    match v.map(|v| c.set_params(base, v)) {
        Some(Ok(())) => CcStatus::Ok,
        _ => CcStatus::InvalidConfig,
    }
}

/// The HPCC parameter values in force (8 words, id order) into `*out`.
///
/// # Safety
/// `cfg` was initialised; `out` is writable for 8 words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_hpcc_values(
    cfg: *const CcPccHpccConfig,
    out: *mut [u32; CC_PCC_HPCC_PARAM_NUM],
) {
    // SAFETY: caller contract.
    unsafe { block::out(out, *block::get(cfg).values()) }
}

/// The Q20 rate the HPCC flow's stored context holds under `cfg` (its window over `W_max`), read
/// without an event and without changing anything, as [`cc_pcc_timely_rate`]. A zeroed context
/// gives the initial rate (line rate: a new flow starts at `W_max`).
///
/// # Safety
/// `cfg` was initialised; `ctx` is readable for 12 words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_hpcc_rate(
    cfg: *const CcPccHpccConfig,
    ctx: *const [u32; CC_PCC_CONTEXT_WORDS],
) -> u32 {
    // SAFETY: caller contract.
    let (c, ctx): (_, &FlowContext) = unsafe { (block::get(cfg), &*ctx) };
    let flow = HpccFlow::load(ctx).unwrap_or_else(|| HpccFlow::new(c));
    c.rate_q20(flow.hpcc.window_bytes()).0
}

/// `doca_pcc_dev_user_algo` for HPCC: one event of the flow whose context is `ctx`;
/// `telemetry` is the RTT response's 12 bytes of raw data as `doca_pcc_dev_get_rtt_raw_data`
/// returns them (read only for an RTT event).
///
/// # Safety
/// As [`cc_pcc_timely_on_event`]; `telemetry` is readable for 12 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pcc_hpcc_on_event(
    cfg: *const CcPccHpccConfig,
    ctx: *mut [u32; CC_PCC_CONTEXT_WORDS],
    ev: *const CcPccEvent,
    telemetry: *const [u8; CC_PCC_TELEMETRY_BYTES],
    counters: *mut u32,
) -> CcPccResult {
    let mut scratch = Counters::default();
    // SAFETY: caller contract.
    let (c, ctx, ev, tel, k): (_, &mut FlowContext, _, _, _) = unsafe {
        (
            block::get(cfg),
            &mut *ctx,
            block::param(ev),
            block::param(telemetry),
            counters_or(counters, &mut scratch),
        )
    };
    hpcc_on_event(c, ctx, &ev.to_event(), tel, k).into()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use core::mem::MaybeUninit;

    fn ev(type_code: u8, ts_ns: u32, spec: [u32; 3]) -> Event {
        Event {
            type_code,
            subtype: 0,
            port: 0,
            flags: 0,
            flow_tag: 1,
            sn: 0,
            ts_ns,
            spec,
        }
    }

    #[test]
    fn the_c_abi_gives_the_adapters_rates_probes_and_counters() {
        let mut cfg = MaybeUninit::<CcPccTimelyConfig>::uninit();
        let rust_cfg = TimelyPccConfig::DEFAULT;
        let (mut ctx_c, mut ctx_r) = ([0u32; 12], [0u32; 12]);
        let (mut k_c, mut k_r) = ([0u32; 26], Counters::default());
        let mut t = 4_294_000_000u32; // the clock wraps inside the run
        let mut req = 0u32;
        // SAFETY: live locals.
        unsafe {
            cc_pcc_timely_config_default(cfg.as_mut_ptr());
            for i in 0..200u32 {
                t = t.wrapping_add(7_000);
                let e = if i % 3 == 0 {
                    ev(3, t, [t, (1 << 16) | 47, 9])
                } else if i % 3 == 1 {
                    req = t.wrapping_sub(1_000);
                    ev(3, t, [t, 0, 0])
                } else {
                    let rtt = 30_000 + (i % 17) * 4_000;
                    ev(6, req.wrapping_add(rtt), [req, 100, 1_100])
                };
                let mut c = MaybeUninit::<CcPccEvent>::uninit();
                cc_pcc_event_decode(&e.encode(), c.as_mut_ptr());
                let c = c.assume_init();
                assert_eq!(c.to_event(), e);
                let got = cc_pcc_timely_on_event(cfg.as_ptr(), &mut ctx_c, &c, k_c.as_mut_ptr());
                let want = timely_on_event(&rust_cfg, &mut ctx_r, &e, &mut k_r);
                assert_eq!(got, want.into(), "event {i}");
                assert_eq!(ctx_c, ctx_r);
            }
            assert_eq!(k_c, k_r.0);
            assert!(k_c[cc_pcc::Counter::ProbesAnswered as usize] > 10);
            // A null counter array is allowed (the platform may give none).
            let c = CcPccEvent {
                type_code: 4,
                ..CcPccEvent::default()
            };
            let r = cc_pcc_timely_on_event(cfg.as_ptr(), &mut ctx_c, &c, core::ptr::null_mut());
            assert!(r.rate_q20 >= 1 && r.rate_q20 <= 1 << 20);
        }
    }

    #[test]
    fn the_stored_rate_is_read_without_an_event_and_without_changing_anything() {
        use cc_pcc::{Telemetry, Tx, tx_flag};
        let (mut tc, mut hc) = (
            MaybeUninit::<CcPccTimelyConfig>::uninit(),
            MaybeUninit::<CcPccHpccConfig>::uninit(),
        );
        let (mut ctx_t, mut ctx_h) = ([0u32; 12], [0u32; 12]);
        let (mut k_t, mut k_h) = ([0u32; 26], [0u32; 26]);
        let mut t = 4_294_900_000u32;
        let (mut rates_t, mut rates_h) = (
            std::collections::BTreeSet::new(),
            std::collections::BTreeSet::new(),
        );
        // SAFETY: live locals.
        unsafe {
            cc_pcc_timely_config_default(tc.as_mut_ptr());
            assert_eq!(cc_pcc_hpcc_config_default(hc.as_mut_ptr()), CcStatus::Ok);
            // A zeroed context: the configured initial rate (TIMELY's INIT_RATE_Q20, id 2;
            // HPCC's W_max, line rate), and the context stays zeroed.
            assert_eq!(cc_pcc_timely_rate(tc.as_ptr(), &ctx_t), 1 << 20);
            assert_eq!(cc_pcc_hpcc_rate(hc.as_ptr(), &ctx_h), 1 << 20);
            assert_eq!(
                cc_pcc_timely_set_params(tc.as_mut_ptr(), 2, 1, &(1 << 18)),
                CcStatus::Ok
            );
            assert_eq!(cc_pcc_timely_rate(tc.as_ptr(), &ctx_t), 1 << 18);
            assert_eq!((ctx_t, ctx_h), ([0; 12], [0; 12]));
            let tx = |t: u32, flags: u8| CcPccEvent {
                type_code: 3,
                flags,
                ts_ns: t,
                spec: Event::tx_spec(&Tx {
                    first_ts_ns: t,
                    packets: 2,
                    sent_32b_units: 64,
                    qpn: 7,
                }),
                ..CcPccEvent::default()
            };
            for i in 0..300u32 {
                t = t.wrapping_add(9_000);
                // TIMELY: a TX event, then the probe's answer 30–94 µs later.
                let r =
                    cc_pcc_timely_on_event(tc.as_ptr(), &mut ctx_t, &tx(t, 0), k_t.as_mut_ptr());
                let (ctx0, k0) = (ctx_t, k_t);
                assert_eq!(cc_pcc_timely_rate(tc.as_ptr(), &ctx_t), r.rate_q20);
                assert_eq!((ctx_t, k_t), (ctx0, k0), "the read changes nothing");
                let rtt = 30_000 + (i % 17) * 4_000;
                let ans = CcPccEvent {
                    type_code: 6,
                    ts_ns: t.wrapping_add(rtt),
                    spec: [t, 100, 1_100],
                    ..CcPccEvent::default()
                };
                let r = cc_pcc_timely_on_event(tc.as_ptr(), &mut ctx_t, &ans, k_t.as_mut_ptr());
                assert_eq!(cc_pcc_timely_rate(tc.as_ptr(), &ctx_t), r.rate_q20);
                rates_t.insert(r.rate_q20);
                // HPCC: a TX event requests, the next one marks the departure, the answer
                // carries one hop at a utilisation that swings around η.
                let _ = cc_pcc_hpcc_on_event(
                    hc.as_ptr(),
                    &mut ctx_h,
                    &tx(t, 0),
                    &[0; 12],
                    k_h.as_mut_ptr(),
                );
                let d = tx(t.wrapping_add(1_000), tx_flag::RTT_REQ_SENT);
                let _ =
                    cc_pcc_hpcc_on_event(hc.as_ptr(), &mut ctx_h, &d, &[0; 12], k_h.as_mut_ptr());
                let tel = Telemetry {
                    qlen_256b_cells: u16::try_from(i % 7 * 300).unwrap(),
                    index: 0,
                    flags: 4,
                    tx_bytes: i.wrapping_mul(9_000 * 12 + (i % 5) * 1_000),
                    tx_ts_ns: i.wrapping_mul(9_000),
                }
                .encode();
                let ans = CcPccEvent {
                    type_code: 6,
                    ts_ns: t.wrapping_add(20_000),
                    spec: Event::raw_data_spec(&tel),
                    ..CcPccEvent::default()
                };
                let r = cc_pcc_hpcc_on_event(hc.as_ptr(), &mut ctx_h, &ans, &tel, k_h.as_mut_ptr());
                let (ctx0, k0) = (ctx_h, k_h);
                assert_eq!(cc_pcc_hpcc_rate(hc.as_ptr(), &ctx_h), r.rate_q20);
                assert_eq!((ctx_h, k_h), (ctx0, k0), "the read changes nothing");
                rates_h.insert(r.rate_q20);
            }
        }
        // The reads followed rates that moved.
        assert!(
            rates_t.len() > 5 && rates_h.len() > 5,
            "{rates_t:?} {rates_h:?}"
        );
    }

    #[test]
    fn refused_parameter_changes_leave_the_configuration_unchanged() {
        let mut cfg = MaybeUninit::<CcPccTimelyConfig>::uninit();
        let mut v = [0u32; 13];
        // SAFETY: live locals.
        unsafe {
            cc_pcc_timely_config_default(cfg.as_mut_ptr());
            // T_low (id 3) above T_high: refused as a set.
            assert_eq!(
                cc_pcc_timely_set_params(cfg.as_mut_ptr(), 3, 1, &600_000),
                CcStatus::InvalidConfig
            );
            // Past the table, and more values than the table has (not read).
            assert_eq!(
                cc_pcc_timely_set_params(cfg.as_mut_ptr(), 12, 2, [0, 0].as_ptr()),
                CcStatus::InvalidConfig
            );
            assert_eq!(
                cc_pcc_timely_set_params(cfg.as_mut_ptr(), 0, 14, core::ptr::null()),
                CcStatus::InvalidConfig
            );
            cc_pcc_timely_values(cfg.as_ptr(), &mut v);
            assert_eq!(&v, TimelyPccConfig::DEFAULT.values());
            assert_eq!(
                cc_pcc_timely_set_params(cfg.as_mut_ptr(), 3, 2, [60_000, 400_000].as_ptr()),
                CcStatus::Ok
            );
            cc_pcc_timely_values(cfg.as_ptr(), &mut v);
            assert_eq!((v[3], v[4]), (60_000, 400_000));

            let mut h = MaybeUninit::<CcPccHpccConfig>::uninit();
            assert_eq!(cc_pcc_hpcc_config_default(h.as_mut_ptr()), CcStatus::Ok);
            let mut hv = [0u32; 8];
            cc_pcc_hpcc_values(h.as_ptr(), &mut hv);
            // LINK_SPEED_CODE (id 6) 10 is outside 1..=9.
            assert_eq!(
                cc_pcc_hpcc_set_params(h.as_mut_ptr(), 6, 1, &10),
                CcStatus::InvalidConfig
            );
            let mut after = [0u32; 8];
            cc_pcc_hpcc_values(h.as_ptr(), &mut after);
            assert_eq!(hv, after);
            assert_eq!(cc_pcc_hpcc_config_init(h.as_mut_ptr(), &hv), CcStatus::Ok);
        }
    }

    #[test]
    fn the_tables_read_through_the_c_abi_are_the_adapters() {
        let mut d = MaybeUninit::<CcPccParamDef>::uninit();
        let mut name = [0u8; CC_PCC_NAME_BYTES];
        // SAFETY: live locals.
        unsafe {
            for (algo, table) in [(0u32, &TIMELY_PARAMS[..]), (1, &HPCC_PARAMS[..])] {
                for p in table {
                    assert_eq!(cc_pcc_param_def(algo, p.id, d.as_mut_ptr()), CcStatus::Ok);
                    let d = d.assume_init();
                    assert_eq!(
                        (d.id, d.default_value, d.min, d.max),
                        (p.id, p.default, p.min, p.max)
                    );
                    assert_eq!(&d.name[..p.name.len()], p.name.as_bytes());
                    assert_eq!(d.name[p.name.len()], 0);
                }
                let past = u32::try_from(table.len()).unwrap();
                assert_eq!(
                    cc_pcc_param_def(algo, past, d.as_mut_ptr()),
                    CcStatus::InvalidInput
                );
            }
            assert_eq!(
                cc_pcc_param_def(2, 0, d.as_mut_ptr()),
                CcStatus::InvalidInput
            );
            for (i, n) in COUNTER_NAMES.iter().enumerate() {
                assert_eq!(
                    cc_pcc_counter_name(u32::try_from(i).unwrap(), &mut name),
                    CcStatus::Ok
                );
                assert_eq!(&name[..n.len()], n.as_bytes());
                assert_eq!(name[n.len()], 0);
            }
            assert_eq!(cc_pcc_counter_name(26, &mut name), CcStatus::InvalidInput);
        }
    }
}
