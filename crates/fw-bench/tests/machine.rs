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
    // read_into @ 0x1018: mv a1,a0 ; li a0,0 ; li a2,4 ; li a7,63 ; ecall ; ret
    //   (read(0, buf = a0, 4): returns the bytes read)
    for h in [0x85aau16, 0x4501, 0x4611] {
        c.extend_from_slice(&h.to_le_bytes());
    }
    c.extend_from_slice(&0x03f0_0893u32.to_le_bytes());
    c.extend_from_slice(&0x0000_0073u32.to_le_bytes());
    c.extend_from_slice(&0x8082u16.to_le_bytes());
    let syms = vec![
        ("add2", BASE, 6),
        ("_start", BASE + 6, 10),
        ("spin", BASE + 0x10, 2),
        ("load_word", BASE + 0x12, 6),
        ("read_into", BASE + 0x18, 16),
    ];
    (c, syms)
}

/// A minimal ELF32 RISC-V executable of [`code`].
fn build_elf() -> Vec<u8> {
    let (text, syms) = code();
    build_elf_of(&text, &syms, BASE, BASE + 6)
}

/// A minimal ELF32 RISC-V executable: one PT_LOAD of `text` at `base` (file offset 0x100: QEMU
/// needs `base` ≡ 0x100 modulo its page size), `.text`, `.symtab`, `.strtab`, `.shstrtab`.
fn build_elf_of(text: &[u8], syms: &[(&str, u32, u32)], base: u32, entry: u32) -> Vec<u8> {
    let text_off = 0x100usize;
    let mut strtab = vec![0u8];
    let mut symtab = vec![0u8; 16];
    for (name, addr, size) in syms {
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
    f.extend_from_slice(text);
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
    f.extend(sh(1, 1, 0x6, base, text_off, text.len(), 0));
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
    put32(&mut f, 24, entry);
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
        base,
        base,
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
fn a_program_reads_its_input_in_order_then_sees_its_end() {
    let mut m = machine();
    let buf = m.push_bytes(&[0; 4], 4).unwrap();
    // No input set: the end at once (what fw-probe's server sees under the gates).
    assert_eq!(m.call("read_into", &[buf]).unwrap().a0, 0);
    m.set_input(b"abcdef".to_vec());
    let r = m.call("read_into", &[buf]).unwrap();
    assert_eq!((r.a0, r.instret), (4, 6));
    assert_eq!(m.read_bytes(buf, 4).unwrap(), b"abcd");
    assert_eq!(m.call("read_into", &[buf]).unwrap().a0, 2);
    assert_eq!(&m.read_bytes(buf, 2).unwrap()[..], b"ef");
    assert_eq!(m.call("read_into", &[buf]).unwrap().a0, 0);
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

// ---- Zbb -----------------------------------------------------------------------------------

/// The 18 RV32 Zbb instructions as `op a2, a0, a1` (unary ones read a0 only), each with inputs
/// and the result the Bit-Manipulation spec defines for them (worked by hand).
const ZBB: [(&str, u32, u32, u32, u32); 18] = [
    // (name, word, a0, a1, a2 after)
    ("andn", 0x40b5_7633, 0x8000_00f0, 0x0000_0ff0, 0x8000_0000),
    ("orn", 0x40b5_6633, 0x8000_00f0, 0x0000_0ff0, 0xffff_f0ff),
    ("xnor", 0x40b5_4633, 0x8000_00f0, 0x0000_0ff0, 0x7fff_f0ff),
    ("min", 0x0ab5_4633, 0x8000_00f0, 0x0000_0ff0, 0x8000_00f0),
    ("minu", 0x0ab5_5633, 0x8000_00f0, 0x0000_0ff0, 0x0000_0ff0),
    ("max", 0x0ab5_6633, 0x8000_00f0, 0x0000_0ff0, 0x0000_0ff0),
    ("maxu", 0x0ab5_7633, 0x8000_00f0, 0x0000_0ff0, 0x8000_00f0),
    ("rol", 0x60b5_1633, 0x8000_0001, 36, 0x0000_0018),
    ("ror", 0x60b5_5633, 0x8000_0001, 4, 0x1800_0000),
    ("rori 7", 0x6075_5613, 0x0000_0080, 0, 0x0000_0001),
    ("zext.h", 0x0805_4633, 0xdead_beef, 0, 0x0000_beef),
    ("clz", 0x6005_1613, 0x0001_0000, 0, 15),
    ("ctz", 0x6015_1613, 0x0001_0000, 0, 16),
    ("cpop", 0x6025_1613, 0xf0f0_0001, 0, 9),
    ("sext.b", 0x6045_1613, 0x1234_5680, 0, 0xffff_ff80),
    ("sext.h", 0x6055_1613, 0x1234_8001, 0, 0xffff_8001),
    ("orc.b", 0x2875_5613, 0x0010_ff00, 0, 0x00ff_ff00),
    ("rev8", 0x6985_5613, 0x1234_5678, 0, 0x7856_3412),
];

/// `mv a0, a2 ; c.jr ra` closes each one-instruction function.
const MV_A0_A2_RET: [u8; 6] = [0x13, 0x05, 0x06, 0x00, 0x82, 0x80];

/// One function per Zbb instruction: `op a2, a0, a1 ; mv a0, a2 ; ret`, named after it.
fn zbb_machine() -> Machine {
    let mut text = Vec::new();
    let mut syms = Vec::new();
    for (name, word, ..) in ZBB {
        syms.push((name, BASE + text.len() as u32, 10));
        text.extend_from_slice(&word.to_le_bytes());
        text.extend_from_slice(&MV_A0_A2_RET);
    }
    // An illegal word (reserved in the clz/ctz group) to show unknown words still stop the run.
    syms.push(("reserved", BASE + text.len() as u32, 4));
    text.extend_from_slice(&0x6035_1613u32.to_le_bytes());
    Machine::new(Elf::parse(&build_elf_of(&text, &syms, BASE, BASE)).expect("valid test ELF"))
}

#[test]
fn zbb_instructions_execute_as_one_instruction_each() {
    let mut m = zbb_machine();
    m.zbb = true;
    for (name, _, a, b, want) in ZBB {
        let r = m.call(name, &[a, b]).unwrap();
        assert_eq!(r.a0, want, "{name}({a:#x}, {b:#x})");
        assert_eq!(r.instret, 3, "{name}: the Zbb instruction, mv, ret");
    }
}

#[test]
fn zbb_is_an_illegal_instruction_on_rv32imac() {
    let mut m = zbb_machine();
    let e = m.call("clz", &[1, 0]).unwrap_err();
    assert!(
        format!("{e:#}").contains("Clz is a Zbb instruction"),
        "{e:#}"
    );
}

#[test]
fn unknown_words_stay_illegal_with_zbb() {
    let mut m = zbb_machine();
    m.zbb = true;
    let e = m.call("reserved", &[1, 0]).unwrap_err();
    assert!(
        format!("{e:#}").contains("IllegalInstruction") && format!("{e:#}").contains("0x60351613"),
        "{e:#}"
    );
}

/// RISC-V encoders for the self-checking program below.
fn lui(rd: u32, imm20: u32) -> u32 {
    imm20 << 12 | rd << 7 | 0x37
}
fn addi(rd: u32, rs1: u32, imm: i32) -> u32 {
    ((imm as u32) & 0xfff) << 20 | rs1 << 15 | rd << 7 | 0x13
}
/// `li rd, v` as `lui` + `addi` (always two instructions).
fn li(rd: u32, v: u32) -> [u32; 2] {
    let lo = ((v & 0xfff) as i32) << 20 >> 20;
    let hi = v.wrapping_sub(lo as u32) >> 12;
    [lui(rd, hi), addi(rd, rd, lo)]
}
/// `bne rs1, rs2, off` (off in bytes, even, ±4 KiB).
fn bne(rs1: u32, rs2: u32, off: i32) -> u32 {
    let o = off as u32;
    (o >> 12 & 1) << 31
        | (o >> 5 & 0x3f) << 25
        | rs2 << 20
        | rs1 << 15
        | 1 << 12
        | (o >> 1 & 0xf) << 8
        | (o >> 11 & 1) << 7
        | 0x63
}

/// A whole program that runs every Zbb instruction on its inputs and exits with 0 if all
/// results are the expected ones, else with the 1-based index of the first wrong one. Run on
/// rvsim and QEMU: both must exit 0 and count the same instructions.
fn zbb_program(base: u32) -> Vec<u8> {
    const A0: u32 = 10;
    const A1: u32 = 11;
    const A2: u32 = 12;
    const A3: u32 = 13;
    const A4: u32 = 14;
    const A7: u32 = 17;
    let mut w: Vec<u32> = Vec::new();
    let mut branches = Vec::new();
    for (i, (_, word, a, b, want)) in ZBB.into_iter().enumerate() {
        w.extend(li(A0, a));
        w.extend(li(A1, b));
        w.push(word);
        w.extend(li(A3, want));
        w.push(addi(A4, 0, i as i32 + 1));
        branches.push(w.len());
        w.push(0); // bne a2, a3, fail (patched below)
    }
    w.push(addi(A4, 0, 0));
    let fail = w.len();
    w.push(addi(A0, A4, 0));
    w.push(addi(A7, 0, 93));
    w.push(0x0000_0073); // ecall
    for at in branches {
        w[at] = bne(A2, A3, 4 * (fail as i32 - at as i32));
    }
    let text: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    let syms = [("_start", base, text.len() as u32)];
    build_elf_of(&text, &syms, base, base)
}

#[test]
fn zbb_program_agrees_with_qemu() {
    const QEMU_BASE: u32 = 0x0001_0100;
    let elf = zbb_program(QEMU_BASE);
    let mut m = Machine::new(Elf::parse(&elf).unwrap());
    m.zbb = true;
    let r = m.run_program().unwrap();
    // 18 × (li, li, op, li, addi, bne) + addi, mv, li a7, ecall.
    assert_eq!((r.exit_code, r.instret), (0, 18 * 9 + 4));
    let path = std::env::temp_dir().join(format!("fw-bench-zbb-{}.elf", std::process::id()));
    std::fs::write(&path, &elf).unwrap();
    // QEMU user mode, like execve, refuses a file without execute permission.
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let q = fw_bench::qemu::run(&path, true);
    let _ = std::fs::remove_file(&path);
    match q.unwrap() {
        Some(q) => assert_eq!((q.exit_code, q.instret), (0, r.instret), "qemu-riscv32"),
        None => eprintln!("qemu-riscv32 not installed: cross-check skipped"),
    }
}
