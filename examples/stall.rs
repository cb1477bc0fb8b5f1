//! How long the writer stalls while a bulk load runs: the longest gaps between two consecutive
//! acknowledgements of `Db::ingest` (each document is acknowledged once its batch is durable).
//! With the mirror, the SimHash tables' entries are written every `Options::table_tail_docs`
//! documents (`db::background::table_tail`); this shows whether those writes hold up the commits.
//!
//! cargo run --release --example stall -- CORPUS.jsonl [--docs N] [--tail-docs N] [--dedup off|link]
//!
//! Prints the rate (the close's flush included, as `fpdb ingest` counts it), the time to the first
//! acknowledgement (the pipeline filling), the longest gaps after it and how many exceed 250 ms.

mod common;

use std::time::Instant;

use common::{arg, load, Res};
use fpdb::{CreateOptions, Db, Dedup, IngestOptions, NewDoc, Options};

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let corpus = args
        .get(1)
        .ok_or("usage: stall CORPUS.jsonl [--docs N] [--tail-docs N] [--dedup off|link]")?;
    let limit: usize = arg(&args, "--docs").map_or(Ok(usize::MAX), |s| s.parse())?;
    let tail_docs: usize = arg(&args, "--tail-docs").map_or(Ok(Options::default().table_tail_docs), |s| s.parse())?;
    let dedup = match arg(&args, "--dedup").as_deref() {
        None | Some("off") => Dedup::Off,
        Some("link") => Dedup::Link,
        Some(other) => return Err(format!("--dedup: expected off or link, got {other}").into()),
    };
    let docs = load(corpus, limit)?;
    let n = docs.len();
    let tmp = tempfile::tempdir()?;
    let opts = Options {
        table_tail_docs: tail_docs,
        ..Options::default()
    };
    let db = Db::create_with(tmp.path().join("db"), &CreateOptions::default(), opts)?;
    let items = docs.into_iter().map(|(key, text)| {
        Ok(NewDoc {
            key,
            text,
            meta: None,
            biblio: Default::default(),
        })
    });
    let t0 = Instant::now();
    let mut last: Option<Instant> = None;
    let mut first = 0.0;
    let mut gaps: Vec<f64> = Vec::new();
    db.ingest(items, &IngestOptions::default().with_dedup(dedup), |_| {
        let now = Instant::now();
        match last {
            // The first acknowledgement waits for the pipeline to fill: reported apart.
            None => first = (now - t0).as_secs_f64(),
            Some(l) => gaps.push((now - l).as_secs_f64()),
        }
        last = Some(now);
    })?;
    let t_flush = Instant::now();
    db.flush()?;
    let flush = t_flush.elapsed().as_secs_f64();
    let secs = t0.elapsed().as_secs_f64();
    gaps.sort_by(|a, b| b.total_cmp(a));
    let top: Vec<String> = gaps.iter().take(5).map(|g| format!("{:.0}", g * 1e3)).collect();
    println!(
        "{n} documents, table_tail_docs {tail_docs}, dedup {dedup:?}: {:.0} docs/s ({secs:.2} s, final flush {flush:.2} s); \
         first acknowledgement after {:.0} ms; longest gaps between acknowledgements (ms): {}; gaps over 250 ms: {}",
        n as f64 / secs,
        first * 1e3,
        top.join(", "),
        gaps.iter().filter(|&&g| g > 0.25).count()
    );
    Ok(())
}
