#!/usr/bin/env python3
"""Run ONE peer (one tool/configuration) on a JSONL corpus and emit JSON results.

Two roles in one file:

* parent: ``run_peer(spec, ...)`` (or ``peers.py run --spec JSON ...``) starts the
  worker below in a child process with the right venv's interpreter, waits for
  it with ``os.wait4`` (the rusage of *that* child only: ``ru_maxrss`` = the
  peer's peak RSS; RUSAGE_CHILDREN would be the max over every child so far),
  and returns the worker's JSON plus ``peak_rss_mb``.
* worker: ``peers.py worker --spec JSON --corpus F --out RESULT.json`` imports
  the peer's library (import failure -> status "not available" with the
  reason), then runs the workloads:

  1. query-then-insert (qti): for each doc in order: shingle -> sketch
     (fingerprint / MinHash) -> query the index -> insert. Per-phase times are
     summed; docs/s = docs / (shingle + sketch + query + insert seconds).
     ``found`` = docs whose query returned >= 1 candidate.
  2. query latency: after everything is inserted, Q docs sampled (fixed seed)
     from the corpus are queried again, one call each; p50/p99 of the probe
     only (the sketch is precomputed), in microseconds.
  3. all-pairs: every pair within k (Hamming tools) or every LSH candidate
     pair (MinHash tools), its time and count (unordered doc pairs, no self).

fpdb is driven through its CLI (binary given in the spec); its peak RSS is the
max ``ru_maxrss`` over the fpdb processes (init, ingest, bench-query, pairs).

Peers and spec keys (``id`` and ``peer`` always; ``ks`` = the k values used for
latency / all-pairs, default [3, 8]; ``qti_k`` = the k of the crawler loop):
  simhash     k                      python `simhash` SimhashIndex (k+1 blocks)
  datasketch  threshold, num_perm    MinHashLSH (query then insert)
  rensa       threshold, num_perm, bands   RMinHash + RMinHashLSH
  faiss-mh    nhash, b               IndexBinaryMultiHash, nflip = k // nhash
  faiss-flat                         IndexBinaryFlat (brute force, the truth)
  pybind      (venv-pybind)          seomoz simhash-pybind compute + find_all
  fpdb        fpdb, tables, max_distance, workdir
"""

import argparse
import hashlib
import json
import os
import platform
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import shingling  # noqa: E402  (the one shared tokenizer)

pc = time.perf_counter

# --------------------------------------------------------------------------
# helpers shared by the workers


class NotAvailable(Exception):
    """The peer's library or binary is missing: reported, not an error."""

    def __init__(self, msg):
        # setup.sh records why a package could not be installed in <venv>/setup-failures.txt
        note = os.path.join(sys.prefix, "setup-failures.txt")
        if msg.startswith("import") and os.path.exists(note):
            with open(note, encoding="utf-8", errors="replace") as f:
                msg += " | setup.sh: " + " ".join(f.read().split())[:400]
        super().__init__(msg)


