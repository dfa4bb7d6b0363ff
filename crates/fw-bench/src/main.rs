//! `fw-bench` command line. See `docs/performance.md` and `cargo run -p fw-bench -- --help`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

use fw_bench::cases::Ctx;
use fw_bench::cores::{Core, MemConfig};
use fw_bench::machine::Machine;
use fw_bench::report::{self, Images};
use fw_bench::{counts, qemu, size, table};

const PROBE: &str = "target/riscv32imac-unknown-none-elf/release/fw-probe";
const C_FIRMWARE: &str = "examples/c-firmware/build/firmware.elf";
const REFERENCE: &str = "target/riscv32imac-unknown-none-elf/release/ref-probe";
const PROBE_RV64: &str = "target/riscv64imac-unknown-none-elf/release/fw-probe";

#[derive(Parser)]
#[command(
    about = "Retired riscv32 instructions and estimated CV32E40P cycles per call (rvsim ISS), profiles and code size"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Args, Clone)]
struct ImageArgs {
    /// fw-probe ELF (release, riscv32imac).
    #[arg(long, default_value = PROBE)]
    probe: PathBuf,
    /// fw-probe ELF built with opt-level "s" (size table only).
    #[arg(long)]
    probe_os: Option<PathBuf>,
    /// C example firmware ELF linked with the cc-ffi staticlib (cases on it are skipped if absent).
    #[arg(long, default_value = C_FIRMWARE)]
    c_firmware: PathBuf,
    /// ref-probe ELF: the f64 references, soft float (cases on it are skipped if absent).
    #[arg(long, default_value = REFERENCE)]
    reference: PathBuf,
    /// fw-probe ELF built with `-C target-feature=+zbb` (the Zbb column; needs --c-firmware-zbb).
    #[arg(long)]
    probe_zbb: Option<PathBuf>,
    /// C example firmware ELF built with Zbb (`make ZBB=1`), for the Zbb column.
    #[arg(long)]
    c_firmware_zbb: Option<PathBuf>,
    /// Directory of fixtures the cases draw events from.
    #[arg(long, default_value = "fixtures")]
    fixtures: PathBuf,
    /// Maximum calls per case (CI: a few).
    #[arg(long, default_value_t = 4096)]
    limit: usize,
}

