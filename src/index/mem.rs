//! The in-memory mirror of the tables ([`MemTables`]): per table, the buckets of `(fp, doc_id)`
//! entries by block value — a direct array for blocks of up to 20 bits, a hash map for wider ones.
//! It holds exactly the entries of the RocksDB tables of the published state, and queries probe it
//! instead of RocksDB (Manku's tables were in memory too).

use super::{Layout, TableIndex};
use crate::error::Result;
use crate::fingerprint::similarity::for_each_within;
use crate::intmap::IntMap;

/// One bucket of the mirror: the entries whose block value is the bucket's, fingerprints and ids in
/// separate arrays so that a scan reads 8 bytes per entry.
#[derive(Clone, Debug, Default)]
struct Bucket {
    fps: Vec<u64>,
    ids: Vec<u64>,
}

/// Largest block width whose buckets are a direct array (2^20 buckets); wider blocks are hashed.
const MAX_DIRECT_BITS: u32 = 20;

#[derive(Clone, Debug)]
enum Index {
    /// `2^width` buckets addressed by block value.
    Direct(Vec<Bucket>),
    /// Non-empty buckets by block value.
    Hashed(IntMap<u64, Bucket>),
}

impl Index {
    #[inline]
    fn get(&self, v: u64) -> Option<&Bucket> {
        match self {
            Index::Direct(b) => b.get(v as usize),
            Index::Hashed(m) => m.get(&v),
        }
    }

    fn get_mut(&mut self, v: u64) -> &mut Bucket {
        match self {
            Index::Direct(b) => &mut b[v as usize],
            Index::Hashed(m) => m.entry(v).or_default(),
        }
    }

    fn buckets(&self) -> Box<dyn Iterator<Item = &Bucket> + '_> {
        match self {
            Index::Direct(b) => Box::new(b.iter()),
            Index::Hashed(m) => Box::new(m.values()),
        }
    }
}

/// The in-memory mirror of the tables.
#[derive(Clone, Debug)]
pub struct MemTables {
    layout: Layout,
    tables: Vec<Index>,
    len: usize,
}

impl MemTables {
    /// Empty tables for `layout`.
    pub fn new(layout: Layout) -> Self {
        let tables = layout
            .blocks()
            .iter()
            .map(|b| {
                if b.width <= MAX_DIRECT_BITS {
                    Index::Direct(vec![Bucket::default(); 1 << b.width])
                } else {
                    Index::Hashed(IntMap::default())
                }
            })
            .collect();
        MemTables { layout, tables, len: 0 }
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Adds a document.
    pub fn insert(&mut self, fp: u64, id: u64) {
        self.len += 1;
        for (i, t) in self.tables.iter_mut().enumerate() {
            let b = t.get_mut(self.layout.block(i, fp));
            b.fps.push(fp);
            b.ids.push(id);
        }
    }

    /// Removes a document (no-op when absent).
    pub fn remove(&mut self, fp: u64, id: u64) {
        let mut removed = false;
        for (i, t) in self.tables.iter_mut().enumerate() {
            let v = self.layout.block(i, fp);
            let b = t.get_mut(v);
            if let Some(pos) = b.ids.iter().zip(&b.fps).position(|(&d, &f)| d == id && f == fp) {
                b.ids.swap_remove(pos);
                b.fps.swap_remove(pos);
                removed = true;
            }
            if let Index::Hashed(m) = t {
                if m.get(&v).is_some_and(|b| b.ids.is_empty()) {
                    m.remove(&v);
                }
            }
        }
        if removed {
            self.len -= 1;
        }
    }

    /// Number of entries (documents).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Heap bytes the mirror holds: every bucket's header and its arrays' capacity, plus the hash
    /// maps' slots for wide blocks (an estimate for those: one bucket and one key per slot).
    pub fn heap_bytes(&self) -> u64 {
        let header = std::mem::size_of::<Bucket>() as u64;
        let arrays = |b: &Bucket| 8 * (b.fps.capacity() + b.ids.capacity()) as u64;
        self.tables
            .iter()
            .map(|t| match t {
                Index::Direct(bs) => bs.iter().map(|b| header + arrays(b)).sum::<u64>(),
                Index::Hashed(m) => m.capacity() as u64 * (header + 8) + m.values().map(arrays).sum::<u64>(),
            })
            .sum()
    }
}

impl TableIndex for MemTables {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn len(&self) -> u64 {
        self.len as u64
    }

    #[inline]
    fn buckets_within(&self, t: usize, values: &mut [u64], q: u64, k: u32, f: &mut impl FnMut(u64, u64, u32)) -> Result<()> {
        let table = &self.tables[t];
        // Two passes. The probe is bound by memory latency (perf: most of its time waits on the
        // bucket header and on the first fingerprint of each bucket), so the first pass only
        // touches every bucket's header and first fingerprint: independent loads that the CPU
        // overlaps. The second pass then filters each bucket's fingerprints (a contiguous `u64`
        // array, branch-free in chunks of 8) and reads an id only for an entry within `k`.
        let mut found: Vec<&Bucket> = Vec::with_capacity(values.len());
        let mut touched = 0u64;
        for &v in values.iter() {
            if let Some(b) = table.get(v) {
                if let Some(&first) = b.fps.first() {
                    touched ^= first;
                    found.push(b);
                }
            }
        }
        std::hint::black_box(touched);
        for b in found {
            for_each_within(&b.fps, q, k, |i, d| f(b.fps[i], b.ids[i], d));
        }
        Ok(())
    }

    fn scan(&self, f: &mut impl FnMut(u64, u64)) -> Result<()> {
        for b in self.tables[0].buckets() {
            for (&fp, &id) in b.fps.iter().zip(&b.ids) {
                f(fp, id);
            }
        }
        Ok(())
    }
}

impl MemTables {
    /// Calls `f(doc_id, fp, distance)` once for every entry within distance `k` of `q` (the index's
    /// one search, [`super::probe`], on the mirror).
    pub fn probe(&self, q: u64, k: u32, mut f: impl FnMut(u64, u64, u32)) {
        // The mirror's buckets cannot fail.
        let _ = super::probe(self, q, k, &mut f);
    }
}
