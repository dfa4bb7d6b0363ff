#!/usr/bin/env bash
# The C ABI measured on four soft cores' RTL under Verilator (docs/performance.md,
# "Cycles on RTL"):
#   1. installs what is missing: Debian's verilator (apt-get), the cores' RTL from PyPI's LiteX
#      data packages (pip, pinned below, into target/rtl/py), the riscv32imc Rust target;
#   2. builds libcc_ffi.a for riscv32imc-unknown-none-elf and links the RTL harness
#      (crates/fw-bench/rtl/harness) into target/rtl/harness/harness.elf;
#   3. builds each core's Verilator model (crates/fw-bench/rtl/tb: tb.cpp and a top per core)
#      into target/rtl/<core>/Vtb;
#   4. runs `fw-bench rtl`: the C ABI cases recorded on rvsim, replayed on each core, every
#      result checked against rvsim's, cycles and the per-core model's error per row.
#
# Usage: scripts/rtl.sh [--ci | --record | --build] [extra fw-bench rtl arguments]
#   (none)     all four cores, zero wait states and a 1-cycle instruction memory; prints the
#              block of docs/performance.md
#   --record   the same, and writes the block into docs/performance.md and the figures into
#              crates/fw-bench/rtl/recorded.tsv (what `fw-bench rtl-model` holds the models to)
#   --ci       CI: CV32E40P only, a few calls of every entry point (fails if a result differs
#              from rvsim's and the host's, or the model's error leaves its bound), then every
#              core's model against the recorded figures (no RTL needed for that)
#   --build    steps 1-3 only
# Every step's output stays under target/rtl (and the Cargo target directory).
set -euo pipefail
cd "$(dirname "$0")/.."

# The cores' RTL: LiteX's data packages on PyPI, pinned.
WHEELS=(
  pythondata-cpu-cv32e40p==1.0.1.post1909
  pythondata-cpu-ibex==0.0.post2937
  pythondata-cpu-vexriscv==1.0.1.post407
  pythondata-cpu-picorv32==1.0.post218
)
RTL=target/rtl
PY=$RTL/py
TB=crates/fw-bench/rtl/tb
HARNESS=crates/fw-bench/rtl/harness
TARGET=riscv32imc-unknown-none-elf
CARGO_TARGET=${CARGO_TARGET_DIR:-target}
# Limit of calls per case: the full run and the recorded figures use the same.
LIMIT=256

