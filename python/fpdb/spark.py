"""All-pairs near-duplicates on Apache Spark (docs/scale-out.md).

    python -m fpdb.spark pairs INPUT [--master URL] --out DIR [--k K] [--min-jaccard T] [--groups]
                               [--exact | --minhash] [--key-field F] [--text-field F]
                               [--format parquet|jsonl] [--max-bucket B] [--bands B --rows R]

    from fpdb import spark as fs
    p = fs.pairs(df, key_col="id", text_col="body", min_jaccard=0.9)   # a DataFrame of pairs
    g = fs.groups(df, key_col="id", text_col="body", min_jaccard=0.9)  # a DataFrame of groups

INPUT is JSONL (one object per line) or Parquet; `--key-field`/`--text-field` name the two fields
it reads (default `key` and `text`; other fields are ignored). Rows are judged as `fpdb ingest`
judges them (a row with no words or a refused key takes no id; a repeated key replaces the earlier
document), and document ids follow the read order (for one file: line order), so `a_id`, `b_id`
and the group ids equal those of `fpdb ingest` + `fpdb pairs` over the same file.

Two candidate schemes, each pair verified by the engine's exact Jaccard where a threshold is set:

- exact (`--exact`; the default below `AUTO_MINHASH_DOCS` documents): every pair within Hamming
  distance k, the answer of `fpdb pairs` pair for pair: the SimHash is cut into k + 1 blocks, one
  shuffle key per (block, value), each bucket compared in the engine (`bucket_pairs`); a bucket of
  more than B documents is split into salted sub-buckets. Its comparisons per document grow with n.
- minhash (`--minhash`; the default from `AUTO_MINHASH_DOCS` documents): MinHash bands over the
  same shingle sets (`minhash_params`: `bands` keys of `rows` min-hashes each, chosen so a pair at
  Jaccard T shares a band with probability >= 0.99); documents sharing a band key are candidates,
  verified by exact Jaccard >= T (default T: 0.9, a database's default). Comparisons per document
  stay flat as n grows; the pairs are those of Jaccard >= T (with their Hamming distance, which may
  exceed k).

Output under DIR: `pairs/` (a, b, a_id, b_id, hamming, jaccard: the fields of `fpdb pairs --json`),
`groups/` (group, canonical, size, members: those of `fpdb pairs --groups --json`) and
`summary.json` (documents, candidate_comparisons, pairs, ...).
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
MAX_K = 32
"""The largest distance of a database (`fpdb init --max-distance`); k + 1 blocks of at least 1 bit."""
DEFAULT_MAX_BUCKET = 20000
"""Largest sub-bucket: a task compares at most about 2 x this many documents."""
AUTO_MINHASH_DOCS = 100_000
"""From this many documents the default scheme is minhash: there the exact scheme's comparisons
(44% of all pairs at k = 12) pass those of minhash by orders of magnitude (docs/scale-out.md)."""
MINHASH_MIN_JACCARD = 0.9
"""The threshold of the minhash scheme when none is given: a database's default (`fpdb init`)."""
MINHASH_RECALL_AT_T = 0.99
"""The probability that a pair of Jaccard exactly T shares a band (pairs above T: higher)."""
MINHASH_SEED = 0
"""The seed of the MinHash coefficients (python/src/scale.rs)."""


def minhash_params(t: float, recall: float = MINHASH_RECALL_AT_T) -> tuple[int, int]:
    """(bands, rows) for threshold t: rows = max(5, round(log 0.5 / log t)) (a pair at t agrees on
    a band with probability about 1/2 from t = 0.87; never fewer than 5 rows, so unrelated documents
    rarely share a band), and the fewest bands with 1 - (1 - t^rows)^bands >= recall."""
    if not 0.0 < t < 1.0:
        if t >= 1.0:
            return 1, 8
        raise ValueError(f"the minhash scheme needs a threshold within (0, 1], got {t}")
    rows = max(5, round(math.log(0.5) / math.log(t)))
    p = t**rows
    bands = max(1, math.ceil(math.log(1.0 - recall) / math.log(1.0 - p)))
    return bands, rows


def _native() -> Any:
    from fpdb import _fpdb  # absolute: this file also runs as a script under spark-submit

    return _fpdb


