//! Containment: a passage inside a longer document is found in both directions at its
//! exact containment, unrelated text is not; the index's candidates hold every document with
//! containment 1; the index follows inserts, replacements, deletes, compaction and reopen; ingest
//! reports relations apart from the groups; a database without the index refuses containment.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashSet};

use common::{passage, text, vocab};
use fpdb::fingerprint::similarity::containment;
use fpdb::{ContainmentConfig, CreateOptions, Db, Dedup, Error, Fingerprint, IngestOptions, NewDoc, PreparedDoc, QueryOptions};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn create(dir: &std::path::Path, c: Option<ContainmentConfig>) -> Db {
    Db::create(dir.join("db"), &CreateOptions::default().with_containment(c)).unwrap()
}

/// `words` with `rate` of its words replaced (0–5% in the requirement), positions and words by `seed`.
fn edited(v: &[String], words: &[String], rate: f64, seed: u64) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut w = words.to_vec();
    let n = (rate * w.len() as f64).round() as usize;
    for i in rand::seq::index::sample(&mut rng, w.len(), n) {
        w[i] = v[rng.gen_range(0..v.len())].clone();
    }
    w
}

struct Case {
    passage: Vec<String>,
    /// The host: filler with an edited copy of the passage inside.
    host: Vec<String>,
    /// The edited copy, alone.
    copy: Vec<String>,
}

fn cases() -> Vec<Case> {
    let v = vocab();
    let mut out = Vec::new();
    let mut seed = 1000u64;
    for words in [50usize, 150, 500] {
        for factor in [2usize, 10, 50] {
            for rate in [0.0, 0.025, 0.05] {
                seed += 1;
                let p = passage(&v, words, seed);
                let copy = edited(&v, &p, rate, seed + 50_000);
                let filler = passage(&v, words * factor - words, seed + 100_000);
                let at = StdRng::seed_from_u64(seed).gen_range(0..=filler.len());
                let mut host = filler[..at].to_vec();
                host.extend(copy.iter().cloned());
                host.extend(filler[at..].iter().cloned());
                out.push(Case { passage: p, host, copy });
            }
        }
    }
    out
}

const C: f64 = 0.5;

/// Without the sample cap (every rate-n sample a key: databases created before it), a passage is
/// found inside a host 50 times longer. With the cap (the default), see
/// `long_documents_under_the_sample_cap`.
#[test]
fn a_passage_inside_a_longer_document_is_found_in_both_directions() {
    let dir = tempfile::tempdir().unwrap();
    let uncapped = ContainmentConfig::default().with_max_samples(None);
    let hosts = create(&dir.path().join("h"), Some(uncapped));
    let copies = create(&dir.path().join("c"), Some(uncapped));
    let cases = cases();
    let fpr = &mut hosts.fingerprinter();
    for (i, c) in cases.iter().enumerate() {
        hosts.insert(&format!("host{i}"), &text(&c.host)).unwrap();
        copies.insert(&format!("copy{i}"), &text(&c.copy)).unwrap();
    }
    // Unrelated documents in both databases: never found.
    let v = vocab();
    for j in 0..20u64 {
        let t = text(&passage(&v, 300, 900_000 + j));
        hosts.insert(&format!("other{j}"), &t).unwrap();
        copies.insert(&format!("other{j}"), &t).unwrap();
    }
    let q = QueryOptions::default().with_min_containment(C);
    for (i, c) in cases.iter().enumerate() {
        let p = fpr.fingerprint(&text(&c.passage));
        let h = fpr.fingerprint(&text(&c.host));
        let cp = fpr.fingerprint(&text(&c.copy));
        let label = format!("case {i} ({} words in {} words)", c.passage.len(), c.host.len());

        // The passage (query) inside the stored host: `containment`.
        let hits = hosts.query(&text(&c.passage), &q).unwrap();
        let keys: Vec<&str> = hits.iter().map(|h| h.key.as_str()).collect();
        assert_eq!(keys, vec![format!("host{i}")], "{label}: passage → hosts");
        let truth = containment(&p.shingles, &h.shingles);
        assert_eq!(hits[0].containment, Some(truth.a_in_b), "{label}");
        assert_eq!(hits[0].reverse_containment, Some(truth.b_in_a), "{label}");
        assert_eq!(hits[0].jaccard, Some(truth.jaccard), "{label}");
        // 0–5% word edits leave most of the passage's trigrams in place.
        assert!(truth.a_in_b >= 0.8, "{label}: containment {}", truth.a_in_b);

        // The host (query) holding the stored copy: `reverse_containment`.
        let hits = copies.query(&text(&c.host), &q).unwrap();
        let keys: Vec<&str> = hits.iter().map(|h| h.key.as_str()).collect();
        assert_eq!(keys, vec![format!("copy{i}")], "{label}: host → copies");
        let truth = containment(&h.shingles, &cp.shingles);
        assert_eq!(hits[0].containment, Some(truth.a_in_b), "{label}");
        assert_eq!(hits[0].reverse_containment, Some(1.0), "{label}: the copy is whole inside its host");
    }
    // Unrelated text finds nothing.
    let other = text(&passage(&v, 400, 777_777));
    assert!(hosts.query(&other, &q).unwrap().is_empty());
    assert!(copies.query(&other, &q).unwrap().is_empty());
    assert!(hosts.check().unwrap().faults.is_empty());
}

