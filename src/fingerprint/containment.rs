//! The containment sketch: which shingles of a set are index keys, and which a query probes.
//!
//! **Samples.** A shingle `s` is a *sample* at rate `1/n` when `splitmix64(s ^ SALT) mod n == 0`:
//! a fixed residue class of a mixed hash, decided by the shingle alone (content-defined). So if
//! `A ⊆ B` then `samples(A) ⊆ samples(B)`: a document that contains another holds every one of its
//! samples, and an index of sample → doc ids finds it. Below containment 1 the candidates degrade
//! gracefully: `A` and `B` share, in expectation, `|A ∩ B| / n` samples.
//!
//! **Short sets.** A set with no sample at all (a few dozen shingles or fewer: probability
//! `(1 − 1/n)^|S|`) would be invisible; such a set is *short* and is indexed under **every** one of
//! its shingles instead, in a key space of its own ([`KeyKind::Short`]). A query then probes its
//! samples in the sample space, and each of its shingles that is a short-set key (an in-memory set
//! says which) in the short space. What this guarantees, for a stored `D` and a query `Q`:
//!
//! * `D ⊆ Q` (the stored document inside the query): always found — `D`'s keys are its samples,
//!   which are samples of `Q`, or all of `D`'s shingles, which are shingles of `Q`;
//! * `Q ⊆ D` (the query inside the stored document): found when `Q` has at least one sample.
//!   A query without a sample cannot be found inside a longer document by any index that keeps
//!   only a `1/n` share of each document; `n` sets that trade-off (docs/containment.md measures it).
//!
//! Both spaces are pure functions of the set and `n` (a database setting, stored in its config):
//! the keys of a deleted document are recomputed from its stored shingle set.

use crate::fingerprint::shingle::splitmix64;

/// Salt of the sample hash (fixed: changing it changes every database's index).
pub const SAMPLE_SALT: u64 = 0x636f_6e74_6169_6e31; // "contain1"
/// Default sampling rate `n` (one shingle in `n` is a sample). Chosen by measurement:
/// docs/containment.md, "Choosing the sampling rate".
pub const DEFAULT_SAMPLE: u32 = 8;
/// Largest accepted sampling rate.
pub const MAX_SAMPLE: u32 = 1 << 16;
/// Default cap on a posting list read by a query: a sample (or short key) held by more documents
/// than this is boilerplate and is skipped (docs/containment.md, "The candidate index": frequent
/// keys).
pub const DEFAULT_MAX_POSTINGS: u32 = 2048;

/// The count filter's bound on the probability of discarding a candidate that qualifies (under the
/// model in which each shingle is a sample independently with probability `1/n`).
pub const COUNT_FILTER_MISS: f64 = 1e-3;

/// **The count filter.** How many keys a candidate must share with a query before it is read and
/// verified, for containment ≥ `c` in either direction:
///
/// * a *short* candidate (every shingle a key) shares exactly `|Q ∩ D|` keys: it must share at
///   least `⌈c · min(|Q|, |D|)⌉` (exact, no loss);
/// * a *sampled* candidate shares the samples of `Q ∩ D`. If `|Q ∩ D| ≥ c·m` (`m = min(|Q|, |D|)`)
///   that count is at least Binomial(`⌈c·m⌉`, `1/n`); it must reach that distribution's lower
///   `δ`-quantile ([`sample_threshold`], `δ` = [`COUNT_FILTER_MISS`]). The bound is then capped by
///   `min(keys of D, samples of Q)`, which a document with containment 1 always reaches (`Q ⊆ D` ⇒
///   it shares all of `Q`'s samples; `D ⊆ Q` ⇒ all of `D`'s keys): containment 1 is never filtered.
///
/// Always at least 1. `q_len`/`d_len` are the set sizes, `q_samples` the query's samples,
/// `d_keys` the candidate's number of keys.
pub fn min_shared_keys(kind: KeyKind, c: f64, n: u32, q_len: usize, q_samples: usize, d_len: usize, d_keys: u32) -> u32 {
    let m = q_len.min(d_len);
    match kind {
        KeyKind::Short => overlap_needed(c, m).max(1),
        KeyKind::Sample => sample_threshold(c, n, m).min((d_keys as usize).min(q_samples).max(1) as u32),
    }
}

