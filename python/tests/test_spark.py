"""fpdb.spark (local[2]) finds exactly the pairs and groups of `fpdb pairs` on the same corpus:
0 missed, 0 extra, the same Hamming distances and Jaccard values, the same group ids and members;
also when every bucket is split into salted sub-buckets (the skew bound), and from the command line."""

from __future__ import annotations

import json
import os
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
    assert summary["documents"] == N + 6 and summary["pairs"] == len(pairs) and summary["groups"] == len(groups)
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


def messy_corpus() -> list[tuple[str, str]]:
    """Rows `fpdb ingest` refuses (no words, a bad key) and keys given twice (the later text replaces
    the earlier document), among near-duplicates: each refused row would shift later ids, and the
    wordless ones would all pair at distance 0, if the job gave every row an id."""
    docs = corpus(90, seed=9, dup_every=3)
    out: list[tuple[str, str]] = []
    for i, (key, text) in enumerate(docs):
        out.append((key, text))
        if i == 10:
            out += [("empty/1", ""), ("blank/1", "   \n\t  "), ("punct/1", "!!! ... ??? --"), ("", docs[3][1])]
        if i == 40:
            out += [("empty/2", ""), ("k" * (64 * 1024 + 1), docs[7][1])]
        if i == 60:
            # doc/00002 again: now a copy of doc/00050 (its old pairs go, new ones come), and
            # doc/00005 again with its own text (same pairs, a new id).
            out += [("doc/00002", docs[50][1] + " tail"), ("doc/00005", docs[5][1])]
    return out