/// The sample cap: a long document writes about `max_samples` postings instead of one
/// per n shingles, a passage (at most n · max_samples shingles) the same keys as without the cap;
/// a long document inside another is found in both directions, as a query and as a stored
/// document, by `containment_pairs`, and after reopening; a stored passage inside a long query is
/// always found.
#[test]
fn long_documents_under_the_sample_cap() {
    use fpdb::fingerprint::containment::{stored_keys, Sampling, DEFAULT_MAX_SAMPLES};
    // The default is capped; the test takes a cap of 64 so that its 3,000- and 5,000-word
    // documents sit two and three levels above it.
    assert_eq!(ContainmentConfig::default().max_samples, Some(DEFAULT_MAX_SAMPLES));
    const CAP: u32 = 64;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let cfg = ContainmentConfig::default().with_max_samples(Some(CAP));
    let db = Db::create(&path, &CreateOptions::default().with_containment(Some(cfg))).unwrap();
    let v = vocab();
    let inner = passage(&v, 3000, 4242);
    let mut outer = passage(&v, 2000, 4343);
    outer.splice(700..700, inner.iter().cloned());
    let short = inner[1000..1060].to_vec();
    let other = passage(&v, 400, 4444);
    for (k, w) in [("inner", &inner), ("outer", &outer), ("short", &short), ("other", &other)] {
        db.insert(k, &text(w)).unwrap();
    }
    let fpr = &mut db.fingerprinter();
    let sets: Vec<Vec<u32>> = [&inner, &outer, &short, &other]
        .iter()
        .map(|w| fpr.fingerprint(&text(w)).shingles)
        .collect();
    let capped = cfg.sampling();
    // Long sets: about max_samples keys (max_samples/2 … max_samples in expectation), not |S|/n.
    for s in &sets[..2] {
        let keys = stored_keys(s, capped).1.len();
        assert!(
            s.len() > 2000 && keys <= 2 * CAP as usize && keys >= 8,
            "{} shingles, {keys} keys",
            s.len()
        );
        assert!(stored_keys(s, 8).1.len() > 3 * keys);
    }
    // Passages: the same keys as without the cap.
    for s in &sets[2..] {
        assert!(s.len() <= 8 * CAP as usize);
        assert_eq!(stored_keys(s, capped), stored_keys(s, Sampling::from(8)));
    }
    let stats = db.containment().stats().unwrap().unwrap();
    let want: usize = sets.iter().map(|s| stored_keys(s, capped).1.len()).sum();
    assert_eq!(stats.entries as usize, want);
    let q = QueryOptions::default().with_min_containment(0.9);
    let check = |db: &Db| {
        let keys = |w: &[String]| -> BTreeSet<String> { db.query(&text(w), &q).unwrap().into_iter().map(|h| h.key).collect() };
        // The long document inside the stored long one, and the stored long one inside the query.
        assert!(keys(&inner).contains("outer"), "inner → outer");
        assert!(keys(&outer).contains("inner"), "outer → inner");
        // A stored passage inside a long query: always.
        assert!(keys(&inner).contains("short") && keys(&outer).contains("short"));
        assert!(!keys(&outer).contains("other"));
        let pairs = db.containment().pairs(0.9, 2).unwrap();
        let got: BTreeSet<(String, String)> = pairs.iter().map(|p| (db.key_of(p.a).unwrap(), db.key_of(p.b).unwrap())).collect();
        for want in [("inner", "outer"), ("inner", "short"), ("outer", "short")] {
            assert!(got.contains(&(want.0.to_string(), want.1.to_string())), "{want:?} in {got:?}");
        }
        assert_eq!(got.len(), pairs.len(), "a pair reported twice");
        assert!(db.check().unwrap().faults.is_empty());
    };
    check(&db);
    drop(db);
    let db = Db::open(&path).unwrap();
    assert_eq!(db.config().containment, Some(cfg));
    check(&db);
}

