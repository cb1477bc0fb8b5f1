//! The `word-mix` shingle hash (spec `hash` = [`HashKind::WordMix`](super::params::HashKind)):
//! each word of the normalized text is hashed once and a shingle's hash combines the hashes of its
//! `n` words, instead of hashing the shingle's bytes (`xxh3-64`, which reads every word `n` times).
//!
//! Definitions (all integers little-endian u64, wrapping; `mum(a, b)` = the low 64 bits xor the
//! high 64 bits of the 128-bit product `a·b`; `P0..P5` the constants below):
//! * **word hash** of a token's bytes `t` (a token of the normalized text, which never holds a zero
//!   byte, so zero padding is unambiguous): cut `t` into 16-byte chunks, the last zero-padded;
//!   chunk `k` is the pair `(a_k, b_k)` of its two 8-byte halves. `h = mum(a_0 ^ seed ^ P0, b_0 ^
//!   P1)`, then for each further chunk `h = mum(a_k ^ h ^ P2, b_k ^ P3)`.
//! * **shingle hash** of the word hashes `w_0 … w_{m-1}` (`m` = `n`, or the number of words of a
//!   text with fewer than `n`): `h = w_0 ^ seed`; with `m = 1` the hash is `mum(h ^ P4, P5)`;
//!   otherwise for each `j ≥ 1`, `h = mum(h ^ P4, w_j ^ P5)`.
//!
//! The shingles are those of `xxh3-64` (every window of `n` words; a text with fewer words gives
//! one shingle of all of them; a text with no token none), so only the hash values differ.
//!
//! Two ways to the same hashes (tested against each other): from the normalized text
//! ([`hashes_normalized`]), and, for an ASCII text, straight from its bytes (`hashes_ascii`) —
//! normalize, tokenize and hash in one pass: the bytes classified 64 at a time into a mask of
//! letters and digits ([`super::kernels::alnum_masks`]), each token found
//! by the mask's transitions and hashed from the text's bytes, lower-cased by setting bit 5 (the
//! ASCII letters' case bit, already set in the digits). Only a token ending in `-` is looked at
//! byte by byte (the normalizer's line-break join, rule 4).

use super::kernels;
use super::normalize::{for_each_piece, Piece};

const P0: u64 = 0xa076_1d64_78bd_642f;
const P1: u64 = 0xe703_7ed1_a0b4_28db;
const P2: u64 = 0x8ebc_6af0_9c88_c6e3;
const P3: u64 = 0x5899_65cc_7537_4cc3;
const P4: u64 = 0x1d8e_4e27_c47d_124f;
const P5: u64 = 0x9e37_79b9_7f4a_7c15;

/// `MASKS[k]`: the low `k` bytes set (k = 0..=8).
const MASKS: [u64; 9] = {
    let mut t = [0u64; 9];
    let mut k = 1;
    while k < 9 {
        t[k] = u64::MAX >> (64 - 8 * k);
        k += 1;
    }
    t
};

#[inline(always)]
fn mum(a: u64, b: u64) -> u64 {
    let r = u128::from(a) * u128::from(b);
    (r as u64) ^ ((r >> 64) as u64)
}

/// The 8 bytes from `i` (zero-padded past the end of `b`).
#[inline(always)]
fn le8(b: &[u8], i: usize) -> u64 {
    match b.get(i..i + 8) {
        Some(w) => u64::from_le_bytes(w.try_into().unwrap_or([0; 8])),
        None => {
            let mut w = [0u8; 8];
            let rest = b.get(i..).unwrap_or(&[]);
            w[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(w)
        }
    }
}

/// The word hash of a token's bytes (module docs).
pub fn word_hash(token: &[u8], seed: u64) -> u64 {
    let mut h = mum(chunk_half(token, 0) ^ seed ^ P0, chunk_half(token, 8) ^ P1);
    let mut k = 16;
    while k < token.len() {
        h = mum(chunk_half(token, k) ^ h ^ P2, chunk_half(token, k + 8) ^ P3);
        k += 16;
    }
    h
}

/// The 8 bytes of `t` from `i`, zero-padded (those past `t`'s end are zero).
#[inline(always)]
fn chunk_half(t: &[u8], i: usize) -> u64 {
    le8(t, i) & MASKS[t.len().saturating_sub(i).min(8)]
}

/// The word hash of the token `b[s..e]`, lower-cased by or-ing `case` (0x20 in every byte for
/// ASCII letters and digits, 0 for normalized text) into its bytes.
#[inline(always)]
fn word_at(b: &[u8], s: usize, e: usize, case: u64, seed: u64) -> u64 {
    let len = e - s;
    if len <= 16 && s + 16 <= b.len() {
        let (m0, m1) = (MASKS[len.min(8)], MASKS[len.saturating_sub(8)]);
        let a = (le8(b, s) | case) & m0;
        let c = (le8(b, s + 8) | case) & m1;
        return mum(a ^ seed ^ P0, c ^ P1);
    }
    word_at_cold(&b[s..e], case as u8, seed)
}

/// [`word_at`] of a token longer than 16 bytes or near the end of its text.
#[cold]
#[inline(never)]
fn word_at_cold(t: &[u8], case: u8, seed: u64) -> u64 {
    if case == 0 {
        return word_hash(t, seed);
    }
    let lower: Vec<u8> = t.iter().map(|&x| x | case).collect();
    word_hash(&lower, seed)
}

/// Scratch buffers of [`hashes`], reused between texts.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    masks: Vec<u64>,
    words: Vec<u64>,
    joined: Vec<u8>,
}

