//! RoCEv2 captures (pcap and pcapng): reading them into per-flow ACK streams, and a small writer
//! for the shipped fixture captures and `sim --record`.
//!
//! # Assumptions (also in docs/hpcc.md)
//! * Ethernet frames (link type 1, up to two VLAN tags) carrying IPv4 or IPv6, UDP destination
//!   port 4791 (RoCEv2). Another link type is refused by name (`197 (ERF …)`, with the first
//!   record's ERF type: native InfiniBand); every frame that is not RoCEv2 is counted by reason
//!   (RoCEv1, TCP, another UDP port, behind a third VLAN tag, …: [`NotRoce`]).
//! * HPCC's INT block sits right after the UDP header and before the 12-byte InfiniBand BTH
//!   (HPCC §4.1, Figure 7); its length `2 + 8·nhop` comes from its first nibble (data packets
//!   leaving the sender carry `nhop = 0`). A payload is read so ([`Frame::Int`]) only where the
//!   BTH after the block says one can be there: an RC ACK (opcode `0x11`) with nothing after its
//!   BTH but an optional AETH and the ICRC (by the UDP length), or an RC packet after a block of
//!   no hop. Anything else is RoCEv2 as NICs write it without INT, the BTH first
//!   ([`Frame::Plain`]): counted by opcode, never replayed, so that a UC, UD or DC payload byte
//!   of 0x11 does not make an ACK ([`classify_frame`]).
//! * A packet of the INT layout is an **ACK** when its BTH opcode is `0x11` (RC Acknowledge);
//!   every other opcode is data.
//! * The BTH carries the **destination** QP only, and the two ends of a connection have their own
//!   QP numbers: data from A to B carry B's QPN, the ACKs from B to A carry A's. Packets are first
//!   grouped into one-way **streams** (source IP, destination IP, destination QPN, data or ACK);
//!   a **flow** is an ACK stream B→A paired with the data stream A→B it acknowledges
//!   ([`pair_streams`]): the only data stream of that host pair when there is one ACK stream and
//!   one data stream, otherwise the one with the same UDP source port (Linux derives both
//!   directions' port from the QPN pair). Data in both directions of one QP pair are two flows.
//! * `ack_seq` is the ACK's BTH PSN and `snd_nxt` the largest PSN sent on the paired data stream
//!   so far in the capture, both extended from 24 to 32 bits per flow by counting the wraps of the
//!   PSN ([`PsnExtender`]): a long capture crosses the 2^24 PSN wrap without freezing Wc, and the
//!   replay compares the 32-bit values in serial-number order as it does for traces.
//! * `t_ns` is the capture timestamp (pcap in µs or ns, or pcapng with its `if_tsresol`, base 10
//!   or base 2, plus `if_tsoffset` seconds).
//! * Records of any size up to [`MAX_RECORD_BYTES`] are read; a capture whose last record is cut
//!   (tcpdump killed) is replayed up to the cut, with a warning in the summary. A length field
//!   that contradicts the record's own fields is an error naming the packet.
//! * Packets that are not RoCEv2 (by reason), RoCEv2 without INT (by opcode), too short for a
//!   BTH, with no valid BTH, without a timestamp (pcapng Simple Packet Blocks) or data of a
//!   stream no ACK stream pairs with are counted and reported ([`Ignored`]). A capture with
//!   nothing to compare (no RoCEv2 packet, no ACK carrying INT, no data) is one result that says
//!   why and what it holds ([`Ignored::seen`]), without a verdict.
//!
//! The reader parses the file itself (no copy of a frame, no allocation per packet). A replay
//! reads the capture once, pairing each ACK stream when it appears, and a second time only when
//! the pairing of the whole capture differs from that or `--out`/`--plot` need the flows named
//! first (`cc_replay::hpcc::capture`).
//!
//! By concern: this module classifies frames and counts what is ignored; [`read`] walks pcap
//! and pcapng files; [`pair`] groups packets into one-way streams and pairs ACK streams with
//! data streams; [`psn`] extends PSNs; [`write`](mod@write) builds frames and writes captures (the shipped
//! fixtures and `sim --record`).

pub mod pair;
pub mod psn;
pub mod read;
pub mod write;

