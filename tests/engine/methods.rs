//! method: every method of fingerprint/method.rs through the durable engine — queries equal brute
//! force under the method's rule (with and without exact Jaccard, on the mirror and on RocksDB),
//! reopen, delete/replace, compaction, `check`, `pairs`, the ingestion pipeline, spec mismatches.

use crate::common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::{edit, passage, text, vocab};
use fpdb::fingerprint::method::{BroderParams, Method};
use fpdb::fingerprint::similarity::{compare, jaccard, MethodScore, Rule};
use fpdb::fingerprint::weighted::IdfTable;
use fpdb::fingerprint::{fingerprint, Fingerprint};
use fpdb::{CreateOptions, Db, Error, FingerprintSpec, IngestOptions, NewDoc, Options, PairsOptions, PreparedDoc, QueryOptions};

/// 24 passages of 300 words and edited copies of most (1 to 60 changed words): pairs at every
/// similarity, for every method.
fn corpus() -> Vec<(String, String)> {
    let v = vocab();
    let mut docs = Vec::new();
    for i in 0..24u64 {
        let base = passage(&v, 300, 1000 + i);
        docs.push((format!("p{i}"), text(&base)));
        for (j, changes) in [1usize, 3, 8, 20, 60].iter().enumerate() {
            if !(i + j as u64).is_multiple_of(3) {
                docs.push((format!("p{i}-e{changes}"), text(&edit(&v, &base, *changes, 77 * i + j as u64))));
            }
        }
    }
    docs
}

fn methods(docs: &[(String, String)]) -> Vec<Method> {
    let idf = Arc::new(IdfTable::from_texts(docs.iter().map(|d| d.1.as_str())));
    ["simhash", "broder", "charikar", "broder-charikar", "multi-lexicon"]
        .iter()
        .map(|n| n.parse().unwrap())
        .chain([Method::weighted(idf)])
        .collect()
}

fn create(dir: &std::path::Path, method: &Method) -> Db {
    let opts = CreateOptions::default()
        .with_spec(FingerprintSpec::default().with_method(method.clone()))
        .with_max_distance(method.default_max_distance());
    Db::create(dir.join("db"), &opts).unwrap()
}

/// What a query must return: every live document satisfying the rule (and Jaccard ≥ t), with its
/// score, sorted by id.
fn brute(spec: &FingerprintSpec, live: &[(u64, Fingerprint)], q: &Fingerprint, rule: Rule, t: f64) -> Vec<(u64, MethodScore)> {
    live.iter()
        .map(|(id, f)| (*id, compare(&spec.method, q.simhash, &q.sketch, f.simhash, &f.sketch), f))
        .filter(|(_, s, f)| s.satisfies(rule) && jaccard(&q.shingles, &f.shingles).jaccard >= t)
        .map(|(id, s, _)| (id, s))
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_iter()
        .collect()
}

fn got(db: &Db, text: &str, opts: &QueryOptions) -> Vec<(u64, MethodScore)> {
    let mut h: Vec<(u64, MethodScore)> = db.query(text, opts).unwrap().into_iter().map(|h| (h.id, h.score)).collect();
    h.sort_by_key(|x| x.0);
    h
}

/// Every query (every document's text) against brute force, for a few rules and both t.
fn assert_queries_exact(db: &Db, docs: &[(String, String)], live: &BTreeSet<String>, what: &str) {
    let spec = db.spec().clone();
    let live_fps: Vec<(u64, Fingerprint)> = docs
        .iter()
        .filter(|d| live.contains(&d.0))
        .map(|d| (db.get(&d.0).unwrap().unwrap().id, fingerprint(&spec, &d.1)))
        .collect();
    let k0 = db.config().max_distance;
    let rules: Vec<(u32, u32)> = match &spec.method {
        Method::Broder(_) | Method::BroderCharikar(..) => vec![(k0, 1), (k0, 2), (k0, 4), (k0.saturating_sub(8), 2)],
        _ => vec![(k0, 1), (0, 1), (k0 + 4, 1)],
    };
    for (k, s) in rules {
        for t in [0.0, 0.9] {
            let opts = QueryOptions::default().with_max_distance(k).with_min_jaccard(t).with_min_shared(s);
            for (_, text) in docs.iter().step_by(3) {
                let q = fingerprint(&spec, text);
                assert_eq!(
                    got(db, text, &opts),
                    brute(
                        &spec,
                        &live_fps,
                        &q,
                        Rule {
                            max_distance: k,
                            min_shared: s
                        },
                        t
                    ),
                    "{what}: k={k} s={s} t={t}"
                );
            }
        }
    }
}

