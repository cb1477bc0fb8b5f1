//! kill -9 crash harness. The test re-runs its own binary as a child that ingests a long, slowly fed
//! stream of documents through `Db::ingest` (and deletes some between rounds), printing `fed KEY` as
//! the pipeline takes each item and `ack KEY` after each durable batch. The parent waits until the
//! child is feeding, kills it (SIGKILL) 0..300 ms later — while documents are in flight — reopens
//! the database and checks that
//! - every acknowledged document is present, intact and queryable, every acknowledged delete holds;
//! - nothing that was never fed is stored;
//! - `check` finds no fault (no record points at missing or torn shingle bytes, index and records agree).
//!
//! It prints how many kills interrupted a round with fed but unacknowledged documents and asserts that
//! more than half did (one cycle in eight kills at a random moment instead, which can land in open and
//! recovery).
//!
//! Cycles: 30 by default (17 s on the 2-core dev box); 150 when `CI` is set, not `false` or `0`
//! (113 s); `FPDB_CRASH_CYCLES=N` overrides both (the long soak: e.g. `FPDB_CRASH_CYCLES=1000 cargo
//! test --all-features --test crash`). Replay one cycle with `FPDB_CRASH_SEED=<seed printed on
//! failure> FPDB_CRASH_CYCLES=1`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{edit, passage, text, vocab};
use fpdb::IngestOptions;
use fpdb::{CreateOptions, Db, NewDoc, QueryOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn doc_text(v: &[String], seed: u64, i: u64) -> String {
    // Every fifth document is an edited copy of an earlier one of the same child: groups get exercised.
    if i % 5 == 4 {
        text(&edit(v, &passage(v, 80, seed * 100_000 + i - 3), 2, i))
    } else {
        text(&passage(v, 80, seed * 100_000 + i))
    }
}

/// The child: runs only when FPDB_CRASH_DIR is set. Round after round it ingests a lazily generated
/// stream of 50..400 documents through `Db::ingest` (the feed sleeps 0..2 ms per document, so a round
/// lasts long enough for kills to land in it), printing `fed KEY` as the pipeline takes each item
/// and `ack KEY` once its batch is durable; between rounds it deletes an acknowledged document.
#[test]
#[ignore = "run by acknowledged_documents_survive_kill_9_during_ingestion as a child process"]
fn crash_child() {
    let Ok(dir) = std::env::var("FPDB_CRASH_DIR") else { return };
    let seed: u64 = std::env::var("FPDB_CRASH_SEED").unwrap().parse().unwrap();
    let v = vocab();
    // method: FPDB_CRASH_METHOD runs the child under another method (default simhash).
    let method: fpdb::fingerprint::method::Method = std::env::var("FPDB_CRASH_METHOD").unwrap_or("simhash".into()).parse().unwrap();
    let create = CreateOptions::default()
        .with_spec(fpdb::FingerprintSpec::default().with_method(method.clone()))
        .with_max_distance(method.default_max_distance());
    // containment: a small tail (written to RocksDB every few batches), so kills also land in its
    // flush and the reopen re-derives it. Likewise the table tail (after every batch, every few
    // rounds, or only by the reopen after the kill).
    let opts = fpdb::Options {
        contain_tail_postings: [0, 300, 3000][seed as usize % 3],
        table_tail_docs: [0, 700, 1 << 22][(seed / 3) as usize % 3],
        ..fpdb::Options::default()
    };
    let db = if std::path::Path::new(&dir).join("rocksdb").exists() {
        Db::open_with(&dir, opts)
    } else {
        Db::create_with(&dir, &create, opts)
    }
    .unwrap();
    println!("open");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut i = 0u64;
    let mut acked: Vec<String> = Vec::new();
    loop {
        let n = rng.gen_range(50..400u64);
        let pause = Duration::from_micros(rng.gen_range(0..2000));
        let v = &v;
        let docs = (i..i + n).map(move |j| {
            std::thread::sleep(pause);
            let key = format!("s{seed}-{j}");
            println!("fed {key}");
            Ok(NewDoc {
                key,
                text: doc_text(v, seed, j),
                meta: None,
                biblio: Default::default(),
            })
        });
        i += n;
        let opts = IngestOptions::default()
            .with_batch_size(rng.gen_range(1..64))
            .with_batch_latency(Duration::from_millis(rng.gen_range(1..20)))
            .with_workers(2);
        db.ingest(docs, &opts, |r| {
            let o = r.result.unwrap();
            println!("ack {}", o.key);
            acked.push(o.key);
        })
        .unwrap();
        if rng.gen_bool(0.5) && !acked.is_empty() {
            let k = acked.swap_remove(rng.gen_range(0..acked.len()));
            println!("begin-del {k}");
            db.delete(&k).unwrap();
            println!("del {k}");
        }
    }
}

/// What one cycle verified.
struct Cycle {
    /// Acknowledged operations checked after the reopen.
    checked: usize,
    /// The kill interrupted an ingest round: some fed documents were not yet acknowledged.
    in_flight: bool,
}

fn run_cycle(dir: &std::path::Path, seed: u64, v: &[String]) -> Result<Cycle, String> {
    run_cycle_with(dir, seed, v, "simhash")
}

fn run_cycle_with(dir: &std::path::Path, seed: u64, v: &[String], method: &str) -> Result<Cycle, String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .args(["--exact", "crash_child", "--ignored", "--nocapture", "--test-threads=1"])
        .env("FPDB_CRASH_DIR", dir)
        .env("FPDB_CRASH_SEED", seed.to_string())
        .env("FPDB_CRASH_METHOD", method)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // One cycle in eight kills at a random moment from the start (it may land in open and recovery);
    // the others wait until the child is feeding documents, then kill within the next 0..300 ms,
    // while the round is in progress.
    let mut lines = Vec::new();
    let delay = if rng.gen_ratio(1, 8) {
        Duration::from_millis(rng.gen_range(0..400))
    } else {
        let give_up = Instant::now() + Duration::from_secs(60);
        while !lines.iter().any(|l: &String| l.starts_with("fed ")) {
            if Instant::now() > give_up {
                let _ = child.kill();
                return Err("the child fed no document within 60 s".into());
            }
            match rx.recv_timeout(Duration::from_millis(5)) {
                Ok(l) => lines.push(l),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(_) => break,
            }
        }
        Duration::from_millis(rng.gen_range(0..300))
    };
    std::thread::sleep(delay);
    child.kill().map_err(|e| e.to_string())?; // SIGKILL
    let status = child.wait().map_err(|e| e.to_string())?;
    let _ = reader.join();
    lines.extend(rx.try_iter());
    if status.success() {
        return Err("child exited on its own (it should run until killed)".into());
    }
    // The model: acknowledged inserts and deletes; a delete begun but not acknowledged is unknown,
    // and so is a document fed but not acknowledged.
    let mut expect: BTreeMap<String, Option<bool>> = BTreeMap::new();
    let mut unacked: BTreeSet<&str> = BTreeSet::new();
    for l in &lines {
        if let Some(k) = l.strip_prefix("fed ") {
            unacked.insert(k);
        } else if let Some(k) = l.strip_prefix("ack ") {
            unacked.remove(k);
            expect.insert(k.to_string(), Some(true));
        } else if let Some(k) = l.strip_prefix("begin-del ") {
            expect.insert(k.to_string(), None);
        } else if let Some(k) = l.strip_prefix("del ") {
            expect.insert(k.to_string(), Some(false));
        }
    }
    let db = Db::open(dir).map_err(|e| format!("reopen failed: {e}"))?;
    let report = db.check().map_err(|e| e.to_string())?;
    if !report.faults.is_empty() {
        return Err(format!("check found faults: {:?}", report.faults));
    }
    let spec = db.spec().clone();
    for (key, state) in &expect {
        let got = db.get(key).map_err(|e| e.to_string())?;
        match state {
            Some(true) => {
                let doc = got.ok_or(format!("acknowledged document {key} is missing"))?;
                let j: u64 = key.rsplit('-').next().and_then(|n| n.parse().ok()).ok_or("bad key")?;
                let t = doc_text(v, seed, j);
                if doc.record.simhash != fpdb::fingerprint(&spec, &t).simhash {
                    return Err(format!("{key}: stored simhash differs"));
                }
                let hits = db.query(&t, &QueryOptions::default()).map_err(|e| e.to_string())?;
                if !hits.iter().any(|h| h.key == *key && h.jaccard == Some(1.0)) {
                    return Err(format!("{key}: not found by its own text: {hits:?}"));
                }
            }
            Some(false) if got.is_some() => return Err(format!("acknowledged delete of {key} did not hold")),
            _ => {}
        }
    }
    // Nothing that was never fed is stored.
    let fed: BTreeSet<&str> = lines.iter().filter_map(|l| l.strip_prefix("fed ")).collect();
    let prefix = format!("s{seed}-");
    let mut phantom = None;
    db.for_each_doc(|_, r| {
        if r.key.starts_with(&prefix) && !fed.contains(r.key.as_str()) {
            phantom = Some(r.key.clone());
        }
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    if let Some(k) = phantom {
        return Err(format!("{k} is stored but was never fed"));
    }
    Ok(Cycle {
        checked: expect.len(),
        in_flight: !unacked.is_empty(),
    })
}

/// Cycles: `FPDB_CRASH_CYCLES=N` when set (the long soak, e.g. 1000); otherwise 150 when `CI` is set
/// (and not `false`/`0`), 30 for a newcomer's `cargo test` (17 s on the 2-core dev box).
fn cycles() -> u64 {
    if let Some(n) = std::env::var("FPDB_CRASH_CYCLES").ok().and_then(|c| c.parse().ok()) {
        return n;
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    if ci {
        150
    } else {
        30
    }
}

#[test]
fn acknowledged_documents_survive_kill_9_during_ingestion() {
    let cycles = cycles();
    let v = vocab();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let base: u64 = std::env::var("FPDB_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let (mut checked, mut in_flight) = (0, 0u64);
    for c in 0..cycles {
        let seed = base + c;
        match run_cycle(&path, seed, &v) {
            Ok(r) => {
                checked += r.checked;
                in_flight += u64::from(r.in_flight);
            }
            Err(e) => panic!("crash cycle {c} failed (replay: FPDB_CRASH_SEED={seed} FPDB_CRASH_CYCLES=1 on a copy of the db): {e}"),
        }
    }
    let docs = Db::open(&path).unwrap().stats().docs;
    eprintln!(
        "crash harness: {cycles} kill -9 cycles (seeds {base}..{}), {in_flight} of them ({:.0}%) killed the child with fed but unacknowledged documents in flight; {checked} acknowledged operations verified, {docs} documents at the end",
        base + cycles,
        100.0 * in_flight as f64 / cycles.max(1) as f64
    );
    assert!(checked > 0, "no acknowledgement was ever received");
    assert!(
        in_flight * 2 > cycles,
        "only {in_flight} of {cycles} kills landed during ingestion: the harness no longer tests crashes in flight"
    );
}

/// method: the same harness under the methods with their own column families (sketches and bucket
/// entries written in the document's batch): `FPDB_CRASH_METHOD_CYCLES` per method, default 8
/// (30 when `CI` is set).
#[test]
fn acknowledged_documents_survive_kill_9_under_every_other_method() {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    let cycles: u64 = std::env::var("FPDB_CRASH_METHOD_CYCLES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(if ci { 30 } else { 8 });
    let v = vocab();
    for method in ["broder-charikar", "charikar", "multi-lexicon", "broder"] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let (mut checked, mut in_flight) = (0, 0u64);
        for c in 0..cycles {
            let seed = 10_000 + c;
            match run_cycle_with(&path, seed, &v, method) {
                Ok(r) => {
                    checked += r.checked;
                    in_flight += u64::from(r.in_flight);
                }
                Err(e) => panic!("{method}: crash cycle {c} failed (seed {seed}): {e}"),
            }
        }
        let db = Db::open(&path).unwrap();
        assert_eq!(db.spec().method.name(), method);
        eprintln!(
            "crash harness, {method}: {cycles} kill -9 cycles, {in_flight} with documents in flight, {checked} acknowledged operations verified, {} documents",
            db.stats().docs
        );
        assert!(checked > 0, "{method}: no acknowledgement was ever received");
    }
}
