//! `fw-bench rtl`: the C ABI's calls measured on soft-core RTL under Verilator.
//!
//! 1. **Record.** Each C ABI case of [`crate::cases::CASES`] runs on rvsim exactly as `fw-bench
//!    calls` runs it (same fixtures, same selection, every result checked against the host
//!    build), but on the RTL harness image (`crates/fw-bench/rtl/harness`: libcc_ffi.a for
//!    riscv32imc linked with a small bare-metal loop) and with the machine recording every host
//!    write, read and call ([`Recorded`]).
//! 2. **Replay.** The recording becomes an ops file (`tb.cpp`'s format); the core's Verilator
//!    model loads the image, boots the harness, and replays it: writes and reads through the
//!    core's own stores and loads, each call between two reads of the cycle and instruction
//!    counters. The empty sequence (the counter reads with nothing between) is measured before
//!    and after and subtracted, so a call's cycles are those of its `jalr` and the callee.
//! 3. **Check.** Every call's `a0`/`a1` and every read must equal rvsim's (which equal the
//!    host's), and the RTL's retired instructions must be rvsim's count plus the `jalr`, or the
//!    run fails: a measurement of different work is never reported.
//! 4. **Report.** Per core, memory configuration, entry point and case: instructions, measured
//!    cycles median / p99, cycles per instruction, and the core's timing model
//!    ([`crate::cores`]) on the same executed instructions, with its error.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};

use crate::cases::{CASES, Ctx, Image};
use crate::cores::{Core, MemConfig};
use crate::machine::{Machine, Recorded};
use crate::table::Sample;

/// Empty sequences measured before and after a case's calls.
const EMPTY_RUNS: u32 = 8;

/// One C ABI case recorded on rvsim: its samples and what the host did.
pub struct RecordedCase {
    /// `TIMELY`, `HPCC`, …
    pub algorithm: &'static str,
    /// The entry point.
    pub symbol: &'static str,
    /// Its samples (each with its call's `seq`).
    pub samples: Vec<Sample>,
    /// Every write, read and call, in order.
    pub ops: Vec<Recorded>,
    /// The image's loadable bytes: `(address, bytes)`.
    pub image: Vec<(u32, Vec<u8>)>,
    /// The harness code run between calls: `rtl_call_m`, `rtl_call_u`, `harness_main`.
    pub harness: Vec<(u32, u32)>,
    /// The `jalr` into the callee in `rtl_call_m` and in `rtl_call_u`.
    pub callers: [Option<u32>; 2],
}

impl RecordedCase {
    /// A fresh model of `core` with `mem`'s wait states, told where the harness runs.
    pub fn model(&self, core: Core, mem: MemConfig) -> crate::cores::Model {
        let mut m = core.model(mem);
        // The measured sequence the core uses (user counters on PicoRV32) and the loop.
        let k = usize::from(core == Core::PicoRv32);
        let ranges = [self.harness.get(k), self.harness.get(2)]
            .into_iter()
            .flatten()
            .copied()
            .collect();
        m.set_harness(ranges, self.callers[k]);
        m
    }
}

/// `jalr ra, 0(t6)`: the measured call in start.S.
const CALL_WORD: u32 = 0x000f_80e7;

/// The harness's code ranges and the address of the measured `jalr` in `rtl_call_m`/`_u`.
type HarnessLayout = (Vec<(u32, u32)>, [Option<u32>; 2]);

/// The harness's code ranges and the address of the measured `jalr` in `rtl_call_m`/`_u`.
fn harness_layout(m: &mut Machine) -> Result<HarnessLayout> {
    let mut ranges = Vec::new();
    let mut callers = [None, None];
    for (i, name) in ["rtl_call_m", "rtl_call_u", "harness_main"]
        .iter()
        .enumerate()
    {
        let s = m
            .elf()
            .symbol(name)
            .with_context(|| format!("`{name}` is not in the harness image"))?;
        let (addr, size) = (s.addr, s.size.max(4));
        ranges.push((addr, addr + size));
        if i < 2 {
            let code = m.read_bytes(addr, size)?;
            callers[i] = code
                .chunks_exact(2)
                .enumerate()
                .find(|(k, _)| {
                    code.get(2 * k..2 * k + 4)
                        .is_some_and(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) == CALL_WORD)
                })
                .map(|(k, _)| addr + 2 * k as u32);
        }
    }
    Ok((ranges, callers))
}

