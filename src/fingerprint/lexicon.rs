//! Paper 002 §3.2: multiple random lexicons. Lexicon `j` (of `lexicons`, L) keeps a word iff
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::normalize::normalize;

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
