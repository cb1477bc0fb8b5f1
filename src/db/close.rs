//! The close: a clean one writes the background tails and flushes the memtables; a poisoned or
//! read-only one only ends the background work still running.

use super::background::{contain_tail, table_tail};
use super::handle::Inner;

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
