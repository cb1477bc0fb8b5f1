"""Db.ingest: streaming from generators with bounded memory, per-item errors, early stop, reopen."""

from __future__ import annotations

import json
import tracemalloc

import pytest

import fpdb
from conftest import corpus, lazy_corpus


def test_generator_of_100k_documents_is_streamed(tmp_path):
    """100K generated documents go in without the input ever being held: the generator is pulled
    only a bounded number of items ahead of the results, and Python-side memory stays small."""
    n, batch = 100_000, 1000
    produced = 0
    max_ahead = 0

    def gen():
        nonlocal produced
        for item in lazy_corpus(n):
            produced += 1
            yield item

    consumed = 0
    with fpdb.Db.create(tmp_path / "db", sync=False) as db:
        tracemalloc.start()
        try:
            ing = db.ingest(gen(), batch_size=batch)
            for r in ing:
                assert r.seq == consumed and r.ok
                consumed += 1
                max_ahead = max(max_ahead, produced - consumed)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert consumed == produced == n
        stats = ing.stats
        assert stats.items == n and stats.stored == n and stats.errors == 0
        assert stats.with_duplicates > n // 50  # every 4th document is an edit of a recent one
        assert stats.batches >= n // batch
        assert len(db) == n
        # In flight at most: the input channel, the pipeline's queues and the results channel, a few
        # batches -- not the input. (The whole input as Python strings would be ~40 MB.)
        assert max_ahead <= 20 * batch, max_ahead
        assert peak < 8 * 2**20, peak
        # And everything landed: a sample is found again, verbatim.
        for k, t in list(lazy_corpus(2000))[::250]:
            hits = db.query(t, min_jaccard=1.0)
            assert k in [h.key for h in hits]


def test_items_in_every_shape_and_per_item_errors(tmp_path):
    docs = corpus(12)
    items = [
        docs[0],                                   # tuple
        list(docs[1]),                             # list
        {"key": docs[2][0], "text": docs[2][1], "lang": "en", "year": 2020},  # dict + metadata
        (docs[3][0], docs[3][1], {"src": "crawl"}),  # tuple + meta dict
        (docs[4][0].encode(), docs[4][1].encode()),  # bytes
        ("bad/utf8", b"abc\xffdef"),               # rejected: not UTF-8
        ("only-key",),                             # rejected: wrong shape
        42,                                        # rejected: not an item
        {"text": "no key here"},                   # rejected: no key
        ("", "empty key"),                         # rejected by the engine
        (docs[5][0], docs[5][1], '{"raw": true}'),  # meta given as JSON text
        {"key": 7, "text": docs[6][1]},            # int key, as the CLI accepts JSON numbers
    ]
    with fpdb.Db.create(tmp_path / "db") as db:
        ing = db.ingest(items, batch_size=4)
        results = list(ing)
        assert [r.seq for r in results] == list(range(len(items)))
        ok = [r.ok for r in results]
        assert ok == [True] * 5 + [False] * 5 + [True] * 2
        for r in results[5:10]:
            assert isinstance(r.error, fpdb.InvalidInputError) and r.outcome is None and not r.stored
        assert "byte offset 3" in str(results[5].error) and results[5].key == "bad/utf8"
        assert ing.stats.errors == 5 and ing.stats.stored == 7
        assert db.get(docs[2][0]).meta == {"lang": "en", "year": 2020}
        assert db.get(docs[2][0]).to_dict()["meta"] == {"lang": "en", "year": 2020}
        assert db.get(docs[3][0]).meta == {"src": "crawl"}
        # A str meta is stored as given (JSON text here), and comes back decoded.
        assert db.get(docs[5][0]).meta == {"raw": True}
        assert db.get("7") is not None and db.get(docs[4][0]).key == docs[4][0]