#[test]
fn every_method_answers_exactly_through_reopen_without_mirror_delete_replace_and_compaction() {
    let docs = corpus();
    for method in methods(&docs) {
        let name = method.name();
        let dir = tempfile::tempdir().unwrap();
        let db = create(dir.path(), &method);
        for (k, t) in &docs {
            db.insert(k, t).unwrap();
        }
        let mut live: BTreeSet<String> = docs.iter().map(|d| d.0.clone()).collect();
        assert_queries_exact(&db, &docs, &live, &format!("{name}: after inserts"));
        // The candidates really come from the method: some pairs are found under every method.
        let pairs = fpdb::pairs(
            &db,
            &PairsOptions {
                max_distance: db.config().max_distance,
                min_jaccard: None,
                threads: 2,
                min_shared: None,
            },
        )
        .unwrap();
        assert!(!pairs.pairs.is_empty(), "{name}: no pair at all");
        assert!(db.check().unwrap().faults.is_empty(), "{name}: {:?}", db.check().unwrap().faults);

        // Delete a third, replace a third with another document's text.
        for (i, (k, _)) in docs.iter().enumerate() {
            match i % 3 {
                0 => {
                    assert!(db.delete(k).unwrap());
                    live.remove(k);
                }
                1 => {
                    let other = &docs[(i * 7) % docs.len()].1;
                    db.insert(k, other).unwrap();
                }
                _ => {}
            }
        }
        let current: Vec<(String, String)> = docs
            .iter()
            .enumerate()
            .map(|(i, (k, t))| {
                (
                    k.clone(),
                    if i % 3 == 1 {
                        docs[(i * 7) % docs.len()].1.clone()
                    } else {
                        t.clone()
                    },
                )
            })
            .collect();
        let rep = db.check().unwrap();
        assert!(rep.faults.is_empty(), "{name}: {:?}", rep.faults);
        assert_queries_exact(&db, &current, &live, &format!("{name}: after deletes and replacements"));
        db.compact(0.0).unwrap();
        assert!(db.check().unwrap().faults.is_empty(), "{name} after compaction");
        drop(db);

        let db = Db::open(dir.path().join("db")).unwrap();
        assert_eq!(db.spec().method, method);
        assert!(db.check().unwrap().faults.is_empty(), "{name} after reopen");
        assert_queries_exact(&db, &current, &live, &format!("{name}: after reopen"));
        drop(db);
        let no_mirror = Db::open_with(
            dir.path().join("db"),
            Options {
                mirror: false,
                ..Options::default()
            },
        )
        .unwrap();
        assert_queries_exact(&no_mirror, &current, &live, &format!("{name}: RocksDB buckets (no mirror)"));
        assert!(no_mirror.check().unwrap().faults.is_empty(), "{name} without mirror");
    }
}

