"""Online near-duplicate detection sharded over Ray actors (docs/scale-out.md).

    from fpdb.ray import Cluster
    c = Cluster.create("/data/papers", shards=4, address="auto")
    out = c.insert("arxiv/1", text)            # stored on its shard, then checked on every shard
    for r in c.ingest(rows):                   # results shaped like Db.ingest's, plus the shard
        ...
    c.query(text)                              # {"hits": [Hit, ...], "partial": False, "down": []}
    c.groups()                                 # groups over live documents; partial until repaired
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

A shard that is down (its actor died, its node left, or no answer within `SHARD_CALL_TIMEOUT`
seconds: one deadline for all the shards of a call) makes every answer that needed it carry
`partial: True` and name it in `down`; never a silent miss. `Cluster.restart(i)` (or
`Cluster.connect`, which restarts dead shards) starts the actor again, and it reopens its own
database: every acknowledged write is there.

Repair. Before a shard commits a batch it makes a durable to-do entry per document (its to-do
log): which shards must still be searched for it, its own included. An entry is marked done for a
shard once the links that shard's answer gave are in the link log. So a shard that dies between
its commit and its links, or an insert acknowledged `partial` because another shard was down,
leaves entries that are not done: a shard completes its own part when it opens, and
`Cluster.repair()` (run by `connect`, `restart`, `links` and `groups`) searches the shards that are
back for the others. `groups()` says `partial` while an entry is not done. An entry whose key was
replaced since, or that never reached the database, is closed without a search.

Live links. A link names both documents by global id; a document replaced (a new insert of its
key: a new id) or deleted is no longer live, and `links()`/`groups()` leave out every link with an
end that is not live (each shard answers for its own documents), so groups are over live documents
only and a key is in at most one group.

## The link log (`{path_prefix}-shard{i}.links.jsonl`; one writer: `_Shard._append`, one reader: `_read_links`)

One JSON object per line, UTF-8, appended and fsynced before the insert is acknowledged:
`{"key": K, "gid": G, "other": K2, "other_gid": G2, "hamming": H, "jaccard": J}`: the document K
(global id G, stored on this shard) found K2 (global id G2, on any shard) as a verified
near-duplicate. A last line cut short by a crash is ignored (its insert was never acknowledged);
any other line that does not parse raises `CorruptionError`-style `ValueError` naming the line.

## The to-do log (`{path_prefix}-shard{i}.todo.jsonl`; one writer: `_Shard._todo_append`, one reader: `_read_links`)

The same framing (one JSON object per line, fsynced, torn last line dropped). Two records:
`{"op": "pending", "n": N, "key": K, "text": T, "shards": [S, ...]}`, written before the batch
holding K commits (`n` counts this shard's pending records from 0), and `{"op": "done", "n": N,
"shards": [S, ...]}`, written once the links found on those shards for entry N are durable (or
when the entry is moot). Entry N is complete when its shards are all done.

Both files are created with their directory fsynced, so a crash cannot lose a log's name.
"""

from __future__ import annotations

import json
import os
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Union

SHARD_CALL_TIMEOUT = 60.0
"""Seconds the shards of one call may take to answer (one deadline for all) before a silent one
counts as down."""
TODO_TRUNCATE_BYTES = 64 << 20
"""A to-do log this large is emptied once none of its entries is open."""


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


def _open_log(path: Path) -> Any:
    """A log opened for appending: a torn last line cut off; a new file's directory fsynced."""
    if path.exists():
        data = path.read_bytes()
        cut = data.rfind(b"\n") + 1
        if cut != len(data):
            with open(path, "r+b") as f:
                f.truncate(cut)
                os.fsync(f.fileno())
        return open(path, "ab")
    f = open(path, "ab")
    os.fsync(f.fileno())
    d = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(d)
    finally:
        os.close(d)
    return f


def _append(f: Any, records: list[dict[str, Any]]) -> None:
    """The one writer of both logs: JSON lines, flushed and fsynced."""
    if not records:
        return
    f.write(b"".join(json.dumps(r, sort_keys=True).encode() + b"\n" for r in records))
    f.flush()
    os.fsync(f.fileno())


