//! The storage engine's promises: verified near-duplicates, exact table search, reopen, spec checks,
//! groups under merges and deletes, replacement, batches, compaction, locking.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::{assert_live_keys_exact, assert_simhash_queries_exact, commit_all, edit, fingerprint_set, fp_doc, passage, text, vocab};
use fpdb::fingerprint::fingerprint;
use fpdb::fingerprint::similarity::hamming;
use fpdb::fingerprint::similarity::jaccard;
use fpdb::internals::validate_key;
use fpdb::{CreateOptions, Db, Dedup, Error, Fingerprint, FingerprintSpec, Options, QueryOptions, Tables};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn create(dir: &std::path::Path) -> Db {
    Db::create(dir.join("db"), &CreateOptions::default()).expect("create")
}

#[test]
fn near_duplicate_is_found_with_its_exact_jaccard_and_unrelated_text_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path());
    let v = vocab();
    let original = passage(&v, 500, 11);
    let near = edit(&v, &original, 4, 12);
    let unrelated = passage(&v, 500, 13);
    db.insert("original", &text(&original)).unwrap();
    db.insert("unrelated", &text(&unrelated)).unwrap();

    let spec = FingerprintSpec::default();
    let (fa, fb) = (fingerprint(&spec, &text(&original)), fingerprint(&spec, &text(&near)));
    let exact = jaccard(&fa.shingles, &fb.shingles);
    assert!(exact.jaccard > 0.9 && exact.jaccard < 1.0, "edit kept J = {}", exact.jaccard);

    let hits = db.query(&text(&near), &QueryOptions::default()).unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].key, "original");
    assert_eq!(hits[0].jaccard, Some(exact.jaccard));
    assert_eq!(hits[0].shared, Some(exact.shared));
    assert_eq!(hits[0].hamming, hamming(fa.simhash, fb.simhash));

    // Unrelated text: neither a Jaccard hit nor (here) a SimHash candidate with J >= 0.
    let none = db.query(&text(&passage(&v, 500, 99)), &QueryOptions::default()).unwrap();
    assert!(none.is_empty(), "{none:?}");
}

#[test]
fn query_many_gives_what_query_gives_text_by_text_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path());
    let v = vocab();
    let bases: Vec<Vec<String>> = (0..20u64).map(|b| passage(&v, 150, b)).collect();
    for (b, words) in bases.iter().enumerate() {
        db.insert(&format!("base{b}"), &text(words)).unwrap();
    }
    // Near-copies, unrelated texts, a wordless one, and more texts than cores.
    let mut texts: Vec<String> = Vec::new();
    for i in 0..61u64 {
        texts.push(match i % 3 {
            0 => text(&edit(&v, &bases[(i as usize / 3) % 20], 1, 700 + i)),
            1 => text(&passage(&v, 150, 5_000 + i)),
            _ => "-- --".to_string(),
        });
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let opts = QueryOptions::default();
    let many = db.query_many(&refs, &opts);
    assert_eq!(many.len(), texts.len());
    let mut found = 0;
    for (t, got) in refs.iter().zip(&many) {
        let want = db.query(t, &opts).unwrap();
        let got = got.as_ref().unwrap();
        assert_eq!(
            got.iter().map(|h| (&h.key, h.jaccard)).collect::<Vec<_>>(),
            want.iter().map(|h| (&h.key, h.jaccard)).collect::<Vec<_>>()
        );
        found += usize::from(!got.is_empty());
    }
    assert_eq!(found, 21, "every near-copy finds its base, nothing else finds anything");
    assert!(db.query_many(&[], &opts).is_empty());
    // An option out of range is every text's error.
    let mut bad = QueryOptions::default();
    bad.min_jaccard = Some(1.5);
    assert!(db
        .query_many(&refs[..5], &bad)
        .iter()
        .all(|r| matches!(r, Err(Error::InvalidOption { .. }))));
}

#[test]
fn table_query_returns_exactly_the_brute_force_set_for_every_k_and_layout() {
    let fps = fingerprint_set(5, 150);
    let queries: Vec<u64> = fps.iter().step_by(7).copied().chain(fingerprint_set(6, 10)).collect();
    for m in 1..=16u32 {
        let dir = tempfile::tempdir().unwrap();
        let create = CreateOptions::default().with_tables(Tables::Blocks(m));
        let db = Db::create(dir.path().join("db"), &create).unwrap();
        commit_all(&db, fps.iter().enumerate().map(|(i, &f)| fp_doc(format!("d{i}"), f)).collect());
        drop(db);
        for mirror in [true, false] {
            let db = Db::open_with(
                dir.path().join("db"),
                Options {
                    mirror,
                    ..Options::default()
                },
            )
            .unwrap();
            assert_simhash_queries_exact(&db, &fps, &queries, 12, &format!("m = {m}, mirror = {mirror}"));
        }
    }
}

