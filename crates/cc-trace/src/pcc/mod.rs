//! DOCA PCC event traces: one platform event per row
//! (`type,subtype,flags,flow,ts_ns,a,b,c,telemetry`), replayed through the `cc-pcc` adapter and the
//! f64 reference of the same conventions; both sides' parameters ([`params`]). One algorithm per
//! trace (`# set algorithm=timely|hpcc`); the other keys are that algorithm's parameter table.
//!
//! `a,b,c` are the event union's fields by type (docs/pcc.md, "Replay"): TX first timestamp,
//! sent 32-byte units, packets; ACK/NACK/CNP first timestamp, first sequence number, number
//! coalesced; RTT (TIMELY) request send, request receive, response send timestamps — an RTT row
//! under HPCC carries the telemetry record instead (the platform's raw data overlays the
//! timestamps) and leaves them empty; a `param` row (the platform's `set_algo_params`) the
//! parameter id and its new value. `flags` is the attribute word's flags byte (TX: bit 2
//! `RTT_REQ_SENT`, the requested probe has left).

pub mod params;

use crate::kinds::{ESTIMATE_TOLERANCES, Key, KindInfo};

/// The trace's header row, exactly.
pub const HEADER: &str = "type,subtype,flags,flow,ts_ns,a,b,c,telemetry";

/// One row of a DOCA PCC event trace.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Row {
    /// `tx`, `ack`, `nack`, `cnp`, `rtt` (or the platform's type code, 0–255), or `param`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The attribute word's subtype byte (NACK: RNR, out of sequence, duplicate read).
    pub subtype: Option<u8>,
    /// The attribute word's flags byte (TX: 1 ACK expected, 2 overloaded, 4 RTT request sent);
    /// empty is 0.
    pub flags: Option<u8>,
    /// Flow tag: each flow has its own 48-byte context.
    pub flow: u32,
    /// Event timestamp, ns on the platform's 32-bit clock.
    pub ts_ns: u32,
    /// First union field (see the module doc).
    pub a: Option<u32>,
    /// Second union field.
    pub b: Option<u32>,
    /// Third union field.
    pub c: Option<u32>,
    /// The RTT response's 12-byte switch-telemetry record as hex (HPCC only; empty otherwise).
    pub telemetry: String,
}

/// The adapter's HPCC parameter table as `# set` keys: the table's names in lower case, in id
/// order (a test checks them against `cc_pcc::HPCC_PARAMS`).
pub const HPCC_KEYS: [&str; 8] = [
    "line_rate_mbps",
    "base_rtt_ns",
    "eta_milli",
    "max_stage",
    "w_ai_bytes",
    "min_rate_mbps",
    "link_speed_code",
    "probe_timeout_ns",
];

/// The adapter's TIMELY parameter table as `# set` keys: the table's names in lower case, in id
/// order (a test checks them against `cc_pcc::TIMELY_PARAMS`).
pub const TIMELY_KEYS: [&str; 13] = [
    "line_rate_mbps",
    "min_rate_mbps",
    "init_rate_q20",
    "t_low_ns",
    "t_high_ns",
    "min_rtt_ns",
    "alpha_milli",
    "beta_milli",
    "delta_mbps",
    "hai_n",
    "hai_after",
    "probe_timeout_ns",
    "keep_turnaround",
];

const fn key(
    name: &'static str,
    default: &'static str,
    unit: &'static str,
    limits: &'static str,
) -> Key {
    Key {
        name,
        default,
        unit,
        limits,
        aka: &[],
    }
}

