#!/usr/bin/env bash
# Makes sure the system packages the build needs are present: libclang (RocksDB's Rust bindings are
# generated with it) and a C++ compiler (RocksDB itself is C++). Installs the missing ones with apt
# when running as root or with passwordless sudo; otherwise prints ONE line saying what to install
# and exits 1. Run it directly or source it (scripts/demo.sh and scripts/test.sh source it).
# Idempotent and quick when everything is there (no apt call).

# True when one of the directories holds libclang.so* or libclang-N*.so* (not libclang-cpp).
fpdb_has_libclang() {
  local d
  for d in "$@"; do
    compgen -G "$d/libclang.so*" >/dev/null && return 0
    compgen -G "$d/libclang-[0-9]*.so*" >/dev/null && return 0
  done
  return 1
}

fpdb_deps() {
  local missing=()
  # clang-sys looks for libclang.so / libclang-N.so in LIBCLANG_PATH, then in the usual library
  # directories. libclang-cpp.so (the C++ library some images ship without libclang) does not count.
  if ! { [ -n "${LIBCLANG_PATH:-}" ] && fpdb_has_libclang "$LIBCLANG_PATH"; } \
    && ! ldconfig -p 2>/dev/null | grep -Eq '(^|[[:space:]/])libclang(-[0-9][0-9.]*)?\.so' \
    && ! fpdb_has_libclang /usr/lib/llvm-*/lib /usr/lib/*; then
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
