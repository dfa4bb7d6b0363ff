//! The segment pacer through the C ABI (`cc_pacer_*`).
//!
//! One caller-allocated [`CcPacer`] block holds a whole scheduler: up to
//! [`CC_PACER_CAPACITY`] flows (each may be paced, window-limited or hybrid) and the timing
//! wheel. [`cc_pacer_init`] empties it in place (no temporary of its size on the stack: a static
//! block is fine). Per event: [`cc_pacer_set_rate`] when the congestion controller changes a
//! rate, [`cc_pacer_enqueue`] when a message arrives, [`cc_pacer_on_ack`] /
//! [`cc_pacer_set_window`] for HPCC's window, and [`cc_pacer_next`] in a loop while it returns
//! `CC_PACER_NEXT_SEND` (then arm a timer at [`cc_pacer_earliest`]).
//!
//! Time is the NIC clock in 1/16 ns, wrapping at 2^32 (`(uint32_t)(ns << 4)`, see
//! [`cc_pacer_time_from_ns`]); some call taking `now_q4` must come at least every 67 ms.
//! Semantics: `docs/pacer.md`.

use cc_pacer::{
    Config, Enqueued, FlowId, FlowMode, FlowSpec, Instant, Pacer, PacerError, Rate, RateChange,
    Segment, WindowChange,
};

pub use cc_pacer::PacerNext;

use crate::{CcStatus, block};

/// Flows one [`CcPacer`] block holds; all of them may be window or hybrid flows.
pub const CC_PACER_CAPACITY: usize = 1024;

type P = Pacer<CC_PACER_CAPACITY, CC_PACER_CAPACITY>;

/// Bytes of a [`CcPacer`] block: the wheel (12 820), five words of scheduler state, the flow
/// table's length, and per flow 20 (pacing state) + 4 (wheel link) + 8 (window or hybrid state)
/// bytes: 45 612 on ilp32 (riscv32), 45 616 on LP64 hosts (an 8-byte length), rounded to the
/// block's alignment.
pub const CC_PACER_BYTES: usize = 45_616;

/// Opaque scheduler: allocate one (any storage, aligned to 8), initialise it with
/// [`cc_pacer_init`]; never copy it while a call uses it.
#[repr(C, align(8))]
pub struct CcPacer {
    _opaque: [u8; CC_PACER_BYTES],
}
block::fits!(CcPacer, P);

/// The NIC, as plain integers. [`cc_pacer_params_default`]: a 100 Gb/s line, no hybrid pacing.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcPacerParams {
    /// Line rate, units of 128 b/s (≥ 61 036, ≈ 7.81 Mb/s).
    pub line_rate_u128bps: u32,
    /// Hybrid pacing's hardware rate, units of 128 b/s (0: no hybrid pacing; else ≥ 61 036 and
    /// ≤ the line rate).
    pub hybrid_rate_u128bps: u32,
    /// Hybrid pacing's burst, bytes (1 ..= 65 536; ignored without hybrid pacing).
    pub burst_bytes: u32,
}

/// How a flow is limited ([`CcPacerFlowSpec::mode`]).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcPacerMode {
    /// Paced at its rate (TIMELY).
    Paced = 0,
    /// Paced, and at most `window_bytes` in flight (HPCC).
    Window = 1,
    /// Paced per segment, each segment as bursts at the hybrid rate (TIMELY §5).
    Hybrid = 2,
}

/// A flow to add.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcPacerFlowSpec {
    /// Segment size: a multiple of 256 in 256 ..= 65 536 bytes.
    pub seg_bytes: u32,
    /// Initial rate, units of 128 b/s.
    pub rate_u128bps: u32,
    /// A [`CcPacerMode`] value (0 paced, 1 window, 2 hybrid).
    pub mode: u32,
    /// Initial window, bytes (window flows).
    pub window_bytes: u32,
}

/// Result of [`cc_pacer_add_flow`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcPacerAdd {
    /// Added; `*flow` is its index.
    Ok = 0,
    /// The block holds [`CC_PACER_CAPACITY`] flows.
    Full = 1,
    /// The segment size is not a multiple of 256 in 256 ..= 65 536.
    SegmentSize = 2,
    /// Hybrid flow on a pacer initialised without hybrid pacing.
    NoHybrid = 3,
    /// `mode` is not a [`CcPacerMode`].
    InvalidMode = 4,
}

/// Result of [`cc_pacer_set_rate`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcPacerRate {
    /// Same time per byte.
    Unchanged = 0,
    /// Faster: from the next segment on.
    Increase = 1,
    /// Slower: a waiting segment is checked against it when its time comes (lazy update).
    Decrease = 2,
    /// No such flow; nothing changed.
    UnknownFlow = 16,
}