def test_refused_rows_and_replaced_keys_as_fpdb_ingest(tmp_path, cli_bin, capsys):
    import fpdb.spark as fs

    docs = messy_corpus()
    src = write_jsonl(tmp_path / "messy.jsonl", docs)
    db = tmp_path / "one.fpdb"
    run_cli(cli_bin, "init", str(db))
    run_cli(cli_bin, "ingest", str(db), str(src), "--no-progress", ok=(6,))  # 6: some rows refused
    pairs = run_cli(cli_bin, "pairs", str(db), "-k", str(K), "--min-jaccard", str(T))
    groups = run_cli(cli_bin, "pairs", str(db), "-k", str(K), "--min-jaccard", str(T), "--groups")
    assert any("doc/00002" in (p["a"], p["b"]) for p in pairs)
    out = tmp_path / "out"
    rc = fs.main(["pairs", str(src), "--master", "local[2]", "--out", str(out), "--k", str(K), "--min-jaccard", str(T),
                  "--groups", "--format", "jsonl", "--partitions", "4"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert read_jsonl_dir(out / "pairs") == pairs  # same ids: refused rows took none
    assert read_jsonl_dir(out / "groups") == groups
    assert summary["documents"] == 90 and summary["rejected"] == {"null": 0, "bad_key": 2, "no_words": 4, "replaced": 2}


@pytest.mark.parametrize("k", [0, 32])
def test_k_at_both_ends_equals_fpdb_pairs(truth, cli_bin, k):
    import fpdb.spark as fs

    tmp, src, _, _, _ = truth
    db = tmp / "one.fpdb"
    want = run_cli(cli_bin, "pairs", str(db), "-k", str(k))
    spark = fs.session("local[2]", partitions=4)
    try:
        s = fs.run_pairs(spark, str(src), str(tmp / f"out-k{k}"), k=k, fmt="parquet")
        got = [r.asDict() for r in spark.read.parquet(str(tmp / f"out-k{k}" / "pairs")).orderBy("a_id", "b_id").collect()]
    finally:
        spark.stop()
    assert got == want and s["pairs"] == len(want)
    assert any(r["hamming"] == 0 for r in got)  # the exact copies
    if k == 32:
        assert max(r["hamming"] for r in got) == 32


def test_dataframe_in_dataframe_out(truth):
    """fpdb.spark.pairs / groups over a DataFrame with other column names (and other columns)."""
    import fpdb.spark as fs

    tmp, src, pairs, groups, _ = truth
    rows = [json.loads(x) for x in Path(src).read_text().splitlines()]
    spark = fs.session("local[2]", partitions=4)
    env = dict(os.environ)
    try:
        assert dict(os.environ) == env  # session() leaves the process environment alone
        df = spark.createDataFrame([(r["key"], r["text"], i) for i, r in enumerate(rows)], "id string, body string, n int")
        got = [r.asDict() for r in fs.pairs(df, key_col="id", text_col="body", k=K, min_jaccard=T, mode="exact").collect()]
        got_groups = [r.asDict() for r in fs.groups(df, key_col="id", text_col="body", k=K, min_jaccard=T, mode="exact").collect()]
        with pytest.raises(ValueError, match="no column key, text"):
            fs.pairs(df)
    finally:
        spark.stop()
    assert got == pairs
    assert got_groups == groups


def test_cli_reads_named_fields_and_ignores_others(truth, tmp_path, capsys):
    import fpdb.spark as fs

    _, src, pairs, _, _ = truth
    renamed = tmp_path / "renamed.jsonl"
    renamed.write_text("".join(json.dumps({"meta": {"x": 1}, "body": r["text"], "doc_id": r["key"]}) + "\n"
                               for r in map(json.loads, Path(src).read_text().splitlines())))
    out = tmp_path / "out"
    rc = fs.main(["pairs", str(renamed), "--master", "local[2]", "--out", str(out), "--k", str(K), "--min-jaccard", str(T),
                  "--format", "jsonl", "--partitions", "4", "--key-field", "doc_id", "--text-field", "body"])
    assert rc == 0
    capsys.readouterr()
    assert read_jsonl_dir(out / "pairs") == pairs


def test_minhash_scheme_recall_and_verified_pairs(truth, tmp_path):
    """The minhash scheme on the same corpus: >= 99% of the exact job's pairs, every pair verified
    (its Jaccard the engine's, >= T), the comparisons it made in the summary."""
    import fpdb.spark as fs

    _, src, pairs, _, _ = truth
    spark = fs.session("local[2]", partitions=4)
    try:
        s = fs.run_pairs(spark, str(src), str(tmp_path / "mh"), min_jaccard=T, mode="minhash", fmt="jsonl")
    finally:
        spark.stop()
    got = read_jsonl_dir(tmp_path / "mh" / "pairs")
    exact = {(p["a_id"], p["b_id"]): p for p in pairs}
    found = {(p["a_id"], p["b_id"]): p for p in got}
    assert len(set(exact) & set(found)) >= 0.99 * len(exact)
    assert all(p["jaccard"] >= T for p in got)
    assert all(found[x]["jaccard"] == exact[x]["jaccard"] and found[x]["hamming"] == exact[x]["hamming"] for x in set(exact) & set(found))
    assert s["mode"] == "minhash" and (s["bands"], s["rows"]) == fs.minhash_params(T)
    assert s["documents"] == N + 6 and s["pairs"] == len(got)
    assert len(got) <= s["candidate_comparisons"] < (N + 6) ** 2 / 8


def test_a_python_worker_killed_mid_job_gives_the_same_pairs(truth, tmp_path):
    """The fingerprinting task's Python worker dies once (the failure drill of fpdb.spark); Spark
    runs the task again (local[2,4]: up to 4 attempts) and the job ends with the same pairs."""
    import fpdb.spark as fs

    _, src, pairs, _, _ = truth
    marker = tmp_path / "crashed"
    spark = fs.session("local[2,4]", partitions=4, conf={"spark.executorEnv." + fs.DRILL_CRASH_ONCE: str(marker)})
    try:
        s = fs.run_pairs(spark, str(src), str(tmp_path / "out"), k=K, min_jaccard=T, mode="exact", fmt="jsonl")
    finally:
        spark.stop()
    assert marker.exists()  # a worker did die
    assert read_jsonl_dir(tmp_path / "out" / "pairs") == pairs and s["pairs"] == len(pairs)


def test_a_local_session_starts_its_driver_jvm_with_the_light_options(truth, monkeypatch, tmp_path):
    """The first local session of this process started the JVM with LOCAL_JVM_OPTIONS (every test
    here starts local sessions through fs.session); other masters, a running JVM and driver options
    in PYSPARK_SUBMIT_ARGS are left alone."""
    import fpdb.spark as fs
    from pyspark import SparkContext

    spark = fs.session("local[2]", partitions=4)
    try:
        mx = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
        args = list(mx.getInputArguments())
    finally:
        spark.stop()
    assert set(fs.LOCAL_JVM_OPTIONS.split()) <= set(args), args
    assert not fs._starts_local_jvm("local[2]")  # the JVM runs: its options are fixed
    monkeypatch.setattr(SparkContext, "_gateway", None)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    assert fs._starts_local_jvm("local[2]") and fs._starts_local_jvm(None)
    assert not fs._starts_local_jvm("spark://head:7077")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    (tmp_path / "spark-defaults.conf").write_text("# spark.driver.extraJavaOptions -Dx\nspark.driver.memory 2g\n")
    assert fs._starts_local_jvm("local[2]")
    (tmp_path / "spark-defaults.conf").write_text("spark.driver.extraJavaOptions  -Dfrom.defaults=1\n")
    assert not fs._starts_local_jvm("local[2]")
    monkeypatch.delenv("SPARK_CONF_DIR")
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--driver-java-options -Xmx1g pyspark-shell")
    assert not fs._starts_local_jvm("local[2]")


def test_band_keys_shuffle_in_partitions_sized_by_the_rows(truth, monkeypatch):
    """The band keys' shuffle has at least documents x bands / BAND_ROWS_PER_PARTITION partitions
    (a grouping task holds one partition), and the candidates do not depend on the count."""
    import fpdb.spark as fs

    _, src, _, _, _ = truth
    spark = fs.session("local[2]", partitions=4)
    try:
        bands, rows = fs.minhash_params(T)
        fps, _ = fs.fingerprints(fs.read_documents(spark, str(src)), None, 0, bands, rows, fs.MINHASH_SEED)
        fps = fps.localCheckpoint()
        n = fps.count()
        few, few_sizes = fs.minhash_candidates(fps, n, bands)
        monkeypatch.setattr(fs, "BAND_ROWS_PER_PARTITION", 100)
        many, many_sizes = fs.minhash_candidates(fps)  # documents and bands counted
        want_parts = -(-n * bands // 100)
        got = (sorted(map(tuple, few.collect())), sorted(map(tuple, many.collect())))
        parts = (few_sizes.rdd.getNumPartitions(), many_sizes.rdd.getNumPartitions())
        # Verification with the shingle column filtered to the candidates' documents (a broadcast
        # semi-join, under BROADCAST_CANDIDATES) and without the filter: the same pairs.
        filtered = sorted(map(tuple, fs.verify(few, fps, T, candidates=len(got[0])).collect()))
        whole = sorted(map(tuple, fs.verify(few, fps, T).collect()))
    finally:
        spark.stop()
    assert parts == (4, want_parts) and want_parts > 4
    assert got[0] == got[1] and len(got[0]) > 0
    assert filtered == whole and len(whole) > 0


def test_cli_conf_must_be_key_value(tmp_path, capsys):
    import fpdb.spark as fs

    with pytest.raises(SystemExit) as e:
        fs.main(["pairs", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o"), "--conf", "novalue"])
    assert e.value.code == 2
    assert "--conf takes KEY=VALUE, got 'novalue'" in capsys.readouterr().err


def test_components_on_the_driver_equal_the_distributed_rounds(truth):
    """components() finishing on the driver (the default under LOCAL_COMPONENT_EDGES) and by
    star rounds only (local_edges=0) give the same (node, canonical) as a breadth-first search, on
    the truth corpus's pairs plus a long chain and a star (graphs that take several rounds)."""
    import fpdb.spark as fs

    _, _, pairs, _, _ = truth
    edges = {(p["a_id"], p["b_id"]) for p in pairs}
    edges |= {(1000 + i, 1001 + i) for i in range(40)}  # a chain, numbered so that it needs rounds
    edges |= {(2000, 2001 + i) for i in range(30)} | {(2030, 1040)}  # a star joined to the chain
    adj: dict[int, set[int]] = {}
    for a, b in edges:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    want: dict[int, int] = {}
    for start in sorted(adj):
        if start in want:
            continue
        seen, todo = {start}, [start]
        while todo:
            for y in adj[todo.pop()] - seen:
                seen.add(y)
                todo.append(y)
        for x in seen:
            want[x] = min(seen)
    spark = fs.session("local[2]", partitions=4)
    try:
        df = spark.createDataFrame(sorted(edges), "a long, b long")
        rounds: list[int] = []
        distributed = {r["node"]: r["canonical"] for r in fs.components(df, on_round=rounds.append, local_edges=0).collect()}
        local = {r["node"]: r["canonical"] for r in fs.components(df).collect()}
        none = fs.components(spark.createDataFrame([], "a long, b long")).collect()
    finally:
        spark.stop()
    assert len(rounds) >= 2  # the distributed path did run rounds
    assert distributed == want and local == want
    assert none == []
