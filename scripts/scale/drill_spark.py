#!/usr/bin/env python3
"""Fault drill: a Spark Python worker SIGKILLed mid-task, and the job still ends with the pairs of
`fpdb pairs`.

    python scripts/scale/drill_spark.py CORPUS.jsonl OUT_DIR [--fpdb BIN] [--min-jaccard T]
        [--kill-after-cpu S] [--kills N] [--mode exact|minhash]

1. The truth: `fpdb init --min-jaccard T` + `fpdb ingest --dedup off` + `fpdb --json pairs -k 12
   --min-jaccard T` of CORPUS.
2. A reference run of the job (`python -m fpdb.spark pairs CORPUS --master local[2]`, its default
   scheme for the size unless --mode), unless --reference names one. Then the same job with
   `--master local[2,4]` (local mode: one executor inside the driver's JVM, 2 task slots,
   `spark.task.maxFailures` = 4) starts in the background.
3. A watcher polls /proc for the job's Python workers: the processes forked by `pyspark.daemon`
   (one per running Python task; the JVM talks to them over a socket). The first worker that has
   used S CPU-seconds (default 0.1) and is busy is sent SIGKILL; with --kills N,
   N such workers one after the other. The JVM sees the task fail ("Python worker exited
   unexpectedly") and runs it again. A worker counts as busy when its CPU time grew over the last
   polls (every 0.02 s) (an idle reused worker is not killed: that would lose no task).
4. The pairs under OUT_DIR/spark/pairs (a_id, b_id, hamming, jaccard) are compared with the
   reference run's (equal: the job's answer does not depend on the failure) and with the truth
   (equal in the exact scheme; recall in the minhash scheme), and the driver's log is searched for
   the lost tasks. Prints one JSON object; exit status 0 when a worker was killed, at least one task
   was lost and re-run, and the pairs are equal.

Only the processes this script started are signalled (the job's own workers, found under the PID
of the job it launched).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def children(pid: int) -> list[int]:
    """Children of every thread of pid (a JVM starts its Python daemon from a thread other than main)."""
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in children(p):
            out.append(c)
            todo.append(c)
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def cpu_s(pid: int) -> float:
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError):
        return 0.0


def workers(job: int) -> list[int]:
    """Python workers of the job: children of a `pyspark.daemon` process under the job's PID."""
    daemons = [p for p in descendants(job) if "pyspark.daemon" in cmdline(p) and "pyspark.daemon" not in cmdline(ppid(p))]
    return [c for d in daemons for c in children(d)]


def ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError):
        return 0


