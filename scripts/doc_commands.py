#!/usr/bin/env python3
"""Runs every shell command the docs show, as written, and fails naming the file and line of one
that fails.

Which commands: every command line of the ```sh, ```bash and ```shell code blocks, every `$ `
line of the ```console blocks and every container `command: ["sh", "-c", "CMD"]` of the ```yaml
blocks in README.md, docs/*.md and fixtures/**/README.md (the files given instead, if any). Lines ending in `\\` continue on the next line; `#` lines are comments.
Every line of such a block runs (`mkdir`, `sed` and `cmp` as much as `sim-host`); the ones that
start with `sim-host`, `cargo run ... -p sim-host --`, `scripts/...`, `bash scripts/...` or
`python3 scripts/...` are the tool's and are counted as such. A code block without a language
that holds such a command is an error (mark it ```sh, or ```text when it is not to be run).

How: each block runs in its own fresh copy of the repository (its tracked and untracked,
not-ignored files) in a temporary directory, its lines in order, each with `bash -o pipefail -c`
from the copy's root, so nothing a command writes reaches the repository (checked: `git status`
is the same before and after). `sim-host` is the release binary
($CARGO_TARGET_DIR or target, /release/sim-host; built first with `cargo build --release -p
sim-host` unless --bin is given), first on PATH, and `cargo run [--release] -p sim-host --` is
replaced by `sim-host`. A command passes when it exits 0 within --timeout seconds (default 120);
in a ```console block its standard output must also be the lines shown under it.

Markers: HTML comments on the lines just above a block (blank lines between allowed), invisible
in the rendered page:

    <!-- doc-commands: placeholder NAME... -->      lines containing NAME are not run
    <!-- doc-commands: skip "TEXT" REASON -->       lines containing TEXT are not run
    <!-- doc-commands: skip all REASON -->          no line of the block is run

REASON starts with what kind of skip it is (`long: ...`, `needs: ...`, `recursive: ...`). Every
skipped command is printed with its reason and counted by reason; a marker that matches no
command of its block is an error (it would hide the next edit silently).

Usage: scripts/doc_commands.py [--bin SIM_HOST] [--root DIR] [--timeout S] [--list] [FILE.md...]
  --list   print the commands and what would be done with each, run nothing
Exit 0 when every command not skipped passed; 1 when one failed (or a marker or block is wrong);
2 on bad usage.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([A-Za-z0-9_+-]*)")
MARKER = re.compile(r"^\s*<!--\s*doc-commands:\s*(.*?)\s*-->\s*$")
SHELL = {"sh", "bash", "shell"}
YAML_COMMAND = re.compile(r'^\s*command:\s*\[\s*"(?:ba)?sh",\s*"-c",\s*"((?:[^"\\]|\\.)*)"\s*\]\s*$')
# The tool's own commands (the rest of a block's lines are helpers: mkdir, sed, cmp, ...).
TOOL = re.compile(
    r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*"
    r"(?:sim-host\s|cargo run\b.*-p sim-host\b|(?:bash\s+|python3\s+|\./)?scripts/\S)"
)
CARGO_RUN = re.compile(r"cargo run((?:\s+(?:--release|-q|--quiet))*)\s+-p\s+sim-host((?:\s+(?:--release|-q|--quiet))*)\s+--(?=\s|$)")


class Command:
    """One command: where it is, its text as shown, and what to do with it."""

    def __init__(self, path, line, text, block):
        self.path = path
        self.line = line
        self.text = text
        self.block = block
        self.skip = None  # the reason, when skipped
        self.expect = None  # a console block's output lines

    def where(self):
        return f"{self.path}:{self.line}"

    def is_tool(self):
        return bool(TOOL.match(self.text))

    def shell(self):
        """The text to run: `cargo run ... -p sim-host --` is `sim-host`."""
        return CARGO_RUN.sub("sim-host", self.text)


class Block:
    def __init__(self, path, line, lang, markers):
        self.path = path
        self.line = line
        self.lang = lang
        self.markers = markers  # (line, text)
        self.commands = []


class DocError(Exception):
    """A wrong marker or block: names the file and line."""


def parse(path, rel):
    """The blocks of one Markdown file, with their commands and markers applied."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, errors = [], []
    markers = []  # pending markers above the next block
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if m:
            markers.append((i + 1, m.group(1)))
            i += 1
            continue
        f = FENCE.match(lines[i])
        if not f:
            if lines[i].strip() and markers:
                errors.append(f"{rel}:{markers[0][0]}: a doc-commands marker not followed by a code block")
                markers = []
            i += 1
            continue
        fence, lang = f.group(2), f.group(3).lower()
        start = i + 1
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence[0] * len(fence)):
            j += 1
        body = lines[start:j]
        block = Block(rel, start, lang, markers)
        markers = []
        if lang in SHELL:
            k = 0
            while k < len(body):
                text, first = body[k].strip(), k
                while text.endswith("\\") and k + 1 < len(body):
                    k += 1
                    text = text[:-1].rstrip() + " " + body[k].strip()
                k += 1
                if text and not text.startswith("#"):
                    block.commands.append(Command(rel, start + first + 1, text, block))
        elif lang == "console":
            cur = None
            for k, l in enumerate(body):
                if l.startswith("$ "):
                    cur = Command(rel, start + k + 1, l[2:].strip(), block)
                    cur.expect = []
                    block.commands.append(cur)
                elif cur is not None:
                    cur.expect.append(l.rstrip())
        elif lang in ("yaml", "yml"):
            # A container's command, `command: ["sh", "-c", "CMD"]`: CMD.
            for k, l in enumerate(body):
                m = YAML_COMMAND.match(l)
                if m:
                    block.commands.append(Command(rel, start + k + 1, m.group(1), block))
        elif lang == "":
            for k, l in enumerate(body):
                t = l.strip().removeprefix("$ ")
                if TOOL.match(t) and not t.startswith("sim-host/") and not re.match(r"scripts/\s", t):
                    errors.append(
                        f"{rel}:{start + k + 1}: a command in a code block without a language: "
                        "mark the block ```sh (or ```console with `$ ` lines) to have it run, "
                        "or ```text"
                    )
                    break
        if block.markers and not block.commands:
            errors.append(f"{rel}:{block.markers[0][0]}: a doc-commands marker above a block with no command")
        for ln, text in block.markers:
            try:
                apply_marker(block, text)
            except DocError as e:
                errors.append(f"{rel}:{ln}: {e}")
        if block.commands:
            blocks.append(block)
        i = j + 1
    return blocks, errors


