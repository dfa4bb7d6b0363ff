//! Estimated cycles: one in-order timing model, the OpenHW Group CV32E40P's published
//! latencies, applied to the instruction stream the interpreter executes.
//!
//! Retired instructions understate the cost on a real soft core: a `mulhu` or a taken branch
//! holds the pipeline for several cycles. [`Cv32e40p`] charges each retired instruction the
//! cycles the core's user manual gives for it, plus the hazards the manual lists between an
//! instruction and the one before it.
//!
//! # Source
//! CV32E40P User Manual v1.8.3, chapter "Pipeline Details"
//! (<https://docs.openhwgroup.org/projects/cv32e40p-user-manual/en/cv32e40p_v1.8.3/pipeline.html>,
//! the same text as `docs/source/pipeline.rst` in `github.com/openhwgroup/cv32e40p`):
//! **\[T\]** its section "Single- and Multi-Cycle Instructions", table "Cycle counts per
//! instruction type", and **\[H\]** its section "Hazards". The table assumes zero wait states on
//! the instruction and data interfaces; so does the model (a core running from tightly coupled
//! memories). The IF stage expands compressed instructions before decode, so an RVC instruction
//! costs what its expansion costs (rvsim hands the expanded [`Op`] over, so the model never sees
//! the difference), except as a jump target: see `*_SPLIT_TARGET`.
//!
//! # Choices where the manual gives a range or nothing
//! * Division and remainder (\[T\]: 3..35 "depends on the divider operand value (operand b), i.e.
//!   in the number of leading bits at 0"; 3 for `0x8000_0000`, 35 for 0): `3 + leading zeros of
//!   the divisor`, of its magnitude for `div`/`rem`. The per-event paths contain no division
//!   (`scripts/fw-gates.sh`), so only set-up calls (`*_config_init`) and whole-program runs
//!   meet one.
//! * Zbb instructions: 1 cycle, an **assumption** (the CV32E40P has no Zbb).
//! * `ecall`, `ebreak`, `fence`: 1 cycle (no row in \[T\]; fw-bench's calls contain none, a
//!   whole-program run ends with one `ecall`, and the served `read`/`write` calls are the
//!   harness's, not a trap handler's).
//! * `lr.w`, `sc.w`, `amo*.w`: one load each (the CV32E40P has no A extension; the firmware
//!   crates use no atomics).
//! * Not modelled: instruction-side wait states and the prefetch buffer running dry, data-side
//!   wait states, interrupts, and one stall the RTL has beyond \[H\]: `jalr` also waits while a
//!   load *two* instructions before it writes its register (`cv32e40p_controller.sv`,
//!   `jr_stall_o`), as in the epilogue `lw ra, …; addi sp, …; ret`, so the estimate is low by
//!   about one cycle per such return.

use rvsim::Op;

use crate::zbb::{Zbb, ZbbOp};

/// \[T\] "Integer Computational": 1 cycle (RV32I ALU operations, `lui`, `auipc`).
pub const INTEGER: u64 = 1;
/// \[T\] "Multiplication": 1 (`mul`), the single-cycle 32 × 32 → 32 multiplier.
pub const MUL: u64 = 1;
/// \[T\] "Multiplication": 5 (`mulh`, `mulhsu`, `mulhu`), "multiplications with upper-word
/// result take 5 cycles".
pub const MUL_HIGH: u64 = 5;
/// \[T\] "Division / Remainder": 3..35; the fewest, for a divisor with no leading zero bit.
pub const DIV_MIN: u64 = 3;
/// \[T\] "Load/Store": 1, one bus transaction using EX and WB for one cycle each.
pub const LOAD_STORE: u64 = 1;
/// \[T\] "Load/Store": 2 for a non-word-aligned word transfer and a halfword transfer that
/// crosses a word boundary (two bus transactions).
pub const LOAD_STORE_SPLIT: u64 = 2;
/// \[T\] "Jump": 2 (`jal`, `jalr`: taken from the ID stage, IF flushed).
pub const JUMP: u64 = 2;
/// \[T\] "Jump": 3 when the target is a non-word-aligned non-RVC instruction.
pub const JUMP_SPLIT_TARGET: u64 = 3;
/// \[T\] "Branch (Not-Taken)": 1, "any branch where the condition is not met will not stall".
pub const BRANCH_NOT_TAKEN: u64 = 1;
/// \[T\] "Branch (Taken)": 3, decided in EX, IF and ID flushed.
pub const BRANCH_TAKEN: u64 = 3;
/// \[T\] "Branch (Taken)": 4 when the target is a non-word-aligned non-RVC instruction.
pub const BRANCH_TAKEN_SPLIT_TARGET: u64 = 4;
/// \[T\] "CSR Access": 4 for the CSRs listed there ([`slow_csr`]), 1 for all others.
pub const CSR_SLOW: u64 = 4;
/// \[T\] "CSR Access": 1 for every CSR not listed.
pub const CSR: u64 = 1;
/// \[T\] "Instruction Fence": 2 (`fence.i` is a jump to the next instruction).
pub const FENCE_I: u64 = 2;
/// \[T\] "Instruction Fence": 3 when the next instruction is a non-word-aligned non-RVC one.
pub const FENCE_I_SPLIT_TARGET: u64 = 3;
/// \[H\] "Load data hazard in case the instruction immediately following a load uses the
/// result of that load": 1 cycle.
pub const LOAD_USE_STALL: u64 = 1;
/// \[H\] "Jump register (jalr) data hazard in case that a jalr depends on the result of an
/// immediately preceding instruction": 1 cycle. After a load both hazards apply (2 cycles), as in
/// the RTL, where the `jalr` waits while the load is in EX and again while it is in WB.
pub const JALR_STALL: u64 = 1;
/// Zbb instructions: 1 cycle, an assumption (the CV32E40P has no Zbb).
pub const ZBB: u64 = 1;
/// `ecall`, `ebreak`, `fence`, atomics' ALU part: 1 cycle (no row in \[T\]).
pub const SYSTEM: u64 = 1;

