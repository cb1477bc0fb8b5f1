//! The close: a clean one writes the background tails and flushes the memtables; a poisoned or
//! read-only one only ends the background work still running.

use super::background::table_tail;
use super::handle::Inner;

impl Drop for Inner {
    /// A clean close writes the side indexes' tails and the table tail and flushes the memtables,
    /// so the next open neither re-derives the tails nor replays the whole WAL.
    fn drop(&mut self) {
        let mut w = self.writer.lock();
        if self.opts.read_only || w.poisoned.is_some() || w.in_progress.is_some() {
            // Background work still running ends before the handle does (a file never ingested
            // is removed by the next open).
            self.sides.iter().for_each(|s| s.abandon());
            table_tail::abandon_write(&mut w);
        } else {
            // The side indexes' tails, so that the next open need not recompute them (on failure
            // it does; nothing is lost).
            for s in self.sides.iter() {
                let _ = s.flush(self);
            }
            // The table tail, so that the tables are complete for any reader (on failure the
            // next writable open writes it).
            let _ = table_tail::write_table_tail(self, &mut w);
            drop(w);
            let _ = self.flush_memtables();
        }
    }
}
