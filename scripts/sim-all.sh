#!/usr/bin/env bash
# Runs every scenario under fixtures/scenarios with the fixed-point controllers and with the f64
# references (release build), writing reports, per-flow CSVs and figures under OUT (default
# out/sim). One line per run is printed; the full reports are OUT/<scenario>.<controller>.txt.
# An algorithm without a firmware crate (DCQCN, DCTCP) has no fixed-point run: sim-host refuses
# it (exit 2), and the line printed for it is the refusal, marked "reference only".
# The 320-host fat-tree scenarios (*_fat_*) take up to a minute each: skipped, with a line
# saying so, unless SIM_ALL_FAT=1.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-out/sim}
mkdir -p "$OUT"
cargo build --release -q -p sim-host
BIN=${CARGO_TARGET_DIR:-target}/release/sim-host
for f in fixtures/scenarios/*.toml; do
  n=$(basename "$f" .toml)
  if [[ $n == *_fat_* && -z ${SIM_ALL_FAT:-} ]]; then
    echo "$n: skipped (minutes of wall time; SIM_ALL_FAT=1 runs it)"
    continue
  fi
  for c in fixed reference; do
    rc=0
    "$BIN" sim "$f" --controller "$c" --out "$OUT/$c" --plot "$OUT/$c" > "$OUT/$n.$c.txt" 2> "$OUT/$n.$c.err" || rc=$?
    if [ "$rc" -eq 2 ] && [ "$c" = fixed ] && grep -q "has no fixed-point implementation" "$OUT/$n.$c.err"; then
      echo "$n: reference only ($(head -1 "$OUT/$n.$c.err"))"
      continue
    fi
    cat "$OUT/$n.$c.err" >&2
    [ "$rc" -eq 0 ] || { echo "$n ($c): exit $rc" >&2; exit "$rc"; }
    head -1 "$OUT/$n.$c.txt"
  done
done