/// What the model distinguishes about one retired instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// RV32I computational instructions, `lui`, `auipc`.
    Integer,
    /// One of the Zbb instructions.
    Zbb,
    /// `mul`.
    Mul,
    /// `mulh`, `mulhsu`, `mulhu`.
    MulHigh,
    /// `div`, `divu`, `rem`, `remu` with the divisor's value before the instruction.
    Div {
        /// `x[rs2]`.
        divisor: u32,
        /// `div`/`rem` (the divisor is read as `i32`).
        signed: bool,
    },
    /// A load (`load`) or store of `bytes` bytes at `addr`; also `lr.w`, `sc.w`, `amo*.w`.
    Memory {
        /// It writes `rd` from memory.
        load: bool,
        /// The effective address.
        addr: u32,
        /// 1, 2 or 4.
        bytes: u32,
    },
    /// `jal` (and `c.j`, `c.jal`).
    Jal,
    /// `jalr` (and `c.jr`, `c.jalr`, `ret`).
    Jalr,
    /// A conditional branch and whether its condition held.
    Branch {
        /// The condition held: the branch was taken.
        taken: bool,
    },
    /// A CSR instruction on `csr`.
    Csr {
        /// The CSR number.
        csr: u32,
    },
    /// `fence.i`.
    FenceI,
    /// `ecall`, `ebreak`, `fence`.
    System,
}

/// One retired instruction as the model sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    /// What it is.
    pub kind: Kind,
    /// The register it writes (0: none; `x0` is never a dependence).
    pub rd: usize,
    /// The registers it reads (0: none).
    pub rs: [usize; 2],
    /// It sent the fetch elsewhere (a jump, a taken branch, `fence.i`) and the instruction there
    /// is a 32-bit one at an address ≡ 2 (mod 4), which takes two fetches. Filled in by the
    /// machine, which sees memory; see [`Insn::redirects`].
    pub split_target: bool,
}

impl Insn {
    /// An instruction of `kind` writing `rd` and reading `rs`.
    pub fn new(kind: Kind, rd: usize, rs: [usize; 2]) -> Self {
        Self {
            kind,
            rd,
            rs,
            split_target: false,
        }
    }

