//! The normalizer versions: new databases get version 2 (scripts without spaces tokenized per
//! character, combining marks kept, ignorable characters dropped); a database created with
//! version 1 keeps it across reopening by a build whose default is 2.

use fpdb::fingerprint::fingerprint;
use fpdb::fingerprint::similarity::jaccard;
use fpdb::{CreateOptions, Db, Error, FingerprintSpec, QueryOptions};

/// A Chinese paragraph (~240 characters) about what fpdb does.
const ZH: &str = "网络爬虫在抓取学术论文时，经常会多次获得同一篇文章的不同版本，例如预印本、会议录用稿、\
出版社的正式版本以及课程网页上的副本。这些版本之间只有少量差异，比如作者信息、页眉页脚或者个别错别字。\
为了节省存储空间并改善检索质量，数字图书馆需要在文档到达时就识别出这些近似重复的文档，并把它们归并到同一个记录之下。\
常用的方法是把每篇文档表示为若干词组的集合，再计算集合之间的杰卡德相似度；为了加快速度，\
还会为每篇文档计算一个六十四位的指纹，只对指纹相近的候选文档做精确比较。";

/// The same paragraph with two characters changed (经常 → 常常, 少量 → 很少).
fn zh_edited() -> String {
    ZH.replacen("经常", "常常", 1).replacen("少量", "很少", 1)
}

fn v1() -> FingerprintSpec {
    FingerprintSpec {
        normalizer: 1,
        ..FingerprintSpec::default()
    }
}

#[test]
fn a_chinese_near_duplicate_is_found_by_a_new_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    assert_eq!(db.spec().normalizer, 2);
    db.insert("zh", ZH).unwrap();
    let near = zh_edited();
    assert_ne!(near, ZH);
    let want = jaccard(&fingerprint(db.spec(), ZH).shingles, &fingerprint(db.spec(), &near).shingles).jaccard;
    assert!(want > 0.9 && want < 1.0, "two changed characters keep J = {want}");
    let hits = db.query(&near, &QueryOptions::default()).unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!((hits[0].key.as_str(), hits[0].jaccard), ("zh", Some(want)));
    // Version 1 made each clause one token: the same two characters cost far more shingles.
    let old = jaccard(&fingerprint(&v1(), ZH).shingles, &fingerprint(&v1(), &near).shingles).jaccard;
    assert!(old < 0.75, "version 1 kept J = {old}");
}

#[test]
fn a_version_1_database_keeps_its_normalizer_when_reopened_with_the_default_spec() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let near = zh_edited();
    {
        let db = Db::create(&path, &CreateOptions::default().with_spec(v1())).unwrap();
        db.insert("zh", ZH).unwrap();
    }
    // What an upgraded crawler calls with its default options: it opens, and stays on version 1.
    let db = Db::open_or_create(&path, &CreateOptions::default()).unwrap();
    assert_eq!(db.spec().normalizer, 1);
    let q = QueryOptions::default().with_min_jaccard(0.1).with_max_distance(32);
    let hits = db.query(&near, &q).unwrap();
    let old = jaccard(&fingerprint(&v1(), ZH).shingles, &fingerprint(&v1(), &near).shingles).jaccard;
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].jaccard, Some(old), "the query was fingerprinted with the stored normalizer");
    assert!(db.check().unwrap().faults.is_empty());
}

#[test]
fn a_normalizer_this_build_does_not_implement_is_refused_with_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let spec = FingerprintSpec {
        normalizer: 3,
        ..FingerprintSpec::default()
    };
    match Db::create(dir.path().join("db"), &CreateOptions::default().with_spec(spec)) {
        Err(Error::InvalidOption { name, message }) => {
            assert_eq!(name, "spec.normalizer");
            assert!(
                message.contains("1..=2") && message.contains("not 3") && message.contains("upgrade"),
                "{message}"
            );
        }
        other => panic!("expected an invalid option, got {:?}", other.map(|_| ())),
    }
}
