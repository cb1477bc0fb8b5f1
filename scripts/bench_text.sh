#!/usr/bin/env bash
# Stored texts (docs/format.md, "Stored texts"; docs/performance.md, "Stored texts"): the crawler
# loop (`fpdb ingest`, dedup link, durable) without and with `--store-text`, alternating, and
# `fpdb reindex --spec` from the stored texts against a fresh ingest of the file under the same
# new spec. Needs the release CLI in $CARGO_TARGET_DIR (default target/):
#   cargo build --release --bin fpdb
#   scripts/bench_text.sh CORPUS.jsonl [ROUNDS]
# Prints one line per run: wall seconds, user + sys CPU seconds, documents per wall second.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${1:?usage: scripts/bench_text.sh CORPUS.jsonl [ROUNDS]}
rounds=${2:-2}
fpdb=${FPDB_BUILD:-${CARGO_TARGET_DIR:-target}/release}/fpdb
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
docs=$(wc -l <"$corpus")
run() { # NAME COMMAND...: one timed run
  local name=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$@" >/dev/null
  read -r wall user sys <"$tmp/time"
  awk -v n="$name" -v w="$wall" -v u="$user" -v s="$sys" -v d="$docs" \
    'BEGIN { printf "%-34s wall %6.2f s  cpu %6.2f s  %8.0f docs/s\n", n, w, u + s, d / w }'
}
for r in $(seq "$rounds"); do
  for store in "" "--store-text"; do
    rm -rf "$tmp/db"
    "$fpdb" init "$tmp/db" $store >/dev/null
    run "ingest ${store:-(no stored text)}" "$fpdb" ingest "$tmp/db" "$corpus" --no-progress
  done
  "$fpdb" --json stats "$tmp/db" >/dev/null
  rm -rf "$tmp/fresh"
  "$fpdb" init "$tmp/fresh" --store-text --shingle word:4 >/dev/null
  run "fresh ingest, word:4" "$fpdb" ingest "$tmp/fresh" "$corpus" --no-progress
  run "reindex --spec --shingle word:4" "$fpdb" reindex "$tmp/db" --spec --shingle word:4
done
