//! The probe policy shared by both algorithms: at most one probe outstanding per flow,
//! requested on a TX event, given up after a timeout. How a response is matched differs, because
//! what the response carries differs (docs/pcc.md, "Probes"):
//! * TIMELY's responses carry the request-send timestamp: [`answers_by_send_time`] matches it
//!   against the request time.
//! * HPCC's responses carry 12 bytes of switch telemetry *in place of* the timestamps, so the
//!   departure is taken from the TX event whose `RTT_REQ_SENT` flag says the requested probe has
//!   left ([`note_departure`]; the timeout runs from there), and [`answers_after_departure`]
//!   accepts a response only while a departed probe is outstanding.

use crate::counters::{Counter, Counters};
use cc_math::wrap::wrapping_delta;

/// Flag bit: the context holds a started flow (a zeroed context is a new flow).
pub(crate) const FLAG_STARTED: u32 = 1;
/// Flag bit: a probe is outstanding (requested, answer not yet taken).
pub(crate) const FLAG_PROBE_OUT: u32 = 2;
/// Flag bit (HPCC): the outstanding probe has left the NIC (`RTT_REQ_SENT` seen); the probe
/// time word then holds the departure time instead of the request time.
pub(crate) const FLAG_PROBE_DEPARTED: u32 = 4;

/// A TX event at `now`: whether to request a probe (none outstanding, or the outstanding one
/// is at least `timeout_ns` past its request — or, once it departed, past its departure:
/// counted timed out). Records the request time; a new request has not departed.
#[inline(always)]
pub(crate) fn on_tx(
    probe_ts_ns: &mut u32,
    flags: &mut u32,
    now: u32,
    timeout_ns: u32,
    counters: &mut Counters,
) -> bool {
    if *flags & FLAG_PROBE_OUT != 0 {
        // Age on the 32-bit wrapping clock: (now − requested or departed) mod 2^32.
        if wrapping_delta::<32>(now, *probe_ts_ns) < timeout_ns {
            return false;
        }
        counters.inc(Counter::ProbesTimedOut);
    }
    *flags = (*flags | FLAG_PROBE_OUT) & !FLAG_PROBE_DEPARTED;
    *probe_ts_ns = now;
    counters.inc(Counter::ProbesSent);
    true
}

/// HPCC: a TX event at `now` whose flags carry `RTT_REQ_SENT`: the requested probe has left,
/// its timeout starts now. A flag with no request waiting for it (none outstanding, or already
/// departed) changes nothing.
#[inline(always)]
pub(crate) fn note_departure(
    probe_ts_ns: &mut u32,
    flags: &mut u32,
    now: u32,
    counters: &mut Counters,
) {
    if *flags & (FLAG_PROBE_OUT | FLAG_PROBE_DEPARTED) == FLAG_PROBE_OUT {
        *flags |= FLAG_PROBE_DEPARTED;
        *probe_ts_ns = now;
        counters.inc(Counter::ProbesDeparted);
    }
}

/// Takes the outstanding probe as answered.
#[inline(always)]
fn answered(flags: &mut u32, counters: &mut Counters) -> bool {
    *flags &= !(FLAG_PROBE_OUT | FLAG_PROBE_DEPARTED);
    counters.inc(Counter::ProbesAnswered);
    true
}

/// TIMELY: a probe response whose request left at `req_send_ts_ns`: whether it answers the
/// outstanding probe (then no longer outstanding, counted answered); otherwise counted
/// unsolicited (none outstanding) or late (it left before the outstanding probe was requested:
/// the answer to a probe given up).
#[inline(always)]
pub(crate) fn answers_by_send_time(
    req_ts_ns: u32,
    flags: &mut u32,
    req_send_ts_ns: u32,
    counters: &mut Counters,
) -> bool {
    if *flags & FLAG_PROBE_OUT == 0 {
        counters.inc(Counter::ProbesUnsolicited);
        return false;
    }
    // The answer to the outstanding probe left at or after the request time (serial order
    // modulo 2^32: less than 2^31 ns later, which the timeout's range guarantees).
    if wrapping_delta::<32>(req_send_ts_ns, req_ts_ns) >= 1 << 31 {
        counters.inc(Counter::ProbesLate);
        return false;
    }
    answered(flags, counters)
}

/// HPCC: a probe response (its telemetry not a duplicate): whether it answers the outstanding
/// probe — one has departed — (then no longer outstanding, counted answered); otherwise counted
/// unsolicited (none outstanding) or late (the outstanding probe was requested but has not left:
/// the response answers one given up).
#[inline(always)]
pub(crate) fn answers_after_departure(flags: &mut u32, counters: &mut Counters) -> bool {
    if *flags & FLAG_PROBE_OUT == 0 {
        counters.inc(Counter::ProbesUnsolicited);
        return false;
    }
    if *flags & FLAG_PROBE_DEPARTED == 0 {
        counters.inc(Counter::ProbesLate);
        return false;
    }
    answered(flags, counters)
}
