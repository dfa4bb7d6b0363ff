//! Firmware probe: a riscv32 or riscv64 release binary that calls every public per-event entry
//! point of the firmware crates with opaque (`black_box`) inputs.
//!
//! Three gates rest on it (run by `scripts/fw-gates.sh`):
//! * **panic-free**: the `#[panic_handler]` calls `fw_probe_panic_path_survived`, which nobody
//!   defines, so the release link fails if any panic path is still reachable;
//! * **float-free**: no soft-float routine (`__adddf3`, `__mulsf3`, …) may be linked;
//! * **division-free per event**: the `probe_*` functions (one per entry point, never inlined) may
//!   contain no `div`/`rem` instruction and call no `__udivdi3`-style helper. Configuration is built
//!   in `setup`, outside them, where precomputing reciprocals may divide.
//!
//! After its own calls it serves fixture events read from standard input (`probe/serve.rs`), so
//! that `fw-bench counts` can count instructions per call under QEMU user mode on riscv64, where
//! the in-process simulator cannot run.
//!
//! On any other architecture this is an empty program, so `cargo build --workspace` still works.
#![cfg_attr(any(target_arch = "riscv32", target_arch = "riscv64"), no_std, no_main)]

#[cfg(any(target_arch = "riscv32", target_arch = "riscv64"))]
mod probe;

#[cfg(not(any(target_arch = "riscv32", target_arch = "riscv64")))]
fn main() {}
