#!/usr/bin/env bash
# Regenerates the measured block of docs/performance.md (issue 5's "one command"):
#   1. fw-probe, release riscv32imac, opt-level 3 (counts + size) and opt-level "s" (size);
#   2. the cc-ffi staticlib and the C example firmware (examples/c-firmware);
#   3. fw-bench report: per-call instruction counts on rvsim, QEMU cross-check, sizes, state.
#
# Usage: scripts/perf-report.sh [--quick]
#   --quick   a few calls per case, print the block instead of writing the doc (what CI runs:
#             it checks the benchmark still builds and runs; it never fails on a number).
# Needs: the riscv32imac target, riscv64-unknown-elf-gcc (Debian gcc-riscv64-unknown-elf);
# qemu-riscv32 (Debian qemu-user) is optional (cross-check column).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
[[ "${1:-}" == "--quick" ]] && quick=1

target=riscv32imac-unknown-none-elf
echo "== fw-probe (opt-level 3)" >&2
cargo build --release -q -p fw-probe --target "$target"
echo "== fw-probe (opt-level s)" >&2
CARGO_PROFILE_RELEASE_OPT_LEVEL=s cargo build --release -q -p fw-probe --target "$target" \
    --target-dir target/opt-s
echo "== C example firmware" >&2
make -s -C examples/c-firmware all

args=(
    --probe "target/$target/release/fw-probe"
    --probe-os "target/opt-s/$target/release/fw-probe"
    --c-firmware examples/c-firmware/build/firmware.elf
    --fixtures fixtures
)
echo "== fw-bench report" >&2
if (( quick )); then
    cargo run --release -q -p fw-bench -- report "${args[@]}" --limit 16
else
    cargo run --release -q -p fw-bench -- report "${args[@]}" --update docs/performance.md
fi
