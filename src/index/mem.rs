//! The in-memory mirror of the tables ([`MemTables`]): a sealed base run of static CSR tables
//! ([`super::csr`]) plus a small mutable delta of per-bucket arrays — a direct array of buckets
//! for blocks of up to 20 bits, a hash map for wider ones — that inserts go to, merged into the next
//! base off every lock. It holds exactly the entries of the RocksDB tables of the published state,
//! and queries probe it instead of RocksDB (Manku's tables were in memory too). Memory: about
//! `12·m + 16` bytes per document in the base.

use super::csr::{CsrTables, MAX_CSR_BITS};
use super::{Layout, ProbeLists, TableIndex};
use crate::error::Result;
use crate::fingerprint::similarity::{for_each_within, for_each_within_many};
use crate::intmap::IntMap;
use std::sync::Arc;

/// One bucket of the mirror's delta: the entries whose block value is the bucket's, fingerprints and ids in
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

    /// True when the entry `(fp, id)` is here.
    fn contains(&self, fp: u64, id: u64) -> bool {
        let v = self.layout.block(0, fp);
        self.tables[0]
            .get(v)
            .is_some_and(|b| b.ids.iter().zip(&b.fps).any(|(&d, &f)| d == id && f == fp))
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

    /// Each probed bucket once for all the queries that probe it, in block-value order (as the
    /// base run does): a chunk's queries probe the same small buckets many times over, and one
    /// query at a time each probe was a cache miss on the bucket header and another on its entries.
    fn buckets_within_many(
        &self,
        t: usize,
        probes: &[(u64, u32)],
        qs: &[u64],
        k: u32,
        f: &mut impl FnMut(usize, u64, u64, u32),
    ) -> Result<()> {
        let table = &self.tables[t];
        super::for_each_probed_bucket(probes, |v, run| {
            if let Some(b) = table.get(v) {
                let queries = run.iter().map(|&(_, qi)| (qi as usize, qs[qi as usize]));
                for_each_within_many(&b.fps, queries, k, |i, j, d| f(i, b.fps[j], b.ids[j], d));
            }
        });
        Ok(())
    }

    fn scan(&self, f: &mut impl FnMut(u64, u64)) -> Result<()> {
        // An empty run has nothing to visit: skip its buckets (a direct table has 2^width of them,
        // and a probe of a small mirror scans instead of probing).
        if self.len == 0 {
            return Ok(());
        }
        for b in self.tables[0].buckets() {
            for (&fp, &id) in b.fps.iter().zip(&b.ids) {
                f(fp, id);
            }
        }
        Ok(())
    }
}

/// The sealed run of the mirror: CSR tables over a fixed entry list and the entries' doc ids by
/// position. Immutable: shared with a merge that reads it.
#[derive(Debug)]
struct Base {
    csr: CsrTables,
    ids: Vec<u64>,
}

impl Base {
    /// True when the entry `(fp, id)` is in the run.
    fn contains(&self, fp: u64, id: u64) -> bool {
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

/// A base run over the entries, and the entries left for a delta: none, unless there are too many
/// for `u32` positions (the delta has no such limit).
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
    };
    (Some(base), delta)
}

/// The in-memory mirror of the tables: a sealed base run (CSR: a bucket is one offset lookup and one
/// contiguous array) and a small mutable delta that inserts go to; while a merge runs, also the
/// frozen delta it is merging. Removals delete from the mutable delta, or mark an entry of the base
/// or the frozen delta dead (a set consulted only for hits).
///
/// **Merging without stopping anyone.** When the delta (or the dead share) outgrows
/// `1/MERGE_RATIO` of the base, [`MemTables::start_merge`] freezes the delta (O(1)) and hands a
/// `MergeJob` — shared references to the base and the frozen delta, and the dead ids so far — to
/// whoever runs it, off every lock (`MergeJob::run`). Inserts and removals go on meanwhile;
/// [`MemTables::finish_merge`] installs the new base, drops the frozen delta and keeps dead exactly
/// the ids removed after the job started. A job for tables that have since been replaced is refused.
#[derive(Debug)]
pub struct MemTables {
    layout: Layout,
    base: Option<Arc<Base>>,
    frozen: Option<Arc<Buckets>>,
    delta: Buckets,
    /// Entries `(id, fp)` removed from the base or the frozen delta and still physically there.
    dead: IntMap<(u64, u64), ()>,
    /// The same entries in removal order: a merge job excludes a prefix of it.
    dead_log: Vec<(u64, u64)>,
}