/// The shingle hashes of the word hashes `words`, into `out` (cleared first): every window of `n`
/// (1..=32), or one of all of them when there are fewer (module docs).
fn windows(words: &[u64], n: u32, seed: u64, out: &mut Vec<u64>) {
    out.clear();
    if words.is_empty() {
        return;
    }
    let m = (n.max(1) as usize).min(words.len());
    // Written into place (no capacity check a shingle).
    out.resize(words.len() + 1 - m, 0);
    let slots = out.iter_mut();
    match m {
        // The default trigrams, unrolled.
        3 => slots
            .zip(words.windows(3))
            .for_each(|(o, w)| *o = mum(mum(w[0] ^ seed ^ P4, w[1] ^ P5) ^ P4, w[2] ^ P5)),
        1 => slots.zip(words).for_each(|(o, &w)| *o = mum(w ^ seed ^ P4, P5)),
        _ => slots
            .zip(words.windows(m))
            .for_each(|(o, w)| *o = w[1..].iter().fold(w[0] ^ seed, |h, &x| mum(h ^ P4, x ^ P5))),
    }
}

/// The shingle hashes of a normalized text (tokens joined by one space) into `out` (cleared first).
pub fn hashes_normalized(normalized: &str, n: u32, seed: u64, out: &mut Vec<u64>) {
    let mut words = Vec::new();
    normalized_words(normalized.as_bytes(), seed, &mut words);
    windows(&words, n, seed, out);
}

/// The shingle hashes of `text` normalized by normalizer `version`, into `out` (cleared first):
/// the same as [`hashes_normalized`] of the normalized text, without writing it — each ASCII
/// stretch tokenized and hashed from its bytes (`ascii_words`), the normalized Unicode pieces
/// between them from theirs.
pub fn hashes(version: u32, text: &str, n: u32, seed: u64, scratch: &mut Scratch, out: &mut Vec<u64>) {
    let Scratch { masks, words, joined } = scratch;
    words.clear();
    words.reserve(text.len() / 2 + 1);
    for_each_piece(version, text, |piece| match piece {
        Piece::Ascii(b) => ascii_words(b, seed, masks, joined, words),
        Piece::Normalized(p) => normalized_words(p.as_bytes(), seed, words),
    });
    windows(words, n, seed, out);
}

/// Appends the word hashes of a normalized text or piece (tokens joined by one space; empty:
/// none) to `words`.
fn normalized_words(b: &[u8], seed: u64, words: &mut Vec<u64>) {
    if b.is_empty() {
        return;
    }
    words.reserve(b.len() / 2 + 1);
    let mut start = 0usize;
    // The spaces of each 64 bytes as one mask, then its set bits in order.
    let mut base = 0usize;
    for c in b.chunks(64) {
        let mut mask = 0u64;
        for (i, &x) in c.iter().enumerate() {
            mask |= u64::from(x == b' ') << i;
        }
        while mask != 0 {
            let p = base + mask.trailing_zeros() as usize;
            words.push(word_at(b, start, p, 0, seed));
            start = p + 1;
            mask &= mask - 1;
        }
        base += 64;
    }
    words.push(word_at(b, start, b.len(), 0, seed));
}

