//! Fault injection at every I/O step of a commit (needs `--features failpoints`): the caller gets
//! the error, the handle refuses further writes (poisoned), and after reopening the database is
//! consistent with every acknowledged document present.
#![cfg(feature = "failpoints")]

use crate::common;

use common::{assert_acked_present, passage, text, vocab};
use fpdb::{failpoint, CreateOptions, Db, Error, Options, QueryOptions};

// Failpoints are process-wide: these tests, and every other test of the `failpoints` suite, run
// one at a time under the suite's one lock.
use crate::SERIAL;

fn setup(dir: &std::path::Path, segment_size: u64) -> (Db, Vec<String>) {
    let v = vocab();
    let texts: Vec<String> = (0..30).map(|i| text(&passage(&v, 200, i))).collect();
    let db = Db::create_with(
        dir.join("db"),
        &CreateOptions::default(),
        Options {
            segment_size,
            ..Options::default()
        },
    )
    .unwrap();
    for (i, t) in texts.iter().take(10).enumerate() {
        db.insert(&format!("k{i}"), t).unwrap();
    }
    (db, texts)
}

fn assert_consistent(path: &std::path::Path, texts: &[String], present: &[usize], absent: &[usize]) {
    let db = Db::open(path).unwrap();
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);
    for &i in present {
        let hits = db.query(&texts[i], &QueryOptions::default()).unwrap();
        assert_eq!(
            hits.first().map(|h| h.key.as_str()),
            Some(format!("k{i}").as_str()),
            "doc {i} must be present"
        );
    }
    for &i in absent {
        assert!(db.get(&format!("k{i}")).unwrap().is_none(), "doc {i} must be absent");
    }
}

#[test]
fn every_commit_step_failure_is_reported_poisons_and_recovers() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    // (failpoint, segment size forcing a new segment, is the document durable after the failure?)
    let cases = [
        ("segment.write", 64 << 20, false),
        ("segment.fsync", 64 << 20, false),
        ("segment.dir_fsync", 1, false),
        ("wal.write", 64 << 20, false),
        ("batch.commit", 64 << 20, true),
    ];
    for (point, seg, durable) in cases {
        failpoint::clear();
        let dir = tempfile::tempdir().unwrap();
        let (db, texts) = setup(dir.path(), seg);
        failpoint::set(point, 1);
        match db.insert("k10", &texts[10]) {
            Err(Error::Injected(p)) => assert_eq!(p, point),
            other => panic!("{point}: expected the injected error, got {other:?}"),
        }
        failpoint::clear();
        match db.insert("k11", &texts[11]) {
            Err(e @ Error::Poisoned { .. }) => assert!(e.to_string().contains(point), "{e}"),
            other => panic!("{point}: expected a poisoned handle, got {other:?}"),
        }
        assert!(matches!(db.delete("k0"), Err(Error::Poisoned { .. })));
        // Reads still work on a poisoned handle.
        assert_eq!(db.query(&texts[3], &QueryOptions::default()).unwrap()[0].key, "k3");
        let path = db.path().to_path_buf();
        drop(db);
        let (present, absent): (Vec<usize>, Vec<usize>) = if durable {
            ((0..11).collect(), vec![11])
        } else {
            ((0..10).collect(), vec![10, 11])
        };
        assert_consistent(&path, &texts, &present, &absent);
        // And the reopened handle accepts writes again.
        let db = Db::open(&path).unwrap();
        db.insert("k12", &texts[12]).unwrap();
        assert!(db.check().unwrap().faults.is_empty(), "{point}");
    }
}

#[test]
fn a_failed_compaction_rename_leaves_the_database_consistent() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let (db, texts) = setup(dir.path(), 16 << 10);
    for i in (0..10).step_by(2) {
        db.delete(&format!("k{i}")).unwrap();
    }
    failpoint::set("compact.rename", 1);
    assert!(matches!(db.compact(0.1), Err(Error::Injected("compact.rename"))));
    failpoint::clear();
    assert!(matches!(db.insert("k20", &texts[20]), Err(Error::Poisoned { .. })));
    let path = db.path().to_path_buf();
    drop(db);
    let tmp_files = || {
        std::fs::read_dir(path.join("segments"))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".seg.tmp"))
            .count()
    };
    assert_eq!(tmp_files(), 1, "the interrupted compaction left its temporary file");
    let db = Db::open(&path).unwrap();
    assert!(
        db.recovery()
            .orphans_removed
            .iter()
            .any(|p| p.to_string_lossy().ends_with(".seg.tmp")),
        "{:?}",
        db.recovery()
    );
    assert_eq!(tmp_files(), 0);
    drop(db);
    assert_consistent(&path, &texts, &[1, 3, 5, 7, 9], &[0, 2, 4, 6, 8, 20]);
    let db = Db::open(&path).unwrap();
    let c = db.compact(0.1).unwrap();
    assert!(c.bytes_reclaimed > 0);
    drop(db);
    assert_consistent(&path, &texts, &[1, 3, 5, 7, 9], &[0, 2]);
}

// ---------------------------------------------------------------------------------------------
// The ingestion pipeline under faults: every stage ends `Db::ingest` with a typed error (never a
// hang, even with every channel full), nothing acknowledged is lost, reopen + check is clean.

use std::sync::mpsc;
use std::time::Duration;

use fpdb::NewDoc;
use fpdb::{DocResult, IngestOptions};

/// Enough items to fill every bounded channel of the pipeline many times over (batch size 16 →
/// channels of 32).
const STREAM: usize = 6000;