#[test]
fn pairs_are_every_pair_under_the_rule_once() {
    let docs = corpus();
    for method in methods(&docs) {
        let dir = tempfile::tempdir().unwrap();
        let db = create(dir.path(), &method);
        for (k, t) in &docs {
            db.insert(k, t).unwrap();
        }
        let spec = db.spec().clone();
        let fps: Vec<(u64, Fingerprint)> = docs
            .iter()
            .map(|d| (db.get(&d.0).unwrap().unwrap().id, fingerprint(&spec, &d.1)))
            .collect();
        let s_values: Vec<Option<u32>> = match method {
            Method::Broder(_) | Method::BroderCharikar(..) => vec![None, Some(1), Some(3)],
            _ => vec![None],
        };
        for s in s_values {
            let k = db.config().max_distance;
            for t in [None, Some(0.9)] {
                let rep = fpdb::pairs(
                    &db,
                    &PairsOptions {
                        max_distance: k,
                        min_jaccard: t,
                        threads: 2,
                        min_shared: s,
                    },
                )
                .unwrap();
                let got: Vec<(u64, u64)> = rep.pairs.iter().map(|p| (p.a, p.b)).collect();
                let rule = Rule {
                    max_distance: k,
                    min_shared: s.unwrap_or(2),
                };
                let mut want = Vec::new();
                for (i, (a, fa)) in fps.iter().enumerate() {
                    for (b, fb) in &fps[i + 1..] {
                        let sc = compare(&spec.method, fa.simhash, &fa.sketch, fb.simhash, &fb.sketch);
                        if sc.satisfies(rule) && t.is_none_or(|t| jaccard(&fa.shingles, &fb.shingles).jaccard >= t) {
                            want.push(((*a).min(*b), (*a).max(*b)));
                        }
                    }
                }
                want.sort_unstable();
                assert_eq!(got, want, "{}: s={s:?} t={t:?}", method.name());
            }
        }
    }
}

/// The corpus as the pipeline's input.
fn new_docs(docs: &[(String, String)]) -> impl Iterator<Item = fpdb::Result<NewDoc>> + Send + '_ {
    docs.iter().map(|(k, t)| {
        Ok(NewDoc {
            key: k.clone(),
            text: t.clone(),
            meta: None,
            biblio: Default::default(),
        })
    })
}

#[test]
fn the_pipeline_equals_a_sequential_insert_loop_for_every_method() {
    let docs = corpus();
    for method in methods(&docs) {
        let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (a, b) = (create(d1.path(), &method), create(d2.path(), &method));
        for (k, t) in &docs {
            a.insert(k, t).unwrap();
        }
        let input = new_docs(&docs);
        let opts = IngestOptions::default().with_workers(2).with_batch_size(7);
        b.ingest(input, &opts, |_| {}).unwrap();
        for (k, _) in &docs {
            let (x, y) = (a.get(k).unwrap().unwrap(), b.get(k).unwrap().unwrap());
            assert_eq!((x.id, x.group.id), (y.id, y.group.id), "{}: {k}", method.name());
        }
        assert!(b.check().unwrap().faults.is_empty());
    }
}

#[test]
fn a_different_method_or_parameter_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let broder: Method = "broder".parse().unwrap();
    drop(create(dir.path(), &broder));
    let open = |spec: FingerprintSpec| {
        Db::open_with(
            dir.path().join("db"),
            Options {
                expect_spec: Some(spec),
                ..Options::default()
            },
        )
    };
    match open(FingerprintSpec::default()) {
        Err(Error::SpecMismatch {
            field, expected, found, ..
        }) => assert_eq!((field, expected.as_str(), found.as_str()), ("method", "simhash", "broder")),
        other => panic!("{other:?}"),
    }
    let s3 = Method::Broder(BroderParams {
        min_shared: 3,
        ..BroderParams::default()
    });
    match open(FingerprintSpec::default().with_method(s3)) {
        Err(Error::SpecMismatch { field, .. }) => assert_eq!(field, "method.min_shared"),
        other => panic!("{other:?}"),
    }
    open(FingerprintSpec::default().with_method(broder)).unwrap();
}

#[test]
fn a_fingerprint_without_the_methods_sketch_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path(), &"charikar".parse().unwrap());
    let fp = Fingerprint {
        simhash: 1,
        shingles: vec![1, 2],
        sketch: vec![0; 5],
    };
    let r = db
        .commit_batch(vec![PreparedDoc::new("x".into(), fp, None)], fpdb::Dedup::Link)
        .unwrap();
    assert!(matches!(&r[0], Err(Error::InvalidInput { .. })), "{r:?}");
    assert_eq!(db.stats().docs, 0);
}

