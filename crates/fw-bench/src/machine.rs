//! The simulated riscv32 machine: an ELF image, a stack, a scratch arena for arguments, and the
//! `rvsim` interpreter that counts retired instructions and estimates cycles.
//!
//! # Memory map
//! | region  | addresses                         | contents                                   |
//! |---------|-----------------------------------|--------------------------------------------|
//! | image   | each `PT_LOAD` segment's `p_vaddr` | code, read-only data, `.data`, `.bss`     |
//! | scratch | `0x7000_0000 ..+ 1 MiB`           | buffers/structs copied in by the host      |
//! | stack   | `0x7ff0_0000 .. 0x8000_0000`      | `sp` starts at the top (16-byte aligned)   |
//!
//! Nothing else is mapped: an access elsewhere stops the run with an error (it is a bug in the
//! firmware or in the harness, never something to count).
//!
//! # Counting
//! One retired instruction = one successful `Interp::step`, plus the final `ecall` of a program.
//! A function call starts with `pc` at the symbol and `ra` at [`RETURN_SENTINEL`] (an unmapped,
//! aligned address); it ends when `pc` reaches the sentinel, so the count includes the callee's
//! `ret` and nothing of the harness. The interpreter is deterministic: the same ELF and inputs
//! always give the same count.
//!
//! # Cycles
//! Each retired instruction is also charged its cycles in the CV32E40P timing model
//! ([`crate::timing`]): from the decoded instruction, the registers before it executed (a
//! branch's condition, a load's address, a divisor), the instruction before it (load-use and
//! `jalr` hazards) and, after a jump or taken branch, the instruction at the target (a 32-bit
//! instruction at an address ≡ 2 mod 4 costs one more fetch). A call starts with no hazard
//! pending. The estimate is deterministic like the count.
//!
//! # Zbb
//! `rvsim` decodes RV32IMAC only. With [`Machine::zbb`] set, a word it rejects as illegal that is
//! one of the Zbb instructions ([`crate::zbb`]) is executed by this module and counted as one
//! retired instruction, as on hardware and under `qemu-riscv32 -cpu rv32,zbb=true`. Without it
//! (the default: the measured rv32imac builds), a Zbb instruction stops the run like any other
//! illegal instruction, so an rv32imac image that contains one is caught rather than counted.

use std::collections::HashMap;

use anyhow::{Context, Result, bail, ensure};
use rvsim::{CpuError, CpuState, Interp, Memory, MemoryAccess, SimpleClock};

use crate::elf::{Elf, SymKind};
use crate::timing::{Cv32e40p, Insn, Stalls};
use crate::zbb;

/// `ra` for a host call: reaching this `pc` means the callee returned.
pub const RETURN_SENTINEL: u32 = 0xFFFF_FFF0;
/// Base of the scratch arena ([`Machine::alloc`]).
pub const SCRATCH_BASE: u32 = 0x7000_0000;
/// Size of the scratch arena.
pub const SCRATCH_SIZE: u32 = 1 << 20;
/// One past the highest stack byte; the initial `sp`.
pub const STACK_TOP: u32 = 0x8000_0000;
/// Stack size.
pub const STACK_SIZE: u32 = 1 << 20;
/// Default instruction budget of one call or run; exceeding it is an error (a hang).
pub const DEFAULT_MAX_STEPS: u64 = 50_000_000;

/// Linux/newlib-style system-call numbers the machine understands (in `a7`): `read` (fd 0 reads
/// [`Machine::set_input`]'s bytes, any other fd answers `-EBADF`), `write` (fd 1 and 2 collected),
/// `exit`.
const SYS_READ: u32 = 63;
const SYS_WRITE: u32 = 64;
const SYS_EXIT: u32 = 93;

struct Region {
    base: u32,
    bytes: Vec<u8>,
}

/// Flat memory made of a few disjoint regions.
struct Mem {
    regions: Vec<Region>,
}

