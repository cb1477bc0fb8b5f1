//! fpdb's crawler loop next to gaoya's MinHash LSH (a pure-Rust, in-memory peer), on the same corpus
//! and the same shingling, in one run (docs/peers.md).
//!
//! ```text
//! cargo run --release --example peer_gaoya -- CORPUS.jsonl [--docs N] [--truth TRUTH.jsonl] [--bands 16] [--rows 8] [--containment off]
//! ```
//!
//! * **fpdb**: `Db::ingest` with the defaults (k = 12, t = 0.9, `Dedup::Link`: each document is
//!   queried, its candidates verified by exact Jaccard and linked before the next batch commits),
//!   durable (fsync per batch), into a temporary directory — once with the default workers (all
//!   cores for fingerprinting) and once with one worker.
//! * **gaoya**: each document's word-trigram shingle set (fpdb's own `Fingerprinter`, so both see
//!   the same features; its time is counted) → a 32-bit MinHash signature of `bands × rows` hashes →
//!   `query_owned` (LSH candidates whose *estimated* Jaccard ≥ 0.9) → `insert`. In memory, one
//!   thread, nothing durable — the peer's best case.
//!
//! CPU per document is the user + system time of the whole process over each loop (`/proc/self/stat`;
//! fpdb's includes its workers, writer, fsync thread and RocksDB's threads), divided by the documents.
//!
//! With a truth file of planted pairs (`scripts/corpora/make_scale.py`), each side's recall of the
//! planted pairs whose exact Jaccard is ≥ 0.9: found when the later document's result names the
//! earlier one.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::time::Instant;

use fpdb::fingerprint::similarity::jaccard;
use fpdb::fingerprint::Fingerprinter;
use fpdb::FingerprintSpec;
use fpdb::{CreateOptions, Db, IngestOptions, NewDoc};
use gaoya::minhash::{MinHashIndex, MinHasher, MinHasher32};

mod common;
use common::{arg, cpu_seconds, load, Res};

/// Both systems run in one process on one allocator: mimalloc with `no_thp`, the allocator the
/// `fpdb` binary links (the header line says so). Without these two lines the process runs on
/// glibc's malloc (docs/peers.md measures both).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
const ALLOCATOR: &str = "mimalloc (no_thp)";

