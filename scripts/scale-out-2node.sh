#!/usr/bin/env bash
# The 2-node checks of docs/scale-out.md, on loopback, in one run:
#
#  1. Spark: a standalone master with 1 worker, then with 2 workers (scripts/spark-cluster.sh), runs
#     `python -m fpdb.spark pairs` over the 204K-document corpus; pairs and groups must EQUAL
#     `fpdb pairs --groups` on a database of the same corpus (0 missed, 0 extra). Prints wall time,
#     documents/s and shuffle bytes per document of each run.
#  2. Ray: a head node and a worker node (scripts/ray-cluster.sh), 4 shards (2 per node), 4 client
#     threads ingest the first RAY_DOCS documents at once; the duplicate pairs must equal
#     `fpdb ingest --dedup link` on one node. The worker node is killed while a client queries:
#     answers are `partial: true` naming its shards; the node and its shards restart: full answers,
#     every acknowledged document present.
#
#   bash scripts/scale-out-2node.sh            (exit 0 = every check held; figures in OUT/report.json)
#
# Env: OUT (data/scale-out), CORPUS (data/scale/scale200k.jsonl; built by
# scripts/corpora/make_scale.py --docs 200000 when missing), K (12), T (0.5: Jaccard floor of the
# pairs), RAY_DOCS (20000), RAY_NODES (2; 1 = all 4 shards on the head node, no node kill: the
# 1-node throughput figure), SKIP_SPARK / SKIP_RAY (1 to skip a part), FPDB_BIN (the CLI; default
# $CARGO_TARGET_DIR/debug/fpdb), FPDB_PY (python with fpdb[spark,ray]; default python/.venv/bin/python,
# as python/ci.sh builds it). Takes ~15-25 min on the 2-core dev box.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
py="${FPDB_PY:-$root/python/.venv/bin/python}"
fpdb="${FPDB_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/fpdb}"
out="${OUT:-data/scale-out}"
corpus="${CORPUS:-data/scale/scale200k.jsonl}"
k="${K:-12}"
t="${T:-0.5}"
ray_docs="${RAY_DOCS:-20000}"
export RAY_AUTH_MODE="${RAY_AUTH_MODE:-disabled}"  # as scripts/ray-cluster.sh: loopback only
start=$(date +%s)
step() { echo "== scale-out: $* ($(($(date +%s) - start)) s)"; }
cleanup() {
  bash scripts/spark-cluster.sh stop >/dev/null 2>&1 || true
  bash scripts/ray-cluster.sh stop >/dev/null 2>&1 || true
}
trap cleanup EXIT

[ -x "$fpdb" ] || { echo "scale-out: no fpdb CLI at $fpdb (cargo build --bin fpdb, or set FPDB_BIN)" >&2; exit 2; }
"$py" -c "import fpdb.spark, fpdb.ray, pyspark, ray" || { echo "scale-out: $py lacks fpdb[spark,ray] (run python/ci.sh)" >&2; exit 2; }
if [ ! -s "$corpus" ]; then
  step "building the corpus $corpus"
  python3 scripts/corpora/make_scale.py --out "$corpus" --truth "${corpus%.jsonl}.truth.jsonl" --docs 200000
fi
rm -rf "$out"
mkdir -p "$out"
docs=$(wc -l <"$corpus")

# Compares fpdb.spark's JSONL output folders with `fpdb pairs` lines; prints a JSON verdict.
compare() { # spark_pairs_dir truth_pairs spark_groups_dir truth_groups
  "$py" - "$@" <<'PY'
import json, sys
from pathlib import Path
def rows(p):
    p = Path(p)
    files = sorted(p.glob("part-*")) if p.is_dir() else [p]
    return [json.loads(l) for f in files for l in f.read_text().splitlines() if l.strip()]
sp, tp, sg, tg = (rows(x) for x in sys.argv[1:5])
key = lambda r: (r["a_id"], r["b_id"])
s, t = {key(r): r for r in sp}, {key(r): r for r in tp}
missed, extra = len(t.keys() - s.keys()), len(s.keys() - t.keys())
differ = sum(1 for x in s.keys() & t.keys() if s[x] != t[x])
gs = {json.dumps(g, sort_keys=True) for g in sg}
gt = {json.dumps(g, sort_keys=True) for g in tg}
v = {"pairs": len(tp), "missed": missed, "extra": extra, "differing": differ, "groups": len(tg),
     "groups_missed": len(gt - gs), "groups_extra": len(gs - gt), "equal": sp == tp and sg == tg}
print(json.dumps(v))
sys.exit(0 if v["equal"] else 1)
PY
}

if [ "${SKIP_SPARK:-0}" != 1 ]; then
  step "single node: fpdb ingest + pairs (k=$k, t=$t) over $docs documents"
  "$fpdb" init "$out/one.fpdb" >/dev/null
  "$fpdb" ingest "$out/one.fpdb" "$corpus" --dedup off --no-progress >/dev/null
  t0=$(date +%s.%N)
  "$fpdb" --json pairs "$out/one.fpdb" -k "$k" --min-jaccard "$t" >"$out/truth_pairs.jsonl"
  t1=$(date +%s.%N)
  "$fpdb" --json pairs "$out/one.fpdb" -k "$k" --min-jaccard "$t" --groups >"$out/truth_groups.jsonl"
  echo "{\"fpdb_pairs_seconds\": $(echo "$t1 - $t0" | bc)}" >"$out/single.json"
  for w in 1 2; do
    step "spark: standalone master + $w worker(s)"
    url=$(bash scripts/spark-cluster.sh start "$w" | tail -1)
    "$py" -m fpdb.spark pairs "$corpus" --master "$url" --out "$out/spark-w$w" --k "$k" --min-jaccard "$t" --exact \
      --groups --format jsonl --partitions 16 >"$out/spark-w$w.summary.json" 2>"$out/spark-w$w.log"
    bash scripts/spark-cluster.sh stop >/dev/null
    compare "$out/spark-w$w/pairs" "$out/truth_pairs.jsonl" "$out/spark-w$w/groups" "$out/truth_groups.jsonl" | tee "$out/spark-w$w.verdict.json"
  done
