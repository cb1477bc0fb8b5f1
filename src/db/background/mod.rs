//! The writer's background and durability work, one subsystem: every piece a [`Background`]
//! listed by [`Inner::background`] — the mirror's merges, each side index's (the containment tail,
//! the semantic indexer), the table tail — driven after each commit (`Db::commit`'s
//! `after_publish`), at `Db::flush` and at the close (a loop over the list), its error a poison of
//! the handle. Its threads are [`job::Job`]s, started and installed under the writer lock; the
//! tails share one protocol (`tail.rs`).
//!
//! Its files: ARCHITECTURE.md, "`src/db/` — the handle" (the background row).

pub(super) mod floor;
pub(super) mod job;
mod mirror;
pub(super) mod sst;
pub(super) mod table_files;
pub(super) mod table_tail;
pub(super) mod tail;

use crate::db::handle::{Db, Inner};
use crate::db::state::Writer;
use crate::error::Result;

/// One piece of the writer's background work (the mirror's merges, the table tail, a side
/// index's: the containment tail, the semantic indexer), driven at three moments, each under the
/// writer lock: after every published commit, at `Db::flush` and a clean close (write what it
/// holds), and at a poisoned or read-only close (end what still runs, write nothing). They are
/// listed in one place (`Inner::background`); an error in the first two poisons the handle.
pub(in crate::db) trait Background: Send + Sync {
    /// The handle is made (the open's last step): work that runs on its own starts (the semantic
    /// indexer).
    fn start(&self, _db: &Db) -> Result<()> {
        Ok(())
    }

    /// After a commit is published: its work started, or a finished one installed.
    fn after_commit(&self, inner: &Inner, w: &mut Writer) -> Result<()>;

    /// Writes what it holds in memory to RocksDB (`Db::flush`, a clean close).
    fn flush(&self, _inner: &Inner, _w: &mut Writer) -> Result<()> {
        Ok(())
    }

    /// A poisoned or read-only close: what still runs ends (nothing more is written).
    fn abandon(&self, _w: &mut Writer) {}
}

impl Inner {
    /// Every piece of background work of this handle, in the order each step runs them: the
    /// mirror's merges, the side indexes' (in registration order), the table tail.
    pub(in crate::db) fn background(&self) -> impl Iterator<Item = &dyn Background> {
        let mirror: &dyn Background = &mirror::MirrorMerge;
        let tables: &dyn Background = &table_tail::TableTail;
        std::iter::once(mirror)
            .chain(self.sides().iter().filter_map(|s| s.background()))
            .chain(std::iter::once(tables))
    }
}
