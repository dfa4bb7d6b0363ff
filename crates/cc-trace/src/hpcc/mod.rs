//! HPCC INT traces: one ACK per row (`t_ns,ack_seq,snd_nxt,int`, the INT block as hex as on the
//! wire), and both sides' parameters ([`params`]).

pub mod params;

pub use params::Setup;

use crate::InputError;
use crate::kinds::{ESTIMATE_TOLERANCES, Key, KindInfo};
use std::path::Path;

/// The trace's header row, exactly.
pub const HEADER: &str = "t_ns,ack_seq,snd_nxt,int";

/// One row of an INT trace (`t_ns,ack_seq,snd_nxt,int`).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Row {
    /// Trace time, ns.
    pub t_ns: u64,
    /// The ACK's sequence number.
    pub ack_seq: u32,
    /// The sender's `snd_nxt` when the ACK arrived.
    pub snd_nxt: u32,
    /// The INT block as hex, exactly as on the wire.
    pub int: String,
}

impl Row {
    /// The INT block's bytes, naming `path:line` and the field when the hex is bad.
    pub fn int_bytes(&self, path: &Path, line: u64) -> Result<Vec<u8>, InputError> {
        let mut v = Vec::new();
        self.int_bytes_into(path, line, &mut v)?;
        Ok(v)
    }

    /// [`int_bytes`](Self::int_bytes) into `out` (cleared first), reusing its allocation.
    pub fn int_bytes_into(
        &self,
        path: &Path,
        line: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), InputError> {
        hex_bytes_into(&self.int, out)
            .map_err(|e| InputError::at(path, line, format!("field int: {e}")))
    }
}

/// Each byte's value as a hex digit, 16 for a byte that is not one.
const HEX_VALUE: [u8; 256] = {
    let mut t = [16u8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// Decodes lowercase/uppercase hex (no separators, no signs) into bytes.
pub fn hex_bytes(s: &str) -> Result<Vec<u8>, String> {
    let mut v = Vec::new();
    hex_bytes_into(s, &mut v)?;
    Ok(v)
}

/// [`hex_bytes`] into `out` (cleared first, and left empty on an error), reusing its
/// allocation. Leading and trailing whitespace is ignored; every other character must be a hex
/// digit.
pub fn hex_bytes_into(s: &str, out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    let s = s.trim();
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd number of hex digits ({})", s.len()));
    }
    out.reserve(s.len() / 2);
    for (k, pair) in s.as_bytes().chunks_exact(2).enumerate() {
        let (hi, lo) = (pair.first().copied(), pair.get(1).copied());
        let value = |c: Option<u8>| HEX_VALUE[usize::from(c.unwrap_or(b'g'))];
        match (value(hi), value(lo)) {
            (h, l) if h < 16 && l < 16 => out.push(h << 4 | l),
            _ => {
                out.clear();
                let i = 2 * k;
                return Err(format!(
                    "not hex at character {}: {:?}",
                    i + 1,
                    s.get(i..i + 2).unwrap_or("")
                ));
            }
        }
    }
    Ok(())
}

/// HPCC in the registry of trace kinds.
pub const INFO: KindInfo = KindInfo {
    name: "hpcc",
    title: "HPCC",
    about: "HPCC INT traces and RoCEv2 captures",
    header: HEADER,
    rows: "one ACK per row (the INT block as lowercase hex, as on the wire); or a RoCEv2 capture (.pcap/.pcapng/.cap, any case): one result per flow",
    agreement: "branch",
    rel_err_of: Some("window"),
    has_forced_mode: true,
    meaningful: "an ACK, not ahead of snd_nxt, that takes ai or md",
    reads_captures: true,
    tolerances: ESTIMATE_TOLERANCES,
    keys: &[
        Key {
            name: "nic_rate_bps",
            default: "100000000000",
            unit: "b/s",
            limits: "1e6 ..= 1e13; nic_rate_bps·base_rtt_ns < 16 MiB",
            aka: &["line_rate_bps"],
        },
        Key {
            name: "base_rtt_ns",
            default: "13000",
            unit: "ns (T)",
            limits: "1000 ..= 16777215",
            aka: &[],
        },
        Key {
            name: "eta",
            default: "0.95",
            unit: "ratio",
            limits: "(0, 1], decimal or a/b",
            aka: &[],
        },
        Key {
            name: "max_stage",
            default: "5",
            unit: "stages",
            limits: "0 ..= 255",
            aka: &[],
        },
        Key {
            name: "w_ai_bytes",
            default: "80",
            unit: "bytes",
            limits: "≤ W_max = nic_rate_bps·T",
            aka: &[],
        },
        Key {
            name: "min_rate_bps",
            default: "100000000",
            unit: "b/s",
            limits: "> 0, ≤ nic_rate_bps, min_rate_bps·T ≥ 16 bytes",
            aka: &[],
        },
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character of the INT column is a hex digit: a sign (which `u8::from_str_radix`
    /// would read, `+f` as 0x0f), a space or a non-ASCII character inside is an error naming
    /// where; surrounding whitespace is ignored; a failed decode leaves the buffer empty.
    #[test]
    fn int_hex_is_hex_digits_only() {
        assert_eq!(hex_bytes(" 00fFa5 "), Ok(vec![0x00, 0xff, 0xa5]));
        assert_eq!(hex_bytes(""), Ok(vec![]));
        assert_eq!(
            hex_bytes("00+f"),
            Err("not hex at character 3: \"+f\"".to_string())
        );
        assert_eq!(
            hex_bytes("a b0"),
            Err("not hex at character 1: \"a \"".to_string())
        );
        assert_eq!(
            hex_bytes("0é0"),
            Err("not hex at character 1: \"\"".to_string())
        );
        assert_eq!(
            hex_bytes("abc"),
            Err("odd number of hex digits (3)".to_string())
        );
        let mut buf = vec![1, 2, 3];
        assert!(hex_bytes_into("00zz", &mut buf).is_err());
        assert!(buf.is_empty());
        hex_bytes_into("0102", &mut buf).unwrap();
        assert_eq!(buf, [1, 2]);
    }
}

/// One generated ACK.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckRow {
    /// Receive time at the sender, ns.
    pub t_ns: u64,
    /// Cumulative ACK (bytes, from `seq0`; not reduced modulo 2^32).
    pub ack_seq: u64,
    /// Next byte to send, at the time of the ACK (as `ack_seq`).
    pub snd_nxt: u64,
    /// The INT block as on the wire.
    pub int: Vec<u8>,
}
