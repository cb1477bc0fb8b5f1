//! Step 4 of the data path: the database handle. One [`Db`] owns a RocksDB instance (tables, doc
//! records, keys, edges, meta) and the shingle segments, and holds the in-memory state queries read.
//!
//! | file | job |
//! |---|---|
//! | `options.rs` | creation, handle and query settings; accepted ranges |
//! | `types.rs` | documents, hits, outcomes, reports |
//! | `open.rs` | create / open / recover / load the state |
//! | `state.rs` | the published `State`, the `Writer`, poisoning, consistent reads |
//! | `query.rs` | queries, `get`, groups, counters |
//! | `snapshot.rs` | a query's verification on a snapshot, with no lock held; its bounds |
//! | `write.rs` | the writer's decisions (dedup, replace, delete, groups) |
//! | `commit.rs` | one batch: segment append + fsync → one `WriteBatch` → publish |
//! | `groups.rs` | connected components |
//! | `check.rs` | `check` |
//! | `compact.rs` | segment compaction, RocksDB flush |
//! | `reindex.rs` | re-layout: the tables rebuilt with another table count, crash-safe |
//!
//! See ARCHITECTURE.md for the invariants and docs/format.md for the bytes.

mod check;
mod commit;
mod compact;
// containment:
mod contain;
mod contain_tail;
// metadata:
pub(crate) mod groups;
mod metadata;
// method: the engine side of the other methods.
mod method;
mod open;
mod options;
mod query;
mod reindex;
mod snapshot;
mod sst;
mod state;
mod table_tail;
mod types;
mod write;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use rocksdb::DB;

use crate::error::{Error, Result};
use crate::fingerprint::spec::FingerprintSpec;
use crate::fingerprint::Fingerprinter;
use crate::index::method::MethodIndex;
use crate::index::Layout;
use crate::store::doc_record::{self, DbConfig, DocRecord};
use crate::store::keys::{cf_names, decode_key_value, doc_key, method_cf_names, CF_DOCS, CF_KEYS};
use crate::store::segment::Recovery;

pub use options::{
    auto_tables, validate_key, CreateOptions, Dedup, Options, QueryOptions, Tables, DEFAULT_MAX_DISTANCE, DEFAULT_MIN_JACCARD,
    MAX_DISTANCE, MAX_KEY_BYTES,
};
pub use reindex::ReindexReport;
use state::{State, Writer};
pub use types::{
    CheckReport, CompactStats, Document, Fault, GroupInfo, Hit, InsertOutcome, NewDoc, Precheck, PreparedDoc, QueryAnswer, Stats,
};
// containment:
pub(crate) use options::check_c;
pub use options::{ContainmentConfig, DEFAULT_CONTAINMENT};
pub use types::{ContainPair, ContainmentStats};

struct Inner {
    path: PathBuf,
    rocks_path: PathBuf,
    rocks: DB,
    spec: FingerprintSpec,
    config: DbConfig,
    layout: Layout,
    /// Generation of the table column families (`store::keys::table_cf`).
    table_gen: u32,
    // method: the method index (None for simhash and weighted-simhash).
    mindex: Option<MethodIndex>,
    opts: Options,
    state: RwLock<State>,
    writer: Mutex<Writer>,
    recovery: Recovery,
    _lock: Option<File>,
}

impl Inner {
    /// Every column family of this database: the fixed ones, the current table generation's, the
    /// containment index's when there is one, and the method's.
    fn column_families(&self) -> Vec<String> {
        let mut names = cf_names(self.config.tables, self.table_gen);
        // containment:
        names.extend(self.config.containment.map(|_| crate::store::keys::CF_CONTAIN.to_string()));
        // method:
        names.extend(method_cf_names(&self.spec.method));
        names
    }

    /// The handle of column family `name`; a missing one is corruption.
    pub(super) fn cf(&self, name: &str) -> Result<&rocksdb::ColumnFamily> {
        self.rocks
            .cf_handle(name)
            .ok_or_else(|| Error::corrupt(&self.rocks_path, None, format!("missing column family {name}")))
    }

