//! Stored texts (`CreateOptions::store_text`): exact read-back, deletes and replacements in the
//! document's commit, the trained dictionary, `check`'s faults, re-fingerprinting from the stored
//! texts (equal to a fresh ingest), export → import → export, and the backup.

use std::collections::BTreeSet;
use std::path::Path;

use fpdb::{CreateOptions, Db, Error, FingerprintSpec, IngestOptions, NewDoc, Options};

use crate::common::{edit, passage, text, vocab};

fn store_text() -> CreateOptions {
    CreateOptions::default().with_store_text(true)
}

/// `n` documents of ~`words` words: bases and one near-copy of every third.
fn corpus(n: usize, words: usize) -> Vec<NewDoc> {
    let v = vocab();
    let mut docs = Vec::new();
    let mut i = 0u64;
    while docs.len() < n {
        let base = passage(&v, words, i);
        docs.push(doc(&format!("b{i}"), &text(&base)));
        if i.is_multiple_of(3) && docs.len() < n {
            docs.push(doc(&format!("c{i}"), &text(&edit(&v, &base, 1, 1000 + i))));
        }
        i += 1;
    }
    docs
}

fn doc(key: &str, t: &str) -> NewDoc {
    NewDoc {
        key: key.into(),
        text: t.into(),
        meta: None,
        biblio: Default::default(),
    }
}

fn ingest(db: &Db, docs: &[NewDoc]) {
    let s = db.ingest(docs.iter().cloned().map(Ok), &IngestOptions::default(), |r| {
        r.result.unwrap();
    });
    assert_eq!(s.unwrap().stored, docs.len() as u64);
}

#[test]
fn texts_read_back_exactly_and_follow_deletes_and_replacements() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("db");
    let db = Db::create(&p, &store_text()).unwrap();
    let odd = "  Leading spaces, tabs\tand a trailing newline: é, ß, 漢字, 🙂\r\n";
    db.insert("odd", odd).unwrap();
    db.insert("short", "a tiny text").unwrap();
    let long = text(&passage(&vocab(), 3000, 5));
    db.insert("long", &long).unwrap();
    assert_eq!(db.texts().get("odd").unwrap().as_deref(), Some(odd));
    assert_eq!(db.texts().get("short").unwrap().as_deref(), Some("a tiny text"));
    assert_eq!(db.texts().get("long").unwrap().as_deref(), Some(long.as_str()));
    assert_eq!(db.texts().get("absent").unwrap(), None);
    db.insert("short", "a replacement text").unwrap();
    assert_eq!(db.texts().get("short").unwrap().as_deref(), Some("a replacement text"));
    assert!(db.delete("odd").unwrap());
    assert_eq!(db.texts().get("odd").unwrap(), None);
    assert!(db.check().unwrap().faults.is_empty());
    let u = db.texts().usage().unwrap();
    assert_eq!(u.docs, 2, "the deleted and the replaced texts went with their documents");
    drop(db);
    let db = Db::open(&p).unwrap();
    assert_eq!(db.texts().get("long").unwrap().as_deref(), Some(long.as_str()));
    assert!(db.check().unwrap().faults.is_empty());
    // a database without stored texts refuses the read, naming the option
    let plain = Db::create(dir.path().join("plain"), &CreateOptions::default()).unwrap();
    plain.insert("a", "some words here").unwrap();
    assert!(matches!(plain.texts().get("a"), Err(Error::InvalidOption { .. })));
    assert!(!plain.texts().enabled());
}

#[test]
fn a_document_without_text_is_refused_where_texts_are_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &store_text()).unwrap();
    let fp = db.fingerprinter().fingerprint("words words and more words");
    let p = fpdb::PreparedDoc::new("k".into(), fp, None).unwrap();
    let r = db.commit_batch(vec![Ok(p)], fpdb::Dedup::Link).unwrap();
    assert!(matches!(&r[0], Err(Error::InvalidInput { .. })), "{r:?}");
    assert!(db.check().unwrap().faults.is_empty());
}