/// `⌈c · m⌉`: the overlap that containment `c` of an `m`-set needs.
fn overlap_needed(c: f64, m: usize) -> u32 {
    (c * m as f64 - 1e-9).ceil().clamp(0.0, f64::from(u32::MAX)) as u32
}

/// The least number of samples a pair with overlap `⌈c·m⌉` shares, except with probability at most
/// [`COUNT_FILTER_MISS`]: the largest `t` with `P(Binomial(⌈c·m⌉, 1/n) < t) ≤ δ`, at least 1. Exact
/// (the binomial distribution summed term by term) up to a mean of 500; above it the Chernoff bound
/// `μ − √(2μ ln(1/δ))`, which is lower (safe). `n = 1` samples every shingle: `⌈c·m⌉` exactly.
pub fn sample_threshold(c: f64, n: u32, m: usize) -> u32 {
    sample_threshold_at(c, u64::from(n), m)
}

/// [`sample_threshold`] at rate `1/rate` (a capped set's `n · 2^j`, [`Sampling::rate`]).
pub fn sample_threshold_at(c: f64, rate: u64, m: usize) -> u32 {
    let s = overlap_needed(c, m);
    if rate <= 1 {
        return s.max(1);
    }
    let p = 1.0 / rate as f64;
    let mu = f64::from(s) * p;
    if mu > 500.0 {
        let t = (mu - (2.0 * mu * (1.0 / COUNT_FILTER_MISS).ln()).sqrt()).ceil();
        return if t.is_finite() { t.max(1.0) as u32 } else { 1 };
    }
    let q = 1.0 - p;
    // P(X = 0) ≥ e^{-600}-ish here, well inside f64.
    let (mut pk, mut k) = ((f64::from(s) * q.ln()).exp(), 0u32);
    let mut cdf = pk;
    while cdf <= COUNT_FILTER_MISS && k < s {
        pk *= f64::from(s - k) / f64::from(k + 1) * p / q;
        k += 1;
        cdf += pk;
    }
    // k is the smallest value with P(X ≤ k) > δ, so P(X < k) ≤ δ.
    k.max(1)
}

/// The two key spaces of the containment index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum KeyKind {
    /// A sampled shingle of a document that has samples.
    Sample = 0,
    /// Any shingle of a short document (one without samples).
    Short = 1,
}

impl KeyKind {
    /// The kind of a key's first byte.
    pub fn from_byte(b: u8) -> Option<KeyKind> {
        match b {
            0 => Some(KeyKind::Sample),
            1 => Some(KeyKind::Short),
            _ => None,
        }
    }
}

/// True when shingle `s` is a sample at rate `1/n` (`n = 0` is treated as 1: every shingle).
#[inline]
pub fn is_sample(s: u32, n: u32) -> bool {
    splitmix64(u64::from(s) ^ SAMPLE_SALT).is_multiple_of(u64::from(n.max(1)))
}

/// Default cap on a stored document's samples (`ContainmentConfig::max_samples` of a new
/// database): a set of more than `n · 256` shingles is sampled at a coarser rate. Chosen by
/// measurement: docs/containment.md, "Long documents: the sample cap" (256 keeps a passage inside
/// a host 2–50× longer found 98–100% of the time, as without a cap, with 3.5× fewer postings).
pub const DEFAULT_MAX_SAMPLES: u32 = 256;

/// How a stored set is sampled: rate `1/n`, and a cap on the expected number of samples (`0`: none).
///
/// **The cap.** A set of `len > n · max_samples` shingles is sampled at rate `1/(n · 2^j)`, `j` the
/// least level with `len ≤ n · max_samples · 2^j` ([`Sampling::level`]): its keys are the shingles
/// `s` with `splitmix64(s ^ SALT) mod (n · 2^j) == 0`, a subset of its rate-`n` samples, about
/// `max_samples / 2 … max_samples` of them. The level is a function of the set's size alone, so a
/// candidate's rate is known from its shingle count (the count filter uses it), and a query still
/// probes all its rate-`n` samples: a stored document inside a query is always found (its keys are
/// samples of the query); a query inside a capped document shares its samples at the document's
/// coarser rate (docs/containment.md measures what that costs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampling {
    /// Sampling rate n (`0` is treated as 1).
    pub n: u32,
    /// Cap on the expected samples of a stored set; `0` = no cap (databases created before it).
    pub max_samples: u32,
}

