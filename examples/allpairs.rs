//! All-pairs Hamming search speed (docs/performance.md): every pair within k among N fingerprints.
//!
//! cargo run --release --example allpairs -- [--corpus CORPUS.jsonl | --fps FILE --n N | --random N] [--k 8] [--threads T]
//!
//! With `--corpus`, the SimHashes of the corpus' texts (fingerprinting is not timed); with
//! `--fps FILE --n N`, the first N fingerprints of a little-endian u64 file (the cache written by
//! `examples/scale_sim.rs`: the corpus's SimHashes, then spliced passages); with `--random N`, N
//! uniformly random fingerprints (the seed's 2.1M scale needs only 16 B/doc).

use std::io::BufRead;
use std::time::Instant;

mod common;
use common::arg;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let k: u32 = arg(&args, "--k").map_or(Ok(8), |s| s.parse())?;
    let threads: usize = arg(&args, "--threads").map_or(Ok(std::thread::available_parallelism().map_or(1, |n| n.get())), |s| s.parse())?;
    let mut fps = Vec::new();
    let what = if let Some(file) = arg(&args, "--fps") {
        let n: usize = arg(&args, "--n").map_or(Ok(2_100_000), |s| s.parse())?;
        fps = common::read_fps(&file, n)?;
        format!("fingerprints of {file}")
    } else if let Some(c) = arg(&args, "--corpus") {
        let lines: Vec<String> = std::io::BufReader::new(std::fs::File::open(&c)?)
            .lines()
            .collect::<Result<_, _>>()?;
        let chunk = lines.len().div_ceil(threads).max(1);
        fps = std::thread::scope(|s| {
            let hs: Vec<_> = lines
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || {
                        let mut f = fpdb::Fingerprinter::new(fpdb::FingerprintSpec::default());
                        part.iter()
                            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                            .filter_map(|v| v["text"].as_str().map(|t| f.fingerprint(t).simhash))
                            .collect::<Vec<u64>>()
                    })
                })
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
        });
        format!("SimHashes of {c}")
    } else {
        let n: usize = arg(&args, "--random").map_or(Ok(1_000_000), |s| s.parse())?;
        let mut x = 3u64;
        fps.extend((0..n).map(|_| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            fpdb::fingerprint::shingle::splitmix64(x)
        }));
        "uniformly random fingerprints".into()
    };
    let layout = fpdb::internals::pairs_layout(fps.len(), k);
    let t0 = Instant::now();
    let pairs = fpdb::all_pairs_fps(&fps, k, threads)?;
    let s = t0.elapsed().as_secs_f64();
    println!(
        "{} {what}: all pairs within k = {k}: {} pairs in {s:.2} s ({threads} threads, {} in-memory tables, {} probes per doc)",
        fps.len(),
        pairs.len(),
        layout.tables(),
        layout.probes(k)
    );
    Ok(())
}
