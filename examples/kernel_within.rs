//! The Hamming-distance scan of a bucket at each SIMD level this CPU runs, k = 12:
//!
//! * a long bucket (`kernels::for_each_within_at`): nanoseconds an entry over 4,096
//!   pseudo-random fingerprints, 20,000 queries — the writer's scan of recent documents;
//! * small buckets probed by several queries (the index's buckets under a batched search): 8
//!   queries over each bucket of 1 to 8 entries, nanoseconds a (query, bucket) pair, one
//!   `for_each_within_at` call per query against one `for_each_within_many_at` per bucket.
//!
//! ```text
//! cargo run --release --example kernel_within
//! ```
//!
//! (or the O3 dev build of docs/performance.md; the plain dev profile does not inline the AVX2
//! helper and is no measure of it)
use std::time::Instant;

use fpdb::fingerprint::kernels::{detected, for_each_within, for_each_within_at, for_each_within_many, level, Level};

/// Pairs (query, bucket) timed per bucket size in the small-bucket part.
const SMALL_PAIRS: usize = 4_000_000;

fn main() {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let fps: Vec<u64> = (0..4096).map(|_| next()).collect();
    let levels: Vec<Level> = [Level::Scalar, Level::Avx2, Level::Avx512]
        .into_iter()
        .filter(|&l| l <= detected())
        .collect();
    for &level in &levels {
        let t = Instant::now();
        let mut sum = 0u64;
        for r in 0..20_000u64 {
            for_each_within_at(level, &fps, r.wrapping_mul(0x9E37_79B9_7F4A_7C15), 12, |_, d| sum += u64::from(d));
        }
        let ns = t.elapsed().as_nanos() as f64 / (20_000.0 * fps.len() as f64);
        println!("{level:?}: {ns:.3} ns an entry (checksum {sum})");
    }
    // Queries near the buckets' entries, so that some pairs match (as a probe's do). Timed at the
    // level in effect (`level()`: the widest, or `FPDB_SIMD`), through the entry points the index
    // calls, which read the level once a call (the `_at` forms check it against the CPU each time).
    let queries: Vec<u64> = (0..8).map(|i| fps[i] ^ (next() & next() & next())).collect();
    println!(
        "small buckets, 8 queries each, at {:?}: ns a (query, bucket) pair, one call per query / one call per bucket",
        level()
    );
    for size in 1..=8usize {
        let buckets = SMALL_PAIRS / 8;
        let (mut a, mut b) = (0u64, 0u64);
        let t = Instant::now();
        for i in 0..buckets {
            let s = (i * 8) % (fps.len() - 8);
            for &q in &queries {
                for_each_within(&fps[s..s + size], q, 12, |_, d| a += u64::from(d));
            }
        }
        let one = t.elapsed().as_nanos() as f64 / SMALL_PAIRS as f64;
        let t = Instant::now();
        for i in 0..buckets {
            let s = (i * 8) % (fps.len() - 8);
            for_each_within_many(&fps[s..s + size], queries.iter().copied().enumerate(), 12, |_, _, d| {
                b += u64::from(d)
            });
        }
        let many = t.elapsed().as_nanos() as f64 / SMALL_PAIRS as f64;
        assert_eq!(a, b, "both ways find the same matches");
        println!("{size} entries: {one:.2} / {many:.2}");
    }
}