impl ImageArgs {
    /// The rv32imac images, the `+zbb` ones (if both Zbb images are given) and the context.
    fn split(&self) -> (Images, Option<Images>, Ctx) {
        let c = self.c_firmware.exists().then(|| self.c_firmware.clone());
        let r = self.reference.exists().then(|| self.reference.clone());
        let zbb = match (&self.probe_zbb, &self.c_firmware_zbb) {
            (Some(p), Some(c)) => Some(Images {
                probe: p.clone(),
                probe_os: None,
                c_firmware: Some(c.clone()),
                reference: None,
                zbb: true,
            }),
            _ => None,
        };
        (
            Images {
                probe: self.probe.clone(),
                probe_os: self.probe_os.clone(),
                c_firmware: c,
                reference: r,
                zbb: false,
            },
            zbb,
            Ctx {
                fixtures: self.fixtures.clone(),
                limit: self.limit,
            },
        )
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Run every benchmark case; print the per-call table and the cycles against the line-rate
    /// budget (markdown).
    Calls {
        #[command(flatten)]
        images: ImageArgs,
        /// Only cases whose symbol contains this.
        #[arg(long)]
        only: Option<String>,
        /// Also print a per-function profile of each case.
        #[arg(long)]
        profile: bool,
    },
    /// Call one exported function with integer arguments; print a0/a1, instructions, cycles,
    /// profile.
    Call {
        /// riscv32 ELF.
        elf: PathBuf,
        /// Symbol name (as in `nm`).
        symbol: String,
        /// Argument words for a0..a7 (decimal or 0x hex).
        #[arg(value_parser = parse_word)]
        args: Vec<u32>,
        /// Print where the instructions went.
        #[arg(long)]
        profile: bool,
        /// The ELF is a `+zbb` build: execute Zbb instructions (else they are illegal).
        #[arg(long)]
        zbb: bool,
    },
    /// Run a whole program from its entry point to the exit ecall (a7 = 93).
    Run {
        /// riscv32 ELF.
        elf: PathBuf,
        /// Fail (exit 1) unless the program exits with this code.
        #[arg(long)]
        expect_exit: Option<u32>,
        /// Print where the instructions went.
        #[arg(long)]
        profile: bool,
        /// Also count under qemu-riscv32 and fail if the counts differ.
        #[arg(long)]
        qemu_check: bool,
        /// The ELF is a `+zbb` build: execute Zbb instructions (else they are illegal); QEMU runs
        /// it with `-cpu rv32,zbb=true`.
        #[arg(long)]
        zbb: bool,
    },
    /// `.text`/`.rodata`/`.data` bytes per crate of one or more linked ELF files.
    Size {
        /// riscv32 ELF files.
        #[arg(required = true)]
        elf: Vec<PathBuf>,
    },
    /// Instructions per call on riscv64 (and riscv32 beside it) under QEMU user mode, on fixture
    /// events fed to fw-probe: the rv64 block of docs/performance.md (or print it).
    Counts {
        /// fw-probe ELF for riscv64imac.
        #[arg(long, default_value = PROBE_RV64)]
        rv64: PathBuf,
        /// fw-probe ELF for riscv64imac built with `-C target-feature=+zbb`.
        #[arg(long)]
        rv64_zbb: Option<PathBuf>,
        /// fw-probe ELF for riscv32imac, counted the same way (the column beside).
        #[arg(long)]
        rv32: Option<PathBuf>,
        /// Directory of fixtures the events come from.
        #[arg(long, default_value = "fixtures")]
        fixtures: PathBuf,
        /// Maximum calls per case (CI: a few).
        #[arg(long, default_value_t = 4096)]
        limit: usize,
        /// Markdown file whose marked block is replaced; without it, print the block.
        #[arg(long)]
        update: Option<PathBuf>,
    },
    /// The C ABI cases on soft-core RTL under Verilator (scripts/rtl.sh builds the harness and
    /// the models): measured cycles per call beside each core's timing model.
    Rtl {
        #[command(flatten)]
        rtl: RtlArgs,
        /// Cores (cv32e40p, ibex, vexriscv, picorv32); default: every one whose model is built.
        #[arg(long = "core")]
        cores: Vec<String>,
        /// Memory configurations `i<N>d<M>`: N wait states on instruction fetches, M on data.
        #[arg(long = "mem", default_values_t = [String::from("i0d0")])]
        mems: Vec<String>,
        /// Verilator models `<dir>/<core>/Vtb`.
        #[arg(long, default_value = "target/rtl")]
        tb_dir: PathBuf,
        /// Testbench processes at once.
        #[arg(long, default_value_t = 2)]
        threads: usize,
        /// Write the rows as tab-separated values (the recorded figures `rtl-model` checks).
        #[arg(long)]
        tsv: Option<PathBuf>,
        /// Markdown file whose fw-bench-rtl block is replaced; without it, print the block.
        #[arg(long)]
        update: Option<PathBuf>,
        /// Fail (exit 1) if a row's model error leaves its core's bound.
        #[arg(long)]
        check_bounds: bool,
        /// The harness image with the hot-code layout (`rtl-layout --ld`): its VexRiscv rows
        /// beside the plain image's.
        #[arg(long)]
        layout_harness: Option<PathBuf>,
    },
    /// Each core's timing model on the recorded cases, against the recorded RTL figures: fails
    /// (exit 1) if a row's error leaves its core's bound or the recorded calls no longer match.
    RtlModel {
        #[command(flatten)]
        rtl: RtlArgs,
        /// The recorded figures (`fw-bench rtl --tsv`).
        #[arg(long, default_value = "crates/fw-bench/rtl/recorded.tsv")]
        recorded: PathBuf,
    },
    /// The hot path of every C ABI entry point on the harness image (functions executed, bytes,
    /// instruction-cache self-conflicts) and, with --ld, a linker-script fragment laying them out
    /// contiguously.
    RtlLayout {
        #[command(flatten)]
        rtl: RtlArgs,
        /// Write the linker-script fragment here.
        #[arg(long)]
        ld: Option<PathBuf>,
    },
    /// Regenerate the fw-bench block of docs/performance.md (or print it).
    Report {
        #[command(flatten)]
        images: ImageArgs,
        /// Markdown file whose marked block is replaced; without it, print the block.
        #[arg(long)]
        update: Option<PathBuf>,
    },
}

#[derive(clap::Args, Clone)]
struct RtlArgs {
    /// The RTL harness image (riscv32imc, libcc_ffi.a; scripts/rtl.sh builds it).
    #[arg(long, default_value = "target/rtl/harness/harness.elf")]
    harness: PathBuf,
    /// Directory of fixtures the cases draw events from.
    #[arg(long, default_value = "fixtures")]
    fixtures: PathBuf,
    /// Maximum calls per case (rtl-model: the recorded file's).
    #[arg(long)]
    limit: Option<usize>,
    /// Only cases whose symbol contains this.
    #[arg(long)]
    only: Option<String>,
}

fn parse_word(s: &str) -> Result<u32, String> {
    let r = match s.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16),
        None => s
            .parse::<u32>()
            .or_else(|_| s.parse::<i32>().map(|v| v as u32)),
    };
    r.map_err(|e| format!("{s}: {e}"))
}

