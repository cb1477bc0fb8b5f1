//! Creating and opening a database: RocksDB column families, the stored spec and config (checked
//! field by field), segment recovery, and loading the in-memory state.

use std::collections::HashMap;
use std::fs::{self, File};
use std::path::Path;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use rocksdb::{Cache, ColumnFamilyDescriptor, IteratorMode, WriteBatch, WriteOptions, DB};

use crate::error::{Error, Result};
use crate::index::mem::MemTables;
use crate::intmap::IntMap;
use crate::store::doc_record::{self, DbConfig};
use crate::store::keys::{
    be_u64, cf_names, decode_edge_key, decode_seg_key, le_u64, parse_table_cf, CF_DOCS, CF_EDGES, META_TABLE_FLOOR, SEG_PREFIX,
};
use crate::store::segment::{self, Recovery};

use super::background::floor::read_floor;
use super::background::table_files::TABLE_TAIL_FILE_PREFIX;
use super::base::Base;
use super::cfs::{cf, meta_cf};
use super::handle::{Db, Inner};
use super::options::{check_k, check_t, CreateOptions, Options};
use super::rocks_options::{cf_options, rocks_options};
use super::side::register::Sides;
use super::side::{Creating, Opening};
use super::side::{Registering, Settings};
use super::state::{DocMeta, State, Writer};
use super::stored::{read_stored, write_created, Stored};

impl Db {
    /// Creates a database in `path` (an empty or missing directory) and opens it.
    pub fn create(path: impl AsRef<Path>, create: &CreateOptions) -> Result<Db> {
        Self::create_with(path, create, Options::default())
    }

    /// [`Db::create`] with handle options.
    pub fn create_with(path: impl AsRef<Path>, create: &CreateOptions, opts: Options) -> Result<Db> {
        let path = path.as_ref();
        create.spec.validate()?;
        check_k(create.max_distance)?;
        check_t(create.min_jaccard)?;
        let config = DbConfig {
            tables: create.tables.resolve(create.max_distance)?,
            max_distance: create.max_distance,
            min_jaccard: create.min_jaccard,
            containment: create.containment,
        };
        if let Some(c) = &config.containment {
            c.validate()?;
        }
        let rocks_path = path.join("rocksdb");
        let sides = Sides::register(&Registering {
            spec: &create.spec,
            config: &config,
            opts: &opts,
            rocks_path: &rocks_path,
            from: Settings::New(create),
        })?;
        if rocks_path.exists() {
            return Err(Error::AlreadyExists { path: path.to_path_buf() });
        }
        let new_dir = !path.exists();
        fs::create_dir_all(path).map_err(|e| Error::io("create database directory", path, e))?;
        if let Err(e) = create_rocks(&rocks_path, create, &config, &sides) {
            // A side index that cannot be created (the semantic channel's model missing) fails
            // before the one batch that writes the meta: remove the empty RocksDB, which would
            // otherwise make the next create `AlreadyExists` and every open `Corruption`.
            let _ = fs::remove_dir_all(&rocks_path);
            if new_dir {
                let _ = fs::remove_dir(path);
            }
            return Err(e);
        }
        Self::open_with(path, opts)
    }

