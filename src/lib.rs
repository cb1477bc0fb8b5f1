//! # fpdb — an embedded, persistent near-duplicate fingerprint database
//!
//! Each document becomes a set of shingles (word trigrams by default) and a 64-bit SimHash. SimHashes
//! live in bit-permuted tables (RocksDB column families, mirrored in memory), shingle sets in
//! memory-mapped segment files; every candidate within Hamming distance `k` is verified by exact
//! Jaccard similarity. Inserts are durable, and each reports the document's verified near-duplicates
//! and its duplicate group.
//!
//! The data path is one straight line of modules:
//! [`normalize`] → [`shingle`] → [`simhash`] → [`tables`] / [`segment`] (+ [`record`]) → [`db`] (query)
//! → [`verify`].
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

pub mod db;
pub mod error;
pub mod eval;
#[doc(hidden)]
pub mod failpoint;
pub mod fingerprint;
pub mod ingest;
pub mod metadata;
mod mmap;
pub mod normalize;
pub mod pairs;
pub mod record;
pub mod segment;
pub mod shingle;
pub mod simhash;
pub mod spec;
pub mod tables;
pub mod verify;

pub use db::{
    CheckReport, CompactStats, CreateOptions, Db, Dedup, Document, GroupInfo, Hit, InsertOutcome, NewDoc, Options, Precheck, PreparedDoc,
    QueryOptions, Stats, Tables,
};
pub use error::{Error, Result};
pub use fingerprint::{fingerprint, Fingerprint, Fingerprinter};
pub use metadata::{Biblio, MatchKind};
pub use spec::FingerprintSpec;
