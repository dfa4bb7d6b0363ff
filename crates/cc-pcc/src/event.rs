//! The BlueField-3 PCC event (44 bytes) and the switch-telemetry record (12 bytes).
//!
//! The layout is the one the SDK's own getters read (DOCA SDK 3.0 device headers
//! `doca_pcc_dev_event.h` and `doca_pcc_dev_data_structure_le_bf3.h`; docs/pcc.md cites each
//! row). Every getter reads one 32-bit word at its offset, byte-swaps it (the word is
//! big-endian as delivered) and takes a little-endian bit field of the result — so the
//! attribute word's *least* significant byte, the type, is byte 15, not byte 12. [`LAYOUT`] is
//! that table: one [`Field`] per getter (offset, bit position, width), and [`Event::decode`],
//! [`Event::encode`] and the union accessors read and write through it, so the layout is
//! stated once.
//!
//! ```text
//! byte  0..12  reserved (three words)
//!      12..16  attribute word (big-endian): flags bits 24–31 · port 16–23 · subtype 8–15 · type 0–7
//!              (so: flags = byte 12, port = byte 13, subtype = byte 14, type = byte 15)
//!      16..20  flow tag
//!      20..24  sequence number
//!      24..28  timestamp, ns, 32-bit wrapping
//!      28..44  union, by type (each word big-endian):
//!              TX            first timestamp | packets (bits 16–31) · sent 32-B units (0–15) | QPN (bits 0–23) | reserved
//!              ACK/NACK/CNP  first timestamp | first sequence number | number coalesced (bits 0–15) | reserved
//!              RTT           request send ts | request receive ts (responder) | response send ts (responder) | reserved
//!              RTT raw data  bytes 28..40 as delivered (not byte-swapped): the same bytes as the
//!                            three timestamps, so a response that carries switch telemetry has none
//! ```

/// Bytes of one event.
pub const EVENT_BYTES: usize = 44;
/// Bytes of one switch-telemetry hop record (the RTT response's raw data).
pub const TELEMETRY_BYTES: usize = 12;
/// Byte offset of the RTT response's raw data (`doca_pcc_dev_get_rtt_raw_data`): the start of
/// the union, overlaying the three RTT timestamps.
pub const RTT_RAW_DATA_OFFSET: usize = 28;

/// One field of the event as an SDK getter reads it: the big-endian 32-bit word at byte
/// `offset`, bits `shift .. shift + bits` of its value. Bits of a word outside every field of
/// the type are reserved: [`get`](Self::get) masks them off, [`put`](Self::put) leaves them 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// The getter's name in the SDK (what the field is checked against).
    pub getter: &'static str,
    /// Byte offset of the word in the 44-byte event (a multiple of 4).
    pub offset: usize,
    /// Lowest bit of the field in the word's value.
    pub shift: u32,
    /// Width in bits (1 ..= 32).
    pub bits: u32,
}

impl Field {
    /// The field's mask, before the shift.
    #[must_use]
    #[allow(clippy::arithmetic_side_effects)] // bits ≤ 32: the shift is in range
    pub const fn mask(&self) -> u32 {
        if self.bits >= 32 {
            u32::MAX
        } else {
            (1u32 << self.bits) - 1
        }
    }

    /// Index of the field's word among the event's eleven words.
    #[must_use]
    pub const fn word(&self) -> usize {
        self.offset / 4
    }

    /// The field from a word's value (reserved bits masked off).
    #[inline(always)]
    #[must_use]
    pub const fn get(&self, word: u32) -> u32 {
        (word >> self.shift) & self.mask()
    }

    /// `word` with the field set to `v` (bits of `v` past the width dropped).
    #[inline(always)]
    #[must_use]
    pub const fn put(&self, word: u32, v: u32) -> u32 {
        (word & !(self.mask() << self.shift)) | ((v & self.mask()) << self.shift)
    }
}

/// The fields of the event, one per SDK getter.
pub mod field {
    use super::Field;

