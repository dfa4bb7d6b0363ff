//! The Zbb (basic bit-manipulation) extension, RV32 encodings, which `rvsim` does not decode.
//!
//! [`crate::machine::Machine`] hands every 32-bit word that `rvsim` rejects as illegal to
//! [`decode`]; a Zbb instruction is executed here and counted as one retired instruction, exactly
//! as QEMU (`-cpu rv32,zbb=true`) retires it. Anything else stays an illegal instruction.
//!
//! Encodings (RISC-V Bit-Manipulation ISA-extensions 1.0.0, §2 Zbb; RV32 forms only):
//!
//! | instruction | opcode | funct3 | funct7 / imm\[11:0\] |
//! |---|---|---|---|
//! | `andn` / `orn` / `xnor` | OP `0110011` | 111 / 110 / 100 | `0100000` |
//! | `min` / `minu` / `max` / `maxu` | OP | 100 / 101 / 110 / 111 | `0000101` |
//! | `rol` / `ror` | OP | 001 / 101 | `0110000` |
//! | `zext.h` | OP | 100 | `0000100`, rs2 = 0 |
//! | `clz` / `ctz` / `cpop` / `sext.b` / `sext.h` | OP-IMM `0010011` | 001 | `0x600` / `0x601` / `0x602` / `0x604` / `0x605` |
//! | `rori` | OP-IMM | 101 | `0110000`, shamt\[4:0\] |
//! | `orc.b` | OP-IMM | 101 | `0x287` |
//! | `rev8` | OP-IMM | 101 | `0x698` |

/// The operation of one decoded Zbb instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZbbOp {
    /// `rd = rs1 & !rs2`
    Andn,
    /// `rd = rs1 | !rs2`
    Orn,
    /// `rd = !(rs1 ^ rs2)`
    Xnor,
    /// Signed minimum.
    Min,
    /// Unsigned minimum.
    Minu,
    /// Signed maximum.
    Max,
    /// Unsigned maximum.
    Maxu,
    /// Rotate left by `rs2 & 31`.
    Rol,
    /// Rotate right by `rs2 & 31`.
    Ror,
    /// Rotate right by an immediate.
    Rori(u32),
    /// Zero-extend the low half-word.
    ZextH,
    /// Count leading zeros (32 for zero).
    Clz,
    /// Count trailing zeros (32 for zero).
    Ctz,
    /// Count set bits.
    Cpop,
    /// Sign-extend the low byte.
    SextB,
    /// Sign-extend the low half-word.
    SextH,
    /// Each byte becomes `0xff` if it is non-zero, else `0x00`.
    OrcB,
    /// Reverse the byte order.
    Rev8,
}

/// One decoded Zbb instruction: `rd = op(x[rs1], x[rs2])` (`rs2` unused by the unary ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zbb {
    /// The operation.
    pub op: ZbbOp,
    /// Destination register.
    pub rd: usize,
    /// First source register.
    pub rs1: usize,
    /// Second source register (register-register forms).
    pub rs2: usize,
}

const OP: u32 = 0b011_0011;
const OP_IMM: u32 = 0b001_0011;

/// Decodes `word` (a 32-bit instruction) if it is one of the RV32 Zbb instructions.
pub fn decode(word: u32) -> Option<Zbb> {
    let opcode = word & 0x7f;
    let rd = ((word >> 7) & 0x1f) as usize;
    let funct3 = (word >> 12) & 7;
    let rs1 = ((word >> 15) & 0x1f) as usize;
    let rs2 = ((word >> 20) & 0x1f) as usize;
    let funct7 = word >> 25;
    let imm12 = word >> 20;
    let op = match (opcode, funct3, funct7) {
        (OP, 0b111, 0b010_0000) => ZbbOp::Andn,
        (OP, 0b110, 0b010_0000) => ZbbOp::Orn,
        (OP, 0b100, 0b010_0000) => ZbbOp::Xnor,
        (OP, 0b100, 0b000_0101) => ZbbOp::Min,
        (OP, 0b101, 0b000_0101) => ZbbOp::Minu,
        (OP, 0b110, 0b000_0101) => ZbbOp::Max,
        (OP, 0b111, 0b000_0101) => ZbbOp::Maxu,
        (OP, 0b001, 0b011_0000) => ZbbOp::Rol,
        (OP, 0b101, 0b011_0000) => ZbbOp::Ror,
        (OP, 0b100, 0b000_0100) if rs2 == 0 => ZbbOp::ZextH,
        (OP_IMM, 0b001, _) => match imm12 {
            0x600 => ZbbOp::Clz,
            0x601 => ZbbOp::Ctz,
            0x602 => ZbbOp::Cpop,
            0x604 => ZbbOp::SextB,
            0x605 => ZbbOp::SextH,
            _ => return None,
        },
        // RV32: shamt is 5 bits, so funct7 is exactly 0110000 (bit 25 set is reserved).
        (OP_IMM, 0b101, 0b011_0000) => ZbbOp::Rori(rs2 as u32),
        (OP_IMM, 0b101, _) => match imm12 {
            0x287 => ZbbOp::OrcB,
            0x698 => ZbbOp::Rev8,
            _ => return None,
        },
        _ => return None,
    };
    Some(Zbb { op, rd, rs1, rs2 })
}