class _Shard:
    """The body of one shard actor: a database, its link log and its to-do log."""

    def __init__(self, path: str, index: int, shards: int, create: dict[str, Any]):
        import fpdb

        self.index, self.shards = index, shards
        self.path = Path(path)
        base = path[: -len(".fpdb")] if path.endswith(".fpdb") else path
        self.links_path = Path(base + ".links.jsonl")
        self.todo_path = Path(base + ".todo.jsonl")
        if self.path.exists():
            self.db = fpdb.Db.open(self.path)
        else:
            self.db = fpdb.Db.create(self.path, **create)
        self.links = _open_log(self.links_path)
        self.todo = _open_log(self.todo_path)
        self._crash_after_commit = False
        self._latest_of: Optional[dict[str, int]] = None
        # Open entries: n -> record (with "left": the shards not done).
        self.open: dict[int, dict[str, Any]] = {}
        self.next_n = 0
        for r in _read_links(self.todo_path):
            if r["op"] == "pending":
                self.open[r["n"]] = dict(r, left=set(r["shards"]))
                self.next_n = r["n"] + 1
            elif r["n"] in self.open:
                self.open[r["n"]]["left"] -= set(r["shards"])
                if not self.open[r["n"]]["left"]:
                    del self.open[r["n"]]
        self._close_moot()
        self._complete_own()

    def gid(self, local: int) -> int:
        return local * self.shards + self.index

    def _hit(self, h: Any) -> dict[str, Any]:
        d = h.to_dict()
        d["shard"] = self.index
        d["global_id"] = self.gid(h.id)
        return d

    def _append(self, records: list[dict[str, Any]]) -> None:
        _append(self.links, records)

    def _done(self, done: list[tuple[int, list[int]]]) -> None:
        """Marks entries done for shards (after their links are durable)."""
        recs = []
        for n, shards in done:
            e = self.open.get(n)
            if e is None:
                continue
            recs.append({"op": "done", "n": n, "shards": sorted(shards)})
            e["left"] -= set(shards)
            if not e["left"]:
                del self.open[n]
                self._latest_of = None
        _append(self.todo, recs)
        if not self.open and self.todo.tell() > TODO_TRUNCATE_BYTES:
            # Every entry complete: the log holds nothing that is still needed.
            self.todo.truncate(0)
            os.fsync(self.todo.fileno())

    def _latest(self) -> dict[str, int]:
        """The newest open entry of each key (cached until the open entries change)."""
        if self._latest_of is None:
            self._latest_of = {}
            for n, e in self.open.items():
                self._latest_of[e["key"]] = max(n, self._latest_of.get(e["key"], -1))
        return self._latest_of

    def _live_doc(self, e: dict[str, Any]) -> Optional[int]:
        """The local id of entry e's document when it is the key's live document, else None (moot:
        the key was replaced by a later entry, or this entry never reached the database)."""
        import fpdb

        if self._latest().get(e["key"], e["n"]) > e["n"]:
            return None
        d = self.db.get(e["key"])
        if d is None or d.simhash != fpdb.fingerprint(e["text"], self.db.spec).simhash:
            return None
        return int(d.id)

    def _close_moot(self) -> None:
        self._done([(n, sorted(e["left"])) for n, e in list(self.open.items()) if self._live_doc(e) is None])

    def _complete_own(self) -> None:
        """This shard's own part of the open entries: the links the insert would have logged."""
        mine = [(n, e) for n, e in self.open.items() if self.index in e["left"]]
        if not mine:
            return
        links = []
        for n, e in mine:
            lid = self._live_doc(e)
            if lid is None:
                continue
            gid = self.gid(lid)
            links += [_link(e["key"], gid, self._hit(h)) for h in self.db.query(e["text"]) if h.id != lid]
        self._append(links)
        self._done([(n, [self.index]) for n, _ in mine])

    def ping(self) -> int:
        return self.index

    def crash_after_commit(self) -> None:
        """Failure drill: the next insert_many exits the process right after its commit, before
        its links and done records (what a crash at that point leaves)."""
        self._crash_after_commit = True

    def insert_many(self, items: list[tuple[str, str]], dedup: str) -> list[dict[str, Any]]:
        """Insert durably through the engine's ingest; local near-duplicates are linked and logged.
        With dedup "link" each item is first a to-do entry (searched on every shard: none done)."""
        out: list[dict[str, Any]] = []
        links: list[dict[str, Any]] = []
        ns: list[Optional[int]] = [None] * len(items)
        if dedup == "link":
            recs = []
            for i, (k, t) in enumerate(items):
                ns[i] = self.next_n
                rec = {"op": "pending", "n": self.next_n, "key": k, "text": t, "shards": list(range(self.shards))}
                recs.append(rec)
                self.open[self.next_n] = dict(rec, left=set(rec["shards"]))
                self.next_n += 1
            self._latest_of = None
            _append(self.todo, recs)
        results = list(self.db.ingest(items, dedup=dedup))
        if self._crash_after_commit:
            os._exit(17)
        moot = []
        for i, r in enumerate(results):
            if r.error is not None:
                out.append({"key": r.key, "n": None, "error": f"{type(r.error).__name__}: {r.error}"})
                if ns[i] is not None:
                    moot.append((ns[i], list(range(self.shards))))
                continue
            o = r.outcome
            dups = [self._hit(h) for h in o.duplicates]
            gid = self.gid(o.id) if o.id is not None else None
            if gid is not None:
                links += [_link(o.key, gid, h) for h in dups]
            out.append({"key": o.key, "n": ns[i], "id": o.id, "global_id": gid, "stored": o.stored, "replaced": o.replaced, "duplicates": dups})
        self._append(links)
        self._done([(n, [self.index]) for n in ns if n is not None] + moot)
        return out

    def query_many(self, texts: list[str], opts: dict[str, Any]) -> list[list[dict[str, Any]]]:
        return [[self._hit(h) for h in self.db.query(t, **opts)] for t in texts]

    def add_links(self, records: list[dict[str, Any]], done: Optional[list[tuple[int, list[int]]]] = None) -> None:
        """Appends links found on other shards, then marks their to-do entries done for those shards."""
        self._append(records)
        self._done(done or [])

    def open_entries(self) -> list[dict[str, Any]]:
        """The open to-do entries (own part complete, moot ones closed): n, key, text, gid, left."""
        self._close_moot()
        self._complete_own()
        out = []
        for n, e in sorted(self.open.items()):
            lid = self._live_doc(e)
            if lid is not None:
                out.append({"n": n, "key": e["key"], "text": e["text"], "gid": self.gid(lid), "left": sorted(e["left"])})
        return out

    def read_links(self) -> list[dict[str, Any]]:
        return _read_links(self.links_path)

    def live(self, docs: list[tuple[str, int]]) -> list[bool]:
        """Whether each (key, global id) of this shard is the key's live document."""
        out = []
        for k, g in docs:
            d = self.db.get(k)
            out.append(d is not None and self.gid(int(d.id)) == g)
        return out

    def delete(self, key: str) -> bool:
        return bool(self.db.delete(key))

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
        self.todo.close()
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
    duplicates: list[Any]
    """Verified near-duplicates on every shard that answered: fpdb.Hit, `id` the global id."""
    group: Optional[int]
    """The smallest global id among this document and its duplicates (Cluster.groups: the closure)."""
    partial: bool = False
    down: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["duplicates"] = [h.to_dict() for h in self.duplicates]
        return d


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
        c.repair()
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
        """Start shard `shard` again (killing what is left of it); it reopens its own database and
        completes its part of its open to-do entries, then `repair()` runs. Retries while the
        database is still locked by the dying process, up to `timeout` seconds."""
        import ray

        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                self._actors[shard] = self._start(shard)
            try:
                ray.get(self._actors[shard].ping.remote(), timeout=max(deadline - time.monotonic(), 1.0))
                self.repair()
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

    def crash_after_commit(self, shard: int) -> None:
        """Failure drill: shard `shard`'s next insert batch ends its process right after the
        commit, before its links and to-do marks are written."""
        import ray

        ray.get(self._actors[shard].crash_after_commit.remote(), timeout=SHARD_CALL_TIMEOUT)

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

    def _gather(self, refs: dict[Any, Any], timeout: float = SHARD_CALL_TIMEOUT) -> tuple[dict[Any, Any], dict[Any, str]]:
        """The answers of calls to several shards, with one deadline for all of them: (answers,
        {call: why its shard is down}) — a call that has not answered by the deadline is down."""
        import ray

        got: dict[Any, Any] = {}
        down: dict[Any, str] = {}
        if not refs:
            return got, down
        ready, _ = ray.wait(list(refs.values()), num_returns=len(refs), timeout=timeout)
        done = set(ready)
        for s, ref in refs.items():
            if ref not in done:
                down[s] = f"GetTimeoutError: no answer within {timeout:g} s"
                continue
            try:
                got[s] = ray.get(ref, timeout=0)
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
        return {"hits": [_as_hit(h) for h in hits], "partial": bool(down), "down": [_shard_name(s) for s in sorted(down)]}

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
        answers, _ = self._gather(queries)
        # 3. Links found on other shards are logged on the finder's shard before acknowledging.
        logs: dict[int, Any] = {}
        for s in stored:
            new_links: list[dict[str, Any]] = []
            done: list[tuple[int, list[int]]] = []
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
                if r.get("n") is not None:
                    done.append((r["n"], [o for o in range(self.shards) if (s, o) in answers]))
                dups.sort(key=_rank)
                gids = [g for g in [r["global_id"], *(h["global_id"] for h in dups)] if g is not None]
                names = [_shard_name(o) for o in missing]
                hits = [_as_hit(h) for h in dups]
                out = Outcome(k, s, r["id"], r["global_id"], r["stored"], r["replaced"], hits, min(gids) if gids else None, bool(missing), names)
                results[q] = IngestResult(q, k, s, out, None, bool(missing), names)
            if new_links or any(x for _, x in done):
                logs[s] = self._actors[s].add_links.remote(new_links, done)
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

    def repair(self) -> dict[str, Any]:
        """Completes the open to-do entries of every shard that answers on the shards that answer
        (see the module doc): {"searched": entries searched, "open": entries left, "partial",
        "down"}. Run by connect, restart, links and groups."""
        entries, down = self._gather({s: a.open_entries.remote() for s, a in enumerate(self._actors)})
        searched = 0
        left = 0
        for s in sorted(entries):
            es = entries[s]
            if not es:
                continue
            targets = sorted({o for e in es for o in e["left"] if o not in down and o != s})
            refs = {o: self._actors[o].query_many.remote([e["text"] for e in es], {}) for o in targets}
            got, dn = self._gather(refs)
            down.update(dn)
            links: list[dict[str, Any]] = []
            done: list[tuple[int, list[int]]] = []
            for i, e in enumerate(es):
                ok = [o for o in e["left"] if o in got]
                for o in ok:
                    links += [_link(e["key"], e["gid"], h) for h in got[o][i] if h["global_id"] != e["gid"]]
                if ok:
                    done.append((e["n"], ok))
                    searched += 1
                left += bool(set(e["left"]) - set(ok))
            _, ld = self._gather({s: self._actors[s].add_links.remote(links, done)})
            down.update(ld)
        return {"searched": searched, "open": left, "partial": bool(down) or left > 0, "down": [_shard_name(s) for s in sorted(down)]}

    def links(self) -> dict[str, Any]:
        """Every recorded near-duplicate link between live documents, after a repair: {"pairs": set
        of sorted (key, key) pairs, "records", "partial", "down"}; `partial` while a shard is down
        or a to-do entry is open."""
        rep = self.repair()
        got, down = self._gather({s: a.read_links.remote() for s, a in enumerate(self._actors)})
        records = [r for s in sorted(got) for r in got[s]]
        # Which ends are live: each shard answers for its own documents (a down shard's are kept).
        ends = sorted({(r["key"], r["gid"]) for r in records} | {(r["other"], r["other_gid"]) for r in records})
        per: dict[int, list[tuple[str, int]]] = {}
        for k, g in ends:
            per.setdefault(g % self.shards, []).append((k, g))
        alive, ldown = self._gather({s: self._actors[s].live.remote(d) for s, d in per.items()})
        down.update(ldown)
        dead = {d for s, ds in per.items() if s in alive for d, ok in zip(ds, alive[s]) if not ok}
        records = [r for r in records if (r["key"], r["gid"]) not in dead and (r["other"], r["other_gid"]) not in dead]
        pairs = {tuple(sorted((r["key"], r["other"]))) for r in records}
        names = sorted(set(rep["down"]) | {_shard_name(s) for s in down})
        return {"pairs": pairs, "records": records, "partial": bool(names) or rep["open"] > 0, "down": names}

    def delete(self, key: str) -> bool:
        """Deletes `key` on its shard (its links are no longer live); whether it existed."""
        s = shard_of(key, self.shards)
        got, down = self._gather({s: self._actors[s].delete.remote(key)})
        if down:
            raise ShardDownError(s, key, down[s])
        return bool(got[s])

    def groups(self) -> dict[str, Any]:
        """Duplicate groups across shards: connected components of the links between live documents
        (`links()`), canonical = smallest global id. {"groups": [{"group", "canonical", "size",
        "members"}], "partial", "down"}: `partial` while a shard is down or a to-do entry is open."""
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


