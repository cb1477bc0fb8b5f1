"""Online near-duplicate detection sharded over Ray actors (docs/scale-out.md).

    from fpdb.ray import Cluster
    c = Cluster.create("/data/papers", shards=4, address="auto")
    out = c.insert("arxiv/1", text)            # stored on its shard, then checked on every shard
    for r in c.ingest(rows):                   # results shaped like Db.ingest's, plus the shard
        ...
    c.query(text)                              # {"hits": [...], "partial": False, "down": []}
    c.close()

Each shard is a Ray actor owning its own fpdb database (`{path_prefix}-shard{i}.fpdb` on the disk
of the node it runs on). A document goes to shard `crc32(key) mod N` (a stable hash: the same
shard from every process and every run).

The write order: a document is inserted (durably, with `dedup="link"` inside its shard) into its
own shard first, and only then are the other shards queried for it. A shard actor runs one call at
a time, so of two near-duplicates A and B written concurrently on shards SA != SB, B's insert on SB
runs either before A's query on SB (A sees B) or after it; in the second case A's insert on SA
finished before A's query began, which was before B's insert, which was before B's query on SA: B
sees A. So at least one of the two sees the other, and the link is recorded on the one that saw
it, the later of the two (both, when each saw the other: the pair is one pair). Links are kept
durably on the finder's shard (its link log), so a restarted shard still knows them.

Global ids: shard `s`'s document with local id `i` has the global id `i * N + s`; a group's
canonical is its member with the smallest global id (`Cluster.groups`).

A shard that is down (its actor died, its node left) makes every answer that needed it carry
`partial: True` and name it in `down`; never a silent miss. `Cluster.restart(i)` (or
`Cluster.connect`, which restarts dead shards) starts the actor again, and it reopens its own
database: every acknowledged write is there.

## The link log (`{path_prefix}-shard{i}.links.jsonl`; one writer: `_Shard._append`, one reader: `_read_links`)

One JSON object per line, UTF-8, appended and fsynced before the insert is acknowledged:
`{"key": K, "gid": G, "other": K2, "other_gid": G2, "hamming": H, "jaccard": J}`: the document K
(global id G, stored on this shard) found K2 (global id G2, on any shard) as a verified
near-duplicate. A last line cut short by a crash is ignored (its insert was never acknowledged);
any other line that does not parse raises `CorruptionError`-style `ValueError` naming the line.
"""

from __future__ import annotations

import json
import os
import threading
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Union

SHARD_CALL_TIMEOUT = 60.0
"""Seconds a shard may take to answer one call before it counts as down."""


class ShardDownError(RuntimeError):
    """The shard that owns a key is down: the write was not made (retry after Cluster.restart)."""

    def __init__(self, shard: int, key: str, cause: str):
        super().__init__(f"shard {shard} (owner of key {key!r}) is down: {cause}; restart it with Cluster.restart({shard})")
        self.shard = shard
        self.key = key


def shard_of(key: str, shards: int) -> int:
    """The shard owning `key`: crc32 of its UTF-8 bytes mod the shard count (stable everywhere)."""
    return zlib.crc32(key.encode("utf-8")) % shards


def _read_links(path: Path) -> list[dict[str, Any]]:
    """The link log's records (see the module doc)."""
    if not path.exists():
        return []
    lines = path.read_bytes().split(b"\n")
    out = []
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError as e:
            if n == len(lines) - 1:  # a torn last line (no newline): its insert was never acknowledged
                break
            raise ValueError(f"{path}: line {n + 1} is not a link record ({e}); the log is damaged") from e
    return out