impl ZbbOp {
    /// The assembler mnemonic.
    pub fn mnemonic(self) -> &'static str {
        match self {
            Self::Andn => "andn",
            Self::Orn => "orn",
            Self::Xnor => "xnor",
            Self::Min => "min",
            Self::Minu => "minu",
            Self::Max => "max",
            Self::Maxu => "maxu",
            Self::Rol => "rol",
            Self::Ror => "ror",
            Self::Rori(_) => "rori",
            Self::ZextH => "zext.h",
            Self::Clz => "clz",
            Self::Ctz => "ctz",
            Self::Cpop => "cpop",
            Self::SextB => "sext.b",
            Self::SextH => "sext.h",
            Self::OrcB => "orc.b",
            Self::Rev8 => "rev8",
        }
    }

    /// The result for source values `a` (`rs1`) and `b` (`rs2`).
    pub fn eval(self, a: u32, b: u32) -> u32 {
        match self {
            Self::Andn => a & !b,
            Self::Orn => a | !b,
            Self::Xnor => !(a ^ b),
            Self::Min => (a as i32).min(b as i32) as u32,
            Self::Minu => a.min(b),
            Self::Max => (a as i32).max(b as i32) as u32,
            Self::Maxu => a.max(b),
            Self::Rol => a.rotate_left(b & 31),
            Self::Ror => a.rotate_right(b & 31),
            Self::Rori(sh) => a.rotate_right(sh),
            Self::ZextH => a & 0xffff,
            Self::Clz => a.leading_zeros(),
            Self::Ctz => a.trailing_zeros(),
            Self::Cpop => a.count_ones(),
            Self::SextB => a as u8 as i8 as i32 as u32,
            Self::SextH => a as u16 as i16 as i32 as u32,
            Self::OrcB => {
                u32::from_le_bytes(a.to_le_bytes().map(|x| if x == 0 { 0 } else { 0xff }))
            }
            Self::Rev8 => a.swap_bytes(),
        }
    }
}