fn small_batches() -> IngestOptions {
    // Only full batches (and the last one): batch boundaries do not depend on timing.
    IngestOptions::default()
        .with_workers(2)
        .with_batch_size(16)
        .with_batch_latency(Duration::from_secs(3600))
}

/// A deterministic stream of short distinct documents; `fault(i)` may replace item i.
fn stream(fault: impl Fn(usize) -> Option<fpdb::Result<NewDoc>> + Send) -> impl Iterator<Item = fpdb::Result<NewDoc>> + Send {
    let v = vocab();
    (0..STREAM).map(move |i| {
        fault(i).unwrap_or_else(|| {
            Ok(NewDoc {
                key: format!("s{i}"),
                text: text(&passage(&v, 12, 1_000_000 + i as u64)),
                meta: None,
                biblio: Default::default(),
            })
        })
    })
}

/// Runs `Db::ingest` on another thread and waits for it. A pipeline that does not return within a
/// generous deadline is reported as a hang (a hang detector, not a speed goal).
fn ingest_or_hang(
    db: &Db,
    input: impl Iterator<Item = fpdb::Result<NewDoc>> + Send + 'static,
) -> (fpdb::Result<fpdb::IngestStats>, Vec<String>) {
    let (tx, rx) = mpsc::channel();
    let db2 = db.clone();
    std::thread::spawn(move || {
        let mut acked = Vec::new();
        let r = db2.ingest(input, &small_batches(), |d: DocResult| {
            if let Ok(o) = &d.result {
                if o.id.is_some() {
                    acked.push(o.key.clone());
                }
            }
        });
        // Release this handle before reporting, so that the test can reopen the database.
        drop(db2);
        let _ = tx.send((r, acked));
    });
    rx.recv_timeout(Duration::from_secs(120))
        .expect("Db::ingest hung: it did not return within 120 s")
}

#[test]
fn ingest_ends_with_the_error_when_a_commit_step_fails_mid_stream() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    for point in ["segment.write", "segment.fsync", "wal.write", "batch.commit"] {
        failpoint::clear();
        let dir = tempfile::tempdir().unwrap();
        let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
        // Fail the 20th batch: by then every channel is full and the reader is blocked on a send.
        failpoint::set(point, 20);
        let (r, acked) = ingest_or_hang(&db, stream(|_| None));
        failpoint::clear();
        match r {
            Err(Error::Injected(p)) => assert_eq!(p, point),
            other => panic!("{point}: expected the injected error, got {other:?}"),
        }
        assert_eq!(acked.len(), 19 * 16, "{point}: the 19 batches before the failure are acknowledged");
        assert!(matches!(db.insert("late", "some late text here"), Err(Error::Poisoned { .. })));
        let path = db.path().to_path_buf();
        drop(db);
        assert_acked_present(&path, &acked);
    }
}

#[test]
fn ingest_stops_at_an_input_read_error_after_committing_what_came_before() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    let (r, acked) = ingest_or_hang(
        &db,
        stream(|i| {
            (i == 3000).then(|| {
                Err(Error::Io {
                    op: "read ingest input",
                    path: "input.jsonl".into(),
                    source: std::io::Error::other("device went away"),
                })
            })
        }),
    );
    assert!(
        matches!(
            r,
            Err(Error::Io {
                op: "read ingest input",
                ..
            })
        ),
        "{r:?}"
    );
    assert_eq!(acked.len(), 3000, "every item before the read error is committed and acknowledged");
    // Nothing failed inside the database: the handle still writes.
    db.insert("after", "the handle is still healthy after an input error").unwrap();
    let path = db.path().to_path_buf();
    drop(db);
    assert_acked_present(&path, &acked);
}

#[test]
fn malformed_items_are_reported_one_by_one_and_the_rest_is_ingested() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    let (r, acked) = ingest_or_hang(
        &db,
        stream(|i| {
            (i % 100 == 7).then(|| {
                Err(Error::InvalidInput {
                    key: None,
                    message: format!("line {i}: malformed"),
                })
            })
        }),
    );
    let stats = r.unwrap();
    assert_eq!(stats.errors, 60);
    assert_eq!(stats.stored as usize, STREAM - 60);
    assert_eq!(acked.len(), STREAM - 60);
}

#[test]
fn a_worker_panic_ends_ingest_with_a_typed_error_and_keeps_the_handle_usable() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    failpoint::set("ingest.worker", 2500);
    let (r, acked) = ingest_or_hang(&db, stream(|_| None));
    failpoint::clear();
    match r {
        Err(Error::Panicked { stage, message }) => {
            assert_eq!(stage, "ingest worker");
            assert!(message.contains("ingest.worker"), "{message}");
        }
        other => panic!("expected Error::Panicked, got {other:?}"),
    }
    assert!(acked.len() < STREAM);
    // A worker holds no writer state: the handle is not poisoned.
    db.insert("after", "the handle still writes after a worker panic").unwrap();
    let path = db.path().to_path_buf();
    drop(db);
    assert_acked_present(&path, &acked);
}

#[test]
fn an_input_iterator_panic_ends_ingest_with_a_typed_error() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    let (r, acked) = ingest_or_hang(
        &db,
        stream(|i| {
            if i == 1000 {
                panic!("input source broke");
            }
            None
        }),
    );
    assert!(
        matches!(
            &r,
            Err(Error::Panicked {
                stage: "ingest input reader",
                ..
            })
        ),
        "{r:?}"
    );
    assert_eq!(acked.len(), 1000);
}

