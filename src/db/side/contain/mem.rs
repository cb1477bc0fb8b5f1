//! The containment index's in-memory part: the short-key set and the tail (read with the state's
//! read lock held, changed with its write lock held: `db::side`).

use crate::index::contain::{ShortKeys, Tail};

/// The containment index's in-memory part.
#[derive(Default)]
pub(crate) struct ContainMem {
    /// Keys of the short documents in the index.
    pub(crate) short: ShortKeys,
    /// The postings held in memory: those of the documents at or above the floor, not yet written
    /// to RocksDB (`tail.rs`).
    pub(crate) tail: Tail,
}
