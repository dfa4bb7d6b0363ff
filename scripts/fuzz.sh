#!/usr/bin/env bash
# Fuzzing with cargo-fuzz (libFuzzer, nightly): the targets in fuzz/fuzz_targets (docs/robustness.md).
#
#   scripts/fuzz.sh --ci                 what CI runs: build every target, run each for
#                                        FUZZ_SECONDS (default 10), FUZZ_JOBS (default 2) at a
#                                        time, on seeds made from fixtures/ plus
#                                        fuzz/regressions/, in a temporary corpus
#   scripts/fuzz.sh --long [SECONDS] [TARGET...]
#                                        the long run: each target (default all) for SECONDS
#                                        (default 600), corpus kept in fuzz/corpus/TARGET
#                                        (grows across runs), final stats printed
#   scripts/fuzz.sh --build              build only
#
# Needs the nightly toolchain (fails with a message when it is missing) and cargo-fuzz (installed
# with `cargo +nightly install cargo-fuzz --locked` when missing). A crash stops that target, its
# input is written to fuzz/artifacts/TARGET/ and the script exits 1 after the other targets ran;
# reproduce with `cargo +nightly fuzz run TARGET fuzz/artifacts/TARGET/crash-…`.
# Build output goes to FUZZ_TARGET_DIR (default target/fuzz).
set -uo pipefail
cd "$(dirname "$0")/.."

mode=${1:---ci}
shift || true
target_dir=${FUZZ_TARGET_DIR:-target/fuzz}

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz: the nightly toolchain is missing (cargo-fuzz needs it):" >&2
  echo "fuzz:   rustup toolchain install nightly --no-self-update --profile minimal" >&2
  exit 1
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz (once per machine)" >&2
  cargo +nightly install cargo-fuzz --locked || { echo "fuzz: cannot install cargo-fuzz" >&2; exit 1; }
fi

build() {
  local t0=$SECONDS
  cargo +nightly fuzz build --target-dir "$target_dir" || { echo "fuzz: build failed" >&2; exit 1; }
  echo "fuzz: built $(cargo +nightly fuzz list | wc -l) targets ($((SECONDS - t0)) s)"
}

# Seeds from the fixtures, then the inputs of past crashes (fuzz/regressions/TARGET/).
seed() {
  local dir=$1
  python3 fuzz/seeds.py "$dir" || exit 1
  for d in fuzz/regressions/*/; do
    [ -d "$d" ] || continue
    mkdir -p "$dir/$(basename "$d")"
    cp "$d"* "$dir/$(basename "$d")/"
  done
}

# run TARGET CORPUS SECONDS: prints one summary line; returns 1 on a crash, leak or timeout.
run() {
  local t=$1 corpus=$2 secs=$3 log
  log=$(mktemp)
  cargo +nightly fuzz run --target-dir "$target_dir" "$t" "$corpus" -- \
    -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1
  local rc=$?
  local execs cov corp
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  corp=$(grep -o 'corp: [0-9]*/[0-9A-Za-z]*' "$log" | tail -1)
  if ((rc == 0)); then
    echo "fuzz: $t ok: ${execs:-?} execs in ${secs} s ($((${execs:-0} / secs))/s), ${cov:-cov: ?}, ${corp:-corp: ?}"
    rm -f "$log"
    return 0
  fi
  echo "fuzz: $t FAILED (exit $rc); log $log:" >&2
  grep -E -A12 "panicked|ERROR: libFuzzer|SUMMARY" "$log" | head -40 >&2
  grep -E "Test unit written|artifact_prefix" "$log" >&2
  return 1
}

case "$mode" in
  --build)
    build
    ;;
  --ci)
    secs=${FUZZ_SECONDS:-10}
    t0=$SECONDS
    build
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    seed "$work"
    # FUZZ_JOBS targets at a time (default 2: CI runs this stage alone on 2 cores).
    jobs=${FUZZ_JOBS:-2}
    mapfile -t targets < <(cargo +nightly fuzz list)
    for t in "${targets[@]}"; do
      while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
      (run "$t" "$work/$t" "$secs" >"$work/$t.result" 2>&1; echo $? >"$work/$t.rc") &
    done
    wait
    failed=()
    for t in "${targets[@]}"; do
      cat "$work/$t.result"
      [ "$(cat "$work/$t.rc")" = 0 ] || failed+=("$t")
    done
    echo "fuzz: stage took $((SECONDS - t0)) s"
    if ((${#failed[@]})); then
      echo "fuzz: failed: ${failed[*]}" >&2
      exit 1
    fi
    ;;
  --long)
    secs=600
    if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
      secs=$1
      shift
    fi
    build
    targets=("$@")
    ((${#targets[@]})) || mapfile -t targets < <(cargo +nightly fuzz list)
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    seed "$work"
    failed=()
    for t in "${targets[@]}"; do
      mkdir -p "fuzz/corpus/$t"
      cp -n "$work/$t/"* "fuzz/corpus/$t/" 2>/dev/null
      run "$t" "fuzz/corpus/$t" "$secs" || failed+=("$t")
    done
    if ((${#failed[@]})); then
      echo "fuzz: failed: ${failed[*]}" >&2
      exit 1
    fi
    ;;
  *)
    sed -n '2,18p' "$0"
    exit 2
    ;;
esac