#[test]
fn a_writer_panic_mid_batch_ends_ingest_and_poisons_the_handle() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::create(dir.path().join("db"), &CreateOptions::default()).unwrap();
    // Deep inside a batch: the writer has already changed its state for part of it.
    failpoint::set("writer.decide.panic", 1000);
    let (r, acked) = ingest_or_hang(&db, stream(|_| None));
    failpoint::clear();
    assert!(matches!(&r, Err(Error::Panicked { stage: "writer", .. })), "{r:?}");
    match db.insert("late", "a write after the writer panicked") {
        Err(e @ Error::Poisoned { .. }) => assert!(e.to_string().contains("batch commit"), "{e}"),
        other => panic!("expected a poisoned handle, got {other:?}"),
    }
    let path = db.path().to_path_buf();
    drop(db);
    assert_acked_present(&path, &acked);
}

#[test]
fn an_error_after_the_writer_changed_part_of_a_batch_poisons_the_handle() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let (db, texts) = setup(dir.path(), 64 << 20);
    // The second document of the batch fails after the first one was decided (ids allocated,
    // groups and edges changed in the writer's memory).
    failpoint::set("writer.decide", 2);
    let docs = (10..13)
        .map(|i| {
            db.prepare(
                &mut db.fingerprinter(),
                NewDoc {
                    key: format!("k{i}"),
                    text: texts[i].clone(),
                    meta: None,
                    biblio: Default::default(),
                },
            )
        })
        .collect();
    assert!(matches!(
        db.commit_batch(docs, fpdb::Dedup::Link),
        Err(Error::Injected("writer.decide"))
    ));
    failpoint::clear();
    match db.insert("k20", &texts[20]) {
        Err(e @ Error::Poisoned { .. }) => assert!(e.to_string().contains("writer.decide"), "{e}"),
        other => panic!("expected a poisoned handle, got {other:?}"),
    }
    let path = db.path().to_path_buf();
    drop(db);
    assert_consistent(&path, &texts, &(0..10).collect::<Vec<_>>(), &[10, 11, 12, 20]);
}

#[test]
fn a_panic_inside_the_writer_poisons_the_handle() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let (db, texts) = setup(dir.path(), 64 << 20);
    failpoint::set("writer.decide.panic", 1);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| db.insert("k10", &texts[10])));
    failpoint::clear();
    assert!(r.is_err(), "the injected panic propagates to the caller");
    match db.insert("k11", &texts[11]) {
        Err(e @ Error::Poisoned { .. }) => assert!(e.to_string().contains("panic"), "{e}"),
        other => panic!("expected a poisoned handle, got {other:?}"),
    }
    let path = db.path().to_path_buf();
    drop(db);
    assert_consistent(&path, &texts, &(0..10).collect::<Vec<_>>(), &[10, 11]);
}

#[test]
fn get_never_sees_a_batch_that_is_written_but_not_yet_published() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let (db, texts) = setup(dir.path(), 64 << 20);
    // k10 replaces nothing and joins k3's group: hold the writer between its RocksDB write and
    // its publish to readers.
    let dup = format!("{} extra", texts[3]);
    failpoint::set("batch.publish", 1);
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || db.insert("k10", &dup).map(|o| o.group.map(|g| g.canonical)))
    };
    failpoint::wait_paused();
    let reader = {
        let db = db.clone();
        std::thread::spawn(move || db.get("k10").map(|d| d.map(|d| (d.group.canonical, d.group.size))))
    };
    std::thread::sleep(Duration::from_millis(200));
    failpoint::resume();
    assert_eq!(writer.join().unwrap().unwrap(), Some("k3".to_string()));
    // Whole batches only: k10 is already in RocksDB when the reader starts, so the reader must
    // wait for the publish and then see k10 with its group (not k10 in a group of one).
    assert_eq!(reader.join().unwrap().unwrap(), Some(("k3".to_string(), 2)));
    failpoint::clear();
}

/// `text` under `key`, fingerprinted for a precheck.
fn prepared(db: &Db, key: &str, text: String) -> fpdb::PreparedDoc {
    let doc = fpdb::NewDoc {
        key: key.into(),
        text,
        meta: None,
        biblio: Default::default(),
    };
    db.prepare(&mut db.fingerprinter(), doc).unwrap()
}

/// The keys of each precheck's duplicates.
fn dup_keys(pres: &[fpdb::Result<fpdb::Precheck>]) -> Vec<Vec<String>> {
    pres.iter()
        .map(|p| p.as_ref().unwrap().duplicates().iter().map(|h| h.key.clone()).collect())
        .collect()
}

#[test]
fn a_batched_precheck_searches_without_the_lock_and_drops_a_candidate_deleted_meanwhile() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let (db, texts) = setup(dir.path(), 64 << 20);
    // Reopened, the stored documents are in the mirror's sealed base run: the part of the search
    // that runs with no lock held.
    let path = db.path().to_path_buf();
    drop(db);
    let db = Db::open(&path).unwrap();
    let a = prepared(&db, "a", format!("{} extra", texts[3]));
    let b = prepared(&db, "b", format!("{} more", texts[5]));
    let c = prepared(&db, "c", texts[20].clone());
    // Unpaused: each document's duplicates, the same as one precheck per document.
    let pres = db.precheck_many(&[&a, &b, &c]).unwrap();
    assert_eq!(dup_keys(&pres), vec![vec!["k3".to_string()], vec!["k5".to_string()], vec![]]);
    for (doc, pre) in [&a, &b, &c].into_iter().zip(&pres) {
        let one = db.precheck(doc).unwrap();
        let keys = |p: &fpdb::Precheck| p.duplicates().iter().map(|h| (h.key.clone(), h.id)).collect::<Vec<_>>();
        assert_eq!(keys(&one), keys(pre.as_ref().unwrap()));
    }
    // Paused after the unlocked search: a delete must go through (no lock is held), and the
    // deleted candidate must not be reported.
    failpoint::set("precheck.unlocked", 1);
    let checker = {
        let (db, a, b) = (db.clone(), a.clone(), b.clone());
        std::thread::spawn(move || db.precheck_many(&[&a, &b]).map(|p| dup_keys(&p)))
    };
    failpoint::wait_paused();
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let db = db.clone();
        std::thread::spawn(move || tx.send(db.delete("k3").unwrap()));
    }
    let deleted = rx.recv_timeout(Duration::from_secs(60));
    failpoint::resume();
    assert_eq!(deleted, Ok(true), "the delete waited on the paused precheck: a lock is held");
    assert_eq!(checker.join().unwrap().unwrap(), vec![vec![], vec!["k5".to_string()]]);
    failpoint::clear();
}

