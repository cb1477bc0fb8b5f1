#!/usr/bin/env bash
# Makes sure the system packages the build needs are present: libclang (RocksDB's Rust bindings are
# generated with it) and a C++ compiler (RocksDB itself is C++). Installs the missing ones with apt
# when running as root or with passwordless sudo; otherwise prints ONE line saying what to install
# and exits 1. Run it directly or source it (scripts/demo.sh and scripts/test.sh source it).
# Idempotent and quick when everything is there (no apt call).

fpdb_deps() {
  local missing=()
  # clang-sys looks for libclang.so in LIBCLANG_PATH, then in the usual library directories.
  if ! { [ -n "${LIBCLANG_PATH:-}" ] && compgen -G "$LIBCLANG_PATH/libclang*.so*" >/dev/null; } \
    && ! ldconfig -p 2>/dev/null | grep -q 'libclang[-.0-9]*\.so' \
    && ! compgen -G '/usr/lib/llvm-*/lib/libclang*.so*' >/dev/null \
    && ! compgen -G '/usr/lib/*/libclang*.so*' >/dev/null; then
    missing+=(libclang-dev)
  fi
  if ! command -v c++ >/dev/null 2>&1 && ! command -v g++ >/dev/null 2>&1; then
    missing+=(g++)
  fi
  [ ${#missing[@]} -eq 0 ] && return 0

  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo"
    else
      echo "fpdb: the build needs ${missing[*]} (for RocksDB): install it with \`sudo apt-get install -y ${missing[*]}\` (or your system's libclang and C++ compiler packages), then run this again" >&2
      return 1
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "fpdb: the build needs ${missing[*]} (for RocksDB) and this system has no apt-get: install libclang and a C++ compiler with its package manager, then run this again" >&2
    return 1
  fi
  echo "fpdb: installing ${missing[*]} (needed to build RocksDB) with apt-get ..." >&2
  $sudo apt-get update -qq >/dev/null &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null || {
    echo "fpdb: \`apt-get install ${missing[*]}\` failed; install it by hand, then run this again" >&2
    return 1
  }
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  fpdb_deps
fi
