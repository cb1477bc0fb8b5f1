"""The rest of the surface: fingerprints and specs, outcomes, groups, delete, compact, check."""

from __future__ import annotations

import pytest

import fpdb
from conftest import corpus


def test_fingerprint_and_spec():
    t = "near duplicate documents are posted many times on the web by their authors"
    fp = fpdb.fingerprint(t)
    assert fp == fpdb.fingerprint(t.encode("utf-8"), "word:3")
    assert fp == fpdb.fingerprint(t, fpdb.FingerprintSpec())
    assert fp.shingles == sorted(set(fp.shingles)) and len(fp.shingles) == len(t.split()) - 2
    # The stable fingerprints (golden: the CLI's `fpdb get` of this text in a database made with
    # `fpdb init` says the same, with `--hash xxh3-64` the second), full 64-bit values: bit 63 set
    # would come out negative through a signed type.
    xxh3 = fpdb.FingerprintSpec(hash="xxh3-64")
    assert fpdb.FingerprintSpec().hash == "word-mix" and xxh3.hash == "xxh3-64" and "hash='xxh3-64'" in repr(xxh3)
    assert fp.simhash == 9330945669702480351
    assert fpdb.fingerprint(t, xxh3).simhash == 3747413796200355719
    # The same shingles under both hashes, other hash values.
    assert len(fpdb.fingerprint(t, xxh3).shingles) == len(fp.shingles) and fpdb.fingerprint(t, xxh3) != fp
    with pytest.raises(fpdb.InvalidOptionError):
        fpdb.FingerprintSpec(hash="md5")
    assert fpdb.fingerprint(t, "char:5") != fp
    assert fpdb.fingerprint("") == fpdb.fingerprint("   ")
    assert fpdb.fingerprint("").simhash == 0 and fpdb.fingerprint("").shingles == []
    s = fpdb.FingerprintSpec("char:5", "count", seed=1)
    assert (s.unit, s.n, s.shingle, s.weights, s.seed) == ("char", 5, "char:5", "count", 1)
    assert s == fpdb.FingerprintSpec("char:5", "count", seed=1) and hash(s) == hash(fpdb.FingerprintSpec("char:5", "count", 1))
    assert "char:5" in str(s) and "FingerprintSpec(" in repr(s)
    assert fpdb.fingerprint(t, s) != fpdb.fingerprint(t, fpdb.FingerprintSpec("char:5", "count"))


def test_create_with_the_older_hash(tmp_path):
    t = "near duplicate documents are posted many times on the web by their authors"
    with fpdb.Db.create(tmp_path / "old", hash="xxh3-64") as db:
        assert db.spec.hash == "xxh3-64"
        db.insert("a", t)
        assert db.get("a").simhash == 3747413796200355719
    # An existing database keeps its hash, whatever the default spec says.
    with fpdb.Db.open(tmp_path / "old") as db:
        assert db.spec.hash == "xxh3-64" and db.get("a").simhash == fpdb.fingerprint(t, db.spec).simhash
    with fpdb.Db.create(tmp_path / "new") as db:
        assert db.spec.hash == "word-mix"
        db.insert("a", t)
        assert db.get("a").simhash == fpdb.fingerprint(t).simhash
    with pytest.raises(fpdb.InvalidOptionError):
        fpdb.Db.create(tmp_path / "bad", hash="sha1")