/// Runs the C ABI cases (those whose symbol contains `only`, if given) on rvsim with the
/// harness image, recording each.
pub fn record(harness: &Path, ctx: &Ctx, only: Option<&str>) -> Result<Vec<RecordedCase>> {
    let mut out = Vec::new();
    for case in CASES {
        if case.image != Image::CFirmware || only.is_some_and(|f| !case.symbol.contains(f)) {
            continue;
        }
        let mut m = Machine::load(harness)?;
        ensure!(
            m.elf().symbol(case.symbol).is_some(),
            "`{}` is not in {}",
            case.symbol,
            harness.display()
        );
        let image = m
            .elf()
            .segments
            .iter()
            .map(|s| (s.vaddr, s.bytes.clone()))
            .collect();
        let (harness, callers) = harness_layout(&mut m)?;
        m.start_recording();
        let samples = (case.run)(&mut m, ctx).with_context(|| format!("case {}", case.symbol))?;
        ensure!(!samples.is_empty(), "`{}`: no samples", case.symbol);
        out.push(RecordedCase {
            algorithm: case.algorithm,
            symbol: case.symbol,
            samples,
            ops: m.take_recording(),
            image,
            harness,
            callers,
        });
    }
    ensure!(!out.is_empty(), "no C ABI case matched");
    Ok(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The ops file of `case` (`crates/fw-bench/rtl/tb/tb.cpp` documents the format).
pub fn ops_file(case: &RecordedCase) -> String {
    let mut s = String::new();
    for (addr, bytes) in &case.image {
        let _ = writeln!(s, "L {addr:x} {}", hex(bytes));
    }
    let _ = writeln!(s, "E {EMPTY_RUNS:x}");
    for op in &case.ops {
        match op {
            Recorded::Write { addr, data } => {
                let _ = writeln!(s, "W {addr:x} {}", hex(data));
            }
            Recorded::Read { addr, data } => {
                let _ = writeln!(s, "R {addr:x} {:x}", data.len());
            }
            Recorded::Call {
                pc, args, result, ..
            } => {
                let _ = write!(s, "C {:x} {pc:x}", result.seq);
                for a in args {
                    let _ = write!(s, " {a:x}");
                }
                s.push('\n');
            }
        }
    }
    let _ = writeln!(s, "E {EMPTY_RUNS:x}");
    s
}

/// One call as the RTL measured it: cycles and instructions with the empty sequence
/// subtracted (the caller's `jalr` and the callee).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measured {
    /// Cycles.
    pub cycles: u64,
    /// Retired instructions (rvsim's count + 1).
    pub instret: u64,
}

/// What a replay of one case on one core measured, checked against rvsim.
pub struct Replay {
    /// Per call `seq`: the measurement.
    pub calls: BTreeMap<u64, Measured>,
    /// The empty sequence: `(cycles, instret)`, the median of its runs.
    pub empty: (u64, u64),
    /// The empty sequence's fewest and most cycles over its runs.
    pub empty_range: (u64, u64),
    /// Simulated cycles of the whole run (boot and harness included).
    pub total_cycles: u64,
}

fn num(s: Option<&str>, line: &str) -> Result<u64> {
    let s = s.with_context(|| format!("short line from the testbench: {line}"))?;
    u64::from_str_radix(s, 16).with_context(|| format!("bad number in: {line}"))
}

/// Runs `case` on the Verilator model `tb` (one of `target/rtl/<core>/Vtb`) with `mem`'s wait
/// states, and checks every result against rvsim's.
pub fn replay(tb: &Path, case: &RecordedCase, mem: MemConfig, dir: &Path) -> Result<Replay> {
    std::fs::create_dir_all(dir)?;
    let ops_path = dir.join(format!("{}-{}.ops", case.symbol, case.ops.len()));
    std::fs::File::create(&ops_path)
        .and_then(|mut f| f.write_all(ops_file(case).as_bytes()))
        .with_context(|| format!("writing {}", ops_path.display()))?;
    let out = Command::new(tb)
        .arg(&ops_path)
        .arg(format!("+iws={}", mem.iws))
        .arg(format!("+dws={}", mem.dws))
        .output()
        .with_context(|| format!("running {}", tb.display()))?;
    let _ = std::fs::remove_file(&ops_path);
    let text = String::from_utf8_lossy(&out.stdout);
    if let Some(e) = text.lines().find(|l| l.starts_with("error:")) {
        bail!("{}: {e}", tb.display());
    }
    ensure!(
        out.status.success(),
        "{} exited with {}: {}",
        tb.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = text.lines();
    let mut empties = Vec::new();
    let mut take_empties = |lines: &mut std::str::Lines<'_>| -> Result<()> {
        for _ in 0..EMPTY_RUNS {
            let l = lines.next().context("testbench output ended early")?;
            let mut w = l.split(' ');
            ensure!(w.next() == Some("E"), "expected an E line, got: {l}");
            empties.push((num(w.next(), l)?, num(w.next(), l)?));
        }
        Ok(())
    };
    take_empties(&mut lines)?;
    let mut raw = Vec::new();
    for op in &case.ops {
        let l = lines.next().context("testbench output ended early")?;
        let mut w = l.split(' ');
        match (op, w.next()) {
            (Recorded::Write { .. }, Some("W")) => {}
            (Recorded::Read { addr, data }, Some("R")) => {
                let got = w.next().unwrap_or("");
                ensure!(
                    got == hex(data),
                    "{}: read of {} bytes at {addr:#x}: RTL {got}, rvsim {}",
                    case.symbol,
                    data.len(),
                    hex(data)
                );
            }
            (Recorded::Call { result, .. }, Some("C")) => {
                let (seq, a0, a1) = (num(w.next(), l)?, num(w.next(), l)?, num(w.next(), l)?);
                let (cyc, ins) = (num(w.next(), l)?, num(w.next(), l)?);
                ensure!(
                    seq == result.seq,
                    "testbench answered call {seq} for {}",
                    result.seq
                );
                ensure!(
                    (a0, a1) == (u64::from(result.a0), u64::from(result.a1)),
                    "{} call {seq}: RTL returned a0 {a0:#x} a1 {a1:#x}, rvsim {:#x} {:#x}",
                    case.symbol,
                    result.a0,
                    result.a1
                );
                raw.push((seq, cyc, ins, result.instret));
            }
            _ => bail!("testbench line `{l}` does not answer {op:?}"),
        }
    }
    take_empties(&mut lines)?;
    let total_cycles = lines
        .next()
        .and_then(|l| l.strip_prefix("cycles "))
        .and_then(|n| n.parse().ok())
        .context("no `cycles` line at the end")?;
    let mut ec: Vec<u64> = empties.iter().map(|e| e.0).collect();
    ec.sort_unstable();
    let ei: Vec<u64> = empties.iter().map(|e| e.1).collect();
    ensure!(
        ei.iter().all(|&i| i == ei[0]),
        "the empty sequence retired {ei:?} instructions"
    );
    let empty = (ec[(ec.len() - 1) / 2], ei[0]);
    let mut calls = BTreeMap::new();
    for (seq, cyc, ins, rvsim) in raw {
        let m = Measured {
            cycles: cyc.checked_sub(empty.0).with_context(|| {
                format!("call {seq}: {cyc} cycles, fewer than the empty sequence's")
            })?,
            instret: ins.saturating_sub(empty.1),
        };
        ensure!(
            m.instret == rvsim + 1,
            "{} call {seq}: the RTL retired {} instructions (jalr included), rvsim {rvsim}",
            case.symbol,
            m.instret
        );
        calls.insert(seq, m);
    }
    Ok(Replay {
        calls,
        empty,
        empty_range: (ec[0], ec[ec.len() - 1]),
        total_cycles,
    })
}

/// One row: a case label of an entry point on one core and memory configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct RtlRow {
    /// The core.
    pub core: Core,
    /// Its memory's wait states.
    pub mem: MemConfig,
    /// `TIMELY`, …
    pub algorithm: String,
    /// The entry point.
    pub symbol: String,
    /// The case label.
    pub case: String,
    /// Calls.
    pub n: usize,
    /// Median instructions of the callee (rvsim's count, as in fw-bench's tables).
    pub instr_median: u64,
    /// Measured cycles, median and p99 (the call's `jalr` included).
    pub cycles_median: u64,
    /// p99 (nearest rank).
    pub cycles_p99: u64,
    /// Measured cycles over measured instructions (all calls).
    pub cpi: f64,
    /// The core's timing model, median over the same calls.
    pub model_median: u64,
    /// The model's instruction and data cache misses per call, medians (VexRiscv; else 0).
    pub model_misses: (u64, u64),
}

