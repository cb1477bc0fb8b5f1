//! Fan & Huang §3.2: multiple random lexicons. Lexicon `j` (of `lexicons`, L) keeps a word iff
//! `(xxh3_64_with_seed(word, derive(seed, LEXICON_DOMAIN, j)) · 1000) >> 64 < keep_permille`, an
//! independent seeded draw of about `keep_permille`‰ of the vocabulary (Kołcz et al.'s lexicon
//! randomization; the paper does not say how lexicons are drawn). For each lexicon the document's
//! tokens are filtered to the kept words, in order; the word shingles of `shingle` (2) words over
//! that sequence (hashed with the spec's seed) give one 64-bit SimHash (the crate's
//! [`simhash`], weights per the spec's `weighting`).
//!
//! Sketch: word 0 is a presence mask (bit `j` set iff the document keeps at least one word in
//! lexicon `j`), then the L SimHashes (0 for an absent lexicon). A lexicon absent from either
//! document never makes a pair a candidate.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::broder::derive;
use super::params::LexiconParams;
use super::params::Weighting;
use super::simhash::simhash;
use super::similarity::for_each_within;

const LEXICON_DOMAIN: u64 = 0x6c65_7869_636f_6e5f; // "lexicon_"

/// Whether lexicon `j` (seeded by `lexicon_seed(seed, j)`) keeps `word`.
#[inline]
pub fn keeps(lexicon_seed: u64, keep_permille: u32, word: &[u8]) -> bool {
    ((u128::from(xxh3_64_with_seed(word, lexicon_seed)) * 1000) >> 64) < u128::from(keep_permille)
}

/// The seed of lexicon `j`.
pub fn lexicon_seed(seed: u64, j: u32) -> u64 {
    derive(seed, LEXICON_DOMAIN, u64::from(j))
}

/// Appends the mask and the L SimHashes of `normalized` to `out`. `kept` and `hashes` are scratch.
pub fn sketch(
    p: &LexiconParams,
    seed: u64,
    weighting: Weighting,
    normalized: &str,
    kept: &mut String,
    hashes: &mut Vec<u64>,
    out: &mut Vec<u64>,
) {
    let mask_at = out.len();
    out.push(0);
    for j in 0..p.lexicons {
        let ls = lexicon_seed(seed, j);
        kept.clear();
        for w in normalized
            .split(' ')
            .filter(|w| !w.is_empty() && keeps(ls, p.keep_permille, w.as_bytes()))
        {
            if !kept.is_empty() {
                kept.push(' ');
            }
            kept.push_str(w);
        }
        if kept.is_empty() {
            out.push(0);
            continue;
        }
        out[mask_at] |= 1 << j;
        super::word_shingles(kept, p.shingle, seed, hashes);
        if weighting == Weighting::Binary {
            hashes.sort_unstable();
            hashes.dedup();
        }
        out.push(simhash(hashes));
    }
}

/// Multi-lexicon sketches of many documents stored by column: the masks, and one flat array per
/// lexicon of the documents' SimHashes in it. Comparing one sketch with all of them is then one
/// [`for_each_within`] scan per lexicon the query has (the kernel of the SimHash methods), not a
/// method comparison per document: the writer runs it over its batch for every document it decides.
#[derive(Clone, Debug, Default)]
pub struct LexiconColumns {
    masks: Vec<u64>,
    /// `columns[j][i]`: lexicon `j`'s SimHash of document `i` (0 where the sketch is shorter).
    columns: Vec<Vec<u64>>,
}

impl LexiconColumns {
    /// Appends the sketch `[mask, fp_0, ..]` as document `self.len()`.
    pub fn push(&mut self, sketch: &[u64]) {
        let (mask, fps) = sketch.split_first().map_or((0, &[][..]), |(m, f)| (*m, f));
        let n = self.masks.len();
        while self.columns.len() < fps.len() {
            self.columns.push(vec![0; n]);
        }
        for (j, col) in self.columns.iter_mut().enumerate() {
            col.push(fps.get(j).copied().unwrap_or(0));
        }
        self.masks.push(mask);
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.masks.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.masks.is_empty()
    }