/// Appends the word hashes of an ASCII stretch to `words`, read straight from its bytes: those of
/// its normalized form (`normalize::tokens_ascii`). The letters and digits of each 64 bytes as one
/// mask ([`kernels::alnum_masks`]); a token starts at a letter or digit after anything else and
/// ends at anything else after one; the starts and ends of each 64 bytes are paired in order (a
/// token still open at the end of a block is carried into the next). A token followed by `-` may
/// go on after a line break (rule 4): its lower-cased pieces are gathered in `joined`.
fn ascii_words(text: &[u8], seed: u64, masks: &mut Vec<u64>, joined: &mut Vec<u8>, words: &mut Vec<u64>) {
    const CASE: u64 = 0x2020_2020_2020_2020;
    debug_assert!(text.is_ascii());
    kernels::alnum_masks(text, masks);
    words.reserve(text.len() / 2 + 1);
    joined.clear();
    let (mut start, mut open, mut carry) = (0usize, false, 0u64);
    for (k, &m) in masks.iter().enumerate() {
        let before = m << 1 | carry;
        carry = m >> 63;
        let mut starts = m & !before;
        let mut ends = !m & before;
        let base = 64 * k;
        while ends != 0 {
            let s = if open {
                open = false;
                start
            } else {
                let s = base + starts.trailing_zeros() as usize;
                starts &= starts - 1;
                s
            };
            let e = base + ends.trailing_zeros() as usize;
            ends &= ends - 1;
            if text.get(e) != Some(&b'-') && joined.is_empty() {
                words.push(word_at(text, s, e, CASE, seed));
            } else {
                hyphen_token(text, s, e, seed, joined, words);
            }
        }
        if starts != 0 {
            start = base + starts.trailing_zeros() as usize;
            open = true;
        }
    }
    if open {
        hyphen_token(text, start, text.len(), seed, joined, words);
    }
}

/// The token `text[s..e]` when it ends in `-` or continues one that did (rule 4): its lower-cased
/// bytes are added to `joined`, and unless a line break and another token follow the hyphen, the
/// word is complete.
#[cold]
#[inline(never)]
fn hyphen_token(text: &[u8], s: usize, e: usize, seed: u64, joined: &mut Vec<u8>, words: &mut Vec<u64>) {
    joined.extend(text[s..e].iter().map(|&x| x | 0x20));
    if text.get(e) == Some(&b'-') && hyphen_join(text, e + 1) {
        return; // the token goes on at the next letter or digit
    }
    words.push(word_hash(joined, seed));
    joined.clear();
}

