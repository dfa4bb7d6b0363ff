//! Building RoCEv2 frames with HPCC's INT block, and writing pcap and pcapng files.

use super::*;

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
    pub rows: Vec<crate::hpcc::AckRow>,
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