#[test]
fn without_the_index_containment_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path(), None);
    db.insert("a", "one two three four five six seven").unwrap();
    let q = QueryOptions::default().with_min_containment(0.5);
    let refused = |r: Result<(), Error>| {
        matches!(
            r,
            Err(Error::InvalidOption {
                name: "min_containment",
                ..
            })
        )
    };
    assert!(refused(db.query("one two three", &q).map(drop)));
    assert!(refused(db.containment().pairs(0.5, 1).map(drop)));
    let docs = vec![Ok(NewDoc {
        key: "b".into(),
        text: "one two three".into(),
        meta: None,
        biblio: Default::default(),
    })];
    assert!(refused(
        db.ingest(docs, &IngestOptions::default().with_containment(0.5), |_| {}).map(drop)
    ));
    assert_eq!(db.key_of(1), None, "nothing was stored by the refused ingest");
    assert!(db.containment().stats().unwrap().is_none());
    // Reopened, still off; ordinary queries work.
    drop(db);
    let db = Db::open(dir.path().join("db")).unwrap();
    assert_eq!(db.config().containment, None);
    assert_eq!(
        db.query("one two three four five six seven", &QueryOptions::default())
            .unwrap()
            .len(),
        1
    );
    // Out-of-range thresholds are refused too.
    let dir2 = tempfile::tempdir().unwrap();
    let on = create(dir2.path(), Some(ContainmentConfig::default()));
    assert!(on.query("x y z", &QueryOptions::default().with_min_containment(1.5)).is_err());
}

/// Random shingle sets with planted subsets and supersets (some short: fewer shingles than the
/// sampling rate makes likely to hold a sample).
fn planted_sets(seed: u64, n: usize) -> Vec<Vec<u32>> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut sets: Vec<Vec<u32>> = Vec::new();
    for _ in 0..n {
        let s: BTreeSet<u32> = match (sets.len(), rng.gen_range(0..4)) {
            (0, _) | (_, 0) => (0..rng.gen_range(1..120)).map(|_| rng.gen_range(0..5000)).collect(),
            (_, 1) => {
                // A subset of an earlier set.
                let base = &sets[rng.gen_range(0..sets.len())];
                base.iter().copied().filter(|_| rng.gen_bool(0.3)).collect()
            }
            (_, 2) => {
                // A superset of an earlier set.
                let base = &sets[rng.gen_range(0..sets.len())];
                base.iter()
                    .copied()
                    .chain((0..rng.gen_range(0..200)).map(|_| rng.gen_range(0..5000)))
                    .collect()
            }
            _ => {
                // A small subset.
                let base = &sets[rng.gen_range(0..sets.len())];
                base.iter().copied().take(rng.gen_range(1..6)).collect()
            }
        };
        if !s.is_empty() {
            sets.push(s.into_iter().collect());
        }
    }
    sets
}