class _Shard:
    """The body of one shard actor: a database and its link log."""

    def __init__(self, path: str, index: int, shards: int, create: dict[str, Any]):
        import fpdb

        self.index, self.shards = index, shards
        self.path = Path(path)
        self.links_path = Path(path + ".links.jsonl") if not path.endswith(".fpdb") else Path(path[: -len(".fpdb")] + ".links.jsonl")
        if self.path.exists():
            self.db = fpdb.Db.open(self.path)
        else:
            self.db = fpdb.Db.create(self.path, **create)
        self._trim_torn_tail()
        self.links = open(self.links_path, "ab")

    def _trim_torn_tail(self) -> None:
        if self.links_path.exists():
            data = self.links_path.read_bytes()
            cut = data.rfind(b"\n") + 1
            if cut != len(data):
                with open(self.links_path, "r+b") as f:
                    f.truncate(cut)
                    os.fsync(f.fileno())

    def gid(self, local: int) -> int:
        return local * self.shards + self.index

    def _hit(self, h: Any) -> dict[str, Any]:
        d = h.to_dict()
        d["shard"] = self.index
        d["global_id"] = self.gid(h.id)
        return d

    def _append(self, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        self.links.write(b"".join(json.dumps(r, sort_keys=True).encode() + b"\n" for r in records))
        self.links.flush()
        os.fsync(self.links.fileno())

    def ping(self) -> int:
        return self.index

    def insert_many(self, items: list[tuple[str, str]], dedup: str) -> list[dict[str, Any]]:
        """Insert durably through the engine's ingest; local near-duplicates are linked and logged."""
        out: list[dict[str, Any]] = []
        links: list[dict[str, Any]] = []
        for r in self.db.ingest(items, dedup=dedup):
            if r.error is not None:
                out.append({"key": r.key, "error": f"{type(r.error).__name__}: {r.error}"})
                continue
            o = r.outcome
            dups = [self._hit(h) for h in o.duplicates]
            gid = self.gid(o.id) if o.id is not None else None
            if gid is not None:
                links += [_link(o.key, gid, h) for h in dups]
            out.append({"key": o.key, "id": o.id, "global_id": gid, "stored": o.stored, "replaced": o.replaced, "duplicates": dups})
        self._append(links)
        return out

    def query_many(self, texts: list[str], opts: dict[str, Any]) -> list[list[dict[str, Any]]]:
        return [[self._hit(h) for h in self.db.query(t, **opts)] for t in texts]

    def add_links(self, records: list[dict[str, Any]]) -> None:
        self._append(records)

    def read_links(self) -> list[dict[str, Any]]:
        return _read_links(self.links_path)

    def stats(self) -> dict[str, Any]:
        d = self.db.stats().to_dict()
        d["shard"] = self.index
        d["path"] = str(self.path)
        d["links"] = len(_read_links(self.links_path))
        return d

    def keys_present(self, keys: list[str]) -> list[bool]:
        return [k in self.db for k in keys]

    def close(self) -> None:
        self.links.close()
        self.db.close()


def _link(key: str, gid: int, hit: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, "gid": gid, "other": hit["key"], "other_gid": hit["global_id"], "hamming": hit["hamming"], "jaccard": hit["jaccard"]}


@dataclass
class Outcome:
    """What a cluster insert did: like fpdb.InsertOutcome, plus the shard and the global ids."""

    key: str
    shard: int
    id: Optional[int]
    global_id: Optional[int]
    stored: bool
    replaced: Optional[int]
    duplicates: list[dict[str, Any]]
    """Verified near-duplicates on every shard that answered (hit dicts with "shard", "global_id")."""
    group: Optional[int]
    """The smallest global id among this document and its duplicates (Cluster.groups: the closure)."""
    partial: bool = False
    down: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class IngestResult:
    """The fate of one item of Cluster.ingest (fields as fpdb.IngestResult, plus shard/partial/down)."""

    seq: int
    key: Optional[str]
    shard: Optional[int]
    outcome: Optional[Outcome]
    error: Optional[BaseException]
    partial: bool = False
    down: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def stored(self) -> bool:
        return self.outcome is not None and self.outcome.stored


def _shard_name(i: int) -> str:
    return f"shard-{i}"


class Cluster:
    """N fpdb shards as Ray actors; see the module doc for the write order and failure answers."""

    def __init__(self, path_prefix: str, shards: int, create: dict[str, Any], placement: Optional[list[dict[str, float]]] = None):
        self.path_prefix = str(path_prefix)
        self.shards = shards
        self._actors: list[Any] = [None] * shards
        self._create = create
        self._placement = placement
        self._lock = threading.Lock()

    # -- lifecycle -----------------------------------------------------------------------------

    @staticmethod
    def _ray(address: Optional[str]) -> Any:
        import ray

        if not ray.is_initialized():
            ray.init(address=address, namespace="fpdb", ignore_reinit_error=True, log_to_driver=False)
        return ray

    @staticmethod
    def _actor_name(path_prefix: str, i: int) -> str:
        return f"fpdb:{os.path.abspath(path_prefix)}:{i}"

    @classmethod
    def create(
        cls,
        path_prefix: Union[str, os.PathLike[str]],
        shards: int = 4,
        address: Optional[str] = None,
        placement: Optional[list[dict[str, float]]] = None,
        **db_options: Any,
    ) -> "Cluster":
        """Start `shards` shard actors, each creating (or reopening) `{path_prefix}-shard{i}.fpdb`;
        `db_options` are Db.create's (max_distance, min_jaccard, shingle, ...). `placement`: per
        shard, the Ray custom resources its actor needs (e.g. {"fpdb_worker": 0.01} puts it on the
        node that offers them), so a restarted shard comes back where its database is."""
        if shards < 1:
            raise ValueError(f"shards must be at least 1, got {shards}")
        if placement is not None and len(placement) != shards:
            raise ValueError(f"placement must name the resources of each of the {shards} shards, got {len(placement)}")
        prefix = os.path.abspath(os.fspath(path_prefix))
        cls._ray(address)
        manifest = Path(prefix + ".cluster.json")
        if manifest.exists():
            raise FileExistsError(f"{manifest}: a cluster exists at this prefix; use Cluster.connect")
        manifest.parent.mkdir(parents=True, exist_ok=True)
        manifest.write_text(json.dumps({"shards": shards, "options": db_options, "placement": placement}) + "\n")
        c = cls(prefix, shards, dict(db_options), placement)
        for i in range(shards):
            c._actors[i] = c._start(i)
        c._wait_ready()
        return c

    @classmethod
    def connect(cls, path_prefix: Union[str, os.PathLike[str]], address: Optional[str] = None) -> "Cluster":
        """Attach to the shards of an existing cluster; shards that are not running are restarted
        (each reopens its own database)."""
        prefix = os.path.abspath(os.fspath(path_prefix))
        ray = cls._ray(address)
        manifest = Path(prefix + ".cluster.json")
        if not manifest.exists():
            raise FileNotFoundError(f"{manifest}: no cluster at this prefix; use Cluster.create")
        m = json.loads(manifest.read_text())
        c = cls(prefix, int(m["shards"]), dict(m.get("options", {})), m.get("placement"))
        for i in range(c.shards):
            try:
                a = ray.get_actor(cls._actor_name(prefix, i), namespace="fpdb")
                ray.get(a.ping.remote(), timeout=SHARD_CALL_TIMEOUT)
                c._actors[i] = a
            except Exception:  # noqa: BLE001 - not running (never started, died, node gone): start it
                c._actors[i] = c._start(i)
        c._wait_ready()
        return c

    def _start(self, i: int) -> Any:
        import ray

        name = self._actor_name(self.path_prefix, i)
        try:  # a dead actor's name is freed; a live one is replaced only by restart()
            old = ray.get_actor(name, namespace="fpdb")
            ray.kill(old, no_restart=True)
        except ValueError:
            pass
        opts: dict[str, Any] = {"name": name, "namespace": "fpdb", "lifetime": "detached", "max_restarts": 0, "num_cpus": 0}
        if self._placement and self._placement[i]:
            opts["resources"] = dict(self._placement[i])
        actor_cls = ray.remote(_Shard)
        return actor_cls.options(**opts).remote(f"{self.path_prefix}-shard{i}.fpdb", i, self.shards, self._create)

    def _wait_ready(self) -> None:
        import ray

        ray.get([a.ping.remote() for a in self._actors], timeout=120)

    def restart(self, shard: int, timeout: float = 120.0) -> None:
        """Start shard `shard` again (killing what is left of it); it reopens its own database.
        Retries while the database is still locked by the dying process, up to `timeout` seconds."""
        import time

        import ray

        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                self._actors[shard] = self._start(shard)
            try:
                ray.get(self._actors[shard].ping.remote(), timeout=max(deadline - time.monotonic(), 1.0))
                return
            except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
                if time.monotonic() >= deadline:
                    raise
                time.sleep(1.0)

    def kill(self, shard: int) -> None:
        """Stop shard `shard`'s actor at once (for failure drills): answers become partial.

        `ray.kill` only asks for the actor's end; a call sent a moment later may still be served.
        This returns once the actor answers no more (up to `SHARD_CALL_TIMEOUT` seconds), so the
        next call sees the shard down."""
        import time

        import ray

        actor = self._actors[shard]
        ray.kill(actor, no_restart=True)
        deadline = time.monotonic() + SHARD_CALL_TIMEOUT
        while time.monotonic() < deadline:
            try:
                ray.get(actor.ping.remote(), timeout=SHARD_CALL_TIMEOUT)
            except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
                return
            time.sleep(0.05)

    def close(self, shutdown: bool = False) -> None:
        """Close every shard's database and end its actor (the databases stay on disk)."""
        import ray

        for a in self._actors:
            try:
                ray.get(a.close.remote(), timeout=SHARD_CALL_TIMEOUT)
                ray.kill(a, no_restart=True)
            except Exception:  # noqa: BLE001 - already down
                pass
        if shutdown:
            ray.shutdown()

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc: Any) -> bool:
        self.close()
        return False

    # -- calls ---------------------------------------------------------------------------------

    def _gather(self, refs: dict[int, Any]) -> tuple[dict[int, Any], dict[int, str]]:
        """ray.get of each shard's call: (answers, {shard: why it is down})."""
        import ray

        got: dict[int, Any] = {}
        down: dict[int, str] = {}
        for s, ref in refs.items():
            try:
                got[s] = ray.get(ref, timeout=SHARD_CALL_TIMEOUT)
            except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError) as e:
                down[s] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        return got, down

    def _query_opts(self, max_distance: Optional[int], min_jaccard: Optional[float], limit: Optional[int]) -> dict[str, Any]:
        return {k: v for k, v in (("max_distance", max_distance), ("min_jaccard", min_jaccard), ("limit", limit)) if v is not None}

    def query(
        self, text: str, *, max_distance: Optional[int] = None, min_jaccard: Optional[float] = None, limit: Optional[int] = None
    ) -> dict[str, Any]:
        """Verified near-duplicates of `text` on every shard: {"hits", "partial", "down"}; hits best
        first (Jaccard, then Hamming, then global id)."""
        opts = self._query_opts(max_distance, min_jaccard, limit)
        got, down = self._gather({s: a.query_many.remote([text], opts) for s, a in enumerate(self._actors)})
        hits = [h for s in sorted(got) for h in got[s][0]]
        hits.sort(key=_rank)
        if limit is not None:
            hits = hits[:limit]
        return {"hits": hits, "partial": bool(down), "down": [_shard_name(s) for s in sorted(down)]}

    def insert(self, key: str, text: str, *, dedup: str = "link") -> Outcome:
        """Insert one document (its shard first, then a query of every other shard)."""
        r = next(iter(self.ingest([(key, text)], dedup=dedup, batch_size=1)))
        if r.error is not None:
            raise r.error
        assert r.outcome is not None
        return r.outcome

    def ingest(self, docs: Iterable[Any], *, batch_size: int = 64, dedup: str = "link") -> Iterator[IngestResult]:
        """Ingest (key, text) pairs or {"key", "text"} dicts; yields one IngestResult per item, in
        order, after its batch is durable on its shard and checked on every other shard."""
        if dedup not in ("link", "off"):
            raise ValueError(f'dedup must be "link" or "off" on a cluster, got {dedup!r}')
        batch: list[tuple[int, str, str]] = []
        seq = 0
        for item in docs:
            key, text = (item["key"], item["text"]) if isinstance(item, dict) else (item[0], item[1])
            batch.append((seq, key, text))
            seq += 1
            if len(batch) >= batch_size:
                yield from self._ingest_batch(batch, dedup)
                batch = []
        if batch:
            yield from self._ingest_batch(batch, dedup)

    def _ingest_batch(self, batch: list[tuple[int, str, str]], dedup: str) -> list[IngestResult]:
        per: dict[int, list[tuple[int, str, str]]] = {}
        for item in batch:
            per.setdefault(shard_of(item[1], self.shards), []).append(item)
        # 1. Each document into its own shard (durable, local near-duplicates linked).
        stored, down = self._gather({s: self._actors[s].insert_many.remote([(k, t) for _, k, t in items], dedup) for s, items in per.items()})
        results: dict[int, IngestResult] = {}
        for s, items in per.items():
            if s in down:
                for q, k, _ in items:
                    results[q] = IngestResult(q, k, s, None, ShardDownError(s, k, down[s]))
        # 2. Then every other shard is asked about them.
        queries: dict[tuple[int, int], Any] = {}
        for s in stored if dedup == "link" else ():
            texts = [t for _, _, t in per[s]]
            for o in range(self.shards):
                if o != s:
                    queries[(s, o)] = self._actors[o].query_many.remote(texts, {})
        answers: dict[tuple[int, int], Any] = {}
        qdown: dict[int, str] = {}
        for (s, o), ref in queries.items():
            got, dn = self._gather({o: ref})
            if dn:
                qdown.update(dn)
            else:
                answers[(s, o)] = got[o]
        # 3. Links found on other shards are logged on the finder's shard before acknowledging.
        logs: dict[int, Any] = {}
        for s in stored:
            new_links: list[dict[str, Any]] = []
            for n, ((q, k, _), r) in enumerate(zip(per[s], stored[s])):
                if "error" in r:
                    results[q] = IngestResult(q, k, s, None, ValueError(r["error"]))
                    continue
                dups = list(r["duplicates"])
                missing = sorted(o for o in range(self.shards) if dedup == "link" and o != s and (s, o) not in answers)
                if r["stored"] and dedup == "link":
                    for o in range(self.shards):
                        if (s, o) in answers:
                            found = answers[(s, o)][n]
                            dups += found
                            new_links += [_link(k, r["global_id"], h) for h in found]
                dups.sort(key=_rank)
                gids = [g for g in [r["global_id"], *(h["global_id"] for h in dups)] if g is not None]
                names = [_shard_name(o) for o in missing]
                out = Outcome(k, s, r["id"], r["global_id"], r["stored"], r["replaced"], dups, min(gids) if gids else None, bool(missing), names)
                results[q] = IngestResult(q, k, s, out, None, bool(missing), names)
            if new_links:
                logs[s] = self._actors[s].add_links.remote(new_links)
        _, ldown = self._gather(logs)
        for s, why in ldown.items():  # the links could not be made durable: not acknowledged
            for q, k, _ in per[s]:
                results[q] = IngestResult(q, k, s, None, ShardDownError(s, k, why))
        return [results[q] for q, _, _ in batch]

    def stats(self) -> dict[str, Any]:
        """Per-shard counters and totals: {"shards": [...], "docs", "partial", "down"}."""
        got, down = self._gather({s: a.stats.remote() for s, a in enumerate(self._actors)})
        return {
            "shards": [got[s] for s in sorted(got)],
            "docs": sum(g["docs"] for g in got.values()),
            "partial": bool(down),
            "down": [_shard_name(s) for s in sorted(down)],
        }

    def contains(self, keys: list[str]) -> dict[str, Optional[bool]]:
        """Whether each key is stored (None: its shard is down)."""
        per: dict[int, list[str]] = {}
        for k in keys:
            per.setdefault(shard_of(k, self.shards), []).append(k)
        got, _ = self._gather({s: self._actors[s].keys_present.remote(ks) for s, ks in per.items()})
        out: dict[str, Optional[bool]] = {}
        for s, ks in per.items():
            for n, k in enumerate(ks):
                out[k] = got[s][n] if s in got else None
        return out

    def links(self) -> dict[str, Any]:
        """Every recorded near-duplicate link of every shard: {"pairs": set of (key, key) sorted
        pairs, "partial", "down"}."""
        got, down = self._gather({s: a.read_links.remote() for s, a in enumerate(self._actors)})
        pairs = {tuple(sorted((r["key"], r["other"]))) for s in got for r in got[s]}
        return {"pairs": pairs, "records": [r for s in sorted(got) for r in got[s]], "partial": bool(down), "down": [_shard_name(s) for s in sorted(down)]}

    def groups(self) -> dict[str, Any]:
        """Duplicate groups across shards: connected components of every shard's links, canonical =
        smallest global id. {"groups": [{"group", "canonical", "size", "members"}], "partial", "down"}."""
        ln = self.links()
        parent: dict[int, int] = {}
        keys: dict[int, str] = {}

        def find(x: int) -> int:
            while parent.setdefault(x, x) != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for r in ln["records"]:
            keys[r["gid"]], keys[r["other_gid"]] = r["key"], r["other"]
            a, b = find(r["gid"]), find(r["other_gid"])
            if a != b:
                parent[max(a, b)] = min(a, b)
        comps: dict[int, list[int]] = {}
        for g in list(parent):
            comps.setdefault(find(g), []).append(g)
        groups = [
            {"group": root, "canonical": keys[root], "size": len(m), "members": [keys[x] for x in sorted(m)]}
            for root, m in sorted(comps.items())
            if len(m) > 1
        ]
        return {"groups": groups, "partial": ln["partial"], "down": ln["down"]}


def _rank(h: dict[str, Any]) -> tuple[float, int, int]:
    return (-(h.get("jaccard") or 0.0), h["hamming"], h["global_id"])
