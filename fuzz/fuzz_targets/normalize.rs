//! Normalizer and fingerprint invariants on arbitrary (lossily decoded) bytes.
//!
//! * `normalize` never panics; its output has no leading, trailing or double spaces and holds only
//!   alphanumeric characters and single ASCII spaces.
//! * The ASCII fast path agrees with the Unicode (NFKC) path: for an ASCII text `s`,
//!   `normalize(s + " . é")` is `normalize(s)` followed by the token `é`.
//! * Under `word:3` and `char:5`: the shingle set is strictly increasing; it is empty iff the
//!   normalized text is empty (and then the SimHash is 0); a reused `Fingerprinter` gives the same
//!   fingerprint as a fresh one (no state leaks between documents); the set and the SimHash equal
//!   what `shingle_hashes` + `shingle_set` + `simhash_reference` give; char shingles equal the direct
//!   (non-rolling) window hash.
#![no_main]

use fpdb::fingerprint::normalize::normalize;
use fpdb::fingerprint::shingle::{shingle_hashes, shingle_set, splitmix64, ROLL_BASE};
use fpdb::fingerprint::simhash::simhash_reference;
use fpdb::fingerprint::spec::{ShingleUnit, Weighting};
use fpdb::{fingerprint, FingerprintSpec, Fingerprinter};
use libfuzzer_sys::fuzz_target;

fn check_normalized(text: &str, norm: &str) {
    assert!(!norm.starts_with(' '), "leading space: {text:?} -> {norm:?}");
    assert!(!norm.ends_with(' '), "trailing space: {text:?} -> {norm:?}");
    assert!(!norm.contains("  "), "double space: {text:?} -> {norm:?}");
    for c in norm.chars() {
        assert!(c == ' ' || c.is_alphanumeric(), "char {c:?} in output: {text:?} -> {norm:?}");
    }
}

fn check_spec(spec: &FingerprintSpec, text: &str, other: &str, norm: &str) {
    let fresh = fingerprint(spec, text);
    assert!(
        fresh.shingles.windows(2).all(|w| w[0] < w[1]),
        "shingles not strictly increasing: {text:?}"
    );
    assert_eq!(fresh.shingles.is_empty(), norm.is_empty(), "empty set iff empty text: {text:?} -> {norm:?}");
    if norm.is_empty() {
        assert_eq!(fresh.simhash, 0, "empty text must have SimHash 0: {text:?}");
    }
    // Determinism, and no state carried over by a reused fingerprinter.
    let mut fpr = Fingerprinter::new(spec.clone());
    let a = fpr.fingerprint(text);
    let _ = fpr.fingerprint(other);
    let b = fpr.fingerprint(text);
    assert_eq!(a, fresh, "reused fingerprinter differs from a fresh one: {text:?}");
    assert_eq!(b, fresh, "fingerprinting twice differs: {text:?} (other {other:?})");
    // Against the reference pipeline.
    let mut hashes = Vec::new();
    shingle_hashes(spec, norm, &mut hashes);
    assert_eq!(shingle_set(&hashes), fresh.shingles);
    if spec.weighting == Weighting::Binary {
        hashes.sort_unstable();
        hashes.dedup();
    }
    assert_eq!(simhash_reference(&hashes), fresh.simhash, "SimHash differs from the reference: {text:?}");
    if spec.unit == ShingleUnit::Char {
        let chars: Vec<u64> = norm.chars().map(|c| c as u64).collect();
        let n = (spec.n as usize).min(chars.len());
        let direct: Vec<u64> = if chars.is_empty() {
            Vec::new()
        } else {
            chars
                .windows(n)
                .map(|w| splitmix64(w.iter().fold(0u64, |h, &c| h.wrapping_mul(ROLL_BASE).wrapping_add(c)) ^ spec.seed))
                .collect()
        };
        let mut rolled = Vec::new();
        shingle_hashes(spec, norm, &mut rolled);
        assert_eq!(rolled, direct, "rolling char hash differs from the direct window hash: {norm:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let text: &str = &text;
    let norm = normalize(text);
    check_normalized(text, &norm);

    if text.is_ascii() {
        // The ASCII fast path must agree with the NFKC path. " . " stops a trailing "-\n" from
        // joining the appended token.
        let widened = format!("{text} . \u{e9}");
        let expected = if norm.is_empty() { "\u{e9}".to_string() } else { format!("{norm} \u{e9}") };
        assert_eq!(normalize(&widened), expected, "ASCII fast path disagrees with the Unicode path: {text:?}");
    }

    // Another text for the reuse check: the input's second half first.
    let mid = (0..=text.len() / 2).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    let other = format!("{} {}", &text[mid..], &text[..mid]);
    for spec in [FingerprintSpec::words(3), FingerprintSpec::chars(5)] {
        check_spec(&spec, text, &other, &norm);
    }
});