def test_normalizer_versions(tmp_path):
    zh = ("网络爬虫在抓取学术论文时，经常会多次获得同一篇文章的不同版本，例如预印本、会议录用稿以及课程网页上的副本。"
          "这些版本之间只有少量差异，比如作者信息、页眉页脚或者个别错别字。")
    near = zh.replace("经常", "常常")
    v1 = fpdb.FingerprintSpec(normalizer=1)
    assert fpdb.FingerprintSpec().normalizer == 2 and v1.normalizer == 1
    # Version 2: one word per Chinese character, so a word trigram is a character trigram.
    assert len(fpdb.fingerprint(zh).shingles) > 40 and len(fpdb.fingerprint(zh, v1).shingles) <= 5
    assert "normalizer=1" in repr(v1)
    # ASCII text fingerprints the same under both.
    t = "near duplicate documents are posted many times"
    assert fpdb.fingerprint(t, v1) == fpdb.fingerprint(t)
    with pytest.raises(fpdb.InvalidOptionError):
        fpdb.FingerprintSpec(normalizer=3)
    with fpdb.Db.create(tmp_path / "old", normalizer=1) as db:
        db.insert("zh", zh)
    # An existing database keeps its normalizer, whatever the default spec says.
    with fpdb.Db.open(tmp_path / "old", spec=fpdb.FingerprintSpec.default()) as db:
        assert db.spec.normalizer == 1
        # Under 1 the text is seven clause-long words; a change in the last keeps four trigrams of five.
        last = zh.replace("错别字", "错字")
        [hit] = db.query(last, min_jaccard=0.1, max_distance=32)
        old = fpdb.fingerprint(zh, v1).shingles, fpdb.fingerprint(last, v1).shingles
        assert len(old[0]) == 5 and hit.jaccard == 4 / 6
        assert hit.jaccard == len(set(old[0]) & set(old[1])) / len(set(old[0]) | set(old[1]))
    with fpdb.Db.create(tmp_path / "new") as db:
        db.insert("zh", zh)
        [hit] = db.query(near)
        assert hit.key == "zh" and hit.jaccard > 0.9
    # weighted-simhash trains its IDF table with the database's normalizer: on version 1
    # the table's words are version 1's, so creating the database succeeds and inserts work.
    for n in (1, 2):
        with fpdb.Db.create(tmp_path / f"w{n}", normalizer=n, method="weighted-simhash", idf_from=[zh, near, t]) as db:
            assert db.spec.normalizer == n
            db.insert("zh", zh)
            assert [h.key for h in db.query(near, min_jaccard=0.1, max_distance=32)] == ["zh"]


def test_outcomes_groups_delete_compact(tmp_path):
    base = " ".join(f"token{i}" for i in range(100))
    variant = base.replace("token50", "changed")
    with fpdb.Db.create(tmp_path / "db") as db:
        a = db.insert("a", base)
        assert a.stored and a.id == 0 and a.duplicates == [] and a.group.size == 1 and a.replaced is None
        b = db.insert("b", variant)
        [hit] = b.duplicates
        # The Hamming distance of the two stable fingerprints (golden values, see above).
        expected = bin(fpdb.fingerprint(base).simhash ^ fpdb.fingerprint(variant).simhash).count("1")
        assert fpdb.fingerprint(base).simhash == 10434476441963459163 and fpdb.fingerprint(variant).simhash == 9857980509582914139
        xxh3 = fpdb.FingerprintSpec(hash="xxh3-64")
        assert fpdb.fingerprint(base, xxh3).simhash == 15150381067380646044
        assert fpdb.fingerprint(variant, xxh3).simhash == 15438593814839156892
        assert (hit.key, hit.id, hit.hamming) == ("a", 0, expected) and expected == 4 and 0.9 < hit.jaccard < 1
        assert b.group.canonical == "a" and b.group.size == 2 and b.group.id == 0
        assert "InsertOutcome(key='b'" in repr(b) or 'InsertOutcome(key="b"' in repr(b)
        c = db.insert("c", variant, dedup="skip")
        assert not c.stored and c.id is None and c.group is None and len(c.duplicates) == 2
        assert db.insert("d", variant, dedup="off").duplicates == []
        doc = db.get("b")
        assert doc.members == ["a", "b"] and doc.group.canonical == "a" and doc.meta is None
        hits = db.query_simhash(doc.simhash, max_distance=0)
        assert "b" in [h.key for h in hits] and all(h.jaccard is None for h in hits)
        assert db.delete("a")
        assert db.get("b").group.canonical == "b"
        for i, (k, t) in enumerate(corpus(40)):
            db.insert(k, t)
        for k, _ in corpus(40)[:30]:
            db.delete(k)
        cs = db.compact(min_dead=0.0)
        assert cs.segments_rewritten >= 1 and cs.bytes_reclaimed > 0
        # index=True also merges RocksDB's runs: nothing left to reclaim, the database still sound.
        assert db.compact(min_dead=0.0, index=True).bytes_reclaimed == 0
        db.flush()  # the close's work, done now: the handle stays usable and the database sound
        assert db.insert("after-flush", base).stored
        assert db.delete("after-flush")
        rep = db.check()
        assert rep.ok and rep.docs == len(db) == 12
        st = db.stats()
        assert st.docs == 12 and st.max_distance == 12 and st.min_jaccard == 0.9 and "word:3" in st.spec
        assert repr(db).startswith("<fpdb.Db")


