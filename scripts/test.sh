#!/usr/bin/env bash
# The README's test command: installs what the build needs (scripts/deps.sh), then runs every test
# of the workspace's default members (the library, `.`; the `fpdb` command, cli/; the HTTP service,
# serve/) with every feature, the failpoints included. Extra arguments go to `cargo test` (e.g.
# `--test crash`, a root-package suite, or `--test cli`, the command's).
# Same target directory and profile (dev) as scripts/demo.sh, so the two share one RocksDB build.
# Crash-harness cycles: 30 by default, 150 with CI=true, FPDB_CRASH_CYCLES=N for a long soak.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/deps.sh
source scripts/deps.sh
fpdb_deps
# A test that cannot make its fault here (no root for a tmpfs, no model) records itself in
# FPDB_SKIP_LOG (tests/support/skip.rs): the count and the list end the output.
skips="$(mktemp)"
export FPDB_SKIP_LOG="$skips"
status=0
cargo test --all-features "$@" || status=$?
if [ -s "$skips" ]; then
  echo "== $(wc -l <"$skips") test(s) SKIPPED:"
  cat "$skips"
fi
rm -f "$skips"
exit "$status"
