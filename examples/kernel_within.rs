//! The Hamming-distance scan of a bucket (`kernels::for_each_within_at`) at each SIMD level this
//! CPU runs: nanoseconds an entry over 4,096 pseudo-random fingerprints, k = 12, 20,000 queries.
//!
//! ```text
//! cargo run --release --example kernel_within
//! ```
//!
//! (or the O3 dev build of docs/performance.md; the plain dev profile does not inline the AVX2
//! helper and is no measure of it)
use std::time::Instant;

use fpdb::fingerprint::kernels::{detected, for_each_within_at, Level};

fn main() {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let fps: Vec<u64> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect();
    for level in [Level::Scalar, Level::Avx2, Level::Avx512].into_iter().filter(|&l| l <= detected()) {
        let t = Instant::now();
        let mut sum = 0u64;
        for r in 0..20_000u64 {
            for_each_within_at(level, &fps, r.wrapping_mul(0x9E37_79B9_7F4A_7C15), 12, |_, d| sum += u64::from(d));
        }
        let ns = t.elapsed().as_nanos() as f64 / (20_000.0 * fps.len() as f64);
        println!("{level:?}: {ns:.3} ns an entry (checksum {sum})");
    }
}
