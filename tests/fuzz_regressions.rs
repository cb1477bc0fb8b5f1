//! Regressions found by the cargo-fuzz targets in `fuzz/` (see fuzz/README.md). Each test decodes
//! the raw minimized crash input exactly as its target does (`arbitrary`, the version of
//! fuzz/Cargo.lock, with the target's input types copied below), checks that the bytes still
//! decode to the case documented beside them, and runs that decoded case through the public API;
//! the raw input can also be fed back to its target (`cargo fuzz run -O <target> <file>`).

use arbitrary::{Arbitrary, Unstructured};
use fpdb::{CreateOptions, Db, Options, QueryOptions};

/// The input of fuzz/fuzz_targets/model.rs (same variants, fields and order: `arbitrary` decodes
/// by position).
#[derive(Arbitrary, Debug, Clone, PartialEq)]
enum Extra {
    Vocab(u8),
    Raw(String),
}

#[derive(Arbitrary, Debug, Clone, PartialEq)]
enum Op {
    Insert { key: u8, text: u8, extra: Vec<Extra> },
    Delete { key: u8 },
    Query { text: u8, extra: Vec<Extra> },
    Reopen,
    Compact { min_dead: u8 },
}

/// The input of fuzz/fuzz_targets/segment_file.rs.
#[derive(Arbitrary, Debug, Clone, PartialEq)]
enum LocEdit {
    Count(u32),
    Offset(u64),
    OffsetDelta(i16),
    Segment(u32),
}

#[derive(Arbitrary, Debug, Clone, PartialEq)]
struct SegmentInput {
    sealed: Vec<Vec<u16>>,
    active: Vec<Vec<u16>>,
    bytes: Vec<(bool, u16, u8)>,
    locs: Vec<(u8, LocEdit)>,
    tail: Option<(bool, Vec<u8>)>,
    committed: Option<(bool, u64)>,
}

/// Decodes a raw fuzz input the way `libfuzzer_sys::fuzz_target!` does.
fn decode<T: for<'a> Arbitrary<'a>>(raw: &[u8]) -> T {
    T::arbitrary_take_rest(Unstructured::new(raw)).expect("the raw input decodes")
}

/// The model target's pseudo-words (fuzz/fuzz_targets/model.rs `words`): its pool text 5 is the
/// first 95 of `words(1, 100)`.
fn words(seed: u64, n: usize) -> Vec<String> {
    const SYLL: [&str; 16] = ["ka", "lo", "mi", "ne", "ru", "ta", "so", "vi", "de", "pa", "xe", "zu", "ba", "ho", "gi", "fe"];
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    (0..n)
        .map(|_| {
            let r = next();
            (0..1 + r % 3).map(|j| SYLL[((r >> (8 + 4 * j)) & 15) as usize]).collect()
        })
        .collect()
}

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
    let ops: Vec<Op> = decode(COMPACT_ALL_DEAD_SEGMENT);
    assert_eq!(
        ops,
        [
            Op::Insert {
                key: 77,
                text: 5,
                extra: vec![]
            },
            Op::Delete { key: 45 },
            Op::Compact { min_dead: 255 },
            Op::Compact { min_dead: 0 },
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::create_with(&path, &CreateOptions::default(), small_segments()).unwrap();
    let pool5 = words(1, 100)[..95].join(" ");
    // The target's semantics: key `k{key % 16}`, pool text, min_dead from [0, 0.25, 0.5, 1].
    for op in &ops {
        match op {
            Op::Insert { key, text, extra } => {
                assert_eq!((*text, extra.len()), (5, 0));
                db.insert(&format!("k{}", key % 16), &pool5).unwrap();
            }
            Op::Delete { key } => assert!(db.delete(&format!("k{}", key % 16)).unwrap()),
            Op::Compact { min_dead } => {
                let min_dead = [0.0, 0.25, 0.5, 1.0][*min_dead as usize % 4];
                db.compact(min_dead)
                    .unwrap_or_else(|e| panic!("compact({min_dead}) must not find the dropped segment again: {e}"));
            }
            other => unreachable!("{other:?}"),
        }
    }
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);
    assert_eq!(db.stats().segments, 0, "the dropped segment is gone from the books");
    drop(db);

    let db = Db::open_with(&path, small_segments()).expect("reopen after compacting a fully dead segment");
    assert!(db.recovery().orphans_removed.is_empty());
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);
    // The database keeps working: a new insert gets a new segment and is found.
    db.insert("k1", &pool5).unwrap();
    let hits = db.query(&pool5, &QueryOptions::default()).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].key, "k1");
    let rep = db.check().unwrap();
    assert!(rep.faults.is_empty(), "{:?}", rep.faults);
}

