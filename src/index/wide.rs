//! method: the block layout of a bit vector of any multiple of 64 bits (Charikar's 384-bit
//! projection, or one 64-bit lexicon SimHash): `m` contiguous blocks, the first `bits mod m` one bit
//! wider, and the generalized pigeonhole probe plan of [`super::layout::Layout::plan`] (see the
//! [`index`](super) module docs for the proof): with `r = ⌊k/m⌋`, `a = k − m·r`, any vector within
//! `k` differing bits of the query has block `i` within `r` of the query's for some `i ≤ a`, or
//! within `r − 1` for some `i > a`.
//!
//! Bit `i` of a vector is bit `i mod 64` of word `i / 64`. With `m = k + 1` every radius is 0: two
//! projections of 384 bits within 12 differing bits agree exactly on at least one of 13 blocks (of 29
//! or 30 bits), where the paper's 12 pieces of 32 bits only guarantee it for 11.

use super::layout::{ball_size, for_each_neighbor};

/// Blocks of a `bits`-bit vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WideLayout {
    bits: u32,
    /// `(start bit, width)` per block; widths ≤ 64.
    blocks: Vec<(u32, u32)>,
}

impl WideLayout {
    /// `m` blocks over `bits` bits; `None` unless `1 ≤ m ≤ bits` and every block fits in 64 bits.
    pub fn new(bits: u32, m: u32) -> Option<WideLayout> {
        if m == 0 || m > bits || bits.div_ceil(m) > 64 {
            return None;
        }
        let (base, extra) = (bits / m, bits % m);
        let mut start = 0;
        let blocks = (0..m)
            .map(|i| {
                let w = base + u32::from(i < extra);
                let b = (start, w);
                start += w;
                b
            })
            .collect();
        Some(WideLayout { bits, blocks })
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Width of block `i`.
    pub fn width(&self, i: usize) -> u32 {
        self.blocks[i].1
    }

    /// Value of block `i` of `v` (`v` has `bits / 64` words, or more).
    #[inline]
    pub fn block(&self, i: usize, v: &[u64]) -> u64 {
        let (start, width) = self.blocks[i];
        let (w, off) = ((start / 64) as usize, start % 64);
        let lo = v.get(w).copied().unwrap_or(0) >> off;
        let val = if off + width > 64 {
            lo | v.get(w + 1).copied().unwrap_or(0) << (64 - off)
        } else {
            lo
        };
        if width == 64 {
            val
        } else {
            val & ((1u64 << width) - 1)
        }
    }

    /// `(block, radius)` to probe for distance `k` (blocks with a negative radius left out).
    pub fn plan(&self, k: u32) -> Vec<(usize, u32)> {
        let m = self.blocks.len() as u32;
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

    /// Number of block values a query for `k` probes.
    pub fn probes(&self, k: u32) -> u64 {
        self.plan(k)
            .iter()
            .map(|&(i, r)| ball_size(self.width(i), r))
            .fold(0u64, u64::saturating_add)
    }

    /// Calls `f(block, value)` for every block value a query `q` probes at distance `k`.
    pub fn for_each_probe(&self, q: &[u64], k: u32, f: &mut impl FnMut(usize, u64)) {
        for (i, r) in self.plan(k) {
            for_each_neighbor(self.block(i, q), self.width(i), r, &mut |v| f(i, v));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn blocks_tile_the_vector() {
        for (bits, m) in [(384, 13), (384, 12), (64, 5), (64, 1), (128, 3), (1024, 17)] {
            let l = WideLayout::new(bits, m).unwrap();
            let mut next = 0;
            for i in 0..l.blocks() {
                assert_eq!(l.blocks[i].0, next);
                next += l.width(i);
            }
            assert_eq!(next, bits);
        }
        assert_eq!(WideLayout::new(384, 13).unwrap().width(0), 30);
        assert_eq!(WideLayout::new(384, 13).unwrap().width(12), 29);
        assert!(WideLayout::new(384, 5).is_none(), "blocks wider than 64 bits");
        assert!(WideLayout::new(64, 0).is_none());
    }

    #[test]
    fn thirteen_blocks_need_no_radius_up_to_twelve() {
        let l = WideLayout::new(384, 13).unwrap();
        for k in 0..=12 {
            let plan = l.plan(k);
            assert_eq!(plan.len(), k as usize + 1);
            assert!(plan.iter().all(|&(_, r)| r == 0));
        }
    }

    proptest! {
        #[test]
        fn block_values_are_the_bits(v in proptest::collection::vec(any::<u64>(), 6), m in 6u32..=64) {
            let l = WideLayout::new(384, m).unwrap();
            for i in 0..l.blocks() {
                let (start, width) = l.blocks[i];
                let want = (0..width).fold(0u64, |acc, b| {
                    let bit = start + b;
                    acc | ((v[(bit / 64) as usize] >> (bit % 64)) & 1) << b
                });
                prop_assert_eq!(l.block(i, &v), want);
            }
        }
    }
}
