#!/usr/bin/env bash
# `cargo check` for aarch64 Linux (the scalar kernels' target; the SIMD ones are x86-only and picked
# at run time) of the three packages with their default features: the library (`fpdb`), the `fpdb`
# command (`fpdb-cli`, serve included) and the HTTP service (`fpdb-serve`), without the semantic
# feature, so that this step also checks the build without it. RocksDB's C++ is compiled for the target by the cross g++
# (Debian's g++-aarch64-linux-gnu, installed here when missing): ~16 CPU-minutes the first time
# (968 s user + 95 s sys measured on the 2-core dev box), seconds when the target dir is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
target=aarch64-unknown-linux-gnu
if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
  # rustup's server may be out of reach where only the package registries are: say so loudly and
  # stop without failing the run (the x86 build and every test still ran).
  if ! rustup target add "$target"; then
    echo "SKIPPED: the aarch64 check (rustup target add $target failed: no route to rustup's server?)" >&2
    exit 0
  fi
fi
if ! command -v aarch64-linux-gnu-g++ >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  pkgs=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu)
  if ! $sudo apt-get install -y -q "${pkgs[@]}" >/dev/null 2>&1; then
    if ! { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q "${pkgs[@]}" >/dev/null; }; then
      echo "SKIPPED: the aarch64 check (apt-get could not install ${pkgs[*]})" >&2
      exit 0
    fi
  fi
fi
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc CXX_aarch64_unknown_linux_gnu=aarch64-linux-gnu-g++
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
# bindgen parses RocksDB's C header for the target: the cross sysroot's libc headers.
export BINDGEN_EXTRA_CLANG_ARGS_aarch64_unknown_linux_gnu="--sysroot=/usr/aarch64-linux-gnu"
RUSTFLAGS="${RUSTFLAGS:-} -D warnings" cargo check --target "$target" -p fpdb -p fpdb-cli -p fpdb-serve