fn fp(set: &[u32]) -> Fingerprint {
    Fingerprint {
        simhash: set.iter().fold(0u64, |h, &s| h.rotate_left(5) ^ u64::from(s)),
        shingles: set.to_vec(),
        sketch: Vec::new(),
    }
}

/// True when `set` has a sample at the rate at which `stored` is keyed (its sampling rate, coarser
/// for a set over the sample cap: `Sampling::rate`).
fn has_sample(set: &[u32], stored: &[u32], sampling: fpdb::fingerprint::containment::Sampling) -> bool {
    let rate = sampling.rate(stored.len());
    set.iter().any(|&s| fpdb::fingerprint::containment::is_sample_at(s, rate))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    /// Every stored document with containment 1 in the query is a hit; so is every stored
    /// document the query is wholly inside of, when the query has a sample; every hit's numbers are
    /// exact. Holds through replacements and deletes, and after reopening.
    #[test]
    fn every_document_with_containment_one_is_found(seed in any::<u64>(), n in prop_oneof![Just(1u32), Just(4), Just(8), Just(16)], cap in prop_oneof![Just(None), Just(Some(2u32)), Just(Some(8)), Just(Some(64))]) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let cfg = ContainmentConfig::new(n).with_max_samples(cap);
        let sampling = cfg.sampling();
        let db = Db::create(&path, &CreateOptions::default().with_containment(Some(cfg))).unwrap();
        let sets = planted_sets(seed, 60);
        let mut live: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        let batch: Vec<_> = sets.iter().enumerate().map(|(i, s)| PreparedDoc::new(format!("d{i}"), fp(s), None)).collect();
        for r in db.commit_batch(batch, Dedup::Off).unwrap() { r.unwrap(); }
        for (i, s) in sets.iter().enumerate() { live.insert(format!("d{i}"), s.clone()); }
        // Replace a few documents with other sets and delete a few.
        let mut rng = StdRng::seed_from_u64(seed ^ 0xABCD);
        for _ in 0..8 {
            let k = format!("d{}", rng.gen_range(0..sets.len()));
            if rng.gen_bool(0.5) {
                let s = sets[rng.gen_range(0..sets.len())].clone();
                db.commit_batch(vec![PreparedDoc::new(k.clone(), fp(&s), None)], Dedup::Off).unwrap().pop().unwrap().unwrap();
                live.insert(k, s);
            } else {
                db.delete(&k).unwrap();
                live.remove(&k);
            }
        }
        let check = |db: &Db| -> Result<(), TestCaseError> {
            let rep = db.check().unwrap();
            prop_assert!(rep.faults.is_empty(), "{:?}", rep.faults);
            let q = QueryOptions::default().with_min_containment(1.0);
            for s in sets.iter().take(30) {
                let hits = db.query_fingerprint(&fp(s), &q).unwrap();
                let got: HashSet<String> = hits.iter().map(|h| h.key.clone()).collect();
                for (k, d) in &live {
                    let c = containment(s, d);
                    if c.b_in_a == 1.0 || (c.a_in_b == 1.0 && has_sample(s, d, sampling)) {
                        prop_assert!(got.contains(k), "{} (containment {:?}) not found", k, c);
                    }
                }
                for h in &hits {
                    let c = containment(s, &live[&h.key]);
                    prop_assert_eq!(h.containment, Some(c.a_in_b));
                    prop_assert_eq!(h.reverse_containment, Some(c.b_in_a));
                    prop_assert!(c.max() >= 1.0);
                }
            }
            // All pairs with containment 1 (either direction), each once.
            let pairs = db.containment().pairs(1.0, 2).unwrap();
            let got: BTreeSet<(String, String)> = pairs.iter().map(|p| (db.key_of(p.a).unwrap(), db.key_of(p.b).unwrap())).collect();
            prop_assert_eq!(got.len(), pairs.len(), "a pair reported twice");
            let ids: BTreeMap<String, u64> = live.keys().map(|k| (k.clone(), db.get(k).unwrap().unwrap().id)).collect();
            let mut want = BTreeSet::new();
            for (a, sa) in &live {
                for (b, sb) in &live {
                    if ids[a] < ids[b] && containment(sa, sb).max() >= 1.0 {
                        want.insert((a.clone(), b.clone()));
                    }
                }
            }
            prop_assert_eq!(got, want);
            Ok(())
        };
        check(&db)?;
        drop(db);
        let db = Db::open(&path).unwrap();
        check(&db)?;
    }
}