fn main() -> ExitCode {
    match real_main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fw-bench: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<ExitCode> {
    match Cli::parse().cmd {
        Cmd::Calls {
            images,
            only,
            profile,
        } => {
            let (images, zbb, ctx) = images.split();
            let rep = report::run_cases(&images, &ctx, only.as_deref(), profile)?;
            let zbb_rows = match &zbb {
                Some(z) => Some(report::run_cases(z, &ctx, only.as_deref(), false)?.rows),
                None => None,
            };
            print!(
                "{}",
                table::markdown_with_zbb(&rep.rows, zbb_rows.as_deref())
            );
            print!(
                "{}",
                report::budget_markdown(&rep.rows, zbb_rows.as_deref())
            );
            print!("{}", report::breakdown_markdown(&rep.rows));
            for s in &rep.skipped {
                println!("\n*Not measured:* {s}");
            }
            for (sym, rows, stalls) in &rep.profiles {
                println!("\n{}", report::profile_markdown(sym, rows, 12));
                let instret = rows.iter().map(|r| r.instret).sum();
                println!("{}", report::stalls_markdown(stalls, instret));
            }
        }
        Cmd::Call {
            elf,
            symbol,
            args,
            profile,
            zbb,
        } => {
            let mut m = Machine::load(&elf)?;
            m.zbb = zbb;
            if profile {
                m.enable_profile();
            }
            let r = m.call(&symbol, &args)?;
            println!(
                "{symbol}: a0 = {:#x} ({}), a1 = {:#x}, a1:a0 = {}, {} instructions, \
                 {} estimated cycles (CV32E40P)",
                r.a0,
                r.a0,
                r.a1,
                r.ret_u64(),
                r.instret,
                r.cycles
            );
            if let Some(c) = m.profile() {
                println!(
                    "\n{}",
                    report::profile_markdown(&symbol, &m.profile_table(c), 20)
                );
                println!("{}", report::stalls_markdown(m.profile_stalls(), r.instret));
            }
        }
        Cmd::Run {
            elf,
            expect_exit,
            profile,
            qemu_check,
            zbb,
        } => {
            let mut m = Machine::load(&elf)?;
            m.zbb = zbb;
            if profile {
                m.enable_profile();
            }
            let r = m.run_program()?;
            if !r.output.is_empty() {
                print!("{}", String::from_utf8_lossy(&r.output));
            }
            println!(
                "{}: exit code {}, {} instructions, {} estimated cycles (CV32E40P)",
                elf.display(),
                r.exit_code,
                r.instret,
                r.cycles
            );
            if let Some(c) = m.profile() {
                println!(
                    "\n{}",
                    report::profile_markdown("the program", &m.profile_table(c), 20)
                );
                println!("{}", report::stalls_markdown(m.profile_stalls(), r.instret));
            }
            if qemu_check {
                match qemu::count(&elf, zbb)? {
                    Some(q) if q == r.instret => println!("qemu-riscv32 agrees: {q} instructions"),
                    Some(q) => bail!("qemu-riscv32 counts {q} instructions, rvsim {}", r.instret),
                    None => println!("qemu-riscv32 not installed: cross-check skipped"),
                }
            }
            if let Some(want) = expect_exit
                && r.exit_code != want
            {
                eprintln!("fw-bench: exit code {} (expected {want})", r.exit_code);
                return Ok(ExitCode::from(1));
            }
        }
        Cmd::Size { elf } => {
            let reports = elf
                .iter()
                .map(|p| Ok(size::report(Machine::load(p)?.elf())))
                .collect::<Result<Vec<_>>>()?;
            let labels: Vec<String> = elf.iter().map(|p| p.display().to_string()).collect();
            let builds: Vec<(&str, &size::SizeReport)> =
                labels.iter().map(String::as_str).zip(&reports).collect();
            print!("{}", size::markdown(&builds));
            for (l, r) in labels.iter().zip(&reports) {
                if let Some(n) = r.recip_table {
                    println!("\n{l}: reciprocal table {n} bytes");
                }
            }
        }
        Cmd::Counts {
            rv64,
            rv64_zbb,
            rv32,
            fixtures,
            limit,
            update,
        } => {
            let mut images = Vec::new();
            if let Some(p) = rv32 {
                images.push(counts::Image::new(p, 32, false));
            }
            images.push(counts::Image::new(rv64, 64, false));
            if let Some(p) = rv64_zbb {
                images.push(counts::Image::new(p, 64, true));
            }
            let block = counts::generate(&images, &Ctx { fixtures, limit })?;
            match update {
                Some(path) => {
                    let doc = std::fs::read_to_string(&path)
                        .with_context(|| format!("reading {}", path.display()))?;
                    std::fs::write(&path, counts::splice(&doc, &block)?)
                        .with_context(|| format!("writing {}", path.display()))?;
                    eprintln!("updated {}", path.display());
                }
                None => print!("{block}"),
            }
        }
        Cmd::Rtl {
            rtl,
            cores,
            mems,
            tb_dir,
            threads,
            tsv,
            update,
            check_bounds,
            layout_harness,
        } => {
            let limit = rtl.limit.unwrap_or(256);
            let cores: Vec<Core> = if cores.is_empty() {
                Core::ALL
                    .into_iter()
                    .filter(|c| tb_dir.join(c.slug()).join("Vtb").exists())
                    .collect()
            } else {
                cores
                    .iter()
                    .map(|c| Core::from_slug(c).with_context(|| format!("no core `{c}`")))
                    .collect::<Result<_>>()?
            };
            if cores.is_empty() {
                bail!(
                    "no Verilator model in {} (scripts/rtl.sh builds them)",
                    tb_dir.display()
                );
            }
            let mems: Vec<MemConfig> = mems
                .iter()
                .map(|m| MemConfig::from_slug(m).with_context(|| format!("bad --mem `{m}`")))
                .collect::<Result<_>>()?;
            let ctx = Ctx {
                fixtures: rtl.fixtures.clone(),
                limit,
            };
            eprintln!(
                "fw-bench rtl: harness {}, at most {limit} calls per case, cores {}, memory {}",
                rtl.harness.display(),
                cores.iter().map(|c| c.slug()).collect::<Vec<_>>().join(" "),
                mems.iter().map(|m| m.slug()).collect::<Vec<_>>().join(" ")
            );
            let cases = fw_bench::rtl::record(&rtl.harness, &ctx, rtl.only.as_deref())?;
            let mut jobs = Vec::new();
            for &core in &cores {
                for &mem in &mems {
                    for case in &cases {
                        jobs.push(fw_bench::rtl::Job { case, core, mem });
                    }
                }
            }
            let rep = fw_bench::rtl::run(&jobs, &tb_dir, threads)?;
            let goal_rows: Vec<(String, String, String)> = {
                // The rows whose case has a goal (docs/performance.md, "Goals"), in table order.
                fw_bench::cases::CASES
                    .iter()
                    .flat_map(|c| {
                        rep.rows
                            .iter()
                            .filter(|r| r.symbol == c.symbol && (c.goal)(&r.case).is_some())
                            .map(|r| (r.algorithm.clone(), r.symbol.clone(), r.case.clone()))
                            .collect::<Vec<_>>()
                    })
                    .fold(Vec::new(), |mut v, k| {
                        if !v.contains(&k) {
                            v.push(k);
                        }
                        v
                    })
            };
            let mut block = fw_bench::rtl::doc_block(&rep, limit, &goal_rows);
            if let Some(hot) = &layout_harness {
                let hot_cases = fw_bench::rtl::record(hot, &ctx, rtl.only.as_deref())?;
                let hot_jobs: Vec<_> = hot_cases
                    .iter()
                    .map(|case| fw_bench::rtl::Job {
                        case,
                        core: Core::VexRiscv,
                        mem: MemConfig::default(),
                    })
                    .collect();
                let hot_rep = fw_bench::rtl::run(&hot_jobs, &tb_dir, threads)?;
                let paths = fw_bench::rtl::hot_paths(&hot_cases, Machine::load(hot)?.elf());
                block.push_str(&fw_bench::rtl::layout_markdown(
                    &rep.rows,
                    &hot_rep.rows,
                    &paths,
                    &goal_rows,
                ));
            }
            if let Some(path) = &tsv {
                std::fs::write(
                    path,
                    format!(
                        "# fw-bench rtl: RTL figures recorded by scripts/rtl.sh --record (Verilator {}); \
                         checked by `fw-bench rtl-model`\n# limit {limit}\n{}",
                        verilator_version(),
                        fw_bench::rtl::tsv(&rep.rows)
                    ),
                )
                .with_context(|| format!("writing {}", path.display()))?;
                eprintln!("wrote {}", path.display());
            }
            match &update {
                Some(path) => {
                    let doc = std::fs::read_to_string(path)
                        .with_context(|| format!("reading {}", path.display()))?;
                    std::fs::write(path, fw_bench::rtl::splice(&doc, &block)?)
                        .with_context(|| format!("writing {}", path.display()))?;
                    eprintln!("updated {}", path.display());
                }
                None => print!("{block}"),
            }
            if check_bounds {
                let bad = fw_bench::rtl::out_of_bounds(&rep.rows, fw_bench::rtl::default_bound);
                for b in &bad {
                    eprintln!("model error out of bounds: {b}");
                }
                if !bad.is_empty() {
                    return Ok(ExitCode::from(1));
                }
                eprintln!(
                    "every call's result equals rvsim's (and the host's); {} rows within the model bounds",
                    rep.rows.len()
                );
            }
        }
        Cmd::RtlModel { rtl, recorded } => {
            let text = std::fs::read_to_string(&recorded)
                .with_context(|| format!("reading {}", recorded.display()))?;
            let (limit, rows) = fw_bench::rtl::parse_tsv(&text)?;
            if let Some(l) = rtl.limit
                && l != limit
            {
                bail!(
                    "--limit {l}: {} was recorded with {limit}",
                    recorded.display()
                );
            }
            let ctx = Ctx {
                fixtures: rtl.fixtures.clone(),
                limit,
            };
            let cases = fw_bench::rtl::record(&rtl.harness, &ctx, rtl.only.as_deref())?;
            let (bad, checked) =
                fw_bench::rtl::check_recorded(&cases, &rows, fw_bench::rtl::default_bound)?;
            for b in &bad {
                eprintln!("{b}");
            }
            if !bad.is_empty() || checked == 0 {
                eprintln!("rtl-model: {} problems, {checked} rows checked", bad.len());
                return Ok(ExitCode::from(1));
            }
            println!(
                "rtl-model: {checked} rows of {}: every core's model within its bound of the recorded RTL",
                recorded.display()
            );
        }
        Cmd::RtlLayout { rtl, ld } => {
            let ctx = Ctx {
                fixtures: rtl.fixtures.clone(),
                limit: rtl.limit.unwrap_or(256),
            };
            let cases = fw_bench::rtl::record(&rtl.harness, &ctx, rtl.only.as_deref())?;
            let m = Machine::load(&rtl.harness)?;
            let paths = fw_bench::rtl::hot_paths(&cases, m.elf());
            print!("{}", fw_bench::rtl::hot_markdown(&paths));
            if let Some(path) = ld {
                std::fs::write(&path, fw_bench::rtl::hot_ld(&paths))
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!("wrote {}", path.display());
            }
        }
        Cmd::Report { images, update } => {
            let (images, zbb, ctx) = images.split();
            let block = report::generate(&images, zbb.as_ref(), &ctx)?;
            match update {
                Some(path) => {
                    let doc = std::fs::read_to_string(&path)
                        .with_context(|| format!("reading {}", path.display()))?;
                    std::fs::write(&path, report::splice(&doc, &block)?)
                        .with_context(|| format!("writing {}", path.display()))?;
                    eprintln!("updated {}", path.display());
                }
                None => print!("{block}"),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `verilator --version`'s first line, or "not found".
fn verilator_version() -> String {
    std::process::Command::new("verilator")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_owned))
        .unwrap_or_else(|| "not found".to_owned())
}