#[test]
fn a_live_handle_stays_exact_while_its_mirror_merges_runs() {
    // Enough documents, committed in batches and partly deleted, that the mirror's delta is merged
    // into new base runs several times in the live handle (and deletes hit both runs); every query
    // must still return exactly the brute-force set of the live documents.
    let fps = fingerprint_set(11, 7_000);
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default().with_tables(Tables::Blocks(6))).unwrap();
    for (b, chunk) in fps.chunks(1_000).enumerate() {
        commit_all(
            &db,
            chunk
                .iter()
                .enumerate()
                .map(|(i, &f)| fp_doc(format!("d{}", b * 1_000 + i), f))
                .collect(),
        );
        // Delete every 5th document of the previous batch (in the base run after a merge).
        if b > 0 {
            for i in ((b - 1) * 1_000..b * 1_000).step_by(5) {
                assert!(db.delete(&format!("d{i}")).unwrap());
            }
        }
    }
    let deleted: BTreeSet<usize> = (0..(fps.len() / 1_000 - 1) * 1_000).step_by(5).collect();
    let live: BTreeMap<String, u64> = fps
        .iter()
        .enumerate()
        .filter(|(i, _)| !deleted.contains(i))
        .map(|(i, &f)| (format!("d{i}"), f))
        .collect();
    let queries: Vec<u64> = fps.iter().step_by(97).copied().collect();
    assert_live_keys_exact(&db, &live, &queries, &[0, 3, 8, 12], "live handle after merges");
}

#[test]
fn the_table_column_families_written_beside_the_mirror_hold_exactly_the_live_documents() {
    // With the mirror, the table column families are written but never read on the query path:
    // commits leave the entries in the table tail, written every 1,000 documents here (so deletes and
    // replacements land on both sides of the table floor) and by the flush. After inserts, deletes
    // and key replacements in one live handle, `check` must find exactly one entry per live
    // document below the floor and none for a dead one, after the flush exactly one per live
    // document in every table, and a handle without the mirror (searching those tables) must
    // answer every query exactly.
    let fps = fingerprint_set(23, 3_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut current: BTreeMap<String, u64> = BTreeMap::new();
    {
        let opts = Options {
            table_tail_docs: 1000,
            ..Options::default()
        };
        let db = Db::create_with(&path, &CreateOptions::default().with_tables(Tables::Blocks(5)), opts).unwrap();
        for (b, chunk) in fps.chunks(500).enumerate() {
            commit_all(
                &db,
                chunk
                    .iter()
                    .enumerate()
                    .map(|(i, &f)| fp_doc(format!("d{}", b * 500 + i), f))
                    .collect(),
            );
            current.extend(chunk.iter().enumerate().map(|(i, &f)| (format!("d{}", b * 500 + i), f)));
            // Delete every 7th document so far and give every 11th a new fingerprint under its key.
            for i in (0..(b + 1) * 500).step_by(7) {
                if current.remove(&format!("d{i}")).is_some() {
                    assert!(db.delete(&format!("d{i}")).unwrap());
                }
            }
            let replaced: Vec<_> = (3..(b + 1) * 500)
                .step_by(11)
                .map(|i| (format!("d{i}"), fps[i].rotate_left(17)))
                .filter(|(k, _)| current.contains_key(k))
                .collect();
            commit_all(&db, replaced.iter().map(|(k, f)| fp_doc(k.clone(), *f)).collect());
            current.extend(replaced);
        }
        let rep = db.check().unwrap();
        assert!(rep.faults.is_empty(), "{:?}", rep.faults);
        assert_eq!(rep.docs, current.len() as u64);
        assert!(
            rep.table_entries > 0 && rep.table_entries < 5 * current.len() as u64,
            "some entries are in RocksDB, the newest in the tail: {} for {} docs",
            rep.table_entries,
            current.len()
        );
        db.flush().unwrap();
        let rep = db.check().unwrap();
        assert!(rep.faults.is_empty(), "{:?}", rep.faults);
        assert_eq!(rep.table_entries, 5 * current.len() as u64);
    }
    let db = Db::open_with(
        &path,
        Options {
            mirror: false,
            ..Options::default()
        },
    )
    .unwrap();
    let queries: Vec<u64> = fps.iter().step_by(61).copied().collect();
    assert_live_keys_exact(&db, &current, &queries, &[0, 5, 12], "reopened without the mirror");
    assert!(db.check().unwrap().faults.is_empty());
}

#[test]
fn reopen_gives_identical_results_and_a_different_spec_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let v = vocab();
    let texts: Vec<String> = (0..40)
        .map(|i| text(&edit(&v, &passage(&v, 300, i / 4), (i % 4) as usize * 3, i)))
        .collect();
    let before: Vec<_> = {
        let db = create(dir.path());
        for (i, t) in texts.iter().enumerate() {
            db.insert(&format!("k{i}"), t).unwrap();
        }
        texts.iter().map(|t| db.query(t, &QueryOptions::default()).unwrap()).collect()
    };
    let db = Db::open(&path).unwrap();
    let after: Vec<_> = texts.iter().map(|t| db.query(t, &QueryOptions::default()).unwrap()).collect();
    assert_eq!(before, after);
    assert!(before.iter().any(|h| h.len() > 1), "the corpus has near-duplicates");
    assert!(db.check().unwrap().faults.is_empty());
    drop(db);

    let wrong = Options {
        expect_spec: Some(FingerprintSpec::words(4)),
        ..Options::default()
    };
    match Db::open_with(&path, wrong) {
        Err(Error::SpecMismatch {
            field, expected, found, ..
        }) => {
            assert_eq!((field, expected.as_str(), found.as_str()), ("n", "4", "3"));
        }
        other => panic!("expected a spec mismatch, got {other:?}"),
    }
    let chars = Options {
        expect_spec: Some(FingerprintSpec::chars(3)),
        ..Options::default()
    };
    assert!(matches!(
        Db::open_with(&path, chars),
        Err(Error::SpecMismatch { field: "unit", .. })
    ));
}

