//! End-to-end throughput and latency on a JSONL corpus (docs/performance.md).
//!
//! cargo run --release --example perf -- CORPUS.jsonl [--docs N] [--truth TRUTH.jsonl] [--queries Q] [--skip-off] [--k K]
//!     [--rounds R] [--fingerprint-only] [--containment off] [--cpu-time]
//!
//! Measures, on this machine: fingerprinting rate by stage (normalize, + shingle hashes, the whole
//! fingerprint; one thread, best of `--rounds`, 3; `--cpu-time`: by the thread's CPU time, not the
//! wall clock, for a shared box — the all-cores row is then the main thread's, not meaningful) and
//! on all cores, durable ingest without
//! dedup, durable query-then-insert (`Dedup::Link`, the crawler loop), query latency p50/p99 by text
//! and by fingerprint at k = 3, 8, 12, disk bytes, and (with a truth file of planted pairs) the recall
//! of planted pairs whose exact Jaccard is at least t.

use std::collections::HashMap;
use std::io::BufRead;
use std::time::Instant;

use fpdb::IngestOptions;
use fpdb::{CreateOptions, Db, Dedup, NewDoc, QueryOptions};

mod common;
use common::{arg, cpu_seconds, dir_bytes, pct, thread_cpu_seconds};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let corpus = args
        .get(1)
        .ok_or("usage: perf CORPUS.jsonl [--docs N] [--truth FILE] [--queries Q]")?;
    let limit: usize = arg(&args, "--docs").map_or(Ok(usize::MAX), |s| s.parse())?;
    let queries: usize = arg(&args, "--queries").map_or(Ok(2000), |s| s.parse())?;
    let docs: Vec<(String, String)> = common::load(corpus, limit)?;
    let n = docs.len();
    let bytes: usize = docs.iter().map(|d| d.1.len()).sum();
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    println!(
        "corpus {corpus}: {n} docs, {:.1} MB, mean {:.0} bytes; {cores} cores",
        bytes as f64 / 1e6,
        bytes as f64 / n as f64
    );
    println!();
    println!("| measurement | value |");
    println!("|---|---:|");

    // Fingerprinting alone, by stage (each row runs the stages before it too), best of --rounds.
    let spec = fpdb::FingerprintSpec::default();
    let rounds: usize = arg(&args, "--rounds").map_or(Ok(3), |s| s.parse())?;
    // Wall clock, or with --cpu-time the thread's own CPU time (for a box shared with other work).
    let cpu_time = args.iter().any(|a| a == "--cpu-time");
    let best = |f: &mut dyn FnMut() -> u64| {
        (0..rounds.max(1))
            .map(|_| {
                let (t0, c0) = (Instant::now(), thread_cpu_seconds());
                std::hint::black_box(f());
                if cpu_time {
                    thread_cpu_seconds() - c0
                } else {
                    t0.elapsed().as_secs_f64()
                }
            })
            .fold(f64::INFINITY, f64::min)
    };
    let mut norm = String::new();
    let mut hashes = Vec::new();
    let normalize = best(&mut || {
        docs.iter().fold(0u64, |a, d| {
            fpdb::fingerprint::normalize::normalize_into_version(spec.normalizer, &d.1, &mut norm);
            a ^ norm.len() as u64
        })
    });
    let shingle = best(&mut || {
        docs.iter().fold(0u64, |a, d| {
            fpdb::fingerprint::normalize::normalize_into_version(spec.normalizer, &d.1, &mut norm);
            fpdb::fingerprint::shingle::shingle_hashes(&spec, &norm, &mut hashes);
            a ^ hashes.len() as u64
        })
    });
    let mut f = fpdb::Fingerprinter::new(spec.clone());
    let one = best(&mut || docs.iter().fold(0u64, |a, d| a ^ f.fingerprint(&d.1).simhash));
    // Both word shingle hashes, whatever the default: the shingle hashes (xxh3-64 of the
    // normalized text's shingles; word-mix straight from the text) and the whole fingerprint.
    use fpdb::fingerprint::spec::HashKind;
    let with_hash = |hash| fpdb::FingerprintSpec { hash, ..spec.clone() };
    let (xxh3, mix) = (with_hash(HashKind::Xxh3_64), with_hash(HashKind::WordMix));
    let xxh3_hashes = best(&mut || {
        docs.iter().fold(0u64, |a, d| {
            fpdb::fingerprint::normalize::normalize_into_version(spec.normalizer, &d.1, &mut norm);
            fpdb::fingerprint::shingle::shingle_hashes(&xxh3, &norm, &mut hashes);
            a ^ hashes.len() as u64
        })
    });
    let mut scratch = fpdb::fingerprint::wordmix::Scratch::default();
    let mix_hashes = best(&mut || {
        docs.iter().fold(0u64, |a, d| {
            fpdb::fingerprint::wordmix::hashes(mix.normalizer, &d.1, mix.n, mix.seed, &mut scratch, &mut hashes);
            a ^ hashes.len() as u64
        })
    });
    let (mut fx, mut fm) = (fpdb::Fingerprinter::new(xxh3.clone()), fpdb::Fingerprinter::new(mix.clone()));
    let xxh3_one = best(&mut || docs.iter().fold(0u64, |a, d| a ^ fx.fingerprint(&d.1).simhash));
    let mix_one = best(&mut || docs.iter().fold(0u64, |a, d| a ^ fm.fingerprint(&d.1).simhash));
    let x = 0u64;
    let rate = |s: f64| format!("{:.1} MB/s, {:.1} µs/doc", bytes as f64 / s / 1e6, s / n as f64 * 1e6);
    println!("| normalize, 1 thread | {} |", rate(normalize));
    println!(
        "| normalize + shingle hashes ({}), 1 thread | {} |",
        spec.hash.name(),
        rate(shingle)
    );
    println!("| normalize + xxh3-64 shingle hashes, 1 thread | {} |", rate(xxh3_hashes));
    println!(
        "| word-mix shingle hashes in one pass (no normalized text), 1 thread | {} |",
        rate(mix_hashes)
    );
    println!("| fingerprint under xxh3-64, 1 thread | {} |", rate(xxh3_one));
    println!("| fingerprint under word-mix, 1 thread | {} |", rate(mix_one));
    println!("| SIMD level (FPDB_SIMD caps it) | {:?} |", fpdb::fingerprint::kernels::level());
    let chunk = n.div_ceil(cores);
    let all = best(&mut || {
        std::thread::scope(|s| {
            for part in docs.chunks(chunk.max(1)) {
                let spec = spec.clone();
                s.spawn(move || {
                    let mut f = fpdb::Fingerprinter::new(spec);
                    part.iter().fold(0u64, |a, d| a ^ f.fingerprint(&d.1).simhash)
                });
            }
        });
        0
    });
    println!(
        "| fingerprint, 1 thread | {:.0} docs/s ({:.1} MB/s) |",
        n as f64 / one,
        bytes as f64 / one / 1e6
    );
    println!(
        "| fingerprint, {cores} threads | {:.0} docs/s ({:.1} MB/s) |",
        n as f64 / all,
        bytes as f64 / all / 1e6
    );
    let fp_rate = n as f64 / all;
    std::hint::black_box(x);
    // What a shingle set costs stored: 4 bytes a shingle today; Elias-Fano over the 2^32 universe
    // (its size depends on the count alone); the information bound log2 C(2^32, n).
    let (mut raw, mut ef, mut bound) = (0f64, 0f64, 0f64);
    for d in &docs {
        let c = f.fingerprint(&d.1).shingles.len() as f64;
        raw += 4.0 * c;
        if c > 0.0 {
            let low = (4294967296f64 / c).log2().floor().max(0.0);
            ef += (c * low + c + (4294967296f64 / low.exp2()).floor() + 1.0) / 8.0;
            bound += c * ((4294967296f64 / c).log2() + std::f64::consts::LOG2_E) / 8.0;
        }
    }
    let of_text = |b: f64| format!("{:.0} B/doc, {:.0}% of the text", b / n as f64, 100.0 * b / bytes as f64);
    println!("| shingle set, 4 B a shingle | {} |", of_text(raw));
    println!("| shingle set, Elias-Fano | {} |", of_text(ef));
    println!("| shingle set, information bound log2 C(2^32, n) | {} |", of_text(bound));
    if args.iter().any(|a| a == "--fingerprint-only") {
        return Ok(());
    }
    let containment = if arg(&args, "--containment").as_deref() == Some("off") {
        None
    } else {
        CreateOptions::default().containment
    };

    let tmp = tempfile::tempdir()?;
    let input = |docs: &[(String, String)]| -> Vec<fpdb::Result<NewDoc>> {
        docs.iter()
            .map(|(k, t)| {
                Ok(NewDoc {
                    key: k.clone(),
                    text: t.clone(),
                    meta: None,
                    biblio: Default::default(),
                })
            })
            .collect()
    };
    if !args.iter().any(|a| a == "--skip-off") {
        let db = Db::create(tmp.path().join("off"), &CreateOptions::default().with_containment(containment))?;
        let items = input(&docs);
        let t0 = Instant::now();
        let st = db.ingest(items, &IngestOptions::default().with_dedup(Dedup::Off), |_| {})?;
        db.flush()?; // the close's work counts, as in `fpdb ingest`
        let s = t0.elapsed().as_secs_f64();
        println!(
            "| durable ingest, dedup off ({} batches) | {:.0} docs/s ({:.0}% of fingerprinting) |",
            st.batches,
            n as f64 / s,
            100.0 * n as f64 / s / fp_rate
        );
        drop(db);
        std::fs::remove_dir_all(tmp.path().join("off"))?;
    }

    // The crawler loop: query-then-insert with dedup link, durable.
    let path = tmp.path().join("link");
    let k: u32 = arg(&args, "--k").map_or(Ok(CreateOptions::default().max_distance), |s| s.parse())?;
    let db = Db::create(&path, &CreateOptions::default().with_max_distance(k).with_containment(containment))?;
    let items = input(&docs);
    let mut dups: HashMap<String, Vec<String>> = HashMap::new();
    let t0 = Instant::now();
    let cpu = cpu_seconds();
    let st = db.ingest(items, &IngestOptions::default(), |r| {
        if let Ok(o) = r.result {
            if !o.duplicates.is_empty() {
                dups.insert(o.key, o.duplicates.into_iter().map(|h| h.key).collect());
            }
        }
    })?;
    db.flush()?;
    let s = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    println!(
        "| durable query-then-insert, dedup link, k = {} ({} batches) | {:.0} docs/s ({:.0}% of fingerprinting, {:.1} MB/s); {} docs had verified duplicates |",
        db.config().max_distance,
        st.batches,
        n as f64 / s,
        100.0 * n as f64 / s / fp_rate,
        bytes as f64 / s / 1e6,
        st.with_duplicates
    );
    println!(
        "| crawler loop CPU (user + sys, whole process) | {:.0} µs/doc ({:.2} cores busy) |",
        cpu / n as f64 * 1e6,
        cpu / s
    );
    db.compact_index()?;
    println!(
        "| disk bytes (RocksDB + segments) | {:.1} MB ({:.0} B/doc) |",
        dir_bytes(&path) as f64 / 1e6,
        dir_bytes(&path) as f64 / n as f64
    );

    // Query latency.
    let step = (n / queries.max(1)).max(1);
    let sample: Vec<&(String, String)> = docs.iter().step_by(step).take(queries).collect();
    let mut fpr = db.fingerprinter();
    let fps: Vec<_> = sample.iter().map(|d| fpr.fingerprint(&d.1)).collect();
    let mut lat = Vec::new();
    for d in &sample {
        let t = Instant::now();
        std::hint::black_box(db.query(&d.1, &QueryOptions::default())?);
        lat.push(t.elapsed().as_secs_f64() * 1e6);
    }
    println!(
        "| query by text, k = {} (p50 / p99) | {:.0} / {:.0} µs |",
        db.config().max_distance,
        pct(&mut lat, 0.5),
        pct(&mut lat, 0.99)
    );
    for k in [3u32, 8, 12] {
        let opts = QueryOptions::default().with_max_distance(k);
        let mut lat = Vec::new();
        let mut lat_fp = Vec::new();
        for fp in &fps {
            let t = Instant::now();
            std::hint::black_box(db.query_fingerprint(fp, &opts)?);
            lat.push(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            std::hint::black_box(db.query_simhash(fp.simhash, &opts)?);
            lat_fp.push(t.elapsed().as_secs_f64() * 1e6);
        }
        println!(
            "| query by fingerprint + Jaccard, k = {k} (p50 / p99) | {:.1} / {:.1} µs |",
            pct(&mut lat, 0.5),
            pct(&mut lat, 0.99)
        );
        println!(
            "| query by SimHash only, k = {k} (p50 / p99) | {:.1} / {:.1} µs |",
            pct(&mut lat_fp, 0.5),
            pct(&mut lat_fp, 0.99)
        );
    }

    // Planted pairs: recall of those with exact J >= t.
    if let Some(truth) = arg(&args, "--truth") {
        let texts: HashMap<&str, &str> = docs.iter().map(|(k, t)| (k.as_str(), t.as_str())).collect();
        let t = db.config().min_jaccard;
        let (mut total, mut found, mut planted) = (0u64, 0u64, 0u64);
        for line in std::io::BufReader::new(std::fs::File::open(truth)?).lines() {
            let v: serde_json::Value = serde_json::from_str(&line?)?;
            let (Some(a), Some(b)) = (v["a"].as_str(), v["b"].as_str()) else {
                continue;
            };
            let (Some(ta), Some(tb)) = (texts.get(a), texts.get(b)) else {
                continue;
            };
            planted += 1;
            let (fa, fb) = (fpr.fingerprint(ta), fpr.fingerprint(tb));
            if fpdb::fingerprint::similarity::jaccard(&fa.shingles, &fb.shingles).jaccard >= t {
                total += 1;
                let hit = dups.get(b).is_some_and(|d| d.iter().any(|k| k == a)) || dups.get(a).is_some_and(|d| d.iter().any(|k| k == b));
                found += u64::from(hit);
            }
        }
        println!(
            "| planted pairs in corpus / with J ≥ {t} / found by ingest | {planted} / {total} / {found} (recall {:.4}) |",
            found as f64 / total.max(1) as f64
        );
    }
    Ok(())
}
