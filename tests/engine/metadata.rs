//! Metadata matches (the CORE paper's API) through the library (the CLI's: cli/tests/cli/cli_metadata.rs): DOI and title + year are stored,
//! indexed in the `meta_idx` column family in the same write batch as the record, unioned with the
//! verified text matches (each hit saying how it matched), never linked into groups; deletes and
//! replacements remove their entries; databases from before (no column family, version-1 records)
//! still open and check clean.

use crate::common;

use common::texts;
use fpdb::PreparedDoc;
use fpdb::{Biblio, CreateOptions, Db, Dedup, MatchKind, NewDoc, QueryOptions};

fn doc(key: &str, text: &str, title: Option<&str>, year: Option<i32>, doi: Option<&str>) -> NewDoc {
    NewDoc {
        key: key.into(),
        text: text.into(),
        meta: None,
        biblio: Biblio {
            title: title.map(Into::into),
            year,
            doi: doi.map(Into::into),
        },
    }
}

fn insert(db: &Db, d: NewDoc, dedup: Dedup) -> fpdb::InsertOutcome {
    let p = db.prepare(&mut db.fingerprinter(), d).unwrap();
    db.commit_batch(vec![Ok(p)], dedup).unwrap().pop().unwrap().unwrap()
}

fn kinds(hits: &[fpdb::Hit]) -> Vec<(&str, MatchKind)> {
    hits.iter().map(|h| (h.key.as_str(), h.matched)).collect()
}

#[test]
fn metadata_matches_are_reported_not_linked() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    let t = texts(6, 120, 100);
    let o = insert(
        &db,
        doc("a", &t[0], Some("On Shingles"), Some(2001), Some("10.1000/XYZ")),
        Dedup::Link,
    );
    assert!(o.duplicates.is_empty());
    // Same DOI (another spelling), different text: a DOI match; its own group.
    let o = insert(&db, doc("b", &t[1], None, None, Some("https://doi.org/10.1000/xyz")), Dedup::Link);
    assert_eq!(kinds(&o.duplicates), vec![("a", MatchKind::Doi)]);
    assert_eq!(o.group.as_ref().unwrap().size, 1);
    assert!(o.duplicates[0].jaccard.unwrap() < 0.5);
    // Same title + year: a title_year match. Title alone (other year) is not.
    let o = insert(&db, doc("c", &t[2], Some("on shingles."), Some(2001), None), Dedup::Link);
    assert_eq!(kinds(&o.duplicates), vec![("a", MatchKind::TitleYear)]);
    let o = insert(&db, doc("d", &t[3], Some("On Shingles"), Some(2002), None), Dedup::Link);
    assert!(o.duplicates.is_empty());
    // Skip is not triggered by a metadata match alone.
    let o = insert(&db, doc("e", &t[4], None, None, Some("doi:10.1000/xyz")), Dedup::Skip);
    assert!(o.id.is_some(), "a metadata-only match made skip drop the document");
    assert_eq!(kinds(&o.duplicates), vec![("a", MatchKind::Doi), ("b", MatchKind::Doi)]);
    // The same text: a text match, listed once (text wins over DOI).
    let o = insert(&db, doc("f", &t[0], None, None, Some("10.1000/xyz")), Dedup::Link);
    assert_eq!(
        kinds(&o.duplicates),
        vec![("a", MatchKind::Text), ("b", MatchKind::Doi), ("e", MatchKind::Doi)]
    );
    assert_eq!(o.group.as_ref().unwrap().size, 2);

    // check_duplicates: text hits first, then metadata-only hits.
    let q = Biblio {
        title: Some("ON SHINGLES".into()),
        year: Some(2001),
        doi: Some("10.1000/XyZ".into()),
    };
    let hits = db.metadata().check_duplicates(&t[0], &q, &QueryOptions::default()).unwrap();
    assert_eq!(
        kinds(&hits),
        vec![
            ("a", MatchKind::Text),
            ("f", MatchKind::Text),
            ("b", MatchKind::Doi),
            ("e", MatchKind::Doi),
            ("c", MatchKind::TitleYear)
        ]
    );
    let hits = db
        .metadata()
        .check_duplicates("", &q, &QueryOptions::default().with_limit(2))
        .unwrap();
    assert_eq!(kinds(&hits), vec![("a", MatchKind::Doi), ("b", MatchKind::Doi)]);
    assert!(db
        .metadata()
        .check_duplicates(
            "x",
            &Biblio {
                doi: Some("nope".into()),
                ..Default::default()
            },
            &QueryOptions::default()
        )
        .is_err());
    let ids: Vec<u64> = db.metadata().matches(&q).unwrap().iter().map(|m| m.0).collect();
    assert_eq!(ids.len(), 5);

    // Replacing "b" without a DOI and deleting "e" remove their index entries in the same batch.
    insert(&db, doc("b", &t[1], None, None, None), Dedup::Link);
    assert!(db.delete("e").unwrap());
    let doi = Biblio {
        doi: Some("10.1000/xyz".into()),
        ..Default::default()
    };
    let keys: Vec<String> = db
        .metadata()
        .check_duplicates("", &doi, &QueryOptions::default())
        .unwrap()
        .into_iter()
        .map(|h| h.key)
        .collect();
    assert_eq!(keys, vec!["a", "f"]);
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);

    // Stored with the record and back after a reopen.
    drop(db);
    let db = Db::open(dir.path().join("db")).unwrap();
    let a = db.get("a").unwrap().unwrap();
    assert_eq!(a.record.biblio.title.as_deref(), Some("On Shingles"));
    assert_eq!(a.record.biblio.doi.as_deref(), Some("10.1000/XYZ"));
    assert_eq!(db.metadata().matches(&doi).unwrap().len(), 2);
}

