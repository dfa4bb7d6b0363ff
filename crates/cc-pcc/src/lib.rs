//! NVIDIA DOCA PCC adapter for the BlueField-3 DPA: the platform's events in, a rate as a
//! 20-bit fraction of line rate and a probe request out, the flow's state in the platform's
//! 48-byte context. `no_std`, no allocation, no floats, no panics and no division per event
//! (the firmware gates prove it on the probe binary).
//!
//! * [`event`]: the 44-byte event as the SDK's getters read it (one layout table,
//!   [`event::LAYOUT`], drives decode and encode) and the 12-byte switch-telemetry record.
//! * [`params`]: the parameter table the C side declares from, and its validated
//!   configuration (`set_params` = `doca_pcc_dev_user_set_algo_params`).
//! * [`counters`]: the counter table.
//! * [`timely`]: TIMELY on probe RTTs, Algorithm 1 from `timely_cc::State::on_rtt`.
//!
//! One call per event, as `doca_pcc_dev_user_algo` makes it:
//!
//! ```
//! use cc_pcc::{Counters, Event, FlowContext, TimelyPccConfig, Tx, timely_on_event};
//! let cfg = TimelyPccConfig::DEFAULT;
//! let mut ctx: FlowContext = [0; 12]; // the platform zeroes a new flow's context
//! let mut counters = Counters::default();
//! // A TX event at t = 1 000 ns (type 3): the flow starts at line rate and asks for a probe.
//! let spec = Event::tx_spec(&Tx { first_ts_ns: 1_000, packets: 1, sent_32b_units: 32, qpn: 9 });
//! let tx = Event { type_code: 3, subtype: 0, port: 0, flags: 0, flow_tag: 7, sn: 0,
//!                  ts_ns: 1_000, spec };
//! let r = timely_on_event(&cfg, &mut ctx, &Event::decode(&tx.encode()), &mut counters);
//! assert_eq!((r.rate_q20, r.rtt_req), (1 << 20, true));
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![deny(
    clippy::float_arithmetic,
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::unwrap_used,
    clippy::cast_possible_truncation
)]

pub mod counters;
pub mod event;
pub mod hpcc;
pub mod params;
mod probe;
pub mod timely;

pub use counters::{COUNTER_NAMES, COUNTER_NUM, Counter, Counters};
pub use event::{
    Ack, EVENT_BYTES, Event, EventType, Field, LAYOUT, RTT_RAW_DATA_OFFSET, Rtt, TELEMETRY_BYTES,
    Telemetry, Tx, nack_subtype, tx_flag, type_code,
};
pub use hpcc::{
    DocaHop, HPCC_PARAM_NUM, HPCC_PARAMS, HpccFlow, HpccParamError, HpccPccConfig, hpcc_on_event,
};
pub use params::{ParamDef, ParamError, Q20_ONE, TIMELY_PARAM_NUM, TIMELY_PARAMS, TimelyPccConfig};
pub use timely::{TimelyFlow, timely_on_event};

/// Words of the platform's per-flow context (`uint32_t data[12]`, 48 bytes).
pub const CONTEXT_WORDS: usize = 12;

// The platform's limits: at most 38 parameters and 63 counters per algorithm.
const _: () = assert!(TIMELY_PARAM_NUM <= 38);
const _: () = assert!(COUNTER_NUM <= 63);

/// The per-flow context as the platform stores it between events of the flow.
pub type FlowContext = [u32; CONTEXT_WORDS];

/// What one event asks of the platform: `doca_pcc_dev_results_t`'s `rate` and `rtt_req`. The
/// results' other fields (`probe_type_slot`, `credits`, `reload_credits`) are not the adapter's:
/// the C glue sets them as NVIDIA's samples do (examples/doca-pcc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PccResult {
    /// Rate as a fraction of line rate in Q20: `1 ..= 1 << 20` (`1 << 20` = line rate).
    pub rate_q20: u32,
    /// Send an RTT probe.
    pub rtt_req: bool,
}

#[cfg(test)]
mod tests;

// The README (what crates.io shows) runs its example as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