pub use pair::{Pairing, StreamInfo, Streams, pair_now, pair_streams};
pub use psn::PsnExtender;
pub use read::{capture_params, read_capture};
pub use write::{
    CaptureFlow, frames_of, roce_frame, roce_frame_from, write_pcap, write_pcapng,
    write_pcapng_with,
};

use crate::InputError;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// RoCEv2 UDP destination port.
pub const ROCEV2_PORT: u16 = 4791;
/// BTH opcode of an RC Acknowledge.
pub const OPCODE_RC_ACK: u8 = 0x11;
/// BTH opcode used for data by the writer (RC RDMA WRITE Only).
pub const OPCODE_RC_WRITE_ONLY: u8 = 0x0A;
const BTH_BYTES: usize = 12;

/// One RoCEv2 packet as the reader sees it; `int` borrows the reader's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RocePacket<'a> {
    /// Capture time, ns.
    pub t_ns: u64,
    /// IP source address.
    pub src: IpAddr,
    /// IP destination address.
    pub dst: IpAddr,
    /// UDP source port.
    pub sport: u16,
    /// BTH destination QP (24 bits): the receiving end's QPN.
    pub qp: u32,
    /// BTH opcode.
    pub opcode: u8,
    /// BTH PSN (24 bits).
    pub psn: u32,
    /// The INT block (exactly `2 + 8·nhop` bytes).
    pub int: &'a [u8],
}

impl RocePacket<'_> {
    /// Whether this is an RC Acknowledge.
    pub fn is_ack(&self) -> bool {
        self.opcode == OPCODE_RC_ACK
    }

    /// The one-way stream this packet belongs to.
    pub fn stream(&self) -> StreamKey {
        StreamKey {
            src: self.src,
            dst: self.dst,
            qp: self.qp,
            ack: self.is_ack(),
        }
    }
}

/// A one-way stream: source and destination IP, the destination QPN the packets carry, and
/// whether they are ACKs or data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamKey {
    /// IP source address.
    pub src: IpAddr,
    /// IP destination address.
    pub dst: IpAddr,
    /// BTH destination QP.
    pub qp: u32,
    /// ACKs (`true`) or data.
    pub ack: bool,
}

/// What a capture holds, by kind of frame, and where a cut capture ends: the packets not
/// replayed are counted here, by reason, so that a report can say what was seen.
#[derive(Debug, Default, Clone)]
pub struct Ignored {
    /// Packet records read (every packet block or record, whatever it holds).
    pub packets: u64,
    /// Not Ethernet/IP/UDP 4791 (the sum of [`not_roce_by`](Self::not_roce_by)).
    pub not_roce: u64,
    /// Frames that are not RoCEv2, by reason.
    pub not_roce_by: BTreeMap<NotRoce, u64>,
    /// RoCEv2 but cut before a whole BTH.
    pub truncated: u64,
    /// RoCEv2 whose bytes after UDP are a BTH in neither layout.
    pub bad_bth: u64,
    /// RoCEv2 packets by BTH opcode: `[all, with an INT block]` (256 entries once a packet was
    /// read).
    pub opcodes: Vec<[u64; 2]>,
    /// pcapng Simple Packet Blocks: no timestamp, so no place in time.
    pub no_timestamp: u64,
    /// The capture ends inside a record (e.g. tcpdump was killed): the packets before it were
    /// replayed; this says where it was cut.
    pub cut: Option<String>,
}