impl RtlRow {
    /// The model's error on the median, in percent of the measured median.
    pub fn error_pct(&self) -> f64 {
        (self.model_median as f64 - self.cycles_median as f64) * 100.0
            / self.cycles_median.max(1) as f64
    }
}

fn median_p99(v: &mut [u64]) -> (u64, u64) {
    v.sort_unstable();
    let n = v.len();
    let rank = ((0.99 * n as f64).ceil() as usize).clamp(1, n) - 1;
    (v[(n - 1) / 2], v[rank])
}

/// The rows of `case` on `core` from its replay.
pub fn rows(
    case: &RecordedCase,
    core: Core,
    mem: MemConfig,
    replay: &Replay,
) -> Result<Vec<RtlRow>> {
    // The model sees every call of the case in order (set-up calls too), as the core did.
    let mut model = case.model(core, mem);
    let mut per_call: BTreeMap<u64, (u64, crate::cores::Counts)> = BTreeMap::new();
    for op in &case.ops {
        if let Recorded::Call {
            result,
            trace,
            entry_split,
            ..
        } = op
        {
            let before = model.counts;
            let c = model.call_cycles(*entry_split, trace);
            let after = model.counts;
            per_call.insert(
                result.seq,
                (
                    c,
                    crate::cores::Counts {
                        icache_misses: after.icache_misses - before.icache_misses,
                        dcache_misses: after.dcache_misses - before.dcache_misses,
                        fetch_wait: after.fetch_wait - before.fetch_wait,
                    },
                ),
            );
        }
    }
    let mut order: Vec<&str> = Vec::new();
    // Per case label: (instructions, measured, (modelled cycles, model counts)) per call.
    type Group = Vec<(u64, Measured, (u64, crate::cores::Counts))>;
    let mut groups: BTreeMap<&str, Group> = BTreeMap::new();
    for s in &case.samples {
        let seq = s.call.context("a sample without its call")?;
        let m = *replay
            .calls
            .get(&seq)
            .context("a sample's call was not measured")?;
        let model = *per_call
            .get(&seq)
            .context("a sample's call was not recorded")?;
        groups
            .entry(&s.case)
            .or_insert_with(|| {
                order.push(&s.case);
                Vec::new()
            })
            .push((s.instret, m, model));
    }
    Ok(order
        .into_iter()
        .map(|label| {
            let g = &groups[label];
            let mut instr: Vec<u64> = g.iter().map(|x| x.0).collect();
            let mut cyc: Vec<u64> = g.iter().map(|x| x.1.cycles).collect();
            let mut model: Vec<u64> = g.iter().map(|x| x.2.0).collect();
            let mut imiss: Vec<u64> = g.iter().map(|x| x.2.1.icache_misses).collect();
            let mut dmiss: Vec<u64> = g.iter().map(|x| x.2.1.dcache_misses).collect();
            let cpi = cyc.iter().sum::<u64>() as f64
                / g.iter().map(|x| x.1.instret).sum::<u64>().max(1) as f64;
            let (im, _) = median_p99(&mut instr);
            let (cm, cp) = median_p99(&mut cyc);
            let (mm, _) = median_p99(&mut model);
            let (im_miss, _) = median_p99(&mut imiss);
            let (dm_miss, _) = median_p99(&mut dmiss);
            RtlRow {
                core,
                mem,
                algorithm: case.algorithm.to_owned(),
                symbol: case.symbol.to_owned(),
                case: label.to_owned(),
                n: g.len(),
                instr_median: im,
                cycles_median: cm,
                cycles_p99: cp,
                cpi,
                model_median: mm,
                model_misses: (im_miss, dm_miss),
            }
        })
        .collect())
}

