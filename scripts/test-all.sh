#!/usr/bin/env bash
# The whole test suite, exactly what CI runs (.ci/run calls this and nothing else):
#   set-up (targets, cross tools) → format → lints → host tests (the host bench's quick mode
#   among them) → firmware gates → the publishable crates packaged and built from their tarballs
#   → fixtures unchanged → replay of every shipped fixture within
#   tolerance → docs/results.md against a run → every command the docs show, run as written
#   (scripts/doc_commands.py) → C example on the simulator → DOCA PCC adapter
#   under QEMU → firmware benchmark smoke run → a few calls of every C ABI entry point on the
#   CV32E40P RTL under Verilator and the per-core models against the recorded RTL figures
#   (scripts/rtl.sh --ci) → bounded fuzzing (scripts/fuzz.sh --ci).
# Each step prints one `step:` line; the last line counts the steps that passed and failed.
# The fuzz targets build (nightly, their own target directory, so no lock is shared) starts in the
# background at the lowest CPU priority right after set-up: it takes the core the other steps
# leave idle (single-threaded LTO links, QEMU runs, test binaries with one long test), so the fuzz
# step mostly only runs. Its output is printed in the fuzz step.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
failures=()
step() {
  local name=$1
  shift
  echo "=== step: $name"
  local t0=$SECONDS
  if "$@"; then
    passed=$((passed + 1))
    echo "=== step: $name ok ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1))
    failures+=("$name")
    echo "=== step: $name FAILED ($((SECONDS - t0)) s)"
  fi
}

bash scripts/setup.sh || { echo "setup failed"; echo "steps: 0 passed, 1 failed"; exit 1; }

fuzz_build_log=$(mktemp)
trap 'rm -f "$fuzz_build_log"' EXIT
nice -n 19 bash scripts/fuzz.sh --build >"$fuzz_build_log" 2>&1 &
fuzz_build_pid=$!
# The fuzz step: the background build's output and status, then the runs (fuzz.sh --ci builds
# again, which finds everything up to date, or finishes what the background build left).
fuzz_step() {
  local rc=0
  wait "$fuzz_build_pid" || rc=$?
  sed 's/^/fuzz (background build): /' "$fuzz_build_log"
  ((rc == 0)) || return 1
  bash scripts/fuzz.sh --ci
}

step "rustfmt" cargo fmt --all --check
step "clippy (host, all targets)" cargo clippy --workspace --all-targets -q -- -D warnings
step "clippy (firmware crates, riscv32imac)" \
  cargo clippy -q -p cc-math -p timely-cc -p hpcc-cc -p cats-conductor -p cc-pacer -p cc-pcc --target riscv32imac-unknown-none-elf -- -D warnings
step "clippy (firmware crates and probes, riscv64imac)" \
  cargo clippy -q -p cc-math -p timely-cc -p hpcc-cc -p cats-conductor -p cc-pacer -p cc-pcc -p fw-probe --target riscv64imac-unknown-none-elf -- -D warnings
step "clippy (f64 references without an allocator, riscv32imac)" \
  cargo clippy -q -p cc-reference -p ref-probe --no-default-features --target riscv32imac-unknown-none-elf -- -D warnings
step "cargo test (workspace)" cargo test --workspace
step "firmware gates (cross-builds, panic/float/division)" bash scripts/fw-gates.sh
# Publishable crates: package each (siblings through a local registry overlay) and build it from its
# tarball. --allow-dirty so a local run before a commit works; CI's tree is clean. Cargo takes a
# registry package of a given version as immutable, but the overlay's siblings change under the
# same version: their unpacked copies ($CARGO_HOME/registry/src/-<hash>/NAME-VERSION) and their
# builds would be reused stale, so both go before the run (the builds are in a target directory of
# their own, where only the crates.io dependencies stay built).
publish_dry_run() {
  local c args=() dir="${CARGO_TARGET_DIR:-target}/publish-dry-run"
  for c in cc-math timely-cc hpcc-cc cats-conductor cc-pacer cc-pcc cc-reference cc-ffi; do
    rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/"$c"-[0-9]*
    args+=(-p "$c")
  done
  cargo clean -q --target-dir "$dir" "${args[@]}" &&
    CARGO_PROFILE_DEV_DEBUG=0 cargo publish --dry-run -q --allow-dirty --target-dir "$dir" "${args[@]}"
}
step "firmware crates package and build from their tarballs (cargo publish --dry-run)" publish_dry_run
step "fixtures are what their generators make" cargo run -q --release -p sim-host -- fixtures --check
step "replay all shipped fixtures within tolerance" cargo run -q --release -p sim-host -- replay all fixtures
step "docs/results.md matches a run of every scenario it quotes (and the generator's tests)" \
  sh -c "python3 -m unittest discover -q -s scripts/results -p 'test_*.py' && python3 scripts/results.py --check"
step "every command the docs show runs as written (scripts/doc_commands.py, and its self-test)" \
  sh -c "python3 -m unittest -q scripts/test_doc_commands.py && python3 scripts/doc_commands.py"
step "C example firmware links and runs on the riscv32 simulator and QEMU" make -s -C examples/c-firmware check
step "DOCA PCC callbacks on rv64imac_zbb under QEMU give the host's rates" make -s -C examples/doca-pcc check
step "firmware benchmark builds and runs (a few calls per case; never fails on a number)" bash scripts/perf-report.sh --quick
step "C ABI on CV32E40P RTL under Verilator equals the host; every core's model holds to the recorded RTL figures" \
  bash scripts/rtl.sh --ci
step "fuzz: every cargo-fuzz target 10 s on fixture seeds and past crashes (nightly)" fuzz_step

if ((failed)); then
  echo "failed steps: ${failures[*]}"
fi
echo "steps: $passed passed, $failed failed"
((failed == 0))