    /// Opens the database at `path` for writing, with default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Db> {
        Self::open_with(path, Options::default())
    }

    /// Opens an existing database, or creates it with `create` when `path` holds none.
    pub fn open_or_create(path: impl AsRef<Path>, create: &CreateOptions) -> Result<Db> {
        let path = path.as_ref();
        if path.join("rocksdb").exists() {
            let opts = Options {
                expect_spec: Some(create.spec.clone()),
                ..Options::default()
            };
            Self::open_with(path, opts)
        } else {
            Self::create(path, create)
        }
    }

    /// Opens an existing database: its directory locked (a writer), RocksDB opened, the stored
    /// spec and configuration read and checked, the segments recovered, the in-memory state loaded
    /// (documents, mirror, groups, side indexes), the tails' floors settled.
    pub fn open_with(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        let path = path.as_ref().to_path_buf();
        let rocks_path = path.join("rocksdb");
        if !rocks_path.join("CURRENT").exists() {
            return Err(Error::NotFound { path });
        }
        let lock = lock_dir(&path, opts.read_only)?;
        let (mut rocks, names, cache) = open_rocks(&rocks_path, &opts)?;
        let stored = read_stored(&rocks, meta_cf(&rocks, &rocks_path)?, &rocks_path, &path, &opts)?;
        let sides = Sides::register(&Registering {
            spec: &stored.spec,
            config: &stored.config,
            opts: &opts,
            rocks_path: &rocks_path,
            from: Settings::Stored(&rocks),
        })?;
        if !opts.read_only {
            create_missing_cfs(&mut rocks, &cache, &rocks_path, &sides.column_families())?;
        }
        let meta = meta_cf(&rocks, &rocks_path)?;
        let next_id = stored.next_id;
        let stored_table_floor = open_table_floor(&rocks, meta, &rocks_path, &stored, &opts)?;
        let table_floor = stored_table_floor.unwrap_or(next_id);
        let committed = committed_segments(&rocks, meta, &rocks_path)?;
        let (segs, segw, mut recovery) =
            segment::recover(&path.join("segments"), &committed, opts.sync, opts.segment_size, opts.read_only)?;
        // Without the mirror, a reader of tables missing the documents above the floor builds it.
        let mirror = opts.mirror || (opts.read_only && table_floor < next_id);
        let loaded = load_docs(&rocks, &rocks_path, mirror, (&committed, &segs), &mut recovery)?;
        // A writer starts with the table floor at the next doc id: it writes the entries of the
        // documents a crash left above it, and records a floor absent from an older database.
        if !opts.read_only && (stored_table_floor.is_none() || table_floor < next_id) {
            write_table_entries_above(&rocks, &rocks_path, &stored, &loaded.docs, table_floor)?;
        }
        let opening = Opening {
            rocks: &rocks,
            rocks_path: &rocks_path,
            meta,
            docs: &loaded.docs,
            segs: &segs,
            next_id,
            opts: &opts,
        };
        sides.each(|s| s.load(&opening))?;
        let edges = load_edges(&rocks, &rocks_path)?;
        if !opts.read_only {
            drop_stale_tables(&mut rocks, &rocks_path, &stale_tables(&names, &stored))?;
        }
        let groups = loaded.groups.clone();
        let state = initial_state(&rocks, &stored, loaded, segs);
        let writer = Writer::new(segw, next_id, edges, groups, if opts.read_only { table_floor } else { next_id });
        let db = Db {
            inner: Arc::new(Inner {
                base: Base {
                    path,
                    rocks_path,
                    rocks,
                    spec: stored.spec,
                    config: stored.config,
                    layout: stored.layout,
                    table_gen: stored.table_gen,
                    opts,
                    recovery,
                    _lock: lock,
                },
                sides,
                state: RwLock::new(state),
                writer: Mutex::new(writer),
            }),
        };
        db.inner.sides.each(|s| s.start(&db))?;
        Ok(db)
    }
}

/// Writes the table entries of the documents at or above `table_floor` (those a crash left above
/// it) and moves the floor to the next doc id.
fn write_table_entries_above(rocks: &DB, rocks_path: &Path, stored: &Stored, docs: &IntMap<u64, DocMeta>, table_floor: u64) -> Result<()> {
    let above: Vec<(u64, u64)> = docs
        .iter()
        .filter(|(&id, _)| id >= table_floor)
        .map(|(&id, m)| (id, m.simhash))
        .collect();
    super::background::table_files::write_entries(rocks, rocks_path, &stored.layout, stored.table_gen, &above, stored.next_id, true)
}

/// A writer's open: the side indexes' column families a database made before them lacks.
fn create_missing_cfs(rocks: &mut DB, cache: &Cache, rocks_path: &Path, names: &[String]) -> Result<()> {
    for name in names {
        if rocks.cf_handle(name).is_none() {
            rocks
                .create_cf(name, &cf_options(cache, name, false))
                .map_err(|e| Error::rocks("create a side index's column family", rocks_path, e))?;
        }
    }
    Ok(())
}

/// Drops the column families of `stale` tables (a writer's step of the open).
fn drop_stale_tables(rocks: &mut DB, rocks_path: &Path, stale: &[String]) -> Result<()> {
    for n in stale {
        rocks
            .drop_cf(n)
            .map_err(|e| Error::rocks("drop a stale table column family", rocks_path, e))?;
    }
    Ok(())
}

/// The in-memory state of a freshly opened database: the loaded documents and mirror, the
/// segments.
fn initial_state(rocks: &DB, stored: &Stored, loaded: Loaded, segs: segment::SegmentSet) -> State {
    let next_id = stored.next_id;
    let tables = loaded
        .entries
        .map(|(fps, ids)| MemTables::from_parts(stored.layout.clone(), fps, ids));
    State {
        docs: loaded.docs,
        tables,
        segs,
        seg_usage: loaded.seg_usage,
        members: loaded.groups,
        next_id,
        recent_ids: std::collections::VecDeque::new(),
        recent_fps: std::collections::VecDeque::new(),
        recent_floor: next_id,
        published_seq: rocks.latest_sequence_number(),
        torn: false,
    }
}

