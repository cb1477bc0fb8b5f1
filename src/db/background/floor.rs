//! The tails' floors in `meta`: every document below a floor has its entries in RocksDB (the
//! table tail's, `table_tail`; a side index's, e.g. the containment tail).

use std::path::Path;

use rocksdb::{WriteOptions, DB};

use crate::db::cfs::meta_cf;
use crate::error::{Error, Result};
use crate::store::keys::le_u64;

/// A floor stored under `key` in `meta` (a doc id, u64 LE: [`META_CONTAIN_FLOOR`](crate::store::keys::META_CONTAIN_FLOOR),
/// [`META_TABLE_FLOOR`](crate::store::keys::META_TABLE_FLOOR)), checked to be at most `next_id`;
/// `None` when absent. The containment tail's and the table tail's (`db::background::table_tail`) floors.
pub(in crate::db) fn read_floor(
    rocks: &DB,
    meta: &rocksdb::ColumnFamily,
    rocks_path: &Path,
    key: &[u8],
    next_id: u64,
) -> Result<Option<u64>> {
    let name = String::from_utf8_lossy(key);
    let stored = rocks
        .get_cf(meta, key)
        .map_err(|e| Error::rocks("read a floor in meta", rocks_path, e))?;
    stored
        .map(|v| {
            le_u64(&v).filter(|&f| f <= next_id).ok_or_else(|| {
                Error::corrupt(
                    rocks_path,
                    None,
                    format!("meta {name} {v:?} is not 8 bytes at most next_doc {next_id}"),
                )
            })
        })
        .transpose()
}

/// Moves the floor under `key` in `meta` to `floor` (synced when `sync`): after a tail's files
/// are ingested, or when a database without a floor gets its first.
pub(in crate::db) fn write_floor(rocks: &DB, rocks_path: &Path, key: &[u8], floor: u64, sync: bool) -> Result<()> {
    let meta = meta_cf(rocks, rocks_path)?;
    let mut wo = WriteOptions::default();
    wo.set_sync(sync);
    rocks
        .put_cf_opt(meta, key, floor.to_le_bytes(), &wo)
        .map_err(|e| Error::rocks("move a floor in meta", rocks_path, e))
}