LOCAL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""The driver JVM's options when this process starts a local-mode Spark (its driver is then the
only JVM; the heavy work is in the Python workers and the engine): the client compiler only and the
serial collector. A local[2] job's CPU on the 2-core dev box (docs/scale-out.md): 204,000 passages
47.1 CPU-s with the JVM's defaults, 43.2 with the serial collector, 29.6 with both options; 816,000
passages 87.2, 78.1, 80.9 (past about a million documents the optimizing compiler's faster code
repays its compile time: pass `--conf spark.driver.extraJavaOptions=-XX:+UseSerialGC` there)."""


def _starts_local_jvm(master: Optional[str]) -> bool:
    """Whether `session` would start a local-mode driver JVM whose options are still open: the
    master is local (or unset, which is local[*] outside spark-submit), no JVM is running in this
    process, and neither PYSPARK_SUBMIT_ARGS nor spark-defaults.conf sets the driver's Java
    options."""
    if master is not None and not master.startswith("local"):
        return False
    from pyspark import SparkContext

    if getattr(SparkContext, "_gateway", None) is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return False  # a JVM is running already (this process's, or spark-submit's)
    submit = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    if "extraJavaOptions" in submit or "--driver-java-options" in submit:
        return False
    return not _defaults_set("spark.driver.extraJavaOptions")


def _defaults_set(key: str) -> bool:
    """Whether spark-defaults.conf (in $SPARK_CONF_DIR, else $SPARK_HOME/conf) sets `key`."""
    import re

    conf_dir = os.environ.get("SPARK_CONF_DIR") or (os.path.join(os.environ["SPARK_HOME"], "conf") if os.environ.get("SPARK_HOME") else None)
    if not conf_dir:
        return False
    try:
        text = Path(conf_dir, "spark-defaults.conf").read_text(errors="replace")
    except OSError:
        return False
    return any(re.match(rf"\s*{re.escape(key)}[\s=:]", line) for line in text.splitlines())


def session(master: Optional[str] = None, app: str = "fpdb-pairs", partitions: int = 8, conf: Optional[dict[str, str]] = None) -> Any:
    """A SparkSession whose Python workers run this interpreter (so they import this fpdb build)."""
    from pyspark.sql import SparkSession

    # The Python workers run this interpreter (the environment that has fpdb, pyarrow and pandas),
    # and the driver binds to $SPARK_LOCAL_IP, else loopback (set through the session's
    # configuration: the process environment is left alone).
    host = os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")
    b = SparkSession.builder.appName(app)
    if master:
        b = b.master(master)
    settings = {
        "spark.sql.shuffle.partitions": str(partitions),
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": host,
        "spark.driver.bindAddress": host,
    }
    if _starts_local_jvm(master) and "spark.driver.extraJavaOptions" not in (conf or {}):
        settings["spark.driver.extraJavaOptions"] = LOCAL_JVM_OPTIONS
    settings.update(conf or {})
    for k, v in settings.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    # PySpark takes the workers' interpreter from $PYSPARK_PYTHON when the context starts (else
    # "python3", which may lack pyarrow and this fpdb); without it, this context's functions name
    # this interpreter, and the process environment stays as it was.
    if "PYSPARK_PYTHON" not in os.environ:
        spark.sparkContext.pythonExec = settings["spark.pyspark.python"]
    return spark


def read_documents(spark: Any, path: str, key_field: str = "key", text_field: str = "text") -> Any:
    """INPUT as a DataFrame of (key, text): Parquet by suffix or folder of .parquet files, else
    JSONL; the two named fields are read, every other one ignored."""
    p = Path(path)
    parquet = p.suffix == ".parquet" or (p.is_dir() and any(x.suffix == ".parquet" for x in p.iterdir()))
    if parquet:
        df = spark.read.parquet(path)
    else:
        df = spark.read.schema(f"`{key_field}` string, `{text_field}` string").json(path)
    return _key_text(df, key_field, text_field, path)


def _key_text(df: Any, key_col: str, text_col: str, what: str = "the DataFrame") -> Any:
    """The (key, text) columns of df, by name."""
    from pyspark.sql import functions as F

    missing = [c for c in (key_col, text_col) if c not in df.columns]
    if missing:
        raise ValueError(f"{what}: no column {', '.join(missing)} (columns: {', '.join(df.columns)}); name the key and text columns")
    return df.select(F.col(f"`{key_col}`").cast("string").alias("key"), F.col(f"`{text_col}`").cast("string").alias("text"))


REJECTED = {1: "null", 2: "bad_key", 3: "no_words"}
"""Why `fpdb ingest` refuses a row (the status of `prepare_batch`): a null key or text, a key the
library refuses (empty, over MAX_KEY_BYTES), a text with no shingles. A refused row takes no id."""


def _buffers(arr: Any) -> tuple[int, int, Optional[bytes], bytes, bytes, bool]:
    """A string or binary Arrow array as the buffers the engine reads (python/src/scale.rs StrCol)."""
    import pyarrow as pa

    t = arr.type
    large = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
    if not (large or pa.types.is_string(t) or pa.types.is_binary(t)):
        arr = arr.cast(pa.string())
    validity, offsets, data = arr.buffers()[:3]
    return (
        arr.offset,
        len(arr),
        validity.to_pybytes() if validity is not None and arr.null_count else None,
        offsets.to_pybytes(),
        data.to_pybytes() if data is not None else b"",
        large,
    )


def fingerprints(docs: Any, spec: Optional[str] = None, first_id: int = 0, bands: int = 0, rows: int = 0, seed: int = 0) -> tuple[Any, dict[str, int]]:
    """((id, key, simhash, shingles[, bands]) per live document, {reason: rows refused}): the
    engine's fingerprints, with the ids `fpdb ingest` gives the same rows in read order. A row
    `fpdb ingest` refuses (`REJECTED`) takes no id; a key seen again replaces its earlier document
    (which keeps its id, so later ids do not move, but is no longer live)."""
    live, rejected, _ = _fingerprints(docs, spec, first_id, bands, rows, seed)
    return live, rejected


def _fingerprints(docs: Any, spec: Optional[str], first_id: int, bands: int, rows: int, seed: int) -> tuple[Any, dict[str, int], int]:
    """`fingerprints` and the number of live documents, from the per-partition counts the ids are
    made from (no Spark action of its own)."""
    from pyspark.sql import functions as F

    band_type = ", bands array<long>" if bands else ""

    def prepare(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.compute as pc
        from pyspark import TaskContext

        native = _native()
        ctx = TaskContext.get()
        part = ctx.partitionId() if ctx else 0
        pos = 0
        _drill_crash_once()
        for rb in batches:
            keys, texts = rb.column(0), rb.column(1)
            st, fps, offs, data, bk = native.prepare_batch(_buffers(keys), _buffers(texts), spec, bands, rows, seed)
            status = pa.Array.from_buffers(pa.uint8(), len(st), [None, pa.py_buffer(st)])
            ok = pc.equal(status, 0)
            m = len(fps) // 8
            cols = [
                pa.array([part] * m, pa.int32()),
                pa.array(range(pos, pos + m), pa.int64()),
                pa.array([0] * m, pa.int8()),
                keys.filter(ok),
                pa.Array.from_buffers(pa.int64(), m, [None, pa.py_buffer(fps)]),
                pa.Array.from_buffers(pa.binary(), m, [None, pa.py_buffer(offs), pa.py_buffer(data)]),
            ]
            names = ["part", "pos", "status", "key", "simhash", "shingles"]
            if bands:
                flat = pa.Array.from_buffers(pa.int64(), m * bands, [None, pa.py_buffer(bk)])
                cols.append(pa.ListArray.from_arrays(pa.array(range(0, m * bands + 1, bands), pa.int32()), flat))
                names.append("bands")
            yield pa.RecordBatch.from_arrays(cols, names=names)
            pos += m
            if m < len(st):  # the refused rows: their reasons only (counted by the driver)
                bad = pc.invert(ok)
                r = len(st) - m
                rej = [
                    pa.array([part] * r, pa.int32()),
                    pa.array([-1] * r, pa.int64()),
                    status.filter(bad).cast(pa.int8()),
                    keys.filter(bad),
                    pa.nulls(r, pa.int64()),
                    pa.nulls(r, pa.binary()),
                ]
                if bands:
                    rej.append(pa.nulls(r, pa.list_(pa.int64())))
                yield pa.RecordBatch.from_arrays(rej, names=names)

    schema = f"part int, pos long, status byte, key string, simhash long, shingles binary{band_type}"
    fp = docs.mapInArrow(prepare, schema).localCheckpoint()  # fingerprint once: every later stage reads this
    by_part: dict[int, int] = {}
    rejected = {v: 0 for v in REJECTED.values()}
    for r in fp.groupBy("part", "status").agg(F.count(F.lit(1)).alias("n")).collect():  # one row per partition and reason
        if r["status"] == 0:
            by_part[r["part"]] = r["n"]
        else:
            rejected[REJECTED[r["status"]]] += r["n"]
    # Ids in read order: each partition's offset is the number of accepted rows before it.
    offsets, total = [], 0
    for p in range(max(by_part, default=-1) + 1):
        offsets.append(total)
        total += by_part.get(p, 0)
    off = F.element_at(F.array(*[F.lit(o) for o in offsets] or [F.lit(0)]).cast("array<long>"), F.col("part") + 1)
    cols = [(off + F.col("pos") + F.lit(first_id)).alias("id"), "key", "simhash", "shingles"] + (["bands"] if bands else [])
    acc = fp.where(F.col("status") == 0).select(*cols)
    # A repeated key: the last row is the live document (`fpdb ingest` replaces the earlier ones).
    repeated = acc.groupBy("key").agg(F.count(F.lit(1)).alias("n"), F.max("id").alias("keep")).where(F.col("n") > 1)
    dead = acc.select("id", "key").join(repeated, "key").where(F.col("id") != F.col("keep")).select("id").localCheckpoint()
    rejected["replaced"] = dead.count()
    # The accepted rows are a filter and a projection of the checkpoint (cheap to read again);
    # after the anti-join with replaced keys they are checkpointed once more.
    live = acc.join(dead, "id", "left_anti").localCheckpoint() if rejected["replaced"] else acc
    return live, rejected, total - rejected["replaced"]


DRILL_CRASH_ONCE = "FPDB_SPARK_DRILL_CRASH_ONCE"
"""Failure drill: where the executors' environment names a file here (`spark.executorEnv.` + this)
and the file does not exist, the first fingerprinting task to start creates it and ends its
Python worker at once (Spark runs the task again where task retries are allowed)."""


def _drill_crash_once() -> None:
    marker = os.environ.get(DRILL_CRASH_ONCE)
    if not marker:
        return
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return
    os._exit(3)


def _block(col: str, start: int, width: int) -> Any:
    """Block `(start, width)` of a signed 64-bit SimHash column (a 64-bit block is the value itself)."""
    from pyspark.sql import functions as F

    v = F.shiftrightunsigned(col, 64 - start - width)
    return v if width == 64 else v.bitwiseAND(F.lit((1 << width) - 1))


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
                _block("simhash", start, width).alias("v"),
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


BAND_ROWS_PER_PARTITION = 8_000_000
"""Most (band key, id) rows a band-grouping task holds (~16 bytes each, plus Arrow's hash table):
the band keys' shuffle has at least documents × bands / this many partitions."""


def minhash_candidates(fps: Any, documents: Optional[int] = None, bands: Optional[int] = None) -> tuple[Any, Any]:
    """((a, b) candidate pairs, a < b, each once; (size) of every band bucket of two or more
    documents): documents sharing at least one MinHash band key (the `bands` column of
    `fingerprints`). `documents` (the rows of fps) and `bands` (keys per row) size the shuffle;
    they are counted here when not given."""
    from pyspark.sql import functions as F

    n = fps.count() if documents is None else documents
    if bands is None:
        bands = (fps.select(F.max(F.size("bands"))).first()[0] or 0) if n else 0
    parts = max(int(fps.sparkSession.conf.get("spark.sql.shuffle.partitions")), -(-n * bands // BAND_ROWS_PER_PARTITION), 1)
    # Band keys carry the band's number (scale.rs), so one key column serves every band. Each
    # shuffle partition's keys are grouped in one vectorized pass (Arrow's hash aggregation) rather
    # than by Spark's row-at-a-time collect_list; a task holds one partition's rows.
    keyed = fps.select("id", F.explode("bands").alias("bk")).repartition(parts, "bk")
    buckets = keyed.mapInArrow(_band_buckets, "bk long, ids array<long>").localCheckpoint()
    pairs = (
        buckets.select(F.explode("ids").alias("a"), "ids")
        .select("a", F.explode("ids").alias("b"))
        .where(F.col("a") < F.col("b"))
        .distinct()
    )
    return pairs, buckets.select(F.size("ids").alias("size"))


def _band_buckets(batches: Iterator[Any]) -> Iterator[Any]:
    """(bk, ids) of every band key shared by two or more documents among one partition's (id, bk)
    rows (a partition holds every row of its keys)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    got = list(batches)
    if not got:
        return
    g = pa.Table.from_batches(got).group_by("bk").aggregate([("id", "list")])
    g = g.filter(pc.greater(pc.list_value_length(g["id_list"]), 1))
    yield from pa.table({"bk": g["bk"], "ids": g["id_list"]}).to_batches()


BROADCAST_CANDIDATES = 2_000_000
"""Most candidate pairs whose document ids `verify` broadcasts to filter the shingle column before
its shuffle (at most twice as many ids, 8 bytes each)."""


def verify(pairs: Any, fps: Any, min_jaccard: float, candidates: Optional[int] = None) -> Any:
    """(a, b, hamming, jaccard) for the pairs with exact Jaccard >= min_jaccard (`hamming` from the
    SimHashes where the pairs do not carry it). With `candidates` (the pairs' count) at most
    BROADCAST_CANDIDATES, only the sets of the documents in a pair are shuffled into the joins."""
    from pyspark.sql import functions as F

    if not 0.0 <= min_jaccard <= 1.0:
        raise ValueError(f"min_jaccard must be within 0..1, got {min_jaccard}")
    sets = fps.select("id", "simhash", "shingles")
    if candidates is not None and candidates <= BROADCAST_CANDIDATES:
        ids = pairs.select(F.col("a").alias("id")).unionByName(pairs.select(F.col("b").alias("id"))).distinct()
        sets = sets.join(F.broadcast(ids), "id", "left_semi")
    joined = pairs.join(sets.select(F.col("id").alias("a"), F.col("simhash").alias("ha"), F.col("shingles").alias("sa")), "a").join(
        sets.select(F.col("id").alias("b"), F.col("simhash").alias("hb"), F.col("shingles").alias("sb")), "b"
    )
    if "hamming" not in pairs.columns:
        joined = joined.withColumn("hamming", F.bit_count(F.col("ha").bitwiseXOR(F.col("hb"))).cast("int"))
    joined = joined.select("a", "b", "hamming", "sa", "sb")

    def jaccard_batches(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        native = _native()
        for rb in batches:
            j = native.jaccard_buffers(rb.num_rows, _buffers(rb.column(3)), _buffers(rb.column(4)))
            yield pa.RecordBatch.from_arrays(
                [rb.column(0), rb.column(1), rb.column(2), pa.Array.from_buffers(pa.float64(), rb.num_rows, [None, pa.py_buffer(j)])],
                names=["a", "b", "hamming", "jaccard"],
            )

    scored = joined.mapInArrow(jaccard_batches, "a long, b long, hamming int, jaccard double")
    return scored.where(F.col("jaccard") >= F.lit(min_jaccard))


LOCAL_COMPONENT_EDGES = 1_000_000
"""Edges at or below which `components` finishes on the driver (union-find over the collected
edges, ~16 bytes an edge) instead of another distributed round: a round is several Spark jobs,
which on small graphs cost more than the whole graph does locally."""


def components(edges: Any, on_round: Optional[Callable[[int], None]] = None, local_edges: int = LOCAL_COMPONENT_EDGES) -> Any:
    """(node, canonical) for every node of the (a, b) edges: connected components by alternating
    large-star and small-star rounds (Kiveris et al. 2014), canonical = smallest id; once at most
    `local_edges` edges remain, the rest on the driver by union-find."""
    from pyspark.sql import functions as F

    u, v = F.col("u"), F.col("v")
    e = edges.select(F.greatest("a", "b").alias("u"), F.least("a", "b").alias("v")).where(u != v).distinct()
    e = e.localCheckpoint()
    rounds = 0
    while True:
        if e.count() <= local_edges:
            return _components_local(e)
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


def _components_local(e: Any) -> Any:
    """`components` of the (u, v) edges e, computed on the driver: union-find whose root is the
    smallest id."""
    import pyarrow as pa

    t = e.toArrow()
    parent: dict[int, int] = {}

    def root(x: int) -> int:
        r = parent.setdefault(x, x)
        while r != parent[r]:
            r = parent[r]
        while parent[x] != r:  # path compression
            parent[x], x = r, parent[x]
        return r

    for a, b in zip(t.column("u").to_pylist(), t.column("v").to_pylist()):
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    nodes = sorted(parent)
    table = pa.table({"node": pa.array(nodes, pa.int64()), "canonical": pa.array([root(x) for x in nodes], pa.int64())})
    return e.sparkSession.createDataFrame(table)


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


def _stages(spark: Any) -> Optional[list[dict[str, Any]]]:
    """Each stage of this application (the Spark UI's REST API on the driver): its name (the call
    site), task run time and JVM CPU time in seconds (a Python worker's time is in the run time,
    not the CPU time), shuffle bytes and records written; None where the UI is off."""
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
        {
            "stage": int(s["stageId"]),
            "name": str(s.get("name", "")).split(" at ")[0],
            "run_s": round(int(s.get("executorRunTime", 0)) / 1000, 2),
            "jvm_cpu_s": round(int(s.get("executorCpuTime", 0)) / 1e9, 2),
            "bytes": int(s.get("shuffleWriteBytes", 0)),
            "records": int(s.get("shuffleWriteRecords", 0)),
        }
        for s in sorted(stages, key=lambda s: s["stageId"])
        if s.get("status") == "COMPLETE"
    ]


class Job:
    """One run of the pipeline over a DataFrame of (key, text): `fps` (the live documents' ids,
    keys and fingerprints), `pairs` (a, b, hamming, jaccard by id; checkpointed) and `summary`."""

    def __init__(
        self,
        docs: Any,
        *,
        k: int = DEFAULT_K,
        min_jaccard: Optional[float] = None,
        mode: str = "auto",
        bands: Optional[int] = None,
        rows: Optional[int] = None,
        max_bucket: int = DEFAULT_MAX_BUCKET,
        spec: Optional[str] = None,
        first_id: int = 0,
    ):
        from pyspark.sql import functions as F

        if mode not in ("auto", "exact", "minhash"):
            raise ValueError(f"mode must be auto, exact or minhash, got {mode!r}")
        if not 0 <= k <= MAX_K:
            raise ValueError(f"k must be within 0..={MAX_K}, got {k}")
        if min_jaccard is not None and not 0.0 <= min_jaccard <= 1.0:
            raise ValueError(f"min_jaccard must be within 0..1, got {min_jaccard}")
        t0 = time.time()
        t = MINHASH_MIN_JACCARD if min_jaccard is None else min_jaccard
        if mode != "exact" and (bands is None or rows is None):
            bands, rows = minhash_params(t)
        if mode != "exact" and (bands < 1 or rows < 1):
            raise ValueError(f"bands and rows must be at least 1, got {bands} x {rows}")
        # The band keys are made in the fingerprinting pass unless the scheme is known to be exact
        # (under "auto" too: the document count that decides comes from that pass).
        fps, rejected, n = _fingerprints(docs, spec, first_id, *((bands, rows, MINHASH_SEED) if mode != "exact" else (0, 0, 0)))
        self.fps = fps
        if mode == "auto":
            mode = "minhash" if n >= AUTO_MINHASH_DOCS else "exact"
        s: dict[str, Any] = {"documents": n, "rejected": rejected, "mode": mode, "k": k}
        if mode == "exact":
            cand = candidate_pairs(self.fps, k, max_bucket)
            largest, split, comparisons = _bucket_sizes(self.fps, k, max_bucket)
            s.update(largest_bucket=largest, split_buckets=split, candidate_comparisons=comparisons, max_bucket=max_bucket)
        else:
            min_jaccard = t
            cand, sizes = minhash_candidates(self.fps, n, bands)
            cand = cand.localCheckpoint()
            st = sizes.agg(
                F.sum(F.col("size") * (F.col("size") - 1) / 2).alias("c"), F.max("size").alias("mx"), F.count(F.lit(1)).alias("nb")
            ).collect()[0]
            s.update(
                bands=bands, rows=rows, seed=MINHASH_SEED, band_collisions=int(st["c"] or 0), largest_bucket=int(st["mx"] or 0),
                candidate_comparisons=cand.count(),
            )
        s["min_jaccard"] = min_jaccard
        known = s["candidate_comparisons"] if mode == "minhash" else None
        self.pairs = (verify(cand, self.fps, min_jaccard, known) if min_jaccard is not None else cand).localCheckpoint()
        s["comparisons_per_doc"] = round(s["candidate_comparisons"] / n, 4) if n else None
        self.summary = s
        self.t0 = t0


def pairs(df: Any, key_col: str = "key", text_col: str = "text", **options: Any) -> Any:
    """The near-duplicate pairs of a DataFrame's documents: a DataFrame of (a, b, a_id, b_id,
    hamming, jaccard), the fields of `fpdb pairs --json`, sorted by ids. `options` are Job's (k,
    min_jaccard, mode, bands, rows, max_bucket, spec, first_id)."""
    job = Job(_key_text(df, key_col, text_col), **options)
    return with_keys(job.pairs, job.fps)


def groups(df: Any, key_col: str = "key", text_col: str = "text", **options: Any) -> Any:
    """The duplicate groups of a DataFrame's documents: a DataFrame of (group, canonical, size,
    members), those of `fpdb pairs --groups --json`. `options` as `pairs`."""
    job = Job(_key_text(df, key_col, text_col), **options)
    return groups_of(job.pairs, job.fps)


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
    mode: str = "auto",
    bands: Optional[int] = None,
    rows: Optional[int] = None,
    key_field: str = "key",
    text_field: str = "text",
) -> dict[str, Any]:
    """The whole job over INPUT; returns the summary (also written to OUT/summary.json)."""
    from pyspark.sql import functions as F

    if fmt not in ("parquet", "jsonl"):
        raise ValueError(f"format must be parquet or jsonl, got {fmt!r}")
    outp = Path(out)
    outp.mkdir(parents=True, exist_ok=True)
    job = Job(
        read_documents(spark, input_path, key_field, text_field), k=k, min_jaccard=min_jaccard, mode=mode, bands=bands, rows=rows,
        max_bucket=max_bucket, spec=spec, first_id=FIRST_ID if first_id is None else first_id,
    )
    pairs_, fps, summary = job.pairs, job.fps, job.summary
    docs = summary["documents"]
    _write(with_keys(pairs_, fps), outp / "pairs", fmt)
    # Per-distance and per-Jaccard totals, as `fpdb pairs --summary`.
    by_h = {r["value"]: (r["pairs"], r["docs"]) for r in _dist(pairs_, F.col("hamming")).collect()}
    summary["pairs"] = sum(p for p, _ in by_h.values())
    summary["by_hamming"] = [
        {"label": str(d), "pairs": by_h.get(d, (0, 0))[0], "docs": by_h.get(d, (0, 0))[1]} for d in range(max([k, *by_h]) + 1)
    ]
    if summary["min_jaccard"] is not None:
        edges = [1.0001, 0.9, 0.8, 0.7, 0.6, 0.5, 0.0]
        labels = [f"{lo:.1f}-{min(hi, 1.0):.1f}" for hi, lo in zip(edges, edges[1:])]
        band = F.lit(None).cast("string")
        for label, hi, lo in reversed(list(zip(labels, edges, edges[1:]))):
            band = F.when((F.col("jaccard") >= lo) & (F.col("jaccard") < hi), F.lit(label)).otherwise(band)
        by_j = {r["value"]: (r["pairs"], r["docs"]) for r in _dist(pairs_, band).collect()}
        summary["by_jaccard"] = [{"label": x, "pairs": by_j.get(x, (0, 0))[0], "docs": by_j.get(x, (0, 0))[1]} for x in labels]
    if groups:
        g = groups_of(pairs_, fps).localCheckpoint()
        _write(g, outp / "groups", fmt)
        agg = g.agg(F.count(F.lit(1)).alias("groups"), F.sum("size").alias("grouped_docs")).collect()[0]
        summary["groups"], summary["grouped_docs"] = agg["groups"], int(agg["grouped_docs"] or 0)
    summary["seconds"] = round(time.time() - job.t0, 3)
    summary["docs_per_second"] = round(docs / summary["seconds"], 1) if summary["seconds"] else None
    stages = _stages(spark)
    sb = sum(x["bytes"] for x in stages) if stages is not None else None
    summary["shuffle_bytes"] = sb
    summary["shuffle_stages"] = [x for x in stages or [] if sb and x["bytes"] * 100 >= sb]
    run = sum(x["run_s"] for x in stages or [])
    summary["task_seconds"] = round(run, 2)
    # Where the task time went (the profile of docs/scale-out.md): stages of >= 2% of it.
    summary["stages"] = [x for x in stages or [] if run and x["run_s"] * 50 >= run]
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


def _bucket_sizes(fps: Any, k: int, max_bucket: int) -> tuple[int, int, int]:
    """(largest bucket, buckets above max_bucket (which were split), pair comparisons of all
    buckets): for the summary."""
    from pyspark.sql import functions as F

    blocks = _native().candidate_blocks(k)
    per = []
    for t, (start, width) in enumerate(blocks):
        v = _block("simhash", start, width)
        per.append(fps.select(F.lit(t).alias("t"), v.alias("v")))
    allk = per[0]
    for x in per[1:]:
        allk = allk.unionByName(x)
    sizes = allk.groupBy("t", "v").agg(F.count(F.lit(1)).alias("n"))
    r = sizes.agg(
        F.max("n").alias("mx"), F.sum((F.col("n") > max_bucket).cast("int")).alias("split"), F.sum(F.col("n") * (F.col("n") - 1) / 2).alias("c")
    ).collect()[0]
    return int(r["mx"] or 0), int(r["split"] or 0), int(r["c"] or 0)


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
    p = sub.add_parser("pairs", help="near-duplicate pairs (verified by exact Jaccard >= T where given); optionally the groups")
    p.add_argument("input", help="JSONL or Parquet with a key and a text field")
    p.add_argument("--master", default=None, help="Spark master URL (default: spark-submit's, else local[*])")
    p.add_argument("--out", required=True, help="output folder: pairs/, groups/, summary.json")
    p.add_argument("--key-field", default="key", help="the input's key field (default key)")
    p.add_argument("--text-field", default="text", help="the input's text field (default text)")
    p.add_argument("--k", type=int, default=DEFAULT_K, help=f"exact scheme: maximum Hamming distance (default {DEFAULT_K}, as fpdb init)")
    p.add_argument("--min-jaccard", type=float, default=None, help=f"verify by exact Jaccard and keep pairs >= T (minhash: default {MINHASH_MIN_JACCARD})")
    scheme = p.add_mutually_exclusive_group()
    scheme.add_argument("--exact", dest="mode", action="store_const", const="exact", help="every pair within Hamming k: the answer of fpdb pairs")
    scheme.add_argument("--minhash", dest="mode", action="store_const", const="minhash", help="MinHash bands: comparisons per document flat in n")
    p.add_argument("--bands", type=int, default=None, help="minhash: bands (default from T: minhash_params)")
    p.add_argument("--rows", type=int, default=None, help="minhash: rows per band (default from T)")
    p.add_argument("--groups", action="store_true", help="also write the duplicate groups (connected components)")
    p.add_argument("--format", choices=["parquet", "jsonl"], default="parquet")
    p.add_argument("--max-bucket", type=int, default=DEFAULT_MAX_BUCKET, help="exact: split larger buckets into sub-buckets of about B")
    p.add_argument("--shingle", default=None, help='fingerprint spec, e.g. "word:3" (default: fpdb\'s default spec)')
    p.add_argument("--partitions", type=int, default=int(os.environ.get("FPDB_SPARK_PARTITIONS", "8")), help="shuffle partitions")
    p.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE",
        help="a Spark setting, as spark-submit's --conf (repeatable); a local run's driver JVM gets "
        f"spark.driver.extraJavaOptions={LOCAL_JVM_OPTIONS!r} unless set here",
    )
    a = ap.parse_args(argv)
    conf = {}
    for kv in a.conf:
        key, eq, value = kv.partition("=")
        if not eq or not key:
            ap.error(f"--conf takes KEY=VALUE, got {kv!r}")
        conf[key] = value
    if not 0 <= a.k <= MAX_K:
        ap.error(f"--k must be within 0..={MAX_K} (as fpdb pairs), got {a.k}")
    if a.min_jaccard is not None and not 0.0 <= a.min_jaccard <= 1.0:
        ap.error(f"--min-jaccard must be within 0..1, got {a.min_jaccard}")
    if (a.bands is None) != (a.rows is None):
        ap.error("--bands and --rows go together")
    spark = session(a.master, partitions=a.partitions, conf=conf)
    try:
        s = run_pairs(
            spark, a.input, a.out, k=a.k, min_jaccard=a.min_jaccard, groups=a.groups, fmt=a.format, max_bucket=a.max_bucket,
            spec=a.shingle, mode=a.mode or "auto", bands=a.bands, rows=a.rows, key_field=a.key_field, text_field=a.text_field,
        )
    finally:
        spark.stop()
    print(json.dumps(s))
    return 0 if s["pairs"] else 1


if __name__ == "__main__":
    sys.exit(main())