def apply_marker(block, text):
    """Marks the commands of `block` that `text` (a marker's words) skips."""
    words = text.split(None, 1)
    kind = words[0] if words else ""
    rest = words[1] if len(words) > 1 else ""
    if kind == "placeholder":
        names = rest.split()
        if not names:
            raise DocError("`placeholder` names no placeholder")
        for name in names:
            hit = [c for c in block.commands if name in c.text]
            if not hit:
                raise DocError(f"placeholder {name!r}: no command of the block below holds it")
            for c in hit:
                c.skip = c.skip or f"placeholder {name}"
    elif kind == "skip":
        m = re.match(r'^(?:"([^"]+)"|(all))\s+(\S.*)$', rest)
        if not m:
            raise DocError('expected `skip "TEXT" REASON` or `skip all REASON`')
        text_, reason = m.group(1), m.group(3)
        hit = block.commands if m.group(2) else [c for c in block.commands if text_ in c.text]
        if not hit:
            raise DocError(f"skip {text_!r}: no command of the block below holds it")
        for c in hit:
            c.skip = c.skip or reason
    else:
        raise DocError(f"unknown doc-commands marker {kind!r} (placeholder, skip)")


def doc_files(root):
    files = [os.path.join(root, "README.md")]
    files += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(root, "fixtures", "**", "README.md"), recursive=True))
    return [f for f in files if os.path.isfile(f)]


