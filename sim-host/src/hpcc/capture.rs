//! RoCEv2 captures (pcap and pcapng): reading them into per-flow ACK streams, and a small writer
//! for the shipped fixture captures and `sim --record`.
//!
//! # Assumptions (also in docs/hpcc.md)
//! * Ethernet frames (link type 1, up to two VLAN tags) carrying IPv4 or IPv6, UDP destination
//!   port 4791 (RoCEv2). Another link type is refused by name (`197 (ERF …)`, with the first
//!   record's ERF type: native InfiniBand); every frame that is not RoCEv2 is counted by reason
//!   (RoCEv1, TCP, another UDP port, behind a third VLAN tag, …: [`NotRoce`]).
//! * HPCC's INT block sits right after the UDP header and before the 12-byte InfiniBand BTH
//!   (paper §4.1, Figure 7); its length `2 + 8·nhop` comes from its first nibble (data packets
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
//! first ([`replay_capture`]).

use super::{Flow, Setup};
use crate::opts::ReplayOpts;
use crate::summary::{Agreement, Summary};
use crate::trace::{InputError, Param, comment_param, merged_params, param_unset};
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};

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

    /// The RoCEv2 packets by opcode as JSON (`"0x11 RC ACK": 175`) and those with INT.
    fn opcodes_json(&self, with_int: bool) -> serde_json::Value {
        serde_json::Value::Object(
            (0..=255u8)
                .filter_map(|op| {
                    let (all, int) = self.opcode(op);
                    let n = if with_int { int } else { all };
                    let show = if with_int {
                        all > 0 && (int > 0 || op == OPCODE_RC_ACK)
                    } else {
                        all > 0
                    };
                    show.then(|| (format!("0x{op:02x} {}", opcode_name(op)), n.into()))
                })
                .collect(),
        )
    }

    /// The frames that are not RoCEv2, by reason, as JSON.
    fn not_roce_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.not_roce_by
                .iter()
                .map(|(why, n)| (why.to_string(), (*n).into()))
                .collect(),
        )
    }

    /// The details every summary of the capture carries: what it holds.
    fn details(&self, s: &mut Summary) {
        s.detail("capture frames", self.packets);
        s.detail("RoCEv2 packets", self.opcodes_json(false));
        s.detail("with INT", self.opcodes_json(true));
        s.detail("not RoCEv2", self.not_roce_json());
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
    /// A RoCEv2 packet in the HPCC layout (docs/hpcc.md §7): the INT block right after the UDP
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

fn not_ethernet(path: &Path, link: u32, first_record: &str) -> InputError {
    let ib = if matches!(link, 197 | 247) {
        "; native InfiniBand has no RoCEv2 (RoCE is InfiniBand's transport over Ethernet)"
    } else {
        ""
    };
    InputError::file(
        path,
        format!(
            "link type {} is not Ethernet{first_record}: only Ethernet captures of RoCEv2 (UDP \
             port 4791) are read{ib}",
            link_name(link)
        ),
    )
}

/// What the first record of an ERF capture holds (` (its first record is ERF type 21:
/// InfiniBand)`), from its ERF header's type byte; empty when it cannot be told.
fn erf_first_record(link: u32, rec: Option<&[u8]>) -> String {
    let Some(&ty) = rec.filter(|_| link == 197).and_then(|r| r.get(8)) else {
        return String::new();
    };
    let ty = ty & 0x7F;
    let name = match ty {
        1 => "HDLC/POS",
        2 => "Ethernet",
        3 => "ATM",
        16 => "Ethernet (coloured)",
        21 => "InfiniBand",
        25 => "InfiniBand link",
        _ => return format!(" (its first record is ERF type {ty})"),
    };
    format!(" (its first record is ERF type {ty}: {name})")
}

/// The file, read in large chunks into one buffer that grows only for a record larger than it.
struct Input {
    file: File,
    buf: Vec<u8>,
    lo: usize,
    hi: usize,
    eof: bool,
}

impl Input {
    fn new(file: File) -> Input {
        Input {
            file,
            buf: vec![0; 1 << 20],
            lo: 0,
            hi: 0,
            eof: false,
        }
    }

    /// The next `n` bytes, or fewer when the file ends first.
    fn peek(&mut self, n: usize) -> std::io::Result<&[u8]> {
        if self.hi - self.lo < n && !self.eof {
            self.buf.copy_within(self.lo..self.hi, 0);
            self.hi -= self.lo;
            self.lo = 0;
            if n > self.buf.len() {
                self.buf.resize(n, 0);
            }
            while self.hi < n {
                let k = self.file.read(&mut self.buf[self.hi..])?;
                if k == 0 {
                    self.eof = true;
                    break;
                }
                self.hi += k;
            }
        }
        let end = self.hi.min(self.lo + n);
        Ok(&self.buf[self.lo..end])
    }

    fn consume(&mut self, n: usize) {
        self.lo = (self.lo + n).min(self.hi);
    }
}

/// A 32-bit field of a pcap record or pcapng block in the file's byte order.
fn u32_at(b: &[u8], i: usize, be: bool) -> u32 {
    let w: [u8; 4] = match b.get(i..i + 4) {
        Some(s) => [s[0], s[1], s[2], s[3]],
        None => [0; 4],
    };
    if be {
        u32::from_be_bytes(w)
    } else {
        u32::from_le_bytes(w)
    }
}

fn u16_at(b: &[u8], i: usize, be: bool) -> u16 {
    let w: [u8; 2] = match b.get(i..i + 2) {
        Some(s) => [s[0], s[1]],
        None => [0; 2],
    };
    if be {
        u16::from_be_bytes(w)
    } else {
        u16::from_le_bytes(w)
    }
}

fn pad4(n: usize) -> usize {
    n.div_ceil(4) * 4
}

fn block_name(ty: u32) -> String {
    match ty {
        0x0A0D_0D0A => "Section Header Block".into(),
        1 => "Interface Description Block".into(),
        2 => "Packet Block".into(),
        3 => "Simple Packet Block".into(),
        5 => "Interface Statistics Block".into(),
        6 => "Enhanced Packet Block".into(),
        0x8000_0001 => "Process Information Block".into(),
        _ => format!("block of type 0x{ty:08x}"),
    }
}

/// Where a pcapng packet block ends according to its own fields (captured length, then the
/// options up to `opt_endofopt` and the trailing length that must equal the total), when the
/// bytes `b` hold all of it: used to tell a corrupt length field from a capture cut short.
fn natural_block_len(ty: u32, b: &[u8], be: bool) -> Option<usize> {
    // A Simple Packet Block holds min(original length, snapshot length) bytes and no captured
    // length: only its trailing length can be checked.
    if !matches!(ty, 2 | 6) {
        return None;
    }
    let mut o = 28 + pad4(u32_at(b, 20, be) as usize);
    for _ in 0..64 {
        if o + 4 > b.len() {
            return None;
        }
        if u32_at(b, o, be) as usize == o + 4 {
            return Some(o + 4);
        }
        let (code, len) = (u16_at(b, o, be), usize::from(u16_at(b, o + 2, be)));
        o += 4 + if code == 0 { 0 } else { pad4(len) };
        if code == 0 {
            return (o + 4 <= b.len() && u32_at(b, o, be) as usize == o + 4).then_some(o + 4);
        }
    }
    None
}

/// One pcapng interface: Ethernet or not, link type, ticks per second, `if_tsoffset` (s).
#[derive(Clone, Copy)]
struct Iface {
    eth: bool,
    link: u32,
    ticks: u64,
    offset_s: i64,
}

impl Iface {
    fn ns(&self, ticks: u64) -> u64 {
        let t: i128 = match self.ticks {
            1_000_000_000 => i128::from(ticks),
            1_000_000 => i128::from(ticks) * 1000,
            r => (u128::from(ticks) * 1_000_000_000 / u128::from(r.max(1))) as i128,
        } + i128::from(self.offset_s) * 1_000_000_000;
        t.clamp(0, i128::from(u64::MAX)) as u64
    }
}

/// Walks a pcapng block's options (up to `opt_endofopt` or the end), calling `f` with each
/// option's code and value.
fn walk_options(
    opts: &[u8],
    be: bool,
    mut f: impl FnMut(u16, &[u8]) -> Result<(), String>,
) -> Result<(), String> {
    let mut o = 0;
    while o + 4 <= opts.len() {
        let (code, len) = (u16_at(opts, o, be), usize::from(u16_at(opts, o + 2, be)));
        if code == 0 {
            break;
        }
        let v = opts
            .get(o + 4..o + 4 + len)
            .ok_or_else(|| format!("option {code} of {len} bytes runs past the block"))?;
        f(code, v)?;
        o += 4 + pad4(len);
    }
    Ok(())
}

/// The options of an Interface Description Block: `if_tsresol` (ticks per second) and
/// `if_tsoffset` (seconds).
fn idb_options(opts: &[u8], be: bool) -> Result<(u64, i64), String> {
    let (mut ticks, mut offset) = (1_000_000u64, 0i64);
    walk_options(opts, be, |code, v| {
        match (code, v) {
            (9, [r]) => {
                ticks = tsresol_ticks(*r).ok_or_else(|| {
                    format!("if_tsresol 0x{r:02x} is beyond 2^64 ticks per second")
                })?;
            }
            (14, v) if v.len() == 8 => {
                let w: [u8; 8] = v.try_into().map_err(|_| "if_tsoffset".to_string())?;
                offset = if be {
                    i64::from_be_bytes(w)
                } else {
                    i64::from_le_bytes(w)
                };
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok((ticks, offset))
}

/// The parameters a Section Header Block's body (`body`, after the block type and length)
/// carries: its `opt_comment` options of the form `set KEY=VALUE` (the capture's counterpart of
/// a trace's `# set` lines; `sim --record` writes them), read by the same rules as a trace's
/// ([`comment_param`], [`param_unset`]): other comments are descriptive and skipped; a mistyped
/// or malformed `set` comment, and a key set twice, are refused.
fn shb_params(path: &Path, body: &[u8], be: bool) -> Result<Vec<Param>, String> {
    let mut params = Vec::new();
    walk_options(body.get(16..).unwrap_or_default(), be, |code, v| {
        if code != 1 {
            return Ok(());
        }
        let text = String::from_utf8_lossy(v);
        let Some((key, value)) = comment_param(text.trim_end_matches('\0'), "")? else {
            return Ok(());
        };
        param_unset(&params, key, "")?;
        params.push(Param {
            key: key.to_string(),
            value: value.to_string(),
            // Where it came from, as reports and errors name it.
            source: format!("{} (section header)", path.display()).into(),
            line: None,
        });
        Ok(())
    })?;
    Ok(params)
}

/// The parameters a capture carries: the `set KEY=VALUE` comments of a pcapng's (first) section
/// header, in order ([`shb_params`]); none for a pcap, whose header has no room for them. A
/// replay applies them first and `--set` after, as it does a trace's `# set` lines.
pub fn capture_params(path: &Path) -> Result<Vec<Param>, InputError> {
    let file = File::open(path).map_err(|e| InputError::file(path, format!("cannot open: {e}")))?;
    let mut input = Input::new(file);
    let io = |e: std::io::Error| InputError::file(path, format!("cannot read: {e}"));
    let h = input.peek(12).map_err(io)?;
    if h.len() < 12 || h[..4] != [0x0a, 0x0d, 0x0d, 0x0a] {
        return Ok(Vec::new());
    }
    let be = h[8..12] == [0x1a, 0x2b, 0x3c, 0x4d];
    let len = u32_at(h, 4, be) as usize;
    // A malformed header is left to the reader, which says what is wrong with it.
    if !(28..=MAX_RECORD_BYTES).contains(&len) {
        return Ok(Vec::new());
    }
    let b = input.peek(len).map_err(io)?;
    if b.len() < len {
        return Ok(Vec::new());
    }
    shb_params(path, &b[8..len - 4], be)
        .map_err(|e| InputError::file(path, format!("malformed pcapng Section Header Block: {e}")))
}

/// Streams a pcap or pcapng file, calling `f` for every RoCEv2 packet in capture order.
/// Refused with a message that says where: a record or block whose length field contradicts
/// its own fields or the snapshot length ("corrupt record at packet N"), a link type other
/// than Ethernet ("link type 113 is not Ethernet"), a pcapng packet on an interface the capture
/// never described, a malformed block.
pub fn read_capture(
    path: &Path,
    mut f: impl FnMut(RocePacket<'_>) -> Result<(), InputError>,
) -> Result<Ignored, InputError> {
    let file = File::open(path).map_err(|e| InputError::file(path, format!("cannot open: {e}")))?;
    let mut input = Input::new(file);
    let io = |e: std::io::Error| InputError::file(path, format!("cannot read: {e}"));
    let head = input.peek(4).map_err(io)?;
    let mut ignored = Ignored::default();
    match head {
        [0x0a, 0x0d, 0x0d, 0x0a] => read_pcapng(path, &mut input, &mut ignored, &mut f)?,
        [0xd4, 0xc3, 0xb2, 0xa1]
        | [0x4d, 0x3c, 0xb2, 0xa1]
        | [0xa1, 0xb2, 0xc3, 0xd4]
        | [0xa1, 0xb2, 0x3c, 0x4d] => read_pcap(path, &mut input, &mut ignored, &mut f)?,
        _ => {
            return Err(InputError::file(
                path,
                "not a pcap or pcapng capture (no pcap or pcapng magic number)",
            ));
        }
    }
    Ok(ignored)
}

fn cut_note(n: u64) -> String {
    format!(
        "capture ends inside the record after packet {n}; the {n} packets before it were replayed"
    )
}

fn read_pcap(
    path: &Path,
    input: &mut Input,
    ignored: &mut Ignored,
    f: &mut impl FnMut(RocePacket<'_>) -> Result<(), InputError>,
) -> Result<(), InputError> {
    let io = |e: std::io::Error| InputError::file(path, format!("cannot read: {e}"));
    let h = input.peek(24).map_err(io)?;
    if h.len() < 24 {
        return Err(InputError::file(
            path,
            "not a pcap or pcapng capture (the file ends inside the 24-byte pcap header)",
        ));
    }
    let be = h[0] == 0xa1;
    let ns = h[2] == 0x3c || h[1] == 0x3c;
    let snaplen = u32_at(h, 16, be);
    // The low 16 bits are the link type (the upper bits may describe an FCS).
    let link = u32_at(h, 20, be) & 0xFFFF;
    if link != 1 {
        // The first record's ERF header (after the 16-byte record header) says what it holds.
        let first = input.peek(24 + 16 + 16).map_err(io)?;
        let what = erf_first_record(link, first.get(40..));
        return Err(not_ethernet(path, link, &what));
    }
    input.consume(24);
    let mut n = 0u64;
    loop {
        let r = input.peek(16).map_err(io)?;
        if r.is_empty() {
            break;
        }
        if r.len() < 16 {
            ignored.cut = Some(cut_note(n));
            break;
        }
        let (sec, frac) = (u32_at(r, 0, be), u32_at(r, 4, be));
        let (caplen, origlen) = (u32_at(r, 8, be), u32_at(r, 12, be));
        // A captured length beyond the snapshot or the original length is corrupt: what
        // follows would be read out of step. Checked before the record is read.
        if (snaplen > 0 && caplen > snaplen) || caplen > origlen {
            return Err(InputError::file(
                path,
                format!(
                    "corrupt record at packet {}: captured length {caplen} exceeds the snapshot \
                     length {snaplen} or the original length {origlen}",
                    n + 1
                ),
            ));
        }
        let caplen = caplen as usize;
        if caplen > MAX_RECORD_BYTES {
            return Err(InputError::file(
                path,
                format!(
                    "record at packet {} is larger than {} MiB",
                    n + 1,
                    MAX_RECORD_BYTES >> 20
                ),
            ));
        }
        let rec = input.peek(16 + caplen).map_err(io)?;
        if rec.len() < 16 + caplen {
            ignored.cut = Some(cut_note(n));
            break;
        }
        n += 1;
        let sub = if ns {
            u64::from(frac)
        } else {
            u64::from(frac) * 1000
        };
        let t = u64::from(sec) * 1_000_000_000 + sub;
        ignored.frame(classify_frame(t, &rec[16..]), f)?;
        input.consume(16 + caplen);
    }
    ignored.packets = n;
    Ok(())
}

fn read_pcapng(
    path: &Path,
    input: &mut Input,
    ignored: &mut Ignored,
    f: &mut impl FnMut(RocePacket<'_>) -> Result<(), InputError>,
) -> Result<(), InputError> {
    let io = |e: std::io::Error| InputError::file(path, format!("cannot read: {e}"));
    let mut ifaces: Vec<Iface> = Vec::new();
    let mut sections = 0u32;
    let mut be = false;
    let mut n = 0u64;
    let malformed = |n: u64, what: String| {
        InputError::file(
            path,
            format!("malformed pcapng block after packet {n}: {what}"),
        )
    };
    loop {
        let h = input.peek(12).map_err(io)?;
        if h.is_empty() {
            break;
        }
        if h.len() < 12 {
            ignored.cut = Some(cut_note(n));
            break;
        }
        let ty_bytes = [h[0], h[1], h[2], h[3]];
        if ty_bytes == [0x0a, 0x0d, 0x0d, 0x0a] {
            be = match [h[8], h[9], h[10], h[11]] {
                [0x4d, 0x3c, 0x2b, 0x1a] => false,
                [0x1a, 0x2b, 0x3c, 0x4d] => true,
                m => {
                    return Err(malformed(
                        n,
                        format!("a Section Header Block with byte-order magic {m:02x?}"),
                    ));
                }
            };
        }
        let ty = u32_at(h, 0, be);
        let len32 = u32_at(h, 4, be);
        let len = len32 as usize;
        if len < 12 {
            return Err(malformed(
                n,
                format!(
                    "a {} of {len} bytes (every block is at least 12)",
                    block_name(ty)
                ),
            ));
        }
        if !len.is_multiple_of(4) {
            return Err(malformed(
                n,
                format!("a {} of {len} bytes (not a multiple of 4)", block_name(ty)),
            ));
        }
        let is_packet = matches!(ty, 2 | 3 | 6);
        let at = move || {
            if is_packet {
                format!("packet {}", n + 1)
            } else {
                format!("the {} after packet {n}", block_name(ty))
            }
        };
        let want = len.min(MAX_RECORD_BYTES + 64);
        let b = input.peek(want).map_err(io)?;
        if b.len() < len {
            // The block's own fields may end it well before the file does: then its length
            // field is corrupt (the rest would be read out of step), not the capture cut.
            if let Some(nat) = natural_block_len(ty, b, be) {
                return Err(InputError::file(
                    path,
                    format!(
                        "corrupt record at {}: its length field says {len} bytes, its own \
                         fields end it after {nat}",
                        at()
                    ),
                ));
            }
            if len > MAX_RECORD_BYTES + 64 {
                return Err(InputError::file(
                    path,
                    format!(
                        "record at {} is larger than {} MiB",
                        at(),
                        MAX_RECORD_BYTES >> 20
                    ),
                ));
            }
            ignored.cut = Some(cut_note(n));
            break;
        }
        let trailing = u32_at(b, len - 4, be);
        if trailing != len32 {
            let nat = natural_block_len(ty, b, be)
                .map(|l| format!(", its own fields end it after {l}"))
                .unwrap_or_default();
            return Err(InputError::file(
                path,
                format!(
                    "corrupt record at {}: its length field says {len} bytes, its trailing \
                     copy {trailing}{nat}",
                    at()
                ),
            ));
        }
        // Leading and trailing lengths can agree by chance when the length field points at
        // a later block's length: a packet block's own fields must end it there too.
        if let Some(nat) = natural_block_len(ty, b, be)
            && nat != len
        {
            return Err(InputError::file(
                path,
                format!(
                    "corrupt record at {}: its length field says {len} bytes, its own fields \
                     end it after {nat}",
                    at()
                ),
            ));
        }
        let body = &b[8..len - 4];
        match ty {
            0x0A0D_0D0A => {
                ifaces.clear();
                sections += 1;
                // Parameters apply to the whole capture: only the first section may set them
                // (`capture_params` read them before the replay).
                let sets = if sections > 1 {
                    shb_params(path, body, be).map_err(|e| malformed(n, e))?
                } else {
                    Vec::new()
                };
                if !sets.is_empty() {
                    return Err(malformed(
                        n,
                        format!(
                            "section {sections}'s header sets parameters ({}); only the first \
                             section's `set` comments apply to a capture",
                            sets.iter()
                                .map(|p| p.key.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
            }
            1 => {
                if body.len() < 8 {
                    return Err(malformed(
                        n,
                        format!("an Interface Description Block of {len} bytes"),
                    ));
                }
                let link = u32::from(u16_at(body, 0, be));
                let (ticks, offset_s) = idb_options(&body[8..], be)
                    .map_err(|e| malformed(n, format!("interface {}: {e}", ifaces.len())))?;
                ifaces.push(Iface {
                    eth: link == 1,
                    link,
                    ticks,
                    offset_s,
                });
            }
            2 | 6 => {
                n += 1;
                if body.len() < 20 {
                    return Err(InputError::file(
                        path,
                        format!(
                            "corrupt record at {}: a {} of {len} bytes",
                            at(),
                            block_name(ty)
                        ),
                    ));
                }
                let if_id = if ty == 6 {
                    u32_at(body, 0, be)
                } else {
                    u32::from(u16_at(body, 0, be))
                };
                let Some(iface) = ifaces.get(if_id as usize) else {
                    return Err(InputError::file(
                        path,
                        format!(
                            "packet {n} is on interface {if_id}, which the capture never \
                             described ({} interface blocks)",
                            ifaces.len()
                        ),
                    ));
                };
                if !iface.eth {
                    if !ifaces.iter().any(|i| i.eth) {
                        let what = erf_first_record(iface.link, body.get(20..));
                        return Err(not_ethernet(path, iface.link, &what));
                    }
                    ignored.not_roce_because(NotRoce::Interface(iface.link));
                } else {
                    let caplen = u32_at(body, 12, be) as usize;
                    let Some(data) = body.get(20..20 + caplen) else {
                        return Err(InputError::file(
                            path,
                            format!(
                                "corrupt record at {}: captured length {caplen} exceeds its \
                                 block of {len} bytes",
                                at()
                            ),
                        ));
                    };
                    let ticks =
                        (u64::from(u32_at(body, 4, be)) << 32) | u64::from(u32_at(body, 8, be));
                    ignored.frame(classify_frame(iface.ns(ticks), data), f)?;
                }
            }
            3 => {
                n += 1;
                ignored.no_timestamp += 1;
            }
            _ => {}
        }
        input.consume(len);
    }
    ignored.packets = n;
    Ok(())
}

/// A fast hasher for the stream map (FxHash's multiply-rotate; the keys are not adversarial
/// in a way that matters: a capture crafted to collide only slows its own replay).
#[derive(Default, Clone, Copy)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// The streams of a capture in order of their first packet, with a map from key to index and
/// a cache of the last few streams seen (a flow's data and ACKs alternate, a few flows at a
/// time are busy).
#[derive(Default)]
struct Streams {
    list: Vec<StreamInfo>,
    index: FastMap<StreamKey, usize>,
    recent: [Option<(StreamKey, usize)>; 4],
    next: usize,
}

/// What pass 1 learns about one stream.
#[derive(Debug, Clone)]
pub struct StreamInfo {
    /// Its key.
    pub key: StreamKey,
    /// Its UDP source port, `None` when its packets use several.
    pub sport: Option<u16>,
    /// Packets in it.
    pub packets: u64,
}

impl Streams {
    fn find(&mut self, k: StreamKey) -> Option<usize> {
        for (rk, i) in self.recent.iter().flatten() {
            if *rk == k {
                return Some(*i);
            }
        }
        let i = *self.index.get(&k)?;
        self.remember(k, i);
        Some(i)
    }

    fn remember(&mut self, k: StreamKey, i: usize) {
        self.recent[self.next] = Some((k, i));
        self.next = (self.next + 1) % self.recent.len();
    }

    fn add(&mut self, p: &RocePacket<'_>) {
        let k = p.stream();
        let i = match self.find(k) {
            Some(i) => i,
            None => {
                self.list.push(StreamInfo {
                    key: k,
                    sport: Some(p.sport),
                    packets: 0,
                });
                let i = self.list.len() - 1;
                self.index.insert(k, i);
                self.remember(k, i);
                i
            }
        };
        let s = &mut self.list[i];
        s.packets += 1;
        if s.sport != Some(p.sport) {
            s.sport = None;
        }
    }
}

/// The pairing of one ACK stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pairing {
    /// The index of the data stream it acknowledges.
    Data(usize),
    /// No data stream can be paired with it: why.
    Unpaired(String),
}

/// Pairs every ACK stream B→A with the data stream A→B it acknowledges: within one host pair,
/// a single ACK stream and a single data stream pair; otherwise an ACK stream pairs with the
/// only data stream of the same UDP source port, when that port is also unique among the ACK
/// streams. Returns, per ACK stream (by index, in stream order), its pairing.
pub fn pair_streams(streams: &[StreamInfo]) -> Vec<(usize, Pairing)> {
    // Host pair (data source A, data destination B) → (data streams, ACK streams).
    let mut by_pair: BTreeMap<(IpAddr, IpAddr), (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    for (i, s) in streams.iter().enumerate() {
        let k = s.key;
        if k.ack {
            by_pair.entry((k.dst, k.src)).or_default().1.push(i);
        } else {
            by_pair.entry((k.src, k.dst)).or_default().0.push(i);
        }
    }
    let mut out = Vec::new();
    for (data, acks) in by_pair.values() {
        for &k in acks {
            out.push((k, pair_in(streams, data, acks, k)));
        }
    }
    out.sort_by_key(|(k, _)| *k);
    out
}

/// [`pair_streams`] for ACK stream `k` alone.
fn pair_now(streams: &[StreamInfo], k: usize) -> Pairing {
    let key = streams[k].key;
    let (mut data, mut acks) = (Vec::new(), Vec::new());
    for (i, s) in streams.iter().enumerate() {
        if s.key.ack && s.key.src == key.src && s.key.dst == key.dst {
            acks.push(i);
        } else if !s.key.ack && s.key.src == key.dst && s.key.dst == key.src {
            data.push(i);
        }
    }
    pair_in(streams, &data, &acks, k)
}

/// The pairing of ACK stream `k` among the data and ACK streams of its host pair.
fn pair_in(streams: &[StreamInfo], data: &[usize], acks: &[usize], k: usize) -> Pairing {
    let (a, b) = (streams[k].key.dst, streams[k].key.src);
    if data.is_empty() {
        Pairing::Unpaired(format!(
            "no data packets from {a} to {b} in the capture: the sender's snd_nxt is unknown \
             (was only one direction captured?)"
        ))
    } else if data.len() == 1 && acks.len() == 1 {
        Pairing::Data(data[0])
    } else {
        let port = streams[k].sport;
        let same = |v: &[usize]| {
            v.iter()
                .copied()
                .filter(|&i| port.is_some() && streams[i].sport == port)
                .collect::<Vec<_>>()
        };
        match (same(data).as_slice(), same(acks).len()) {
            ([d], 1) => Pairing::Data(*d),
            _ => Pairing::Unpaired(format!(
                "cannot tell which of the {} data streams from {a} to {b} (QPs {}) these ACKs \
                 acknowledge: {}",
                data.len(),
                data.iter()
                    .map(|&i| streams[i].key.qp.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                match port {
                    Some(p) => format!("none or several share their UDP source port {p}"),
                    None => "their UDP source port varies".to_string(),
                }
            )),
        }
    }
}

/// `[v6]` for IPv6, plain for IPv4.
fn host(ip: &IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// A flow's name after `#`: the sender, its QPN (carried by the ACKs), the receiver and its
/// QPN (carried by the data; `?` when no data stream is paired).
fn flow_tag(ack: &StreamKey, data_qp: Option<u32>) -> String {
    let dq = data_qp.map_or("?".to_string(), |q| q.to_string());
    format!("qp{}@{}->qp{dq}@{}", ack.qp, host(&ack.dst), host(&ack.src))
}

/// The `--out`/`--plot` file of one flow of a multi-flow capture: the flow's QPs and endpoints
/// (`out.csv` → `out-qp5@10.0.0.1-qp9@10.0.0.2.csv`), so flows never share a file.
fn suffixed(p: &Path, tag: &str) -> PathBuf {
    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("out");
    let ext = p.extension().and_then(|s| s.to_str()).unwrap_or("");
    let tag = tag.replace("->", "-").replace([':', '[', ']'], "_");
    p.with_file_name(format!("{stem}-{tag}.{ext}"))
}

/// A flow being replayed: its name, its ACK stream and the data stream paired with it, the
/// lockstep (none when no data stream pairs with it), its ACK-side PSN state and ACK count.
struct FlowRun {
    name: String,
    ack_stream: usize,
    data_stream: Option<usize>,
    flow: Option<Flow>,
    last_ack: PsnExtender,
    acks: u64,
}

/// The per-stream state of a replay: data streams track the largest PSN sent
/// ([`PsnExtender::on_data`]); ACK streams point at their flow.
#[derive(Clone, Copy)]
enum StreamState {
    Data(PsnExtender),
    Ack(usize),
}

/// One replay over the file: every data stream's PSNs are tracked, every ACK of a paired flow
/// is replayed through its flow's lockstep; the streams, their state and the flows (started
/// by [`Pass::start_flow`], before the pass or when an ACK stream first appears).
struct Pass {
    streams: Streams,
    state: Vec<StreamState>,
    runs: Vec<FlowRun>,
    orphans: u64,
}

impl Pass {
    fn new(streams: Streams) -> Pass {
        let state = streams
            .list
            .iter()
            .map(|s| {
                if s.key.ack {
                    StreamState::Ack(usize::MAX)
                } else {
                    StreamState::Data(PsnExtender::default())
                }
            })
            .collect();
        Pass {
            streams,
            state,
            runs: Vec::new(),
            orphans: 0,
        }
    }

    /// The stream of `p`, registered (with its state) if new: `(index, new)`.
    fn stream_of(&mut self, p: &RocePacket<'_>) -> (usize, bool) {
        if let Some(i) = self.streams.find(p.stream()) {
            self.streams.list[i].packets += 1;
            if self.streams.list[i].sport != Some(p.sport) {
                self.streams.list[i].sport = None;
            }
            return (i, false);
        }
        self.streams.add(p);
        let i = self.streams.list.len() - 1;
        self.state.push(if p.is_ack() {
            StreamState::Ack(usize::MAX)
        } else {
            StreamState::Data(PsnExtender::default())
        });
        (i, true)
    }

    /// Starts the flow of ACK stream `k`.
    fn start_flow(
        &mut self,
        k: usize,
        pairing: Option<usize>,
        make_flow: &mut impl FnMut(&str, &str) -> Result<Flow, InputError>,
        file: &str,
    ) -> Result<(), InputError> {
        let ack = self.streams.list[k].key;
        let data_qp = pairing.map(|d| self.streams.list[d].key.qp);
        let tag = flow_tag(&ack, data_qp);
        let name = format!("{file}#{tag}");
        let flow = match pairing {
            Some(_) => Some(make_flow(&name, &tag)?),
            None => None,
        };
        self.state[k] = StreamState::Ack(self.runs.len());
        self.runs.push(FlowRun {
            name,
            ack_stream: k,
            data_stream: pairing,
            flow,
            last_ack: PsnExtender::default(),
            acks: 0,
        });
        Ok(())
    }

    /// One packet of stream `i`.
    fn packet(&mut self, i: usize, p: &RocePacket<'_>) -> Result<(), InputError> {
        match self.state[i] {
            StreamState::Data(ref mut ext) => ext.on_data(p.psn),
            StreamState::Ack(f) => {
                let Some(run) = self.runs.get_mut(f) else {
                    return Ok(());
                };
                run.acks += 1;
                if let (Some(flow), Some(d)) = (&mut run.flow, run.data_stream)
                    && let StreamState::Data(data) = self.state[d]
                {
                    // The data stream's largest PSN sent, this ACK stream's last ACK.
                    let mut ext = PsnExtender {
                        max_sent: data.max_sent,
                        last_ack: run.last_ack.last_ack,
                    };
                    let (ack_seq, snd_nxt) = ext.on_ack(p.psn);
                    run.last_ack.last_ack = ext.last_ack;
                    flow.event(None, p.t_ns, ack_seq, snd_nxt, p.int)?;
                }
            }
        }
        Ok(())
    }

    /// Data packets of streams no flow pairs with.
    fn count_orphans(&mut self) {
        let paired: std::collections::HashSet<usize> =
            self.runs.iter().filter_map(|r| r.data_stream).collect();
        self.orphans = self
            .streams
            .list
            .iter()
            .enumerate()
            .filter(|(i, s)| !s.key.ack && !paired.contains(i))
            .map(|(_, s)| s.packets)
            .sum();
    }
}

/// Why a capture compares nothing at all, if it does not: no RoCEv2 packet, no ACK carrying
/// an INT block (what was seen instead), or no data packet to give the ACKs a `snd_nxt`.
fn nothing_in(streams: &[StreamInfo], scan: &Ignored) -> Option<String> {
    let mut why = if scan.roce() == 0 {
        "no RoCEv2 packets (UDP destination port 4791)".to_string()
    } else if !streams.iter().any(|s| s.key.ack) {
        let (acks, _) = scan.opcode(OPCODE_RC_ACK);
        if acks > 0 {
            format!(
                "no RoCEv2 ACK carries an HPCC INT block (RC ACK {acks}, 0 with INT: the INT \
                 block sits right after the UDP header, before the BTH, docs/hpcc.md §7)"
            )
        } else {
            "no RoCEv2 RC ACKs (BTH opcode 0x11): without ACKs there is nothing for HPCC to \
             compare"
                .to_string()
        }
    } else if !streams.iter().any(|s| !s.key.ack) {
        "no RoCEv2 data packets carrying an INT header (UDP port 4791, an RC opcode other than \
         0x11 after an INT block of no hop): the sender's snd_nxt is unknown for every ACK, \
         nothing can be compared"
            .to_string()
    } else {
        return None;
    };
    why.push_str(&format!("; seen: {}", scan.seen()));
    if let Some(cut) = &scan.cut {
        why.push_str(&format!(" ({cut})"));
    }
    Some(why)
}

/// The one result of a capture that compares nothing at all, with what it holds and why.
fn nothing_summary(
    file: &str,
    why: String,
    scan: &Ignored,
    setup: Setup,
    params: &[Param],
    opts: &ReplayOpts,
) -> Vec<Summary> {
    let mut s = Summary::new(
        &super::INFO,
        file.to_string(),
        opts.mode,
        Agreement::new("branch"),
    );
    s.params = crate::trace::kinds::in_force(&setup, Some(&Setup::default()), params)
        .iter()
        .map(crate::summary::ParamReport::from)
        .collect();
    scan.details(&mut s);
    if let Some(cut) = &scan.cut {
        s.detail("warning", cut.clone());
    }
    s.nothing_compared(format!("nothing to compare in {file}: {why}"));
    s.judge(opts.tolerances(&super::INFO));
    vec![s]
}

/// Replays every flow of a capture; one summary per flow (flows in order of their ACK
/// stream's first packet). A flow none of whose ACKs could be compared (no data stream paired
/// with it, or every INT block invalid) fails, named, with the reason; the other flows keep
/// their verdicts.
///
/// Without `--out`/`--plot` the capture is read once: each ACK stream is paired when its first
/// packet is seen, from the streams seen so far; when the pairing of the whole capture turns
/// out different for any ACK stream, the flows are replayed again in a second pass with it.
/// With `--out`/`--plot` (whose names depend on the number of flows), a first pass finds and
/// pairs the streams and a second replays.
pub fn replay_capture(path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    let shown = opts.shown(path);
    let mut from_capture = capture_params(path)?;
    if shown != path {
        // Named as reports name the capture (`-` for standard input).
        for p in &mut from_capture {
            p.source = format!("{} (section header)", shown.display()).into();
        }
    }
    let params = merged_params(&from_capture, &opts.params);
    let setup = Setup::from_params(&params)?;
    let file = shown.display().to_string();
    let mut no_outputs =
        |name: &str, _: &str| Flow::new(name.into(), setup, &params, opts.mode, None, None);
    let streams = if opts.out.is_none() && opts.plot.is_none() {
        // One pass, pairing as streams appear.
        let mut pass = Pass::new(Streams::default());
        let ignored = read_capture(path, |p| {
            let (i, new) = pass.stream_of(&p);
            if new && p.is_ack() {
                let pairing = match pair_now(&pass.streams.list, i) {
                    Pairing::Data(d) => Some(d),
                    Pairing::Unpaired(_) => None,
                };
                pass.start_flow(i, pairing, &mut no_outputs, &file)?;
            }
            pass.packet(i, &p)
        })?;
        if let Some(why) = nothing_in(&pass.streams.list, &ignored) {
            return Ok(nothing_summary(&file, why, &ignored, setup, &params, opts));
        }
        let final_pairs = pair_streams(&pass.streams.list);
        let same = final_pairs.iter().zip(&pass.runs).all(|((k, p), run)| {
            *k == run.ack_stream
                && match p {
                    Pairing::Data(d) => run.data_stream == Some(*d),
                    Pairing::Unpaired(_) => run.data_stream.is_none(),
                }
        }) && final_pairs.len() == pass.runs.len();
        if same {
            pass.count_orphans();
            return summaries(pass, &final_pairs, &ignored, opts);
        }
        pass.streams
    } else {
        let mut streams = Streams::default();
        let scan = read_capture(path, |p| {
            streams.add(&p);
            Ok(())
        })?;
        if let Some(why) = nothing_in(&streams.list, &scan) {
            return Ok(nothing_summary(&file, why, &scan, setup, &params, opts));
        }
        streams
    };
    // The pairing of the whole capture, then one replay with it.
    let pairs = pair_streams(&streams.list);
    let single = pairs.len() == 1;
    let mut with_outputs = |name: &str, tag: &str| {
        let name_out = |o: &Option<PathBuf>| {
            o.as_ref()
                .map(|p| if single { p.clone() } else { suffixed(p, tag) })
        };
        Flow::new(
            name.into(),
            setup,
            &params,
            opts.mode,
            name_out(&opts.out),
            name_out(&opts.plot),
        )
    };
    let mut fresh = Streams::default();
    for s in &streams.list {
        fresh.list.push(StreamInfo {
            packets: 0,
            ..s.clone()
        });
        fresh.index.insert(s.key, fresh.list.len() - 1);
    }
    let mut pass = Pass::new(fresh);
    for (k, p) in &pairs {
        let d = match p {
            Pairing::Data(d) => Some(*d),
            Pairing::Unpaired(_) => None,
        };
        pass.start_flow(*k, d, &mut with_outputs, &file)?;
    }
    let ignored = read_capture(path, |p| {
        let Some(i) = pass.streams.find(p.stream()) else {
            // The first pass saw every stream; the file changed between the passes.
            return Err(InputError::file(
                path,
                "the capture changed while it was read (a stream the first pass did not see)",
            ));
        };
        pass.streams.list[i].packets += 1;
        pass.packet(i, &p)
    })?;
    pass.count_orphans();
    summaries(pass, &pairs, &ignored, opts)
}

/// The judged summary of every flow of a finished pass; `pairs` is the capture's pairing (the
/// reasons of the unpaired flows).
fn summaries(
    pass: Pass,
    pairs: &[(usize, Pairing)],
    ignored: &Ignored,
    opts: &ReplayOpts,
) -> Result<Vec<Summary>, InputError> {
    let plain = ignored.roce() - ignored.opcodes.iter().map(|c| c[1]).sum::<u64>();
    let ignored_line = format!(
        "{} not RoCEv2, {} truncated, {} with no valid BTH, {} without a timestamp, {} RoCEv2 \
         without INT, {} data packets of flows without ACKs",
        ignored.not_roce,
        ignored.truncated,
        ignored.bad_bth,
        ignored.no_timestamp,
        plain,
        pass.orphans
    );
    let mut out = Vec::new();
    for (run, (_, pairing)) in pass.runs.into_iter().zip(pairs) {
        let mut s = match run.flow {
            Some(flow) => flow.finish(opts)?,
            None => {
                let mut s =
                    Summary::new(&super::INFO, run.name, opts.mode, Agreement::new("branch"));
                s.detail("ACKs not replayed", run.acks);
                s
            }
        };
        s.detail("ignored packets", ignored_line.clone());
        ignored.details(&mut s);
        if let Some(cut) = &ignored.cut {
            s.detail("warning", cut.clone());
        }
        if let Pairing::Unpaired(why) = pairing {
            s.nothing_compared(why.clone());
        }
        s.judge(opts.tolerances(&super::INFO));
        out.push(s);
    }
    Ok(out)
}

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
    max_sent: Option<u32>,
    last_ack: Option<u32>,
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

/// Builds an Ethernet/IPv4/UDP(4791)/INT/BTH frame from UDP source port 0xC000.
/// `payload_len` bytes of zeros follow the BTH, then a 4-byte ICRC (zero).
pub fn roce_frame(
    src: [u8; 4],
    dst: [u8; 4],
    int: &[u8],
    opcode: u8,
    qp: u32,
    psn: u32,
    payload_len: usize,
) -> Vec<u8> {
    roce_frame_from(src, dst, 0xC000, int, opcode, qp, psn, payload_len)
}

/// [`roce_frame`] from UDP source port `sport`.
#[allow(clippy::too_many_arguments)] // one per header field
pub fn roce_frame_from(
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    int: &[u8],
    opcode: u8,
    qp: u32,
    psn: u32,
    payload_len: usize,
) -> Vec<u8> {
    let udp_len = 8 + int.len() + BTH_BYTES + payload_len + 4;
    let ip_len = 20 + udp_len;
    let mut f = Vec::with_capacity(14 + ip_len);
    f.extend_from_slice(&[
        0x02, 0, 0, 0, 0, dst[3], 0x02, 0, 0, 0, 0, src[3], 0x08, 0x00,
    ]);
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
    ip[6] = 0x40; // DF
    ip[8] = 64;
    ip[9] = 17; // UDP
    ip[12..16].copy_from_slice(&src);
    ip[16..20].copy_from_slice(&dst);
    let mut sum: u32 = ip
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&sport.to_be_bytes()); // UDP source port (entropy)
    f.extend_from_slice(&ROCEV2_PORT.to_be_bytes());
    f.extend_from_slice(&(udp_len as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]); // no UDP checksum (allowed over IPv4)
    f.extend_from_slice(int);
    let mut bth = [0u8; BTH_BYTES];
    bth[0] = opcode;
    bth[2..4].copy_from_slice(&0xFFFFu16.to_be_bytes()); // default P_Key
    bth[5..8].copy_from_slice(&qp.to_be_bytes()[1..]);
    bth[9..12].copy_from_slice(&(psn & 0xFF_FFFF).to_be_bytes()[1..]);
    f.extend_from_slice(&bth);
    f.resize(f.len() + payload_len + 4, 0);
    f
}

/// A nanosecond-resolution pcap (magic `0xa1b23c4d`, little-endian), frames truncated to `snaplen`.
pub fn write_pcap(frames: &[(u64, Vec<u8>)], snaplen: u32) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes());
    v.extend_from_slice(&2u16.to_le_bytes());
    v.extend_from_slice(&4u16.to_le_bytes());
    v.extend_from_slice(&0i32.to_le_bytes()); // thiszone
    v.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
    v.extend_from_slice(&snaplen.to_le_bytes());
    v.extend_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
    for (t, data) in frames {
        let cap = data.len().min(snaplen as usize);
        v.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
        v.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
        v.extend_from_slice(&(cap as u32).to_le_bytes());
        v.extend_from_slice(&(data.len() as u32).to_le_bytes());
        v.extend_from_slice(&data[..cap]);
    }
    v
}

/// A pcapng (little-endian): section header, one Ethernet interface with `if_tsresol = 9`
/// (nanoseconds), one enhanced packet block per frame, frames truncated to `snaplen`.
pub fn write_pcapng(frames: &[(u64, Vec<u8>)], snaplen: u32) -> Vec<u8> {
    write_pcapng_with(frames, snaplen, 9, 0, &[])
}

/// [`write_pcapng`] with a chosen `if_tsresol` (raw option byte) and `if_tsoffset` (seconds,
/// written only when non-zero), and `comments` as the section header's `opt_comment` options
/// (one each, in order; `set KEY=VALUE` ones are parameters, see [`capture_params`]);
/// timestamps `t` are in nanoseconds and converted to ticks (after subtracting the offset).
pub fn write_pcapng_with(
    frames: &[(u64, Vec<u8>)],
    snaplen: u32,
    tsresol: u8,
    tsoffset_s: i64,
    comments: &[String],
) -> Vec<u8> {
    fn block(v: &mut Vec<u8>, kind: u32, body: &[u8]) {
        let len = (12 + body.len().div_ceil(4) * 4) as u32;
        v.extend_from_slice(&kind.to_le_bytes());
        v.extend_from_slice(&len.to_le_bytes());
        v.extend_from_slice(body);
        v.resize(v.len() + (4 - body.len() % 4) % 4, 0);
        v.extend_from_slice(&len.to_le_bytes());
    }
    let mut v = Vec::new();
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    if !comments.is_empty() {
        for c in comments {
            // An option holds at most 65 535 bytes.
            let c = &c.as_bytes()[..c.len().min(0xFFFF)];
            shb.extend_from_slice(&1u16.to_le_bytes()); // opt_comment
            shb.extend_from_slice(&(c.len() as u16).to_le_bytes());
            shb.extend_from_slice(c);
            shb.resize(shb.len().div_ceil(4) * 4, 0);
        }
        shb.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
    }
    block(&mut v, 0x0A0D_0D0A, &shb);
    let mut idb = Vec::new();
    idb.extend_from_slice(&1u16.to_le_bytes()); // LINKTYPE_ETHERNET
    idb.extend_from_slice(&0u16.to_le_bytes());
    idb.extend_from_slice(&snaplen.to_le_bytes());
    idb.extend_from_slice(&[9, 0, 1, 0, tsresol, 0, 0, 0]); // if_tsresol, padded
    if tsoffset_s != 0 {
        idb.extend_from_slice(&[14, 0, 8, 0]); // if_tsoffset
        idb.extend_from_slice(&tsoffset_s.to_le_bytes());
    }
    idb.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
    let res = u128::from(tsresol_ticks(tsresol).unwrap_or(1_000_000_000));
    block(&mut v, 1, &idb);
    for (t, data) in frames {
        let cap = data.len().min(snaplen as usize);
        let mut epb = Vec::with_capacity(20 + cap);
        let ns = (i128::from(*t) - i128::from(tsoffset_s) * 1_000_000_000).max(0) as u128;
        let t = &((ns * res / 1_000_000_000) as u64);
        epb.extend_from_slice(&0u32.to_le_bytes());
        epb.extend_from_slice(&((t >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(*t as u32).to_le_bytes());
        epb.extend_from_slice(&(cap as u32).to_le_bytes());
        epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&data[..cap]);
        epb.resize(epb.len().div_ceil(4) * 4, 0);
        block(&mut v, 6, &epb);
    }
    v
}

/// One flow of a generated capture: its endpoints, each end's QPN, the UDP source port, the
/// first PSN and the generator's ACK rows (one data packet of `pkt_bytes` per `pkt_bytes` of
/// `ack_seq`, counted from `seq0`).
pub struct CaptureFlow {
    /// The data sender (the ACKs go back to it).
    pub src: [u8; 4],
    /// The receiver.
    pub dst: [u8; 4],
    /// The receiver's QPN: the destination QP of the data packets.
    pub data_qp: u32,
    /// The sender's QPN: the destination QP of the ACKs.
    pub ack_qp: u32,
    /// UDP source port of both directions (as Linux derives it from the QPN pair).
    pub sport: u16,
    /// PSN of the flow's first data packet (24 bits; a RoCE QP starts at any PSN).
    pub psn0: u32,
    /// Bytes per data packet in `rows` (the sender's `pkt_bytes`).
    pub pkt_bytes: u64,
    /// The scenario's `seq0` (`ack_seq` of the rows counts from it).
    pub seq0: u64,
    /// The generator's ACK rows.
    pub rows: Vec<super::generate::AckRow>,
}

/// The frames of generated flows, in time order: data packets (opcode 0x0A, an INT block with
/// `nhop = 0`, PSNs counting up from `psn0`, modulo 2^24) paced strictly after the previous ACK
/// and up to each ACK, up to its `snd_nxt` (a partial packet counts as one), and the ACKs
/// (opcode 0x11, the full INT) whose PSN is that of the last packet they acknowledge
/// (InfiniBand semantics). Within a flow the frames keep the order they are made in (equal
/// timestamps included), so every ACK sees exactly the packets sent before it. Timestamps start
/// at 1.7e18 ns (2023).
pub fn frames_of(flows: &[CaptureFlow]) -> Vec<(u64, Vec<u8>)> {
    // (t, flow, order within the flow, frame)
    let mut frames: Vec<(u64, usize, usize, Vec<u8>)> = Vec::new();
    for (fi, fl) in flows.iter().enumerate() {
        let mut sent: u64 = 0; // packets sent so far
        let mut prev_t = 0u64;
        let mut k = 0usize;
        for r in &fl.rows {
            // Data packets sent after the previous ACK and before this one, up to snd_nxt.
            let want = r
                .snd_nxt
                .saturating_sub(fl.seq0)
                .div_ceil(fl.pkt_bytes.max(1));
            let n = want.saturating_sub(sent);
            let span = r.t_ns.saturating_sub(prev_t);
            for i in 0..n {
                let t = prev_t + span * (i + 1) / (n + 1);
                let psn = (u64::from(fl.psn0) + sent) as u32 & 0xFF_FFFF;
                let f = roce_frame_from(
                    fl.src,
                    fl.dst,
                    fl.sport,
                    &[0x00, 0x00],
                    OPCODE_RC_WRITE_ONLY,
                    fl.data_qp,
                    psn,
                    1024,
                );
                frames.push((t, fi, k, f));
                k += 1;
                sent += 1;
            }
            // The last packet acknowledged (a partial packet counts once it is acked whole).
            let acked = r
                .ack_seq
                .saturating_sub(fl.seq0)
                .div_ceil(fl.pkt_bytes.max(1));
            let psn = (u64::from(fl.psn0) + acked).wrapping_sub(1) as u32 & 0xFF_FFFF;
            frames.push((
                r.t_ns,
                fi,
                k,
                roce_frame_from(
                    fl.dst,
                    fl.src,
                    fl.sport,
                    &r.int,
                    OPCODE_RC_ACK,
                    fl.ack_qp,
                    psn,
                    0,
                ),
            ));
            k += 1;
            prev_t = r.t_ns;
        }
    }
    frames.sort_by_key(|(t, fi, k, _)| (*t, *fi, *k));
    frames
        .into_iter()
        .map(|(t, _, _, f)| (t + 1_700_000_000_000_000_000, f))
        .collect()
}

/// A capture fixture's flow: `acks` ACKs of 1000-byte packets over one path of `hops`, its INT
/// timestamps starting at `seed · ts_step_ns`, the paper's parameters, no duplicates, no bad INT.
fn one_path(
    seed: u64,
    acks: usize,
    ts_step_ns: u64,
    id: u16,
    hops: Vec<super::generate::HopSpec>,
) -> super::generate::Scenario {
    super::generate::Scenario {
        seed,
        acks,
        params: super::reference::RefParams::default(),
        pkt_bytes: 1000.0,
        paths: vec![(0, super::generate::PathSpec { id, hops })],
        ts0: ts_step_ns * seed,
        tx0: 0.0,
        dup_every: 0,
        bad_every: 0,
        seq0: 0,
        ties: None,
        queue_noise_bytes: 0.0,
    }
}

/// The frames of the shipped capture: two flows (from 10.0.0.1 QP 17 to 10.0.0.2 QP 721, from
/// 10.0.0.3 QP 34 to 10.0.0.2 QP 738) over two 1-hop/2-hop paths, 400 ACKs each, with the data
/// packets they pace out. PSNs start at 0.
pub fn capture_frames() -> Vec<(u64, Vec<u8>)> {
    use super::generate::{HopSpec, Load, Scenario, simulate};
    let mk = |seed: u64, id: u16, hops: Vec<HopSpec>| one_path(seed, 400, 1_000_000, id, hops);
    let burst = Load {
        points: vec![
            (0.0, 0.2),
            (10_000.0, 0.2),
            (10_001.0, 3.0),
            (15_000.0, 3.0),
            (15_001.0, 0.2),
        ],
        period_ns: 25_000.0,
    };
    let flow = |src: [u8; 4], qp: u32, sc: Scenario| CaptureFlow {
        src,
        dst: [10, 0, 0, 2],
        data_qp: 0x2C0 + qp,
        ack_qp: qp,
        sport: 0xC000 + qp as u16,
        psn0: 0,
        pkt_bytes: 1000,
        seq0: 0,
        rows: simulate(&sc),
    };
    frames_of(&[
        flow(
            [10, 0, 0, 1],
            17,
            mk(
                11,
                0x0B1,
                vec![HopSpec {
                    code: 5,
                    load: burst.clone(),
                    copies: 2.0,
                }],
            ),
        ),
        flow(
            [10, 0, 0, 3],
            34,
            mk(
                12,
                0x0B2,
                vec![
                    HopSpec {
                        code: 7,
                        load: Load::constant(0.3),
                        copies: 1.0,
                    },
                    HopSpec {
                        code: 5,
                        load: burst,
                        copies: 2.0,
                    },
                ],
            ),
        ),
    ])
}

/// The frames of the PSN-wrap capture: two long flows whose 24-bit PSNs wrap (first PSN
/// `2^24 − 1 600` and `2^24 − 200`), 3 000 ACKs each, so that ACKs before and after the wrap
/// (and ACKs in flight across it) are replayed. From 10.0.1.1 QP 0x51 to 10.0.2.1 QP 0x151 over
/// 100G ToR up, 400G spine, 100G ToR down (incast bursts on the last port); from 10.0.1.2 QP
/// 0x52 to 10.0.2.1 QP 0x152 over a 400G spine port and a 25G ToR down port (a slower
/// receiver).
pub fn psn_wrap_frames() -> Vec<(u64, Vec<u8>)> {
    psn_wrap_frames_with([(1 << 24) - 1_600, (1 << 24) - 200])
}

/// [`psn_wrap_frames`] with chosen first PSNs (e.g. `[0, 0]`: the same traffic, no wrap).
pub fn psn_wrap_frames_with(psn0: [u32; 2]) -> Vec<(u64, Vec<u8>)> {
    use super::generate::{HopSpec, Load, Scenario, simulate};
    let mk = |seed: u64, id: u16, hops: Vec<HopSpec>| Scenario {
        ts0: 5_000_000 + 1_000 * seed,
        tx0: 3_000_000.0 * seed as f64,
        queue_noise_bytes: 8_000.0,
        ..one_path(seed, 3_000, 0, id, hops)
    };
    let incast = Load {
        points: vec![
            (0.0, 0.1),
            (60_000.0, 0.1),
            (60_001.0, 2.5),
            (80_000.0, 2.5),
            (80_001.0, 0.1),
        ],
        period_ns: 150_000.0,
    };
    let hop = |code, load, copies| HopSpec { code, load, copies };
    let flow = |src: [u8; 4], qp: u32, psn0: u32, sc: Scenario| CaptureFlow {
        src,
        dst: [10, 0, 2, 1],
        data_qp: 0x100 + qp,
        ack_qp: qp,
        sport: 0xC000 + qp as u16,
        psn0,
        pkt_bytes: 1000,
        seq0: 0,
        rows: simulate(&sc),
    };
    frames_of(&[
        flow(
            [10, 0, 1, 1],
            0x51,
            psn0[0],
            mk(
                21,
                0x5A1,
                vec![
                    hop(5, Load::constant(0.2), 1.0),
                    hop(7, Load::constant(0.6), 1.0),
                    hop(5, incast, 1.0),
                ],
            ),
        ),
        flow(
            [10, 0, 1, 2],
            0x52,
            psn0[1],
            mk(
                22,
                0x5A2,
                vec![
                    hop(7, Load::constant(0.5), 1.0),
                    hop(2, Load::constant(0.3), 1.0),
                ],
            ),
        ),
    ])
}

/// The frames of `roce_pairs.pcapng`: RoCE conversations as NICs write them, each end with its
/// own QPN, 600 ACKs per flow. From 10.0.3.1 two connections to 10.0.3.2 (QP 0x0A1 → 0x1B1 and
/// QP 0x0A2 → 0x1B2, told apart by their UDP source ports), and traffic back on the first one
/// (10.0.3.2 QP 0x1B1 → 10.0.3.1 QP 0x0A1: both directions of one QP pair, two flows); over
/// 100G, 400G + 100G and 200G paths with bursts.
pub fn roce_pairs_frames() -> Vec<(u64, Vec<u8>)> {
    use super::generate::{HopSpec, Load, Scenario, simulate};
    let mk = |seed: u64, id: u16, hops: Vec<HopSpec>| one_path(seed, 600, 2_000_000, id, hops);
    let burst = Load {
        points: vec![
            (0.0, 0.1),
            (8_000.0, 0.1),
            (8_001.0, 1.6),
            (11_000.0, 1.6),
            (11_001.0, 0.1),
        ],
        period_ns: 30_000.0,
    };
    let hop = |code, load, copies| HopSpec { code, load, copies };
    let (a, b) = ([10, 0, 3, 1], [10, 0, 3, 2]);
    let flow = |src, dst, ack_qp, data_qp, sport, psn0, sc: Scenario| CaptureFlow {
        src,
        dst,
        data_qp,
        ack_qp,
        sport,
        psn0,
        pkt_bytes: 1000,
        seq0: 0,
        rows: simulate(&sc),
    };
    frames_of(&[
        flow(
            a,
            b,
            0x0A1,
            0x1B1,
            0xD0A1,
            100,
            mk(31, 0x3A1, vec![hop(5, burst.clone(), 1.0)]),
        ),
        flow(
            a,
            b,
            0x0A2,
            0x1B2,
            0xD0A2,
            7_000,
            mk(
                32,
                0x3A2,
                vec![hop(7, Load::constant(0.2), 1.0), hop(5, burst.clone(), 1.0)],
            ),
        ),
        flow(
            b,
            a,
            0x1B1,
            0x0A1,
            0xD0A1,
            0xFF_FF00,
            mk(33, 0x3A3, vec![hop(6, burst, 1.0)]),
        ),
    ])
}
