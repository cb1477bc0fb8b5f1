//! A fingerprint-only simulation: the in-memory mirror (`MemTables`, the structure every
//! query and the crawler loop probe) at 1M, 10M and 100M documents, for several numbers of tables,
//! with query latency at k = 12, entries scanned per query and the heap it needs per document.
//!
//! ```text
//! cargo run --release --example scale_sim -- --corpus data/scale/scale-1m.jsonl \
//!     --docs 100000000 --at 1000000,10000000,100000000 --m 3,4,5,6 --k 12 --queries 1000 \
//!     [--fps data/scale/sim-fps.bin] [--threads 2] [--delta 0.11] [--batch 1024] \
//!     [--widths 17-16-16-15,14-14-14-11-11] [--split 2]
//! cargo run --release --example scale_sim -- --corpus data/scale/scale-1m.jsonl --emit 10000000 \
//!     | fpdb ingest DB -        # the same documents as JSONL: the 10M durable run
//! ```
//!
//! **Where the SimHashes come from.** Real text is far from uniformly distributed over the 64-bit
//! space (boilerplate, licence headers and code idioms crowd some block values), and that skew is
//! what makes buckets large. The first documents are the corpus's own passages; every further
//! document is a *splice* of two corpus passages drawn by a seeded hash of its number: the first
//! half of passage a (cut at a space) followed by the second half of passage b, fingerprinted with
//! the default spec. The result is real text whose SimHash follows the corpus's distribution
//! (shared halves keep its clusters) while being a new point (a splice is ~20 bits from either
//! parent). `--fps FILE` caches the generated fingerprints (little-endian u64) for reruns.
//!
//! **The mirror's shape.** The mirror is built as one sealed base run (what a database holds after
//! it is opened, or right after a merge); `--delta 0.11` inserts that share of the documents into
//! its mutable delta instead (about the most a live handle holds between two merges, 1/9), to
//! measure what the delta costs a probe.
//!
//! **Queries** are stored fingerprints with 0..=k/2 random bits flipped (as `examples/layout.rs`):
//! every query has a hit, and queries land where the documents are (size-biased, the crawler's
//! case). Latency is the mirror probe alone (fingerprint + SimHash filter, no Jaccard). `--batch B`
//! also runs the same queries in chunks of B through `MemTables::probe_many` (what the crawler
//! loop's workers do) and reports the mean time per query and the hits, which must equal the
//! one-at-a-time hits. `--split T` runs them again one at a time, each with its buckets split
//! across T threads (`MemTables::probe_split`, what a database's single queries do from ~2.6M
//! documents on). `--widths` adds layouts with unequal blocks (`Layout::with_widths`, dash-separated
//! widths summing to 64) to the `--m` ones (only those when `--m` is not given).

use std::io::Write;
use std::time::Instant;

use fpdb::internals::{layout, Layout, MemTables};
use fpdb::{FingerprintSpec, Fingerprinter};

mod common;
use common::{arg, mix, pct};

fn list(s: &str) -> Result<Vec<u64>, std::num::ParseIntError> {
    s.split(',').map(|x| x.trim().replace('_', "").parse()).collect()
}

fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
        .map_or(0, |pages| pages * 4096)
}

/// The texts of a corpus (its keys are not used: `--emit` writes its own).
fn texts_of(corpus: &str) -> common::Res<Vec<String>> {
    Ok(common::load(corpus, usize::MAX)?.into_iter().map(|(_, t)| t).collect())
}

/// Index of a space near the middle of `t` (or the middle when there is none).
fn mid(t: &str) -> usize {
    let m = (t.len() / 2..=t.len()).find(|&i| t.is_char_boundary(i)).unwrap_or(t.len());
    t[m..].find(' ').map_or(m, |i| m + i)
}

/// The text of document `i`: corpus passage `i`, or past the corpus a splice of two passages.
fn doc_text<'a>(texts: &'a [String], i: usize, buf: &'a mut String) -> &'a str {
    if i < texts.len() {
        return &texts[i];
    }
    let h = mix(0x5ca1e ^ i as u64);
    let (a, b) = (&texts[(h as u32) as usize % texts.len()], &texts[(h >> 32) as usize % texts.len()]);
    buf.clear();
    buf.push_str(&a[..mid(a)]);
    buf.push_str(&b[mid(b)..]);
    buf
}

