//! The block layout: how the 64 bits of a fingerprint are cut into `m` blocks, the bit permutation
//! of each table, and the probe plan of a query at distance `k`.
//!
//! The 64 bits are cut into `m` contiguous blocks, numbered from the most significant bit; the
//! first `64 mod m` blocks are one bit wider than the others. Table `i` orders fingerprints by
//! `perm_i(fp)`: block `i` moved to the front, the other blocks following in their original order.
//! A bit permutation preserves Hamming distance. See the `index` module for the
//! pigeonhole argument behind [`Layout::plan`].

use crate::fingerprint::similarity::hamming;

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

/// The table keys of `store::keys` are encoded with the layout's permutations.
impl crate::store::keys::TablePermutation for Layout {
    #[inline]
    fn permute(&self, i: usize, fp: u64) -> u64 {
        Layout::permute(self, i, fp)
    }

    #[inline]
    fn unpermute(&self, i: usize, p: u64) -> u64 {
        Layout::unpermute(self, i, p)
    }

    #[inline]
    fn block_width(&self, i: usize) -> u32 {
        self.blocks[i].width
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

    /// Blocks of the given widths, in order from the most significant bit: `1 ≤ widths.len() ≤ 32`,
    /// every width at least 1, the widths summing to 64. Unequal widths let wider blocks take the
    /// larger probe radii ([`Layout::plan`]), which at 10M–100M documents scans fewer entries than
    /// equal widths (docs/performance.md, "Measured in git history").
    pub fn with_widths(widths: &[u32]) -> Option<Layout> {
        if widths.is_empty() || widths.len() > MAX_TABLES as usize || widths.contains(&0) || widths.iter().sum::<u32>() != 64 {
            return None;
        }
        let mut start = 0;
        let blocks = widths
            .iter()
            .map(|&width| {
                let b = Block { start, width };
                start += width;
                b
            })
            .collect();
        Some(Layout { blocks })
    }

    /// Whether the blocks are the equal split of [`Layout::new`] for their number.
    pub fn is_equal_split(&self) -> bool {
        let m = self.tables();
        let (base, extra) = (64 / m, 64 % m);
        self.blocks
            .iter()
            .enumerate()
            .all(|(i, b)| b.width == base + u32::from((i as u32) < extra))
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

    /// Probe radius per table for distance `k`: `(table, radius)` in table order, tables with no
    /// probe left out. Exact for any radii `r_i` (−1: not probed) with `Σ (r_i + 1) = k + 1` (the
    /// pigeonhole argument in the `index` module). The radii are handed out one at a time, each to
    /// the table where it adds the fewest entries to scan (`C(w, r+1) / 2^w` of the documents, the
    /// lower index on ties): optimal for that cost while it is convex (radii below half a block).
    /// Equal blocks ([`Layout::new`]) get the classic split — `⌊k/m⌋` for the first `k mod m + 1`
    /// tables, one less after — which is what the greedy gives them there.
    pub fn plan(&self, k: u32) -> Vec<(usize, u32)> {
        let m = self.blocks.len();
        if self.is_equal_split() {
            // The classic split (what the greedy gives while the radii stay below half a block;
            // past that the ball's growth slows and the greedy would favour one table).
            let (r, a) = (k / m as u32, k % m as u32);
            return (0..m)
                .filter_map(|i| {
                    if i as u32 <= a {
                        Some((i, r))
                    } else {
                        r.checked_sub(1).map(|r1| (i, r1))
                    }
                })
                .collect();
        }
        self.greedy_plan(k)
    }

    /// [`Layout::plan`] by handing out the `k + 1` radius steps one at a time.
    fn greedy_plan(&self, k: u32) -> Vec<(usize, u32)> {
        let m = self.blocks.len();
        // radius + 1 per table (0: not probed), and the ball size at that radius.
        let mut rp = vec![0u32; m];
        let mut ball = vec![0u64; m];
        for _ in 0..=k {
            // Added entries per document: (ball(w, r+1) − ball(w, r)) / 2^w, compared exactly as
            // added · 2^(64−w) in u128.
            let mut best: Option<(u128, usize)> = None;
            for (i, b) in self.blocks.iter().enumerate() {
                if rp[i] > b.width {
                    continue; // the whole block space is probed already
                }
                let added = u128::from(ball_size(b.width, rp[i]) - ball[i]) << (64 - b.width);
                if best.is_none_or(|(c, _)| added < c) {
                    best = Some((added, i));
                }
            }
            let Some((_, i)) = best else { break };
            ball[i] = ball_size(self.blocks[i].width, rp[i]);
            rp[i] += 1;
        }
        (0..m).filter(|&i| rp[i] > 0).map(|i| (i, rp[i] - 1)).collect()
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

    /// Entries a query for distance `k` is expected to scan over `n` documents spread evenly over
    /// the block values: `Σ ball(w, r) · n / 2^w` over the plan (on real SimHashes the entries
    /// scanned stayed within 3% of it, `examples/scale_sim.rs`).
    pub fn expected_entries(&self, k: u32, n: u64) -> f64 {
        self.plan(k)
            .iter()
            .map(|&(i, r)| ball_size(self.blocks[i].width, r) as f64 * n as f64 / 2f64.powi(self.blocks[i].width as i32))
            .sum()
    }
}

/// Cost model of a query at distance `k` over `n` documents in the in-memory mirror, in
/// nanoseconds: every probed bucket costs [`COST_PROBE_NS`] (the misses on its header and first
/// fingerprints) and every entry scanned [`COST_ENTRY_NS`] (its fingerprint streamed from memory and
/// compared); a bucket holds `n / 2^w` entries on average (on real SimHashes the entries scanned per
/// query stayed within 3% of that, `examples/scale_sim.rs`). The constants are fitted to the
/// simulation's 10M rows, where the choice between 4 and 5 tables is closest; the model then names
/// the measured best at 1M (6, tied with 5), 10M (5) and 100M (4), with absolute errors up to 2× at
/// 1M where much of the mirror is cached (docs/performance.md, "Measured in git history").
pub fn query_cost_ns(layout: &Layout, k: u32, n: u64) -> f64 {
    COST_PROBE_NS * layout.probes(k) as f64 + COST_ENTRY_NS * layout.expected_entries(k, n)
}

/// Per probed bucket, in ns ([`query_cost_ns`]).
pub const COST_PROBE_NS: f64 = 380.0;
/// Per scanned entry, in ns ([`query_cost_ns`]).
pub const COST_ENTRY_NS: f64 = 1.0;
/// What one more table costs each inserted document, in ns of query time it is worth: the writer's
/// extra RocksDB insert and mirror push (about 2 µs per table in the durable crawler loop).
pub const COST_TABLE_WRITE_NS: f64 = 2000.0;
/// The widest block [`best_tables`] considers: up to 20 bits the mirror's buckets are a direct array
/// (`index::mem`); wider blocks are hashed and cost ~3× the memory.
pub const BEST_MAX_BLOCK_BITS: u32 = 20;

/// The number of tables with the lowest modelled cost per document (one query at distance `k` plus
/// the inserts) at `n` documents: the layout that follows N. Ties go to fewer tables.
pub fn best_tables(k: u32, n: u64) -> u32 {
    let mut best = (f64::INFINITY, MAX_TABLES);
    for m in 1..=MAX_TABLES {
        let Some(l) = Layout::new(m) else { continue };
        if l.blocks().iter().any(|b| b.width > BEST_MAX_BLOCK_BITS) {
            continue;
        }
        let cost = query_cost_ns(&l, k, n) + COST_TABLE_WRITE_NS * f64::from(m);
        if cost < best.0 {
            best = (cost, m);
        }
    }
    best.1
}

/// Fewest entries a probe is expected to scan ([`Layout::expected_entries`]) for
/// [`split_pays`]: waking the query threads costs ~10–20 µs, a scan of this many entries ~100 µs
/// on one core (docs/performance.md, "Measured in git history").
pub const SPLIT_MIN_ENTRIES: f64 = 100_000.0;

/// Whether a probe at distance `k` over `n` entries laid out as `layout` is worth splitting
/// across threads (`index::probe_split`).
pub fn split_pays(layout: &Layout, k: u32, n: u64) -> bool {
    layout.expected_entries(k, n) >= SPLIT_MIN_ENTRIES
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
    fn the_plan_of_an_equal_split_is_the_classic_pigeonhole_split() {
        // ⌊k/m⌋ for the first k mod m + 1 tables, one less after (negative: not probed); the
        // greedy of unequal blocks agrees while the radii stay below half a block.
        for m in 1..=MAX_TABLES {
            let l = Layout::new(m).unwrap();
            for k in 0..=40 {
                if k / m < l.blocks()[m as usize - 1].width / 2 {
                    assert_eq!(l.plan(k), l.greedy_plan(k), "m = {m}, k = {k}");
                }
                let (r, a) = (k / m, k % m);
                let want: Vec<(usize, u32)> = (0..m)
                    .filter_map(|i| {
                        if i <= a {
                            Some((i as usize, r))
                        } else {
                            r.checked_sub(1).map(|r1| (i as usize, r1))
                        }
                    })
                    .collect();
                assert_eq!(l.plan(k), want, "m = {m}, k = {k}");
            }
        }
    }

    #[test]
    fn the_plan_of_unequal_blocks_gives_the_wider_blocks_the_larger_radii() {
        let l = Layout::with_widths(&[17, 16, 16, 15]).unwrap();
        assert_eq!(l.plan(12), vec![(0, 3), (1, 2), (2, 2), (3, 2)]);
        let l = Layout::with_widths(&[14, 14, 14, 14, 8]).unwrap();
        assert_eq!(l.plan(12), vec![(0, 2), (1, 2), (2, 2), (3, 2), (4, 0)]);
        // Fewer entries to scan than the equal split of the same m around the default k.
        let (eq, uneq) = (Layout::new(5).unwrap(), Layout::with_widths(&[14, 14, 14, 11, 11]).unwrap());
        for k in [11, 12] {
            assert!(uneq.expected_entries(k, 1 << 20) < eq.expected_entries(k, 1 << 20), "k = {k}");
        }
        // 10M documents at k = 12: 385,742 entries for the equal split, 311,279 for these widths
        // (`examples/scale_sim`'s uniform column; unequal blocks: docs/performance.md, "Measured in git history").
        assert_eq!(eq.expected_entries(12, 10_000_000).round(), 385_742.0);
        assert_eq!(uneq.expected_entries(12, 10_000_000).round(), 311_279.0);
    }

    #[test]
    fn widths_must_cover_the_64_bits() {
        assert!(Layout::with_widths(&[32, 31]).is_none());
        assert!(Layout::with_widths(&[32, 32, 0]).is_none());
        assert!(Layout::with_widths(&[]).is_none());
        assert!(Layout::with_widths(&[2; 33]).is_none());
        let l = Layout::with_widths(&[40, 24]).unwrap();
        assert_eq!(l.blocks(), &[Block { start: 0, width: 40 }, Block { start: 40, width: 24 }]);
        assert!(!l.is_equal_split() && Layout::with_widths(&[32, 32]).unwrap().is_equal_split());
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
            }
        }
    }
}