def test_input_exception_is_raised_after_earlier_results(tmp_path):
    def gen():
        yield from corpus(30)
        raise RuntimeError("crawler failed")

    with fpdb.Db.create(tmp_path / "db") as db:
        seen = []
        with pytest.raises(RuntimeError, match="crawler failed"):
            for r in db.ingest(gen(), batch_size=8):
                seen.append(r.key)
        assert len(seen) == 30
        assert len(db) == 30


def test_dedup_skip_and_run(tmp_path):
    docs = corpus(60)
    with fpdb.Db.create(tmp_path / "db") as db:
        stats = db.ingest(docs, dedup="skip").run()
        assert stats.items == 60 and stats.skipped > 0 and stats.stored + stats.skipped == 60
        assert len(db) == stats.stored
        assert db.pairs(min_jaccard=db.min_jaccard).pairs == []


def test_close_early(tmp_path):
    pulled = 0

    def gen():
        nonlocal pulled
        for item in lazy_corpus(50_000):
            pulled += 1
            yield item

    with fpdb.Db.create(tmp_path / "db", sync=False) as db:
        ing = db.ingest(gen(), batch_size=100)
        first = next(ing)
        assert first.seq == 0 and first.stored
        stats = ing.close()
        # Every item taken from the generator is ingested, none more.
        assert stats is not None and stats.items == pulled
        assert pulled < 5000  # the generator was not drained
        assert len(db) == stats.stored == pulled  # what the engine took is committed
        assert list(ing) == []
        db.insert("after", "the handle is still usable after an ingest was closed")
        # Abandoning an ingest (no close) also finishes cleanly when it is collected.
        ing2 = db.ingest(lazy_corpus(10_000, seed=3), batch_size=100)
        next(ing2)
        del ing2
        assert len(db) > stats.stored


def test_reopen(tmp_path):
    path = tmp_path / "db"
    docs = corpus(80)
    with fpdb.Db.create(path, max_distance=8, tables=6, shingle="word:4", weights="count", min_jaccard=0.7) as db:
        db.ingest(docs).run()
        before = [(k, [h.to_dict() for h in db.query(t)]) for k, t in docs[::9]]
        stats = db.stats().to_dict()
    assert db.closed
    with fpdb.Db.open(path) as db:
        assert db.stats().to_dict() == stats
        assert (db.max_distance, db.min_jaccard, db.stats().tables) == (8, 0.7, 6)
        assert db.spec == fpdb.FingerprintSpec("word:4", "count")
        assert [(k, [h.to_dict() for h in db.query(t)]) for k, t in docs[::9]] == before
        assert db.delete(docs[0][0]) and not db.delete(docs[0][0])
        assert docs[0][0] not in db and docs[1][0] in db
    with fpdb.Db.open(path, read_only=True) as db:
        assert len(db) == len(docs) - 1
        assert db.check().ok


def test_read_a_directory_keys_files_by_relative_path(tmp_path):
    """fpdb.read(dir) reads a directory as `fpdb ingest DIR` does: each text file a document keyed
    by its relative path, hidden files left out unless asked, gzip decompressed."""
    import gzip

    root = tmp_path / "papers"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("near duplicate documents on the web " * 5, encoding="utf-8")
    with gzip.open(root / "sub" / "b.txt.gz", "wt", encoding="utf-8") as f:
        f.write("permuted tables for hamming distance search " * 5)
    (root / ".hidden.txt").write_text("a file most tools skip " * 5, encoding="utf-8")
    items = list(fpdb.read(root))
    assert sorted(i.key for i in items) == ["a.txt", "sub/b.txt.gz"]
    assert all(i.error is None and i.text for i in items)
    assert sorted(i.key for i in fpdb.read(root, hidden=True)) == [".hidden.txt", "a.txt", "sub/b.txt.gz"]
    with fpdb.Db.create(tmp_path / "db", sync=False) as db:
        stats = db.ingest(fpdb.read(root)).run()
        assert stats.stored == 2
        assert db.get("sub/b.txt.gz") is not None
    with pytest.raises(fpdb.IoError):
        fpdb.read(tmp_path / "nowhere")
