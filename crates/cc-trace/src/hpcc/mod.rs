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
        hex_bytes(&self.int).map_err(|e| InputError::at(path, line, format!("field int: {e}")))
    }
}

/// Decodes lowercase/uppercase hex (no separators) into bytes.
pub fn hex_bytes(s: &str) -> Result<Vec<u8>, String> {
    let s = s.trim();
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd number of hex digits ({})", s.len()));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(s.get(i..i + 2).unwrap_or("??"), 16).map_err(|_| {
                format!(
                    "not hex at character {}: {:?}",
                    i + 1,
                    s.get(i..i + 2).unwrap_or("")
                )
            })
        })
        .collect()
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
