"""The GIL is released during engine calls: threads query while another ingests."""

from __future__ import annotations

import threading

import fpdb
from conftest import corpus, lazy_corpus


def test_two_threads_query_while_one_ingests(tmp_path):
    seed_docs = corpus(200, seed=5)
    with fpdb.Db.create(tmp_path / "db", sync=False) as db:
        db.ingest(seed_docs).run()
        ingesting = threading.Event()
        done = threading.Event()
        errors: list[BaseException] = []
        during = [0, 0]
        ingested = []

        def ingest():
            try:
                ing = db.ingest(lazy_corpus(30_000), batch_size=500)
                for r in ing:
                    ingesting.set()
                    assert r.ok
                ingested.append(ing.stats)
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)
            finally:
                ingesting.set()
                done.set()

        def query(i):
            try:
                ingesting.wait()
                n = 0
                while not done.is_set() or n < 50:
                    k, t = seed_docs[(n * 7 + i) % len(seed_docs)]
                    hits = db.query(t, min_jaccard=1.0)
                    assert k in [h.key for h in hits], k
                    if not done.is_set():
                        during[i] += 1
                    n += 1
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=ingest)] + [threading.Thread(target=query, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
        assert not errors, errors
        assert ingested and ingested[0].stored == 30_000
        # Both query threads ran while the ingest was in progress, and always found their documents.
        assert during[0] > 0 and during[1] > 0, during
        assert len(db) == 30_200


def test_parallel_inserts_from_threads(tmp_path):
    docs = corpus(200, seed=9)
    with fpdb.Db.create(tmp_path / "db", sync=False) as db:
        def work(part):
            for k, t in part:
                db.insert(k, t)

        threads = [threading.Thread(target=work, args=(docs[i::4],)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(db) == 200
        assert db.check().ok
