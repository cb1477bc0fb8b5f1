#!/usr/bin/env bash
# A standalone Spark cluster on loopback: one master and 2 workers (1 core each), from the pyspark
# that `pip install './python[spark]'` installed (Spark's own classes, Debian's Java 17).
#
#   bash scripts/spark-cluster.sh start [WORKERS]   prints the master URL (spark://127.0.0.1:7077)
#   bash scripts/spark-cluster.sh stop
#
# Env: FPDB_PY (python with pyspark; default python/.venv/bin/python, else python3),
# FPDB_SPARK_DIR (pid and log files; default /tmp/fpdb-spark-cluster), FPDB_SPARK_PORT (7077),
# FPDB_SPARK_WORKER_MEMORY (2g per worker). Everything binds to 127.0.0.1.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="${FPDB_PY:-$root/python/.venv/bin/python}"
[ -x "$py" ] || py=python3
dir="${FPDB_SPARK_DIR:-/tmp/fpdb-spark-cluster}"
port="${FPDB_SPARK_PORT:-7077}"
url="spark://127.0.0.1:$port"
export SPARK_LOCAL_IP=127.0.0.1 SPARK_MASTER_HOST=127.0.0.1
export SPARK_HOME="$("$py" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
export PYSPARK_PYTHON="$py"

daemon() { # name, then the spark-class arguments
  local name=$1
  shift
  nohup "$SPARK_HOME/bin/spark-class" "$@" >"$dir/$name.log" 2>&1 &
  echo $! >"$dir/$name.pid"
}

wait_log() { # file, pattern, seconds
  local i
  for ((i = 0; i < $3; i++)); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 1
  done
  echo "spark-cluster: '$2' did not appear in $1 within $3 s; see the log" >&2
  return 1
}

case "${1:-}" in
  start)
    workers="${2:-2}"
    mkdir -p "$dir"
    if [ -e "$dir/master.pid" ] && kill -0 "$(cat "$dir/master.pid")" 2>/dev/null; then
      echo "spark-cluster: already running ($dir/master.pid); run stop first" >&2
      exit 1
    fi
    daemon master org.apache.spark.deploy.master.Master --host 127.0.0.1 --port "$port" --webui-port 8080
    wait_log "$dir/master.log" "I have been elected leader" 120
    for ((w = 1; w <= workers; w++)); do
      daemon "worker$w" org.apache.spark.deploy.worker.Worker "$url" --host 127.0.0.1 --cores 1 \
        --memory "${FPDB_SPARK_WORKER_MEMORY:-2g}" --webui-port $((8080 + w)) --work-dir "$dir/work$w"
    done
    for ((w = 1; w <= workers; w++)); do
      wait_log "$dir/worker$w.log" "Successfully registered with master" 120
    done
    echo "$url"
    ;;
  stop)
    for f in "$dir"/worker*.pid "$dir"/master.pid; do
      [ -e "$f" ] || continue
      pid="$(cat "$f")"
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$f"
    done
    echo "spark-cluster: stopped"
    ;;
  *)
    echo "usage: $0 start [WORKERS] | stop" >&2
    exit 2
    ;;
esac
