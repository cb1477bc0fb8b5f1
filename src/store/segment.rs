//! Step 4b of the data path: shingle sets in append-only segment files.
//!
//! Files live in `<db>/segments/` and are named `{id:010}.seg` (`id` a u32). All integers are
//! little-endian. A segment's format version (its header) says how its records' payloads are
//! coded; a build reads versions 1 and 2 and writes 2 ([`FORMAT_VERSION`]).
//!
//! ```text
//! file header (16 bytes)
//!   0  8  magic  "FPDBSEG1"
//!   8  4  format version (1 or 2)
//!  12  4  segment id
//! records, each at an 8-byte aligned offset (`super::record`: its bytes, its encoder and decoder)
//! ```
//!
//! In both versions a record's length is a function of its count ([`record_len`] of the
//! segment's version), so a doc record's [`ShingleLoc`] locates it without a length field.
//! This file is the files: naming, appending, fsync, reading (mapped or positioned), recovery.
//!
//! Commit protocol (see docs/durability.md): the writer appends every record of a batch with one
//! write, fsyncs the segment (and the directory when the file is new; the file's fsync runs on a
//! thread of its own while the writer builds the batch, [`SegmentSync`]), and only then writes the RocksDB
//! batch whose doc records point at the bytes and whose `meta` entry `seg ‖ id` records the segment's
//! committed length. Recovery truncates each segment to that length and deletes files that have no
//! entry (orphans). A segment that reaches the target size is *sealed*: never written again, and
//! memory-mapped for reads. The active segment is read with positioned reads. A segment of an older
//! version is never appended to: the first append after the open starts a new one.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::failpoint;

pub use super::record::{
    decode_shingle_record, encode_shingle_record, payload_end, record_len, ShingleRecordFault, RECORD_HEADER, RECORD_MAGIC,
};

/// Segment file magic.
pub const FILE_MAGIC: &[u8; 8] = b"FPDBSEG1";
/// Segment format version written by this build (2: Elias–Fano payloads).
pub const FORMAT_VERSION: u32 = 2;
/// The oldest segment format version this build reads (1: u32 payloads).
pub const OLDEST_VERSION: u32 = 1;
/// Size of the file header.
pub const FILE_HEADER: u64 = 16;
/// Where a document's shingle set is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct ShingleLoc {
    /// Segment id.
    pub segment: u32,
    /// Offset of the record header in the file.
    pub offset: u64,
    /// Number of shingles.
    pub count: u32,
}

impl ShingleLoc {
    /// Bytes the record occupies on disk in a segment of format `version`.
    pub fn record_len(&self, version: u32) -> u64 {
        record_len(version, self.count)
    }
}

/// File name of segment `id`.
pub fn file_name(id: u32) -> String {
    format!("{id:010}.seg")
}

/// Parses a segment file name.
pub fn parse_file_name(name: &str) -> Option<u32> {
    let digits = name.strip_suffix(".seg")?;
    (digits.len() == 10 && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok())?
}

/// Records up to this many bytes are read from an unsealed segment without first checking the
/// file's size (a damaged count cannot make such a read allocate more than this).
const STAT_ABOVE: u64 = 1 << 20;

/// Reads one segment: a map when sealed, positioned reads otherwise.
#[derive(Debug)]
pub struct SegmentReader {
    id: u32,
    /// The segment's format version (its header): how its records are coded.
    version: u32,
    path: PathBuf,
    file: File,
    map: Option<Mmap>,
}

impl SegmentReader {
    fn open(dir: &Path, id: u32, sealed: bool) -> Result<Self> {
        let path = dir.join(file_name(id));
        let file = File::open(&path).map_err(|e| Error::io("open segment", &path, e))?;
        let version = check_segment_header(&file, &path, id)?;
        let map = if sealed {
            Some(crate::store::mmap::map_sealed(&file).map_err(|e| Error::io("mmap segment", &path, e))?)
        } else {
            None
        };
        Ok(SegmentReader {
            id,
            version,
            path,
            file,
            map,
        })
    }

