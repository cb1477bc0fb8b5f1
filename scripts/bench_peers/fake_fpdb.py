#!/usr/bin/env python3
"""A stand-in for the `fpdb` CLI, ONLY to self-test the harness's fpdb path
while the real binary does not exist. Its numbers mean nothing (pure Python,
linear scans); its --version says so, and run_all.py prints that version in
the table.

  python3 scripts/bench_peers/run_all.py --corpus data/peers-sample.jsonl --limit 1000 \
      --fpdb scripts/bench_peers/fake_fpdb.py --out data/peers-selftest.md

Implements the subset of the CLI contract the harness uses:
  init DB --max-distance K [--tables M]
  ingest DB CORPUS.jsonl --dedup link --json   -> {"key","id","duplicates":[...],"group"} per doc
  bench-query DB --k K --queries FILE --json   -> {"queries","p50_us","p99_us","mean_us"}
  pairs DB --k K --json                        -> {"a","b","hamming","jaccard"} per pair
"""

import argparse
import hashlib
import json
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shingling  # noqa: E402


def fingerprint(text):
    sums = [0] * 64
    sh = shingling.shingles(text)
    for s in sh:
        h = int.from_bytes(hashlib.md5(s.encode()).digest()[-8:], "big")
        for b in range(64):
            sums[b] += 1 if (h >> b) & 1 else -1
    return sum(1 << b for b in range(64) if sums[b] > 0)


def load(db):
    path = os.path.join(db, "fps.jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(x) for x in f]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", action="store_true")
    sub = ap.add_subparsers(dest="cmd")
    p = sub.add_parser("init")
    p.add_argument("db")
    p.add_argument("--max-distance", type=int, default=8)
    p.add_argument("--tables", type=int, default=3)
    p = sub.add_parser("ingest")
    p.add_argument("db")
    p.add_argument("corpus")
    p.add_argument("--dedup", default="link")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("bench-query")
    p.add_argument("db")
    p.add_argument("--k", type=int, default=8)
    p.add_argument("--queries", required=True)
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("pairs")
    p.add_argument("db")
    p.add_argument("--k", type=int, default=8)
    p.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.version:
        print("fake-fpdb 0 (harness self-test stand-in, NOT fpdb)")
        return 0
    if a.cmd == "init":
        os.makedirs(a.db)
        with open(os.path.join(a.db, "meta.json"), "w") as f:
            json.dump({"max_distance": a.max_distance, "tables": a.tables}, f)
        return 0
    with open(os.path.join(a.db, "meta.json")) as f:
        meta = json.load(f)
    rows = load(a.db)
    if a.cmd == "ingest":
        with open(a.corpus) as f, open(os.path.join(a.db, "fps.jsonl"), "a") as out:
            for line in f:
                rec = json.loads(line)
                fp = fingerprint(rec["text"])
                dups = [r["key"] for r in rows if bin(r["fp"] ^ fp).count("1") <= meta["max_distance"]]
                row = {"key": rec["key"], "id": len(rows), "fp": fp}
                rows.append(row)
                out.write(json.dumps(row) + "\n")
                print(json.dumps({"key": rec["key"], "id": row["id"], "duplicates": dups, "group": row["id"]}))
        return 0
    if a.cmd == "bench-query":
        lat = []
        with open(a.queries) as f:
            for line in f:
                t = time.perf_counter()
                fp = fingerprint(json.loads(line)["text"])
                [r for r in rows if bin(r["fp"] ^ fp).count("1") <= a.k]
                lat.append(time.perf_counter() - t)
        lat.sort()
        print(json.dumps({"queries": len(lat), "p50_us": lat[len(lat) // 2] * 1e6,
                          "p99_us": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e6,
                          "mean_us": sum(lat) / len(lat) * 1e6}))
        return 0
    if a.cmd == "pairs":
        for i, x in enumerate(rows):
            for y in rows[i + 1:]:
                d = bin(x["fp"] ^ y["fp"]).count("1")
                if d <= a.k:
                    print(json.dumps({"a": x["key"], "b": y["key"], "hamming": d, "jaccard": None}))
        return 0
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
