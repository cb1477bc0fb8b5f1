//! Helpers shared by the integration tests: deterministic text generation and edits.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use fpdb::fingerprint::similarity::hamming;
use fpdb::{Db, Dedup, Fingerprint, PreparedDoc, QueryOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A fixed vocabulary of 3,000 pseudo-words.
pub fn vocab() -> Vec<String> {
    let syll = [
        "ka", "lo", "mi", "ne", "ru", "ta", "so", "vi", "de", "pa", "xe", "zu", "ba", "ho", "gi", "fe",
    ];
    let mut rng = StdRng::seed_from_u64(1);
    (0..3000)
        .map(|_| {
            (0..rng.gen_range(1..4))
                .map(|_| syll[rng.gen_range(0..syll.len())])
                .collect::<String>()
        })
        .collect()
}

/// A passage of `n` words drawn with `seed`.
pub fn passage(vocab: &[String], n: usize, seed: u64) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| vocab[rng.gen_range(0..vocab.len())].clone()).collect()
}

/// Replaces `changes` words at random positions.
pub fn edit(vocab: &[String], words: &[String], changes: usize, seed: u64) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut w = words.to_vec();
    for _ in 0..changes {
        let i = rng.gen_range(0..w.len());
        w[i] = vocab[rng.gen_range(0..vocab.len())].clone();
    }
    w
}

pub fn text(words: &[String]) -> String {
    words.join(" ")
}

/// A prepared document with the given SimHash (and a one-element shingle set).
pub fn fp_doc(key: String, simhash: u64) -> fpdb::Result<PreparedDoc> {
    PreparedDoc::new(
        key,
        Fingerprint {
            simhash,
            shingles: vec![simhash as u32],
            sketch: Vec::new(),
        },
        None,
    )
}

/// Random fingerprints plus variants at every distance up to 14 of some of them.
pub fn fingerprint_set(seed: u64, n: usize) -> Vec<u64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut fps: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
    for i in 0..n {
        let mut f = fps[i];
        for _ in 0..rng.gen_range(0..15) {
            f ^= 1 << rng.gen_range(0..64);
        }
        fps.push(f);
    }
    fps
}

/// Every query of `queries` at every k in `0..=max_k` returns exactly the documents of `fps` (doc id
/// = position) within k, with their distances: the table search against brute force.
pub fn assert_simhash_queries_exact(db: &Db, fps: &[u64], queries: &[u64], max_k: u32, what: &str) {
    for k in 0..=max_k {
        for &q in queries {
            let opts = QueryOptions::default().with_max_distance(k);
            let got: BTreeSet<(u64, u32)> = db.query_simhash(q, &opts).unwrap().iter().map(|h| (h.id, h.hamming)).collect();
            let want: BTreeSet<(u64, u32)> = fps
                .iter()
                .enumerate()
                .filter(|(_, &f)| hamming(f, q) <= k)
                .map(|(i, &f)| (i as u64, hamming(f, q)))
                .collect();
            assert_eq!(got, want, "{what}, k = {k}, q = {q:#x}");
        }
    }
}

/// Commits `batch` without looking for duplicates; every document must be stored.
pub fn commit_all(db: &Db, batch: Vec<fpdb::Result<PreparedDoc>>) {
    for r in db.commit_batch(batch, Dedup::Off).unwrap() {
        r.unwrap();
    }
}

/// Every query of `queries` at every k of `ks` returns exactly the keys of `live` (key → SimHash)
/// within k: the table search against brute force, by key.
pub fn assert_live_keys_exact(db: &Db, live: &BTreeMap<String, u64>, queries: &[u64], ks: &[u32], what: &str) {
    for &k in ks {
        for &q in queries {
            let opts = QueryOptions::default().with_max_distance(k);
            let got: BTreeSet<String> = db.query_simhash(q, &opts).unwrap().into_iter().map(|h| h.key).collect();
            let want: BTreeSet<String> = live
                .iter()
                .filter(|(_, &f)| hamming(f, q) <= k)
                .map(|(key, _)| key.clone())
                .collect();
            assert_eq!(got, want, "{what}: k = {k}, q = {q:#x}");
        }
    }
}

/// Reopens the database at `path`: `check` finds no fault and every acknowledged key is there
/// (what a failed or interrupted ingest must leave).
pub fn assert_acked_present(path: &std::path::Path, acked: &[String]) {
    let db = Db::open(path).unwrap();
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);
    for k in acked {
        assert!(db.get(k).unwrap().is_some(), "acknowledged {k} is missing after reopen");
    }
}

/// `n` passages of `words` words, the i-th drawn with seed `first_seed + i`.
pub fn texts(n: u64, words: usize, first_seed: u64) -> Vec<String> {
    let v = vocab();
    (0..n).map(|i| text(&passage(&v, words, first_seed + i))).collect()
}

/// A database of 20 documents (`k0`..`k19`, 150 words each) with segments of `segment_size`
/// bytes, closed; returns its path and the texts.
pub fn db_of_20(dir: &std::path::Path, segment_size: u64) -> (std::path::PathBuf, Vec<String>) {
    let texts = texts(20, 150, 0);
    let path = dir.join("db");
    let db = Db::create_with(
        &path,
        &fpdb::CreateOptions::default(),
        fpdb::Options {
            segment_size,
            ..fpdb::Options::default()
        },
    )
    .unwrap();
    for (i, t) in texts.iter().enumerate() {
        db.insert(&format!("k{i}"), t).unwrap();
    }
    (path, texts)
}

/// Rewrites doc `id`'s record in RocksDB with `f` applied (the database must be closed).
pub fn rewrite_doc_record(path: &std::path::Path, id: u64, f: impl FnOnce(&mut fpdb::DocRecord)) {
    let rp = path.join("rocksdb");
    let names = rocksdb::DB::list_cf(&rocksdb::Options::default(), &rp).unwrap();
    let raw = rocksdb::DB::open_cf(&rocksdb::Options::default(), &rp, &names).unwrap();
    let cf = raw.cf_handle("docs").unwrap();
    let bytes = raw.get_cf(cf, id.to_be_bytes()).unwrap().unwrap();
    let mut r: fpdb::DocRecord = fpdb::internals::doc_record::decode_doc(&bytes, &rp, Some(id)).unwrap();
    f(&mut r);
    raw.put_cf(cf, id.to_be_bytes(), fpdb::internals::doc_record::encode_doc(&r).unwrap())
        .unwrap();
}

/// The semantic channel's test helpers (tests/semantic.rs, the cli suite's cli_semantic.rs).
#[cfg(feature = "semantic")]
pub mod semantic {
    use std::path::{Path, PathBuf};

    use fpdb::semantic::testkit::{write_tiny_model, TINY_WORDS};

    /// A tiny random-weight model written under `dir` (`tiny-SEED`).
    pub fn tiny(dir: &Path, seed: u64) -> PathBuf {
        write_tiny_model(&dir.join(format!("tiny-{seed}")), seed).unwrap()
    }

    /// A 12-word sentence of the tiny model's vocabulary, the same for the same `i`.
    pub fn sentence(i: u64) -> String {
        let mut s = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..12)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                TINY_WORDS[(s % 44) as usize]
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}
