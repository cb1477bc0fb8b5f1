//! Henzinger's Algorithm C: Charikar's random projection, `bits` (384) bits.
//!
//! Every token (a maximal alphanumeric run of the normalized text) is hashed once,
//! `h = xxh3_64_with_seed(token, derive(seed, TOKEN_DOMAIN, 0))`; its fixed ±1 vector is the `bits`
//! bits of the words `splitmix64(h ^ derive(seed, WORD_DOMAIN, w))`, `w = 0..bits/64` (bit set = +1,
//! clear = −1). The page vector sums the vectors of the token *sequence* (every occurrence counts:
//! term frequency, no IDF); a positive entry gives bit 1, zero or negative gives 0. Word `w` of the
//! result is therefore exactly the 64-bit SimHash (crate's [`simhash`], tie
//! → 0) of the occurrence list of derived words `w`, which is how it is computed.
//!
//! C-similarity = agreeing bits ([`agreeing_bits`](super::similarity::agreeing_bits)); the paper's
//! near-duplicates agree on at least 372 of 384 (at most 12 differ).

use super::broder::derive;
use super::params::CharikarParams;
use super::shingle::splitmix64;
use super::simhash::simhash;

const TOKEN_DOMAIN: u64 = 0x6368_6172_696b_5f74; // "charik_t"
const WORD_DOMAIN: u64 = 0x6368_6172_696b_5f77; // "charik_w"

/// Appends the `bits / 64` words of the projection of `normalized` to `out`. `tokens` and `derived`
/// are scratch space. A text with no token gives all-zero words.
pub fn sketch(p: &CharikarParams, seed: u64, normalized: &str, tokens: &mut Vec<u64>, derived: &mut Vec<u64>, out: &mut Vec<u64>) {
    super::word_shingles(normalized, 1, derive(seed, TOKEN_DOMAIN, 0), tokens);
    for w in 0..u64::from(p.bits / 64) {
        let k = derive(seed, WORD_DOMAIN, w);
        derived.clear();
        derived.extend(tokens.iter().map(|&h| splitmix64(h ^ k)));
        out.push(simhash(derived));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::normalize::normalize;
    use crate::fingerprint::similarity::agreeing_bits;
    use xxhash_rust::xxh3::xxh3_64_with_seed;

    fn proj(text: &str) -> Vec<u64> {
        let mut out = Vec::new();
        sketch(
            &CharikarParams::default(),
            11,
            &normalize(text),
            &mut Vec::new(),
            &mut Vec::new(),
            &mut out,
        );
        out
    }

    /// The definition, bit by bit: Σ over the token sequence of ±1, positive → 1.
    fn reference(text: &str, bits: u32, seed: u64) -> Vec<u64> {
        let norm = normalize(text);
        let mut out = vec![0u64; bits as usize / 64];
        for (w, word) in out.iter_mut().enumerate() {
            for b in 0..64 {
                let sum: i64 = norm
                    .split(' ')
                    .filter(|t| !t.is_empty())
                    .map(|t| {
                        let h = xxh3_64_with_seed(t.as_bytes(), derive(seed, TOKEN_DOMAIN, 0));
                        if splitmix64(h ^ derive(seed, WORD_DOMAIN, w as u64)) >> b & 1 == 1 {
                            1
                        } else {
                            -1
                        }
                    })
                    .sum();
                if sum > 0 {
                    *word |= 1 << b;
                }
            }
        }
        out
    }

    #[test]
    fn equals_the_bitwise_definition_with_term_frequencies() {
        for text in ["the quick brown fox jumps over the lazy dog the end", "a a a b", "one", "x y"] {
            assert_eq!(proj(text), reference(text, 384, 11), "{text}");
        }
    }

    #[test]
    fn order_is_ignored_frequency_is_not() {
        assert_eq!(proj("alpha beta gamma delta"), proj("delta gamma beta alpha"));
        assert_ne!(proj("alpha beta gamma delta"), proj("alpha alpha alpha beta gamma delta"));
        assert_eq!(proj("alpha beta").len(), 6);
        let long: String = (0..500).map(|i| format!("t{i} ")).collect();
        let edited = long.replacen("t250 ", "changed ", 1);
        assert!(agreeing_bits(&proj(&long), &proj(&edited)) >= 372);
    }
}