/// A batched precheck reads its candidates' shingle sets with no lock held: paused in a segment
/// read, a commit (the writer's publish takes the state's write lock) still goes through. Both
/// candidate sources: the SimHash tables' mirror and another method's bucket mirror.
#[test]
fn a_batched_precheck_reads_segments_without_the_lock() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    for method in ["simhash", "broder"] {
        failpoint::clear();
        let dir = tempfile::tempdir().unwrap();
        let v = vocab();
        let texts: Vec<String> = (0..16).map(|i| text(&passage(&v, 200, i))).collect();
        let method: fpdb::fingerprint::method::Method = method.parse().unwrap();
        let opts = CreateOptions::default()
            .with_spec(fpdb::FingerprintSpec::default().with_method(method.clone()))
            .with_max_distance(method.default_max_distance());
        let db = Db::create(dir.path().join("db"), &opts).unwrap();
        for (i, t) in texts.iter().take(10).enumerate() {
            db.insert(&format!("k{i}"), t).unwrap();
        }
        let a = prepared(&db, "a", format!("{} extra", texts[3]));
        let b = prepared(&db, "b", format!("{} more", texts[5]));
        failpoint::set("segment.read", 1);
        let checker = {
            let (db, a, b) = (db.clone(), a.clone(), b.clone());
            std::thread::spawn(move || db.precheck_many(&[&a, &b]).map(|p| dup_keys(&p)))
        };
        failpoint::wait_paused();
        let (tx, rx) = std::sync::mpsc::channel();
        {
            let (db, t) = (db.clone(), texts[12].clone());
            std::thread::spawn(move || tx.send(db.insert("k12", &t).map(|o| o.id).is_ok()));
        }
        let committed = rx.recv_timeout(Duration::from_secs(30));
        failpoint::resume();
        assert_eq!(
            committed,
            Ok(true),
            "{method}: the commit waited on the paused precheck: a lock is held"
        );
        assert_eq!(
            checker.join().unwrap().unwrap(),
            vec![vec!["k3".to_string()], vec!["k5".to_string()]],
            "{method}"
        );
        failpoint::clear();
    }
}

/// A containment-tail flush that stops before its file is ingested (a stray file) or after it but
/// before the floor moves (entries RocksDB holds twice over with the tail the next open re-derives):
/// the batch is durable, the handle is poisoned, and the reopened database checks clean, answers
/// containment queries, takes deletes of the documents concerned and flushes again.
#[test]
fn a_stopped_containment_tail_flush_leaves_the_database_consistent() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    for point in ["contain.flush.file", "contain.flush.ingested"] {
        failpoint::clear();
        let dir = tempfile::tempdir().unwrap();
        let v = vocab();
        let texts: Vec<String> = (0..12).map(|i| text(&passage(&v, 200, i))).collect();
        // 0: the tail is written after every batch.
        let opts = || Options {
            contain_tail_postings: 0,
            ..Options::default()
        };
        let path = dir.path().join("db");
        let db = Db::create_with(&path, &CreateOptions::default(), opts()).unwrap();
        for (i, t) in texts.iter().take(5).enumerate() {
            db.insert(&format!("k{i}"), t).unwrap();
        }
        failpoint::set(point, 1);
        // k5 is stored and visible before the tail's write stops: its insert is not reported
        // failed; the stop poisons the handle and the next call says why.
        if let Err(e) = db.insert("k5", &texts[5]) {
            panic!("{point}: k5 is stored, its insert must succeed: {e}");
        }
        failpoint::clear();
        match db.insert("k6", &texts[6]) {
            Err(Error::Poisoned { cause }) => assert!(cause.contains(point), "{point}: {cause}"),
            other => panic!("{point}: expected the poison, got {other:?}"),
        }
        drop(db);
        let stray = |p: &std::path::Path| {
            std::fs::read_dir(p.join("rocksdb"))
                .unwrap()
                .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("contain-tail-"))
                .count()
        };
        if point == "contain.flush.file" {
            assert_eq!(stray(&path), 1, "the file written before the stop is still there");
        }
        let db = Db::open_with(&path, opts()).unwrap();
        assert_eq!(stray(&path), 0, "{point}: the open removes a stray tail file");
        let q = QueryOptions::default().with_min_containment(0.9);
        let check = |db: &Db, live: &[usize]| {
            let rep = db.check().unwrap();
            assert!(rep.faults.is_empty(), "{point}: {:?}", rep.faults);
            for &i in live {
                let hits = db.query(&texts[i], &q).unwrap();
                let keys: Vec<&str> = hits.iter().map(|h| h.key.as_str()).collect();
                assert_eq!(keys, vec![format!("k{i}")], "{point}: doc {i}");
            }
        };
        check(&db, &[0, 1, 2, 3, 4, 5]);
        // k5 went into RocksDB by the stopped flush (for the second point) and is in the tail.
        db.delete("k5").unwrap();
        db.insert("k7", &texts[7]).unwrap();
        check(&db, &[0, 1, 2, 3, 4, 7]);
        assert!(db.query(&texts[5], &q).unwrap().is_empty(), "{point}: deleted k5 is gone");
        assert_eq!(db.containment().stats().unwrap().unwrap().sampled_docs, 6, "{point}");
        drop(db);
        let db = Db::open_with(&path, opts()).unwrap();
        check(&db, &[0, 1, 2, 3, 4, 7]);
        assert!(db.query(&texts[5], &q).unwrap().is_empty(), "{point}: deleted k5 is gone");
    }
}

