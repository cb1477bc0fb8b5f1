"""All-pairs near-duplicates on Apache Spark, with the answers of `fpdb pairs` (docs/scale-out.md).

    python -m fpdb.spark pairs INPUT [--master URL] --out DIR [--k K] [--min-jaccard T] [--groups]
                               [--format parquet|jsonl] [--max-bucket B]

INPUT is JSONL (one {"key": ..., "text": ...} per line) or Parquet with `key` and `text` columns.
Document ids follow Spark's read order (for one file: line order), numbered like `fpdb ingest`
numbers the same file, so `a_id`, `b_id` and the group ids equal `fpdb pairs`' own.

The job, all in the executors (nothing but row counts and per-distance totals reaches the driver):

1. fingerprint: `mapInArrow` hands each Arrow batch of texts to the engine (`fingerprint_batch`:
   the engine's Fingerprinter, no Python shingling): a signed 64-bit SimHash and the shingle set as
   a compact binary column (4 bytes per shingle);
2. candidates: the SimHash is cut into k + 1 blocks (`candidate_blocks`); each document goes to one
   shuffle key per (table, block value). A pair within distance k shares at least one block, and
   the engine (`bucket_pairs`) emits it only from the first table where it does: each pair once;
3. skew: a bucket of n > B documents is split by a salt (xxhash64 of the id) into s = ceil(n / B)
   sub-buckets; sub-bucket pairs (i <= j) are the tasks, so a task holds about 2B documents
   (16 bytes each in the comparison) however large the bucket;
4. verify (with --min-jaccard): candidate pairs are joined with the shingle column on both ids and
   the engine computes exact Jaccard (`jaccard_batch`), the value `fpdb pairs` prints;
5. groups (with --groups): connected components by large-star/small-star rounds over the pair
   edges, canonical = smallest id, as `fpdb pairs --groups`.

Output under DIR: `pairs/` (a, b, a_id, b_id, hamming, jaccard: the fields of `fpdb pairs --json`),
`groups/` (group, canonical, size, members: those of `fpdb pairs --groups --json`) and
`summary.json`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

DEFAULT_K = 12
"""The default distance of a new fpdb database (`fpdb init`)."""
DEFAULT_MAX_BUCKET = 20000
"""Largest sub-bucket: a task compares at most about 2 x this many documents."""


def _native() -> Any:
    from fpdb import _fpdb  # absolute: this file also runs as a script under spark-submit

    return _fpdb


def session(master: Optional[str] = None, app: str = "fpdb-pairs", partitions: int = 8, conf: Optional[dict[str, str]] = None) -> Any:
    """A SparkSession whose Python workers run this interpreter (so they import this fpdb build)."""
    from pyspark.sql import SparkSession

    # The Python workers run this interpreter (the environment that has fpdb, pyarrow and pandas),
    # and everything binds to loopback unless the caller says otherwise.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    b = SparkSession.builder.appName(app)
    if master:
        b = b.master(master)
    settings = {
        "spark.sql.shuffle.partitions": str(partitions),
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": os.environ["SPARK_LOCAL_IP"],
        "spark.driver.bindAddress": os.environ["SPARK_LOCAL_IP"],
    }
    settings.update(conf or {})
    for k, v in settings.items():
        b = b.config(k, v)
    return b.getOrCreate()


def read_documents(spark: Any, path: str) -> Any:
    """INPUT as a DataFrame of (key, text): Parquet by suffix or folder of .parquet files, else JSONL."""
    p = Path(path)
    parquet = p.suffix == ".parquet" or (p.is_dir() and any(x.suffix == ".parquet" for x in p.iterdir()))
    if parquet:
        df = spark.read.parquet(path)
    else:
        df = spark.read.schema("key string, text string").json(path)
    missing = [c for c in ("key", "text") if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: no column {', '.join(missing)} (the input needs `key` and `text`)")
    return df.select("key", "text")


def fingerprints(docs: Any, spec: Optional[str] = None, first_id: int = 0) -> Any:
    """(id, key, simhash, shingles) per document: the engine's fingerprints, ids in read order."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    def fingerprint_batches(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark import TaskContext

        native = _native()
        ctx = TaskContext.get()
        part = ctx.partitionId() if ctx else 0
        pos = 0
        for rb in batches:
            keys, texts = rb.column(0), rb.column(1)
            if keys.null_count or texts.null_count:
                bad = keys.to_pylist().index(None) if keys.null_count else texts.to_pylist().index(None)
                raise ValueError(f"input partition {part}, row {pos + bad}: `key` and `text` must not be null")
            fps, sets = native.fingerprint_batch(texts.to_pylist(), spec)
            n = len(fps)
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array([part] * n, pa.int32()),
                    pa.array(range(pos, pos + n), pa.int64()),
                    keys,
                    pa.array(fps, pa.int64()),
                    pa.array(sets, pa.binary()),
                ],
                names=["part", "pos", "key", "simhash", "shingles"],
            )
            pos += n

    fp = docs.mapInArrow(fingerprint_batches, "part int, pos long, key string, simhash long, shingles binary")
    fp = fp.localCheckpoint()  # fingerprint once: the counts below and every later stage read this
    # Ids in read order: each partition's offset is the number of rows in the partitions before it
    # (one small row per partition; no document reaches the driver).
    counts = fp.groupBy("part").agg(F.count(F.lit(1)).alias("n"))
    w = Window.orderBy("part").rowsBetween(Window.unboundedPreceding, -1)
    offsets = counts.select("part", F.coalesce(F.sum("n").over(w), F.lit(0)).alias("offset"))
    return fp.join(F.broadcast(offsets), "part").select(
        (F.col("offset") + F.col("pos") + F.lit(first_id)).alias("id"), "key", "simhash", "shingles"
    )