impl Ignored {
    /// Counts one frame, handing a packet in the HPCC layout to `f`.
    fn frame(
        &mut self,
        frame: Frame<'_>,
        f: &mut impl FnMut(RocePacket<'_>) -> Result<(), InputError>,
    ) -> Result<(), InputError> {
        if self.opcodes.is_empty() {
            self.opcodes = vec![[0; 2]; 256];
        }
        match frame {
            Frame::Int(p) => {
                self.opcodes[usize::from(p.opcode)][0] += 1;
                self.opcodes[usize::from(p.opcode)][1] += 1;
                return f(p);
            }
            Frame::Plain { opcode } => self.opcodes[usize::from(opcode)][0] += 1,
            Frame::Truncated => self.truncated += 1,
            Frame::BadBth => self.bad_bth += 1,
            Frame::NotRoce(why) => self.not_roce_because(why),
        }
        Ok(())
    }

    fn not_roce_because(&mut self, why: NotRoce) {
        self.not_roce += 1;
        *self.not_roce_by.entry(why).or_default() += 1;
    }

    /// RoCEv2 packets read (whole BTH, either layout).
    pub fn roce(&self) -> u64 {
        self.opcodes.iter().map(|c| c[0]).sum()
    }

    /// RoCEv2 packets of `opcode`: `(all, with an INT block)`.
    pub fn opcode(&self, opcode: u8) -> (u64, u64) {
        self.opcodes
            .get(usize::from(opcode))
            .map_or((0, 0), |c| (c[0], c[1]))
    }

    /// The RoCEv2 packets by opcode, in opcode order: `RC SEND first 120, …, RC ACK 175 (0
    /// with INT)` (an RC ACK always says how many carry INT; another opcode only when some do).
    pub fn opcodes_line(&self) -> String {
        let v: Vec<String> = (0..=255u8)
            .filter_map(|op| {
                let (all, int) = self.opcode(op);
                (all > 0).then(|| {
                    if op == OPCODE_RC_ACK || int > 0 {
                        format!("{} {all} ({int} with INT)", opcode_name(op))
                    } else {
                        format!("{} {all}", opcode_name(op))
                    }
                })
            })
            .collect();
        if v.is_empty() {
            "none".into()
        } else {
            v.join(", ")
        }
    }

    /// What the capture holds: `708 frames: 708 RoCEv2 (RC SEND first 120, …); 0 not RoCEv2`,
    /// the frames that are not RoCEv2 by reason, the cut and malformed ones.
    pub fn seen(&self) -> String {
        let mut t = format!("{} frames: {} RoCEv2", self.packets, self.roce());
        if self.roce() > 0 {
            t.push_str(&format!(" ({})", self.opcodes_line()));
        }
        if self.truncated > 0 {
            t.push_str(&format!(
                ", {} RoCEv2 cut before a whole BTH",
                self.truncated
            ));
        }
        if self.bad_bth > 0 {
            t.push_str(&format!(
                ", {} RoCEv2 with no valid BTH (reserved bits set)",
                self.bad_bth
            ));
        }
        if self.no_timestamp > 0 {
            t.push_str(&format!(
                ", {} without a timestamp (pcapng Simple Packet Blocks)",
                self.no_timestamp
            ));
        }
        t.push_str(&format!("; {} not RoCEv2", self.not_roce));
        if !self.not_roce_by.is_empty() {
            let by: Vec<String> = self
                .not_roce_by
                .iter()
                .map(|(why, n)| format!("{n} {why}"))
                .collect();
            t.push_str(&format!(" ({})", by.join(", ")));
        }
        t
    }
}

/// The largest record the reader accepts (a jumbo frame is 9 KiB; pcapng blocks of many MiB
/// are legal but absurd for RoCE).
pub const MAX_RECORD_BYTES: usize = 64 << 20;

/// Ticks per second of a pcapng `if_tsresol` (bit 7 clear: 10^v, set: 2^(v & 0x7f));
/// `None` if it does not fit a u64.
pub fn tsresol_ticks(v: u8) -> Option<u64> {
    if v & 0x80 == 0 {
        10u64.checked_pow(u32::from(v))
    } else {
        1u64.checked_shl(u32::from(v & 0x7f))
    }
}

fn be16(b: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(i..i + 2)?.try_into().ok()?))
}

/// Why a frame is not a RoCEv2 packet, as the capture's report counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NotRoce {
    /// Cut before the end of its Ethernet, VLAN, IP or UDP header.
    CutHeaders,
    /// Behind more than two VLAN tags (the reader reads up to two, 802.1Q and 802.1ad).
    TooManyVlanTags,
    /// RoCEv1: EtherType 0x8915, the InfiniBand GRH right after Ethernet (no IP, no UDP).
    RoceV1,
    /// An 802.3 frame whose type field is a length (LLC: STP, …).
    Llc,
    /// Another EtherType (ARP, LLDP, …).
    EtherType(u16),
    /// IPv4 or IPv6 carrying another protocol than UDP (TCP, ICMP, …).
    IpProtocol(u8),
    /// A fragment of an IPv4 datagram after the first (no UDP header of its own).
    IpFragment,
    /// UDP to another destination port than 4791.
    UdpPort,
    /// On a pcapng interface whose link type is not Ethernet.
    Interface(u32),
}

