//! The SimHash tables' files: one sorted SST file per table of a generation, written two tables
//! at a time and ingested whole; the table tail's [`TailFiles`] (`table_tail`) and the open's
//! write of the entries a crash left above the floor (`write_entries`).

use std::path::{Path, PathBuf};

use rocksdb::DB;

use crate::db::cfs;
use crate::error::Result;
use crate::failpoint;
use crate::index::Layout;
use crate::store::keys::{table_cf, META_TABLE_FLOOR};

use super::floor::write_floor;
use super::job::for_each_on_threads;
use super::sst::{ingest_moved, write_table_file};
use super::tail::TailFiles;

/// Threads that write the tail's files, one table at a time each.
const TAIL_THREADS: usize = 2;

/// Name prefix of a table tail file while it is written (in the RocksDB directory); one a crash
/// left before its ingest is removed at the next writable open.
pub(in crate::db) const TABLE_TAIL_FILE_PREFIX: &str = "table-tail-";

/// Writes the table entries of `docs` (`(id, simhash)`, any order) into table generation `gen` —
/// one sorted SST file per table, ingested whole, two tables at a time — then moves the floor to
/// `floor` (synced when `sync`). With no documents only the floor moves.
pub(in crate::db) fn write_entries(
    rocks: &DB,
    rocks_path: &Path,
    layout: &Layout,
    gen: u32,
    docs: &[(u64, u64)],
    floor: u64,
    sync: bool,
) -> Result<()> {
    let files = write_files(rocks_path, layout, gen, docs, floor)?;
    ingest_files(rocks, rocks_path, gen, &files, floor, sync)
}

/// Writes `docs`' entries as one sorted SST file per table of generation `gen`, two tables at a
/// time; returns the files in table order (none when `docs` is empty: RocksDB refuses an empty
/// file). `floor` names them.
fn write_files(rocks_path: &Path, layout: &Layout, gen: u32, docs: &[(u64, u64)], floor: u64) -> Result<Vec<PathBuf>> {
    if docs.is_empty() {
        return Ok(Vec::new());
    }
    let files: Vec<PathBuf> = (0..layout.tables())
        .map(|i| rocks_path.join(format!("{TABLE_TAIL_FILE_PREFIX}{gen}-{i}-{floor}.sst")))
        .collect();
    let keys = || Vec::with_capacity(docs.len());
    for_each_on_threads(
        "fpdb-table-tail",
        "table tail writer",
        TAIL_THREADS,
        files.len(),
        keys,
        |keys, i| {
            write_table_file(rocks_path, &files[i], layout, i, docs, keys)?;
            failpoint!("table.tail.write");
            Ok(())
        },
    )?;
    Ok(files)
}

/// Ingests the files of [`write_files`] into the tables of generation `gen`.
fn ingest_tables(rocks: &DB, rocks_path: &Path, gen: u32, files: &[PathBuf]) -> Result<()> {
    for (i, path) in files.iter().enumerate() {
        failpoint!("table.tail.file");
        let name = table_cf(gen, i);
        let cf = cfs::cf(rocks, rocks_path, &name)?;
        ingest_moved(rocks, cf, path, rocks_path, "ingest a table tail file")?;
    }
    failpoint!("table.tail.ingested");
    Ok(())
}

/// Ingests the files of [`write_files`] into their tables, then moves the floor to `floor`.
fn ingest_files(rocks: &DB, rocks_path: &Path, gen: u32, files: &[PathBuf], floor: u64, sync: bool) -> Result<()> {
    ingest_tables(rocks, rocks_path, gen, files)?;
    write_floor(rocks, rocks_path, META_TABLE_FLOOR, floor, sync)
}

/// The table tail's files ([`tail`]): a frozen part is its documents `(id, SimHash)`; one file per
/// table, two tables at a time.
pub(in crate::db) struct TableFiles;

/// What the table tail's write needs: the RocksDB directory, the layout, the table generation.
pub(in crate::db) type TableCtx = (PathBuf, Layout, u32);

impl TailFiles for TableFiles {
    type Part = Vec<(u64, u64)>;
    type Ctx = TableCtx;
    const THREAD: &'static str = "fpdb-table-tail";
    const STAGE: &'static str = "table tail writer";
    const FLOOR: &'static [u8] = META_TABLE_FLOOR;
    const WRITTEN: &'static str = "table.tail.written";

    fn write((rp, layout, gen): &TableCtx, docs: &Self::Part, split: u64, keep: &dyn Fn(u64) -> bool) -> Result<Vec<PathBuf>> {
        if docs.iter().all(|(id, _)| keep(*id)) {
            return write_files(rp, layout, *gen, docs, split);
        }
        let live: Vec<(u64, u64)> = docs.iter().filter(|(id, _)| keep(*id)).copied().collect();
        write_files(rp, layout, *gen, &live, split)
    }

    fn ingest((rp, _, gen): &TableCtx, rocks: &DB, files: &[PathBuf]) -> Result<()> {
        ingest_tables(rocks, rp, *gen, files)
    }
}