/// Result of [`cc_pacer_enqueue`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcPacerEnqueue {
    /// The flow was scheduled already: the bytes wait behind its backlog.
    Queued = 0,
    /// The flow was idle: scheduled now.
    Scheduled = 1,
    /// Window flow with a closed window: it waits for an ACK.
    WindowClosed = 2,
    /// No such flow; nothing changed.
    UnknownFlow = 16,
    /// The backlog would exceed 2^32 − 1 bytes; nothing changed.
    BacklogOverflow = 17,
}

/// Result of [`cc_pacer_on_ack`] and [`cc_pacer_set_window`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcPacerWindow {
    /// Bookkeeping only.
    Updated = 0,
    /// The window opened for a flow that was waiting for it: scheduled now.
    Reopened = 1,
    /// No such flow; nothing changed.
    UnknownFlow = 16,
    /// Not a window flow; nothing changed.
    NotWindow = 17,
}

/// One segment that leaves ([`cc_pacer_next`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcPacerSegment {
    /// The flow's index.
    pub flow: u32,
    /// Bytes (1 ..= 65 536).
    pub bytes: u32,
    /// When it leaves, 1/16 ns (at or before `now_q4`): `max(its due time, line free)`.
    pub t_send_q4: u32,
}

/// `(uint32_t)(ns << 4)`: the NIC clock in the pacer's time unit.
#[unsafe(no_mangle)]
pub extern "C" fn cc_pacer_time_from_ns(ns: u64) -> u32 {
    Instant::from_ns(ns).raw()
}

/// Fills `*out` with a 100 Gb/s line and no hybrid pacing.
///
/// # Safety
/// `out` is non-null, aligned and valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pacer_params_default(out: *mut CcPacerParams) {
    let p = CcPacerParams {
        line_rate_u128bps: Config::DEFAULT.line_rate().units(),
        hybrid_rate_u128bps: 0,
        burst_bytes: 4_096,
    };
    // SAFETY: caller contract on `out`.
    unsafe { block::out(out, p) }
}

/// Validates `*params` and empties the pacer block in place (this divides: configuration only).
/// `CC_STATUS_INVALID_CONFIG` (block untouched) if a parameter is out of range.
///
/// # Safety
/// `p` is a writable [`CcPacer`] block (need not be initialised); `params` readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pacer_init(p: *mut CcPacer, params: *const CcPacerParams) -> CcStatus {
    // SAFETY: caller contract.
    let q: &CcPacerParams = unsafe { block::param(params) };
    let cfg = match Config::new(Rate::from_units(q.line_rate_u128bps)) {
        Ok(c) if q.hybrid_rate_u128bps == 0 => c,
        Ok(c) => match c.with_hybrid(Rate::from_units(q.hybrid_rate_u128bps), q.burst_bytes) {
            Ok(c) => c,
            Err(_) => return CcStatus::InvalidConfig,
        },
        Err(_) => return CcStatus::InvalidConfig,
    };
    debug_assert!(!p.is_null() && p.is_aligned(), "null or misaligned block");
    // SAFETY: the caller gives a writable block of `size_of::<CcPacer>()` bytes; all-zero bytes
    // are a valid (empty) pacer (integer fields, `heapless::Vec` length 0), which `reset` then
    // fills in place without a stack temporary of the block's size.
    unsafe { p.write_bytes(0, 1) };
    // SAFETY: now initialised (zeroes), exclusive (caller contract).
    let pacer = unsafe { block::get_mut(p) };
    pacer.reset(&cfg);
    CcStatus::Ok
}

/// Adds a flow (idle). `*flow` receives its index on `CC_PACER_ADD_OK`.
///
/// # Safety
/// `p` was initialised; `spec` readable; `flow` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pacer_add_flow(
    p: *mut CcPacer,
    spec: *const CcPacerFlowSpec,
    flow: *mut u32,
) -> CcPacerAdd {
    // SAFETY: caller contract.
    let (pacer, s) = unsafe { (block::get_mut(p), block::param(spec)) };
    let mode = match s.mode {
        m if m == CcPacerMode::Paced as u32 => FlowMode::Paced,
        m if m == CcPacerMode::Window as u32 => FlowMode::Window {
            window_bytes: s.window_bytes,
        },
        m if m == CcPacerMode::Hybrid as u32 => FlowMode::Hybrid,
        _ => return CcPacerAdd::InvalidMode,
    };
    match pacer.add_flow(FlowSpec {
        seg_bytes: s.seg_bytes,
        rate: Rate::from_units(s.rate_u128bps),
        mode,
    }) {
        Ok(id) => {
            #[allow(clippy::cast_possible_truncation)] // index < 1024
            // SAFETY: caller contract.
            unsafe {
                block::out(flow, id.index() as u32);
            }
            CcPacerAdd::Ok
        }
        Err(PacerError::SegmentSize) => CcPacerAdd::SegmentSize,
        Err(PacerError::NoHybrid) => CcPacerAdd::NoHybrid,
        Err(_) => CcPacerAdd::Full,
    }
}