def repo_files(root):
    """The files a fresh checkout has, with untracked ones not ignored (relative paths)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "-co", "--exclude-standard"],
            cwd=root, check=True, capture_output=True,
        ).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, fs in os.walk(root):
            dirs[:] = [x for x in dirs if x not in (".git", "target")]
            files += [os.path.relpath(os.path.join(d, f), root) for f in fs]
        return files


def git_status(root):
    try:
        return subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=root, capture_output=True, check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def fresh_copy(root, files, dest):
    for rel in files:
        src = os.path.join(root, rel)
        if not os.path.lexists(src):
            continue  # deleted in the work tree
        dst = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)


def tail(text, n=15):
    lines = text.rstrip("\n").split("\n")
    return "\n".join(("      " + l) for l in lines[-n:]) if text.strip() else "      (nothing)"


def run_block(block, root, files, env, timeout, log):
    """Runs the block's commands in a fresh copy; returns the failures ([(command, why)])."""
    failures = []
    with tempfile.TemporaryDirectory(prefix="doc-commands.") as work:
        fresh_copy(root, files, work)
        for c in block.commands:
            if c.skip:
                log(f"skip {c.where():<32} {c.skip}: {c.text}")
                continue
            t0 = time.monotonic()
            try:
                p = subprocess.run(
                    ["bash", "-o", "pipefail", "-c", c.shell()],
                    cwd=work, env=env, capture_output=True, timeout=timeout,
                )
            except subprocess.TimeoutExpired:
                why = (f"did not finish within {timeout} s: shorten it or mark it "
                       '`<!-- doc-commands: skip "TEXT" long: ... -->`')
                log(f"FAIL {c.where():<32} {c.text}\n    {why}")
                failures.append((c, why))
                continue
            dt = time.monotonic() - t0
            out = p.stdout.decode(errors="replace")
            err = p.stderr.decode(errors="replace")
            why = None
            if p.returncode != 0:
                why = f"exit {p.returncode}"
            elif c.expect is not None and [l.rstrip() for l in out.rstrip("\n").split("\n")] != [
                l for l in "\n".join(c.expect).rstrip("\n").split("\n")
            ]:
                why = "its output is not the one the page shows"
                err = "shown:\n" + "\n".join(c.expect) + "\nprinted:\n" + out
            if why:
                log(f"FAIL {c.where():<32} {c.text}\n    {why}; standard error:\n{tail(err)}")
                failures.append((c, why))
            else:
                log(f"ok   {c.where():<32} ({dt:.1f} s) {c.text}")
    return failures


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", help="Markdown files (default: README.md, docs/*.md, fixtures/**/README.md)")
    ap.add_argument("--root", default=ROOT, help="the repository to copy (default: this one)")
    ap.add_argument("--bin", help="the sim-host to run (default: the release build, built first)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per command")
    ap.add_argument("--list", action="store_true", help="print the commands, run nothing")
    a = ap.parse_args(argv)
    root = os.path.abspath(a.root)
    t0 = time.monotonic()
    paths = [os.path.abspath(f) for f in a.files] or doc_files(root)
    blocks, errors = [], []
    for p in paths:
        if not os.path.isfile(p):
            print(f"error: {p}: no such file", file=sys.stderr)
            return 2
        b, e = parse(p, os.path.relpath(p, root))
        blocks += b
        errors += e
    commands = [c for b in blocks for c in b.commands]
    if a.list:
        for c in commands:
            what = f"skip ({c.skip})" if c.skip else ("run, tool" if c.is_tool() else "run")
            print(f"{c.where():<32} {what}: {c.shell()}")
        for e in errors:
            print(f"error: {e}")
        return 1 if errors else 0

    if a.bin:
        binary = os.path.abspath(a.bin)
    else:
        target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(root, "target")
        binary = os.path.join(os.path.abspath(target), "release", "sim-host")
        r = subprocess.run(["cargo", "build", "--release", "-q", "-p", "sim-host"], cwd=root)
        if r.returncode != 0:
            print("error: cargo build --release -p sim-host failed", file=sys.stderr)
            return 1
    if not os.access(binary, os.X_OK):
        print(f"error: {binary}: no sim-host binary there", file=sys.stderr)
        return 2
    shim = tempfile.mkdtemp(prefix="doc-commands-bin.")
    os.symlink(binary, os.path.join(shim, "sim-host"))
    env = dict(os.environ, PATH=shim + os.pathsep + os.environ.get("PATH", ""))
    files = repo_files(root)
    before = git_status(root)

    failures = []
    try:
        for b in blocks:
            failures += run_block(b, root, files, env, a.timeout, lambda s: print(s, flush=True))
    finally:
        shutil.rmtree(shim, ignore_errors=True)
    after = git_status(root)
    if before is not None and after != before:
        errors.append("the repository's `git status` changed while the commands ran: a command "
                      "wrote into the repository instead of its copy")

    ran = [c for c in commands if not c.skip]
    tool = sum(1 for c in ran if c.is_tool())
    skipped = {}
    for c in commands:
        if c.skip:
            skipped.setdefault(c.skip, []).append(c.where())
    print(f"\ndoc commands: {len(ran)} run ({tool} of the tool's, {len(ran) - tool} helpers), "
          f"{len(failures)} failed, {sum(len(v) for v in skipped.values())} skipped, "
          f"in {time.monotonic() - t0:.0f} s")
    for reason, where in sorted(skipped.items()):
        print(f"  skipped {len(where)}: {reason} ({', '.join(where)})")
    for c, why in failures:
        print(f"  FAILED {c.where()}: {why}: {c.text}")
    for e in errors:
        print(f"  error: {e}")
    return 1 if failures or errors else 0


if __name__ == "__main__":
    sys.exit(main())
