"""The GIL is released during engine calls: threads query while another ingests."""

from __future__ import annotations

import gc
import threading
import time

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


class Ticker:
    """A Python thread that records the time of each of its loop turns. A turn needs the GIL, so a
    call that holds the GIL shows as a gap: no turn between its start and its end."""

    def __init__(self) -> None:
        self.turns: list[float] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            self.turns.append(time.monotonic())
            time.sleep(0.001)

    def __enter__(self) -> "Ticker":
        self.thread.start()
        while not self.turns:
            time.sleep(0.001)
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()

    def during(self, start: float, end: float) -> int:
        """Turns strictly inside (start + 20 ms, end): the margin covers a turn that began before."""
        return sum(1 for t in self.turns if start + 0.02 < t < end)


def timed(ticker: Ticker, f) -> tuple[float, int]:
    start = time.monotonic()
    f()
    end = time.monotonic()
    return end - start, ticker.during(start, end)


def test_a_second_thread_runs_during_a_long_call(tmp_path):
    with fpdb.Db.create(tmp_path / "db", sync=False) as db:
        # 100K documents: a check long enough (~0.3 s on the 2-core dev box) to show the other thread.
        db.ingest(lazy_corpus(100_000), batch_size=5000).run()
        with Ticker() as ticker:
            took, turns = timed(ticker, db.check)
        # A call that long with the GIL held would leave no turn at all.
        assert took > 0.1, f"check took {took:.3f} s: too short to show anything"
        assert turns >= 10, f"{turns} turns of the other thread during a {took:.3f} s check"


def test_an_abandoned_ingest_drains_without_the_gil(tmp_path):
    with fpdb.Db.create(tmp_path / "db", sync=True) as db:
        # One drain lasts as long as the batches in flight at the drop (tens of ms here), so abandon
        # ingests of long documents until the drains add up to enough time to show the other thread.
        took, turns, rounds = 0.0, 0, 0
        acked = []
        with Ticker() as ticker:
            while took < 0.3 and rounds < 40:
                docs = ((f"{rounds}-{k}", " ".join([t] * 20)) for k, t in lazy_corpus(100_000, seed=rounds))
                ing = db.ingest(docs, batch_size=4000)
                first = next(ing)
                assert first.ok and first.stored
                acked.append(first.key)

                def drop():
                    nonlocal ing
                    del ing
                    gc.collect()

                t, n = timed(ticker, drop)
                took, turns, rounds = took + t, turns + n, rounds + 1
        assert took >= 0.3, f"{rounds} drains took {took:.3f} s: too short to show anything"
        # With the GIL held during a drain, the other thread gets no turn inside it.
        assert turns >= 10, f"{turns} turns of the other thread during {rounds} drains of {took:.3f} s"
        # What was acknowledged before each drop is stored, and the drained batches left the
        # database consistent. (How many documents a drain commits depends on how far the batcher
        # got: its latency bound cuts a batch short on a loaded machine, so no count is asserted.)
        assert all(k in db for k in acked), [k for k in acked if k not in db]
        assert len(db) >= rounds and db.check().ok


def test_a_db_dropped_without_close_flushes_without_the_gil(tmp_path):
    db = fpdb.Db.create(tmp_path / "db", sync=False)
    db.ingest(lazy_corpus(60_000), batch_size=2000).run()
    with Ticker() as ticker:

        def drop():
            nonlocal db
            del db
            gc.collect()

        took, turns = timed(ticker, drop)
    assert took > 0.05, f"the drop took {took:.3f} s: too short to show anything"
    assert turns >= 5, f"{turns} turns of the other thread during a {took:.3f} s drop"
    with fpdb.Db.open(tmp_path / "db") as db:
        assert len(db) == 60_000 and db.check().ok
