//! Table probes at k = 3 and 8 for each layout (in-memory mirror and RocksDB), 100K fingerprints;
//! the batched search of a 1,024-query chunk against one query at a time, 1M fingerprints, k = 12.
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use fpdb::internals::{Layout, MemTables};
use fpdb::{CreateOptions, Db, Dedup, Fingerprint, Options, PreparedDoc, QueryOptions, Tables};

fn fps(n: usize) -> Vec<u64> {
    let mut x = 7u64;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            fpdb::fingerprint::shingle::splitmix64(x)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let n = 100_000;
    let data = fps(n);
    let queries: Vec<u64> = data.iter().step_by(997).map(|f| f ^ 0b1011).collect();
    let mut g = c.benchmark_group("probe_mem_100k");
    for m in [2u32, 3, 4, 5, 6, 9] {
        let mut t = MemTables::new(Layout::new(m).unwrap());
        for (i, &f) in data.iter().enumerate() {
            t.insert(f, i as u64);
        }
        for k in [3u32, 8] {
            g.bench_with_input(BenchmarkId::new(format!("m{m}"), k), &k, |b, &k| {
                let mut i = 0;
                b.iter(|| {
                    i = (i + 1) % queries.len();
                    let mut n = 0;
                    t.probe(queries[i], k, |_, _, _| n += 1);
                    n
                })
            });
        }
    }
    g.finish();

    // The crawler loop's workers search for a chunk of documents at once (`probe_many`): 1,024
    // queries per iteration, one at a time vs batched, over a sealed base run of 1M entries at
    // k = 12 (the default) — criterion's time per iteration / 1,024 is the time per query.
    let mut g = c.benchmark_group("probe_many_1m_k12");
    g.sample_size(10);
    let big = fps(1_000_000);
    let chunk: Vec<u64> = big.iter().step_by(977).take(1024).map(|f| f ^ 0b1011_0110).collect();
    for m in [4u32, 5] {
        let t = MemTables::from_entries(Layout::new(m).unwrap(), big.iter().enumerate().map(|(i, &f)| (f, i as u64)));
        g.bench_function(BenchmarkId::new(format!("m{m}"), "one_at_a_time"), |b| {
            b.iter(|| {
                let mut n = 0;
                for &q in &chunk {
                    t.probe(q, 12, |_, _, _| n += 1);
                }
                n
            })
        });
        g.bench_function(BenchmarkId::new(format!("m{m}"), "batched"), |b| {
            b.iter(|| {
                let mut n = 0;
                t.probe_many(&chunk, 12, |_, _, _, _| n += 1);
                n
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("probe_rocksdb_100k");
    g.sample_size(10);
    for m in [3u32, 4, 5, 9] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let create = CreateOptions::default().with_tables(Tables::Blocks(m));
        let db = Db::create_with(
            &path,
            &create,
            Options {
                sync: false,
                ..Options::default()
            },
        )
        .unwrap();
        for chunk in data.chunks(10_000) {
            let batch = chunk
                .iter()
                .map(|&f| {
                    PreparedDoc::new(
                        format!("{f:x}"),
                        Fingerprint {
                            simhash: f,
                            shingles: vec![f as u32],
                            sketch: Vec::new(),
                        },
                        None,
                    )
                })
                .collect();
            db.commit_batch(batch, Dedup::Off).unwrap();
        }
        db.flush().unwrap();
        drop(db);
        let db = Db::open_with(
            &path,
            Options {
                mirror: false,
                ..Options::default()
            },
        )
        .unwrap();
        for k in [3u32, 8] {
            let opts = QueryOptions::default().with_max_distance(k);
            g.bench_with_input(BenchmarkId::new(format!("m{m}"), k), &k, |b, _| {
                let mut i = 0;
                b.iter(|| {
                    i = (i + 1) % queries.len();
                    db.query_simhash(queries[i], &opts).unwrap().len()
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
