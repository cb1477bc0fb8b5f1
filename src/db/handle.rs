//! The handle: [`Db`] (cheap to clone) and what it shares, [`Inner`]: RocksDB, the stored spec and
//! configuration, the published state and the writer. Its methods live in the files of `db/`, each
//! by what it does.

use std::path::Path;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::error::{Error, Result};
use crate::fingerprint::spec::FingerprintSpec;
use crate::fingerprint::Fingerprinter;
use crate::index::Layout;
use crate::store::doc_record::{DbConfig, DocRecord};
use crate::store::segment::Recovery;

use super::background::{mirror::MirrorMerge, table_tail::TableTail, Background, View};
use super::base::Base;
use super::side::register::Sides;
use super::state::{State, Writer};

pub(super) struct Inner {
    /// What every part of the handle reads and nothing changes after the open (RocksDB, the
    /// paths, the spec, the configuration, the options); `Inner` dereferences to it.
    pub(super) base: Base,
    /// The side indexes the spec and configuration enable (registered at open, `side/register.rs`).
    pub(super) sides: Sides,
    pub(super) state: RwLock<State>,
    pub(super) writer: Mutex<Writer>,
}

impl std::ops::Deref for Inner {
    type Target = Base;

    fn deref(&self) -> &Base {
        &self.base
    }
}

impl Inner {
    /// The view background work is given (the unchanging part and the published state).
    pub(super) fn view(&self) -> View<'_> {
        View {
            base: &self.base,
            state: &self.state,
        }
    }

    /// Every piece of background work of this handle, in the order each step runs them: the
    /// mirror's merges, the side indexes' (in registration order), the table tail.
    pub(super) fn background(&self) -> impl Iterator<Item = &dyn Background> {
        let mirror: &dyn Background = &MirrorMerge;
        let tables: &dyn Background = &TableTail;
        std::iter::once(mirror)
            .chain(self.sides.iter().filter_map(|s| s.background()))
            .chain(std::iter::once(tables))
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
        self.inner.base.cf(name)
    }

    pub(super) fn rocks_err(&self, op: &'static str) -> impl Fn(rocksdb::Error) -> Error + '_ {
        self.inner.base.rocks_err(op)
    }

    pub(super) fn read_record(&self, id: u64) -> Result<Option<DocRecord>> {
        self.inner.base.read_record(id)
    }

    pub(super) fn committed_id(&self, key: &str) -> Result<Option<u64>> {
        self.inner.base.committed_id(key)
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