def candidate_pairs(fps: Any, k: int, max_bucket: int = DEFAULT_MAX_BUCKET) -> Any:
    """(a, b, hamming): every pair within Hamming k, once, a < b (no Jaccard)."""
    from pyspark.sql import functions as F

    if max_bucket < 1:
        raise ValueError(f"max_bucket must be at least 1, got {max_bucket}")
    blocks = _native().candidate_blocks(k)
    keys = F.array(
        *[
            F.struct(
                F.lit(t).alias("t"),
                F.shiftrightunsigned("simhash", 64 - start - width).bitwiseAND(F.lit((1 << width) - 1)).alias("v"),
            )
            for t, (start, width) in enumerate(blocks)
        ]
    )
    keyed = fps.select("id", "simhash", F.explode(keys).alias("kv")).select("id", "simhash", "kv.t", "kv.v")
    sizes = keyed.groupBy("t", "v").agg(F.count(F.lit(1)).alias("n"))
    # At most (k + 1) * 2^width bucket sizes: for k >= 3 (16-bit blocks or narrower) few enough to
    # broadcast, so the keyed records are shuffled once (to their tasks), not also for this join.
    if (k + 1) << max(w for _, w in blocks) <= 1 << 20:
        sizes = F.broadcast(sizes)
    salted = (
        keyed.join(sizes, ["t", "v"])
        .withColumn("s", F.ceil(F.col("n") / F.lit(max_bucket)).cast("int"))
        .withColumn("sub", F.pmod(F.xxhash64("id"), F.col("s")).cast("int"))
        # A document of sub-bucket `sub` joins every task (min(sub, j), max(sub, j)).
        .withColumn("j", F.explode(F.sequence(F.lit(0), F.col("s") - 1)))
        .select("t", "v", F.least("sub", "j").alias("lo"), F.greatest("sub", "j").alias("hi"), "sub", "id", "simhash")
    )

    def compare(table: Any) -> Any:
        import pyarrow as pa
        import pyarrow.compute as pc

        native = _native()
        t = table.column("t")[0].as_py()
        lo, hi = table.column("lo")[0].as_py(), table.column("hi")[0].as_py()
        if lo == hi:
            a, b, d = native.bucket_pairs(t, k, table.column("id").to_pylist(), table.column("simhash").to_pylist())
        else:
            left = table.filter(pc.equal(table.column("sub"), lo))
            right = table.filter(pc.equal(table.column("sub"), hi))
            a, b, d = native.bucket_pairs(
                t,
                k,
                left.column("id").to_pylist(),
                left.column("simhash").to_pylist(),
                right.column("id").to_pylist(),
                right.column("simhash").to_pylist(),
            )
        return pa.table({"a": pa.array(a, pa.int64()), "b": pa.array(b, pa.int64()), "hamming": pa.array(d, pa.int32())})

    return salted.groupBy("t", "v", "lo", "hi").applyInArrow(compare, "a long, b long, hamming int")