impl Zbb {
    /// Executes the instruction on the register file `x` (`x[0]` stays zero).
    pub fn exec(self, x: &mut [u32; 32]) {
        let v = self.op.eval(x[self.rs1], x[self.rs2]);
        if self.rd != 0 {
            x[self.rd] = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-type word.
    fn r(funct7: u32, rs2: u32, rs1: u32, funct3: u32, rd: u32, opcode: u32) -> u32 {
        funct7 << 25 | rs2 << 20 | rs1 << 15 | funct3 << 12 | rd << 7 | opcode
    }
    /// I-type word with a 12-bit immediate.
    fn i(imm12: u32, rs1: u32, funct3: u32, rd: u32) -> u32 {
        imm12 << 20 | rs1 << 15 | funct3 << 12 | rd << 7 | OP_IMM
    }

    /// Runs `word` with a0 = `a`, a1 = `b` and returns a2 (the instructions below write a2).
    fn run(word: u32, a: u32, b: u32) -> u32 {
        let mut x = [0; 32];
        x[10] = a;
        x[11] = b;
        decode(word)
            .unwrap_or_else(|| panic!("{word:#010x} not decoded"))
            .exec(&mut x);
        x[12]
    }

    #[test]
    fn encodings_match_the_assembler() {
        // Words as riscv64-unknown-elf-as -march=rv32i_zbb assembles them (rd a2, rs1 a0, rs2 a1).
        let cases: [(u32, &str, ZbbOp); 18] = [
            (0x40b5_7633, "andn a2,a0,a1", ZbbOp::Andn),
            (0x40b5_6633, "orn a2,a0,a1", ZbbOp::Orn),
            (0x40b5_4633, "xnor a2,a0,a1", ZbbOp::Xnor),
            (0x0ab5_4633, "min a2,a0,a1", ZbbOp::Min),
            (0x0ab5_5633, "minu a2,a0,a1", ZbbOp::Minu),
            (0x0ab5_6633, "max a2,a0,a1", ZbbOp::Max),
            (0x0ab5_7633, "maxu a2,a0,a1", ZbbOp::Maxu),
            (0x60b5_1633, "rol a2,a0,a1", ZbbOp::Rol),
            (0x60b5_5633, "ror a2,a0,a1", ZbbOp::Ror),
            (0x6075_5613, "rori a2,a0,7", ZbbOp::Rori(7)),
            (0x0805_4633, "zext.h a2,a0", ZbbOp::ZextH),
            (0x6005_1613, "clz a2,a0", ZbbOp::Clz),
            (0x6015_1613, "ctz a2,a0", ZbbOp::Ctz),
            (0x6025_1613, "cpop a2,a0", ZbbOp::Cpop),
            (0x6045_1613, "sext.b a2,a0", ZbbOp::SextB),
            (0x6055_1613, "sext.h a2,a0", ZbbOp::SextH),
            (0x2875_5613, "orc.b a2,a0", ZbbOp::OrcB),
            (0x6985_5613, "rev8 a2,a0", ZbbOp::Rev8),
        ];
        for (word, asm, op) in cases {
            let d = decode(word).unwrap_or_else(|| panic!("{asm}: not decoded"));
            assert_eq!(d.op, op, "{asm}");
            assert_eq!(d.rd, 12, "{asm}");
            assert_eq!(d.rs1, 10, "{asm}");
        }
    }

    #[test]
    fn known_values() {
        let a = 0x8000_00f0_u32;
        let b = 0x0000_0ff0_u32;
        assert_eq!(run(r(0x20, 11, 10, 7, 12, OP), a, b), 0x8000_0000); // andn
        assert_eq!(run(r(0x20, 11, 10, 6, 12, OP), a, b), 0xffff_f0ff); // orn
        assert_eq!(run(r(0x20, 11, 10, 4, 12, OP), a, b), 0x7fff_f0ff); // xnor
        assert_eq!(run(r(0x05, 11, 10, 4, 12, OP), a, b), a); // min: a < 0
        assert_eq!(run(r(0x05, 11, 10, 5, 12, OP), a, b), b); // minu
        assert_eq!(run(r(0x05, 11, 10, 6, 12, OP), a, b), b); // max
        assert_eq!(run(r(0x05, 11, 10, 7, 12, OP), a, b), a); // maxu
        assert_eq!(
            run(r(0x30, 11, 10, 1, 12, OP), 0x8000_0001, 36),
            0x0000_0018
        ); // rol by 36 & 31 = 4
        assert_eq!(run(r(0x30, 11, 10, 5, 12, OP), 0x8000_0001, 4), 0x1800_0000); // ror
        assert_eq!(
            run(r(0x30, 0, 10, 5, 12, OP_IMM), 0x1234_5678, 0),
            0x1234_5678
        ); // rori 0
        assert_eq!(
            run(r(0x30, 8, 10, 5, 12, OP_IMM), 0x1234_5678, 0),
            0x7812_3456
        ); // rori 8
        assert_eq!(run(r(0x04, 0, 10, 4, 12, OP), 0xdead_beef, 0), 0xbeef); // zext.h
        assert_eq!(run(i(0x600, 10, 1, 12), 0x0001_0000, 0), 15); // clz
        assert_eq!(run(i(0x600, 10, 1, 12), 0, 0), 32); // clz 0
        assert_eq!(run(i(0x601, 10, 1, 12), 0x0001_0000, 0), 16); // ctz
        assert_eq!(run(i(0x601, 10, 1, 12), 0, 0), 32); // ctz 0
        assert_eq!(run(i(0x602, 10, 1, 12), 0xf0f0_0001, 0), 9); // cpop
        assert_eq!(run(i(0x604, 10, 1, 12), 0x1234_5680, 0), 0xffff_ff80); // sext.b
        assert_eq!(run(i(0x604, 10, 1, 12), 0x1234_567f, 0), 0x7f);
        assert_eq!(run(i(0x605, 10, 1, 12), 0x1234_8001, 0), 0xffff_8001); // sext.h
        assert_eq!(run(i(0x605, 10, 1, 12), 0x1234_7001, 0), 0x7001);
        assert_eq!(run(i(0x287, 10, 5, 12), 0x0010_ff00, 0), 0x00ff_ff00); // orc.b
        assert_eq!(run(i(0x698, 10, 5, 12), 0x1234_5678, 0), 0x7856_3412); // rev8
    }

    #[test]
    fn x0_stays_zero() {
        let mut x = [0; 32];
        x[10] = 5;
        decode(i(0x602, 10, 1, 0)).unwrap().exec(&mut x); // cpop x0, a0
        assert_eq!(x[0], 0);
    }

    #[test]
    fn other_words_are_not_zbb() {
        for word in [
            0x0000_0013,                   // nop (addi): rvsim's, never ours
            r(0x20, 11, 10, 0, 12, OP),    // sub
            r(0x01, 11, 10, 4, 12, OP),    // div (M)
            r(0x04, 11, 10, 4, 12, OP),    // pack (Zbkb), not zext.h: rs2 != 0
            i(0x603, 10, 1, 12),           // reserved in the clz group
            i(0x606, 10, 1, 12),           // reserved
            r(0x31, 3, 10, 5, 12, OP_IMM), // RV64 rori shamt[5]: reserved on RV32
            i(0x680, 10, 5, 12),           // rev8's RV64 encoding (0x6b8) neighbour: not RV32 rev8
            r(0x24, 11, 10, 1, 12, OP),    // bclr (Zbs), not Zbb
            0xffff_ffff,
        ] {
            assert_eq!(decode(word), None, "{word:#010x}");
        }
    }
}