    /// The segment's format version.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The segment file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads and verifies the shingles at `loc`.
    pub fn read(&self, loc: ShingleLoc, doc_id: u64) -> Result<Cow<'_, [u32]>> {
        debug_assert_eq!(loc.segment, self.id);
        let fault = |f: ShingleRecordFault| Error::corrupt(&self.path, Some(doc_id), format!("at offset {}: {}", loc.offset, f.0));
        match &self.map {
            Some(map) => {
                let start = usize::try_from(loc.offset).unwrap_or(usize::MAX).min(map.len());
                decode_shingle_record(self.version, &map[start..], doc_id, loc.count).map_err(fault)
            }
            None => {
                // The count and offset come from the doc record (RocksDB) and may be damaged. A
                // record of up to `STAT_ABOVE` bytes at an offset a positioned read can address is
                // read directly (a short read is the same fault below); anything else is bounded by
                // what the file holds before its buffer is allocated. The stat on every read cost
                // the writer's verification ~5% of its time.
                let len = payload_end(self.version, loc.count);
                let direct = len <= STAT_ABOVE && loc.offset <= (i64::MAX as u64).saturating_sub(len);
                let size = if direct {
                    u64::MAX
                } else {
                    self.file.metadata().map_err(|e| Error::io("stat segment", &self.path, e))?.len()
                };
                if loc.offset > size || len > size - loc.offset {
                    return Err(fault(ShingleRecordFault(format!(
                        "a record of {} shingles ({len} bytes) does not fit in the file ({size} bytes)",
                        loc.count
                    ))));
                }
                // `len <= size - offset`, which is at most the file size; on a 32-bit host a file
                // larger than the address space fails here instead of truncating the length.
                let len = usize::try_from(len)
                    .map_err(|_| fault(ShingleRecordFault(format!("a record of {len} bytes does not fit in memory"))))?;
                let mut buf = vec![0u8; len];
                self.file.read_exact_at(&mut buf, loc.offset).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::UnexpectedEof {
                        fault(ShingleRecordFault(format!(
                            "a record of {} shingles ({len} bytes) does not fit in the file (the read ran past its end)",
                            loc.count
                        )))
                    } else {
                        Error::io("read segment", &self.path, e)
                    }
                })?;
                decode_shingle_record(self.version, &buf, doc_id, loc.count)
                    .map(|c| Cow::Owned(c.into_owned()))
                    .map_err(fault)
            }
        }
    }
}

/// The readable segments, shared by queries.
#[derive(Debug, Default, Clone)]
pub struct SegmentSet {
    readers: HashMap<u32, Arc<SegmentReader>>,
}

impl SegmentSet {
    /// Reads the shingles of `doc_id` at `loc`.
    pub fn read(&self, loc: ShingleLoc, doc_id: u64) -> Result<Cow<'_, [u32]>> {
        // Tests pause a reader here to see which locks a segment read holds.
        crate::failpoint::pause_point("segment.read");
        match self.readers.get(&loc.segment) {
            Some(r) => r.read(loc, doc_id),
            None => Err(Error::corrupt(
                PathBuf::from(file_name(loc.segment)),
                Some(doc_id),
                format!("doc points at segment {} which does not exist", loc.segment),
            )),
        }
    }

    /// The format version of segment `id`: its reader's, or [`FORMAT_VERSION`] for a segment not
    /// open yet (the writer creates every new segment at that version).
    pub fn version(&self, id: u32) -> u32 {
        self.readers.get(&id).map_or(FORMAT_VERSION, |r| r.version)
    }

    /// Bytes the record at `loc` occupies, in its segment's format ([`SegmentSet::version`]).
    pub fn record_len(&self, loc: ShingleLoc) -> u64 {
        loc.record_len(self.version(loc.segment))
    }

    /// Path of a segment, if open.
    pub fn path(&self, id: u32) -> Option<&Path> {
        self.readers.get(&id).map(|r| r.path())
    }

    pub(crate) fn insert(&mut self, r: SegmentReader) {
        self.readers.insert(r.id, Arc::new(r));
    }

    pub(crate) fn remove(&mut self, id: u32) {
        self.readers.remove(&id);
    }
}

/// The writer's side: the active segment that batches append to.
#[derive(Debug)]
pub struct SegmentWriter {
    dir: PathBuf,
    sync: bool,
    target_size: u64,
    active: Option<(u32, File, u64)>,
    next_id: u32,
    /// The batch buffer, kept between appends: a batch's records (~3 MB at 4,096 documents) were
    /// encoded into a fresh `Vec` that grew by doubling, and its pages were faulted in and zeroed
    /// again for every batch.
    buf: Vec<u8>,
}