    /// `op` as decoded by rvsim (compressed instructions already expanded), with `x` the
    /// registers *before* it executed (the divisor, a load's or store's address, a branch's
    /// condition are read from them).
    pub fn from_op(op: &Op, x: &[u32; 32]) -> Self {
        let ea = |rs1: usize, imm: i32| x[rs1].wrapping_add(imm as u32);
        let mem = |load, addr, bytes| Kind::Memory { load, addr, bytes };
        let branch = |taken: bool| Kind::Branch { taken };
        match *op {
            Op::Lui { rd, .. } | Op::Auipc { rd, .. } => Self::new(Kind::Integer, rd, [0, 0]),
            Op::Jal { rd, .. } => Self::new(Kind::Jal, rd, [0, 0]),
            Op::Jalr { rd, rs1, .. } => Self::new(Kind::Jalr, rd, [rs1, 0]),
            Op::Beq { rs1, rs2, .. } => Self::new(branch(x[rs1] == x[rs2]), 0, [rs1, rs2]),
            Op::Bne { rs1, rs2, .. } => Self::new(branch(x[rs1] != x[rs2]), 0, [rs1, rs2]),
            Op::Blt { rs1, rs2, .. } => {
                Self::new(branch((x[rs1] as i32) < (x[rs2] as i32)), 0, [rs1, rs2])
            }
            Op::Bge { rs1, rs2, .. } => {
                Self::new(branch((x[rs1] as i32) >= (x[rs2] as i32)), 0, [rs1, rs2])
            }
            Op::Bltu { rs1, rs2, .. } => Self::new(branch(x[rs1] < x[rs2]), 0, [rs1, rs2]),
            Op::Bgeu { rs1, rs2, .. } => Self::new(branch(x[rs1] >= x[rs2]), 0, [rs1, rs2]),
            Op::Lb { rd, rs1, i_imm } | Op::Lbu { rd, rs1, i_imm } => {
                Self::new(mem(true, ea(rs1, i_imm), 1), rd, [rs1, 0])
            }
            Op::Lh { rd, rs1, i_imm } | Op::Lhu { rd, rs1, i_imm } => {
                Self::new(mem(true, ea(rs1, i_imm), 2), rd, [rs1, 0])
            }
            Op::Lw { rd, rs1, i_imm } => Self::new(mem(true, ea(rs1, i_imm), 4), rd, [rs1, 0]),
            Op::Sb { rs1, rs2, s_imm } => Self::new(mem(false, ea(rs1, s_imm), 1), 0, [rs1, rs2]),
            Op::Sh { rs1, rs2, s_imm } => Self::new(mem(false, ea(rs1, s_imm), 2), 0, [rs1, rs2]),
            Op::Sw { rs1, rs2, s_imm } => Self::new(mem(false, ea(rs1, s_imm), 4), 0, [rs1, rs2]),
            Op::Addi { rd, rs1, .. }
            | Op::Slti { rd, rs1, .. }
            | Op::Sltiu { rd, rs1, .. }
            | Op::Xori { rd, rs1, .. }
            | Op::Ori { rd, rs1, .. }
            | Op::Andi { rd, rs1, .. }
            | Op::Slli { rd, rs1, .. }
            | Op::Srli { rd, rs1, .. }
            | Op::Srai { rd, rs1, .. } => Self::new(Kind::Integer, rd, [rs1, 0]),
            Op::Add { rd, rs1, rs2 }
            | Op::Sll { rd, rs1, rs2 }
            | Op::Slt { rd, rs1, rs2 }
            | Op::Sltu { rd, rs1, rs2 }
            | Op::Xor { rd, rs1, rs2 }
            | Op::Srl { rd, rs1, rs2 }
            | Op::Or { rd, rs1, rs2 }
            | Op::And { rd, rs1, rs2 }
            | Op::Sub { rd, rs1, rs2 }
            | Op::Sra { rd, rs1, rs2 } => Self::new(Kind::Integer, rd, [rs1, rs2]),
            Op::Fence { .. } | Op::Ecall | Op::Ebreak => Self::new(Kind::System, 0, [0, 0]),
            Op::FenceI => Self::new(Kind::FenceI, 0, [0, 0]),
            Op::Csrrw { rd, rs1, csr }
            | Op::Csrrs { rd, rs1, csr }
            | Op::Csrrc { rd, rs1, csr } => Self::new(Kind::Csr { csr }, rd, [rs1, 0]),
            Op::Csrrwi { rd, csr, .. }
            | Op::Csrrsi { rd, csr, .. }
            | Op::Csrrci { rd, csr, .. } => Self::new(Kind::Csr { csr }, rd, [0, 0]),
            Op::Mul { rd, rs1, rs2 } => Self::new(Kind::Mul, rd, [rs1, rs2]),
            Op::Mulh { rd, rs1, rs2 }
            | Op::Mulhsu { rd, rs1, rs2 }
            | Op::Mulhu { rd, rs1, rs2 } => Self::new(Kind::MulHigh, rd, [rs1, rs2]),
            Op::Div { rd, rs1, rs2 } | Op::Rem { rd, rs1, rs2 } => Self::new(
                Kind::Div {
                    divisor: x[rs2],
                    signed: true,
                },
                rd,
                [rs1, rs2],
            ),
            Op::Divu { rd, rs1, rs2 } | Op::Remu { rd, rs1, rs2 } => Self::new(
                Kind::Div {
                    divisor: x[rs2],
                    signed: false,
                },
                rd,
                [rs1, rs2],
            ),
            Op::LrW { rd, rs1, .. } => Self::new(mem(true, x[rs1], 4), rd, [rs1, 0]),
            Op::ScW { rd, rs1, rs2, .. }
            | Op::AmoswapW { rd, rs1, rs2, .. }
            | Op::AmoaddW { rd, rs1, rs2, .. }
            | Op::AmoxorW { rd, rs1, rs2, .. }
            | Op::AmoandW { rd, rs1, rs2, .. }
            | Op::AmoorW { rd, rs1, rs2, .. }
            | Op::AmominW { rd, rs1, rs2, .. }
            | Op::AmomaxW { rd, rs1, rs2, .. }
            | Op::AmominuW { rd, rs1, rs2, .. }
            | Op::AmomaxuW { rd, rs1, rs2, .. } => Self::new(mem(true, x[rs1], 4), rd, [rs1, rs2]),
        }
    }

