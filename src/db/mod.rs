//! Step 4 of the data path: the database handle. One [`Db`] owns a RocksDB instance (tables, doc
//! records, keys, edges, meta) and the shingle segments, and holds the in-memory state queries read.
//!
//! | file | job |
//! |---|---|
//! | `handle.rs` | `Db` and what its clones share (`Inner`): RocksDB, spec, config, side indexes (type-erased), state, writer; poisoning (`lock_writer`, `mutation`) |
//! | `options.rs` | creation, handle and query settings; accepted ranges |
//! | `rocks_options.rs` | RocksDB's options: the database's, each column family's, the SST files' |
//! | `types.rs` | documents, hits, outcomes, reports |
//! | `state.rs` | the published `State`, the `Writer` (its poison marks) |
//! | `pending.rs` | one batch's changes before its commit |
//! | `stored.rs` | what `meta` holds about the database: format, spec (and IDF table), config, table generation, next id |
//! | `open.rs` | create / open / recover / load the state |
//! | `close.rs` | the close: a loop over the background work (written, or ended), the memtables flushed; every column family |
//! | `candidates.rs` | the rule; the candidate search (the SimHash tables, or the side index that searches instead) |
//! | `query.rs` | queries, `get`, groups, counters; consistent reads of RocksDB |
//! | `list.rs` | documents and groups a page at a time, by a cursor |
//! | `by_key.rs` | a stored document's near-duplicates from its stored fingerprint; hits filtered by a metadata field |
//! | `snapshot.rs` | a query's verification on a snapshot, with no lock held; its bounds |
//! | `write.rs` | the writer's decisions (dedup, replace, delete, groups) |
//! | `commit.rs` | one batch: segment append + fsync → one `WriteBatch` → publish |
//! | `groups.rs` | connected components |
//! | `link.rs` | links found after an insert (`--groups union`): edges added, groups merged, one batch |
//! | `check.rs` | `check` |
//! | `compact.rs` | segment compaction, RocksDB flush |
//! | `reindex.rs` | re-layout: the tables rebuilt with another table count, crash-safe |
//! | `side/mod.rs` | the seam: the `SideIndex` trait, its context types, `Sides`, `Inner::sides` |
//! | `side/register.rs` | the ONE registration line of each side index |
//! | `side/metadata.rs` | the metadata index (DOI, title + year): keys, matches, `check` |
//! | `side/method.rs` | the other methods' sketches and bucket index: the candidate search, keys, `check` |
//! | `side/contain/` | the containment index: queries, relations, a batch's keys, its tail, `check`, stats, pairs |
//! | `background/job.rs` | the job type of background work: a thread, or done here; `for_each_on_threads` |
//! | `background/floor.rs` | the tails' floors in `meta` |
//! | `background/mirror.rs` | the in-memory mirror's merges |
//! | `background/tail.rs` | the tail protocol, once: freeze, write in the background, install (ingest, floor) |
//! | `background/mod.rs` | `Background`, what every piece of background work is to the writer; `Inner::background`, the one list of them |
//! | `background/table_tail.rs` | the SimHash tables' tail: written as ingested SST files |
//! | `background/table_files.rs` | the tables' SST files, one per table, ingested whole |
//! | `background/sst.rs` | the sorted files RocksDB ingests whole |
//!
//! See ARCHITECTURE.md for the invariants and docs/format.md for the bytes.

mod archive;
mod background;
mod backup;
mod by_key;
mod candidates;
mod check;
mod close;
mod commit;
mod compact;
pub(crate) mod groups;
mod handle;
mod link;
mod list;
mod open;
mod options;
mod pending;
mod query;
mod reindex;
mod rocks_options;
mod side;
mod snapshot;
mod state;
mod stored;
mod types;
mod write;

pub use archive::ArchiveReport;
pub use backup::BackupReport;
pub use handle::Db;
pub use list::{GroupListing, Page, MAX_PAGE};
pub(crate) use options::check_c;
pub use options::{
    auto_tables, validate_key, CreateOptions, Dedup, Options, QueryOptions, Tables, DEFAULT_MAX_DISTANCE, DEFAULT_MIN_JACCARD,
    MAX_DISTANCE, MAX_KEY_BYTES,
};
pub use options::{ContainmentConfig, DEFAULT_CONTAINMENT};
pub use reindex::ReindexReport;
pub use side::decisions::{
    Decision, DecisionKind, EdgeChannel, GroupEdge, GroupMember, GroupSummary, GroupView, ReviewAnswer, ReviewOptions, ReviewOrder,
};
pub use side::{RespecReport, TextUsage};
pub use types::{
    Channel, CheckReport, CompactStats, Document, Fault, GroupInfo, Hit, InsertOutcome, NewDoc, NotLinked, Precheck, PreparedDoc,
    QueryAnswer, Stats,
};
pub use types::{ContainPair, ContainmentStats};
