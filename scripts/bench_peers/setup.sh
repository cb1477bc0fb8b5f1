#!/usr/bin/env bash
# Create the two benchmark venvs under data/ (git-ignored):
#   data/venv-peers   datasketch, simhash (1e0n), faiss-cpu, rensa, numpy, psutil
#   data/venv-pybind  simhash-pybind (seomoz; same import name `simhash`)
# Pinned versions: requirements-peers.txt / requirements-pybind.txt next to this file.
# If the pinned set fails, each package is tried alone; what still fails is written
# to <venv>/setup-failures.txt and the harness reports that peer "not available".
#   usage: scripts/bench_peers/setup.sh [--unpinned]   (run from anywhere)
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PY="${PYTHON:-python3}"
UNPINNED=0
[ "${1:-}" = "--unpinned" ] && UNPINNED=1

make_venv() {  # venv_dir requirements_file
  local venv="$ROOT/$1" req="$HERE/$2"
  echo "== $1 (from $2)"
  [ -x "$venv/bin/python" ] || "$PY" -m venv "$venv" || { echo "cannot create $venv"; return 1; }
  "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  rm -f "$venv/setup-failures.txt"
  local pkgs
  pkgs=$(grep -v '^\s*#' "$req" | sed '/^\s*$/d')
  [ $UNPINNED = 1 ] && pkgs=$(echo "$pkgs" | sed 's/==.*//')
  # shellcheck disable=SC2086
  if "$venv/bin/python" -m pip install -q $pkgs; then
    echo "   ok"
  else
    echo "   pinned set failed; trying one package at a time"
    for p in $pkgs; do
      if ! out=$("$venv/bin/python" -m pip install -q "$p" 2>&1); then
        echo "   FAILED: $p"
        echo "${p%%==*}: pip install $p failed: $(echo "$out" | grep -iE 'error' | tail -3 | tr '\n' ' ')" \
          >> "$venv/setup-failures.txt"
      fi
    done
  fi
  "$venv/bin/python" -m pip freeze | sed 's/^/   /'
}

make_venv data/venv-peers requirements-peers.txt
make_venv data/venv-pybind requirements-pybind.txt
for v in data/venv-peers data/venv-pybind; do
  [ -f "$ROOT/$v/setup-failures.txt" ] && { echo "== failures in $v:"; cat "$ROOT/$v/setup-failures.txt"; }
done
exit 0
