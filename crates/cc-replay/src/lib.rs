//! `cc-replay`: replays recorded RTT, INT and event traces (CSV, and RoCEv2 captures for HPCC)
//! through the fixed-point firmware crates and independent f64 references written from the
//! papers, side by side, and says per event and in total whether they agree.
//!
//! Data flows one way: a trace reader (`cc-trace`) yields events → the one replay driver
//! ([`driver`]) feeds each event to the fixed-point crate (through its public API, exactly as
//! firmware would) and to the f64 reference (`cc-reference`) → per-event pairs are compared →
//! a [`summary::Summary`] per trace with its verdict. The `sim-host replay` command renders the
//! summaries as text, JSON, CSV and SVG; this crate writes only the per-event outputs a replay
//! is asked for (`--out`, `--plot`).
//!
//! Each trace kind is one folder ([`timely`], [`hpcc`], [`cats`], [`pacer`], [`pcc`]) and one line
//! in the registry ([`kinds`]). The deterministic generators of the shipped fixtures are behind
//! the `generate` feature.
//!
//! The crate never depends on the simulator (`cc-netsim`); the simulator never depends on it.
//!
//! ```
//! use cc_replay::{files::replay_file, opts::ReplayOpts};
//! use std::path::Path;
//!
//! let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/timely/incast.csv");
//! // Detects the kind from the header row and replays both sides event by event.
//! let summaries = replay_file(None, &trace, &trace, &ReplayOpts::default()).unwrap();
//! assert_eq!(summaries[0].kind, "timely");
//! assert!(summaries[0].within_tolerance);
//! ```
//!
//! Its documentation is also for its developers (`cargo doc --document-private-items`): module
//! pages link to the private items they describe.
#![allow(rustdoc::private_intra_doc_links)]

pub mod cats;
pub mod driver;
pub mod files;
pub mod hpcc;
pub mod kinds;
pub mod opts;
pub mod pacer;
pub mod pcc;
pub mod summary;
pub mod timely;
