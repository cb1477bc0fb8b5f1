#!/usr/bin/env bash
# A 2-node Ray cluster on loopback: a head node (127.0.0.2) and one worker node (127.0.0.3), each a
# `ray start --block` process of the ray that `pip install './python[ray]'` installed. (Ray replaces
# 127.0.0.1 by the machine's network address; the other loopback addresses it keeps.) The worker
# node offers the custom resource `fpdb_worker` (the head `fpdb_head`), so a test can place shards on it
# (`Cluster.create(..., placement=[...])`) and kill that node.
#
#   bash scripts/ray-cluster.sh start          prints the address (127.0.0.2:6390)
#   bash scripts/ray-cluster.sh kill-worker    SIGKILLs the worker node's raylet (a node crash)
#   bash scripts/ray-cluster.sh start-worker   starts the worker node again
#   bash scripts/ray-cluster.sh stop
#
# Env: FPDB_PY (default python/.venv/bin/python), FPDB_RAY_DIR (pid/log files, default
# /tmp/fpdb-ray-cluster), FPDB_RAY_PORT (6390), FPDB_RAY_CPUS (CPUs per node, 1).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="${FPDB_PY:-$root/python/.venv/bin/python}"
[ -x "$py" ] || py=python3
ray="$(dirname "$py")/ray"
[ -x "$ray" ] || ray=ray
dir="${FPDB_RAY_DIR:-/tmp/fpdb-ray-cluster}"
port="${FPDB_RAY_PORT:-6390}"
cpus="${FPDB_RAY_CPUS:-1}"
# Token authentication off for this loopback-only test cluster (`ray start` and `ray.init` default
# to different modes); a real cluster keeps Ray's token auth (docs/scale-out.md).
export RAY_AUTH_MODE="${RAY_AUTH_MODE:-disabled}"
head_ip=127.0.0.2
worker_ip=127.0.0.3
addr="$head_ip:$port"

node_up() { # ip, seconds: wait until the node is alive in the cluster
  local i
  for ((i = 0; i < $2; i++)); do
    if "$py" - "$addr" "$1" <<'PY' 2>/dev/null; then return 0; fi
import sys, ray
ray.init(address=sys.argv[1], log_to_driver=False)
alive = [n for n in ray.nodes() if n["Alive"] and n["NodeManagerAddress"] == sys.argv[2]]
sys.exit(0 if alive else 1)
PY
    sleep 2
  done
  echo "ray-cluster: node $1 did not join within $2 s; see $dir/*.log" >&2
  return 1
}

start_worker() {
  nohup "$ray" start --block --address="$addr" --node-ip-address="$worker_ip" --num-cpus="$cpus" \
    --resources='{"fpdb_worker": 1}' --disable-usage-stats >"$dir/worker.log" 2>&1 &
  echo $! >"$dir/worker.pid"
  node_up "$worker_ip" 60
}

stop_pidfile() {
  [ -e "$1" ] || return 0
  local pid
  pid="$(cat "$1")"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 45); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  rm -f "$1"
}

case "${1:-}" in
  start)
    mkdir -p "$dir"
    if [ -e "$dir/head.pid" ] && kill -0 "$(cat "$dir/head.pid")" 2>/dev/null; then
      echo "ray-cluster: already running ($dir/head.pid); run stop first" >&2
      exit 1
    fi
    nohup "$ray" start --head --block --node-ip-address="$head_ip" --port="$port" --num-cpus="$cpus" \
      --resources='{"fpdb_head": 1}' --include-dashboard=false --disable-usage-stats >"$dir/head.log" 2>&1 &
    echo $! >"$dir/head.pid"
    node_up "$head_ip" 60
    start_worker
    echo "$addr"
    ;;
  start-worker)
    start_worker
    ;;
  kill-worker)
    # The worker node's raylet (a child of its `ray start --block`): the node dies as in a crash.
    raylet="$(pgrep -P "$(cat "$dir/worker.pid")" -f raylet || true)"
    [ -n "$raylet" ] || { echo "ray-cluster: no raylet under $(cat "$dir/worker.pid")" >&2; exit 1; }
    kill -9 $raylet
    stop_pidfile "$dir/worker.pid"
    echo "ray-cluster: worker node killed"
    ;;
  stop)
    stop_pidfile "$dir/worker.pid"
    stop_pidfile "$dir/head.pid"
    echo "ray-cluster: stopped"
    ;;
  *)
    echo "usage: $0 start | start-worker | kill-worker | stop" >&2
    exit 2
    ;;
esac
