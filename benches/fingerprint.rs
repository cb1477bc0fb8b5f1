//! normalize + shingle + simhash throughput on real text (MB/s).
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fpdb::fingerprint::kernels::{self, Level};
use fpdb::fingerprint::normalize::{normalize, normalize_into_version};
use fpdb::fingerprint::simhash::{simhash, simhash_reference};
use fpdb::{FingerprintSpec, Fingerprinter};

mod common;

fn bench(c: &mut Criterion) {
    let docs = common::passages();
    let bytes: usize = docs.iter().map(String::len).sum();
    let mut g = c.benchmark_group("fingerprint");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("normalize_ascii", |b| {
        b.iter(|| docs.iter().map(|d| normalize(d).len()).sum::<usize>())
    });
    let accented: Vec<String> = docs.iter().map(|d| d.replace('e', "é")).collect();
    // The same passages with each lower-case ASCII letter replaced by a Han ideograph (3 bytes).
    let han: Vec<String> = docs
        .iter()
        .map(|d| {
            d.chars()
                .map(|c| match c {
                    'a'..='z' => char::from_u32(0x4E00 + (c as u32 - 'a' as u32) * 37).unwrap_or(c),
                    _ => c,
                })
                .collect()
        })
        .collect();
    // Normalizer 2 (new databases) and 1 (databases made before it), side by side.
    let mut out = String::new();
    for (name, texts) in [("nfkc", &accented), ("han", &han)] {
        for version in [2, 1] {
            g.bench_function(format!("normalize_{name}_v{version}"), |b| {
                b.iter(|| {
                    texts
                        .iter()
                        .map(|d| {
                            normalize_into_version(version, d, &mut out);
                            out.len()
                        })
                        .sum::<usize>()
                })
            });
        }
    }
    for (name, spec) in [("word3", FingerprintSpec::words(3)), ("char5", FingerprintSpec::chars(5))] {
        let mut f = Fingerprinter::new(spec);
        g.bench_function(format!("full_{name}"), |b| {
            b.iter(|| docs.iter().map(|d| f.fingerprint(d).simhash).fold(0, |a, x| a ^ x))
        });
    }
    g.finish();
    let hashes: Vec<u64> = (0..100_000u64).map(fpdb::fingerprint::shingle::splitmix64).collect();
    let mut g = c.benchmark_group("simhash");
    g.throughput(Throughput::Elements(hashes.len() as u64));
    g.bench_function("dispatched", |b| b.iter(|| simhash(&hashes)));
    for level in [Level::Scalar, Level::Avx2, Level::Avx512]
        .into_iter()
        .filter(|&l| l <= kernels::detected())
    {
        g.bench_function(format!("bit_counts_{level:?}"), |b| {
            b.iter(|| {
                let mut ones = [0u32; 64];
                kernels::bit_counts_at(level, &hashes, &mut ones);
                ones[0]
            })
        });
    }
    g.bench_function("per_bit_reference", |b| b.iter(|| simhash_reference(&hashes)));
    g.finish();
    // The Hamming bucket scan: 100,000 fingerprints against one query, k = 12.
    let mut g = c.benchmark_group("hamming_scan");
    g.throughput(Throughput::Elements(hashes.len() as u64));
    for level in [Level::Scalar, Level::Avx2, Level::Avx512]
        .into_iter()
        .filter(|&l| l <= kernels::detected())
    {
        g.bench_function(format!("{level:?}"), |b| {
            b.iter(|| {
                let mut hits = 0usize;
                kernels::for_each_within_at(level, &hashes, hashes[7], 12, |_, _| hits += 1);
                hits
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