/// Result of appending a batch.
#[derive(Debug, Default)]
pub struct Appended {
    /// One location per record, in order.
    pub locs: Vec<ShingleLoc>,
    /// Segments whose committed length changed: `(id, new length)`; record them in the same batch.
    pub lengths: Vec<(u32, u64)>,
    /// Segments sealed by this append; map them after the batch commits.
    pub sealed: Vec<u32>,
    /// Segments created by this append; open them for reading after the batch commits.
    pub created: Vec<u32>,
    /// The fsync of the appended bytes, under way (a handle that syncs); [`SegmentSync::wait`] for it
    /// before committing anything that points at them.
    pub sync: Option<SegmentSync>,
}

/// An append's fsync, running on a thread of its own so that it overlaps the rest of the commit's
/// work (building the RocksDB batch); the commit waits for it before its WAL write, so the order of
/// the protocol above is kept. A thread that cannot be started leaves the fsync done in place.
#[derive(Debug)]
pub struct SegmentSync {
    path: PathBuf,
    job: std::result::Result<std::thread::JoinHandle<std::io::Result<()>>, std::io::Result<()>>,
}

impl SegmentSync {
    fn start(file: &File, path: PathBuf) -> Result<Self> {
        let f = file.try_clone().map_err(|e| Error::io("fsync segment", &path, e))?;
        let job = std::thread::Builder::new()
            .name("fpdb-segment-sync".into())
            .spawn(move || f.sync_data())
            .map_err(|_| file.sync_data());
        Ok(SegmentSync { path, job })
    }

    /// Waits for the fsync; its error, if any, names the segment.
    pub fn wait(self) -> Result<()> {
        failpoint!("segment.fsync");
        let r = match self.job {
            Ok(h) => h.join().unwrap_or_else(|_| Err(std::io::Error::other("the fsync thread panicked"))),
            Err(r) => r,
        };
        r.map_err(|e| Error::io("fsync segment", &self.path, e))
    }
}

fn fsync_dir(dir: &Path) -> Result<()> {
    failpoint!("segment.dir_fsync");
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io("fsync segment directory", dir, e))
}

/// Creates segment `id` with its header, durably (file and directory fsynced).
fn create_segment(dir: &Path, name: &str, id: u32, sync: bool) -> Result<File> {
    let path = dir.join(name);
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| Error::io("create segment", &path, e))?;
    let mut header = Vec::with_capacity(16);
    header.extend_from_slice(FILE_MAGIC);
    header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    header.extend_from_slice(&id.to_le_bytes());
    f.write_all(&header).map_err(|e| Error::io("write segment header", &path, e))?;
    if sync {
        f.sync_all().map_err(|e| Error::io("fsync segment", &path, e))?;
        fsync_dir(dir)?;
    }
    Ok(f)
}

impl SegmentWriter {
    /// Appends the records of a batch with one write, and starts its fsync ([`Appended::sync`]).
    /// Nothing is visible to readers until the caller waits for the fsync and commits the returned
    /// lengths and locations.
    pub fn append(&mut self, records: &[(u64, &[u32])]) -> Result<Appended> {
        let mut out = Appended::default();
        if records.is_empty() {
            return Ok(out);
        }
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        buf.reserve(
            records
                .iter()
                .map(|(_, s)| record_len(FORMAT_VERSION, s.len() as u32) as usize)
                .sum(),
        );
        let mut offsets = Vec::with_capacity(records.len());
        for (id, shingles) in records {
            offsets.push((buf.len() as u64, shingles.len() as u32));
            encode_shingle_record(FORMAT_VERSION, *id, shingles, &mut buf);
        }
        let rotate = match &self.active {
            None => true,
            Some((_, _, len)) => *len > FILE_HEADER && *len + buf.len() as u64 > self.target_size,
        };
        if rotate {
            if let Some((old, _, _)) = self.active.take() {
                out.sealed.push(old);
            }
            let id = self.next_id;
            let f = create_segment(&self.dir, &file_name(id), id, self.sync)?;
            self.next_id += 1;
            self.active = Some((id, f, FILE_HEADER));
            out.created.push(id);
        }
        let Some((id, file, len)) = self.active.as_mut() else {
            return Err(Error::corrupt(&self.dir, None, "no active segment after rotation"));
        };
        let path = self.dir.join(file_name(*id));
        failpoint!("segment.write");
        file.write_all_at(&buf, *len)
            .map_err(|e| Error::io("append to segment", &path, e))?;
        if self.sync {
            out.sync = Some(SegmentSync::start(file, path)?);
        }
        out.locs = offsets
            .into_iter()
            .map(|(off, count)| ShingleLoc {
                segment: *id,
                offset: *len + off,
                count,
            })
            .collect();
        *len += buf.len() as u64;
        out.lengths.push((*id, *len));
        self.buf = buf;
        Ok(out)
    }

