"""The binding gives the same results as the `fpdb` CLI on the same data: ingest, insert, query,
get, stats, pairs, export (fingerprints)."""

from __future__ import annotations

import json

import pytest

import fpdb
from conftest import corpus, run_cli, write_jsonl

N = 300
BATCH = 64


def cli_outcome(o: fpdb.InsertOutcome) -> dict:
    """An InsertOutcome in the shape `fpdb --json insert/ingest` prints."""
    g = o.group
    return {
        "key": o.key,
        "id": o.id,
        "stored": o.stored,
        "replaced": o.replaced,
        "duplicates": [h.to_dict() for h in o.duplicates],
        "group": g.id if g else None,
        "canonical": g.canonical if g else None,
        "group_size": g.size if g else None,
    }


@pytest.fixture(scope="module")
def pair(tmp_path_factory, cli_bin):
    """The same corpus ingested by the CLI into one database and by the binding into another."""
    tmp = tmp_path_factory.mktemp("parity")
    docs = corpus(N)
    jsonl = write_jsonl(tmp / "docs.jsonl", docs, extra=lambda i: {"source": "s%d" % (i % 3), "n": i})
    cli_db = tmp / "cli.fpdb"
    run_cli(cli_bin, "init", str(cli_db), "--max-distance", "10", "--min-jaccard", "0.8")
    cli_results = run_cli(cli_bin, "ingest", str(cli_db), str(jsonl), "--batch-size", str(BATCH), "--quiet")
    py_db = fpdb.Db.create(tmp / "py.fpdb", max_distance=10, min_jaccard=0.8)
    items = ({"key": k, "text": t, "source": "s%d" % (i % 3), "n": i} for i, (k, t) in enumerate(docs))
    py_results = list(py_db.ingest(items, batch_size=BATCH))
    yield docs, cli_bin, cli_db, cli_results, py_db, py_results
    py_db.close()


def test_ingest_results_equal_cli(pair):
    docs, _, _, cli_results, py_db, py_results = pair
    assert len(py_results) == len(cli_results) == N
    assert [r.seq for r in py_results] == list(range(N))
    assert all(r.ok and r.error is None for r in py_results)
    got = [cli_outcome(r.outcome) for r in py_results]
    assert got == cli_results
    # The corpus really has near-duplicates, so the comparison covers groups and Jaccard values.
    assert sum(1 for r in cli_results if r["duplicates"]) > N // 5


def test_insert_and_query_equal_cli(pair, tmp_path):
    docs, cli_bin, cli_db, _, py_db, _ = pair
    words = docs[0][1].split()
    words[5] = "changed"
    text = " ".join(words)
    f = tmp_path / "new.txt"
    f.write_text(text, encoding="utf-8")
    want = run_cli(cli_bin, "insert", str(cli_db), "--key", "new/1", str(f))
    got = py_db.insert("new/1", text)
    assert [cli_outcome(got)] == want
    assert got.duplicates and got.duplicates[0].key == "doc/00000"
    # Replacing a key reports the replaced id, like the CLI.
    want = run_cli(cli_bin, "insert", str(cli_db), "--key", "new/1", str(f))
    got = py_db.insert("new/1", text.encode("utf-8"))
    assert [cli_outcome(got)] == want and got.replaced is not None

    for i, (k, t) in enumerate(docs[::37]):
        for extra, kw in [([], {}), (["-k", "6", "--min-jaccard", "0"], {"max_distance": 6, "min_jaccard": 0.0}),
                          (["--limit", "2"], {"limit": 2})]:
            want = run_cli(cli_bin, "query", str(cli_db), "--text", t, *extra, ok=(0, 1))
            got = [h.to_dict() for h in py_db.query(t, **kw)]
            assert got == want, (k, extra)


def test_get_and_stats_equal_cli(pair):
    docs, cli_bin, cli_db, _, py_db, _ = pair
    for k, _ in docs[::29]:
        [want] = run_cli(cli_bin, "get", str(cli_db), k)
        d = py_db.get(k)
        assert d is not None
        got = {
            "key": d.key, "id": d.id, "simhash": d.simhash, "shingles": d.shingles, "group": d.group.id,
            "canonical": d.group.canonical, "group_members": d.members,
            "meta": json.loads(d.meta) if d.meta else None,
        }
        want.pop("inserted_at_ms")
        assert got == want
        assert d.meta == json.dumps(want["meta"], sort_keys=True, separators=(",", ":"))
    assert py_db.get("absent") is None
    run_cli(cli_bin, "get", str(cli_db), "absent", ok=(1,))
    [want] = run_cli(cli_bin, "stats", str(cli_db))
    got = py_db.stats().to_dict()
    for field in ("segment_bytes", "live_bytes", "segments"):  # file layout, not content
        want.pop(field), got.pop(field)
    assert got == want


def test_pairs_equal_cli(pair):
    _, cli_bin, cli_db, _, py_db, _ = pair
    for args, kw in [([], {}), (["--min-jaccard", "0.5"], {"min_jaccard": 0.5}), (["-k", "3"], {"max_distance": 3})]:
        want = run_cli(cli_bin, "pairs", str(cli_db), *args, ok=(0, 1))
        rep = py_db.pairs(**kw)
        assert [p.to_dict() for p in rep.pairs] == want, args
        want_groups = run_cli(cli_bin, "pairs", str(cli_db), "--groups", *args, ok=(0, 1))
        got_groups = [{"group": g.id, "canonical": g.canonical, "size": g.size, "members": g.members} for g in rep.groups]
        assert got_groups == want_groups
        [summary] = run_cli(cli_bin, "pairs", str(cli_db), "--summary", *args, ok=(0, 1))
        assert rep.docs == summary["docs"] and len(rep) == summary["pairs"]
        assert [(r.label, r.pairs, r.docs) for r in rep.by_hamming] == [
            (r["label"], r["pairs"], r["docs"]) for r in summary["by_hamming"]]
        assert [(r.label, r.pairs, r.docs) for r in rep.by_jaccard] == [
            (r["label"], r["pairs"], r["docs"]) for r in summary["by_jaccard"]]
    assert len(py_db.pairs(min_jaccard=0.5)) > 10


def test_fingerprint_equals_cli_export(pair):
    _, cli_bin, cli_db, _, _, _ = pair
    rows = {r["key"]: r for r in run_cli(cli_bin, "export", str(cli_db), "--shingle-sets")}
    spec = fpdb.FingerprintSpec("word:3")
    for k, t in corpus(N)[:40]:
        fp = fpdb.fingerprint(t, spec)
        assert fp.simhash == rows[k]["simhash"]
        assert fp.shingles == rows[k]["shingle_set"]
        assert len(fp.shingles) == rows[k]["shingles"]
