#!/usr/bin/env bash
# The main job on the embedded sample: build fpdb, create a database, ingest a small harvest of
# scholarly texts (preprint, camera-ready, course copy, broken PDF extraction, ...), then look up a
# newly harvested version and list every near-duplicate pair and group.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
cargo build --quiet --bin fpdb
fpdb="$CARGO_TARGET_DIR/debug/fpdb"
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
