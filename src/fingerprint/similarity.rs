//! The crate's one home for similarity measures: the Hamming distance of two SimHashes and the exact
//! Jaccard similarity of two shingle sets (sorted, unique u32) — the last step of every query.
//!
//! `jaccard_at_least` first applies the size filter (`t·|A| ≤ |B| ≤ |A|/t`), then merges with an early
//! exit as soon as the overlap still reachable drops below the overlap needed for `t`.
//!
//! **Empty sets.** The Jaccard similarity of two empty sets is defined as 0.0 here (and everywhere in
//! fpdb): two documents without a single shingle share no evidence of being duplicates. (fpdb never
//! stores an empty set, so this matters only for queries and evaluation.)

/// Hamming distance of two 64-bit fingerprints.
#[inline]
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// Result of a verified comparison.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Similarity {
    /// |A ∩ B| / |A ∪ B| (0.0 for two empty sets).
    pub jaccard: f64,
    /// |A ∩ B|.
    pub shared: u32,
}

/// |A ∩ B| of two sorted unique slices (branch-light merge).
pub fn intersection_size(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        n += (x == y) as usize;
        i += (x <= y) as usize;
        j += (y <= x) as usize;
    }
    n
}

fn ratio(shared: usize, a: usize, b: usize) -> f64 {
    let union = a + b - shared;
    if union == 0 {
        0.0
    } else {
        shared as f64 / union as f64
    }
}

/// Exact Jaccard similarity and overlap.
pub fn jaccard(a: &[u32], b: &[u32]) -> Similarity {
    let shared = intersection_size(a, b);
    Similarity {
        jaccard: ratio(shared, a.len(), b.len()),
        shared: shared as u32,
    }
}

/// The exact similarity if it is at least `t`, else `None` (often without reading both sets whole).
pub fn jaccard_at_least(a: &[u32], b: &[u32], t: f64) -> Option<Similarity> {
    if t <= 0.0 {
        return Some(jaccard(a, b));
    }
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if (small.len() as f64) < t * large.len() as f64 {
        return None;
    }
    // J >= t  <=>  shared >= t/(1+t) · (|A|+|B|).
    let needed = (t / (1.0 + t) * (a.len() + b.len()) as f64 - 1e-9).ceil().max(0.0) as usize;
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < small.len() && j < large.len() {
        // Each remaining element of the smaller set can add at most one to the overlap.
        if shared + (small.len() - i).min(large.len() - j) < needed {
            return None;
        }
        let (x, y) = (small[i], large[j]);
        shared += (x == y) as usize;
        i += (x <= y) as usize;
        j += (y <= x) as usize;
    }
    let sim = Similarity {
        jaccard: ratio(shared, a.len(), b.len()),
        shared: shared as u32,
    };
    (sim.jaccard >= t).then_some(sim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hand_computed_cases() {
        assert_eq!(jaccard(&[1, 2, 3, 4], &[3, 4, 5, 6]).jaccard, 2.0 / 6.0);
        // The one convention of the crate (module doc): two empty sets share no evidence.
        assert_eq!(jaccard(&[], &[]).jaccard, 0.0);
        assert_eq!(jaccard(&[1], &[]).jaccard, 0.0);
        assert_eq!(
            jaccard_at_least(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], &[1, 2, 3, 4, 5, 6, 7, 8, 9], 0.9).map(|s| s.shared),
            Some(9)
        );
        assert_eq!(
            jaccard_at_least(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], &[1, 2, 3, 4, 5, 6, 7, 8], 0.9),
            None
        );
    }

    fn set() -> impl Strategy<Value = Vec<u32>> {
        proptest::collection::btree_set(0u32..64, 0..40).prop_map(|s| s.into_iter().collect())
    }

    proptest! {
        #[test]
        fn early_exit_agrees_with_full_merge(a in set(), b in set(), t in 0.0f64..1.0) {
            let full = jaccard(&a, &b);
            match jaccard_at_least(&a, &b, t) {
                Some(s) => { prop_assert_eq!(s, full); prop_assert!(full.jaccard >= t); }
                None => prop_assert!(full.jaccard < t),
            }
        }
    }
}
