#!/usr/bin/env bash
# Two builds of the `fpdb` CLI side by side, alternated round by round on the same box: the
# crawler loop (`fpdb ingest` into a fresh database, `--dedup link`, durable), the query p50
# (`fpdb bench-query` on that database) and the CLI's fingerprinting (`fpdb query EMPTY --jsonl`
# on full-length documents, pinned to CPU 0, MB of text per CPU-second).
#
#   ROUNDS=3 scripts/compare_builds.sh BEFORE/fpdb AFTER/fpdb [PASSAGES.jsonl] [LONG.jsonl]
#
# Defaults: data/scale/scale-200k.jsonl (scripts/corpora/make_scale.py) and data/long/long.jsonl
# (scripts/corpora/make_long.py). Build each side the same way (e.g. O3, docs/performance.md) and
# copy its binary aside; the box should be quiet (the load average is printed with each round).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { echo "usage: ROUNDS=N $0 BEFORE_FPDB AFTER_FPDB [PASSAGES.jsonl] [LONG.jsonl]" >&2; exit 2; }
a=$1 b=$2
passages=${3:-data/scale/scale-200k.jsonl}
long=${4:-data/long/long.jsonl}
rounds=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$a" "$b" "$passages" "$long"; do [[ -e $f ]] || { echo "missing: $f" >&2; exit 2; }; done
docs=$(wc -l <"$passages")
shuf -n 2000 --random-source=<(yes) "$passages" >"$tmp/q2k.jsonl"
for _ in 1 2 3 4 5 6 7 8; do cat "$long"; done >"$tmp/long8.jsonl"
text_bytes=$(python3 -c "import json,sys; print(sum(len(json.loads(l)['text'].encode()) for l in open(sys.argv[1])))" "$tmp/long8.jsonl")
echo "passages $passages ($docs documents); long $long x8 ($text_bytes bytes of text); $rounds rounds"
# /usr/bin/time's last line (a failing command adds a line before it).
cpu_of() { read -r e u s < <(tail -1 "$1"); python3 -c "print(f'{$u + $s:.2f}')"; }
wall_of() { read -r e u s < <(tail -1 "$1"); echo "$e"; }
for r in $(seq "$rounds"); do
    for side in before after; do
        bin=$a; [[ $side == after ]] && bin=$b
        db="$tmp/db-$side"
        rm -rf "$db"
        "$bin" init "$db" >/dev/null
        # Exit 6: some lines were rejected (reported per line); the rest is stored.
        /usr/bin/time -o "$tmp/t" -f '%e %U %S' "$bin" ingest "$db" "$passages" --no-progress >/dev/null 2>&1 || true
        ingest="$(wall_of "$tmp/t") s wall, $(cpu_of "$tmp/t") CPU-s, $(python3 -c "print(int($docs / $(wall_of "$tmp/t")))") docs/s"
        p50=$("$bin" --json bench-query "$db" --queries "$tmp/q2k.jsonl" 2>/dev/null | python3 -c "import json,sys; d=json.loads(sys.stdin.read().splitlines()[-1]); p=d.get('p50_us'); print(f'{p:.1f}' if isinstance(p, (int, float)) else d)")
        rm -rf "$tmp/empty"
        "$bin" init "$tmp/empty" >/dev/null
        /usr/bin/time -o "$tmp/t" -f '%e %U %S' taskset -c 0 "$bin" query "$tmp/empty" --jsonl "$tmp/long8.jsonl" >/dev/null 2>&1 || true
        fp=$(python3 -c "print(f'{$text_bytes / max($(cpu_of "$tmp/t"), 1e-9) / 1e6:.1f}')")
        echo "round $r $side: ingest $ingest; query p50 $p50 us; fingerprinting $fp MB per CPU-second (load $(cut -d' ' -f1 /proc/loadavg))"
    done
done