    /// A Zbb instruction: `rd` from `rs1` (and `rs2` for the register-register forms).
    pub fn from_zbb(z: &Zbb) -> Self {
        let binary = matches!(
            z.op,
            ZbbOp::Andn
                | ZbbOp::Orn
                | ZbbOp::Xnor
                | ZbbOp::Min
                | ZbbOp::Minu
                | ZbbOp::Max
                | ZbbOp::Maxu
                | ZbbOp::Rol
                | ZbbOp::Ror
        );
        Self::new(Kind::Zbb, z.rd, [z.rs1, if binary { z.rs2 } else { 0 }])
    }

    /// It sends the fetch to another address (a jump, a taken branch, `fence.i`), so the cost
    /// depends on the instruction there ([`Insn::split_target`]).
    pub fn redirects(&self) -> bool {
        matches!(
            self.kind,
            Kind::Jal | Kind::Jalr | Kind::FenceI | Kind::Branch { taken: true }
        )
    }
}

/// \[T\] "CSR Access": the CSRs that take 4 cycles (`mstatus`, `mepc`, `mtvec`, `mcause`,
/// `mcycle`, `minstret`, `mhpmcounter*`, `mcycleh`, `minstreth`, `mhpmcounter*h`,
/// `mcountinhibit`, `mhpmevent*`, `dcsr`, `dpc`, `dscratch0`, `dscratch1`).
pub fn slow_csr(csr: u32) -> bool {
    matches!(
        csr,
        0x300 | 0x341 | 0x305 | 0x342   // mstatus, mepc, mtvec, mcause
        | 0xB00..=0xB1F                 // mcycle, minstret, mhpmcounter3..31
        | 0xB80..=0xB9F                 // mcycleh, minstreth, mhpmcounter3h..31h
        | 0x320                         // mcountinhibit
        | 0x323..=0x33F                 // mhpmevent3..31
        | 0x7B0..=0x7B3                 // dcsr, dpc, dscratch0, dscratch1
    )
}

/// Cycles of a division or remainder by `divisor`: `3 + leading zeros` (of the magnitude when
/// `signed`), from 3 for `0x8000_0000` to 35 for 0, the ends \[T\] gives.
pub fn div_cycles(divisor: u32, signed: bool) -> u64 {
    let d = if signed {
        (divisor as i32).unsigned_abs()
    } else {
        divisor
    };
    DIV_MIN + u64::from(d.leading_zeros())
}

/// Why an instruction takes more than one cycle: what the model charges beyond the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// `mulh`, `mulhsu`, `mulhu`: 4 more.
    MulHigh,
    /// `div`, `divu`, `rem`, `remu`: 2..34 more.
    Divide,
    /// A taken branch: 2 more.
    TakenBranch,
    /// `jal`, `jalr`, `fence.i`: 1 more.
    Jump,
    /// A jump or taken branch to a 32-bit instruction at an address ≡ 2 (mod 4): 1 more.
    SplitTarget,
    /// A misaligned word or a word-crossing halfword access: 1 more.
    SplitAccess,
    /// The instruction uses the register the load just before it wrote: 1 more.
    LoadUse,
    /// A `jalr` on the register the instruction just before it wrote: 1 more.
    JalrHazard,
    /// A CSR access of 4 cycles: 3 more.
    SlowCsr,
}

impl Cause {
    /// Every cause, in the order of [`Stalls`].
    pub const ALL: [Cause; 9] = [
        Cause::MulHigh,
        Cause::Divide,
        Cause::TakenBranch,
        Cause::Jump,
        Cause::SplitTarget,
        Cause::SplitAccess,
        Cause::LoadUse,
        Cause::JalrHazard,
        Cause::SlowCsr,
    ];