    /// The active segment's id, if any.
    pub fn active(&self) -> Option<u32> {
        self.active.as_ref().map(|a| a.0)
    }

    /// Seals the active segment (compaction does this before rewriting it).
    pub fn seal_active(&mut self) -> Option<u32> {
        self.active.take().map(|a| a.0)
    }

    /// Writes `records` into a new segment as `.tmp`, fsyncs it and renames it into place.
    pub fn write_compacted(&mut self, records: &[(u64, &[u32])]) -> Result<(u32, Vec<ShingleLoc>, u64)> {
        let id = self.next_id;
        self.next_id += 1;
        let name = format!("{}.tmp", file_name(id));
        let tmp = self.dir.join(&name);
        let mut f = create_segment(&self.dir, &name, id, false)?;
        let mut buf = Vec::new();
        let mut locs = Vec::with_capacity(records.len());
        for (doc, shingles) in records {
            locs.push(ShingleLoc {
                segment: id,
                offset: FILE_HEADER + buf.len() as u64,
                count: shingles.len() as u32,
            });
            encode_shingle_record(FORMAT_VERSION, *doc, shingles, &mut buf);
        }
        f.write_all(&buf).map_err(|e| Error::io("write compacted segment", &tmp, e))?;
        f.sync_all().map_err(|e| Error::io("fsync compacted segment", &tmp, e))?;
        let path = self.dir.join(file_name(id));
        failpoint!("compact.rename");
        fs::rename(&tmp, &path).map_err(|e| Error::io("rename compacted segment", &path, e))?;
        fsync_dir(&self.dir)?;
        Ok((id, locs, FILE_HEADER + buf.len() as u64))
    }

    /// Opens a reader for a segment (after its batch committed).
    pub fn reader(&self, id: u32, sealed: bool) -> Result<SegmentReader> {
        SegmentReader::open(&self.dir, id, sealed)
    }
}

/// What recovery found and did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// Bytes cut from torn tails.
    pub truncated_bytes: u64,
    /// Orphan files removed.
    pub orphans_removed: Vec<PathBuf>,
    /// Doc records that failed to decode at open, left out of the in-memory state (`fpdb check`
    /// lists them; delete or re-insert repairs them). Filled by the database open, not by segments.
    pub damaged_records: u64,
    /// The doc ids of those records (a record whose key is not 8 bytes has none).
    pub damaged_ids: Vec<u64>,
}

/// Opens the segment directory: truncates each committed segment to its committed length, removes
/// orphans, maps sealed segments and returns the readers plus a writer appending to the last one.
pub fn recover(
    dir: &Path,
    committed: &HashMap<u32, u64>,
    sync: bool,
    target_size: u64,
    read_only: bool,
) -> Result<(SegmentSet, SegmentWriter, Recovery)> {
    if !read_only {
        fs::create_dir_all(dir).map_err(|e| Error::io("create segment directory", dir, e))?;
    }
    let mut rec = Recovery::default();
    remove_orphans(dir, committed, read_only, &mut rec)?;
    let last = committed.keys().copied().max();
    let mut set = SegmentSet::default();
    let mut last_version = FORMAT_VERSION;
    for (&id, &len) in committed {
        let (cut, version) = check_and_truncate_segment(dir, id, len, read_only)?;
        rec.truncated_bytes += cut;
        if Some(id) == last {
            last_version = version;
        }
        // A read-only handle never maps: another process may be writing the files. A segment of an
        // older format is never appended to, so it is sealed too.
        let sealed = !read_only && (Some(id) != last || len >= target_size || version != FORMAT_VERSION);
        set.insert(SegmentReader::open(dir, id, sealed)?);
    }
    let active = match last {
        Some(id) if !read_only && committed[&id] < target_size && last_version == FORMAT_VERSION => {
            let path = dir.join(file_name(id));
            let f = OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| Error::io("open segment", &path, e))?;
            Some((id, f, committed[&id]))
        }
        _ => None,
    };
    let writer = SegmentWriter {
        dir: dir.to_path_buf(),
        sync,
        target_size,
        active,
        next_id: last.map_or(0, |l| l + 1),
        buf: Vec::new(),
    };
    Ok((set, writer, rec))
}

