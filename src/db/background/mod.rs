//! The writer's background and durability work, one subsystem: each piece a named job on a thread
//! of its own ([`job::Job`]), started and installed under the writer lock, its error a poison of
//! the handle (the commit's `after_publish`, the flush, the close). A side index's own background
//! work (the containment tail: `db::side::contain`) is built from the same job type.
//!
//! | file | job |
//! |---|---|
//! | `job.rs` | the job type, `spawn_or_run`, `for_each_on_threads` |
//! | `mirror.rs` | the in-memory mirror's merges |
//! | `tail.rs` | the tail protocol, once: freeze, write in the background, install (ingest, floor) |
//! | `table_tail.rs` | the SimHash tables' tail |
//! | `floor.rs` | the tails' floors in `meta` |
//! | `sst.rs` | the sorted files RocksDB ingests whole |

pub(super) mod floor;
pub(super) mod job;
mod mirror;
pub(super) mod sst;
pub(super) mod table_tail;
pub(super) mod tail;
