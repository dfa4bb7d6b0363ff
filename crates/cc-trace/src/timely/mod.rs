//! TIMELY traces: one completion per row (`t_send_ns,t_complete_ns,bytes`), and both sides'
//! parameters ([`params`]).

pub mod params;

use crate::kinds::{ESTIMATE_TOLERANCES, Key, KindInfo};
use serde::Deserialize;

/// The trace's header row, exactly.
pub const HEADER: &str = "t_send_ns,t_complete_ns,bytes";

/// One trace row.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Row {
    /// Send time, ns.
    pub t_send_ns: u64,
    /// Completion time, ns.
    pub t_complete_ns: u64,
    /// Segment size.
    pub bytes: u32,
}

/// TIMELY in the registry of trace kinds.
pub const INFO: KindInfo = KindInfo {
    name: "timely",
    title: "TIMELY",
    about: "TIMELY RTT traces",
    header: HEADER,
    rows: "one completion per row (NIC clock, ns; segment bytes)",
    agreement: "branch",
    rel_err_of: Some("rate"),
    has_forced_mode: true,
    meaningful: "a completion whose RTT (other than 0 ns) takes a rate branch (low, high, hai, inc, dec)",
    reads_captures: false,
    tolerances: ESTIMATE_TOLERANCES,
    keys: &[
        Key {
            name: "line_rate_bps",
            default: "10000000000",
            unit: "b/s",
            limits: "≥ 1000000; sets max_rate_bps and init_rate_bps unless they are set",
            aka: &[],
        },
        Key {
            name: "min_rate_bps",
            default: "10000000",
            unit: "b/s",
            limits: "> 0, ≤ max_rate_bps",
            aka: &[],
        },
        Key {
            name: "max_rate_bps",
            default: "line_rate_bps",
            unit: "b/s",
            limits: "≤ 549755813760 (2^32 − 1 units of 128 b/s)",
            aka: &[],
        },
        Key {
            name: "init_rate_bps",
            default: "max_rate_bps",
            unit: "b/s",
            limits: "in [min_rate_bps, max_rate_bps]",
            aka: &[],
        },
        Key {
            name: "t_low_ns",
            default: "50000",
            unit: "ns",
            limits: "≤ t_high_ns",
            aka: &[],
        },
        Key {
            name: "t_high_ns",
            default: "500000",
            unit: "ns",
            limits: "1 ..= 134217727 (the RTT format's top, 2^27 − 1)",
            aka: &[],
        },
        Key {
            name: "min_rtt_ns",
            default: "20000",
            unit: "ns",
            limits: "> 0; beta/min_rtt_ns must be representable",
            aka: &[],
        },
        Key {
            name: "alpha",
            default: "0.875",
            unit: "ratio",
            limits: "[1/16, 1], decimal or a/b",
            aka: &[],
        },
        Key {
            name: "beta",
            default: "0.8",
            unit: "ratio",
            limits: "(0, 1], decimal or a/b",
            aka: &[],
        },
        Key {
            name: "delta_bps",
            default: "10000000",
            unit: "b/s",
            limits: "> 0",
            aka: &[],
        },
        Key {
            name: "hai_n",
            default: "5",
            unit: "multiplier",
            limits: "≥ 1",
            aka: &[],
        },
        Key {
            name: "hai_after",
            default: "5",
            unit: "completions",
            limits: "≤ 255",
            aka: &[],
        },
        Key {
            name: "app_limited",
            default: "off",
            unit: "ratio of the rate",
            limits: "(0, 1] or off (§5 rule)",
            aka: &[],
        },
        Key {
            name: "per_completion_scaling",
            default: "false",
            unit: "boolean",
            limits: "true/false (§5 rule)",
            aka: &[],
        },
    ],
};