/// A merge to run off every lock: build with [`MergeJob::run`], install with
/// [`MemTables::finish_merge`].
#[derive(Debug)]
pub struct MergeJob {
    layout: Layout,
    base: Option<Arc<Base>>,
    frozen: Arc<Buckets>,
    dead: IntMap<(u64, u64), ()>,
    cut: usize,
}

/// A base run built by [`MergeJob::run`].
#[derive(Debug)]
pub struct MergedRun {
    base: Option<Base>,
    rest: Buckets,
    frozen: Arc<Buckets>,
    cut: usize,
}

impl MergeJob {
    /// Builds the next base run: every entry of the base and the frozen delta not dead when the job
    /// started. Reads only what the job holds; runs on any thread.
    pub fn run(self) -> MergedRun {
        let n = self.base.as_ref().map_or(0, |b| b.ids.len()) + self.frozen.len;
        let (mut fps, mut ids) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut push = |fp, id| {
            if !self.dead.contains_key(&(id, fp)) {
                fps.push(fp);
                ids.push(id);
            }
        };
        if let Some(b) = &self.base {
            for (&fp, &id) in b.csr.fps().iter().zip(&b.ids) {
                push(fp, id);
            }
        }
        // In-memory runs cannot fail.
        let _ = self.frozen.scan(&mut push);
        let (base, rest) = build(&self.layout, fps, ids);
        MergedRun {
            base,
            rest,
            frozen: self.frozen,
            cut: self.cut,
        }
    }
}

