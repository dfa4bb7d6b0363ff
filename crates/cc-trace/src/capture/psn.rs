//! 24-bit BTH PSNs extended to 32 bits per flow.

/// Extends one flow's 24-bit BTH PSNs to 32 bits by counting the wraps.
///
/// Each PSN becomes the 32-bit value congruent to it modulo 2^24 that is nearest to an anchor
/// (within `[−2^23, 2^23)` of it): the largest extended PSN sent so far, or before any data
/// packet the last extended ACK PSN (the first PSN seen is taken as is). Retransmitted or
/// reordered packets (behind the anchor) keep the anchor; a packet ahead of it moves it. A
/// flow's PSNs within a window of 2^23 packets of each other are extended consistently, so
/// after every 2^24 packets the extended PSN is 2^24 higher (and, after 2^32, wraps modulo 2^32,
/// where the serial-number compare takes over).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PsnExtender {
    /// The largest extended PSN sent so far on the flow's data stream.
    pub max_sent: Option<u32>,
    /// The last extended ACK PSN.
    pub last_ack: Option<u32>,
}

impl PsnExtender {
    /// The 32-bit value `≡ psn (mod 2^24)` nearest to `anchor`.
    pub fn extend(anchor: u32, psn: u32) -> u32 {
        // (psn − anchor) mod 2^24, as a signed 24-bit difference.
        let d = psn.wrapping_sub(anchor) & 0xFF_FFFF;
        let signed = if d >= 1 << 23 {
            i64::from(d) - (1 << 24)
        } else {
            i64::from(d)
        };
        (i64::from(anchor) + signed).rem_euclid(1 << 32) as u32
    }

    /// A data packet with 24-bit PSN `psn` was sent.
    pub fn on_data(&mut self, psn: u32) {
        let psn = psn & 0xFF_FFFF;
        self.max_sent = Some(match self.max_sent {
            None => psn,
            Some(m) => {
                let e = Self::extend(m, psn);
                // Ahead of the anchor (serially): the new largest PSN sent.
                if e.wrapping_sub(m) as i32 > 0 { e } else { m }
            }
        });
    }

    /// An ACK with 24-bit PSN `psn`: `(ack_seq, snd_nxt)`, both 32-bit.
    pub fn on_ack(&mut self, psn: u32) -> (u32, u32) {
        let psn = psn & 0xFF_FFFF;
        let ack = match self.max_sent.or(self.last_ack) {
            Some(anchor) => Self::extend(anchor, psn),
            None => psn,
        };
        self.last_ack = Some(ack);
        (ack, self.max_sent.unwrap_or(0))
    }
}

// ---------------------------------------------------------------- writer (fixtures)
