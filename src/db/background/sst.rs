//! Sorted files that RocksDB ingests whole, shared by the writers that bypass the WAL and the
//! memtables: the table tail (`db::background::table_tail`), a re-layout (`db::reindex`) and the containment
//! tail (`db::side::contain::tail`). Each writes a file under a name of its own in the RocksDB directory,
//! ingests it (atomic, durable when it returns) and leaves nothing behind; a file a stop left before
//! its ingest is removed by [`remove_stale_files`].

use std::path::Path;

use rocksdb::{ColumnFamily, IngestExternalFileOptions, SstFileWriter, DB};

use crate::error::{Error, Result};
use crate::index::Layout;
use crate::store::keys::table_key_ord;

/// Writes table `table`'s entries of `docs` (`(id, simhash)`, any order) under `layout` as one
/// sorted SST file at `path`. `keys` is a buffer the caller reuses from one table to the next; the
/// keys sort as integers ([`table_key_ord`]) and are written as their big-endian bytes.
pub(in crate::db) fn write_table_file(
    rp: &Path,
    path: &Path,
    layout: &Layout,
    table: usize,
    docs: &[(u64, u64)],
    keys: &mut Vec<u128>,
) -> Result<()> {
    keys.clear();
    keys.extend(docs.iter().map(|&(id, fp)| table_key_ord(layout, table, fp, id)));
    keys.sort_unstable();
    let sst_opts = crate::db::rocks_options::table_cf_options();
    let mut w = SstFileWriter::create(&sst_opts);
    w.open(path).map_err(|e| Error::rocks("create a table file", rp, e))?;
    for key in keys.iter() {
        w.put(key.to_be_bytes(), [])
            .map_err(|e| Error::rocks("write a table file", rp, e))?;
    }
    w.finish().map_err(|e| Error::rocks("finish a table file", rp, e))
}

/// Ingests the file at `path` into `cf`, moved (linked) into RocksDB; the name it was written under
/// is removed after. `op` names the step in an error.
pub(in crate::db) fn ingest_moved(rocks: &DB, cf: &ColumnFamily, path: &Path, rp: &Path, op: &'static str) -> Result<()> {
    let mut io = IngestExternalFileOptions::default();
    io.set_move_files(true);
    rocks
        .ingest_external_file_cf_opts(cf, &io, vec![path])
        .map_err(|e| Error::rocks(op, rp, e))?;
    // move_files links the file into RocksDB; the name it was written under may remain.
    let _ = std::fs::remove_file(path);
    Ok(())
}

/// Removes the files named `prefix*.sst` a stop left before their ingest (RocksDB ignores them).
pub(in crate::db) fn remove_stale_files(rocks_path: &Path, prefix: &str) -> Result<()> {
    let Ok(dir) = std::fs::read_dir(rocks_path) else { return Ok(()) };
    for e in dir.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(prefix) && name.ends_with(".sst") {
            std::fs::remove_file(e.path()).map_err(|err| Error::io("remove a stale SST file", e.path(), err))?;
        }
    }
    Ok(())
}