    /// What it is, for tables.
    pub fn describe(self) -> &'static str {
        match self {
            Cause::MulHigh => "`mulh`/`mulhsu`/`mulhu` (5 cycles)",
            Cause::Divide => "division, remainder (3..35)",
            Cause::TakenBranch => "taken branches (3)",
            Cause::Jump => "jumps: `jal`, `jalr`, `ret` (2)",
            Cause::SplitTarget => "jump or branch target a 32-bit instruction across a word (+1)",
            Cause::SplitAccess => "misaligned loads and stores (2)",
            Cause::LoadUse => "load-use stalls (+1)",
            Cause::JalrHazard => "`jalr` on the previous instruction's result (+1)",
            Cause::SlowCsr => "slow CSR accesses (4)",
        }
    }
}

/// Cycles beyond one per retired instruction, by [`Cause`] (indexed as [`Cause::ALL`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stalls(pub [u64; 9]);

impl Stalls {
    /// The cycles charged to `cause`.
    pub fn get(&self, cause: Cause) -> u64 {
        self.0[cause as usize]
    }

    /// All of them: cycles minus retired instructions.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Adds `other`'s cycles to these.
    pub fn add(&mut self, other: &Stalls) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }
}

/// The CV32E40P timing model: the cycles of each retired instruction, given the one before it.
#[derive(Clone, Debug, Default)]
pub struct Cv32e40p {
    /// The register the previous instruction loaded (0: it was not a load).
    load_rd: usize,
    /// The register the previous instruction wrote (0: none).
    prev_rd: usize,
    /// The cycles charged beyond one per instruction so far, by cause.
    stalls: Stalls,
}

impl Cv32e40p {
    /// A model with an empty pipeline.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets the previous instruction and the stalls counted (a call starts with no hazard
    /// pending).
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// The cycles charged beyond one per instruction since [`Cv32e40p::new`], by cause.
    pub fn stalls(&self) -> &Stalls {
        &self.stalls
    }

    /// The cycles `i` takes, the stalls it suffers from the previous instruction included.
    pub fn cycles(&mut self, i: &Insn) -> u64 {
        // The table's figure for the instruction, the cause of its cycles beyond the first, and
        // what a target across a word adds to it.
        let (table, cause, split_target) = match i.kind {
            Kind::Integer => (INTEGER, None, 0),
            Kind::Zbb => (ZBB, None, 0),
            Kind::Mul => (MUL, None, 0),
            Kind::System => (SYSTEM, None, 0),
            Kind::MulHigh => (MUL_HIGH, Some(Cause::MulHigh), 0),
            Kind::Div { divisor, signed } => (div_cycles(divisor, signed), Some(Cause::Divide), 0),
            Kind::Memory { addr, bytes, .. } => {
                let split = match bytes {
                    4 => addr % 4 != 0,
                    2 => addr % 4 == 3,
                    _ => false,
                };
                if split {
                    (LOAD_STORE_SPLIT, Some(Cause::SplitAccess), 0)
                } else {
                    (LOAD_STORE, None, 0)
                }
            }
            Kind::Jal | Kind::Jalr => (JUMP, Some(Cause::Jump), JUMP_SPLIT_TARGET - JUMP),
            Kind::FenceI => (FENCE_I, Some(Cause::Jump), FENCE_I_SPLIT_TARGET - FENCE_I),
            Kind::Branch { taken: false } => (BRANCH_NOT_TAKEN, None, 0),
            Kind::Branch { taken: true } => (
                BRANCH_TAKEN,
                Some(Cause::TakenBranch),
                BRANCH_TAKEN_SPLIT_TARGET - BRANCH_TAKEN,
            ),
            Kind::Csr { csr } if slow_csr(csr) => (CSR_SLOW, Some(Cause::SlowCsr), 0),
            Kind::Csr { .. } => (CSR, None, 0),
        };
        let reads = |r: usize| r != 0 && i.rs.contains(&r);
        let load_use = reads(self.load_rd);
        let jalr_hazard = i.kind == Kind::Jalr && i.rs[0] != 0 && i.rs[0] == self.prev_rd;
        let load = matches!(i.kind, Kind::Memory { load: true, .. });
        self.load_rd = if load { i.rd } else { 0 };
        self.prev_rd = i.rd;

        let mut c = table;
        if let Some(cause) = cause {
            self.stalls.0[cause as usize] += table - 1;
        }
        let mut charge = |cause: Cause, n: u64| {
            self.stalls.0[cause as usize] += n;
            c += n;
        };
        if i.split_target {
            charge(Cause::SplitTarget, split_target);
        }
        if load_use {
            charge(Cause::LoadUse, LOAD_USE_STALL);
        }
        if jalr_hazard {
            charge(Cause::JalrHazard, JALR_STALL);
        }
        c
    }
}

