"""Type stubs of the native module `fpdb._fpdb` (re-exported by `fpdb`)."""

from __future__ import annotations

import os
import pathlib
from typing import Any, Iterable, Iterator, Mapping, Optional, Tuple, Union, final

__version__: str
__all__ = [
    "AlreadyExistsError",
    "BackfillReport",
    "CheckReport",
    "ClosedError",
    "CompactStats",
    "ContainPair",
    "ContainmentStats",
    "CorruptionError",
    "Db",
    "DistRow",
    "DocIter",
    "Document",
    "Fault",
    "Fingerprint",
    "FingerprintSpec",
    "FpdbError",
    "GroupInfo",
    "Hit",
    "Ingest",
    "IngestResult",
    "IngestStats",
    "InsertOutcome",
    "InvalidInputError",
    "InvalidOptionError",
    "IoError",
    "LockedError",
    "ModelInvalidError",
    "ModelMissingError",
    "NotFoundError",
    "Pair",
    "PairGroup",
    "PairIter",
    "PairsReport",
    "PoisonedError",
    "QueryAnswer",
    "ReadItem",
    "ReadOnlyError",
    "Reader",
    "ReindexReport",
    "RocksError",
    "SemanticError",
    "SemanticSpecMismatchError",
    "SemanticTimeoutError",
    "SpecMismatchError",
    "Stats",
    "TextBackfill",
    "VersionError",
    "__version__",
    "fingerprint",
    "read",
]

_Text = Union[str, bytes, bytearray]
"""A str, or bytes holding UTF-8 (anything else raises InvalidInputError naming the byte offset)."""

_IngestItem = Union[Tuple[_Text, _Text], Tuple[_Text, _Text, Any], Mapping[str, Any]]
"""(key, text), (key, text, meta) or a dict with "key" and "text" (other entries = metadata)."""

_PathLike = Union[str, "os.PathLike[str]"]

# ---------------------------------------------------------------------------------------------
# Exceptions: one per kind of fpdb::Error, all subclasses of FpdbError.

class FpdbError(Exception):
    """Base class of every error raised by fpdb."""

class IoError(FpdbError, OSError):
    """An operating-system I/O call failed on a file of the database."""

    op: str
    path: str

class RocksError(FpdbError, OSError):
    """RocksDB reported an error."""

    op: str
    path: str
    message: str

class LockedError(FpdbError):
    """Another process (or another open handle) holds the database open for writing."""

    path: str

class NotFoundError(FpdbError, FileNotFoundError):
    """No database exists at the path."""

    path: str

class AlreadyExistsError(FpdbError, FileExistsError):
    """Db.create was given a directory that already holds a database."""

    path: str

class SpecMismatchError(FpdbError):
    """The requested fingerprint spec differs from the stored one."""

    path: str
    field: str
    expected: str
    found: str

class VersionError(FpdbError):
    """A stored structure has a version this build cannot read."""

    what: str
    path: str
    expected: int
    found: int

class CorruptionError(FpdbError):
    """Stored bytes do not decode or fail their checksum."""

    path: str
    doc: Optional[int]
    what: str

class InvalidOptionError(FpdbError, ValueError):
    """An option value is out of range."""

    option: str
    message: str

class InvalidInputError(FpdbError, ValueError):
    """A document or key cannot be stored as given (empty key, bytes that are not UTF-8, ...)."""

    key: Optional[str]
    message: str

class PoisonedError(FpdbError):
    """An earlier write failed; close the handle and reopen the database."""

    cause: str

class ReadOnlyError(FpdbError):
    """A write was attempted through a read-only handle."""

    path: str

class ClosedError(FpdbError, ValueError):
    """The Db handle was closed."""

class SemanticError(FpdbError):
    """An error of the semantic channel: the model failed on an input (op, message, batch) or the
    background indexer stopped (cause). Base of ModelMissingError, ModelInvalidError,
    SemanticSpecMismatchError and SemanticTimeoutError; the channel's I/O, RocksDB, corruption and
    option errors are IoError, RocksError, CorruptionError and InvalidOptionError."""

class ModelMissingError(SemanticError, FileNotFoundError):
    """The model directory, or a file in it, does not exist (`bash scripts/fetch-model.sh`)."""

    path: str
    """The model directory."""
    missing: str
    """The file (or the directory itself) that is not there."""

class ModelInvalidError(SemanticError, ValueError):
    """A model file exists but cannot be used (bad JSON, an unsupported architecture or pooling)."""

    path: str
    message: str

