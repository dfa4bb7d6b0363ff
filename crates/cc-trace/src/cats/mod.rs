//! CATS conductor traces: one event per row (`t_ns,event,prio,bytes`), the event rule, and both
//! sides' parameters ([`params`]).

pub mod params;

pub use params::{Setup, setup};

use crate::InputError;
use crate::kinds::{Key, KindInfo, ORDER_TOLERANCES};
use cats_conductor::Prio;
use serde::Deserialize;
use std::path::Path;

/// The trace's header row, exactly.
pub const HEADER: &str = "t_ns,event,prio,bytes";

/// Messages per priority queue on both sides (the firmware's const-generic capacity).
pub const QUEUE_CAPACITY: usize = 1024;

/// Default free send-buffer space at the start, bytes.
pub const DEFAULT_SND_BUF_BYTES: u64 = 131_072;

/// The most chunks one `ack` or `feed` event may find queued (2^20): the replay compares an
/// event's chunks in memory (48 bytes each), so a trace asking for more is bad input at that
/// line rather than a replay that runs out of memory.
pub const MAX_CHUNKS_PER_EVENT: u64 = 1 << 20;

/// One row of a CATS event trace, as written (`t_ns,event,prio,bytes`).
#[derive(Debug, Clone, Deserialize)]
pub struct Row {
    /// Trace time, ns.
    pub t_ns: u64,
    /// `enqueue`, `ack` or `feed`.
    pub event: String,
    /// Priority 0..=4 (enqueue only).
    pub prio: Option<u8>,
    /// Message length (enqueue) or freed send-buffer space (ack), bytes.
    pub bytes: Option<u64>,
}

/// A decoded trace event (docs/cats.md § "`sim-host replay cats`").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Queue a message of `len_bytes` at `prio`, then make exactly one feed attempt.
    Enqueue {
        /// Its priority.
        prio: Prio,
        /// Its length, bytes (< 2^32).
        len_bytes: u32,
    },
    /// `bytes` of send-buffer space become free; then feed until nothing is sent.
    Ack {
        /// Space freed, bytes.
        bytes: u64,
    },
    /// Feed until nothing is sent.
    Feed,
}

impl Event {
    /// The CATS event rule, the one place it is written (the replay, the host bench and fw-bench
    /// all use it): after the event's own effect ([`freed_bytes`](Self::freed_bytes) of space
    /// for an `ack`, the message for an `enqueue`), `decide` is called until it sends nothing —
    /// at most once after an `enqueue`, without limit after an `ack` or a `feed`. `decide`
    /// returns whether a chunk was sent (or an error, which stops the feeding).
    pub fn feed<E>(self, mut decide: impl FnMut() -> Result<bool, E>) -> Result<(), E> {
        let attempts = match self {
            Event::Enqueue { .. } => 1,
            Event::Ack { .. } | Event::Feed => u64::MAX,
        };
        let mut n = 0;
        while n < attempts && decide()? {
            n += 1;
        }
        Ok(())
    }

    /// Send-buffer space the event frees (an `ack`'s bytes; 0 otherwise).
    pub fn freed_bytes(self) -> u64 {
        match self {
            Event::Ack { bytes } => bytes,
            Event::Enqueue { .. } | Event::Feed => 0,
        }
    }
}

impl Row {
    /// Decodes the row, naming `path:line` and the field on any problem.
    pub fn event(&self, path: &Path, line: u64) -> Result<Event, InputError> {
        match self.event.as_str() {
            "enqueue" => {
                let p = self
                    .prio
                    .ok_or_else(|| InputError::at(path, line, "enqueue needs a prio (0..=4)"))?;
                let prio = Prio::from_index(usize::from(p)).ok_or_else(|| {
                    InputError::at(path, line, format!("prio {p}: must be 0..=4"))
                })?;
                let bytes = self
                    .bytes
                    .ok_or_else(|| InputError::at(path, line, "enqueue needs bytes"))?;
                let len_bytes = u32::try_from(bytes).map_err(|_| {
                    InputError::at(
                        path,
                        line,
                        format!("bytes {bytes}: a message is < 2^32 bytes"),
                    )
                })?;
                Ok(Event::Enqueue { prio, len_bytes })
            }
            "ack" => Ok(Event::Ack {
                bytes: self
                    .bytes
                    .ok_or_else(|| InputError::at(path, line, "ack needs bytes"))?,
            }),
            "feed" => Ok(Event::Feed),
            other => Err(InputError::at(
                path,
                line,
                format!("event {other:?}: expected enqueue, ack or feed"),
            )),
        }
    }
}