impl MemTables {
    /// Empty tables for `layout`.
    pub fn new(layout: Layout) -> Self {
        MemTables {
            delta: Buckets::new(layout.clone()),
            layout,
            base: None,
            frozen: None,
            dead: IntMap::default(),
            dead_log: Vec::new(),
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
        MemTables {
            base: base.map(Arc::new),
            delta,
            ..Self::new(layout)
        }
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
        if self.delta.remove(fp, id) || !self.live(fp, id) {
            return;
        }
        let in_frozen = self.frozen.as_ref().is_some_and(|f| f.contains(fp, id));
        if in_frozen || self.base.as_ref().is_some_and(|b| b.contains(fp, id)) {
            self.dead.insert((id, fp), ());
            self.dead_log.push((id, fp));
        }
    }

    /// Number of entries (documents).
    pub fn len(&self) -> usize {
        let sealed = self.base.as_ref().map_or(0, |b| b.ids.len()) + self.frozen.as_ref().map_or(0, |f| f.len);
        sealed + self.delta.len - self.dead.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when a merge is due and none is running: the delta has outgrown its share of the base,
    /// or removals have left that share of the base dead (its entries still cost scans and memory).
    pub fn merge_due(&self) -> bool {
        let base = self.base.as_ref().map_or(0, |b| b.ids.len());
        let outgrown = |n: usize| n > MERGE_MIN && n * MERGE_RATIO > base;
        self.frozen.is_none() && (outgrown(self.delta.len) || outgrown(self.dead.len()))
    }

    /// Starts a merge when one is due: freezes the delta and returns the job to run.
    pub fn start_merge(&mut self) -> Option<MergeJob> {
        if !self.merge_due() {
            return None;
        }
        self.start_merge_now()
    }

    /// Starts a merge whether due or not; `None` while one is running.
    pub fn start_merge_now(&mut self) -> Option<MergeJob> {
        if self.frozen.is_some() {
            return None;
        }
        let frozen = Arc::new(std::mem::replace(&mut self.delta, Buckets::new(self.layout.clone())));
        self.frozen = Some(frozen.clone());
        Some(MergeJob {
            layout: self.layout.clone(),
            base: self.base.clone(),
            frozen,
            dead: self.dead.clone(),
            cut: self.dead_log.len(),
        })
    }

    /// Installs a run built by [`MergeJob::run`]: the new base replaces the base and the frozen
    /// delta; the ids removed since the job started stay dead. False (and nothing changes) when the
    /// run is not for the merge these tables are running.
    pub fn finish_merge(&mut self, run: MergedRun) -> bool {
        if !self.frozen.as_ref().is_some_and(|f| Arc::ptr_eq(f, &run.frozen)) {
            return false;
        }
        self.base = run.base.map(Arc::new);
        self.frozen = None;
        self.dead_log.drain(..run.cut);
        self.dead = self.dead_log.iter().map(|&e| (e, ())).collect();
        // Entries that did not fit the run (more than u32 positions) go back to the delta.
        let _ = run.rest.scan(&mut |fp, id| self.delta.insert(fp, id));
        true
    }

    /// Gives up a running merge (its job failed): the frozen delta's live entries return to the
    /// delta.
    pub fn abandon_merge(&mut self) {
        if let Some(f) = self.frozen.take() {
            let mut back = Vec::new();
            let _ = f.scan(&mut |fp, id| back.push((fp, id)));
            for (fp, id) in back {
                if self.dead.remove(&(id, fp)).is_none() {
                    self.delta.insert(fp, id);
                }
            }
            self.dead_log.retain(|e| self.dead.contains_key(e));
        }
    }

    /// Merges now when due, on this thread (for owners that hold the tables alone).
    pub fn merge_if_due(&mut self) {
        if let Some(job) = self.start_merge() {
            let run = job.run();
            self.finish_merge(run);
        }
    }

    /// Heap bytes the mirror holds: the base's arrays, the deltas' bucket headers and arrays, plus
    /// the hash maps' slots for wide blocks (an estimate for those: one bucket and one key per slot)
    /// and the dead set.
    pub fn heap_bytes(&self) -> u64 {
        let base = self.base.as_ref().map_or(0, |b| b.csr.heap_bytes() + 8 * b.ids.capacity() as u64);
        let frozen = self.frozen.as_ref().map_or(0, |f| f.heap_bytes());
        base + frozen + self.delta.heap_bytes() + 24 * self.dead.capacity() as u64 + 16 * self.dead_log.capacity() as u64
    }

    /// Calls `f(doc_id, fp, distance)` once for every entry within distance `k` of `q` (the index's
    /// one search, [`super::probe`], on the mirror).
    pub fn probe(&self, q: u64, k: u32, mut f: impl FnMut(u64, u64, u32)) {
        // In-memory runs cannot fail.
        let _ = super::probe(self, q, k, &mut f);
    }

    /// [`MemTables::probe`] with the probed buckets split across `threads` threads
    /// ([`super::probe_split`]); the entries come in no particular order.
    pub fn probe_split(&self, q: u64, k: u32, threads: usize, mut f: impl FnMut(u64, u64, u32)) {
        // In-memory runs cannot fail (a panicking thread re-raises here).
        if let Err(e) = super::probe_split(self, q, k, threads, &mut f) {
            panic!("{e}");
        }
    }

    /// [`MemTables::probe`] for many queries at once: `f(query index, doc_id, fp, distance)` once
    /// for every query `qs[i]` and entry within distance `k` of it ([`super::probe_many`]: each
    /// bucket of the base run is read once for all the queries that probe it).
    pub fn probe_many(&self, qs: &[u64], k: u32, mut f: impl FnMut(usize, u64, u64, u32)) {
        // In-memory runs cannot fail.
        let _ = super::probe_many(self, qs, k, &mut f);
    }

    /// The sealed runs as they are now, to search with no lock held ([`SealedRuns`]).
    pub fn sealed(&self) -> SealedRuns {
        SealedRuns {
            layout: self.layout.clone(),
            base: self.base.clone(),
            frozen: self.frozen.clone(),
        }
    }

    /// [`MemTables::probe_many`] over the mutable delta alone: with [`MemTables::sealed`] taken at
    /// the same moment, a search split in two — the delta under the lock that guards the tables,
    /// the sealed runs after it is released.
    /// The probes are `lists` ([`super::ProbeLists`]), which [`SealedRuns::probe_many_lists`]
    /// then reuses.
    pub(crate) fn probe_many_delta(&self, lists: &mut ProbeLists, mut f: impl FnMut(usize, u64, u64, u32)) {
        if self.delta.len > 0 {
            // In-memory runs cannot fail.
            let _ = super::probe_many_lists(&self.delta, lists, &mut f);
        }
    }

    fn sealed_view(&self) -> SealedView<'_> {
        SealedView::of(&self.layout, &self.base, &self.frozen)
    }

    /// False for an entry removed from the base or the frozen delta.
    #[inline]
    fn live(&self, fp: u64, id: u64) -> bool {
        self.dead.is_empty() || !self.dead.contains_key(&(id, fp))
    }
}

/// The mirror's sealed runs — the base and, while a merge runs, the frozen delta — as one index over
/// every entry they physically hold (dead ones included: the caller filters).
struct SealedView<'a> {
    layout: &'a Layout,
    base: Option<&'a Base>,
    frozen: Option<&'a Buckets>,
}

impl<'a> SealedView<'a> {
    /// The view of the runs as the mirror and a [`SealedRuns`] snapshot both hold them.
    fn of(layout: &'a Layout, base: &'a Option<Arc<Base>>, frozen: &'a Option<Arc<Buckets>>) -> Self {
        SealedView {
            layout,
            base: base.as_deref(),
            frozen: frozen.as_deref(),
        }
    }
}