/// fpdb's durable crawler loop; returns docs/s, CPU seconds (user + sys of the whole process) and,
/// per doc index, the doc indices it was linked to.
fn fpdb_loop(docs: &[(String, String)], workers: Option<usize>, containment: bool) -> Res<(f64, f64, Vec<Vec<usize>>)> {
    let tmp = tempfile::tempdir()?;
    let mut create = CreateOptions::default();
    if !containment {
        create = create.with_containment(None);
    }
    let db = Db::create(tmp.path().join("db"), &create)?;
    let index: HashMap<&str, usize> = docs.iter().enumerate().map(|(i, d)| (d.0.as_str(), i)).collect();
    let mut found = vec![Vec::new(); docs.len()];
    let input = docs.iter().map(|(k, t)| {
        Ok(NewDoc {
            key: k.clone(),
            text: t.clone(),
            meta: None,
            biblio: Default::default(),
        })
    });
    let mut opts = IngestOptions::default();
    if let Some(w) = workers {
        opts = opts.with_workers(w);
    }
    let t = Instant::now();
    let cpu = cpu_seconds();
    db.ingest(input, &opts, |r| {
        if let (Ok(o), Some(f)) = (&r.result, found.get_mut(r.seq as usize)) {
            *f = o.duplicates.iter().filter_map(|h| index.get(h.key.as_str()).copied()).collect();
        }
    })?;
    // The close's work (the containment tail and the memtables to files) counts, as in `fpdb ingest`.
    db.flush()?;
    let secs = t.elapsed().as_secs_f64();
    Ok((docs.len() as f64 / secs, cpu_seconds() - cpu, found))
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let corpus = args
        .get(1)
        .ok_or("usage: peer_gaoya CORPUS.jsonl [--docs N] [--truth FILE] [--bands B] [--rows R] [--containment off]")?;
    let limit: usize = arg(&args, "--docs").map_or(Ok(usize::MAX), |s| s.parse())?;
    let bands: usize = arg(&args, "--bands").map_or(Ok(16), |s| s.parse())?;
    let rows: usize = arg(&args, "--rows").map_or(Ok(8), |s| s.parse())?;
    let docs = load(corpus, limit)?;
    let n = docs.len();
    println!(
        "corpus {corpus}: {n} docs; cores: {}; allocator: {ALLOCATOR}",
        std::thread::available_parallelism().map_or(1, |c| c.get())
    );

    // gaoya: shingle (fpdb's spec) → signature → query → insert, one document at a time.
    let spec = FingerprintSpec::default();
    let mut fp = Fingerprinter::new(spec.clone());
    let hasher = MinHasher32::new(bands * rows);
    let mut lsh: MinHashIndex<u32, usize> = MinHashIndex::new(bands, rows, 0.9);
    let mut g_found = vec![Vec::new(); n];
    let t = Instant::now();
    let cpu = cpu_seconds();
    for (i, (_, text)) in docs.iter().enumerate() {
        let shingles = fp.fingerprint(text).shingles;
        let sig = hasher.create_signature(shingles.iter());
        g_found[i] = lsh.query_owned(&sig).into_iter().collect();
        lsh.insert(i, sig);
    }
    let g_rate = n as f64 / t.elapsed().as_secs_f64();
    let g_cpu = cpu_seconds() - cpu;
    drop(lsh);

    let containment = arg(&args, "--containment").as_deref() != Some("off");
    let (f_rate, f_cpu, f_found) = fpdb_loop(&docs, None, containment)?;
    let (f1_rate, f1_cpu, _) = fpdb_loop(&docs, Some(1), containment)?;

    let per_doc = |c: f64| c / n as f64 * 1e6;
    println!();
    println!("| system | crawler loop (docs/s) | vs gaoya | CPU µs/doc (user+sys) | CPU vs gaoya | durable |");
    println!("|---|---:|---:|---:|---:|---|");
    println!(
        "| fpdb, default workers (k = 12, exact Jaccard ≥ 0.9) | {f_rate:.0} | {:.2}× | {:.0} | {:.2}× | yes |",
        f_rate / g_rate,
        per_doc(f_cpu),
        f_cpu / g_cpu
    );
    println!(
        "| fpdb, 1 worker | {f1_rate:.0} | {:.2}× | {:.0} | {:.2}× | yes |",
        f1_rate / g_rate,
        per_doc(f1_cpu),
        f1_cpu / g_cpu
    );
    println!(
        "| gaoya MinHashIndex ({bands} bands × {rows} rows, estimated J ≥ 0.9), 1 thread | {g_rate:.0} | 1.00× | {:.0} | 1.00× | no |",
        per_doc(g_cpu)
    );

    if let Some(truth) = arg(&args, "--truth") {
        let index: HashMap<&str, usize> = docs.iter().enumerate().map(|(i, d)| (d.0.as_str(), i)).collect();
        let (mut want, mut f_hit, mut g_hit) = (0usize, 0usize, 0usize);
        for line in std::io::BufReader::new(std::fs::File::open(&truth)?).lines() {
            let v: serde_json::Value = serde_json::from_str(&line?)?;
            let (Some(a), Some(b)) = (v["a"].as_str(), v["b"].as_str()) else {
                continue;
            };
            let (Some(&a), Some(&b)) = (index.get(a), index.get(b)) else {
                continue;
            };
            let (early, late) = (a.min(b), a.max(b));
            let j = jaccard(
                &fpdb::fingerprint::fingerprint(&spec, &docs[early].1).shingles,
                &fpdb::fingerprint::fingerprint(&spec, &docs[late].1).shingles,
            );
            if j.jaccard < 0.9 {
                continue;
            }
            want += 1;
            f_hit += usize::from(f_found[late].contains(&early));
            g_hit += usize::from(g_found[late].contains(&early));
        }
        let distinct: HashSet<usize> = g_found.iter().flatten().copied().collect();
        println!();
        println!(
            "planted pairs with exact Jaccard >= 0.9: {want}; found by fpdb {f_hit} ({:.4}), by gaoya {g_hit} ({:.4}); gaoya reported {} distinct earlier documents",
            f_hit as f64 / want.max(1) as f64,
            g_hit as f64 / want.max(1) as f64,
            distinct.len()
        );
    }
    Ok(())
}