impl Mem {
    fn region(&mut self, addr: u32, len: u32) -> Option<(&mut Region, usize)> {
        self.regions.iter_mut().find_map(|r| {
            let off = addr.checked_sub(r.base)? as usize;
            (off + len as usize <= r.bytes.len()).then_some((r, off))
        })
    }
    fn slice_mut(&mut self, addr: u32, len: u32) -> Option<&mut [u8]> {
        let (r, off) = self.region(addr, len)?;
        r.bytes.get_mut(off..off + len as usize)
    }
}

/// An 8-byte-aligned scratch word: rvsim's `[u8]` memory reads and writes a `T` through a raw
/// pointer into the slice, which must therefore be aligned for `T` (a misaligned guest access,
/// or a region whose allocation is not aligned, would be undefined behaviour on the host).
#[repr(align(8))]
struct Scratch([u8; 8]);

impl Memory for Mem {
    fn access<T: Copy>(&mut self, addr: u32, access: MemoryAccess<T>) -> bool {
        let size = size_of::<T>();
        let Some((r, off)) = self.region(addr, size as u32) else {
            return false;
        };
        if size > 8 {
            return false; // rv32/rv64 accesses are at most 8 bytes
        }
        // Every access goes through the aligned scratch word, so any guest address is fine.
        let guest = &mut r.bytes[off..off + size];
        let mut scratch = Scratch([0; 8]);
        scratch.0[..size].copy_from_slice(guest);
        let store = matches!(access, MemoryAccess::Store(_));
        let ok = Memory::access(&mut scratch.0[..size], 0, access);
        if store {
            guest.copy_from_slice(&scratch.0[..size]);
        }
        ok
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallResult {
    /// `a0` after the call.
    pub a0: u32,
    /// `a1` after the call (the high word of a 64-bit return value).
    pub a1: u32,
    /// Retired instructions, from the first instruction of the callee through its `ret`.
    pub instret: u64,
    /// Estimated cycles of the same instructions on a CV32E40P ([`crate::timing`]).
    pub cycles: u64,
    /// `cycles − instret` by cause.
    pub stalls: Stalls,
    /// This call's number on its machine (0 for the first): what a [`Recorded::Call`] and a
    /// [`crate::table::Sample`] are matched by.
    pub seq: u64,
}

impl CallResult {
    /// `a1:a0` as the 64-bit return value of the ilp32 ABI.
    pub fn ret_u64(&self) -> u64 {
        u64::from(self.a1) << 32 | u64::from(self.a0)
    }
}

/// The end of a whole-program run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramResult {
    /// `a0` of the exit `ecall` (a7 = 93).
    pub exit_code: u32,
    /// Retired instructions from `e_entry` through the exit `ecall` inclusive (QEMU counts the
    /// same way).
    pub instret: u64,
    /// Estimated cycles of the same instructions on a CV32E40P ([`crate::timing`]).
    pub cycles: u64,
    /// Bytes the program wrote with `write` (a7 = 64) to fd 1 or 2.
    pub output: Vec<u8>,
}

/// One thing the host did to a machine while it was recording ([`Machine::start_recording`]):
/// `fw-bench rtl` replays the same writes, calls and reads on a soft core's RTL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// Bytes the host copied into simulated memory.
    Write {
        /// Where.
        addr: u32,
        /// What.
        data: Vec<u8>,
    },
    /// Bytes the host read back (the RTL must hold the same).
    Read {
        /// Where.
        addr: u32,
        /// What rvsim's memory held.
        data: Vec<u8>,
    },
    /// A call and what it did on rvsim.
    Call {
        /// The function's address.
        pc: u32,
        /// `a0..a7` (unused ones 0).
        args: [u32; 8],
        /// Its result, count and estimated cycles on rvsim.
        result: CallResult,
        /// The callee's first instruction is a 32-bit one at an address ≡ 2 (mod 4) (the
        /// caller's `jalr` takes two fetches on some cores).
        entry_split: bool,
        /// Every retired instruction of the callee.
        trace: Vec<Retired>,
    },
}

/// One retired instruction of a recorded call: where it was, its size, and what a timing model
/// sees of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retired {
    /// Its address.
    pub pc: u32,
    /// A 32-bit instruction (else a 16-bit compressed one).
    pub wide: bool,
    /// What the timing models see.
    pub insn: Insn,
}

