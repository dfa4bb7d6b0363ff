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
//! The libraries are used under their own names (`cc_replay::timely`, `cc_netsim::scenario`,
//! `cc_trace::Param`, …). The crate's documentation is for its developers
//! (`cargo doc --document-private-items`).
#![allow(rustdoc::private_intra_doc_links)]

pub mod cli;
pub mod fixtures;
pub mod int;
pub mod recorded;
pub mod replay;
pub mod sim;
