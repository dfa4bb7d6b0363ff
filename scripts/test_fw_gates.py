"""Tests of the float and division gates (scripts/fw_gates.py) on objdump and nm text of the
shapes riscv32 and riscv64 builds produce. Run: python3 -m unittest scripts/test_fw_gates.py"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fw_gates  # noqa: E402


def disasm(body):
    return "\n".join(l.rstrip() for l in body.strip("\n").splitlines())


CALLER = """
0000000000011000 <probe_x>:
   11000:	add	sp,sp,-16
   11002:	jal	11100 <inner>
   11006:	ret

0000000000011100 <inner>:
   11100:	{insn}
   11104:	ret
"""


def problems_with(insn):
    funcs, owner = fw_gates.functions(disasm(CALLER.format(insn=insn)))
    return fw_gates.division_problems(funcs, owner, ["probe_x"])


class DivisionGate(unittest.TestCase):
    def test_rv32_division_instructions_in_a_callee_are_refused(self):
        for op in ["div", "divu", "rem", "remu"]:
            self.assertEqual(len(problems_with(f"{op}\ta0,a0,a1")), 1, op)

    def test_rv64_word_division_instructions_in_a_callee_are_refused(self):
        for op in ["divw", "divuw", "remw", "remuw"]:
            self.assertEqual(len(problems_with(f"{op}\ta0,a0,a1")), 1, op)

    def test_multiplications_and_shifts_pass(self):
        for insn in ["mulhu\ta0,a0,a1", "mulw\ta0,a0,a1", "divert_not_an_op", "srlw\ta0,a0,a1"]:
            self.assertEqual(problems_with(insn), [], insn)

    def test_rv64_division_helpers_are_refused(self):
        for helper in ["__udivti3", "__divti3", "__umodti3", "__udivmodti4", "__divdi3", "__udivdi3"]:
            text = disasm(CALLER.format(insn=f"jal\t11200 <{helper}>"))
            funcs, owner = fw_gates.functions(text)
            self.assertEqual(len(fw_gates.division_problems(funcs, owner, ["probe_x"])), 1, helper)

    def test_code_after_a_local_label_belongs_to_the_enclosing_function(self):
        # riscv64 objdump prints `.Lpcrel_hi*` labels as block headers inside a function.
        text = disasm("""
00000000000155da <probe_x>:
   155da:	beqz	a0,15672 <.Lpcrel_hi18+0x92>

00000000000155e0 <.Lpcrel_hi18>:
   155e0:	auipc	a3,0xffffb
   155e4:	divuw	a0,a0,a2
   155e8:	ret
""")
        funcs, owner = fw_gates.functions(text)
        self.assertEqual(owner, {".Lpcrel_hi18": "probe_x"})
        self.assertEqual(len(fw_gates.division_problems(funcs, owner, ["probe_x"])), 1)

    def test_a_jump_to_a_local_label_reaches_its_function(self):
        text = disasm("""
0000000000011000 <probe_x>:
   11000:	j	11204 <.Lpcrel_hi3+0x4>

0000000000011200 <helper>:
   11200:	nop

0000000000011202 <.Lpcrel_hi3>:
   11202:	auipc	a3,0x0
   11206:	remu	a0,a0,a1
""")
        funcs, owner = fw_gates.functions(text)
        self.assertEqual(len(fw_gates.division_problems(funcs, owner, ["probe_x"])), 1)


class FloatGate(unittest.TestCase):
    def test_soft_float_and_libm_symbols_are_found(self):
        syms = ["__adddf3", "__fixdfdi", "__floatditf", "__muldf3", "sqrt", "probe_x", "__udivti3"]
        self.assertEqual(fw_gates.float_symbols(syms),
                         ["__adddf3", "__fixdfdi", "__floatditf", "__muldf3", "sqrt"])

    def test_integer_helpers_are_not_float(self):
        self.assertEqual(fw_gates.float_symbols(["__mulsi3", "__muldi3", "__multi3", "memcpy"]), [])


if __name__ == "__main__":
    unittest.main()