def pkg_version(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:  # noqa: BLE001
        return None


def rss_now_mb():
    try:
        import psutil
        return psutil.Process().memory_info().rss / 2**20
    except Exception:  # noqa: BLE001
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentiles_us(lat_s):
    if not lat_s:
        return None
    s = sorted(lat_s)

    def q(p):  # nearest rank
        i = max(0, min(len(s) - 1, int(round(p * len(s) + 0.5)) - 1))
        return s[i] * 1e6

    return {"n": len(s), "p50_us": q(0.50), "p99_us": q(0.99), "mean_us": sum(s) / len(s) * 1e6}


def query_sample(n, nq, seed):
    rng = random.Random(seed)
    return rng.sample(range(n), min(nq, n))


def md5_suffix64(s):
    """python `simhash`'s feature hash: last 8 bytes of md5, big-endian."""
    return int.from_bytes(hashlib.md5(s.encode("utf-8")).digest()[-8:], "big")


def fp_digest(fps):
    h = hashlib.md5()
    for v in fps:
        h.update(int(v).to_bytes(8, "big"))
    return h.hexdigest()[:16]


def planted(docs, truth_path, min_jaccard=0.9):
    """The planted pairs of a truth file (lines {"a": key, "b": key}) whose two documents are both
    among `docs` and whose exact Jaccard of word-trigram shingle sets (`shingling`, the one every
    peer uses) is >= min_jaccard: {later doc's index: {earlier doc's index, ...}}."""
    if not truth_path:
        return {}
    at = {key: i for i, (key, _t) in enumerate(docs)}
    out = {}
    with open(truth_path, encoding="utf-8") as f:
        for line in f:
            t = json.loads(line)
            a, b = at.get(t["a"]), at.get(t["b"])
            if a is None or b is None or a == b:
                continue
            sa, sb = set(shingling.shingles(docs[a][1])), set(shingling.shingles(docs[b][1]))
            if sa and sb and len(sa & sb) / len(sa | sb) >= min_jaccard:
                out.setdefault(max(a, b), set()).add(min(a, b))
    return out


def recall_of(truth, found_pairs):
    """{"pairs": planted pairs, "found": how many the crawler loop reported, "recall"}."""
    n = sum(len(v) for v in truth.values())
    hit = sum(1 for b, srcs in truth.items() for a in srcs if (a, b) in found_pairs)
    return {"pairs": n, "found": hit, "recall": hit / n if n else None}


def qti_loop(docs, sketch, query, insert, truth=None):
    """The crawler loop. Returns (sketches, stats). `truth` ({later index: {earlier indexes}},
    [`planted`]) adds the planted pairs' recall: a pair counts when the later document's query
    returned the earlier one's id (the peers insert document i under id i). CPU = the process's
    CPU time over the loop (`time.process_time`: every thread of this worker)."""
    truth = truth or {}
    t_sh = t_sk = t_q = t_in = 0.0
    found = 0
    found_pairs = set()
    sketches = []
    cpu0 = time.process_time()
    for i, (_key, text) in enumerate(docs):
        t0 = pc()
        sh = shingling.shingles(text)
        t1 = pc()
        sk = sketch(sh)
        t2 = pc()
        hits = query(sk)
        t3 = pc()
        insert(i, sk)
        t4 = pc()
        if hits is not None and len(hits):
            found += 1
            if i in truth:
                ids = {int(h) for h in hits}
                found_pairs |= {(a, i) for a in truth[i] if a in ids}
        sketches.append(sk)
        t_sh += t1 - t0
        t_sk += t2 - t1
        t_q += t3 - t2
        t_in += t4 - t3
    cpu = time.process_time() - cpu0
    n = len(docs)
    total = t_sh + t_sk + t_q + t_in
    return sketches, {
        "docs": n,
        "found": found,
        "cpu_s": cpu,
        "cpu_us_per_doc": cpu / n * 1e6 if n else None,
        "planted": recall_of(truth, found_pairs),
        "seconds": total,
        "shingle_s": t_sh,
        "sketch_s": t_sk,
        "query_s": t_q,
        "insert_s": t_in,
        "docs_per_s": n / total if total else None,
        "index_docs_per_s": n / (t_q + t_in) if (t_q + t_in) else None,
        "sketch_us_per_doc": t_sk / n * 1e6 if n else None,
        "shingle_us_per_doc": t_sh / n * 1e6 if n else None,
    }


def time_each(items, fn):
    lat = []
    for x in items:
        t = pc()
        fn(x)
        lat.append(pc() - t)
    return lat


def sketch_all(docs, sketch):
    t0 = pc()
    out = [sketch(shingling.shingles(t)) for _k, t in docs]
    return out, pc() - t0


# --------------------------------------------------------------------------
# workers, one per peer. Each returns a dict merged into the result.


def w_simhash(spec, docs, args):
    import logging
    try:
        from simhash import Simhash, SimhashIndex
    except ImportError as e:
        raise NotAvailable(f"import simhash: {e}")
    if not hasattr(SimhashIndex, "get_near_dups"):
        raise NotAvailable("the `simhash` module found is not 1e0n's python simhash")
    log = logging.getLogger("simhash-bench")
    log.addHandler(logging.NullHandler())
    log.setLevel(logging.ERROR)  # it warns on every bucket > 200 entries
    log.propagate = False
    k = spec["k"]
    idx = SimhashIndex([], f=64, k=k, log=log)

    def sketch(sh):
        return Simhash(sh, f=64) if sh else Simhash(0, f=64)

    sketches, qti = qti_loop(docs, sketch, idx.get_near_dups, lambda i, s: idx.add(str(i), s), planted(docs, args.truth))
    sample = query_sample(len(docs), args.queries, args.seed)
    lat = {str(k): percentiles_us(time_each(sample, lambda i: idx.get_near_dups(sketches[i])))}
    t0 = pc()
    pairs = set()
    for i, s in enumerate(sketches):
        for j in idx.get_near_dups(s):
            j = int(j)
            if j != i:
                pairs.add((min(i, j), max(i, j)))
    allpairs = {str(k): {"seconds": pc() - t0, "pairs": len(pairs), "method": "get_near_dups per doc"}}
    return {
        "versions": {"simhash": pkg_version("simhash"), "numpy": pkg_version("numpy")},
        "config": f"SimhashIndex f=64 k={k} ({k + 1} blocks), Simhash(md5 of shingles)",
        "qti_k": k, "qti": qti, "latency": lat, "allpairs": allpairs,
        "fp_digest": fp_digest(s.value for s in sketches),
        "buckets": idx.bucket_size(),
    }


def simhash_fps(docs):
    """python `simhash` fingerprints (the ones faiss indexes)."""
    try:
        from simhash import Simhash
    except ImportError as e:
        raise NotAvailable(f"import simhash (fingerprints for faiss): {e}")

    def sketch(sh):
        return Simhash(sh, f=64).value if sh else 0
    return sketch


def w_faiss(spec, docs, args):
    try:
        import faiss
        import numpy as np
    except ImportError as e:
        raise NotAvailable(f"import faiss/numpy: {e}")
    fp_of = simhash_fps(docs)
    peer = spec["peer"]
    # One query at a time: OpenMP adds a fork/join per call (and collapses when
    # the cores are shared: measured 20 ms per single-query range_search with 2
    # threads on a loaded 2-core box vs 20 us with 1). Batched all-pairs uses
    # spec["threads"] (default 1, like the single-threaded loops of the others).
    faiss.omp_set_num_threads(1)
    ap_threads = int(spec.get("threads", 1))
    ks = spec.get("ks", args.ks)
    qti_k = spec.get("qti_k", max(ks))
    if peer == "faiss-flat":
        idx = faiss.IndexBinaryFlat(64)
        config = "IndexBinaryFlat d=64 (brute force)"

        def set_k(_k):
            pass
    else:
        nhash, b = spec["nhash"], spec["b"]
        if nhash * b > 64:
            raise ValueError(f"nhash*b = {nhash * b} > 64")
        idx = faiss.IndexBinaryMultiHash(64, nhash, b)
        config = f"IndexBinaryMultiHash nhash={nhash} b={b} nflip=k//{nhash}"

        def set_k(k):
            idx.nflip = k // nhash  # pigeonhole: exact for distance <= k
    dt = np.dtype(">u8")

    def sketch(sh):
        v = fp_of(sh)
        return v, np.array([v], dtype=dt).view(np.uint8).reshape(1, 8)

    radius = qti_k + 1  # faiss binary range_search keeps distance < radius (strict)
    set_k(qti_k)

    def query(sk):
        lims, _d, labels = idx.range_search(sk[1], radius)
        return [int(x) for x in labels[: int(lims[1])]]

    sketches, qti = qti_loop(docs, sketch, query, lambda i, sk: idx.add(sk[1]), planted(docs, args.truth))
    codes = np.array([s[0] for s in sketches], dtype=dt).view(np.uint8).reshape(-1, 8)
    sample = query_sample(len(docs), args.queries, args.seed)
    lat, allpairs = {}, {}
    for k in ks:
        set_k(k)
        faiss.omp_set_num_threads(1)
        lat[str(k)] = percentiles_us(time_each(sample, lambda i: idx.range_search(codes[i:i + 1], k + 1)))
        faiss.omp_set_num_threads(ap_threads)
        t0 = pc()
        lims, _d, ids = idx.range_search(codes, k + 1)
        qid = np.repeat(np.arange(len(codes), dtype=np.int64), np.diff(lims.astype(np.int64)))
        npairs = int(np.count_nonzero(ids > qid))
        allpairs[str(k)] = {"seconds": pc() - t0, "pairs": npairs,
                            "method": f"one batched range_search(all, radius={k + 1}), "
                                      f"{ap_threads} OpenMP thread(s)"}
    # truth for rows that ran on fewer docs (per-tool caps): pairs among the first n docs
    prefix_pairs = {}
    for n in spec.get("truth_prefixes", []):
        if 0 < n < len(codes):
            sub = faiss.IndexBinaryFlat(64)
            sub.add(codes[:n])
            for k in ks:
                lims, _d, ids = sub.range_search(codes[:n], k + 1)
                qid = np.repeat(np.arange(n, dtype=np.int64), np.diff(lims.astype(np.int64)))
                prefix_pairs.setdefault(str(n), {})[str(k)] = int(np.count_nonzero(ids > qid))
    return {
        "prefix_pairs": prefix_pairs,
        "versions": {"faiss-cpu": pkg_version("faiss-cpu"), "simhash": pkg_version("simhash"),
                     "numpy": pkg_version("numpy")},
        "config": config + " ; fingerprints = python simhash",
        "qti_k": qti_k, "qti": qti, "latency": lat, "allpairs": allpairs,
        "fp_digest": fp_digest(s[0] for s in sketches),
        "allpairs_threads": ap_threads,
    }


def lsh_allpairs(n, sketches, query):
    t0 = pc()
    pairs = 0
    for i in range(n):
        for j in query(sketches[i]):
            j = int(j)
            if j > i:
                pairs += 1
    return pc() - t0, pairs


def w_datasketch(spec, docs, args):
    try:
        from datasketch import MinHash, MinHashLSH
    except ImportError as e:
        raise NotAvailable(f"import datasketch: {e}")
    t, num_perm = spec.get("threshold", 0.9), spec.get("num_perm", 128)
    lsh = MinHashLSH(threshold=t, num_perm=num_perm)
    m0 = MinHash(num_perm=num_perm)  # permutations made once and reused (documented speed-up)

    def sketch(sh):
        m = MinHash(num_perm=num_perm, permutations=m0.permutations, scheme=m0.scheme)
        m.update_batch([s.encode("utf-8") for s in set(sh)])
        return m

    sketches, qti = qti_loop(docs, sketch, lsh.query, lambda i, m: lsh.insert(i, m), planted(docs, args.truth))
    sample = query_sample(len(docs), args.queries, args.seed)
    lat = {"lsh": percentiles_us(time_each(sample, lambda i: lsh.query(sketches[i])))}
    secs, npairs = lsh_allpairs(len(docs), sketches, lsh.query)
    return {
        "versions": {"datasketch": pkg_version("datasketch"), "numpy": pkg_version("numpy")},
        "config": f"MinHashLSH threshold={t} num_perm={num_perm} (b={lsh.b}, r={lsh.r}), "
                  f"MinHash scheme={m0.scheme}, unique shingles",
        "qti_k": f"t={t}", "qti": qti, "latency": lat,
        "allpairs": {"lsh": {"seconds": secs, "pairs": npairs, "method": "LSH candidates, query per doc"}},
        "lsh_bands": [lsh.b, lsh.r],
    }


def w_rensa(spec, docs, args):
    try:
        import rensa
    except ImportError as e:
        raise NotAvailable(f"import rensa: {e}")
    t, num_perm, bands = spec.get("threshold", 0.9), spec.get("num_perm", 128), spec.get("bands", 8)
    seed = 42
    has_lsh = hasattr(rensa, "RMinHashLSH")

    def sketch(sh):
        m = rensa.RMinHash(num_perm, seed)
        m.update(list(set(sh)))
        return m

    out = {"versions": {"rensa": pkg_version("rensa")}, "qti_k": f"t={t}"}
    if not has_lsh:  # MinHash only
        sketches, secs = sketch_all(docs, sketch)
        out["config"] = f"RMinHash num_perm={num_perm} (no LSH class in this version: MinHash only)"
        out["sketch_only"] = {"docs": len(docs), "seconds": secs, "docs_per_s": len(docs) / secs}
        return out
    lsh = rensa.RMinHashLSH(t, num_perm, bands)
    sketches, qti = qti_loop(docs, sketch, lsh.query, lambda i, m: lsh.insert(i, m), planted(docs, args.truth))
    sample = query_sample(len(docs), args.queries, args.seed)
    lat = {"lsh": percentiles_us(time_each(sample, lambda i: lsh.query(sketches[i])))}
    secs, npairs = lsh_allpairs(len(docs), sketches, lsh.query)
    out.update({
        "config": f"RMinHash num_perm={num_perm} seed={seed} + RMinHashLSH threshold={t} "
                  f"bands={bands} (r={num_perm // bands}), unique shingles",
        "qti": qti, "latency": lat,
        "allpairs": {"lsh": {"seconds": secs, "pairs": npairs, "method": "LSH candidates, query per doc"}},
        "lsh_bands": [bands, num_perm // bands],
    })
    return out


def w_pybind(spec, docs, args):
    try:
        import simhash
    except ImportError as e:
        raise NotAvailable(f"import simhash (simhash-pybind): {e}")
    if not hasattr(simhash, "find_all"):
        raise NotAvailable("the `simhash` module found is not seomoz simhash-pybind")
    ks = spec.get("ks", args.ks)

    # Feature hashes = python `simhash`'s (md5, last 8 bytes) so the fingerprints
    # are bit-identical to the ones SimhashIndex and faiss use (checked: fp_digest).
    def sketch(sh):
        return simhash.compute([md5_suffix64(s) for s in sh])

    fps, secs = sketch_all(docs, sketch)
    counts = {}
    for v in fps:
        counts[v] = counts.get(v, 0) + 1
    same = sum(c * (c - 1) // 2 for c in counts.values())
    allpairs = {}
    for k in ks:
        t0 = pc()
        res = simhash.find_all(set(fps), k + 1, k)
        dt = pc() - t0
        doc_pairs = same + sum(counts[a] * counts[b] for a, b in res)
        allpairs[str(k)] = {"seconds": dt, "pairs": doc_pairs, "fp_pairs": len(res),
                            "method": f"find_all(set(fps), blocks={k + 1}, k={k}); pairs expanded "
                                      f"to docs (distinct fps: {len(counts)})"}
    return {
        "versions": {"simhash-pybind": pkg_version("simhash-pybind")},
        "config": "simhash.compute over md5-suffix shingle hashes + find_all (no incremental index)",
        "qti_k": None,
        "sketch_only": {"docs": len(docs), "seconds": secs, "docs_per_s": len(docs) / secs,
                        "sketch_us_per_doc": secs / len(docs) * 1e6},
        "allpairs": allpairs, "fp_digest": fp_digest(fps),
    }


# --------------------------------------------------------------------------
# fpdb through its CLI


def run_measured(cmd, on_line=None, timeout=None, stdin=None):
    """Run cmd, feed each stdout line to on_line; return (rc, seconds, maxrss_mb, stderr_tail).
    The child's CPU seconds (user + sys, every thread, os.wait4) go to LAST_CPU_S."""
    global LAST_CPU_S
    t0 = pc()
    errf = tempfile.TemporaryFile()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, stdin=stdin or subprocess.DEVNULL)
    try:
        for line in p.stdout:
            if on_line is not None:
                on_line(line)
        p.stdout.close()
        _pid, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if p.returncode is None:
            p.kill()
            p.wait()
    secs = pc() - t0
    errf.seek(0)
    err = errf.read()[-3000:].decode("utf-8", "replace")
    errf.close()
    LAST_CPU_S = ru.ru_utime + ru.ru_stime
    return p.returncode, secs, ru.ru_maxrss / 1024, err


LAST_CPU_S = None


def _find_latency(obj):
    """Pull p50/p99 (in µs) out of whatever JSON bench-query prints."""
    found = {}

    def walk(o, prefix=""):
        if isinstance(o, dict):
            for k, v in o.items():
                walk(v, k.lower())
        elif isinstance(o, (int, float)) and prefix:
            for p in ("p50", "p99", "mean"):
                if p in prefix and p not in found:
                    scale = 1.0
                    if prefix.endswith("ns"):
                        scale = 1e-3
                    elif prefix.endswith("ms"):
                        scale = 1e3
                    elif prefix.endswith("_s") or prefix.endswith("secs") or prefix.endswith("seconds"):
                        scale = 1e6
                    found[p] = o * scale
    walk(obj)
    if "p50" not in found:
        return None
    return {"p50_us": found.get("p50"), "p99_us": found.get("p99"), "mean_us": found.get("mean")}


def w_fpdb(spec, docs, args):
    exe = spec.get("fpdb")
    if not exe:
        raise NotAvailable("no --fpdb binary given")
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        raise NotAvailable(f"fpdb binary not found or not executable: {exe}")
    m, maxd = spec.get("tables", 3), spec.get("max_distance", 8)
    ks = spec.get("ks", args.ks)
    work = os.path.abspath(spec.get("workdir", "data/peers-run"))
    os.makedirs(work, exist_ok=True)
    db = os.path.join(work, f"fpdb-{spec['id']}.db")
    shutil.rmtree(db, ignore_errors=True)
    # the exact docs every other peer sees (first N of the corpus)
    corpus = os.path.join(work, f"fpdb-{spec['id']}-corpus.jsonl")
    with open(corpus, "w", encoding="utf-8") as f:
        for key, text in docs:
            f.write(json.dumps({"key": key, "text": text}, ensure_ascii=False) + "\n")
    try:
        ver = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception as e:  # noqa: BLE001
        ver = f"? ({e})"
    rss = {}
    steps = {}

    def must(name, rc, secs, mx, err):
        steps[name] = {"rc": rc, "seconds": secs, "maxrss_mb": mx}
        rss[name] = mx
        if rc != 0:
            raise RuntimeError(f"`fpdb {name}` exited {rc}: {err.strip()[-1500:]}")

    must("init", *run_measured([exe, "init", db, "--max-distance", str(maxd), "--tables", str(m)]))
    n_lines = 0
    found = 0
    bad = []
    truth = planted(docs, args.truth)
    at = {key: i for i, (key, _t) in enumerate(docs)}
    found_pairs = set()

    def on_ingest(line):
        nonlocal n_lines, found
        n_lines += 1
        try:
            rec = json.loads(line)
        except ValueError:
            if len(bad) < 3:
                bad.append(line[:200].decode("utf-8", "replace"))
            return
        if rec.get("duplicates"):
            found += 1
            b = at.get(rec.get("key"))
            if b in truth:
                ids = {at.get(d.get("key")) for d in rec["duplicates"]}
                found_pairs.update((a, b) for a in truth[b] if a in ids)

    rc, secs, mx, err = run_measured([exe, "ingest", db, corpus, "--dedup", "link", "--json"], on_ingest)
    must("ingest", rc, secs, mx, err)
    cpu = LAST_CPU_S
    qti = {"docs": len(docs), "found": found, "seconds": secs, "docs_per_s": len(docs) / secs,
           "cpu_s": cpu, "cpu_us_per_doc": cpu / len(docs) * 1e6, "planted": recall_of(truth, found_pairs),
           "output_lines": n_lines, "unparsed_lines": bad,
           "note": "wall clock of `fpdb ingest` (process start, open, durable commits included)"}
    # latency: only through bench-query (one process per query would measure process start)
    lat = {}
    has_bq = subprocess.run([exe, "bench-query", "--help"], capture_output=True).returncode == 0
    if has_bq:
        qfile = os.path.join(work, f"fpdb-{spec['id']}-queries.jsonl")
        with open(qfile, "w", encoding="utf-8") as f:
            for i in query_sample(len(docs), args.queries, args.seed):
                f.write(json.dumps({"key": docs[i][0], "text": docs[i][1]}, ensure_ascii=False) + "\n")
        for k in ks:
            out = []
            rc, secs, mx, err = run_measured(
                [exe, "bench-query", db, "--k", str(k), "--queries", qfile, "--json"], out.append)
            rss[f"bench-query-k{k}"] = mx
            parsed = None
            for line in reversed(out):
                try:
                    parsed = json.loads(line)
                    break
                except ValueError:
                    continue
            entry = _find_latency(parsed) if (rc == 0 and parsed is not None) else None
            if entry is None:
                entry = {"error": f"rc={rc}; could not read p50/p99", "stdout_tail":
                         b"".join(out)[-500:].decode("utf-8", "replace"), "stderr": err[-500:]}
            entry["raw"] = parsed
            lat[str(k)] = entry
    else:
        lat["note"] = "fpdb has no `bench-query` subcommand: latency skipped"
    allpairs = {}
    for k in ks:
        cnt = 0
        hist = {}

        def on_pair(line):
            nonlocal cnt
            cnt += 1
            try:
                h = json.loads(line).get("hamming")
                hist[h] = hist.get(h, 0) + 1
            except (ValueError, AttributeError):
                pass

        rc, secs, mx, err = run_measured([exe, "pairs", db, "--k", str(k), "--json"], on_pair)
        rss[f"pairs-k{k}"] = mx
        allpairs[str(k)] = ({"seconds": secs, "pairs": cnt, "by_hamming": hist,
                             "method": "`fpdb pairs` wall clock (process start + open included)"}
                            if rc == 0 else {"error": f"rc={rc}: {err.strip()[-800:]}"})
    return {
        "versions": {"fpdb": ver},
        "config": f"fpdb CLI, --tables {m} --max-distance {maxd}, ingest --dedup link",
        "qti_k": maxd, "qti": qti, "latency": lat, "allpairs": allpairs,
        "fpdb_rss_mb": rss, "fpdb_steps": steps,
        "peak_rss_override_mb": max(rss.values()) if rss else None,
        "db_bytes": sum(os.path.getsize(os.path.join(dp, f)) for dp, _d, fs in os.walk(db) for f in fs),
    }


WORKERS = {
    "simhash": w_simhash,
    "faiss-mh": w_faiss,
    "faiss-flat": w_faiss,
    "datasketch": w_datasketch,
    "rensa": w_rensa,
    "pybind": w_pybind,
    "fpdb": w_fpdb,
}


def worker_main(args):
    spec = json.loads(args.spec)
    res = {"id": spec["id"], "peer": spec["peer"], "spec": spec, "python": platform.python_version()}
    t0 = pc()
    try:
        fn = WORKERS[spec["peer"]]
        limit = spec.get("limit") or args.limit
        docs = shingling.read_corpus(args.corpus, limit)
        res["docs"] = len(docs)
        res["base_rss_mb"] = rss_now_mb()
        res.update(fn(spec, docs, args))
        res["status"] = "ok"
    except NotAvailable as e:
        res["status"] = "not available"
        res["reason"] = str(e)
    except Exception as e:  # noqa: BLE001
        import traceback
        res["status"] = "error"
        res["reason"] = f"{type(e).__name__}: {e}"
        res["traceback"] = traceback.format_exc()[-3000:]
    res["worker_seconds"] = pc() - t0
    res["self_maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1, default=str)
    return 0


# --------------------------------------------------------------------------
# parent side

VENV_OF = {"pybind": "data/venv-pybind"}  # everything else: data/venv-peers


def python_for(peer, root="."):
    venv = VENV_OF.get(peer, "data/venv-peers")
    return os.path.join(root, venv, "bin", "python")


def run_peer(spec, corpus, limit=None, queries=1000, seed=12345, ks=(3, 8), python=None,
             timeout=3600, outdir="data/peers-run", root=".", truth=None):
    """Run one peer in a child process; return its result dict with peak_rss_mb."""
    python = python or python_for(spec["peer"], root)
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, f"result-{spec['id']}.json")
    if os.path.exists(out):
        os.unlink(out)
    base = {"id": spec["id"], "peer": spec["peer"], "spec": spec}
    if not os.path.exists(python):
        return {**base, "status": "not available",
                "reason": f"interpreter {python} missing (run scripts/bench_peers/setup.sh)"}
    cmd = [python, os.path.abspath(__file__), "worker", "--spec", json.dumps(spec), "--corpus", corpus,
           "--out", out, "--queries", str(queries), "--seed", str(seed), "--ks", ",".join(map(str, ks))]
    if limit:
        cmd += ["--limit", str(limit)]
    if truth:
        cmd += ["--truth", os.path.abspath(truth)]
    errpath = out + ".stderr"
    t0 = pc()
    with open(errpath, "wb") as err:
        # own process group, so a timeout also stops what the worker started (fpdb)
        p = subprocess.Popen(cmd, stdout=err, stderr=err, start_new_session=True)
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if pc() - t0 > timeout:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.05)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = pc() - t0
    try:
        with open(out, encoding="utf-8") as f:
            res = json.load(f)
    except (OSError, ValueError):
        with open(errpath, "rb") as f:
            tail = f.read()[-2000:].decode("utf-8", "replace")
        timed = " (timed out)" if wall > timeout else ""
        res = {**base, "status": "error", "reason": f"worker exited {p.returncode}{timed}: {tail}"}
    res["wall_seconds"] = wall
    res["peak_rss_mb"] = ru.ru_maxrss / 1024  # this child only (os.wait4)
    if res.get("peak_rss_override_mb"):
        res["worker_peak_rss_mb"] = res["peak_rss_mb"]
        res["peak_rss_mb"] = res["peak_rss_override_mb"]
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("worker", "run"):
        p = sub.add_parser(name)
        p.add_argument("--spec", required=True, help='JSON, e.g. {"id":"simhash-k3","peer":"simhash","k":3}')
        p.add_argument("--corpus", required=True)
        p.add_argument("--limit", type=int)
        p.add_argument("--queries", type=int, default=1000)
        p.add_argument("--seed", type=int, default=12345)
        p.add_argument("--ks", default="3,8")
        p.add_argument("--truth", default=None, help="truth file of planted pairs ({a, b} keys per line): adds recall")
        p.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    args.ks = [int(x) for x in str(args.ks).split(",") if x]
    if args.cmd == "worker":
        return worker_main(args)
    spec = json.loads(args.spec)
    res = run_peer(spec, args.corpus, args.limit, args.queries, args.seed, args.ks, truth=args.truth)
    text = json.dumps(res, indent=1, default=str)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
