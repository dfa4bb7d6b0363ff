//! `fw-bench`: retired-instruction counts of firmware entry points on an RV32IMAC instruction-set
//! simulator ([`rvsim`], in-process, deterministic), estimated cycles of the same instruction
//! stream on a CV32E40P ([`timing`]), per-function profiles, and code size.
//!
//! * [`machine::Machine`] loads an ELF's `PT_LOAD` segments, sets up a stack and a scratch arena,
//!   and either calls an exported function by symbol name ([`machine::Machine::call`], arguments
//!   in `a0..a7`, returns `a0`/`a1`, the instruction count and the cycle estimate) or runs the
//!   whole program from `_start` to the exit `ecall` ([`machine::Machine::run_program`]).
//! * [`timing`] is the CV32E40P timing model (its user manual's cycle counts and hazards) that
//!   turns the executed instruction stream into estimated cycles.
//! * [`cases`] holds the benchmark cases (one per entry point) and how to add one;
//!   [`table`] turns their samples into the markdown table of `docs/performance.md`.
//! * [`size`] charges `.text`/`.rodata`/`.data` bytes of a linked ELF to crates.
//! * [`counts`] counts instructions per call on riscv64 (and riscv32 beside it) under QEMU user
//!   mode, from its execution trace, on fixture events fed to fw-probe's counting server;
//!   [`pcc`] generates the DOCA-shaped event streams of the DOCA PCC adapter's rows.
//! * [`qemu`] cross-checks a whole-program count against QEMU user mode.
//! * [`zbb`] decodes and executes the Zbb instructions `rvsim` lacks (for `+zbb` builds).
//! * [`report`] assembles `docs/performance.md`'s generated section.

pub mod cases;
pub mod cores;
pub mod counts;
pub mod elf;
pub mod machine;
pub mod names;
pub mod pcc;
pub mod qemu;
pub mod report;
pub mod rtl;
pub mod size;
pub mod table;
pub mod timing;
pub mod zbb;
