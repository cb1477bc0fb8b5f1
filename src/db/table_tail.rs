//! The SimHash tables' tail (issue 14). With the in-memory mirror, a commit writes no table
//! entries: the mirror answers every query, and the entries derive from the documents' SimHashes,
//! which every doc record holds. The ids committed since the **table floor** wait in the writer
//! (`Writer::table_tail`), and [`write_table_tail`] writes their entries as one sorted SST file per
//! table, ingested whole, every `Options::table_tail_docs` documents, at [`Db::flush`] and at a
//! clean close; then the floor in `meta` moves to the next doc id. So table entries never pass
//! through the WAL, a memtable or a flush (measured: docs/performance.md, "Issue 14, thirteenth
//! sitting").
//!
//! **The floor.** Every live document with an id below it has its entries in the current table
//! generation; documents at or above it may not. A writable open writes the entries of the
//! documents at or above it first (a crash left them; the SimHashes are in memory by then), so a
//! writer always starts with the floor at the next doc id, and the tables are complete after every
//! clean close, for an open without the mirror, `check`, `reindex` and earlier versions. A
//! read-only open without the mirror whose floor is below the next doc id builds the mirror anyway.
//!
//! **Crash safety.** Each table's file is ingested whole (atomic, durable when it returns); the
//! floor moves after the last. A stop between leaves entries at or above the floor for documents
//! that were live then — the next writable open writes the same entries again (puts of the same
//! keys) — or a stray file, removed by that open. A document deleted while in the tail is left out
//! (the write runs under the writer lock and reads the live set); a delete always writes the
//! tombstones of its table keys, wherever the document was.
//!
//! [`Db::flush`]: crate::Db::flush

use std::path::Path;

use rocksdb::{WriteOptions, DB};

use crate::error::{Error, Result};
use crate::failpoint;
use crate::index::Layout;
use crate::store::keys::{table_cf, CF_META};

use super::contain_tail::encode_floor;
use super::sst::{ingest_moved, write_table_file};
use super::state::{for_each_on_threads, Writer};
use super::Inner;

/// Threads that write the tail's files, one table at a time each.
const TAIL_THREADS: usize = 2;

/// The `meta` key of the table floor (u64 LE, [`encode_floor`]). Absent in a database written
/// before the table tail existed: every entry is then in RocksDB, and a writable open records the
/// next doc id.
pub(super) const META_TABLE_FLOOR: &[u8] = b"table_floor";

/// Name prefix of a table tail file while it is written (in the RocksDB directory); one a crash
/// left before its ingest is removed at the next writable open.
pub(super) const TABLE_TAIL_FILE_PREFIX: &str = "table-tail-";

/// Writes the table entries of `docs` (`(id, simhash)`, any order) into table generation `gen` —
/// one sorted SST file per table, ingested whole, two tables at a time — then moves the floor to
/// `floor` (synced when `sync`). With no documents only the floor moves.
pub(super) fn write_entries(
    rocks: &DB,
    rocks_path: &Path,
    layout: &Layout,
    gen: u32,
    docs: &[(u64, u64)],
    floor: u64,
    sync: bool,
) -> Result<()> {
    if !docs.is_empty() {
        let tables = layout.tables() as usize;
        let keys = || Vec::with_capacity(docs.len());
        for_each_on_threads("fpdb-table-tail", "table tail writer", TAIL_THREADS, tables, keys, |keys, i| {
            let name = table_cf(gen, i);
            let cf = rocks
                .cf_handle(&name)
                .ok_or_else(|| Error::corrupt(rocks_path, None, format!("table column family {name} is missing")))?;
            let path = rocks_path.join(format!("{TABLE_TAIL_FILE_PREFIX}{gen}-{i}-{floor}.sst"));
            write_table_file(rocks_path, &path, layout, i, docs, keys)?;
            failpoint!("table.tail.file");
            ingest_moved(rocks, cf, &path, rocks_path, "ingest a table tail file")
        })?;
    }
    failpoint!("table.tail.ingested");
    let meta = rocks
        .cf_handle(CF_META)
        .ok_or_else(|| Error::corrupt(rocks_path, None, "missing meta column family"))?;
    let mut wo = WriteOptions::default();
    wo.set_sync(sync);
    rocks
        .put_cf_opt(meta, META_TABLE_FLOOR, encode_floor(floor), &wo)
        .map_err(|e| Error::rocks("move the table floor", rocks_path, e))
}

/// Writes the tail's entries (its documents still live) and moves the floor to the next doc id,
/// under the writer lock; readers' consistent reads of RocksDB resume at the new sequence number.
/// Must run inside [`Db::mutation`](crate::Db): a failure poisons the handle (nothing is lost: the
/// next open writes the tail again).
pub(super) fn write_table_tail(inner: &Inner, w: &mut Writer) -> Result<()> {
    if w.table_floor == w.next_id {
        return Ok(());
    }
    let docs: Vec<(u64, u64)> = {
        let st = inner.state.read();
        w.table_tail
            .iter()
            .filter_map(|&id| st.docs.get(&id).map(|m| (id, m.simhash)))
            .collect()
    };
    write_entries(
        &inner.rocks,
        &inner.rocks_path,
        &inner.layout,
        inner.table_gen,
        &docs,
        w.next_id,
        inner.opts.sync,
    )?;
    let mut st = inner.state.write();
    st.published_seq = inner.rocks.latest_sequence_number();
    w.table_floor = w.next_id;
    w.table_tail.clear();
    Ok(())
}

/// After each commit (under the writer lock): writes the tail once it holds
/// `Options::table_tail_docs` documents (0: after every batch).
pub(super) fn table_tail_after_commit(inner: &Inner, w: &mut Writer) -> Result<()> {
    if w.table_tail.len() >= inner.opts.table_tail_docs.max(1) {
        write_table_tail(inner, w)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::META_TABLE_FLOOR;
    use crate::store::keys::CF_META;
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