    /// Every document `i` sharing a lexicon with `sketch` in which their SimHashes are within `k`
    /// bits (the multi-lexicon rule, [`lexicons_within`](super::similarity::lexicons_within)), once each, in increasing order, into
    /// `out` (cleared first).
    pub fn near(&self, sketch: &[u64], k: u32, out: &mut Vec<usize>) {
        out.clear();
        let Some((&mask, fps)) = sketch.split_first() else { return };
        let masks = &self.masks;
        for (j, (col, &q)) in self.columns.iter().zip(fps).enumerate() {
            if j < 64 && mask >> j & 1 == 1 {
                for_each_within(col, q, k, |i, _| {
                    if masks[i] >> j & 1 == 1 {
                        out.push(i);
                    }
                });
            }
        }
        out.sort_unstable();
        out.dedup();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::normalize::normalize;
    use crate::fingerprint::similarity::lexicons_within;
    use proptest::prelude::*;

    /// Sketches of `l` lexicons: random masks, and SimHashes each a few bits from one of four
    /// bases (so every distance up to 64 occurs); absent lexicons hold 0 or noise.
    fn sketches(l: usize, raw: &[(u64, u64, u8)]) -> Vec<Vec<u64>> {
        let bases = [0u64, u64::MAX, 0x5555_5555_5555_5555, 0x0123_4567_89ab_cdef];
        raw.iter()
            .map(|&(mask, noise, b)| {
                let mut v = vec![mask & ((1 << l) - 1)];
                v.extend((0..l).map(|j| {
                    let flips = noise.rotate_left(9 * j as u32) & noise.rotate_left(3 * j as u32 + 1);
                    bases[(b as usize + j) % 4] ^ flips
                }));
                v
            })
            .collect()
    }

    proptest! {
        #[test]
        fn columns_find_exactly_the_pairs_the_rule_accepts(
            l in 1usize..=16,
            raw in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<u8>()), 0..200),
            q in (any::<u64>(), any::<u64>(), any::<u8>()),
            k in 0u32..=40,
        ) {
            let docs = sketches(l, &raw);
            let q = sketches(l, &[q]).remove(0);
            let mut cols = LexiconColumns::default();
            docs.iter().for_each(|d| cols.push(d));
            prop_assert_eq!(cols.len(), docs.len());
            let mut got = Vec::new();
            cols.near(&q, k, &mut got);
            let rule = crate::fingerprint::similarity::Rule { max_distance: k, min_shared: 1 };
            let want: Vec<usize> = (0..docs.len())
                .filter(|&i| crate::fingerprint::similarity::MethodScore::Lexicons(
                    crate::fingerprint::similarity::lexicon_distances(&q, &docs[i])).satisfies(rule))
                .collect();
            prop_assert_eq!(&got, &want);
            for (i, d) in docs.iter().enumerate() {
                prop_assert_eq!(lexicons_within(&q, d, k), want.contains(&i));
            }
        }
    }

    fn lex(p: &LexiconParams, text: &str) -> Vec<u64> {
        let mut out = Vec::new();
        sketch(
            p,
            9,
            Weighting::Binary,
            &normalize(text),
            &mut String::new(),
            &mut Vec::new(),
            &mut out,
        );
        out
    }

    #[test]
    fn lexicons_keep_about_their_share_and_differ() {
        let p = LexiconParams::default();
        let words: Vec<String> = (0..20_000).map(|i| format!("word{i}")).collect();
        for j in 0..p.lexicons {
            let kept = words
                .iter()
                .filter(|w| keeps(lexicon_seed(9, j), p.keep_permille, w.as_bytes()))
                .count();
            assert!((17_500..18_500).contains(&kept), "lexicon {j} kept {kept} of 20000 at 900‰");
        }
        let a: Vec<bool> = words.iter().map(|w| keeps(lexicon_seed(9, 0), 500, w.as_bytes())).collect();
        let b: Vec<bool> = words.iter().map(|w| keeps(lexicon_seed(9, 1), 500, w.as_bytes())).collect();
        let both = a.iter().zip(&b).filter(|(x, y)| **x && **y).count();
        assert!((4_500..5_500).contains(&both), "independent draws overlap by a quarter, got {both}");
    }

    #[test]
    fn each_lexicon_is_the_simhash_of_its_kept_words() {
        let p = LexiconParams {
            lexicons: 3,
            keep_permille: 600,
            shingle: 2,
        };
        let text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu";
        let got = lex(&p, text);
        assert_eq!(got.len(), 4);
        for j in 0..3u32 {
            let kept: Vec<&str> = text.split(' ').filter(|w| keeps(lexicon_seed(9, j), 600, w.as_bytes())).collect();
            assert_eq!(got[0] >> j & 1 == 1, !kept.is_empty());
            let mut hs = Vec::new();
            crate::fingerprint::word_shingles(&kept.join(" "), 2, 9, &mut hs);
            hs.sort_unstable();
            hs.dedup();
            assert_eq!(got[1 + j as usize], simhash(&hs), "lexicon {j}");
        }
    }

    #[test]
    fn a_lexicon_with_no_kept_word_is_absent() {
        let p = LexiconParams {
            lexicons: 16,
            keep_permille: 1,
            shingle: 2,
        };
        let got = lex(&p, "one two");
        let mut absent = 0;
        for j in 0..16u32 {
            let kept = ["one", "two"].iter().any(|w| keeps(lexicon_seed(9, j), 1, w.as_bytes()));
            assert_eq!(got[0] >> j & 1 == 1, kept, "lexicon {j}");
            if !kept {
                assert_eq!(got[1 + j as usize], 0);
                absent += 1;
            }
        }
        assert!(absent >= 14, "at 1‰ almost every lexicon drops both words");
    }
}