#[test]
fn a_bridging_document_merges_two_groups_under_the_earliest_member() {
    let dir = tempfile::tempdir().unwrap();
    let create = CreateOptions::default().with_max_distance(12);
    let db = Db::create(dir.path().join("db"), &create).unwrap();
    let v = vocab();
    // `a` and `c` are two independent edits of `base`: each is a near-duplicate of `base` but not of
    // the other, so inserting `base` last bridges the groups {a, a2} and {c, c2}.
    let base = passage(&v, 1000, 1);
    let a = edit(&v, &base, 10, 2);
    let c = edit(&v, &base, 10, 3);
    let spec = FingerprintSpec::default();
    let j = |x: &[String], y: &[String]| jaccard(&fingerprint(&spec, &text(x)).shingles, &fingerprint(&spec, &text(y)).shingles).jaccard;
    assert!(
        j(&a, &c) < 0.9 && j(&a, &base) >= 0.9 && j(&c, &base) >= 0.9,
        "fixture: {} {} {}",
        j(&a, &c),
        j(&a, &base),
        j(&c, &base)
    );
    let a2 = edit(&v, &a, 2, 4);
    let c2 = edit(&v, &c, 2, 5);

    let ida = db.insert("a", &text(&a)).unwrap();
    let ida2 = db.insert("a2", &text(&a2)).unwrap();
    let idc = db.insert("c", &text(&c)).unwrap();
    let idc2 = db.insert("c2", &text(&c2)).unwrap();
    let (ga, gc) = (ida.group.unwrap(), idc2.group.unwrap());
    assert_eq!(ida2.group.as_ref().unwrap().id, ga.id);
    assert_eq!(gc.id, idc.id.unwrap());
    assert_ne!(ga.id, gc.id);

    let bridge = db.insert("bridge", &text(&base)).unwrap();
    let g = bridge.group.unwrap();
    assert_eq!(g.id, ida.id.unwrap(), "canonical = earliest member");
    assert_eq!(g.canonical, "a");
    assert_eq!(g.size, 5);
    for key in ["a", "a2", "c", "c2", "bridge"] {
        assert_eq!(db.get(key).unwrap().unwrap().group.id, g.id, "{key}");
    }
    assert_eq!(db.stats().groups, 1);

    // Deleting the bridge splits the group again; each part keeps its own earliest member.
    assert!(db.delete("bridge").unwrap());
    assert_eq!(db.get("a2").unwrap().unwrap().group.id, ida.id.unwrap());
    assert_eq!(db.get("c2").unwrap().unwrap().group.id, idc.id.unwrap());
    assert_eq!(db.get("c").unwrap().unwrap().group.size, 2);

    // Deleting the canonical hands the group to the next earliest member.
    assert!(db.delete("c").unwrap());
    let c2doc = db.get("c2").unwrap().unwrap();
    assert_eq!(c2doc.group.id, c2doc.id);
    assert_eq!(c2doc.group.size, 1);
    assert!(db.check().unwrap().faults.is_empty());

    // And all of it survives a reopen.
    let path = db.path().to_path_buf();
    drop(db);
    let db = Db::open(&path).unwrap();
    assert_eq!(db.get("a2").unwrap().unwrap().group.id, ida.id.unwrap());
    assert_eq!(db.get("a2").unwrap().unwrap().group.size, 2);
}