#[inline(always)]
fn id(flow: u32) -> FlowId {
    FlowId::from_raw(flow)
}

/// Sets a flow's rate (units of 128 b/s; below 61 036 paced at 61 036): one division-free
/// reciprocal and a store.
///
/// # Safety
/// `p` was initialised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pacer_set_rate(
    p: *mut CcPacer,
    flow: u32,
    rate_u128bps: u32,
) -> CcPacerRate {
    // SAFETY: caller contract.
    let pacer = unsafe { block::get_mut(p) };
    match pacer.set_rate(id(flow), Rate::from_units(rate_u128bps)) {
        Ok(RateChange::Unchanged) => CcPacerRate::Unchanged,
        Ok(RateChange::Increase) => CcPacerRate::Increase,
        Ok(RateChange::Decrease) => CcPacerRate::Decrease,
        Err(_) => CcPacerRate::UnknownFlow,
    }
}

/// `bytes` more for `flow`; an idle flow is scheduled at `now_q4`.
///
/// # Safety
/// `p` was initialised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pacer_enqueue(
    p: *mut CcPacer,
    flow: u32,
    bytes: u32,
    now_q4: u32,
) -> CcPacerEnqueue {
    // SAFETY: caller contract.
    let pacer = unsafe { block::get_mut(p) };
    match pacer.enqueue(id(flow), bytes, Instant::from_raw(now_q4)) {
        Ok(Enqueued::Queued) => CcPacerEnqueue::Queued,
        Ok(Enqueued::Scheduled) => CcPacerEnqueue::Scheduled,
        Ok(Enqueued::WindowClosed) => CcPacerEnqueue::WindowClosed,
        Err(PacerError::BacklogOverflow) => CcPacerEnqueue::BacklogOverflow,
        Err(_) => CcPacerEnqueue::UnknownFlow,
    }
}

fn window(r: Result<WindowChange, PacerError>) -> CcPacerWindow {
    match r {
        Ok(WindowChange::Updated) => CcPacerWindow::Updated,
        Ok(WindowChange::Reopened) => CcPacerWindow::Reopened,
        Err(PacerError::NotWindow) => CcPacerWindow::NotWindow,
        Err(_) => CcPacerWindow::UnknownFlow,
    }
}

/// `bytes` of window flow `flow` acknowledged (in flight decreases, saturating at 0).
///
/// # Safety
/// `p` was initialised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pacer_on_ack(
    p: *mut CcPacer,
    flow: u32,
    bytes: u32,
    now_q4: u32,
) -> CcPacerWindow {
    // SAFETY: caller contract.
    let pacer = unsafe { block::get_mut(p) };
    window(pacer.on_ack(id(flow), bytes, Instant::from_raw(now_q4)))
}

/// Window flow `flow`'s window (HPCC's `W`), bytes.
///
/// # Safety
/// `p` was initialised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pacer_set_window(
    p: *mut CcPacer,
    flow: u32,
    window_bytes: u32,
    now_q4: u32,
) -> CcPacerWindow {
    // SAFETY: caller contract.
    let pacer = unsafe { block::get_mut(p) };
    window(pacer.set_window(id(flow), window_bytes, Instant::from_raw(now_q4)))
}

/// The next segment that leaves at or before `now_q4` (written to `*out`): `CC_PACER_NEXT_SEND`,
/// or `CC_PACER_NEXT_NONE` (`*out` untouched).
///
/// # Safety
/// `p` was initialised; `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pacer_next(
    p: *mut CcPacer,
    now_q4: u32,
    out: *mut CcPacerSegment,
) -> PacerNext {
    // SAFETY: caller contract; `CcPacerSegment` has `Segment`'s layout of three `u32`s
    // (asserted below), and `next_into` only writes `*seg`.
    let (pacer, seg) = unsafe { (block::get_mut(p), block::out_record::<_, Segment>(out)) };
    // The crate's common case in line, its general case a tail call writing `*out` itself; the
    // result is the crate's `PacerNext` (`CcPacerNext` in C) as it is.
    pacer.next_into(Instant::from_raw(now_q4), seg)
}

