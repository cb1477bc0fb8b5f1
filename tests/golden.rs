//! Golden vectors: the fingerprints of a fixed list of texts under fixed specs. A change here means
//! every stored database would stop matching new documents — bump the normalizer version (or a spec
//! field) instead of editing these numbers.

use fpdb::fingerprint::spec::Weighting;
use fpdb::{fingerprint, FingerprintSpec};
use xxhash_rust::xxh3::xxh3_64;

const TEXTS: [&str; 8] = [
    "The quick brown fox jumps over the lazy dog.",
    "Near-duplicate documents are posted many times on the web by their authors and publishers.",
    "Near-dupli-\ncate documents are posted many times on the web by their authors and publishers!",
    "Ünïcödé ＦＵＬＬＷＩＤＴＨ text with the \u{FB01} ligature and Straße.",
    "two words",
    "CiteSeerX 2,118,122 papers; 12.84% near-duplicates (Jaccard > 0.9) at k = 8.",
    "a a a a a a a a b b b c",
    "",
];

/// (simhash, shingle count, xxh3 of the shingle set's little-endian bytes) per text.
fn vectors(spec: &FingerprintSpec) -> Vec<(u64, usize, u64)> {
    TEXTS
        .iter()
        .map(|t| {
            let fp = fingerprint(spec, t);
            let bytes: Vec<u8> = fp.shingles.iter().flat_map(|s| s.to_le_bytes()).collect();
            (fp.simhash, fp.shingles.len(), xxh3_64(&bytes))
        })
        .collect()
}

#[test]
fn default_spec_fingerprints_are_pinned() {
    let spec = FingerprintSpec::default();
    assert_eq!(spec.weighting, Weighting::Binary);
    let got = vectors(&spec);
    assert_eq!(got, GOLDEN_DEFAULT);
    // De-hyphenation and punctuation make texts 1 and 2 identical after normalization.
    assert_eq!(got[1], got[2]);
}

#[test]
fn count_weighted_and_char_spec_fingerprints_are_pinned() {
    let count = FingerprintSpec {
        weighting: Weighting::Count,
        ..FingerprintSpec::default()
    };
    let got = vectors(&count);
    assert_eq!(got, GOLDEN_COUNT);
    let chars = vectors(&FingerprintSpec::chars(5));
    assert_eq!(chars, GOLDEN_CHAR5);
}

const GOLDEN_DEFAULT: [(u64, usize, u64); 8] = [
    (0x4a3def419f28b02, 7, 0xfceb517f0d2fb371),
    (0x36415dde34eb97c7, 13, 0xb96f5956d6c2af1a),
    (0x36415dde34eb97c7, 13, 0xb96f5956d6c2af1a),
    (0x96b558ba35c80f49, 7, 0xf22df3b0b4282217),
    (0xcb0c0cb0798ffda4, 1, 0x9e80b4496338f392),
    (0xd5cfe64a0faf1869, 13, 0xf0381e1bb4d18376),
    (0xa48b67f5795dbce2, 5, 0x3cd4ad2b8e5ef4e),
    (0x0, 0, 0x2d06800538d394c2),
];
const GOLDEN_COUNT: [(u64, usize, u64); 8] = [
    (0x4a3def419f28b02, 7, 0xfceb517f0d2fb371),
    (0x36415dde34eb97c7, 13, 0xb96f5956d6c2af1a),
    (0x36415dde34eb97c7, 13, 0xb96f5956d6c2af1a),
    (0x96b558ba35c80f49, 7, 0xf22df3b0b4282217),
    (0xcb0c0cb0798ffda4, 1, 0x9e80b4496338f392),
    (0xd5cfe64a0faf1869, 13, 0xf0381e1bb4d18376),
    (0xb694e4fcb99bb901, 5, 0x3cd4ad2b8e5ef4e),
    (0x0, 0, 0x2d06800538d394c2),
];
const GOLDEN_CHAR5: [(u64, usize, u64); 8] = [
    (0xaa6fe2043ea49705, 39, 0x3111974ef4f09ca2),
    (0xd781b8835e796d13, 85, 0x8f024bf5c153005e),
    (0xd781b8835e796d13, 85, 0x8f024bf5c153005e),
    (0x5322aa0e511b4204, 50, 0x438f2ba9e44018ea),
    (0x8b38299bd77a3b33, 5, 0x58b31030e3aadd49),
    (0xfe791acbef3bf67, 63, 0xb4755eafdefdb280),
    (0x60f2270e54253b25, 8, 0x82c3b108e7a76a1),
    (0x0, 0, 0x2d06800538d394c2),
];