def verify(pairs: Any, fps: Any, min_jaccard: float) -> Any:
    """(a, b, hamming, jaccard) for the pairs with exact Jaccard >= min_jaccard."""
    from pyspark.sql import functions as F

    if not 0.0 <= min_jaccard <= 1.0:
        raise ValueError(f"min_jaccard must be within 0..1, got {min_jaccard}")
    sets = fps.select("id", "shingles")
    joined = (
        pairs.join(sets.withColumnRenamed("id", "a").withColumnRenamed("shingles", "sa"), "a")
        .join(sets.withColumnRenamed("id", "b").withColumnRenamed("shingles", "sb"), "b")
        .select("a", "b", "hamming", "sa", "sb")
    )

    def jaccard_batches(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        native = _native()
        for rb in batches:
            j = native.jaccard_batch(rb.column(3).to_pylist(), rb.column(4).to_pylist())
            yield pa.RecordBatch.from_arrays(
                [rb.column(0), rb.column(1), rb.column(2), pa.array(j, pa.float64())], names=["a", "b", "hamming", "jaccard"]
            )

    scored = joined.mapInArrow(jaccard_batches, "a long, b long, hamming int, jaccard double")
    return scored.where(F.col("jaccard") >= F.lit(min_jaccard))


def components(edges: Any, on_round: Optional[Callable[[int], None]] = None) -> Any:
    """(node, canonical) for every node of the (a, b) edges: connected components by alternating
    large-star and small-star rounds (Kiveris et al. 2014), canonical = smallest id."""
    from pyspark.sql import functions as F

    u, v = F.col("u"), F.col("v")
    e = edges.select(F.greatest("a", "b").alias("u"), F.least("a", "b").alias("v")).where(u != v).distinct()
    e = e.localCheckpoint()
    rounds = 0
    while True:
        rounds += 1
        # Large star: every neighbour v > u of u links to the smallest of u's neighbourhood (u included).
        both = e.unionByName(e.select(v.alias("u"), u.alias("v")))
        low = both.groupBy("u").agg(F.least(F.min("v"), F.col("u")).alias("m"))
        e = both.join(low, "u").where(v > u).select(v.alias("u"), F.col("m").alias("v")).distinct()
        # Small star: u and its smaller neighbours link to the smallest of them.
        low = e.groupBy("u").agg(F.min("v").alias("m"))
        e = (
            e.join(low, "u")
            .select(F.greatest("v", "m").alias("u"), F.least("v", "m").alias("v"))
            .where(u != v)
            .unionByName(low.select("u", F.col("m").alias("v")))
            .distinct()
        )
        e = e.localCheckpoint()
        if on_round:
            on_round(rounds)
        # Done when the edges are stars: each node has one parent and no parent has one.
        parents = e.groupBy("u").agg(F.count(F.lit(1)).alias("n"))
        if parents.where(F.col("n") > 1).isEmpty() and e.select(v.alias("x")).intersect(e.select(u.alias("x"))).isEmpty():
            break
    roots = e.select(v.alias("node"), v.alias("canonical")).distinct()
    return e.select(u.alias("node"), v.alias("canonical")).unionByName(roots)


def groups_of(pairs: Any, fps: Any) -> Any:
    """(group, canonical, size, members) like `fpdb pairs --groups --json`, sorted by group."""
    from pyspark.sql import functions as F

    comp = components(pairs.select("a", "b"))
    keyed = comp.join(fps.select(F.col("id").alias("node"), "key"), "node")
    g = keyed.groupBy("canonical").agg(F.sort_array(F.collect_list(F.struct(F.col("node"), F.col("key")))).alias("m"))
    return g.select(
        F.col("canonical").alias("group"),
        F.col("m")[0]["key"].alias("canonical"),
        F.size("m").alias("size"),
        F.transform("m", lambda x: x["key"]).alias("members"),
    ).orderBy("group")


def with_keys(pairs: Any, fps: Any) -> Any:
    """(a, b, a_id, b_id, hamming, jaccard): the fields of `fpdb pairs --json`, sorted by ids."""
    from pyspark.sql import functions as F

    keys = fps.select("id", "key")
    if "jaccard" not in pairs.columns:
        pairs = pairs.withColumn("jaccard", F.lit(None).cast("double"))
    return (
        pairs.join(keys.select(F.col("id").alias("a"), F.col("key").alias("a_key")), "a")
        .join(keys.select(F.col("id").alias("b"), F.col("key").alias("b_key")), "b")
        .select(
            F.col("a_key").alias("a"),
            F.col("b_key").alias("b"),
            F.col("a").alias("a_id"),
            F.col("b").alias("b_id"),
            "hamming",
            "jaccard",
        )
        .orderBy("a_id", "b_id")
    )


def _write(df: Any, path: Path, fmt: str) -> None:
    w = df.write.mode("overwrite")
    if fmt == "jsonl":
        w.option("ignoreNullFields", "false").json(str(path))
    else:
        w.parquet(str(path))


def _shuffle_stages(spark: Any) -> Optional[list[dict[str, int]]]:
    """Bytes and records each stage of this application wrote to the shuffle (the Spark UI's REST
    API on the driver), or None where the UI is off."""
    url = spark.sparkContext.uiWebUrl
    if not url:
        return None
    try:
        app = spark.sparkContext.applicationId
        with urllib.request.urlopen(f"{url}/api/v1/applications/{app}/stages?details=false", timeout=10) as r:
            stages = json.load(r)
    except (OSError, ValueError):
        return None
    return [
        {"stage": int(s["stageId"]), "bytes": int(s.get("shuffleWriteBytes", 0)), "records": int(s.get("shuffleWriteRecords", 0))}
        for s in sorted(stages, key=lambda s: s["stageId"])
        if s.get("shuffleWriteBytes", 0) > 0
    ]


def run_pairs(
    spark: Any,
    input_path: str,
    out: str,
    *,
    k: int = DEFAULT_K,
    min_jaccard: Optional[float] = None,
    groups: bool = False,
    fmt: str = "parquet",
    max_bucket: int = DEFAULT_MAX_BUCKET,
    spec: Optional[str] = None,
    first_id: Optional[int] = None,
) -> dict[str, Any]:
    """The whole job; returns the summary (also written to OUT/summary.json)."""
    from pyspark.sql import functions as F

    if fmt not in ("parquet", "jsonl"):
        raise ValueError(f"format must be parquet or jsonl, got {fmt!r}")
    t0 = time.time()
    outp = Path(out)
    outp.mkdir(parents=True, exist_ok=True)
    fps = fingerprints(read_documents(spark, input_path), spec, FIRST_ID if first_id is None else first_id)
    fps = fps.localCheckpoint()
    docs = fps.count()
    pairs = candidate_pairs(fps, k, max_bucket)
    if min_jaccard is not None:
        pairs = verify(pairs, fps, min_jaccard)
    pairs = pairs.localCheckpoint()
    _write(with_keys(pairs, fps), outp / "pairs", fmt)
    summary: dict[str, Any] = {"docs": docs, "k": k, "min_jaccard": min_jaccard, "max_bucket": max_bucket}
    # Per-distance and per-Jaccard totals (at most k + 1 and 6 rows), as `fpdb pairs --summary`.
    by_h = {r["value"]: (r["pairs"], r["docs"]) for r in _dist(pairs, F.col("hamming")).collect()}
    summary["pairs"] = sum(p for p, _ in by_h.values())
    summary["by_hamming"] = [
        {"label": str(d), "pairs": by_h.get(d, (0, 0))[0], "docs": by_h.get(d, (0, 0))[1]} for d in range(max([k, *by_h]) + 1)
    ]
    if min_jaccard is not None:
        edges = [1.0001, 0.9, 0.8, 0.7, 0.6, 0.5, 0.0]
        labels = [f"{lo:.1f}-{min(hi, 1.0):.1f}" for hi, lo in zip(edges, edges[1:])]
        band = F.lit(None).cast("string")
        for label, hi, lo in reversed(list(zip(labels, edges, edges[1:]))):
            band = F.when((F.col("jaccard") >= lo) & (F.col("jaccard") < hi), F.lit(label)).otherwise(band)
        by_j = {r["value"]: (r["pairs"], r["docs"]) for r in _dist(pairs, band).collect()}
        summary["by_jaccard"] = [{"label": x, "pairs": by_j.get(x, (0, 0))[0], "docs": by_j.get(x, (0, 0))[1]} for x in labels]
    if groups:
        g = groups_of(pairs, fps).localCheckpoint()
        _write(g, outp / "groups", fmt)
        agg = g.agg(F.count(F.lit(1)).alias("groups"), F.sum("size").alias("grouped_docs")).collect()[0]
        summary["groups"], summary["grouped_docs"] = agg["groups"], int(agg["grouped_docs"] or 0)
    buckets = _bucket_sizes(fps, k, max_bucket)
    summary["largest_bucket"], summary["split_buckets"] = buckets
    summary["seconds"] = round(time.time() - t0, 3)
    summary["docs_per_second"] = round(docs / summary["seconds"], 1) if summary["seconds"] else None
    stages = _shuffle_stages(spark)
    sb = sum(x["bytes"] for x in stages) if stages is not None else None
    summary["shuffle_bytes"] = sb
    summary["shuffle_stages"] = [x for x in stages or [] if sb and x["bytes"] * 100 >= sb]
    summary["shuffle_bytes_per_doc"] = round(sb / docs, 1) if sb is not None and docs else None
    summary["workers"] = _executors(spark)
    (outp / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def _dist(pairs: Any, by: Any) -> Any:
    """(value, pairs, docs) per value of `by`: pair count and distinct documents."""
    from pyspark.sql import functions as F

    p = pairs.withColumn("g", by)
    counts = p.groupBy("g").agg(F.count(F.lit(1)).alias("pairs"))
    docs = (
        p.select("g", F.col("a").alias("d"))
        .unionByName(p.select("g", F.col("b").alias("d")))
        .distinct()
        .groupBy("g")
        .agg(F.count(F.lit(1)).alias("docs"))
    )
    return counts.join(docs, "g").select(F.col("g").alias("value"), "pairs", "docs")


def _bucket_sizes(fps: Any, k: int, max_bucket: int) -> tuple[int, int]:
    """(largest bucket, buckets above max_bucket, which were split): for the summary."""
    from pyspark.sql import functions as F

    blocks = _native().candidate_blocks(k)
    per = []
    for t, (start, width) in enumerate(blocks):
        v = F.shiftrightunsigned("simhash", 64 - start - width).bitwiseAND(F.lit((1 << width) - 1))
        per.append(fps.select(F.lit(t).alias("t"), v.alias("v")))
    allk = per[0]
    for x in per[1:]:
        allk = allk.unionByName(x)
    sizes = allk.groupBy("t", "v").agg(F.count(F.lit(1)).alias("n"))
    r = sizes.agg(F.max("n").alias("mx"), F.sum((F.col("n") > max_bucket).cast("int")).alias("split")).collect()[0]
    return int(r["mx"] or 0), int(r["split"] or 0)


def _executors(spark: Any) -> int:
    """Executors of the application (the driver not counted; local mode: 0)."""
    try:
        infos = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()
        return max(int(infos) - 1, 0)
    except Exception:  # noqa: BLE001 - informational only
        return 0


FIRST_ID = 0
"""The id `fpdb ingest` gives the first document of a new database."""


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fpdb.spark", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pairs", help="every pair within Hamming k (and Jaccard >= T), each once; optionally the groups")
    p.add_argument("input", help="JSONL or Parquet with key and text")
    p.add_argument("--master", default=None, help="Spark master URL (default: spark-submit's, else local[*])")
    p.add_argument("--out", required=True, help="output folder: pairs/, groups/, summary.json")
    p.add_argument("--k", type=int, default=DEFAULT_K, help=f"maximum Hamming distance (default {DEFAULT_K}, as fpdb init)")
    p.add_argument("--min-jaccard", type=float, default=None, help="verify by exact Jaccard and keep pairs >= T")
    p.add_argument("--groups", action="store_true", help="also write the duplicate groups (connected components)")
    p.add_argument("--format", choices=["parquet", "jsonl"], default="parquet")
    p.add_argument("--max-bucket", type=int, default=DEFAULT_MAX_BUCKET, help="split larger buckets into sub-buckets of about B")
    p.add_argument("--shingle", default=None, help='fingerprint spec, e.g. "word:3" (default: fpdb\'s default spec)')
    p.add_argument("--partitions", type=int, default=int(os.environ.get("FPDB_SPARK_PARTITIONS", "8")), help="shuffle partitions")
    a = ap.parse_args(argv)
    if not 0 <= a.k <= 31:
        ap.error(f"--k must be within 0..=31 (k + 1 blocks of the 64-bit SimHash), got {a.k}")
    if a.min_jaccard is not None and not 0.0 <= a.min_jaccard <= 1.0:
        ap.error(f"--min-jaccard must be within 0..1, got {a.min_jaccard}")
    spark = session(a.master, partitions=a.partitions)
    try:
        s = run_pairs(
            spark, a.input, a.out, k=a.k, min_jaccard=a.min_jaccard, groups=a.groups, fmt=a.format, max_bucket=a.max_bucket, spec=a.shingle
        )
    finally:
        spark.stop()
    print(json.dumps(s))
    return 0 if s["pairs"] else 1


if __name__ == "__main__":
    sys.exit(main())
