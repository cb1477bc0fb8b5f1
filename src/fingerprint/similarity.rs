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

/// The Jaccard of two sets of `a` and `b` elements sharing `shared` (0.0 for two empty sets).
pub(crate) fn ratio(shared: usize, a: usize, b: usize) -> f64 {
    let union = a + b - shared;
    if union == 0 {
        0.0
    } else {
        shared as f64 / union as f64
    }
}

/// Calls `f(i, d)` for every `fps[i]` within Hamming distance `k` of `q` (`d` its distance), in
/// order: the single writer runs it over every recently committed document for every document it
/// decides, the indexes over every bucket they probe. The scan is [`crate::fingerprint::kernels::for_each_within`]
/// (AVX-512 VPOPCNTDQ, AVX2 or the scalar loop branch-free over chunks of 8, chosen at run time).
#[inline]
pub fn for_each_within(fps: &[u64], q: u64, k: u32, f: impl FnMut(usize, u32)) {
    crate::fingerprint::kernels::for_each_within(fps, q, k, f)
}

/// Calls `f(tag, i, d)` for every query `(tag, q)`, in order, and every `fps[i]` within distance
/// `k` of `q`: [`for_each_within`] for the queries of a batch that probe one index bucket, which
/// is loaded once for all of them ([`crate::fingerprint::kernels::for_each_within_many`]).
#[inline]
pub fn for_each_within_many<T: Copy>(fps: &[u64], queries: impl IntoIterator<Item = (T, u64)>, k: u32, f: impl FnMut(T, usize, u32)) {
    crate::fingerprint::kernels::for_each_within_many(fps, queries, k, f)
}

/// Exact Jaccard similarity and overlap.
pub fn jaccard(a: &[u32], b: &[u32]) -> Similarity {
    let shared = intersection_size(a, b);
    Similarity {
        jaccard: ratio(shared, a.len(), b.len()),
        shared: shared as u32,
    }
}

/// `|a ∩ b|` by one merge of two sorted sets, or `None` as soon as `needed` is out of reach (each
/// remaining element can add at most one to the overlap). The bounded merge of
/// [`jaccard_at_least`] and [`containment_at_least`].
pub(crate) fn overlap_reaching(a: &[u32], b: &[u32], needed: usize) -> Option<usize> {
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        if shared + (a.len() - i).min(b.len() - j) < needed {
            return None;
        }
        let (x, y) = (a[i], b[j]);
        shared += (x == y) as usize;
        i += (x <= y) as usize;
        j += (y <= x) as usize;
    }
    Some(shared)
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
    let shared = overlap_reaching(small, large, needed)?;
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
    let shared = overlap_reaching(small, large, needed)?;
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

// The similarities of the other methods (fingerprint/method.rs), and the one comparison
// of two documents under a method's rule.

use crate::fingerprint::method::Method;

/// B-similarity (Henzinger): the number of positions at which two supershingle vectors are equal.
#[inline]
pub fn b_similarity(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).filter(|(x, y)| x == y).count() as u32
}

/// Bits in which two equally long bit vectors (u64 words) differ.
#[inline]
pub fn differing_bits(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// C-similarity (Henzinger): bits in which two projections agree.
#[inline]
pub fn agreeing_bits(a: &[u64], b: &[u64]) -> u32 {
    64 * a.len().min(b.len()) as u32 - differing_bits(a, b)
}

/// Per lexicon, the Hamming distance of two multi-lexicon sketches (`[mask, fp_0, ..]`), `None`
/// where either document has no word of that lexicon.
pub fn lexicon_distances(a: &[u64], b: &[u64]) -> Vec<Option<u32>> {
    let (Some((&ma, fa)), Some((&mb, fb))) = (a.split_first(), b.split_first()) else {
        return Vec::new();
    };
    fa.iter()
        .zip(fb)
        .enumerate()
        .map(|(j, (x, y))| ((ma & mb) >> j & 1 == 1).then(|| hamming(*x, *y)))
        .collect()
}

/// Whether two multi-lexicon sketches (`[mask, fp_0, ..]`) are within `k` bits in some lexicon
/// both have: `MethodScore::Lexicons(lexicon_distances(a, b)).satisfies(k)` without building the
/// vector (the test of every candidate; the score is built for the hits alone).
#[inline]
pub fn lexicons_within(a: &[u64], b: &[u64], k: u32) -> bool {
    let (Some((&ma, fa)), Some((&mb, fb))) = (a.split_first(), b.split_first()) else {
        return false;
    };
    let both = ma & mb;
    fa.iter()
        .zip(fb)
        .enumerate()
        .any(|(j, (x, y))| j < 64 && both >> j & 1 == 1 && hamming(*x, *y) <= k)
}

/// A method's decision rule, resolved for one query: `max_distance` (k) for the bit-vector methods
/// (of 64 bits, of the projection's bits, per lexicon), `min_shared` for Broder's supershingles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Most differing bits.
    pub max_distance: u32,
    /// Fewest equal supershingles.
    pub min_shared: u32,
}

