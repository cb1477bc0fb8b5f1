#!/usr/bin/env bash
# Regenerates docs/quality.md, docs/quality/*.{md,json} and docs/img/*.svg: fetches the labelled
# corpora (ScanCode licences, LLVM docs across versions, Debian descriptions; into data/, never
# committed), builds fpdb, runs `fpdb eval` on each and assembles the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/corpora/fetch_all.sh
# FPDB_BIN: an fpdb binary to use instead of a fresh release build (the reports do not depend on
# the build, only their timing lines do).
if [ -z "${FPDB_BIN:-}" ]; then
  cargo build --release --quiet --bin fpdb
  target_dir="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
  FPDB_BIN="${target_dir:-target}/release/fpdb"
fi
fpdb="$FPDB_BIN"
mkdir -p docs/quality docs/img
# name, minimum words per document (DESIGN §4: licence texts of at least 50 words)
for spec in licenses:50 llvm:0 debian:10; do
  name=${spec%%:*}; min=${spec##*:}
  echo "== fpdb eval data/eval/$name.jsonl --min-words $min" >&2
  "$fpdb" eval "data/eval/$name.jsonl" --name "$name" --out-dir docs/quality --img-dir docs/img --min-words "$min" >/dev/null
  # the weighting comparison behind the default
  "$fpdb" eval "data/eval/$name.jsonl" --name "$name-count" --out-dir docs/quality --img-dir docs/img --min-words "$min" --weights count >/dev/null
done
python3 scripts/quality_summary.py > docs/quality.md
echo "wrote docs/quality.md" >&2