/// A database written before the containment tail existed has no `contain_floor` in `meta` and
/// every posting in RocksDB: a read-only open answers from RocksDB and writes nothing; a writable
/// open records the floor before anything lands in the tail, so the documents inserted after it
/// are found even when the handle then stops without its close (poisoned by a failed commit).
#[test]
fn a_database_without_a_floor_opens_with_every_posting_in_rocksdb() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let v = vocab();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let texts: Vec<String> = (0..9u64).map(|i| text(&passage(&v, 120, 40 + i))).collect();
    {
        let db = Db::create(&path, &CreateOptions::default()).unwrap();
        for (i, t) in texts.iter().take(5).enumerate() {
            db.insert(&format!("k{i}"), t).unwrap();
        }
    }
    // Reads the floor and removes it (as in a database from before the tail).
    let take_floor = || {
        let rp = path.join("rocksdb");
        let names = rocksdb::DB::list_cf(&rocksdb::Options::default(), &rp).unwrap();
        let raw = rocksdb::DB::open_cf(&rocksdb::Options::default(), &rp, &names).unwrap();
        let meta = raw.cf_handle("meta").unwrap();
        let v = raw.get_cf(meta, b"contain_floor").unwrap();
        raw.delete_cf(meta, b"contain_floor").unwrap();
        v.map(|v| u64::from_le_bytes(v.try_into().unwrap()))
    };
    // The clean close wrote the tail: the floor is the next doc id.
    assert_eq!(take_floor(), Some(5));
    let q = QueryOptions::default().with_min_containment(0.9);
    let found = |db: &Db, i: usize| db.query(&texts[i], &q).unwrap().iter().any(|h| h.key == format!("k{i}"));
    let clean = |db: &Db| {
        let rep = db.check().unwrap();
        assert!(rep.faults.is_empty(), "{:?}", rep.faults);
    };
    {
        let ro = Db::open_with(
            &path,
            Options {
                read_only: true,
                ..Options::default()
            },
        )
        .unwrap();
        assert!((0..5).all(|i| found(&ro, i)));
        clean(&ro);
    }
    assert_eq!(take_floor(), None, "a read-only open writes nothing");
    {
        let db = Db::open(&path).unwrap();
        for (i, t) in texts.iter().enumerate().take(8).skip(5) {
            db.insert(&format!("k{i}"), t).unwrap();
        }
        // A failed commit poisons the handle: its close writes nothing, the tail stays in memory.
        failpoint::set("wal.write", 1);
        assert!(matches!(db.insert("k8", &texts[8]), Err(Error::Injected(_))));
        failpoint::clear();
    }
    let db = Db::open(&path).unwrap();
    clean(&db);
    assert!((0..8).all(|i| found(&db, i)), "the documents after the open's floor are re-derived");
    assert!(!found(&db, 8));
}

/// `Db::flush` does the close's work, the containment tail's write included: a stop there is
/// reported, poisons the handle (as a failed commit does), and the reopened database checks clean
/// and answers containment queries for every document.
#[test]
fn a_stopped_tail_write_in_flush_poisons_the_handle_and_loses_nothing() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let v = vocab();
    let texts: Vec<String> = (0..6).map(|i| text(&passage(&v, 200, i + 40))).collect();
    // The tail is written only by a flush or the close.
    let opts = || Options {
        contain_tail_postings: usize::MAX,
        ..Options::default()
    };
    let path = dir.path().join("db");
    let db = Db::create_with(&path, &CreateOptions::default(), opts()).unwrap();
    for (i, t) in texts.iter().take(5).enumerate() {
        db.insert(&format!("k{i}"), t).unwrap();
    }
    failpoint::set("contain.flush.file", 1);
    match db.flush() {
        Err(Error::Injected(p)) => assert_eq!(p, "contain.flush.file"),
        other => panic!("expected the injected error, got {other:?}"),
    }
    failpoint::clear();
    match db.insert("k5", &texts[5]) {
        Err(e @ Error::Poisoned { .. }) => assert!(e.to_string().contains("flush"), "{e}"),
        other => panic!("expected a poisoned handle, got {other:?}"),
    }
    drop(db);
    let db = Db::open_with(&path, opts()).unwrap();
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);
    let q = QueryOptions::default().with_min_containment(0.9);
    for (i, t) in texts.iter().take(5).enumerate() {
        let keys: Vec<String> = db.query(t, &q).unwrap().into_iter().map(|h| h.key).collect();
        assert_eq!(keys, vec![format!("k{i}")], "doc {i}");
    }
    db.flush().unwrap();
}

