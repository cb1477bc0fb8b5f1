#!/usr/bin/env bash
# Fingerprinting on full-length documents against `zstd -1` on the same text, one core, in one run
# (docs/performance.md, "Fingerprinting vs `zstd -1`"). Needs a release build of the perf
# example and the CLI in $CARGO_TARGET_DIR (default target/):
#   cargo build --release --all-features --example perf --bin fpdb
#   python3 scripts/corpora/make_long.py --python --out data/long/long.jsonl --truth data/long/long.truth.jsonl
#   scripts/bench_long.sh [data/long/long.jsonl]
# Prints: `zstd -1` compressing the corpus's texts (pinned to CPU 0), the
# perf example's fingerprinting rows pinned to CPU 0 (by stage, best of 5 rounds), and the CLI's
# batch lookup on an empty database (`fpdb query EMPTY --jsonl FILE`, JSON reading included)
# pinned to CPU 0 and unpinned: MB of text per wall-clock second and per CPU second (user + sys),
# best of 3 each; with ROUNDS=N, N rounds of `zstd -1` alternated with the CLI at every SIMD level
# (see the end).
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${1:-data/long/long.jsonl}
target=${FPDB_BUILD:-${CARGO_TARGET_DIR:-target}/release}  # FPDB_BUILD: another profile's folder
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The corpus 8 times over (texts for zstd, JSONL for the CLI): runs long enough for the CPU clock's
# 10 ms ticks.
reps=8
python3 - "$corpus" "$tmp/text" "$tmp/corpus.jsonl" $reps <<'EOF'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
with open(sys.argv[2], "w", encoding="utf-8") as text, open(sys.argv[3], "w", encoding="utf-8") as js:
    for r in range(int(sys.argv[4])):
        for line in lines:
            text.write(json.loads(line)["text"])
            text.write("\n")
            js.write(line + "\n")
EOF
text_bytes=$(python3 -c "import json,sys; print(int(sys.argv[2]) * sum(len(json.loads(l)['text'].encode()) for l in open(sys.argv[1])))" "$corpus" $reps)
echo "corpus $corpus, $reps times over: $text_bytes bytes of text"
# Best of 3 runs of a command: wall seconds, and user + sys CPU seconds (a box shared with other
# work lowers the wall-clock rate; the CPU rate much less).
best3() {
    local w="" c=""
    for _ in 1 2 3; do
        # Exit 1 of `fpdb query` means "no hit", which an empty database always gives.
        /usr/bin/time -o "$tmp/t" -f '%e %U %S' "$@" >/dev/null 2>&1 || true
        read -r e u s < <(tail -1 "$tmp/t")
        w="$w $e"
        c="$c $(python3 -c "print($u + $s)")"
    done
    python3 -c "import sys; w=min(map(float,sys.argv[1].split())); c=min(map(float,sys.argv[2].split())); b=$text_bytes; print(f'wall {w:.2f} s = {b/w/1e6:.1f} MB/s; CPU {c:.2f} s = {b/max(c,1e-9)/1e6:.1f} MB per CPU-second')" "$w" "$c"
}
echo "== zstd -1 -c TEXT, CPU 0: $(best3 taskset -c 0 zstd -1 -q -c "$tmp/text")"
echo "== examples/perf --fingerprint-only, CPU 0"
taskset -c 0 "$target/examples/perf" "$corpus" --fingerprint-only --rounds 5 ${PERF_ARGS:-} | grep -E 'normalize|fingerprint|SIMD'
"$target/fpdb" init "$tmp/empty" >/dev/null
echo "== fpdb query EMPTY --jsonl FILE, CPU 0: $(best3 taskset -c 0 "$target/fpdb" query "$tmp/empty" --jsonl "$tmp/corpus.jsonl")"
echo "== fpdb query EMPTY --jsonl FILE, unpinned: $(best3 "$target/fpdb" query "$tmp/empty" --jsonl "$tmp/corpus.jsonl")"
# ROUNDS=N: N rounds, each `zstd -1` then the CLI at each SIMD level (default, FPDB_SIMD=avx2,
# FPDB_SIMD=scalar), all pinned to CPU 0; MB of text per CPU-second and the ratio to the round's
# zstd. HASH=xxh3-64 (or word-mix) makes the empty database with that hash.
if [[ -n "${ROUNDS:-}" ]]; then
    rm -rf "$tmp/empty2"
    "$target/fpdb" init "$tmp/empty2" ${HASH:+--hash "$HASH"} >/dev/null
    cpu() {
        /usr/bin/time -o "$tmp/t" -f '%U %S' "$@" >/dev/null 2>&1 || true
        read -r u s < <(tail -1 "$tmp/t")
        python3 -c "print($u + $s)"
    }
    for r in $(seq "$ROUNDS"); do
        z=$(cpu taskset -c 0 zstd -1 -q -c "$tmp/text")
        line="round $r: zstd $(python3 -c "print(f'{$text_bytes/$z/1e6:.1f}')")"
        for simd in default avx2 scalar; do
            if [[ $simd == default ]]; then
                c=$(cpu taskset -c 0 "$target/fpdb" query "$tmp/empty2" --jsonl "$tmp/corpus.jsonl")
            else
                c=$(cpu env FPDB_SIMD="$simd" taskset -c 0 "$target/fpdb" query "$tmp/empty2" --jsonl "$tmp/corpus.jsonl")
            fi
            line="$line; $simd $(python3 -c "print(f'{$text_bytes/$c/1e6:.1f} ({$z/$c:.2f}x)')")"
        done
        echo "$line"
    done
fi
