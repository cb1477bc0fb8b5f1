//! Henzinger's Algorithm B: supershingles (Broder et al.'s, as Henzinger runs them).
//!
//! 1. Shingles: every window of `shingle` (8) consecutive tokens of the normalized text, no wrap-around
//!    from the end to the beginning; a text with fewer tokens than that is one shingle. Each shingle
//!    is hashed like fpdb's word shingles (`xxh3_64_with_seed` of the tokens joined by one space)
//!    with seed `derive(seed, SHINGLE_DOMAIN, 0)`; only the set of distinct hashes matters.
//! 2. Min-hashing: `minhashes` (84) functions `f_i(x) = splitmix64(x ^ derive(seed, MINHASH_DOMAIN,
//!    i))`, each a fixed bijection of u64 and the same for every document; minvalue `i` = the
//!    minimum of `f_i` over the shingles.
//! 3. Supershingles: the minvalues are cut into `supershingles` (6) runs of `l = minhashes /
//!    supershingles` (14) consecutive values; supershingle `j` = `xxh3_64_with_seed(the l minvalues
//!    as little-endian u64 bytes, derive(seed, SUPER_DOMAIN, j))`.
//!
//! B-similarity = the number of positions whose supershingles are equal
//! ([`b_similarity`](super::similarity::b_similarity)); the paper's near-duplicates have at least 2.
//! The sketch is the `supershingles` values, 48 bytes with the paper's parameters.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::params::BroderParams;
use super::shingle::splitmix64;

const SHINGLE_DOMAIN: u64 = 0x6272_6f64_6572_5f73; // "broder_s"
const MINHASH_DOMAIN: u64 = 0x6272_6f64_6572_5f6d; // "broder_m"
const SUPER_DOMAIN: u64 = 0x6272_6f64_6572_5f78; // "broder_x"

/// A seed for use `i` of a domain: `splitmix64(seed ^ domain ^ splitmix64(i))`. Fixed forever.
#[inline]
pub fn derive(seed: u64, domain: u64, i: u64) -> u64 {
    splitmix64(seed ^ domain ^ splitmix64(i))
}

/// Appends the supershingles of `normalized` to `out`. `hashes` is scratch space. A text with no
/// token gives all-zero supershingles (fpdb refuses such documents before they are stored).
pub fn sketch(p: &BroderParams, seed: u64, normalized: &str, hashes: &mut Vec<u64>, out: &mut Vec<u64>) {
    super::word_shingles(normalized, p.shingle, derive(seed, SHINGLE_DOMAIN, 0), hashes);
    hashes.sort_unstable();
    hashes.dedup();
    if hashes.is_empty() {
        out.extend(std::iter::repeat_n(0, p.supershingles as usize));
        return;
    }
    let mut minvalues = Vec::with_capacity(p.minhashes as usize);
    for i in 0..p.minhashes {
        let k = derive(seed, MINHASH_DOMAIN, u64::from(i));
        let m = hashes.iter().fold(u64::MAX, |m, &x| m.min(splitmix64(x ^ k)));
        minvalues.push(m);
    }
    let l = (p.minhashes / p.supershingles) as usize;
    let mut bytes = Vec::with_capacity(8 * l);
    for (j, run) in minvalues.chunks(l).enumerate() {
        bytes.clear();
        for v in run {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        out.push(xxh3_64_with_seed(&bytes, derive(seed, SUPER_DOMAIN, j as u64)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::normalize::normalize;
    use crate::fingerprint::similarity::b_similarity;

    fn ss(text: &str) -> Vec<u64> {
        let mut out = Vec::new();
        sketch(&BroderParams::default(), 7, &normalize(text), &mut Vec::new(), &mut out);
        out
    }

    fn words(n: usize, salt: usize) -> String {
        (0..n)
            .map(|i| format!("w{}", (i * 7919 + salt) % 100_003))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn equal_texts_give_equal_sketches_order_matters_and_disjoint_texts_share_nothing() {
        let a = words(300, 0);
        assert_eq!(ss(&a).len(), 6);
        assert_eq!(ss(&a), ss(&a.to_uppercase()));
        let mut rev: Vec<&str> = a.split(' ').collect();
        rev.reverse();
        assert_eq!(
            b_similarity(&ss(&a), &ss(&rev.join(" "))),
            0,
            "same tokens, other order: other shingles"
        );
        assert_eq!(b_similarity(&ss(&a), &ss(&words(300, 50_000))), 0);
    }

    #[test]
    fn one_changed_token_in_a_long_text_keeps_most_supershingles() {
        let a = words(2000, 1);
        let mut toks: Vec<&str> = a.split(' ').collect();
        toks[1000] = "changed";
        let b = toks.join(" ");
        // 8 of ~2000 shingles differ: each supershingle survives with probability ~(1-8/2000)^14.
        assert!(b_similarity(&ss(&a), &ss(&b)) >= 4);
    }

    #[test]
    fn minvalues_are_the_minimum_of_each_function() {
        // Direct check of step 2 on a two-shingle text against the definition.
        let p = BroderParams {
            shingle: 1,
            minhashes: 2,
            supershingles: 1,
            min_shared: 1,
        };
        let mut out = Vec::new();
        sketch(&p, 3, "alpha beta", &mut Vec::new(), &mut out);
        let h: Vec<u64> = ["alpha", "beta"]
            .iter()
            .map(|w| xxh3_64_with_seed(w.as_bytes(), derive(3, SHINGLE_DOMAIN, 0)))
            .collect();
        let mins: Vec<u64> = (0..2)
            .map(|i| h.iter().map(|&x| splitmix64(x ^ derive(3, MINHASH_DOMAIN, i))).min().unwrap())
            .collect();
        let bytes: Vec<u8> = mins.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(out, vec![xxh3_64_with_seed(&bytes, derive(3, SUPER_DOMAIN, 0))]);
    }
}
