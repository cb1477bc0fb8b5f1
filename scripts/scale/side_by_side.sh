#!/usr/bin/env bash
# One run on one corpus and the same cores: the single node (`fpdb ingest --dedup off` + `fpdb
# pairs -k 12 --min-jaccard T`), `python -m fpdb.spark pairs` (local[2], its default scheme for the
# size) and datatrove's MinHash deduplication (LocalPipelineExecutor, 2 workers). Each runs under
# cpu_of.sh (CPU seconds of every process it starts: JVM, Python workers), one after the other;
# then recall.py, and a last JSON line with documents per CPU-second of each and the Spark job's
# CPU over the single node's. The load average is recorded before and after each step.
#
#   bash scripts/scale/side_by_side.sh CORPUS.jsonl TRUTH.jsonl OUT_DIR [T]
#
# FPDB_BIN: the CLI (default $CARGO_TARGET_DIR/release/fpdb; a dev build is labelled as such in the
# output). FPDB_PY (default python/.venv/bin/python): fpdb[spark]. DT_PY (default
# data/venv-datatrove/bin/python, else FPDB_PY): a Python with `pip install datatrove "xxhash<4" orjson spacy tokenizers`
# (its own venv: datatrove's pins need not agree with python/.venv's). SKIP_DATATROVE=1: the single
# node and Spark only (datatrove's ~1.5 ms of CPU per document make it the longest step).
set -euo pipefail
corpus="$1"; truth="$2"; out="$3"; t="${4:-0.9}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${FPDB_PY:-$root/python/.venv/bin/python}"
fpdb="${FPDB_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/fpdb}"
dtpy="${DT_PY:-$root/data/venv-datatrove/bin/python}"
[ -x "$dtpy" ] || dtpy="$py"
[ -x "$fpdb" ] || { echo "no fpdb CLI at $fpdb (set FPDB_BIN)" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out/dt-in"
split -n l/2 -d --additional-suffix=.jsonl "$corpus" "$out/dt-in/part-"   # datatrove: a task per file
load() { python3 -c 'import json,sys; print(json.dumps({"label": "load", "at": sys.argv[1], "loadavg": open("/proc/loadavg").read().split()[:3]}))' "$1"; }
{
  python3 -c 'import json,sys,platform; print(json.dumps({"label": "setup", "corpus": sys.argv[1], "t": float(sys.argv[2]), "fpdb_bin": sys.argv[3], "cpu": [l.split(":",1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][0], "cores": __import__("os").cpu_count()}))' "$corpus" "$t" "$fpdb"
  load single-before
  bash "$here/cpu_of.sh" single sh -c "'$fpdb' init '$out/one.fpdb' --min-jaccard $t >/dev/null && \
    '$fpdb' ingest '$out/one.fpdb' '$corpus' --dedup off --no-progress >/dev/null 2>&1 && \
    { '$fpdb' --json pairs '$out/one.fpdb' -k 12 --min-jaccard $t >'$out/exact.jsonl' || [ \$? = 1 ]; }"
  load spark-before
  bash "$here/cpu_of.sh" spark sh -c 'log="$1"; shift; exec "$@" >"$log" 2>&1' _ "$out/spark.log" \
    "$py" -m fpdb.spark pairs "$corpus" --master 'local[2]' --out "$out/spark" --min-jaccard "$t" --groups --format jsonl --partitions 8
  load datatrove-before
  if [ -z "${SKIP_DATATROVE:-}" ] && "$dtpy" -c 'import datatrove' 2>/dev/null; then
    bash "$here/cpu_of.sh" datatrove sh -c 'log="$1"; shift; exec "$@" >"$log" 2>&1' _ "$out/datatrove.log" \
      "$dtpy" "$here/datatrove_minhash.py" "$out/dt-in" "$out/dt" --workers 2 --truth "$truth"
    grep '^{' "$out/datatrove.log" | tail -1
  fi
  load datatrove-after
  "$py" "$here/recall.py" --spark "$out/spark" --exact "$out/exact.jsonl" --truth "$truth"
} | tee "$out/results.jsonl"
# The Spark job's own summary (its documents, scheme, candidates, shuffle bytes, stage profile).
"$py" - "$out" <<'PY' | tee -a "$out/results.jsonl"
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
rows = {}
for line in (out / "results.jsonl").read_text().splitlines():
    d = json.loads(line)
    rows.setdefault(d.get("label") or (d["tool"] + "_result" if "tool" in d else "recall"), d)
s = json.loads((out / "spark" / "summary.json").read_text())
n = s["documents"]
cpu = {k: rows[k]["cpu_s"] for k in ("single", "spark", "datatrove") if k in rows}
res = {"label": "per_cpu_second", "documents": n, "spark_mode": s["mode"], "spark_candidate_comparisons": s["candidate_comparisons"],
       "spark_comparisons_per_doc": s["comparisons_per_doc"], "spark_pairs": s["pairs"], "spark_shuffle_bytes_per_doc": s.get("shuffle_bytes_per_doc"),
       "spark_task_seconds": s.get("task_seconds"), "spark_stages": s.get("stages")}
for k, c in cpu.items():
    res[f"{k}_docs_per_cpu_s"] = round(n / c, 1) if c else None
    res[f"{k}_cpu_ms_per_doc"] = round(1000 * c / n, 4)
if "single" in cpu and "spark" in cpu:
    res["spark_cpu_over_single"] = round(cpu["spark"] / cpu["single"], 2)
if "datatrove" in cpu and "spark" in cpu:
    res["spark_over_datatrove_docs_per_cpu_s"] = round(cpu["datatrove"] / cpu["spark"], 2)
print(json.dumps(res))
PY
