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

/// (simhash, shingle count, xxh3 of the shingle set's little-endian bytes) per text of [`TEXTS`].
fn vectors(spec: &FingerprintSpec) -> Vec<(u64, usize, u64)> {
    vectors_of(spec, &TEXTS)
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

// method: the other methods' sketches (fingerprint/method.rs), pinned the same way: per text, the
// SimHash and the xxh3 of the sketch's little-endian bytes (and the sketch length).

mod methods {
    use super::TEXTS;
    use fpdb::fingerprint::method::{IdfHandle, LexiconParams, Method};
    use fpdb::fingerprint::weighted::IdfTable;
    use fpdb::{fingerprint, FingerprintSpec};
    use std::sync::Arc;
    use xxhash_rust::xxh3::xxh3_64;

    fn vectors(method: Method) -> Vec<(u64, usize, u64)> {
        let spec = FingerprintSpec::default().with_method(method);
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
        let spec = FingerprintSpec::default().with_method(named("broder-charikar"));
        let b = FingerprintSpec::default().with_method(named("broder"));
        let c = FingerprintSpec::default().with_method(named("charikar"));
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
        assert!(FingerprintSpec::default().with_method(m).validate().is_err());
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
            ..FingerprintSpec::default()
        };
        super::vectors_of(&spec, &TEXTS)
    }

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
