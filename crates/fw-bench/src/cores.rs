//! Per-core timing models for `fw-bench rtl`: the cycles of a call's executed instructions on
//! each soft core, from the core's documentation, checked against its RTL
//! (`crates/fw-bench/rtl/recorded.tsv`, `fw-bench rtl-model`).
//!
//! Every model charges the caller's `jalr` (the RTL's measurement includes it) and then each
//! retired instruction of the callee. A model is stateful across the calls of one case, in
//! order, so a cache model sees the code and data the earlier calls left.
//!
//! * **CV32E40P**: [`crate::timing::Cv32e40p`], the user manual's table and hazards, unchanged.
//! * **Ibex** (the "small" configuration of `ibex_configs.yaml`: two stages, fast multi-cycle
//!   multiplier, no branch-target ALU, no writeback stage), from "Pipeline Details", table
//!   "Multi- and Single-Cycle Instructions" of its documentation
//!   (`doc/03_reference/pipeline_details.rst` in the wheel): loads and stores stall ≥ 1, `mul` 2
//!   and `mulh*` 3 stall cycles, jumps ≥ 1, taken branches ≥ 2, not-taken branches 0.
//! * **PicoRV32**: its README's table of cycles per instruction ("Cycles per Instruction
//!   Performance"): `jal` 3, ALU 3, not-taken branch 3, load 5, store 5, taken branch 5, `jalr`
//!   6; with the barrel shifter a shift is an ALU operation; `mul*` through the fast PCPI
//!   multiplier ([`PICO_MUL`], measured: the README gives no figure).
//! * **VexRiscv** (LiteX's IMAC variant): a 5-stage pipeline with static branch prediction
//!   (not taken), plus a direct-mapped 4 KiB instruction cache with 32-byte lines replayed over
//!   the executed addresses (a miss costs [`VEX_ICACHE_MISS`] plus a cycle per word and wait state).

use std::fmt;

use crate::timing::{Cv32e40p, Insn, Kind};

/// The soft cores `fw-bench rtl` measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Core {
    /// OpenHW Group CV32E40P (RV32IMC), no PULP extensions, no FPU.
    Cv32e40p,
    /// lowRISC Ibex, "small" configuration.
    Ibex,
    /// VexRiscv, LiteX's IMAC variant (4 KiB direct-mapped I$ and D$).
    VexRiscv,
    /// PicoRV32 with compressed instructions, the barrel shifter and the fast multiplier.
    PicoRv32,
}

impl Core {
    /// Every core, in table order.
    pub const ALL: [Core; 4] = [Core::Cv32e40p, Core::Ibex, Core::VexRiscv, Core::PicoRv32];

    /// The directory and command-line name.
    pub fn slug(self) -> &'static str {
        match self {
            Core::Cv32e40p => "cv32e40p",
            Core::Ibex => "ibex",
            Core::VexRiscv => "vexriscv",
            Core::PicoRv32 => "picorv32",
        }
    }

    /// The name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Core::Cv32e40p => "CV32E40P",
            Core::Ibex => "Ibex (small)",
            Core::VexRiscv => "VexRiscv (LiteX IMAC, 4 KiB I$/D$)",
            Core::PicoRv32 => "PicoRV32 (fast mul)",
        }
    }

    /// A core by its slug.
    pub fn from_slug(s: &str) -> Option<Core> {
        Core::ALL.into_iter().find(|c| c.slug() == s)
    }

    /// A fresh timing model of this core with `mem`'s wait states.
    pub fn model(self, mem: MemConfig) -> Model {
        Model {
            core: self,
            mem,
            cv32: Cv32e40p::new(),
            prev: None,
            icache: vec![None; ICACHE_LINES],
        }
    }
}

/// Wait states of the testbench's memory: instruction fetches and data accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct MemConfig {
    /// Cycles an instruction fetch waits before it is answered.
    pub iws: u32,
    /// Cycles a data access waits before it is answered.
    pub dws: u32,
}

impl MemConfig {
    /// `i<iws>d<dws>`.
    pub fn slug(self) -> String {
        format!("i{}d{}", self.iws, self.dws)
    }

    /// Parses `i<iws>d<dws>`.
    pub fn from_slug(s: &str) -> Option<MemConfig> {
        let (i, d) = s.strip_prefix('i')?.split_once('d')?;
        Some(MemConfig {
            iws: i.parse().ok()?,
            dws: d.parse().ok()?,
        })
    }
}

