//! The SimHash tables' tail, by the tail protocol (`tail`; its files: `table_files`).
//! With the in-memory mirror, a commit writes no table
//! entries: the mirror answers every query, and the entries derive from the documents' SimHashes,
//! which every doc record holds. The documents committed since the **table floor** wait in the
//! writer (`Writer::table_tail`, with their SimHashes). Every `Options::table_tail_docs` documents
//! the tail is frozen and its entries are written as one sorted SST file per table on a thread of
//! its own while the writer goes on; a later commit ingests the files whole and moves the floor in
//! `meta` to the frozen part's end. `Db::flush` and a clean close write the rest at once. So table
//! entries never pass through the WAL, a memtable or a flush, and the writer does not stall on them
//! (measured: docs/performance.md, "Measured in git history").
//!
//! **The floor.** Every live document with an id below it has its entries in the current table
//! generation; documents at or above it may not. A writable open writes the entries of the
//! documents at or above it first (a crash left them; the SimHashes are in memory by then), so a
//! writer always starts with the floor at the next doc id, and the tables are complete after every
//! clean close, for an open without the mirror, `check`, `reindex` and earlier versions. A
//! read-only open without the mirror whose floor is below the next doc id builds the mirror anyway.
//!
//! **Deletes.** A delete always writes the tombstones of its table keys, wherever the document
//! was. An ingested file gets a newer sequence number than those tombstones, so RocksDB must never
//! receive a dead document's entries: the ids at or above the floor deleted since their commit
//! (`Writer::table_dead`) are left out when the tail freezes, and if one of the frozen part's
//! documents dies while its files are written, the files are written again without it, under the
//! writer lock, before the ingest (rare).
//!
//! **Crash safety.** Each table's file is ingested whole (atomic, durable when it returns); the
//! floor moves after the last. A stop between leaves entries at or above the floor for documents
//! that were live then — the next writable open writes the same entries again (puts of the same
//! keys) — or stray files, removed by that open. A background write that fails (or panics) is
//! reported by the commit or `flush` that installs it, which poisons the handle.
//!
//! [`Db::flush`]: crate::Db::flush

use std::sync::Arc;

use crate::error::Result;

use super::tail::{self, Freezing};
use super::Background;
use super::View;
use crate::db::state::Writer;

/// The table tail as background work ([`Background`]), under the writer lock.
pub(in crate::db) struct TableTail;

impl Background for TableTail {
    /// The tail protocol's step ([`tail::after_commit`]), once the tail holds
    /// `Options::table_tail_docs` documents.
    fn after_commit(&self, inner: &View<'_>, w: &mut Writer) -> Result<()> {
        let finished = w.table_job.as_ref().is_some_and(Freezing::is_finished);
        let len = w.table_tail.len();
        tail::after_commit(
            w,
            finished,
            len,
            inner.opts.table_tail_docs,
            |w| finish_write(inner, w),
            |w, background| {
                start_write(inner, w, background);
                Ok(())
            },
        )
    }

    /// The whole tail now (`Db::flush`, the close): a running write finished, then the rest
    /// written and the floor moved to the next doc id, so the tables are complete for any reader;
    /// readers' consistent reads of RocksDB resume at the new sequence number. A failure poisons
    /// the handle (nothing is lost: the next writable open writes the tail again).
    fn flush(&self, inner: &View<'_>, w: &mut Writer) -> Result<()> {
        tail::write_all(
            w,
            |w| finish_write(inner, w),
            |w, background| {
                if w.table_floor != w.next_id {
                    start_write(inner, w, background);
                }
                Ok(())
            },
        )
    }

    /// A running background write ends before the handle does (the close of a poisoned or
    /// read-only handle): its files, never ingested, are removed by the next writable open.
    fn abandon(&self, w: &mut Writer) {
        if let Some(job) = w.table_job.take() {
            job.abandon();
        }
    }
}

/// Freezes the tail (its documents still live, up to the next doc id) and starts writing its
/// files. The caller has finished any earlier write.
fn start_write(inner: &View<'_>, w: &mut Writer, background: bool) {
    let split = w.next_id;
    let mut docs = std::mem::take(&mut w.table_tail);
    if !w.table_dead.is_empty() {
        docs.retain(|(id, _)| !w.table_dead.contains(id));
        // Every id in it is below `split`: left out now, or never in the tail.
        w.table_dead.clear();
    }
    let ctx = Arc::new((inner.rocks_path.clone(), inner.layout.clone(), inner.table_gen));
    w.table_job = Some(Freezing::start(ctx, Arc::new(docs), split, background));
}

/// Installs the frozen part ([`tail::Written::install`]), then publishes RocksDB's new sequence number
/// and moves the writer's floor.
fn finish_write(inner: &View<'_>, w: &mut Writer) -> Result<()> {
    let Some(job) = w.table_job.take() else {
        return Ok(());
    };
    // A dead id below `split` is one of the frozen documents: the set was emptied at the freeze,
    // and only a live document can be deleted. (One look at the few dead ids, not one per frozen
    // document under the writer lock.)
    let any_dead = w.table_dead.iter().any(|&id| id < job.split);
    let dead = &w.table_dead;
    let split = job
        .wait()?
        .install(&inner.rocks, &inner.rocks_path, inner.opts.sync, any_dead, |id| !dead.contains(&id))?;
    let mut st = inner.state.write();
    st.published_seq = inner.rocks.latest_sequence_number();
    w.table_floor = split;
    w.table_dead.retain(|&id| id >= split);
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::store::keys::{CF_META, META_TABLE_FLOOR};
    use crate::{CreateOptions, Db, Options, QueryOptions};

    fn text(i: usize) -> String {
        (0..60)
            .map(|j| format!("w{}", (i * 31 + j * 7 + j * j) % 700))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn floor(db: &Db) -> Option<Vec<u8>> {
        let meta = db.cf(CF_META).unwrap();
        db.inner.rocks.get_cf(meta, META_TABLE_FLOOR).unwrap()
    }

    /// A database written before the table tail has no `table_floor`: every entry is in the
    /// tables. A reader without the mirror then reads them (no mirror built), and a writer records
    /// the floor at the next doc id.
    #[test]
    fn a_database_without_a_table_floor_has_complete_tables() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        {
            let db = Db::create(&path, &CreateOptions::default()).unwrap();
            for i in 0..20 {
                db.insert(&format!("k{i}"), &text(i)).unwrap();
            }
            db.flush().unwrap();
            assert_eq!(floor(&db), Some(20u64.to_le_bytes().to_vec()));
            let meta = db.cf(CF_META).unwrap();
            db.inner.rocks.delete_cf(meta, META_TABLE_FLOOR).unwrap();
        }
        let opts = |read_only| Options {
            mirror: false,
            read_only,
            ..Options::default()
        };
        {
            let ro = Db::open_with(&path, opts(true)).unwrap();
            assert!(ro.inner.state.read().tables.is_none(), "no mirror is built");
            assert!(floor(&ro).is_none());
            for i in 0..20 {
                let hits = ro.query(&text(i), &QueryOptions::default()).unwrap();
                assert!(hits.iter().any(|h| h.key == format!("k{i}")), "doc {i}: {hits:?}");
            }
            assert!(ro.check().unwrap().faults.is_empty());
        }
        let db = Db::open_with(&path, opts(false)).unwrap();
        assert_eq!(floor(&db), Some(20u64.to_le_bytes().to_vec()), "the writer records it");
    }
}
