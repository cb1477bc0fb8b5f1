#!/usr/bin/env python3
"""datatrove's MinHash deduplication (its four stages, LocalPipelineExecutor) over a JSONL corpus,
for the side-by-side of docs/scale-out.md; prints one JSON object with the planted pairs it puts
in one cluster.

    python scripts/scale/datatrove_minhash.py CORPUS_DIR WORK_DIR --workers 2 [--truth TRUTH.jsonl]

CORPUS_DIR holds the corpus as .jsonl files ({"key", "text"}; one reading task per file). Its
default MinhashConfig (5-word shingles, 14 buckets x 8 hashes). Not in CI: `pip install datatrove
"xxhash<4" orjson spacy tokenizers`
(scripts/scale/side_by_side.sh; xxhash 4 refuses the str shingles datatrove 0.10.1 hashes).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus_dir", type=Path)
    ap.add_argument("work", type=Path)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--truth", type=Path)
    a = ap.parse_args()

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import MinhashDedupBuckets, MinhashDedupCluster, MinhashDedupFilter, MinhashDedupSignature
    from datatrove.pipeline.dedup.minhash import MinhashConfig
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers.jsonl import JsonlWriter

    files = sorted(a.corpus_dir.glob("*.jsonl"))
    cfg = MinhashConfig()
    w = a.work
    reader = lambda: JsonlReader(str(a.corpus_dir), glob_pattern="*.jsonl", text_key="text", id_key="key")  # noqa: E731
    t0 = time.time()
    LocalPipelineExecutor(
        [reader(), MinhashDedupSignature(output_folder=str(w / "sigs"), config=cfg)], tasks=len(files), workers=a.workers, logging_dir=str(w / "log1")
    ).run()
    LocalPipelineExecutor(
        [MinhashDedupBuckets(input_folder=str(w / "sigs"), output_folder=str(w / "buckets"), config=cfg)],
        tasks=cfg.num_buckets, workers=a.workers, logging_dir=str(w / "log2"),
    ).run()
    LocalPipelineExecutor(
        [MinhashDedupCluster(input_folder=str(w / "buckets"), output_folder=str(w / "remove"), config=cfg, save_cluster_id=True)],
        tasks=1, workers=1, logging_dir=str(w / "log3"),
    ).run()
    LocalPipelineExecutor(
        [
            reader(),
            MinhashDedupFilter(input_folder=str(w / "remove"), exclusion_writer=JsonlWriter(str(w / "removed")), load_cluster_ids=True),
            JsonlWriter(str(w / "kept")),
        ],
        tasks=len(files), workers=a.workers, logging_dir=str(w / "log4"),
    ).run()
    secs = time.time() - t0
    cluster: dict[str, int] = {}
    docs = 0
    for sub in ("kept", "removed"):
        for f in sorted((w / sub).rglob("*.jsonl*")):
            import gzip

            opener = gzip.open if f.suffix == ".gz" else open
            with opener(f, "rt") as fh:
                for line in fh:
                    d = json.loads(line)
                    docs += 1
                    c = d.get("metadata", {}).get("minhash_cluster_id", -1)
                    if c != -1:
                        cluster[d["id"]] = c
    res: dict = {"tool": "datatrove", "documents": docs, "seconds": round(secs, 2), "clustered_docs": len(cluster),
                 "clusters": len(set(cluster.values())), "config": str(cfg)}
    if a.truth:
        planted = [json.loads(x) for x in a.truth.read_text().splitlines() if x.strip()]
        hit = sum(1 for p in planted if p["a"] in cluster and cluster.get(p["a"]) == cluster.get(p["b"]))
        res["planted"] = len(planted)
        res["planted_same_cluster"] = hit
        res["planted_recall"] = round(hit / len(planted), 4) if planted else None
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
