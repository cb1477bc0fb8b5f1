#!/usr/bin/env bash
# kill -9 of `fpdb serve` during PUT load, CYCLES times on one database: after each kill the server is
# restarted on the same database; every document that got a 200 must be there and `fpdb check` must
# be clean. Loopback only; each cycle is bounded (load at most MAX_S seconds, kill after KILL_AFTER).
#
#   scripts/serve_crash.sh [CYCLES=5] [CLIENTS=16] [KILL_AFTER=3]
#
# INIT="--semantic MODEL_DIR [--groups union --min-cosine B]" creates the database with the semantic channel first
# (its background indexer then runs under the load and is killed with the server); at the end the
# server runs once more until the indexer has caught up, and every live document must have its
# vector or be set aside (`fpdb check` reports a lost vector as a fault). That wait is bounded by
# WAIT_S seconds (default 600): the indexer embeds ~20 documents/s in a dev build on 2 cores.
#
# Needs the release binaries: cargo build --release --bin fpdb --example load
# (or set FPDB=... LOAD=... to other builds). Numbers: docs/durability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
CYCLES="${1:-5}"
CLIENTS="${2:-16}"
KILL_AFTER="${3:-3}"
TARGET="${CARGO_TARGET_DIR:-target}"
FPDB="${FPDB:-$TARGET/release/fpdb}"
LOAD="${LOAD:-$TARGET/release/examples/load}"
WORK="$(mktemp -d)"
trap 'kill -9 "${SERVER:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
DB="$WORK/db"
ACKED="$WORK/acked.txt"
: > "$ACKED"
total_acked=0
if [ -n "${INIT:-}" ]; then
  # shellcheck disable=SC2086
  "$FPDB" init "$DB" $INIT > /dev/null
fi
for cycle in $(seq 1 "$CYCLES"); do
  "$FPDB" serve "$DB" --listen 127.0.0.1:0 > "$WORK/out" 2> "$WORK/err" &
  SERVER=$!
  for _ in $(seq 1 1200); do grep -q "listening on" "$WORK/out" 2>/dev/null && break; sleep 0.05; done
  ADDR="$(sed -n 's#^fpdb serve: listening on http://##p' "$WORK/out")"
  [ -n "$ADDR" ] || { echo "server did not start"; cat "$WORK/err"; exit 1; }
  before=$(wc -l < "$ACKED")
  "$LOAD" put-until-error "$ADDR" --clients "$CLIENTS" --acked "$ACKED" --prefix "c$cycle" --max-seconds 60 2> "$WORK/load.err" &
  LOADER=$!
  sleep "$KILL_AFTER"
  kill -9 "$SERVER"
  wait "$SERVER" 2>/dev/null || true
  wait "$LOADER" || true
  after=$(wc -l < "$ACKED")
  acked=$((after - before))
  total_acked=$after
  # The restart: open for writing (recovery), every acked key present, Db::check clean; then the CLI check.
  verify="$("$LOAD" verify "$DB" --acked "$ACKED")"
  if ! "$FPDB" check "$DB" > "$WORK/check" 2>&1; then echo "cycle $cycle: check FAILED"; cat "$WORK/check"; exit 1; fi
  echo "cycle $cycle: killed after ${KILL_AFTER}s; acked this cycle $acked; $verify; $(tail -1 "$WORK/check")"
done
echo "total: $CYCLES kill -9 cycles, $total_acked documents acknowledged with 200, 0 missing, check clean every time"
if [ -n "${INIT:-}" ]; then
  "$FPDB" serve "$DB" --listen 127.0.0.1:0 > "$WORK/out" 2> "$WORK/err" &
  SERVER=$!
  for _ in $(seq 1 1200); do grep -q "listening on" "$WORK/out" 2>/dev/null && break; sleep 0.05; done
  ADDR="$(sed -n 's#^fpdb serve: listening on http://##p' "$WORK/out")"
  stats=""
  for _ in $(seq 1 "${WAIT_S:-600}"); do
    stats="$(curl -s "http://$ADDR/v1/stats")"
    echo "$stats" | grep -q '"semantic_pending":0,' && break
    sleep 1
  done
  kill -TERM "$SERVER"; wait "$SERVER" 2>/dev/null || true
  if ! "$FPDB" check "$DB" > "$WORK/check" 2>&1; then echo "after the indexer caught up: check FAILED"; cat "$WORK/check"; exit 1; fi
  echo "after the indexer caught up: $(echo "$stats" | grep -o '"docs":[0-9]*'), $(echo "$stats" | grep -o '"semantic_[a-z_]*":[^,}]*' | tr '\n' ' '); $(tail -1 "$WORK/check")"
fi
