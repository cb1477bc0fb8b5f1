//! Regressions found by the cargo-fuzz targets in `fuzz/` (see fuzz/README.md). Each test replays a
//! minimized fuzz input through the public API; the raw input is kept inline so that it can be fed
//! back to its target (`cargo fuzz run -O <target> <file>`).

use fpdb::{CreateOptions, Db, Options, QueryOptions};

fn small_segments() -> Options {
    Options {
        segment_size: 4096,
        ..Options::default()
    }
}

/// `model` target, minimized (25 bytes). Decoded: `Insert { key: 77 (k13), text: 5 (pool text 5,
/// 95 words), extra: [] }`, `Delete { key: 45 (k13) }`, `Compact { min_dead: 255 (1.0) }`,
/// `Compact { min_dead: 0 (0.0) }`.
///
/// The first compaction's only victim segment held no live record: nothing moved, the commit was
/// skipped as empty, yet the file was unlinked, so its committed length stayed in `meta`. The second
/// compaction picked the same segment and failed with ENOENT ("remove compacted segment"); a reopen
/// refused the database ("segment 0 is committed but its file is missing"). Fixed in e2948b1.
const COMPACT_ALL_DEAD_SEGMENT: &[u8] = &[
    0x9d, 0x22, 0xb0, 0xd7, 0x16, 0x4d, 0x05, 0xa6, 0x35, 0x6d, 0x65, 0x74, 0x61, 0x2d, 0x85, 0x92, 0xef, 0xee, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xe9,
];

#[test]
fn compacting_a_segment_without_live_records_commits_its_removal() {
    assert_eq!(COMPACT_ALL_DEAD_SEGMENT.len(), 25);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::create_with(&path, &CreateOptions::default(), small_segments()).unwrap();
    let text = (0..95).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    db.insert("k13", &text).unwrap();
    assert!(db.delete("k13").unwrap());
    db.compact(1.0).expect("first compaction");
    db.compact(0.0).expect("second compaction must not find the dropped segment again");
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);
    assert_eq!(db.stats().segments, 0, "the dropped segment is gone from the books");
    drop(db);

    let db = Db::open_with(&path, small_segments()).expect("reopen after compacting a fully dead segment");
    assert!(db.recovery().orphans_removed.is_empty());
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);
    // The database keeps working: a new insert gets a new segment and is found.
    db.insert("k1", &text).unwrap();
    let hits = db.query(&text, &QueryOptions::default()).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].key, "k1");
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);
}
