//! Step 3 of the data path: where fingerprints are kept durably.
//!
//! - [`keys`]: the RocksDB column families and every key's encoder and decoder;
//! - [`doc_record`]: the versioned values (doc record, database config);
//! - [`segment`]: the append-only shingle segment files (appending, reading, recovery);
//! - `record`: one checksummed shingle record of a segment (its bytes, encoder and decoder);
//! - `mmap`: the one place where memory maps are made (the crate's only `unsafe`).
//!
//! Invariant: **a durable doc record points at durable bytes.** Segment bytes are appended and
//! fsynced before the RocksDB batch that points at them is written (see docs/durability.md).

pub mod doc_record;
pub(crate) mod ef;
pub mod keys;
#[allow(unsafe_code)]
pub(crate) mod mmap;
mod record;
pub mod segment;

pub use segment::ShingleLoc;