/// The table tail (`db::background::table_tail`): with the mirror, commits write no table entries; a flush
/// writes them, one file per table, then moves the table floor. A stop at either step (before a
/// file is ingested, or after every file but before the floor moves) is reported and poisons the
/// handle; the database it leaves has its floor below the next doc id. A read-only open without
/// the mirror still finds every document (it builds the mirror), and a writable open writes the
/// tail again: `check` is clean and an open without the mirror answers from RocksDB's tables.
#[test]
fn a_stopped_table_tail_write_is_rewritten_by_the_next_writable_open() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let v = vocab();
    let texts: Vec<String> = (0..8).map(|i| text(&passage(&v, 200, i + 60))).collect();
    let found = |db: &Db, what: &str| {
        for (i, t) in texts.iter().enumerate().skip(1) {
            let keys: Vec<String> = db.query(t, &QueryOptions::default()).unwrap().into_iter().map(|h| h.key).collect();
            assert_eq!(keys, vec![format!("k{i}")], "{what}: doc {i}");
        }
    };
    let no_mirror = |read_only: bool| Options {
        mirror: false,
        read_only,
        ..Options::default()
    };
    for point in ["table.tail.file", "table.tail.ingested"] {
        failpoint::clear();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let db = Db::create(&path, &CreateOptions::default()).unwrap();
        for (i, t) in texts.iter().enumerate() {
            db.insert(&format!("k{i}"), t).unwrap();
        }
        db.delete("k0").unwrap();
        failpoint::set(point, 1);
        match db.flush() {
            Err(Error::Injected(p)) => assert_eq!(p, point),
            other => panic!("{point}: expected the injected error, got {other:?}"),
        }
        failpoint::clear();
        assert!(matches!(db.insert("k9", &texts[0]), Err(Error::Poisoned { .. })), "{point}");
        drop(db);
        let ro = Db::open_with(&path, no_mirror(true)).unwrap();
        found(&ro, &format!("{point}, read-only without the mirror"));
        assert!(ro.check().unwrap().faults.is_empty(), "{point}: the floor excuses the tail");
        drop(ro);
        let db = Db::open(&path).unwrap();
        let rep = db.check().unwrap();
        assert!(rep.faults.is_empty(), "{point}: {:?}", rep.faults);
        assert_eq!(
            rep.table_entries,
            7 * u64::from(db.layout().tables()),
            "{point}: the live documents' entries, once each"
        );
        drop(db);
        let db = Db::open_with(&path, no_mirror(false)).unwrap();
        found(&db, &format!("{point}, from RocksDB's tables"));
        assert!(db.get("k0").unwrap().is_none());
    }
}

/// The table tail's periodic write runs in the background while the writer goes on. A document of
/// the frozen part deleted meanwhile must not reach RocksDB's tables (its tombstones were written
/// before the ingest, which would bring its entries back): the files are written again without it.
/// A failed background write surfaces at a later commit or `flush`, and poisons the handle.
#[test]
fn the_table_tail_written_in_the_background_leaves_out_documents_deleted_meanwhile() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let v = vocab();
    let texts: Vec<String> = (0..8).map(|i| text(&passage(&v, 200, i + 80))).collect();
    let opts = |mirror: bool, read_only: bool| Options {
        mirror,
        read_only,
        table_tail_docs: 4,
        ..Options::default()
    };
    let found = |db: &Db, i: usize| -> bool {
        let hits = db.query(&texts[i], &QueryOptions::default()).unwrap();
        hits.iter().any(|h| h.key == format!("k{i}"))
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = Db::create_with(&path, &CreateOptions::default(), opts(true, false)).unwrap();
        failpoint::set("table.tail.written", 1);
        for (i, t) in texts.iter().enumerate().take(4) {
            db.insert(&format!("k{i}"), t).unwrap();
        }
        // The fourth commit froze k0..k3 and started their files; the write waits, written.
        failpoint::wait_paused();
        assert!(db.delete("k1").unwrap(), "the writer is not held by the background write");
        db.insert("k4", &texts[4]).unwrap();
        failpoint::resume();
        db.flush().unwrap();
        let rep = db.check().unwrap();
        assert!(rep.faults.is_empty(), "{:?}", rep.faults);
        assert_eq!(rep.table_entries, 4 * u64::from(db.layout().tables()), "k0, k2, k3, k4 once each");
    }
    {
        let db = Db::open_with(&path, opts(false, true)).unwrap();
        assert!(!found(&db, 1), "k1 came back through the tail's files");
        for i in [0, 2, 3, 4] {
            assert!(found(&db, i), "k{i}, from RocksDB's tables");
        }
    }
    // A background write that fails: the error comes at a later commit or the flush, the handle is
    // poisoned, and the next writable open writes the entries.
    {
        let db = Db::open_with(&path, opts(true, false)).unwrap();
        failpoint::set("table.tail.write", 1);
        for (i, t) in texts.iter().enumerate().skip(5) {
            db.insert(&format!("k{i}"), t).unwrap();
        }
        // k5..k7 and k2's replacement make four: the write starts in the background and fails.
        let r = db.insert("k2", &format!("{} again", texts[2])).and_then(|_| db.flush());
        assert!(matches!(r, Err(Error::Injected("table.tail.write"))), "{r:?}");
        failpoint::clear();
        assert!(matches!(db.insert("k9", &texts[0]), Err(Error::Poisoned { .. })));
    }
    let db = Db::open(&path).unwrap();
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);
    assert_eq!(rep.table_entries, 7 * u64::from(db.layout().tables()), "k0 and k2..k7 once each");
    drop(db);
    let db = Db::open_with(&path, opts(false, true)).unwrap();
    for i in [0, 3, 4, 5, 6, 7] {
        assert!(found(&db, i), "k{i} after the failed write, from RocksDB's tables");
    }
}

