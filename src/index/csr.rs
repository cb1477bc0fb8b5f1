//! Static tables over a fixed fingerprint list (CSR): per table, the entries counting-sorted by the
//! top `b` bits of their block (`b` = the block's width when it fits, [`MAX_CSR_BITS`] at most)
//! with a direct offset array of `2^b + 1` entries, and beside the entry indices their fingerprints
//! in the same order, so a bucket is one contiguous array. Entry ids are positions in the list.
//! Built once, never updated: the all-pairs tables and the in-memory mirror's base run
//! ([`super::mem`]). 12 bytes per entry per table plus `4·2^b` per table for the offsets. The
//! per-table arrays are [`HugeBuf`]s: large ones in memory asking for transparent huge pages, which
//! took ~10% off a k = 12 query at 10M documents (docs/performance.md, "Measured in git history").
//!
//! When `b` is narrower than the block, one offset range holds several block values: a probe scans
//! each range once and keeps a hit only when its own block value is one of the probed values, so
//! the search stays exact.

use super::{Layout, TableIndex};
use crate::error::Result;
use crate::fingerprint::similarity::{for_each_within, for_each_within_many};
use crate::hugebuf::HugeBuf;

/// Largest number of block bits indexed by the offset array (64 MiB of offsets per table).
pub(crate) const MAX_CSR_BITS: u32 = 24;

/// How far ahead of a probe's scan its bucket ranges are touched (bytes): well inside a core's L2.
const LOOKAHEAD: usize = 64 << 10;
/// Fingerprints touched at the start of each range: past them the hardware prefetcher follows the
/// scan of a long range by itself.
const TOUCH_MAX: usize = 64;

/// Static multi-index over a fixed fingerprint list (id = position).
#[derive(Clone, Debug)]
pub(crate) struct CsrTables {
    layout: Layout,
    fps: Vec<u64>,
    /// Per table: offsets by indexed block prefix (len 2^b + 1), entry indices sorted by that
    /// prefix and their fingerprints in the same order.
    tables: Vec<CsrTable>,
}

#[derive(Clone, Debug)]
struct CsrTable {
    /// Block width minus indexed bits: a block value `v` lives in range `v >> shift`.
    shift: u32,
    offsets: HugeBuf<u32>,
    entries: HugeBuf<u32>,
    fps: HugeBuf<u64>,
}

impl CsrTables {
    /// Builds the tables over `fps` (index = position), each block indexed by all its bits. Every
    /// block of `layout` must be at most [`MAX_CSR_BITS`] wide; `fps` shorter than `u32::MAX`.
    pub(crate) fn new(fps: Vec<u64>, layout: Layout) -> Self {
        Self::with_index_bits(fps, layout, MAX_CSR_BITS)
    }

    /// Builds the tables over `fps`, indexing at most `bits` (≤ [`MAX_CSR_BITS`]) leading bits of
    /// each block. `fps` must be shorter than `u32::MAX` (positions are `u32`).
    pub(crate) fn with_index_bits(fps: Vec<u64>, layout: Layout, bits: u32) -> Self {
        debug_assert!(fps.len() < u32::MAX as usize);
        let bits = bits.min(MAX_CSR_BITS);
        let tables = (0..layout.tables() as usize)
            .map(|i| {
                let w = layout.blocks()[i].width;
                let shift = w.saturating_sub(bits);
                let mut offsets = HugeBuf::<u32>::zeroed((1usize << (w - shift)) + 1);
                for &fp in &fps {
                    offsets[(layout.block(i, fp) >> shift) as usize + 1] += 1;
                }
                for j in 1..offsets.len() {
                    offsets[j] += offsets[j - 1];
                }
                let mut fill = offsets.to_vec();
                let mut entries = HugeBuf::<u32>::zeroed(fps.len());
                let mut sorted = HugeBuf::<u64>::zeroed(fps.len());
                for (idx, &fp) in fps.iter().enumerate() {
                    let b = (layout.block(i, fp) >> shift) as usize;
                    entries[fill[b] as usize] = idx as u32;
                    sorted[fill[b] as usize] = fp;
                    fill[b] += 1;
                }
                CsrTable {
                    shift,
                    offsets,
                    entries,
                    fps: sorted,
                }
            })
            .collect();
        CsrTables { layout, fps, tables }
    }

    /// The fingerprint list (index = entry id).
    pub(crate) fn fps(&self) -> &[u64] {
        &self.fps
    }

    /// Bucket `v` of table `t`: the fingerprints and the ids of the entries whose block `t` is `v`.
    /// Only for tables built by [`CsrTables::new`] (every block indexed by all its bits).
    #[inline]
    pub(crate) fn bucket(&self, t: usize, v: u64) -> (&[u64], &[u32]) {
        let table = &self.tables[t];
        debug_assert_eq!(table.shift, 0);
        let (s, e) = (table.offsets[v as usize] as usize, table.offsets[v as usize + 1] as usize);
        (&table.fps[s..e], &table.entries[s..e])
    }

