//! The durable tables: RocksDB column families `t0..t{m-1}`, one per block, searched with one raw
//! iterator per table seeking the sorted probe values. The key layout is documented (and encoded
//! and decoded) in [`crate::store::keys`].

use std::path::Path;

use rocksdb::{ColumnFamily, IteratorMode, DB};

use super::{Layout, TableIndex};
use crate::error::{Error, Result};
use crate::fingerprint::similarity::hamming;
use crate::store::keys::{decode_table_key, table_seek};

/// The m table column families of a database, as a [`TableIndex`].
pub(crate) struct RocksTables<'a> {
    pub db: &'a DB,
    pub path: &'a Path,
    pub layout: &'a Layout,
    pub cfs: Vec<&'a ColumnFamily>,
    /// Number of entries (the live documents).
    pub len: u64,
}

impl RocksTables<'_> {
    fn decode(&self, t: usize, key: &[u8]) -> Result<(u64, u64)> {
        decode_table_key(self.layout, t, key)
            .ok_or_else(|| Error::corrupt(self.path, None, format!("table t{t} key {key:?} is not 16 bytes")))
    }
}

impl TableIndex for RocksTables<'_> {
    fn layout(&self) -> &Layout {
        self.layout
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn buckets_within(&self, t: usize, values: &mut [u64], q: u64, k: u32, f: &mut impl FnMut(u64, u64, u32)) -> Result<()> {
        // Sorted values make the seeks move forward through the key space.
        values.sort_unstable();
        let mut it = self.db.raw_iterator_cf(self.cfs[t]);
        for &v in values.iter() {
            it.seek(table_seek(self.layout, t, v));
            while let Some(key) = it.key() {
                let (fp, id) = self.decode(t, key)?;
                if self.layout.block(t, fp) != v {
                    break;
                }
                let d = hamming(fp, q);
                if d <= k {
                    f(fp, id, d);
                }
                it.next();
            }
        }
        it.status().map_err(|e| Error::rocks("probe table", self.path, e))
    }

    fn scan(&self, f: &mut impl FnMut(u64, u64)) -> Result<()> {
        for item in self.db.iterator_cf(self.cfs[0], IteratorMode::Start) {
            let (key, _) = item.map_err(|e| Error::rocks("scan table", self.path, e))?;
            let (fp, id) = self.decode(0, &key)?;
            f(fp, id);
        }
        Ok(())
    }
}