#[test]
fn a_weighted_database_keeps_its_idf_table_and_refuses_a_damaged_one() {
    let docs = corpus();
    let table = Arc::new(IdfTable::from_texts(docs.iter().map(|d| d.1.as_str())));
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path(), &Method::weighted(table.clone()));
    db.insert("a", &docs[0].1).unwrap();
    let before = db.get("a").unwrap().unwrap().record.simhash;
    drop(db);
    let db = Db::open(dir.path().join("db")).unwrap();
    assert_eq!(db.spec().method.idf().map(|t| t.hash()), Some(table.hash()));
    assert_eq!(db.fingerprinter().fingerprint(&docs[0].1).simhash, before);
    // A table that is not the one the spec names is refused at open.
    drop(db);
    let rocks = rocksdb::DB::open_cf(
        &rocksdb::Options::default(),
        dir.path().join("db/rocksdb"),
        rocksdb::DB::list_cf(&rocksdb::Options::default(), dir.path().join("db/rocksdb")).unwrap(),
    )
    .unwrap();
    let other = IdfTable::from_texts(["something else entirely"]);
    rocks.put_cf(rocks.cf_handle("meta").unwrap(), b"idf", other.encode()).unwrap();
    drop(rocks);
    let err = Db::open(dir.path().join("db")).unwrap_err();
    assert!(err.is_corruption(), "{err}");
}

/// The multi-lexicon crawler loop (ingest with dedup link: the workers' batched prechecks against
/// one snapshot of the bucket mirror, the writer's completion through the method index, the batch
/// members compared by lexicon column) reports for every document exactly the earlier documents
/// brute force finds under the rule and the Jaccard threshold, with their scores: with one batch
/// for everything, a document per batch, and batches between.
#[test]
fn the_multi_lexicon_crawler_loop_reports_exactly_the_brute_force_duplicates() {
    let docs = corpus();
    let method: Method = "multi-lexicon".parse().unwrap();
    for (batch, workers) in [(1, 1), (5, 2), (16, 2), (4096, 2)] {
        let dir = tempfile::tempdir().unwrap();
        let db = create(dir.path(), &method);
        let (spec, t) = (db.spec().clone(), db.config().min_jaccard);
        let rule = Rule {
            max_distance: db.config().max_distance,
            min_shared: 1,
        };
        let fps: Vec<Fingerprint> = docs.iter().map(|(_, text)| fingerprint(&spec, text)).collect();
        let input = new_docs(&docs);
        let opts = IngestOptions::default().with_workers(workers).with_batch_size(batch);
        let mut seen = 0;
        let mut linked = 0;
        db.ingest(input, &opts, |r| {
            let i = r.seq as usize;
            let mut got: Vec<(String, MethodScore)> = r.result.unwrap().duplicates.into_iter().map(|h| (h.key, h.score)).collect();
            got.sort_by(|a, b| a.0.cmp(&b.0));
            let mut want: Vec<(String, MethodScore)> = (0..i)
                .map(|j| {
                    (
                        j,
                        compare(&spec.method, fps[i].simhash, &fps[i].sketch, fps[j].simhash, &fps[j].sketch),
                    )
                })
                .filter(|(j, s)| s.satisfies(rule) && jaccard(&fps[i].shingles, &fps[*j].shingles).jaccard >= t)
                .map(|(j, s)| (docs[j].0.clone(), s))
                .collect();
            want.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(got, want, "batch {batch}, workers {workers}: {}", docs[i].0);
            seen += 1;
            linked += usize::from(!got.is_empty());
        })
        .unwrap();
        assert_eq!(seen, docs.len());
        assert!(linked >= docs.len() / 4, "the corpus has near-duplicates to find ({linked} linked)");
    }
}
