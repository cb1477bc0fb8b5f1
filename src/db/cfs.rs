//! Column family handles by name, a missing one a [`Error::Corrupt`] naming the database: the
//! handle's own lookups (`Base::cf`) and those of code with no `Base` (the open, reindex, backup,
//! the tails' floors and files, the side indexes' registration and loading). A leaf: nothing here
//! calls back into the engine, so `db::background` can use it without a circle through `db::base`.

use std::path::Path;

use rocksdb::{ColumnFamily, DB};

use crate::error::{Error, Result};
use crate::store::keys::CF_META;

/// Column family `name` of the RocksDB at `rocks_path`.
pub(in crate::db) fn cf<'a>(rocks: &'a DB, rocks_path: &Path, name: &str) -> Result<&'a ColumnFamily> {
    rocks
        .cf_handle(name)
        .ok_or_else(|| Error::corrupt(rocks_path, None, format!("missing column family {name}")))
}

/// The `meta` column family of the RocksDB at `rocks_path`.
pub(in crate::db) fn meta_cf<'a>(rocks: &'a DB, rocks_path: &Path) -> Result<&'a ColumnFamily> {
    cf(rocks, rocks_path, CF_META)
}
