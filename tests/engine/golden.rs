//! Golden vectors: the fingerprints of a fixed list of texts under fixed specs. A change here means
//! every stored database would stop matching new documents — bump the normalizer version (or a spec
//! field) instead of editing these numbers. Each spec is named in full (the `xxh3-64` hash of the
//! databases made before `word-mix`, or `word-mix`), so that a new default moves none of them.

use fpdb::fingerprint::spec::{HashKind, Weighting};
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

/// (simhash, shingle count, xxh3 of the shingle set's little-endian bytes) per text of [`TEXTS`].
fn vectors(spec: &FingerprintSpec) -> Vec<(u64, usize, u64)> {
    vectors_of(spec, &TEXTS)
}

/// The default spec with the `xxh3-64` hash.
fn xxh3() -> FingerprintSpec {
    FingerprintSpec {
        hash: HashKind::Xxh3_64,
        ..FingerprintSpec::default()
    }
}

/// The default spec with the `word-mix` hash.
fn word_mix() -> FingerprintSpec {
    FingerprintSpec {
        hash: HashKind::WordMix,
        ..FingerprintSpec::default()
    }
}

/// The same for any list of texts.
fn vectors_of(spec: &FingerprintSpec, texts: &[&str]) -> Vec<(u64, usize, u64)> {
    texts
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
    let spec = xxh3();
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
        ..xxh3()
    };
    let got = vectors(&count);
    assert_eq!(got, GOLDEN_COUNT);
    let chars = vectors(&FingerprintSpec::chars(5));
    assert_eq!(chars, GOLDEN_CHAR5);
}

#[test]
fn word_mix_fingerprints_are_pinned() {
    let got = vectors(&word_mix());
    assert_eq!(got, GOLDEN_WORD_MIX);
    assert_eq!(got[1], got[2]);
    let count = vectors(&FingerprintSpec {
        weighting: Weighting::Count,
        ..word_mix()
    });
    assert_eq!(count, GOLDEN_WORD_MIX_COUNT);
    // The same shingles as xxh3-64 (so the same set sizes), other hash values.
    let old = vectors(&xxh3());
    for (a, b) in got.iter().zip(&old) {
        assert_eq!(a.1, b.1);
    }
    assert_ne!(got[0].0, old[0].0);
    // Word 5-grams, and a sketch method (its SimHash from the normalized text's word-mix hashes).
    let five = vectors(&FingerprintSpec { n: 5, ..word_mix() });
    assert_eq!(five, GOLDEN_WORD_MIX_5);
    let broder = FingerprintSpec {
        method: "broder".parse().unwrap(),
        ..word_mix()
    };
    let b: Vec<u64> = TEXTS.iter().map(|t| fingerprint(&broder, t).simhash).collect();
    assert_eq!(b, got.iter().map(|g| g.0).collect::<Vec<_>>());
}

