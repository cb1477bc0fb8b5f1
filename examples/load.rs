//! Load generator and crash helper for `fpdb serve` (loopback only, bounded in time). Std threads and
//! a minimal keep-alive HTTP/1.1 client (tests/support/http.rs); each client thread owns one
//! connection and sends its next request when the previous answer arrived (closed loop).
//!
//! ```text
//! load prepare DB --docs N            build DB with N synthetic ~1 KB documents (library ingest)
//! load prepare-union DB --docs N     the same documents in a `--groups union` database (a tiny
//!                                     384-wide model written to DB.model, β 0.9), each with a
//!                                     synthetic unit vector written beside it (embedding N texts
//!                                     would take hours on a small box): the semantic indexer then
//!                                     embeds and links only the documents PUT afterwards, each
//!                                     scanned against the N stored vectors
//! load bench ADDR --op put|dup --clients 1,16,64 --seconds 10 [--docs N] [--token T]
//!                                     throughput and p50/p99 latency per client count (Markdown rows)
//! load put-until-error ADDR --clients C --acked FILE
//!                                     PUT new documents until the server dies; every 200'd key is
//!                                     appended to FILE (flushed) before the next request
//! load verify DB --acked FILE         opens DB for writing (recovery), checks every acked key is
//!                                     present and Db::check is clean
//! load mixed ADDR --writers 16 --readers 4 --seconds S [--docs N]
//!                                     PUTs from W clients alone, then the same with R clients
//!                                     looping the most expensive duplicate check the server
//!                                     accepts (max_distance = /v1/stats' max_query_distance,
//!                                     min_jaccard 0, no limit); p50/p99/max of both, and the
//!                                     statuses (target: PUT p99 within 3x, no request past the
//!                                     deadline)
//! load slow-bodies ADDR --conns 2000 --seconds S --pid PID
//!                                     C connections that send a PUT head and then one body byte
//!                                     a second; meanwhile /healthz every 100 ms and the server's
//!                                     RSS (/proc/PID/status) every 100 ms: max RSS, /healthz
//!                                     failures and worst latency
//! ```
//!
//! Synthetic documents: 150 words drawn from a fixed vocabulary of 20,000 pseudo-words (seeded), so
//! `doc(i)` is the same text in every run; `dup` queries are `doc(i)` with 2 words replaced (Jaccard
//! ≈ 0.92 with stored document i: a verified hit at the default t = 0.9; the `with hits` column
//! counts the answers with at least one hit or duplicate).

#[path = "../tests/support/http.rs"]
mod http;

use std::io::{BufRead, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fpdb::IngestOptions;
use fpdb::{Biblio, CreateOptions, Db, Dedup, NewDoc, Options};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

mod common;
use common::arg;

const WORDS: usize = 150;

/// The syllables the synthetic words are made of.
const SYLLABLES: [&str; 18] = [
    "ka", "lo", "mi", "ne", "ru", "ta", "so", "vi", "de", "pa", "xe", "zu", "ba", "ho", "gi", "fe", "qu", "wy",
];

fn vocab() -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(7);
    (0..20_000)
        .map(|_| {
            (0..rng.gen_range(2..5))
                .map(|_| SYLLABLES[rng.gen_range(0..SYLLABLES.len())])
                .collect()
        })
        .collect()
}

