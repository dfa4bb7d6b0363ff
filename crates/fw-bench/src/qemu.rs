//! Cross-check of the whole-program instruction count against QEMU user mode.
//!
//! QEMU 7.2 has no instruction-count plugin installed here, but `-singlestep` (renamed
//! `-one-insn-per-tb` in QEMU 8.1) makes every translation block one instruction, and
//! `-d exec,nochain` logs one `Trace` line per block executed, so the number of `Trace` lines is
//! the number of retired instructions, including the final `ecall`, which is how
//! [`crate::machine::Machine::run_program`] counts too.
//!
//! The CPU is named: `-cpu rv32,zbb=false` for an rv32imac image (QEMU's default CPU has Zbb, so
//! a stray Zbb instruction would otherwise run unnoticed) and `-cpu rv32,zbb=true` for a `+zbb`
//! build.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// A whole-program run under `qemu-riscv32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QemuRun {
    /// The process exit status (the low 8 bits of the exit `ecall`'s `a0`).
    pub exit_code: i32,
    /// Retired instructions, the exit `ecall` included.
    pub instret: u64,
}

/// Retired instructions of a whole-program run under `qemu-riscv32` (with Zbb if `zbb`), or
/// `None` if QEMU is not installed.
pub fn count(elf: &Path, zbb: bool) -> Result<Option<u64>> {
    Ok(run(elf, zbb)?.map(|r| r.instret))
}

/// Runs `elf` under `qemu-riscv32` (with Zbb if `zbb`) counting retired instructions, or returns
/// `None` if QEMU is not installed.
pub fn run(elf: &Path, zbb: bool) -> Result<Option<QemuRun>> {
    let cpu = format!("rv32,zbb={zbb}");
    let log = std::env::temp_dir().join(format!("fw-bench-qemu-{}.log", std::process::id()));
    let mut last_err = String::new();
    for flag in ["-one-insn-per-tb", "-singlestep"] {
        let out = match Command::new("qemu-riscv32")
            .args(["-cpu", &cpu])
            .arg(flag)
            .args(["-d", "exec,nochain", "-D"])
            .arg(&log)
            .arg(elf)
            .output()
        {
            Ok(o) => o,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).context("running qemu-riscv32"),
        };
        if !out.status.success() && out.status.code().is_none() {
            last_err = String::from_utf8_lossy(&out.stderr).into_owned();
            continue;
        }
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        let n = text.lines().filter(|l| l.starts_with("Trace")).count() as u64;
        if n == 0 {
            last_err = String::from_utf8_lossy(&out.stderr).into_owned();
            continue;
        }
        return Ok(Some(QemuRun {
            exit_code: out.status.code().unwrap_or(-1),
            instret: n,
        }));
    }
    bail!("qemu-riscv32 produced no trace: {last_err}")
}