/// A job: one case on one core and memory configuration.
pub struct Job<'a> {
    /// The case.
    pub case: &'a RecordedCase,
    /// The core.
    pub core: Core,
    /// Wait states.
    pub mem: MemConfig,
}

/// The empty sequence on one core and memory configuration: `(median cycles, instructions)`
/// and the fewest and most cycles over its runs.
pub type Empty = (Core, MemConfig, (u64, u64), (u64, u64));

/// Everything a run produced.
pub struct RtlReport {
    /// Rows in job order.
    pub rows: Vec<RtlRow>,
    /// Per (core, memory): the empty sequence.
    pub empties: Vec<Empty>,
}

/// Runs `jobs` on at most `threads` testbench processes at once (`tb_dir/<core>/Vtb`).
pub fn run(jobs: &[Job<'_>], tb_dir: &Path, threads: usize) -> Result<RtlReport> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Result<Replay>>>> =
        jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let scratch: PathBuf = tb_dir.join("ops");
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let tb = tb_dir.join(job.core.slug()).join("Vtb");
                    let dir = scratch.join(format!("{}-{}", job.core.slug(), i));
                    let r = replay(&tb, job.case, job.mem, &dir).with_context(|| {
                        format!("{} ({}) on {}", job.case.symbol, job.mem, job.core.name())
                    });
                    let _ = std::fs::remove_dir(&dir);
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(r);
                    }
                }
            });
        }
    });
    let _ = std::fs::remove_dir(&scratch);
    let mut rep = RtlReport {
        rows: Vec::new(),
        empties: Vec::new(),
    };
    for (job, slot) in jobs.iter().zip(results) {
        let r = slot
            .into_inner()
            .ok()
            .flatten()
            .context("a testbench job did not run")??;
        if !rep
            .empties
            .iter()
            .any(|e| e.0 == job.core && e.1 == job.mem)
        {
            rep.empties
                .push((job.core, job.mem, r.empty, r.empty_range));
        }
        rep.rows.extend(rows(job.case, job.core, job.mem, &r)?);
    }
    Ok(rep)
}

/// The per-core table of `rows` (one core and memory configuration) as markdown.
pub fn markdown(rows: &[RtlRow]) -> String {
    let caches = rows.iter().any(|r| r.core == Core::VexRiscv);
    let mut s = String::from(
        "| algorithm | entry point | case | n | instructions median | cycles median | cycles p99 | \
         cycles / instruction | model median | model error |",
    );
    s.push_str(if caches {
        " model I$ / D$ misses |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    } else {
        "\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
    });
    for r in rows {
        let misses = if caches {
            format!(" {} / {} |", r.model_misses.0, r.model_misses.1)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {} | {} | {} | {} | {:.2} | {} | {:+.1} % |{misses}",
            r.algorithm,
            r.symbol,
            r.case,
            r.n,
            r.instr_median,
            r.cycles_median,
            r.cycles_p99,
            r.cpi,
            r.model_median,
            r.error_pct()
        );
    }
    s
}

/// `rows` as tab-separated values (the recorded RTL figures the model is held against).
pub fn tsv(rows: &[RtlRow]) -> String {
    let mut s = String::from(
        "core\tmem\talgorithm\tsymbol\tcase\tn\tinstr_median\tcycles_median\tcycles_p99\tmodel_median\n",
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            r.core.slug(),
            r.mem.slug(),
            r.algorithm,
            r.symbol,
            r.case,
            r.n,
            r.instr_median,
            r.cycles_median,
            r.cycles_p99,
            r.model_median
        );
    }
    s
}

/// The largest model error (in percent, either sign) a core's rows may show on a memory
/// configuration. Zero wait states: the goal of 5 % on CV32E40P, Ibex and PicoRV32;
/// VexRiscv misses its 15 % goal (docs/performance.md says why), so its bound only stops drift.
/// With wait states the models are rougher (the fetch model of [`crate::cores`]).
pub fn default_bound(core: Core, mem: MemConfig) -> f64 {
    match (core, mem == MemConfig::default()) {
        (Core::VexRiscv, true) => 30.0,
        (Core::VexRiscv, false) => 40.0,
        (_, true) => 5.0,
        (_, false) => 15.0,
    }
}

/// The rows whose model error leaves `bound(core)`, as readable lines.
pub fn out_of_bounds(rows: &[RtlRow], bound: impl Fn(Core, MemConfig) -> f64) -> Vec<String> {
    rows.iter()
        .filter(|r| r.error_pct().abs() > bound(r.core, r.mem))
        .map(|r| {
            format!(
                "{} ({}): `{}` {}: model {} cycles, RTL {} ({:+.1} %, bound ±{} %)",
                r.core.name(),
                r.mem,
                r.symbol,
                r.case,
                r.model_median,
                r.cycles_median,
                r.error_pct(),
                bound(r.core, r.mem)
            )
        })
        .collect()
}

/// Row key for the cross-core tables.
fn key(r: &RtlRow) -> (String, String, String) {
    (r.algorithm.clone(), r.symbol.clone(), r.case.clone())
}

