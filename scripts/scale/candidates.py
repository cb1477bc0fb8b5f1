#!/usr/bin/env python3
"""Comparisons per document and recall of fpdb.spark's MinHash candidate scheme, run locally.

    python scripts/scale/candidates.py CORPUS.jsonl --exact EXACT.jsonl [--truth PLANTED.jsonl]
        [--min-jaccard T] [--bands B --rows R] [--seed S]

The same engine calls the Spark job makes (`prepare_batch` with band keys, `jaccard_buffers`), in
one process with numpy instead of Spark's shuffle: documents in file order get ids 0, 1, ... (as
`fpdb ingest` numbers them); every band's key groups documents; each pair sharing a key in some
band is a candidate (`band_collisions` counts a pair once per band it shares, `candidate_comparisons`
once); each candidate is verified by exact Jaccard >= T. EXACT is `fpdb --json pairs DB -k K
--min-jaccard T` of the same corpus (the exact job's answer); recall is against it, and against the
planted pairs of scripts/corpora/make_scale.py's truth file. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from fpdb import _fpdb as native
from fpdb.spark import _buffers, minhash_params

BATCH = 10_000


def load(path: Path, bands: int, rows: int, seed: int):
    keys: list[str] = []
    fps, sets, bks = [], [], []
    buf_k: list[str] = []
    buf_t: list[str] = []

    def flush() -> None:
        st, fp, offs, data, bk = native.prepare_batch(_buffers(pa.array(buf_k)), _buffers(pa.array(buf_t)), None, bands, rows, seed)
        ok = np.frombuffer(st, np.uint8) == 0
        keys.extend(k for k, good in zip(buf_k, ok) if good)
        m = len(fp) // 8
        fps.append(np.frombuffer(fp, np.int64))
        sets.append(pa.Array.from_buffers(pa.binary(), m, [None, pa.py_buffer(offs), pa.py_buffer(data)]))
        bks.append(np.frombuffer(bk, np.int64).reshape(m, bands))
        buf_k.clear()
        buf_t.clear()

    with open(path) as f:
        for line in f:
            d = json.loads(line)
            buf_k.append(d["key"])
            buf_t.append(d["text"])
            if len(buf_k) == BATCH:
                flush()
    if buf_k:
        flush()
    return keys, np.concatenate(fps), pa.concat_arrays(sets), np.concatenate(bks)


def candidates(bk: np.ndarray) -> tuple[np.ndarray, int, int]:
    """Distinct candidate pairs (a * n + b, a < b), band collisions, largest bucket."""
    n, bands = bk.shape
    out = []
    collisions = 0
    largest = 1
    for b in range(bands):
        col = bk[:, b]
        order = np.argsort(col, kind="stable")
        s = col[order]
        starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
        sizes = np.diff(np.r_[starts, n])
        for st, m in zip(starts[sizes > 1], sizes[sizes > 1]):
            ids = np.sort(order[st : st + m])
            i, j = np.triu_indices(m, 1)
            out.append(ids[i] * n + ids[j])
            collisions += int(m) * (int(m) - 1) // 2
            largest = max(largest, int(m))
    pairs = np.unique(np.concatenate(out)) if out else np.zeros(0, np.int64)
    return pairs, collisions, largest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--exact", type=Path, required=True)
    ap.add_argument("--truth", type=Path)
    ap.add_argument("--min-jaccard", type=float, default=0.9)
    ap.add_argument("--bands", type=int)
    ap.add_argument("--rows", type=int)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    bands, rows = (a.bands, a.rows) if a.bands else minhash_params(a.min_jaccard)
    t0 = time.process_time()
    keys, fps, sets, bk = load(a.corpus, bands, rows, a.seed)
    t1 = time.process_time()
    n = len(keys)
    cand, collisions, largest = candidates(bk)
    t2 = time.process_time()
    ia, ib = cand // n, cand % n
    j = np.frombuffer(native.jaccard_buffers(len(cand), _buffers(sets.take(pa.array(ia))), _buffers(sets.take(pa.array(ib)))), np.float64)
    keep = j >= a.min_jaccard
    ham = np.bitwise_count((fps[ia[keep]] ^ fps[ib[keep]]).view(np.uint64))  # signed: bitwise_count counts |x|
    found = {(int(x), int(y)) for x, y in zip(ia[keep], ib[keep])}
    t3 = time.process_time()
    exact = [json.loads(x) for x in a.exact.read_text().splitlines() if x.strip()]
    exact_ids = {(p["a_id"], p["b_id"]) for p in exact}
    res = {
        "corpus": str(a.corpus),
        "documents": n,
        "min_jaccard": a.min_jaccard,
        "bands": bands,
        "rows": rows,
        "band_collisions": collisions,
        "candidate_comparisons": int(len(cand)),
        "comparisons_per_doc": round(len(cand) / n, 4),
        "largest_bucket": largest,
        "pairs": len(found),
        "exact_pairs": len(exact_ids),
        "recall_vs_exact": round(len(found & exact_ids) / len(exact_ids), 5) if exact_ids else None,
        "beyond_k": int((ham > 12).sum()),
        # Why a pair is a candidate: the corpus's own similar pairs (J near or above T) against
        # chance band collisions of dissimilar documents (J < 0.5), per document.
        "candidates_by_jaccard": {
            lab: int(((j >= lo) & (j < hi)).sum())
            for lab, lo, hi in ((f">={a.min_jaccard}", a.min_jaccard, 2.0), (f"0.5-{a.min_jaccard}", 0.5, a.min_jaccard), ("0.2-0.5", 0.2, 0.5), ("<0.2", -1.0, 0.2))
        },
        "cpu_s": {"prepare": round(t1 - t0, 2), "candidates": round(t2 - t1, 2), "verify": round(t3 - t2, 2)},
    }
    if a.truth:
        idx = {k: i for i, k in enumerate(keys)}
        planted = [json.loads(x) for x in a.truth.read_text().splitlines() if x.strip()]
        pl = {tuple(sorted((idx[p["a"]], idx[p["b"]]))) for p in planted if p["a"] in idx and p["b"] in idx}
        res["planted"] = len(pl)
        res["planted_found"] = len(pl & found)
        res["planted_found_exact"] = len(pl & exact_ids)
    res["per_doc_by_jaccard"] = {lab: round(c / n, 5) for lab, c in res["candidates_by_jaccard"].items()}
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
