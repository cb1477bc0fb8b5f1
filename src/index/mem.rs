//! The in-memory mirror of the tables ([`MemTables`]): per table, the buckets of `(fp, doc_id)`
//! entries by block value — a direct array for blocks of up to 20 bits, a hash map for wider ones.
//! It holds exactly the entries of the RocksDB tables of the published state, and queries probe it
//! instead of RocksDB (Manku's tables were in memory too).

use super::csr::{CsrTables, MAX_CSR_BITS};
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

/// The mutable run of the mirror: buckets that grow by push.
#[derive(Clone, Debug)]
struct Buckets {
    layout: Layout,
    tables: Vec<Index>,
    len: usize,
}

impl Buckets {
    fn new(layout: Layout) -> Self {
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
        Buckets { layout, tables, len: 0 }
    }

    fn insert(&mut self, fp: u64, id: u64) {
        self.len += 1;
        for (i, t) in self.tables.iter_mut().enumerate() {
            let b = t.get_mut(self.layout.block(i, fp));
            b.fps.push(fp);
            b.ids.push(id);
        }
    }

    /// Removes an entry; false when absent.
    fn remove(&mut self, fp: u64, id: u64) -> bool {
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
        removed
    }

    /// Heap bytes the mirror holds: every bucket's header and its arrays' capacity, plus the hash
    /// maps' slots for wide blocks (an estimate for those: one bucket and one key per slot).
    fn heap_bytes(&self) -> u64 {
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

impl TableIndex for Buckets {
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

/// The sealed run of the mirror: CSR tables over a fixed entry list, the entries' doc ids by
/// position, and the ids removed since it was built.
#[derive(Clone, Debug)]
struct Base {
    csr: CsrTables,
    ids: Vec<u64>,
    dead: IntMap<u64, ()>,
}

impl Base {
    fn len(&self) -> usize {
        self.ids.len() - self.dead.len()
    }

    /// True when the live entry `(fp, id)` is in the run.
    fn contains(&self, fp: u64, id: u64) -> bool {
        if self.dead.contains_key(&id) {
            return false;
        }
        let layout = self.csr.layout();
        let mut values = [layout.block(0, fp)];
        let mut found = false;
        // The CSR tables cannot fail.
        let _ = self
            .csr
            .buckets_within(0, &mut values, fp, 0, &mut |_, pos, _| found |= self.ids[pos as usize] == id);
        found
    }
}

impl TableIndex for Base {
    fn layout(&self) -> &Layout {
        self.csr.layout()
    }

    fn len(&self) -> u64 {
        self.len() as u64
    }

    #[inline]
    fn buckets_within(&self, t: usize, values: &mut [u64], q: u64, k: u32, f: &mut impl FnMut(u64, u64, u32)) -> Result<()> {
        self.csr.buckets_within(t, values, q, k, &mut |fp, pos, d| {
            let id = self.ids[pos as usize];
            if self.dead.is_empty() || !self.dead.contains_key(&id) {
                f(fp, id, d);
            }
        })
    }

    fn scan(&self, f: &mut impl FnMut(u64, u64)) -> Result<()> {
        for (&fp, &id) in self.csr.fps().iter().zip(&self.ids) {
            if self.dead.is_empty() || !self.dead.contains_key(&id) {
                f(fp, id);
            }
        }
        Ok(())
    }
}

/// A delta is merged into the base once it holds more than this many entries and more than
/// `1/MERGE_RATIO` of the base: each entry is then rebuilt a bounded number of times
/// (≤ `MERGE_RATIO + 1` on average), and the delta stays a small share of the mirror.
const MERGE_MIN: usize = 4096;
const MERGE_RATIO: usize = 8;

/// Indexed bits of a base of `n` entries: about two offsets per entry (a block narrower than that
/// is indexed whole), at least 2^10 offsets.
fn index_bits(n: usize) -> u32 {
    (usize::BITS - n.leading_zeros() + 1).clamp(10, MAX_CSR_BITS)
}

/// A base run over the entries and an empty delta; no base when there are no entries, and
/// everything in the delta (which has no such limit) when there are too many for `u32` positions.
fn build(layout: &Layout, fps: Vec<u64>, ids: Vec<u64>) -> (Option<Base>, Buckets) {
    let mut delta = Buckets::new(layout.clone());
    if fps.is_empty() {
        return (None, delta);
    }
    if fps.len() >= u32::MAX as usize {
        for (fp, id) in fps.into_iter().zip(ids) {
            delta.insert(fp, id);
        }
        return (None, delta);
    }
    let bits = index_bits(fps.len());
    let base = Base {
        csr: CsrTables::with_index_bits(fps, layout.clone(), bits),
        ids,
        dead: IntMap::default(),
    };
    (Some(base), delta)
}

/// The in-memory mirror of the tables: a sealed base run (CSR: a bucket is one offset lookup and
/// one contiguous array) and a small mutable delta that inserts go to. Removals delete from the
/// delta or mark the base entry dead. When the delta outgrows `1/MERGE_RATIO` of the base, the
/// owner builds a new base off to the side ([`MemTables::merged`], a read-only pass) and swaps it in
/// ([`MemTables::install`]), so readers are not held while it is built.
#[derive(Clone, Debug)]
pub struct MemTables {
    layout: Layout,
    base: Option<Base>,
    delta: Buckets,
}

/// A base run built by [`MemTables::merged`], for [`MemTables::install`].
#[derive(Debug)]
pub struct MergedRun {
    base: Option<Base>,
    delta: Buckets,
    /// The delta length and dead count it was built from: install checks they did not change.
    from: (usize, usize),
}

impl MemTables {
    /// Empty tables for `layout`.
    pub fn new(layout: Layout) -> Self {
        MemTables {
            delta: Buckets::new(layout.clone()),
            layout,
            base: None,
        }
    }

    /// Tables holding `entries` (`(fp, doc_id)`), built as one base run.
    pub fn from_entries(layout: Layout, entries: impl IntoIterator<Item = (u64, u64)>) -> Self {
        let (fps, ids): (Vec<u64>, Vec<u64>) = entries.into_iter().unzip();
        Self::from_parts(layout, fps, ids)
    }

    /// Tables holding `(fps[i], ids[i])` for every `i` (equal lengths), built as one base run that
    /// keeps `fps` and `ids` as its lists.
    pub fn from_parts(layout: Layout, fps: Vec<u64>, ids: Vec<u64>) -> Self {
        debug_assert_eq!(fps.len(), ids.len());
        let (base, delta) = build(&layout, fps, ids);
        MemTables { layout, base, delta }
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Adds a document.
    pub fn insert(&mut self, fp: u64, id: u64) {
        self.delta.insert(fp, id);
    }

    /// Removes a document (no-op when absent).
    pub fn remove(&mut self, fp: u64, id: u64) {
        if self.delta.remove(fp, id) {
            return;
        }
        if let Some(b) = self.base.as_mut() {
            if b.contains(fp, id) {
                b.dead.insert(id, ());
            }
        }
    }

    /// Number of entries (documents).
    pub fn len(&self) -> usize {
        self.delta.len + self.base.as_ref().map_or(0, Base::len)
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when a merge is due: the delta has outgrown its share of the base, or removals have
    /// left that share of the base dead (its entries still cost scans and memory).
    pub fn merge_due(&self) -> bool {
        let (base, dead) = self.base.as_ref().map_or((0, 0), |b| (b.ids.len(), b.dead.len()));
        let outgrown = |n: usize| n > MERGE_MIN && n * MERGE_RATIO > base;
        outgrown(self.delta.len) || outgrown(dead)
    }

    /// A new base run over every live entry (read-only; the caller swaps it in with
    /// [`MemTables::install`]).
    pub fn merged(&self) -> MergedRun {
        let n = self.len();
        let (mut fps, mut ids) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut push = |fp, id| {
            fps.push(fp);
            ids.push(id);
        };
        // In-memory runs cannot fail.
        if let Some(b) = &self.base {
            let _ = b.scan(&mut push);
        }
        let _ = self.delta.scan(&mut push);
        let (base, delta) = build(&self.layout, fps, ids);
        MergedRun {
            base,
            delta,
            from: self.version(),
        }
    }

    /// What a merge is built from: the delta's length and the base's dead count (only the writer
    /// changes either, and every change changes one of them).
    fn version(&self) -> (usize, usize) {
        (self.delta.len, self.base.as_ref().map_or(0, |b| b.dead.len()))
    }

    /// Replaces the base and the delta with a run from [`MemTables::merged`]; ignored (false) when
    /// the tables changed since it was built.
    pub fn install(&mut self, run: MergedRun) -> bool {
        if run.from != self.version() {
            return false;
        }
        self.base = run.base;
        self.delta = run.delta;
        true
    }

    /// Merges now when due (for owners that hold the tables alone).
    pub fn merge_if_due(&mut self) {
        if self.merge_due() {
            let run = self.merged();
            self.install(run);
        }
    }

    /// Heap bytes the mirror holds: the base's arrays and dead set, the delta's bucket headers and
    /// arrays, plus the hash maps' slots for wide blocks (an estimate for those: one bucket and one
    /// key per slot).
    pub fn heap_bytes(&self) -> u64 {
        let base = self.base.as_ref().map_or(0, |b| {
            b.csr.heap_bytes() + 8 * b.ids.capacity() as u64 + 16 * b.dead.capacity() as u64
        });
        base + self.delta.heap_bytes()
    }

    /// Calls `f(doc_id, fp, distance)` once for every entry within distance `k` of `q` (the index's
    /// one search, [`super::probe`], on the mirror).
    pub fn probe(&self, q: u64, k: u32, mut f: impl FnMut(u64, u64, u32)) {
        // In-memory runs cannot fail.
        let _ = super::probe(self, q, k, &mut f);
    }
}

/// The mirror as one index: every bucket is the base run's bucket followed by the delta's (an
/// entry lives in exactly one of them).
impl TableIndex for MemTables {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn len(&self) -> u64 {
        self.len() as u64
    }

    #[inline]
    fn buckets_within(&self, t: usize, values: &mut [u64], q: u64, k: u32, f: &mut impl FnMut(u64, u64, u32)) -> Result<()> {
        if let Some(b) = &self.base {
            b.buckets_within(t, values, q, k, f)?;
        }
        if self.delta.len > 0 {
            self.delta.buckets_within(t, values, q, k, f)?;
        }
        Ok(())
    }

    fn scan(&self, f: &mut impl FnMut(u64, u64)) -> Result<()> {
        if let Some(b) = &self.base {
            b.scan(f)?;
        }
        self.delta.scan(f)
    }
}