/// Tables of another generation are left by a re-layout: the old ones after its switch, or the new
/// ones of a re-layout that stopped before it (`Db::reindex`). A writer drops them.
fn stale_tables(names: &[String], stored: &Stored) -> Vec<String> {
    names
        .iter()
        .filter(|n| parse_table_cf(n).is_some_and(|(g, i)| g != stored.table_gen || i >= stored.config.tables as usize))
        .cloned()
        .collect()
}

/// The stored table floor (`db::background::table_tail`; `None` in a database older than it), with
/// a writer's clean-up of a stopped tail write.
fn open_table_floor(rocks: &DB, meta: &rocksdb::ColumnFamily, rocks_path: &Path, stored: &Stored, opts: &Options) -> Result<Option<u64>> {
    let table_floor = read_floor(rocks, meta, rocks_path, META_TABLE_FLOOR, stored.next_id)?;
    if !opts.read_only {
        super::background::sst::remove_stale_files(rocks_path, TABLE_TAIL_FILE_PREFIX)?;
    }
    Ok(table_floor)
}

/// A new database's RocksDB: every column family (the core's and the side indexes'), and `meta`'s
/// entries written (synced).
fn create_rocks(rocks_path: &Path, create: &CreateOptions, config: &DbConfig, sides: &Sides) -> Result<()> {
    let cache = Cache::new_lru_cache(1 << 20);
    let o = rocks_options(&cache, true);
    let mut names = cf_names(config.tables, 0);
    names.extend(sides.column_families());
    let db = DB::open_cf(&o, rocks_path, &names).map_err(|e| Error::rocks("create", rocks_path, e))?;
    let meta = meta_cf(&db, rocks_path)?;
    let mut b = WriteBatch::default();
    write_created(&create.spec, config, &mut b, meta)?;
    let creating = Creating { rocks: &db, meta, create };
    sides.each(|s| s.create(&creating, &mut b))?;
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    db.write_opt(b, &wo).map_err(|e| Error::rocks("write meta", rocks_path, e))
}

/// A writer's lock on the database directory (`LOCK`, held while the handle lives); none for a
/// reader.
fn lock_dir(path: &Path, read_only: bool) -> Result<Option<File>> {
    if read_only {
        return Ok(None);
    }
    let lock_path = path.join("LOCK");
    let f = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| Error::io("open lock file", &lock_path, e))?;
    // The lock is an flock(2) on an open file description, which a child process forked by any
    // thread of this process shares until its exec closes it (O_CLOEXEC). A handle closed while
    // another thread spawns a process can therefore leave the lock held for the instant between
    // that fork and exec: a reopen right after a close retries for a short, bounded time before it
    // says the database is locked (another live writer holds it for longer than that).
    let deadline = std::time::Instant::now() + LOCK_RETRY;
    loop {
        match f.try_lock() {
            Ok(()) => return Ok(Some(f)),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            Err(std::fs::TryLockError::WouldBlock) => return Err(Error::Locked { path: path.to_path_buf() }),
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io("lock database", &lock_path, e)),
        }
    }
}

/// How long [`lock_dir`] retries a held lock before it reports [`Error::Locked`].
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(500);

/// RocksDB opened with every column family it holds; returns the families' names and the block
/// cache.
fn open_rocks(rocks_path: &Path, opts: &Options) -> Result<(DB, Vec<String>, Cache)> {
    let cache = Cache::new_lru_cache(opts.cache_bytes.max(1 << 20));
    let o = rocks_options(&cache, false);
    let names = DB::list_cf(&o, rocks_path).map_err(|e| Error::rocks("list column families", rocks_path, e))?;
    let descs: Vec<ColumnFamilyDescriptor> = names
        .iter()
        .map(|n| ColumnFamilyDescriptor::new(n, cf_options(&cache, n, opts.mirror && !opts.read_only)))
        .collect();
    let rocks = if opts.read_only {
        DB::open_cf_descriptors_read_only(&o, rocks_path, descs, false)
    } else {
        DB::open_cf_descriptors(&o, rocks_path, descs)
    }
    .map_err(|e| Error::rocks("open", rocks_path, e))?;
    Ok((rocks, names, cache))
}

/// The committed length of every segment (`meta`).
fn committed_segments(rocks: &DB, meta: &rocksdb::ColumnFamily, rocks_path: &Path) -> Result<HashMap<u32, u64>> {
    let mut committed: HashMap<u32, u64> = HashMap::new();
    for item in rocks.prefix_iterator_cf(meta, SEG_PREFIX) {
        let (k, v) = item.map_err(|e| Error::rocks("read segment lengths", rocks_path, e))?;
        if !k.starts_with(SEG_PREFIX) {
            break;
        }
        match (decode_seg_key(&k), le_u64(&v)) {
            (Some(id), Some(len)) => {
                committed.insert(id, len);
            }
            _ => return Err(Error::corrupt(rocks_path, None, format!("bad segment length entry {k:?}"))),
        }
    }
    Ok(committed)
}

