#!/usr/bin/env bash
# Runs a command in its own cpuacct cgroup and prints one JSON line: its CPU seconds (user +
# system, every process it started counted: a JVM, Python workers, daemons, until they exit) and
# its wall time.
#
#   bash scripts/scale/cpu_of.sh LABEL CMD [ARGS...]      (needs a writable cgroup v1 cpuacct)
set -euo pipefail
label="$1"
shift
cg="/sys/fs/cgroup/cpuacct/fpdb-cpu-$$-$RANDOM"
mkdir "$cg"
t0=$(date +%s.%N)
set +e
(echo "$BASHPID" >"$cg/cgroup.procs" && exec "$@")
rc=$?
set -e
# What the command left running (a JVM shutting down, a daemon) is counted until it exits.
for _ in $(seq 300); do
  [ -z "$(cat "$cg/cgroup.procs")" ] && break
  sleep 0.1
done
t1=$(date +%s.%N)
ns=$(cat "$cg/cpuacct.usage")
left=$(wc -l <"$cg/cgroup.procs")
rmdir "$cg" 2>/dev/null || true
python3 -c 'import json,sys; print(json.dumps({"label": sys.argv[1], "cpu_s": round(int(sys.argv[2]) / 1e9, 2), "wall_s": round(float(sys.argv[4]) - float(sys.argv[3]), 2), "rc": int(sys.argv[5]), "left_running": int(sys.argv[6])}))' \
  "$label" "$ns" "$t0" "$t1" "$rc" "$left"