/// Whether the whitespace from `i` on holds a line break and is followed by a letter or digit:
/// then a token ending in the hyphen just before `i` continues there (normalizer rule 4).
fn hyphen_join(b: &[u8], mut i: usize) -> bool {
    let mut newline = false;
    while let Some(&c) = b.get(i) {
        if c == b'\n' {
            newline = true;
        } else if !(c as char).is_whitespace() {
            return newline && c.is_ascii_alphanumeric();
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::normalize::normalize_into_version;
    use proptest::prelude::*;

    /// The module docs' definitions, written plainly: the normalized text split at its spaces, each
    /// word hashed, each window combined.
    fn reference(normalized: &str, n: usize, seed: u64) -> Vec<u64> {
        let words: Vec<u64> = normalized
            .split(' ')
            .filter(|w| !w.is_empty())
            .map(|w| word_hash(w.as_bytes(), seed))
            .collect();
        if words.is_empty() {
            return Vec::new();
        }
        let m = n.min(words.len());
        words
            .windows(m)
            .map(|w| {
                let mut h = w[0] ^ seed;
                if m == 1 {
                    return mum(h ^ P4, P5);
                }
                for &x in &w[1..] {
                    h = mum(h ^ P4, x ^ P5);
                }
                h
            })
            .collect()
    }

    /// The word hash as the module docs define it, chunk by chunk.
    fn word_hash_reference(t: &[u8], seed: u64) -> u64 {
        let mut padded = t.to_vec();
        padded.resize(t.len().div_ceil(16).max(1) * 16, 0);
        let le = |i: usize| u64::from_le_bytes(padded[i..i + 8].try_into().unwrap());
        let mut h = mum(le(0) ^ seed ^ P0, le(8) ^ P1);
        for k in (16..padded.len()).step_by(16) {
            h = mum(le(k) ^ h ^ P2, le(k + 8) ^ P3);
        }
        h
    }

    fn normalized(version: u32, text: &str) -> String {
        let mut out = String::new();
        normalize_into_version(version, text, &mut out);
        out
    }

    fn fused(version: u32, text: &str, n: u32, seed: u64) -> Vec<u64> {
        let mut out = Vec::new();
        hashes(version, text, n, seed, &mut Scratch::default(), &mut out);
        out
    }

    /// Text with the ASCII tokenizer's hard cases (hyphens before line breaks, runs of
    /// separators, long words, upper case) and non-ASCII pieces (accents, ligatures, CJK,
    /// ignorables, Unicode hyphens).
    fn texts() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-zA-Z0-9]{1,8}",
            "[a-zA-Z0-9]{15,40}",
            "[ \\-\n\t\r.,;'()_/]{1,4}",
            "-\n[ \t]{0,2}",
            "[éÉüßﬁＡ\u{301}文字ก่\u{AD}\u{200B}\u{2010}’İ]{1,3}",
        ];
        prop::collection::vec(piece, 0..60).prop_map(|p| p.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// Straight from the text, the hashes of the normalized text, for both normalizers and
        /// any shingle length.
        #[test]
        fn the_one_pass_hashes_equal_those_of_the_normalized_text(text in texts(), n in 1u32..=32, seed in any::<u64>()) {
            for version in [1, 2] {
                let norm = normalized(version, &text);
                let mut want = Vec::new();
                hashes_normalized(&norm, n, seed, &mut want);
                prop_assert_eq!(fused(version, &text, n, seed), want.clone(), "version {}", version);
                prop_assert_eq!(want, reference(&norm, n as usize, seed));
            }
        }

        /// The in-place word hash (two loads, or the copy near the end or past 16 bytes) is the
        /// defined one, lower-casing ASCII letters and digits by bit 5.
        #[test]
        fn word_hash_in_place_equals_the_definition(word in "[a-zA-Z0-9]{1,50}", before in "[ .]{0,3}", after in "[ .]{0,20}", seed in any::<u64>()) {
            let text = format!("{before}{word}{after}");
            let (s, e) = (before.len(), before.len() + word.len());
            let lower = word.to_ascii_lowercase();
            let want = word_hash_reference(lower.as_bytes(), seed);
            prop_assert_eq!(word_hash(lower.as_bytes(), seed), want);
            prop_assert_eq!(word_at(text.as_bytes(), s, e, 0x2020_2020_2020_2020, seed), want);
            prop_assert_eq!(word_at(lower.as_bytes(), 0, lower.len(), 0, seed), want);
        }
    }

    #[test]
    fn hyphens_join_words_across_line_breaks_only() {
        let h = |t: &str| fused(2, t, 1, 7);
        assert_eq!(h("Finger-\n  PRINT data-set"), h("fingerprint data set"));
        assert_eq!(h("finger- print"), h("finger print"));
        assert_eq!(h("a-\nb-\r\nc"), h("abc"));
        assert_eq!(h("end-\n"), h("end"));
        assert_eq!(h("a -\nb"), h("a b"));
        assert!(h(" \n\t -- ").is_empty());
        // Fewer words than n: one shingle of all of them; none without a word.
        assert_eq!(fused(2, "two words", 3, 7).len(), 1);
        assert!(fused(2, "", 3, 7).is_empty());
    }

    /// The bits the SimHash sums are unbiased and the low halves the shingle set keeps spread:
    /// over 30,000 distinct trigrams of a small vocabulary (so words repeat across windows), each
    /// of the 64 bits is set in 50% ± 1.5% of the hashes (±5 standard deviations), and the low
    /// halves collide no more often than random 32-bit values would.
    #[test]
    fn shingle_hashes_have_balanced_bits() {
        let vocab: Vec<String> = (0..300).map(|i| format!("w{}", i * 7919 % 1000)).collect();
        let mut x = 12345u64;
        let words: Vec<&str> = (0..30_002)
            .map(|_| {
                // a 64-bit LCG's high bits: any fair draw of words will do
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                vocab[((x >> 33) % vocab.len() as u64) as usize].as_str()
            })
            .collect();
        let mut hs = Vec::new();
        hashes_normalized(&words.join(" "), 3, crate::fingerprint::spec::DEFAULT_SEED, &mut hs);
        hs.sort_unstable();
        hs.dedup();
        assert!(hs.len() > 29_000, "{}", hs.len());
        for b in 0..64 {
            let ones = hs.iter().filter(|&&h| h >> b & 1 == 1).count() as f64 / hs.len() as f64;
            assert!((ones - 0.5).abs() < 0.015, "bit {b}: {ones}");
        }
        let mut lows: Vec<u32> = hs.iter().map(|&h| h as u32).collect();
        lows.sort_unstable();
        lows.dedup();
        // Expected collisions among ~30,000 random 32-bit values: ~0.1.
        assert!(hs.len() - lows.len() <= 3, "{} low-half collisions", hs.len() - lows.len());
    }
}
