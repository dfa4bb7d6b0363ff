//! `sim-host`: the command-line tool over the workspace's host libraries. One module per
//! subcommand owns its text, plots, files and exit codes:
//!
//! * [`replay`]: traces and captures through the fixed-point crates and the f64 references
//!   (the verifier is `cc-replay`);
//! * [`sim`]: the packet-level simulator (`cc-netsim`), with [`sim::sweep`] (`sweep`, `merge`)
//!   and [`sim::slowdown`] (`slowdown`);
//! * [`fixtures`]: the shipped fixtures, made by `cc-replay`'s generators and, for the DOCA PCC
//!   streams recorded from the closed loop, by the simulator ([`recorded`]).
//!
//! The libraries' modules are re-exported under the names the command line and the tests use
//! (`sim_host::timely`, `sim_host::trace`, …). The crate's documentation is for its developers
//! (`cargo doc --document-private-items`).
#![allow(rustdoc::private_intra_doc_links)]

pub use cc_output::{output, plot};
pub use cc_replay::{cats, driver, files, hpcc, kinds, opts, pacer, pcc, summary, timely};
/// The trace reader, parameters and the registry of trace kinds (`cc-trace`).
pub use cc_trace as trace;

pub mod cli;
pub mod fixtures;
pub mod int;
pub mod recorded;
pub mod replay;
pub mod sim;
