//! Step 4a of the data path: the permuted-block tables (multi-index hashing over SimHash blocks).
//!
//! The 64 bits of a fingerprint are cut into `m` contiguous blocks, numbered from the most significant
//! bit; the first `64 mod m` blocks are one bit wider than the others. Table `i` orders fingerprints by
//! `perm_i(fp)`: block `i` moved to the front, the other blocks following in their original order. A
//! bit permutation preserves Hamming distance.
//!
//! **Pigeonhole (exact for every k).** With `r = ⌊k/m⌋` and `a = k − m·r`, any fingerprint within
//! distance `k` of the query has block `i` within distance `r` of the query's block `i` for some
//! `i ≤ a`, or within `r − 1` for some `i > a` (otherwise the distance would be at least
//! `(a+1)(r+1) + (m−a−1)·r = k+1`). A query therefore probes, in table `i`, every block value within
//! radius `r_i` (`r` for `i ≤ a`, `r − 1` after; tables with a negative radius are skipped) and keeps
//! the entries within `k`. `m = k+1` gives `r = 0`: exact block match, the classic layout. A candidate
//! is reported only from the first table in which it qualifies, so no set is needed to de-duplicate.
//!
//! **On disk** (RocksDB column family `t{i}`, one per table): key = `perm_i(fp)` as u64 big-endian ‖
//! `doc_id` as u64 big-endian (16 bytes), empty value. Keys sort by permuted fingerprint, so every block
//! value is one contiguous key range (seek to `value << (64 − width)`).
//!
//! **In memory** ([`MemTables`]): per table, the buckets of `(fp, doc_id)` entries by block value —
//! a direct array for blocks of up to 20 bits, a hash map for wider ones — the mirror of the column
//! families that queries probe.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::simhash::hamming;

/// Largest supported number of tables (blocks of at least 2 bits).
pub const MAX_TABLES: u32 = 32;

/// One block: `width` bits starting `start` bits below the most significant bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Offset from the most significant bit.
    pub start: u32,
    /// Number of bits.
    pub width: u32,
}

/// How the 64 bits are cut into blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    blocks: Vec<Block>,
}

#[inline]
fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl Layout {
    /// `m` blocks, `1 ≤ m ≤ 32`.
    pub fn new(m: u32) -> Option<Layout> {
        if !(1..=MAX_TABLES).contains(&m) {
            return None;
        }
        let (base, extra) = (64 / m, 64 % m);
        let mut start = 0;
        let blocks = (0..m)
            .map(|i| {
                let width = base + u32::from(i < extra);
                let b = Block { start, width };
                start += width;
                b
            })
            .collect();
        Some(Layout { blocks })
    }

    /// Number of blocks (= tables).
    pub fn tables(&self) -> u32 {
        self.blocks.len() as u32
    }

    /// The blocks.
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// Value of block `i` of `fp`.
    #[inline]
    pub fn block(&self, i: usize, fp: u64) -> u64 {
        let b = self.blocks[i];
        (fp >> (64 - b.start - b.width)) & mask(b.width)
    }

    /// `perm_i(fp)`: block `i` first, the other blocks after it in order.
    #[inline]
    pub fn permute(&self, i: usize, fp: u64) -> u64 {
        let b = self.blocks[i];
        let lo_bits = 64 - b.start - b.width;
        let blk = self.block(i, fp);
        let hi = if b.start == 0 { 0 } else { fp >> (64 - b.start) };
        let lo = fp & mask(lo_bits);
        let mut out = blk << (64 - b.width);
        if b.start > 0 {
            out |= hi << lo_bits;
        }
        out | lo
    }

    /// Inverse of [`Layout::permute`].
    #[inline]
    pub fn unpermute(&self, i: usize, p: u64) -> u64 {
        let b = self.blocks[i];
        let lo_bits = 64 - b.start - b.width;
        let blk = p >> (64 - b.width);
        let hi = if b.start == 0 { 0 } else { (p >> lo_bits) & mask(b.start) };
        let lo = p & mask(lo_bits);
        let mut out = blk << lo_bits;
        if b.start > 0 {
            out |= hi << (64 - b.start);
        }
        out | lo
    }

    /// Probe radius per table for distance `k`: `(table, radius)`, tables with no probe left out.
    pub fn plan(&self, k: u32) -> Vec<(usize, u32)> {
        let m = self.tables();
        let (r, a) = (k / m, k % m);
        (0..m as usize)
            .filter_map(|i| {
                if i as u32 <= a {
                    Some((i, r))
                } else {
                    r.checked_sub(1).map(|r1| (i, r1))
                }
            })
            .collect()
    }

    /// Whether `fp` is found in table `i` of `plan` when probing for `q` (its block within radius).
    #[inline]
    fn qualifies(&self, i: usize, radius: u32, fp: u64, q: u64) -> bool {
        hamming(self.block(i, fp), self.block(i, q)) <= radius
    }

    /// True when `fp` qualifies in a table of `plan` that comes before position `pos`: the candidate was
    /// already reported there.
    #[inline]
    pub fn seen_earlier(&self, plan: &[(usize, u32)], pos: usize, fp: u64, q: u64) -> bool {
        plan[..pos].iter().any(|&(j, r)| self.qualifies(j, r, fp, q))
    }

    /// Number of probes (block values) a query for distance `k` makes.
    pub fn probes(&self, k: u32) -> u64 {
        self.plan(k).iter().map(|&(i, r)| ball_size(self.blocks[i].width, r)).sum()
    }
}

