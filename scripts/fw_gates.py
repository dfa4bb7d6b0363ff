#!/usr/bin/env python3
"""Float and division gates over a linked riscv32 ELF (see scripts/fw-gates.sh).

Reads `riscv64-unknown-elf-nm` and `-objdump -d` output. The division gate walks the static call
graph from every `probe_*` symbol (direct `jal`/`call` targets; the firmware crates use no function
pointers on the per-event path) and rejects any reached function that contains a division or
remainder instruction or calls a compiler division helper.
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
DIV_HELPER = re.compile(r"__(?:u?div|u?mod|udivmod|divmod)[sdt]i[34]")
# A jump or call whose target objdump names: `jal ra,1132c <f>`, `j 1140 <f+0x10>`, and tail calls
# through auipc/jr, which objdump annotates as `jr -190(t1) # 1132c <f>`.
CALL = re.compile(r"^\s*[0-9a-f]+:\s+(?:jal|jalr|jr|j|call|tail)\s.*<([^>+]+)(?:\+0x[0-9a-f]+)?>")


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def main(elf):
    syms = [l.split()[-1] for l in run("riscv64-unknown-elf-nm", elf).splitlines() if l.split()]
    bad = [s for s in syms if SOFT_FLOAT.match(s) or LIBM.match(s)]
    if bad:
        sys.exit(f"gate FAILED: {elf} links floating-point routines: {', '.join(sorted(set(bad)))}")
    print(f"gate: {elf}: no soft-float or libm routine linked ({len(syms)} symbols)")

    funcs, cur = {}, None
    for line in run("riscv64-unknown-elf-objdump", "-d", "--no-show-raw-insn", elf).splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            cur = m.group(1)
            funcs[cur] = []
        elif cur is not None and line.strip():
            funcs[cur].append(line)
    roots = sorted(f for f in funcs if f.startswith("probe_"))
    if not roots:
        sys.exit(f"gate FAILED: {elf} has no probe_* entry points")
    div_insn = re.compile(r"^\s*[0-9a-f]+:\s+(div|divu|rem|remu)\s")
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
                m = div_insn.match(line)
                if m:
                    problems.append(f"{root} → {f}: `{line.strip()}`")
                c = CALL.search(line)
                if c and c.group(1) != f:
                    stack.append(c.group(1))
    if problems:
        sys.exit("gate FAILED: division on the per-event path:\n  " + "\n  ".join(problems))
    print(f"gate: {elf}: no division in {len(roots)} probe_* entry points or their callees")


if __name__ == "__main__":
    main(sys.argv[1])