    /// How many of the tables' arrays live in maps advised for huge pages (tests).
    #[cfg(test)]
    pub(crate) fn mapped_arrays(&self) -> usize {
        self.tables
            .iter()
            .map(|t| usize::from(t.offsets.is_mapped()) + usize::from(t.entries.is_mapped()) + usize::from(t.fps.is_mapped()))
            .sum()
    }

    /// Heap bytes: the list, and per table the offsets, entry indices and fingerprints.
    pub(crate) fn heap_bytes(&self) -> u64 {
        let tables: usize = self
            .tables
            .iter()
            .map(|t| 4 * t.offsets.len() + 4 * t.entries.len() + 8 * t.fps.len())
            .sum();
        (8 * self.fps.len() + tables) as u64
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
        if table.shift == 0 {
            // The probe is bound by memory latency, not by the distance filter: a bucket scan alone
            // keeps only a few cache lines in flight. So the offsets are read first (independent
            // loads the CPU overlaps), and then, ahead of the scan by up to `LOOKAHEAD` bytes, every
            // cache line of the next ranges is touched (8 fingerprints a line; two instructions
            // each, so many misses overlap), and the scan reads from cache.
            let mut ranges: Vec<(usize, usize)> = Vec::with_capacity(values.len());
            for &v in values.iter() {
                let (s, e) = (table.offsets[v as usize] as usize, table.offsets[v as usize + 1] as usize);
                if s < e {
                    ranges.push((s, e));
                }
            }
            let mut touched = 0u64;
            let (mut ahead, mut ahead_bytes) = (0usize, 0usize);
            for (i, &(s, e)) in ranges.iter().enumerate() {
                while ahead < ranges.len() && (ahead <= i || ahead_bytes < LOOKAHEAD) {
                    let (ts, te) = ranges[ahead];
                    let te = te.min(ts + TOUCH_MAX);
                    for fp in table.fps[ts..te].iter().step_by(8) {
                        touched ^= fp;
                    }
                    ahead_bytes += 8 * (te - ts);
                    ahead += 1;
                }
                let (fps, ids) = (&table.fps[s..e], &table.entries[s..e]);
                for_each_within(fps, q, k, |i, d| f(fps[i], u64::from(ids[i]), d));
                ahead_bytes -= 8 * (e - s).min(TOUCH_MAX);
            }
            std::hint::black_box(touched);
            return Ok(());
        }
        // Several block values share a range: scan each range once (values sorted, so equal
        // prefixes are adjacent) and keep a hit only when its block value was probed.
        values.sort_unstable();
        let mut last = None;
        for &v in values.iter() {
            let p = (v >> table.shift) as usize;
            if last == Some(p) {
                continue;
            }
            last = Some(p);
            let (s, e) = (table.offsets[p] as usize, table.offsets[p + 1] as usize);
            let (fps, ids) = (&table.fps[s..e], &table.entries[s..e]);
            for_each_within(fps, q, k, |i, d| {
                if values.binary_search(&self.layout.block(t, fps[i])).is_ok() {
                    f(fps[i], u64::from(ids[i]), d);
                }
            });
        }
        Ok(())
    }

    /// Visits the probed buckets in block-value order, each once for all the queries that probe it:
    /// the bucket is read from memory once and scanned from cache by the rest, and the walk over
    /// the table is ascending, which the hardware prefetcher follows.
    fn buckets_within_many(
        &self,
        t: usize,
        probes: &[(u64, u32)],
        qs: &[u64],
        k: u32,
        f: &mut impl FnMut(usize, u64, u64, u32),
    ) -> Result<()> {
        let table = &self.tables[t];
        if table.shift != 0 {
            // Shared ranges: the per-query path keeps the block-value check in one place.
            return super::one_query_at_a_time(self, t, probes, qs, k, f);
        }
        super::for_each_probed_bucket(probes, |v, run| {
            let (s, e) = (table.offsets[v as usize] as usize, table.offsets[v as usize + 1] as usize);
            let (fps, ids) = (&table.fps[s..e], &table.entries[s..e]);
            let queries = run.iter().map(|&(_, qi)| (qi as usize, qs[qi as usize]));
            for_each_within_many(fps, queries, k, |i, j, d| f(i, fps[j], u64::from(ids[j]), d));
        });
        Ok(())
    }

    fn scan(&self, f: &mut impl FnMut(u64, u64)) -> Result<()> {
        for (j, &fp) in self.fps.iter().enumerate() {
            f(fp, j as u64);
        }
        Ok(())
    }
}