fn doc_words(v: &[String], i: u64) -> Vec<&str> {
    let mut rng = StdRng::seed_from_u64(0x5EED ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    (0..WORDS).map(|_| v[rng.gen_range(0..v.len())].as_str()).collect()
}

fn doc_text(v: &[String], i: u64) -> String {
    doc_words(v, i).join(" ")
}

fn edited(v: &[String], i: u64, seed: u64) -> String {
    let mut w = doc_words(v, i);
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..2 {
        let p = rng.gen_range(0..w.len());
        w[p] = v[rng.gen_range(0..v.len())].as_str();
    }
    w.join(" ")
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cmd = args.first().map(String::as_str).unwrap_or("");
    let target = args.get(1).cloned().unwrap_or_default();
    match cmd {
        "prepare" => prepare(&target, arg(&args, "--docs").map_or(1_000_000, |s| s.parse().expect("--docs N"))),
        #[cfg(feature = "semantic")]
        "prepare-union" => prepare_union(&target, arg(&args, "--docs").map_or(200_000, |s| s.parse().expect("--docs N"))),
        "bench" => bench(&target, &args),
        "put-until-error" => put_until_error(&target, &args),
        "verify" => verify(&target, &arg(&args, "--acked").expect("--acked FILE")),
        "mixed" => mixed(&target, &args),
        "slow-bodies" => slow_bodies(&target, &args),
        _ => {
            eprintln!("usage: load prepare DB --docs N | bench ADDR --op put|dup --clients 1,16,64 --seconds S | put-until-error ADDR --clients C --acked FILE | verify DB --acked FILE");
            std::process::exit(2);
        }
    }
}

fn prepare(db: &str, n: u64) {
    let d = Db::create_with(db, &CreateOptions::default(), Options::default()).expect("create");
    fill(db, &d, n);
}

/// Ingests the `n` synthetic documents into `d` (at `db`), links duplicates, compacts the index.
fn fill(db: &str, d: &Db, n: u64) {
    let v = vocab();
    let started = Instant::now();
    let input = (0..n).map(|i| {
        Ok(NewDoc {
            key: format!("doc/{i}"),
            text: doc_text(&v, i),
            meta: None,
            biblio: Biblio::default(),
        })
    });
    let opts = IngestOptions::default().with_dedup(Dedup::Link);
    let st = d.ingest(input, &opts, |_| {}).expect("ingest");
    d.compact_index().expect("compact");
    eprintln!(
        "prepared {db}: {} documents stored in {:.1} s ({:.0} docs/s ingest)",
        st.stored,
        started.elapsed().as_secs_f64(),
        st.items as f64 / st.seconds
    );
}

/// `load prepare-union`: the documents ingested with the indexer off (each queued), then, on the
/// closed database's RocksDB, a random unit vector for every queued document (the stored format:
/// quantized with the spec's hyperplanes, `semantic::encode`), the queue emptied and the cursor
/// past the last one, in batches of 10,000. Random 384-dimensional unit vectors are nearly
/// orthogonal (cos ~ ±0.05), so none links at β 0.9: the groups stay the text channel's.
#[cfg(feature = "semantic")]
fn prepare_union(db: &str, n: u64) {
    use fpdb::semantic::{self as sem, testkit, Groups, SemanticConfig, SemanticOptions};
    let model =
        testkit::write_tiny_model_shaped(std::path::Path::new(&format!("{db}.model")), 1, 384, 1, &SYLLABLES).expect("write the model");
    let mut cfg = SemanticConfig::new(&model);
    (cfg.min_cosine, cfg.max_tokens, cfg.groups) = (Some(0.9), 32, Groups::Union);
    let opts = Options {
        semantic: SemanticOptions {
            indexer: false,
            ..SemanticOptions::default()
        },
        ..Options::default()
    };
    let d = Db::create_with(db, &CreateOptions::default().with_semantic(Some(cfg)), opts).expect("create");
    fill(db, &d, n);
    drop(d);
    let started = Instant::now();
    let rp = std::path::Path::new(db).join("rocksdb");
    let names = rocksdb::DB::list_cf(&rocksdb::Options::default(), &rp).expect("list the column families");
    let raw = rocksdb::DB::open_cf(&rocksdb::Options::default(), &rp, &names).expect("open RocksDB");
    let cf = |name: &str| raw.cf_handle(name).unwrap_or_else(|| panic!("no column family {name}"));
    let (meta, vectors, queue) = (cf("meta"), cf(sem::CF_SEMANTIC), cf(sem::CF_SEMANTIC_QUEUE));
    let spec = sem::read_spec(&raw, meta).expect("read the spec").expect("a semantic spec");
    let planes = sem::Hyperplanes::new(spec.code_seed, spec.model.dim, spec.code_words);
    let ids: Vec<u64> = raw
        .iterator_cf(queue, rocksdb::IteratorMode::Start)
        .map(|kv| u64::from_be_bytes(kv.expect("scan the queue").0[..8].try_into().expect("an 8-byte id")))
        .collect();
    let (Some(&first), Some(&last)) = (ids.first(), ids.last()) else {
        panic!("no queued documents")
    };
    for part in ids.chunks(10_000) {
        let mut b = rocksdb::WriteBatch::default();
        for &id in part {
            let v = sem::quantize(&testkit::gaussian_unit(id, spec.model.dim), &planes);
            b.put_cf(vectors, id.to_be_bytes(), sem::encode(&v));
        }
        raw.write(b).expect("write vectors");
    }
    let mut b = rocksdb::WriteBatch::default();
    sem::stage_dequeue(&mut b, queue, first, last + 1);
    b.put_cf(meta, sem::META_SEMANTIC_CURSOR, (last + 1).to_le_bytes());
    raw.write(b).expect("write the cursor");
    raw.flush_cf(vectors).expect("flush");
    eprintln!(
        "{db}: {} synthetic vectors ({}-dim) written in {:.1} s; cursor {}",
        ids.len(),
        spec.model.dim,
        started.elapsed().as_secs_f64(),
        last + 1
    );
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted
        .get(((sorted.len().max(1) - 1) as f64 * p).round() as usize)
        .copied()
        .unwrap_or(f64::NAN)
}

fn bench(addr: &str, args: &[String]) {
    let addr: SocketAddr = addr.parse().expect("ADDR like 127.0.0.1:7878");
    assert!(addr.ip().is_loopback(), "load only on loopback");
    let op = arg(args, "--op").unwrap_or_else(|| "dup".into());
    let seconds: f64 = arg(args, "--seconds").map_or(10.0, |s| s.parse().expect("--seconds"));
    let docs: u64 = arg(args, "--docs").map_or(1_000_000, |s| s.parse().expect("--docs"));
    let token = arg(args, "--token");
    let clients: Vec<usize> = arg(args, "--clients")
        .unwrap_or_else(|| "1,16,64".into())
        .split(',')
        .map(|c| c.parse().expect("--clients 1,16,64"))
        .collect();
    let v = Arc::new(vocab());
    println!("| op | clients | requests | with hits | errors | seconds | req/s | p50 ms | p99 ms |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let run_id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    for &c in &clients {
        let stop = Arc::new(AtomicBool::new(false));
        let errors = Arc::new(AtomicU64::new(0));
        let with_hits = Arc::new(AtomicU64::new(0));
        let lat = Arc::new(Mutex::new(Vec::<f64>::new()));
        let started = Instant::now();
        let threads: Vec<_> = (0..c)
            .map(|t| {
                let (stop, errors, lat, v, op, token, with_hits) = (
                    stop.clone(),
                    errors.clone(),
                    lat.clone(),
                    v.clone(),
                    op.clone(),
                    token.clone(),
                    with_hits.clone(),
                );
                std::thread::spawn(move || {
                    let mut conn = http::Conn::connect(addr).expect("connect");
                    let mut rng = StdRng::seed_from_u64(t as u64 * 7919 + c as u64);
                    let mut mine = Vec::new();
                    let auth = token.map(|t| format!("Bearer {t}"));
                    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", a.as_str())).collect();
                    let mut i = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let (method, path, body) = if op == "put" {
                            // New documents (ids past the prepared ones), every 10th a near-duplicate.
                            let text = if i % 10 == 9 {
                                edited(&v, rng.gen_range(0..docs), i)
                            } else {
                                doc_text(
                                    &v,
                                    (run_id as u64).wrapping_mul(1_000_003)
                                        ^ ((c as u64) << 52)
                                        ^ ((t as u64) << 40)
                                        ^ (i << 1)
                                        ^ (1 << 63),
                                )
                            };
                            (
                                "PUT",
                                format!("/v1/documents/load-{run_id}-{c}-{t}-{i}"),
                                format!("{{\"text\":{}}}", json_str(&text)),
                            )
                        } else {
                            let text = edited(&v, rng.gen_range(0..docs), i);
                            ("POST", "/v1/duplicates".to_string(), format!("{{\"text\":{}}}", json_str(&text)))
                        };
                        i += 1;
                        let t0 = Instant::now();
                        match conn.request(method, &path, &headers, body.as_bytes()) {
                            Ok(r) if r.status == 200 => {
                                mine.push(t0.elapsed().as_secs_f64() * 1e3);
                                let b = r.text();
                                if b.contains("\"hits\":[{") || b.contains("\"duplicates\":[{") {
                                    with_hits.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                            Ok(_) => {
                                errors.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(_) => {
                                errors.fetch_add(1, Ordering::Relaxed);
                                match http::Conn::connect(addr) {
                                    Ok(c) => conn = c,
                                    Err(_) => break,
                                }
                            }
                        }
                    }
                    lat.lock().unwrap().extend(mine);
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            let _ = t.join();
        }
        let secs = started.elapsed().as_secs_f64();
        let mut l = lat.lock().unwrap().clone();
        l.sort_by(f64::total_cmp);
        println!(
            "| {} | {c} | {} | {} | {} | {secs:.1} | {:.0} | {:.2} | {:.2} |",
            if op == "put" {
                "PUT /v1/documents/{key}"
            } else {
                "POST /v1/duplicates"
            },
            l.len(),
            with_hits.load(Ordering::Relaxed),
            errors.load(Ordering::Relaxed),
            l.len() as f64 / secs,
            pct(&l, 0.5),
            pct(&l, 0.99)
        );
    }
}

fn put_until_error(addr: &str, args: &[String]) {
    let addr: SocketAddr = addr.parse().expect("ADDR");
    assert!(addr.ip().is_loopback(), "load only on loopback");
    let clients: usize = arg(args, "--clients").map_or(16, |s| s.parse().expect("--clients"));
    let max_seconds: f64 = arg(args, "--max-seconds").map_or(60.0, |s| s.parse().expect("--max-seconds"));
    let acked = arg(args, "--acked").expect("--acked FILE");
    let prefix = arg(args, "--prefix").unwrap_or_else(|| "crash".into());
    let file = Arc::new(Mutex::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&acked)
            .expect("open acked file"),
    ));
    let v = Arc::new(vocab());
    let total = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs_f64(max_seconds);
    let threads: Vec<_> = (0..clients)
        .map(|t| {
            let (file, v, total, prefix) = (file.clone(), v.clone(), total.clone(), prefix.clone());
            std::thread::spawn(move || {
                let Ok(mut conn) = http::Conn::connect(addr) else { return };
                let mut i = 0u64;
                while Instant::now() < deadline {
                    let key = format!("{prefix}-{t}-{i}");
                    let text = doc_text(&v, 10_000_000 + t as u64 * 1_000_000 + i);
                    let body = format!("{{\"text\":{}}}", json_str(&text));
                    match conn.request("PUT", &format!("/v1/documents/{key}"), &[], body.as_bytes()) {
                        Ok(r) if r.status == 200 => {
                            // Recorded only after the 200 (the document is durable then).
                            let mut f = file.lock().unwrap();
                            writeln!(f, "{key}").expect("write acked");
                            f.flush().expect("flush acked");
                            total.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(r) if r.status == 429 || r.status == 503 => std::thread::sleep(Duration::from_millis(50)),
                        _ => return, // the server died
                    }
                    i += 1;
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
    eprintln!("acked {} documents", total.load(Ordering::Relaxed));
}

fn verify(db: &str, acked: &str) {
    // Opened for writing, as the restarted server would: recovery runs first.
    let d = Db::open(db).expect("open");
    let f = std::io::BufReader::new(std::fs::File::open(acked).expect("open acked"));
    let (mut n, mut missing) = (0u64, 0u64);
    for line in f.lines() {
        let key = line.expect("read acked");
        n += 1;
        if d.get(&key).expect("get").is_none() {
            missing += 1;
            eprintln!("MISSING {key}");
        }
    }
    let faults = d.check().expect("check").faults.len();
    println!(
        "{{\"acked_total\": {n}, \"missing\": {missing}, \"docs\": {}, \"check_faults\": {faults}}}",
        d.stats().docs
    );
    if missing > 0 || faults > 0 {
        std::process::exit(1);
    }
}

/// Latencies (ms) and statuses of one kind of request.
#[derive(Default)]
struct Tally {
    ms: Vec<f64>,
    statuses: std::collections::BTreeMap<u16, u64>,
    failed: u64,
}

impl Tally {
    fn row(&mut self, what: &str, secs: f64) {
        self.ms.sort_by(f64::total_cmp);
        println!(
            "| {what} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {:?} | {} |",
            self.ms.len(),
            self.ms.len() as f64 / secs,
            pct(&self.ms, 0.5),
            pct(&self.ms, 0.99),
            self.ms.last().copied().unwrap_or(f64::NAN),
            self.statuses,
            self.failed
        );
    }
}

/// Closed-loop clients running `req(thread, i)` for `seconds`; every answer's latency and status.
fn clients(
    addr: SocketAddr,
    n: usize,
    seconds: f64,
    req: Arc<dyn Fn(usize, u64) -> (&'static str, String, String) + Send + Sync>,
) -> std::thread::JoinHandle<Tally> {
    std::thread::spawn(move || {
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..n)
            .map(|t| {
                let (stop, req) = (stop.clone(), req.clone());
                std::thread::spawn(move || {
                    let mut tally = Tally::default();
                    let mut conn = http::Conn::connect(addr).ok();
                    let mut i = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let (method, path, body) = req(t, i);
                        i += 1;
                        let Some(c) = conn.as_mut() else {
                            tally.failed += 1;
                            std::thread::sleep(Duration::from_millis(10));
                            conn = http::Conn::connect(addr).ok();
                            continue;
                        };
                        let t0 = Instant::now();
                        match c.request(method, &path, &[], body.as_bytes()) {
                            Ok(r) => {
                                tally.ms.push(t0.elapsed().as_secs_f64() * 1e3);
                                *tally.statuses.entry(r.status).or_default() += 1;
                                if r.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")) {
                                    conn = http::Conn::connect(addr).ok();
                                }
                                if r.status == 503 {
                                    // Retry-After: 1 second is the contract; a load client backs off a little.
                                    std::thread::sleep(Duration::from_millis(50));
                                }
                            }
                            Err(_) => {
                                tally.failed += 1;
                                conn = http::Conn::connect(addr).ok();
                            }
                        }
                    }
                    tally
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
        let mut all = Tally::default();
        for t in threads {
            if let Ok(t) = t.join() {
                all.ms.extend(t.ms);
                for (k, v) in t.statuses {
                    *all.statuses.entry(k).or_default() += v;
                }
                all.failed += t.failed;
            }
        }
        all
    })
}

fn mixed(addr: &str, args: &[String]) {
    let addr: SocketAddr = addr.parse().expect("ADDR like 127.0.0.1:7878");
    assert!(addr.ip().is_loopback(), "load only on loopback");
    let writers: usize = arg(args, "--writers").map_or(16, |s| s.parse().expect("--writers"));
    let readers: usize = arg(args, "--readers").map_or(4, |s| s.parse().expect("--readers"));
    let seconds: f64 = arg(args, "--seconds").map_or(20.0, |s| s.parse().expect("--seconds"));
    let docs: u64 = arg(args, "--docs").map_or(1_000_000, |s| s.parse().expect("--docs"));
    let stats = http::request(addr, "GET", "/v1/stats", &[], b"").expect("GET /v1/stats");
    let stats: serde_json::Value = serde_json::from_slice(&stats.body).expect("stats JSON");
    let k0 = stats["max_query_distance"]
        .as_u64()
        .expect("max_query_distance (an fpdb serve with per-request bounds)");
    println!(
        "database: {} documents; most expensive read: POST /v1/duplicates max_distance {k0} (max_query_distance, re-read every 200 ms as the PUTs grow the database), min_jaccard 0, no limit",
        stats["docs"]
    );
    // The bound shrinks as the database grows: follow it.
    let k = Arc::new(AtomicU64::new(k0));
    let done = Arc::new(AtomicBool::new(false));
    let follower = {
        let (k, done) = (k.clone(), done.clone());
        std::thread::spawn(move || {
            let mut seen = std::collections::BTreeSet::new();
            while !done.load(Ordering::Relaxed) {
                if let Ok(r) = http::request(addr, "GET", "/v1/stats", &[], b"") {
                    if let Some(v) = serde_json::from_slice::<serde_json::Value>(&r.body)
                        .ok()
                        .and_then(|s| s["max_query_distance"].as_u64())
                    {
                        k.store(v, Ordering::Relaxed);
                        seen.insert(v);
                    }
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            seen
        })
    };
    let v = Arc::new(vocab());
    let run_id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let put = {
        let v = v.clone();
        Arc::new(move |t: usize, i: u64| {
            let text = doc_text(&v, run_id.wrapping_mul(1_000_003) ^ ((t as u64) << 40) ^ (i << 1) ^ (1 << 63));
            (
                "PUT",
                format!("/v1/documents/mixed-{run_id}-{t}-{i}"),
                format!("{{\"text\":{}}}", json_str(&text)),
            )
        }) as Arc<dyn Fn(usize, u64) -> (&'static str, String, String) + Send + Sync>
    };
    let read = {
        let (v, k) = (v.clone(), k.clone());
        Arc::new(move |t: usize, i: u64| {
            let k = k.load(Ordering::Relaxed);
            let text = edited(&v, (t as u64 * 7919 + i * 104_729) % docs, i);
            (
                "POST",
                "/v1/duplicates".to_string(),
                format!("{{\"text\":{},\"max_distance\":{k},\"min_jaccard\":0}}", json_str(&text)),
            )
        }) as Arc<dyn Fn(usize, u64) -> (&'static str, String, String) + Send + Sync>
    };
    println!("| phase | requests | req/s | p50 ms | p99 ms | max ms | statuses | failed |");
    println!("|---|---:|---:|---:|---:|---:|---|---:|");
    let mut alone = clients(addr, writers, seconds, put.clone()).join().expect("writers");
    alone.row(&format!("PUT, {writers} writers alone"), seconds);
    let r = clients(addr, readers, seconds, read);
    let w = clients(addr, writers, seconds, put);
    let mut w = w.join().expect("writers");
    let mut r = r.join().expect("readers");
    w.row(&format!("PUT, {writers} writers + {readers} readers"), seconds);
    done.store(true, Ordering::Relaxed);
    let ks = follower.join().unwrap_or_default();
    r.row(&format!("POST /v1/duplicates k in {ks:?}, {readers} readers"), seconds);
    println!("PUT p99 with readers / alone: {:.2}x", pct(&w.ms, 0.99) / pct(&alone.ms, 0.99));
}

fn rss_kib(pid: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn slow_bodies(addr: &str, args: &[String]) {
    let addr: SocketAddr = addr.parse().expect("ADDR like 127.0.0.1:7878");
    assert!(addr.ip().is_loopback(), "load only on loopback");
    let conns: usize = arg(args, "--conns").map_or(2000, |s| s.parse().expect("--conns"));
    let seconds: f64 = arg(args, "--seconds").map_or(30.0, |s| s.parse().expect("--seconds"));
    let pid = arg(args, "--pid").expect("--pid PID of the server");
    let before = rss_kib(&pid).unwrap_or(0);
    let stop = Arc::new(AtomicBool::new(false));
    // One thread opens the connections and trickles one body byte per connection a second.
    let opened = Arc::new(AtomicU64::new(0));
    let trickler = {
        let (stop, opened) = (stop.clone(), opened.clone());
        std::thread::spawn(move || {
            let head = b"PUT /v1/documents/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 8000000\r\n\r\n{\"text\":\"";
            let mut open: Vec<std::net::TcpStream> = Vec::new();
            let mut closed = 0u64;
            while !stop.load(Ordering::Relaxed) {
                while open.len() < conns && !stop.load(Ordering::Relaxed) {
                    match std::net::TcpStream::connect(addr) {
                        Ok(mut s) => {
                            let _ = s.write_all(head);
                            open.push(s);
                            opened.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => break,
                    }
                }
                let t = Instant::now();
                open.retain_mut(|s| {
                    let ok = s.write_all(b"a").is_ok();
                    closed += u64::from(!ok);
                    ok
                });
                std::thread::sleep(Duration::from_secs(1).saturating_sub(t.elapsed()));
            }
            (open.len(), closed)
        })
    };
    let started = Instant::now();
    let mut max_rss = before;
    let mut health = Tally::default();
    while started.elapsed().as_secs_f64() < seconds {
        max_rss = max_rss.max(rss_kib(&pid).unwrap_or(0));
        let t0 = Instant::now();
        match http::request(addr, "GET", "/healthz", &[], b"") {
            Ok(r) => {
                health.ms.push(t0.elapsed().as_secs_f64() * 1e3);
                *health.statuses.entry(r.status).or_default() += 1;
            }
            Err(_) => health.failed += 1,
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::Relaxed);
    let (open, closed) = trickler.join().expect("trickler");
    println!(
        "slow-body connections: {} opened, {open} open at the end, {closed} closed by the server; RSS {before} KiB before, max {max_rss} KiB",
        opened.load(Ordering::Relaxed)
    );
    println!("| probe | requests | req/s | p50 ms | p99 ms | max ms | statuses | failed |");
    println!("|---|---:|---:|---:|---:|---:|---|---:|");
    health.row("GET /healthz every 100 ms", seconds);
}
