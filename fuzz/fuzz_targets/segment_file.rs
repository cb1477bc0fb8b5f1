//! Whole segment files through the real reader: damaged bytes, damaged locations, damaged committed
//! lengths and torn tails.
//!
//! Each input writes two segments with the real `SegmentWriter` (segment 0 sealed, segment 1 the
//! active one), then overwrites whole bytes of the files (any byte, header included), may append a
//! torn tail, change a committed length, and change the `(segment, offset, count)` of doc records
//! (which come from RocksDB and can be damaged as well). Then `recover` opens the directory read-only
//! (positioned reads everywhere) and read-write (the sealed segment memory-mapped, the tail truncated)
//! and every record is read back:
//!
//! * nothing panics;
//! * no single allocation during a read is larger than the segment file (plus 4 KiB for messages),
//!   and recovery allocates no more than 64 KiB at once — a count is never trusted before it is
//!   bounded by the file;
//! * `recover` fails exactly when a file header was changed or a committed length exceeds its file or
//!   is shorter than the file header;
//! * an intact record (location unchanged, every byte of header and payload unchanged and inside the
//!   file) reads back as written; any other read is an error, unless the bytes at the location form
//!   a complete valid record for that doc (magic, doc id, count, checksum, sorted payload: a forgery,
//!   not damage), which must then be what is returned.
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashMap;

use arbitrary::Arbitrary;
use fpdb::internals::segment::{FORMAT_VERSION, file_name, payload_end, recover, ShingleLoc, FILE_HEADER, RECORD_HEADER, RECORD_MAGIC};
use libfuzzer_sys::fuzz_target;

/// Records the largest single allocation request made by this thread while tracking is on.
struct Tracking;

