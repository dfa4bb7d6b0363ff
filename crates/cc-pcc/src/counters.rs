//! The adapter's counters: one `u32` array the platform declares (one row each, at most 63) and
//! reads at run time. Every counter wraps modulo 2^32 (a hardware-style counter; the reader
//! takes differences).

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
    /// Events of an undocumented type (ignored, rate unchanged).
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
    /// Probe responses that matched no outstanding probe (late answers to timed-out probes,
    /// or unsolicited): counted and ignored.
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
}

/// Number of counters.
pub const COUNTER_NUM: usize = 20;

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
];

/// The counter array as the platform holds it (`repr(transparent)`: a C `uint32_t[20]` can be
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