#[test]
fn the_dictionary_is_trained_on_the_first_documents_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("db");
    let db = Db::create(&p, &store_text()).unwrap();
    // ~6 MB of ~1 KB passages: the dictionary is trained once the first 4 MiB are in
    let docs = corpus(7000, 150);
    ingest(&db, &docs);
    let u = db.texts().usage().unwrap();
    assert_eq!(u.docs, docs.len() as u64);
    assert!(u.dict_bytes > 0, "{u:?}");
    assert_eq!(u.raw_bytes, docs.iter().map(|d| d.text.len() as u64).sum::<u64>());
    assert!(u.stored_bytes * 2 < u.raw_bytes, "{u:?}");
    for d in docs.iter().step_by(97) {
        assert_eq!(db.texts().get(&d.key).unwrap().as_deref(), Some(d.text.as_str()));
    }
    assert!(db.check().unwrap().faults.is_empty());
    drop(db);
    let db = Db::open(&p).unwrap();
    assert_eq!(db.texts().usage().unwrap().dict_bytes, u.dict_bytes);
    db.insert("after", "a text compressed with the dictionary read back at open")
        .unwrap();
    assert_eq!(
        db.texts().get("after").unwrap().as_deref(),
        Some("a text compressed with the dictionary read back at open")
    );
    for d in docs.iter().step_by(211) {
        assert_eq!(db.texts().get(&d.key).unwrap().as_deref(), Some(d.text.as_str()));
    }
    assert!(db.check().unwrap().faults.is_empty());
}

/// A re-fingerprinting carries the stored records over as they are: the new database adopts the
/// dictionary (none trained again: one trained on the live texts, without the deleted first ones
/// it was trained on, would compress them to other sizes) and holds the same record bytes, every
/// text reads back exactly, `check` finds nothing, and texts inserted afterwards use the dictionary.
#[test]
fn reindex_carries_the_records_and_their_dictionary_over() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("db");
    let db = Db::create(&p, &store_text()).unwrap();
    let docs = corpus(7000, 150);
    ingest(&db, &docs);
    for d in &docs[..1500] {
        db.delete(&d.key).unwrap();
    }
    let docs = &docs[1500..];
    let before = db.texts().usage().unwrap();
    assert!(before.dict_bytes > 0, "{before:?}");
    drop(db);
    let create = CreateOptions::default().with_spec(FingerprintSpec::words(2));
    Db::reindex_spec(&p, &create, |_| {}).unwrap();
    let db = Db::open(&p).unwrap();
    assert_eq!(db.spec().to_string(), FingerprintSpec::words(2).to_string());
    let after = db.texts().usage().unwrap();
    assert_eq!(
        (after.docs, after.raw_bytes, after.stored_bytes, after.dict_bytes),
        (before.docs, before.raw_bytes, before.stored_bytes, before.dict_bytes)
    );
    for d in docs.iter().step_by(89) {
        assert_eq!(db.texts().get(&d.key).unwrap().as_deref(), Some(d.text.as_str()));
    }
    assert!(db.check().unwrap().faults.is_empty());
    db.insert("after", "a text inserted into the re-fingerprinted database, with its dictionary")
        .unwrap();
    drop(db);
    let db = Db::open(&p).unwrap();
    assert_eq!(
        db.texts().get("after").unwrap().as_deref(),
        Some("a text inserted into the re-fingerprinted database, with its dictionary")
    );
    assert_eq!(db.texts().usage().unwrap().dict_bytes, before.dict_bytes);
    assert!(db.check().unwrap().faults.is_empty());
}

/// The `text` column family opened raw.
fn raw_text_cf(p: &Path, f: impl FnOnce(&rocksdb::DB, &rocksdb::ColumnFamily)) {
    let rp = p.join("rocksdb");
    let names = rocksdb::DB::list_cf(&rocksdb::Options::default(), &rp).unwrap();
    let raw = rocksdb::DB::open_cf(&rocksdb::Options::default(), &rp, &names).unwrap();
    f(&raw, raw.cf_handle("text").unwrap());
}