/// Number of `width`-bit values within Hamming distance `r` of a value.
pub fn ball_size(width: u32, r: u32) -> u64 {
    let mut total = 0u128;
    let mut c = 1u128; // C(width, d)
    for d in 0..=r.min(width) {
        total += c;
        c = c * u128::from(width - d) / u128::from(d + 1);
    }
    u64::try_from(total).unwrap_or(u64::MAX)
}

/// Calls `f` with every `width`-bit value within Hamming distance `r` of `v` (in no particular order).
pub fn for_each_neighbor(v: u64, width: u32, r: u32, f: &mut impl FnMut(u64)) {
    fn rec(v: u64, from: u32, width: u32, left: u32, f: &mut impl FnMut(u64)) {
        f(v);
        if left == 0 {
            return;
        }
        for b in from..width {
            rec(v ^ (1 << b), b + 1, width, left - 1, f);
        }
    }
    rec(v, 0, width, r.min(width), f);
}

/// RocksDB key of a table entry: `perm_i(fp)` BE ‖ `doc_id` BE.
#[inline]
pub fn table_key(layout: &Layout, i: usize, fp: u64, doc_id: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&layout.permute(i, fp).to_be_bytes());
    k[8..].copy_from_slice(&doc_id.to_be_bytes());
    k
}

/// Decodes a table key into `(fp, doc_id)`; `None` if it is not 16 bytes.
#[inline]
pub fn decode_table_key(layout: &Layout, i: usize, key: &[u8]) -> Option<(u64, u64)> {
    let p = u64::from_be_bytes(key.get(..8)?.try_into().ok()?);
    let id = u64::from_be_bytes(key.get(8..16)?.try_into().ok()?);
    (key.len() == 16).then(|| (layout.unpermute(i, p), id))
}

/// A fast, fixed multiplicative hasher for the in-memory maps keyed by integers (never persisted).
#[derive(Default, Clone, Copy)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(26);
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

/// HashMap with [`IntHasher`].
pub type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

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

    /// Calls `f(doc_id, fp, distance)` once for every entry within distance `k` of `q`. When the
    /// probe would enumerate more block values than there are entries, scans table 0 instead: the
    /// result is the same, the cost bounded by the table size.
    pub fn probe(&self, q: u64, k: u32, mut f: impl FnMut(u64, u64, u32)) {
        if self.layout.probes(k) > self.len as u64 {
            for b in self.tables[0].buckets() {
                for (&fp, &id) in b.fps.iter().zip(&b.ids) {
                    let d = hamming(fp, q);
                    if d <= k {
                        f(id, fp, d);
                    }
                }
            }
            return;
        }
        let plan = self.layout.plan(k);
        for (pos, &(i, r)) in plan.iter().enumerate() {
            let table = &self.tables[i];
            let width = self.layout.blocks[i].width;
            for_each_neighbor(self.layout.block(i, q), width, r, &mut |v| {
                if let Some(b) = table.get(v) {
                    for (j, &fp) in b.fps.iter().enumerate() {
                        let d = hamming(fp, q);
                        if d <= k && !self.layout.seen_earlier(&plan, pos, fp, q) {
                            f(b.ids[j], fp, d);
                        }
                    }
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn layout_blocks_cover_all_bits() {
        for m in 1..=MAX_TABLES {
            let l = Layout::new(m).unwrap();
            assert_eq!(l.blocks().iter().map(|b| b.width).sum::<u32>(), 64);
            let w: Vec<u32> = l.blocks().iter().map(|b| b.width).collect();
            assert!(w.iter().max().unwrap() - w.iter().min().unwrap() <= 1, "{w:?}");
        }
        assert!(Layout::new(0).is_none() && Layout::new(33).is_none());
    }

    #[test]
    fn plan_matches_the_pigeonhole_split() {
        let l = Layout::new(3).unwrap();
        assert_eq!(l.plan(8), vec![(0, 2), (1, 2), (2, 2)]);
        assert_eq!(l.plan(7), vec![(0, 2), (1, 2), (2, 1)]);
        assert_eq!(l.plan(1), vec![(0, 0), (1, 0)]);
        let k1 = Layout::new(9).unwrap();
        assert_eq!(k1.plan(8).len(), 9);
        assert!(k1.plan(8).iter().all(|&(_, r)| r == 0));
        assert_eq!(ball_size(22, 2), 1 + 22 + 231);
    }

    #[test]
    fn neighbor_enumeration_is_the_hamming_ball() {
        let mut seen = Vec::new();
        for_each_neighbor(0b1010, 6, 2, &mut |v| seen.push(v));
        let mut want: Vec<u64> = (0..64u64).filter(|v| (v ^ 0b1010).count_ones() <= 2).collect();
        seen.sort_unstable();
        want.sort_unstable();
        assert_eq!(seen, want);
        assert_eq!(seen.len() as u64, ball_size(6, 2));
    }

    proptest! {
        #[test]
        fn permutations_are_bijections_preserving_hamming(a in any::<u64>(), b in any::<u64>(), m in 1u32..=MAX_TABLES) {
            let l = Layout::new(m).unwrap();
            for i in 0..m as usize {
                prop_assert_eq!(l.unpermute(i, l.permute(i, a)), a);
                prop_assert_eq!(hamming(l.permute(i, a), l.permute(i, b)), hamming(a, b));
                prop_assert_eq!(l.permute(i, a) >> (64 - l.blocks()[i].width), l.block(i, a));
                let key = table_key(&l, i, a, 7);
                prop_assert_eq!(decode_table_key(&l, i, &key), Some((a, 7)));
            }
        }
    }
}