/// Groups equal the connected components of the verified-duplicate graph over live documents, with
/// canonical = smallest id, after any sequence of inserts, replacements and deletes.
#[test]
fn groups_match_brute_force_components_after_random_operations() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path());
    let v = vocab();
    let spec = FingerprintSpec::default();
    let mut rng = StdRng::seed_from_u64(77);
    let bases: Vec<Vec<String>> = (0..6).map(|i| passage(&v, 200, 100 + i)).collect();
    let mut live: BTreeMap<String, String> = BTreeMap::new();
    for step in 0..120 {
        let key = format!("k{}", rng.gen_range(0..30));
        if rng.gen_bool(0.2) {
            assert_eq!(db.delete(&key).unwrap(), live.remove(&key).is_some());
        } else {
            let t = text(&edit(&v, &bases[rng.gen_range(0..bases.len())], rng.gen_range(0..6), step));
            db.insert(&key, &t).unwrap();
            live.insert(key, t);
        }
    }
    // Brute force: edges between live docs with hamming <= k and J >= t (the database's defaults).
    let (k, t) = (db.config().max_distance, db.config().min_jaccard);
    let docs: Vec<(u64, String, Fingerprint)> = live
        .iter()
        .map(|(k, t)| (db.get(k).unwrap().unwrap().id, k.clone(), fingerprint(&spec, t)))
        .collect();
    let mut comp: BTreeMap<u64, u64> = docs.iter().map(|d| (d.0, d.0)).collect();
    loop {
        let mut changed = false;
        for x in &docs {
            for y in &docs {
                if hamming(x.2.simhash, y.2.simhash) <= k && jaccard(&x.2.shingles, &y.2.shingles).jaccard >= t {
                    let m = comp[&x.0].min(comp[&y.0]);
                    for id in [x.0, y.0] {
                        if comp[&id] != m {
                            comp.insert(id, m);
                            changed = true;
                        }
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    for (id, key, _) in &docs {
        assert_eq!(db.get(key).unwrap().unwrap().group.id, comp[id], "key {key}");
    }
    assert!(db.stats().groups > 0);
    assert!(db.check().unwrap().faults.is_empty());
}

#[test]
fn reinserting_a_key_replaces_the_document() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path());
    let v = vocab();
    let first = db.insert("k", &text(&passage(&v, 100, 1))).unwrap();
    let second = db.insert("k", &text(&passage(&v, 100, 2))).unwrap();
    assert_eq!(second.replaced, first.id);
    assert!(second.duplicates.is_empty(), "a document is not its own duplicate");
    assert_eq!(db.stats().docs, 1);
    assert_eq!(db.get("k").unwrap().unwrap().id, second.id.unwrap());
    assert!(db.query(&text(&passage(&v, 100, 1)), &QueryOptions::default()).unwrap().is_empty());
    assert!(db.check().unwrap().faults.is_empty());
}

#[test]
fn a_batch_sees_its_own_earlier_documents_and_skip_does_not_store_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path());
    let v = vocab();
    let base = passage(&v, 300, 1);
    let mut fpr = db.fingerprinter();
    let docs = (0..3)
        .map(|i| {
            db.prepare(
                &mut fpr,
                fpdb::NewDoc {
                    key: format!("v{i}"),
                    text: text(&edit(&v, &base, i, i as u64)),
                    meta: None,
                    biblio: Default::default(),
                },
            )
        })
        .collect();
    let out = db.commit_batch(docs, Dedup::Skip).unwrap();
    assert!(out[0].as_ref().unwrap().id.is_some());
    for o in &out[1..] {
        let o = o.as_ref().unwrap();
        assert_eq!(o.id, None, "skipped");
        assert_eq!(o.duplicates[0].key, "v0");
    }
    assert_eq!(db.stats().docs, 1);
}

#[test]
fn bad_keys_and_empty_texts_are_rejected_with_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path());
    assert!(matches!(db.insert("", "some words here"), Err(Error::InvalidInput { .. })));
    let long = "x".repeat(64 * 1024 + 1);
    assert!(db
        .insert(&long, "some words here")
        .unwrap_err()
        .to_string()
        .contains("at most 65536 bytes"));
    assert!(validate_key(&"x".repeat(64 * 1024)).is_ok());
    assert!(db.insert("k", " \n\t ").unwrap_err().to_string().contains("no words"));
    assert_eq!(db.stats().docs, 0);
}

