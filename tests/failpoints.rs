//! Fault injection at every I/O step of a commit (needs `--features failpoints`): the caller gets
//! the error, the handle refuses further writes (poisoned), and after reopening the database is
//! consistent with every acknowledged document present.
#![cfg(feature = "failpoints")]

mod common;

use std::sync::Mutex;

use common::{passage, text, vocab};
use fpdb::{failpoint, CreateOptions, Db, Error, Options, QueryOptions};

/// Failpoints are process-wide: run these tests one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

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
