//! Step 1 of the data path: text → fingerprint. Every parameter that changes a fingerprint is a
//! field of the stored [`spec::FingerprintSpec`]; every hash is seeded and fixed (xxh3-64,
//! splitmix64), never std's `DefaultHasher`, so fingerprints are stable across versions and
//! platforms (golden vectors in `tests/engine/golden.rs`).
//!
//! normalize → shingle → simhash, as one reusable object ([`Fingerprinter`]); [`similarity`] holds
//! the measures that compare fingerprints (Hamming, Jaccard, and each method's own).
//!
//! method: besides the SimHash, the spec's [`method`](method::Method) may add a *sketch*
//! ([`Fingerprint::sketch`]): Broder's supershingles ([`broder`]), Charikar's projection
//! ([`charikar`]), both, or one SimHash per random lexicon ([`lexicon`]); `weighted-simhash`
//! replaces the SimHash by an IDF-weighted one ([`weighted`]).

pub mod biblio;
pub mod broder;
pub mod charikar;
pub mod containment;
pub mod idf;
#[allow(unsafe_code)] // the SIMD kernels' `#[target_feature]` functions (see the module docs)
pub mod kernels;
pub mod lexicon;
pub mod method;
pub mod normalize;
pub mod params;
pub mod shingle;
pub mod simhash;
pub mod similarity;
pub mod spec;
pub mod weighted;
pub mod wordmix;

use crate::fingerprint::method::Method;
use crate::fingerprint::normalize::normalize_into_version;
use crate::fingerprint::params::{HashKind, ShingleUnit, Weighting};
use crate::fingerprint::shingle::{shingle_hashes, shingle_set};
use crate::fingerprint::simhash::simhash;
use crate::fingerprint::spec::FingerprintSpec;

/// A document's fingerprint under a spec: its SimHash, its shingle set and its method's sketch.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Fingerprint {
    /// 64-bit SimHash (IDF-weighted under `weighted-simhash`).
    pub simhash: u64,
    /// Low 32 bits of each shingle hash, sorted and unique.
    pub shingles: Vec<u32>,
    /// The method's sketch ([`Method::sketch_words`] words; empty for `simhash` and
    /// `weighted-simhash`): supershingles, projection words, or `[mask, one SimHash per lexicon]`.
    pub sketch: Vec<u64>,
}

pub(crate) use crate::fingerprint::shingle::word_shingle_hashes as word_shingles;

/// Computes fingerprints, reusing its buffers between documents. One per thread.
#[derive(Clone, Debug)]
pub struct Fingerprinter {
    spec: FingerprintSpec,
    norm: String,
    hashes: Vec<u64>,
    scratch: Vec<u64>,
    scratch2: Vec<u64>,
    sort_tmp: Vec<u64>,
    sort_counts: Vec<u32>,
    mix: wordmix::Scratch,
    text: String,
}

impl Fingerprinter {
    /// A fingerprinter for `spec`.
    pub fn new(spec: FingerprintSpec) -> Self {
        Fingerprinter {
            spec,
            norm: String::new(),
            hashes: Vec::new(),
            scratch: Vec::new(),
            scratch2: Vec::new(),
            sort_tmp: Vec::new(),
            sort_counts: Vec::new(),
            mix: wordmix::Scratch::default(),
            text: String::new(),
        }
    }

    /// The spec in use.
    pub fn spec(&self) -> &FingerprintSpec {
        &self.spec
    }