/// Per-`pc` retired instructions and estimated cycles `(instret, cycles)`, attributed to
/// functions by [`Machine::profile_table`].
#[derive(Clone, Debug, Default)]
pub struct PcCounts(pub HashMap<u32, (u64, u64)>);

/// One row of a profile: a function and the instructions retired inside it (self cost).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileRow {
    /// Function name (demangled, hash removed).
    pub function: String,
    /// Instructions retired with `pc` inside it.
    pub instret: u64,
    /// Their estimated cycles (CV32E40P; a stall is charged to the instruction that waits).
    pub cycles: u64,
}

/// A loaded ELF plus CPU, stack and scratch memory.
pub struct Machine {
    elf: Elf,
    mem: Mem,
    scratch_used: u32,
    /// `__global_pointer$` if the image defines one (C start-up code relaxes against `gp`).
    gp: u32,
    /// Instruction budget per call or run.
    pub max_steps: u64,
    /// Execute the Zbb extension (RV32 encodings); off by default (rv32imac).
    pub zbb: bool,
    /// Standard input of a program run (`read` on fd 0, a7 = 63); empty: end of input at once.
    input: Vec<u8>,
    /// Bytes of `input` already read.
    input_pos: usize,
    funcs: Vec<(u32, u32, String)>,
    profile: Option<PcCounts>,
    /// The cycles beyond one per instruction of every call and run since profiling started.
    profile_stalls: Stalls,
    /// Calls made so far ([`CallResult::seq`]).
    calls: u64,
    /// What the host did since [`Machine::start_recording`].
    recording: Option<Vec<Recorded>>,
    /// The retired instructions of the call in progress, when recording.
    trace: Vec<Retired>,
}

impl Machine {
    /// Loads `elf` into a fresh machine.
    pub fn new(elf: Elf) -> Self {
        let mut regions: Vec<Region> = elf
            .segments
            .iter()
            .map(|s| Region {
                base: s.vaddr,
                bytes: s.bytes.clone(),
            })
            .collect();
        regions.push(Region {
            base: SCRATCH_BASE,
            bytes: vec![0; SCRATCH_SIZE as usize],
        });
        regions.push(Region {
            base: STACK_TOP - STACK_SIZE,
            bytes: vec![0; STACK_SIZE as usize],
        });
        let gp = elf.symbol("__global_pointer$").map_or(0, |s| s.addr);
        let mut funcs: Vec<(u32, u32, String)> = elf
            .symbols
            .iter()
            .filter(|s| s.kind == SymKind::Func && s.size > 0)
            .map(|s| (s.addr, s.addr + s.size, crate::names::demangle(&s.name)))
            .collect();
        funcs.sort();
        Self {
            elf,
            mem: Mem { regions },
            scratch_used: 0,
            gp,
            max_steps: DEFAULT_MAX_STEPS,
            zbb: false,
            input: Vec::new(),
            input_pos: 0,
            funcs,
            profile: None,
            profile_stalls: Stalls::default(),
            calls: 0,
            recording: None,
            trace: Vec::new(),
        }
    }

    /// Starts recording every write, read and call the host makes ([`Recorded`]).
    pub fn start_recording(&mut self) {
        self.recording.get_or_insert_with(Vec::new);
    }