#[test]
fn ingest_reports_containment_apart_from_groups() {
    let v = vocab();
    let dir = tempfile::tempdir().unwrap();
    let with = create(&dir.path().join("with"), Some(ContainmentConfig::default()));
    let without = create(&dir.path().join("without"), Some(ContainmentConfig::default()));
    // Chapters, a thesis holding them (same batch, later), near-duplicates of a chapter, and an
    // abstract inside a committed paper.
    let chapters: Vec<Vec<String>> = (0..3).map(|i| passage(&v, 300, 10 + i)).collect();
    let thesis: Vec<String> = chapters.iter().flatten().cloned().collect();
    let mut docs: Vec<(String, String)> = Vec::new();
    for (i, c) in chapters.iter().enumerate() {
        docs.push((format!("chapter{i}"), text(c)));
    }
    docs.push(("chapter0-again".into(), text(&edited(&v, &chapters[0], 0.01, 5))));
    docs.push(("thesis".into(), text(&thesis)));
    docs.push(("unrelated".into(), text(&passage(&v, 200, 99))));
    let items = || {
        docs.iter()
            .map(|(k, t)| {
                Ok(NewDoc {
                    key: k.clone(),
                    text: t.clone(),
                    meta: None,
                    biblio: Default::default(),
                })
            })
            .collect::<Vec<_>>()
    };
    let mut out = BTreeMap::new();
    let opts = IngestOptions::default().with_containment(0.9).with_batch_size(2).with_workers(2);
    let stats = with
        .ingest(items(), &opts, |r| {
            let o = r.result.unwrap();
            out.insert(o.key.clone(), o);
        })
        .unwrap();
    let mut plain = BTreeMap::new();
    without
        .ingest(items(), &IngestOptions::default().with_batch_size(2).with_workers(2), |r| {
            let o = r.result.unwrap();
            plain.insert(o.key.clone(), o);
        })
        .unwrap();
    // Groups and duplicates are the same with and without containment reporting.
    for (k, o) in &out {
        assert_eq!(o.group, plain[k].group, "{k}");
        assert_eq!(o.duplicates, plain[k].duplicates, "{k}");
        assert!(plain[k].containment.is_empty());
    }
    let rel = |k: &str| -> BTreeMap<String, (f64, f64)> {
        out[k]
            .containment
            .iter()
            .map(|h| (h.key.clone(), (h.containment.unwrap(), h.reverse_containment.unwrap())))
            .collect()
    };
    // The thesis contains every chapter (and the near-copy of chapter 0, almost whole).
    let t = rel("thesis");
    for i in 0..3 {
        let (c, r) = t[&format!("chapter{i}")];
        assert_eq!(r, 1.0, "chapter{i} is whole inside the thesis");
        assert!(c < 0.4, "the thesis is not inside a chapter: {c}");
    }
    assert!(t.contains_key("chapter0-again"));
    assert!(!t.contains_key("unrelated"));
    // The near-copy is related to chapter 0 (and a near-duplicate in its group, as before).
    assert!(rel("chapter0-again").contains_key("chapter0"));
    assert!(rel("unrelated").is_empty());
    assert_eq!(
        out["thesis"].group.as_ref().unwrap().size,
        1,
        "a whole is not a duplicate of its parts"
    );
    assert_eq!(stats.with_containment, 2);
    // The same relations from a query and from all pairs.
    let pairs = with.containment().pairs(0.9, 1).unwrap();
    let thesis_id = with.get("thesis").unwrap().unwrap().id;
    assert_eq!(pairs.iter().filter(|p| p.b == thesis_id && p.a_in_b == 1.0).count(), 3);
    let s = with.containment().stats().unwrap().unwrap();
    assert_eq!(s.sampled_docs, 6);
    assert_eq!(s.frequent_keys, 0);
}

