#!/usr/bin/env bash
# The semantic channel under a document the model cannot embed, through `fpdb serve`: N documents
# (default 1,000) are PUT into a `--groups union` database, one of them holding the marker text of
# the failpoints build (`fpdb::semantic::FAILPOINT_EMBED`: the model fails on any batch holding
# it). Once the indexer has caught up it prints the channel's counters (/v1/stats), /healthz, and
# the duplicate check of every document (status, whether its own text hit came back), then
# `fpdb check`. Expected: N-1 vectors, 1 set aside, every check 200 with its text hit, health
# `degraded` naming the document, check clean.
#
#   scripts/semantic_faults.sh [N=1000]
#
# Needs a build with the failpoints compiled in (the dev build of scripts/test.sh:
# `cargo build --all-features --bin fpdb`; FPDB=... for another) and the model
# (scripts/fetch-model.sh). Loopback only. Numbers: docs/serve.md, "Health".
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-1000}"
FPDB="${FPDB:-${CARGO_TARGET_DIR:-target}/debug/fpdb}"
MODEL="$(bash scripts/fetch-model.sh | tail -1)"
MARK="fpdb-failpoint-embed"
BAD=$((N / 2))
WORK="$(mktemp -d)"
trap 'kill -9 "${SERVER:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
DB="$WORK/db"
"$FPDB" init "$DB" --semantic "$MODEL" --groups union --min-cosine 0.76 > /dev/null
"$FPDB" serve "$DB" --listen 127.0.0.1:0 > "$WORK/out" 2> "$WORK/err" &
SERVER=$!
for _ in $(seq 1 600); do grep -q "listening on" "$WORK/out" 2>/dev/null && break; sleep 0.1; done
ADDR="$(sed -n 's#^fpdb serve: listening on http://##p' "$WORK/out")"
[ -n "$ADDR" ] || { echo "server did not start"; cat "$WORK/err"; exit 1; }
# Document i: 40 words drawn (seeded by i) from a small vocabulary; the bad one carries the marker.
python3 - "$N" "$BAD" "$MARK" > "$WORK/docs.jsonl" <<'EOF'
import json, random, sys
n, bad, mark = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
words = ("paper method result data model network search index document duplicate web page text "
         "cluster graph study measure error sample query vector score table speed memory disk").split()
for i in range(n):
    r = random.Random(i)
    t = " ".join(r.choice(words) for _ in range(40))
    if i == bad:
        t += " " + mark
    print(json.dumps({"key": f"d{i}", "text": t}))
EOF
start=$(date +%s.%N)
curl -s -X POST "http://$ADDR/v1/documents" -H 'Content-Type: application/x-ndjson' --data-binary @"$WORK/docs.jsonl" > "$WORK/put.out"
echo "stored: $(grep -c '"stored":true' "$WORK/put.out") of $N (one bulk request)"
stats=""
for _ in $(seq 1 1200); do
  stats="$(curl -s "http://$ADDR/v1/stats")"
  echo "$stats" | grep -q '"semantic_pending":0,' && break
  sleep 0.5
done
echo "indexer caught up after $(python3 -c "import time; print(round(time.time() - $start, 1))") s"
echo "$stats" | python3 -c 'import json, sys; s = json.load(sys.stdin); print({k: s[k] for k in ("docs", "groups", "grouped_docs", "semantic_pending", "semantic_vectors", "semantic_set_aside", "semantic_indexer", "semantic_indexer_reason") if k in s})'
echo "healthz: $(curl -s -w ' (%{http_code})' "http://$ADDR/healthz")"
# every document's check, one batch request: its status and whether its own key is among the hits
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    print(json.dumps({"text": d["text"]}))
' "$WORK/docs.jsonl" > "$WORK/checks.jsonl"
curl -s -X POST "http://$ADDR/v1/duplicates:batch" -H 'Content-Type: application/x-ndjson' --data-binary @"$WORK/checks.jsonl" > "$WORK/checks.out"
python3 - "$WORK/checks.out" "$BAD" <<'EOF'
import json, sys
answered = own = errors = 0
bad_line = None
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("error"):
        errors += 1
        continue
    answered += 1
    keys = [h["key"] for h in o["hits"]]
    if f"d{o['line'] - 1}" in keys:
        own += 1
    if o["line"] - 1 == int(sys.argv[2]):
        bad_line = [(h["key"], h["channels"]) for h in o["hits"]][:3]
print(f"duplicate checks: {answered} answered, {errors} errors, {own} with their own text hit; the bad document's: {bad_line}")
EOF
kill -TERM "$SERVER"; wait "$SERVER" 2>/dev/null || true
"$FPDB" check "$DB" | tail -1
