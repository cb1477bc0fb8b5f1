//! Containment measurements behind docs/containment.md and the containment section of
//! docs/performance.md.
//!
//! ```text
//! cargo run --release --example containment -- licences CORPUS.jsonl KINDS.jsonl [--samples 1,4,8,16] [--c 0.8] [--max-postings N] [--no-pairs]
//! cargo run --release --example containment -- planted CORPUS.jsonl [--samples 4,8,16,32] [--max-samples 0,64] [--c 0.5] [--cases 200]
//! cargo run --release --example containment -- cost CORPUS.jsonl [--docs N] [--sample 8] [--queries 2000] [--queries-only]
//! ```
//!
//! * `licences`: ScanCode rules (notices, references, …) inside the full licence of their own
//!   expression. Truth = exact containment of the rule's shingle set in the licence's, ≥ c. Found =
//!   (a) a containment query with the rule's text returns the licence (the query inside a stored
//!   document: depends on sampling), (b) a query with the licence's text returns the rule (stored
//!   inside the query), (c) `containment_pairs` holds the pair.
//! * `planted`: passages of 20–500 words cut from corpus documents, edited at 0–10% of their words,
//!   embedded in hosts 2–50× longer made of other documents; recall of both directions per sampling
//!   rate, and the index size.
//! * `cost`: the same corpus ingested with the index off and on (dedup off, and the crawler loop
//!   with dedup link), disk bytes, query latency of near-duplicate queries and of containment
//!   queries, and ingest with containment relations reported.

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::time::Instant;