#[test]
fn frequent_samples_are_skipped_and_counted() {
    // 30 documents share one boilerplate paragraph; with a posting cap of 10 its samples are
    // skipped, so a query holding only the boilerplate finds nothing, while each document's own
    // text still finds it.
    let v = vocab();
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path(), Some(ContainmentConfig::new(4).with_max_postings(10)));
    let boiler = passage(&v, 80, 1);
    let mut own = Vec::new();
    for i in 0..30u64 {
        let mine = passage(&v, 200, 100 + i);
        let doc: Vec<String> = boiler.iter().chain(&mine).cloned().collect();
        db.insert(&format!("doc{i}"), &text(&doc)).unwrap();
        own.push(mine);
    }
    let q = QueryOptions::default().with_min_containment(0.9);
    assert!(db.query(&text(&boiler), &q).unwrap().is_empty(), "boilerplate keys are skipped");
    let hits = db.query(&text(&own[7]), &q).unwrap();
    assert_eq!(hits.iter().map(|h| h.key.as_str()).collect::<Vec<_>>(), ["doc7"]);
    let s = db.containment().stats().unwrap().unwrap();
    assert!(s.frequent_keys > 0 && s.longest_posting == 30, "{s:?}");
    assert_eq!(s.frequent_entries, 30 * s.frequent_keys);
}

#[test]
fn check_finds_missing_and_stray_index_entries() {
    let v = vocab();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = Db::create(&path, &CreateOptions::default().with_containment(Some(ContainmentConfig::new(4)))).unwrap();
        for i in 0..10u64 {
            db.insert(&format!("k{i}"), &text(&passage(&v, 100, i))).unwrap();
        }
        // A short document: indexed under all its shingles.
        db.insert("tiny", "just two").unwrap();
        let rep = db.check().unwrap();
        assert!(rep.faults.is_empty(), "{:?}", rep.faults);
        assert!(rep.contain_entries > 10);
    }
    let id = Db::open(&path).unwrap().get("k3").unwrap().unwrap().id;
    {
        let rp = path.join("rocksdb");
        let names = rocksdb::DB::list_cf(&rocksdb::Options::default(), &rp).unwrap();
        let raw = rocksdb::DB::open_cf(&rocksdb::Options::default(), &rp, &names).unwrap();
        let cf = raw.cf_handle("contain").unwrap();
        // Remove one of k3's entries; add a stray entry for a document that does not exist.
        let k = raw
            .iterator_cf(cf, rocksdb::IteratorMode::Start)
            .map(|i| i.unwrap().0)
            .find(|k| k.len() == 13 && k[5..] == id.to_be_bytes())
            .unwrap();
        raw.delete_cf(cf, &k).unwrap();
        let mut stray = k.to_vec();
        stray[5..].copy_from_slice(&999u64.to_be_bytes());
        raw.put_cf(cf, &stray, []).unwrap();
    }
    let db = Db::open(&path).unwrap();
    let rep = db.check().unwrap();
    let what: Vec<String> = rep.faults.iter().map(|f| format!("{:?} {}", f.doc, f.what)).collect();
    assert_eq!(rep.faults.len(), 3, "{what:?}");
    assert!(
        what.iter()
            .any(|w| w.starts_with(&format!("Some({id})")) && w.contains("keys are missing")),
        "{what:?}"
    );
    assert!(
        what.iter()
            .any(|w| w.starts_with(&format!("Some({id})")) && w.contains("entries, expected")),
        "{what:?}"
    );
    assert!(
        what.iter().any(|w| w.starts_with("Some(999)") && w.contains("without a live doc")),
        "{what:?}"
    );
    // The rest of the index still answers.
    let q = QueryOptions::default().with_min_containment(0.9);
    assert_eq!(db.query("just two", &q).unwrap()[0].key, "tiny");
}