#[test]
fn check_reports_a_missing_or_undecodable_text() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("db");
    let db = Db::create(&p, &store_text()).unwrap();
    let a = db.insert("a", "the first stored text of this test").unwrap().id.unwrap();
    let b = db.insert("b", "the second stored text of this test").unwrap().id.unwrap();
    drop(db);
    raw_text_cf(&p, |raw, cf| {
        raw.delete_cf(cf, a.to_be_bytes()).unwrap();
        let mut v = raw.get_cf(cf, b.to_be_bytes()).unwrap().unwrap();
        let last = v.len() - 1;
        v[last] ^= 1;
        raw.put_cf(cf, b.to_be_bytes(), v).unwrap();
        raw.put_cf(cf, 999u64.to_be_bytes(), b"\x01\x00\x00\x00\x00\x00").unwrap();
    });
    let db = Db::open_with(&p, Options::default()).unwrap();
    let faults = db.check().unwrap().faults;
    let what: Vec<(Option<u64>, &str)> = faults.iter().map(|f| (f.doc, f.what.as_str())).collect();
    assert!(what.iter().any(|(d, w)| *d == Some(a) && w.contains("missing")), "{what:?}");
    assert!(what.iter().any(|(d, w)| *d == Some(b) && w.contains("does not decode")), "{what:?}");
    assert!(
        what.iter().any(|(d, w)| *d == Some(999) && w.contains("does not exist")),
        "{what:?}"
    );
    assert_eq!(faults.len(), 3, "{what:?}");
}

/// Every verified pair (by keys) and every group (as sets of keys) of a database.
fn pairs_and_groups(db: &Db) -> (BTreeSet<(String, String)>, BTreeSet<Vec<String>>) {
    let key = |id: u64| db.key_of(id).unwrap();
    let opts = fpdb::PairsOptions {
        max_distance: db.config().max_distance,
        min_jaccard: Some(db.config().min_jaccard),
        threads: 0,
        min_shared: None,
    };
    let r = fpdb::pairs(db, &opts).unwrap();
    let pairs = r
        .pairs
        .iter()
        .map(|p| {
            let (a, b) = (key(p.a), key(p.b));
            if a < b {
                (a, b)
            } else {
                (b, a)
            }
        })
        .collect();
    let mut groups = BTreeSet::new();
    db.for_each_doc(|_, r| {
        let mut g: Vec<String> = db.group_members(r.group).into_iter().map(|(_, k)| k).collect();
        g.sort();
        groups.insert(g);
        Ok(())
    })
    .unwrap();
    (pairs, groups)
}

#[test]
fn reindex_spec_equals_a_fresh_ingest_under_the_new_spec() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("db");
    let docs = corpus(300, 120);
    let db = Db::create(&p, &store_text()).unwrap();
    ingest(&db, &docs);
    // deletes and a replacement: the rebuilt database holds the live documents, in id order
    db.delete("b4").unwrap();
    db.insert("b7", &docs[20].text).unwrap();
    let live: Vec<NewDoc> = {
        let mut v = Vec::new();
        db.texts()
            .for_each(|_, d| {
                v.push(d);
                Ok(())
            })
            .unwrap();
        v
    };
    drop(db);
    for (i, (name, create)) in [
        (
            "word:2, k = 8",
            CreateOptions::default().with_spec(FingerprintSpec::words(2)).with_max_distance(8),
        ),
        ("char:5", CreateOptions::default().with_spec(FingerprintSpec::chars(5))),
        (
            "broder",
            CreateOptions::default().with_spec(FingerprintSpec::default().with_method("broder".parse().unwrap())),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let r = Db::reindex_spec(&p, &create, |_| {}).unwrap();
        assert_eq!(r.docs, live.len() as u64, "{name}");
        let fresh = Db::create(dir.path().join(format!("fresh{i}")), &create.clone().with_store_text(true)).unwrap();
        ingest(&fresh, &live);
        let db = Db::open(&p).unwrap();
        assert_eq!(db.spec(), fresh.spec(), "{name}");
        let (pa, ga) = pairs_and_groups(&db);
        let (pb, gb) = pairs_and_groups(&fresh);
        assert!(
            !pa.is_empty() && ga.iter().any(|g| g.len() > 1),
            "{name}: the corpus has duplicates"
        );
        assert_eq!(pa, pb, "{name}: pairs");
        assert_eq!(ga, gb, "{name}: groups");
        assert!(db.check().unwrap().faults.is_empty(), "{name}");
        for d in live.iter().step_by(17) {
            assert_eq!(db.texts().get(&d.key).unwrap().as_deref(), Some(d.text.as_str()), "{name}");
        }
        drop(fresh);
    }
    // a database without stored texts is refused, and left as it was
    let plain = dir.path().join("plain");
    Db::create(&plain, &CreateOptions::default())
        .unwrap()
        .insert("a", "some words")
        .unwrap();
    assert!(matches!(
        Db::reindex_spec(&plain, &CreateOptions::default(), |_| {}),
        Err(Error::InvalidOption { .. })
    ));
    assert_eq!(Db::open(&plain).unwrap().stats().docs, 1);
}