    /// Fingerprints `text`. A text with no token gives an empty shingle set and SimHash 0.
    ///
    /// A `weighted-simhash` spec must carry its IDF table (`Method::validate` refuses one without;
    /// databases attach theirs); without it every word weighs the same.
    pub fn fingerprint(&mut self, text: &str) -> Fingerprint {
        // Word shingles under `word-mix` are hashed straight from the text when no sketch needs
        // the normalized text (normalize, tokenize and hash in one pass: `wordmix::hashes`).
        let fused = self.spec.unit == ShingleUnit::Word && self.spec.hash == HashKind::WordMix && self.spec.method == Method::SimHash;
        if fused {
            self.norm.clear();
            wordmix::hashes(
                self.spec.normalizer,
                text,
                self.spec.n,
                self.spec.seed,
                &mut self.mix,
                &mut self.hashes,
            );
        } else {
            normalize_into_version(self.spec.normalizer, text, &mut self.norm);
            shingle_hashes(&self.spec, &self.norm, &mut self.hashes);
        }
        // A binary SimHash counts each distinct hash once: one sort gives those and the shingle set.
        // (No sketch reads `hashes`; they hash the normalized text.)
        let binary_simhash = self.spec.weighting == Weighting::Binary && !matches!(self.spec.method, Method::WeightedSimHash(_));
        let shingles = if binary_simhash {
            unique_and_set(&mut self.hashes, &mut self.sort_tmp, &mut self.sort_counts)
        } else {
            shingle_set(&self.hashes)
        };
        let seed = self.spec.seed;
        let mut sketch = Vec::with_capacity(self.spec.method.sketch_words());
        // The sketch (or the weighted SimHash) of the spec's method.
        let simhash = match &self.spec.method {
            Method::WeightedSimHash(p) => match &p.idf.0 {
                Some(table) => weighted::simhash(
                    p,
                    table,
                    seed,
                    self.spec.weighting,
                    &self.norm,
                    &mut self.scratch,
                    &mut self.scratch2,
                ),
                None => {
                    let empty = weighted::IdfTable::from_texts([]);
                    weighted::simhash(
                        p,
                        &empty,
                        seed,
                        self.spec.weighting,
                        &self.norm,
                        &mut self.scratch,
                        &mut self.scratch2,
                    )
                }
            },
            method => {
                match method {
                    Method::Broder(p) => broder::sketch(p, seed, &self.norm, &mut self.scratch, &mut sketch),
                    Method::Charikar(c) => charikar::sketch(c, seed, &self.norm, &mut self.scratch, &mut self.scratch2, &mut sketch),
                    Method::BroderCharikar(p, c) => {
                        broder::sketch(p, seed, &self.norm, &mut self.scratch, &mut sketch);
                        charikar::sketch(c, seed, &self.norm, &mut self.scratch, &mut self.scratch2, &mut sketch);
                    }
                    Method::MultiLexicon(l) => lexicon::sketch(
                        l,
                        seed,
                        self.spec.weighting,
                        &self.norm,
                        &mut self.text,
                        &mut self.scratch,
                        &mut sketch,
                    ),
                    Method::SimHash | Method::WeightedSimHash(_) => {}
                }
                simhash(&self.hashes)
            }
        };
        Fingerprint { simhash, shingles, sketch }
    }
}

/// Sorts and de-duplicates `hashes` (the distinct hashes a binary SimHash counts once each) and
/// returns their shingle set ([`shingle_set`]) with one sort for both: a sort by the low halves
/// ([`sort_low32`]), after which equal hashes lie in one run of equal low halves; a run longer
/// than one (a repeated shingle, or two hashes whose low halves collide) is sorted and
/// de-duplicated on its own. `tmp` and `counts` are the sort's scratch buffers.
fn unique_and_set(hashes: &mut Vec<u64>, tmp: &mut Vec<u64>, counts: &mut Vec<u32>) -> Vec<u32> {
    sort_low32(hashes, tmp, counts);
    let mut set: Vec<u32> = Vec::with_capacity(hashes.len());
    let (mut w, mut i) = (0usize, 0usize);
    while i < hashes.len() {
        let lo = hashes[i] as u32;
        let mut j = i + 1;
        while j < hashes.len() && hashes[j] as u32 == lo {
            j += 1;
        }
        set.push(lo);
        if j - i == 1 {
            hashes[w] = hashes[i];
            w += 1;
        } else {
            let run = &mut hashes[i..j];
            run.sort_unstable();
            let mut last = None;
            for k in i..j {
                let h = hashes[k];
                if last != Some(h) {
                    hashes[w] = h;
                    w += 1;
                    last = Some(h);
                }
            }
        }
        i = j;
    }
    hashes.truncate(w);
    set
}

/// Sorts `v` by the low 32 bits of each value (stable among equal low halves). Under 2^15 values
/// (a document of up to ~200 KB): one pass scatters them into at least as many buckets as values
/// by the top bits of the low half (the hashes are uniform: about one a bucket), then an
/// insertion sort puts each bucket in order — a bucket of `b` values costs ~b²/4 moves; past 8
/// moves a value (crafted input, all in a few buckets) a comparison sort finishes instead. More
/// values: [`radix_sort_low32`]. `tmp` and `counts` are scratch.
///
/// On the long corpus (3,922 shingles a document) this took 42–47 µs a document where the radix
/// sort took 67–74 µs (the box loaded; `examples/perf --fingerprint-only`, docs/performance.md, "Fingerprinting vs `zstd -1`").
pub(crate) fn sort_low32(v: &mut Vec<u64>, tmp: &mut Vec<u64>, counts: &mut Vec<u32>) {
    let n = v.len();
    if !(64..1 << 15).contains(&n) {
        return radix_sort_low32(v, tmp);
    }
    let bits = usize::BITS - n.leading_zeros(); // 2^bits > n
    let shift = 32 - bits;
    counts.clear();
    counts.resize((1 << bits) + 1, 0);
    for &h in v.iter() {
        counts[((h as u32) >> shift) as usize + 1] += 1;
    }
    let mut sum = 0u32;
    for c in counts.iter_mut() {
        sum += *c;
        *c = sum;
    }
    tmp.clear();
    tmp.resize(n, 0);
    for &h in v.iter() {
        let slot = &mut counts[((h as u32) >> shift) as usize];
        tmp[*slot as usize] = h;
        *slot += 1;
    }
    let mut moves = 0usize;
    for i in 1..n {
        let x = tmp[i];
        let key = x as u32;
        if tmp[i - 1] as u32 <= key {
            continue;
        }
        let mut j = i;
        while j > 0 && tmp[j - 1] as u32 > key {
            tmp[j] = tmp[j - 1];
            j -= 1;
        }
        tmp[j] = x;
        moves += i - j;
        if moves > 8 * n {
            tmp.sort_by_key(|&h| h as u32);
            break;
        }
    }
    std::mem::swap(v, tmp);
}