#[test]
fn stats_count_the_live_sampled_and_short_documents() {
    let v = vocab();
    let dir = tempfile::tempdir().unwrap();
    let db = create(dir.path(), Some(ContainmentConfig::new(4)));
    for i in 0..5u64 {
        db.insert(&format!("d{i}"), &text(&passage(&v, 120, 300 + i))).unwrap();
    }
    // Two- and three-word texts whose one shingle is not a sample at rate 4 (short documents),
    // whatever the spec's hash.
    let short = |texts: [&'static str; 3]| {
        texts
            .into_iter()
            .find(|t| {
                let set = fpdb::fingerprint::fingerprint(db.spec(), t).shingles;
                !fpdb::fingerprint::containment::is_sample_at(set[0], 4)
            })
            .unwrap()
    };
    db.insert("tiny", short(["just two", "only two", "a pair"])).unwrap();
    db.insert("tiny2", short(["only three words", "just three words", "only four words"]))
        .unwrap();
    let s = db.containment().stats().unwrap().unwrap();
    assert_eq!((s.sampled_docs, s.short_docs), (5, 2), "{s:?}");
    assert!(db.delete("d1").unwrap());
    assert!(db.delete("tiny").unwrap());
    let after = db.containment().stats().unwrap().unwrap();
    assert_eq!((after.sampled_docs, after.short_docs), (4, 1), "{after:?}");
    assert!(
        after.entries < s.entries && after.short_entries < s.short_entries,
        "{s:?} -> {after:?}"
    );
}

/// What a database says about its containment index: every query's hits, all pairs, the counters.
type Observed = (
    Vec<Vec<(String, Option<f64>, Option<f64>)>>,
    Vec<fpdb::ContainPair>,
    fpdb::ContainmentStats,
);

fn observe(db: &Db, queries: &[String]) -> Observed {
    let q = QueryOptions::default().with_min_containment(C);
    let hits = queries
        .iter()
        .map(|t| {
            let mut h: Vec<_> = db
                .query(t, &q)
                .unwrap()
                .into_iter()
                .map(|h| (h.key, h.containment, h.reverse_containment))
                .collect();
            h.sort_by(|a, b| a.0.cmp(&b.0));
            h
        })
        .collect();
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);
    (
        hits,
        db.containment().pairs(C, 1).unwrap(),
        db.containment().stats().unwrap().unwrap(),
    )
}