impl From<u32> for Sampling {
    /// Rate `1/n`, no cap.
    fn from(n: u32) -> Self {
        Sampling { n, max_samples: 0 }
    }
}

impl Sampling {
    /// The level `j` of a stored set of `len` shingles (0 without a cap or at most `n · max_samples`).
    pub fn level(&self, len: usize) -> u32 {
        if self.max_samples == 0 {
            return 0;
        }
        let base = u64::from(self.n.max(1)) * u64::from(self.max_samples);
        let mut j = 0;
        while (base << j) < len as u64 {
            j += 1;
        }
        j
    }

    /// The rate `n · 2^j` at which a stored set of `len` shingles is sampled.
    pub fn rate(&self, len: usize) -> u64 {
        u64::from(self.n.max(1)) << self.level(len)
    }
}

/// True when shingle `s` is a sample at rate `1/rate` (`rate = 0` is treated as 1).
#[inline]
pub fn is_sample_at(s: u32, rate: u64) -> bool {
    splitmix64(u64::from(s) ^ SAMPLE_SALT).is_multiple_of(rate.max(1))
}

/// How many of a query's shingles are samples at each level `j` (rate `n · 2^j`), `j < 48`: the
/// query's share of a capped candidate's keys when it lies inside it.
pub fn samples_per_level(set: &[u32], n: u32) -> [u32; 48] {
    let n = u64::from(n.max(1));
    let mut at = [0u32; 48];
    for &s in set {
        let h = splitmix64(u64::from(s) ^ SAMPLE_SALT);
        if h.is_multiple_of(n) {
            at[((h / n).trailing_zeros() as usize).min(47)] += 1;
        }
    }
    // A sample at level j is one at every lower level.
    for j in (0..47).rev() {
        at[j] += at[j + 1];
    }
    at
}

/// The samples of a sorted set, in order.
pub fn samples(set: &[u32], n: u32) -> impl Iterator<Item = u32> + '_ {
    set.iter().copied().filter(move |&s| is_sample(s, n))
}

/// The index keys of a stored set: its samples, or — for a short set, one without samples — all
/// its shingles. Sorted; empty only for an empty set.
pub fn stored_keys(set: &[u32], sampling: impl Into<Sampling>) -> (KeyKind, Vec<u32>) {
    let rate = sampling.into().rate(set.len());
    let s: Vec<u32> = set.iter().copied().filter(|&x| is_sample_at(x, rate)).collect();
    if s.is_empty() {
        (KeyKind::Short, set.to_vec())
    } else {
        (KeyKind::Sample, s)
    }
}

