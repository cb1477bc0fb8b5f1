//! Step 2 of the data path: normalized text → shingle hashes.
//!
//! * Word shingles: every window of `n` consecutive tokens; under the `xxh3-64` hash its hash is
//!   `xxh3_64_with_seed(bytes of the n tokens joined by one space, seed)` — a byte range of the
//!   normalized string, hashed in place; under `word-mix`, the combination of its words' hashes
//!   ([`crate::fingerprint::wordmix`]).
//! * Char shingles: every window of `n` consecutive characters of the normalized string (spaces
//!   included). A polynomial rolling hash over the code points (`h = h·B + c mod 2^64`, `B` =
//!   [`ROLL_BASE`]) is updated in O(1) per window and finished with `splitmix64(h ^ seed)`.
//! * A text with at least one token but fewer than `n` units yields one shingle covering all of it; a
//!   text with no token yields none.
//!
//! The 64-bit hashes of all occurrences feed the SimHash; the shingle *set* keeps the low 32 bits,
//! sorted and unique.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::fingerprint::params::{HashKind, ShingleUnit};
use crate::fingerprint::spec::FingerprintSpec;

/// Base of the character rolling hash (an odd 64-bit constant).
pub const ROLL_BASE: u64 = 0x0000_0100_0000_01B3;

/// The splitmix64 finalizer: a fixed bijective mixer of 64-bit values.
#[inline]
pub fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Appends the 64-bit hash of every shingle occurrence of `normalized` to `out` (cleared first).
pub fn shingle_hashes(spec: &FingerprintSpec, normalized: &str, out: &mut Vec<u64>) {
    out.clear();
    if normalized.is_empty() {
        return;
    }
    let n = spec.n.max(1) as usize;
    match spec.unit {
        ShingleUnit::Word => match spec.hash {
            HashKind::Xxh3_64 => word_hashes(normalized, n, spec.seed, out),
            HashKind::WordMix => crate::fingerprint::wordmix::hashes_normalized(normalized, n as u32, spec.seed, out),
        },
        ShingleUnit::Char => char_hashes(normalized, n, spec.seed, out),
    }
}

/// Word shingle hashes of `normalized` with `n` words and `seed` (fpdb's word shingles, `out`
/// cleared first); shared by the methods' sketches.
pub fn word_shingle_hashes(normalized: &str, n: u32, seed: u64, out: &mut Vec<u64>) {
    out.clear();
    if !normalized.is_empty() {
        word_hashes(normalized, (n.max(1) as usize).min(RING), seed, out);
    }
}

/// Word shingles in one pass over the bytes: the starts of the last `n` tokens are kept in a
/// ring, and each space (the end of a token) hashes the window that ends there.
fn word_hashes(s: &str, n: usize, seed: u64, out: &mut Vec<u64>) {
    let b = s.as_bytes();
    debug_assert!((1..=RING).contains(&n));
    let n = n.min(RING);
    out.reserve(b.len() / 6 + 1);
    let mut ring = [0usize; RING];
    // `count` tokens have started; token t starts at ring[t % RING] (the last RING of them).
    let mut count = 1usize;
    let mut space = |p: usize| {
        // Token count - 1 ends at p; the window of tokens count - n ..= count - 1 is complete.
        if count >= n {
            out.push(xxh3_64_with_seed(&b[ring[(count - n) % RING]..p], seed));
        }
        ring[count % RING] = p + 1;
        count += 1;
    };
    // The spaces of each 64 bytes as one bit mask (the compare vectorizes), then its set bits in
    // order: one unpredictable branch per 64 bytes instead of one per token.
    let mut chunks = b.chunks_exact(64);
    let mut base = 0usize;
    for c in &mut chunks {
        let mut mask = 0u64;
        for (i, &x) in c.iter().enumerate() {
            mask |= u64::from(x == b' ') << i;
        }
        while mask != 0 {
            space(base + mask.trailing_zeros() as usize);
            mask &= mask - 1;
        }
        base += 64;
    }
    for (i, &x) in chunks.remainder().iter().enumerate() {
        if x == b' ' {
            space(base + i);
        }
    }
    let start = if count >= n { ring[(count - n) % RING] } else { 0 };
    out.push(xxh3_64_with_seed(&b[start..], seed));
}

/// The longest word shingle (`FingerprintSpec::validate` refuses longer ones).
const RING: usize = 32;

