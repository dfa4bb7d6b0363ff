//! The probe policy shared by both algorithms: at most one probe outstanding per flow,
//! requested on a TX event, given up after a timeout, answers matched by their send time.

use crate::counters::{Counter, Counters};
use cc_math::wrap::wrapping_delta;

/// Flag bit: the context holds a started flow (a zeroed context is a new flow).
pub(crate) const FLAG_STARTED: u32 = 1;
/// Flag bit: a probe is outstanding.
pub(crate) const FLAG_PROBE_OUT: u32 = 2;

/// A TX event at `now`: whether to request a probe (none outstanding, or the outstanding one
/// is at least `timeout_ns` old: counted timed out). Records the request time.
#[inline(always)]
pub(crate) fn on_tx(
    req_ts_ns: &mut u32,
    flags: &mut u32,
    now: u32,
    timeout_ns: u32,
    counters: &mut Counters,
) -> bool {
    if *flags & FLAG_PROBE_OUT != 0 {
        // Age on the 32-bit wrapping clock: (now − requested) mod 2^32.
        if wrapping_delta::<32>(now, *req_ts_ns) < timeout_ns {
            return false;
        }
        counters.inc(Counter::ProbesTimedOut);
    }
    *flags |= FLAG_PROBE_OUT;
    *req_ts_ns = now;
    counters.inc(Counter::ProbesSent);
    true
}

/// A probe response whose request left at `req_send_ts_ns`: whether it answers the
/// outstanding probe (then no longer outstanding, counted answered) or not (counted late).
#[inline(always)]
pub(crate) fn answers(
    req_ts_ns: u32,
    flags: &mut u32,
    req_send_ts_ns: u32,
    counters: &mut Counters,
) -> bool {
    // The answer to the outstanding probe left at or after the request time (serial order
    // modulo 2^32: less than 2^31 ns later, which the timeout's range guarantees).
    let since_req = wrapping_delta::<32>(req_send_ts_ns, req_ts_ns);
    if *flags & FLAG_PROBE_OUT == 0 || since_req >= 1 << 31 {
        counters.inc(Counter::ProbesLate);
        return false;
    }
    *flags &= !FLAG_PROBE_OUT;
    counters.inc(Counter::ProbesAnswered);
    true
}