use fpdb::fingerprint::similarity::containment;
use fpdb::{ContainmentConfig, CreateOptions, Db, Dedup, IngestOptions, NewDoc, Options, QueryOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

mod common;
use common::{arg, dir_bytes, load, pct, Res};

fn list(args: &[String], name: &str, default: &str) -> Vec<u32> {
    arg(args, name)
        .unwrap_or_else(|| default.into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

fn fast() -> Options {
    Options {
        sync: false,
        ..Options::default()
    }
}

fn create(path: &std::path::Path, sample: Option<u32>) -> Res<Db> {
    create_capped(path, sample, fpdb::fingerprint::containment::DEFAULT_MAX_POSTINGS)
}

fn create_capped(path: &std::path::Path, sample: Option<u32>, cap: u32) -> Res<Db> {
    let c = CreateOptions::default().with_containment(sample.map(|n| ContainmentConfig::new(n).with_max_postings(cap)));
    Ok(Db::create_with(path, &c, fast())?)
}

fn ingest(db: &Db, docs: &[(String, String)], opts: &IngestOptions) -> Res<(f64, HashMap<String, usize>)> {
    let items = docs.iter().map(|(k, t)| {
        Ok(NewDoc {
            key: k.clone(),
            text: t.clone(),
            meta: None,
            biblio: Default::default(),
        })
    });
    let mut rel = HashMap::new();
    let t0 = Instant::now();
    db.ingest(items.collect::<Vec<_>>(), opts, |r| {
        if let Ok(o) = r.result {
            if !o.containment.is_empty() {
                rel.insert(o.key, o.containment.len());
            }
        }
    })?;
    Ok((t0.elapsed().as_secs_f64(), rel))
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("licences") => licences(&args),
        Some("planted") => planted(&args),
        Some("cost") => cost(&args),
        _ => Err("usage: containment licences|planted|cost CORPUS.jsonl ... (see the file's doc comment)".into()),
    }
}

fn licences(args: &[String]) -> Res<()> {
    let corpus = args.get(2).ok_or("missing CORPUS")?;
    let kinds_path = args.get(3).ok_or("missing KINDS")?;
    let c: f64 = arg(args, "--c").map_or(Ok(0.8), |s| s.parse())?;
    let cap: u32 = arg(args, "--max-postings").map_or(Ok(fpdb::fingerprint::containment::DEFAULT_MAX_POSTINGS), |s| s.parse())?;
    let docs = load(corpus, usize::MAX)?;
    let mut kinds: HashMap<String, (String, String)> = HashMap::new();
    for line in std::io::BufReader::new(std::fs::File::open(kinds_path)?).lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        if let (Some(k), Some(kind), Some(e)) = (v["key"].as_str(), v["kind"].as_str(), v["expression"].as_str()) {
            kinds.insert(k.into(), (kind.into(), e.into()));
        }
    }
    let index: HashMap<&str, usize> = docs.iter().enumerate().map(|(i, d)| (d.0.as_str(), i)).collect();
    let mut fpr = fpdb::Fingerprinter::new(fpdb::FingerprintSpec::default());
    let fps: Vec<fpdb::Fingerprint> = docs.iter().map(|d| fpr.fingerprint(&d.1)).collect();
    // Truth: (rule, licence) with the rule's containment in its own licence >= c.
    let mut candidates: BTreeMap<String, u64> = BTreeMap::new();
    let mut expected: Vec<(usize, usize, String)> = Vec::new();
    for (i, (key, _)) in docs.iter().enumerate() {
        let Some((kind, expr)) = kinds.get(key) else { continue };
        let Some(&l) = index.get(format!("licenses/{expr}.LICENSE").as_str()) else {
            continue;
        };
        *candidates.entry(kind.clone()).or_insert(0) += 1;
        if containment(&fps[i].shingles, &fps[l].shingles).a_in_b >= c {
            expected.push((i, l, kind.clone()));
        }
    }
    println!(
        "licence corpus {corpus}: {} docs; rules with a single-licence expression whose licence text is in the corpus, by kind: {candidates:?}",
        docs.len()
    );
    println!("expected (rule inside its licence at containment >= {c}): {}", expected.len());
    println!();
    println!("posting cap {cap}");
    println!();
    println!("| sample | index entries / doc | short docs | ingest s (off → on) | rule → licence (query inside stored) | licence → rule (stored inside query) | pairs | per kind: found / expected (rule → licence) | rule query p50 / p99 µs (mean hits) | pairs s |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|");
    let tmp = tempfile::tempdir()?;
    let off = create(&tmp.path().join("off"), None)?;
    let (t_off, _) = ingest(&off, &docs, &IngestOptions::default().with_dedup(Dedup::Off))?;
    drop(off);
    for n in list(args, "--samples", "1,2,4,8,16,32") {
        let path = tmp.path().join(format!("n{n}"));
        let db = create_capped(&path, Some(n), cap)?;
        let (t_on, _) = ingest(&db, &docs, &IngestOptions::default().with_dedup(Dedup::Off))?;
        let st = db.containment().stats()?.ok_or("no index")?;
        let q = QueryOptions::default().with_min_containment(c);
        let id = |i: usize| -> Res<u64> { Ok(db.get(&docs[i].0)?.ok_or("missing")?.id) };
        let (mut fwd, mut back, mut pairs_found) = (0usize, 0usize, 0usize);
        let mut per_kind: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        let mut lat = Vec::new();
        let mut nhits = 0usize;
        let mut by_licence: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for &(r, l, ref kind) in &expected {
            let t = Instant::now();
            let hits = db.query_fingerprint(&fps[r], &q)?;
            lat.push(t.elapsed().as_secs_f64() * 1e6);
            nhits += hits.len();
            let lid = id(l)?;
            let ok = hits.iter().any(|h| h.id == lid);
            fwd += usize::from(ok);
            let e = per_kind.entry(kind.clone()).or_insert((0, 0));
            e.0 += usize::from(ok);
            e.1 += 1;
            by_licence.entry(l).or_default().push(r);
        }
        for (&l, rules) in &by_licence {
            let hits = db.query_fingerprint(&fps[l], &q)?;
            let got: std::collections::HashSet<u64> = hits.iter().map(|h| h.id).collect();
            for &r in rules {
                back += usize::from(got.contains(&id(r)?));
            }
        }
        let t = Instant::now();
        let with_pairs = !args.iter().any(|a| a == "--no-pairs") || n == fpdb::fingerprint::containment::DEFAULT_SAMPLE;
        let pairs = if with_pairs { db.containment().pairs(c, 0)? } else { Vec::new() };
        let t_pairs = t.elapsed().as_secs_f64();
        let set: std::collections::HashSet<(u64, u64)> = pairs.iter().map(|p| (p.a, p.b)).collect();
        for &(r, l, _) in &expected {
            let (a, b) = (id(r)?, id(l)?);
            pairs_found += usize::from(set.contains(&(a.min(b), a.max(b))));
        }
        let kinds: Vec<String> = per_kind.iter().map(|(k, (f, e))| format!("{k} {f}/{e}")).collect();
        println!(
            "| {n} | {:.1} | {} | {t_off:.1} → {t_on:.1} | {fwd} / {} | {back} / {} | {pairs_found} / {} | {} | {:.0} / {:.0} ({:.0}) | {t_pairs:.1} |",
            st.entries as f64 / docs.len() as f64,
            st.short_docs,
            expected.len(),
            expected.len(),
            expected.len(),
            kinds.join(", "),
            pct(&mut lat, 0.5),
            pct(&mut lat, 0.99),
            nhits as f64 / expected.len().max(1) as f64
        );
        if n == 8 {
            println!("<!-- n = 8: {} pairs at >= {c} in all; stats: {st:?} -->", pairs.len());
        }
        drop(db);
        std::fs::remove_dir_all(&path)?;
    }
    Ok(())
}

/// Edits `rate` of the words (replace, delete or insert, uniformly), words from `pool`.
fn edit_words(words: &[&str], rate: f64, pool: &[&str], rng: &mut StdRng) -> Vec<String> {
    let mut w: Vec<String> = words.iter().map(|s| s.to_string()).collect();
    let ops = (rate * words.len() as f64).round() as usize;
    for _ in 0..ops {
        let i = rng.gen_range(0..w.len().max(1));
        let word = pool[rng.gen_range(0..pool.len())].to_string();
        match rng.gen_range(0..3) {
            0 if !w.is_empty() => w[i] = word,
            1 if w.len() > 1 => {
                w.remove(i);
            }
            _ => w.insert(i.min(w.len()), word),
        }
    }
    w
}

fn planted(args: &[String]) -> Res<()> {
    let corpus = args.get(2).ok_or("missing CORPUS")?;
    let c: f64 = arg(args, "--c").map_or(Ok(0.5), |s| s.parse())?;
    let cases: usize = arg(args, "--cases").map_or(Ok(200), |s| s.parse())?;
    let docs = load(corpus, 200_000)?;
    let words: Vec<Vec<&str>> = docs.iter().map(|d| d.1.split_whitespace().collect()).collect();
    let pool: Vec<&str> = words.iter().flatten().copied().step_by(7).collect();
    let mut rng = StdRng::seed_from_u64(13);
    // Cases: (passage words, factor, edit rate) over a grid, `cases` each.
    let lens = [20usize, 50, 100, 200, 500];
    let rates = [0.0, 0.025, 0.05, 0.10];
    struct Case {
        len: usize,
        rate: f64,
        passage: String,
        copy: String,
        host: String,
    }
    let mut all: Vec<Case> = Vec::new();
    for &len in &lens {
        for &rate in &rates {
            for _ in 0..cases {
                // A passage: `len` consecutive words of one document (documents joined in order).
                let mut src: Vec<&str> = Vec::new();
                let mut d = rng.gen_range(0..words.len());
                while src.len() < len {
                    src.extend(&words[d]);
                    d = (d + 1) % words.len();
                }
                let start = rng.gen_range(0..=src.len() - len);
                let passage = &src[start..start + len];
                let copy = edit_words(passage, rate, &pool, &mut rng);
                let factor = [2usize, 5, 10, 20, 50][rng.gen_range(0..5)];
                let mut host: Vec<String> = Vec::new();
                while host.len() < len * (factor - 1) {
                    let o = rng.gen_range(0..words.len());
                    host.extend(words[o].iter().map(|s| s.to_string()));
                }
                let at = rng.gen_range(0..=host.len());
                host.splice(at..at, copy.iter().cloned());
                all.push(Case {
                    len,
                    rate,
                    passage: passage.join(" "),
                    copy: copy.join(" "),
                    host: host.join(" "),
                });
            }
        }
    }
    let mut fpr = fpdb::Fingerprinter::new(fpdb::FingerprintSpec::default());
    println!(
        "planted: {} cases ({cases} per passage length × edit rate), passages cut from {corpus}, hosts 2–50× longer of other documents; c = {c}",
        all.len()
    );
    // `--max-samples 0,64,…`: the sample caps to compare (0 = none; default: none).
    let caps = list(args, "--max-samples", "0");
    let runs: Vec<(u32, u32)> = list(args, "--samples", "4,8,16,32")
        .into_iter()
        .flat_map(|n| caps.iter().map(move |&cap| (n, cap)))
        .collect();
    for (n, cap) in runs {
        let tmp = tempfile::tempdir()?;
        let make = |p: &std::path::Path| -> Res<Db> {
            let x = ContainmentConfig::new(n).with_max_samples((cap > 0).then_some(cap));
            Ok(Db::create_with(p, &CreateOptions::default().with_containment(Some(x)), fast())?)
        };
        let hosts = make(&tmp.path().join("h"))?;
        let copies = make(&tmp.path().join("c"))?;
        let h: Vec<(String, String)> = all.iter().enumerate().map(|(i, c)| (format!("h{i}"), c.host.clone())).collect();
        let p: Vec<(String, String)> = all.iter().enumerate().map(|(i, c)| (format!("c{i}"), c.copy.clone())).collect();
        ingest(&hosts, &h, &IngestOptions::default().with_dedup(Dedup::Off))?;
        ingest(&copies, &p, &IngestOptions::default().with_dedup(Dedup::Off))?;
        let q = QueryOptions::default().with_min_containment(c);
        // (len, rate) → (truth ≥ c, found forward, found backward)
        let mut table: BTreeMap<(usize, u32), (usize, usize, usize, usize)> = BTreeMap::new();
        for (i, cs) in all.iter().enumerate() {
            let fp_p = fpr.fingerprint(&cs.passage);
            let fp_h = fpr.fingerprint(&cs.host);
            let fp_c = fpr.fingerprint(&cs.copy);
            let fwd_truth = containment(&fp_p.shingles, &fp_h.shingles).a_in_b >= c;
            let back_truth = containment(&fp_c.shingles, &fp_h.shingles).a_in_b >= c;
            let e = table.entry((cs.len, (cs.rate * 1000.0) as u32)).or_insert((0, 0, 0, 0));
            if fwd_truth {
                e.0 += 1;
                let key = format!("h{i}");
                e.1 += usize::from(hosts.query_fingerprint(&fp_p, &q)?.iter().any(|h| h.key == key));
            }
            if back_truth {
                e.2 += 1;
                let key = format!("c{i}");
                e.3 += usize::from(copies.query_fingerprint(&fp_h, &q)?.iter().any(|h| h.key == key));
            }
        }
        let s = hosts.containment().stats()?.ok_or("no index")?;
        println!();
        println!(
            "sample 1/{n}, sample cap {cap} (0 = none): hosts index {:.1} entries per 1,000 shingles; rows = passage words, columns = edit rate; cell = found / expected for passage → host (query inside stored) | host → copy (stored inside query)",
            1000.0 * s.entries as f64 / all.iter().map(|c| fpr.fingerprint(&c.host).shingles.len() as f64).sum::<f64>()
        );
        println!();
        println!(
            "| words | {} |",
            rates.iter().map(|r| format!("{:.1}%", r * 100.0)).collect::<Vec<_>>().join(" | ")
        );
        println!("|---:|{}", "---|".repeat(rates.len()));
        for &len in &lens {
            let cells: Vec<String> = rates
                .iter()
                .map(|&r| {
                    let (t, f, tb, fb) = table.get(&(len, (r * 1000.0) as u32)).copied().unwrap_or_default();
                    format!("{f}/{t} \\| {fb}/{tb}")
                })
                .collect();
            println!("| {len} | {} |", cells.join(" | "));
        }
    }
    Ok(())
}

fn cost(args: &[String]) -> Res<()> {
    let corpus = args.get(2).ok_or("missing CORPUS")?;
    let limit: usize = arg(args, "--docs").map_or(Ok(usize::MAX), |s| s.parse())?;
    let n_sample: u32 = arg(args, "--sample").map_or(Ok(fpdb::fingerprint::containment::DEFAULT_SAMPLE), |s| s.parse())?;
    let queries: usize = arg(args, "--queries").map_or(Ok(2000), |s| s.parse())?;
    let docs = load(corpus, limit)?;
    let n = docs.len();
    let bytes: usize = docs.iter().map(|d| d.1.len()).sum();
    println!(
        "corpus {corpus}: {n} docs, {:.1} MB; containment sample 1/{n_sample}; durable (sync on)",
        bytes as f64 / 1e6
    );
    println!();
    println!("| measurement | index off | index on |");
    println!("|---|---:|---:|");
    let tmp = tempfile::tempdir()?;
    let mut rows: Vec<(String, String, String)> = Vec::new();
    let mut dbs = Vec::new();
    let only_queries = args.iter().any(|a| a == "--queries-only");
    for on in [false, true] {
        let sample = on.then_some(n_sample);
        let c = CreateOptions::default().with_containment(sample.map(ContainmentConfig::new));
        // Dedup off: the raw cost of writing the index.
        if !only_queries {
            let p = tmp.path().join(format!("off-{on}"));
            let db = Db::create(&p, &c)?;
            let (s, _) = ingest(&db, &docs, &IngestOptions::default().with_dedup(Dedup::Off))?;
            rows.push((
                "durable ingest, dedup off".into(),
                format!("{:.0} docs/s", n as f64 / s),
                String::new(),
            ));
            drop(db);
            std::fs::remove_dir_all(&p)?;
        }
        // The crawler loop.
        let p = tmp.path().join(format!("link-{on}"));
        let db = Db::create(&p, &c)?;
        let (s, _) = ingest(&db, &docs, &IngestOptions::default())?;
        rows.push((
            "durable query-then-insert, dedup link".into(),
            format!("{:.0} docs/s", n as f64 / s),
            String::new(),
        ));
        db.compact_index()?;
        let b = dir_bytes(&p);
        rows.push((
            "disk bytes (RocksDB + segments)".into(),
            format!("{:.1} MB ({:.0} B/doc)", b as f64 / 1e6, b as f64 / n as f64),
            String::new(),
        ));
        dbs.push((p, db));
    }
    // Rows were pushed off-then-on in the same order: fold them into two columns.
    let half = rows.len() / 2;
    for i in 0..half {
        println!("| {} | {} | {} |", rows[i].0, rows[i].1, rows[half + i].1);
    }
    let step = (n / queries.max(1)).max(1);
    let sample: Vec<&(String, String)> = docs.iter().step_by(step).take(queries).collect();
    let mut lat_plain = [Vec::new(), Vec::new()];
    for (j, (_, db)) in dbs.iter().enumerate() {
        for d in &sample {
            let t = Instant::now();
            std::hint::black_box(db.query(&d.1, &QueryOptions::default())?);
            lat_plain[j].push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    let [mut a, mut b] = lat_plain;
    println!(
        "| near-duplicate query by text, k = 12 (p50 / p99) | {:.0} / {:.0} µs | {:.0} / {:.0} µs |",
        pct(&mut a, 0.5),
        pct(&mut a, 0.99),
        pct(&mut b, 0.5),
        pct(&mut b, 0.99)
    );
    let on = &dbs[1].1;
    // c = 0 keeps every candidate that shares a key: its hits are the candidates before the count
    // filter and the verification.
    for c in [0.0, 0.5, 0.9] {
        let q = QueryOptions::default().with_min_containment(c);
        let mut lat = Vec::new();
        let mut hits = 0usize;
        for d in &sample {
            let t = Instant::now();
            hits += on.query(&d.1, &q)?.len();
            lat.push(t.elapsed().as_secs_f64() * 1e6);
        }
        println!(
            "| containment query by text, c = {c} (p50 / p99; mean hits) | – | {:.0} / {:.0} µs ({:.2}) |",
            pct(&mut lat, 0.5),
            pct(&mut lat, 0.99),
            hits as f64 / sample.len() as f64
        );
    }
    let s = on.containment().stats()?.ok_or("no index")?;
    println!(
        "| containment index | – | {} entries ({:.1}/doc), {} short docs, {} keys, {} frequent (> {}) holding {} entries, longest list {} |",
        s.entries,
        s.entries as f64 / n as f64,
        s.short_docs,
        s.keys,
        s.frequent_keys,
        s.max_postings,
        s.frequent_entries,
        s.longest_posting
    );
    drop(dbs);
    if only_queries {
        return Ok(());
    }
    // Ingest reporting containment relations (the crawler loop plus relations at c = 0.8).
    let p = tmp.path().join("rel");
    let db = Db::create(
        &p,
        &CreateOptions::default().with_containment(Some(ContainmentConfig::new(n_sample))),
    )?;
    let (s, rel) = ingest(&db, &docs, &IngestOptions::default().with_containment(0.8))?;
    println!(
        "| durable query-then-insert + containment relations at 0.8 | – | {:.0} docs/s; {} docs with relations |",
        n as f64 / s,
        rel.len()
    );
    Ok(())
}