/// How similar two documents are under a method: what a hit reports.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum MethodScore {
    /// simhash, weighted-simhash: differing bits of the 64-bit SimHashes.
    Hamming(u32),
    /// broder: equal supershingles (B-similarity) of `of`.
    Supershingles {
        /// Equal supershingles.
        equal: u32,
        /// Supershingles per document.
        of: u32,
    },
    /// charikar: agreeing bits (C-similarity) of `bits`.
    Projection {
        /// Agreeing bits.
        agree: u32,
        /// Bits of the projection.
        bits: u32,
    },
    /// broder-charikar: both.
    Combined {
        /// Equal supershingles.
        equal: u32,
        /// Supershingles per document.
        of: u32,
        /// Agreeing bits of the projection.
        agree: u32,
        /// Bits of the projection.
        bits: u32,
    },
    /// multi-lexicon: Hamming distance per lexicon (`None`: a document has no word of it).
    Lexicons(Vec<Option<u32>>),
}

impl MethodScore {
    /// Whether the pair satisfies `rule`.
    pub fn satisfies(&self, rule: Rule) -> bool {
        match self {
            MethodScore::Hamming(d) => *d <= rule.max_distance,
            MethodScore::Supershingles { equal, .. } => *equal >= rule.min_shared,
            MethodScore::Projection { agree, bits } => bits - agree <= rule.max_distance,
            MethodScore::Combined { equal, agree, bits, .. } => *equal >= rule.min_shared && bits - agree <= rule.max_distance,
            MethodScore::Lexicons(v) => v.iter().flatten().any(|&d| d <= rule.max_distance),
        }
    }

    /// One distance for ordering hits (smaller is closer): differing bits (the smallest over the
    /// lexicons; 64 when none is shared), or for supershingles the number that differ.
    pub fn distance(&self) -> u32 {
        match self {
            MethodScore::Hamming(d) => *d,
            MethodScore::Supershingles { equal, of } => of - equal,
            MethodScore::Projection { agree, bits } | MethodScore::Combined { agree, bits, .. } => bits - agree,
            MethodScore::Lexicons(v) => v.iter().flatten().copied().min().unwrap_or(64),
        }
    }
}

impl std::fmt::Display for MethodScore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MethodScore::Hamming(d) => write!(f, "hamming {d}"),
            MethodScore::Supershingles { equal, of } => write!(f, "supershingles {equal}/{of}"),
            MethodScore::Projection { agree, bits } => write!(f, "agree {agree}/{bits}"),
            MethodScore::Combined { equal, of, agree, bits } => write!(f, "supershingles {equal}/{of} agree {agree}/{bits}"),
            MethodScore::Lexicons(v) => {
                let parts: Vec<String> = v.iter().map(|d| d.map_or("-".into(), |d| d.to_string())).collect();
                write!(f, "lexicons [{}]", parts.join(","))
            }
        }
    }
}

/// Compares two documents under `method` from their SimHashes and sketches
/// ([`Fingerprint::sketch`](super::Fingerprint)).
pub fn compare(method: &Method, a_simhash: u64, a: &[u64], b_simhash: u64, b: &[u64]) -> MethodScore {
    match method {
        Method::SimHash | Method::WeightedSimHash(_) => MethodScore::Hamming(hamming(a_simhash, b_simhash)),
        Method::Broder(p) => MethodScore::Supershingles {
            equal: b_similarity(a, b),
            of: p.supershingles,
        },
        Method::Charikar(c) => MethodScore::Projection {
            agree: agreeing_bits(a, b),
            bits: c.bits,
        },
        Method::BroderCharikar(p, c) => {
            let n = p.supershingles as usize;
            let (sa, pa) = a.split_at(n.min(a.len()));
            let (sb, pb) = b.split_at(n.min(b.len()));
            MethodScore::Combined {
                equal: b_similarity(sa, sb),
                of: p.supershingles,
                agree: agreeing_bits(pa, pb),
                bits: c.bits,
            }
        }
        Method::MultiLexicon(_) => MethodScore::Lexicons(lexicon_distances(a, b)),
    }
}

#[cfg(test)]
mod method_tests {
    use super::*;

    #[test]
    fn hand_computed_method_similarities() {
        assert_eq!(b_similarity(&[1, 2, 3, 4, 5, 6], &[1, 9, 3, 9, 5, 9]), 3);
        assert_eq!(b_similarity(&[1, 2], &[2, 1]), 0, "positions matter");
        assert_eq!(agreeing_bits(&[0; 6], &[0b111, 0, 0, 0, 0, 1 << 63]), 380);
        assert_eq!(
            lexicon_distances(&[0b101, 0xF, 0, 0xFF], &[0b111, 0x0, 7, 0xFE]),
            vec![Some(4), None, Some(1)]
        );
        let rule = Rule {
            max_distance: 12,
            min_shared: 2,
        };
        assert!(MethodScore::Projection { agree: 372, bits: 384 }.satisfies(rule));
        assert!(!MethodScore::Projection { agree: 371, bits: 384 }.satisfies(rule));
        assert!(MethodScore::Supershingles { equal: 2, of: 6 }.satisfies(rule));
        assert!(!MethodScore::Supershingles { equal: 1, of: 6 }.satisfies(rule));
        assert!(!MethodScore::Lexicons(vec![None, Some(13)]).satisfies(rule));
        assert!(MethodScore::Lexicons(vec![None, Some(13), Some(12)]).satisfies(rule));
        assert_eq!(MethodScore::Lexicons(vec![None, None]).distance(), 64);
        let comb = Method::BroderCharikar(Default::default(), Default::default());
        let a: Vec<u64> = (0..12).collect();
        let mut b = a.clone();
        b[0] = 99;
        b[11] ^= 0xFF;
        assert_eq!(
            compare(&comb, 0, &a, 0, &b),
            MethodScore::Combined {
                equal: 5,
                of: 6,
                agree: 376,
                bits: 384
            }
        );
    }
}
