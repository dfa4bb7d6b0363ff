#!/usr/bin/env bash
# Installs what the project needs on a fresh Debian machine with rustup. Safe to run again; does
# nothing when all is there.
#   bash scripts/setup.sh --host   the pinned toolchain and a C compiler/linker (Rust links with
#                                  `cc` on Linux): enough to build and run sim-host
#   bash scripts/setup.sh          also the riscv32 and riscv64 targets (rustup does not add
#                                  them by itself here: RUSTUP_AUTO_INSTALL=0), the riscv cross
#                                  binutils/gcc and qemu-user (qemu-riscv32, qemu-riscv64) used
#                                  by the firmware gates, the C example and the rv64 counts,
#                                  Verilator and pip for the RTL step (scripts/rtl.sh installs
#                                  the cores' RTL from PyPI itself, pinned),
#                                  and the nightly toolchain for the fuzz step
# Debian packages are installed with apt-get as root, or through sudo; with neither, the script
# prints the command to run and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
host_only=0
[[ "${1:-}" == "--host" ]] && host_only=1

install_debs() {
  (($#)) || return 0
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null; then
      sudo="sudo"
    else
      echo "setup: missing Debian packages: $*" >&2
      echo "setup: run as root: apt-get update && apt-get install -y $*" >&2
      exit 1
    fi
  fi
  echo "setup: installing Debian packages: $*"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

toolchain=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
if ! rustup toolchain list | grep -q "^$toolchain"; then
  rustup toolchain install "$toolchain" --no-self-update --profile minimal -c clippy -c rustfmt
fi
rustup component add --toolchain "$toolchain" clippy rustfmt >/dev/null 2>&1 || true
if ((host_only)); then
  command -v cc >/dev/null || install_debs gcc libc6-dev
  echo "setup: toolchain $toolchain and a C compiler/linker ready"
  exit 0
fi
rustup target add --toolchain "$toolchain" riscv32imac-unknown-none-elf riscv32imc-unknown-none-elf \
  riscv64imac-unknown-none-elf
# cargo-fuzz needs nightly (the fuzz step; scripts/fuzz.sh installs cargo-fuzz itself). Where it
# cannot be fetched, everything else still works and the fuzz step says what is missing.
if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --no-self-update --profile minimal ||
    echo "setup: the nightly toolchain could not be installed: the fuzz step will fail" >&2
fi

need=()
command -v cc >/dev/null || need+=(gcc libc6-dev)
command -v riscv64-unknown-elf-objdump >/dev/null || need+=(binutils-riscv64-unknown-elf)
command -v riscv64-unknown-elf-gcc >/dev/null || need+=(gcc-riscv64-unknown-elf)
{ command -v qemu-riscv32 && command -v qemu-riscv64; } >/dev/null || need+=(qemu-user)
command -v make >/dev/null || need+=(make)
command -v python3 >/dev/null || need+=(python3)
# Verilator (scripts/rtl.sh: the C ABI on soft-core RTL; CI's CV32E40P step).
command -v verilator >/dev/null || need+=(verilator)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
install_debs "${need[@]+"${need[@]}"}"
echo "setup: toolchain $toolchain with riscv32imac/riscv32imc/riscv64imac targets, riscv cross binutils and gcc, qemu-riscv32/64 ready"