/// DOCA PCC event traces in the registry of trace kinds.
pub const INFO: KindInfo = KindInfo {
    name: "pcc",
    title: "DOCA PCC",
    about: "DOCA PCC event traces (TIMELY on probe RTTs, HPCC on switch telemetry, through the \
            cc-pcc adapter)",
    header: HEADER,
    rows: "one platform event per row (type tx/ack/nack/cnp/rtt or its code, subtype, flags \
           byte, flow tag, 32-bit ns timestamp, the union's fields a,b,c, telemetry hex: an \
           rtt row carries timestamps under timely and the telemetry record under hpcc), or a \
           `param` row (a = parameter id, b = new value) applied to both sides at that point",
    agreement: "branch",
    rel_err_of: Some("rate"),
    has_forced_mode: false,
    meaningful: "a probe answer that steps Algorithm 1 (TIMELY: not init; HPCC: ai, md); TX, ACK, NACK and CNP events and late answers are compared but not meaningful, and the share is of the probe answers",
    reads_captures: false,
    tolerances: ESTIMATE_TOLERANCES,
    keys: &[
        key(
            "algorithm",
            "timely",
            "name",
            "timely or hpcc: the table the other keys come from",
        ),
        key(
            "line_rate_mbps",
            "10000 (timely) · 100000 (hpcc)",
            "Mb/s",
            "timely 1 ..= 400000 · hpcc 1 ..= 10000000",
        ),
        key(
            "min_rate_mbps",
            "10 (timely) · 100 (hpcc)",
            "Mb/s",
            "timely 1 ..= 400000 · hpcc 1 ..= 10000000; ≤ line_rate_mbps",
        ),
        key(
            "init_rate_q20",
            "1048576",
            "Q20 of line rate",
            "timely: 1 ..= 1048576",
        ),
        key(
            "t_low_ns",
            "50000",
            "ns",
            "timely: 0 ..= 134217727, ≤ t_high_ns",
        ),
        key("t_high_ns", "500000", "ns", "timely: 1 ..= 134217727"),
        key("min_rtt_ns", "20000", "ns", "timely: 1 ..= 134217727"),
        key("alpha_milli", "875", "1/1000", "timely: 63 ..= 1000"),
        key("beta_milli", "800", "1/1000", "timely: 1 ..= 1000"),
        key("delta_mbps", "10", "Mb/s", "timely: 1 ..= 400000"),
        key("hai_n", "5", "multiplier", "timely: 1 ..= 255"),
        key("hai_after", "5", "samples", "timely: 0 ..= 255"),
        key(
            "probe_timeout_ns",
            "300000",
            "ns",
            "1000 ..= 2147483647 (timely and hpcc)",
        ),
        key("keep_turnaround", "0", "bool (0/1)", "timely: 0 ..= 1"),
        key("base_rtt_ns", "13000", "ns", "hpcc: 1000 ..= 16777215"),
        key("eta_milli", "950", "1/1000", "hpcc: 1 ..= 1000"),
        key("max_stage", "5", "rounds", "hpcc: 0 ..= 255"),
        key("w_ai_bytes", "80", "bytes", "hpcc: 0 ..= 16777215"),
        key(
            "link_speed_code",
            "5",
            "INT speed code",
            "hpcc: 1 ..= 9 (1 = 10G … 5 = 100G … 9 = 1.6T)",
        ),
    ],
};

/// A row's event type: a documented name, a type code, or a parameter change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowType {
    /// A platform event with this type code.
    Event(u8),
    /// `set_algo_params` with one value.
    Param,
}

/// The documented event types by the name a row gives them (type codes of docs/pcc.md).
const TYPE_NAMES: [(&str, u8); 5] = [("cnp", 2), ("tx", 3), ("ack", 4), ("nack", 5), ("rtt", 6)];

/// Parses the `type` field.
pub fn row_type(s: &str) -> Option<RowType> {
    if s == "param" {
        return Some(RowType::Param);
    }
    Some(RowType::Event(match TYPE_NAMES.iter().find(|t| t.0 == s) {
        Some(&(_, code)) => code,
        None => s.parse().ok()?,
    }))
}

/// The row name of a documented type code (`None` for an undocumented one, which a row gives
/// as its number).
pub fn row_name(code: u8) -> Option<&'static str> {
    TYPE_NAMES.iter().find(|t| t.1 == code).map(|t| t.0)
}
