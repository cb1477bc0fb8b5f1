//! The table-layout decision (docs/performance.md): for each number of tables m and each k, query
//! latency p50/p99 through the in-memory mirror and through RocksDB, and the disk bytes of the tables.
//!
//! cargo run --release --example layout -- --docs N [--corpus CORPUS.jsonl] [--m 3,4,5,6,k+1] [--k 3,8,12] [--queries Q]
//!
//! Fingerprints are the SimHashes of the corpus (real text is far from uniformly distributed) or,
//! without a corpus, uniformly random 64-bit values. Queries are stored fingerprints with 0..k/2 bits
//! flipped, so every query has at least one hit.

use std::io::BufRead;
use std::time::Instant;

use fpdb::{CreateOptions, Db, Dedup, Fingerprint, Options, PreparedDoc, QueryOptions, Tables};

mod common;
use common::{arg, dir_bytes, pct};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = arg(&args, "--docs").map_or(Ok(100_000), |s| s.parse())?;
    let nq: usize = arg(&args, "--queries").map_or(Ok(1000), |s| s.parse())?;
    let ks: Vec<u32> = arg(&args, "--k")
        .unwrap_or("3,8,12".into())
        .split(',')
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    let ms: Vec<String> = arg(&args, "--m")
        .unwrap_or("2,3,4,5,6,k+1".into())
        .split(',')
        .map(str::to_string)
        .collect();
    let mut fps: Vec<u64> = Vec::with_capacity(n);
    let source = match arg(&args, "--corpus") {
        Some(c) => {
            let mut f = fpdb::Fingerprinter::new(fpdb::FingerprintSpec::default());
            for line in std::io::BufReader::new(std::fs::File::open(&c)?).lines() {
                if fps.len() >= n {
                    break;
                }
                let v: serde_json::Value = serde_json::from_str(&line?)?;
                if let Some(t) = v["text"].as_str() {
                    fps.push(f.fingerprint(t).simhash);
                }
            }
            format!("SimHashes of {c}")
        }
        None => {
            let mut x = 42u64;
            fps.extend((0..n).map(|_| {
                x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
                fpdb::fingerprint::shingle::splitmix64(x)
            }));
            "uniformly random fingerprints".into()
        }
    };
    let n = fps.len();
    let mut x = 7u64;
    let mut rnd = move || {
        x = fpdb::fingerprint::shingle::splitmix64(x.wrapping_add(1));
        x
    };
    println!("{n} {source}; {nq} queries per cell\n");
    println!("| k | m | probes/query | mirror p50 µs | mirror p99 µs | RocksDB p50 µs | RocksDB p99 µs | hits/query | table bytes/doc |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for k in &ks {
        let queries: Vec<u64> = (0..nq)
            .map(|_| {
                let mut q = fps[(rnd() % n as u64) as usize];
                for _ in 0..rnd() % u64::from(k / 2 + 1) {
                    q ^= 1 << (rnd() % 64);
                }
                q
            })
            .collect();
        for m in &ms {
            let tables = if m == "k+1" { Tables::KPlusOne } else { Tables::Blocks(m.parse()?) };
            let mm = tables.resolve(*k)?;
            let dir = tempfile::tempdir()?;
            let path = dir.path().join("db");
            let create = CreateOptions::default().with_tables(tables).with_max_distance(*k);
            let db = Db::create_with(
                &path,
                &create,
                Options {
                    sync: false,
                    ..Options::default()
                },
            )?;
            let base = dir_bytes(&path);
            for (c, chunk) in fps.chunks(20_000).enumerate() {
                let batch = chunk
                    .iter()
                    .enumerate()
                    .map(|(i, &f)| {
                        PreparedDoc::new(
                            format!("{}", c * 20_000 + i),
                            Fingerprint {
                                simhash: f,
                                shingles: vec![0],
                                sketch: Vec::new(),
                            },
                            None,
                        )
                    })
                    .collect();
                db.commit_batch(batch, Dedup::Off)?;
            }
            // Settle: without this, background compactions of the fresh bulk load share the two
            // cores with the measured queries.
            db.compact_index()?;
            let per_doc_all = (dir_bytes(&path.join("rocksdb")) - base.min(dir_bytes(&path.join("rocksdb")))) as f64 / n as f64;
            let mut lat_mem = Vec::new();
            let mut hits = 0usize;
            let opts = QueryOptions::default().with_max_distance(*k);
            for &q in &queries {
                let t = Instant::now();
                hits += db.query_simhash(q, &opts)?.len();
                lat_mem.push(t.elapsed().as_secs_f64() * 1e6);
            }
            drop(db);
            let db = Db::open_with(
                &path,
                Options {
                    mirror: false,
                    ..Options::default()
                },
            )?;
            let mut lat_disk = Vec::new();
            let t_all = Instant::now();
            for &q in &queries {
                let t = Instant::now();
                std::hint::black_box(db.query_simhash(q, &opts)?);
                lat_disk.push(t.elapsed().as_secs_f64() * 1e6);
                if t_all.elapsed().as_secs() > 60 {
                    break; // very slow layouts: a minute of queries is enough for percentiles
                }
            }
            println!(
                "| {k} | {mm}{} | {} | {:.1} | {:.1} | {:.0} | {:.0} | {:.1} | {:.0} |",
                if m == "k+1" { " (k+1)" } else { "" },
                db.layout().probes(*k),
                pct(&mut lat_mem, 0.5),
                pct(&mut lat_mem, 0.99),
                pct(&mut lat_disk, 0.5),
                pct(&mut lat_disk, 0.99),
                hits as f64 / queries.len() as f64,
                per_doc_all
            );
        }
    }
    Ok(())
}
