//! A small, safe ELF32 little-endian reader: loadable segments, sections and the symbol table.
//!
//! Hand-written (about 150 lines) rather than pulling `object`/`goblin`: we need only the three
//! tables below, every read is bounds-checked, and nothing here is `unsafe`.

use anyhow::{Context, Result, bail, ensure};

/// `e_machine` of RISC-V.
const EM_RISCV: u16 = 243;
/// `p_type` of a loadable segment.
const PT_LOAD: u32 = 1;
/// `sh_type` of a symbol table.
const SHT_SYMTAB: u32 = 2;
/// `sh_type` of a section that occupies no file space (`.bss`).
pub const SHT_NOBITS: u32 = 8;
/// `sh_flags` bit: the section occupies memory at run time.
pub const SHF_ALLOC: u32 = 0x2;
/// `sh_flags` bit: the section holds executable code.
pub const SHF_EXECINSTR: u32 = 0x4;
/// `sh_flags` bit: the section is writable.
pub const SHF_WRITE: u32 = 0x1;

/// A `PT_LOAD` segment, already zero-extended from `p_filesz` to `p_memsz`.
#[derive(Clone, Debug)]
pub struct Segment {
    /// Load address.
    pub vaddr: u32,
    /// `p_memsz` bytes: the file image followed by zeros (`.bss`).
    pub bytes: Vec<u8>,
}

/// A section header, with its name resolved.
#[derive(Clone, Debug)]
pub struct Section {
    /// Name (`.text`, `.rodata`, …).
    pub name: String,
    /// `sh_type`.
    pub typ: u32,
    /// `sh_flags`.
    pub flags: u32,
    /// Run-time address.
    pub addr: u32,
    /// Size in bytes.
    pub size: u32,
}

/// What a symbol names (`STT_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymKind {
    /// `STT_FUNC`.
    Func,
    /// `STT_OBJECT`.
    Object,
    /// Anything else (`STT_NOTYPE`, sections, files).
    Other,
}

/// A symbol-table entry.
#[derive(Clone, Debug)]
pub struct Symbol {
    /// The raw (possibly mangled) name.
    pub name: String,
    /// `st_value`: the address.
    pub addr: u32,
    /// `st_size` in bytes.
    pub size: u32,
    /// `STT_*` class.
    pub kind: SymKind,
    /// Index of the section the symbol lives in (`st_shndx`).
    pub shndx: u16,
}

/// The parts of an ELF32 RISC-V executable the harness needs.
#[derive(Clone, Debug)]
pub struct Elf {
    /// `e_entry`.
    pub entry: u32,
    /// Loadable segments.
    pub segments: Vec<Segment>,
    /// All section headers (index = `st_shndx`).
    pub sections: Vec<Section>,
    /// The static symbol table (`.symtab`); empty if the binary is stripped.
    pub symbols: Vec<Symbol>,
}

fn bytes(data: &[u8], off: usize, len: usize) -> Result<&[u8]> {
    data.get(off..off.checked_add(len).context("offset overflow")?)
        .with_context(|| format!("ELF truncated: need {len} bytes at offset {off}"))
}
fn u16_at(data: &[u8], off: usize) -> Result<u16> {
    let b = bytes(data, off, 2)?;
    Ok(u16::from_le_bytes([b[0], b[1]]))
}
fn u32_at(data: &[u8], off: usize) -> Result<u32> {
    let b = bytes(data, off, 4)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}
fn cstr_at(data: &[u8], off: usize) -> Result<String> {
    let tail = data.get(off..).context("string offset beyond its table")?;
    let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
    Ok(String::from_utf8_lossy(&tail[..end]).into_owned())
}