class SemanticSpecMismatchError(SemanticError, SpecMismatchError):
    """The model (or a parameter) given differs from the one the channel was created with
    (`expected`: the value given now, `found`: the stored one; no `path`)."""

class SemanticTimeoutError(SemanticError, TimeoutError):
    """A query's wait_semantic passed its bound before the channel caught up."""

    target: int
    """The doc id waited for."""
    cursor: int
    """How far the channel had embedded."""
    waited_ms: int

# ---------------------------------------------------------------------------------------------
# Results

@final
class Hit:
    """A near-duplicate found by a query or an insert."""

    @property
    def key(self) -> str: ...
    @property
    def id(self) -> int: ...
    @property
    def hamming(self) -> int: ...
    @property
    def jaccard(self) -> Optional[float]:
        """Exact Jaccard similarity (None for SimHash-only queries)."""
    @property
    def shared(self) -> Optional[int]:
        """Shared shingles (None for SimHash-only queries)."""
    @property
    def containment(self) -> Optional[float]:
        """|Q ∩ D| / |Q|: the query inside this document (None for SimHash-only queries)."""
    @property
    def reverse_containment(self) -> Optional[float]:
        """|Q ∩ D| / |D|: this document inside the query (None for SimHash-only queries)."""
    @property
    def match(self) -> str:
        """How it matched: "text", "doi", "title_year" or "semantic" (the semantic channel alone)."""
    @property
    def score(self) -> dict[str, Any]:
        """The method's similarity, e.g. {"hamming": 6} or {"supershingles": {"equal": 3, "of": 6}}."""
    @property
    def channels(self) -> list[str]:
        """The channels that found it: ["text"], ["semantic"] or ["text", "semantic"]."""
    @property
    def cosine(self) -> Optional[float]:
        """Cosine of the embeddings, when the semantic channel saw the document."""
    def to_dict(self) -> dict[str, Any]:
        """The fields of `fpdb --json query`, key for key."""

@final
class QueryAnswer:
    """A query's answer (`Db.query_answer`): the hits and the answer's bounds."""

    @property
    def hits(self) -> list[Hit]: ...
    @property
    def truncated(self) -> bool:
        """True when candidates were left unverified."""
    @property
    def candidates(self) -> int:
        """How many candidates were verified."""
    @property
    def semantic_pending(self) -> int:
        """Acknowledged documents the semantic channel had not embedded (0 without it)."""
    def __len__(self) -> int: ...
    def to_dict(self) -> dict[str, Any]:
        """{"hits", "truncated", "candidates", "semantic_pending"}."""

