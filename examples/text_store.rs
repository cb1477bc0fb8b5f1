//! Stored texts: bytes per raw byte of the format fpdb uses (zstd with a dictionary trained on the
//! first documents) against the alternatives, behind docs/format.md ("Stored texts").
//!
//! ```text
//! cargo run --release --example text_store -- CORPUS.jsonl [--docs N]
//! ```
//!
//! * `fpdb`: the corpus ingested into a database made with `store_text` (the real records:
//!   header, frame, the dictionary), flushed; `Db::text_usage`'s record bytes and the `text`
//!   column family's SST bytes (keys and block index included: what the disk holds), per raw byte.
//! * `blob`: RocksDB's blob files with zstd, modelled: each text one zstd frame without dictionary
//!   (blob files compress every blob alone and take no dictionary) plus RocksDB's blob record
//!   (28-byte header + the 8-byte key) and its blob index in the SST (~16 bytes). This RocksDB is
//!   built without zstd (`default-features = false`: enabling it rebuilds the C++ library), so the
//!   frames are zstd's own, at the same level.
//! * `dict D/L`: a dictionary of D KiB trained on the first 4 MiB, frames at level L, no header:
//!   the choice of dictionary size and level.
//! * `blocks B/L`: consecutive texts cut into blocks of B KiB, each one zstd frame at level L (with
//!   the 64 KiB dictionary): what a block store (or RocksDB's zstd block compression) would take,
//!   at the price of decompressing a whole block to read one text and of rewriting blocks to
//!   reclaim a deleted text.

use std::time::Instant;

use fpdb::{CreateOptions, Db, Dedup, IngestOptions, NewDoc};

mod common;
use common::{arg, load, Res};

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: text_store CORPUS.jsonl [--docs N]")?.clone();
    let limit = arg(&args, "--docs").and_then(|s| s.parse().ok()).unwrap_or(usize::MAX);
    let docs = load(&path, limit)?;
    let raw: u64 = docs.iter().map(|(_, t)| t.len() as u64).sum();
    println!(
        "{path}: {} documents, {raw} raw bytes ({:.0} per document)",
        docs.len(),
        raw as f64 / docs.len() as f64
    );
    println!("| store | bytes per raw byte | compress, MB/s of raw text (one core) |");
    println!("|---|---|---|");

    // fpdb's records, end to end
    let dir = tempfile::tempdir()?;
    let db = Db::create(dir.path().join("db"), &CreateOptions::default().with_store_text(true))?;
    let input = docs.iter().map(|(k, t)| {
        Ok(NewDoc {
            key: k.clone(),
            text: t.clone(),
            meta: None,
            biblio: Default::default(),
        })
    });
    let opts = IngestOptions::default().with_dedup(Dedup::Off);
    db.ingest(input, &opts, |_| {})?;
    db.compact_index()?;
    let u = db.texts().usage()?;
    assert_eq!(u.raw_bytes, raw);
    println!(
        "| fpdb records (zstd-3, 64 KiB dictionary on the first 4 MiB; {} dictionary bytes included) | {:.3} | – |",
        u.dict_bytes,
        (u.stored_bytes + u.dict_bytes) as f64 / raw as f64
    );
    println!(
        "| fpdb on disk (the `text` column family's SST files) | {:.3} | – |",
        u.sst_bytes as f64 / raw as f64
    );
    drop(db);

    // the alternatives, frame bytes only
    let t0 = Instant::now();
    let mut blob = 0u64;
    for (_, t) in &docs {
        blob += zstd::bulk::compress(t.as_bytes(), 3)?.len() as u64 + 28 + 8 + 16;
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "| RocksDB blob files, zstd-3 (modelled) | {:.3} | {:.0} |",
        blob as f64 / raw as f64,
        raw as f64 / 1e6 / secs
    );
    let mut train = Vec::new();
    let mut sizes = Vec::new();
    for (_, t) in &docs {
        if train.len() >= 4 << 20 {
            break;
        }
        train.extend_from_slice(t.as_bytes());
        sizes.push(t.len());
    }
    for kib in [16usize, 64, 110] {
        let dict = zstd::dict::from_continuous(&train, &sizes, kib << 10)?;
        for level in [1, 3, 9, 19] {
            let mut c = zstd::bulk::Compressor::with_dictionary(level, &dict)?;
            let t0 = Instant::now();
            let mut n = dict.len() as u64;
            for (_, t) in &docs {
                n += c.compress(t.as_bytes())?.len() as u64;
            }
            let secs = t0.elapsed().as_secs_f64();
            println!(
                "| dictionary {kib} KiB, zstd-{level} | {:.3} | {:.0} |",
                n as f64 / raw as f64,
                raw as f64 / 1e6 / secs
            );
        }
    }
    let dict = zstd::dict::from_continuous(&train, &sizes, 64 << 10)?;
    for level in [3, 19] {
        let mut c = zstd::bulk::Compressor::with_dictionary(level, &dict)?;
        for kib in [16usize, 64, 256] {
            let t0 = Instant::now();
            let (mut n, mut block) = (dict.len() as u64, Vec::new());
            for (i, (_, t)) in docs.iter().enumerate() {
                block.extend_from_slice(t.as_bytes());
                if block.len() >= kib << 10 || i + 1 == docs.len() {
                    n += c.compress(&block)?.len() as u64;
                    block.clear();
                }
            }
            let secs = t0.elapsed().as_secs_f64();
            println!(
                "| blocks of {kib} KiB, zstd-{level}, dictionary 64 KiB | {:.3} | {:.0} |",
                n as f64 / raw as f64,
                raw as f64 / 1e6 / secs
            );
        }
    }
    Ok(())
}
