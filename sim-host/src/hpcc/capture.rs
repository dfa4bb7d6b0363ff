//! RoCEv2 captures (pcap and pcapng): reading them into per-flow ACK streams, and a small writer
//! for the shipped fixture capture.
//!
//! # Assumptions (also in docs/hpcc.md)
//! * Ethernet frames (link type 1) carrying IPv4 or IPv6, UDP destination port 4791 (RoCEv2).
//! * Every RoCEv2 packet carries the HPCC INT block right after the UDP header and before the
//!   12-byte InfiniBand BTH (paper §4.1, Figure 7); its length `2 + 8·nhop` comes from its first
//!   nibble (data packets leaving the sender carry `nhop = 0`).
//! * A packet is an **ACK** when its BTH opcode is `0x11` (RC Acknowledge); every other opcode is
//!   data sent by the flow.
//! * A **flow** is the BTH destination QP together with the (unordered) pair of IP addresses: we
//!   assume both ends of a connection use the same QP number, so its data packets and its ACKs
//!   fall in one group. (Captures where the two ends use different QP numbers would need a QP
//!   map; not supported.)
//! * `ack_seq` is the ACK's BTH PSN and `snd_nxt` the largest PSN sent on that flow so far in the
//!   capture (0 before any data packet), both extended from 24 to 32 bits per flow by counting
//!   the wraps of the PSN ([`PsnExtender`]): a long capture crosses the 2^24 PSN wrap without
//!   freezing Wc, and the replay compares the 32-bit values in serial-number order as it does
//!   for traces.
//! * `t_ns` is the capture timestamp (nanosecond pcap, or pcapng with its `if_tsresol`, base 10
//!   or base 2, plus `if_tsoffset` seconds).
//! * Records of any size up to [`MAX_RECORD_BYTES`] are read (the buffer grows); a capture whose
//!   last record is cut (tcpdump killed) is replayed up to the cut, with a warning in the summary.
//! * Packets that are not RoCEv2, or too short to hold INT + BTH, are counted and ignored.

use super::{Flow, Setup};
use crate::opts::ReplayOpts;
use crate::summary::Summary;
use crate::trace::InputError;
use pcap_parser::pcapng::Block;
use pcap_parser::{PcapBlockOwned, PcapError, create_reader};
use std::collections::HashMap;
use std::fs::File;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// RoCEv2 UDP destination port.
pub const ROCEV2_PORT: u16 = 4791;
/// BTH opcode of an RC Acknowledge.
pub const OPCODE_RC_ACK: u8 = 0x11;
/// BTH opcode used for data by the writer (RC RDMA WRITE Only).
pub const OPCODE_RC_WRITE_ONLY: u8 = 0x0A;
const BTH_BYTES: usize = 12;

/// One RoCEv2 packet as the reader sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RocePacket {
    /// Capture time, ns.
    pub t_ns: u64,
    /// Flow key.
    pub flow: FlowKey,
    /// BTH opcode.
    pub opcode: u8,
    /// BTH PSN (24 bits).
    pub psn: u32,
    /// The INT block (exactly `2 + 8·nhop` bytes).
    pub int: Vec<u8>,
}

/// Destination QP and the unordered IP pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowKey {
    /// BTH destination QP (24 bits).
    pub qp: u32,
    /// Lower IP address of the pair.
    pub a: IpAddr,
    /// Higher IP address of the pair.
    pub b: IpAddr,
}

/// Counts of what was ignored.
#[derive(Debug, Default, Clone)]
pub struct Ignored {
    /// Not Ethernet/IP/UDP 4791.
    pub not_roce: u64,
    /// RoCEv2 but too short for INT + BTH.
    pub truncated: u64,
    /// The capture ends inside a record (e.g. tcpdump was killed): the packets before it were
    /// replayed; this says where it was cut.
    pub cut: Option<String>,
}

/// The largest record the reader grows its buffer for (a jumbo frame is 9 KiB; pcapng blocks of
/// many MiB are legal but absurd for RoCE).
pub const MAX_RECORD_BYTES: usize = 64 << 20;

