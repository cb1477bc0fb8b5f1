//! Model-based target: a sequence of operations runs against a real `fpdb::Db` (tempdir on tmpfs,
//! 4 KiB segments so they rotate and compaction has work) and against a brute-force in-memory model.
//!
//! After every operation: every pool text's query equals the model's (keys, ids, Jaccard, shared,
//! Hamming); `get` finds exactly the model's keys with the model's doc ids; group ids, canonical keys,
//! sizes and `group_members` equal the connected components of the model's duplicate graph (edge =
//! SimHash within k and Jaccard ≥ t at the database's defaults; group id = smallest doc id);
//! `stats` counts agree. Every 10 operations and at the end `Db::check` reports no fault. Insert
//! outcomes report exactly the model's duplicates; delete reports whether the key existed; a reopen
//! after a clean close recovers nothing.
#![no_main]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use fpdb::fingerprint::fingerprint;
use fpdb::fingerprint::similarity::hamming;
use fpdb::fingerprint::similarity::jaccard;
use fpdb::{CreateOptions, Db, Fingerprint, Options, QueryOptions};
use libfuzzer_sys::fuzz_target;

const MAX_OPS: usize = 40;
const KEYS: u8 = 16;

#[derive(Arbitrary, Debug, Clone)]
enum Extra {
    Vocab(u8),
    Raw(String),
}

#[derive(Arbitrary, Debug, Clone)]
enum Op {
    Insert { key: u8, text: u8, extra: Vec<Extra> },
    Delete { key: u8 },
    Query { text: u8, extra: Vec<Extra> },
    Reopen,
    Compact { min_dead: u8 },
}

/// Deterministic pseudo-words (xorshift), so the pool is the same in every run.
fn words(seed: u64, n: usize) -> Vec<String> {
    const SYLL: [&str; 16] = ["ka", "lo", "mi", "ne", "ru", "ta", "so", "vi", "de", "pa", "xe", "zu", "ba", "ho", "gi", "fe"];
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    (0..n)
        .map(|_| {
            let r = next();
            (0..1 + r % 3).map(|j| SYLL[((r >> (8 + 4 * j)) & 15) as usize]).collect()
        })
        .collect()
}

fn change(w: &[String], at: &[usize], seed: u64) -> Vec<String> {
    let mut w = w.to_vec();
    let repl = words(seed, at.len());
    for (i, &p) in at.iter().enumerate() {
        w[p] = format!("{}q{}", repl[i], p);
    }
    w
}

/// ~12 texts: chains of near-duplicates (1 changed word in 100 keeps J ≈ 0.94 ≥ 0.9; 2 changed
/// words far apart give J ≈ 0.885 < 0.9), a case/punctuation variant (J = 1), a truncation, short
/// texts, and a text without any word.
fn pool() -> &'static Vec<String> {
    static POOL: OnceLock<Vec<String>> = OnceLock::new();
    POOL.get_or_init(|| {
        let p = words(1, 100);
        let q = words(2, 100);
        let r = words(3, 10);
        let p1 = change(&p, &[50], 11);
        let p2 = change(&p1, &[20], 12);
        let p3 = change(&p2, &[80], 13);
        let texts: Vec<Vec<String>> = vec![
            p.clone(),
            p1,
            p2,
            p3,
            change(&p, &[99], 14),
            p[..95].to_vec(),
            q.clone(),
            change(&q, &[40], 15),
            change(&q, &[40, 41], 16),
            r.clone(),
            change(&r, &[5], 17),
        ];
        let mut out: Vec<String> = texts.iter().map(|w| w.join(" ")).collect();
        // Same words as p: different case and punctuation (J = 1, distance 0).
        out.push(p.iter().map(|w| w.to_uppercase()).collect::<Vec<_>>().join(", ") + ".");
        out.push(" -- ... !! ".to_string());
        out
    })
}

fn build_text(text: u8, extra: &[Extra]) -> String {
    let pool = pool();
    let vocab = words(99, 32);
    let mut s = pool[text as usize % pool.len()].clone();
    for e in extra.iter().take(4) {
        s.push(' ');
        match e {
            Extra::Vocab(i) => s.push_str(&vocab[*i as usize % vocab.len()]),
            Extra::Raw(r) => s.extend(r.chars().take(12)),
        }
    }
    s
}

struct ModelDoc {
    id: u64,
    fp: Fingerprint,
}

struct Model {
    docs: BTreeMap<String, ModelDoc>,
    k: u32,
    t: f64,
}