    const fn f(getter: &'static str, offset: usize, shift: u32, bits: u32) -> Field {
        Field {
            getter,
            offset,
            shift,
            bits,
        }
    }

    /// Event type (`doca_pcc_dev_get_ev_attr().ev_type`): byte 15.
    pub const TYPE: Field = f("ev_attr.ev_type", 12, 0, 8);
    /// Subtype (`.ev_subtype`): byte 14.
    pub const SUBTYPE: Field = f("ev_attr.ev_subtype", 12, 8, 8);
    /// Port (`.port_num`): byte 13.
    pub const PORT: Field = f("ev_attr.port_num", 12, 16, 8);
    /// Flags (`.flags`): byte 12.
    pub const FLAGS: Field = f("ev_attr.flags", 12, 24, 8);
    /// Flow tag (`doca_pcc_dev_get_flowtag`).
    pub const FLOW_TAG: Field = f("get_flowtag", 16, 0, 32);
    /// Sequence number (`doca_pcc_dev_get_sn`).
    pub const SN: Field = f("get_sn", 20, 0, 32);
    /// Event timestamp, ns (`doca_pcc_dev_get_timestamp`).
    pub const TIMESTAMP: Field = f("get_timestamp", 24, 0, 32);
    /// TX, ACK, NACK, CNP: first coalesced timestamp (`doca_pcc_dev_get_roce_first_timestamp`).
    pub const FIRST_TIMESTAMP: Field = f("get_roce_first_timestamp", 28, 0, 32);
    /// TX: sent 32-byte units (`doca_pcc_dev_get_roce_tx_cntrs().sent_32bytes`): low half.
    pub const TX_SENT_32B: Field = f("get_roce_tx_cntrs.sent_32bytes", 32, 0, 16);
    /// TX: sent packets (`.sent_pkts`): high half.
    pub const TX_SENT_PKTS: Field = f("get_roce_tx_cntrs.sent_pkts", 32, 16, 16);
    /// TX: queue pair number (`doca_pcc_dev_get_flow_qpn`, BlueField-3): low 24 bits.
    pub const TX_QPN: Field = f("get_flow_qpn", 36, 0, 24);
    /// ACK, NACK, CNP: first coalesced sequence number (`doca_pcc_dev_get_roce_ack_first_sn`).
    pub const ACK_FIRST_SN: Field = f("get_roce_ack_first_sn", 32, 0, 32);
    /// ACK, NACK, CNP: number coalesced (`doca_pcc_dev_get_ack_nack_cnp_extra().num_coalesced`):
    /// low 16 bits.
    pub const ACK_NUM_COALESCED: Field = f("get_ack_nack_cnp_extra.num_coalesced", 36, 0, 16);
    /// RTT: request send timestamp (`doca_pcc_dev_get_rtt_req_send_timestamp`).
    pub const RTT_REQ_SEND: Field = f("get_rtt_req_send_timestamp", 28, 0, 32);
    /// RTT: request receive timestamp, responder clock (`doca_pcc_dev_get_rtt_req_recv_timestamp`).
    pub const RTT_REQ_RECV: Field = f("get_rtt_req_recv_timestamp", 32, 0, 32);
    /// RTT: response send timestamp, responder clock (`doca_pcc_dev_get_rtt_resp_send_timestamp`).
    pub const RTT_RESP_SEND: Field = f("get_rtt_resp_send_timestamp", 36, 0, 32);
}

/// Every field, in byte order (ties: the union's readings by type). The tests pin each row with
/// hand-built bytes; docs/pcc.md prints the same table.
pub const LAYOUT: [Field; 16] = [
    field::FLAGS,
    field::PORT,
    field::SUBTYPE,
    field::TYPE,
    field::FLOW_TAG,
    field::SN,
    field::TIMESTAMP,
    field::FIRST_TIMESTAMP,
    field::TX_SENT_PKTS,
    field::TX_SENT_32B,
    field::TX_QPN,
    field::ACK_FIRST_SN,
    field::ACK_NUM_COALESCED,
    field::RTT_REQ_SEND,
    field::RTT_REQ_RECV,
    field::RTT_RESP_SEND,
];