impl TableIndex for SealedView<'_> {
    fn layout(&self) -> &Layout {
        self.layout
    }

    fn len(&self) -> u64 {
        (self.base.map_or(0, |b| b.ids.len()) + self.frozen.map_or(0, |f| f.len)) as u64
    }

    #[inline]
    fn buckets_within(&self, t: usize, values: &mut [u64], q: u64, k: u32, f: &mut impl FnMut(u64, u64, u32)) -> Result<()> {
        if let Some(b) = self.base {
            b.csr
                .buckets_within(t, values, q, k, &mut |fp, pos, d| f(fp, b.ids[pos as usize], d))?;
        }
        if let Some(fr) = self.frozen {
            fr.buckets_within(t, values, q, k, f)?;
        }
        Ok(())
    }

    /// The frozen delta, then the base run, each visiting a probed bucket once for all its queries.
    fn buckets_within_many(
        &self,
        t: usize,
        probes: &[(u64, u32)],
        qs: &[u64],
        k: u32,
        f: &mut impl FnMut(usize, u64, u64, u32),
    ) -> Result<()> {
        if let Some(fr) = self.frozen {
            fr.buckets_within_many(t, probes, qs, k, f)?;
        }
        if let Some(b) = self.base {
            b.csr
                .buckets_within_many(t, probes, qs, k, &mut |i, fp, pos, d| f(i, fp, b.ids[pos as usize], d))?;
        }
        Ok(())
    }

    fn scan(&self, f: &mut impl FnMut(u64, u64)) -> Result<()> {
        if let Some(b) = self.base {
            for (&fp, &id) in b.csr.fps().iter().zip(&b.ids) {
                f(fp, id);
            }
        }
        if let Some(fr) = self.frozen {
            fr.scan(f)?;
        }
        Ok(())
    }
}

/// The mirror's sealed runs as they were at one moment ([`MemTables::sealed`]): immutable and
/// shared, so they can be searched with no lock held on the tables, while the writer goes on.
/// Entries removed since are still in them (the tables' dead set is not consulted): the caller
/// filters by its own view of the live documents. With [`MemTables::probe_many_delta`] (under the
/// lock) it covers every entry of the tables at that moment.
#[derive(Clone, Debug)]
pub struct SealedRuns {
    layout: Layout,
    base: Option<Arc<Base>>,
    frozen: Option<Arc<Buckets>>,
}

impl SealedRuns {
    fn view(&self) -> SealedView<'_> {
        SealedView::of(&self.layout, &self.base, &self.frozen)
    }

    /// `f(query index, doc_id, fp, distance)` once for every query of `lists` and entry of the runs
    /// within the lists' distance of it, dead entries included ([`super::probe_many_lists`]).
    pub(crate) fn probe_many_lists(&self, lists: &mut ProbeLists, mut f: impl FnMut(usize, u64, u64, u32)) {
        // In-memory runs cannot fail.
        let _ = super::probe_many_lists(&self.view(), lists, &mut f);
    }
}

/// The mirror as one index: every bucket is the sealed runs' bucket, then the delta's (an entry
/// lives in exactly one of them), without the dead entries.
impl TableIndex for MemTables {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn len(&self) -> u64 {
        self.len() as u64
    }

    #[inline]
    fn buckets_within(&self, t: usize, values: &mut [u64], q: u64, k: u32, f: &mut impl FnMut(u64, u64, u32)) -> Result<()> {
        self.sealed_view().buckets_within(t, values, q, k, &mut |fp, id, d| {
            if self.live(fp, id) {
                f(fp, id, d);
            }
        })?;
        if self.delta.len > 0 {
            self.delta.buckets_within(t, values, q, k, f)?;
        }
        Ok(())
    }

    /// The delta, then the sealed runs, each visiting a probed bucket once for all its queries.
    fn buckets_within_many(
        &self,
        t: usize,
        probes: &[(u64, u32)],
        qs: &[u64],
        k: u32,
        f: &mut impl FnMut(usize, u64, u64, u32),
    ) -> Result<()> {
        if self.delta.len > 0 {
            self.delta.buckets_within_many(t, probes, qs, k, f)?;
        }
        self.sealed_view().buckets_within_many(t, probes, qs, k, &mut |i, fp, id, d| {
            if self.live(fp, id) {
                f(i, fp, id, d);
            }
        })
    }

    fn scan(&self, f: &mut impl FnMut(u64, u64)) -> Result<()> {
        self.sealed_view().scan(&mut |fp, id| {
            if self.live(fp, id) {
                f(fp, id);
            }
        })?;
        self.delta.scan(f)
    }
}