/// The generated block of docs/performance.md: the goal rows across cores against the
/// 82-cycle budget, then every row per core and memory configuration.
pub fn doc_block(rep: &RtlReport, limit: usize, goal_rows: &[(String, String, String)]) -> String {
    let mut s = String::new();
    let mut configs: Vec<(Core, MemConfig)> = Vec::new();
    for r in &rep.rows {
        if !configs.contains(&(r.core, r.mem)) {
            configs.push((r.core, r.mem));
        }
    }
    let find = |c: Core, m: MemConfig, k: &(String, String, String)| {
        rep.rows
            .iter()
            .find(|r| r.core == c && r.mem == m && key(r) == *k)
    };
    let mut mems: Vec<MemConfig> = Vec::new();
    for (_, m) in &configs {
        if !mems.contains(m) {
            mems.push(*m);
        }
    }
    let verdict = |v: u64| {
        if v <= 82 {
            format!("{v} ✔")
        } else {
            v.to_string()
        }
    };
    for (n, mem) in mems.iter().enumerate() {
        let mem = *mem;
        let cores: Vec<Core> = Core::ALL
            .into_iter()
            .filter(|c| configs.contains(&(*c, mem)))
            .collect();
        if n == 0 {
            let _ = write!(
                s,
                "### Cycles per call on four cores' RTL against the 82-cycle budget\n\n\
                 Measured under Verilator on each core's RTL (at most {limit} calls per case, the \
                 same calls as above on the riscv32imc harness image): median cycles per call, the \
                 caller's `jalr` included, on a memory with {mem}; *model* is fw-bench's CV32E40P \
                 model of the same instructions plus the call's jump (2 cycles). ✔: at most 82 \
                 cycles.\n\n"
            );
        } else {
            let _ = write!(
                s,
                "\nThe same rows on a memory with {mem} (*model*: the CV32E40P model with the \
                 fetch model of `cores.rs`):\n\n"
            );
        }
        s.push_str("| algorithm | entry point | case | instructions | model (CV32E40P) |");
        for c in &cores {
            let _ = write!(s, " {} |", c.name());
        }
        s.push_str("\n|---|---|---|---:|---:|");
        for _ in &cores {
            s.push_str("---:|");
        }
        s.push('\n');
        for k in goal_rows {
            let Some(first) = cores.first().and_then(|c| find(*c, mem, k)) else {
                continue;
            };
            let cv = find(Core::Cv32e40p, mem, k).map(|r| r.model_median);
            let _ = write!(
                s,
                "| {} | `{}` | {} | {} | {} |",
                k.0,
                k.1,
                k.2,
                first.instr_median,
                cv.map_or("—".to_owned(), verdict)
            );
            for c in &cores {
                let v = find(*c, mem, k).map_or("—".to_owned(), |r| verdict(r.cycles_median));
                let _ = write!(s, " {v} |");
            }
            s.push('\n');
        }
        // Which core meets which goal row, in words.
        s.push('\n');
        for c in &cores {
            let met: Vec<String> = goal_rows
                .iter()
                .filter_map(|k| find(*c, mem, k))
                .filter(|r| r.cycles_median <= 82)
                .map(|r| format!("{} `{}` {}", r.algorithm, r.symbol, r.case))
                .collect();
            let _ = writeln!(
                s,
                "* {} ({mem}): {} of {} goal rows within 82 cycles{}{}",
                c.name(),
                met.len(),
                goal_rows.len(),
                if met.is_empty() { "" } else { ": " },
                met.join("; ")
            );
        }
    }
    s.push_str("\nModel error per core (each core's own model, `crates/fw-bench/src/cores.rs`; the error of the median, every row):\n\n\
                | core | memory | rows | largest |error| | mean |error| | the empty sequence (cycles, instructions) |\n|---|---|---:|---:|---:|---|\n");
    for (c, m) in &configs {
        let errs: Vec<f64> = rep
            .rows
            .iter()
            .filter(|r| r.core == *c && r.mem == *m)
            .map(|r| r.error_pct().abs())
            .collect();
        let e = rep.empties.iter().find(|e| e.0 == *c && e.1 == *m);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.1} % | {:.1} % | {} |",
            c.name(),
            m,
            errs.len(),
            errs.iter().cloned().fold(0.0, f64::max),
            errs.iter().sum::<f64>() / errs.len().max(1) as f64,
            e.map_or("—".to_owned(), |e| {
                if e.3.0 == e.3.1 {
                    format!("{}, {}", e.2.0, e.2.1)
                } else {
                    format!("{} ({}..{}), {}", e.2.0, e.3.0, e.3.1, e.2.1)
                }
            })
        );
    }
    for (c, m) in &configs {
        let rows: Vec<RtlRow> = rep
            .rows
            .iter()
            .filter(|r| r.core == *c && r.mem == *m)
            .cloned()
            .collect();
        let _ = write!(s, "\n#### {}, {}\n\n{}", c.name(), m, markdown(&rows));
    }
    s
}

const BEGIN: &str = "<!-- fw-bench-rtl:begin (generated by scripts/perf-report.sh; edits inside are overwritten) -->";
const END: &str = "<!-- fw-bench-rtl:end -->";

/// `doc` with its RTL block replaced by `block`.
pub fn splice(doc: &str, block: &str) -> Result<String> {
    crate::report::splice_between(doc, BEGIN, END, block.trim_start())
}

/// A row of a recorded-figures file ([`tsv`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRow {
    /// The core.
    pub core: Core,
    /// Its memory.
    pub mem: MemConfig,
    /// `(algorithm, symbol, case)`.
    pub key: (String, String, String),
    /// Calls.
    pub n: usize,
    /// Median instructions when recorded.
    pub instr_median: u64,
    /// The RTL's median cycles when recorded.
    pub cycles_median: u64,
}