/// Removes segment files (`.seg`, `.seg.tmp`) that no committed entry names (never when
/// `read_only`), recording them in `rec`. A missing directory is empty for a read-only open.
fn remove_orphans(dir: &Path, committed: &HashMap<u32, u64>, read_only: bool, rec: &mut Recovery) -> Result<()> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(|e| Error::io("list segments", dir, e))?,
        Err(e) if read_only && e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io("list segments", dir, e)),
    };
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let known = parse_file_name(&name).is_some_and(|id| committed.contains_key(&id));
        if !known && (name.ends_with(".seg") || name.ends_with(".seg.tmp")) && !read_only {
            let p = entry.path();
            fs::remove_file(&p).map_err(|e| Error::io("remove orphan segment", &p, e))?;
            rec.orphans_removed.push(p);
        }
    }
    Ok(())
}

/// Checks committed segment `id` against its committed length `len` and its header, and (unless
/// `read_only`) cuts a torn tail past `len`. Returns the bytes cut and the segment's format version.
fn check_and_truncate_segment(dir: &Path, id: u32, len: u64, read_only: bool) -> Result<(u64, u32)> {
    let path = dir.join(file_name(id));
    let f = OpenOptions::new()
        .read(true)
        .write(!read_only)
        .open(&path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::corrupt(
                &path,
                None,
                format!("segment {id} is committed ({len} bytes) but its file is missing"),
            ),
            _ => Error::io("open segment", &path, e),
        })?;
    let size = f.metadata().map_err(|e| Error::io("stat segment", &path, e))?.len();
    if len < FILE_HEADER {
        // Truncating to this length would cut the file header: refuse rather than destroy it.
        return Err(Error::corrupt(
            &path,
            None,
            format!("committed length {len} is shorter than the {FILE_HEADER}-byte file header"),
        ));
    }
    if size < len {
        return Err(Error::corrupt(
            &path,
            None,
            format!("segment is {size} bytes but {len} bytes were committed"),
        ));
    }
    let version = check_segment_header(&f, &path, id)?;
    if size > len && !read_only {
        f.set_len(len).map_err(|e| Error::io("truncate torn segment tail", &path, e))?;
        f.sync_all().map_err(|e| Error::io("fsync segment", &path, e))?;
        return Ok((size - len, version));
    }
    Ok((0, version))
}