/// Ticks per second of a pcapng `if_tsresol` (bit 7 clear: 10^v, set: 2^(v & 0x7f));
/// `None` if it does not fit a u64. (pcap-parser 0.17's `ts_resolution` returns `None` for every
/// base-2 value.)
pub fn tsresol_ticks(v: u8) -> Option<u64> {
    if v & 0x80 == 0 {
        10u64.checked_pow(u32::from(v))
    } else {
        1u64.checked_shl(u32::from(v & 0x7f))
    }
}

/// Parses one Ethernet frame; `Ok(None)` when it is not RoCEv2, `Err(())` when truncated.
#[allow(clippy::result_unit_err)] // the only failure is "truncated", counted by the caller
pub fn parse_frame(t_ns: u64, data: &[u8]) -> Result<Option<RocePacket>, ()> {
    // Lax: frames cut by the capture's snap length still yield their headers.
    let Ok(pkt) = etherparse::LaxSlicedPacket::from_ethernet(data) else {
        return Ok(None);
    };
    let (src, dst) = match &pkt.net {
        Some(etherparse::LaxNetSlice::Ipv4(v4)) => (
            IpAddr::V4(v4.header().source_addr()),
            IpAddr::V4(v4.header().destination_addr()),
        ),
        Some(etherparse::LaxNetSlice::Ipv6(v6)) => (
            IpAddr::V6(v6.header().source_addr()),
            IpAddr::V6(v6.header().destination_addr()),
        ),
        _ => return Ok(None),
    };
    let Some(etherparse::TransportSlice::Udp(udp)) = &pkt.transport else {
        return Ok(None);
    };
    if udp.destination_port() != ROCEV2_PORT {
        return Ok(None);
    }
    let p = udp.payload();
    let nhop = usize::from(p.first().ok_or(())? >> 4);
    let int_len = 2 + 8 * nhop;
    let bth = p.get(int_len..int_len + BTH_BYTES).ok_or(())?;
    let qp = u32::from_be_bytes([0, bth[5], bth[6], bth[7]]);
    let psn = u32::from_be_bytes([0, bth[9], bth[10], bth[11]]);
    let (a, b) = if src <= dst { (src, dst) } else { (dst, src) };
    Ok(Some(RocePacket {
        t_ns,
        flow: FlowKey { qp, a, b },
        opcode: bth[0],
        psn,
        int: p[..int_len].to_vec(),
    }))
}

fn not_ethernet(path: &Path, link: i32) -> InputError {
    InputError::file(
        path,
        format!("link type {link} is not Ethernet (only Ethernet captures of RoCEv2 are read)"),
    )
}

fn idb_link(types: &[i32], if_id: u32) -> i32 {
    types.get(if_id as usize).copied().unwrap_or(-1)
}

/// A parser error in one short line: the kind of error, never the file's bytes (a corrupt
/// block would otherwise print hundreds of kilobytes).
fn short<I>(e: &PcapError<I>) -> String {
    match e {
        PcapError::NomError(_, k) | PcapError::OwnedNomError(_, k) => {
            format!("the parser stopped ({k:?})")
        }
        PcapError::HeaderNotRecognized => "not a pcap or pcapng header".into(),
        PcapError::Eof => "end of file".into(),
        PcapError::UnexpectedEof => "unexpected end of file".into(),
        PcapError::BufferTooSmall => "a record larger than the read buffer".into(),
        PcapError::ReadError => "read error".into(),
        PcapError::Incomplete(n) => format!("incomplete read ({n} bytes missing)"),
    }
}

/// The first four bytes of a pcapng file (its Section Header Block type).
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

/// The length of the pcapng block at the start of `data` when it is a Process Information Block
/// (type `0x80000001`, in either byte order) shorter than the 12 bytes every block has.
/// pcap-parser 0.17 accepts such a block's length and then computes `length − 12`, which
/// overflows (a panic where overflow checks are on, e.g. debug builds and the fuzzer): it is
/// refused here before the parser sees it.
fn short_process_information_block(data: &[u8]) -> Option<u32> {
    let (ty, len) = (data.get(0..4)?, data.get(4..8)?);
    let len = match ty {
        [0x01, 0x00, 0x00, 0x80] => u32::from_le_bytes(len.try_into().ok()?),
        [0x80, 0x00, 0x00, 0x01] => u32::from_be_bytes(len.try_into().ok()?),
        _ => return None,
    };
    (len < 12).then_some(len)
}