def read_pairs(p: Path) -> dict[tuple[int, int], tuple[int, float]]:
    files = sorted(p.glob("part-*")) if p.is_dir() else [p]
    out = {}
    for f in files:
        for line in f.read_text().splitlines():
            if line.strip():
                d = json.loads(line)
                out[(d["a_id"], d["b_id"])] = (d["hamming"], round(d["jaccard"], 12) if d["jaccard"] is not None else None)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--fpdb", default=os.environ.get("FPDB_BIN", str(ROOT / "target" / "release" / "fpdb")))
    ap.add_argument("--py", default=os.environ.get("FPDB_PY", str(ROOT / "python" / ".venv" / "bin" / "python")))
    ap.add_argument("--min-jaccard", type=float, default=0.9)
    ap.add_argument("--kill-after-cpu", type=float, default=0.1)
    ap.add_argument("--kills", type=int, default=1)
    ap.add_argument("--mode", choices=["auto", "exact", "minhash"], default="auto",
                    help="the job's scheme (auto: its default for the size, as side_by_side.sh runs it)")
    ap.add_argument("--reference", type=Path, help="OUT of the same job run without a kill (else it is run first)")
    a = ap.parse_args()
    out = a.out
    subprocess.run(["rm", "-rf", str(out)], check=True)
    out.mkdir(parents=True)
    t = str(a.min_jaccard)
    db = out / "one.fpdb"
    subprocess.run([a.fpdb, "init", str(db), "--min-jaccard", t], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([a.fpdb, "ingest", str(db), str(a.corpus), "--dedup", "off", "--no-progress"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out / "exact.jsonl", "w") as f:
        r = subprocess.run([a.fpdb, "--json", "pairs", str(db), "-k", "12", "--min-jaccard", t], stdout=f)
    assert r.returncode in (0, 1), r.returncode
    truth = read_pairs(out / "exact.jsonl")

    def cmd(dest: Path, master: str) -> list[str]:
        return [a.py, "-m", "fpdb.spark", "pairs", str(a.corpus), "--master", master, *([f"--{a.mode}"] if a.mode != "auto" else []),
                "--min-jaccard", t, "--out", str(dest), "--format", "jsonl", "--partitions", "8"]

    ref_dir = a.reference
    if ref_dir is None:
        ref_dir = out / "reference"
        with open(out / "reference.log", "w") as log:
            r = subprocess.run(cmd(ref_dir, "local[2]"), stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        assert r.returncode in (0, 1), f"reference run exited {r.returncode}: {out / 'reference.log'}"
    reference = read_pairs(ref_dir / "pairs")

    log = open(out / "spark.log", "w")
    t0 = time.monotonic()
    job = subprocess.Popen(cmd(out / "spark", "local[2,4]"), stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    killed: list[dict] = []
    seen: set[int] = set()
    last: dict[int, list[float]] = {}
    while job.poll() is None:
        if len(killed) < a.kills:
            for w in workers(job.pid):
                c = cpu_s(w)
                # Busy (its CPU time grew over the last few polls) and past start-up: inside a task.
                hist = last.setdefault(w, [])
                hist.append(c)
                busy = len(hist) > 1 and c > hist[max(0, len(hist) - 4)]
                if w not in seen and busy and c >= a.kill_after_cpu:
                    seen.add(w)
                    cl, parent = cmdline(w), ppid(w)
                    os.kill(w, signal.SIGKILL)
                    killed.append({"pid": w, "parent": parent or None, "cmdline": cl.strip(), "cpu_s": c, "at_s": round(time.monotonic() - t0, 2)})
                    break
        time.sleep(0.02)
    secs = round(time.monotonic() - t0, 2)
    log.close()
    text = (out / "spark.log").read_text(errors="replace")
    lost = [line for line in text.splitlines() if "Lost task" in line]
    got = read_pairs(out / "spark" / "pairs") if (out / "spark" / "pairs").exists() else {}
    res = {
        "corpus": str(a.corpus), "master": "local[2,4]", "job_rc": job.returncode, "job_seconds": secs,
        "killed": killed, "lost_task_lines": len(lost), "first_lost_task": lost[0][:300] if lost else None,
        "worker_crash_reported": "exited unexpectedly" in text or "crashed" in text,
        "exact_pairs": len(truth), "spark_pairs": len(got),
        "loadavg": open("/proc/loadavg").read().split()[:3],
    }
    summary = json.loads((out / "spark" / "summary.json").read_text()) if (out / "spark" / "summary.json").exists() else {}
    res["scheme"] = summary.get("mode")
    res["documents"] = summary.get("documents")
    res["reference"] = str(ref_dir)
    res["reference_pairs"] = len(reference)
    res["same_pairs_as_reference"] = got == reference
    common = set(got) & set(truth)
    res["recall_vs_exact"] = round(len(common) / len(truth), 5) if truth else None
    res["same_pairs_as_fpdb_pairs"] = got == truth
    ok = res["same_pairs_as_reference"] and (res["same_pairs_as_fpdb_pairs"] if summary.get("mode") == "exact" else True)
    res["ok"] = bool(killed) and bool(lost) and job.returncode in (0, 1) and ok
    print(json.dumps(res))
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