/// Checks the 16-byte file header of segment `id`: magic, segment id and format version (one this
/// build reads: [`OLDEST_VERSION`]..=[`FORMAT_VERSION`]). Returns the version.
fn check_segment_header(f: &File, path: &Path, id: u32) -> Result<u32> {
    let mut header = [0u8; 16];
    f.read_exact_at(&mut header, 0)
        .map_err(|e| Error::io("read segment header", path, e))?;
    if &header[..8] != FILE_MAGIC || header[12..16] != id.to_le_bytes() {
        return Err(Error::corrupt(
            path,
            None,
            format!("bad segment header: expected {FILE_MAGIC:?} for segment {id}, found {header:?}"),
        ));
    }
    let version = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
    if !(OLDEST_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(Error::Version {
            what: "segment format",
            path: path.to_path_buf(),
            expected: FORMAT_VERSION,
            found: version,
        });
    }
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version-1 record, its bytes written out here rather than produced by the encoder: the
    /// header, three u32 shingles, 4 bytes of padding.
    const V1_RECORD: [u8; 40] = [
        b'F', b'P', b'S', b'R', 3, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, // magic, count 3, doc 7
        72, 234, 43, 51, 41, 116, 191, 107, // xxh3_64 of the 12 payload bytes (as main at 4bb2f65 wrote it)
        1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, // 1, 2, 3, padding
    ];

    /// A database's segment of version 1 (a header and one record, byte for byte as version 1
    /// lays them out) still opens and reads; it is sealed, and the next append starts a
    /// version-2 segment beside it; both read back, after a reopen too.
    #[test]
    fn version_1_segments_still_open_and_read() {
        let mut old = Vec::new();
        encode_shingle_record(1, 7, &[1, 2, 3], &mut old);
        assert_eq!(old, V1_RECORD, "the version-1 encoder changed");
        let dir = tempfile::tempdir().unwrap();
        let mut file = b"FPDBSEG1".to_vec();
        file.extend(1u32.to_le_bytes());
        file.extend(0u32.to_le_bytes());
        file.extend(V1_RECORD);
        fs::write(dir.path().join(file_name(0)), &file).unwrap();
        let mut committed: HashMap<u32, u64> = HashMap::from([(0, file.len() as u64)]);
        let (set, mut w, _) = recover(dir.path(), &committed, false, 1 << 20, false).unwrap();
        let old_loc = ShingleLoc {
            segment: 0,
            offset: FILE_HEADER,
            count: 3,
        };
        assert_eq!(set.version(0), 1);
        assert_eq!(set.record_len(old_loc), 40);
        assert_eq!(set.read(old_loc, 7).unwrap().as_ref(), &[1, 2, 3]);
        let out = w.append(&[(8, &[4, 5, u32::MAX][..])]).unwrap();
        assert_eq!((out.created.clone(), out.locs[0].segment), (vec![1], 1));
        assert_eq!(
            fs::read(dir.path().join(file_name(0))).unwrap(),
            file,
            "the old segment was written to"
        );
        committed.extend(out.lengths.iter().copied());
        drop(w);
        for read_only in [false, true] {
            let (set, _, _) = recover(dir.path(), &committed, false, 1 << 20, read_only).unwrap();
            assert_eq!((set.version(0), set.version(1)), (1, 2));
            assert_eq!(set.read(old_loc, 7).unwrap().as_ref(), &[1, 2, 3]);
            assert_eq!(set.read(out.locs[0], 8).unwrap().as_ref(), &[4, 5, u32::MAX]);
            assert_eq!(set.record_len(out.locs[0]), record_len(2, 3));
        }
        // A version this build does not know is refused.
        file[8] = 3;
        fs::write(dir.path().join(file_name(0)), &file).unwrap();
        assert!(matches!(
            recover(dir.path(), &committed, false, 1 << 20, true),
            Err(Error::Version { found: 3, .. })
        ));
    }

    #[test]
    fn positioned_reads_bound_the_count_by_the_file_and_recovery_keeps_headers() {
        let dir = tempfile::tempdir().unwrap();
        let (_, mut w, _) = recover(dir.path(), &HashMap::new(), false, 1 << 20, false).unwrap();
        let out = w.append(&[(7, &[1, 2, 3][..])]).unwrap();
        let committed: HashMap<u32, u64> = out.lengths.iter().copied().collect();
        drop(w);
        // Read-only: the active segment is read with positioned reads.
        let (set, _, _) = recover(dir.path(), &committed, false, 1 << 20, true).unwrap();
        let loc = out.locs[0];
        assert_eq!(set.read(loc, 7).unwrap().as_ref(), &[1, 2, 3]);
        for bad in [
            ShingleLoc { count: u32::MAX, ..loc },
            ShingleLoc {
                offset: u64::MAX - 8,
                ..loc
            },
            ShingleLoc { offset: 1 << 40, ..loc },
        ] {
            match set.read(bad, 7) {
                Err(Error::Corruption { doc: Some(7), what, .. }) => {
                    assert!(
                        what.contains(&format!("offset {}", bad.offset)) && what.contains("does not fit"),
                        "{what}"
                    )
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        // A committed length shorter than the file header is refused, not truncated to.
        let short: HashMap<u32, u64> = committed.keys().map(|&id| (id, FILE_HEADER - 1)).collect();
        assert!(recover(dir.path(), &short, false, 1 << 20, false).unwrap_err().is_corruption());
        let (set, _, _) = recover(dir.path(), &committed, false, 1 << 20, true).unwrap();
        assert_eq!(set.read(loc, 7).unwrap().as_ref(), &[1, 2, 3]);
    }

    #[test]
    fn file_names_roundtrip() {
        assert_eq!(parse_file_name(&file_name(7)), Some(7));
        assert_eq!(parse_file_name("0000000007.seg.tmp"), None);
        assert_eq!(parse_file_name("x.seg"), None);
    }
}