    /// What was recorded since [`Machine::start_recording`] (recording goes on, afresh).
    pub fn take_recording(&mut self) -> Vec<Recorded> {
        self.recording
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Reads and loads an ELF file.
    pub fn load(path: &std::path::Path) -> Result<Self> {
        let data = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let elf = Elf::parse(&data).with_context(|| format!("parsing {}", path.display()))?;
        Ok(Self::new(elf))
    }

    /// The parsed ELF.
    pub fn elf(&self) -> &Elf {
        &self.elf
    }

    /// Address of a symbol (function or object) by its raw name.
    pub fn symbol_addr(&self, name: &str) -> Result<u32> {
        self.elf
            .symbol(name)
            .map(|s| s.addr)
            .with_context(|| format!("symbol `{name}` not found in the ELF symbol table"))
    }

    /// Reserves `len` bytes aligned to `align` (a power of two) in the scratch arena and returns
    /// their address. The arena is never freed except by [`Machine::reset_scratch`].
    pub fn alloc(&mut self, len: u32, align: u32) -> Result<u32> {
        ensure!(
            align.is_power_of_two(),
            "alignment {align} is not a power of two"
        );
        let start = (self.scratch_used + align - 1) & !(align - 1);
        let end = start.checked_add(len).context("scratch overflow")?;
        ensure!(end <= SCRATCH_SIZE, "scratch arena exhausted ({end} bytes)");
        self.scratch_used = end;
        Ok(SCRATCH_BASE + start)
    }

    /// Forgets every scratch allocation (the bytes stay until overwritten).
    pub fn reset_scratch(&mut self) {
        self.scratch_used = 0;
    }

    /// Copies `data` into simulated memory at `addr`.
    pub fn write_bytes(&mut self, addr: u32, data: &[u8]) -> Result<()> {
        let dst = self
            .mem
            .slice_mut(addr, data.len() as u32)
            .with_context(|| format!("write of {} bytes at {addr:#x}: unmapped", data.len()))?;
        dst.copy_from_slice(data);
        if let Some(r) = self.recording.as_mut() {
            r.push(Recorded::Write {
                addr,
                data: data.to_vec(),
            });
        }
        Ok(())
    }

    /// Copies `len` bytes out of simulated memory.
    pub fn read_bytes(&mut self, addr: u32, len: u32) -> Result<Vec<u8>> {
        let data = self
            .mem
            .slice_mut(addr, len)
            .with_context(|| format!("read of {len} bytes at {addr:#x}: unmapped"))?
            .to_vec();
        if let Some(r) = self.recording.as_mut() {
            r.push(Recorded::Read {
                addr,
                data: data.clone(),
            });
        }
        Ok(data)
    }

    /// Allocates scratch space for `data` (aligned to `align`), copies it in, returns the address.
    pub fn push_bytes(&mut self, data: &[u8], align: u32) -> Result<u32> {
        let addr = self.alloc(data.len() as u32, align)?;
        self.write_bytes(addr, data)?;
        Ok(addr)
    }

    /// Reads a little-endian `u32`.
    pub fn read_u32(&mut self, addr: u32) -> Result<u32> {
        let b = self.read_bytes(addr, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Calls the function `symbol` with `args` in `a0..a7` (a 64-bit argument takes two words,
    /// low first, per the ilp32 calling convention) and runs it until it returns.
    pub fn call(&mut self, symbol: &str, args: &[u32]) -> Result<CallResult> {
        let pc = self.symbol_addr(symbol)?;
        self.call_addr(pc, args)
            .with_context(|| format!("calling `{symbol}`"))
    }

    /// Starts counting retired instructions per `pc` over every following call and run.
    pub fn enable_profile(&mut self) {
        self.profile.get_or_insert_with(PcCounts::default);
    }

    /// The per-`pc` counts gathered since [`Machine::enable_profile`] (counting continues).
    pub fn profile(&self) -> Option<&PcCounts> {
        self.profile.as_ref()
    }

    /// The cycles beyond one per instruction since [`Machine::enable_profile`], by cause
    /// (all zero when not profiling).
    pub fn profile_stalls(&self) -> &Stalls {
        &self.profile_stalls
    }

    fn fresh_cpu(&self, pc: u32) -> CpuState {
        let mut cpu = CpuState::new(pc);
        cpu.x[2] = STACK_TOP; // sp
        cpu.x[3] = self.gp; // gp
        cpu
    }

    fn call_addr(&mut self, pc: u32, args: &[u32]) -> Result<CallResult> {
        ensure!(args.len() <= 8, "at most 8 argument words (a0..a7)");
        let mut cpu = self.fresh_cpu(pc);
        cpu.x[1] = RETURN_SENTINEL; // ra
        for (i, &a) in args.iter().enumerate() {
            cpu.x[10 + i] = a;
        }
        let mut sink = Vec::new();
        self.trace.clear();
        let entry_split = self.split_fetch_at(pc);
        match self.exec(&mut cpu, &mut sink)? {
            Stop::Returned {
                instret,
                cycles,
                stalls,
            } => {
                let result = CallResult {
                    a0: cpu.x[10],
                    a1: cpu.x[11],
                    instret,
                    cycles,
                    stalls,
                    seq: self.calls,
                };
                self.calls += 1;
                if let Some(r) = self.recording.as_mut() {
                    let mut words = [0; 8];
                    words[..args.len()].copy_from_slice(args);
                    r.push(Recorded::Call {
                        pc,
                        args: words,
                        result,
                        entry_split,
                        trace: std::mem::take(&mut self.trace),
                    });
                }
                Ok(result)
            }
            Stop::Exited { code, .. } => {
                bail!("the function called exit({code}) instead of returning")
            }
        }
    }

    /// Sets the standard input the program reads (`read` on fd 0), from its start.
    pub fn set_input(&mut self, bytes: Vec<u8>) {
        self.input = bytes;
        self.input_pos = 0;
    }

    /// Runs the program from `e_entry` (with `sp` at the stack top) until it exits through
    /// `ecall` with a7 = 93.
    pub fn run_program(&mut self) -> Result<ProgramResult> {
        let mut cpu = self.fresh_cpu(self.elf.entry);
        cpu.x[1] = RETURN_SENTINEL;
        let mut output = Vec::new();
        match self.exec(&mut cpu, &mut output)? {
            Stop::Exited {
                code,
                instret,
                cycles,
            } => Ok(ProgramResult {
                exit_code: code,
                instret,
                cycles,
                output,
            }),
            Stop::Returned { .. } => bail!("the entry point returned instead of calling exit"),
        }
    }

    /// Steps until the sentinel `pc`, an exit `ecall`, an error or the step budget.
    fn exec(&mut self, cpu: &mut CpuState, output: &mut Vec<u8>) -> Result<Stop> {
        let mut clock = SimpleClock::new();
        let mut timing = Cv32e40p::new();
        let mut cycles = 0u64;
        let max = self.max_steps;
        loop {
            if cpu.pc == RETURN_SENTINEL {
                if self.profile.is_some() {
                    self.profile_stalls.add(timing.stalls());
                }
                return Ok(Stop::Returned {
                    instret: clock.instret,
                    cycles,
                    stalls: *timing.stalls(),
                });
            }
            if clock.instret >= max {
                bail!(
                    "no return or exit after {max} instructions (pc = {:#x})",
                    cpu.pc
                );
            }
            let pc = cpu.pc;
            // The registers before the instruction: its divisor, address and branch condition.
            let before = cpu.x;
            let step = Interp::new(cpu, &mut self.mem, &mut clock).step();
            // The retired instruction as the timing model sees it (`None`: it did not retire).
            let retired = match &step {
                Ok(op) | Err((CpuError::Ecall, Some(op))) => Some(Insn::from_op(op, &before)),
                Err((CpuError::IllegalInstruction, None)) if self.zbb => self
                    .fetch_word(pc)
                    .and_then(zbb::decode)
                    .map(|z| Insn::from_zbb(&z)),
                Err(_) => None,
            };
            if let Some(mut insn) = retired {
                if insn.redirects() {
                    // After a Zbb instruction `cpu.pc` is still its own; Zbb never redirects.
                    insn.split_target = self.split_fetch_at(cpu.pc);
                }
                let c = timing.cycles(&insn);
                cycles += c;
                if self.recording.is_some() {
                    let wide = self.fetch_word(pc).is_some();
                    self.trace.push(Retired { pc, wide, insn });
                }
                if let Some(p) = self.profile.as_mut() {
                    let e = p.0.entry(pc).or_insert((0, 0));
                    e.0 += 1;
                    e.1 += c;
                }
            }
            match step {
                Ok(_) => {}
                Err((CpuError::Ecall, _)) => match cpu.x[17] {
                    SYS_EXIT => {
                        if self.profile.is_some() {
                            self.profile_stalls.add(timing.stalls());
                        }
                        return Ok(Stop::Exited {
                            code: cpu.x[10],
                            instret: clock.instret,
                            cycles,
                        });
                    }
                    SYS_READ => {
                        let (fd, buf, len) = (cpu.x[10], cpu.x[11], cpu.x[12]);
                        if fd == 0 {
                            let n = (len as usize).min(self.input.len() - self.input_pos);
                            let data = self.input[self.input_pos..self.input_pos + n].to_vec();
                            self.write_bytes(buf, &data)?;
                            self.input_pos += n;
                            cpu.x[10] = n as u32;
                        } else {
                            cpu.x[10] = (-9i32) as u32; // EBADF
                        }
                    }
                    SYS_WRITE => {
                        let (fd, buf, len) = (cpu.x[10], cpu.x[11], cpu.x[12]);
                        let data = self.read_bytes(buf, len)?;
                        if fd == 1 || fd == 2 {
                            output.extend_from_slice(&data);
                        }
                        cpu.x[10] = len;
                    }
                    n => bail!("unsupported ecall a7 = {n} at pc {pc:#x}"),
                },
                Err((CpuError::IllegalInstruction, None)) => {
                    let word = self.fetch_word(pc);
                    match word.and_then(zbb::decode) {
                        Some(insn) if self.zbb => {
                            insn.exec(&mut cpu.x);
                            cpu.pc = pc.wrapping_add(4);
                            clock.instret += 1;
                        }
                        found => bail!(
                            "IllegalInstruction at pc {pc:#x} ({}) after {} instructions: {}",
                            self.function_at(pc).unwrap_or("?"),
                            clock.instret,
                            match (word, found) {
                                (Some(_), Some(insn)) => format!(
                                    "{:?} is a Zbb instruction and this machine runs rv32imac \
                                     (set `Machine::zbb`, `--zbb`, for a +zbb build)",
                                    insn.op
                                ),
                                (Some(w), None) => format!("word {w:#010x}"),
                                (None, _) => "a 16-bit word rvsim does not decode".to_owned(),
                            }
                        ),
                    }
                }
                Err((err, op)) => bail!(
                    "{err:?} at pc {pc:#x} ({}) after {} instructions: {op:?}",
                    self.function_at(pc).unwrap_or("?"),
                    clock.instret
                ),
            }
        }
    }

    /// The instruction at `pc` is a 32-bit one at an address ≡ 2 (mod 4): fetching it after a
    /// jump takes two fetches (`false` for an unmapped `pc`, e.g. the return sentinel).
    fn split_fetch_at(&mut self, pc: u32) -> bool {
        pc % 4 == 2 && self.mem.slice_mut(pc, 2).is_some_and(|h| h[0] & 3 == 3)
    }

    /// The 32-bit instruction word at `pc`, or `None` if the halfword there is a compressed
    /// instruction (low bits not `11`) or `pc` is unmapped.
    fn fetch_word(&mut self, pc: u32) -> Option<u32> {
        let b = self.mem.slice_mut(pc, 4)?;
        let w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        (w & 3 == 3).then_some(w)
    }

    /// The function containing `pc`, if the symbol table says.
    pub fn function_at(&self, pc: u32) -> Option<&str> {
        let i = self.funcs.partition_point(|f| f.0 <= pc);
        let f = self.funcs.get(i.checked_sub(1)?)?;
        (pc < f.1).then_some(f.2.as_str())
    }

    /// Attributes per-`pc` counts to functions, largest first.
    pub fn profile_table(&self, counts: &PcCounts) -> Vec<ProfileRow> {
        let mut by_fn: HashMap<String, (u64, u64)> = HashMap::new();
        for (&pc, &(n, c)) in &counts.0 {
            let name = self
                .function_at(pc)
                .map_or_else(|| format!("<unknown {pc:#x}>"), str::to_owned);
            let e = by_fn.entry(name).or_insert((0, 0));
            e.0 += n;
            e.1 += c;
        }
        let mut rows: Vec<ProfileRow> = by_fn
            .into_iter()
            .map(|(function, (instret, cycles))| ProfileRow {
                function,
                instret,
                cycles,
            })
            .collect();
        rows.sort_by(|a, b| b.instret.cmp(&a.instret).then(a.function.cmp(&b.function)));
        rows
    }
}

enum Stop {
    Returned {
        instret: u64,
        cycles: u64,
        stalls: Stalls,
    },
    Exited {
        code: u32,
        instret: u64,
        cycles: u64,
    },
}
