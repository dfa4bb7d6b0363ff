//! Reference probe: a riscv32 (or riscv64) release binary exporting the f64 references of TIMELY and HPCC
//! (`cc-reference`, no allocator, soft float) as `ref_*` functions, so that fw-bench runs them
//! over the same fixture events as the fixed-point crates and reports instructions per event
//! side by side (docs/performance.md).
//!
//! Each algorithm has a context (parameters and state) that the caller places in zeroed memory
//! and initialises with `ref_*_init` from an array of `f64` parameters in a documented order;
//! each per-event function returns the output's `f64` bits (rate or window), which fw-bench
//! checks against the host build of the same reference.
//!
//! On any other architecture this is an empty program, so `cargo build --workspace` still works.
#![cfg_attr(any(target_arch = "riscv32", target_arch = "riscv64"), no_std, no_main)]

#[cfg(any(target_arch = "riscv32", target_arch = "riscv64"))]
mod probe;

#[cfg(not(any(target_arch = "riscv32", target_arch = "riscv64")))]
fn main() {}