impl Model {
    /// (key, id, jaccard, shared, hamming) of every live doc that is a duplicate of `fp`.
    fn hits(&self, fp: &Fingerprint, exclude: Option<&str>) -> BTreeSet<(String, u64, u64, u32, u32)> {
        self.docs
            .iter()
            .filter(|(k, _)| Some(k.as_str()) != exclude)
            .filter_map(|(k, d)| {
                let dist = hamming(d.fp.simhash, fp.simhash);
                let sim = jaccard(&fp.shingles, &d.fp.shingles);
                (dist <= self.k && sim.jaccard >= self.t).then(|| (k.clone(), d.id, sim.jaccard.to_bits(), sim.shared, dist))
            })
            .collect()
    }

    /// doc id → (group id, component ids) for the duplicate graph's connected components.
    fn components(&self) -> BTreeMap<u64, Vec<u64>> {
        let docs: Vec<&ModelDoc> = self.docs.values().collect();
        let n = docs.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        for i in 0..n {
            for j in i + 1..n {
                let (a, b) = (&docs[i].fp, &docs[j].fp);
                if hamming(a.simhash, b.simhash) <= self.k && jaccard(&a.shingles, &b.shingles).jaccard >= self.t {
                    let (ri, rj) = (find(&mut parent, i), find(&mut parent, j));
                    parent[ri] = rj;
                }
            }
        }
        let mut comps: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
        for i in 0..n {
            let r = find(&mut parent, i);
            comps.entry(r).or_default().push(docs[i].id);
        }
        let mut out = BTreeMap::new();
        for mut c in comps.into_values() {
            c.sort_unstable();
            for &id in &c {
                out.insert(id, c.clone());
            }
        }
        out
    }
}

fn db_hits(hits: &[fpdb::Hit]) -> BTreeSet<(String, u64, u64, u32, u32)> {
    hits.iter()
        .map(|h| {
            (
                h.key.clone(),
                h.id,
                h.jaccard.expect("text query has a Jaccard").to_bits(),
                h.shared.expect("text query has a shared count"),
                h.hamming,
            )
        })
        .collect()
}

fn opts() -> Options {
    Options {
        segment_size: 4096,
        ..Options::default()
    }
}

fn check_all(db: &Db, m: &Model, ctx: &str, full: bool) {
    // Queries.
    for i in 0..pool().len() as u8 {
        let text = build_text(i, &[]);
        let fp = fingerprint(db.spec(), &text);
        let got = db.query(&text, &QueryOptions::default()).expect("query");
        assert_eq!(db_hits(&got), m.hits(&fp, None), "{ctx}: query of pool text {i}");
    }
    // Keys.
    let comps = m.components();
    for k in 0..KEYS {
        let key = format!("k{k}");
        let got = db.get(&key).expect("get");
        match (m.docs.get(&key), got) {
            (None, None) => {}
            (Some(d), Some(doc)) => {
                assert_eq!(doc.id, d.id, "{ctx}: id of {key}");
                assert_eq!(doc.record.key, key);
                assert_eq!(doc.record.simhash, d.fp.simhash, "{ctx}: simhash of {key}");
                assert_eq!(doc.record.count as usize, d.fp.shingles.len(), "{ctx}: count of {key}");
                let comp = &comps[&d.id];
                let gid = comp[0];
                assert_eq!(doc.group.id, gid, "{ctx}: group of {key} (model component {comp:?})");
                assert_eq!(doc.record.group, gid, "{ctx}: stored group of {key}");
                assert_eq!(doc.group.size, comp.len(), "{ctx}: group size of {key}");
                let canon = m.docs.iter().find(|(_, x)| x.id == gid).map(|(k, _)| k.clone()).unwrap();
                assert_eq!(doc.group.canonical, canon, "{ctx}: canonical of {key}");
                let members: Vec<u64> = db.group_members(gid).into_iter().map(|(id, _)| id).collect();
                assert_eq!(&members, comp, "{ctx}: members of group {gid}");
                if full {
                    let set = db.shingles(d.id).expect("shingles").expect("live doc has shingles");
                    assert_eq!(set, d.fp.shingles, "{ctx}: stored shingles of {key}");
                }
            }
            (want, got) => panic!("{ctx}: get({key}) = {:?}, model has {:?}", got.map(|d| d.id), want.map(|d| d.id)),
        }
    }
    let st = db.stats();
    assert_eq!(st.docs, m.docs.len() as u64, "{ctx}: stats.docs");
    let big: BTreeSet<&Vec<u64>> = comps.values().filter(|c| c.len() > 1).collect();
    assert_eq!(st.groups, big.len() as u64, "{ctx}: stats.groups");
    assert_eq!(st.grouped_docs, big.iter().map(|c| c.len() as u64).sum::<u64>(), "{ctx}: stats.grouped_docs");
    if full {
        let rep = db.check().expect("check");
        assert!(rep.faults.is_empty(), "{ctx}: check found faults: {:?}", rep.faults);
        assert_eq!(rep.docs, m.docs.len() as u64);
    }
}

