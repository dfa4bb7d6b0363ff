#!/usr/bin/env bash
# Firmware gates (docs/firmware.md):
#  1. every firmware crate cross-builds for riscv32imac and riscv32imc, with and without `defmt`;
#  2. the fw-probe release binary links on both targets — its panic handler calls a symbol nobody
#     defines, so the link itself proves that no panic path survives in any probed entry point;
#  3. no soft-float routine (or libm function) is linked anywhere in the probe;
#  4. no division: the `probe_*` entry points, and every function they call, contain no
#     div/divu/rem/remu instruction and call no __udivdi3-style helper.
set -euo pipefail
cd "$(dirname "$0")/.."

crates=(cc-math timely-cc hpcc-cc cats-conductor cc-pacer cc-pcc)
targets=(riscv32imac-unknown-none-elf riscv32imc-unknown-none-elf)

for t in "${targets[@]}"; do
  for c in "${crates[@]}"; do
    cargo build -q --release -p "$c" --target "$t"
    cargo build -q --release -p "$c" --target "$t" --features defmt
  done
  echo "gate: ${crates[*]} build for $t (with and without defmt)"
  if ! cargo build -q --release -p fw-probe --target "$t" 2>target/fw-probe-link.log; then
    cat target/fw-probe-link.log
    if grep -q fw_probe_panic_path_survived target/fw-probe-link.log; then
      echo "gate FAILED: a panic path survives in a probed entry point ($t)" >&2
    fi
    exit 1
  fi
  echo "gate: fw-probe links on $t: no panic path survives"
  python3 scripts/fw_gates.py "target/$t/release/fw-probe"
done
