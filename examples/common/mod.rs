//! Helpers shared by the examples (each example includes this module with `mod common;` and uses
//! what it needs): argument lookup, the JSONL corpus loader, percentiles, directory sizes, and the
//! fingerprint cache file of `scale_sim` (read by `allpairs` too).
#![allow(dead_code)]

use std::io::{BufRead, Read, Write};

pub type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The value after `--name` on the command line.
pub fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

/// The first `limit` `(key, text)` documents of a JSONL corpus in the ingest format (lines without
/// both fields are skipped).
pub fn load(path: &str, limit: usize) -> Res<Vec<(String, String)>> {
    let mut docs = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(path)?).lines() {
        if docs.len() >= limit {
            break;
        }
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        if let (Some(k), Some(t)) = (v["key"].as_str(), v["text"].as_str()) {
            docs.push((k.to_string(), t.to_string()));
        }
    }
    Ok(docs)
}

/// User + system CPU seconds this process has used so far, all its threads (RocksDB's included):
/// fields 14 and 15 of `/proc/self/stat`, in clock ticks of 1/100 s (Linux); 0 elsewhere.
pub fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name (field 2) is in parentheses and may hold spaces: count after the last ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Seconds the calling thread has run on a CPU (`/proc/thread-self/schedstat`, nanoseconds; Linux):
/// a rate measured by it is not lowered by other processes sharing the cores. 0 elsewhere.
pub fn thread_cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse::<f64>().ok()))
        .map_or(0.0, |ns| ns / 1e9)
}

/// The `p`-quantile (nearest rank) of `v`, which it sorts; NaN when empty.
pub fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(((v.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(f64::NAN)
}

/// Bytes of the files under `p`, recursively (0 for what cannot be read).
pub fn dir_bytes(p: &std::path::Path) -> u64 {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_bytes(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

/// A seeded 64-bit mixer for the examples' generators: splitmix64's step (add the golden gamma)
/// then its finalizer.
pub fn mix(z: u64) -> u64 {
    fpdb::fingerprint::shingle::splitmix64(z.wrapping_add(0x9E37_79B9_7F4A_7C15))
}

/// The fingerprint cache file: every fingerprint as 8 bytes little-endian, nothing else.
pub fn write_fps(path: &str, fps: &[u64]) -> Res<()> {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    for fp in fps {
        w.write_all(&fp.to_le_bytes())?;
    }
    w.flush()?;
    Ok(())
}

/// The first `n` fingerprints of a [`write_fps`] file (an error when it holds fewer).
pub fn read_fps(path: &str, n: usize) -> Res<Vec<u64>> {
    let mut bytes = vec![0u8; 8 * n];
    std::fs::File::open(path)?.read_exact(&mut bytes)?;
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect())
}