/// Parses a recorded-figures file; `# limit N` in its head gives the calls per case it used.
pub fn parse_tsv(text: &str) -> Result<(usize, Vec<RecordedRow>)> {
    let mut limit = None;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(l) = line.strip_prefix("# limit ") {
            limit = Some(l.trim().parse().context("bad `# limit` line")?);
            continue;
        }
        if line.starts_with('#') || line.starts_with("core\t") || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        ensure!(
            f.len() == 10,
            "line {}: {} fields, expected 10",
            i + 1,
            f.len()
        );
        rows.push(RecordedRow {
            core: Core::from_slug(f[0])
                .with_context(|| format!("line {}: core {}", i + 1, f[0]))?,
            mem: MemConfig::from_slug(f[1])
                .with_context(|| format!("line {}: memory {}", i + 1, f[1]))?,
            key: (f[2].to_owned(), f[3].to_owned(), f[4].to_owned()),
            n: f[5].parse()?,
            instr_median: f[6].parse()?,
            cycles_median: f[7].parse()?,
        });
    }
    Ok((limit.context("no `# limit N` line")?, rows))
}

/// The model on every recorded case, row by row against the recorded RTL medians: rows whose
/// calls changed (another count of calls or of instructions: re-record) or whose model error
/// leaves `bound(core)`, as lines; empty when all hold.
pub fn check_recorded(
    cases: &[RecordedCase],
    recorded: &[RecordedRow],
    bound: impl Fn(Core, MemConfig) -> f64,
) -> Result<(Vec<String>, usize)> {
    let mut problems = Vec::new();
    let mut checked = 0;
    let mut configs: Vec<(Core, MemConfig)> = Vec::new();
    for r in recorded {
        if !configs.contains(&(r.core, r.mem)) {
            configs.push((r.core, r.mem));
        }
    }
    for (core, mem) in configs {
        for case in cases {
            // The model alone: the "measured" cycles are the recorded ones.
            let mut model = case.model(core, mem);
            let modelled: BTreeMap<u64, u64> = case
                .ops
                .iter()
                .filter_map(|op| match op {
                    Recorded::Call {
                        result,
                        trace,
                        entry_split,
                        ..
                    } => Some((result.seq, model.call_cycles(*entry_split, trace))),
                    _ => None,
                })
                .collect();
            let mut groups: BTreeMap<&str, (Vec<u64>, Vec<u64>)> = BTreeMap::new();
            for s in &case.samples {
                let seq = s.call.context("a sample without its call")?;
                let g = groups.entry(&s.case).or_default();
                g.0.push(s.instret);
                g.1.push(modelled[&seq]);
            }
            for (label, (mut instr, mut model)) in groups {
                let k = (
                    case.algorithm.to_owned(),
                    case.symbol.to_owned(),
                    label.to_owned(),
                );
                let Some(rec) = recorded
                    .iter()
                    .find(|r| r.core == core && r.mem == mem && r.key == k)
                else {
                    problems.push(format!(
                        "{} ({mem}): `{}` {label}: not recorded",
                        core.name(),
                        k.1
                    ));
                    continue;
                };
                let n = instr.len();
                let (im, _) = median_p99(&mut instr);
                let (mm, _) = median_p99(&mut model);
                if n != rec.n || im != rec.instr_median {
                    problems.push(format!(
                        "{} ({mem}): `{}` {label}: {n} calls of median {im} instructions, recorded \
                         {} of {} (the code or the cases changed: re-record with scripts/rtl.sh --record)",
                        core.name(),
                        k.1,
                        rec.n,
                        rec.instr_median
                    ));
                    continue;
                }
                let err = (mm as f64 - rec.cycles_median as f64) * 100.0
                    / rec.cycles_median.max(1) as f64;
                if err.abs() > bound(core, mem) {
                    problems.push(format!(
                        "{} ({mem}): `{}` {label}: model {mm} cycles, recorded RTL {} ({err:+.1} %, bound ±{} %)",
                        core.name(),
                        k.1,
                        rec.cycles_median,
                        bound(core, mem)
                    ));
                }
                checked += 1;
            }
        }
    }
    Ok((problems, checked))
}

/// The functions one entry point's per-event calls execute (its sampled calls and the calls
/// made between them): raw symbol name, address, size and instructions retired in them, in
/// order of first execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HotPath {
    /// The entry point.
    pub symbol: &'static str,
    /// `(raw name, address, size, instructions retired)` per function.
    pub functions: Vec<(String, u32, u32, u64)>,
    /// Distinct bytes of code the sampled calls executed.
    pub executed_bytes: u32,
    /// The halfwords behind `executed_bytes`.
    halfwords: std::collections::BTreeSet<u32>,
    /// Median over the sampled calls of the instruction cache misses the call has when the
    /// cache already holds everything its own previous run left (4 KiB direct-mapped, 32-byte
    /// lines: the code of one call that maps to the same lines evicts itself).
    pub self_conflicts: u64,
}