#[cfg(test)]
mod tests {
    //! The model on hand-assembled sequences run by the machine, each with its cycle count
    //! worked from the manual's table: every call ends with a `ret` to the harness's sentinel
    //! (a word-aligned address), a jump of 2 cycles.

    use super::*;
    use crate::elf::{Elf, Segment, SymKind, Symbol};
    use crate::machine::{CallResult, Machine, RETURN_SENTINEL};

    const BASE: u32 = 0x1000;
    const A0: u32 = 10;
    const A1: u32 = 11;
    const A2: u32 = 12;
    const T0: u32 = 5;
    const RA: u32 = 1;

    /// One instruction: a 32-bit word or a 16-bit compressed one.
    enum I {
        W(u32),
        C(u16),
    }

    fn r(f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32, op: u32) -> I {
        I::W(f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op)
    }
    fn i(imm: i32, rs1: u32, f3: u32, rd: u32, op: u32) -> I {
        I::W(((imm as u32) & 0xfff) << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op)
    }
    fn add(rd: u32, rs1: u32, rs2: u32) -> I {
        r(0, rs2, rs1, 0, rd, 0x33)
    }
    fn addi(rd: u32, rs1: u32, imm: i32) -> I {
        i(imm, rs1, 0, rd, 0x13)
    }
    fn mul(f3: u32, rd: u32, rs1: u32, rs2: u32) -> I {
        r(1, rs2, rs1, f3, rd, 0x33)
    }
    fn lw(rd: u32, rs1: u32, imm: i32) -> I {
        i(imm, rs1, 2, rd, 0x03)
    }
    fn lhu(rd: u32, rs1: u32, imm: i32) -> I {
        i(imm, rs1, 5, rd, 0x03)
    }
    fn jalr(rd: u32, rs1: u32, imm: i32) -> I {
        i(imm, rs1, 0, rd, 0x67)
    }
    fn ret() -> I {
        jalr(0, RA, 0)
    }
    fn beq(rs1: u32, rs2: u32, off: i32) -> I {
        let o = off as u32;
        I::W(
            (o >> 12 & 1) << 31
                | (o >> 5 & 0x3f) << 25
                | rs2 << 20
                | rs1 << 15
                | (o >> 1 & 0xf) << 8
                | (o >> 11 & 1) << 7
                | 0x63,
        )
    }
    fn jal(rd: u32, off: i32) -> I {
        let o = off as u32;
        I::W(
            (o >> 20 & 1) << 31
                | (o >> 1 & 0x3ff) << 21
                | (o >> 11 & 1) << 20
                | (o >> 12 & 0xff) << 12
                | rd << 7
                | 0x6f,
        )
    }
    /// `c.li a0, 1`, `c.nop`, `c.jr ra`, `c.lw a1, 0(a0)`, `c.add a0, a1`.
    const C_LI_A0_1: u16 = 0x4505;
    const C_NOP: u16 = 0x0001;
    const C_RET: u16 = 0x8082;
    const C_LW_A1_0_A0: u16 = 0x410c;
    const C_ADD_A0_A1: u16 = 0x952e;

    /// A machine whose code is `code` at [`BASE`], the function `f`.
    fn machine(code: &[I]) -> Machine {
        let mut bytes = Vec::new();
        for c in code {
            match c {
                I::W(w) => bytes.extend_from_slice(&w.to_le_bytes()),
                I::C(h) => bytes.extend_from_slice(&h.to_le_bytes()),
            }
        }
        let size = bytes.len() as u32;
        Machine::new(Elf {
            entry: BASE,
            segments: vec![Segment { vaddr: BASE, bytes }],
            sections: Vec::new(),
            symbols: vec![Symbol {
                name: "f".to_owned(),
                addr: BASE,
                size,
                kind: SymKind::Func,
                shndx: 1,
            }],
        })
    }

    /// `(instructions, cycles)` of calling `f` in `code` with `args`.
    fn run(code: &[I], args: &[u32]) -> (u64, u64) {
        let r: CallResult = machine(code).call("f", args).unwrap();
        (r.instret, r.cycles)
    }

    #[test]
    fn a_taken_branch_costs_three_cycles_and_a_not_taken_one_one() {
        // beq a0, a1, +8 ; addi a0, x0, 1 ; ret
        let code = [beq(A0, A1, 8), addi(A0, 0, 1), ret()];
        assert_eq!(run(&code, &[7, 7]), (2, 3 + 2), "taken: beq 3, ret 2");
        assert_eq!(
            run(&code, &[7, 8]),
            (3, 1 + 1 + 2),
            "not taken: beq 1, addi 1, ret 2"
        );
        // The same call costs the same: each call starts with no hazard pending.
        let mut m = machine(&code);
        let a = m.call("f", &[7, 7]).unwrap().cycles;
        assert_eq!(m.call("f", &[7, 7]).unwrap().cycles, a);
    }

