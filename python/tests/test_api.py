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
    assert 0 <= fp.simhash < 2**64
    assert fpdb.fingerprint(t, "char:5") != fp
    assert fpdb.fingerprint("") == fpdb.fingerprint("   ")
    assert fpdb.fingerprint("").simhash == 0 and fpdb.fingerprint("").shingles == []
    s = fpdb.FingerprintSpec("char:5", "count", seed=1)
    assert (s.unit, s.n, s.shingle, s.weights, s.seed) == ("char", 5, "char:5", "count", 1)
    assert s == fpdb.FingerprintSpec("char:5", "count", seed=1) and hash(s) == hash(fpdb.FingerprintSpec("char:5", "count", 1))
    assert "char:5" in str(s) and "FingerprintSpec(" in repr(s)
    assert fpdb.fingerprint(t, s) != fpdb.fingerprint(t, fpdb.FingerprintSpec("char:5", "count"))


def test_outcomes_groups_delete_compact(tmp_path):
    base = " ".join(f"token{i}" for i in range(100))
    variant = base.replace("token50", "changed")
    with fpdb.Db.create(tmp_path / "db") as db:
        a = db.insert("a", base)
        assert a.stored and a.id == 0 and a.duplicates == [] and a.group.size == 1 and a.replaced is None
        b = db.insert("b", variant)
        [hit] = b.duplicates
        assert (hit.key, hit.id, hit.hamming) == ("a", 0, hit.hamming) and 0.9 < hit.jaccard < 1
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
    assert (r["docs"], r["tables_before"], r["tables_after"], r["changed"]) == (60, 5, 3, True)
    with fpdb.Db.open(tmp_path / "db") as db:
        assert db.stats().tables == 3 and db.check().ok
        assert [[(h.key, h.jaccard) for h in db.query(t, max_distance=16)] for _, t in docs] == before
    auto = fpdb.Db.reindex(tmp_path / "db")
    assert auto["tables_after"] == best and auto["generation"] == (1 if best == 3 else 2)