/// A query paused in the middle of its exact-Jaccard verification holds no lock,
/// so a writer's commit (its publish included) and later readers go through meanwhile.
#[test]
fn a_query_mid_verification_holds_up_neither_a_commit_nor_later_readers() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let (db, texts) = setup(dir.path(), 64 << 20);
    failpoint::set("query.verify", 1);
    let reader = {
        let (db, q) = (db.clone(), format!("{} extra", texts[3]));
        std::thread::spawn(move || {
            db.query(&q, &QueryOptions::default())
                .map(|h| h.into_iter().map(|h| h.key).collect::<Vec<_>>())
        })
    };
    failpoint::wait_paused();
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let (db, t) = (db.clone(), texts[12].clone());
        std::thread::spawn(move || {
            let committed = db.insert("k12", &t).map(|o| o.id);
            // A reader that comes after the writer's publish is not queued behind the paused one.
            let later = db
                .query(&t, &QueryOptions::default())
                .map(|h| h.into_iter().map(|h| h.key).collect::<Vec<_>>());
            let _ = tx.send((committed.is_ok(), later.ok()));
        });
    }
    let done = rx.recv_timeout(Duration::from_secs(30));
    failpoint::resume();
    assert_eq!(
        done,
        Ok((true, Some(vec!["k12".to_string()]))),
        "the commit or the later query waited on the paused query: a lock is held"
    );
    assert_eq!(reader.join().unwrap().unwrap(), vec!["k3".to_string()]);
    failpoint::clear();
}

/// With sync off, a compaction's commit may still be lost to a power cut after
/// `compact` wrote it; the old segment files must outlive that moment. The power cut is injected at
/// the last instant the commit may still be lost (`compact.durable`, just before the compaction
/// makes its commit durable), then simulated: RocksDB as it was before the compaction, the
/// segment files as they are. Every document must be readable and `check` clean.
#[test]
fn a_power_cut_before_a_compaction_is_durable_loses_nothing_with_sync_off() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let (db, texts) = setup(dir.path(), 64 << 20);
    let path = db.path().to_path_buf();
    for i in [0, 2, 4, 6] {
        assert!(db.delete(&format!("k{i}")).unwrap());
    }
    drop(db);
    // RocksDB's durable state before the compaction.
    let rocks = path.join("rocksdb");
    let saved = dir.path().join("rocksdb.before");
    copy_dir(&rocks, &saved);
    let db = Db::open_with(
        &path,
        Options {
            sync: false,
            ..Options::default()
        },
    )
    .unwrap();
    failpoint::set("compact.durable", 1);
    let r = db.compact(0.0);
    failpoint::clear();
    drop(db);
    // The power cut: the compaction's commit (unsynced) is lost, the files stay as they are.
    std::fs::remove_dir_all(&rocks).unwrap();
    copy_dir(&saved, &rocks);
    let db = Db::open(&path).unwrap_or_else(|e| panic!("reopen after the power cut (compact gave {r:?}): {e}"));
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);
    drop(db);
    assert_consistent(&path, &texts, &[1, 3, 5, 7, 8, 9], &[0, 2, 4, 6]);
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// An earlier background job's failure found after a batch became durable and
/// visible does not report that batch as failed: the commit returns its outcome, the handle is
/// poisoned, and the next call says so (with the cause).
#[test]
fn a_background_failure_after_a_durable_batch_reports_the_batch_stored_and_poisons() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let v = vocab();
    let texts: Vec<String> = (0..4).map(|i| text(&passage(&v, 200, i + 80))).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    // Every batch's table entries are written (here, at once) after its commit.
    let opts = Options {
        table_tail_docs: 0,
        ..Options::default()
    };
    let db = Db::create_with(&path, &CreateOptions::default(), opts).unwrap();
    db.insert("k0", &texts[0]).unwrap();
    failpoint::set("table.tail.write", 1);
    let r = db.insert("k1", &texts[1]);
    failpoint::clear();
    assert!(r.is_ok(), "k1 is stored and visible; its insert must not be reported failed: {r:?}");
    assert!(db.get("k1").unwrap().is_some());
    match db.insert("k2", &texts[2]) {
        Err(Error::Poisoned { cause }) => assert!(cause.contains("table.tail.write"), "{cause}"),
        other => panic!("the next write must see the poison: {other:?}"),
    }
    drop(db);
    let db = Db::open(&path).unwrap();
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);
    for (i, t) in texts.iter().enumerate().take(2) {
        let hits = db.query(t, &QueryOptions::default()).unwrap();
        assert_eq!(hits.first().map(|h| h.key.clone()), Some(format!("k{i}")));
    }
    assert!(db.get("k2").unwrap().is_none());
}

/// A panic in the middle of a publish (the replaced document already gone from the state, its
/// replacement not yet in it) leaves readers no half-published state: the reads that can fail say
/// the handle is poisoned. The batch was durable before its publish: reopened, it is whole.
#[test]
fn a_panic_mid_publish_leaves_readers_no_half_published_state() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let (db, texts) = setup(dir.path(), 64 << 20);
    failpoint::set("batch.publish.mid", 1);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| db.insert("k3", &texts[12])));
    failpoint::clear();
    assert!(r.is_err(), "the injected panic propagates to the caller");
    match db.query(&texts[3], &QueryOptions::default()) {
        Err(Error::Poisoned { .. }) => {}
        other => panic!("a query read the half-published state: {other:?}"),
    }
    match db.get("k3") {
        Err(Error::Poisoned { .. }) => {}
        other => panic!("get read the half-published state: {other:?}"),
    }
    let path = db.path().to_path_buf();
    drop(db);
    let db = Db::open(&path).unwrap();
    let hits = db.query(&texts[12], &QueryOptions::default()).unwrap();
    assert_eq!(hits.first().map(|h| h.key.as_str()), Some("k3"), "the replacement is durable");
    assert!(db.query(&texts[3], &QueryOptions::default()).unwrap().is_empty());
    assert!(db.check().unwrap().faults.is_empty());
}

