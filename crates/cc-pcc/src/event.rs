//! The BlueField-3 PCC event (44 bytes) and the switch-telemetry record (12 bytes), declared
//! here from NVIDIA's public documentation of the layout (docs/pcc.md cites where each field
//! comes from). Every multi-byte field is big-endian on the wire and read explicitly with
//! `u32::from_be_bytes`; nothing is cast in place.
//!
//! ```text
//! byte  0..12  reserved (three words)
//!      12      type          13 subtype      14 port       15 flags      (attribute word)
//!      16..20  flow tag
//!      20..24  sequence number
//!      24..28  timestamp, ns, 32-bit wrapping
//!      28..44  union, by type:
//!              TX            first timestamp | sent bytes (32-B units, 16 b) · packets (16 b) | QPN | reserved
//!              ACK/NACK/CNP  first timestamp | first sequence number | number coalesced | reserved
//!              RTT           request send ts | request receive ts (responder) | response send ts (responder) | reserved
//! ```

/// Bytes of one event.
pub const EVENT_BYTES: usize = 44;
/// Bytes of one switch-telemetry hop record (the RTT response's raw data).
pub const TELEMETRY_BYTES: usize = 12;

/// The event as its 32-bit big-endian words, field by field (`#[repr(C)]`, no padding: every
/// field is a `[u8; 4]`). The decoder reads the same offsets from a byte array; this
/// declaration is what the size assertion and a C glue's `static_assert` check against.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventLayout {
    /// Three reserved words.
    pub reserved: [[u8; 4]; 3],
    /// Type, subtype, port, flags (one byte each).
    pub attr: [u8; 4],
    /// Flow tag (big-endian).
    pub flow_tag: [u8; 4],
    /// Sequence number (big-endian).
    pub sn: [u8; 4],
    /// Timestamp, ns (big-endian, 32-bit wrapping).
    pub timestamp: [u8; 4],
    /// The type-specific union, four big-endian words.
    pub spec: [[u8; 4]; 4],
}

/// The switch-telemetry hop record (`#[repr(C)]`, no padding).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TelemetryLayout {
    /// Queue length in 256-byte cells (big-endian `u16`), switch index, port type and valid bits.
    pub extra: [u8; 4],
    /// Transmitted bytes (big-endian `u32`).
    pub tx_bytes: [u8; 4],
    /// Transmit timestamp, ns (big-endian `u32`).
    pub tx_ts: [u8; 4],
}

const _: () = assert!(core::mem::size_of::<EventLayout>() == EVENT_BYTES);
const _: () = assert!(core::mem::align_of::<EventLayout>() == 1);
const _: () = assert!(core::mem::size_of::<TelemetryLayout>() == TELEMETRY_BYTES);

/// Event type codes (the attribute word's first byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum EventType {
    /// A congestion notification packet (2).
    Cnp = 2,
    /// Packets sent (3), with coalesced byte and packet counts.
    Tx = 3,
    /// An acknowledgement (4).
    Ack = 4,
    /// A negative acknowledgement (5): RNR, out of sequence or duplicate read (the subtype).
    Nack = 5,
    /// An RTT probe response (6).
    Rtt = 6,
}

impl EventType {
    /// The type for a code; `None` for any code the platform does not document.
    #[must_use]
    pub const fn from_code(code: u8) -> Option<EventType> {
        match code {
            2 => Some(EventType::Cnp),
            3 => Some(EventType::Tx),
            4 => Some(EventType::Ack),
            5 => Some(EventType::Nack),
            6 => Some(EventType::Rtt),
            _ => None,
        }
    }
}

/// One decoded event: every field in host order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Event {
    /// The type code as delivered (see [`EventType::from_code`]).
    pub type_code: u8,
    /// Subtype (NACK: RNR, out of sequence, duplicate read).
    pub subtype: u8,
    /// Port number.
    pub port: u8,
    /// Flags byte.
    pub flags: u8,
    /// Flow tag.
    pub flow_tag: u32,
    /// Sequence number.
    pub sn: u32,
    /// Event timestamp, ns, 32-bit wrapping.
    pub ts_ns: u32,
    /// The union's four words, big-endian decoded; read them through [`tx`](Self::tx),
    /// [`ack`](Self::ack) or [`rtt`](Self::rtt).
    pub spec: [u32; 4],
}

/// The TX union.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Tx {
    /// Timestamp of the first coalesced TX, ns.
    pub first_ts_ns: u32,
    /// Sent bytes in 32-byte units (coalesced, 16 bits).
    pub sent_32b_units: u16,
    /// Sent packets (coalesced, 16 bits).
    pub packets: u16,
    /// Queue pair number.
    pub qpn: u32,
}

/// The ACK / NACK / CNP union.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Ack {
    /// Timestamp of the first coalesced event, ns.
    pub first_ts_ns: u32,
    /// Sequence number of the first coalesced event.
    pub first_sn: u32,
    /// Number of events coalesced into this one.
    pub coalesced: u32,
}

/// The RTT-probe-response union.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Rtt {
    /// When the request left this NIC, ns (this NIC's clock).
    pub req_send_ts_ns: u32,
    /// When the request reached the responder, ns (the responder's clock).
    pub req_recv_ts_ns: u32,
    /// When the response left the responder, ns (the responder's clock).
    pub resp_send_ts_ns: u32,
}