/// The hot paths of `cases` in `elf` (the image they were recorded on).
pub fn hot_paths(cases: &[RecordedCase], elf: &crate::elf::Elf) -> Vec<HotPath> {
    let mut funcs: Vec<&crate::elf::Symbol> = elf
        .symbols
        .iter()
        .filter(|s| s.kind == crate::elf::SymKind::Func && s.size > 0)
        .collect();
    funcs.sort_by_key(|s| s.addr);
    let find = |pc: u32| {
        let i = funcs.partition_point(|f| f.addr <= pc);
        funcs
            .get(i.checked_sub(1)?)
            .copied()
            .filter(|f| pc < f.addr + f.size)
    };
    let mut out: Vec<HotPath> = Vec::new();
    for case in cases {
        let sampled: std::collections::BTreeSet<u64> =
            case.samples.iter().filter_map(|s| s.call).collect();
        // The per-event calls: the sampled ones and every call made between them (a pacer's
        // enqueue beside its `next`), not the set-up (`*_init`, `*_default`, `*_set_state`).
        let first = sampled.first().copied().unwrap_or(0);
        let mut functions: Vec<(String, u32, u32, u64)> = Vec::new();
        let mut bytes = std::collections::BTreeSet::new();
        let mut conflicts = Vec::new();
        for op in &case.ops {
            let Recorded::Call { result, trace, .. } = op else {
                continue;
            };
            let Recorded::Call { pc, .. } = op else {
                continue;
            };
            let set_up = find(*pc).is_none_or(|f| {
                f.name.ends_with("_init")
                    || f.name.ends_with("_default")
                    || f.name.ends_with("_set_state")
            });
            if result.seq < first || set_up {
                continue;
            }
            for r in trace {
                bytes.insert(r.pc);
                if r.wide {
                    bytes.insert(r.pc + 2);
                }
                if let Some(f) = find(r.pc) {
                    match functions.iter_mut().find(|x| x.1 == f.addr) {
                        Some(x) => x.3 += 1,
                        None => functions.push((f.name.clone(), f.addr, f.size, 1)),
                    }
                }
            }
            if !sampled.contains(&result.seq) {
                continue;
            }
            // The call run twice through a direct-mapped I$: misses of the second run.
            let mut tags: Vec<Option<u32>> = vec![None; 128];
            let mut misses = 0;
            for pass in 0..2 {
                for r in trace {
                    for pc in [r.pc, r.pc + if r.wide { 2 } else { 0 }] {
                        let line = pc / 32;
                        let slot = &mut tags[line as usize % 128];
                        if *slot != Some(line) {
                            *slot = Some(line);
                            if pass == 1 {
                                misses += 1;
                            }
                        }
                    }
                }
            }
            conflicts.push(misses);
        }
        let (self_conflicts, _) = if conflicts.is_empty() {
            (0, 0)
        } else {
            median_p99(&mut conflicts)
        };
        match out.iter_mut().find(|h| h.symbol == case.symbol) {
            Some(h) => {
                for f in functions {
                    match h.functions.iter_mut().find(|x| x.1 == f.1) {
                        Some(x) => x.3 += f.3,
                        None => h.functions.push(f),
                    }
                }
                h.halfwords.extend(bytes);
                h.executed_bytes = h.halfwords.len() as u32 * 2;
                h.self_conflicts = h.self_conflicts.max(self_conflicts);
            }
            None => out.push(HotPath {
                symbol: case.symbol,
                functions,
                executed_bytes: bytes.len() as u32 * 2,
                halfwords: bytes,
                self_conflicts,
            }),
        }
    }
    out
}

/// A linker-script fragment placing every hot path's functions together, entry point by
/// entry point in table order, each function once (where its first user puts it): include it
/// at the head of `.text` (`crates/fw-bench/rtl/harness/link.ld`).
pub fn hot_ld(paths: &[HotPath]) -> String {
    let mut s = String::from(
        "/* Generated by `fw-bench rtl-layout` (scripts/rtl.sh): the per-event entry points and the\n \
         * functions their calls execute, contiguous, entry point by entry point. Each entry point\n \
         * starts a 4 KiB window at the offset where the code run between calls (the harness loop\n \
         * before this fragment) ends, so in a 4 KiB direct-mapped cache its hot path and that loop\n \
         * take different lines. */\n__hot_start = .;\n",
    );
    let mut placed = std::collections::BTreeSet::new();
    for p in paths {
        let _ = writeln!(
            s,
            "/* {} */\n. = ALIGN(0x1000) + (__hot_start & 0xfff);",
            p.symbol
        );
        for (name, ..) in &p.functions {
            if placed.insert(name.clone()) {
                let _ = writeln!(s, "*(.text.{name})");
            }
        }
    }
    s
}

/// The hot paths as a markdown table: bytes of code per entry point.
pub fn hot_markdown(paths: &[HotPath]) -> String {
    let mut s = String::from(
        "| entry point | functions executed | their bytes | bytes executed | I$ self-conflict misses per call (median) |\n\
         |---|---:|---:|---:|---:|\n",
    );
    for p in paths {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} |",
            p.symbol,
            p.functions.len(),
            p.functions.iter().map(|f| f.2).sum::<u32>(),
            p.executed_bytes,
            p.self_conflicts
        );
    }
    s
}

/// The layout goal for VexRiscv over CV32E40P cycles on a row, if any: HPCC's one-hop `ai`
/// within 1.3×, TIMELY and CATS within 1.2× (docs/performance.md, "Hot code").
fn layout_goal(algorithm: &str, case: &str) -> Option<f64> {
    match algorithm {
        "TIMELY" | "CATS" => Some(1.2),
        "HPCC" if case == "1 hop, ai" => Some(1.3),
        _ => None,
    }
}