@final
class GroupInfo:
    """A duplicate group: id (= doc id of its canonical member), canonical key, size."""

    @property
    def id(self) -> int: ...
    @property
    def canonical(self) -> str: ...
    @property
    def size(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class InsertOutcome:
    """What an insert did."""

    @property
    def key(self) -> str: ...
    @property
    def id(self) -> Optional[int]:
        """Doc id, or None when not stored (dedup="skip" and it had duplicates)."""
    @property
    def stored(self) -> bool: ...
    @property
    def replaced(self) -> Optional[int]:
        """Doc id of the earlier document with the same key that this one replaced."""
    @property
    def duplicates(self) -> list[Hit]:
        """Verified near-duplicates (stored earlier, or earlier in the same batch), best first."""
    @property
    def group(self) -> Optional[GroupInfo]: ...
    @property
    def containment(self) -> list[Hit]:
        """Containment relations (insert/ingest with containment=C), else empty."""
    def to_dict(self) -> dict[str, Any]: ...

@final
class Document:
    """A stored document (Db.get)."""

    @property
    def key(self) -> str: ...
    @property
    def id(self) -> int: ...
    @property
    def simhash(self) -> int: ...
    @property
    def shingles(self) -> int:
        """Number of distinct shingles."""
    @property
    def inserted_at_ms(self) -> int: ...
    @property
    def meta(self) -> Any:
        """Metadata stored with it, decoded from JSON (a dict for insert/ingest metadata); None
        when there is none; the text itself when it is not JSON."""
    @property
    def members(self) -> list[str]:
        """Keys of its group's members, by doc id."""
    @property
    def title(self) -> Optional[str]: ...
    @property
    def year(self) -> Optional[int]: ...
    @property
    def doi(self) -> Optional[str]: ...
    @property
    def group(self) -> GroupInfo: ...
    def to_dict(self) -> dict[str, Any]:
        """The fields of `fpdb --json get`, key for key."""

@final
class Stats:
    """Counters of a database."""

    docs: int
    groups: int
    grouped_docs: int
    segments: int
    segment_bytes: int
    live_bytes: int
    tables: int
    best_tables: int
    max_distance: int
    min_jaccard: float
    spec: str
    semantic_pending: int
    """Acknowledged documents the semantic channel has not embedded yet (0 without it)."""
    semantic_vectors: int
    """Vectors the semantic channel holds (0 without it)."""
    containment: Optional[ContainmentStats]
    def to_dict(self) -> dict[str, Any]: ...

@final
class ContainmentStats:
    """Counters of the containment index."""

    sample: int
    max_postings: int
    max_samples: Optional[int]
    entries: int
    short_entries: int
    sampled_docs: int
    short_docs: int
    keys: int
    frequent_keys: int
    frequent_entries: int
    longest_posting: int
    def to_dict(self) -> dict[str, Any]: ...

@final
class Fault:
    """One problem found by Db.check."""

    doc: Optional[int]
    key: Optional[str]
    path: str
    what: str

@final
class CheckReport:
    """Result of Db.check."""

    docs: int
    table_entries: int
    faults: list[Fault]
    @property
    def ok(self) -> bool: ...

@final
class CompactStats:
    """Result of Db.compact."""

    segments_rewritten: int
    bytes_reclaimed: int
    records_moved: int

@final
class Pair:
    """A pair of stored documents within the distance (a_id < b_id)."""

    a: str
    b: str
    a_id: int
    b_id: int
    hamming: int
    jaccard: Optional[float]
    def to_dict(self) -> dict[str, Any]: ...

@final
class ContainPair:
    """A pair of stored documents, one inside the other (a_id < b_id)."""

    a: str
    b: str
    a_id: int
    b_id: int
    direction: str
    a_in_b: float
    b_in_a: float
    jaccard: float
    shared: int
    def to_dict(self) -> dict[str, Any]: ...

@final
class PairGroup:
    """A connected component of the pair graph (canonical = earliest member)."""

    id: int
    canonical: str
    members: list[str]
    @property
    def size(self) -> int: ...

@final
class DistRow:
    """A row of a pairs distribution table."""

    label: str
    pairs: int
    docs: int

@final
class PairsReport:
    """Result of Db.pairs."""

    docs: int
    pairs: list[Pair]
    groups: list[PairGroup]
    by_hamming: list[DistRow]
    by_jaccard: list[DistRow]
    hamming_seconds: float
    verify_seconds: float
    def __len__(self) -> int: ...

@final
class DocIter(Iterator[Any]):
    """The iterator of Db.keys() (str) and iter(db) (Document): pages of documents by a cursor."""

    def __iter__(self) -> DocIter: ...
    def __next__(self) -> Any: ...

@final
class PairIter(Iterator[Pair]):
    """The iterator of Db.iter_pairs(): one Pair at a time."""

    def __iter__(self) -> PairIter: ...
    def __next__(self) -> Pair: ...
    def __len__(self) -> int: ...

@final
class ReindexReport:
    """Result of Db.reindex."""

    docs: int
    tables_before: int
    tables_after: int
    generation: int
    changed: bool
    model_us_before: float
    model_us_after: float
    def to_dict(self) -> dict[str, Any]: ...

@final
class TextBackfill:
    """What Db.semantic_backfill(texts) did with the texts given."""

    embedded: int
    already: int
    unknown: int
    empty: int
    def to_dict(self) -> dict[str, Any]: ...

@final
class BackfillReport:
    """Result of Db.semantic_backfill."""

    embedded: int
    vectors: int
    from_texts: Optional[TextBackfill]
    def to_dict(self) -> dict[str, Any]: ...

@final
class IngestStats:
    """Totals of a finished ingest."""

    items: int
    stored: int
    skipped: int
    with_duplicates: int
    with_containment: int
    errors: int
    batches: int
    text_bytes: int
    seconds: float

@final
class IngestResult:
    """The fate of one ingested item, reported after its batch was durably committed."""

    seq: int
    key: Optional[str]
    outcome: Optional[InsertOutcome]
    error: Optional[FpdbError]
    @property
    def ok(self) -> bool: ...
    @property
    def stored(self) -> bool: ...

@final
class Ingest(Iterator[IngestResult]):
    """The iterator returned by Db.ingest."""

    def __iter__(self) -> Ingest: ...
    def __next__(self) -> IngestResult: ...
    def run(self) -> IngestStats:
        """Consume the whole input; return the totals."""
    def close(self) -> Optional[IngestStats]:
        """Stop pulling from the input (what the engine took is still committed)."""
    @property
    def stats(self) -> Optional[IngestStats]:
        """Totals once finished, else None."""

@final
class FingerprintSpec:
    """Shingle unit and length, hash seed and SimHash weighting."""

    def __new__(
        cls,
        shingle: str = "word:3",
        weights: str = "binary",
        seed: Optional[int] = None,
        normalizer: Optional[int] = None,
        hash: Optional[str] = None,
    ) -> FingerprintSpec: ...
    @classmethod
    def default(cls) -> FingerprintSpec: ...
    @property
    def unit(self) -> str: ...
    @property
    def n(self) -> int: ...
    @property
    def shingle(self) -> str: ...
    @property
    def weights(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def normalizer(self) -> int: ...
    @property
    def hash(self) -> str: ...
    @property
    def method(self) -> str:
        """The near-duplicate method with its parameters, e.g. "simhash"."""

@final
class Fingerprint:
    """A document's SimHash and sorted shingle hashes."""

    simhash: int
    shingles: list[int]

_SpecArg = Union[FingerprintSpec, str, None]

def fingerprint(text: _Text, spec: _SpecArg = None) -> Fingerprint:
    """The SimHash and shingle set of `text` under `spec` (default: word:3, binary)."""

def read(path: _PathLike, *, key_field: str = "key", text_field: str = "text", hidden: bool = False) -> Reader:
    """The documents of `path` as `fpdb ingest` reads them: a directory's text files, else a JSONL,
    WARC or WET file, gzip or zstd compressed or not ("-": standard input). Pass it to Db.ingest."""

@final
class Reader(Iterator[ReadItem]):
    """The iterator of fpdb.read(): one ReadItem per item of the input, in input order."""

    def __iter__(self) -> Reader: ...
    def __next__(self) -> ReadItem: ...

@final
class ReadItem:
    """One item of fpdb.read(): a document, or the reason its line is not one (error)."""

    @property
    def key(self) -> Optional[str]: ...
    @property
    def text(self) -> Optional[str]: ...
    @property
    def meta(self) -> Any: ...
    @property
    def origin(self) -> str: ...
    @property
    def error(self) -> Optional[str]: ...

# ---------------------------------------------------------------------------------------------

@final
class Db:
    """An open fpdb database (a context manager; share it between threads freely)."""

    @staticmethod
    def create(
        path: _PathLike,
        *,
        max_distance: Optional[int] = None,
        tables: Union[int, str, None] = None,
        shingle: Optional[str] = None,
        weights: Optional[str] = None,
        min_jaccard: Optional[float] = None,
        sync: bool = True,
        method: Optional[str] = None,
        idf_from: Union[_PathLike, Iterable[str], None] = None,
        min_shared: Optional[int] = None,
        containment: Optional[bool] = None,
        containment_sample: Optional[int] = None,
        containment_max_postings: Optional[int] = None,
        containment_max_samples: Optional[int] = None,
        normalizer: Optional[int] = None,
        semantic: Optional[_PathLike] = None,
        min_cosine: Optional[float] = None,
        semantic_field: Optional[str] = None,
        semantic_max_tokens: Optional[int] = None,
        groups: Optional[str] = None,
        semantic_threads: Optional[int] = None,
        semantic_batch: Optional[int] = None,
        semantic_indexer: Optional[bool] = None,
        semantic_search: Optional[str] = None,
        semantic_nice: Optional[int] = None,
        store_text: bool = False,
        hash: Optional[str] = None,
    ) -> Db:
        """Create a database (defaults: k=12, tables="auto", shingle="word:3", weights="binary", t=0.9,
        method="simhash", containment index on, normalizer 2, hash "word-mix"; normalizer=1 and
        hash="xxh3-64" give the fingerprints of fpdb builds before them).
        `semantic=MODEL_DIR` adds the semantic channel (`fpdb init --semantic`; min_cosine the
        model's calibrated β, 0.81 for all-MiniLM-L6-v2; semantic_max_tokens 256, groups "text")."""
    @staticmethod
    def reindex(path: _PathLike, tables: Union[int, str, None] = None) -> ReindexReport:
        """Rebuild the tables with another table count ("auto": the modelled best for the size)."""
    @staticmethod
    def open(
        path: _PathLike,
        *,
        read_only: bool = False,
        sync: bool = True,
        spec: _SpecArg = None,
        semantic_model: Optional[_PathLike] = None,
        semantic_threads: Optional[int] = None,
        semantic_batch: Optional[int] = None,
        semantic_indexer: Optional[bool] = None,
        semantic_search: Optional[str] = None,
        semantic_nice: Optional[int] = None,
    ) -> Db:
        """Open an existing database (the semantic_* options: how this handle runs the semantic
        channel of a database that has one; semantic_search is "exact" or "index")."""
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> pathlib.Path: ...
    @property
    def spec(self) -> FingerprintSpec: ...
    @property
    def max_distance(self) -> int: ...
    @property
    def min_jaccard(self) -> float: ...
    @property
    def semantic_spec(self) -> Optional[dict[str, Any]]:
        """The semantic channel's stored spec (model identity, max_tokens, field, min_cosine,
        groups, ...), None without the channel."""
    def __enter__(self) -> Db: ...
    def __exit__(self, *exc: Any) -> bool: ...
    def __contains__(self, key: _Text, /) -> bool: ...
    def __len__(self) -> int: ...
    def keys(self) -> DocIter:
        """The stored documents' keys in id order, a page at a time."""
    def __iter__(self) -> DocIter:
        """Every stored Document in id order, a page at a time."""
    def insert(
        self,
        key: _Text,
        text: _Text,
        *,
        dedup: str = "link",
        containment: Optional[float] = None,
        title: Optional[str] = None,
        year: Optional[int] = None,
        doi: Optional[str] = None,
        meta: Any = None,
    ) -> InsertOutcome:
        """Insert (or replace) one document durably; dedup is "link", "skip" or "off"; meta (a
        JSON-serialisable value) is stored and comes back as Document.meta."""
    def ingest(
        self,
        docs: Iterable[_IngestItem],
        *,
        batch_size: Optional[int] = None,
        workers: Optional[int] = None,
        dedup: str = "link",
        batch_latency: Optional[float] = None,
        containment: Optional[float] = None,
    ) -> Ingest:
        """Ingest an iterable through the parallel pipeline; results after each durable batch."""
    def query(
        self,
        text: _Text,
        *,
        max_distance: Optional[int] = None,
        min_jaccard: Optional[float] = None,
        limit: Optional[int] = None,
        min_containment: Optional[float] = None,
        min_shared: Optional[int] = None,
        min_cosine: Optional[float] = None,
        wait_semantic: Union[bool, float, None] = None,
    ) -> list[Hit]:
        """Verified near-duplicates of `text`, best first (with min_containment: a containment query),
        with the semantic channel's matches (cosine >= min_cosine) where the database has it;
        wait_semantic=True (at most an hour) or a number of seconds waits for pending embeddings."""
    def query_answer(
        self,
        text: _Text,
        *,
        max_distance: Optional[int] = None,
        min_jaccard: Optional[float] = None,
        limit: Optional[int] = None,
        min_containment: Optional[float] = None,
        min_shared: Optional[int] = None,
        min_cosine: Optional[float] = None,
        wait_semantic: Union[bool, float, None] = None,
    ) -> QueryAnswer:
        """`query` with the answer's bounds: truncated, candidates, semantic_pending."""
    def query_simhash(self, simhash: int, *, max_distance: Optional[int] = None, limit: Optional[int] = None) -> list[Hit]:
        """Stored documents within Hamming distance of a SimHash."""
    def get(self, key: _Text) -> Optional[Document]: ...
    def text(self, key: _Text) -> Optional[str]:
        """The stored text, exactly as inserted (a database made with store_text=True)."""
    def backup(self, dir: _PathLike) -> dict[str, Any]:
        """A consistent copy in `dir` (must not exist), made while this handle goes on writing."""
    def delete(self, key: _Text) -> bool: ...
    def decide(self, a: _Text, b: _Text, decision: str, *, reason: Optional[str] = None, author: Optional[str] = None) -> dict[str, Any]: ...
    def undecide(self, a: _Text, b: _Text) -> Optional[dict[str, Any]]: ...
    def decisions(self) -> list[dict[str, Any]]: ...
    def stats(self) -> Stats: ...
    def check(self) -> CheckReport: ...
    def flush(self) -> None:
        """Write the containment and table tails and the memtables to files now, as a clean close does."""
    def compact(self, min_dead: float = 0.3, *, index: bool = False) -> CompactStats: ...
    def pairs(
        self,
        *,
        max_distance: Optional[int] = None,
        min_jaccard: Optional[float] = None,
        threads: int = 0,
        min_shared: Optional[int] = None,
        semantic: bool = False,
        min_cosine: Optional[float] = None,
        semantic_index: bool = False,
    ) -> PairsReport:
        """Every pair of stored documents within the distance (verified by Jaccard when asked);
        the groups also over the semantic pairs in a `groups="union"` database or with semantic=True."""
    def iter_pairs(
        self,
        *,
        max_distance: Optional[int] = None,
        min_jaccard: Optional[float] = None,
        threads: int = 0,
        min_shared: Optional[int] = None,
    ) -> PairIter:
        """The pairs of pairs() one at a time (no groups or tables)."""
    def semantic_pairs(self, *, min_cosine: Optional[float] = None, index: bool = False) -> list[Tuple[str, str, float]]:
        """Every pair of embedded documents with cosine >= min_cosine (`fpdb pairs --semantic`)."""
    @staticmethod
    def enable_semantic(
        path: _PathLike,
        semantic: _PathLike,
        *,
        min_cosine: Optional[float] = None,
        semantic_field: Optional[str] = None,
        semantic_max_tokens: Optional[int] = None,
        groups: Optional[str] = None,
    ) -> None:
        """Add the semantic channel to a closed database created without it (`fpdb semantic enable`)."""
    def containment_pairs(self, min_containment: float, *, threads: int = 0) -> list[ContainPair]:
        """Every pair of stored documents with containment >= min_containment in either direction."""
    def semantic_backfill(self, texts: Optional[Iterable[_IngestItem]] = None, *, batch: int = 32) -> BackfillReport:
        """Embed every acknowledged document now (`fpdb semantic backfill`): embedded, vectors;
        with texts, first the stored documents without a vector from them (from_texts)."""

# ---------------------------------------------------------------------------------------------
# The engine's pieces that fpdb.spark runs inside Spark tasks (python/src/scale.rs).

def fingerprint_batch(texts: list[_Text], spec: _SpecArg = None) -> Tuple[list[int], list[bytes]]:
    """SimHashes (signed 64-bit: the same bits as Fingerprint.simhash) and shingle sets encoded as
    4 bytes little-endian per hash, ascending, of many texts."""

def candidate_blocks(k: int) -> list[Tuple[int, int]]:
    """(start, width) of the k + 1 blocks whose values are the all-pairs shuffle keys (k <= 32)."""

def bucket_pairs(
    table: int,
    k: int,
    ids: list[int],
    simhashes: list[int],
    other_ids: Optional[list[int]] = None,
    other_simhashes: Optional[list[int]] = None,
) -> Tuple[list[int], list[int], list[int]]:
    """(a, b, hamming) of the pairs within k that qualify first in table `table`, a < b: inside one
    bucket, or across two sub-buckets of one bucket."""

def jaccard_batch(sets_a: list[bytes], sets_b: list[bytes]) -> list[float]:
    """Exact Jaccard of each pair of encoded shingle sets (the engine's own value)."""

# A string or binary Arrow column as its buffers: (offset, length, validity, offsets, data, large).
_StrCol = Tuple[int, int, Optional[bytes], bytes, bytes, bool]

def prepare_batch(
    keys: _StrCol, texts: _StrCol, spec: _SpecArg = None, bands: int = 0, rows: int = 0, seed: int = 0
) -> Tuple[bytes, bytes, bytes, bytes, bytes]:
    """(status, simhashes, set_offsets, set_data, band_keys) of one batch judged as `fpdb ingest`
    does: status per row 0 accepted, 1 null, 2 key refused, 3 no words; the rest for accepted rows."""

def jaccard_buffers(n: int, a: _StrCol, b: _StrCol) -> bytes:
    """Exact Jaccard of n pairs of encoded shingle sets (binary columns as buffers), float64 LE."""

def minhash_keys(sets: list[bytes], bands: int, rows: int, seed: int = 0) -> list[list[int]]:
    """The MinHash band keys of each encoded shingle set (what prepare_batch computes)."""

def hit_from_dict(d: dict[str, Any]) -> Hit:
    """A Hit from the dict of Hit.to_dict()."""

__all__ += ["bucket_pairs", "candidate_blocks", "fingerprint_batch", "jaccard_batch"]
__all__ += ["hit_from_dict", "jaccard_buffers", "minhash_keys", "prepare_batch"]
