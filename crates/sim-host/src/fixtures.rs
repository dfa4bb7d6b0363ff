//! `sim-host fixtures`: (re)generates the shipped traces under `fixtures/`, or checks that the
//! committed files are exactly what the generators produce. Every generator is deterministic
//! (seeded PCG from `rand_pcg`, no clock, no environment).

use cc_replay::kinds::{FixtureFile, Kind};
use std::path::{Path, PathBuf};

/// The files a kind's generators produce: `cc-replay`'s generators, and for the DOCA PCC kind
/// also the streams recorded from the simulator's closed loop ([`crate::recorded`]).
pub fn generate(kind: Kind) -> Vec<FixtureFile> {
    let mut f = kind.fixtures();
    if kind == cc_replay::pcc::KIND {
        f.extend(crate::recorded::all());
    }
    f
}

/// Writes (or with `check`, compares) the fixtures of `kinds` under `dir`. Returns the exit code:
/// 0 written or identical, 1 some committed file differs or is missing, 2 an I/O error.
pub fn run(dir: &Path, kinds: &[Kind], check: bool) -> i32 {
    let mut code = 0;
    for &k in kinds {
        let kdir = dir.join(k.name());
        if !check && let Err(e) = std::fs::create_dir_all(&kdir) {
            eprintln!("error: {}: cannot create: {e}", kdir.display());
            return 2;
        }
        for f in generate(k) {
            let p = kdir.join(&f.name);
            if check {
                match std::fs::read(&p) {
                    Ok(b) if b == f.bytes => cc_output::outln!("same      {}", p.display()),
                    Ok(_) => {
                        cc_output::outln!("DIFFERENT {}", p.display());
                        code = 1;
                    }
                    Err(e) => {
                        cc_output::outln!("MISSING   {} ({e})", p.display());
                        code = 1;
                    }
                }
            } else if let Err(e) = std::fs::write(&p, &f.bytes) {
                eprintln!("error: {}: cannot write: {e}", p.display());
                return 2;
            } else {
                cc_output::outln!("wrote     {} ({} bytes)", p.display(), f.bytes.len());
            }
        }
    }
    code
}

/// `sim-host fixtures`' options.
#[derive(clap::Args)]
pub struct FixturesArgs {
    /// Where the fixtures live.
    #[arg(long, default_value = "fixtures")]
    pub dir: PathBuf,
    /// Compare instead of writing; exit 1 if any file differs.
    #[arg(long)]
    pub check: bool,
    /// Only this kind (the help lists the registry's kinds).
    #[arg(long, value_parser = cc_replay::kinds::parse_kind, help = only_help())]
    pub only: Option<Kind>,
}

/// `fixtures --only`'s help: every kind of the registry.
fn only_help() -> String {
    format!(
        "Only this kind ({})",
        Kind::all().map(Kind::name).collect::<Vec<_>>().join(", ")
    )
}

/// `sim-host fixtures`: write or check.
pub fn cmd(a: FixturesArgs) -> i32 {
    let FixturesArgs { dir, check, only } = a;
    let kinds: Vec<Kind> = match only {
        Some(k) => vec![k],
        None => Kind::all().collect(),
    };
    if check && !dir.is_dir() {
        eprintln!(
            "error: {}: not a directory (fixtures --check compares the files in it)",
            dir.display()
        );
        return crate::replay::EXIT_INPUT;
    }
    run(&dir, &kinds, check)
}
