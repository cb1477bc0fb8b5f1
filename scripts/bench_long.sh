#!/usr/bin/env bash
# Fingerprinting on full-length documents against `zstd -1` on the same text, one core, in one run
# (issue 36; docs/performance.md, "Full-length documents"). Needs a release build of the perf
# example and the CLI in $CARGO_TARGET_DIR (default target/):
#   cargo build --release --all-features --example perf --bin fpdb
#   python3 scripts/corpora/make_long.py --python --out data/long/long.jsonl --truth data/long/long.truth.jsonl
#   scripts/bench_long.sh [data/long/long.jsonl]
# Prints: zstd -1's compression speed on the corpus's texts (`zstd -b1`, pinned to CPU 0), the
# perf example's fingerprinting rows pinned to CPU 0 (by stage, best of 5 rounds), and the CLI's
# batch lookup on an empty database (`fpdb query EMPTY --jsonl FILE`, JSON reading included)
# pinned to CPU 0 and unpinned, as MB/s of text.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${1:-data/long/long.jsonl}
target=${CARGO_TARGET_DIR:-target}/release
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$corpus" "$tmp/text" <<'EOF'
import json, sys
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in open(sys.argv[1], encoding="utf-8"):
        out.write(json.loads(line)["text"])
        out.write("\n")
EOF
text_bytes=$(python3 -c "import json,sys; print(sum(len(json.loads(l)['text'].encode()) for l in open(sys.argv[1])))" "$corpus")
echo "corpus $corpus: $text_bytes bytes of text"
echo "== zstd -1, CPU 0 (compression speed of the concatenated texts)"
taskset -c 0 zstd -b1 -i3 "$tmp/text" 2>&1 | tr '\r' '\n' | tail -1
echo "== examples/perf --fingerprint-only, CPU 0"
taskset -c 0 "$target/examples/perf" "$corpus" --fingerprint-only --rounds 5 | grep -E 'normalize|fingerprint|SIMD'
"$target/fpdb" init "$tmp/empty" >/dev/null
for pin in "taskset -c 0" ""; do
    best=""
    for _ in 1 2 3; do
        # Exit 1 means "no hit", which an empty database always gives.
        /usr/bin/time -o "$tmp/t" -f '%e %U %S' $pin "$target/fpdb" query "$tmp/empty" --jsonl "$corpus" >/dev/null 2>&1 || true
        s=$(tail -1 "$tmp/t" | cut -d' ' -f1)
        best=$(python3 -c "import sys; a=[float(x) for x in sys.argv[1:] if x]; print(min(a))" $best $s)
    done
    echo "== fpdb query EMPTY --jsonl ${pin:+($pin)}${pin:-(unpinned)}: best of 3 ${best} s = $(python3 -c "print(f'{$text_bytes/$best/1e6:.1f}')") MB/s"
done