    #[test]
    fn a_taken_branch_to_a_32_bit_instruction_across_a_word_costs_four_cycles() {
        // beq a0, a1, +6 (to 0x1006) ; c.li a0, 1 ; ret (32-bit, at 0x1006)
        let code = [beq(A0, A1, 6), I::C(C_LI_A0_1), ret()];
        assert_eq!(run(&code, &[7, 7]), (2, 4 + 2));
        assert_eq!(run(&code, &[7, 8]), (3, 1 + 1 + 2));
    }

    #[test]
    fn a_load_followed_by_its_use_costs_one_stall_cycle() {
        let mut m = machine(&[lw(A1, A0, 0), add(A0, A1, A1), ret()]);
        let p = m.push_bytes(&21u32.to_le_bytes(), 4).unwrap();
        let r = m.call("f", &[p]).unwrap();
        assert_eq!((r.a0, r.instret, r.cycles), (42, 3, 1 + (1 + 1) + 2));
        // The independent pair: no stall.
        let mut m = machine(&[lw(A1, A0, 0), add(A0, A2, A2), ret()]);
        let p = m.push_bytes(&21u32.to_le_bytes(), 4).unwrap();
        let r = m.call("f", &[p, 0, 5]).unwrap();
        assert_eq!((r.a0, r.instret, r.cycles), (10, 3, 1 + 1 + 2));
        // One instruction between the load and its use hides the stall.
        let mut m = machine(&[lw(A1, A0, 0), addi(A2, A2, 1), add(A0, A1, A1), ret()]);
        let p = m.push_bytes(&21u32.to_le_bytes(), 4).unwrap();
        assert_eq!(m.call("f", &[p]).unwrap().cycles, 1 + 1 + 1 + 2);
    }

    #[test]
    fn compressed_instructions_cost_what_their_expansions_cost() {
        let mut m = machine(&[I::C(C_LW_A1_0_A0), I::C(C_ADD_A0_A1), I::C(C_RET)]);
        let p = m.push_bytes(&21u32.to_le_bytes(), 4).unwrap();
        let c = m.call("f", &[p]).unwrap();
        let mut m = machine(&[lw(A1, A0, 0), add(A0, A0, A1), ret()]);
        let p = m.push_bytes(&21u32.to_le_bytes(), 4).unwrap();
        let w = m.call("f", &[p]).unwrap();
        assert_eq!((c.a0, c.instret, c.cycles), (w.a0, w.instret, w.cycles));
        assert_eq!(
            c.cycles,
            1 + (1 + 1) + 2,
            "c.lw, c.add after its load, c.jr"
        );
    }

    #[test]
    fn mulh_costs_five_cycles_and_mul_one() {
        assert_eq!(
            run(&[mul(0, A0, A0, A1), ret()], &[3, 4]),
            (2, 1 + 2),
            "mul"
        );
        for (f3, name) in [(1, "mulh"), (2, "mulhsu"), (3, "mulhu")] {
            assert_eq!(
                run(&[mul(f3, A0, A0, A1), ret()], &[3, 4]),
                (2, 5 + 2),
                "{name}"
            );
        }
    }

    #[test]
    fn a_division_costs_three_cycles_plus_the_divisors_leading_zeros() {
        let divu = [r(1, A1, A0, 5, A0, 0x33), ret()];
        assert_eq!(
            run(&divu, &[9, 0x8000_0000]).1,
            3 + 2,
            "no leading zero: the fewest"
        );
        assert_eq!(run(&divu, &[9, 1]).1, 3 + 31 + 2);
        assert_eq!(run(&divu, &[9, 0]).1, 35 + 2, "by zero: the most");
        // div reads the divisor's magnitude: −1 has 31 leading zeros as 1 does.
        let div = [r(1, A1, A0, 4, A0, 0x33), ret()];
        assert_eq!(run(&div, &[9, u32::MAX]).1, 3 + 31 + 2);
    }

    #[test]
    fn a_jal_costs_two_cycles_and_three_to_a_32_bit_instruction_across_a_word() {
        // jal x0, +8 ; addi a0, x0, 1 (skipped) ; ret
        assert_eq!(run(&[jal(0, 8), addi(A0, 0, 1), ret()], &[]), (2, 2 + 2));
        // jal x0, +6 ; c.nop (skipped) ; ret (32-bit, at 0x1006)
        assert_eq!(run(&[jal(0, 6), I::C(C_NOP), ret()], &[]), (2, 3 + 2));
        // … and to a compressed instruction there, 2 again.
        assert_eq!(run(&[jal(0, 6), I::C(C_NOP), I::C(C_RET)], &[]), (2, 2 + 2));
    }