fn generate(texts: &[String], n: usize, threads: usize) -> Vec<u64> {
    let mut fps = vec![0u64; n];
    let chunk = n.div_ceil(threads.max(1)).max(1);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let start = Instant::now();
    std::thread::scope(|s| {
        for (c, part) in fps.chunks_mut(chunk).enumerate() {
            let done = &done;
            s.spawn(move || {
                let mut f = Fingerprinter::new(FingerprintSpec::default());
                let mut buf = String::new();
                for (j, out) in part.iter_mut().enumerate() {
                    let i = c * chunk + j;
                    *out = f.fingerprint(doc_text(texts, i, &mut buf)).simhash;
                    if j % 1_000_000 == 999_999 {
                        let d = done.fetch_add(1_000_000, std::sync::atomic::Ordering::Relaxed) + 1_000_000;
                        eprintln!("  generated {d} fingerprints ({:.0} s)", start.elapsed().as_secs_f64());
                    }
                }
            });
        }
    });
    fps
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = arg(&args, "--docs").map_or(Ok(1_000_000), |s| s.replace('_', "").parse())?;
    let at: Vec<u64> = list(&arg(&args, "--at").unwrap_or_else(|| n.to_string()))?;
    // Layouts: `--m 3,4,5` equal splits, and/or `--widths 14-14-14-14-8,17-16-16-15` unequal ones.
    let mut layouts: Vec<Layout> = Vec::new();
    if arg(&args, "--widths").is_none() || arg(&args, "--m").is_some() {
        for m in list(&arg(&args, "--m").unwrap_or("3,4,5,6".into()))? {
            layouts.push(Layout::new(m as u32).ok_or("--m must be 1..=32")?);
        }
    }
    for spec in arg(&args, "--widths").iter().flat_map(|s| s.split(',')) {
        let widths: Vec<u32> = spec.split('-').map(|w| w.trim().parse()).collect::<Result<_, _>>()?;
        layouts.push(Layout::with_widths(&widths).ok_or("--widths: 1 to 32 widths of at least 1 bit summing to 64, e.g. 14-14-14-14-8")?);
    }
    let k: u32 = arg(&args, "--k").map_or(Ok(12), |s| s.parse())?;
    // Share of the documents (0..=1) inserted into the mirror's mutable delta after its base run
    // is built from the rest: what a live handle between two merges probes.
    let delta: f64 = arg(&args, "--delta").map_or(Ok(0.0), |s| s.parse())?;
    let nq: usize = arg(&args, "--queries").map_or(Ok(1000), |s| s.parse())?;
    let batch: usize = arg(&args, "--batch").map_or(Ok(0), |s| s.parse())?;
    let mut batched: Vec<String> = Vec::new();
    let split: usize = arg(&args, "--split").map_or(Ok(0), |s| s.parse())?;
    let mut splits: Vec<String> = Vec::new();
    let threads: usize =
        arg(&args, "--threads").map_or_else(|| Ok(std::thread::available_parallelism().map_or(2, |p| p.get())), |s| s.parse())?;
    let cache = arg(&args, "--fps");
    if let Some(e) = arg(&args, "--emit") {
        // The same documents as JSONL on stdout (the 10M durable run: `| fpdb ingest DB -`).
        let e: usize = e.replace('_', "").parse()?;
        let texts = texts_of(&arg(&args, "--corpus").ok_or("--emit needs --corpus")?)?;
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        let mut buf = String::new();
        for i in 0..e {
            let key = if i < texts.len() { format!("p{i}") } else { format!("s{i}") };
            serde_json::to_writer(&mut out, &serde_json::json!({"key": key, "text": doc_text(&texts, i, &mut buf)}))?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
        return Ok(());
    }

    let cached = cache
        .as_deref()
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() >= 8 * n as u64));
    let fps: Vec<u64> = match cached {
        Some(p) => {
            eprintln!("reading {n} fingerprints from the cache");
            common::read_fps(p, n)?
        }
        None => {
            let corpus = arg(&args, "--corpus").ok_or("--corpus CORPUS.jsonl is required (or a --fps cache)")?;
            let texts = texts_of(&corpus)?;
            eprintln!("{} passages read; fingerprinting {n} documents on {threads} threads", texts.len());
            let t0 = Instant::now();
            let fps = generate(&texts, n, threads);
            eprintln!("generated in {:.1} s", t0.elapsed().as_secs_f64());
            if let Some(p) = &cache {
                common::write_fps(p, &fps)?;
            }
            fps
        }
    };
    let distinct = {
        let mut s = fps[..fps.len().min(10_000_000)].to_vec();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    println!(
        "# {n} fingerprints ({distinct} distinct among the first {}), k = {k}, {nq} queries",
        fps.len().min(10_000_000)
    );
    println!();
    println!("| docs | m | probes/query | entries scanned/query (mean) | uniform expectation | p50 µs | p99 µs | mean µs | hits/query | mirror heap B/doc | process RSS MB | build s |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &size in &at {
        let size = (size as usize).min(fps.len());
        let part = &fps[..size];
        // Queries: stored fingerprints with 0..=k/2 bits flipped.
        let queries: Vec<u64> = (0..nq as u64)
            .map(|i| {
                let h = mix(0xfeed ^ i);
                let mut q = part[(h % size as u64) as usize];
                for f in 0..(mix(h) % u64::from(k / 2 + 1)) {
                    q ^= 1 << (mix(h ^ f) % 64);
                }
                q
            })
            .collect();
        for l in &layouts {
            let m = l.tables() as usize;
            let name = if l.is_equal_split() {
                m.to_string()
            } else {
                l.blocks().iter().map(|b| b.width.to_string()).collect::<Vec<_>>().join("-")
            };
            let plan = l.plan(k);
            // Entries scanned per query, from per-table histograms of block values.
            let scanned = if l.blocks().iter().all(|b| b.width <= 24) {
                let hist: Vec<Vec<u32>> = (0..m)
                    .map(|t| {
                        let mut h = vec![0u32; 1 << l.blocks()[t].width];
                        for &fp in part {
                            h[l.block(t, fp) as usize] += 1;
                        }
                        h
                    })
                    .collect();
                let total: u64 = queries
                    .iter()
                    .map(|&q| {
                        let mut s = 0u64;
                        for &(t, r) in &plan {
                            layout::for_each_neighbor(l.block(t, q), l.blocks()[t].width, r, &mut |v| {
                                s += u64::from(hist[t][v as usize]);
                            });
                        }
                        s
                    })
                    .sum();
                format!("{:.0}", total as f64 / nq as f64)
            } else {
                "–".into()
            };
            let uniform = l.expected_entries(k, size as u64);
            let t0 = Instant::now();
            let cut = part.len() - (part.len() as f64 * delta.clamp(0.0, 1.0)) as usize;
            let mut tables = MemTables::from_entries(l.clone(), part[..cut].iter().enumerate().map(|(id, &fp)| (fp, id as u64)));
            for (id, &fp) in part.iter().enumerate().skip(cut) {
                tables.insert(fp, id as u64);
            }
            let build = t0.elapsed().as_secs_f64();
            let rss = rss_bytes();
            let heap = tables.heap_bytes();
            let mut lat = Vec::with_capacity(nq);
            let mut hits = 0u64;
            for &q in &queries {
                let t = Instant::now();
                tables.probe(q, k, |_, _, _| hits += 1);
                lat.push(t.elapsed().as_secs_f64() * 1e6);
            }
            // `--split T`: the same queries, each with its buckets split across T threads.
            if split > 1 {
                let mut lat = Vec::with_capacity(nq);
                let mut split_hits = 0u64;
                for &q in &queries {
                    let t = Instant::now();
                    tables.probe_split(q, k, split, |_, _, _| split_hits += 1);
                    lat.push(t.elapsed().as_secs_f64() * 1e6);
                }
                splits.push(format!(
                    "| {size} | {name} | {split} | {:.1} | {:.1} | {:.1} |",
                    pct(&mut lat, 0.5),
                    pct(&mut lat, 0.99),
                    split_hits as f64 / nq as f64
                ));
            }
            // `--batch B`: the same queries in chunks of B through `probe_many` (each bucket read
            // once per chunk, as the crawler loop's workers check documents): mean µs per query.
            if batch > 1 {
                let mut batched_hits = 0u64;
                let t = Instant::now();
                for chunk in queries.chunks(batch) {
                    tables.probe_many(chunk, k, |_, _, _, _| batched_hits += 1);
                }
                let per_query = t.elapsed().as_secs_f64() * 1e6 / nq as f64;
                batched.push(format!(
                    "| {size} | {name} | {batch} | {per_query:.1} | {:.1} |",
                    batched_hits as f64 / nq as f64
                ));
            }
            let mean = lat.iter().sum::<f64>() / lat.len().max(1) as f64;
            println!(
                "| {size} | {name} | {} | {scanned} | {uniform:.0} | {:.1} | {:.1} | {mean:.1} | {:.1} | {:.1} | {:.0} | {build:.1} |",
                l.probes(k),
                pct(&mut lat, 0.5),
                pct(&mut lat, 0.99),
                hits as f64 / nq as f64,
                heap as f64 / size as f64,
                rss as f64 / 1e6,
            );
            std::io::stdout().flush()?;
            drop(tables);
        }
    }
    if !splits.is_empty() {
        println!();
        println!("Split (`probe_split`: each query's buckets across threads):");
        println!();
        println!("| docs | m | threads | p50 µs | p99 µs | hits/query |");
        println!("|---:|---:|---:|---:|---:|---:|");
        for row in &splits {
            println!("{row}");
        }
    }
    if !batched.is_empty() {
        println!();
        println!("Batched (`probe_many` over chunks of the same queries):");
        println!();
        println!("| docs | m | queries per chunk | mean µs per query | hits/query |");
        println!("|---:|---:|---:|---:|---:|");
        for row in &batched {
            println!("{row}");
        }
    }
    Ok(())
}
