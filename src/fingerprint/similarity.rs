//! The crate's one home for similarity measures: the Hamming distance of two SimHashes, the exact
//! Jaccard similarity of two shingle sets (sorted, unique u32) — the last step of every query — and
//! the exact containment of one set in another (`|A ∩ B| / |A|`, both directions from one merge).
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

/// Exact containment of two sets in each other, from one intersection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Containment {
    /// |A ∩ B| / |A|: how much of A is inside B (0.0 when A is empty).
    pub a_in_b: f64,
    /// |A ∩ B| / |B|: how much of B is inside A (0.0 when B is empty).
    pub b_in_a: f64,
    /// |A ∩ B| / |A ∪ B| (0.0 for two empty sets).
    pub jaccard: f64,
    /// |A ∩ B|.
    pub shared: u32,
}

impl Containment {
    /// The larger of the two directions.
    pub fn max(&self) -> f64 {
        self.a_in_b.max(self.b_in_a)
    }
}

fn share(shared: usize, of: usize) -> f64 {
    if of == 0 {
        0.0
    } else {
        shared as f64 / of as f64
    }
}

/// |A ∩ B| when one set is much smaller than the other: each element of the small set is searched
/// in the remaining part of the large one by galloping (exponential then binary search), so the cost
/// is O(|small| · log(|large| / |small|)) instead of O(|small| + |large|).
fn intersection_size_galloping(small: &[u32], large: &[u32]) -> usize {
    let (mut n, mut lo) = (0usize, 0usize);
    for &x in small {
        let mut step = 1usize;
        let mut hi = lo;
        while hi < large.len() && large[hi] < x {
            lo = hi + 1;
            hi += step;
            step *= 2;
        }
        // Everything before `lo` is < x, and large[hi] ≥ x (or hi is past the end).
        let end = (hi + 1).min(large.len());
        match large[lo..end].binary_search(&x) {
            Ok(i) => {
                n += 1;
                lo += i + 1;
            }
            Err(i) => lo += i,
        }
        if lo >= large.len() {
            break;
        }
    }
    n
}

/// Exact containment of `a` in `b` and of `b` in `a` (and their Jaccard): one intersection, by
/// [`intersection_size`] for sets of similar size, by galloping search when one is 32× the other
/// (a notice against a whole licence).
pub fn containment(a: &[u32], b: &[u32]) -> Containment {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let shared = if small.len().saturating_mul(32) < large.len() {
        intersection_size_galloping(small, large)
    } else {
        intersection_size(a, b)
    };
    Containment {
        a_in_b: share(shared, a.len()),
        b_in_a: share(shared, b.len()),
        jaccard: ratio(shared, a.len(), b.len()),
        shared: shared as u32,
    }
}

/// The exact containment if either direction is at least `c`, else `None`. Either direction ≥ c
/// means `|A ∩ B| ≥ c · min(|A|, |B|)`: the merge stops as soon as that overlap is out of reach.
pub fn containment_at_least(a: &[u32], b: &[u32], c: f64) -> Option<Containment> {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if c <= 0.0 || small.len().saturating_mul(32) < large.len() {
        let r = containment(a, b);
        return (r.max() >= c).then_some(r);
    }
    let needed = (c * small.len() as f64 - 1e-9).ceil().max(0.0) as usize;
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < small.len() && j < large.len() {
        if shared + (small.len() - i).min(large.len() - j) < needed {
            return None;
        }
        let (x, y) = (small[i], large[j]);
        shared += (x == y) as usize;
        i += (x <= y) as usize;
        j += (y <= x) as usize;
    }
    let r = Containment {
        a_in_b: share(shared, a.len()),
        b_in_a: share(shared, b.len()),
        jaccard: ratio(shared, a.len(), b.len()),
        shared: shared as u32,
    };
    (r.max() >= c).then_some(r)
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

    /// Brute force over hash sets: the definition, nothing clever.
    fn brute(a: &[u32], b: &[u32]) -> (f64, f64, u32) {
        let sa: std::collections::HashSet<u32> = a.iter().copied().collect();
        let shared = b.iter().filter(|x| sa.contains(x)).count();
        let c = |of: usize| if of == 0 { 0.0 } else { shared as f64 / of as f64 };
        (c(a.len()), c(b.len()), shared as u32)
    }

    #[test]
    fn containment_hand_computed_cases() {
        let r = containment(&[1, 2, 3], &[1, 2, 3, 4, 5, 6]);
        assert_eq!((r.a_in_b, r.b_in_a, r.shared), (1.0, 0.5, 3));
        assert_eq!(r.jaccard, 0.5);
        let r = containment(&[], &[1]);
        assert_eq!((r.a_in_b, r.b_in_a, r.jaccard), (0.0, 0.0, 0.0));
        // Galloping path: 3 of 4 small elements in a set 100× larger.
        let large: Vec<u32> = (0..400).map(|x| x * 3).collect();
        let r = containment(&[0, 5, 300, 1197], &large);
        assert_eq!((r.shared, r.a_in_b), (3, 0.75));
        assert!(containment_at_least(&[0, 5, 300, 1197], &large, 0.8).is_none());
        assert_eq!(containment_at_least(&[0, 5, 300, 1197], &large, 0.75).map(|r| r.shared), Some(3));
    }

    fn wide_set(max: usize) -> impl Strategy<Value = Vec<u32>> {
        proptest::collection::btree_set(0u32..2000, 0..max).prop_map(|s| s.into_iter().collect())
    }

    proptest! {
        #[test]
        fn containment_equals_brute_force(a in wide_set(300), b in wide_set(300), small in wide_set(8), c in 0.0f64..=1.0) {
            for (x, y) in [(&a, &b), (&small, &b), (&b, &small), (&a, &a)] {
                let r = containment(x, y);
                let (xy, yx, shared) = brute(x, y);
                prop_assert_eq!((r.a_in_b, r.b_in_a, r.shared), (xy, yx, shared));
                prop_assert_eq!(r.jaccard, jaccard(x, y).jaccard);
                match containment_at_least(x, y, c) {
                    Some(s) => { prop_assert_eq!(s, r); prop_assert!(r.max() >= c); }
                    None => prop_assert!(r.max() < c),
                }
            }
        }

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
