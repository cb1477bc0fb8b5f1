#!/usr/bin/env python3
"""Run fpdb and every peer side by side on one corpus; write a Markdown table.

  python3 scripts/bench_peers/run_all.py --corpus data/peers-sample.jsonl --limit 20000 \
      --fpdb target/release/fpdb --out docs/peers/passages.md

Each tool/config runs in its own child process (peers.py), one after the
other, on the first --limit docs of the corpus (a per-tool --cap can lower
that: the docs column says how many each row used). Raw results go to
OUT with .json instead of .md. See scripts/bench_peers/README.md.
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peers  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

DEFAULT_CAPS = {"simhash-k8": 5000}  # python simhash at k=8 runs at a few hundred docs/s


def specs(args):
    fp = args.fpdb
    return [
        {"id": "fpdb-k8", "peer": "fpdb", "fpdb": fp, "tables": "auto", "max_distance": 8,
         "label": "fpdb, k = 8 (tables auto)"},
        {"id": "fpdb-k12", "peer": "fpdb", "fpdb": fp, "tables": "auto", "max_distance": 12,
         "label": "fpdb, k = 12 (defaults)"},
        {"id": "simhash-k3", "peer": "simhash", "k": 3, "ks": [3],
         "label": "simhash SimhashIndex k=3 (4 blocks)"},
        {"id": "simhash-k8", "peer": "simhash", "k": 8, "ks": [8],
         "label": "simhash SimhashIndex k=8 (9 blocks)"},
        {"id": "faiss-mh-3x21", "peer": "faiss-mh", "nhash": 3, "b": 21, "qti_k": 8,
         "threads": args.faiss_threads,
         "label": "faiss MultiHash nhash=3 b=21 (nflip=k//3)"},
        {"id": "faiss-mh-4x16", "peer": "faiss-mh", "nhash": 4, "b": 16, "qti_k": 3, "ks": [3],
         "threads": args.faiss_threads, "label": "faiss MultiHash nhash=4 b=16 (k+1, k=3)"},
        {"id": "faiss-mh-9x7", "peer": "faiss-mh", "nhash": 9, "b": 7, "qti_k": 8, "ks": [8],
         "threads": args.faiss_threads, "label": "faiss MultiHash nhash=9 b=7 (k+1, k=8)"},
        {"id": "faiss-flat", "peer": "faiss-flat", "qti_k": 8, "threads": args.faiss_threads,
         "label": "faiss IndexBinaryFlat (brute force = truth)"},
        {"id": "pybind", "peer": "pybind", "label": "simhash-pybind (seomoz) find_all"},
        {"id": "datasketch", "peer": "datasketch", "threshold": 0.9, "num_perm": 128,
         "label": "datasketch MinHashLSH t=0.9, 128 perm"},
        {"id": "rensa", "peer": "rensa", "threshold": 0.9, "num_perm": 128, "bands": args.rensa_bands,
         "label": f"rensa RMinHashLSH t=0.9, 128 perm, {args.rensa_bands} bands"},
    ]


# ---------------------------------------------------------------- machine info

def machine_info():
    info = {"nproc": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    info["mem_gib"] = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    try:
        info["nproc_cmd"] = int(subprocess.run(["nproc"], capture_output=True, text=True).stdout)
    except (OSError, ValueError):
        pass
    return info


def loadavg():
    try:
        return os.getloadavg()
    except OSError:
        return None


def venv_freeze(venv):
    py = os.path.join(ROOT, venv, "bin", "python")
    if not os.path.exists(py):
        return None
    r = subprocess.run([py, "-m", "pip", "freeze"], capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else None


# ---------------------------------------------------------------- formatting

def fnum(x, nd=0):
    if x is None:
        return "—"
    return f"{x:,.{nd}f}"


def flat(lat):
    if not lat or "p50_us" not in lat or lat.get("p50_us") is None:
        return "—"

    def one(v):
        if v is None:
            return "?"
        return f"{v:.1f}" if v < 10 else f"{v:,.0f}"
    return f"{one(lat['p50_us'])} / {one(lat.get('p99_us'))}"


def fpairs(ap):
    if not ap:
        return "—"
    if "error" in ap:
        return "error"
    sec = ap["seconds"]
    t = f"{sec * 1e3:.1f} ms" if sec < 1 else f"{sec:.2f} s"
    return f"{t} ({ap['pairs']:,})"


def row_cells(r, ref_dps, ks, ref_cpu=None):
    sid = r["id"]
    label = r["spec"].get("label", sid)
    if r.get("status") != "ok":
        why = (r.get("reason") or "").replace("|", "/").replace("\n", " ")
        if len(why) > 140:
            why = why[:140] + "…"
        return [f"{label}: **{r.get('status')}** ({why})"] + ["—"] * (11 + 2 * len(ks))
    qti = r.get("qti") or {}
    so = r.get("sketch_only") or {}
    dps = qti.get("docs_per_s")
    ratio = "—"
    if dps and ref_dps:
        ratio = f"{ref_dps / dps:.2f}×"
    elif not ref_dps:
        ratio = "n/a"
    lsh = r["peer"] in ("datasketch", "rensa")
    cpu = qti.get("cpu_us_per_doc")
    cpu_ratio = f"{cpu / ref_cpu:.2f}×" if (cpu and ref_cpu) else "—"
    pl = qti.get("planted") or {}
    recall = f"{pl['found']}/{pl['pairs']} ({pl['recall']:.3f})" if pl.get("pairs") else "—"
    cells = [label, fnum(r.get("docs")), str(r.get("qti_k") if r.get("qti_k") is not None else "—"),
             fnum(dps), ratio, fnum(cpu, 0), cpu_ratio, recall, fnum(qti.get("index_docs_per_s")),
             fnum(qti.get("sketch_us_per_doc", so.get("sketch_us_per_doc")), 0),
             fnum(qti.get("found")) if qti else "—"]
    lat, ap = r.get("latency") or {}, r.get("allpairs") or {}
    for k in ks:
        key = "lsh" if (lsh and k == max(ks)) else str(k)
        cells.append(flat(lat.get(key)) + (" †" if key == "lsh" and key in lat else ""))
    for k in ks:
        key = "lsh" if (lsh and k == max(ks)) else str(k)
        cells.append(fpairs(ap.get(key)) + (" †" if key == "lsh" and key in ap else ""))
    peak, base = r.get("peak_rss_mb"), r.get("base_rss_mb")
    if peak and base and r["peer"] != "fpdb":
        cells.append(f"{peak:,.0f} (+{max(0.0, peak - base):,.0f})")
    else:
        cells.append(fnum(peak, 0))
    return cells


def consistency(results, ks):
    """Exact Hamming methods on the same fingerprints must agree with faiss Flat."""
    out = []
    digests = {r["id"]: r.get("fp_digest") for r in results if r.get("status") == "ok" and r.get("fp_digest")}
    if digests:
        by_docs = {}
        for r in results:
            if r["id"] in digests:
                by_docs.setdefault(r.get("docs"), set()).add(digests[r["id"]])
        same = all(len(v) == 1 for v in by_docs.values())
        out.append(f"- Fingerprints identical across {', '.join(sorted(digests))} "
                   f"(md5 digest of the u64 list, per doc count): **{'yes' if same else 'NO'}**.")
    truth = next((r for r in results if r["id"] == "faiss-flat" and r.get("status") == "ok"), None)
    if truth:
        for k in ks:
            t = (truth.get("allpairs") or {}).get(str(k))
            if not t:
                continue
            agree, differ = [], []
            prefix = truth.get("prefix_pairs") or {}
            for r in results:
                if r is truth or r.get("status") != "ok" or r["peer"] in ("fpdb", "datasketch", "rensa"):
                    continue
                a = (r.get("allpairs") or {}).get(str(k))
                if not a:
                    continue
                if r.get("docs") == truth.get("docs"):
                    want, tag = t["pairs"], ""
                elif str(k) in prefix.get(str(r.get("docs")), {}):
                    want, tag = prefix[str(r.get("docs"))][str(k)], f" (Flat on the first {r.get('docs'):,}: {prefix[str(r.get('docs'))][str(k)]:,})"
                else:
                    continue
                (agree if a.get("pairs") == want else differ).append(f"{r['id']}={a.get('pairs'):,}{tag}")
            msg = f"- k={k}: faiss Flat (truth) finds {t['pairs']:,} pairs among {truth.get('docs'):,} docs"
            if agree:
                msg += f"; equal: {', '.join(agree)}"
            if differ:
                msg += f"; **different**: {', '.join(differ)}"
            out.append(msg + ".")
    return out


def write_markdown(path, results, meta, ks):
    ref = next((r for r in results if r["peer"] == "fpdb" and r.get("status") == "ok"), None)
    ref_dps = (ref.get("qti") or {}).get("docs_per_s") if ref else None
    ref_cpu = (ref.get("qti") or {}).get("cpu_us_per_doc") if ref else None
    hdr = ["tool / config", "docs", "qti k", "qti docs/s", "fpdb ÷ tool", "qti CPU µs/doc", "CPU: tool ÷ fpdb",
           "planted J ≥ 0.9 found", "index-only docs/s",
           "sketch µs/doc", "docs with ≥1 cand."]
    hdr += [f"query p50 / p99 µs, k={k}" + (" (LSH †)" if k == max(ks) else "") for k in ks]
    hdr += [f"all-pairs k={k}: time (pairs)" + (" (LSH †)" if k == max(ks) else "") for k in ks]
    hdr += ["peak RSS MB (+ over base)"]
    L = []
    L.append("# fpdb vs peers: side-by-side run\n")
    L.append(f"Generated by `scripts/bench_peers/run_all.py` on {meta['date_utc']} (UTC). "
             "How to read it and the caveats: `scripts/bench_peers/README.md`.\n")
    L.append("```\n" + meta["command"] + "\n```\n")
    m = meta["machine"]
    L.append(f"- Machine: {m.get('cpu', '?')}, nproc={m.get('nproc_cmd', m.get('nproc'))}, "
             f"{m.get('mem_gib', '?')} GiB RAM, {m.get('platform')}, Python {m.get('python')}.")
    la0, la1 = meta.get("loadavg_start"), meta.get("loadavg_end")
    if la0 and la1:
        L.append(f"- Load average (1/5/15 min) at start {la0[0]:.1f}/{la0[1]:.1f}/{la0[2]:.1f}, "
                 f"at end {la1[0]:.1f}/{la1[1]:.1f}/{la1[2]:.1f} (other work on the machine skews timings).")
    c = meta["corpus"]
    L.append(f"- Corpus: `{c['path']}`, first {c['limit'] or 'all'} docs ({c['bytes_used']:,} bytes of JSONL); "
             f"same docs and the same shingling (lower case, alphanumeric runs, word 3-grams) for every tool; "
             f"{meta['queries']} latency queries sampled with seed {meta['seed']}.")
    vers = {}
    for r in results:
        for k, v in (r.get("versions") or {}).items():
            if v:
                vers[k] = v
    L.append("- Versions: " + ", ".join(f"{k} {v}" for k, v in sorted(vers.items())) + ".")
    if ref:
        L.append(f"- `fpdb ÷ tool` = {ref['spec'].get('label', ref['id'])} qti docs/s "
                 f"({ref_dps:,.0f}) divided by the row's qti docs/s (> 1: fpdb is faster).")
    else:
        L.append("- `fpdb ÷ tool`: n/a, fpdb did not run (see its row).")
    L.append("")
    L.append("| " + " | ".join(hdr) + " |")
    L.append("|" + "|".join(["---"] + ["---:"] * (len(hdr) - 1)) + "|")
    for r in results:
        L.append("| " + " | ".join(row_cells(r, ref_dps, ks, ref_cpu)) + " |")
    L.append("")
    L.append("qti = query-then-insert, the crawler loop (shingle → sketch → query → insert, one doc at a time); "
             "qti docs/s counts all four phases, index-only docs/s only query + insert. fpdb's qti is the "
             "wall clock of `fpdb ingest --dedup link` (durable commits included). "
             "qti CPU = user + sys CPU over the crawler loop: for a Python peer its worker process's "
             "`time.process_time()` around the loop (every thread), for fpdb the `ingest` process's rusage "
             "(its fingerprinting workers, writer and RocksDB threads included; process start and open too); "
             "`CPU: tool ÷ fpdb` > 1 means the tool spends more CPU per document. Planted J ≥ 0.9 found = of the "
             "truth file's planted pairs whose exact Jaccard (this shingling) is ≥ 0.9, those where the later "
             "document's query returned the earlier one (Python peers: candidates, unverified; fpdb: its "
             "verified `duplicates`). "
             "Peak RSS = ru_maxrss of the tool's own process (os.wait4); for Python peers \"+ over base\" subtracts "
             "the RSS after the interpreter started and read the corpus (libraries, index, kept sketches remain); "
             "for fpdb it is the max over its init/ingest/bench-query/pairs processes. "
             "† MinHash rows: LSH candidates at the row's threshold, not Hamming k (their all-pairs = every "
             "doc queried against the full index).\n")
    # phase breakdown
    L.append("## Phase breakdown of the crawler loop (µs per doc)\n")
    L.append("| tool / config | docs | shingle | sketch | query | insert | total |")
    L.append("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        q = r.get("qti") or {}
        if r.get("status") != "ok" or "shingle_s" not in q:
            continue
        n = q["docs"]
        f = [q["shingle_s"], q["sketch_s"], q["query_s"], q["insert_s"], q["seconds"]]
        L.append(f"| {r['spec'].get('label', r['id'])} | {n:,} | " + " | ".join(f"{x / n * 1e6:,.1f}" for x in f) + " |")
    L.append("")
    cons = consistency(results, ks)
    if cons:
        L.append("## Consistency checks\n")
        L.extend(cons)
        L.append("")
    bad = [r for r in results if r.get("status") != "ok"]
    if bad:
        L.append("## Not run\n")
        for r in bad:
            L.append(f"- `{r['id']}`: {r.get('status')}: {(r.get('reason') or '').strip()[:600]}")
        L.append("")
    L.append(f"Raw results: `{os.path.relpath(meta['json_path'], os.path.dirname(os.path.abspath(path)))}`.\n")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="JSONL, one {\"key\",\"text\",...} per line")
    ap.add_argument("--limit", type=int, default=None, help="use the first N docs (default: all)")
    ap.add_argument("--fpdb", default=None, help="path of the fpdb binary (skipped if missing)")
    ap.add_argument("--out", default="docs/peers/run.md")
    ap.add_argument("--json", default=None, help="raw results (default: OUT with .json)")
    ap.add_argument("--queries", type=int, default=1000, help="latency queries per tool/k")
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--ks", default="3,8", help="Hamming k values for latency / all-pairs")
    ap.add_argument("--cap", action="append", default=[], metavar="ID=N",
                    help=f"per-tool doc limit (0 = none); default {DEFAULT_CAPS}")
    ap.add_argument("--only", default=None, help="comma-separated ids to run")
    ap.add_argument("--skip", default="", help="comma-separated ids to skip")
    ap.add_argument("--faiss-threads", type=int, default=1, help="OpenMP threads for faiss all-pairs")
    ap.add_argument("--rensa-bands", type=int, default=8, help="RMinHashLSH bands (must divide 128)")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per tool")
    ap.add_argument("--truth", default=None, help="truth file of planted pairs ({\"a\",\"b\"} keys per line): recall column")
    ap.add_argument("--workdir", default=os.path.join(ROOT, "data", "peers-run"))
    args = ap.parse_args()
    ks = [int(x) for x in args.ks.split(",") if x]
    caps = dict(DEFAULT_CAPS)
    for c in args.cap:
        k, _, v = c.partition("=")
        caps[k] = int(v)
    json_path = args.json or os.path.splitext(args.out)[0] + ".json"
    only = set(args.only.split(",")) if args.only else None
    skip = set(x for x in args.skip.split(",") if x)

    n_used, bytes_used = 0, 0
    with open(args.corpus, "rb") as f:
        for line in f:
            if args.limit and n_used >= args.limit:
                break
            if line.strip():
                n_used += 1
                bytes_used += len(line)
    meta = {
        "command": " ".join(shlex.quote(a) for a in ["python3"] + sys.argv),
        "interpreter": sys.executable,
        "cwd": os.getcwd(),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
        "machine": machine_info(),
        "loadavg_start": loadavg(),
        "corpus": {"path": args.corpus, "limit": args.limit, "docs_used": n_used, "bytes_used": bytes_used},
        "queries": args.queries, "seed": args.seed, "ks": ks, "caps": caps,
        "venvs": {"data/venv-peers": venv_freeze("data/venv-peers"),
                  "data/venv-pybind": venv_freeze("data/venv-pybind")},
        "json_path": os.path.abspath(json_path),
    }
    results = []
    for spec in specs(args):
        if (only and spec["id"] not in only) or spec["id"] in skip:
            continue
        cap = caps.get(spec["id"])
        limit = args.limit
        if cap:
            limit = min(cap, limit) if limit else cap
        spec["workdir"] = args.workdir
        if spec["peer"] == "faiss-flat":  # brute-force truth also for the capped rows
            spec["truth_prefixes"] = sorted({v for v in caps.values() if v})
        print(f"[{time.strftime('%H:%M:%S')}] {spec['id']} (limit {limit}) ...", file=sys.stderr, flush=True)
        r = peers.run_peer(spec, args.corpus, limit=limit, queries=args.queries, seed=args.seed, ks=ks,
                           timeout=args.timeout, outdir=args.workdir, root=ROOT, truth=args.truth)
        q = r.get("qti") or r.get("sketch_only") or {}
        print(f"    {r.get('status')}: {r.get('docs')} docs, {q.get('docs_per_s') or 0:,.0f} docs/s, "
              f"peak RSS {r.get('peak_rss_mb') or 0:,.0f} MB, {r.get('wall_seconds', 0):.1f} s"
              + (f" -- {r.get('reason', '')[:200]}" if r.get("status") != "ok" else ""),
              file=sys.stderr, flush=True)
        results.append(r)
        # keep partial output in case a later tool hangs
        meta["loadavg_end"] = loadavg()
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1, default=str)
    meta["loadavg_end"] = loadavg()
    os.makedirs(os.path.dirname(os.path.abspath(json_path)), exist_ok=True)
    with open(json_path, "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1, default=str)
    write_markdown(args.out, results, meta, ks)
    with open(args.out, encoding="utf-8") as f:
        print(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
