//! # fpdb — an embedded, persistent near-duplicate fingerprint database
//!
//! Each document becomes a set of shingles (word trigrams by default) and a 64-bit SimHash. SimHashes
//! live in bit-permuted tables (RocksDB column families, mirrored in memory), shingle sets in
//! memory-mapped segment files; every candidate within Hamming distance `k` is verified by exact
//! Jaccard similarity. Inserts are durable, and each reports the document's verified near-duplicates
//! and its duplicate group.
//!
//! The data path is one straight line of folders: [`fingerprint`](mod@fingerprint) (normalize → shingle → SimHash)
//! → the index (permuted tables, in memory and in RocksDB) and the store (doc records, shingle
//! segments) → the [`Db`] handle (the single writer, queries, groups) → the ingestion pipeline
//! ([`Db::ingest`]) and batch all-pairs ([`pairs`]). [`eval`] measures quality on labelled corpora.
//! ARCHITECTURE.md walks through each folder.
//!
//! ```
//! use fpdb::{CreateOptions, Db};
//! # fn main() -> Result<(), fpdb::Error> {
//! # let dir = tempfile::tempdir().unwrap();
//! let db = Db::create(dir.path().join("papers.fpdb"), &CreateOptions::default())?;
//! let harvested = [
//!     ("arxiv/1", "Near-duplicate documents are posted many times on the web by their authors and publishers alike."),
//!     ("course/7", "Near-duplicate documents are posted many times on the web by their authors and publishers alike!"),
//!     ("arxiv/2", "A completely different paper about permuted tables for Hamming distance search in big data."),
//! ];
//! for (key, text) in harvested {            // the crawler loop
//!     let out = db.insert(key, text)?;       // durable on return
//!     for dup in &out.duplicates {
//!         println!("{key} duplicates {} (J = {:.2})", dup.key, dup.jaccard.unwrap_or(0.0));
//!     }
//! }
//! assert_eq!(db.get("course/7")?.unwrap().group.canonical, "arxiv/1");
//! # Ok(()) }
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]
// Invariants carried by lints: `unsafe` only where memory maps are made (the `mmap` module) and in
// the SIMD kernels' `#[target_feature]` functions (`fingerprint::kernels`), and
// no `unwrap`/`expect` in library code (tests may).
#![deny(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod batch;
mod db;
mod error;
pub mod eval;
#[doc(hidden)]
pub mod failpoint;
pub mod fingerprint;
mod hugebuf;
mod index;
#[cfg(feature = "input")]
pub mod input;
mod intmap;
pub mod output;
mod pipeline;
#[cfg(feature = "semantic")]
pub mod semantic;
mod store;

pub use batch::{all_pairs_fps, groups, pairs, report_groups, DistRow, Pair, PairsOptions, PairsReport};
#[cfg(feature = "semantic")]
pub use db::SemanticIndex;
pub use db::{
    auto_tables, Channel, CheckReport, CompactStats, CreateOptions, Db, Dedup, Document, Fault, GroupInfo, Hit, InsertOutcome, NewDoc,
    Options, Precheck, PreparedDoc, QueryAnswer, QueryOptions, ReindexReport, SemanticQuery, Stats, Tables, DEFAULT_MAX_DISTANCE,
    DEFAULT_MIN_JACCARD, MAX_DISTANCE, MAX_KEY_BYTES,
};
pub use db::{validate_key, GroupListing, Page, MAX_PAGE};
pub use db::{ArchiveReport, BackupReport, RespecReport, StoredTexts, TextUsage};
pub use db::{ContainPair, ContainmentConfig, ContainmentIndex, ContainmentStats, MetadataIndex, DEFAULT_CONTAINMENT};
pub use db::{
    CuratorDecisions, Decision, DecisionKind, EdgeChannel, GroupEdge, GroupMember, GroupSummary, GroupView, NotLinked, ReviewAnswer,
    ReviewOptions, ReviewOrder,
};
pub use error::{Error, ErrorClass, Result, RocksKind};
pub use fingerprint::biblio::{Biblio, MatchKind};
pub use fingerprint::spec::{FingerprintSpec, HashKind, ShingleUnit, Weighting};
pub use fingerprint::{fingerprint, Fingerprint, Fingerprinter};
pub use index::{Block, Layout};
pub use pipeline::{DocResult, IngestOptions, IngestStats, DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE, MAX_WORKERS};
pub use store::doc_record::{DbConfig, DocRecord};
pub use store::segment::Recovery;

/// Internals for the fuzz targets, benchmarks and measurement programs (the on-disk codecs, the
/// block layout). Not a stable API.
#[doc(hidden)]
pub mod internals {
    pub use crate::batch::pairs_layout;
    pub use crate::db::validate_key;
    pub use crate::index::layout;
    pub use crate::index::layout::Layout;
    pub use crate::index::mem::MemTables;
    pub use crate::store::{doc_record, keys, segment};
}

/// The README's Rust example, compiled and run by `cargo test --doc` (its other code blocks are
/// shell, JSON and Python, which rustdoc does not run; cli/tests/cli/readme.rs and cli/tests/serve.rs check
/// those).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
