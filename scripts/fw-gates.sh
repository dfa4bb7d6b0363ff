#!/usr/bin/env bash
# Firmware gates (docs/firmware.md), on riscv32imac, riscv32imc, riscv64imac and riscv64imac with
# Zbb (`-C target-feature=+zbb`, the BlueField-3 DPA's rv64imac_zbb; built in target/zbb):
#  1. every firmware crate cross-builds for each target, with and without `defmt`;
#  2. the fw-probe release binary links on each target — its panic handler calls a symbol nobody
#     defines, so the link itself proves that no panic path survives in any probed entry point;
#  3. no soft-float routine (or libm function) is linked anywhere in the probe;
#  4. no division: the `probe_*` entry points, and every function they call, contain no
#     div/divu/rem/remu (rv64 also divw/divuw/remw/remuw) instruction and call no
#     __udivdi3/__udivti3-style helper.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m unittest -q scripts/test_fw_gates.py

crates=(cc-math timely-cc hpcc-cc cats-conductor cc-pacer cc-pcc)
# target, RUSTFLAGS, target directory, label
builds=(
  "riscv32imac-unknown-none-elf||target|riscv32imac"
  "riscv32imc-unknown-none-elf||target|riscv32imc"
  "riscv64imac-unknown-none-elf||target|riscv64imac"
  "riscv64imac-unknown-none-elf|-C target-feature=+zbb|target/zbb|riscv64imac+zbb"
)

# cargo with the build's RUSTFLAGS (left unset when there are none, so the usual cache is reused)
xcargo() {
  if [[ -n "$flags" ]]; then RUSTFLAGS="$flags" cargo "$@"; else cargo "$@"; fi
}

for b in "${builds[@]}"; do
  IFS='|' read -r t flags dir label <<<"$b"
  for c in "${crates[@]}"; do
    xcargo build -q --release -p "$c" --target "$t" --target-dir "$dir"
    xcargo build -q --release -p "$c" --target "$t" --target-dir "$dir" --features defmt
  done
  echo "gate: ${crates[*]} build for $label (with and without defmt)"
  if ! xcargo build -q --release -p fw-probe --target "$t" --target-dir "$dir" 2>target/fw-probe-link.log; then
    cat target/fw-probe-link.log
    if grep -q fw_probe_panic_path_survived target/fw-probe-link.log; then
      echo "gate FAILED: a panic path survives in a probed entry point ($label)" >&2
    fi
    exit 1
  fi
  echo "gate: fw-probe links on $label: no panic path survives"
  python3 scripts/fw_gates.py "$dir/$t/release/fw-probe"
done
