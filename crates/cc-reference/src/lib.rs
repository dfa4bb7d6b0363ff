//! The f64 references: each algorithm written from its paper and its docs page's conventions in
//! plain `f64`, with no quantisation, sharing no code with the fixed-point crates (that
//! independence is what makes a side-by-side comparison mean something).
//!
//! * [`timely`]: TIMELY Algorithm 1 and the RTT engine (Mittal et al., SIGCOMM 2015).
//! * [`hpcc`]: HPCC Algorithm 1 over the INT wire format (Li et al., SIGCOMM 2019).
//! * [`cats`]: the CATS conductor's scheduler (feature `alloc`).
//! * [`pacer`]: the segment pacer's schedule (feature `alloc`).
//! * [`pcc`]: TIMELY on DOCA PCC probe events (probe policy, probe RTT, rate in line-rate units).
//!
//! Names: every type here is `Ref` followed by the name of the fixed-point type it stands beside
//! (`hpcc::RefState` ↔ `hpcc_cc::State`, `cats::RefConductor` ↔ `cats_conductor::Conductor`,
//! `pcc::RefTimelyFlow` ↔ `cc_pcc::TimelyFlow`, `pcc::RefHpccFlow` ↔ `cc_pcc::HpccFlow`), or of
//! what it is where the fixed side has no such type (`RefStep`, `RefHop`); a caller can import
//! both sides into one file without renaming either.
//!
//! `no_std`: `libm` supplies what `core` lacks (`floor`, `trunc`, `round`, `powi`, `log2`), so
//! the same code runs on the host (sim-host's replay and simulator) and, soft-float, on a
//! riscv32 core, where fw-bench counts its instructions beside the fixed-point crates'.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(test)]
extern crate std;

#[cfg(feature = "alloc")]
pub mod cats;
pub mod hpcc;
#[cfg(feature = "alloc")]
pub mod pacer;
pub mod pcc;
pub mod timely;

// The README (what crates.io shows) runs its example as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