def _as_hit(h: dict[str, Any]) -> Any:
    """A shard's hit dict as the binding's Hit, its id the global id."""
    from fpdb import _fpdb

    d = {k: v for k, v in h.items() if k not in ("shard", "global_id")}
    d["id"] = h["global_id"]
    return _fpdb.hit_from_dict(d)


def _rank(h: dict[str, Any]) -> tuple[float, int, int]:
    return (-(h.get("jaccard") or 0.0), h["hamming"], h["global_id"])


@dataclass
class DatasetDedup:
    """What `dedup_dataset` did: per-row results and the cluster's pairs and groups, as Datasets."""

    results: Any
    """ray.data Dataset of (key, shard, global_id, stored, partial, error) per input row."""
    pairs: Any
    """ray.data Dataset of (a, b): the linked pairs of live documents, keys sorted within a pair."""
    groups: Any
    """ray.data Dataset of (group, canonical, size, members), as Cluster.groups."""
    partial: bool
    down: list[str]


class _DatasetIngest:
    """The map_batches worker of dedup_dataset: a Cluster handle per Ray worker."""

    def __init__(self, path_prefix: str, key_col: str, text_col: str):
        self.cluster = Cluster.connect(path_prefix)
        self.key_col, self.text_col = key_col, text_col

    def __call__(self, batch: Any) -> dict[str, list[Any]]:
        keys = [str(k) for k in batch.column(self.key_col).to_pylist()]
        texts = batch.column(self.text_col).to_pylist()
        out: dict[str, list[Any]] = {"key": [], "shard": [], "global_id": [], "stored": [], "partial": [], "error": []}
        for r in self.cluster.ingest(zip(keys, texts), batch_size=len(keys) or 1):
            o = r.outcome
            out["key"].append(r.key)
            out["shard"].append(r.shard)
            out["global_id"].append(o.global_id if o else None)
            out["stored"].append(bool(o and o.stored))
            out["partial"].append(r.partial)
            out["error"].append(None if r.error is None else f"{type(r.error).__name__}: {r.error}")
        return out


