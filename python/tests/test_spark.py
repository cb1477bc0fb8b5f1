"""fpdb.spark (local[2]) finds exactly the pairs and groups of `fpdb pairs` on the same corpus:
0 missed, 0 extra, the same Hamming distances and Jaccard values, the same group ids and members;
also when every bucket is split into salted sub-buckets (the skew bound), and from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from conftest import corpus, run_cli, write_jsonl  # noqa: E402

N = 360
K = 12
T = 0.5


def read_jsonl_dir(d: Path) -> list[dict]:
    rows = []
    for part in sorted(d.glob("part-*")):
        rows += [json.loads(x) for x in part.read_text().splitlines() if x.strip()]
    return rows


@pytest.fixture(scope="module")
def truth(tmp_path_factory, cli_bin):
    tmp = tmp_path_factory.mktemp("spark")
    docs = corpus(N, seed=5, dup_every=3)
    # A few exact copies and a cluster sharing one text: many pairs in one bucket.
    docs += [(f"copy/{i}", docs[0][1]) for i in range(6)]
    src = write_jsonl(tmp / "docs.jsonl", docs)
    db = tmp / "one.fpdb"
    run_cli(cli_bin, "init", str(db))
    run_cli(cli_bin, "ingest", str(db), str(src), "--no-progress")
    pairs = run_cli(cli_bin, "pairs", str(db), "-k", str(K), "--min-jaccard", str(T))
    groups = run_cli(cli_bin, "pairs", str(db), "-k", str(K), "--min-jaccard", str(T), "--groups")
    hamming_only = run_cli(cli_bin, "pairs", str(db), "-k", "6")
    assert len(pairs) > N // 4 and len(groups) > 10, "the corpus must have near-duplicates"
    return tmp, src, pairs, groups, hamming_only


def test_cli_jsonl_pairs_and_groups_equal_fpdb_pairs_with_split_buckets(truth, capsys):
    import fpdb.spark as fs

    tmp, src, pairs, groups, _ = truth
    out = tmp / "out-jsonl"
    # `python -m fpdb.spark pairs ...`, in this process (one JVM for the module's tests).
    rc = fs.main(["pairs", str(src), "--master", "local[2]", "--out", str(out), "--k", str(K), "--min-jaccard", str(T),
                  "--groups", "--format", "jsonl", "--max-bucket", "4", "--partitions", "4"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    got_pairs = read_jsonl_dir(out / "pairs")
    got_groups = read_jsonl_dir(out / "groups")
    assert got_pairs == pairs  # same order, keys, ids, distances and Jaccard values
    assert got_groups == groups
    assert summary["docs"] == N + 6 and summary["pairs"] == len(pairs) and summary["groups"] == len(groups)
    # Every bucket above 4 documents was split, and still no pair was missed or doubled.
    assert summary["split_buckets"] > 0 and summary["largest_bucket"] > 4
    assert json.loads((out / "summary.json").read_text())["pairs"] == len(pairs)


def test_parquet_hamming_only_equals_fpdb_pairs(truth):
    from pyspark.sql import SparkSession  # noqa: F401

    import fpdb.spark as fs

    tmp, src, _, _, hamming_only = truth
    spark = fs.session("local[2]", partitions=4)
    try:
        s = fs.run_pairs(spark, str(src), str(tmp / "out-pq"), k=6, fmt="parquet")
        rows = spark.read.parquet(str(tmp / "out-pq" / "pairs")).orderBy("a_id", "b_id").collect()
    finally:
        spark.stop()
    got = [r.asDict() for r in rows]
    assert got == hamming_only
    assert s["pairs"] == len(hamming_only) and s["split_buckets"] == 0
    assert [r["hamming"] for r in got] == [r["hamming"] for r in hamming_only]