#[test]
fn compaction_reclaims_dead_bytes_and_keeps_every_answer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::create_with(
        &path,
        &CreateOptions::default(),
        Options {
            segment_size: 64 << 10,
            ..Options::default()
        },
    )
    .unwrap();
    let v = vocab();
    let texts: Vec<String> = (0..60).map(|i| text(&passage(&v, 400, i))).collect();
    for (i, t) in texts.iter().enumerate() {
        db.insert(&format!("k{i}"), t).unwrap();
    }
    for i in (0..60).step_by(2) {
        db.delete(&format!("k{i}")).unwrap();
    }
    let before = db.stats();
    assert!(before.segments > 1);
    let answers: Vec<_> = texts.iter().map(|t| db.query(t, &QueryOptions::default()).unwrap()).collect();
    let c = db.compact(0.3).unwrap();
    assert!(c.segments_rewritten > 0 && c.bytes_reclaimed > 0, "{c:?}");
    let after = db.stats();
    assert!(after.segment_bytes < before.segment_bytes, "{before:?} -> {after:?}");
    assert_eq!(
        texts
            .iter()
            .map(|t| db.query(t, &QueryOptions::default()).unwrap())
            .collect::<Vec<_>>(),
        answers
    );
    assert!(db.check().unwrap().faults.is_empty());
    drop(db);
    let db = Db::open(&path).unwrap();
    assert_eq!(
        texts
            .iter()
            .map(|t| db.query(t, &QueryOptions::default()).unwrap())
            .collect::<Vec<_>>(),
        answers
    );
    assert!(db.check().unwrap().faults.is_empty());
}

#[test]
fn a_second_writer_is_told_the_database_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path());
    match Db::open(db.path()) {
        Err(e @ Error::Locked { .. }) => assert!(e.to_string().contains("locked by another process")),
        other => panic!("expected Locked, got {other:?}"),
    }
    let ro = Db::open_with(
        db.path(),
        Options {
            read_only: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert!(matches!(ro.insert("k", "a b c d"), Err(Error::ReadOnly { .. })));
}

#[test]
fn create_refuses_an_existing_database_and_open_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path());
    let path = db.path().to_path_buf();
    drop(db);
    assert!(matches!(
        Db::create(&path, &CreateOptions::default()),
        Err(Error::AlreadyExists { .. })
    ));
    assert!(matches!(Db::open(dir.path().join("nope")), Err(Error::NotFound { .. })));
}

#[test]
fn the_handle_is_send_and_sync_and_readers_run_during_writes() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Db>();
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path());
    let v = vocab();
    let texts: Vec<String> = (0..200).map(|i| text(&passage(&v, 120, i))).collect();
    // Readers query only documents already written, so every query must hit; the writer waits at
    // the halfway mark until each reader has completed a query there, so reads run during writes
    // by construction.
    let written = std::sync::atomic::AtomicUsize::new(0);
    let mid = [std::sync::atomic::AtomicBool::new(false), std::sync::atomic::AtomicBool::new(false)];
    use std::sync::atomic::Ordering::{Acquire, Release};
    std::thread::scope(|s| {
        let w = s.spawn(|| {
            for (i, t) in texts.iter().enumerate() {
                db.insert(&format!("k{i}"), t).unwrap();
                written.store(i + 1, Release);
                if i == 99 {
                    while !mid.iter().all(|m| m.load(Acquire)) {
                        std::thread::yield_now();
                    }
                }
            }
        });
        for r in 0..2 {
            let (db, texts, written, mid) = (&db, &texts, &written, &mid);
            s.spawn(move || {
                let mut seen = 0;
                loop {
                    let n = written.load(Acquire);
                    if n == 200 && seen >= 200 {
                        break;
                    }
                    if n == 0 {
                        std::thread::yield_now();
                        continue;
                    }
                    // A document is visible only whole: found by its own text with J = 1.
                    let i = (seen * 7 + r) % n;
                    let hits = db.query(&texts[i], &QueryOptions::default()).unwrap();
                    let h = hits
                        .first()
                        .unwrap_or_else(|| panic!("reader {r}: k{i} was written before the query but not found"));
                    assert_eq!(h.key, format!("k{i}"));
                    assert_eq!(h.jaccard, Some(1.0));
                    assert_eq!(db.get(&h.key).unwrap().map(|d| d.id), Some(h.id));
                    if n < 200 {
                        mid[r].store(true, Release);
                    }
                    seen += 1;
                }
            });
        }
        w.join().unwrap();
    });
    assert!(mid.iter().all(|m| m.load(Acquire)));
    assert_eq!(db.stats().docs, 200);
}

