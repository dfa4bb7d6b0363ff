//! The adapter's counters: one `u32` array the platform declares (one row each, at most 63) and
//! reads at run time. Every counter wraps modulo 2^32 (a hardware-style counter; the reader
//! takes differences).

use crate::event::{Event, EventType, nack_subtype};

/// Counter ids (indices into [`Counters`]), in table order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum Counter {
    /// CNP events (callbacks).
    EvCnp = 0,
    /// TX events.
    EvTx = 1,
    /// ACK events.
    EvAck = 2,
    /// NACK events.
    EvNack = 3,
    /// RTT probe responses.
    EvRtt = 4,
    /// Events of a type the adapter ignores, rate unchanged: NULL (0), FW (1, deprecated),
    /// ROCE_TX_FOR_ACK_NACK (31) and any code the SDK does not define.
    EvUnknown = 5,
    /// Packets sent, summed over TX events (their coalesced counts).
    TxPackets = 6,
    /// Bytes sent in 32-byte units, summed over TX events.
    Tx32bUnits = 7,
    /// ACKs, summed over ACK events' coalesced counts.
    AckCoalesced = 8,
    /// NACKs, summed over NACK events' coalesced counts.
    NackCoalesced = 9,
    /// CNPs, summed over CNP events' coalesced counts.
    CnpCoalesced = 10,
    /// Probes requested (`rtt_req` set).
    ProbesSent = 11,
    /// Probe responses that matched the outstanding probe and were used.
    ProbesAnswered = 12,
    /// Probes given up after the timeout.
    ProbesTimedOut = 13,
    /// Probe responses that answer a probe given up: TIMELY, a request-send timestamp before the
    /// outstanding probe's request; HPCC, a response while the re-requested probe has not yet
    /// left. Counted and ignored.
    ProbesLate = 14,
    /// Probe responses whose responder turnaround exceeds the measured RTT (clocks or
    /// timestamps inconsistent): counted, no RTT sample taken.
    RttInvalid = 15,
    /// Q20 conversions clamped up to 1 (a rate below 2^-21 of line rate).
    RateClampedLow = 16,
    /// Q20 conversions clamped down to 2^20 (line rate).
    RateClampedHigh = 17,
    /// Flows started (a context seen for the first time).
    NewFlows = 18,
    /// HPCC: telemetry after a gap longer than its counters can span (half a wrap of the
    /// 24-bit timestamp or of the 20-bit transmitted-bytes count): the hop restarts from this
    /// sample (no update).
    TelemetryGap = 19,
    /// NACK events of subtype RNR (receiver not ready, 1).
    NackRnr = 20,
    /// NACK events of subtype out of sequence (2).
    NackOos = 21,
    /// NACK events of subtype duplicate read (3).
    NackDupRead = 22,
    /// HPCC: TX events whose `RTT_REQ_SENT` flag marked the requested probe's departure (its
    /// timeout starts there).
    ProbesDeparted = 23,
    /// HPCC: probe responses repeating the telemetry last used (same switch, same transmit
    /// timestamp): counted and ignored, the probe stays outstanding.
    ProbesDuplicate = 24,
    /// Probe responses while no probe is outstanding (the answer to a probe already answered or
    /// given up, or a response nobody asked for): counted and ignored.
    ProbesUnsolicited = 25,
}

/// Number of counters.
pub const COUNTER_NUM: usize = 26;

/// Names of the counters, in id order (what the C side declares).
pub const COUNTER_NAMES: [&str; COUNTER_NUM] = [
    "EV_CNP",
    "EV_TX",
    "EV_ACK",
    "EV_NACK",
    "EV_RTT",
    "EV_UNKNOWN",
    "TX_PACKETS",
    "TX_32B_UNITS",
    "ACK_COALESCED",
    "NACK_COALESCED",
    "CNP_COALESCED",
    "PROBES_SENT",
    "PROBES_ANSWERED",
    "PROBES_TIMED_OUT",
    "PROBES_LATE",
    "RTT_INVALID",
    "RATE_CLAMPED_LOW",
    "RATE_CLAMPED_HIGH",
    "NEW_FLOWS",
    "TELEMETRY_GAP",
    "NACK_RNR",
    "NACK_OOS",
    "NACK_DUP_READ",
    "PROBES_DEPARTED",
    "PROBES_DUPLICATE",
    "PROBES_UNSOLICITED",
];

/// The counter array as the platform holds it (`repr(transparent)`: a C `uint32_t[26]` can be
/// borrowed as one without a copy).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Counters(pub [u32; COUNTER_NUM]);

impl Counters {
    /// Adds `n` to counter `c` (wrapping: a counter modulo 2^32).
    #[inline(always)]
    pub fn add(&mut self, c: Counter, n: u32) {
        if let Some(x) = self.0.get_mut(usize::from(c as u8)) {
            *x = x.wrapping_add(n);
        }
    }

    /// Adds one to counter `c`.
    #[inline(always)]
    pub fn inc(&mut self, c: Counter) {
        self.add(c, 1);
    }

    /// Counter `c`'s value.
    #[must_use]
    pub fn get(&self, c: Counter) -> u32 {
        self.0.get(usize::from(c as u8)).copied().unwrap_or(0)
    }
}

/// Counts one event by type, as both algorithms do before acting on it: the callback
/// (`EV_*`), TX events' coalesced packets and 32-byte units, ACK/NACK/CNP events' coalesced
/// counts, NACK subtypes by name. Returns the type the adapter acts on (`None`: counted
/// `EV_UNKNOWN`, ignored).
#[inline(always)]
pub(crate) fn count_event(ev: &Event, counters: &mut Counters) -> Option<EventType> {
    let t = ev.event_type();
    match t {
        Some(EventType::Tx) => {
            counters.inc(Counter::EvTx);
            let tx = ev.tx();
            counters.add(Counter::TxPackets, u32::from(tx.packets));
            counters.add(Counter::Tx32bUnits, u32::from(tx.sent_32b_units));
        }
        Some(EventType::Rtt) => counters.inc(Counter::EvRtt),
        Some(EventType::Ack) => {
            counters.inc(Counter::EvAck);
            counters.add(Counter::AckCoalesced, u32::from(ev.ack().coalesced));
        }
        Some(EventType::Nack) => {
            counters.inc(Counter::EvNack);
            counters.add(Counter::NackCoalesced, u32::from(ev.ack().coalesced));
            match ev.subtype {
                nack_subtype::RNR => counters.inc(Counter::NackRnr),
                nack_subtype::OOS => counters.inc(Counter::NackOos),
                nack_subtype::DUP_READ => counters.inc(Counter::NackDupRead),
                _ => {}
            }
        }
        Some(EventType::Cnp) => {
            counters.inc(Counter::EvCnp);
            counters.add(Counter::CnpCoalesced, u32::from(ev.ack().coalesced));
        }
        None => counters.inc(Counter::EvUnknown),
    }
    t
}
