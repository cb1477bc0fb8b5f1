//! The close: a clean one writes the background tails and flushes the memtables; a poisoned or
//! read-only one only ends the background work still running. Every column family, and their
//! memtables' flush (the close's and `Db::flush`'s).

use crate::error::{Error, Result};
use crate::store::keys::cf_names;

use super::background::job::for_each_on_threads;
use super::handle::Inner;
use super::rocks_options::FLUSH_THREADS;

impl Drop for Inner {
    /// A clean close writes what every piece of background work holds (the tails) and flushes the
    /// memtables, so the next open neither re-derives the tails nor replays the whole WAL; on a
    /// failure it does, and nothing is lost. A poisoned or read-only close ends what still runs
    /// (a file never ingested is removed by the next open).
    fn drop(&mut self) {
        let mut w = self.writer.lock();
        if self.opts.read_only || w.poisoned.is_some() || w.in_progress.is_some() {
            self.background().for_each(|b| b.abandon(&mut w));
        } else {
            for b in self.background() {
                let _ = b.flush(&self.view(), &mut w);
            }
            drop(w);
            let _ = self.flush_memtables();
        }
    }
}

impl Inner {
    /// Every column family of this database: the fixed ones, the current table generation's and
    /// the side indexes'.
    pub(super) fn column_families(&self) -> Vec<String> {
        let mut names = cf_names(self.config.tables, self.table_gen);
        names.extend(self.sides.column_families());
        names
    }

    /// Flushes RocksDB's memtables of every column family, [`FLUSH_THREADS`] at a time. RocksDB's
    /// own multi-family flush (without atomic flush) and one `flush_cf` after another both wait
    /// for each family in turn: at the close of a 1M-document bulk load that was ~2.5 s on one core
    /// with the other idle (docs/performance.md, "Measured in git history"). Each thread here
    /// takes the next family and waits for its flush, so RocksDB's flush threads run side by side.
    /// The first error is returned after every thread has stopped.
    pub(super) fn flush_memtables(&self) -> Result<()> {
        let names = self.column_families();
        let cfs: Vec<&rocksdb::ColumnFamily> = names.iter().map(|n| self.cf(n)).collect::<Result<_>>()?;
        for_each_on_threads(
            "fpdb-flush",
            "flush",
            FLUSH_THREADS as usize,
            cfs.len(),
            || (),
            |_, i| self.rocks.flush_cf(cfs[i]).map_err(|e| Error::rocks("flush", &self.rocks_path, e)),
        )
    }
}