impl Elf {
    /// Parses an ELF32 little-endian RISC-V file.
    pub fn parse(data: &[u8]) -> Result<Self> {
        ensure!(data.get(..4) == Some(b"\x7fELF"), "not an ELF file");
        ensure!(
            data.get(4) == Some(&1),
            "not a 32-bit ELF (build for riscv32)"
        );
        ensure!(data.get(5) == Some(&1), "not a little-endian ELF");
        let machine = u16_at(data, 18)?;
        ensure!(
            machine == EM_RISCV,
            "e_machine = {machine}, expected RISC-V (243)"
        );
        let entry = u32_at(data, 24)?;
        let phoff = u32_at(data, 28)? as usize;
        let shoff = u32_at(data, 32)? as usize;
        let phentsize = usize::from(u16_at(data, 42)?);
        let phnum = usize::from(u16_at(data, 44)?);
        let shentsize = usize::from(u16_at(data, 46)?);
        let shnum = usize::from(u16_at(data, 48)?);
        let shstrndx = usize::from(u16_at(data, 50)?);

        let mut segments = Vec::new();
        for i in 0..phnum {
            let ph = phoff + i * phentsize;
            if u32_at(data, ph)? != PT_LOAD {
                continue;
            }
            let offset = u32_at(data, ph + 4)? as usize;
            let vaddr = u32_at(data, ph + 8)?;
            let filesz = u32_at(data, ph + 16)? as usize;
            let memsz = u32_at(data, ph + 20)? as usize;
            ensure!(filesz <= memsz, "segment {i}: p_filesz > p_memsz");
            let mut seg = vec![0u8; memsz];
            seg[..filesz].copy_from_slice(bytes(data, offset, filesz)?);
            segments.push(Segment { vaddr, bytes: seg });
        }

        struct RawSh {
            name: u32,
            typ: u32,
            flags: u32,
            addr: u32,
            offset: usize,
            size: u32,
            link: u32,
        }
        let mut raw = Vec::with_capacity(shnum);
        for i in 0..shnum {
            let sh = shoff + i * shentsize;
            raw.push(RawSh {
                name: u32_at(data, sh)?,
                typ: u32_at(data, sh + 4)?,
                flags: u32_at(data, sh + 8)?,
                addr: u32_at(data, sh + 12)?,
                offset: u32_at(data, sh + 16)? as usize,
                size: u32_at(data, sh + 20)?,
                link: u32_at(data, sh + 24)?,
            });
        }
        let section_data = |s: &RawSh| bytes(data, s.offset, s.size as usize);
        let shstr = match raw.get(shstrndx) {
            Some(s) => section_data(s)?,
            None => &[][..],
        };
        let sections = raw
            .iter()
            .map(|s| {
                Ok(Section {
                    name: cstr_at(shstr, s.name as usize).unwrap_or_default(),
                    typ: s.typ,
                    flags: s.flags,
                    addr: s.addr,
                    size: s.size,
                })
            })
            .collect::<Result<Vec<_>>>()?;

        let mut symbols = Vec::new();
        if let Some(symtab) = raw.iter().find(|s| s.typ == SHT_SYMTAB) {
            let strtab = raw
                .get(symtab.link as usize)
                .context(".symtab has no string table")?;
            let strs = section_data(strtab)?;
            let syms = section_data(symtab)?;
            for chunk in syms.chunks_exact(16) {
                let info = chunk[12];
                let kind = match info & 0xf {
                    2 => SymKind::Func,
                    1 => SymKind::Object,
                    _ => SymKind::Other,
                };
                symbols.push(Symbol {
                    name: cstr_at(strs, u32_at(chunk, 0)? as usize)?,
                    addr: u32_at(chunk, 4)?,
                    size: u32_at(chunk, 8)?,
                    kind,
                    shndx: u16_at(chunk, 14)?,
                });
            }
        }
        if segments.is_empty() {
            bail!("no PT_LOAD segment");
        }
        Ok(Self {
            entry,
            segments,
            sections,
            symbols,
        })
    }

    /// A symbol by exact (raw) name, preferring functions and objects over other kinds.
    pub fn symbol(&self, name: &str) -> Option<&Symbol> {
        self.symbols
            .iter()
            .find(|s| s.name == name && s.kind != SymKind::Other)
            .or_else(|| self.symbols.iter().find(|s| s.name == name))
    }
}