/// Streams a pcap or pcapng file, calling `f` for every RoCEv2 packet in capture order.
/// Refused with a message that says where: a record whose captured length exceeds the
/// snapshot or original length (a corrupt length field: "corrupt record at packet N"), a
/// link type other than Ethernet ("link type 113 is not Ethernet"), a pcapng packet on an
/// interface the capture never described.
pub fn read_capture(
    path: &Path,
    mut f: impl FnMut(RocePacket) -> Result<(), InputError>,
) -> Result<Ignored, InputError> {
    let file = File::open(path).map_err(|e| InputError::file(path, format!("cannot open: {e}")))?;
    let mut rdr = create_reader(1 << 16, file).map_err(|e| {
        InputError::file(
            path,
            format!("not a pcap or pcapng capture ({})", short(&e)),
        )
    })?;
    let mut ignored = Ignored::default();
    let mut legacy_ns = false;
    let mut legacy_snaplen = 0u32;
    // pcapng interfaces: (is Ethernet, ticks per second, if_tsoffset in seconds)
    let mut ifaces: Vec<(bool, u64, i64)> = Vec::new();
    let mut link_types: Vec<i32> = Vec::new();
    let mut buf_size = 1usize << 16;
    let mut n = 0u64;
    let pcapng = rdr.data().starts_with(&PCAPNG_MAGIC);
    loop {
        if pcapng && let Some(len) = short_process_information_block(rdr.data()) {
            return Err(InputError::file(
                path,
                format!(
                    "malformed pcapng block after packet {n}: a Process Information Block of \
                     {len} bytes (every block is at least 12)"
                ),
            ));
        }
        match rdr.next() {
            Ok((offset, block)) => {
                let mut frame: Option<(u64, Vec<u8>)> = None;
                match block {
                    PcapBlockOwned::LegacyHeader(h) => {
                        legacy_ns = h.is_nanosecond_precision();
                        legacy_snaplen = h.snaplen;
                        if h.network != pcap_parser::Linktype::ETHERNET {
                            return Err(not_ethernet(path, h.network.0));
                        }
                    }
                    PcapBlockOwned::Legacy(b) => {
                        // A length field beyond the snapshot length or the original length is
                        // corrupt: what follows would be read out of step.
                        if (legacy_snaplen > 0 && b.caplen > legacy_snaplen) || b.caplen > b.origlen
                        {
                            return Err(InputError::file(
                                path,
                                format!(
                                    "corrupt record at packet {}: captured length {} exceeds the \
                                     snapshot length {} or the original length {}",
                                    n + 1,
                                    b.caplen,
                                    legacy_snaplen,
                                    b.origlen
                                ),
                            ));
                        }
                        let sub = if legacy_ns {
                            u64::from(b.ts_usec)
                        } else {
                            u64::from(b.ts_usec) * 1000
                        };
                        let t = u64::from(b.ts_sec) * 1_000_000_000 + sub;
                        frame = Some((t, b.data.to_vec()));
                    }
                    PcapBlockOwned::NG(Block::SectionHeader(_)) => {
                        ifaces.clear();
                        link_types.clear();
                    }
                    PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
                        let Some(res) = tsresol_ticks(idb.if_tsresol) else {
                            return Err(InputError::file(
                                path,
                                format!(
                                    "interface {}: if_tsresol 0x{:02x} is beyond 2^64 ticks per second",
                                    ifaces.len(),
                                    idb.if_tsresol
                                ),
                            ));
                        };
                        ifaces.push((
                            idb.linktype == pcap_parser::Linktype::ETHERNET,
                            res,
                            idb.if_tsoffset,
                        ));
                        link_types.push(idb.linktype.0);
                    }
                    PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                        let Some(&(eth, res, off)) = ifaces.get(epb.if_id as usize) else {
                            return Err(InputError::file(
                                path,
                                format!(
                                    "packet {} is on interface {}, which the capture never \
                                     described ({} interface blocks)",
                                    n + 1,
                                    epb.if_id,
                                    ifaces.len()
                                ),
                            ));
                        };
                        if !eth && !ifaces.iter().any(|i| i.0) {
                            return Err(not_ethernet(path, idb_link(&link_types, epb.if_id)));
                        }
                        let ticks = (u128::from(epb.ts_high) << 32) | u128::from(epb.ts_low);
                        // if_tsoffset: seconds added to every timestamp (pcapng §4.2).
                        let t = (ticks * 1_000_000_000 / u128::from(res.max(1))) as i128
                            + i128::from(off) * 1_000_000_000;
                        let t = t.clamp(0, i128::from(u64::MAX)) as u64;
                        let data = epb.data.get(..epb.caplen as usize).unwrap_or(epb.data);
                        if eth {
                            frame = Some((t, data.to_vec()));
                        } else {
                            ignored.not_roce += 1;
                        }
                    }
                    _ => {}
                }
                rdr.consume(offset);
                if let Some((t, data)) = frame {
                    n += 1;
                    match parse_frame(t, &data) {
                        Ok(Some(p)) => f(p)?,
                        Ok(None) => ignored.not_roce += 1,
                        Err(()) => ignored.truncated += 1,
                    }
                }
            }
            Err(PcapError::Eof) => break,
            Err(PcapError::UnexpectedEof) => {
                // The last record is cut: keep what was read, say so.
                ignored.cut = Some(format!(
                    "capture ends inside the record after packet {n}; the {n} packets before it were replayed"
                ));
                break;
            }
            Err(PcapError::BufferTooSmall) => {
                // A record larger than the buffer: grow it (up to MAX_RECORD_BYTES) and retry.
                if buf_size >= MAX_RECORD_BYTES {
                    return Err(InputError::file(
                        path,
                        format!(
                            "record after packet {n} is larger than {} MiB",
                            MAX_RECORD_BYTES >> 20
                        ),
                    ));
                }
                buf_size = (buf_size * 2).min(MAX_RECORD_BYTES);
                if !rdr.grow(buf_size) {
                    return Err(InputError::file(
                        path,
                        format!("cannot grow the read buffer to {buf_size} bytes"),
                    ));
                }
                rdr.refill().map_err(|e| {
                    InputError::file(path, format!("cannot read after packet {n}: {}", short(&e)))
                })?;
            }
            Err(PcapError::Incomplete(_)) => {
                rdr.refill().map_err(|e| {
                    InputError::file(path, format!("cannot read after packet {n}: {}", short(&e)))
                })?;
            }
            Err(e) => {
                return Err(InputError::file(
                    path,
                    format!("malformed capture after packet {n}: {}", short(&e)),
                ));
            }
        }
    }
    Ok(ignored)
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

