#!/usr/bin/env bash
# The main job on the embedded sample: build the `fpdb` command (cli/), create a database, ingest a small harvest of
# scholarly texts (preprint, camera-ready, course copy, broken PDF extraction, ...), then look up a
# newly harvested version and list every near-duplicate pair and group.
#
# It installs what the build needs first (scripts/deps.sh: libclang and a C++ compiler, with apt when
# run as root or with passwordless sudo; otherwise it says in one line what to install). The build
# is the same as the tests' (scripts/test.sh): cargo's target directory (CARGO_TARGET_DIR when set,
# ./target otherwise), the dev profile and the feature set (--all-features: the tests' features,
# the semantic channel's candle among them), so RocksDB's C++ is compiled once for both — a build
# with other features resolves bindgen's build dependencies differently and compiles it again.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/deps.sh
source scripts/deps.sh
fpdb_deps
echo "building fpdb (the first build compiles RocksDB's C++ and candle: about 15 minutes on a fresh 2-core machine) ..." >&2
cargo build --bin fpdb --all-features
target_dir="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
fpdb="${target_dir:-target}/debug/fpdb"
db="$(mktemp -d)/papers.fpdb"
trap 'rm -rf "$(dirname "$db")"' EXIT

echo "\$ fpdb init $db"
"$fpdb" init "$db"
echo
echo "\$ fpdb ingest $db examples/sample/papers.jsonl"
"$fpdb" ingest "$db" examples/sample/papers.jsonl
echo
echo "\$ fpdb query $db examples/sample/new-harvest.txt"
"$fpdb" query "$db" examples/sample/new-harvest.txt
echo
echo "\$ fpdb pairs $db --min-jaccard 0.9 --groups"
"$fpdb" pairs "$db" --min-jaccard 0.9 --groups
echo
echo "\$ fpdb check $db"
"$fpdb" check "$db"
