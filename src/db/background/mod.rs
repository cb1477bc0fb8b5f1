//! The writer's background and durability work, one subsystem: every piece a [`Background`]
//! listed by `Inner::background` — the mirror's merges, each side index's (the containment tail,
//! the semantic indexer), the table tail — driven after each commit (`Db::commit`'s
//! `after_publish`), at `Db::flush` and at the close (a loop over the list), its error a poison of
//! the handle. Its threads are [`job::Job`]s, started and installed under the writer lock; the
//! tails share one protocol (`tail.rs`).
//!
//! Its files: ARCHITECTURE.md, "`src/db/` — the handle" (the background row).

pub(super) mod floor;
pub(super) mod job;
pub(super) mod mirror;
pub(super) mod sst;
pub(super) mod table_files;
pub(super) mod table_tail;
pub(super) mod tail;

use parking_lot::RwLock;

use crate::db::base::Base;
use crate::db::state::{State, Writer};
use crate::error::Result;

/// What background work is given: the handle's unchanging part (it dereferences to it) and its
/// published state; the writer's own structures come beside it, as `&mut Writer`.
pub(in crate::db) struct View<'a> {
    pub(in crate::db) base: &'a Base,
    pub(in crate::db) state: &'a RwLock<State>,
}

impl std::ops::Deref for View<'_> {
    type Target = Base;

    fn deref(&self) -> &Base {
        self.base
    }
}

/// One piece of the writer's background work (the mirror's merges, the table tail, a side
/// index's: the containment tail, the semantic indexer), driven at three moments, each under the
/// writer lock: after every published commit, at `Db::flush` and a clean close (write what it
/// holds), and at a poisoned or read-only close (end what still runs, write nothing). They are
/// listed in one place (`Inner::background`); an error in the first two poisons the handle.
pub(in crate::db) trait Background: Send + Sync {
    /// After a commit is published: its work started, or a finished one installed.
    fn after_commit(&self, v: &View<'_>, w: &mut Writer) -> Result<()>;

    /// Writes what it holds in memory to RocksDB (`Db::flush`, a clean close).
    fn flush(&self, _v: &View<'_>, _w: &mut Writer) -> Result<()> {
        Ok(())
    }

    /// A poisoned or read-only close: what still runs ends (nothing more is written).
    fn abandon(&self, _w: &mut Writer) {}
}