mode=full
case "${1:-}" in
  --ci | --record | --build)
    mode=${1#--}
    shift
    ;;
esac

# install_wheel <name==version>: into $PY/<name>, unless that version is there.
install_wheel() {
  local dir="$PY/${1%%==*}"
  [ "$(cat "$dir/.pinned" 2>/dev/null)" = "$1" ] && return 0
  echo "rtl: installing $1 into $dir" >&2
  rm -rf "$dir"
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --target "$dir" "$1"
  echo "$1" >"$dir/.pinned"
}

# setup <wheels…>
setup() {
  if ! command -v verilator >/dev/null; then
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    echo "rtl: installing Debian's verilator" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq verilator >/dev/null
  fi
  local w
  for w in "$@"; do install_wheel "$w"; done
  rustup target list --installed | grep -q "^$TARGET\$" || rustup target add "$TARGET"
}

# link <elf> <dir of hot.ld>: the harness image with libcc_ffi.a.
link() {
  # Every C ABI function stays linked (-u), as the C example keeps them by calling them.
  local keep
  keep=$(grep -o '^[a-zA-Z].* \**cc_[a-z0-9_]*(' crates/cc-ffi/include/cc_ffi.h |
    grep -o 'cc_[a-z0-9_]*' | sed 's/^/-Wl,-u,/')
  # shellcheck disable=SC2086
  riscv64-unknown-elf-gcc -march=rv32imc_zicsr -mabi=ilp32 -O2 -ffreestanding -fno-builtin \
    -nostdlib -nostartfiles -static -Wall -Wextra -Werror -std=c11 -ffunction-sections \
    -fdata-sections -T "$HARNESS/link.ld" -L "$2" -Wl,--gc-sections -Wl,--no-warn-rwx-segments \
    $keep -Wl,-Map,"${1%.elf}.map" -o "$1" \
    "$HARNESS/start.S" "$HARNESS/harness.c" "$CARGO_TARGET/$TARGET/release/libcc_ffi.a"
}

harness() {
  echo "rtl: libcc_ffi.a for $TARGET and the harness" >&2
  cargo build --release -q -p cc-ffi --target "$TARGET"
  mkdir -p "$RTL/harness/plain" "$RTL/harness/hot"
  : >"$RTL/harness/plain/hot.ld"
  link "$RTL/harness/harness.elf" "$RTL/harness/plain"
}

# The hot-code layout: the functions each entry point's calls execute, contiguous.
harness_hot() {
  "${BENCH[@]}" rtl-layout --limit "$LIMIT" --ld "$RTL/harness/hot/hot.ld" >/dev/null
  link "$RTL/harness/harness-hot.elf" "$RTL/harness/hot"
}

# verilate <core> <define> <top.sv> <verilator arguments…>: builds $RTL/<core>/Vtb.
verilate() {
  local core=$1 define=$2 top=$3
  shift 3
  local dir="$RTL/$core"
  mkdir -p "$dir"
  if [ -x "$dir/Vtb" ] && [ -z "$(find "$TB" "$PY"/*/.pinned -newer "$dir/Vtb" -print -quit)" ]; then
    return 0
  fi
  echo "rtl: verilating $core" >&2
  local t0=$SECONDS
  # Lint warnings of the cores' own RTL are theirs (-Wno-fatal); errors stop the build.
  verilator --cc --exe --build -j 2 -O3 --x-assign fast --x-initial fast --noassert \
    -Wno-fatal -Wno-lint -Wno-style -Wno-COMBDLY -Wno-MULTIDRIVEN -Wno-UNOPTFLAT \
    --top-module top --prefix Vtop -Mdir "$dir/obj" -CFLAGS "-O2 -D$define" \
    "$@" "$PWD/$TB/$top" "$PWD/$TB/tb.cpp" -o Vtb >"$dir/build.log" 2>&1 ||
    { tail -40 "$dir/build.log" >&2; return 1; }
  cp "$dir/obj/Vtb" "$dir/Vtb"
  echo "rtl: $core built in $((SECONDS - t0)) s" >&2
}

build_cv32e40p() {
  local src="$PWD/$PY/pythondata-cpu-cv32e40p/pythondata_cpu_cv32e40p/system_verilog" dir="$RTL/cv32e40p"
  mkdir -p "$dir/patched"
  # Verilator 5.006 rejects cv32e40p_cs_registers.sv (BLKANDNBLK): the tie-offs of the counters
  # and events not implemented are continuous assignments to elements of arrays whose other
  # elements are flops. The patched copy makes each tie-off a flop reset to and held at 0
  # (the same values), and is compiled instead of the original.
  sed -E "s/^( *)assign ((mhpmcounter_q|mhpmevent_q|mcounteren_q|mcountinhibit_q)\[[a-z_]+\](\[[^]]*\])?) = 'b0;/\1always_ff @(posedge clk, negedge rst_n) \2 <= 'b0;/" \
    "$src/rtl/cv32e40p_cs_registers.sv" >"$dir/patched/cv32e40p_cs_registers.sv.new"
  cmp -s "$dir/patched/cv32e40p_cs_registers.sv.new" "$dir/patched/cv32e40p_cs_registers.sv" ||
    mv "$dir/patched/cv32e40p_cs_registers.sv.new" "$dir/patched/cv32e40p_cs_registers.sv"
  rm -f "$dir/patched/cv32e40p_cs_registers.sv.new"
  local files
  files=$(grep '^\${DESIGN_RTL_DIR}' "$src/cv32e40p_manifest.flist" |
    grep -v 'tracer_pkg\|tb_wrapper\|cs_registers' | sed "s|\${DESIGN_RTL_DIR}|$src/rtl|")
  # shellcheck disable=SC2086
  verilate cv32e40p CORE_CV32E40P cv32e40p_top.sv -I"$src/rtl/include" -I"$src/bhv" \
    -I"$src/bhv/include" $files "$PWD/$dir/patched/cv32e40p_cs_registers.sv"
}

build_picorv32() {
  verilate picorv32 CORE_PICORV32 picorv32_top.sv \
    "$PWD/$PY/pythondata-cpu-picorv32/pythondata_cpu_picorv32/verilog/picorv32.v"
}

build_vexriscv() {
  verilate vexriscv CORE_VEXRISCV vexriscv_top.sv \
    "$PWD/$PY/pythondata-cpu-vexriscv/pythondata_cpu_vexriscv/verilog/VexRiscv_IMAC.v"
}

build_ibex() {
  # Ibex's RTL instantiates lowRISC primitives (prim_*) from the same wheel: the generic
  # implementations (vendor/lowrisc_ip/ip/prim_generic) behind the simulation wrappers of its
  # own DV tree (dv/uvm/core_ibex/common/prim), found by module name (-y).
  local src="$PWD/$PY/pythondata-cpu-ibex/pythondata_cpu_ibex/system_verilog"
  local ip="$src/vendor/lowrisc_ip/ip"
  verilate ibex CORE_IBEX ibex_top.sv -I"$ip/prim/rtl" -I"$src/rtl" -I"$src/vendor/lowrisc_ip/dv/sv/dv_utils" \
    -y "$src/dv/uvm/core_ibex/common/prim" -y "$ip/prim_generic/rtl" -y "$ip/prim/rtl" -y "$src/rtl" \
    "$src/dv/uvm/core_ibex/common/prim/prim_pkg.sv" "$ip/prim/rtl/prim_util_pkg.sv" "$ip/prim/rtl/prim_cipher_pkg.sv" "$ip/prim/rtl/prim_count_pkg.sv" "$ip/prim/rtl/prim_ram_1p_pkg.sv" "$ip/prim/rtl/prim_secded_pkg.sv" "$ip/prim/rtl/prim_mubi_pkg.sv" \
    "$src/rtl/ibex_pkg.sv"
}

if [ "$mode" = ci ]; then
  setup "${WHEELS[0]}"
else
  setup "${WHEELS[@]}"
fi
harness
build_cv32e40p
if [ "$mode" != ci ]; then
  build_picorv32
  build_vexriscv
  build_ibex
fi
BENCH=(cargo run --release -q -p fw-bench --)
[ "$mode" = ci ] || harness_hot
[ "$mode" = build ] && exit 0

case $mode in
  ci)
    # A few calls of every C ABI entry point on CV32E40P; then the recorded figures.
    "${BENCH[@]}" rtl --core cv32e40p --limit 8 --check-bounds "$@" >/dev/null
    "${BENCH[@]}" rtl-model
    ;;
  full)
    "${BENCH[@]}" rtl --limit "$LIMIT" --mem i0d0 --mem i1d0 \
      --layout-harness "$RTL/harness/harness-hot.elf" "$@"
    ;;
  record)
    "${BENCH[@]}" rtl --limit "$LIMIT" --mem i0d0 --mem i1d0 \
      --layout-harness "$RTL/harness/harness-hot.elf" --tsv crates/fw-bench/rtl/recorded.tsv --update docs/performance.md "$@"
    ;;
esac