thread_local! {
    static TRACK: Cell<bool> = const { Cell::new(false) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // `try_with`: the thread-local may be gone while a thread shuts down.
    if TRACK.try_with(Cell::get).unwrap_or(false) {
        let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; the bookkeeping only touches
// const-initialized thread-locals of `Cell`s, which never allocate.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOC: Tracking = Tracking;

/// Runs `f` and returns its result with the largest allocation it requested.
fn tracked<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|l| l.set(0));
    TRACK.with(|t| t.set(true));
    let r = f();
    TRACK.with(|t| t.set(false));
    (r, LARGEST.with(Cell::get))
}

#[derive(Arbitrary, Debug)]
enum LocEdit {
    Count(u32),
    Offset(u64),
    OffsetDelta(i16),
    Segment(u32),
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// Shingle sets of segment 0's and segment 1's records (sorted and deduplicated before writing).
    sealed: Vec<Vec<u16>>,
    active: Vec<Vec<u16>>,
    /// `(segment, position, new byte)`: whole bytes overwritten.
    bytes: Vec<(bool, u16, u8)>,
    /// `(record, edit)`: damaged doc-record locations.
    locs: Vec<(u8, LocEdit)>,
    /// A torn tail appended to a segment past its committed length.
    tail: Option<(bool, Vec<u8>)>,
    /// A changed committed length.
    committed: Option<(bool, u64)>,
}

fn sets(raw: &[Vec<u16>]) -> Vec<Vec<u32>> {
    raw.iter()
        .take(16)
        .map(|s| {
            let mut v: Vec<u32> = s.iter().take(64).map(|&x| u32::from(x) * 65_537).collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect()
}

/// Independent validation of the record at `off` in `file` for `doc` with `count` shingles.
fn valid_record_at(file: &[u8], off: u64, doc: u64, count: u32) -> Option<Vec<u32>> {
    let off = usize::try_from(off).ok()?;
    let end = off.checked_add(usize::try_from(payload_end(FORMAT_VERSION, count)).ok()?)?;
    let rec = file.get(off..end)?;
    if &rec[..4] != RECORD_MAGIC
        || rec[4..8] != count.to_le_bytes()
        || rec[8..16] != doc.to_le_bytes()
        || rec[16..24] != xxhash_rust::xxh3::xxh3_64(&rec[RECORD_HEADER..]).to_le_bytes()
    {
        return None;
    }
    let set: Vec<u32> = rec[RECORD_HEADER..]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    set.windows(2).all(|w| w[0] < w[1]).then_some(set)
}

fuzz_target!(|input: Input| {
    let batches = [sets(&input.sealed), sets(&input.active)];
    if batches.iter().any(|b| b.is_empty()) {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("segments");

    // 1. Two segments written by the real writer: a target size that makes the second batch rotate
    //    (segment 0 sealed) and keeps segment 1 below it (active).
    let len = |b: &[Vec<u32>]| b.iter().map(|s| fpdb::internals::segment::record_len(FORMAT_VERSION, s.len() as u32)).sum::<u64>();
    let target = FILE_HEADER + len(&batches[0]) + len(&batches[1]) - 1;
    let (_, mut writer, _) = recover(&dir, &HashMap::new(), false, target, false).expect("empty dir");
    let mut records = Vec::new(); // (doc id, original loc, shingles)
    let mut committed: HashMap<u32, u64> = HashMap::new();
    for (b, batch) in batches.iter().enumerate() {
        let docs: Vec<(u64, &[u32])> = batch
            .iter()
            .enumerate()
            .map(|(i, s)| ((b * 100 + i) as u64 + 1, s.as_slice()))
            .collect();
        let out = writer.append(&docs).expect("append");
        assert_eq!(out.locs[0].segment, b as u32);
        committed.extend(out.lengths);
        for ((doc, s), loc) in docs.iter().zip(out.locs) {
            records.push((*doc, loc, s.to_vec()));
        }
    }
    drop(writer);
    let paths = [dir.join(file_name(0)), dir.join(file_name(1))];
    let originals: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).expect("read")).collect();

    // 2. Damage.
    let mut files = originals.clone();
    for &(seg, pos, val) in input.bytes.iter().take(16) {
        let f = &mut files[usize::from(seg)];
        let at = usize::from(pos) % f.len();
        f[at] = val;
    }
    if let Some((seg, tail)) = &input.tail {
        files[usize::from(*seg)].extend(tail.iter().take(256));
    }
    let mut committed_now = committed.clone();
    if let Some((seg, v)) = input.committed {
        committed_now.insert(u32::from(seg), v % (2 * originals[usize::from(seg)].len() as u64 + 2));
    }
    for (p, f) in paths.iter().zip(&files) {
        std::fs::write(p, f).expect("write");
    }
    let mut locs: Vec<ShingleLoc> = records.iter().map(|r| r.1).collect();
    for (i, edit) in input.locs.iter().take(8) {
        let loc = &mut locs[usize::from(*i) % records.len()];
        match *edit {
            LocEdit::Count(c) => loc.count = c,
            LocEdit::Offset(o) => loc.offset = o,
            LocEdit::OffsetDelta(d) => loc.offset = loc.offset.wrapping_add_signed(i64::from(d)),
            LocEdit::Segment(s) => loc.segment = s,
        }
    }
    let header_damaged = (0..2).any(|s| files[s][..FILE_HEADER as usize] != originals[s][..FILE_HEADER as usize]);
    let bad_length = (0..2).any(|s| {
        let c = committed_now[&(s as u32)];
        c > files[s].len() as u64 || c < FILE_HEADER
    });

    // 3. Read-only (positioned reads, no truncation), then read-write (map, truncation).
    for read_only in [true, false] {
        let (opened, largest) = tracked(|| recover(&dir, &committed_now, false, target, read_only));
        assert!(largest <= 64 << 10, "recovery allocated {largest} bytes at once");
        let set = match opened {
            Ok((set, _, _)) => {
                assert!(!header_damaged && !bad_length, "recover accepted a damaged header or length");
                set
            }
            Err(_) => {
                assert!(header_damaged || bad_length, "recover failed on intact headers and lengths");
                return;
            }
        };
        // What the files hold now (read-write recovery truncated the torn tails).
        let now: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).expect("reread")).collect();
        for ((doc, loc, shingles), damaged_loc) in records.iter().zip(&locs) {
            let (got, largest) = tracked(|| set.read(*damaged_loc, *doc).map(|c| c.into_owned()));
            let seg = damaged_loc.segment as usize;
            let file_len = now.get(seg).map_or(0, Vec::len);
            assert!(
                largest <= file_len + 4096,
                "read of {damaged_loc:?} in a {file_len}-byte file allocated {largest} bytes at once"
            );
            let range = loc.offset as usize..(loc.offset + payload_end(FORMAT_VERSION, loc.count)) as usize;
            let intact = damaged_loc == loc && now[seg].len() >= range.end && now[seg][range.clone()] == originals[seg][range.clone()];
            match got {
                Ok(back) if intact => assert_eq!(&back, shingles),
                Ok(back) => assert_eq!(
                    Some(back),
                    now.get(seg)
                        .and_then(|f| valid_record_at(f, damaged_loc.offset, *doc, damaged_loc.count)),
                    "damaged record of doc {doc} at {damaged_loc:?} (written at {loc:?}) was accepted"
                ),
                Err(e) => {
                    assert!(!intact, "intact record of doc {doc} at {loc:?} failed: {e}");
                    assert!(e.is_corruption(), "damage reported as {e}, not as corruption");
                }
            }
        }
    }
});
