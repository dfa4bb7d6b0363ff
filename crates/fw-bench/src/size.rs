//! Code and data size of a linked riscv32 ELF, per section and per crate.
//!
//! Method: every sized symbol of the static symbol table is charged to a crate by
//! [`crate::names::crate_of`] and to a column by the flags of its section: executable → `.text`,
//! allocated read-only → `.rodata`, writable → `.data`/`.bss`. Bytes of a section that no sized
//! symbol covers (alignment padding, compiler-generated constants without a symbol) are reported
//! as `(unattributed)`, so every column adds up to the section totals, which equal what
//! `riscv64-unknown-elf-size -A` prints. With LTO, a crate's per-event code is inlined into the
//! exported entry points that call it; the prefix table in `names.rs` charges those to the crate.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::elf::{Elf, SHF_ALLOC, SHF_EXECINSTR, SHF_WRITE, SymKind};
use crate::names::{crate_of, demangle};

/// Bytes in the three columns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bytes {
    /// Executable sections.
    pub text: u64,
    /// Allocated read-only data (`.rodata`, `.srodata`).
    pub rodata: u64,
    /// Writable data (`.data`, `.sdata`, `.bss`, …).
    pub data: u64,
}

/// The size report of one ELF.
#[derive(Clone, Debug, Default)]
pub struct SizeReport {
    /// Per crate (plus `(unattributed)`).
    pub per_crate: BTreeMap<String, Bytes>,
    /// Whole-image totals (sum of allocated sections).
    pub total: Bytes,
    /// Size of `cc_math::recip::RECIP` if it is linked.
    pub recip_table: Option<u32>,
}

fn column(flags: u32) -> Option<fn(&mut Bytes) -> &mut u64> {
    if flags & SHF_ALLOC == 0 {
        None
    } else if flags & SHF_EXECINSTR != 0 {
        Some(|b| &mut b.text)
    } else if flags & SHF_WRITE != 0 {
        Some(|b| &mut b.data)
    } else {
        Some(|b| &mut b.rodata)
    }
}

/// Computes the report for `elf`.
pub fn report(elf: &Elf) -> SizeReport {
    let mut r = SizeReport::default();
    for s in &elf.sections {
        if let Some(col) = column(s.flags) {
            *col(&mut r.total) += u64::from(s.size);
        }
    }
    let mut attributed = Bytes::default();
    for sym in &elf.symbols {
        if sym.size == 0 || !matches!(sym.kind, SymKind::Func | SymKind::Object) {
            continue;
        }
        let Some(sec) = elf.sections.get(usize::from(sym.shndx)) else {
            continue;
        };
        let Some(col) = column(sec.flags) else {
            continue;
        };
        *col(r.per_crate.entry(crate_of(&sym.name)).or_default()) += u64::from(sym.size);
        *col(&mut attributed) += u64::from(sym.size);
        if demangle(&sym.name) == "cc_math::recip::RECIP" {
            r.recip_table = Some(sym.size);
        }
    }
    let rest = Bytes {
        text: r.total.text.saturating_sub(attributed.text),
        rodata: r.total.rodata.saturating_sub(attributed.rodata),
        data: r.total.data.saturating_sub(attributed.data),
    };
    if rest != Bytes::default() {
        r.per_crate.insert("(unattributed)".to_owned(), rest);
    }
    r
}

/// Markdown table: one row per crate and a total row, for each labelled build.
pub fn markdown(builds: &[(&str, &SizeReport)]) -> String {
    let mut s = String::from(
        "| build | crate | .text bytes | .rodata bytes | .data+.bss bytes |\n|---|---|---:|---:|---:|\n",
    );
    for (label, r) in builds {
        for (krate, b) in &r.per_crate {
            let _ = writeln!(
                s,
                "| {label} | {krate} | {} | {} | {} |",
                b.text, b.rodata, b.data
            );
        }
        let t = r.total;
        let _ = writeln!(
            s,
            "| {label} | **total** | **{}** | **{}** | **{}** |",
            t.text, t.rodata, t.data
        );
    }
    s
}