fn char_hashes(s: &str, n: usize, seed: u64, out: &mut Vec<u64>) {
    let chars: Vec<u64> = s.chars().map(|c| c as u64).collect();
    let window = n.min(chars.len());
    // B^(window-1), the weight of the character leaving the window.
    let top = (1..window).fold(1u64, |acc, _| acc.wrapping_mul(ROLL_BASE));
    let mut h = 0u64;
    for &c in &chars[..window] {
        h = h.wrapping_mul(ROLL_BASE).wrapping_add(c);
    }
    out.reserve(chars.len() + 1 - window);
    out.push(splitmix64(h ^ seed));
    for i in window..chars.len() {
        h = h
            .wrapping_sub(chars[i - window].wrapping_mul(top))
            .wrapping_mul(ROLL_BASE)
            .wrapping_add(chars[i]);
        out.push(splitmix64(h ^ seed));
    }
}

/// The shingle set: low 32 bits of each hash, sorted and unique.
pub fn shingle_set(hashes: &[u64]) -> Vec<u32> {
    let mut set: Vec<u32> = hashes.iter().map(|&h| h as u32).collect();
    set.sort_unstable();
    set.dedup();
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::normalize::normalize;

    /// Word n-grams under the xxh3-64 hash (whatever the default hash).
    fn xxh3_words(n: u32) -> FingerprintSpec {
        FingerprintSpec {
            hash: HashKind::Xxh3_64,
            ..FingerprintSpec::words(n)
        }
    }

    fn hashes(spec: &FingerprintSpec, text: &str) -> Vec<u64> {
        let mut out = Vec::new();
        shingle_hashes(spec, &normalize(text), &mut out);
        out
    }

    #[test]
    fn word_trigrams_hash_the_joined_tokens() {
        let spec = xxh3_words(3);
        let h = hashes(&spec, "The quick brown fox jumps");
        assert_eq!(h.len(), 3);
        assert_eq!(h[0], xxh3_64_with_seed(b"the quick brown", spec.seed));
        assert_eq!(h[2], xxh3_64_with_seed(b"brown fox jumps", spec.seed));
    }

    /// The windows as the first version computed them: every token's start, then one hash per
    /// window of `n` tokens.
    fn word_hashes_reference(s: &str, n: usize, seed: u64) -> Vec<u64> {
        let b = s.as_bytes();
        let mut starts = vec![0usize];
        starts.extend(b.iter().enumerate().filter(|(_, &c)| c == b' ').map(|(i, _)| i + 1));
        let tokens = starts.len();
        let end_of = |i: usize| if i + 1 < tokens { starts[i + 1] - 1 } else { b.len() };
        if tokens < n {
            return vec![xxh3_64_with_seed(b, seed)];
        }
        (0..=tokens - n)
            .map(|i| xxh3_64_with_seed(&b[starts[i]..end_of(i + n - 1)], seed))
            .collect()
    }

    proptest::proptest! {
        /// The one-pass ring gives the windows of the reference, for every n up to 32.
        #[test]
        fn ring_windows_equal_the_reference(words in proptest::collection::vec("[a-c]{1,3}", 1..80), n in 1u32..=32) {
            let text = words.join(" ");
            let spec = xxh3_words(n);
            let mut got = Vec::new();
            shingle_hashes(&spec, &text, &mut got);
            proptest::prop_assert_eq!(got, word_hashes_reference(&text, n as usize, spec.seed));
        }
    }

    #[test]
    fn short_text_gives_one_shingle_and_empty_text_none() {
        let spec = xxh3_words(3);
        assert_eq!(hashes(&spec, "two words"), vec![xxh3_64_with_seed(b"two words", spec.seed)]);
        assert!(hashes(&spec, "  ...  ").is_empty());
    }

    #[test]
    fn rolling_char_hash_equals_direct_window_hash() {
        let spec = FingerprintSpec::chars(5);
        let norm = normalize("Rolling hashes, über alles!");
        let mut got = Vec::new();
        shingle_hashes(&spec, &norm, &mut got);
        let chars: Vec<u64> = norm.chars().map(|c| c as u64).collect();
        let direct: Vec<u64> = chars
            .windows(5)
            .map(|w| splitmix64(w.iter().fold(0u64, |h, &c| h.wrapping_mul(ROLL_BASE).wrapping_add(c)) ^ spec.seed))
            .collect();
        assert_eq!(got, direct);
    }

    #[test]
    fn shingle_set_is_sorted_unique_low_bits() {
        assert_eq!(shingle_set(&[0x1_0000_0005, 3, 5, 0xFFFF_FFFF_0000_0003]), vec![3, 5]);
    }
}
