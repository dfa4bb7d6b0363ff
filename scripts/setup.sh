#!/usr/bin/env bash
# Installs what the tests need on a fresh Debian machine: the pinned toolchain's riscv32 targets
# (rustup does not add them by itself here: RUSTUP_AUTO_INSTALL=0) and the riscv cross binutils/gcc
# used by the firmware gates and the C example. Safe to run again; does nothing when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."

toolchain=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
if ! rustup toolchain list | grep -q "^$toolchain"; then
  rustup toolchain install "$toolchain" --no-self-update --profile minimal -c clippy -c rustfmt
fi
rustup component add --toolchain "$toolchain" clippy rustfmt >/dev/null 2>&1 || true
rustup target add --toolchain "$toolchain" riscv32imac-unknown-none-elf riscv32imc-unknown-none-elf

need=()
command -v riscv64-unknown-elf-objdump >/dev/null || need+=(binutils-riscv64-unknown-elf)
command -v riscv64-unknown-elf-gcc >/dev/null || need+=(gcc-riscv64-unknown-elf)
command -v qemu-riscv32 >/dev/null || need+=(qemu-user)
command -v make >/dev/null || need+=(make)
command -v python3 >/dev/null || need+=(python3)
if ((${#need[@]})); then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup: installing Debian packages: ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
echo "setup: toolchain $toolchain with riscv32imac/riscv32imc targets, riscv cross binutils and gcc, qemu-riscv32 ready"
