"""fpdb.ray: 4 shard actors (local Ray), 4 client threads ingesting at once find exactly the duplicate
pairs of single-node `fpdb ingest --dedup link` on the same corpus; a killed shard makes answers
`partial: true` naming it (and refuses writes it owns); restarted, it answers from its own database
with every acknowledged document."""

from __future__ import annotations

import threading

import pytest

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
                found[i] |= {tuple(sorted((r.key, d["key"]))) for d in r.outcome.duplicates}
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
    assert {h["key"] for h in q["hits"]} <= {h["key"] for h in q2["hits"]}
    present = c.contains([k for ks in acked for k in ks] + [other])
    assert all(present.values()) and len(present) == N + 1
    assert c.stats()["docs"] == N + 1
    assert c.links()["pairs"] >= want
    c.close()

    # A new driver handle finds the same cluster from its prefix (shards reopen their databases).
    c2 = Cluster.connect(tmp_path / "c")
    assert c2.stats()["docs"] == N + 1
    c2.close()