def dedup_dataset(
    ds: Any,
    path_prefix: Union[str, os.PathLike[str]],
    *,
    key_col: str = "key",
    text_col: str = "text",
    shards: int = 4,
    batch_size: int = 256,
    concurrency: int = 2,
    address: Optional[str] = None,
    **db_options: Any,
) -> DatasetDedup:
    """A ray.data Dataset in, near-duplicate pairs and groups out: each row (its `key_col` and
    `text_col` columns) is inserted into the cluster at `path_prefix` (created with `shards` and
    `db_options` if it does not exist) by `concurrency` Ray workers, each through its own Cluster
    handle (so the write order and failure answers of Cluster.ingest hold), then the cluster's
    pairs and groups over live documents come back as Datasets."""
    import ray

    prefix = os.path.abspath(os.fspath(path_prefix))
    if Path(prefix + ".cluster.json").exists():
        c = Cluster.connect(prefix, address=address)
    else:
        c = Cluster.create(prefix, shards=shards, address=address, **db_options)
    results = ds.map_batches(
        _DatasetIngest,
        fn_constructor_args=(prefix, key_col, text_col),
        batch_format="pyarrow",
        batch_size=batch_size,
        concurrency=concurrency,
    ).materialize()
    ln = c.links()
    g = c.groups()
    pairs = ray.data.from_items([{"a": a, "b": b} for a, b in sorted(ln["pairs"])] or [{"a": None, "b": None}])
    if not ln["pairs"]:
        pairs = pairs.limit(0)
    groups = ray.data.from_items(g["groups"] or [{"group": None, "canonical": None, "size": None, "members": None}])
    if not g["groups"]:
        groups = groups.limit(0)
    down = sorted(set(ln["down"]) | set(g["down"]))
    return DatasetDedup(results, pairs, groups, bool(ln["partial"] or g["partial"]), down)
