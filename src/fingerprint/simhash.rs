//! Step 3 of the data path: shingle hashes → 64-bit SimHash (Charikar).
//!
//! For every bit position b (0 = least significant), `sum_b = Σ w·(+1 if bit b of h is set else −1)`
//! over the shingle hashes `h` with weight `w` (one per occurrence under `Weighting::Count`, one per
//! distinct 64-bit hash under `Weighting::Binary`). Bit b of the SimHash is 1 iff `sum_b > 0`.
//! **Tie rule:** `sum_b == 0` (including a document with no shingles) gives bit 0.
//!
//! Implementation: the per-bit counts come from [`kernels::bit_counts`] (AVX-512BW, AVX2 or the
//! scalar byte-lane accumulation, chosen at run time; all give the same counts).

use crate::fingerprint::kernels;

/// SimHash of the given 64-bit feature hashes, each with weight 1 (repeat a hash to weigh it more).
pub fn simhash(hashes: &[u64]) -> u64 {
    let mut ones = [0u32; 64];
    kernels::bit_counts(hashes, &mut ones);
    let total = hashes.len() as u64;
    let mut fp = 0u64;
    for (b, &c) in ones.iter().enumerate() {
        if 2 * c as u64 > total {
            fp |= 1 << b;
        }
    }
    fp
}

/// The straightforward per-bit definition; kept as the reference the fast version is tested against.
pub fn simhash_reference(hashes: &[u64]) -> u64 {
    let mut fp = 0u64;
    for b in 0..64 {
        let sum: i64 = hashes.iter().map(|h| if h >> b & 1 == 1 { 1 } else { -1 }).sum();
        if sum > 0 {
            fp |= 1 << b;
        }
    }
    fp
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ties_give_zero_bits() {
        assert_eq!(simhash(&[]), 0);
        assert_eq!(simhash(&[u64::MAX, 0]), 0);
        assert_eq!(simhash(&[u64::MAX, 0, 1]), 1);
    }

    proptest! {
        #[test]
        fn byte_lane_version_equals_reference(hashes in proptest::collection::vec(any::<u64>(), 0..1200), dup in 0usize..600) {
            let mut hs = hashes.clone();
            // Repeated hashes stress the 255-add flush boundary.
            if let Some(&h) = hashes.first() { hs.extend(std::iter::repeat_n(h, dup)); }
            prop_assert_eq!(simhash(&hs), simhash_reference(&hs));
        }
    }
}
