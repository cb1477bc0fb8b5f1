//! Listing documents and groups a page at a time by a cursor (`Db::list_documents`,
//! `Db::list_groups`): every item once, in id order, across pages, while the database is written.

use crate::common;

use common::{passage, text, vocab};
use fpdb::{CreateOptions, Db};

#[test]
fn pages_of_documents_and_groups_cover_everything_once_in_id_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    let v = vocab();
    // 25 documents: every fifth a copy of the one before it, so 5 groups of two.
    let mut texts = Vec::new();
    for i in 0..25u64 {
        let t = if i % 5 == 4 {
            texts.last().cloned().unwrap()
        } else {
            text(&passage(&v, 100, i))
        };
        db.insert(&format!("k{i:02}"), &t).unwrap();
        texts.push(t);
    }
    db.delete("k07").unwrap();
    let mut seen = Vec::new();
    let mut after = None;
    let mut pages = 0;
    loop {
        let page = db.list_documents(after, 7).unwrap();
        assert!(page.items.len() <= 7);
        seen.extend(page.items.iter().map(|d| (d.id, d.record.key.clone())));
        pages += 1;
        match page.next {
            Some(n) => {
                assert_eq!(Some(n), page.items.last().map(|d| d.id));
                after = Some(n);
                // A write between pages: a new document (a higher id) shows up on a later page.
                if pages == 1 {
                    db.insert("late", &text(&passage(&v, 100, 99))).unwrap();
                }
            }
            None => break,
        }
    }
    let keys: Vec<&str> = seen.iter().map(|(_, k)| k.as_str()).collect();
    let mut want: Vec<String> = (0..25).filter(|i| *i != 7).map(|i| format!("k{i:02}")).collect();
    want.push("late".into());
    assert_eq!(keys, want);
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "id order");
    assert_eq!(pages, 4, "25 documents by 7: 4 pages");
    // Each listed document is what `get` returns.
    let first = db.list_documents(None, 1).unwrap();
    assert_eq!(first.items[0], db.get("k00").unwrap().unwrap());
    assert_eq!(db.list_documents(Some(u64::MAX), 10).unwrap().items, vec![]);

    let mut groups = Vec::new();
    let mut after = None;
    loop {
        let page = db.list_groups(after, 2);
        groups.extend(page.items);
        match page.next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    assert_eq!(groups.len(), 5);
    for (g, i) in groups.iter().zip([3u64, 8, 13, 18, 23]) {
        let keys: Vec<&str> = g.members.iter().map(|(_, k)| k.as_str()).collect();
        assert_eq!(keys, [format!("k{i:02}"), format!("k{:02}", i + 1)], "{g:?}");
        assert_eq!(g.canonical, format!("k{i:02}"));
        assert_eq!(g.id, g.members[0].0);
    }
}

#[test]
fn the_duplicates_of_a_stored_key_are_those_of_a_query_with_its_text_less_itself() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    let v = vocab();
    let base = passage(&v, 150, 3);
    let mut texts = Vec::new();
    for i in 0..6usize {
        let mut w = base.clone();
        // Version i changes one word, at a place of its own: any two differ in at most two words.
        if i > 0 {
            w[20 * i] = "changed".into();
        }
        texts.push(text(&w));
    }
    texts.push(text(&passage(&v, 150, 4)));
    for (i, t) in texts.iter().enumerate() {
        let meta = serde_json::json!({"repo": if i % 2 == 0 { "arxiv" } else { "core" }, "n": i}).to_string();
        let doc = fpdb::NewDoc {
            key: format!("v{i}"),
            text: t.clone(),
            meta: Some(meta),
            biblio: fpdb::Biblio::default(),
        };
        let p = db.prepare(&mut db.fingerprinter(), doc).unwrap();
        db.commit_batch(vec![Ok(p)], fpdb::Dedup::Off).unwrap();
    }
    let opts = fpdb::QueryOptions::default();
    for (i, t) in texts.iter().enumerate() {
        let key = format!("v{i}");
        let mut want = db.query_answer(t, &opts).unwrap().hits;
        want.retain(|h| h.key != key);
        let got = db.query_stored(&key, &opts).unwrap().unwrap();
        assert_eq!(got.hits, want, "{key}");
        if i < 6 {
            assert_eq!(got.hits.len(), 5, "{key}: the other versions");
        } else {
            assert!(got.hits.is_empty());
        }
        // The limit counts the other documents only.
        let two = db.query_stored(&key, &opts.clone().with_limit(2)).unwrap().unwrap();
        assert_eq!(two.hits, want.iter().take(2).cloned().collect::<Vec<_>>());
    }
    assert!(db.query_stored("absent", &opts).unwrap().is_none());
    // Filtered by a metadata field: the hits whose document has it.
    let mut hits = db.query_stored("v0", &opts).unwrap().unwrap().hits;
    db.filter_by_meta(&mut hits, "repo", "core").unwrap();
    let keys: Vec<&str> = hits.iter().map(|h| h.key.as_str()).collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["v1", "v3", "v5"]);
    let mut hits = db.query_stored("v0", &opts).unwrap().unwrap().hits;
    db.filter_by_meta(&mut hits, "n", "2").unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].key, "v2");
    let mut hits = db.query_stored("v0", &opts).unwrap().unwrap().hits;
    db.filter_by_meta(&mut hits, "missing", "x").unwrap();
    assert!(hits.is_empty());
}
