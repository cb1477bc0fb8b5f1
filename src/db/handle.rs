//! The handle: [`Db`] (cheap to clone) and what it shares, [`Inner`]: RocksDB, the stored spec and
//! configuration, the published state and the writer. Its methods live in the files of `db/`, each
//! by what it does.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use rocksdb::DB;

use crate::error::{Error, Result};
use crate::fingerprint::spec::FingerprintSpec;
use crate::fingerprint::Fingerprinter;
use crate::index::Layout;
use crate::store::doc_record::{self, DbConfig, DocRecord};
use crate::store::keys::{decode_key_value, doc_key, CF_DOCS, CF_KEYS};
use crate::store::segment::Recovery;

use super::options::Options;
use super::state::{State, Writer};

pub(super) struct Inner {
    pub(super) path: PathBuf,
    pub(super) rocks_path: PathBuf,
    pub(super) rocks: DB,
    pub(super) spec: FingerprintSpec,
    pub(super) config: DbConfig,
    pub(super) layout: Layout,
    /// Generation of the table column families (`store::keys::table_cf`).
    pub(super) table_gen: u32,
    /// The side indexes the spec and configuration enable: a `db::side::Sides`, read through
    /// `Inner::sides` (held type-erased so that the handle stays below the side indexes, which
    /// use it: no import circle).
    pub(super) side_indexes: Box<dyn std::any::Any + Send + Sync>,
    pub(super) opts: Options,
    pub(super) state: RwLock<State>,
    pub(super) writer: Mutex<Writer>,
    pub(super) recovery: Recovery,
    pub(super) _lock: Option<File>,
}

impl Inner {
    /// The handle of column family `name`; a missing one is corruption.
    pub(super) fn cf(&self, name: &str) -> Result<&rocksdb::ColumnFamily> {
        self.rocks
            .cf_handle(name)
            .ok_or_else(|| Error::corrupt(&self.rocks_path, None, format!("missing column family {name}")))
    }
}

/// An open database. Cheap to clone; `Send + Sync`: share it between threads.
#[derive(Clone)]
pub struct Db {
    pub(super) inner: Arc<Inner>,
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

impl Db {
    /// Takes the writer lock of a writable, healthy handle.
    pub(super) fn lock_writer(&self) -> Result<parking_lot::MutexGuard<'_, Writer>> {
        self.writable()?;
        let w = self.inner.writer.lock();
        if let Some(p) = &w.poisoned {
            return Err(Error::Poisoned { cause: p.clone() });
        }
        if let Some(op) = w.in_progress {
            return Err(Error::Poisoned {
                cause: format!("an earlier {op} stopped between its first change and its publish (a panic)"),
            });
        }
        Ok(w)
    }

    /// Runs a mutation of the writer's state. Everything between its first change and the publish to
    /// readers happens inside `f`: an error returned from `f` poisons the handle, and so does a panic
    /// unwinding through it (the `in_progress` mark is then left set and seen by the next
    /// [`Db::lock_writer`](crate::Db::lock_writer)).
    pub(super) fn mutation<T>(w: &mut Writer, op: &'static str, f: impl FnOnce(&mut Writer) -> Result<T>) -> Result<T> {
        w.in_progress = Some(op);
        let r = f(w);
        if let Err(e) = &r {
            if w.poisoned.is_none() {
                w.poisoned = Some(format!("{op}: {e}"));
            }
        }
        w.in_progress = None;
        r
    }
}
