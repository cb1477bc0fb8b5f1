//! Re-layout (`Db::reindex`): after it, and after a re-layout that stopped at any step, queries are
//! still exactly the brute-force set for every k, through the mirror and through RocksDB; the other
//! indexes and the documents are untouched; readers opened before it keep answering.

use crate::common;

use common::{assert_simhash_queries_exact, commit_all, edit, fingerprint_set, fp_doc, passage, text, vocab};
use fpdb::{CreateOptions, Db, Error, Options, QueryOptions, Tables};

// Failpoints are process-wide: the tests of this file (and of the whole `failpoints` suite) run one
// at a time under the suite's one lock, so that one armed by a failure test never fires in another.
use crate::SERIAL;

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn open(path: &std::path::Path, mirror: bool, read_only: bool) -> Db {
    Db::open_with(
        path,
        Options {
            mirror,
            read_only,
            ..Options::default()
        },
    )
    .unwrap()
}

/// The table search against brute force at every k in 0..=16 (`common`).
fn assert_exact(db: &Db, fps: &[u64], queries: &[u64], what: &str) {
    let what = format!("{what}: tables = {}", db.config().tables);
    assert_simhash_queries_exact(db, fps, queries, 16, &what);
}

fn filled(path: &std::path::Path, tables: u32, fps: &[u64]) {
    let db = Db::create(path, &CreateOptions::default().with_tables(Tables::Blocks(tables))).unwrap();
    commit_all(&db, fps.iter().enumerate().map(|(i, &f)| fp_doc(format!("d{i}"), f)).collect());
}

#[test]
fn every_layout_after_a_reindex_is_exact_for_every_k_in_the_mirror_and_in_rocksdb() {
    let _serial = serial();
    let fps = fingerprint_set(41, 120);
    let queries: Vec<u64> = fps.iter().step_by(9).copied().chain(fingerprint_set(42, 6)).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    filled(&path, 5, &fps);
    // A chain of re-layouts through narrow, wide, classic and back: each one starts from the last.
    for (step, tables) in [
        Tables::Blocks(2),
        Tables::Blocks(9),
        Tables::KPlusOne,
        Tables::Blocks(1),
        Tables::Auto,
        Tables::Blocks(16),
    ]
    .into_iter()
    .enumerate()
    {
        let r = Db::reindex(&path, tables, |_, _| {}).unwrap();
        assert_eq!(r.docs, fps.len() as u64);
        for mirror in [true, false] {
            let db = open(&path, mirror, false);
            assert_eq!(db.config().tables, r.tables_after, "step {step}");
            assert_eq!(db.layout().tables(), r.tables_after);
            assert_exact(&db, &fps, &queries, &format!("step {step}, mirror = {mirror}"));
            let c = db.check().unwrap();
            assert!(c.faults.is_empty(), "step {step}: {:?}", c.faults);
            assert_eq!(c.table_entries, fps.len() as u64 * u64::from(r.tables_after));
        }
    }
}

#[test]
fn auto_follows_the_size_and_an_unchanged_layout_is_left_alone() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    filled(&path, 5, &fingerprint_set(7, 50));
    let want = fpdb::internals::layout::best_tables(12, 100);
    let r = Db::reindex(&path, Tables::Auto, |_, _| {}).unwrap();
    assert_eq!((r.tables_before, r.tables_after, r.changed), (5, want, want != 5));
    assert!(r.model_us_after <= r.model_us_before, "{r:?}");
    let again = Db::reindex(&path, Tables::Auto, |_, _| {}).unwrap();
    assert!(!again.changed);
    assert_eq!(again.generation, r.generation);
    // The model itself: more documents never favour more tables at k = 12.
    let sizes = [1_000u64, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000];
    let ms: Vec<u32> = sizes.iter().map(|&n| fpdb::internals::layout::best_tables(12, n)).collect();
    assert!(ms.windows(2).all(|w| w[1] <= w[0]), "{ms:?}");
    assert!(ms[0] > ms[5], "{ms:?}");
}

#[test]
fn texts_groups_and_containment_answer_the_same_after_a_reindex() {
    let _serial = serial();
    let v = vocab();
    let texts: Vec<String> = (0..30)
        .map(|i| text(&edit(&v, &passage(&v, 200, i / 3), (i % 3) as usize * 2, i)))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let answers = |db: &Db| {
        let q = QueryOptions::default();
        let c = QueryOptions::default().with_min_containment(0.5);
        texts
            .iter()
            .map(|t| (db.query(t, &q).unwrap(), db.query(t, &c).unwrap()))
            .collect::<Vec<_>>()
    };
    let before = {
        let db = Db::create(&path, &CreateOptions::default()).unwrap();
        for (i, t) in texts.iter().enumerate() {
            db.insert(&format!("k{i}"), t).unwrap();
        }
        (answers(&db), db.stats().groups)
    };
    assert!(before.1 > 0, "the corpus has near-duplicate groups");
    Db::reindex(&path, Tables::Blocks(3), |_, _| {}).unwrap();
    let db = open(&path, true, false);
    assert_eq!((answers(&db), db.stats().groups), before);
    // Writes after a reindex go to the new tables.
    db.insert("late", &texts[0]).unwrap();
    assert!(db
        .query(&texts[0], &QueryOptions::default())
        .unwrap()
        .iter()
        .any(|h| h.key == "late"));
    assert!(db.check().unwrap().faults.is_empty());
}