/// The pipeline (parallel workers pre-verifying against a snapshot, batches, one writer) decides
/// exactly what a sequential insert loop decides: same ids, duplicates, Jaccards and groups.
#[test]
fn the_pipeline_decides_exactly_like_sequential_inserts() {
    let v = vocab();
    let mut rng = StdRng::seed_from_u64(9);
    let bases: Vec<Vec<String>> = (0..8).map(|i| passage(&v, 150, 500 + i)).collect();
    let docs: Vec<(String, String)> = (0..400)
        .map(|i| {
            // Keys repeat now and then: replacements inside and across batches.
            let key = format!("k{}", rng.gen_range(0..300));
            (key, text(&edit(&v, &bases[rng.gen_range(0..bases.len())], rng.gen_range(0..8), i)))
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let seq = Db::create(dir.path().join("seq"), &CreateOptions::default()).unwrap();
    let expected: Vec<_> = docs.iter().map(|(k, t)| seq.insert(k, t).unwrap()).collect();
    for (batch_size, workers) in [(1, 1), (7, 2), (64, 3), (1000, 2)] {
        let db = Db::create(dir.path().join(format!("p{batch_size}")), &CreateOptions::default()).unwrap();
        let opts = fpdb::IngestOptions::default()
            .with_batch_size(batch_size)
            .with_workers(workers)
            .with_batch_latency(std::time::Duration::from_millis(1));
        let input = docs.iter().map(|(k, t)| {
            Ok(fpdb::NewDoc {
                key: k.clone(),
                text: t.clone(),
                meta: None,
                biblio: Default::default(),
            })
        });
        let mut got = Vec::new();
        db.ingest(input, &opts, |r| got.push(r.result.unwrap())).unwrap();
        assert_eq!(got.len(), expected.len());
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!(g, e, "batch {batch_size}, workers {workers}");
        }
        assert_eq!(db.stats().groups, seq.stats().groups);
        let faults = db.check().unwrap().faults;
        assert!(faults.is_empty(), "batch {batch_size}: {:?}", &faults[..faults.len().min(3)]);
    }
    assert!(
        expected.iter().filter(|o| !o.duplicates.is_empty()).count() > 100,
        "the corpus has many near-duplicates"
    );
    assert!(expected.iter().any(|o| o.replaced.is_some()));
}

/// Readers querying while one writer commits batches never see part of a batch: every batch of 10
/// documents is visible whole or not at all, and the document count is always a multiple of 10.
#[test]
fn readers_see_whole_batches_while_a_writer_commits() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path());
    let v = vocab();
    let batches: Vec<Vec<String>> = (0..60)
        .map(|b| (0..10).map(|i| text(&passage(&v, 80, 10_000 + b * 10 + i))).collect())
        .collect();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut fpr = db.fingerprinter();
            for (b, texts) in batches.iter().enumerate() {
                let docs = texts
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        db.prepare(
                            &mut fpr,
                            fpdb::NewDoc {
                                key: format!("b{b}-{i}"),
                                text: t.clone(),
                                meta: None,
                                biblio: Default::default(),
                            },
                        )
                    })
                    .collect();
                for r in db.commit_batch(docs, Dedup::Link).unwrap() {
                    r.unwrap();
                }
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        for r in 0..3u64 {
            let (db, batches, done) = (&db, &batches, &done);
            s.spawn(move || {
                let mut rng = StdRng::seed_from_u64(r);
                let mut checks = 0;
                while !done.load(std::sync::atomic::Ordering::SeqCst) || checks < 50 {
                    let n = db.stats().docs;
                    assert_eq!(n % 10, 0, "a reader saw {n} documents: part of a batch");
                    let b = rng.gen_range(0..batches.len());
                    let fps: Vec<Fingerprint> = batches[b].iter().map(|t| fingerprint(db.spec(), t)).collect();
                    // One consistent view for the ten lookups: the count of visible members.
                    let seen = fps
                        .iter()
                        .filter(|fp| !db.query_fingerprint(fp, &QueryOptions::default()).unwrap().is_empty())
                        .count();
                    // Between two lookups a whole batch may land, so only count changes of 0 -> 10
                    // are legal: recheck once to rule out a concurrent commit.
                    if seen != 0 && seen != 10 {
                        let again = fps
                            .iter()
                            .filter(|fp| !db.query_fingerprint(fp, &QueryOptions::default()).unwrap().is_empty())
                            .count();
                        assert_eq!(again, 10, "batch {b}: {seen} then {again} of 10 documents visible");
                    }
                    checks += 1;
                }
            });
        }
    });
    assert_eq!(db.stats().docs, 600);
}