/// The event type codes the SDK defines (`doca_pcc_dev_event_type_enum`).
pub mod type_code {
    /// `DOCA_PCC_DEV_EVNT_NULL`: no event (counted `EV_UNKNOWN`, ignored).
    pub const NULL: u8 = 0;
    /// `DOCA_PCC_DEV_EVNT_FW` (deprecated; counted `EV_UNKNOWN`, ignored).
    pub const FW: u8 = 1;
    /// `DOCA_PCC_DEV_EVNT_ROCE_CNP`.
    pub const CNP: u8 = 2;
    /// `DOCA_PCC_DEV_EVNT_ROCE_TX`.
    pub const TX: u8 = 3;
    /// `DOCA_PCC_DEV_EVNT_ROCE_ACK`.
    pub const ACK: u8 = 4;
    /// `DOCA_PCC_DEV_EVNT_ROCE_NACK`.
    pub const NACK: u8 = 5;
    /// `DOCA_PCC_DEV_EVNT_RTT`.
    pub const RTT: u8 = 6;
    /// `DOCA_PCC_DEV_EVNT_ROCE_TX_FOR_ACK_NACK` (counted `EV_UNKNOWN`, ignored).
    pub const ROCE_TX_FOR_ACK_NACK: u8 = 31;
}

/// NACK subtypes (`doca_pcc_dev_nack_event_sub_type_enum`).
pub mod nack_subtype {
    /// Receiver not ready.
    pub const RNR: u8 = 1;
    /// Out of sequence.
    pub const OOS: u8 = 2;
    /// Duplicate read.
    pub const DUP_READ: u8 = 3;
}

/// TX event flags (`DOCA_PCC_DEV_TX_FLAG_*`, the attribute word's flags byte).
pub mod tx_flag {
    /// An ACK is expected for the packets sent.
    pub const ACK_EXPECTED: u8 = 1 << 0;
    /// The platform is overloaded (not read by the adapter).
    pub const OVERLOADED: u8 = 1 << 1;
    /// The RTT probe requested earlier has left the NIC.
    pub const RTT_REQ_SENT: u8 = 1 << 2;
}

/// The event types the adapter acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum EventType {
    /// A congestion notification packet (2).
    Cnp = type_code::CNP,
    /// Packets sent (3), with coalesced byte and packet counts.
    Tx = type_code::TX,
    /// An acknowledgement (4).
    Ack = type_code::ACK,
    /// A negative acknowledgement (5): RNR, out of sequence or duplicate read (the subtype).
    Nack = type_code::NACK,
    /// An RTT probe response (6).
    Rtt = type_code::RTT,
}

impl EventType {
    /// The type for a code; `None` for the codes the adapter ignores (NULL 0, FW 1,
    /// ROCE_TX_FOR_ACK_NACK 31) and any code the SDK does not define.
    #[must_use]
    pub const fn from_code(code: u8) -> Option<EventType> {
        match code {
            type_code::CNP => Some(EventType::Cnp),
            type_code::TX => Some(EventType::Tx),
            type_code::ACK => Some(EventType::Ack),
            type_code::NACK => Some(EventType::Nack),
            type_code::RTT => Some(EventType::Rtt),
            _ => None,
        }
    }
}

/// One decoded event: the attribute fields and the fixed words in host order, and the union's
/// first three words as delivered (big-endian decoded, reserved bits kept: read them through
/// [`tx`](Self::tx), [`ack`](Self::ack), [`rtt`](Self::rtt) or
/// [`rtt_raw_data`](Self::rtt_raw_data), which take the type's fields). The union's fourth
/// word is reserved for every type and not stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Event {
    /// The type code as delivered (see [`EventType::from_code`]).
    pub type_code: u8,
    /// Subtype (NACK: [`nack_subtype`]).
    pub subtype: u8,
    /// Port number.
    pub port: u8,
    /// Flags byte (TX: [`tx_flag`]).
    pub flags: u8,
    /// Flow tag.
    pub flow_tag: u32,
    /// Sequence number.
    pub sn: u32,
    /// Event timestamp, ns, 32-bit wrapping.
    pub ts_ns: u32,
    /// The union's words at bytes 28, 32, 36, each as its getter's `__builtin_bswap32` gives it.
    pub spec: [u32; 3],
}

