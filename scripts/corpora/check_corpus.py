#!/usr/bin/env python3
"""Sanity-check a corpus JSONL (and optionally a make_scale.py truth file), streaming.

Checks: every line is a JSON object with str "key" and "text" (and str "label" if present),
keys are unique, texts are non-empty. With --truth: every pair's "a" and "b" exist, "a"
appears before "b" in the corpus, 0 < edit_rate <= 1. Prints counts, size stats and a
sample line.

Usage: check_corpus.py CORPUS.jsonl [--truth TRUTH.jsonl] [--sample N]
"""

from __future__ import annotations

import argparse
import json
import random
import sys


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--truth")
    ap.add_argument("--sample", type=int, default=1, help="lines to print (random, seed 0)")
    args = ap.parse_args()

    pos: dict[str, int] = {}
    labels: set[str] = set()
    sizes: list[int] = []
    errors = 0
    rng = random.Random(0)
    sample: list[str] = []
    with open(args.corpus, encoding="utf-8") as f:
        for i, line in enumerate(f):
            try:
                o = json.loads(line)
                k, t = o["key"], o["text"]
                assert isinstance(k, str) and isinstance(t, str) and t.strip(), "bad key/text"
                assert isinstance(o.get("label", ""), str), "bad label"
                assert k not in pos, f"duplicate key {k}"
            except Exception as e:  # noqa: BLE001
                errors += 1
                if errors <= 5:
                    print(f"line {i + 1}: {e}", file=sys.stderr)
                continue
            pos[k] = i
            if "label" in o:
                labels.add(o["label"])
            sizes.append(len(t.encode("utf-8")))
            if len(sample) < args.sample:
                sample.append(line)
            elif rng.random() < args.sample / (i + 1):
                sample[rng.randrange(args.sample)] = line
    sizes.sort()
    n = len(sizes)
    q = lambda p: sizes[min(n - 1, int(p * n))] if n else 0  # noqa: E731
    print(f"{args.corpus}: {n} docs, {len(labels)} distinct labels, {errors} bad lines")
    print(f"  text bytes: total {sum(sizes)}, min {q(0)}, median {q(0.5)}, p99 {q(0.99)}, "
          f"max {sizes[-1] if n else 0}")
    if args.truth:
        bad = pairs = 0
        with open(args.truth, encoding="utf-8") as f:
            for line in f:
                o = json.loads(line)
                pairs += 1
                ok = (o["a"] in pos and o["b"] in pos and pos[o["a"]] < pos[o["b"]]
                      and 0 < o["edit_rate"] <= 1)
                bad += not ok
        print(f"  truth: {pairs} pairs, {bad} invalid (missing key / b before a / bad rate)")
        errors += bad
    for s in sample:
        print("  sample:", s.rstrip("\n")[:400] + ("..." if len(s) > 400 else ""))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