const GOLDEN_WORD_MIX: [(u64, usize, u64); 8] = [
    (0xdd7258a1d6a65a79, 7, 0xcad7ca8defb83c12),
    (0xa37e3d85355fd1df, 13, 0x1fb6785ce4c34b01),
    (0xa37e3d85355fd1df, 13, 0x1fb6785ce4c34b01),
    (0x6ab064f7f40b4ca9, 7, 0xc32f1c78ecb423dd),
    (0xf790a97fb0114625, 1, 0xfe82082ec1289239),
    (0x9b2c6e2daa1a947e, 13, 0x44fc3735de2a1653),
    (0x79a9c9a438904404, 5, 0x1ef6b7e4fa4398dc),
    (0x0, 0, 0x2d06800538d394c2),
];
const GOLDEN_WORD_MIX_COUNT: [(u64, usize, u64); 8] = [
    (0xdd7258a1d6a65a79, 7, 0xcad7ca8defb83c12),
    (0xa37e3d85355fd1df, 13, 0x1fb6785ce4c34b01),
    (0xa37e3d85355fd1df, 13, 0x1fb6785ce4c34b01),
    (0x6ab064f7f40b4ca9, 7, 0xc32f1c78ecb423dd),
    (0xf790a97fb0114625, 1, 0xfe82082ec1289239),
    (0x9b2c6e2daa1a947e, 13, 0x44fc3735de2a1653),
    (0x7925d8d218c8dd7c, 5, 0x1ef6b7e4fa4398dc),
    (0x0, 0, 0x2d06800538d394c2),
];
const GOLDEN_WORD_MIX_5: [(u64, usize, u64); 8] = [
    (0x7bb4d4164de7dcf3, 5, 0x3fd4e9cf1cdbd998),
    (0xa667ed0a556213e2, 11, 0x41306874237bf14a),
    (0xa667ed0a556213e2, 11, 0x41306874237bf14a),
    (0x6448a5102b861c2b, 5, 0x1d00d14f9b304658),
    (0xf790a97fb0114625, 1, 0xfe82082ec1289239),
    (0x95d5baa18b35a014, 11, 0x5a5f482f2c77b9d9),
    (0x3380a4b7f32fd278, 5, 0x2413c9312d5b13c1),
    (0x0, 0, 0x2d06800538d394c2),
];

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

// method: the other methods' sketches (fingerprint/method.rs), pinned the same way: per text, the
// SimHash and the xxh3 of the sketch's little-endian bytes (and the sketch length).

mod methods {
    use super::TEXTS;
    use fpdb::fingerprint;
    use fpdb::fingerprint::method::{IdfHandle, LexiconParams, Method};
    use fpdb::fingerprint::weighted::IdfTable;
    use std::sync::Arc;
    use xxhash_rust::xxh3::xxh3_64;

    fn vectors(method: Method) -> Vec<(u64, usize, u64)> {
        let spec = super::xxh3().with_method(method);
        TEXTS
            .iter()
            .map(|t| {
                let fp = fingerprint(&spec, t);
                let bytes: Vec<u8> = fp.sketch.iter().flat_map(|s| s.to_le_bytes()).collect();
                (fp.simhash, fp.sketch.len(), xxh3_64(&bytes))
            })
            .collect()
    }

    fn named(name: &str) -> Method {
        name.parse().unwrap()
    }

    /// The training corpus of the pinned IDF table: the texts themselves plus three more.
    fn idf() -> Arc<IdfTable> {
        Arc::new(IdfTable::from_texts(TEXTS.iter().copied().chain([
            "the fox and the dog",
            "documents on the web",
            "the lazy days",
        ])))
    }

    #[test]
    fn broder_charikar_and_combined_sketches_are_pinned() {
        assert_eq!(vectors(named("broder")), GOLDEN_BRODER);
        assert_eq!(vectors(named("charikar")), GOLDEN_CHARIKAR);
        // The combined sketch is Broder's followed by Charikar's.
        let comb = vectors(named("broder-charikar"));
        assert!(comb.iter().all(|c| c.1 == 12));
        let spec = super::xxh3().with_method(named("broder-charikar"));
        let b = super::xxh3().with_method(named("broder"));
        let c = super::xxh3().with_method(named("charikar"));
        for t in TEXTS {
            let mut want = fingerprint(&b, t).sketch;
            want.extend(fingerprint(&c, t).sketch);
            assert_eq!(fingerprint(&spec, t).sketch, want);
        }
    }

    #[test]
    fn weighted_simhash_and_its_idf_table_are_pinned() {
        let table = idf();
        assert_eq!((table.docs(), table.len(), table.unseen(), table.hash()), GOLDEN_IDF);
        let got = vectors(Method::weighted(table.clone()));
        assert_eq!(got, GOLDEN_WEIGHTED);
        // Without the table the method is refused, not silently unweighted.
        let mut m = Method::weighted(table);
        if let Method::WeightedSimHash(p) = &mut m {
            p.idf = IdfHandle(None);
        }
        assert!(super::xxh3().with_method(m).validate().is_err());
    }