/// The TX union.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Tx {
    /// Timestamp of the first coalesced TX, ns.
    pub first_ts_ns: u32,
    /// Sent packets (coalesced, 16 bits).
    pub packets: u16,
    /// Sent bytes in 32-byte units (coalesced, 16 bits).
    pub sent_32b_units: u16,
    /// Queue pair number (24 bits).
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
    /// Number of events coalesced into this one (16 bits).
    pub coalesced: u16,
}

/// The RTT-probe-response union read as timestamps (a response without telemetry).
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

/// Word `i` of the event, big-endian (`get` on a constant index folds away).
#[inline(always)]
fn be_word(words: &[[u8; 4]], i: usize) -> u32 {
    words.get(i).copied().map_or(0, u32::from_be_bytes)
}

/// `f` of an event's word value, as a byte.
#[inline(always)]
#[allow(clippy::cast_possible_truncation)] // 8-bit fields
const fn byte(f: Field, word: u32) -> u8 {
    f.get(word) as u8
}

#[inline(always)]
#[allow(clippy::cast_possible_truncation)] // 16-bit fields
const fn half(f: Field, word: u32) -> u16 {
    f.get(word) as u16
}

impl Event {
    /// Decodes the 44 bytes as delivered: what the SDK's getters return (branch-free; the union
    /// words are kept whole, the accessors take their fields).
    #[inline]
    #[must_use]
    pub fn decode(bytes: &[u8; EVENT_BYTES]) -> Event {
        let (w, _) = bytes.as_chunks::<4>();
        let attr = be_word(w, field::TYPE.word());
        Event {
            type_code: byte(field::TYPE, attr),
            subtype: byte(field::SUBTYPE, attr),
            port: byte(field::PORT, attr),
            flags: byte(field::FLAGS, attr),
            flow_tag: be_word(w, field::FLOW_TAG.word()),
            sn: be_word(w, field::SN.word()),
            ts_ns: be_word(w, field::TIMESTAMP.word()),
            spec: [
                be_word(w, field::FIRST_TIMESTAMP.word()),
                be_word(w, field::TX_SENT_32B.word()),
                be_word(w, field::TX_QPN.word()),
            ],
        }
    }

    /// Encodes the event into the platform's 44 bytes (reserved words 0): the inverse of
    /// [`decode`](Self::decode), for tests, replays and a host that builds event streams.
    #[must_use]
    pub fn encode(&self) -> [u8; EVENT_BYTES] {
        let attr = field::TYPE.put(0, u32::from(self.type_code));
        let attr = field::SUBTYPE.put(attr, u32::from(self.subtype));
        let attr = field::PORT.put(attr, u32::from(self.port));
        let attr = field::FLAGS.put(attr, u32::from(self.flags));
        let [s0, s1, s2] = self.spec;
        let words = [
            0,
            0,
            0,
            attr,
            self.flow_tag,
            self.sn,
            self.ts_ns,
            s0,
            s1,
            s2,
            0,
        ];
        let mut out = [0u8; EVENT_BYTES];
        let (chunks, _) = out.as_chunks_mut::<4>();
        for (c, v) in chunks.iter_mut().zip(words) {
            *c = v.to_be_bytes();
        }
        out
    }

    /// The union words of a TX event (reserved bits 0).
    #[must_use]
    pub const fn tx_spec(t: &Tx) -> [u32; 3] {
        [
            field::FIRST_TIMESTAMP.put(0, t.first_ts_ns),
            field::TX_SENT_PKTS.put(
                field::TX_SENT_32B.put(0, t.sent_32b_units as u32),
                t.packets as u32,
            ),
            field::TX_QPN.put(0, t.qpn),
        ]
    }

