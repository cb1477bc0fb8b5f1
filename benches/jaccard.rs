//! Exact Jaccard of sorted u32 sets (ns/element), with and without the early exit.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fpdb::fingerprint::similarity::{jaccard, jaccard_at_least};

fn set(seed: u64, n: usize, keep: u64) -> Vec<u32> {
    let mut x = seed;
    let mut v: Vec<u32> = (0..n as u64)
        .filter_map(|i| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 60) < keep).then_some((i * 2654435761 % (1 << 31)) as u32)
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn bench(c: &mut Criterion) {
    let a = set(1, 10_000, 16);
    let near = set(2, 10_000, 15);
    let far = set(3, 10_000, 8);
    let mut g = c.benchmark_group("jaccard");
    g.throughput(Throughput::Elements((a.len() + near.len()) as u64));
    g.bench_function("full_merge_10k", |b| b.iter(|| jaccard(&a, &near)));
    g.bench_function("at_least_0.9_near_10k", |b| b.iter(|| jaccard_at_least(&a, &near, 0.9)));
    g.bench_function("at_least_0.9_far_10k_size_filter", |b| b.iter(|| jaccard_at_least(&a, &far, 0.9)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
