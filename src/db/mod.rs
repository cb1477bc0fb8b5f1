//! Step 4 of the data path: the database handle. One [`Db`] owns a RocksDB instance (tables, doc
//! records, keys, edges, meta) and the shingle segments, and holds the in-memory state queries read.
//!
//! Its files, what each holds and the invariants: ARCHITECTURE.md, "`src/db/` — the handle"; the
//! bytes: docs/format.md.

mod archive;
mod background;
mod backup;
mod base;
mod by_key;
mod candidates;
mod cfs;
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
    auto_tables, validate_key, CreateOptions, Dedup, Options, QueryOptions, SemanticQuery, Tables, DEFAULT_MAX_DISTANCE,
    DEFAULT_MIN_JACCARD, MAX_DISTANCE, MAX_KEY_BYTES,
};
pub use options::{ContainmentConfig, DEFAULT_CONTAINMENT};
pub use reindex::ReindexReport;
pub use side::decisions::{
    CuratorDecisions, Decision, DecisionKind, EdgeChannel, GroupEdge, GroupMember, GroupSummary, GroupView, ReviewAnswer, ReviewOptions,
    ReviewOrder,
};
#[cfg(feature = "semantic")]
pub use side::SemanticIndex;
pub use side::{ContainmentIndex, MetadataIndex, RespecReport, StoredTexts, TextUsage};
pub use types::{
    Channel, CheckReport, CompactStats, Document, Fault, GroupInfo, Hit, InsertOutcome, NewDoc, NotLinked, Precheck, PreparedDoc,
    QueryAnswer, Stats,
};
pub use types::{ContainPair, ContainmentStats};