/// The tail (the postings held in memory until they are written to RocksDB as one sorted file)
/// answers exactly as RocksDB does: the same inserts, replacements and deletes (of documents in the
/// tail and in RocksDB, short and sampled) on databases that write the tail after every batch,
/// every few batches, and only at the close give the same hits, pairs and counters, and check
/// clean, before and after a reopen.
#[test]
fn the_in_memory_tail_answers_like_rocksdb_at_every_flush_size() {
    let v = vocab();
    let dir = tempfile::tempdir().unwrap();
    let cfg = CreateOptions::default().with_containment(Some(ContainmentConfig::new(4)));
    // 0: written after every batch, at once; 1 and 40: in the background, installed at a later
    // commit (1: every batch, so replacing the document just inserted deletes one whose postings
    // are being written); never before the close.
    let sizes = [0usize, 1, 40, usize::MAX];
    let open = |i: usize, create: bool| {
        let opts = fpdb::Options {
            contain_tail_postings: sizes[i],
            ..fpdb::Options::default()
        };
        let path = dir.path().join(format!("db{i}"));
        if create {
            Db::create_with(path, &cfg, opts).unwrap()
        } else {
            Db::open_with(path, opts).unwrap()
        }
    };
    let dbs: Vec<Db> = (0..sizes.len()).map(|i| open(i, true)).collect();
    let mut queries = Vec::new();
    let mut rng = StdRng::seed_from_u64(7);
    let mut last_key = String::new();
    for i in 0..70u64 {
        let t = match i % 5 {
            // Short documents (no samples at n = 4): indexed under all their shingles.
            0 => text(&passage(&v, 3 + (i as usize % 3), i)),
            // A host holding an earlier passage.
            1 if !queries.is_empty() => {
                let inner: &String = &queries[rng.gen_range(0..queries.len())];
                format!("{} {inner} {}", text(&passage(&v, 40, i + 500)), text(&passage(&v, 40, i + 900)))
            }
            _ => text(&passage(&v, 20 + (i as usize % 4) * 30, i)),
        };
        let key = match i % 4 {
            3 => format!("k{}", last_key),
            _ => format!("k{}", rng.gen_range(0..50u32)),
        };
        last_key = key[1..].to_string();
        for db in &dbs {
            db.insert(&key, &t).unwrap();
        }
        if i % 6 == 5 {
            let gone = format!("k{}", rng.gen_range(0..50u32));
            for db in &dbs {
                db.delete(&gone).unwrap();
            }
        }
        queries.push(t);
    }
    let before: Vec<Observed> = dbs.iter().map(|db| observe(db, &queries)).collect();
    assert!(before[0].2.short_docs > 0 && before[0].2.sampled_docs > 0, "{:?}", before[0].2);
    assert!(!before[0].1.is_empty(), "the hosts hold earlier passages");
    for (i, b) in before.iter().enumerate().skip(1) {
        assert_eq!(b, &before[0], "flush size {} differs from flush size {}", sizes[i], sizes[0]);
    }
    drop(dbs);
    for (i, b) in before.iter().enumerate() {
        let db = open(i, false);
        assert_eq!(&observe(&db, &queries), b, "flush size {}: after the reopen", sizes[i]);
        assert!(std::fs::read_dir(dir.path().join(format!("db{i}/rocksdb"))).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("contain-tail-")));
    }
}

/// The containment index keeps several ingested runs unmerged (each tail file spans the whole key
/// range): its searches seek every run through the prefix filter and answer exactly as one merged
/// run does, and `compact_index` merges them (the RocksDB directory then holds at most one file per
/// column family).
#[test]
fn unmerged_runs_answer_like_one_and_compact_index_merges_them() {
    let v = vocab();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let opts = fpdb::Options {
        // A tail file after every batch: one run per insert.
        contain_tail_postings: 0,
        ..fpdb::Options::default()
    };
    let db = Db::create_with(
        &path,
        &CreateOptions::default().with_containment(Some(ContainmentConfig::new(4))),
        opts,
    )
    .unwrap();
    let mut queries = Vec::new();
    for i in 0..12u64 {
        let t = if i % 3 == 2 {
            // A host holding the passage two inserts back.
            format!(
                "{} {} {}",
                text(&passage(&v, 30, i + 700)),
                queries[i as usize - 2],
                text(&passage(&v, 30, i + 900))
            )
        } else {
            text(&passage(&v, 25 + i as usize * 5, i))
        };
        db.insert(&format!("k{i}"), &t).unwrap();
        queries.push(t);
    }
    let ssts = || {
        std::fs::read_dir(path.join("rocksdb"))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".sst"))
            .count()
    };
    let cfs = 11; // meta, docs, keys, edges, meta_idx, t0..t4, contain
    assert!(ssts() > cfs, "one run per insert: {} files", ssts());
    let before = observe(&db, &queries);
    assert!(!before.1.is_empty(), "the hosts hold earlier passages");
    assert!(before.0.iter().all(|h| !h.is_empty()), "every text finds itself");
    db.compact_index().unwrap();
    assert!(ssts() <= cfs, "merged: {} files", ssts());
    assert_eq!(observe(&db, &queries), before);
}
