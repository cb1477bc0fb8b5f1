//! The tails' floors in `meta`: every document below a floor has its entries in RocksDB (the
//! table tail's, `table_tail`; a side index's, e.g. the containment tail).

use std::path::Path;

use rocksdb::DB;

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
