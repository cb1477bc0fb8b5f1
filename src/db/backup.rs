//! The live backup ([`Db::backup`], [`Db::backup_path`]): a consistent copy of a database while a
//! writer goes on, which opens and passes `check` (docs/durability.md, "Backups").
//!
//! What is copied, in this order, into `DIR.tmp` beside the destination:
//! 1. every segment file named by the snapshot's `meta`, up to its committed length (the bytes
//!    below it never change: segments are appended to, sealed ones never written; a segment a
//!    concurrent `compact` removed meanwhile makes the copy start again from a newer snapshot);
//! 2. every RocksDB column family but `meta`, entry by entry, from one point in time: the handle's
//!    RocksDB snapshot ([`Db::backup`]), or a read-only open of the directory
//!    ([`Db::backup_path`], beside another process that writes; an open during which the writer
//!    edited its MANIFEST is dropped and made again, see `manifest_mark`);
//! 3. `meta` last, in the one synced write that makes the copy a database (its `format` entry is
//!    what an open needs first): a copy stopped before it does not open (`Corruption`: meta entry
//!    missing), whatever else it holds;
//! 4. every file and directory fsynced, then `DIR.tmp` renamed to `DIR` and the parent fsynced.
//!
//! The source is only read. A copy stopped at any point leaves `DIR.tmp`, which the next backup
//! to `DIR` removes, and never a `DIR`.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rocksdb::{Cache, IteratorMode, WriteBatch, WriteOptions, DB};

use crate::error::{Error, Result};
use crate::store::keys::{decode_seg_key, le_u64, CF_META, SEG_PREFIX};
use crate::store::segment;

use super::cfs::{cf, meta_cf};
use super::handle::Db;
use super::rocks_options::rocks_options;

/// What a backup copied.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[non_exhaustive]
pub struct BackupReport {
    /// The copy's directory.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub dir: PathBuf,
    /// RocksDB entries copied.
    pub entries: u64,
    /// Segment files copied.
    pub segments: u64,
    /// Bytes copied (entries' keys and values, segment bytes).
    pub bytes: u64,
    /// Tries (a segment removed by a concurrent `compact` makes the copy start again).
    pub tries: u32,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Tries before a backup beside a busy writer gives up (a segment removed by a compaction, or a
/// MANIFEST edited while the source opened read-only).
const TRIES: u32 = 20;
/// Bytes per `WriteBatch` of the copy.
const BATCH_BYTES: usize = 8 << 20;

/// What a RocksDB iterator yields.
type Entries<'b> = Box<dyn Iterator<Item = std::result::Result<(Box<[u8]>, Box<[u8]>), rocksdb::Error>> + 'b>;

/// One point in time of a RocksDB: a snapshot of a live handle, or a read-only open.
enum Source<'a> {
    Snapshot(&'a DB, rocksdb::Snapshot<'a>),
    ReadOnly(&'a DB),
}

impl Source<'_> {
    fn db(&self) -> &DB {
        match self {
            Source::Snapshot(db, _) | Source::ReadOnly(db) => db,
        }
    }

    fn iter<'b>(&'b self, cf: &'b rocksdb::ColumnFamily) -> Entries<'b> {
        match self {
            Source::Snapshot(_, s) => Box::new(s.iterator_cf(cf, IteratorMode::Start)),
            Source::ReadOnly(db) => Box::new(db.iterator_cf(cf, IteratorMode::Start)),
        }
    }
}

fn sync_path(p: &Path) -> Result<()> {
    File::open(p).and_then(|f| f.sync_all()).map_err(|e| Error::io("sync", p, e))
}

/// Every file and directory under `dir` (and `dir`) fsynced.
fn sync_tree(dir: &Path) -> Result<()> {
    for e in fs::read_dir(dir).map_err(|e| Error::io("list", dir, e))? {
        let e = e.map_err(|e| Error::io("list", dir, e))?;
        let p = e.path();
        if e.file_type().map_err(|e| Error::io("stat", &p, e))?.is_dir() {
            sync_tree(&p)?;
        } else {
            sync_path(&p)?;
        }
    }
    sync_path(dir)
}

/// `DIR.tmp`.
fn tmp_of(dir: &Path) -> PathBuf {
    let mut s = dir.as_os_str().to_os_string();
    s.push(".tmp");
    PathBuf::from(s)
}

/// Copies `len` bytes of `from` into a new file `to`; `Ok(false)` when `from` is gone (a
/// concurrent compaction removed it).
fn copy_prefix(from: &Path, to: &Path, len: u64) -> Result<bool> {
    let f = match File::open(from) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(Error::io("open segment", from, e)),
    };
    let mut out = File::create(to).map_err(|e| Error::io("create segment copy", to, e))?;
    let copied = std::io::copy(&mut f.take(len), &mut out).map_err(|e| Error::io("copy segment", from, e))?;
    if copied != len {
        return Err(Error::corrupt(
            from,
            None,
            format!("the segment holds {copied} bytes, its committed length is {len}"),
        ));
    }
    out.flush().map_err(|e| Error::io("write segment copy", to, e))?;
    Ok(true)
}