/// CATS in the registry of trace kinds.
pub const INFO: KindInfo = KindInfo {
    name: "cats",
    title: "CATS",
    about: "CATS conductor event traces",
    header: HEADER,
    rows: "one event per row: `enqueue` (prio 0-4, bytes), `ack` (bytes of send buffer freed), `feed`",
    agreement: "order",
    rel_err_of: None,
    has_forced_mode: true,
    meaningful: "an event that led to a chunk both sides chose (the agreement counts the chunks)",
    reads_captures: false,
    tolerances: ORDER_TOLERANCES,
    keys: &[
        Key {
            name: "mss_bytes",
            default: "1460",
            unit: "bytes",
            limits: "1 ..= 65535",
            aka: &[],
        },
        Key {
            name: "snd_buf_bytes",
            default: "131072",
            unit: "bytes free at the start",
            limits: "whole number",
            aka: &[],
        },
        Key {
            name: "h0",
            default: "60000",
            unit: "bytes (high watermark)",
            limits: "≤ 16777215",
            aka: &[],
        },
        Key {
            name: "h1",
            default: "30000",
            unit: "bytes (high watermark)",
            limits: "≤ 16777215",
            aka: &[],
        },
        Key {
            name: "h2",
            default: "15000",
            unit: "bytes (high watermark)",
            limits: "≤ 16777215",
            aka: &[],
        },
        Key {
            name: "h3",
            default: "6000",
            unit: "bytes (high watermark)",
            limits: "≤ 16777215",
            aka: &[],
        },
        Key {
            name: "l0",
            default: "h0/2",
            unit: "bytes (low watermark)",
            limits: "> 0, < h0",
            aka: &[],
        },
        Key {
            name: "l1",
            default: "h1/2",
            unit: "bytes (low watermark)",
            limits: "> 0, < h1",
            aka: &[],
        },
        Key {
            name: "l2",
            default: "h2/2",
            unit: "bytes (low watermark)",
            limits: "> 0, < h2",
            aka: &[],
        },
        Key {
            name: "l3",
            default: "h3/2",
            unit: "bytes (low watermark)",
            limits: "> 0, < h3",
            aka: &[],
        },
        Key {
            name: "m0",
            default: "0.25",
            unit: "payback multiplier",
            limits: "decimal ≥ 0, ≤ 64, rounded to 2^-16; m0+…+m4 > 0",
            aka: &[],
        },
        Key {
            name: "m1",
            default: "0.5",
            unit: "payback multiplier",
            limits: "decimal ≥ 0, ≤ 64, rounded to 2^-16; m0+…+m4 > 0",
            aka: &[],
        },
        Key {
            name: "m2",
            default: "1",
            unit: "payback multiplier",
            limits: "decimal ≥ 0, ≤ 64, rounded to 2^-16; m0+…+m4 > 0",
            aka: &[],
        },
        Key {
            name: "m3",
            default: "1.5",
            unit: "payback multiplier",
            limits: "decimal ≥ 0, ≤ 64, rounded to 2^-16; m0+…+m4 > 0",
            aka: &[],
        },
        Key {
            name: "m4",
            default: "2",
            unit: "payback multiplier",
            limits: "decimal ≥ 0, ≤ 64, rounded to 2^-16; m0+…+m4 > 0",
            aka: &[],
        },
    ],
};