/// The hot-code layout on VexRiscv: goal rows' cycles with the plain and the hot image beside
/// CV32E40P's, and the hot paths' sizes.
pub fn layout_markdown(
    plain: &[RtlRow],
    hot: &[RtlRow],
    hot_paths: &[HotPath],
    goal_rows: &[(String, String, String)],
) -> String {
    let zero = MemConfig::default();
    let find = |rows: &[RtlRow], c: Core, k: &(String, String, String)| {
        rows.iter()
            .find(|r| r.core == c && r.mem == zero && key(r) == *k)
            .cloned()
    };
    let mut s = String::from(
        "\n### Hot code laid out for VexRiscv's 4 KiB direct-mapped instruction cache\n\n\
         *Plain*: the harness image as the linker lays it out by default. *Hot*: the same code \
         with `fw-bench rtl-layout`'s linker-script fragment after the harness loop at the \
         head of `.text`: each entry point starts a 4 KiB window at the offset where that loop \
         ends, followed by the functions its per-event calls execute (each function once). Median cycles at zero wait states, the calls as above; *ratio* is hot VexRiscv \
         over CV32E40P, against the layout goal (HPCC 1 hop `ai` ≤ 1.3, TIMELY and CATS ≤ 1.2); \
         I$ and D$ misses are the VexRiscv model's per call (median), *refill cycles* what it \
         charges for them, and the last column what is left of VexRiscv's excess over CV32E40P: \
         its pipeline (taken branches, jumps, stores and load-use cost more than on CV32E40P).\n\n\
         | algorithm | entry point | case | CV32E40P | VexRiscv plain | VexRiscv hot | ratio (goal) | I$ misses plain / hot | D$ misses hot | hot: refill cycles (model) | hot: cycles beyond CV32E40P's, refills aside |\n\
         |---|---|---|---:|---:|---:|---|---:|---:|---:|---:|\n",
    );
    // Per algorithm with a goal: (rows met, rows).
    let mut verdicts: Vec<(String, usize, usize)> = Vec::new();
    for k in goal_rows {
        let (Some(cv), Some(vp), Some(vh)) = (
            find(plain, Core::Cv32e40p, k),
            find(plain, Core::VexRiscv, k),
            find(hot, Core::VexRiscv, k),
        ) else {
            continue;
        };
        let ratio = vh.cycles_median as f64 / cv.cycles_median.max(1) as f64;
        let goal = layout_goal(&k.0, &k.2).map_or(String::new(), |g| {
            let name = if k.0 == "HPCC" {
                format!("HPCC {}", k.2)
            } else {
                k.0.clone()
            };
            match verdicts.iter_mut().find(|v| v.0 == name) {
                Some(v) => {
                    v.1 += usize::from(ratio <= g);
                    v.2 += 1;
                }
                None => verdicts.push((name, usize::from(ratio <= g), 1)),
            }
            format!(" (≤ {g}: {})", if ratio <= g { "✔" } else { "**missed**" })
        });
        let refill = vh.model_misses.0 * (crate::cores::VEX_ICACHE_MISS + 8)
            + vh.model_misses.1 * (crate::cores::VEX_DCACHE_MISS + 8);
        let rest = vh.cycles_median as i64 - cv.cycles_median as i64 - refill as i64;
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {} | {} | {} | {ratio:.2}{goal} | {} / {} | {} | {refill} | {rest} |",
            k.0,
            k.1,
            k.2,
            cv.cycles_median,
            vp.cycles_median,
            vh.cycles_median,
            vp.model_misses.0,
            vh.model_misses.0,
            vh.model_misses.1
        );
    }
    s.push_str("\nThe goals with the hot image: ");
    s.push_str(
        &verdicts
            .iter()
            .map(|(n, met, all)| format!("{n}: {met} of {all} rows met"))
            .collect::<Vec<_>>()
            .join("; "),
    );
    s.push_str(".\n");
    s.push_str(
        "\nCode of each entry point's hot path in the hot image (every function its sampled \
         calls execute; *self-conflict misses*: the I$ misses of a call run right after \
         itself, i.e. its own code mapping to the same lines):\n\n",
    );
    s.push_str(&hot_markdown(hot_paths));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_figures_parse_and_refuse_bad_lines() {
        let text = "# fw-bench rtl\n# limit 8\ncore\tmem\talgorithm\tsymbol\tcase\tn\tinstr_median\tcycles_median\tcycles_p99\tmodel_median\n\
                    cv32e40p\ti0d0\tTIMELY\tcc_timely_on_rtt\tlow\t5\t47\t63\t63\t63\n";
        let (limit, rows) = parse_tsv(text).unwrap();
        assert_eq!(limit, 8);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].core, Core::Cv32e40p);
        assert_eq!(rows[0].cycles_median, 63);
        assert!(parse_tsv("cv32e40p\ti0d0\n").is_err());
        assert!(parse_tsv("core\tmem\n").is_err(), "no limit line");
        assert!(parse_tsv("# limit 8\nnocore\ti0d0\ta\tb\tc\t1\t2\t3\t4\t5\n").is_err());
    }

    #[test]
    fn out_of_bounds_names_the_row() {
        let row = RtlRow {
            core: Core::Ibex,
            mem: MemConfig::default(),
            algorithm: "HPCC".into(),
            symbol: "cc_hpcc_on_ack".into(),
            case: "1 hop, ai".into(),
            n: 3,
            instr_median: 195,
            cycles_median: 100,
            cycles_p99: 100,
            cpi: 1.0,
            model_median: 106,
            model_misses: (0, 0),
        };
        assert!((row.error_pct() - 6.0).abs() < 1e-9);
        let bad = out_of_bounds(std::slice::from_ref(&row), default_bound);
        assert_eq!(bad.len(), 1);
        assert!(bad[0].contains("1 hop, ai"), "{}", bad[0]);
        let ok = RtlRow {
            model_median: 104,
            ..row
        };
        assert!(out_of_bounds(&[ok], default_bound).is_empty());
    }

    #[test]
    fn splice_replaces_only_the_block() {
        let doc = format!("a\n{BEGIN}\nold\n{END}\nb\n");
        let out = splice(&doc, "new").unwrap();
        assert_eq!(out, format!("a\n{BEGIN}\n\nnew\n{END}\nb\n"));
        assert!(splice("no markers", "x").is_err());
    }
}