#[test]
fn matches_within_one_batch_and_invalid_metadata_is_rejected_per_document() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    let t = texts(6, 120, 100);
    let mut fpr = db.fingerprinter();
    let batch: Vec<fpdb::Result<PreparedDoc>> = vec![
        db.prepare(&mut fpr, doc("x", &t[0], Some("T"), Some(1999), None)),
        db.prepare(&mut fpr, doc("bad", &t[1], None, None, Some("11.2/x"))),
        db.prepare(&mut fpr, doc("y", &t[2], Some("t!"), Some(1999), None)),
    ];
    assert!(batch[1].is_err());
    let out = db.commit_batch(batch, Dedup::Link).unwrap();
    let y = out[2].as_ref().unwrap();
    assert_eq!(kinds(&y.duplicates), vec![("x", MatchKind::TitleYear)]);
    assert!(db.check().unwrap().faults.is_empty());
}

/// A database without metadata matches: no `meta_idx` column family, version-1 doc records. Made
/// here from a new database by dropping the column family and rewriting every record in the
/// version-1 layout (byte for byte).
#[test]
fn databases_from_before_metadata_matches_still_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let t = texts(6, 120, 100);
    {
        let db = Db::create(&path, &CreateOptions::default()).unwrap();
        db.insert("old1", &t[0]).unwrap();
        db.insert("old2", &t[1]).unwrap();
    }
    {
        let rp = path.join("rocksdb");
        let o = rocksdb::Options::default();
        let cfs = rocksdb::DB::list_cf(&o, &rp).unwrap();
        let mut raw = rocksdb::DB::open_cf(&o, &rp, &cfs).unwrap();
        let docs = raw.cf_handle("docs").unwrap();
        let mut rewrites = Vec::new();
        for item in raw.iterator_cf(docs, rocksdb::IteratorMode::Start) {
            let (k, v) = item.unwrap();
            assert_eq!(v[0], 2);
            // Version 2 = version 1 body ‖ biblio (three `None`s: 3 zero bytes).
            assert_eq!(&v[v.len() - 3..], &[0, 0, 0]);
            let mut old = v[..v.len() - 3].to_vec();
            old[0] = 1;
            rewrites.push((k, old));
        }
        for (k, v) in rewrites {
            raw.put_cf(docs, k, v).unwrap();
        }
        raw.drop_cf("meta_idx").unwrap();
    }
    // Read-only: the missing column family reads as empty.
    let ro = Db::open_with(
        &path,
        fpdb::Options {
            read_only: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(ro.get("old1").unwrap().unwrap().record.biblio, Biblio::default());
    let any = Biblio {
        doi: Some("10.1/x".into()),
        ..Default::default()
    };
    assert!(ro.metadata().matches(&any).unwrap().is_empty());
    assert!(ro.check().unwrap().faults.is_empty(), "{:?}", ro.check().unwrap().faults);
    drop(ro);
    // Writable: the column family is created; old records keep working beside new ones.
    let db = Db::open(&path).unwrap();
    assert!(db.check().unwrap().faults.is_empty());
    let o = insert(&db, doc("new", &t[0], None, None, Some("10.1/x")), Dedup::Link);
    assert_eq!(kinds(&o.duplicates), vec![("old1", MatchKind::Text)]);
    insert(&db, doc("new2", &t[2], None, None, Some("10.1/X")), Dedup::Link);
    assert_eq!(db.metadata().matches(&any).unwrap().len(), 2);
    assert!(db.delete("old2").unwrap());
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);
}
