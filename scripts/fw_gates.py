#!/usr/bin/env python3
"""Float and division gates over a linked riscv32 or riscv64 ELF (see scripts/fw-gates.sh).

Reads `riscv64-unknown-elf-nm` and `-objdump -d` output (the same binutils read both widths). The
division gate walks the static call graph from every `probe_*` symbol (direct `jal`/`call`
targets; the firmware crates use no function pointers on the per-event path) and rejects any
reached function that contains a division or remainder instruction (rv32 `div`/`divu`/`rem`/`remu`,
rv64 also the 32-bit `divw`/`divuw`/`remw`/`remuw`) or calls a compiler division helper
(`__udivdi3`, `__divti3`, `__udivmodti4`, …, and compiler_builtins' `specialized_div_rem`).
"""
import re
import subprocess
import sys

SOFT_FLOAT = re.compile(
    r"^__(?:(?:add|sub|mul|div|neg|pow[i]?)[sdt]f[23]"
    r"|(?:eq|ne|lt|le|gt|ge|unord|cmp)[sdt]f2"
    r"|fix(?:uns)?[sdt]f[sdt]i|float(?:un)?[sdt]i[sdt]f"
    r"|(?:extend|trunc)[sdht]f[sdht]f2)$"
)
LIBM = re.compile(r"^(?:sqrtf?|expf?|exp2f?|logf?|log2f?|log10f?|powf?|floorf?|ceilf?|roundf?|fmodf?|sinf?|cosf?)$")
DIV_HELPER = re.compile(r"__(?:u?div|u?mod|udivmod|divmod)[sdt]i[34]|specialized_div_rem")
DIV_INSN = re.compile(r"^\s*[0-9a-f]+:\s+(div|divu|rem|remu|divw|divuw|remw|remuw)\s")
# A jump or call whose target objdump names: `jal ra,1132c <f>`, `j 1140 <f+0x10>`, and tail calls
# through auipc/jr, which objdump annotates as `jr -190(t1) # 1132c <f>`.
CALL = re.compile(r"^\s*[0-9a-f]+:\s+(?:jal|jalr|jr|j|call|tail)\s.*<([^>+]+)(?:\+0x[0-9a-f]+)?>")


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def float_symbols(syms):
    """The soft-float and libm routines among the symbol names `syms`, sorted."""
    return sorted({s for s in syms if SOFT_FLOAT.match(s) or LIBM.match(s)})


def functions(disassembly):
    """`objdump -d` text → ({function name: its instruction lines}, {local label: its function}).

    A local label (`.Lpcrel_hi18`, which the riscv64 objdump prints as a block header inside a
    function) does not start a function: its lines belong to the enclosing one, and a jump to it
    is a jump into that function.
    """
    funcs, owner, cur = {}, {}, None
    for line in disassembly.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m and m.group(1).startswith(".L") and cur is not None:
            owner[m.group(1)] = cur
        elif m:
            cur = m.group(1)
            funcs[cur] = []
        elif cur is not None and line.strip():
            funcs[cur].append(line)
    return funcs, owner


def division_problems(funcs, owner, roots):
    """Every division instruction or helper reachable from `roots`, as `root → f: what`."""
    problems = []
    for root in roots:
        seen, stack = set(), [root]
        while stack:
            f = stack.pop()
            if f in seen:
                continue
            seen.add(f)
            if DIV_HELPER.search(f):
                problems.append(f"{root} → {f}: division helper")
                continue
            for line in funcs.get(f, []):
                if DIV_INSN.match(line):
                    problems.append(f"{root} → {f}: `{line.strip()}`")
                c = CALL.search(line)
                target = c and owner.get(c.group(1), c.group(1))
                if target and target != f:
                    stack.append(target)
    return problems


def main(elf):
    syms = [l.split()[-1] for l in run("riscv64-unknown-elf-nm", elf).splitlines() if l.split()]
    bad = float_symbols(syms)
    if bad:
        sys.exit(f"gate FAILED: {elf} links floating-point routines: {', '.join(bad)}")
    print(f"gate: {elf}: no soft-float or libm routine linked ({len(syms)} symbols)")

    funcs, owner = functions(run("riscv64-unknown-elf-objdump", "-d", "--no-show-raw-insn", elf))
    roots = sorted(f for f in funcs if f.startswith("probe_"))
    if not roots:
        sys.exit(f"gate FAILED: {elf} has no probe_* entry points")
    problems = division_problems(funcs, owner, roots)
    if problems:
        sys.exit("gate FAILED: division on the per-event path:\n  " + "\n  ".join(problems))
    print(f"gate: {elf}: no division in {len(roots)} probe_* entry points or their callees")


if __name__ == "__main__":
    main(sys.argv[1])
