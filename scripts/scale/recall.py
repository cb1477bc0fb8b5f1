#!/usr/bin/env python3
"""Recall of a fpdb.spark run: against the exact job (`fpdb --json pairs` lines) and of the
planted pairs of scripts/corpora/make_scale.py (a planted pair counts when its two documents are
in one duplicate group, the measure datatrove_minhash.py uses). Prints one JSON object.

    python scripts/scale/recall.py --spark OUT_DIR --exact EXACT.jsonl [--truth TRUTH.jsonl]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def lines(p: Path) -> list[dict]:
    files = sorted(p.glob("part-*")) if p.is_dir() else [p]
    return [json.loads(x) for f in files for x in f.read_text().splitlines() if x.strip()]


def components(pairs: list[tuple[str, str]]) -> dict[str, str]:
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {x: find(x) for x in parent}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spark", type=Path, required=True)
    ap.add_argument("--exact", type=Path, required=True)
    ap.add_argument("--truth", type=Path)
    a = ap.parse_args()
    got = lines(a.spark / "pairs")
    exact = lines(a.exact)
    g = {(p["a_id"], p["b_id"]) for p in got}
    e = {(p["a_id"], p["b_id"]) for p in exact}
    res = {"spark_pairs": len(g), "exact_pairs": len(e), "recall_vs_exact": round(len(g & e) / len(e), 5) if e else None,
           "extra_vs_exact": len(g - e), "min_jaccard_of_pairs": min((p["jaccard"] for p in got), default=None)}
    if a.truth:
        planted = [json.loads(x) for x in a.truth.read_text().splitlines() if x.strip()]
        for name, ps in (("spark", got), ("exact", exact)):
            comp = components([(p["a"], p["b"]) for p in ps])
            hit = sum(1 for p in planted if p["a"] in comp and comp[p["a"]] == comp.get(p["b"]))
            res[f"planted_recall_{name}"] = round(hit / len(planted), 4) if planted else None
        res["planted"] = len(planted)
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
