//! Table probes at k = 3 and 8 for each layout (in-memory mirror and RocksDB), 100K fingerprints.
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