// `cc_pacer_next` hands `*out` to the crate as a `Segment`: the same three words.
const _: () = {
    use core::mem::{align_of, offset_of, size_of};
    assert!(size_of::<CcPacerSegment>() == size_of::<Segment>());
    assert!(align_of::<CcPacerSegment>() == align_of::<Segment>());
    assert!(offset_of!(CcPacerSegment, flow) == offset_of!(Segment, flow));
    assert!(offset_of!(CcPacerSegment, bytes) == offset_of!(Segment, bytes));
    assert!(offset_of!(CcPacerSegment, t_send_q4) == offset_of!(Segment, t_send));
};

/// No segment leaves before `*out_q4`: returns 1 and writes it, or 0 (nothing scheduled,
/// `*out_q4` untouched). [`cc_pacer_next`] at that time may still return `NONE`: ask again.
///
/// # Safety
/// `p` was initialised; `out_q4` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pacer_earliest(p: *const CcPacer, out_q4: *mut u32) -> u32 {
    // SAFETY: caller contract.
    let pacer = unsafe { block::get(p) };
    match pacer.earliest() {
        Some(t) => {
            // SAFETY: caller contract.
            unsafe { block::out(out_q4, t.raw()) };
            1
        }
        None => 0,
    }
}

/// A flow's backlog, bytes (0 for an unknown flow).
///
/// # Safety
/// `p` was initialised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_pacer_backlog(p: *const CcPacer, flow: u32) -> u32 {
    // SAFETY: caller contract.
    let pacer = unsafe { block::get(p) };
    pacer.flow(id(flow)).map_or(0, |v| v.backlog)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    extern crate std;
    use super::*;
    use core::mem::MaybeUninit;
    use std::boxed::Box;

    #[test]
    fn block_size_is_exact() {
        // LP64 here; riscv32's 45 612 fits (checked at compile time by `fits!`).
        assert_eq!(core::mem::size_of::<P>(), CC_PACER_BYTES);
    }

    #[test]
    fn init_add_enqueue_next_match_the_crate() {
        let mut blk: Box<MaybeUninit<CcPacer>> = Box::new_uninit();
        let p = blk.as_mut_ptr();
        let mut params = MaybeUninit::<CcPacerParams>::uninit();
        // SAFETY: live locals and block.
        unsafe {
            cc_pacer_params_default(params.as_mut_ptr());
            let mut bad = params.assume_init();
            bad.line_rate_u128bps = 5;
            assert_eq!(cc_pacer_init(p, &bad), CcStatus::InvalidConfig);
            assert_eq!(cc_pacer_init(p, params.as_ptr()), CcStatus::Ok);
            let mut f = 99u32;
            let spec = CcPacerFlowSpec {
                seg_bytes: 16_384,
                rate_u128bps: 78_125_000, // 10 Gb/s
                mode: CcPacerMode::Paced as u32,
                window_bytes: 0,
            };
            assert_eq!(cc_pacer_add_flow(p, &spec, &mut f), CcPacerAdd::Ok);
            assert_eq!(f, 0);
            let hybrid = CcPacerFlowSpec {
                mode: CcPacerMode::Hybrid as u32,
                ..spec
            };
            assert_eq!(cc_pacer_add_flow(p, &hybrid, &mut f), CcPacerAdd::NoHybrid);
            assert_eq!(cc_pacer_enqueue(p, 0, 40_000, 0), CcPacerEnqueue::Scheduled);
            assert_eq!(cc_pacer_enqueue(p, 7, 1, 0), CcPacerEnqueue::UnknownFlow);
            let mut s = CcPacerSegment {
                flow: 9,
                bytes: 9,
                t_send_q4: 9,
            };
            assert_eq!(cc_pacer_next(p, 0, &mut s), PacerNext::Send);
            assert_eq!((s.flow, s.bytes, s.t_send_q4), (0, 16_384, 0));
            assert_eq!(cc_pacer_next(p, 1_000, &mut s), PacerNext::None);
            let mut t = 0;
            assert_eq!(cc_pacer_earliest(p, &mut t), 1);
            assert_eq!(t, 209_716);
            assert_eq!(cc_pacer_set_rate(p, 0, 39_062_500), CcPacerRate::Decrease);
            assert_eq!(cc_pacer_on_ack(p, 0, 1, 0), CcPacerWindow::NotWindow);
            assert_eq!(cc_pacer_backlog(p, 0), 40_000 - 16_384);
            assert_eq!(cc_pacer_time_from_ns(13_108), 209_728);
        }
    }
}
