//! The harness on a hand-assembled ELF (no cross toolchain needed): calling by symbol, counting,
//! whole-program exit, memory round trips, profiles and the hang guard.

use fw_bench::elf::Elf;
use fw_bench::machine::{Machine, SCRATCH_BASE};

const BASE: u32 = 0x1000;

/// Machine code (little-endian halfwords/words) and the symbols over it.
fn code() -> (Vec<u8>, Vec<(&'static str, u32, u32)>) {
    let mut c = Vec::new();
    // add2 @ 0x1000: add a0,a0,a1 ; c.jr ra                         (2 instructions)
    c.extend_from_slice(&0x00b5_0533u32.to_le_bytes());
    c.extend_from_slice(&0x8082u16.to_le_bytes());
    // _start @ 0x1006: c.li a0,7 ; addi a7,x0,93 ; ecall          (3 instructions)
    c.extend_from_slice(&0x451du16.to_le_bytes());
    c.extend_from_slice(&0x05d0_0893u32.to_le_bytes());
    c.extend_from_slice(&0x0000_0073u32.to_le_bytes());
    // spin @ 0x1010: c.j . (never returns)
    c.extend_from_slice(&0xa001u16.to_le_bytes());
    // load_word @ 0x1012: lw a0,0(a0) ; c.jr ra
    c.extend_from_slice(&0x0005_2503u32.to_le_bytes());
    c.extend_from_slice(&0x8082u16.to_le_bytes());
    let syms = vec![
        ("add2", BASE, 6),
        ("_start", BASE + 6, 10),
        ("spin", BASE + 0x10, 2),
        ("load_word", BASE + 0x12, 6),
    ];
    (c, syms)
}

/// A minimal ELF32 RISC-V executable: one PT_LOAD, `.text`, `.symtab`, `.strtab`, `.shstrtab`.
fn build_elf() -> Vec<u8> {
    let (text, syms) = code();
    let text_off = 0x100usize;
    let mut strtab = vec![0u8];
    let mut symtab = vec![0u8; 16];
    for (name, addr, size) in &syms {
        let name_off = strtab.len() as u32;
        strtab.extend_from_slice(name.as_bytes());
        strtab.push(0);
        symtab.extend_from_slice(&name_off.to_le_bytes());
        symtab.extend_from_slice(&addr.to_le_bytes());
        symtab.extend_from_slice(&size.to_le_bytes());
        symtab.push(0x12); // STB_GLOBAL, STT_FUNC
        symtab.push(0);
        symtab.extend_from_slice(&1u16.to_le_bytes()); // .text
    }
    let shstrtab = b"\0.text\0.symtab\0.strtab\0.shstrtab\0".to_vec();
    let mut f = vec![0u8; text_off];
    f.extend_from_slice(&text);
    let symtab_off = f.len();
    f.extend_from_slice(&symtab);
    let strtab_off = f.len();
    f.extend_from_slice(&strtab);
    let shstr_off = f.len();
    f.extend_from_slice(&shstrtab);
    while !f.len().is_multiple_of(4) {
        f.push(0);
    }
    let shoff = f.len();
    let sh = |name: u32, typ: u32, flags: u32, addr: u32, off: usize, size: usize, link: u32| {
        let mut v = Vec::new();
        for w in [
            name,
            typ,
            flags,
            addr,
            off as u32,
            size as u32,
            link,
            0,
            1,
            0,
        ] {
            v.extend_from_slice(&w.to_le_bytes());
        }
        v
    };
    f.extend(sh(0, 0, 0, 0, 0, 0, 0));
    f.extend(sh(1, 1, 0x6, BASE, text_off, text.len(), 0));
    f.extend(sh(7, 2, 0, 0, symtab_off, symtab.len(), 3));
    f.extend(sh(15, 3, 0, 0, strtab_off, strtab.len(), 0));
    f.extend(sh(23, 3, 0, 0, shstr_off, shstrtab.len(), 0));
    // ELF header.
    f[..4].copy_from_slice(b"\x7fELF");
    f[4] = 1; // ELFCLASS32
    f[5] = 1; // little-endian
    f[6] = 1;
    let put16 =
        |f: &mut Vec<u8>, at: usize, v: u16| f[at..at + 2].copy_from_slice(&v.to_le_bytes());
    let put32 =
        |f: &mut Vec<u8>, at: usize, v: u32| f[at..at + 4].copy_from_slice(&v.to_le_bytes());
    put16(&mut f, 16, 2); // ET_EXEC
    put16(&mut f, 18, 243); // EM_RISCV
    put32(&mut f, 20, 1);
    put32(&mut f, 24, BASE + 6); // e_entry = _start
    put32(&mut f, 28, 52); // e_phoff
    put32(&mut f, 32, shoff as u32);
    put16(&mut f, 40, 52);
    put16(&mut f, 42, 32);
    put16(&mut f, 44, 1);
    put16(&mut f, 46, 40);
    put16(&mut f, 48, 5);
    put16(&mut f, 50, 4);
    // PT_LOAD of the code.
    for (i, w) in [
        1u32,
        text_off as u32,
        BASE,
        BASE,
        text.len() as u32,
        text.len() as u32,
        5,
        4,
    ]
    .into_iter()
    .enumerate()
    {
        put32(&mut f, 52 + 4 * i, w);
    }
    f
}

fn machine() -> Machine {
    Machine::new(Elf::parse(&build_elf()).expect("valid test ELF"))
}

#[test]
fn calls_a_function_by_symbol_and_counts_its_instructions() {
    let mut m = machine();
    let r = m.call("add2", &[40, 2]).unwrap();
    assert_eq!((r.a0, r.instret), (42, 2));
    // Deterministic: the same call costs the same.
    assert_eq!(m.call("add2", &[1, 1]).unwrap().instret, 2);
    assert!(m.call("no_such_symbol", &[]).is_err());
}

#[test]
fn runs_a_program_to_its_exit_ecall() {
    let r = machine().run_program().unwrap();
    assert_eq!((r.exit_code, r.instret), (7, 3));
}

#[test]
fn passes_buffers_through_scratch_memory() {
    let mut m = machine();
    let addr = m.push_bytes(&0xdead_beefu32.to_le_bytes(), 4).unwrap();
    assert!(addr >= SCRATCH_BASE);
    let r = m.call("load_word", &[addr]).unwrap();
    assert_eq!(r.a0, 0xdead_beef);
    assert_eq!(m.read_u32(addr).unwrap(), 0xdead_beef);
}

#[test]
fn profile_attributes_instructions_to_functions() {
    let mut m = machine();
    m.enable_profile();
    m.call("add2", &[1, 2]).unwrap();
    m.call("add2", &[3, 4]).unwrap();
    let rows = m.profile_table(m.profile().unwrap());
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].function.as_str(), rows[0].instret), ("add2", 4));
}

#[test]
fn a_hang_is_an_error_not_a_count() {
    let mut m = machine();
    m.max_steps = 1000;
    let e = m.call("spin", &[]).unwrap_err();
    assert!(
        format!("{e:#}").contains("no return or exit after 1000"),
        "{e:#}"
    );
}