    #[test]
    fn a_jalr_on_the_register_the_previous_instruction_wrote_stalls_one_cycle() {
        // addi t0, ra, 0 ; jalr x0, 0(t0)
        assert_eq!(run(&[addi(T0, RA, 0), jalr(0, T0, 0)], &[]), (2, 1 + 2 + 1));
        // One instruction between them hides it.
        let code = [addi(T0, RA, 0), addi(A0, A0, 1), jalr(0, T0, 0)];
        assert_eq!(run(&code, &[]), (3, 1 + 1 + 2));
        // After a load both hazards apply: lw t0, 0(a0) ; jalr x0, 0(t0).
        let mut m = machine(&[lw(T0, A0, 0), jalr(0, T0, 0)]);
        let p = m.push_bytes(&RETURN_SENTINEL.to_le_bytes(), 4).unwrap();
        assert_eq!(m.call("f", &[p]).unwrap().cycles, 1 + 2 + 1 + 1);
    }

    #[test]
    fn a_word_load_across_a_word_boundary_costs_two_cycles() {
        let mut m = machine(&[lw(A0, A0, 0), ret()]);
        let p = m.push_bytes(&[0; 8], 4).unwrap();
        assert_eq!(m.call("f", &[p]).unwrap().cycles, 1 + 2);
        assert_eq!(m.call("f", &[p + 2]).unwrap().cycles, 2 + 2);
        let mut m = machine(&[lhu(A0, A0, 0), ret()]);
        let p = m.push_bytes(&[0; 8], 4).unwrap();
        assert_eq!(
            m.call("f", &[p + 2]).unwrap().cycles,
            1 + 2,
            "inside a word"
        );
        assert_eq!(
            m.call("f", &[p + 3]).unwrap().cycles,
            2 + 2,
            "across a word"
        );
    }

    #[test]
    fn a_zbb_instruction_is_assumed_to_cost_one_cycle() {
        // clz a0, a0 ; ret
        let mut m = machine(&[I::W(0x6005_1513), ret()]);
        m.zbb = true;
        let r = m.call("f", &[0x0001_0000]).unwrap();
        assert_eq!((r.a0, r.instret, r.cycles), (15, 2, 1 + 2));
    }

    #[test]
    fn the_stalls_by_cause_add_up_to_the_cycles_beyond_one_per_instruction() {
        // lw a1, 0(a0) ; mulhu a2, a1, a1 (load-use) ; beq a0, a0, +6 (taken, to 0x100e) ;
        // c.nop (skipped) ; addi t0, ra, 0 ; jalr x0, 0(t0) (on t0 just written)
        let code = [
            lw(A1, A0, 0),
            mul(3, A2, A1, A1),
            beq(A0, A0, 6),
            I::C(C_NOP),
            addi(T0, RA, 0),
            jalr(0, T0, 0),
        ];
        let mut m = machine(&code);
        let p = m.push_bytes(&3u32.to_le_bytes(), 4).unwrap();
        m.enable_profile();
        let r = m.call("f", &[p]).unwrap();
        let st = *m.profile_stalls();
        assert_eq!(r.instret, 5);
        assert_eq!(r.cycles, 1 + (5 + 1) + 4 + 1 + (2 + 1));
        assert_eq!(st.total(), r.cycles - r.instret);
        let by = |c| st.get(c);
        assert_eq!(
            (
                by(Cause::LoadUse),
                by(Cause::MulHigh),
                by(Cause::TakenBranch),
                by(Cause::SplitTarget),
                by(Cause::Jump),
                by(Cause::JalrHazard)
            ),
            (1, 4, 2, 1, 1, 1)
        );
        // The profile's per-function cycles are the same total.
        let rows = m.profile_table(m.profile().unwrap());
        assert_eq!((rows[0].instret, rows[0].cycles), (r.instret, r.cycles));
    }

    #[test]
    fn the_slow_csrs_are_the_ones_the_manual_lists() {
        for csr in [
            0x300, 0x305, 0x341, 0x342, 0xB00, 0xB02, 0xB9F, 0x320, 0x323, 0x7B3,
        ] {
            assert!(slow_csr(csr), "{csr:#x}");
        }
        for csr in [0x001, 0x304, 0x340, 0xC00, 0xF14, 0x7B4] {
            assert!(!slow_csr(csr), "{csr:#x}");
        }
    }
}
