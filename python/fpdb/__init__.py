"""fpdb: an embedded, persistent near-duplicate fingerprint database, from Python.

Every document becomes word-trigram shingles and a 64-bit SimHash; SimHashes live in bit-permuted
RocksDB tables, shingle sets in memory-mapped segments, and every candidate within Hamming distance
k is verified by exact Jaccard similarity. Inserts are durable and report each document's verified
near-duplicates and its duplicate group.

    import fpdb
    with fpdb.Db.create("papers.fpdb") as db:
        out = db.insert("arxiv/1", "Near-duplicate documents are posted many times ...")
        print(out.duplicates, out.group)
        for r in db.ingest((row["id"], row["text"]) for row in harvested()):
            if r.outcome and r.outcome.duplicates:
                print(r.key, "duplicates", r.outcome.duplicates[0].key)

The engine is the fpdb Rust library; this package only converts arguments and results. The GIL is
released during every engine call, so threads query (and ingest) in parallel.
"""

from ._fpdb import (
    AlreadyExistsError,
    BackfillReport,
    CheckReport,
    ClosedError,
    CompactStats,
    ContainmentStats,
    ContainPair,
    CorruptionError,
    Db,
    DistRow,
    DocIter,
    Document,
    Fault,
    Fingerprint,
    FingerprintSpec,
    FpdbError,
    GroupInfo,
    Hit,
    Ingest,
    IngestResult,
    IngestStats,
    InsertOutcome,
    InvalidInputError,
    InvalidOptionError,
    IoError,
    LockedError,
    ModelInvalidError,
    ModelMissingError,
    NotFoundError,
    Pair,
    PairGroup,
    PairIter,
    PairsReport,
    PoisonedError,
    QueryAnswer,
    ReadItem,
    Reader,
    ReadOnlyError,
    ReindexReport,
    RocksError,
    SemanticError,
    SemanticSpecMismatchError,
    SemanticTimeoutError,
    SpecMismatchError,
    Stats,
    TextBackfill,
    VersionError,
    __version__,
    fingerprint,
    read,
)

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
    "Reader",
    "ReadOnlyError",
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
