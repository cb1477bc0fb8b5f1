//! Static tables over a fixed fingerprint list, for batch all-pairs: per block a counting-sorted
//! array of entry indices with a direct offset index (CSR), and beside it the entries' fingerprints
//! in the same order, so a bucket is scanned as one contiguous array. Entry ids are positions in the
//! list. Built once, never updated; 12 bytes per entry per table plus `4·2^w` per table for the
//! offsets.

use super::{Layout, TableIndex};
use crate::error::Result;
use crate::fingerprint::similarity::for_each_within;

/// Largest block width indexed with a direct offset array.
pub(crate) const MAX_CSR_BITS: u32 = 24;

/// Static multi-index over a fixed fingerprint list (id = position).
pub(crate) struct CsrTables {
    layout: Layout,
    fps: Vec<u64>,
    /// Per table: offsets by block value (len 2^w + 1), entry indices sorted by block value and
    /// their fingerprints in the same order.
    tables: Vec<CsrTable>,
}

struct CsrTable {
    offsets: Vec<u32>,
    entries: Vec<u32>,
    fps: Vec<u64>,
}

impl CsrTables {
    /// Builds the tables over `fps` (index = position). Every block of `layout` must be at most
    /// [`MAX_CSR_BITS`] wide.
    pub(crate) fn new(fps: Vec<u64>, layout: Layout) -> Self {
        let tables = (0..layout.tables() as usize)
            .map(|i| {
                let w = layout.blocks()[i].width;
                let mut offsets = vec![0u32; (1usize << w) + 1];
                for &fp in &fps {
                    offsets[layout.block(i, fp) as usize + 1] += 1;
                }
                for j in 1..offsets.len() {
                    offsets[j] += offsets[j - 1];
                }
                let mut fill = offsets.clone();
                let mut entries = vec![0u32; fps.len()];
                let mut sorted = vec![0u64; fps.len()];
                for (idx, &fp) in fps.iter().enumerate() {
                    let b = layout.block(i, fp) as usize;
                    entries[fill[b] as usize] = idx as u32;
                    sorted[fill[b] as usize] = fp;
                    fill[b] += 1;
                }
                CsrTable {
                    offsets,
                    entries,
                    fps: sorted,
                }
            })
            .collect();
        CsrTables { layout, fps, tables }
    }

    /// Bucket `v` of table `t`: the fingerprints and the ids of the entries whose block `t` is `v`.
    #[inline]
    pub(crate) fn bucket(&self, t: usize, v: u64) -> (&[u64], &[u32]) {
        let table = &self.tables[t];
        let (s, e) = (table.offsets[v as usize] as usize, table.offsets[v as usize + 1] as usize);
        (&table.fps[s..e], &table.entries[s..e])
    }
}

impl TableIndex for CsrTables {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn len(&self) -> u64 {
        self.fps.len() as u64
    }

    #[inline]
    fn buckets_within(&self, t: usize, values: &mut [u64], q: u64, k: u32, f: &mut impl FnMut(u64, u64, u32)) -> Result<()> {
        let table = &self.tables[t];
        for &v in values.iter() {
            let (s, e) = (table.offsets[v as usize] as usize, table.offsets[v as usize + 1] as usize);
            let (fps, ids) = (&table.fps[s..e], &table.entries[s..e]);
            for_each_within(fps, q, k, |i, d| f(fps[i], u64::from(ids[i]), d));
        }
        Ok(())
    }

    fn scan(&self, f: &mut impl FnMut(u64, u64)) -> Result<()> {
        for (j, &fp) in self.fps.iter().enumerate() {
            f(fp, j as u64);
        }
        Ok(())
    }
}