#[test]
fn the_segment_crash_inputs_decode_as_the_target_reads_them() {
    for raw in [COMMITTED_LENGTH_SHORTER_THAN_HEADER, COUNT_LARGER_THAN_THE_FILE] {
        let input: SegmentInput = decode(raw);
        eprintln!("{input:?}");
    }
}

/// Writes one record (doc 1, shingles `set`) into a fresh segment directory with the real writer and
/// returns the directory, the record's location and the committed lengths.
fn one_segment(
    set: &[u32],
) -> (
    tempfile::TempDir,
    fpdb::internals::segment::ShingleLoc,
    std::collections::HashMap<u32, u64>,
) {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut w, _) = fpdb::internals::segment::recover(dir.path(), &Default::default(), false, 1 << 20, false).unwrap();
    let out = w.append(&[(1, set)]).unwrap();
    (dir, out.locs[0], out.lengths.into_iter().collect())
}

/// `segment_file` target, on the segment code before issue 9 (11 bytes, the raw input below): a
/// committed length of 10, shorter than the 16-byte file header, was accepted by `recover`, which
/// truncated the file to it and destroyed the header. Now `recover` refuses it as corruption and
/// leaves the file alone.
const COMMITTED_LENGTH_SHORTER_THAN_HEADER: &[u8] = &[0xa5, 0x08, 0x00, 0x61, 0x28, 0x28, 0x28, 0x28, 0x28, 0x2d, 0x23];

#[test]
fn a_committed_length_shorter_than_the_header_is_refused_not_truncated_to() {
    assert_eq!(COMMITTED_LENGTH_SHORTER_THAN_HEADER.len(), 11);
    let (dir, loc, committed) = one_segment(&[]);
    let len = std::fs::metadata(dir.path().join(fpdb::internals::segment::file_name(0)))
        .unwrap()
        .len();
    let short = committed.keys().map(|&id| (id, 10)).collect();
    let err = fpdb::internals::segment::recover(dir.path(), &short, false, 1 << 20, false).unwrap_err();
    assert!(
        err.is_corruption() && err.to_string().contains("shorter than the 16-byte file header"),
        "{err}"
    );
    assert_eq!(
        std::fs::metadata(dir.path().join(fpdb::internals::segment::file_name(0)))
            .unwrap()
            .len(),
        len
    );
    let (set, _, _) = fpdb::internals::segment::recover(dir.path(), &committed, false, 1 << 20, true).unwrap();
    assert!(set.read(loc, 1).unwrap().is_empty());
}

/// `segment_file` target, on the segment code before issue 9 with the header check above (16 bytes):
/// a location claiming 7,995,392 shingles in a 40-byte segment read with positioned reads allocated
/// 31,981,592 bytes before finding the file too short (up to 16 GiB for a count of 2^32 - 1). Now the
/// count is bounded by the file first.
const COUNT_LARGER_THAN_THE_FILE: &[u8] = &[
    0xa5, 0x0a, 0x7a, 0xd1, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7a,
];

#[test]
fn a_count_larger_than_the_file_is_corruption_before_any_allocation() {
    assert_eq!(COUNT_LARGER_THAN_THE_FILE.len(), 16);
    let (dir, loc, committed) = one_segment(&[]);
    let (set, _, _) = fpdb::internals::segment::recover(dir.path(), &committed, false, 1 << 20, true).unwrap();
    for count in [7_995_392, u32::MAX] {
        let bad = fpdb::internals::segment::ShingleLoc { count, ..loc };
        match set.read(bad, 1) {
            Err(fpdb::Error::Corruption { doc: Some(1), what, .. }) => {
                assert!(what.contains("does not fit in the file (40 bytes)"), "{what}")
            }
            other => panic!("count {count}: {other:?}"),
        }
    }
    // A small damaged count is read without the size check first (the buffer is bounded by
    // `payload_end` ≤ 1 MiB): the short read is the same corruption, never a panic or a short set.
    for count in [5, 100, 200_000] {
        let bad = fpdb::internals::segment::ShingleLoc { count, ..loc };
        match set.read(bad, 1) {
            Err(fpdb::Error::Corruption { doc: Some(1), what, .. }) => {
                assert!(what.contains("does not fit in the file (the read ran past its end)"), "{what}")
            }
            other => panic!("count {count}: {other:?}"),
        }
    }
}