impl fmt::Display for MemConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.iws, self.dws) {
            (0, 0) => write!(f, "zero wait states"),
            (i, 0) => write!(f, "{i}-cycle instruction memory"),
            (0, d) => write!(f, "{d}-cycle data memory"),
            (i, d) => write!(f, "{i}-cycle instruction and {d}-cycle data memory"),
        }
    }
}

/// VexRiscv I$: 4096 bytes, 32-byte lines, one way (`VexRiscv_IMAC.yaml`).
const ICACHE_LINES: usize = 4096 / 32;
/// VexRiscv: cycles of an I$ miss beyond the 8 words of the refill.
pub const VEX_ICACHE_MISS: u64 = 4;
/// PicoRV32: `mul*` through `picorv32_pcpi_fast_mul`.
pub const PICO_MUL: u64 = 7;

/// A core's timing model, stateful across the calls of a case.
pub struct Model {
    core: Core,
    mem: MemConfig,
    cv32: Cv32e40p,
    /// The previous instruction (hazards).
    prev: Option<Insn>,
    /// VexRiscv I$ tags (line address), `None`: invalid.
    icache: Vec<Option<u32>>,
}

impl Model {
    /// The cycles of one call: the caller's `jalr`, then `trace` (the callee's retired
    /// instructions with their addresses).
    pub fn call_cycles(&mut self, trace: &[(u32, Insn)]) -> u64 {
        self.cv32.reset();
        self.prev = None;
        let call = Insn::new(Kind::Jalr, 1, [31, 0]);
        let mut cycles = self.insn(None, &call);
        for (pc, i) in trace {
            cycles += self.insn(Some(*pc), i);
        }
        cycles
    }

    fn insn(&mut self, pc: Option<u32>, i: &Insn) -> u64 {
        let c = match self.core {
            Core::Cv32e40p => self.cv32.cycles(i),
            Core::Ibex => ibex(i, self.prev.as_ref()),
            Core::PicoRv32 => pico(i),
            Core::VexRiscv => {
                let miss = pc.map_or(0, |pc| self.fetch(pc));
                vex(i, self.prev.as_ref()) + miss
            }
        };
        self.prev = Some(*i);
        c
    }

    /// VexRiscv: the I$ miss cost of fetching `pc` (0 on a hit).
    fn fetch(&mut self, pc: u32) -> u64 {
        let line = pc / 32;
        let slot = &mut self.icache[line as usize % ICACHE_LINES];
        if *slot == Some(line) {
            return 0;
        }
        *slot = Some(line);
        VEX_ICACHE_MISS + 8 * (1 + u64::from(self.mem.iws))
    }
}

fn ibex(i: &Insn, _prev: Option<&Insn>) -> u64 {
    match i.kind {
        Kind::Integer | Kind::Zbb | Kind::System => 1,
        Kind::Csr { .. } => 1,
        Kind::Mul => 3,
        Kind::MulHigh => 4,
        Kind::Div { divisor, .. } => {
            if divisor == 0 {
                2
            } else {
                38
            }
        }
        Kind::Memory { .. } => 2,
        Kind::Jal | Kind::Jalr | Kind::FenceI => 2 + u64::from(i.split_target),
        Kind::Branch { taken: false } => 1,
        Kind::Branch { taken: true } => 3 + u64::from(i.split_target),
    }
}

fn pico(i: &Insn) -> u64 {
    match i.kind {
        Kind::Integer | Kind::Zbb | Kind::System | Kind::Csr { .. } => 3,
        Kind::Mul | Kind::MulHigh => PICO_MUL,
        Kind::Div { .. } => 40,
        Kind::Memory { load: true, .. } => 5,
        Kind::Memory { load: false, .. } => 5,
        Kind::Jal | Kind::FenceI => 3,
        Kind::Jalr => 6,
        Kind::Branch { taken: false } => 3,
        Kind::Branch { taken: true } => 5,
    }
}

fn vex(i: &Insn, prev: Option<&Insn>) -> u64 {
    let load_use = match prev {
        Some(Insn {
            kind: Kind::Memory { load: true, .. },
            rd,
            ..
        }) if *rd != 0 && i.rs.contains(rd) => 1,
        _ => 0,
    };
    load_use
        + match i.kind {
            Kind::Integer | Kind::Zbb | Kind::System | Kind::Csr { .. } => 1,
            Kind::Mul | Kind::MulHigh => 1,
            Kind::Div { .. } => 34,
            Kind::Memory { .. } => 1,
            Kind::Jal => 1,
            Kind::Jalr | Kind::FenceI => 4,
            Kind::Branch { taken: false } => 1,
            Kind::Branch { taken: true } => 4,
        }
}