    /// Flushes RocksDB's memtables of every column family, [`FLUSH_THREADS`] at a time. RocksDB's
    /// own multi-family flush (without atomic flush) and one `flush_cf` after another both wait
    /// for each family in turn: at the close of a 1M-document bulk load that was ~2.5 s on one core
    /// with the other idle (docs/performance.md, "Issue 14, twelfth sitting"). Each thread here
    /// takes the next family and waits for its flush, so RocksDB's flush threads run side by side.
    /// The first error is returned after every thread has stopped.
    pub(super) fn flush_memtables(&self) -> Result<()> {
        let names = self.column_families();
        let cfs: Vec<&rocksdb::ColumnFamily> = names.iter().map(|n| self.cf(n)).collect::<Result<_>>()?;
        state::for_each_on_threads(
            "fpdb-flush",
            "flush",
            FLUSH_THREADS as usize,
            cfs.len(),
            || (),
            |_, i| self.rocks.flush_cf(cfs[i]).map_err(|e| Error::rocks("flush", &self.rocks_path, e)),
        )
    }
}

/// RocksDB's flush threads (`max_background_flushes`), and the threads that ask for the close's
/// flushes. RocksDB's default for two background jobs is one flush thread.
pub(super) const FLUSH_THREADS: i32 = 2;

impl Drop for Inner {
    /// A clean close writes the containment tail and the table tail and flushes the memtables, so
    /// the next open neither re-derives the tails nor replays the whole WAL.
    fn drop(&mut self) {
        let mut w = self.writer.lock();
        if self.opts.read_only || w.poisoned.is_some() || w.in_progress.is_some() {
            // containment: a background write of the tail still running ends before the handle
            // does (its file, never ingested, is removed by the next open).
            if let Some(job) = w.contain_job.take() {
                let _ = job.wait(contain_tail::CONTAIN_TAIL_WRITER);
            }
            table_tail::abandon_write(&mut w);
        } else {
            // containment: the tail, so that the next open need not recompute it (on failure it
            // does; nothing is lost).
            let _ = contain_tail::flush_tail(self, &mut w);
            // The table tail, so that the tables are complete for any reader (on failure the
            // next writable open writes it).
            let _ = table_tail::write_table_tail(self, &mut w);
            drop(w);
            let _ = self.flush_memtables();
        }
    }
}

/// An open database. Cheap to clone; `Send + Sync`: share it between threads.
#[derive(Clone)]
pub struct Db {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("path", &self.inner.path).finish_non_exhaustive()
    }
}

impl Db {
    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The stored fingerprint spec.
    pub fn spec(&self) -> &FingerprintSpec {
        &self.inner.spec
    }

    /// The stored configuration (tables, default k and t).
    pub fn config(&self) -> &DbConfig {
        &self.inner.config
    }

    /// The table layout.
    pub fn layout(&self) -> &Layout {
        &self.inner.layout
    }

    /// What recovery did when this handle was opened.
    pub fn recovery(&self) -> &Recovery {
        &self.inner.recovery
    }

    /// A fingerprinter for the stored spec.
    pub fn fingerprinter(&self) -> Fingerprinter {
        Fingerprinter::new(self.inner.spec.clone())
    }
    pub(super) fn cf(&self, name: &str) -> Result<&rocksdb::ColumnFamily> {
        self.inner.cf(name)
    }

    pub(super) fn rocks_err(&self, op: &'static str) -> impl Fn(rocksdb::Error) -> Error + '_ {
        move |e| Error::rocks(op, &self.inner.rocks_path, e)
    }

    pub(super) fn read_record(&self, id: u64) -> Result<Option<DocRecord>> {
        let v = self
            .inner
            .rocks
            .get_cf(self.cf(CF_DOCS)?, doc_key(id))
            .map_err(self.rocks_err("read doc"))?;
        v.map(|v| doc_record::decode_doc(&v, &self.inner.rocks_path, Some(id))).transpose()
    }

    pub(super) fn committed_id(&self, key: &str) -> Result<Option<u64>> {
        let v = self
            .inner
            .rocks
            .get_cf(self.cf(CF_KEYS)?, key.as_bytes())
            .map_err(self.rocks_err("read key"))?;
        v.map(|v| {
            decode_key_value(&v)
                .ok_or_else(|| Error::corrupt(&self.inner.rocks_path, None, format!("key entry for {key:?} is not 8 bytes")))
        })
        .transpose()
    }
}
