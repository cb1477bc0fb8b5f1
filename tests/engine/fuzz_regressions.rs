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
    const SYLL: [&str; 16] = [
        "ka", "lo", "mi", "ne", "ru", "ta", "so", "vi", "de", "pa", "xe", "zu", "ba", "ho", "gi", "fe",
    ];
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

use fpdb::internals::segment::{file_name, record_len, recover, ShingleLoc, FILE_HEADER};

/// Steps 1 and 2 of the `segment_file` target for an input without byte damage or tail (the two
/// crash inputs below): two segments written by the real writer (segment 0 sealed, segment 1
/// active, sets as the target derives them), then the input's committed length and location
/// edits. Returns the directory, the writer's target size, the committed lengths, the records
/// (doc, location, shingles) and the damaged locations.
#[allow(clippy::type_complexity)]
fn replay_segments(
    input: &SegmentInput,
) -> (
    tempfile::TempDir,
    u64,
    std::collections::HashMap<u32, u64>,
    Vec<(u64, ShingleLoc, Vec<u32>)>,
    Vec<ShingleLoc>,
) {
    assert!(input.bytes.is_empty() && input.tail.is_none(), "this replay covers no byte damage");
    let sets = |raw: &[Vec<u16>]| -> Vec<Vec<u32>> {
        raw.iter()
            .take(16)
            .map(|s| {
                let mut v: Vec<u32> = s.iter().take(64).map(|&x| u32::from(x) * 65_537).collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect()
    };
    let batches = [sets(&input.sealed), sets(&input.active)];
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let len = |b: &[Vec<u32>]| {
        b.iter()
            .map(|s| record_len(fpdb::internals::segment::FORMAT_VERSION, s.len() as u32))
            .sum::<u64>()
    };
    let target = FILE_HEADER + len(&batches[0]) + len(&batches[1]) - 1;
    let (_, mut writer, _) = recover(&dir, &Default::default(), false, target, false).unwrap();
    let mut records = Vec::new();
    let mut committed = std::collections::HashMap::new();
    for (b, batch) in batches.iter().enumerate() {
        let docs: Vec<(u64, &[u32])> = batch
            .iter()
            .enumerate()
            .map(|(i, s)| ((b * 100 + i) as u64 + 1, s.as_slice()))
            .collect();
        let out = writer.append(&docs).unwrap();
        committed.extend(out.lengths);
        for ((doc, s), loc) in docs.iter().zip(out.locs) {
            records.push((*doc, loc, s.to_vec()));
        }
    }
    drop(writer);
    if let Some((seg, v)) = input.committed {
        let file_len = std::fs::metadata(dir.join(file_name(u32::from(seg)))).unwrap().len();
        committed.insert(u32::from(seg), v % (2 * file_len + 2));
    }
    let mut locs: Vec<ShingleLoc> = records.iter().map(|r| r.1).collect();
    for (i, edit) in input.locs.iter().take(8) {
        let n = records.len();
        let loc = &mut locs[usize::from(*i) % n];
        match *edit {
            LocEdit::Count(c) => loc.count = c,
            LocEdit::Offset(o) => loc.offset = o,
            LocEdit::OffsetDelta(d) => loc.offset = loc.offset.wrapping_add_signed(i64::from(d)),
            LocEdit::Segment(s) => loc.segment = s,
        }
    }
    (tmp, target, committed, records, locs)
}

/// A `segment_file` fuzz input (11 bytes, the raw input below): a committed length shorter than
/// the 16-byte file header, which `recover` must not truncate the file to (that destroys the
/// header). Decoded by the target: two segments of one empty record each, segment 1's committed
/// length set to 0. `recover` refuses it as corruption (read-only and read-write) and leaves the
/// file alone.
const COMMITTED_LENGTH_SHORTER_THAN_HEADER: &[u8] = &[0xa5, 0x08, 0x00, 0x61, 0x28, 0x28, 0x28, 0x28, 0x28, 0x2d, 0x23];

#[test]
fn a_committed_length_shorter_than_the_header_is_refused_not_truncated_to() {
    let input: SegmentInput = decode(COMMITTED_LENGTH_SHORTER_THAN_HEADER);
    assert_eq!(
        input,
        SegmentInput {
            sealed: vec![vec![]],
            active: vec![vec![]],
            bytes: vec![],
            locs: vec![],
            tail: None,
            committed: Some((true, 0)),
        }
    );
    let (tmp, target, committed, _, _) = replay_segments(&input);
    let dir = tmp.path();
    assert!(committed[&1] < FILE_HEADER);
    let before = std::fs::read(dir.join(file_name(1))).unwrap();
    for read_only in [true, false] {
        let err = recover(dir, &committed, false, target, read_only).map(|_| ()).unwrap_err();
        assert!(
            err.is_corruption() && err.to_string().contains("shorter than the 16-byte file header"),
            "{err}"
        );
        assert_eq!(std::fs::read(dir.join(file_name(1))).unwrap(), before, "the file was changed");
    }
}

/// A `segment_file` fuzz input (16 bytes): a location claiming 7,995,392 shingles in a 40-byte
/// segment. A reader that allocates for the count before checking it against the file asks for
/// 31,981,592 bytes here (up to 16 GiB for a count of 2^32 - 1); the count is bounded by the file
/// first. Decoded by the target: the same two one-record segments, record 0's count set to
/// 7,995,392.
const COUNT_LARGER_THAN_THE_FILE: &[u8] = &[
    0xa5, 0x0a, 0x7a, 0xd1, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7a,
];

#[test]
fn a_count_larger_than_the_file_is_corruption_before_any_allocation() {
    let input: SegmentInput = decode(COUNT_LARGER_THAN_THE_FILE);
    assert_eq!(
        input,
        SegmentInput {
            sealed: vec![vec![]],
            active: vec![vec![]],
            bytes: vec![],
            locs: vec![(0, LocEdit::Count(7_995_392))],
            tail: None,
            committed: None,
        }
    );
    let (tmp, target, committed, records, locs) = replay_segments(&input);
    for read_only in [true, false] {
        let (set, _, _) = recover(tmp.path(), &committed, false, target, read_only).unwrap();
        // The damaged record is corruption (its count does not fit in the file); the other one
        // reads back as written.
        for ((doc, loc, shingles), damaged) in records.iter().zip(&locs) {
            match set.read(*damaged, *doc) {
                Ok(back) => {
                    assert_eq!(damaged, loc, "doc {doc}: a damaged location was read");
                    assert_eq!(&back.into_owned(), shingles);
                }
                Err(e) => {
                    assert_ne!(damaged, loc, "doc {doc}: an intact record failed: {e}");
                    // Positioned reads (read-only) and the sealed segment's map (read-write)
                    // word it differently; both bound the count by the file before allocating.
                    let m = e.to_string();
                    assert!(
                        e.is_corruption() && (m.contains("does not fit in the file (40 bytes)") || m.contains("record truncated")),
                        "doc {doc}: {m}"
                    );
                }
            }
        }
    }
    // Any count up to 2^32 - 1 is refused the same way, and a small damaged count is the same
    // corruption after a bounded read, never a panic or a short set.
    let (set, _, _) = recover(tmp.path(), &committed, false, target, true).unwrap();
    let loc = records[0].1;
    for count in [u32::MAX, 5, 100, 200_000] {
        match set.read(ShingleLoc { count, ..loc }, records[0].0) {
            Err(fpdb::Error::Corruption { .. }) => {}
            other => panic!("count {count}: {other:?}"),
        }
    }
}
