//! Helpers shared by the integration tests: deterministic text generation and edits.
#![allow(dead_code)]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A fixed vocabulary of 3,000 pseudo-words.
pub fn vocab() -> Vec<String> {
    let syll = [
        "ka", "lo", "mi", "ne", "ru", "ta", "so", "vi", "de", "pa", "xe", "zu", "ba", "ho", "gi", "fe",
    ];
    let mut rng = StdRng::seed_from_u64(1);
    (0..3000)
        .map(|_| {
            (0..rng.gen_range(1..4))
                .map(|_| syll[rng.gen_range(0..syll.len())])
                .collect::<String>()
        })
        .collect()
}

/// A passage of `n` words drawn with `seed`.
pub fn passage(vocab: &[String], n: usize, seed: u64) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| vocab[rng.gen_range(0..vocab.len())].clone()).collect()
}

/// Replaces `changes` words at random positions.
pub fn edit(vocab: &[String], words: &[String], changes: usize, seed: u64) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut w = words.to_vec();
    for _ in 0..changes {
        let i = rng.gen_range(0..w.len());
        w[i] = vocab[rng.gen_range(0..vocab.len())].clone();
    }
    w
}

pub fn text(words: &[String]) -> String {
    words.join(" ")
}