/// The documents as the open loads them.
struct Loaded {
    docs: IntMap<u64, DocMeta>,
    /// The mirror's fingerprints and doc ids (when it is built), made one base run after the scan.
    entries: Option<(Vec<u64>, Vec<u64>)>,
    seg_usage: IntMap<u32, (u64, u64)>,
    /// Members of every group with at least two (sorted ids).
    groups: IntMap<u64, Vec<u64>>,
}

/// Every doc record into memory: the documents, the mirror's entries, the segments' live bytes, the
/// groups. A damaged record is left out of the in-memory state (counted in `recovery`; `check`
/// reports it; delete or re-insert repairs it) so that every other document stays usable.
/// `segments`: the committed lengths and the open segments (a record's length is its segment's
/// format's).
fn load_docs(
    rocks: &DB,
    rocks_path: &Path,
    mirror: bool,
    segments: (&HashMap<u32, u64>, &segment::SegmentSet),
    recovery: &mut Recovery,
) -> Result<Loaded> {
    let (committed, segs) = segments;
    let docs_cf = cf(rocks, rocks_path, CF_DOCS)?;
    let mut docs: IntMap<u64, DocMeta> = IntMap::default();
    let mut entries: Option<(Vec<u64>, Vec<u64>)> = mirror.then(Default::default);
    let mut seg_usage: IntMap<u32, (u64, u64)> = committed.iter().map(|(&id, &len)| (id, (len, 0))).collect();
    let mut groups: IntMap<u64, Vec<u64>> = IntMap::default();
    for item in rocks.iterator_cf(docs_cf, IteratorMode::Start) {
        let (k, v) = item.map_err(|e| Error::rocks("scan docs", rocks_path, e))?;
        let Some(id) = be_u64(&k) else {
            recovery.damaged_records += 1;
            continue;
        };
        let Ok(r) = doc_record::decode_doc(&v, rocks_path, Some(id)) else {
            recovery.damaged_records += 1;
            recovery.damaged_ids.push(id);
            continue;
        };
        if let Some((fps, ids)) = entries.as_mut() {
            fps.push(r.simhash);
            ids.push(id);
        }
        if let Some(u) = seg_usage.get_mut(&r.segment) {
            u.1 += segs.record_len(r.loc());
        }
        groups.entry(r.group).or_default().push(id);
        let loc = r.loc();
        docs.insert(
            id,
            DocMeta {
                key: r.key.into(),
                simhash: r.simhash,
                loc,
                group: r.group,
            },
        );
    }
    groups.retain(|_, m| m.len() > 1);
    for m in groups.values_mut() {
        m.sort_unstable();
    }
    Ok(Loaded {
        docs,
        entries,
        seg_usage,
        groups,
    })
}

/// The near-duplicate edges, both ways.
fn load_edges(rocks: &DB, rocks_path: &Path) -> Result<IntMap<u64, Vec<u64>>> {
    let edges_cf = cf(rocks, rocks_path, CF_EDGES)?;
    let mut edges: IntMap<u64, Vec<u64>> = IntMap::default();
    for item in rocks.iterator_cf(edges_cf, IteratorMode::Start) {
        let (k, _) = item.map_err(|e| Error::rocks("scan edges", rocks_path, e))?;
        match decode_edge_key(&k) {
            Some((a, b)) => edges.entry(a).or_default().push(b),
            None => return Err(Error::corrupt(rocks_path, None, format!("edge key {k:?} is not 16 bytes"))),
        }
    }
    Ok(edges)
}

#[cfg(all(test, feature = "semantic"))]
mod tests {
    use super::*;

    /// A create that fails in a side index's `create` (the semantic channel's model missing) leaves
    /// no RocksDB behind: the same path can be created again, and it is not a corrupt database.
    #[test]
    fn a_failed_create_leaves_nothing_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("db");
        let bad = CreateOptions::default().with_semantic(Some(crate::semantic::SemanticConfig::new(tmp.path().join("no-model"))));
        let e = Db::create(&path, &bad).unwrap_err();
        assert!(
            matches!(e, Error::Semantic(crate::semantic::SemanticError::ModelMissing { .. })),
            "{e}"
        );
        assert!(!path.exists(), "the failed create left {}", path.display());
        // An existing empty directory stays, without a database in it.
        fs::create_dir(&path).unwrap();
        Db::create(&path, &bad).unwrap_err();
        assert!(path.is_dir() && !path.join("rocksdb").exists());
        assert!(matches!(Db::open(&path), Err(Error::NotFound { .. })));
        Db::create(&path, &CreateOptions::default()).unwrap();
    }
}
