"""Throughput of `db.ingest` from Python vs `fpdb ingest` (the CLI) on the same corpus.

    python python/bench_ingest.py [--docs N] [--batch-size B] [--fpdb PATH] [--corpus FILE.jsonl]

Without --corpus, N synthetic passages (30-160 words; every 4th a light edit of a recent one) are
written to a JSONL file first. Each run ingests into a fresh database with the defaults (durable:
one fsync per batch) and prints docs/s and the CPU seconds it took (all threads; for the CLI its
process), which depend less on what else the machine runs:

  cli          fpdb ingest DB corpus.jsonl            (Rust reads and parses the JSONL)
  py-jsonl     db.ingest(json.loads(l) for l in f)    (Python reads and parses it: the usual way)
  py-tuples    db.ingest(list_of_tuples)              (input already in memory: the binding's own cost)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import fpdb

WORDS = [f"w{i:04d}" for i in range(5000)]


def write_corpus(path: Path, n: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    recent: list[list[str]] = []
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            if recent and i % 4 == 3:
                words = list(rng.choice(recent))
                words[rng.randrange(len(words))] = rng.choice(WORDS)
            else:
                words = [rng.choice(WORDS) for _ in range(rng.randint(30, 160))]
                recent.append(words)
                if len(recent) > 64:
                    recent.pop(0)
            f.write(json.dumps({"key": f"d{i:07d}", "text": " ".join(words)}) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--batch-size", type=int, default=4096)
    ap.add_argument("--fpdb", default=os.environ.get("FPDB_BIN"))
    ap.add_argument("--corpus")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="fpdb-bench-"))
    try:
        corpus = Path(a.corpus) if a.corpus else tmp / "corpus.jsonl"
        if not a.corpus:
            write_corpus(corpus, a.docs)
        n = sum(1 for _ in corpus.open())
        mb = corpus.stat().st_size / 1e6
        print(f"corpus {corpus.name}: {n} docs, {mb:.1f} MB; batch size {a.batch_size}; {os.cpu_count()} cores")
        rows = []

        def report(name, secs, stored, cpu):
            rows.append((name, secs, cpu))
            print(f"{name:<10} {secs:7.2f} s  {n / secs:9.0f} docs/s  {mb / secs:6.2f} MB/s  CPU {cpu:6.2f} s "
                  f"({cpu / n * 1e6:5.0f} us/doc)  ({stored} stored)", flush=True)

        def children_cpu():
            r = resource.getrusage(resource.RUSAGE_CHILDREN)
            return r.ru_utime + r.ru_stime

        for rep in range(a.repeat):
            if a.fpdb:
                db = tmp / f"cli{rep}"
                subprocess.run([a.fpdb, "init", str(db)], check=True, capture_output=True)
                t, c = time.perf_counter(), children_cpu()
                p = subprocess.run([a.fpdb, "ingest", str(db), str(corpus), "--no-progress", "--batch-size", str(a.batch_size)],
                                   check=True, capture_output=True, text=True)
                report("cli", time.perf_counter() - t, p.stderr.split(" stored")[0].rsplit(" ", 1)[-1], children_cpu() - c)
                shutil.rmtree(db)

            with fpdb.Db.create(tmp / f"py{rep}") as db:
                t, c = time.perf_counter(), time.process_time()
                with corpus.open(encoding="utf-8") as f:
                    stats = db.ingest((json.loads(line) for line in f), batch_size=a.batch_size).run()
                report("py-jsonl", time.perf_counter() - t, stats.stored, time.process_time() - c)
            shutil.rmtree(tmp / f"py{rep}")

            with corpus.open(encoding="utf-8") as f:
                docs = [(d["key"], d["text"]) for d in map(json.loads, f)]
            with fpdb.Db.create(tmp / f"pt{rep}") as db:
                t, c = time.perf_counter(), time.process_time()
                stored = sum(1 for r in db.ingest(docs, batch_size=a.batch_size) if r.stored)
                report("py-tuples", time.perf_counter() - t, stored, time.process_time() - c)
            shutil.rmtree(tmp / f"pt{rep}")
            del docs
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