/// Found by the `model` fuzz target: compacting segments whose records are all dead moves nothing,
/// and the batch that drops their committed lengths was skipped while the files were unlinked; a
/// second compaction then failed and a reopen reported the committed segment as missing.
#[test]
fn compacting_an_all_dead_segment_drops_it_durably() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::create_with(
        &path,
        &CreateOptions::default(),
        Options {
            segment_size: 4096,
            ..Options::default()
        },
    )
    .unwrap();
    let v = vocab();
    for i in 0..6 {
        db.insert(&format!("k{i}"), &text(&passage(&v, 120, i))).unwrap();
    }
    for i in 0..6 {
        db.delete(&format!("k{i}")).unwrap();
    }
    let first = db.compact(1.0).unwrap();
    assert!(first.segments_rewritten > 0 && first.records_moved == 0, "{first:?}");
    assert_eq!(
        db.compact(1.0).unwrap().segments_rewritten,
        0,
        "the dropped segments are gone from the books"
    );
    assert_eq!(db.stats().segments, 0);
    db.insert("again", &text(&passage(&v, 120, 99))).unwrap();
    drop(db);
    let db = Db::open(&path).unwrap();
    assert!(db.check().unwrap().faults.is_empty());
    assert_eq!(db.get("again").unwrap().unwrap().record.key, "again");
}

fn new_doc(key: String, text: String) -> fpdb::NewDoc {
    fpdb::NewDoc {
        key,
        text,
        meta: None,
        biblio: Default::default(),
    }
}

#[test]
fn a_precheck_of_more_documents_than_one_part_equals_one_precheck_each() {
    // `precheck_many` searches at most 8,192 documents against one snapshot; a longer call runs in
    // parts. Every document's precheck must still be what `precheck` alone gives, in every part.
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path());
    let v = vocab();
    let stored: Vec<Vec<String>> = (0..200).map(|i| passage(&v, 60, 1000 + i)).collect();
    let batch: Vec<fpdb::Result<fpdb::PreparedDoc>> = {
        let mut fpr = db.fingerprinter();
        stored
            .iter()
            .enumerate()
            .map(|(i, w)| db.prepare(&mut fpr, new_doc(format!("s{i}"), text(w))))
            .collect()
    };
    db.commit_batch(batch, Dedup::Link).unwrap();
    let mut fpr = db.fingerprinter();
    let docs: Vec<fpdb::PreparedDoc> = (0..8_300u64)
        .map(|i| {
            // Every 40th document is a near-duplicate of a stored passage, the rest are new text.
            let words = if i % 40 == 0 {
                edit(&v, &stored[(i / 40) as usize % stored.len()], 1, i)
            } else {
                passage(&v, 30, 50_000 + i)
            };
            db.prepare(&mut fpr, new_doc(format!("q{i}"), text(&words))).unwrap()
        })
        .collect();
    let refs: Vec<&fpdb::PreparedDoc> = docs.iter().collect();
    let many = db.precheck_many(&refs).unwrap();
    assert_eq!(many.len(), docs.len());
    let keys = |p: &fpdb::Precheck| p.duplicates().iter().map(|h| (h.key.clone(), h.id)).collect::<Vec<_>>();
    let mut with_dups = [0usize; 2];
    for (i, (doc, pre)) in docs.iter().zip(&many).enumerate() {
        let got = keys(pre.as_ref().unwrap());
        assert_eq!(got, keys(&db.precheck(doc).unwrap()), "document {i}");
        with_dups[usize::from(i >= 8192)] += usize::from(!got.is_empty());
    }
    // Not vacuous: both parts found near-duplicates (the second holds documents 8,192..8,300).
    assert!(with_dups[0] >= 150 && with_dups[1] >= 2, "{with_dups:?}");
}

