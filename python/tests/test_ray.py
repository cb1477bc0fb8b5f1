"""fpdb.ray: 4 shard actors (local Ray), 4 client threads ingesting at once find exactly the duplicate
pairs of single-node `fpdb ingest --dedup link` on the same corpus; a killed shard makes answers
`partial: true` naming it (and refuses writes it owns); restarted, it answers from its own database
with every acknowledged document."""

from __future__ import annotations

import threading

import pytest

import fpdb

pytest.importorskip("ray")

from conftest import corpus, run_cli, write_jsonl  # noqa: E402

N = 240
CLIENTS = 4


@pytest.fixture(scope="module")
def ray_local():
    import ray

    # 127.0.0.2: Ray replaces 127.0.0.1 with the machine's network address, but keeps this one.
    ray.init(address="local", num_cpus=4, include_dashboard=False, namespace="fpdb", log_to_driver=False, _node_ip_address="127.0.0.2")
    yield ray
    ray.shutdown()


def single_node_pairs(tmp, cli_bin, docs) -> set[tuple[str, str]]:
    src = write_jsonl(tmp / "docs.jsonl", docs)
    db = tmp / "one.fpdb"
    run_cli(cli_bin, "init", str(db))
    out = run_cli(cli_bin, "ingest", str(db), str(src), "--dedup", "link", "--no-progress")
    return {tuple(sorted((r["key"], d["key"]))) for r in out for d in r["duplicates"]}


def test_concurrent_ingest_equals_single_node_and_survives_a_dead_shard(tmp_path, cli_bin, ray_local):
    from fpdb.ray import Cluster, ShardDownError, shard_of

    docs = corpus(N, seed=3, dup_every=2)
    want = single_node_pairs(tmp_path, cli_bin, docs)
    assert len(want) > N // 4

    c = Cluster.create(tmp_path / "c", shards=4)
    # Client i takes every 4th document: near-duplicates (each dup follows its original closely)
    # are in flight on different clients, and mostly on different shards, at the same time.
    acked: list[list[str]] = [[] for _ in range(CLIENTS)]
    found: list[set] = [set() for _ in range(CLIENTS)]
    errors: list[BaseException] = []

    def client(i: int) -> None:
        try:
            for r in c.ingest(docs[i::CLIENTS], batch_size=8):
                assert r.ok and r.stored and not r.partial, r
                acked[i].append(r.key)
                found[i] |= {tuple(sorted((r.key, d.key))) for d in r.outcome.duplicates}
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sum(map(len, acked)) == N
    got = set().union(*found)
    assert got == want  # 0 missed, 0 extra
    assert c.links()["pairs"] == want  # the durable link logs hold the same pairs
    st = c.stats()
    assert st["docs"] == N and not st["partial"] and len(st["shards"]) == 4
    assert len({shard_of(k, 4) for k, _ in docs}) == 4  # every shard took part
    # Most pairs span two shards: found by the query after the insert, not by a shard's own insert.
    assert sum(shard_of(a, 4) != shard_of(b, 4) for a, b in want) > len(want) // 2

    # Groups across shards: the components of the single node's pair graph, canonical = smallest global id.
    gs = c.groups()["groups"]
    comps: dict[str, frozenset] = {}
    for a, b in want:
        u = comps.get(a, frozenset([a])) | comps.get(b, frozenset([b]))
        for x in u:
            comps[x] = u
    assert {frozenset(g["members"]) for g in gs} == set(comps.values())
    assert all(g["size"] == len(g["members"]) and g["canonical"] == g["members"][0] for g in gs)

    # One shard down: answers are partial and name it; writes it owns are refused, not lost.
    c.kill(2)
    probe = docs[1][1]
    q = c.query(probe)
    assert q["partial"] is True and q["down"] == ["shard-2"]
    owned = next(f"new/{i}" for i in range(1000) if shard_of(f"new/{i}", 4) == 2)
    other = next(f"new/{i}" for i in range(1000) if shard_of(f"new/{i}", 4) == 0)
    with pytest.raises(ShardDownError):
        c.insert(owned, "a text for the dead shard " * 5)
    o = c.insert(other, docs[5][1])
    assert o.stored and o.partial and o.down == ["shard-2"]
    assert c.stats()["partial"] is True

    # Restarted: it reopens its database; full answers; every acknowledged key is there.
    c.restart(2)
    q2 = c.query(probe)
    assert q2["partial"] is False and q2["down"] == []
    assert {h.key for h in q["hits"]} <= {h.key for h in q2["hits"]}
    assert all(isinstance(h, fpdb.Hit) and h.id % 4 == shard_of(h.key, 4) for h in q2["hits"])
    present = c.contains([k for ks in acked for k in ks] + [other])
    assert all(present.values()) and len(present) == N + 1
    assert c.stats()["docs"] == N + 1
    assert c.links()["pairs"] >= want
    c.close()

    # A new driver handle finds the same cluster from its prefix (shards reopen their databases).
    c2 = Cluster.connect(tmp_path / "c")
    assert c2.stats()["docs"] == N + 1
    c2.close()


def components(pairs: set) -> set:
    comps: dict[str, frozenset] = {}
    for a, b in pairs:
        u = comps.get(a, frozenset([a])) | comps.get(b, frozenset([b]))
        for x in u:
            comps[x] = u
    return set(comps.values())