impl std::fmt::Display for NotRoce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotRoce::CutHeaders => f.write_str("cut inside their Ethernet/IP/UDP headers"),
            NotRoce::TooManyVlanTags => {
                f.write_str("behind more than two VLAN tags (up to two are read)")
            }
            NotRoce::RoceV1 => f.write_str("RoCEv1 (EtherType 0x8915: no IP/UDP, not read)"),
            NotRoce::Llc => f.write_str("802.3/LLC"),
            NotRoce::EtherType(t) => match ethertype_name(*t) {
                Some(n) => write!(f, "{n} (EtherType 0x{t:04x})"),
                None => write!(f, "EtherType 0x{t:04x}"),
            },
            NotRoce::IpProtocol(p) => match ip_protocol_name(*p) {
                Some(n) => write!(f, "{n} over IP"),
                None => write!(f, "IP protocol {p}"),
            },
            NotRoce::IpFragment => f.write_str("IPv4 fragments after the first"),
            NotRoce::UdpPort => f.write_str("UDP to another port than 4791"),
            NotRoce::Interface(l) => write!(f, "on a non-Ethernet interface ({})", link_name(*l)),
        }
    }
}

fn ethertype_name(t: u16) -> Option<&'static str> {
    Some(match t {
        0x0806 => "ARP",
        0x8035 => "RARP",
        0x8808 => "Ethernet flow control (PAUSE, PFC)",
        0x8809 => "slow protocols (LACP)",
        0x888E => "EAPOL",
        0x88CC => "LLDP",
        0x88F7 => "PTP",
        0x8906 => "FCoE",
        0x9100 => "a VLAN tag of the old 0x9100 kind",
        _ => return None,
    })
}

fn ip_protocol_name(p: u8) -> Option<&'static str> {
    Some(match p {
        1 => "ICMP",
        2 => "IGMP",
        6 => "TCP",
        47 => "GRE",
        50 => "ESP",
        58 => "ICMPv6",
        132 => "SCTP",
        _ => return None,
    })
}

/// A pcap/pcapng link type with its name (`197 (ERF)`), for messages.
pub fn link_name(link: u32) -> String {
    let name = match link {
        0 => "BSD loopback",
        1 => "Ethernet",
        101 => "raw IP",
        105 => "IEEE 802.11",
        113 => "Linux cooked capture",
        127 => "IEEE 802.11 radiotap",
        197 => "ERF, Endace's Extensible Record Format",
        228 => "raw IPv4",
        229 => "raw IPv6",
        247 => "InfiniBand",
        276 => "Linux cooked capture v2",
        _ => return link.to_string(),
    };
    format!("{link} ({name})")
}

/// The name of a BTH opcode, transport first (`RC ACK`, `UC SEND first`, `UD SEND only`):
/// the transport is the top three bits (IBTA: RC, UC, RD, UD, CNP, XRC; 0xC0–0xFF are
/// manufacturer-specific), the operation the low five.
pub fn opcode_name(op: u8) -> String {
    let transport = match op >> 5 {
        0 => "RC",
        1 => "UC",
        2 => "RD",
        3 => "UD",
        4 if op == 0x80 => return "CNP".into(),
        4 => return format!("reserved opcode 0x{op:02x}"),
        5 => "XRC",
        _ => return format!("manufacturer-specific opcode 0x{op:02x}"),
    };
    let what = match op & 0x1F {
        0x00 => "SEND first",
        0x01 => "SEND middle",
        0x02 => "SEND last",
        0x03 => "SEND last with immediate",
        0x04 => "SEND only",
        0x05 => "SEND only with immediate",
        0x06 => "RDMA WRITE first",
        0x07 => "RDMA WRITE middle",
        0x08 => "RDMA WRITE last",
        0x09 => "RDMA WRITE last with immediate",
        0x0A => "RDMA WRITE only",
        0x0B => "RDMA WRITE only with immediate",
        0x0C => "RDMA READ request",
        0x0D => "RDMA READ response first",
        0x0E => "RDMA READ response middle",
        0x0F => "RDMA READ response last",
        0x10 => "RDMA READ response only",
        0x11 => "ACK",
        0x12 => "ATOMIC ACK",
        0x13 => "CmpSwap",
        0x14 => "FetchAdd",
        0x15 => "RESYNC",
        0x16 => "SEND last with invalidate",
        0x17 => "SEND only with invalidate",
        0x18 => "FLUSH",
        0x19 => "ATOMIC WRITE",
        _ => return format!("{transport} reserved opcode 0x{op:02x}"),
    };
    format!("{transport} {what}")
}