    #[test]
    fn multi_lexicon_sketches_are_pinned() {
        // Explicit parameters (L = 5, 700‰, bigrams), so that a new default does not move them.
        let m = Method::MultiLexicon(LexiconParams {
            lexicons: 5,
            keep_permille: 700,
            shingle: 2,
        });
        assert_eq!(vectors(m), GOLDEN_LEXICON);
    }

    const GOLDEN_IDF: (u64, usize, u32, u64) = (11, 49, 3485, 0xed84456d36c4d3c7);
    const GOLDEN_BRODER: [(u64, usize, u64); 8] = [
        (0x4a3def419f28b02, 6, 0xbafcfd0b8a351e88),
        (0x36415dde34eb97c7, 6, 0xc98179177a480a0),
        (0x36415dde34eb97c7, 6, 0xc98179177a480a0),
        (0x96b558ba35c80f49, 6, 0x6c8975ec663d5d77),
        (0xcb0c0cb0798ffda4, 6, 0xc4411d54415a29ca),
        (0xd5cfe64a0faf1869, 6, 0xa5ed89b01d5699f0),
        (0xa48b67f5795dbce2, 6, 0xd0dec8e87a33330a),
        (0x0, 6, 0xe255222d4cbbadba),
    ];
    const GOLDEN_CHARIKAR: [(u64, usize, u64); 8] = [
        (0x4a3def419f28b02, 6, 0xaf811b4c6e5aefea),
        (0x36415dde34eb97c7, 6, 0x9acf919dab6dfaf6),
        (0x36415dde34eb97c7, 6, 0x9acf919dab6dfaf6),
        (0x96b558ba35c80f49, 6, 0x550900cf80c867dc),
        (0xcb0c0cb0798ffda4, 6, 0xddbaed6d69f15bb),
        (0xd5cfe64a0faf1869, 6, 0xefdfcb459059ff2a),
        (0xa48b67f5795dbce2, 6, 0x4e85c4041c1e5604),
        (0x0, 6, 0xe255222d4cbbadba),
    ];
    const GOLDEN_WEIGHTED: [(u64, usize, u64); 8] = [
        (0xb78d32f4a24cc1ad, 0, 0x2d06800538d394c2),
        (0x3cd25499dbbcdf6c, 0, 0x2d06800538d394c2),
        (0x3cd25499dbbcdf6c, 0, 0x2d06800538d394c2),
        (0x5a4094e8a2e20229, 0, 0x2d06800538d394c2),
        (0xcb0c0cb0798ffda4, 0, 0x2d06800538d394c2),
        (0x8ac4c97029b0c160, 0, 0x2d06800538d394c2),
        (0x4802b540816a540, 0, 0x2d06800538d394c2),
        (0x0, 0, 0x2d06800538d394c2),
    ];
    const GOLDEN_LEXICON: [(u64, usize, u64); 8] = [
        (0x4a3def419f28b02, 6, 0x632809ccf140b2de),
        (0x36415dde34eb97c7, 6, 0x43b5585e91ec29a5),
        (0x36415dde34eb97c7, 6, 0x43b5585e91ec29a5),
        (0x96b558ba35c80f49, 6, 0xa5ff49420fb925f6),
        (0xcb0c0cb0798ffda4, 6, 0xb5acbbd69f0d733),
        (0xd5cfe64a0faf1869, 6, 0x6e4472e98cc31a94),
        (0xa48b67f5795dbce2, 6, 0x57d3d4dfcce790d2),
        (0x0, 6, 0xe255222d4cbbadba),
    ];
}

// The normalizer versions (fingerprint/normalize.rs): on texts where version 2's rules apply, both
// are pinned — version 1 for the databases that hold it, version 2 for new ones.

mod normalizers {
    use fpdb::FingerprintSpec;