def test_reindex_keeps_every_answer_and_follows_the_size(tmp_path):
    docs = corpus(60)
    with fpdb.Db.create(tmp_path / "db", tables=5) as db:
        for k, t in docs:
            db.insert(k, t)
        before = [[(h.key, h.jaccard) for h in db.query(t, max_distance=16)] for _, t in docs]
        best = db.stats().best_tables
        with pytest.raises(fpdb.LockedError):
            fpdb.Db.reindex(tmp_path / "db", 3)
    r = fpdb.Db.reindex(tmp_path / "db", 3)
    assert isinstance(r, fpdb.ReindexReport)
    assert (r.docs, r.tables_before, r.tables_after, r.changed) == (60, 5, 3, True)
    assert r.to_dict()["tables_after"] == 3 and "ReindexReport(docs=60" in repr(r)
    with fpdb.Db.open(tmp_path / "db") as db:
        assert db.stats().tables == 3 and db.check().ok
        assert [[(h.key, h.jaccard) for h in db.query(t, max_distance=16)] for _, t in docs] == before
    auto = fpdb.Db.reindex(tmp_path / "db")
    assert auto.tables_after == best and auto.generation == (1 if best == 3 else 2)


def test_keys_and_iteration_walk_every_stored_document_in_id_order(tmp_path):
    docs = corpus(2500)
    with fpdb.Db.create(tmp_path / "db") as db:
        for r in db.ingest(docs, batch_size=500):
            assert r.ok
        db.delete(docs[10][0])
        keys = list(db.keys())
        stored = [k for k, _ in docs if db.get(k) is not None]
        # id order is insertion order: every stored key once, across the pages of 1000
        assert keys == stored and len(keys) == len(db) and docs[10][0] not in keys
        walked = list(db)
        assert [d.key for d in walked] == keys
        assert all(isinstance(d, fpdb.Document) for d in walked)
        assert walked[0].to_dict() == db.get(keys[0]).to_dict()
        # a document inserted during the walk (a higher id) is met
        it = db.keys()
        first = next(it)
        db.insert("late", "a text inserted while the keys are walked")
        rest = list(it)
        assert first == keys[0] and rest[-1] == "late"


def test_meta_round_trips_through_insert(tmp_path):
    with fpdb.Db.create(tmp_path / "db") as db:
        meta = {"repository": "arxiv", "tags": ["a", "b"], "n": 3, "nested": {"ok": True}}
        db.insert("a", "the first text of the meta test", meta=meta)
        assert db.get("a").meta == meta
        assert db.get("a").to_dict()["meta"] == meta
        db.insert("b", "another text without metadata")
        assert db.get("b").meta is None
        with pytest.raises(fpdb.InvalidInputError, match="JSON"):
            db.insert("c", "a text with metadata that is not JSON", meta={"x": object()})
        assert db.get("c") is None


def test_iter_pairs_yields_the_pairs_of_pairs(tmp_path):
    docs = corpus(90)
    with fpdb.Db.create(tmp_path / "db") as db:
        for k, t in docs:
            db.insert(k, t, dedup="off")
        report = db.pairs(min_jaccard=0.5)
        it = db.iter_pairs(min_jaccard=0.5)
        assert len(it) == len(report.pairs) > 0
        got = list(it)
        assert [p.to_dict() for p in got] == [p.to_dict() for p in report.pairs]
        assert len(it) == 0