/// What one Ethernet frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A RoCEv2 packet in the HPCC layout (docs/hpcc.md § 7): the INT block right after the UDP
    /// header, then the BTH. Read so only where the BTH found after the block says it can be
    /// one: an RC ACK (opcode 0x11) carrying nothing but an optional AETH after its BTH, or an
    /// RC packet whose block has no hop (`nhop = 0`, a data packet leaving its sender).
    Int(RocePacket<'a>),
    /// A RoCEv2 packet as NICs write it without INT: the BTH right after the UDP header.
    Plain {
        /// Its BTH opcode.
        opcode: u8,
    },
    /// RoCEv2 (UDP 4791), cut by the snapshot length before a whole BTH.
    Truncated,
    /// RoCEv2 whose bytes after the UDP header hold a BTH in neither layout (its reserved bits
    /// or transport version are not zero).
    BadBth,
    /// Not RoCEv2, and why.
    NotRoce(NotRoce),
}

/// Whether 12 bytes read as a BTH: transport header version 0, the reserved bits after the
/// P_Key (all but FECN/BECN) and after the AckReq bit zero.
fn bth_ok(b: &[u8]) -> bool {
    b.len() >= BTH_BYTES && b[1] & 0x0F == 0 && b[4] & 0x3F == 0 && b[8] & 0x7F == 0
}

