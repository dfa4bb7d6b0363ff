//! Segment-pacer traces: one event per row (`t_ns,event,flow,value`), and the replay's
//! parameters ([`params`]).

pub mod params;

pub use params::{Setup, setup};

use crate::InputError;
use crate::kinds::{Key, KindInfo, ORDER_TOLERANCES};
use serde::Deserialize;
use std::path::Path;

/// The trace's header row, exactly.
pub const HEADER: &str = "t_ns,event,flow,value";

/// One trace row, as written.
#[derive(Debug, Clone, Deserialize)]
pub struct Row {
    /// Trace time, ns.
    pub t_ns: u64,
    /// `rate`, `window`, `enqueue`, `ack` or `tick`.
    pub event: String,
    /// Flow number (not needed for `tick`).
    pub flow: Option<u32>,
    /// b/s for `rate`, bytes otherwise (not needed for `tick`).
    pub value: Option<u64>,
}

/// A decoded event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Rate, b/s.
    Rate(u32, u64),
    /// Window, bytes.
    Window(u32, u32),
    /// More bytes.
    Enqueue(u32, u32),
    /// Bytes acknowledged.
    Ack(u32, u32),
    /// Nothing.
    Tick,
}

impl Event {
    /// The flow the event is about.
    pub fn flow(self) -> Option<u32> {
        match self {
            Event::Rate(f, _) | Event::Window(f, _) | Event::Enqueue(f, _) | Event::Ack(f, _) => {
                Some(f)
            }
            Event::Tick => None,
        }
    }
}

impl Row {
    /// Decodes the row, naming `path:line` on any problem.
    pub fn event(&self, path: &Path, line: u64) -> Result<Event, InputError> {
        let err = |m: String| InputError::at(path, line, m);
        if self.event == "tick" {
            return Ok(Event::Tick);
        }
        let flow = self
            .flow
            .ok_or_else(|| err(format!("{} needs a flow", self.event)))?;
        let value = self
            .value
            .ok_or_else(|| err(format!("{} needs a value", self.event)))?;
        let bytes = || {
            u32::try_from(value)
                .map_err(|_| err(format!("value {value}: bytes must be < 2^32 in one row")))
        };
        Ok(match self.event.as_str() {
            "rate" => Event::Rate(flow, value),
            "window" => Event::Window(flow, bytes()?),
            "enqueue" => Event::Enqueue(flow, bytes()?),
            "ack" => Event::Ack(flow, bytes()?),
            other => {
                return Err(err(format!(
                    "event {other:?}: expected rate, window, enqueue, ack or tick"
                )));
            }
        })
    }
}

/// The segment pacer in the registry of trace kinds.
pub const INFO: KindInfo = KindInfo {
    name: "pacer",
    title: "Pacer",
    about: "segment pacer event traces (cc-pacer)",
    header: HEADER,
    rows: "rows in time order; events `rate` (b/s), `window` (bytes; makes a window flow), `enqueue` (bytes), `ack` (bytes), `tick` (flow and value may be empty); both schedules must agree on the order of segments and within 1 ns on every send time",
    agreement: "order",
    rel_err_of: None,
    has_forced_mode: false,
    meaningful: "an event that led to a segment both sides sent (the agreement counts the segments)",
    reads_captures: false,
    tolerances: ORDER_TOLERANCES,
    keys: &[
        Key {
            name: "line_rate_bps",
            default: "100000000000",
            unit: "b/s",
            limits: "≥ the pacer's lowest rate",
            aka: &[],
        },
        Key {
            name: "seg_bytes",
            default: "16384",
            unit: "bytes per segment",
            limits: "a multiple of 256 in 256 ..= 65536",
            aka: &[],
        },
        Key {
            name: "seg_bytes.<flow>",
            default: "seg_bytes",
            unit: "bytes per segment of one flow",
            limits: "a multiple of 256 in 256 ..= 65536",
            aka: &[],
        },
        Key {
            name: "init_rate_bps",
            default: "line_rate_bps",
            unit: "b/s before a flow's first `rate` row",
            limits: "whole number",
            aka: &[],
        },
        Key {
            name: "hybrid_rate_bps",
            default: "off",
            unit: "b/s of the hybrid burst pacer (§5)",
            limits: "≤ line_rate_bps",
            aka: &[],
        },
        Key {
            name: "burst_bytes",
            default: "4096",
            unit: "bytes per hybrid burst",
            limits: "1 ..= 65536; only with hybrid_rate_bps",
            aka: &[],
        },
    ],
};
