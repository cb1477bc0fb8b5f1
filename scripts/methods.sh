#!/usr/bin/env bash
# Regenerates the numbers of docs/methods.md. `--eval`: `fpdb eval --methods all --analyses` on the
# three labelled corpora of docs/quality.md (reports in docs/methods/, plots in docs/img/). `--perf`:
# ingestion and crawler-loop throughput per method on the 200K scale corpus (the table printed on
# stdout goes to docs/performance.md, "Methods"). No argument: both. Corpora are fetched into data/
# (never committed).
#
# The fpdb build: FPDB=path/to/fpdb, or a dev build with the fpdb crate at -O3
# (CARGO_PROFILE_DEV_OPT_LEVEL=3; dependencies keep the dev profile's -O2, so RocksDB is not rebuilt).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${FPDB:-}" ]; then
  CARGO_PROFILE_DEV_OPT_LEVEL=3 cargo build --quiet --bin fpdb
  FPDB="${CARGO_TARGET_DIR:-target}/debug/fpdb"
fi
what=${1:-}
if [ -z "$what" ] || [ "$what" = --eval ]; then
bash scripts/corpora/fetch_all.sh >&2
mkdir -p docs/methods docs/img
for spec in licenses:50 llvm:0 debian:10; do
  name=${spec%%:*}; min=${spec##*:}
  echo "== $name (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  /usr/bin/time -f "%e s wall, %U s user, %M KB max RSS" \
    "$FPDB" eval "data/eval/$name.jsonl" --name "$name" --out-dir docs/methods --img-dir docs/img \
    --min-words "$min" --methods all --analyses >/dev/null
done
fi
if [ -z "$what" ] || [ "$what" = --perf ]; then
  corpus=data/scale/scale-200k.jsonl
  [ -s "$corpus" ] || python3 scripts/corpora/make_scale.py --out "$corpus" --truth data/scale/scale-200k.truth.jsonl --docs 200000
  tmp=$(mktemp -d)
  echo "| method | ingest, dedup off (docs/s) | crawler loop, dedup link (docs/s) | docs with verified duplicates | disk bytes/doc |"
  echo "|---|---:|---:|---:|---:|"
  for m in simhash broder charikar broder-charikar weighted-simhash multi-lexicon; do
    idf=(); [ "$m" = weighted-simhash ] && idf=(--idf-from "$corpus")
    for mode in off link; do
      rm -rf "$tmp/$mode"
      "$FPDB" init "$tmp/$mode" --method "$m" "${idf[@]}" >/dev/null 2>&1
      "$FPDB" ingest "$tmp/$mode" "$corpus" --dedup "$mode" 2> "$tmp/$mode.log" >/dev/null
    done
    rate() { grep -o '[0-9.]* docs/s' "$tmp/$1.log" | head -1 | cut -d' ' -f1; }
    dups=$(grep -o '[0-9]* with near-duplicates' "$tmp/link.log" | cut -d' ' -f1)
    bytes=$(du -sb "$tmp/off" | cut -f1)
    docs=$(grep -o '[0-9]* stored' "$tmp/off.log" | cut -d' ' -f1)
    echo "| $m | $(rate off) | $(rate link) | $dups | $((bytes / docs)) |"
  done
  rm -rf "$tmp"
fi
