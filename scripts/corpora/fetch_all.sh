#!/bin/sh
# Build the three labelled evaluation corpora into data/eval/ (git-ignored).
# Idempotent: an existing output is kept (delete it to rebuild). Downloads are cached
# under data/cache/. Needs root (apt-get update), network access to PyPI and Debian.
# Usage: scripts/corpora/fetch_all.sh            (from anywhere)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out="$root/data/eval"
mkdir -p "$out"

build() { # name script
    if [ -s "$out/$1.jsonl" ]; then
        echo "== $1: $out/$1.jsonl exists, skipping"
        return 0
    fi
    echo "== $1: building $out/$1.jsonl"
    start=$(date +%s)
    python3 "$here/$2" "$out/$1.jsonl"
    echo "== $1: done in $(( $(date +%s) - start ))s"
}

build licenses fetch_licenses.py
build llvm fetch_llvm_docs.py
build debian fetch_debian_descriptions.py

for c in licenses llvm debian; do
    python3 "$here/check_corpus.py" "$out/$c.jsonl" --sample 0
done