fi

if [ "${SKIP_RAY:-0}" != 1 ]; then
  step "ray: single-node truth (fpdb ingest --dedup link) over the first $ray_docs documents"
  head -n "$ray_docs" "$corpus" >"$out/ray-docs.jsonl"
  "$fpdb" init "$out/ray-one.fpdb" --min-jaccard "$t" >/dev/null
  "$fpdb" --json ingest "$out/ray-one.fpdb" "$out/ray-docs.jsonl" --dedup link --no-progress >"$out/ray-truth.jsonl"
  step "ray: head + worker node, 4 shards, 4 clients"
  addr=$(bash scripts/ray-cluster.sh start | tail -1)
  "$py" - "$addr" "$out" "$t" "${RAY_NODES:-2}" <<'PY' | tee "$out/ray.json"
import json, subprocess, sys, threading, time
from pathlib import Path
from fpdb.ray import Cluster, shard_of
addr, out, t, nodes = sys.argv[1], Path(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
docs = [json.loads(l) for l in (out / "ray-docs.jsonl").read_text().splitlines()]
docs = [(d["key"], d["text"]) for d in docs]
want = {tuple(sorted((r["key"], d["key"]))) for l in (out / "ray-truth.jsonl").read_text().splitlines()
        for r in [json.loads(l)] for d in r["duplicates"]}
head, worker = {"fpdb_head": 0.01}, {"fpdb_worker": 0.01}
place = [head, head, worker, worker] if nodes == 2 else [head] * 4
c = Cluster.create(out / "ray-cluster", shards=4, address=addr, placement=place, min_jaccard=t)
acked, found, errs = [[] for _ in range(4)], [set() for _ in range(4)], []
def client(i):
    try:
        for r in c.ingest(docs[i::4], batch_size=64):
            if not (r.ok and r.stored and not r.partial):
                errs.append(repr(r)); continue
            acked[i].append(r.key)
            found[i] |= {tuple(sorted((r.key, d.key))) for d in r.outcome.duplicates}
    except BaseException as e:
        errs.append(repr(e))
t0 = time.time()
ths = [threading.Thread(target=client, args=(i,)) for i in range(4)]
[t.start() for t in ths]; [t.join() for t in ths]
secs = time.time() - t0
got = set().union(*found)
res = {"nodes": nodes, "docs": len(docs), "ingest_seconds": round(secs, 2), "docs_per_second": round(len(docs) / secs, 1),
       "pairs": len(want), "missed": len(want - got), "extra": len(got - want), "errors": errs[:3]}
if nodes == 1:
    res["ok"] = not res["missed"] and not res["extra"] and not errs
    c.close()
    print(json.dumps(res))
    sys.exit(0 if res["ok"] else 1)
# Kill the worker node while a client queries: answers turn partial, naming shards 2 and 3.
probe = docs[1][1]
answers, stop = [], threading.Event()
def querier():
    while not stop.is_set():
        try:
            q = c.query(probe)
            answers.append((q["partial"], tuple(q["down"])))
        except BaseException as e:
            answers.append(("error", repr(e)))
        time.sleep(0.2)
qt = threading.Thread(target=querier); qt.start()
time.sleep(1)
subprocess.run(["bash", "scripts/ray-cluster.sh", "kill-worker"], check=True, capture_output=True)
deadline = time.time() + 120
while time.time() < deadline and not any(a[0] is True for a in answers):
    time.sleep(1)
stop.set(); qt.join()
res["answers_before_kill_full"] = sum(1 for a in answers if a == (False, ()))
res["partial_answers"] = sorted({a for a in answers if a[0] is True})
res["query_errors"] = [a for a in answers if a[0] == "error"][:3]
subprocess.run(["bash", "scripts/ray-cluster.sh", "start-worker"], check=True, capture_output=True)
t1 = time.time()
c.restart(2); c.restart(3)
res["restart_seconds"] = round(time.time() - t1, 2)
q = c.query(probe)
keys = [k for a in acked for k in a]
present = c.contains(keys)
res["after_restart"] = {"partial": q["partial"], "down": q["down"], "acknowledged": len(keys),
                        "present": sum(1 for v in present.values() if v), "docs": c.stats()["docs"]}
res["ok"] = (not res["missed"] and not res["extra"] and not errs and not res["query_errors"]
             and res["partial_answers"] and all(set(a[1]) <= {"shard-2", "shard-3"} for a in res["partial_answers"])
             and not q["partial"] and res["after_restart"]["present"] == len(keys) == len(docs))
c.close()
print(json.dumps(res))
sys.exit(0 if res["ok"] else 1)
PY
  bash scripts/ray-cluster.sh stop >/dev/null
fi
step "done: every check held"
