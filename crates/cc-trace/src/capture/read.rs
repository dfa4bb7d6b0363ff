//! Reading pcap and pcapng files: headers, link types, timestamps, the section's `# set` comments.

use super::*;
use crate::{InputError, Param, comment_param, param_unset};
use std::fs::File;
use std::io::Read;
use std::path::Path;

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
/// header, in order; none for a pcap, whose header has no room for them. A
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