/// Word `i` of the event, big-endian (the array has 11 words: `get` on a constant index
/// folds away).
#[inline(always)]
fn word(words: &[[u8; 4]], i: usize) -> u32 {
    words.get(i).copied().map_or(0, u32::from_be_bytes)
}

impl Event {
    /// Decodes the 44 bytes as delivered (big-endian fields).
    #[inline]
    #[must_use]
    pub fn decode(bytes: &[u8; EVENT_BYTES]) -> Event {
        let (w, _) = bytes.as_chunks::<4>();
        let attr = w.get(3).copied().unwrap_or([0; 4]);
        let [type_code, subtype, port, flags] = attr;
        Event {
            type_code,
            subtype,
            port,
            flags,
            flow_tag: word(w, 4),
            sn: word(w, 5),
            ts_ns: word(w, 6),
            spec: [word(w, 7), word(w, 8), word(w, 9), word(w, 10)],
        }
    }

    /// Encodes the event into the platform's 44 bytes (reserved words 0): the inverse of
    /// [`decode`](Self::decode), for tests, replays and a host that builds event streams.
    #[must_use]
    pub fn encode(&self) -> [u8; EVENT_BYTES] {
        let mut out = [0u8; EVENT_BYTES];
        let [s0, s1, s2, s3] = self.spec;
        let words = [
            0,
            0,
            0,
            u32::from_be_bytes([self.type_code, self.subtype, self.port, self.flags]),
            self.flow_tag,
            self.sn,
            self.ts_ns,
            s0,
            s1,
            s2,
            s3,
        ];
        let (chunks, _) = out.as_chunks_mut::<4>();
        for (c, v) in chunks.iter_mut().zip(words) {
            *c = v.to_be_bytes();
        }
        out
    }

    /// The documented type, `None` for an undocumented code.
    #[must_use]
    pub const fn event_type(&self) -> Option<EventType> {
        EventType::from_code(self.type_code)
    }

    /// The union read as TX.
    #[must_use]
    #[allow(clippy::cast_possible_truncation)] // the two 16-bit halves of one word
    pub const fn tx(&self) -> Tx {
        let [s0, s1, s2, _] = self.spec;
        Tx {
            first_ts_ns: s0,
            sent_32b_units: (s1 >> 16) as u16,
            packets: s1 as u16,
            qpn: s2,
        }
    }

    /// The union read as ACK, NACK or CNP.
    #[must_use]
    pub const fn ack(&self) -> Ack {
        let [s0, s1, s2, _] = self.spec;
        Ack {
            first_ts_ns: s0,
            first_sn: s1,
            coalesced: s2,
        }
    }

    /// The union read as an RTT probe response.
    #[must_use]
    pub const fn rtt(&self) -> Rtt {
        let [s0, s1, s2, _] = self.spec;
        Rtt {
            req_send_ts_ns: s0,
            req_recv_ts_ns: s1,
            resp_send_ts_ns: s2,
        }
    }
}

/// One hop's switch telemetry, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Telemetry {
    /// Queue length in 256-byte cells.
    pub qlen_256b_cells: u16,
    /// Switch index (byte 2).
    pub index: u8,
    /// Byte 3: port type and valid bits, as delivered.
    pub flags: u8,
    /// Transmitted bytes.
    pub tx_bytes: u32,
    /// Transmit timestamp, ns.
    pub tx_ts_ns: u32,
}

impl Telemetry {
    /// Bytes per queue cell.
    pub const CELL_BYTES: u32 = 256;

    /// Decodes the 12 bytes (big-endian fields).
    #[inline]
    #[must_use]
    pub fn decode(bytes: &[u8; TELEMETRY_BYTES]) -> Telemetry {
        let (w, _) = bytes.as_chunks::<4>();
        let [q0, q1, index, flags] = w.first().copied().unwrap_or([0; 4]);
        Telemetry {
            qlen_256b_cells: u16::from_be_bytes([q0, q1]),
            index,
            flags,
            tx_bytes: word(w, 1),
            tx_ts_ns: word(w, 2),
        }
    }

    /// Encodes the record into its 12 bytes (big-endian fields): the inverse of
    /// [`decode`](Self::decode), for tests and a host that builds telemetry (simulated switches,
    /// stream generators).
    #[must_use]
    pub fn encode(&self) -> [u8; TELEMETRY_BYTES] {
        let mut out = [0u8; TELEMETRY_BYTES];
        let [q0, q1] = self.qlen_256b_cells.to_be_bytes();
        let words = [
            u32::from_be_bytes([q0, q1, self.index, self.flags]),
            self.tx_bytes,
            self.tx_ts_ns,
        ];
        let (chunks, _) = out.as_chunks_mut::<4>();
        for (c, v) in chunks.iter_mut().zip(words) {
            *c = v.to_be_bytes();
        }
        out
    }

    /// Queue length in bytes (`cells · 256`, below 2^24: exact).
    #[must_use]
    #[allow(clippy::arithmetic_side_effects)] // u16 · 256 < 2^24
    pub const fn qlen_bytes(&self) -> u32 {
        self.qlen_256b_cells as u32 * Self::CELL_BYTES
    }
}