/// What a query probes: its samples in the sample space, and every shingle that `is_short_key`
/// says is the key of some short document in the short space. Sorted per kind.
pub fn probes(set: &[u32], n: u32, mut is_short_key: impl FnMut(u32) -> bool) -> Vec<(KeyKind, u32)> {
    let mut p: Vec<(KeyKind, u32)> = samples(set, n).map(|s| (KeyKind::Sample, s)).collect();
    p.extend(set.iter().copied().filter(|&s| is_short_key(s)).map(|s| (KeyKind::Short, s)));
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    #[test]
    fn sample_rate_is_about_one_in_n() {
        for n in [1u32, 4, 8, 32] {
            let hits = (0..100_000u32).filter(|&s| is_sample(s.wrapping_mul(2_654_435_761), n)).count();
            let expect = 100_000.0 / n as f64;
            assert!((hits as f64 - expect).abs() < 5.0 * expect.sqrt() + 1.0, "n = {n}: {hits}");
        }
        assert!((0..1000).all(|s| is_sample(s, 1) && is_sample(s, 0)));
    }

    #[test]
    fn golden_samples() {
        // Pins the sample function: changing it would silently break every stored index.
        let got: Vec<u32> = samples(&(0..64).collect::<Vec<u32>>(), 8).collect();
        assert_eq!(got, GOLDEN);
    }
    const GOLDEN: [u32; 8] = [3, 16, 21, 27, 31, 35, 38, 39];

    fn set(max: usize) -> impl Strategy<Value = Vec<u32>> {
        proptest::collection::btree_set(any::<u32>(), 0..max).prop_map(|s| s.into_iter().collect())
    }

    #[test]
    fn count_filter_bounds() {
        // Short documents: the exact overlap needed.
        assert_eq!(min_shared_keys(KeyKind::Short, 0.8, 8, 100, 12, 10, 10), 8);
        assert_eq!(min_shared_keys(KeyKind::Short, 0.0, 8, 100, 12, 10, 10), 1);
        // The binomial quantiles (computed independently): Bin(80, 1/8) → 2, Bin(800, 1/8) → 72,
        // Bin(135, 1/8) → 6.
        assert_eq!(min_shared_keys(KeyKind::Sample, 0.8, 8, 100, 12, 100, 12), 2);
        assert_eq!(min_shared_keys(KeyKind::Sample, 0.8, 8, 1000, 125, 5000, 625), 72);
        assert_eq!(sample_threshold(0.9, 8, 150), 6);
        // Every shingle a sample: the exact overlap.
        assert_eq!(sample_threshold(0.5, 1, 151), 76);
        // Far above a mean of 500: the Chernoff bound (μ = 1000 → 1000 − √(2·1000·ln 1000) = 882.4).
        assert_eq!(sample_threshold(1.0, 8, 8000), 883);
        // Never above what containment 1 guarantees.
        assert_eq!(min_shared_keys(KeyKind::Sample, 0.8, 8, 1000, 40, 5000, 625), 40);
        assert_eq!(min_shared_keys(KeyKind::Sample, 0.8, 8, 5000, 625, 1000, 50), 50);
    }

    /// The filter's miss rate, measured: pairs at exactly the threshold overlap, shared samples
    /// counted with the real sample function; the share discarded stays below the bound.
    #[test]
    fn count_filter_miss_rate_is_below_its_bound() {
        let (n, c) = (8u32, 0.8f64);
        let (mut tried, mut missed) = (0u32, 0u32);
        for trial in 0..2000u32 {
            let m = 400 + (trial % 7) as usize * 300;
            let shared = (c * m as f64).ceil() as u32;
            let base = trial.wrapping_mul(0x9E37_79B9).wrapping_mul(7919);
            let x = (0..shared)
                .filter(|&i| is_sample(base.wrapping_add(i.wrapping_mul(2_654_435_761)), n))
                .count() as u32;
            let t = min_shared_keys(KeyKind::Sample, c, n, m, usize::MAX, 10 * m, u32::MAX);
            tried += 1;
            missed += u32::from(x < t);
        }
        assert!(
            f64::from(missed) / f64::from(tried) <= 2.0 * COUNT_FILTER_MISS + 0.002,
            "{missed} of {tried}"
        );
    }

    proptest! {
        /// The index's candidates contain every document with containment 1: a stored set shares a
        /// probed key with every query set it is inside of, and with every query set inside it that
        /// has a sample.
        #[test]
        fn containment_one_always_shares_a_key(big in set(400), pick in proptest::collection::vec(any::<bool>(), 400), n in 1u32..40) {
            let small: Vec<u32> = big.iter().zip(&pick).filter(|(_, &p)| p).map(|(&s, _)| s).collect();
            let keyed = |stored: &[u32], query: &[u32]| {
                let (kind, keys) = stored_keys(stored, n);
                let keys: HashSet<(KeyKind, u32)> = keys.into_iter().map(|k| (kind, k)).collect();
                let short: HashSet<u32> = if kind == KeyKind::Short { stored.iter().copied().collect() } else { HashSet::new() };
                probes(query, n, |s| short.contains(&s)).into_iter().any(|p| keys.contains(&p))
            };
            if !small.is_empty() {
                // Stored inside the query: always.
                prop_assert!(keyed(&small, &big));
                // The query inside the stored set: whenever the query has a sample.
                if samples(&small, n).next().is_some() {
                    prop_assert!(keyed(&big, &small));
                }
            }
        }

        #[test]
        fn stored_keys_are_samples_or_the_whole_short_set(s in set(200), n in 1u32..64) {
            let (kind, keys) = stored_keys(&s, n);
            match kind {
                KeyKind::Sample => {
                    prop_assert!(!keys.is_empty());
                    prop_assert_eq!(keys, samples(&s, n).collect::<Vec<_>>());
                }
                KeyKind::Short => {
                    prop_assert!(samples(&s, n).next().is_none());
                    prop_assert_eq!(keys, s);
                }
            }
        }
    }
}