def keys_on(shard: int, n: int, prefix: str) -> list[str]:
    from fpdb.ray import shard_of

    return [k for k in (f"{prefix}/{i}" for i in range(10 * n + 100)) if shard_of(k, 4) == shard][:n]


def test_replaced_and_deleted_keys_leave_their_groups(tmp_path, ray_local):
    from fpdb.ray import Cluster

    docs = corpus(6, seed=21, dup_every=100)
    a, b, c_ = keys_on(0, 1, "a")[0], keys_on(1, 1, "b")[0], keys_on(2, 1, "c")[0]
    c = Cluster.create(tmp_path / "c", shards=4)
    c.insert(a, docs[0][1])
    assert [h.key for h in c.insert(b, docs[0][1] + " x").duplicates] == [a]
    c.insert(c_, docs[1][1])
    assert [g["members"] for g in c.groups()["groups"]] == [[a, b]]
    # a now has another text: its old document (and its link to b) is gone.
    o = c.insert(a, docs[1][1] + " y")
    assert o.replaced is not None and [h.key for h in o.duplicates] == [c_]
    g = c.groups()
    assert [sorted(x["members"]) for x in g["groups"]] == [sorted([a, c_])] and not g["partial"]
    assert c.links()["pairs"] == {tuple(sorted((a, c_)))}
    assert c.delete(c_) and c.groups()["groups"] == []
    c.close()


def test_a_partial_insert_is_completed_when_the_shard_returns(tmp_path, ray_local):
    from fpdb.ray import Cluster

    docs = corpus(4, seed=22, dup_every=100)
    x, y = keys_on(2, 1, "x")[0], keys_on(0, 1, "y")[0]
    c = Cluster.create(tmp_path / "c", shards=4)
    c.insert(x, docs[0][1])
    c.kill(2)
    o = c.insert(y, docs[0][1] + " again")  # its near-duplicate x is on the dead shard
    assert o.stored and o.partial and o.down == ["shard-2"] and o.duplicates == []
    g = c.groups()
    assert g["partial"] and g["groups"] == []
    c.restart(2)  # the entry left open by y's insert is searched on shard 2 now
    g = c.groups()
    assert not g["partial"] and [sorted(x_["members"]) for x_ in g["groups"]] == [sorted([x, y])]
    c.close()
    # Durable: a new driver sees the same (nothing left open).
    c2 = Cluster.connect(tmp_path / "c")
    assert c2.repair()["open"] == 0 and len(c2.groups()["groups"]) == 1
    c2.close()


def test_a_shard_killed_mid_ingest_under_4_clients_and_restarted(tmp_path, cli_bin, ray_local):
    """Shard 1 dies right after committing a batch (before its links); the clients go on (writes to
    shard 1 refused, others acknowledged partial), shard 1 restarts, refused writes are retried:
    every acknowledged document is stored and linked, and the groups are one node's."""
    from fpdb.ray import Cluster, ShardDownError

    docs = corpus(160, seed=23, dup_every=2)
    want = single_node_pairs(tmp_path, cli_bin, docs)
    c = Cluster.create(tmp_path / "c", shards=4)
    acked: list[str] = []
    retry: list[list[tuple[str, str]]] = [[] for _ in range(CLIENTS)]
    errors: list[BaseException] = []
    lock = threading.Lock()
    crashed = threading.Event()

    def client(i: int) -> None:
        try:
            for n, r in enumerate(c.ingest(docs[i::CLIENTS], batch_size=4)):
                if r.ok:
                    with lock:
                        acked.append(r.key)
                else:
                    assert isinstance(r.error, ShardDownError), r.error
                    crashed.set()
                    retry[i].append((r.key, dict(docs)[r.key]))
                if i == 0 and n == 12:
                    c.crash_after_commit(1)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert crashed.is_set() and any(retry)
    assert c.groups()["partial"]
    c.restart(1)
    for items in retry:
        for r in c.ingest(items):
            assert r.ok and r.stored and not r.partial, r
            acked.append(r.key)
    assert sorted(set(acked)) == sorted(k for k, _ in docs)
    assert all(c.contains([k for k, _ in docs]).values())
    ln = c.links()
    assert not ln["partial"] and ln["pairs"] == want
    g = c.groups()
    assert not g["partial"] and {frozenset(x["members"]) for x in g["groups"]} == components(want)
    c.close()


def test_dedup_dataset_in_pairs_and_groups_out(tmp_path, cli_bin, ray_local):
    """fpdb.ray.dedup_dataset: a ray.data Dataset (other column names, an extra column) in; the
    pairs and groups of one node's `fpdb ingest --dedup link` out, as Datasets."""
    import ray

    from fpdb.ray import dedup_dataset

    docs = corpus(80, seed=24, dup_every=2)
    want = single_node_pairs(tmp_path, cli_bin, docs)
    ds = ray.data.from_items([{"id": k, "body": t, "n": i} for i, (k, t) in enumerate(docs)])
    out = dedup_dataset(ds, tmp_path / "d", key_col="id", text_col="body", shards=4, batch_size=16, concurrency=2)
    assert not out.partial and out.down == []
    res = out.results.take_all()
    assert len(res) == 80 and all(r["stored"] and r["error"] is None for r in res)
    assert {(r["a"], r["b"]) for r in out.pairs.take_all()} == want
    assert {frozenset(g["members"]) for g in out.groups.take_all()} == components(want)