/// `max_candidates` bounds how many candidates are verified (the nearest first)
/// and marks the answer truncated; without a bound every candidate is verified.
#[test]
fn max_candidates_bounds_the_verification_and_marks_the_answer_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path());
    let v = vocab();
    let original = passage(&v, 400, 21);
    for i in 0..6u64 {
        db.insert(&format!("near{i}"), &text(&edit(&v, &original, 2 + i as usize, 100 + i)))
            .unwrap();
    }
    let q = text(&original);
    let all = db
        .query_answer(&q, &QueryOptions::default().with_max_distance(20).with_min_jaccard(0.0))
        .unwrap();
    assert!(!all.truncated);
    assert_eq!(all.candidates, 6, "{all:?}");
    assert_eq!(all.hits.len(), 6);
    let bounded = db
        .query_answer(
            &q,
            &QueryOptions::default()
                .with_max_distance(20)
                .with_min_jaccard(0.0)
                .with_max_candidates(2),
        )
        .unwrap();
    assert!(bounded.truncated);
    assert_eq!(bounded.candidates, 2);
    assert_eq!(bounded.hits.len(), 2);
    // The nearest two by Hamming distance are the ones verified.
    let mut by_distance: Vec<(u32, u64)> = all.hits.iter().map(|h| (h.hamming, h.id)).collect();
    by_distance.sort_unstable();
    let mut got: Vec<(u32, u64)> = bounded.hits.iter().map(|h| (h.hamming, h.id)).collect();
    got.sort_unstable();
    assert_eq!(got, by_distance[..2].to_vec());
    // A bound no smaller than the candidates changes nothing.
    let loose = db
        .query_answer(
            &q,
            &QueryOptions::default()
                .with_max_distance(20)
                .with_min_jaccard(0.0)
                .with_max_candidates(6),
        )
        .unwrap();
    assert_eq!(loose, all);
    // The plain query is the unbounded answer's hits.
    assert_eq!(
        db.query(&q, &QueryOptions::default().with_max_distance(20).with_min_jaccard(0.0))
            .unwrap(),
        all.hits
    );
}

/// A deadline already past verifies nothing and says the answer is truncated; a
/// query with nothing to verify is not truncated.
#[test]
fn a_deadline_already_past_verifies_nothing_and_marks_the_answer_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path());
    let v = vocab();
    let original = passage(&v, 400, 22);
    db.insert("a", &text(&original)).unwrap();
    let past = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_millis(2));
    let opts = QueryOptions::default().with_deadline(past);
    let ans = db.query_answer(&text(&original), &opts).unwrap();
    assert!(ans.truncated, "{ans:?}");
    assert_eq!(ans.candidates, 0);
    assert!(ans.hits.is_empty());
    let none = db.query_answer(&text(&passage(&v, 400, 23)), &opts).unwrap();
    assert!(!none.truncated && none.candidates == 0 && none.hits.is_empty(), "{none:?}");
    // A containment query keeps the same bounds.
    let c = db.query_answer(&text(&original), &opts.clone().with_min_containment(0.5)).unwrap();
    assert!(c.truncated && c.candidates == 0 && c.hits.is_empty(), "{c:?}");
    let c = db
        .query_answer(&text(&original), &QueryOptions::default().with_min_containment(0.5))
        .unwrap();
    assert!(!c.truncated && c.candidates == 1 && c.hits.len() == 1, "{c:?}");
}

/// Compaction streams its copy into segments of the normal size (one segment's
/// records in memory at a time), not one segment holding every live record.
#[test]
fn compaction_writes_segments_of_the_normal_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let segment_size = 8u64 << 10;
    let opts = Options {
        segment_size,
        ..Options::default()
    };
    let db = Db::create_with(&path, &CreateOptions::default(), opts.clone()).unwrap();
    let v = vocab();
    let texts: Vec<String> = (0..60).map(|i| text(&passage(&v, 400, i + 300))).collect();
    for (i, t) in texts.iter().enumerate() {
        db.insert(&format!("k{i}"), t).unwrap();
    }
    for i in (0..60).step_by(2) {
        db.delete(&format!("k{i}")).unwrap();
    }
    let c = db.compact(0.0).unwrap();
    assert_eq!(c.records_moved, 30, "{c:?}");
    let sizes: Vec<u64> = std::fs::read_dir(path.join("segments"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .collect();
    let live: u64 = 30 * 1500;
    assert!(sizes.len() as u64 >= live / segment_size, "{sizes:?}");
    assert!(
        sizes.iter().all(|&s| s <= segment_size),
        "a segment over {segment_size} bytes: {sizes:?}"
    );
    for (i, t) in texts.iter().enumerate() {
        let keys: Vec<String> = db.query(t, &QueryOptions::default()).unwrap().into_iter().map(|h| h.key).collect();
        assert_eq!(keys.is_empty(), i % 2 == 0, "k{i}: {keys:?}");
    }
    assert!(db.check().unwrap().faults.is_empty());
    drop(db);
    let db = Db::open_with(&path, opts).unwrap();
    assert!(db.check().unwrap().faults.is_empty());
    assert_eq!(db.stats().docs, 30);
}
