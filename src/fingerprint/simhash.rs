//! Step 3 of the data path: shingle hashes → 64-bit SimHash (Charikar).
//!
//! For every bit position b (0 = least significant), `sum_b = Σ w·(+1 if bit b of h is set else −1)`
//! over the shingle hashes `h` with weight `w` (one per occurrence under `Weighting::Count`, one per
//! distinct 64-bit hash under `Weighting::Binary`). Bit b of the SimHash is 1 iff `sum_b > 0`.
//! **Tie rule:** `sum_b == 0` (including a document with no shingles) gives bit 0.
//!
//! Implementation: byte-lane accumulation. Each byte of a hash indexes a table whose entry spreads its
//! 8 bits into the 8 bytes of a u64, so one add updates 8 counters at once; the 8 lane accumulators are
//! flushed into u32 counters every 255 hashes, before a byte counter could overflow.

/// `SPREAD[v]` has byte j equal to bit j of `v`.
static SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut v = 0;
    while v < 256 {
        let mut j = 0;
        while j < 8 {
            t[v] |= (((v >> j) & 1) as u64) << (8 * j);
            j += 1;
        }
        v += 1;
    }
    t
};

/// SimHash of the given 64-bit feature hashes, each with weight 1 (repeat a hash to weigh it more).
pub fn simhash(hashes: &[u64]) -> u64 {
    let mut ones = [0u32; 64];
    for chunk in hashes.chunks(255) {
        let mut acc = [0u64; 8];
        for &h in chunk {
            for (lane, a) in acc.iter_mut().enumerate() {
                *a += SPREAD[((h >> (8 * lane)) & 0xFF) as usize];
            }
        }
        for (lane, a) in acc.iter().enumerate() {
            for j in 0..8 {
                ones[8 * lane + j] += ((a >> (8 * j)) & 0xFF) as u32;
            }
        }
    }
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