    /// The union words of an ACK, NACK or CNP event (reserved bits 0).
    #[must_use]
    pub const fn ack_spec(a: &Ack) -> [u32; 3] {
        [
            field::FIRST_TIMESTAMP.put(0, a.first_ts_ns),
            field::ACK_FIRST_SN.put(0, a.first_sn),
            field::ACK_NUM_COALESCED.put(0, a.coalesced as u32),
        ]
    }

    /// The union words of an RTT response carrying timestamps.
    #[must_use]
    pub const fn rtt_spec(r: &Rtt) -> [u32; 3] {
        [r.req_send_ts_ns, r.req_recv_ts_ns, r.resp_send_ts_ns]
    }

    /// The union words of an RTT response carrying 12 bytes of raw data (switch telemetry):
    /// the bytes as delivered, read as the three big-endian words they overlay.
    #[must_use]
    pub const fn raw_data_spec(raw: &[u8; TELEMETRY_BYTES]) -> [u32; 3] {
        let [a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3] = *raw;
        [
            u32::from_be_bytes([a0, a1, a2, a3]),
            u32::from_be_bytes([b0, b1, b2, b3]),
            u32::from_be_bytes([c0, c1, c2, c3]),
        ]
    }

    /// The documented type, `None` for a code the adapter ignores.
    #[must_use]
    pub const fn event_type(&self) -> Option<EventType> {
        EventType::from_code(self.type_code)
    }

    /// The union read as TX.
    #[must_use]
    pub const fn tx(&self) -> Tx {
        let [s0, s1, s2] = self.spec;
        Tx {
            first_ts_ns: field::FIRST_TIMESTAMP.get(s0),
            packets: half(field::TX_SENT_PKTS, s1),
            sent_32b_units: half(field::TX_SENT_32B, s1),
            qpn: field::TX_QPN.get(s2),
        }
    }

    /// The union read as ACK, NACK or CNP.
    #[must_use]
    pub const fn ack(&self) -> Ack {
        let [s0, s1, s2] = self.spec;
        Ack {
            first_ts_ns: field::FIRST_TIMESTAMP.get(s0),
            first_sn: field::ACK_FIRST_SN.get(s1),
            coalesced: half(field::ACK_NUM_COALESCED, s2),
        }
    }

    /// The union read as an RTT probe response's timestamps.
    #[must_use]
    pub const fn rtt(&self) -> Rtt {
        let [s0, s1, s2] = self.spec;
        Rtt {
            req_send_ts_ns: field::RTT_REQ_SEND.get(s0),
            req_recv_ts_ns: field::RTT_REQ_RECV.get(s1),
            resp_send_ts_ns: field::RTT_RESP_SEND.get(s2),
        }
    }

    /// The RTT response's 12 bytes of raw data as `doca_pcc_dev_get_rtt_raw_data` returns them:
    /// bytes 28..40 as delivered (the same bytes as the three timestamps).
    #[must_use]
    pub const fn rtt_raw_data(&self) -> [u8; TELEMETRY_BYTES] {
        let [s0, s1, s2] = self.spec;
        let ([a0, a1, a2, a3], [b0, b1, b2, b3], [c0, c1, c2, c3]) =
            (s0.to_be_bytes(), s1.to_be_bytes(), s2.to_be_bytes());
        [a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3]
    }
}

/// One hop's switch telemetry, decoded (the layout NVIDIA's switch-telemetry responder writes:
/// `np_switch_telemetry_dev_main.c`, `struct int_response`, its multi-byte fields byte-swapped to
/// big-endian before they go on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Telemetry {
    /// Queue length in 256-byte cells.
    pub qlen_256b_cells: u16,
    /// Switch index (byte 2).
    pub index: u8,
    /// Byte 3: port type and valid bits, as delivered (not interpreted).
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
            tx_bytes: be_word(w, 1),
            tx_ts_ns: be_word(w, 2),
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