/// A database with the semantic channel on the tiny test model (`tweak` sets the channel's
/// config, 32 tokens by default), and the handle options of an indexer embedding `batch` at a time.
#[cfg(feature = "semantic")]
fn semantic_db(
    dir: &std::path::Path,
    batch: usize,
    tweak: impl FnOnce(&mut fpdb::semantic::SemanticConfig),
) -> (std::path::PathBuf, Options) {
    use fpdb::semantic::testkit::write_tiny_model;
    use fpdb::semantic::{SemanticConfig, SemanticOptions};
    let model = write_tiny_model(&dir.join("tiny"), 1).unwrap();
    let mut cfg = SemanticConfig::new(&model);
    cfg.max_tokens = 32;
    tweak(&mut cfg);
    let path = dir.join("db");
    Db::create(&path, &CreateOptions::default().with_semantic(Some(cfg))).unwrap();
    let opts = Options {
        semantic: SemanticOptions {
            batch,
            ..SemanticOptions::default()
        },
        ..Options::default()
    };
    (path, opts)
}

/// The semantic indexer's commit moves the published sequence number with its vectors: a read of
/// RocksDB after it (`Db::get`) does not fall back to the writer lock, so it is answered while a
/// compaction holds that lock (paused in its copy).
#[cfg(feature = "semantic")]
#[test]
fn reads_after_an_indexer_commit_do_not_wait_for_the_writer() {
    use std::time::Duration;
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let (path, opts) = semantic_db(dir.path(), 2, |_| {});
    let db = std::sync::Arc::new(Db::open_with(&path, opts).unwrap());
    let v = vocab();
    for i in 0..6 {
        db.insert(&format!("k{i}"), &text(&passage(&v, 200, i))).unwrap();
    }
    assert!(db.delete("k0").unwrap()); // a dead record: compaction has a segment to rewrite
    db.insert("k6", &text(&passage(&v, 200, 6))).unwrap();
    // the last write to RocksDB is the indexer's (it embeds k6 after k6's commit)
    db.semantic().wait(Duration::from_secs(60)).unwrap();
    assert_eq!(db.stats().semantic_vectors, 6);
    failpoint::set("compact.copy", 1);
    let compacting = {
        let db = db.clone();
        std::thread::spawn(move || db.compact(0.0).map(|_| ()))
    };
    failpoint::wait_paused();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = {
        let db = db.clone();
        std::thread::spawn(move || {
            let _ = tx.send(db.get("k3").map(|d| d.map(|d| d.id)));
        })
    };
    let got = rx.recv_timeout(Duration::from_secs(20));
    failpoint::resume();
    failpoint::clear();
    reader.join().unwrap();
    compacting.join().unwrap().unwrap();
    match got {
        Ok(r) => assert_eq!(r.unwrap(), Some(3)),
        Err(_) => panic!("Db::get waited for the writer lock held by the compaction"),
    }
}

/// The database's own indexer (not the test double): a commit that fails (an injected error before
/// anything is written) is retried after the backoff; every document ends embedded, exactly once,
/// the retry counted and the state back to `running`; `check` is clean.
#[cfg(feature = "semantic")]
#[test]
fn the_db_indexer_retries_a_failed_commit() {
    use std::time::Duration;
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let (path, opts) = semantic_db(dir.path(), 3, |_| {});
    failpoint::set("semantic.commit", 2);
    let db = Db::open_with(&path, opts).unwrap();
    let v = vocab();
    for i in 0..9 {
        db.insert(&format!("k{i}"), &text(&passage(&v, 200, i))).unwrap();
    }
    db.semantic().wait(Duration::from_secs(60)).unwrap();
    failpoint::clear();
    let s = db.semantic().status().unwrap();
    assert_eq!((s.state, s.retries, s.set_aside, s.embedded), ("running", 1, 0, 9));
    assert_eq!(db.stats().semantic_vectors, 9);
    assert!(db.check().unwrap().faults.is_empty());
}

/// In a `--groups union` database the indexer's link scans (an exact scan over every vector per
/// new vector) run before it takes the writer lock: while they run (paused here), an insert is
/// committed.
#[cfg(feature = "semantic")]
#[test]
fn the_indexer_links_before_taking_the_writer_lock() {
    use fpdb::semantic::Groups;
    use std::time::Duration;
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    failpoint::clear();
    let dir = tempfile::tempdir().unwrap();
    let (path, opts) = semantic_db(dir.path(), 2, |cfg| (cfg.min_cosine, cfg.groups) = (Some(-1.0), Groups::Union));
    let db = std::sync::Arc::new(Db::open_with(&path, opts).unwrap());
    let v = vocab();
    failpoint::set("semantic.links", 1);
    for i in 0..2 {
        db.insert(&format!("k{i}"), &text(&passage(&v, 200, i))).unwrap();
    }
    failpoint::wait_paused();
    let (tx, rx) = std::sync::mpsc::channel();
    let writer = {
        let db = db.clone();
        let t = text(&passage(&v, 200, 9));
        std::thread::spawn(move || {
            let _ = tx.send(db.insert("k9", &t).map(|o| o.id));
        })
    };
    let got = rx.recv_timeout(Duration::from_secs(20));
    failpoint::resume();
    failpoint::clear();
    writer.join().unwrap();
    assert!(got.is_ok(), "the insert waited for the indexer's link scans");
    db.semantic().wait(Duration::from_secs(60)).unwrap();
    assert_eq!(db.stats().grouped_docs, 3, "all linked at β = -1");
    assert!(db.check().unwrap().faults.is_empty());
}
