//! The crawler loop's acknowledgement rate with the semantic channel's background indexer running
//! beside it vs without (docs/performance.md, "The semantic channel"): the same documents ingested
//! through `Db::ingest` (dedup link) into three fresh databases — no channel, the channel with its
//! indexer off (the queue writes alone), the channel with its indexer on `--threads` threads —
//! reporting docs/s of each, the process's CPU time per document (user + system, all threads: on a
//! shared box a steadier measure than the rate), the bytes written to storage per document (WAL,
//! SST and segment files, /proc/self/io), and how many documents the indexer embedded
//! meanwhile; first the bytes per document the queue gets (the text to embed, and its queue value).
//!
//! ```text
//! bash scripts/fetch-model.sh
//! cargo run --all-features --example semantic_ack -- DOCS.jsonl [--docs N] [--threads 1] [--only none|queue|beside]
//! ```
//!
//! `--only` runs one configuration (for `perf record`; the ratios then print NaN).

use std::path::PathBuf;
use std::time::Instant;

use fpdb::semantic::{embed_text, queue, SemanticConfig, SemanticOptions, DEFAULT_MAX_TOKENS};
use fpdb::{CreateOptions, Db, IngestOptions, NewDoc, Options};

fn docs(path: &str, n: usize) -> Vec<NewDoc> {
    let text = std::fs::read_to_string(path).expect("read the JSONL input");
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            Some(NewDoc {
                key: v.get("key")?.as_str()?.to_string(),
                text: v.get("text")?.as_str()?.to_string(),
                meta: None,
                biblio: Default::default(),
            })
        })
        .take(n)
        .collect()
}

/// The process's CPU seconds so far (user + system, from /proc/self/stat at 100 ticks a second).
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // the fields after the command's closing parenthesis; utime and stime are the 12th and 13th
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest.split_whitespace().map(|x| x.parse().unwrap_or(0)).collect();
    (f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)) as f64 / 100.0
}

/// Bytes this process has caused to be written to storage so far (/proc/self/io `write_bytes`).
fn written() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    io.lines()
        .find_map(|l| l.strip_prefix("write_bytes:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

fn run(label: &str, input: &[NewDoc], create: &CreateOptions, opts: Options) -> f64 {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("db");
    drop(Db::create(&path, create).expect("create"));
    let d = Db::open_with(&path, opts).expect("open");
    let (start, cpu, wrote) = (Instant::now(), cpu_secs(), written());
    let stats = d
        .ingest(input.iter().cloned().map(Ok), &IngestOptions::default(), |_| ())
        .expect("ingest");
    let ingested = start.elapsed().as_secs_f64();
    d.flush().expect("flush");
    let secs = start.elapsed().as_secs_f64();
    let cpu_us = 1e6 * (cpu_secs() - cpu) / stats.stored.max(1) as f64;
    let wrote_b = (written() - wrote) as f64 / stats.stored.max(1) as f64;
    let rate = stats.stored as f64 / secs;
    let s = d.stats();
    println!(
        "{label:<34} {:>8} docs in {secs:>6.2} s = {rate:>8.0} docs/s (flush {:.0} ms), CPU {cpu_us:>5.1} µs/doc, written {wrote_b:>5.0} B/doc; embedded meanwhile {}",
        stats.stored,
        1e3 * (secs - ingested),
        s.semantic_vectors
    );
    rate
}

fn main() {
    let mut args = std::env::args().skip(1);
    let input = args
        .next()
        .expect("usage: semantic_ack DOCS.jsonl [--docs N] [--threads T] [--model DIR] [--only none|queue|beside]");
    let (mut n, mut threads, mut only) = (20_000usize, 1usize, None::<String>);
    let mut model = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/data/models/all-MiniLM-L6-v2"));
    while let Some(a) = args.next() {
        let mut v = || args.next().expect("a value");
        match a.as_str() {
            "--docs" => n = v().parse().expect("--docs N"),
            "--threads" => threads = v().parse().expect("--threads N"),
            "--model" => model = v().into(),
            // one configuration alone (`none`, `queue`, `beside`), e.g. under `perf record`
            "--only" => only = Some(v()),
            _ => panic!("unknown argument {a}"),
        }
    }
    let input = docs(&input, n);
    let texts: Vec<String> = input.iter().map(|d| embed_text(&d.text, None, None, DEFAULT_MAX_TOKENS)).collect();
    let text_bytes: usize = texts.iter().map(String::len).sum();
    let value_bytes: usize = texts.iter().map(|t| queue::encode(t).len()).sum();
    let per_doc = |b: usize| b as f64 / input.len().max(1) as f64;
    println!(
        "queued per document: text {:.0} B, queue value {:.0} B (LZ4)",
        per_doc(text_bytes),
        per_doc(value_bytes)
    );
    let plain = CreateOptions::default();
    let with = CreateOptions::default().with_semantic(Some(SemanticConfig::new(&model)));
    let opts = |indexer: bool| Options {
        semantic: SemanticOptions {
            indexer,
            threads,
            ..SemanticOptions::default()
        },
        ..Options::default()
    };
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let rate = |name: &str, label: &str, create: &CreateOptions, o: Options| {
        if wanted(name) {
            run(label, &input, create, o)
        } else {
            f64::NAN
        }
    };
    let base = rate("none", "no channel", &plain, Options::default());
    let queued = rate("queue", "channel, indexer off (queue only)", &with, opts(false));
    let beside = rate("beside", &format!("channel, indexer on ({threads} thr)"), &with, opts(true));
    println!(
        "acknowledgement rate vs no channel: queue only {:.1}%, indexer beside {:.1}%",
        100.0 * queued / base,
        100.0 * beside / base
    );
}
