#!/usr/bin/env python3
"""Fault drill: a Ray shard SIGKILLed mid-ingest under 4 concurrent clients and restarted; every
acknowledged document is stored and linked, and the groups equal one node's.

    python scripts/scale/drill_ray.py CORPUS.jsonl WORK_DIR [--docs N] [--fpdb BIN] [--shards 4]
        [--clients 4] [--batch 16] [--kill-at 0.3] [--down-s 3] [--shard 1] [--after-commit] [--min-jaccard T]

1. The truth: `fpdb init` + `fpdb --json ingest --dedup link` of the first N documents of CORPUS on
   one node (the database defaults, k = 12 and t = 0.9, or --min-jaccard T, as each shard's); its pairs are the
   (key, duplicate key) pairs it reports, its groups their connected components.
2. A local Ray (4 CPUs, no dashboard), `fpdb.ray.Cluster.create(WORK_DIR/c, shards=4)`; 4 client
   threads each ingest every 4th document (`Cluster.ingest`, batches of --batch).
3. Once --kill-at of the documents are acknowledged, the shard's actor process (its PID asked of
   the actor itself) is sent SIGKILL from outside, whatever it is doing then (an insert, a query,
   a log append). With --after-commit instead, `Cluster.crash_after_commit`: the shard ends its
   process right after its next commit, before its links and to-do marks. The clients go on:
   writes owned by the dead shard are refused (`ShardDownError`, kept for a retry), the others are
   acknowledged `partial`. After --down-s seconds a fifth thread runs `Cluster.restart(shard)`
   while the clients are still ingesting.
4. When the clients are done, the refused writes are retried. Checks: every key stored
   (`Cluster.contains`), `links()` not partial and equal to the single node's pairs, `groups()` not
   partial and equal to its components. Prints one JSON object; exit status 0 when all hold.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall import components as roots  # noqa: E402  the scale scripts' one union-find


def components(pairs: set) -> set:
    """The groups (two or more members) that the pairs make."""
    comp: dict = {}
    for x, r in roots(list(pairs)).items():
        comp.setdefault(r, set()).add(x)
    return {frozenset(m) for m in comp.values() if len(m) > 1}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("work", type=Path)
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--fpdb", default=os.environ.get("FPDB_BIN", str(ROOT / "target" / "release" / "fpdb")))
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--kill-at", type=float, default=0.3, help="fraction of documents acknowledged before the kill")
    ap.add_argument("--down-s", type=float, default=3.0, help="seconds between the kill and the restart")
    ap.add_argument("--shard", type=int, default=1)
    ap.add_argument("--after-commit", action="store_true", help="crash_after_commit instead of an outside SIGKILL")
    ap.add_argument("--min-jaccard", type=float, help="t of the single node and of every shard (default: the database's, 0.9)")
    a = ap.parse_args()

    subprocess.run(["rm", "-rf", str(a.work)], check=True)
    a.work.mkdir(parents=True)
    docs: list[tuple[str, str]] = []
    src = a.work / "docs.jsonl"
    with open(a.corpus) as f, open(src, "w") as out:
        for line in f:
            d = json.loads(line)
            docs.append((d["key"], d["text"]))
            out.write(json.dumps({"key": d["key"], "text": d["text"]}) + "\n")
            if len(docs) == a.docs:
                break
    text_of = dict(docs)

    # 1. One node.
    db = a.work / "one.fpdb"
    opt = ["--min-jaccard", str(a.min_jaccard)] if a.min_jaccard is not None else []
    subprocess.run([a.fpdb, "init", str(db), *opt], check=True, stdout=subprocess.DEVNULL)
    p = subprocess.run([a.fpdb, "--json", "ingest", str(db), str(src), "--dedup", "link", "--no-progress"], capture_output=True, text=True, check=True)
    want = {tuple(sorted((r["key"], d["key"]))) for r in map(json.loads, filter(str.strip, p.stdout.splitlines())) if "duplicates" in r for d in r["duplicates"]}

    # 2. The cluster.
    import ray

    from fpdb.ray import Cluster, ShardDownError

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    t_ray = time.monotonic()
    ray.init(address="local", num_cpus=4, include_dashboard=False, namespace="fpdb", log_to_driver=False, _node_ip_address="127.0.0.2")
    c = Cluster.create(a.work / "c", shards=a.shards, **({"min_jaccard": a.min_jaccard} if a.min_jaccard is not None else {}))
    ray_start_s = round(time.monotonic() - t_ray, 2)

    lock = threading.Lock()
    acked: list[str] = []
    partial_acks: list[str] = []
    retry: list[tuple[str, str]] = []
    errors: list[str] = []
    killed: dict = {}
    restarted: dict = {}
    target = int(a.kill_at * len(docs))
    reached = threading.Event()

    def client(i: int) -> None:
        try:
            for r in c.ingest(docs[i :: a.clients], batch_size=a.batch):
                with lock:
                    if r.ok:
                        acked.append(r.key)
                        if r.partial:
                            partial_acks.append(r.key)
                    elif isinstance(r.error, ShardDownError):
                        retry.append((r.key, text_of[r.key]))
                    else:
                        errors.append(f"{r.key}: {type(r.error).__name__}: {r.error}")
                    if len(acked) >= target:
                        reached.set()
        except BaseException as e:  # noqa: BLE001 - reported
            errors.append(f"client {i}: {type(e).__name__}: {e}")
            reached.set()

    def killer() -> None:
        reached.wait()
        actor = c._actors[a.shard]
        pid = ray.get(actor.__ray_call__.remote(lambda self: os.getpid()), timeout=60)
        with lock:
            killed.update(acked_before=len(acked), refused_before=len(retry), pid=pid)
        if a.after_commit:
            c.crash_after_commit(a.shard)
            killed["how"] = "crash_after_commit (os._exit right after the shard's next commit)"
        else:
            os.kill(pid, signal.SIGKILL)
            killed["how"] = "SIGKILL of the shard actor's process from outside"
        t = time.monotonic()
        time.sleep(a.down_s)
        t1 = time.monotonic()
        c.restart(a.shard)
        with lock:
            restarted.update(after_s=round(t1 - t, 2), restart_s=round(time.monotonic() - t1, 2), acked_at_restart=len(acked), refused_at_restart=len(retry))

    t0 = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)] + [threading.Thread(target=killer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ingest_s = round(time.monotonic() - t0, 2)
    refused = len(retry)
    for r in c.ingest(retry, batch_size=a.batch):
        if r.ok and not r.partial:
            acked.append(r.key)
        else:
            errors.append(f"retry {r.key}: {r.error} partial={r.partial}")
    keys = [k for k, _ in docs]
    present = c.contains(keys)
    ln = c.links()
    g = c.groups()
    got_groups = {frozenset(x["members"]) for x in g["groups"]}
    res = {
        "corpus": str(a.corpus), "docs": len(docs), "min_jaccard": a.min_jaccard, "shards": a.shards, "clients": a.clients, "batch": a.batch,
        "ray_start_s": ray_start_s, "ingest_s": ingest_s, "killed_shard": a.shard, "killed": killed, "restarted": restarted,
        "acked_partial": len(partial_acks), "refused_then_retried": refused, "errors": errors[:5],
        "all_keys_acked": sorted(set(acked)) == sorted(keys), "all_stored": all(present.values()),
        "single_node_pairs": len(want), "cluster_pairs": len(ln["pairs"]), "links_partial": ln["partial"],
        "missed_pairs": len(want - ln["pairs"]), "extra_pairs": len(ln["pairs"] - want),
        "groups": len(got_groups), "single_node_groups": len(components(want)), "groups_equal": got_groups == components(want),
        "groups_partial": g["partial"], "loadavg": open("/proc/loadavg").read().split()[:3],
    }
    res["ok"] = bool(killed) and bool(restarted) and not errors and res["all_keys_acked"] and res["all_stored"] and not ln["partial"] \
        and ln["pairs"] == want and res["groups_equal"] and not g["partial"]
    c.close()
    ray.shutdown()
    print(json.dumps(res))
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
