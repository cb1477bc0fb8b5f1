#!/usr/bin/env bash
# The review page tested in a real browser (scripts/review_browser.py): Debian's headless Chromium
# (`apt-get install chromium`, when missing) driven by Playwright for Python from a venv of its own
# (`pip install playwright`; its bundled driver only, never `playwright install`: the browser is
# Debian's). Builds the fpdb binary (cli/, with the HTTP service of serve/ and its review page,
# serve/src/review/) in the dev profile, reusing the target dir.
#
# Cost on a fresh Debian machine (2-core dev box): apt chromium ~1-2 min (~100 MB download),
# pip playwright ~15-30 s (~40 MB wheel), the test itself ~10 s. Warm: ~15 s.
# Usage: bash scripts/review-browser.sh [--shots DIR]   (docs/review/ holds the committed screenshots)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
if ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo -n"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi
venv="${FPDB_REVIEW_VENV:-$HOME/.cache/fpdb-review-venv}"
if ! "$venv/bin/python" -c "import playwright" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "playwright>=1.40,<2"
fi
cargo build -q --all-features --bin fpdb
"$venv/bin/python" scripts/review_browser.py --fpdb "$CARGO_TARGET_DIR/debug/fpdb" --chromium "$(command -v chromium)" "$@"
