//! The tail protocol, written once for every tail (the SimHash tables', `table_tail`; the
//! containment index's, `db::side::contain::tail`). Entries that derive from committed documents
//! are not written by the commit: they wait in memory (the tail), and every so many documents the
//! tail is **frozen** (its documents up to `split`, the next doc id then), its entries are written
//! as sorted SST files on a thread of their own while the writer goes on, and a later step under
//! the writer lock **installs** them: the files are written again without the documents that died
//! meanwhile (rare; RocksDB must never receive a dead document's entries, which would outlive
//! their tombstones), ingested whole, and the **floor** in `meta` moves to `split` (synced with
//! the commits). The caller then publishes RocksDB's new sequence number (`published_seq`).
//!
//! A stop anywhere leaves a database the next writable open reads right: before an ingest, stray
//! files (each tail removes its own by name prefix at open); after it, entries at or above the old
//! floor, which the open writes again or re-derives. A failed or panicked background write is the
//! error of the step that installs it, which poisons the handle.
//!
//! What differs between tails is what a frozen part is, how its files are written and where they
//! go: [`TailFiles`]. Where each keeps its tail, its dead ids and its floor in memory stays with it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rocksdb::DB;

use crate::error::Result;
use crate::failpoint;

use super::floor::write_floor;
use super::job::Job;

/// One tail's files: what a frozen part is, how it is written, where it is ingested.
pub(in crate::db) trait TailFiles: 'static {
    /// A frozen part (shared with its background write).
    type Part: Send + Sync + 'static;
    /// What the background write needs besides the part (directories, layout), owned.
    type Ctx: Send + Sync + 'static;
    /// The name of the write's thread.
    const THREAD: &'static str;
    /// The stage that names a panic of the write.
    const STAGE: &'static str;
    /// The floor's key in the `meta` column family.
    const FLOOR: &'static [u8];
    /// A pause point after the background write (tests hold a write there).
    const WRITTEN: &'static str;

    /// Writes the entries of the part's documents that `keep` accepts as sorted SST files named
    /// after `split` (none when there is nothing to write: RocksDB refuses an empty file).
    fn write(ctx: &Self::Ctx, part: &Self::Part, split: u64, keep: &dyn Fn(u64) -> bool) -> Result<Vec<PathBuf>>;

    /// Ingests the files (atomic and durable each, moved into RocksDB).
    fn ingest(ctx: &Self::Ctx, rocks: &DB, files: &[PathBuf]) -> Result<()>;
}

/// A frozen part on its way to RocksDB: its documents are those below `split` (and at or above
/// the floor) when it froze.
pub(in crate::db) struct Freezing<T: TailFiles> {
    pub(in crate::db) split: u64,
    part: Arc<T::Part>,
    ctx: Arc<T::Ctx>,
    files: Job<Vec<PathBuf>>,
}

/// The background write of a frozen part.
fn write_part<T: TailFiles>((ctx, part, split): (Arc<T::Ctx>, Arc<T::Part>, u64)) -> Result<Vec<PathBuf>> {
    let files = T::write(&ctx, &part, split, &|_| true);
    failpoint::pause_point(T::WRITTEN);
    files
}

impl<T: TailFiles> Freezing<T> {
    /// Starts writing `part`'s files: on a thread of its own when `background`, else here (a
    /// flush, a close, a limit of 0).
    pub(in crate::db) fn start(ctx: Arc<T::Ctx>, part: Arc<T::Part>, split: u64, background: bool) -> Self {
        let job = (ctx.clone(), part.clone(), split);
        let files = if background {
            Job::spawn(T::THREAD, job, write_part::<T>)
        } else {
            Job::Done(write_part::<T>(job))
        };
        Freezing { split, part, ctx, files }
    }

    /// True when [`Freezing::wait`] would not wait.
    pub(in crate::db) fn is_finished(&self) -> bool {
        self.files.is_finished()
    }

    /// Waits for the part's files (before the locks its install takes: readers do not wait on the
    /// write).
    pub(in crate::db) fn wait(self) -> Result<Written<T>> {
        let files = self.files.wait(T::STAGE)?;
        Ok(Written {
            split: self.split,
            part: self.part,
            ctx: self.ctx,
            files,
        })
    }

    /// Ends the write without installing it (a poisoned or read-only close): its files, never
    /// ingested, are removed by the next writable open.
    pub(in crate::db) fn abandon(self) {
        let _ = self.files.wait(T::STAGE);
    }
}

/// A frozen part whose files are written, to be installed.
pub(in crate::db) struct Written<T: TailFiles> {
    split: u64,
    part: Arc<T::Part>,
    ctx: Arc<T::Ctx>,
    files: Vec<PathBuf>,
}

impl<T: TailFiles> Written<T> {
    /// Installs the part (under the writer lock): writes its files again with only the documents
    /// `live` accepts when `any_dead`, ingests them and moves the floor to `split` (synced when the
    /// database syncs its commits). Returns `split`.
    pub(in crate::db) fn install(
        self,
        rocks: &DB,
        rocks_path: &Path,
        sync: bool,
        any_dead: bool,
        live: impl Fn(u64) -> bool,
    ) -> Result<u64> {
        let mut files = self.files;
        if any_dead {
            // Rare (a document replaced or deleted while its entries were written): written
            // again without the dead, here, under the lock.
            for f in &files {
                let _ = std::fs::remove_file(f);
            }
            files = T::write(&self.ctx, &self.part, self.split, &live)?;
        }
        T::ingest(&self.ctx, rocks, &files)?;
        write_floor(rocks, rocks_path, T::FLOOR, self.split, sync)?;
        Ok(self.split)
    }
}

/// The protocol's step after each commit, the same for every tail: a finished write is installed
/// (`finish`); once the tail holds `limit` entries (`len`), a write still running is waited for
/// and installed — the back-pressure that bounds a tail's memory — and the tail is frozen and
/// its write started (`start(background)`); with a limit of 0 it is installed at once, so every
/// batch's entries reach RocksDB before the commit returns.
pub(in crate::db) fn after_commit<S>(
    s: &mut S,
    finished: bool,
    len: usize,
    limit: usize,
    finish: impl Fn(&mut S) -> Result<()>,
    start: impl Fn(&mut S, bool) -> Result<()>,
) -> Result<()> {
    if finished {
        finish(s)?;
    }
    if len < limit.max(1) {
        return Ok(());
    }
    finish(s)?;
    start(s, limit != 0)?;
    if limit == 0 {
        finish(s)?;
    }
    Ok(())
}

/// The whole tail to RocksDB now (`Db::flush`, a clean close): a running write installed, then
/// the rest frozen, written here and installed.
pub(in crate::db) fn write_all<S>(
    s: &mut S,
    finish: impl Fn(&mut S) -> Result<()>,
    start: impl Fn(&mut S, bool) -> Result<()>,
) -> Result<()> {
    finish(s)?;
    start(s, false)?;
    finish(s)
}