/// The `--out`/`--plot` file of one flow of a multi-flow capture: the flow's QP and endpoints
/// before the extension (`out.csv` → `out-qp17-10.0.0.1-10.0.0.2.csv`), so flows that share a
/// QP number between different hosts never share a file.
fn suffixed(p: &Path, k: &FlowKey) -> PathBuf {
    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("out");
    let ext = p.extension().and_then(|s| s.to_str()).unwrap_or("");
    let tag = format!("qp{}-{}-{}", k.qp, k.a, k.b).replace(':', "_");
    p.with_file_name(format!("{stem}-{tag}.{ext}"))
}

/// Replays every flow of a capture; one summary per flow (flows in order of their first ACK).
pub fn replay_capture(path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    let setup = Setup::from_params(&opts.params)?;
    // Pass 1: which flows have ACKs (decides the --out/--plot names).
    // (A set beside the ordered list: a capture may hold thousands of flows.)
    let mut order: Vec<FlowKey> = Vec::new();
    let mut seen: std::collections::HashSet<FlowKey> = std::collections::HashSet::new();
    let scan = read_capture(path, |p| {
        if p.opcode == OPCODE_RC_ACK && seen.insert(p.flow) {
            order.push(p.flow);
        }
        Ok(())
    })?;
    if order.is_empty() {
        let mut msg = String::from(
            "no RoCEv2 ACKs (UDP port 4791, BTH opcode 0x11 after the INT block) in this capture",
        );
        if let Some(cut) = &scan.cut {
            msg.push_str(&format!(" ({cut})"));
        }
        return Err(InputError::file(path, msg));
    }
    let file = path.display().to_string();
    let single = order.len() == 1;
    let mut flows: HashMap<FlowKey, (Flow, PsnExtender)> = HashMap::new();
    for k in &order {
        let name_out = |o: &Option<PathBuf>| {
            o.as_ref()
                .map(|p| if single { p.clone() } else { suffixed(p, k) })
        };
        let name = format!("{file}#qp{}({}-{})", k.qp, k.a, k.b);
        let flow = Flow::new(
            name,
            setup,
            &opts.params,
            opts.mode,
            name_out(&opts.out),
            name_out(&opts.plot),
        )?;
        flows.insert(*k, (flow, PsnExtender::default()));
    }
    let ignored = read_capture(path, |p| {
        let Some((flow, psns)) = flows.get_mut(&p.flow) else {
            return Ok(()); // data of a flow without ACKs
        };
        if p.opcode == OPCODE_RC_ACK {
            let (ack_seq, snd_nxt) = psns.on_ack(p.psn);
            flow.event(None, p.t_ns, ack_seq, snd_nxt, &p.int)
        } else {
            psns.on_data(p.psn);
            Ok(())
        }
    })?;
    let mut out = Vec::new();
    for k in &order {
        if let Some((flow, _)) = flows.remove(k) {
            let mut s = flow.finish(opts)?;
            s.detail(
                "ignored packets",
                format!(
                    "{} not RoCEv2, {} truncated",
                    ignored.not_roce, ignored.truncated
                ),
            );
            if let Some(cut) = &ignored.cut {
                s.detail("warning", cut.clone());
            }
            s.judge(opts.tolerances(&super::INFO));
            out.push(s);
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------- writer (fixtures)

/// Builds an Ethernet/IPv4/UDP(4791)/INT/BTH frame. `payload_len` bytes of zeros follow the BTH,
/// then a 4-byte ICRC (zero).
pub fn roce_frame(
    src: [u8; 4],
    dst: [u8; 4],
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
    f.extend_from_slice(&0xC000u16.to_be_bytes()); // UDP source port (entropy)
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
    write_pcapng_with(frames, snaplen, 9, 0)
}

/// [`write_pcapng`] with a chosen `if_tsresol` (raw option byte) and `if_tsoffset` (seconds,
/// written only when non-zero); timestamps `t` are in nanoseconds and converted to ticks (after
/// subtracting the offset).
pub fn write_pcapng_with(
    frames: &[(u64, Vec<u8>)],
    snaplen: u32,
    tsresol: u8,
    tsoffset_s: i64,
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

/// One flow of a generated capture: its endpoints, QP, first PSN and the generator's ACK rows
/// (one data packet of `pkt_bytes` per `pkt_bytes` of `ack_seq`, counted from `seq0`).
pub struct CaptureFlow {
    /// The data sender (the ACKs go back to it).
    pub src: [u8; 4],
    /// The receiver.
    pub dst: [u8; 4],
    /// QP number (both ends).
    pub qp: u32,
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
/// `nhop = 0`, PSNs counting up from `psn0`, modulo 2^24) paced between consecutive ACKs up to
/// each ACK's `snd_nxt`, and the ACKs (opcode 0x11, the full INT) whose PSN is that of the last
/// packet they acknowledge (InfiniBand semantics). Timestamps start at 1.7e18 ns (2023).
pub fn frames_of(flows: &[CaptureFlow]) -> Vec<(u64, Vec<u8>)> {
    let mut frames: Vec<(u64, u32, Vec<u8>)> = Vec::new(); // (t, tiebreak, frame)
    for fl in flows {
        let mut sent: u64 = 0; // packets sent so far
        let mut prev_t = 0u64;
        for r in &fl.rows {
            // Data packets paced between the previous ACK and this one, up to snd_nxt.
            let want = (r.snd_nxt - fl.seq0) / fl.pkt_bytes;
            let n = want.saturating_sub(sent);
            for i in 0..n {
                let t = prev_t + (r.t_ns - prev_t) * i / n.max(1);
                let psn = (u64::from(fl.psn0) + sent) as u32 & 0xFF_FFFF;
                let f = roce_frame(
                    fl.src,
                    fl.dst,
                    &[0x00, 0x00],
                    OPCODE_RC_WRITE_ONLY,
                    fl.qp,
                    psn,
                    1024,
                );
                frames.push((t, fl.qp, f));
                sent += 1;
            }
            // The last packet acknowledged (ack_seq counts whole packets from seq0).
            let acked = (r.ack_seq - fl.seq0) / fl.pkt_bytes;
            let psn = (u64::from(fl.psn0) + acked).wrapping_sub(1) as u32 & 0xFF_FFFF;
            frames.push((
                r.t_ns,
                fl.qp + 1000,
                roce_frame(fl.dst, fl.src, &r.int, OPCODE_RC_ACK, fl.qp, psn, 0),
            ));
            prev_t = r.t_ns;
        }
    }
    frames.sort_by_key(|(t, tie, _)| (*t, *tie));
    frames
        .into_iter()
        .map(|(t, _, f)| (t + 1_700_000_000_000_000_000, f))
        .collect()
}

/// The frames of the shipped capture: two flows (QP 17 from 10.0.0.1, QP 34 from 10.0.0.3, both
/// to 10.0.0.2) over two 1-hop/2-hop paths, 400 ACKs each, with the data packets they pace out.
/// PSNs start at 0.
pub fn capture_frames() -> Vec<(u64, Vec<u8>)> {
    use super::generate::{HopSpec, Load, PathSpec, Scenario, simulate};
    use super::reference::RefParams;
    let mk = |seed: u64, id: u16, hops: Vec<HopSpec>| Scenario {
        seed,
        acks: 400,
        params: RefParams::default(),
        pkt_bytes: 1000.0,
        paths: vec![(0, PathSpec { id, hops })],
        ts0: 1_000_000 * seed,
        tx0: 0.0,
        dup_every: 0,
        bad_every: 0,
        seq0: 0,
        ties: None,
        queue_noise_bytes: 0.0,
    };
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
        qp,
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
/// (and ACKs in flight across it) are replayed. QP 0x51 from 10.0.1.1 to 10.0.2.1 over 100G ToR
/// up, 400G spine, 100G ToR down (incast bursts on the last port); QP 0x52 from 10.0.1.2 to
/// 10.0.2.1 over a 400G spine port and a 25G ToR down port (a slower receiver).
pub fn psn_wrap_frames() -> Vec<(u64, Vec<u8>)> {
    psn_wrap_frames_with([(1 << 24) - 1_600, (1 << 24) - 200])
}

/// [`psn_wrap_frames`] with chosen first PSNs (e.g. `[0, 0]`: the same traffic, no wrap).
pub fn psn_wrap_frames_with(psn0: [u32; 2]) -> Vec<(u64, Vec<u8>)> {
    use super::generate::{HopSpec, Load, PathSpec, Scenario, simulate};
    use super::reference::RefParams;
    let mk = |seed: u64, id: u16, hops: Vec<HopSpec>| Scenario {
        seed,
        acks: 3_000,
        params: RefParams::default(),
        pkt_bytes: 1000.0,
        paths: vec![(0, PathSpec { id, hops })],
        ts0: 5_000_000 + 1_000 * seed,
        tx0: 3_000_000.0 * seed as f64,
        dup_every: 0,
        bad_every: 0,
        seq0: 0,
        ties: None,
        queue_noise_bytes: 8_000.0,
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
        qp,
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
