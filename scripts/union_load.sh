#!/usr/bin/env bash
# PUT latency while the semantic indexer links a `--groups union` database, against the same load
# with the channel off: 16 closed-loop PUT clients (examples/load.rs `bench --op put`) on
#   UNION: `load prepare-union DB --docs N` (N documents, each with a stored 384-dim vector; the
#          indexer embeds every PUT document with a tiny 384-wide model and scans it against the N
#          stored vectors for its union links),
#   TEXT:  `load prepare DB --docs N` (the same documents, no semantic channel),
# alternated RUNS times, each run on a fresh copy of the prepared database. Prints one Markdown row
# per run: PUT count, p50 and p99 (ms), and for UNION the vectors the indexer wrote during the run.
#
#   cargo build --all-features --bin fpdb --example load
#   load prepare-union /tmp/lf/u200k --docs 200000; load prepare /tmp/lf/t200k --docs 200000
#   FPDB=target/debug/fpdb LOAD=target/debug/examples/load bash scripts/union_load.sh /tmp/lf/u200k /tmp/lf/t200k
set -euo pipefail
UNION=$1 TEXT=$2
FPDB=${FPDB:-target/debug/fpdb} LOAD=${LOAD:-target/debug/examples/load}
RUNS=${RUNS:-2} SECONDS_PER_RUN=${SECONDS_PER_RUN:-20} CLIENTS=${CLIENTS:-16}
DOCS=$("$FPDB" stats "$TEXT" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["docs"])')
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
stat_of() { curl -s "http://$1/v1/stats" | python3 -c "import json,sys; print(json.load(sys.stdin).get('$2', 0))"; }
run() { # NAME DB
  rm -rf "$work/db"; cp -a "$2" "$work/db"
  "$FPDB" serve "$work/db" --listen 127.0.0.1:0 > "$work/out" 2> "$work/err" &
  local pid=$! addr=""
  for _ in $(seq 600); do
    addr=$(sed -n 's|^fpdb serve: listening on http://||p' "$work/out"); [ -n "$addr" ] && break; sleep 0.1
  done
  [ -n "$addr" ] || { echo "fpdb serve did not start: $(cat "$work/err")" >&2; exit 1; }
  local before after load
  before=$(stat_of "$addr" semantic_vectors)
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  local row
  row=$("$LOAD" bench "$addr" --op put --clients "$CLIENTS" --seconds "$SECONDS_PER_RUN" --docs "$DOCS" | grep '^| PUT')
  after=$(stat_of "$addr" semantic_vectors)
  local pending; pending=$(stat_of "$addr" semantic_pending)
  kill -TERM "$pid"; wait "$pid" || true
  # | op | clients | requests | with hits | errors | seconds | req/s | p50 ms | p99 ms |
  echo "$row" | awk -F'|' -v n="$1" -v v="$((after - before))" -v p="$pending" -v l="$load" \
    '{printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", n, $4, $8, $9, $10, $6, v, p, l}'
}
echo "| channel | PUTs | req/s | p50 ms | p99 ms | errors | vectors written during the run | pending at the end | load average before |"
echo "|---|---|---|---|---|---|---|---|---|"
for _ in $(seq "$RUNS"); do
  run "off (text only)" "$TEXT"
  run "union, indexer linking" "$UNION"
done
