//! Fan & Huang §3.1: SimHash over word shingles, each weighted by the sum of the IDF of its words,
//! with a **frozen** document-frequency table so fingerprints never drift as documents arrive.
//!
//! **The table** ([`IdfTable`], in [`super::idf`]) is built once from a training corpus and stored in
//! the database; the spec holds its hash.
//!
//! **The fingerprint**: the features are the word shingles of `shingle` (2) words (the same windows
//! as fpdb's word shingles, hashed with the spec's seed); a shingle weighs the sum of its words'
//! weights; bit `b` is 1 iff the weights of the features with bit `b` set outweigh the others
//! (tie → 0). Under `Weighting::Binary` each distinct shingle counts once, under `Count` every
//! occurrence.

use super::params::{WeightedParams, Weighting};

pub use super::idf::{word_key, IdfTable, WORD_SEED};

/// The weighted SimHash of `normalized` under `table` (see the module docs). `hashes` and
/// `weights` are scratch space.
pub fn simhash(
    p: &WeightedParams,
    table: &IdfTable,
    seed: u64,
    weighting: Weighting,
    normalized: &str,
    hashes: &mut Vec<u64>,
    weights: &mut Vec<u64>,
) -> u64 {
    super::word_shingles(normalized, p.shingle, seed, hashes);
    if hashes.is_empty() {
        return 0;
    }
    // Token weights, then the sliding sum over each shingle's window (one window of all the tokens
    // when there are fewer than `shingle`, as the shingles are made).
    weights.clear();
    weights.extend(normalized.split(' ').map(|w| u64::from(table.weight(w.as_bytes()))));
    let n = (p.shingle as usize).min(weights.len());
    let mut win: u64 = weights[..n].iter().sum();
    let mut feats: Vec<(u64, u64)> = Vec::with_capacity(hashes.len());
    feats.push((hashes[0], win));
    for (i, &h) in hashes.iter().enumerate().skip(1) {
        win = win + weights[i + n - 1] - weights[i - 1];
        feats.push((h, win));
    }
    if weighting == Weighting::Binary {
        feats.sort_unstable();
        feats.dedup_by_key(|f| f.0);
    }
    let mut ones = [0u64; 64];
    let mut total = 0u64;
    for &(h, w) in &feats {
        total += w;
        for (b, o) in ones.iter_mut().enumerate() {
            *o += w * (h >> b & 1);
        }
    }
    ones.iter()
        .enumerate()
        .fold(0u64, |fp, (b, &o)| if 2 * o > total { fp | 1 << b } else { fp })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::params::IdfHandle;
    use xxhash_rust::xxh3::xxh3_64_with_seed;

    fn table() -> IdfTable {
        IdfTable::from_texts(["the cat sat", "the dog sat", "the bird flew", "The cat ran"])
    }

    fn params(t: &IdfTable, shingle: u32) -> WeightedParams {
        WeightedParams {
            shingle,
            idf_hash: t.hash(),
            idf: IdfHandle(None),
        }
    }

    /// The definition: per bit, Σ ± (sum of the words' weights) over the distinct shingles.
    fn reference(t: &IdfTable, text: &str, n: usize, seed: u64) -> u64 {
        let toks: Vec<&str> = text.split(' ').collect();
        let n = n.min(toks.len());
        let mut feats: Vec<(u64, i64)> = (0..=toks.len() - n)
            .map(|i| {
                let s = toks[i..i + n].join(" ");
                let w: u32 = toks[i..i + n].iter().map(|w| t.weight(w.as_bytes())).sum();
                (xxh3_64_with_seed(s.as_bytes(), seed), i64::from(w))
            })
            .collect();
        feats.sort_unstable();
        feats.dedup_by_key(|f| f.0);
        (0..64).fold(0u64, |fp, b| {
            let s: i64 = feats.iter().map(|&(h, w)| if h >> b & 1 == 1 { w } else { -w }).sum();
            if s > 0 {
                fp | 1 << b
            } else {
                fp
            }
        })
    }

    #[test]
    fn equals_the_definition() {
        let t = table();
        for (text, n) in [
            ("the cat sat on the mat with the dog", 2),
            ("the cat sat on the mat", 3),
            ("cat", 2),
            ("the the the cat", 1),
        ] {
            let got = simhash(&params(&t, n), &t, 5, Weighting::Binary, text, &mut Vec::new(), &mut Vec::new());
            assert_eq!(got, reference(&t, text, n as usize, 5), "{text} n={n}");
        }
        assert_eq!(
            simhash(&params(&t, 2), &t, 5, Weighting::Binary, "", &mut Vec::new(), &mut Vec::new()),
            0
        );
    }
}