/// Classifies one Ethernet frame (captured bytes `data`, which the snapshot length may have
/// cut). Up to two VLAN tags (802.1Q, 802.1ad) are read; IPv6 extension headers (hop-by-hop,
/// routing, destination options) are followed.
///
/// A UDP 4791 payload is read in the HPCC layout (INT block, then BTH) only where the BTH after
/// the block says an INT block can be there: an RC ACK (opcode 0x11) whose UDP length leaves
/// room for nothing after its BTH but an AETH (4 bytes) and the ICRC, or an RC packet after a
/// block of no hop (`nhop = 0`). Otherwise the payload is read as RoCEv2 is written without
/// INT, the BTH first: a UC, UD or DC packet whose payload happens to hold 0x11 where an HPCC
/// BTH would be is not an ACK.
pub fn classify_frame(t_ns: u64, data: &[u8]) -> Frame<'_> {
    let cut = Frame::NotRoce(NotRoce::CutHeaders);
    let Some(mut ethertype) = be16(data, 12) else {
        return cut;
    };
    let mut l3 = 14;
    // Up to two VLAN tags (802.1Q, 802.1ad).
    for _ in 0..2 {
        if ethertype == 0x8100 || ethertype == 0x88A8 {
            let Some(t) = be16(data, l3 + 2) else {
                return cut;
            };
            ethertype = t;
            l3 += 4;
        }
    }
    let (src, dst, l4) = match ethertype {
        0x0800 => {
            let Some(ip) = data.get(l3..l3 + 20) else {
                return cut;
            };
            let ihl = usize::from(ip[0] & 0x0F) * 4;
            let frag_offset = u16::from_be_bytes([ip[6], ip[7]]) & 0x1FFF;
            if ip[0] >> 4 != 4 || ihl < 20 {
                return Frame::NotRoce(NotRoce::EtherType(ethertype));
            }
            if ip[9] != 17 {
                return Frame::NotRoce(NotRoce::IpProtocol(ip[9]));
            }
            if frag_offset != 0 {
                return Frame::NotRoce(NotRoce::IpFragment);
            }
            let s: [u8; 4] = [ip[12], ip[13], ip[14], ip[15]];
            let d: [u8; 4] = [ip[16], ip[17], ip[18], ip[19]];
            (
                IpAddr::V4(Ipv4Addr::from(s)),
                IpAddr::V4(Ipv4Addr::from(d)),
                l3 + ihl,
            )
        }
        0x86DD => {
            let Some(ip) = data.get(l3..l3 + 40) else {
                return cut;
            };
            if ip[0] >> 4 != 6 {
                return Frame::NotRoce(NotRoce::EtherType(ethertype));
            }
            let mut next = ip[6];
            let mut at = l3 + 40;
            // Hop-by-hop, routing and destination options headers; a fragment is not followed.
            while matches!(next, 0 | 43 | 60) {
                let Some(h) = data.get(at..at + 2) else {
                    return cut;
                };
                next = h[0];
                at += (usize::from(h[1]) + 1) * 8;
            }
            if next != 17 {
                return Frame::NotRoce(NotRoce::IpProtocol(next));
            }
            let (Ok(s), Ok(d)) = (
                <[u8; 16]>::try_from(&ip[8..24]),
                <[u8; 16]>::try_from(&ip[24..40]),
            ) else {
                return cut;
            };
            (
                IpAddr::V6(Ipv6Addr::from(s)),
                IpAddr::V6(Ipv6Addr::from(d)),
                at,
            )
        }
        0x8100 | 0x88A8 => return Frame::NotRoce(NotRoce::TooManyVlanTags),
        0x8915 => return Frame::NotRoce(NotRoce::RoceV1),
        t if t < 0x0600 => return Frame::NotRoce(NotRoce::Llc),
        t => return Frame::NotRoce(NotRoce::EtherType(t)),
    };
    let (Some(sport), Some(dport), Some(udp_len)) =
        (be16(data, l4), be16(data, l4 + 2), be16(data, l4 + 4))
    else {
        return cut;
    };
    if dport != ROCEV2_PORT {
        return Frame::NotRoce(NotRoce::UdpPort);
    }
    // The payload as captured, and its length on the wire (by the UDP length field).
    let p = data.get(l4 + 8..).unwrap_or_default();
    let wire = usize::from(udp_len).saturating_sub(8);
    let Some(&first) = p.first() else {
        return Frame::Truncated;
    };
    let nhop = usize::from(first >> 4);
    let int_len = 2 + 8 * nhop;
    let hpcc_bth = p.get(int_len..int_len + BTH_BYTES);
    if let Some(bth) = hpcc_bth.filter(|b| bth_ok(b)) {
        let opcode = bth[0];
        // After an ACK's BTH: an AETH (4 bytes) or nothing, then the 4-byte ICRC.
        let after = wire.checked_sub(int_len + BTH_BYTES);
        let ack = opcode == OPCODE_RC_ACK && matches!(after, Some(4 | 8));
        let data_leaving = nhop == 0 && opcode >> 5 == 0 && opcode != OPCODE_RC_ACK;
        if ack || data_leaving {
            return Frame::Int(RocePacket {
                t_ns,
                src,
                dst,
                sport,
                qp: u32::from_be_bytes([0, bth[5], bth[6], bth[7]]),
                opcode,
                psn: u32::from_be_bytes([0, bth[9], bth[10], bth[11]]),
                int: &p[..int_len],
            });
        }
    }
    if let Some(bth) = p.get(..BTH_BYTES).filter(|b| bth_ok(b)) {
        return Frame::Plain { opcode: bth[0] };
    }
    if p.len() < BTH_BYTES || (hpcc_bth.is_none() && int_len + BTH_BYTES <= wire) {
        Frame::Truncated
    } else {
        Frame::BadBth
    }
}

/// Parses one Ethernet frame: `Ok(Some)` for a RoCEv2 packet in the HPCC layout
/// ([`classify_frame`], [`Frame::Int`]), `Err(())` when it is RoCEv2 but cut before a whole
/// BTH, `Ok(None)` otherwise (not RoCEv2, RoCEv2 without INT, a malformed BTH). Frames cut by
/// the capture's snap length still yield their headers.
#[allow(clippy::result_unit_err)] // the only failure is "truncated", counted by the caller
pub fn parse_frame(t_ns: u64, data: &[u8]) -> Result<Option<RocePacket<'_>>, ()> {
    match classify_frame(t_ns, data) {
        Frame::Int(p) => Ok(Some(p)),
        Frame::Truncated => Err(()),
        _ => Ok(None),
    }
}
