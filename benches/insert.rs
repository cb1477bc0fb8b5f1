//! Durable inserts: one document per commit vs the batched pipeline, and query by text / fingerprint.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fpdb::IngestOptions;
use fpdb::{CreateOptions, Db, NewDoc, QueryOptions};

mod common;

fn bench(c: &mut Criterion) {
    let docs = common::passages();
    let n = docs.len().min(2000);
    let mut g = c.benchmark_group("insert");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("single_commit_each", |b| {
        b.iter_batched(
            || tempfile::tempdir().unwrap(),
            |dir| {
                let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
                for (i, d) in docs.iter().take(n).enumerate() {
                    db.insert(&i.to_string(), d).unwrap();
                }
            },
            criterion::BatchSize::PerIteration,
        )
    });
    g.bench_function("pipeline_group_commit", |b| {
        b.iter_batched(
            || tempfile::tempdir().unwrap(),
            |dir| {
                let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
                let input = docs.iter().take(n).enumerate().map(|(i, d)| {
                    Ok(NewDoc {
                        key: i.to_string(),
                        text: d.clone(),
                        meta: None,
                        biblio: Default::default(),
                    })
                });
                db.ingest(input, &IngestOptions::default(), |_| {}).unwrap();
            },
            criterion::BatchSize::PerIteration,
        )
    });
    g.finish();

    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    let input = docs.iter().enumerate().map(|(i, d)| {
        Ok(NewDoc {
            key: i.to_string(),
            text: d.clone(),
            meta: None,
            biblio: Default::default(),
        })
    });
    db.ingest(input, &IngestOptions::default(), |_| {}).unwrap();
    let mut g = c.benchmark_group("query");
    let opts = QueryOptions::default().with_max_distance(8);
    g.bench_function("by_text_k8", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % docs.len();
            db.query(&docs[i], &opts).unwrap().len()
        })
    });
    let fps: Vec<_> = docs.iter().map(|d| db.fingerprinter().fingerprint(d)).collect();
    g.bench_function("by_fingerprint_k8", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % fps.len();
            db.query_fingerprint(&fps[i], &opts).unwrap().len()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
