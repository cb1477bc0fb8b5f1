"""The binding gives the same results as the `fpdb` CLI on the same data: ingest, insert, query,
get, stats, pairs, export (fingerprints); containment queries, ingest relations and pairs; every
method; metadata (title, year, DOI) matches. Results are compared with the CLI's JSON in full."""

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
        "containment": [h.to_dict() for h in o.containment],
    }


@pytest.fixture(scope="module")
def pair(tmp_path_factory, cli_bin):
    """The same corpus ingested by the CLI into one database and by the binding into another."""
    tmp = tmp_path_factory.mktemp("parity")
    docs = corpus(N)
    jsonl = write_jsonl(tmp / "docs.jsonl", docs, extra=lambda i: {"source": "s%d" % (i % 3), "n": i})
    cli_db = tmp / "cli.fpdb"
    run_cli(cli_bin, "init", str(cli_db), "--max-distance", "10", "--min-jaccard", "0.8")
    cli_results = run_cli(cli_bin, "ingest", str(cli_db), str(jsonl), "--batch-size", str(BATCH), "--no-progress")
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
        got = d.to_dict()
        assert got.keys() == want.keys()
        assert got["inserted_at_ms"] == d.inserted_at_ms > 0
        # The insertion time is when each database took it in, not content.
        want.pop("inserted_at_ms"), got.pop("inserted_at_ms")
        assert got == want
        assert (d.title, d.year, d.doi) == (None, None, None)
        assert d.meta == want["meta"]
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


# ---------------------------------------------------------------------------------------------
# Containment: queries, relations reported by ingest, pairs.

C = 0.7