    const TEXTS: [&str; 5] = [
        "近似重复文档检测：网络爬虫多次抓取同一篇论文的不同版本。",
        "ひらがなとカタカナ、そして漢字の文章を比べる。ｶﾀｶﾅ",
        "การตรวจจับเอกสารที่ซ้ำกันเกือบทั้งหมดในห้องสมุดดิจิทัล",
        "हिन्दी में लिखे गए दस्तावेज़ों की तुलना",
        "Repre\u{AD}sentation of finger\u{2010}\nprints with zero\u{200B}width spaces and a \u{FEFF}BOM.",
    ];

    fn vectors(normalizer: u32) -> Vec<(u64, usize, u64)> {
        let spec = FingerprintSpec {
            normalizer,
            ..super::xxh3()
        };
        super::vectors_of(&spec, &TEXTS)
    }

    /// Under `word-mix`, straight from the text (the Unicode pieces through the normalizer).
    #[test]
    fn both_normalizers_are_pinned_on_unicode_texts_under_word_mix() {
        let v = |normalizer| {
            super::vectors_of(
                &FingerprintSpec {
                    normalizer,
                    ..super::word_mix()
                },
                &TEXTS,
            )
        };
        assert_eq!(v(1), GOLDEN_WORD_MIX_V1);
        assert_eq!(v(2), GOLDEN_WORD_MIX_V2);
    }

    const GOLDEN_WORD_MIX_V1: [(u64, usize, u64); 5] = [
        (0x9708b123bb4e0f6d, 1, 0x4f56781a9e94d2ba),
        (0xc768806b20d361cd, 1, 0xe7405c3470decd4),
        (0xbcb0e5d009872df0, 3, 0x85e47c6fda4b1565),
        (0x9f96b4c343582814, 8, 0x6f7a64cbff2bc008),
        (0x2f80425c9815c109, 10, 0x5ef557603b5a5ab7),
    ];
    const GOLDEN_WORD_MIX_V2: [(u64, usize, u64); 5] = [
        (0x304485cceb88ce74, 24, 0x6d6bb265ddbdea2c),
        (0x55301f06815ac79, 21, 0xd52d2abc9a7f6257),
        (0xb092c63261da0044, 39, 0xf24e81ee5509b750),
        (0xaf33354ec5d41ea4, 5, 0xd43c0baf915daae4),
        (0x7f8eeed8a6af7641, 7, 0xef59e83047bd71d4),
    ];

    #[test]
    fn both_normalizers_are_pinned_on_unicode_texts() {
        let (one, two) = (vectors(1), vectors(2));
        assert_eq!(one, GOLDEN_V1);
        assert_eq!(two, GOLDEN_V2);
        assert_eq!(FingerprintSpec::default().normalizer, 2);
        // Version 1 made the Chinese and Japanese texts one or two tokens: a single shingle each.
        assert_eq!((one[0].1, one[1].1), (1, 1));
    }

    const GOLDEN_V1: [(u64, usize, u64); 5] = [
        (0x2454406286f98da1, 1, 0x5771442236f5058),
        (0x22ceeaad438be334, 1, 0x60bef687a3ff7a3b),
        (0xf5949b74a4dfa095, 3, 0xa592b1bd5a25fdcc),
        (0x7141b0c09140580f, 8, 0x94d97595f174cc49),
        (0x2ab8c26330218a7c, 10, 0xbdb06d9a923ac3ff),
    ];
    const GOLDEN_V2: [(u64, usize, u64); 5] = [
        (0x257d7d330855e4c4, 24, 0x10586e3b2bf37aee),
        (0x2e996ac4d29dd058, 21, 0xef879a6cbf9a260f),
        (0xc12fabeac3d918bb, 39, 0x15ad5de95da04c08),
        (0x8ae890a5714ead86, 5, 0x83ef5e4a58110885),
        (0xc9a19d80f0d7c54, 7, 0xf1e81c1cdacfd5e5),
    ];
}