#[test]
fn a_reader_opened_before_keeps_answering_and_a_writer_blocks_the_reindex() {
    let _serial = serial();
    let fps = fingerprint_set(9, 80);
    let queries: Vec<u64> = fps.iter().step_by(5).copied().collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    filled(&path, 5, &fps);
    {
        let writer = open(&path, true, false);
        assert!(matches!(
            Db::reindex(&path, Tables::Blocks(3), |_, _| {}),
            Err(Error::Locked { .. })
        ));
        drop(writer);
    }
    let reader = open(&path, false, true);
    Db::reindex(&path, Tables::Blocks(3), |_, _| {}).unwrap();
    assert_exact(&reader, &fps, &queries, "read-only handle opened before the reindex");
    assert_exact(&open(&path, false, true), &fps, &queries, "read-only handle opened after");
}

#[test]
fn multi_lexicon_is_refused_with_what_to_do() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let method: fpdb::fingerprint::method::Method = "multi-lexicon".parse().unwrap();
    let spec = fpdb::FingerprintSpec {
        method,
        ..fpdb::FingerprintSpec::default()
    };
    drop(Db::create(&path, &CreateOptions::default().with_spec(spec)).unwrap());
    match Db::reindex(&path, Tables::Blocks(3), |_, _| {}) {
        Err(Error::InvalidOption { name: "tables", message }) => assert!(message.contains("ingest"), "{message}"),
        other => panic!("{other:?}"),
    }
}

/// A re-layout that stops before its switch leaves the old tables in force; one that stops after
/// it leaves the new ones; the next writable open drops the other generation; queries stay exact.
#[cfg(feature = "failpoints")]
#[test]
fn a_reindex_stopped_at_any_step_leaves_one_complete_generation() {
    let _serial = serial();
    let fps = fingerprint_set(11, 100);
    let queries: Vec<u64> = fps.iter().step_by(6).copied().collect();
    for (point, nth, in_force) in [("reindex.table", 1, 5), ("reindex.table", 3, 5), ("reindex.switched", 1, 4)] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        filled(&path, 5, &fps);
        fpdb::failpoint::set(point, nth);
        let err = Db::reindex(&path, Tables::Blocks(4), |_, _| {}).unwrap_err();
        fpdb::failpoint::clear();
        assert!(matches!(err, Error::Injected(_)), "{err:?}");
        // A read-only open ignores the other generation; a writable one drops it.
        assert_eq!(open(&path, false, true).config().tables, in_force, "{point} #{nth}");
        for mirror in [true, false] {
            let db = open(&path, mirror, false);
            assert_eq!(db.config().tables, in_force, "{point} #{nth}");
            assert_exact(&db, &fps, &queries, &format!("{point} #{nth}, mirror = {mirror}"));
            let c = db.check().unwrap();
            assert!(c.faults.is_empty(), "{point}: {:?}", c.faults);
            assert_eq!(c.table_entries, fps.len() as u64 * u64::from(in_force));
        }
        let names = rocksdb::DB::list_cf(&rocksdb::Options::default(), path.join("rocksdb")).unwrap();
        let tables: Vec<&String> = names
            .iter()
            .filter(|n| fpdb::internals::keys::parse_table_cf(n).is_some())
            .collect();
        assert_eq!(tables.len(), in_force as usize, "{point}: stale tables left: {tables:?}");
        // And a second attempt completes.
        assert_eq!(Db::reindex(&path, Tables::Blocks(6), |_, _| {}).unwrap().tables_after, 6);
        assert_exact(&open(&path, true, false), &fps, &queries, "after a completed second attempt");
    }
}

#[test]
fn a_table_file_left_by_a_stopped_reindex_is_removed_by_the_next() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let fps = fingerprint_set(13, 40);
    filled(&path, 5, &fps);
    let stale = path.join("rocksdb").join("reindex-1-0.sst");
    std::fs::write(&stale, b"half a table file").unwrap();
    // RocksDB ignores the file; the next reindex removes it and completes.
    drop(open(&path, true, false));
    Db::reindex(&path, Tables::Blocks(3), |_, _| {}).unwrap();
    assert!(!stale.exists());
    assert_exact(&open(&path, true, false), &fps, &fps[..10], "after the cleanup");
}
