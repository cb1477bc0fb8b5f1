#!/usr/bin/env bash
# One run on one corpus and the same cores: the single node (`fpdb ingest --dedup off` + `fpdb
# pairs -k 12 --min-jaccard T`), `python -m fpdb.spark pairs` (local[2], its default scheme for the
# size) and datatrove's MinHash deduplication (LocalPipelineExecutor, 2 workers). Each runs under
# cpu_of.sh (CPU seconds of every process it starts: JVM, Python workers); then recall.py.
#
#   bash scripts/scale/side_by_side.sh CORPUS.jsonl TRUTH.jsonl OUT_DIR [T]
#
# Needs the release CLI ($FPDB_BIN, default $CARGO_TARGET_DIR/release/fpdb) and FPDB_PY (default
# python/.venv/bin/python) with fpdb[spark] and, for datatrove, `pip install datatrove regex xxhash`.
set -euo pipefail
corpus="$1"; truth="$2"; out="$3"; t="${4:-0.9}"
here="$(cd "$(dirname "$0")" && pwd)"
py="${FPDB_PY:-python/.venv/bin/python}"
fpdb="${FPDB_BIN:-${CARGO_TARGET_DIR:-target}/release/fpdb}"
rm -rf "$out"
mkdir -p "$out/dt-in"
split -n l/2 -d --additional-suffix=.jsonl "$corpus" "$out/dt-in/part-"   # datatrove: a task per file
{
  bash "$here/cpu_of.sh" single sh -c "'$fpdb' init '$out/one.fpdb' --min-jaccard $t >/dev/null && \
    '$fpdb' ingest '$out/one.fpdb' '$corpus' --dedup off --no-progress >/dev/null && \
    { '$fpdb' --json pairs '$out/one.fpdb' -k 12 --min-jaccard $t >'$out/exact.jsonl' || [ \$? = 1 ]; }"
  bash "$here/cpu_of.sh" spark "$py" -m fpdb.spark pairs "$corpus" --master 'local[2]' --out "$out/spark" \
    --min-jaccard "$t" --groups --format jsonl --partitions 8 >"$out/spark.log" 2>&1 || true
  tail -1 "$out/spark.log"
  if "$py" -c 'import datatrove' 2>/dev/null; then
    bash "$here/cpu_of.sh" datatrove "$py" "$here/datatrove_minhash.py" "$out/dt-in" "$out/dt" --workers 2 --truth "$truth" \
      >"$out/datatrove.log" 2>&1 || true
    grep '^{' "$out/datatrove.log" | tail -2
  fi
  "$py" "$here/recall.py" --spark "$out/spark" --exact "$out/exact.jsonl" --truth "$truth"
} | tee "$out/results.jsonl"