def contain_corpus(n: int = 90) -> list[tuple[str, str]]:
    """`corpus(n)` plus, for some documents, an excerpt (inside it) and an extension (it inside)."""
    docs = corpus(n)
    out = list(docs)
    for i, (k, t) in enumerate(docs[:: 9]):
        words = t.split()
        out.append((f"part/{i}", " ".join(words[len(words) // 4: 3 * len(words) // 4])))
        extra = corpus(3, seed=100 + i)[0][1]
        out.append((f"ext/{i}", t + " " + extra))
    return out


@pytest.fixture(scope="module")
def contain(tmp_path_factory, cli_bin):
    """The containment corpus ingested with relations (containment >= C) by the CLI and the binding."""
    tmp = tmp_path_factory.mktemp("contain")
    docs = contain_corpus()
    jsonl = write_jsonl(tmp / "docs.jsonl", docs)
    cli_db = tmp / "cli.fpdb"
    run_cli(cli_bin, "init", str(cli_db), "--containment", "on", "--containment-sample", "4")
    cli_results = run_cli(cli_bin, "ingest", str(cli_db), str(jsonl), "--batch-size", str(BATCH), "--no-progress",
                          "--containment", str(C))
    py_db = fpdb.Db.create(tmp / "py.fpdb", containment=True, containment_sample=4)
    py_results = list(py_db.ingest(docs, batch_size=BATCH, containment=C))
    yield docs, cli_bin, cli_db, cli_results, py_db, py_results
    py_db.close()


def test_ingest_containment_relations_equal_cli(contain):
    docs, _, _, cli_results, py_db, py_results = contain
    assert [cli_outcome(r.outcome) for r in py_results] == cli_results
    by_key = {r.key: r.outcome for r in py_results}
    # An excerpt is inside its source; the source is inside its extension.
    part = by_key["part/1"]
    rel = {h.key: h for h in part.containment}
    src = docs[9][0]
    assert src in rel and rel[src].containment == 1.0 and rel[src].reverse_containment < 0.8
    ext = {h.key: h for h in by_key["ext/1"].containment}
    assert ext[src].reverse_containment == 1.0 and ext[src].containment < 1.0
    assert sum(1 for r in py_results if r.outcome.containment) >= 20
    assert py_results[0].outcome.containment == [] and py_results[1].outcome.containment == []


def test_insert_containment_relations(tmp_path):
    docs = corpus(10)
    words = docs[4][1].split()
    with fpdb.Db.create(tmp_path / "db") as db:
        db.ingest(docs).run()
        out = db.insert("part", " ".join(words[5:45]), containment=0.9)
        [rel] = [h for h in out.containment if h.key == docs[4][0]]
        assert rel.containment == 1.0 and rel.reverse_containment < 0.9
        assert rel.to_dict() in out.to_dict()["containment"]
        # Not asked for: empty.
        assert db.insert("plain", " ".join(words[5:45])).containment == []


def test_insert_containment_equals_cli(tmp_path, cli_bin):
    """`fpdb insert --containment C` answers what `Db.insert(containment=C)` answers."""
    docs = corpus(10)
    part = " ".join(docs[4][1].split()[5:45])
    cli_db = tmp_path / "cli.fpdb"
    run_cli(cli_bin, "init", str(cli_db))
    run_cli(cli_bin, "ingest", str(cli_db), str(write_jsonl(tmp_path / "docs.jsonl", docs)), "--no-progress")
    part_file = tmp_path / "part.txt"
    part_file.write_text(part)
    [cli_out] = run_cli(cli_bin, "insert", str(cli_db), "--key", "part", str(part_file), "--containment", "0.9")
    with fpdb.Db.create(tmp_path / "py.fpdb") as db:
        db.ingest(docs).run()
        out = db.insert("part", part, containment=0.9)
    assert cli_out == cli_outcome(out)
    assert [h["key"] for h in cli_out["containment"]] == [docs[4][0]]


def test_containment_query_equals_cli(contain):
    docs, cli_bin, cli_db, _, py_db, _ = contain
    n = 0
    for k, t in docs[::7] + [d for d in docs if d[0].startswith(("part/", "ext/"))][:6]:
        for c in ("0.7", "0.5"):
            want = run_cli(cli_bin, "query", str(cli_db), "--text", t, "--min-containment", c, ok=(0, 1))
            hits = py_db.query(t, min_containment=float(c))
            assert [h.to_dict() for h in hits] == want, (k, c)
            n += len(hits)
            for h in hits:
                assert max(h.containment, h.reverse_containment) >= float(c)
                assert h.match == "text"
    assert n > 20
    words = docs[0][1].split()
    excerpt = " ".join(words[10:50])
    [hit] = [h for h in py_db.query(excerpt, min_containment=0.9) if h.key == docs[0][0]]
    assert hit.containment == 1.0 and hit.reverse_containment is not None and hit.reverse_containment < 1.0
    assert hit.to_dict() in run_cli(cli_bin, "query", str(cli_db), "--text", excerpt, "--min-containment", "0.9")


def test_containment_pairs_and_stats_equal_cli(contain):
    _, cli_bin, cli_db, _, py_db, _ = contain
    for c in (0.7, 0.95):
        want = run_cli(cli_bin, "pairs", str(cli_db), "--min-containment", str(c), ok=(0, 1))
        got = [p.to_dict() for p in py_db.containment_pairs(c, threads=2)]
        assert got == want
        assert len(got) >= 10
        assert {p["direction"] for p in got} <= {"a<b", "b<a", "both"}
    [want] = run_cli(cli_bin, "stats", str(cli_db))
    got = py_db.stats().to_dict()
    for field in ("segment_bytes", "live_bytes", "segments"):  # file layout, not content
        want.pop(field), got.pop(field)
    assert want["containment"]["sample"] == 4 and want["containment"]["entries"] > 0
    assert got == want


def test_containment_off_is_refused(tmp_path):
    with fpdb.Db.create(tmp_path / "db", containment=False) as db:
        db.insert("a", corpus(1)[0][1])
        assert db.stats().containment is None and db.stats().to_dict()["containment"] is None
        with pytest.raises(fpdb.InvalidOptionError):
            db.query(corpus(1)[0][1], min_containment=0.5)
        with pytest.raises(fpdb.InvalidOptionError):
            db.containment_pairs(0.5)
        with pytest.raises(fpdb.InvalidOptionError):
            db.insert("b", "some other words here", containment=0.5)
        with pytest.raises(fpdb.InvalidOptionError):
            db.ingest([("c", "more words")], containment=0.5).run()
        assert "b" not in db and "c" not in db
    with pytest.raises(fpdb.InvalidOptionError) as e:
        fpdb.Db.create(tmp_path / "db2", containment_sample=0)
    assert e.value.option == "containment_sample"
    for kw in ({"containment_sample": 4}, {"containment_max_postings": 100}):
        with pytest.raises(fpdb.InvalidOptionError) as e:
            fpdb.Db.create(tmp_path / "db3", containment=False, **kw)
        assert e.value.option == next(iter(kw))
        assert not (tmp_path / "db3").exists()


# ---------------------------------------------------------------------------------------------
# Methods: a database created by the binding with a method behaves as one made by `fpdb init --method`.

METHODS = ["broder", "charikar", "broder-charikar", "multi-lexicon", "weighted-simhash"]


@pytest.mark.parametrize("method", METHODS)
def test_method_database_equals_cli(tmp_path, cli_bin, method):
    docs = corpus(90, seed=3)
    jsonl = write_jsonl(tmp_path / "docs.jsonl", docs)
    cli_db = tmp_path / "cli.fpdb"
    init = ["init", str(cli_db), "--method", method]
    kw: dict = {"method": method}
    if method == "weighted-simhash":
        init += ["--idf-from", str(jsonl)]
        kw["idf_from"] = jsonl
    run_cli(cli_bin, *init)
    cli_results = run_cli(cli_bin, "ingest", str(cli_db), str(jsonl), "--batch-size", "32", "--no-progress")
    with fpdb.Db.create(tmp_path / "py.fpdb", **kw) as db:
        [cli_stats] = run_cli(cli_bin, "stats", str(cli_db))
        assert str(db.spec) == cli_stats["spec"] and db.spec.method.startswith(method)
        assert db.max_distance == cli_stats["max_distance"]
        got = [cli_outcome(r.outcome) for r in db.ingest(docs, batch_size=32)]
        assert got == cli_results
        assert sum(1 for r in cli_results if r["duplicates"]) >= 5
        kinds = set()
        for k, t in docs[::8]:
            extras = [([], {})]
            if method.startswith("broder"):
                extras.append((["--min-shared", "1", "--min-jaccard", "0"], {"min_shared": 1, "min_jaccard": 0.0}))
            for extra, qkw in extras:
                want = run_cli(cli_bin, "query", str(cli_db), "--text", t, *extra, ok=(0, 1))
                hits = db.query(t, **qkw)
                assert [h.to_dict() for h in hits] == want, (k, extra)
                kinds |= {next(iter(h.score)) for h in hits}
        expected = {"broder": "supershingles", "charikar": "projection", "broder-charikar": "combined",
                    "multi-lexicon": "lexicons", "weighted-simhash": "hamming"}[method]
        assert kinds == {expected}
        extra, pkw = (["--min-shared", "3"], {"min_shared": 3}) if method.startswith("broder") else ([], {})
        want = run_cli(cli_bin, "pairs", str(cli_db), *extra, ok=(0, 1))
        assert [p.to_dict() for p in db.pairs(**pkw).pairs] == want


def test_broder_hit_score_and_options(tmp_path):
    docs = corpus(30, seed=5)
    with fpdb.Db.create(tmp_path / "db", method="broder", min_shared=1) as db:
        assert "min_shared=1" in db.spec.method
        db.ingest(docs).run()
        hits = db.query(docs[2][1])  # docs[2] is an edit of an earlier document
        assert docs[2][0] in [h.key for h in hits] and len(hits) >= 2
        sc = hits[0].score
        assert set(sc) == {"supershingles"} and sc["supershingles"]["equal"] == sc["supershingles"]["of"] == 6
        assert hits[0].to_dict()["score"] == sc
        assert "'supershingles'" in repr(hits[0])
    with pytest.raises(fpdb.InvalidOptionError) as e:
        fpdb.Db.create(tmp_path / "x", method="simhash", min_shared=2)
    assert e.value.option == "min_shared"
    with pytest.raises(fpdb.InvalidOptionError) as e:
        fpdb.Db.create(tmp_path / "y", method="weighted-simhash")
    assert e.value.option == "idf_from"
    with pytest.raises(fpdb.InvalidOptionError) as e:
        fpdb.Db.create(tmp_path / "z", method="minhash")
    assert e.value.option == "method"


def test_weighted_simhash_idf_from_texts_equals_path(tmp_path):
    docs = corpus(40, seed=9)
    jsonl = write_jsonl(tmp_path / "docs.jsonl", docs)
    with fpdb.Db.create(tmp_path / "a", method="weighted-simhash", idf_from=str(jsonl)) as a, \
            fpdb.Db.create(tmp_path / "b", method="weighted-simhash", idf_from=(t for _, t in docs)) as b, \
            fpdb.Db.create(tmp_path / "c", method="weighted-simhash", idf_from=[docs[0][1]]) as c:
        assert a.spec == b.spec and "idf" in a.spec.method
        assert c.spec != a.spec
    with pytest.raises(fpdb.IoError):
        fpdb.Db.create(tmp_path / "d", method="weighted-simhash", idf_from=tmp_path / "missing.jsonl")


# ---------------------------------------------------------------------------------------------
# Metadata: title, year and DOI are stored, returned by get, and matched exactly.


def test_metadata_matches_and_get_equal_cli(tmp_path, cli_bin):
    docs = corpus(12, seed=13, dup_every=100)  # no text near-duplicates
    meta = {
        0: {"title": "Near-Duplicates: A Study", "year": 2020, "doi": "10.1000/ABC.1"},
        3: {"doi": "https://doi.org/10.1000/abc.1", "source": "crawl"},  # the same DOI
        5: {"title": "near duplicates  a study!", "year": "2020"},       # the same title and year
        7: {"title": "Near-Duplicates: A Study", "year": 2021},          # another year: no match
        9: {"title": None, "year": None, "doi": None},                   # null = absent
    }
    jsonl = write_jsonl(tmp_path / "docs.jsonl", docs, extra=lambda i: meta.get(i, {}))
    cli_db = tmp_path / "cli.fpdb"
    run_cli(cli_bin, "init", str(cli_db))
    cli_results = run_cli(cli_bin, "ingest", str(cli_db), str(jsonl), "--no-progress")
    items = [{"key": k, "text": t, **meta.get(i, {})} for i, (k, t) in enumerate(docs)]
    with fpdb.Db.create(tmp_path / "py.fpdb") as db:
        results = list(db.ingest(items))
        assert [cli_outcome(r.outcome) for r in results] == cli_results
        assert [(h.key, h.match) for h in results[3].outcome.duplicates] == [(docs[0][0], "doi")]
        assert [(h.key, h.match) for h in results[5].outcome.duplicates] == [(docs[0][0], "title_year")]
        assert results[7].outcome.duplicates == [] and results[9].outcome.duplicates == []
        # A metadata match is reported, not acted on: no group joined.
        assert results[3].outcome.group.size == 1
        for i, (k, _) in enumerate(docs):
            [want] = run_cli(cli_bin, "get", str(cli_db), k)
            got = db.get(k).to_dict()
            want.pop("inserted_at_ms"), got.pop("inserted_at_ms")
            assert got == want, k
        d = db.get(docs[0][0])
        assert (d.title, d.year, d.doi) == ("Near-Duplicates: A Study", 2020, "10.1000/ABC.1")
        assert db.get(docs[5][0]).year == 2020
        # insert() takes the same metadata.
        out = db.insert("new", "an unrelated text of its own words", doi="doi:10.1000/abc.1")
        assert [(h.key, h.match) for h in out.duplicates] == [(docs[0][0], "doi"), (docs[3][0], "doi")]
        assert db.get("new").doi == "doi:10.1000/abc.1"
        # `fpdb insert` takes them too, and answers the same: --doi, --title, --year.
        text_file = tmp_path / "new.txt"
        text_file.write_text("an unrelated text of its own words")
        [cli_out] = run_cli(cli_bin, "insert", str(cli_db), "--key", "new", str(text_file), "--doi", "doi:10.1000/abc.1")
        assert cli_out == cli_outcome(out)
        text_file.write_text("another unrelated text with words of its own")
        out = db.insert("retitled", text_file.read_text(), title="Near Duplicates, a Study", year=2020)
        [cli_out] = run_cli(cli_bin, "insert", str(cli_db), "--key", "retitled", str(text_file),
                            "--title", "Near Duplicates, a Study", "--year", "2020")
        assert cli_out == cli_outcome(out)
        assert [(h.key, h.match) for h in out.duplicates] == [(docs[0][0], "title_year"), (docs[5][0], "title_year")]


def test_bad_metadata_is_a_per_item_error(tmp_path):
    with fpdb.Db.create(tmp_path / "db") as db:
        results = list(db.ingest([
            {"key": "a", "text": "one two three four", "year": "soon"},
            {"key": "b", "text": "one two three four", "title": 7},
            ("c", "one two three four", {"doi": "not a doi"}),
            {"key": "d", "text": "one two three four", "year": True},
            ("e", "five six seven eight", {"doi": "10.5/x", "year": 1999}),
        ]))
        assert [r.ok for r in results] == [False, False, False, False, True]
        assert all(isinstance(r.error, fpdb.InvalidInputError) for r in results[:4])
        assert "year" in str(results[0].error) and "title" in str(results[1].error)
        assert "doi" in str(results[2].error) and results[2].error.key == "c"
        assert (db.get("e").doi, db.get("e").year) == ("10.5/x", 1999)
        with pytest.raises(fpdb.InvalidInputError):
            db.insert("f", "nine ten eleven twelve", doi="nope")


def test_read_feeds_ingest_as_the_cli_reads_the_same_file(tmp_path, cli_bin):
    """fpdb.read is the CLI's reader: a gzip JSONL file with a malformed line and a line with no
    words gives, through Db.ingest, the CLI's outcomes and the CLI's per-line errors, and the rest
    is still ingested; metadata (title → exact-match index) comes along."""
    import gzip

    docs = corpus(40)
    lines = [json.dumps({"key": k, "text": t, "title": "T%d" % (i % 7), "src": "s"}) for i, (k, t) in enumerate(docs)]
    lines.insert(5, '{"key": "broken", ')
    lines.insert(9, json.dumps({"key": "blank", "text": "  ...  "}))
    path = tmp_path / "in.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    cli_db = tmp_path / "cli.fpdb"
    run_cli(cli_bin, "init", str(cli_db))
    cli = run_cli(cli_bin, "ingest", str(cli_db), str(path), ok=(6,))
    cli_items = [r for r in cli if "summary" not in r]
    items = list(fpdb.read(path))
    assert [i.origin for i in items] == [f"{path} line {n}" for n in range(1, len(lines) + 1)]
    assert items[5].key is None and "malformed JSON" in items[5].error
    assert items[0].meta == {"title": "T0", "src": "s"} and items[0].text == docs[0][1]
    with fpdb.Db.create(tmp_path / "py.fpdb") as db:
        results = list(db.ingest(fpdb.read(path), batch_size=BATCH))
        assert len(results) == len(cli_items) == len(lines)
        for r, c in zip(results, cli_items):
            if "error" in c:
                assert not r.ok and str(r.error) == c["error"], (r, c)
            else:
                assert r.ok and cli_outcome(r.outcome) == {k: c[k] for k in cli_outcome(r.outcome)}
        assert db.get(docs[0][0]).meta == {"title": "T0", "src": "s"}