impl Db {
    /// A consistent copy of this database in `dir` (which must not exist), made while the handle
    /// goes on serving and writing: see the module docs of `db::backup` and docs/durability.md.
    pub fn backup(&self, dir: impl AsRef<Path>) -> Result<BackupReport> {
        backup_with(&self.inner.path, dir.as_ref(), || Ok(Some(Opened::Live(&self.inner.rocks))))
    }

    /// [`Db::backup`] of the database at `path` without a handle: RocksDB opened read-only, so it
    /// works beside another process that holds the database (e.g. `fpdb serve`).
    pub fn backup_path(path: impl AsRef<Path>, dir: impl AsRef<Path>) -> Result<BackupReport> {
        let path = path.as_ref();
        let rocks_path = path.join("rocksdb");
        if !rocks_path.join("CURRENT").exists() {
            return Err(Error::NotFound { path: path.to_path_buf() });
        }
        backup_with(path, dir.as_ref(), || {
            let cache = Cache::new_lru_cache(8 << 20);
            let mut o = rocks_options(&cache, false);
            // Every SST file opened at open: one a compaction of the writer deletes afterwards
            // stays readable through its open descriptor.
            o.set_max_open_files(-1);
            let names = DB::list_cf(&o, &rocks_path).map_err(|e| Error::rocks("list column families", &rocks_path, e))?;
            let before = manifest_mark(&rocks_path)?;
            let db = match DB::open_cf_for_read_only(&o, &rocks_path, &names, false) {
                Ok(db) => db,
                // A file the MANIFEST named was removed by the writer meanwhile.
                Err(_) if manifest_mark(&rocks_path)? != before => return Ok(None),
                Err(e) => return Err(Error::rocks("open", &rocks_path, e)),
            };
            if manifest_mark(&rocks_path)? != before {
                return Ok(None);
            }
            Ok(Some(Opened::ReadOnly(Box::new(db))))
        })
    }
}

/// Which MANIFEST is current and how long it is. A read-only open reads the MANIFEST first and the
/// WAL files after it; an edit of the writer in between (an ingested SST file, a flush that deletes
/// a WAL file) would give a view that holds writes made after the edit but not the edit itself,
/// e.g. a table floor moved past entries that are missing. An open during which this mark did not
/// change saw no edit between its two reads, so its view is one point of the writer's history.
fn manifest_mark(rocks_path: &Path) -> Result<(String, u64)> {
    let current = rocks_path.join("CURRENT");
    let name = fs::read_to_string(&current).map_err(|e| Error::io("read", &current, e))?;
    let manifest = rocks_path.join(name.trim());
    match fs::metadata(&manifest) {
        Ok(m) => Ok((name, m.len())),
        // Replaced by a newer MANIFEST since CURRENT was read: a mark no later read equals.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((name, u64::MAX)),
        Err(e) => Err(Error::io("stat", &manifest, e)),
    }
}

/// The RocksDB a try reads: the handle's (through a snapshot), or one opened read-only for it.
enum Opened<'a> {
    Live(&'a DB),
    ReadOnly(Box<DB>),
}