/// Sorts `v` by the low 32 bits of each value (stable among equal low halves): least significant
/// digit first, four passes of 8 bits whose counts are taken in one read; a pass whose digit is the
/// same for every value is skipped. Short inputs are sorted by comparison.
pub(crate) fn radix_sort_low32(v: &mut Vec<u64>, tmp: &mut Vec<u64>) {
    if v.len() < 64 {
        v.sort_by_key(|&h| h as u32);
        return;
    }
    let mut counts = [[0u32; 256]; 4];
    for &h in v.iter() {
        for (d, c) in counts.iter_mut().enumerate() {
            c[(h >> (8 * d)) as usize & 0xFF] += 1;
        }
    }
    tmp.clear();
    tmp.resize(v.len(), 0);
    for (d, c) in counts.iter_mut().enumerate() {
        if c.iter().any(|&x| x as usize == v.len()) {
            continue;
        }
        let mut sum = 0u32;
        for x in c.iter_mut() {
            let n = *x;
            *x = sum;
            sum += n;
        }
        for &h in v.iter() {
            let slot = &mut c[(h >> (8 * d)) as usize & 0xFF];
            tmp[*slot as usize] = h;
            *slot += 1;
        }
        std::mem::swap(v, tmp);
    }
}

/// One-shot convenience: fingerprint `text` under `spec`.
pub fn fingerprint(spec: &FingerprintSpec, text: &str) -> Fingerprint {
    Fingerprinter::new(spec.clone()).fingerprint(text)
}

#[cfg(test)]
mod tests {
    use super::{radix_sort_low32, shingle_set, sort_low32, unique_and_set};
    use proptest::prelude::*;

    proptest! {
        /// One sort gives what the two did: the distinct hashes, and `shingle_set` of the input,
        /// also when distinct hashes share their low half (drawn from few halves to make that common).
        #[test]
        fn one_sort_gives_the_distinct_hashes_and_the_shingle_set(
            halves in proptest::collection::vec((0u64..6, 0u64..6), 0..40),
            spread in proptest::collection::vec(any::<u64>(), 0..300),
        ) {
            // Few halves (runs and collisions), then random hashes (past the radix sort's cut-off).
            let hashes: Vec<u64> = halves.iter().map(|&(hi, lo)| (hi << 32) | (lo * 0x9E37_79B9)).chain(spread.iter().copied()).chain(spread.iter().take(20).copied()).collect();
            let mut unique = hashes.clone();
            let set = unique_and_set(&mut unique, &mut Vec::new(), &mut Vec::new());
            prop_assert_eq!(&set, &shingle_set(&hashes));
            let mut want = hashes.clone();
            want.sort_unstable();
            want.dedup();
            let mut got = unique.clone();
            got.sort_unstable();
            prop_assert_eq!(got, want);
        }

        /// The bucket sort is a stable sort by the low half: on uniform hashes, on hashes crowded
        /// into a few buckets (the comparison sort finishes), and past both of its cut-offs.
        #[test]
        fn bucket_sort_is_a_stable_sort_by_the_low_half(v in proptest::collection::vec(any::<u64>(), 0..3000), crowd in 0u32..3, big in any::<bool>()) {
            // crowd 1: the low halves share their top 24 bits (one bucket); 2: their top 4.
            let mut v: Vec<u64> = v.iter().map(|&h| match crowd { 1 => h & !0xFFFF_FF00, 2 => h & !0xF000_0000, _ => h }).collect();
            if big {
                let more: Vec<u64> = (0..40_000u64).map(|i| crate::fingerprint::shingle::splitmix64(i ^ v.len() as u64)).collect();
                v.extend(more);
            }
            let mut got = v.clone();
            sort_low32(&mut got, &mut Vec::new(), &mut Vec::new());
            let mut want = v;
            want.sort_by_key(|&h| h as u32);
            prop_assert_eq!(got, want);
        }

        /// The radix sort is a stable sort by the low half, on both sides of its cut-off.
        #[test]
        fn radix_sort_is_a_stable_sort_by_the_low_half(v in proptest::collection::vec(any::<u64>(), 0..600), few in 0u64..4) {
            // `few` > 0 folds the low halves onto few values: long runs, skipped passes.
            let v: Vec<u64> = v.iter().map(|&h| if few > 0 { h & !0xFFFF_FFFF | (h % few) } else { h }).collect();
            let mut got = v.clone();
            radix_sort_low32(&mut got, &mut Vec::new());
            let mut want = v;
            want.sort_by_key(|&h| h as u32);
            prop_assert_eq!(got, want);
        }
    }
}