fn tmp_root() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

fuzz_target!(|ops: Vec<Op>| {
    let dir = tempfile::Builder::new().prefix("fpdb-fuzz-").tempdir_in(tmp_root()).expect("tempdir");
    let path = dir.path().join("db");
    let mut db = Some(Db::create_with(&path, &CreateOptions::default(), opts()).expect("create"));
    let (k, t) = {
        let c = db.as_ref().unwrap().config();
        (c.max_distance, c.min_jaccard)
    };
    let mut m = Model {
        docs: BTreeMap::new(),
        k,
        t,
    };
    let n = ops.len().min(MAX_OPS);
    for (step, op) in ops.into_iter().take(MAX_OPS).enumerate() {
        let ctx = format!("step {step} {op:?}");
        let d = db.as_ref().unwrap();
        match &op {
            Op::Insert { key, text, extra } => {
                let key = format!("k{}", key % KEYS);
                let text = build_text(*text, extra);
                let fp = fingerprint(d.spec(), &text);
                let res = d.insert(&key, &text);
                if fp.shingles.is_empty() {
                    assert!(res.is_err(), "{ctx}: a text without words was accepted");
                } else {
                    let out = res.unwrap_or_else(|e| panic!("{ctx}: insert failed: {e}"));
                    let want = m.hits(&fp, Some(&key));
                    assert_eq!(db_hits(&out.duplicates), want, "{ctx}: insert duplicates");
                    assert_eq!(out.replaced, m.docs.get(&key).map(|d| d.id), "{ctx}: replaced");
                    let id = out.id.expect("linked insert stores the doc");
                    assert!(m.docs.values().all(|d| d.id < id), "{ctx}: doc ids must grow");
                    m.docs.insert(key, ModelDoc { id, fp });
                    let comp = m.components().remove(&id).expect("new doc is in a component");
                    let g = out.group.expect("linked insert has a group");
                    assert_eq!((g.id, g.size), (comp[0], comp.len()), "{ctx}: insert outcome group");
                }
            }
            Op::Delete { key } => {
                let key = format!("k{}", key % KEYS);
                let existed = d.delete(&key).unwrap_or_else(|e| panic!("{ctx}: delete failed: {e}"));
                assert_eq!(existed, m.docs.remove(&key).is_some(), "{ctx}: delete result");
            }
            Op::Query { text, extra } => {
                let text = build_text(*text, extra);
                let fp = fingerprint(d.spec(), &text);
                let got = d.query(&text, &QueryOptions::default()).expect("query");
                assert_eq!(db_hits(&got), m.hits(&fp, None), "{ctx}: query");
                for w in got.windows(2) {
                    assert!(w[0].jaccard >= w[1].jaccard, "{ctx}: hits not sorted by Jaccard");
                }
            }
            Op::Reopen => {
                drop(db.take());
                let r = Db::open_with(&path, opts()).unwrap_or_else(|e| panic!("{ctx}: reopen failed: {e}"));
                let rec = r.recovery();
                assert_eq!(rec.truncated_bytes, 0, "{ctx}: clean close left a torn tail");
                assert!(rec.orphans_removed.is_empty(), "{ctx}: clean close left orphans {:?}", rec.orphans_removed);
                db = Some(r);
            }
            Op::Compact { min_dead } => {
                let min_dead = [0.0, 0.25, 0.5, 1.0][*min_dead as usize % 4];
                d.compact(min_dead).unwrap_or_else(|e| panic!("{ctx}: compact failed: {e}"));
            }
        }
        let d = db.as_ref().unwrap();
        check_all(d, &m, &ctx, step % 10 == 9 || step + 1 == n);
    }
    if n == 0 {
        check_all(db.as_ref().unwrap(), &m, "empty", true);
    }
    drop(db);
});