/// `open` gives `None` when the writer changed the database while it opened (try again).
fn backup_with<'a>(src: &Path, dir: &Path, open: impl Fn() -> Result<Option<Opened<'a>>>) -> Result<BackupReport> {
    let started = Instant::now();
    if dir.as_os_str().is_empty() || dir.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(Error::InvalidOption {
            name: "dir",
            message: "the backup directory is empty or holds a NUL byte; name a directory that does not exist yet".into(),
        });
    }
    if dir.exists() {
        return Err(Error::AlreadyExists { path: dir.to_path_buf() });
    }
    let tmp = tmp_of(dir);
    for tries in 1..=TRIES {
        if tmp.exists() {
            fs::remove_dir_all(&tmp).map_err(|e| Error::io("remove a stopped backup", &tmp, e))?;
        }
        fs::create_dir_all(&tmp).map_err(|e| Error::io("create backup directory", &tmp, e))?;
        let Some(opened) = open()? else {
            // A busy writer edits its MANIFEST every few batches; a later open falls between.
            std::thread::sleep(std::time::Duration::from_millis(20 * u64::from(tries)));
            continue;
        };
        let source = match &opened {
            Opened::Live(db) => Source::Snapshot(db, db.snapshot()),
            Opened::ReadOnly(db) => Source::ReadOnly(db.as_ref()),
        };
        if let Some((entries, segments, bytes)) = copy_once(src, &tmp, &source)? {
            drop(source);
            drop(opened);
            sync_tree(&tmp)?;
            fs::rename(&tmp, dir).map_err(|e| Error::io("rename the finished backup", &tmp, e))?;
            let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            sync_path(parent)?;
            return Ok(BackupReport {
                dir: dir.to_path_buf(),
                entries,
                segments,
                bytes,
                tries,
                seconds: started.elapsed().as_secs_f64(),
            });
        }
    }
    Err(Error::io(
        "backup",
        src,
        std::io::Error::other(format!(
            "the database changed under each of {TRIES} tries (a compaction removed a segment, or the writer edited its MANIFEST while the copy opened); try again"
        )),
    ))
}

/// One try: `None` when a segment named by the snapshot is gone.
fn copy_once(src: &Path, tmp: &Path, source: &Source<'_>) -> Result<Option<(u64, u64, u64)>> {
    let db = source.db();
    let rocks_src = src.join("rocksdb");
    let meta = meta_cf(db, &rocks_src)?;
    // 1. the segments, up to their committed lengths in this snapshot's meta
    let (seg_src, seg_dst) = (src.join("segments"), tmp.join("segments"));
    fs::create_dir_all(&seg_dst).map_err(|e| Error::io("create backup directory", &seg_dst, e))?;
    let (mut segments, mut bytes) = (0u64, 0u64);
    for item in source.iter(meta) {
        let (k, v) = item.map_err(|e| Error::rocks("read meta", &rocks_src, e))?;
        if !k.starts_with(SEG_PREFIX) {
            continue;
        }
        let (Some(id), Some(len)) = (decode_seg_key(&k), le_u64(&v)) else {
            continue;
        };
        let name = segment::file_name(id);
        if !copy_prefix(&seg_src.join(&name), &seg_dst.join(&name), len)? {
            return Ok(None);
        }
        segments += 1;
        bytes += len;
    }
    // 2. every column family but meta, 3. meta last, in one synced write
    let rocks_dst = tmp.join("rocksdb");
    let cache = Cache::new_lru_cache(8 << 20);
    let o = rocks_options(&cache, true);
    let names = DB::list_cf(&rocksdb::Options::default(), &rocks_src).map_err(|e| Error::rocks("list column families", &rocks_src, e))?;
    let out = DB::open_cf(&o, &rocks_dst, &names).map_err(|e| Error::rocks("create the backup", &rocks_dst, e))?;
    let mut entries = 0u64;
    let mut order: Vec<&String> = names.iter().filter(|n| n.as_str() != CF_META && n.as_str() != "default").collect();
    order.push(
        names
            .iter()
            .find(|n| n.as_str() == CF_META)
            .ok_or_else(|| Error::corrupt(&rocks_src, None, format!("missing column family {CF_META}")))?,
    );
    let mut wo = WriteOptions::default();
    wo.disable_wal(true);
    for name in order {
        let (from, to) = (cf(db, &rocks_src, name)?, cf(&out, &rocks_dst, name)?);
        let mut b = WriteBatch::default();
        for item in source.iter(from) {
            let (k, v) = item.map_err(|e| Error::rocks("read for the backup", &rocks_src, e))?;
            bytes += (k.len() + v.len()) as u64;
            entries += 1;
            b.put_cf(to, &k, &v);
            if b.size_in_bytes() >= BATCH_BYTES {
                out.write_opt(std::mem::take(&mut b), &wo)
                    .map_err(|e| Error::rocks("write the backup", &rocks_dst, e))?;
            }
        }
        out.write_opt(b, &wo).map_err(|e| Error::rocks("write the backup", &rocks_dst, e))?;
        // Each family reaches its SST files before the next (meta's last): a copy stopped
        // earlier holds no meta, and does not open.
        out.flush_cf(to).map_err(|e| Error::rocks("flush the backup", &rocks_dst, e))?;
    }
    drop(out);
    Ok(Some((entries, segments, bytes)))
}
