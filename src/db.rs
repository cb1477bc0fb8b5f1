//! The database handle: open/create, the single writer (dedup decisions, groups, group commit) and
//! snapshot-consistent queries. See ARCHITECTURE.md for the invariants and docs/format.md for bytes.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::{Mutex, RwLock};
use rocksdb::{BlockBasedOptions, Cache, ColumnFamilyDescriptor, IteratorMode, WriteBatch, WriteOptions, DB};

use crate::error::{Error, Result};
use crate::failpoint;
use crate::fingerprint::{Fingerprint, Fingerprinter};
use crate::metadata::{self, Biblio, MatchKind, CF_META_IDX}; // metadata:
use crate::record::{self, be_u64, edge_key, le_u64, seg_key, table_cf, DbConfig, DocRecord, CF_DOCS, CF_EDGES, CF_KEYS, CF_META};
use crate::segment::{self, Recovery, SegmentSet, SegmentWriter, ShingleLoc};
use crate::simhash::hamming;
use crate::spec::FingerprintSpec;
use crate::tables::{decode_table_key, for_each_neighbor, table_key, IntMap, Layout, MemTables, MAX_TABLES};
use crate::verify::{jaccard, jaccard_at_least};

/// Largest accepted key, in bytes.
pub const MAX_KEY_BYTES: usize = 64 * 1024;
/// Largest distance a query may ask for.
pub const MAX_DISTANCE: u32 = 32;

/// How many tables (blocks) the database uses; fixed at creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tables {
    /// Chosen from the default distance by the measured rule in docs/performance.md ([`auto_tables`]).
    Auto,
    /// `k+1` blocks: exact block match for the default distance (the classic layout).
    KPlusOne,
    /// Exactly `m` blocks (1..=32).
    Blocks(u32),
}

/// The measured choice of `--tables auto` for a default distance `k` (docs/performance.md, "The
/// table-layout decision"): exact block match (k+1 tables) up to k = 3, five tables for k = 4..=16
/// (fastest in-memory probe at 1M real documents for k = 8 and k = 12), six beyond (not measured).
pub fn auto_tables(k: u32) -> u32 {
    match k {
        0..=3 => k + 1,
        4..=16 => 5,
        _ => 6,
    }
}

impl Tables {
    /// The number of tables for default distance `k`.
    pub fn resolve(self, k: u32) -> Result<u32> {
        let m = match self {
            Tables::Auto => auto_tables(k),
            Tables::KPlusOne => k + 1,
            Tables::Blocks(m) => m,
        };
        if !(1..=MAX_TABLES).contains(&m) {
            return Err(Error::InvalidOption {
                name: "tables",
                message: format!("the number of tables must be 1..={MAX_TABLES}, got {m}"),
            });
        }
        Ok(m)
    }
}

/// Settings fixed when a database is created.
#[derive(Clone, Debug)]
pub struct CreateOptions {
    /// The fingerprint spec.
    pub spec: FingerprintSpec,
    /// Table layout.
    pub tables: Tables,
    /// Default maximum Hamming distance (k).
    pub max_distance: u32,
    /// Default minimum Jaccard similarity (t).
    pub min_jaccard: f64,
}

impl Default for CreateOptions {
    /// Word trigrams with binary weights, k = 12, t = 0.9, tables chosen automatically. Seed 000 used
    /// k = 8; on the labelled corpora of docs/quality.md k = 8 finds only 94–99% of the pairs with
    /// Jaccard ≥ 0.9 and k = 12 finds ≥ 99.7%.
    fn default() -> Self {
        CreateOptions {
            spec: FingerprintSpec::default(),
            tables: Tables::Auto,
            max_distance: 12,
            min_jaccard: 0.9,
        }
    }
}

/// Settings of one open handle.
#[derive(Clone, Debug)]
pub struct Options {
    /// fsync segments and sync the WAL on every commit (default). Off: a process crash loses nothing,
    /// a power loss may lose the last batches.
    pub sync: bool,
    /// Probe an in-memory mirror of the tables (default) instead of RocksDB.
    pub mirror: bool,
    /// Open without writing anything (no recovery, no lock); writes fail with [`Error::ReadOnly`].
    pub read_only: bool,
    /// Size at which a segment is sealed and a new one started.
    pub segment_size: u64,
    /// RocksDB block cache shared by all column families.
    pub cache_bytes: usize,
    /// The spec the caller expects; a different stored spec is refused.
    pub expect_spec: Option<FingerprintSpec>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sync: true,
            mirror: true,
            read_only: false,
            segment_size: 64 << 20,
            cache_bytes: 64 << 20,
            expect_spec: None,
        }
    }
}

/// What to do with a document that has verified near-duplicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Dedup {
    /// Store it and join its duplicates' group (default).
    #[default]
    Link,
    /// Do not store it; report its duplicates.
    Skip,
    /// Store it without looking for duplicates (its own group).
    Off,
}

/// Query settings; `None` fields take the database's defaults.
#[derive(Clone, Debug, Default)]
pub struct QueryOptions {
    /// Maximum Hamming distance (default: the database's k).
    pub max_distance: Option<u32>,
    /// Minimum Jaccard (default: the database's t). `Some(0.0)` keeps every candidate within k.
    pub min_jaccard: Option<f64>,
    /// At most this many hits (best first).
    pub limit: Option<usize>,
}

/// One query hit.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// External key.
    pub key: String,
    /// Doc id.
    pub id: u64,
    /// Hamming distance of the SimHashes.
    pub hamming: u32,
    /// Exact Jaccard of the shingle sets (absent for fingerprint-only queries).
    pub jaccard: Option<f64>,
    /// Number of shared shingles (absent for fingerprint-only queries).
    pub shared: Option<u32>,
    /// How it matched: verified text, or an exact metadata match (then hamming and Jaccard are given
    /// for information only). // metadata:
    pub matched: MatchKind,
}

/// A duplicate group as seen at a point in time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupInfo {
    /// Group id = doc id of the canonical member.
    pub id: u64,
    /// Key of the canonical (earliest inserted living) member.
    pub canonical: String,
    /// Number of members.
    pub size: usize,
}

/// Result of inserting one document.
#[derive(Clone, Debug, PartialEq)]
pub struct InsertOutcome {
    /// The document's key.
    pub key: String,
    /// Its doc id, when stored.
    pub id: Option<u64>,
    /// Doc id of the earlier document with the same key that this one replaced.
    pub replaced: Option<u64>,
    /// Verified near-duplicates already in the database (or earlier in the batch).
    pub duplicates: Vec<Hit>,
    /// Its group after the insert (when stored).
    pub group: Option<GroupInfo>,
}

/// A document to insert.
#[derive(Clone, Debug)]
pub struct NewDoc {
    /// External key (1..=65536 bytes).
    pub key: String,
    /// Text.
    pub text: String,
    /// Optional metadata (JSON text), stored with the record.
    pub meta: Option<String>,
    /// Title, year and DOI: stored, indexed and matched exactly (see [`crate::metadata`]). // metadata:
    pub biblio: Biblio,
}

/// A document fingerprinted and validated, ready for the writer.
#[derive(Clone, Debug)]
pub struct PreparedDoc {
    /// External key.
    pub key: String,
    /// Fingerprint.
    pub fp: Fingerprint,
    /// Metadata.
    pub meta: Option<String>,
    /// Title, year and DOI (validated). // metadata:
    pub biblio: Biblio,
}

/// A stored document.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// Doc id.
    pub id: u64,
    /// The record.
    pub record: DocRecord,
    /// Its group.
    pub group: GroupInfo,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Stats {
    /// Live documents.
    pub docs: u64,
    /// Groups with at least two members.
    pub groups: u64,
    /// Documents in groups with at least two members.
    pub grouped_docs: u64,
    /// Segment files.
    pub segments: u64,
    /// Bytes in segment files.
    pub segment_bytes: u64,
    /// Bytes of live records.
    pub live_bytes: u64,
    /// Number of tables.
    pub tables: u32,
    /// Default k.
    pub max_distance: u32,
    /// Default t.
    pub min_jaccard: f64,
    /// The spec, as text.
    pub spec: String,
}

/// One problem found by [`Db::check`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Fault {
    /// The document, when the problem is one document's.
    pub doc: Option<u64>,
    /// Its key, when known.
    pub key: Option<String>,
    /// The file concerned.
    pub path: String,
    /// What is wrong.
    pub what: String,
}

/// Result of [`Db::check`].
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CheckReport {
    /// Documents verified.
    pub docs: u64,
    /// Table entries verified.
    pub table_entries: u64,
    /// Problems.
    pub faults: Vec<Fault>,
}

/// Result of [`Db::compact`].
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CompactStats {
    /// Segments rewritten.
    pub segments_rewritten: u64,
    /// Bytes reclaimed.
    pub bytes_reclaimed: u64,
    /// Records moved.
    pub records_moved: u64,
}

#[derive(Clone, Debug)]
struct DocMeta {
    key: Box<str>,
    simhash: u64,
    loc: ShingleLoc,
    group: u64,
}

/// What queries read; changed only by the writer, under the write lock, after a batch committed.
struct State {
    docs: IntMap<u64, DocMeta>,
    tables: Option<MemTables>,
    segs: SegmentSet,
    /// Per segment: (committed length, live record bytes).
    seg_usage: IntMap<u32, (u64, u64)>,
    /// Members of every group with at least two members (sorted ids).
    members: IntMap<u64, Vec<u64>>,
    /// The next doc id the writer will allocate (all committed ids are smaller).
    next_id: u64,
    /// `(id, simhash)` of the most recently committed documents, oldest first: every committed
    /// document with id ≥ `recent_floor` is here. Lets the writer finish a [`Precheck`] cheaply.
    recent: std::collections::VecDeque<(u64, u64)>,
    recent_floor: u64,
}

/// How many recently committed documents [`State::recent`] keeps.
const RECENT_CAP: usize = 1 << 16;

/// Duplicates of a prepared document verified by a worker against the committed documents with id
/// below `upto`; the writer completes it with the documents committed since and the batch's own.
#[derive(Clone, Debug)]
pub struct Precheck {
    upto: u64,
    dups: Vec<Hit>,
}

/// The writer's private structures (under the writer mutex).
struct Writer {
    segw: SegmentWriter,
    next_id: u64,
    edges: IntMap<u64, Vec<u64>>,
    members: IntMap<u64, Vec<u64>>,
    poisoned: Option<String>,
}

struct Inner {
    path: PathBuf,
    rocks_path: PathBuf,
    rocks: DB,
    spec: FingerprintSpec,
    config: DbConfig,
    layout: Layout,
    opts: Options,
    state: RwLock<State>,
    writer: Mutex<Writer>,
    recovery: Recovery,
    _lock: Option<File>,
}

impl Drop for Inner {
    /// A clean close flushes the memtables, so the next open does not replay the whole WAL.
    fn drop(&mut self) {
        if !self.opts.read_only && self.writer.get_mut().poisoned.is_none() {
            for name in cf_names(self.config.tables) {
                if let Some(cf) = self.rocks.cf_handle(&name) {
                    let _ = self.rocks.flush_cf(cf);
                }
            }
        }
    }
}

/// An open database. Cheap to clone; `Send + Sync`: share it between threads.
#[derive(Clone)]
pub struct Db {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("path", &self.inner.path).finish_non_exhaustive()
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn rocks_options(cache: &Cache, create: bool) -> rocksdb::Options {
    let mut o = rocksdb::Options::default();
    o.create_if_missing(create);
    o.create_missing_column_families(create);
    o.set_compression_type(rocksdb::DBCompressionType::None);
    let mut bb = BlockBasedOptions::default();
    bb.set_block_cache(cache);
    bb.set_cache_index_and_filter_blocks(true);
    o.set_block_based_table_factory(&bb);
    o.set_max_background_jobs(2);
    o
}

fn cf_names(m: u32) -> Vec<String> {
    let mut v: Vec<String> = [CF_META, CF_DOCS, CF_KEYS, CF_EDGES, CF_META_IDX]
        .iter()
        .map(|s| s.to_string())
        .collect(); // metadata: + CF_META_IDX
    v.extend((0..m as usize).map(table_cf));
    v
}

/// Checks a key against the accepted range.
pub fn validate_key(key: &str) -> Result<()> {
    if key.is_empty() {
        return Err(Error::input(None, "the key is empty; every document needs a non-empty key"));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(Error::input(
            Some(key.as_bytes()),
            format!("the key is {} bytes; keys may be at most {MAX_KEY_BYTES} bytes", key.len()),
        ));
    }
    Ok(())
}

fn check_t(t: f64) -> Result<f64> {
    if (0.0..=1.0).contains(&t) {
        Ok(t)
    } else {
        Err(Error::InvalidOption {
            name: "min_jaccard",
            message: format!("must be within 0.0..=1.0, got {t}"),
        })
    }
}

fn check_k(k: u32) -> Result<u32> {
    if k <= MAX_DISTANCE {
        Ok(k)
    } else {
        Err(Error::InvalidOption {
            name: "max_distance",
            message: format!("must be within 0..={MAX_DISTANCE}, got {k}"),
        })
    }
}

fn sort_hits(hits: &mut [Hit]) {
    hits.sort_by(|a, b| {
        b.jaccard
            .partial_cmp(&a.jaccard)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.hamming.cmp(&b.hamming))
            .then(a.id.cmp(&b.id))
    });
}

/// The size filter of Jaccard ≥ t, from the stored shingle count alone (no segment read):
/// `t·max(|A|, |B|) ≤ min(|A|, |B|)`.
fn size_compatible(a: usize, b: u32, t: f64) -> bool {
    let (lo, hi) = if a <= b as usize { (a, b as usize) } else { (b as usize, a) };
    lo as f64 >= t * hi as f64
}

/// Connected components of `nodes` under `edges` (only edges between nodes of the set count).
fn components(nodes: &[u64], edges: &IntMap<u64, Vec<u64>>) -> Vec<Vec<u64>> {
    let inside: HashSet<u64> = nodes.iter().copied().collect();
    let mut seen: HashSet<u64> = HashSet::new();
    let mut out = Vec::new();
    for &n in nodes {
        if !seen.insert(n) {
            continue;
        }
        let mut comp = vec![n];
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            for &y in edges.get(&x).map(Vec::as_slice).unwrap_or(&[]) {
                if inside.contains(&y) && seen.insert(y) {
                    comp.push(y);
                    stack.push(y);
                }
            }
        }
        comp.sort_unstable();
        out.push(comp);
    }
    out
}

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
        let m = create.tables.resolve(create.max_distance)?;
        let rocks_path = path.join("rocksdb");
        if rocks_path.exists() {
            return Err(Error::AlreadyExists { path: path.to_path_buf() });
        }
        fs::create_dir_all(path).map_err(|e| Error::io("create database directory", path, e))?;
        {
            let cache = Cache::new_lru_cache(1 << 20);
            let o = rocks_options(&cache, true);
            let names = cf_names(m);
            let db = DB::open_cf(&o, &rocks_path, &names).map_err(|e| Error::rocks("create", &rocks_path, e))?;
            let meta = db
                .cf_handle(CF_META)
                .ok_or_else(|| Error::corrupt(&rocks_path, None, "missing meta column family"))?;
            let config = DbConfig {
                tables: m,
                max_distance: create.max_distance,
                min_jaccard: create.min_jaccard,
            };
            let mut b = WriteBatch::default();
            b.put_cf(meta, b"format", record::FORMAT_VERSION.to_le_bytes());
            b.put_cf(meta, b"spec", create.spec.encode());
            b.put_cf(meta, b"config", record::encode(&config));
            b.put_cf(meta, b"next_doc", 0u64.to_le_bytes());
            let mut wo = WriteOptions::default();
            wo.set_sync(true);
            db.write_opt(b, &wo).map_err(|e| Error::rocks("write meta", &rocks_path, e))?;
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

    /// Opens an existing database.
    pub fn open_with(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        let path = path.as_ref().to_path_buf();
        let rocks_path = path.join("rocksdb");
        if !rocks_path.join("CURRENT").exists() {
            return Err(Error::NotFound { path });
        }
        let lock = if opts.read_only {
            None
        } else {
            let lock_path = path.join("LOCK");
            let f = File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock_path)
                .map_err(|e| Error::io("open lock file", &lock_path, e))?;
            match f.try_lock() {
                Ok(()) => Some(f),
                Err(std::fs::TryLockError::WouldBlock) => return Err(Error::Locked { path }),
                Err(std::fs::TryLockError::Error(e)) => return Err(Error::io("lock database", &lock_path, e)),
            }
        };
        let cache = Cache::new_lru_cache(opts.cache_bytes.max(1 << 20));
        let o = rocks_options(&cache, false);
        let names = DB::list_cf(&o, &rocks_path).map_err(|e| Error::rocks("list column families", &rocks_path, e))?;
        let descs: Vec<ColumnFamilyDescriptor> = names
            .iter()
            .map(|n| ColumnFamilyDescriptor::new(n, rocks_options(&cache, false)))
            .collect();
        let mut rocks = if opts.read_only {
            DB::open_cf_descriptors_read_only(&o, &rocks_path, descs, false)
        } else {
            DB::open_cf_descriptors(&o, &rocks_path, descs)
        }
        .map_err(|e| Error::rocks("open", &rocks_path, e))?;
        // metadata: databases created before the metadata index get its (empty) column family.
        if !opts.read_only && rocks.cf_handle(CF_META_IDX).is_none() {
            rocks
                .create_cf(CF_META_IDX, &rocks_options(&cache, false))
                .map_err(|e| Error::rocks("create meta_idx column family", &rocks_path, e))?;
        }
        let meta = rocks
            .cf_handle(CF_META)
            .ok_or_else(|| Error::corrupt(&rocks_path, None, "missing meta column family"))?;
        let get_meta = |k: &[u8]| -> Result<Vec<u8>> {
            rocks
                .get_cf(meta, k)
                .map_err(|e| Error::rocks("read meta", &rocks_path, e))?
                .ok_or_else(|| Error::corrupt(&rocks_path, None, format!("meta entry {:?} is missing", String::from_utf8_lossy(k))))
        };
        let format = get_meta(b"format")?;
        let format = u32::from_le_bytes(format.get(..4).and_then(|s| s.try_into().ok()).unwrap_or([0xFF; 4]));
        if format != record::FORMAT_VERSION {
            return Err(Error::Version {
                what: "store format",
                path: rocks_path,
                expected: record::FORMAT_VERSION,
                found: format,
            });
        }
        let spec = FingerprintSpec::decode(&get_meta(b"spec")?, &rocks_path)?;
        if let Some(expected) = &opts.expect_spec {
            expected.check_matches(&spec, &path)?;
        }
        spec.validate()?;
        let config: DbConfig = record::decode(&get_meta(b"config")?, "config record", &rocks_path, None)?;
        let layout = Layout::new(config.tables)
            .ok_or_else(|| Error::corrupt(&rocks_path, None, format!("stored table count {} is out of range", config.tables)))?;
        for i in 0..config.tables as usize {
            if rocks.cf_handle(&table_cf(i)).is_none() {
                return Err(Error::corrupt(&rocks_path, None, format!("table column family t{i} is missing")));
            }
        }
        let next_id = le_u64(&get_meta(b"next_doc")?).ok_or_else(|| Error::corrupt(&rocks_path, None, "meta next_doc is not 8 bytes"))?;
        let mut committed: HashMap<u32, u64> = HashMap::new();
        for item in rocks.prefix_iterator_cf(meta, b"seg") {
            let (k, v) = item.map_err(|e| Error::rocks("read segment lengths", &rocks_path, e))?;
            if !k.starts_with(b"seg") {
                break;
            }
            let id = k.get(3..7).and_then(|b| b.try_into().ok()).map(u32::from_be_bytes);
            match (id, le_u64(&v)) {
                (Some(id), Some(len)) if k.len() == 7 => {
                    committed.insert(id, len);
                }
                _ => return Err(Error::corrupt(&rocks_path, None, format!("bad segment length entry {k:?}"))),
            }
        }
        let seg_dir = path.join("segments");
        let (segs, segw, recovery) = segment::recover(&seg_dir, &committed, opts.sync, opts.segment_size, opts.read_only)?;

        // Load documents into memory: the mirror, group membership and segment usage.
        let docs_cf = rocks
            .cf_handle(CF_DOCS)
            .ok_or_else(|| Error::corrupt(&rocks_path, None, "missing docs column family"))?;
        let mut docs: IntMap<u64, DocMeta> = IntMap::default();
        let mut tables = opts.mirror.then(|| MemTables::new(layout.clone()));
        let mut seg_usage: IntMap<u32, (u64, u64)> = committed.iter().map(|(&id, &len)| (id, (len, 0))).collect();
        let mut groups: IntMap<u64, Vec<u64>> = IntMap::default();
        for item in rocks.iterator_cf(docs_cf, IteratorMode::Start) {
            let (k, v) = item.map_err(|e| Error::rocks("scan docs", &rocks_path, e))?;
            // A damaged record is left out of the in-memory state (check reports it; delete or
            // re-insert repairs it) so that every other document stays usable.
            let Some(id) = be_u64(&k) else { continue };
            let Ok(r) = record::decode::<DocRecord>(&v, "doc record", &rocks_path, Some(id)) else {
                continue;
            };
            if let Some(t) = tables.as_mut() {
                t.insert(r.simhash, id);
            }
            if let Some(u) = seg_usage.get_mut(&r.segment) {
                u.1 += r.loc().record_len();
            }
            groups.entry(r.group).or_default().push(id);
            let loc = r.loc();
            docs.insert(
                id,
                DocMeta {
                    key: r.key.into_boxed_str(),
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
        let edges_cf = rocks
            .cf_handle(CF_EDGES)
            .ok_or_else(|| Error::corrupt(&rocks_path, None, "missing edges column family"))?;
        let mut edges: IntMap<u64, Vec<u64>> = IntMap::default();
        for item in rocks.iterator_cf(edges_cf, IteratorMode::Start) {
            let (k, _) = item.map_err(|e| Error::rocks("scan edges", &rocks_path, e))?;
            match (k.get(..8).and_then(be_u64), k.get(8..).and_then(be_u64)) {
                (Some(a), Some(b)) => edges.entry(a).or_default().push(b),
                _ => return Err(Error::corrupt(&rocks_path, None, format!("edge key {k:?} is not 16 bytes"))),
            }
        }
        let state = State {
            docs,
            tables,
            segs,
            seg_usage,
            members: groups.clone(),
            next_id,
            recent: std::collections::VecDeque::new(),
            recent_floor: next_id,
        };
        let writer = Writer {
            segw,
            next_id,
            edges,
            members: groups,
            poisoned: None,
        };
        Ok(Db {
            inner: Arc::new(Inner {
                path,
                rocks_path,
                rocks,
                spec,
                config,
                layout,
                opts,
                state: RwLock::new(state),
                writer: Mutex::new(writer),
                recovery,
                _lock: lock,
            }),
        })
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The stored fingerprint spec.
    pub fn spec(&self) -> &FingerprintSpec {
        &self.inner.spec
    }

    /// The stored configuration (tables, default k and t).
    pub fn config(&self) -> &DbConfig {
        &self.inner.config
    }

    /// The table layout.
    pub fn layout(&self) -> &Layout {
        &self.inner.layout
    }

    /// What recovery did when this handle was opened.
    pub fn recovery(&self) -> &Recovery {
        &self.inner.recovery
    }

    /// A fingerprinter for the stored spec.
    pub fn fingerprinter(&self) -> Fingerprinter {
        Fingerprinter::new(self.inner.spec.clone())
    }

    /// Fingerprints and validates a document (no database access; call from any thread).
    pub fn prepare(&self, fpr: &mut Fingerprinter, doc: NewDoc) -> Result<PreparedDoc> {
        validate_key(&doc.key)?;
        let fp = fpr.fingerprint(&doc.text);
        if fp.shingles.is_empty() {
            return Err(Error::input(
                Some(doc.key.as_bytes()),
                "the text has no words (empty, whitespace or punctuation only); nothing to fingerprint",
            ));
        }
        // metadata: validated here, so the writer only indexes well-formed values.
        metadata::validate(&doc.biblio).map_err(|e| match e {
            Error::InvalidInput { message, .. } => Error::input(Some(doc.key.as_bytes()), message),
            e => e,
        })?;
        Ok(PreparedDoc {
            key: doc.key,
            fp,
            meta: doc.meta,
            biblio: doc.biblio,
        })
    }

    /// Inserts (or replaces) one document durably, linking it to its verified near-duplicates.
    pub fn insert(&self, key: &str, text: &str) -> Result<InsertOutcome> {
        self.insert_with(key, text, Dedup::Link)
    }

    /// [`Db::insert`] with a dedup mode.
    pub fn insert_with(&self, key: &str, text: &str, dedup: Dedup) -> Result<InsertOutcome> {
        let doc = self.prepare(
            &mut self.fingerprinter(),
            NewDoc {
                key: key.to_string(),
                text: text.to_string(),
                meta: None,
                biblio: Biblio::default(),
            },
        )?;
        self.commit_batch(vec![Ok(doc)], dedup)?
            .pop()
            .unwrap_or_else(|| Err(Error::input(Some(key.as_bytes()), "document was not processed")))
    }

    fn poison(w: &mut Writer, e: &Error) {
        if w.poisoned.is_none() {
            w.poisoned = Some(e.to_string());
        }
    }

    fn cf(&self, name: &str) -> Result<&rocksdb::ColumnFamily> {
        self.inner
            .rocks
            .cf_handle(name)
            .ok_or_else(|| Error::corrupt(&self.inner.rocks_path, None, format!("missing column family {name}")))
    }

    fn rocks_err(&self, op: &'static str) -> impl Fn(rocksdb::Error) -> Error + '_ {
        move |e| Error::rocks(op, &self.inner.rocks_path, e)
    }

    fn read_record(&self, id: u64) -> Result<Option<DocRecord>> {
        let v = self
            .inner
            .rocks
            .get_cf(self.cf(CF_DOCS)?, id.to_be_bytes())
            .map_err(self.rocks_err("read doc"))?;
        v.map(|v| record::decode(&v, "doc record", &self.inner.rocks_path, Some(id)))
            .transpose()
    }

    fn committed_id(&self, key: &str) -> Result<Option<u64>> {
        let v = self
            .inner
            .rocks
            .get_cf(self.cf(CF_KEYS)?, key.as_bytes())
            .map_err(self.rocks_err("read key"))?;
        v.map(|v| be_u64(&v).ok_or_else(|| Error::corrupt(&self.inner.rocks_path, None, format!("key entry for {key:?} is not 8 bytes"))))
            .transpose()
    }

    /// Candidates within `k` of `q` among committed documents: `f(id, distance)`.
    fn probe(&self, st: &State, q: u64, k: u32, mut f: impl FnMut(u64, u32)) -> Result<()> {
        if let Some(t) = &st.tables {
            t.probe(q, k, |id, _, d| f(id, d));
            return Ok(());
        }
        let layout = &self.inner.layout;
        if layout.probes(k) > st.docs.len() as u64 {
            // Enumerating the ball would cost more than reading the table: scan it.
            for item in self.inner.rocks.iterator_cf(self.cf(&table_cf(0))?, IteratorMode::Start) {
                let (key, _) = item.map_err(self.rocks_err("scan table"))?;
                let (fp, id) = decode_table_key(layout, 0, &key)
                    .ok_or_else(|| Error::corrupt(&self.inner.rocks_path, None, format!("table t0 key {key:?} is not 16 bytes")))?;
                let d = hamming(fp, q);
                if d <= k && st.docs.contains_key(&id) {
                    f(id, d);
                }
            }
            return Ok(());
        }
        let plan = layout.plan(k);
        for (pos, &(i, r)) in plan.iter().enumerate() {
            let cf = self.cf(&table_cf(i))?;
            let w = layout.blocks()[i].width;
            let mut values = Vec::new();
            for_each_neighbor(layout.block(i, q), w, r, &mut |v| values.push(v));
            values.sort_unstable();
            let mut it = self.inner.rocks.raw_iterator_cf(cf);
            for v in values {
                it.seek((v << (64 - w)).to_be_bytes());
                while let Some(key) = it.key() {
                    let (fp, id) = decode_table_key(layout, i, key)
                        .ok_or_else(|| Error::corrupt(&self.inner.rocks_path, None, format!("table t{i} key {key:?} is not 16 bytes")))?;
                    if layout.block(i, fp) != v {
                        break;
                    }
                    let d = hamming(fp, q);
                    if d <= k && !layout.seen_earlier(&plan, pos, fp, q) && st.docs.contains_key(&id) {
                        f(id, d);
                    }
                    it.next();
                }
            }
            it.status().map_err(self.rocks_err("probe table"))?;
        }
        Ok(())
    }

    fn group_info(&self, st: &State, gid: u64) -> GroupInfo {
        GroupInfo {
            id: gid,
            canonical: st.docs.get(&gid).map(|d| d.key.to_string()).unwrap_or_default(),
            size: st.members.get(&gid).map_or(1, Vec::len),
        }
    }

    /// Near-duplicates of a document by its text.
    pub fn query(&self, text: &str, opts: &QueryOptions) -> Result<Vec<Hit>> {
        let fp = self.fingerprinter().fingerprint(text);
        self.query_fingerprint(&fp, opts)
    }

    /// Near-duplicates of a fingerprint (SimHash within k, then exact Jaccard ≥ t).
    pub fn query_fingerprint(&self, fp: &Fingerprint, opts: &QueryOptions) -> Result<Vec<Hit>> {
        let k = check_k(opts.max_distance.unwrap_or(self.inner.config.max_distance))?;
        let t = check_t(opts.min_jaccard.unwrap_or(self.inner.config.min_jaccard))?;
        let st = self.inner.state.read();
        let mut cands = Vec::new();
        self.probe(&st, fp.simhash, k, |id, d| cands.push((id, d)))?;
        let mut hits = Vec::new();
        self.verify(&st, fp, t, cands, &mut hits)?;
        sort_hits(&mut hits);
        hits.truncate(opts.limit.unwrap_or(usize::MAX));
        Ok(hits)
    }

    /// Documents whose SimHash is within k of `simhash` (no Jaccard: there is no shingle set to compare).
    pub fn query_simhash(&self, simhash: u64, opts: &QueryOptions) -> Result<Vec<Hit>> {
        let k = check_k(opts.max_distance.unwrap_or(self.inner.config.max_distance))?;
        let st = self.inner.state.read();
        let mut hits = Vec::new();
        self.probe(&st, simhash, k, |id, d| {
            if let Some(meta) = st.docs.get(&id) {
                hits.push(Hit {
                    key: meta.key.to_string(),
                    id,
                    hamming: d,
                    jaccard: None,
                    shared: None,
                    matched: MatchKind::Text,
                });
            }
        })?;
        sort_hits(&mut hits);
        hits.truncate(opts.limit.unwrap_or(usize::MAX));
        Ok(hits)
    }

    // metadata: the two metadata queries (paper 001) and the writer's helper.

    /// Live documents whose normalised DOI, or normalised title and year, equal `biblio`'s, with how
    /// they matched (DOI first; one entry per document).
    pub fn metadata_matches(&self, biblio: &Biblio) -> Result<Vec<(u64, MatchKind)>> {
        metadata::validate(biblio)?;
        let st = self.inner.state.read();
        let mut seen = HashSet::new();
        let found = metadata::lookup(
            &self.inner.rocks,
            self.inner.rocks.cf_handle(CF_META_IDX),
            biblio,
            &self.inner.rocks_path,
        )?;
        Ok(found
            .into_iter()
            .filter(|(id, _)| st.docs.contains_key(id) && seen.insert(*id))
            .collect())
    }

    /// Verified text near-duplicates of `text` unioned with exact metadata matches of `biblio`
    /// (paper 001's API): text hits first (best first), then metadata-only hits (DOI, then title +
    /// year), each saying how it matched; `opts.limit` caps the whole list. An empty text gives
    /// metadata matches only.
    pub fn check_duplicates(&self, text: &str, biblio: &Biblio, opts: &QueryOptions) -> Result<Vec<Hit>> {
        metadata::validate(biblio)?;
        let k = check_k(opts.max_distance.unwrap_or(self.inner.config.max_distance))?;
        let t = check_t(opts.min_jaccard.unwrap_or(self.inner.config.min_jaccard))?;
        let fp = self.fingerprinter().fingerprint(text);
        let st = self.inner.state.read();
        let mut hits = Vec::new();
        if !fp.shingles.is_empty() {
            let mut cands = Vec::new();
            self.probe(&st, fp.simhash, k, |id, d| cands.push((id, d)))?;
            self.verify(&st, &fp, t, cands, &mut hits)?;
            sort_hits(&mut hits);
        }
        let meta = self.meta_hits(&st, &Pending::default(), &fp, biblio, None, &hits)?;
        hits.extend(meta);
        hits.truncate(opts.limit.unwrap_or(usize::MAX));
        Ok(hits)
    }

    /// Exact metadata matches of `biblio` among the committed documents (live, not deleted in
    /// `pend`, not `exclude`, not already in `text_hits`) and the batch's live documents, DOI matches
    /// first; Hamming distance and Jaccard against `fp` are computed for information.
    fn meta_hits(
        &self,
        st: &State,
        pend: &Pending,
        fp: &Fingerprint,
        biblio: &Biblio,
        exclude: Option<u64>,
        text_hits: &[Hit],
    ) -> Result<Vec<Hit>> {
        let mut seen: HashSet<u64> = text_hits.iter().map(|h| h.id).collect();
        let mut hits = Vec::new();
        if biblio.is_empty() {
            return Ok(hits);
        }
        let found = metadata::lookup(
            &self.inner.rocks,
            self.inner.rocks.cf_handle(CF_META_IDX),
            biblio,
            &self.inner.rocks_path,
        )?;
        for (id, how) in found {
            if Some(id) == exclude || pend.deleted.contains(&id) || seen.contains(&id) {
                continue;
            }
            let Some(m) = st.docs.get(&id) else { continue };
            seen.insert(id);
            let sim = jaccard(&fp.shingles, &st.segs.read(m.loc, id)?);
            hits.push(Hit {
                key: m.key.to_string(),
                id,
                hamming: hamming(m.simhash, fp.simhash),
                jaccard: Some(sim.jaccard),
                shared: Some(sim.shared),
                matched: how,
            });
        }
        for p in pend
            .new_docs
            .iter()
            .filter(|p| p.alive && Some(p.id) != exclude && !seen.contains(&p.id))
        {
            if let Some(how) = metadata::matches(biblio, &p.biblio) {
                let sim = jaccard(&fp.shingles, &p.fp.shingles);
                hits.push(Hit {
                    key: p.key.clone(),
                    id: p.id,
                    hamming: hamming(p.fp.simhash, fp.simhash),
                    jaccard: Some(sim.jaccard),
                    shared: Some(sim.shared),
                    matched: how,
                });
            }
        }
        hits.sort_by_key(|h| (h.matched, h.id));
        Ok(hits)
    }

    /// The stored document with this key.
    pub fn get(&self, key: &str) -> Result<Option<Document>> {
        let st = self.inner.state.read();
        let Some(id) = self.committed_id(key)? else { return Ok(None) };
        let Some(record) = self.read_record(id)? else {
            return Err(Error::corrupt(
                &self.inner.rocks_path,
                Some(id),
                format!("key {key:?} points at doc {id}, which has no record"),
            ));
        };
        let group = self.group_info(&st, record.group);
        Ok(Some(Document { id, record, group }))
    }

    /// The shingle set of a stored document.
    pub fn shingles(&self, id: u64) -> Result<Option<Vec<u32>>> {
        let st = self.inner.state.read();
        match st.docs.get(&id) {
            Some(m) => Ok(Some(st.segs.read(m.loc, id)?.into_owned())),
            None => Ok(None),
        }
    }

    /// Keys of the members of a group (sorted by doc id).
    pub fn group_members(&self, gid: u64) -> Vec<(u64, String)> {
        let st = self.inner.state.read();
        let ids = st
            .members
            .get(&gid)
            .cloned()
            .unwrap_or_else(|| if st.docs.contains_key(&gid) { vec![gid] } else { vec![] });
        ids.into_iter()
            .filter_map(|id| st.docs.get(&id).map(|m| (id, m.key.to_string())))
            .collect()
    }

    /// Every live document's `(id, simhash, group)`, sorted by id.
    pub fn fingerprints(&self) -> Vec<(u64, u64, u64)> {
        let st = self.inner.state.read();
        let mut v: Vec<(u64, u64, u64)> = st.docs.iter().map(|(&id, m)| (id, m.simhash, m.group)).collect();
        v.sort_unstable();
        v
    }

    /// Key of a live document.
    pub fn key_of(&self, id: u64) -> Option<String> {
        self.inner.state.read().docs.get(&id).map(|m| m.key.to_string())
    }

    /// Calls `f` for every live document (id order) with its record; stops at the first error.
    pub fn for_each_doc(&self, mut f: impl FnMut(u64, &DocRecord) -> Result<()>) -> Result<()> {
        for item in self.inner.rocks.iterator_cf(self.cf(CF_DOCS)?, IteratorMode::Start) {
            let (k, v) = item.map_err(self.rocks_err("scan docs"))?;
            let id = be_u64(&k).ok_or_else(|| Error::corrupt(&self.inner.rocks_path, None, "doc key is not 8 bytes"))?;
            f(id, &record::decode(&v, "doc record", &self.inner.rocks_path, Some(id))?)?;
        }
        Ok(())
    }

    /// Deletes the document with this key; returns whether it existed.
    pub fn delete(&self, key: &str) -> Result<bool> {
        self.writable()?;
        let mut w = self.inner.writer.lock();
        if let Some(p) = &w.poisoned {
            return Err(Error::Poisoned { cause: p.clone() });
        }
        let Some(id) = self.committed_id(key)? else { return Ok(false) };
        let mut pend = Pending::default();
        {
            let st = self.inner.state.read();
            self.remove_doc(&st, &mut w, &mut pend, id)?;
        }
        pend.deleted_keys.push(key.to_string());
        self.commit(&mut w, pend, Vec::new())?;
        Ok(true)
    }

    fn writable(&self) -> Result<()> {
        if self.inner.opts.read_only {
            Err(Error::ReadOnly {
                path: self.inner.path.clone(),
            })
        } else {
            Ok(())
        }
    }

    /// Inserts a batch with one group commit (one segment fsync, one WAL sync). Entries that are
    /// already errors (from [`Db::prepare`]) are passed through. Documents see the earlier documents of
    /// the same batch. Returns one result per entry, in order; `Err` for the whole call means the batch
    /// was not committed (and the handle may be poisoned).
    pub fn commit_batch(&self, docs: Vec<Result<PreparedDoc>>, dedup: Dedup) -> Result<Vec<Result<InsertOutcome>>> {
        self.commit_prechecked(docs.into_iter().map(|d| d.map(|d| (d, None))).collect(), dedup)
    }

    /// Verifies the duplicates of `doc` against the documents committed so far, without the writer:
    /// the ingestion workers call this in parallel; [`Db::commit_prechecked`] completes it.
    pub fn precheck(&self, doc: &PreparedDoc) -> Result<Precheck> {
        let st = self.inner.state.read();
        let dups = self.find_dups(
            &st,
            &Pending::default(),
            &doc.fp,
            self.inner.config.max_distance,
            self.inner.config.min_jaccard,
            None,
        )?;
        Ok(Precheck { upto: st.next_id, dups })
    }

    /// [`Db::commit_batch`] for documents that may carry a [`Precheck`].
    pub fn commit_prechecked(
        &self,
        docs: Vec<Result<(PreparedDoc, Option<Precheck>)>>,
        dedup: Dedup,
    ) -> Result<Vec<Result<InsertOutcome>>> {
        self.writable()?;
        let mut w = self.inner.writer.lock();
        if let Some(p) = &w.poisoned {
            return Err(Error::Poisoned { cause: p.clone() });
        }
        let k = self.inner.config.max_distance;
        let t = self.inner.config.min_jaccard;
        let mut pend = Pending::default();
        let mut results: Vec<Result<InsertOutcome>> = Vec::with_capacity(docs.len());
        {
            let st = self.inner.state.read();
            for doc in docs {
                let (doc, pre) = match doc {
                    Ok(d) => d,
                    Err(e) => {
                        results.push(Err(e));
                        continue;
                    }
                };
                let old = match pend.keys.get(&doc.key) {
                    Some(&id) => Some(id),
                    None => self.committed_id(&doc.key)?.filter(|id| !pend.deleted.contains(id)),
                };
                let dups = if dedup == Dedup::Off {
                    Vec::new()
                } else {
                    let found = match pre {
                        Some(pre) => self.finish_precheck(&st, &pend, &doc.fp, k, t, old, pre),
                        None => self.find_dups(&st, &pend, &doc.fp, k, t, old),
                    };
                    match found {
                        Ok(d) => d,
                        Err(e) => {
                            results.push(Err(e));
                            continue;
                        }
                    }
                };
                // metadata: exact metadata matches are reported beside the text matches, never linked.
                let meta = if dedup == Dedup::Off || doc.biblio.is_empty() {
                    Vec::new()
                } else {
                    match self.meta_hits(&st, &pend, &doc.fp, &doc.biblio, old, &dups) {
                        Ok(m) => m,
                        Err(e) => {
                            results.push(Err(e));
                            continue;
                        }
                    }
                };
                if dedup == Dedup::Skip && !dups.is_empty() {
                    results.push(Ok(InsertOutcome {
                        key: doc.key,
                        id: None,
                        replaced: None,
                        duplicates: dups.into_iter().chain(meta).collect(), // metadata: + meta
                        group: None,
                    }));
                    continue;
                }
                if let Some(old) = old {
                    if let Err(e) = self.remove_doc(&st, &mut w, &mut pend, old) {
                        Self::poison(&mut w, &e);
                        return Err(e);
                    }
                }
                let id = w.next_id;
                w.next_id += 1;
                // Join the groups of all duplicates; the canonical is the earliest member.
                let mut gids: Vec<u64> = dups.iter().map(|h| pend.group_of(&st, h.id)).collect();
                gids.sort_unstable();
                gids.dedup();
                let gid = gids.first().copied().unwrap_or(id).min(id);
                let mut merged = vec![id];
                for &g in &gids {
                    match w.members.remove(&g) {
                        Some(m) => merged.extend(m),
                        None => merged.push(g),
                    }
                }
                merged.sort_unstable();
                merged.dedup();
                for &m in &merged {
                    if m != id && pend.group_of(&st, m) != gid {
                        pend.set_group(m, gid);
                    }
                }
                for h in &dups {
                    w.edges.entry(id).or_default().push(h.id);
                    w.edges.entry(h.id).or_default().push(id);
                    pend.edges_added.push((id, h.id));
                }
                let size = merged.len();
                if size > 1 {
                    w.members.insert(gid, merged);
                }
                pend.touched_groups.extend(gids.iter().copied().chain([gid]));
                let canonical = if gid == id { doc.key.clone() } else { pend.key_of(&st, gid) };
                pend.keys.insert(doc.key.clone(), id);
                pend.new_docs.push(PendingDoc {
                    id,
                    key: doc.key.clone(),
                    fp: doc.fp,
                    meta: doc.meta,
                    biblio: doc.biblio, // metadata:
                    group: gid,
                    alive: true,
                });
                results.push(Ok(InsertOutcome {
                    key: doc.key,
                    id: Some(id),
                    replaced: old,
                    duplicates: dups.into_iter().chain(meta).collect(), // metadata: + meta
                    group: Some(GroupInfo { id: gid, canonical, size }),
                }));
            }
        }
        self.commit(&mut w, pend, Vec::new())?;
        Ok(results)
    }

    /// Verified duplicates of `fp` among committed docs (minus those deleted in `pend` and `exclude`)
    /// and the live docs of the batch so far.
    fn find_dups(&self, st: &State, pend: &Pending, fp: &Fingerprint, k: u32, t: f64, exclude: Option<u64>) -> Result<Vec<Hit>> {
        let mut cands = Vec::new();
        self.probe(st, fp.simhash, k, |id, d| {
            if Some(id) != exclude && !pend.deleted.contains(&id) {
                cands.push((id, d));
            }
        })?;
        let mut hits = Vec::new();
        self.verify(st, fp, t, cands, &mut hits)?;
        self.pending_dups(pend, fp, k, t, exclude, &mut hits);
        sort_hits(&mut hits);
        Ok(hits)
    }

    /// Verifies committed candidates `(id, distance)` by exact Jaccard ≥ t (size filter from the
    /// stored count first, then the segment read) and appends the hits.
    fn verify(&self, st: &State, fp: &Fingerprint, t: f64, cands: impl IntoIterator<Item = (u64, u32)>, hits: &mut Vec<Hit>) -> Result<()> {
        for (id, d) in cands {
            let Some(meta) = st.docs.get(&id) else { continue };
            if !size_compatible(fp.shingles.len(), meta.loc.count, t) {
                continue;
            }
            if let Some(sim) = jaccard_at_least(&fp.shingles, &st.segs.read(meta.loc, id)?, t) {
                hits.push(Hit {
                    key: meta.key.to_string(),
                    id,
                    hamming: d,
                    jaccard: Some(sim.jaccard),
                    shared: Some(sim.shared),
                    matched: MatchKind::Text,
                });
            }
        }
        Ok(())
    }

    /// Completes a worker's [`Precheck`]: drops hits deleted since (or `exclude`), adds documents
    /// committed after the worker's snapshot and those of this batch. Falls back to a full search when
    /// the snapshot is older than [`State::recent`] reaches.
    #[allow(clippy::too_many_arguments)]
    fn finish_precheck(
        &self,
        st: &State,
        pend: &Pending,
        fp: &Fingerprint,
        k: u32,
        t: f64,
        exclude: Option<u64>,
        pre: Precheck,
    ) -> Result<Vec<Hit>> {
        if pre.upto < st.recent_floor {
            return self.find_dups(st, pend, fp, k, t, exclude);
        }
        let mut hits: Vec<Hit> = pre
            .dups
            .into_iter()
            .filter(|h| Some(h.id) != exclude && !pend.deleted.contains(&h.id) && st.docs.contains_key(&h.id))
            .collect();
        let start = st.recent.partition_point(|&(id, _)| id < pre.upto);
        let gap = st
            .recent
            .range(start..)
            .map(|&(id, sh)| (id, hamming(sh, fp.simhash)))
            .filter(|&(id, d)| d <= k && Some(id) != exclude && !pend.deleted.contains(&id));
        self.verify(st, fp, t, gap, &mut hits)?;
        self.pending_dups(pend, fp, k, t, exclude, &mut hits);
        sort_hits(&mut hits);
        Ok(hits)
    }

    fn pending_dups(&self, pend: &Pending, fp: &Fingerprint, k: u32, t: f64, exclude: Option<u64>, hits: &mut Vec<Hit>) {
        for p in pend.new_docs.iter().filter(|p| p.alive && Some(p.id) != exclude) {
            let d = hamming(p.fp.simhash, fp.simhash);
            if d <= k {
                if let Some(sim) = jaccard_at_least(&fp.shingles, &p.fp.shingles, t) {
                    hits.push(Hit {
                        key: p.key.clone(),
                        id: p.id,
                        hamming: d,
                        jaccard: Some(sim.jaccard),
                        shared: Some(sim.shared),
                        matched: MatchKind::Text,
                    });
                }
            }
        }
    }

    /// Removes doc `id` (committed or earlier in this batch): its edges, and splits its group.
    fn remove_doc(&self, st: &State, w: &mut Writer, pend: &mut Pending, id: u64) -> Result<()> {
        let gid = pend.group_of(st, id);
        if let Some(p) = pend.new_docs.iter_mut().find(|p| p.id == id && p.alive) {
            p.alive = false;
            pend.keys.remove(&p.key);
        } else {
            pend.deleted.insert(id);
            if let Some(m) = st.docs.get(&id) {
                pend.deleted_keys.push(m.key.to_string());
            }
        }
        for y in w.edges.remove(&id).unwrap_or_default() {
            if let Some(v) = w.edges.get_mut(&y) {
                v.retain(|&x| x != id);
                if v.is_empty() {
                    w.edges.remove(&y);
                }
            }
            pend.edges_removed.push((id, y));
        }
        pend.touched_groups.insert(gid);
        if let Some(mut members) = w.members.remove(&gid) {
            members.retain(|&x| x != id);
            for comp in components(&members, &w.edges) {
                let new_gid = comp[0];
                for &m in &comp {
                    if pend.group_of(st, m) != new_gid {
                        pend.set_group(m, new_gid);
                    }
                }
                pend.touched_groups.insert(new_gid);
                if comp.len() > 1 {
                    w.members.insert(new_gid, comp);
                }
            }
        }
        Ok(())
    }

    /// Writes segment bytes, then one RocksDB batch, then publishes the batch to readers.
    fn commit(&self, w: &mut Writer, pend: Pending, moved: Vec<(u64, ShingleLoc)>) -> Result<()> {
        let result = self.commit_inner(w, pend, moved);
        if let Err(e) = &result {
            Self::poison(w, e);
        }
        result
    }

    fn commit_inner(&self, w: &mut Writer, mut pend: Pending, moved: Vec<(u64, ShingleLoc)>) -> Result<()> {
        pend.new_docs.retain(|p| p.alive);
        let segments_change = !(pend.seg_created.is_empty() && pend.seg_lengths.is_empty() && pend.seg_dropped.is_empty());
        if pend.new_docs.is_empty() && pend.deleted.is_empty() && pend.regroup.is_empty() && moved.is_empty() && !segments_change {
            return Ok(());
        }
        let records: Vec<(u64, &[u32])> = pend.new_docs.iter().map(|p| (p.id, p.fp.shingles.as_slice())).collect();
        let appended = w.segw.append(&records)?;
        let layout = &self.inner.layout;
        let mut b = WriteBatch::default();
        let (docs_cf, keys_cf, edges_cf, meta_cf) = (self.cf(CF_DOCS)?, self.cf(CF_KEYS)?, self.cf(CF_EDGES)?, self.cf(CF_META)?);
        let meta_idx_cf = self.cf(CF_META_IDX)?; // metadata:
        let tcfs: Vec<&rocksdb::ColumnFamily> = (0..layout.tables() as usize)
            .map(|i| self.cf(&table_cf(i)))
            .collect::<Result<_>>()?;
        let st = self.inner.state.read();
        let mut tdel: Vec<Vec<[u8; 16]>> = vec![Vec::new(); tcfs.len()];
        let mut tput: Vec<Vec<[u8; 16]>> = vec![Vec::with_capacity(pend.new_docs.len()); tcfs.len()];
        let mut kput: Vec<(&[u8], [u8; 8])> = Vec::with_capacity(pend.new_docs.len());
        for &id in &pend.deleted {
            let Some(m) = st.docs.get(&id) else {
                // A damaged record (left out at open): remove it and whatever index entries name it.
                b.delete_cf(docs_cf, id.to_be_bytes());
                for (i, cf) in tcfs.iter().enumerate() {
                    for item in self.inner.rocks.iterator_cf(*cf, IteratorMode::Start) {
                        let (k, _) = item.map_err(self.rocks_err("scan table"))?;
                        if decode_table_key(layout, i, &k).is_some_and(|(_, d)| d == id) {
                            b.delete_cf(*cf, k);
                        }
                    }
                }
                // metadata: and its metadata index entries.
                for item in self.inner.rocks.iterator_cf(meta_idx_cf, IteratorMode::Start) {
                    let (k, _) = item.map_err(self.rocks_err("scan meta_idx"))?;
                    if metadata::decode_index_key(&k).is_some_and(|(_, _, d)| d == id) {
                        b.delete_cf(meta_idx_cf, k);
                    }
                }
                continue;
            };
            // metadata: the deleted (or replaced) document's index entries go in the same batch.
            if let Some(r) = self.read_record(id)? {
                for k in metadata::index_keys(&r.biblio, id) {
                    b.delete_cf(meta_idx_cf, k);
                }
            }
            b.delete_cf(docs_cf, id.to_be_bytes());
            b.delete_cf(keys_cf, m.key.as_bytes());
            for (i, t) in tdel.iter_mut().enumerate() {
                t.push(table_key(layout, i, m.simhash, id));
            }
        }
        for k in &pend.deleted_keys {
            b.delete_cf(keys_cf, k.as_bytes());
        }
        // Keys are added to each column family in sorted order: RocksDB's memtable skiplist then
        // reuses its insertion splice instead of recomputing it for every random key (measured: the
        // largest single cost of a batch before this).
        for (t, cf) in tdel.iter_mut().zip(&tcfs) {
            t.sort_unstable();
            for key in t.iter() {
                b.delete_cf(*cf, key);
            }
        }
        for &(a, c) in &pend.edges_removed {
            b.delete_cf(edges_cf, edge_key(a, c));
            b.delete_cf(edges_cf, edge_key(c, a));
        }
        let now = now_ms();
        for (p, loc) in pend.new_docs.iter().zip(&appended.locs) {
            let rec = DocRecord {
                key: p.key.clone(),
                simhash: p.fp.simhash,
                segment: loc.segment,
                offset: loc.offset,
                count: loc.count,
                group: pend.regroup.get(&p.id).copied().unwrap_or(p.group),
                inserted_at_ms: now,
                meta: p.meta.clone(),
                biblio: p.biblio.clone(), // metadata:
            };
            b.put_cf(docs_cf, p.id.to_be_bytes(), record::encode(&rec));
            for k in metadata::index_keys(&p.biblio, p.id) {
                b.put_cf(meta_idx_cf, k, []); // metadata: the new document's index entries
            }
            kput.push((p.key.as_bytes(), p.id.to_be_bytes()));
            for (i, t) in tput.iter_mut().enumerate() {
                t.push(table_key(layout, i, p.fp.simhash, p.id));
            }
        }
        kput.sort_unstable();
        for (k, v) in &kput {
            b.put_cf(keys_cf, k, v);
        }
        for (t, cf) in tput.iter_mut().zip(&tcfs) {
            t.sort_unstable();
            for key in t.iter() {
                b.put_cf(*cf, key, []);
            }
        }
        let new_ids: HashSet<u64> = pend.new_docs.iter().map(|p| p.id).collect();
        let is_new = |id: u64| new_ids.contains(&id);
        // Alive at the end of the batch: committed and not deleted, or new and not replaced since.
        let alive = |id: u64| is_new(id) || (st.docs.contains_key(&id) && !pend.deleted.contains(&id));
        for &(a, c) in &pend.edges_added {
            if alive(a) && alive(c) {
                b.put_cf(edges_cf, edge_key(a, c), []);
                b.put_cf(edges_cf, edge_key(c, a), []);
            }
        }
        // Committed docs whose group or location changed: rewrite their records.
        let mut rewrite: IntMap<u64, DocRecord> = IntMap::default();
        for (&id, &g) in &pend.regroup {
            if is_new(id) || pend.deleted.contains(&id) || !st.docs.contains_key(&id) {
                continue;
            }
            let mut r = self
                .read_record(id)?
                .ok_or_else(|| Error::corrupt(&self.inner.rocks_path, Some(id), "live doc has no record"))?;
            r.group = g;
            rewrite.insert(id, r);
        }
        for &(id, loc) in &moved {
            let r = match rewrite.get_mut(&id) {
                Some(r) => r,
                None => {
                    let r = self
                        .read_record(id)?
                        .ok_or_else(|| Error::corrupt(&self.inner.rocks_path, Some(id), "live doc has no record"))?;
                    rewrite.entry(id).or_insert(r)
                }
            };
            r.segment = loc.segment;
            r.offset = loc.offset;
            r.count = loc.count;
        }
        for (id, r) in &rewrite {
            b.put_cf(docs_cf, id.to_be_bytes(), record::encode(r));
        }
        for &(seg, len) in &appended.lengths {
            b.put_cf(meta_cf, seg_key(seg), len.to_le_bytes());
        }
        for &(seg, len) in &pend.seg_lengths {
            b.put_cf(meta_cf, seg_key(seg), len.to_le_bytes());
        }
        for &seg in &pend.seg_dropped {
            b.delete_cf(meta_cf, seg_key(seg));
        }
        b.put_cf(meta_cf, b"next_doc", w.next_id.to_le_bytes());
        drop(st);
        let mut wo = WriteOptions::default();
        wo.set_sync(self.inner.opts.sync);
        failpoint!("wal.write");
        self.inner.rocks.write_opt(b, &wo).map_err(self.rocks_err("commit batch"))?;
        failpoint!("batch.commit");

        // Committed: open new segments, then publish to readers.
        let mut new_readers = Vec::new();
        for &id in appended.created.iter().chain(pend.seg_created.iter()) {
            new_readers.push(w.segw.reader(id, Some(id) != w.segw.active())?);
        }
        let mut resealed = Vec::new();
        for &id in &appended.sealed {
            resealed.push(w.segw.reader(id, true)?);
        }
        let mut st = self.inner.state.write();
        for r in new_readers.into_iter().chain(resealed) {
            st.segs.insert(r);
        }
        for &(seg, len) in appended.lengths.iter().chain(&pend.seg_lengths) {
            st.seg_usage.entry(seg).or_insert((0, 0)).0 = len;
        }
        for id in &pend.deleted {
            if let Some(m) = st.docs.remove(id) {
                if let Some(t) = st.tables.as_mut() {
                    t.remove(m.simhash, *id);
                }
                if let Some(u) = st.seg_usage.get_mut(&m.loc.segment) {
                    u.1 = u.1.saturating_sub(m.loc.record_len());
                }
            }
        }
        for (p, loc) in pend.new_docs.into_iter().zip(appended.locs) {
            if let Some(t) = st.tables.as_mut() {
                t.insert(p.fp.simhash, p.id);
            }
            st.recent.push_back((p.id, p.fp.simhash));
            if let Some(u) = st.seg_usage.get_mut(&loc.segment) {
                u.1 += loc.record_len();
            }
            let group = pend.regroup.get(&p.id).copied().unwrap_or(p.group);
            st.docs.insert(
                p.id,
                DocMeta {
                    key: p.key.into_boxed_str(),
                    simhash: p.fp.simhash,
                    loc,
                    group,
                },
            );
        }
        for (id, g) in pend.regroup {
            if let Some(m) = st.docs.get_mut(&id) {
                m.group = g;
            }
        }
        for (id, loc) in moved {
            let st = &mut *st;
            if let Some(m) = st.docs.get_mut(&id) {
                if let Some(u) = st.seg_usage.get_mut(&m.loc.segment) {
                    u.1 = u.1.saturating_sub(m.loc.record_len());
                }
                m.loc = loc;
            }
            if let Some(u) = st.seg_usage.get_mut(&loc.segment) {
                u.1 += loc.record_len();
            }
        }
        for seg in &pend.seg_dropped {
            st.segs.remove(*seg);
            st.seg_usage.remove(seg);
        }
        st.next_id = w.next_id;
        while st.recent.len() > RECENT_CAP {
            st.recent.pop_front();
            st.recent_floor = st.recent.front().map_or(st.next_id, |r| r.0);
        }
        for g in pend.touched_groups {
            match w.members.get(&g) {
                Some(m) => st.members.insert(g, m.clone()),
                None => st.members.remove(&g),
            };
        }
        Ok(())
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        let st = self.inner.state.read();
        Stats {
            docs: st.docs.len() as u64,
            groups: st.members.len() as u64,
            grouped_docs: st.members.values().map(|m| m.len() as u64).sum(),
            segments: st.seg_usage.len() as u64,
            segment_bytes: st.seg_usage.values().map(|u| u.0).sum(),
            live_bytes: st.seg_usage.values().map(|u| u.1).sum(),
            tables: self.inner.config.tables,
            max_distance: self.inner.config.max_distance,
            min_jaccard: self.inner.config.min_jaccard,
            spec: self.inner.spec.to_string(),
        }
    }

    /// Verifies every doc record, shingle record (magic, id, count, checksum), key entry, table entry
    /// and edge, and that index and records agree. Never modifies anything.
    pub fn check(&self) -> Result<CheckReport> {
        let st = self.inner.state.read();
        let rp = self.inner.rocks_path.display().to_string();
        let mut rep = CheckReport::default();
        let mut fault = |doc: Option<u64>, key: Option<String>, path: String, what: String| rep.faults.push(Fault { doc, key, path, what });
        let layout = &self.inner.layout;
        let mut records: IntMap<u64, DocRecord> = IntMap::default();
        for item in self.inner.rocks.iterator_cf(self.cf(CF_DOCS)?, IteratorMode::Start) {
            let (k, v) = item.map_err(self.rocks_err("scan docs"))?;
            let Some(id) = be_u64(&k) else {
                fault(None, None, rp.clone(), format!("doc key {k:?} is not 8 bytes"));
                continue;
            };
            match record::decode::<DocRecord>(&v, "doc record", &self.inner.rocks_path, Some(id)) {
                Ok(r) => {
                    records.insert(id, r);
                }
                Err(e) => fault(Some(id), None, rp.clone(), e.to_string()),
            }
        }
        let mut ids: Vec<u64> = records.keys().copied().collect();
        ids.sort_unstable();
        for &id in &ids {
            let r = &records[&id];
            let seg_path = st
                .segs
                .path(r.segment)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| segment::file_name(r.segment));
            match st.seg_usage.get(&r.segment) {
                Some(&(len, _)) if r.offset + r.loc().record_len() <= len => match st.segs.read(r.loc(), id) {
                    Ok(set) => {
                        if set.len() != r.count as usize {
                            fault(
                                Some(id),
                                Some(r.key.clone()),
                                seg_path,
                                "shingle count differs from the record".into(),
                            );
                        }
                    }
                    Err(e) => fault(Some(id), Some(r.key.clone()), seg_path, e.to_string()),
                },
                Some(&(len, _)) => fault(
                    Some(id),
                    Some(r.key.clone()),
                    seg_path,
                    format!(
                        "record at {}+{} runs past the committed length {len}",
                        r.offset,
                        r.loc().record_len()
                    ),
                ),
                None => fault(
                    Some(id),
                    Some(r.key.clone()),
                    seg_path,
                    format!("segment {} is not committed", r.segment),
                ),
            }
            match self.committed_id(&r.key) {
                Ok(Some(kid)) if kid == id => {}
                Ok(other) => fault(
                    Some(id),
                    Some(r.key.clone()),
                    rp.clone(),
                    format!("keys entry points at {other:?}, expected {id}"),
                ),
                Err(e) => fault(Some(id), Some(r.key.clone()), rp.clone(), e.to_string()),
            }
            if !records.contains_key(&r.group) || records[&r.group].group != r.group || r.group > id {
                fault(
                    Some(id),
                    Some(r.key.clone()),
                    rp.clone(),
                    format!("group {} is not a live canonical member at or before this doc", r.group),
                );
            }
            match st.docs.get(&id) {
                Some(m) if m.simhash == r.simhash && m.loc == r.loc() && m.group == r.group => {}
                _ => fault(
                    Some(id),
                    Some(r.key.clone()),
                    rp.clone(),
                    "in-memory state differs from the record".into(),
                ),
            }
        }
        rep.docs = ids.len() as u64;
        // metadata: the metadata index agrees with the records.
        let biblio_of = |id: u64| records.get(&id).map(|r| r.biblio.clone());
        for (doc, what) in metadata::check_index(
            &self.inner.rocks,
            self.inner.rocks.cf_handle(CF_META_IDX),
            &ids,
            biblio_of,
            &self.inner.rocks_path,
        )? {
            fault(doc, None, rp.clone(), what);
        }
        let mut keys = 0u64;
        for item in self.inner.rocks.iterator_cf(self.cf(CF_KEYS)?, IteratorMode::Start) {
            let (k, v) = item.map_err(self.rocks_err("scan keys"))?;
            keys += 1;
            let matches = be_u64(&v).is_some_and(|id| records.get(&id).is_some_and(|r| r.key.as_bytes() == &k[..]));
            if !matches {
                fault(
                    None,
                    Some(String::from_utf8_lossy(&k).into_owned()),
                    rp.clone(),
                    "keys entry without a matching doc".into(),
                );
            }
        }
        if keys != rep.docs {
            fault(None, None, rp.clone(), format!("{keys} key entries for {} docs", rep.docs));
        }
        for i in 0..layout.tables() as usize {
            let mut n = 0u64;
            for item in self.inner.rocks.iterator_cf(self.cf(&table_cf(i))?, IteratorMode::Start) {
                let (k, _) = item.map_err(self.rocks_err("scan table"))?;
                n += 1;
                match decode_table_key(layout, i, &k) {
                    Some((fp, id)) if records.get(&id).is_some_and(|r| r.simhash == fp) => {}
                    Some((_, id)) => fault(Some(id), None, rp.clone(), format!("table t{i} entry without a matching doc")),
                    None => fault(None, None, rp.clone(), format!("table t{i} key {k:?} is not 16 bytes")),
                }
            }
            rep.table_entries += n;
            if n != rep.docs {
                fault(None, None, rp.clone(), format!("table t{i} has {n} entries for {} docs", rep.docs));
            }
        }
        for item in self.inner.rocks.iterator_cf(self.cf(CF_EDGES)?, IteratorMode::Start) {
            let (k, _) = item.map_err(self.rocks_err("scan edges"))?;
            match (k.get(..8).and_then(be_u64), k.get(8..).and_then(be_u64)) {
                (Some(a), Some(c)) if records.contains_key(&a) && records.contains_key(&c) && records[&a].group == records[&c].group => {}
                _ => fault(
                    None,
                    None,
                    rp.clone(),
                    format!("edge {k:?} links missing docs or docs of different groups"),
                ),
            }
        }
        Ok(rep)
    }

    /// Rewrites segments whose dead share is at least `min_dead` (0.0..=1.0) and reclaims their bytes.
    pub fn compact(&self, min_dead: f64) -> Result<CompactStats> {
        self.writable()?;
        let mut w = self.inner.writer.lock();
        if let Some(p) = &w.poisoned {
            return Err(Error::Poisoned { cause: p.clone() });
        }
        let mut stats = CompactStats::default();
        let (victims, moved_records) = {
            let st = self.inner.state.read();
            let mut victims: Vec<u32> = st
                .seg_usage
                .iter()
                .filter(|(_, &(len, live))| {
                    let data = len.saturating_sub(segment::FILE_HEADER);
                    data > 0 && (data - live.min(data)) as f64 >= min_dead * data as f64 && live < data
                })
                .map(|(&id, _)| id)
                .collect();
            victims.sort_unstable();
            let mut recs: Vec<(u64, Vec<u32>)> = Vec::new();
            let mut ids: Vec<(u64, ShingleLoc)> = st
                .docs
                .iter()
                .filter(|(_, m)| victims.contains(&m.loc.segment))
                .map(|(&id, m)| (id, m.loc))
                .collect();
            ids.sort_unstable_by_key(|&(id, _)| id);
            for (id, loc) in ids {
                recs.push((id, st.segs.read(loc, id)?.into_owned()));
            }
            for v in &victims {
                let (len, live) = st.seg_usage[v];
                stats.bytes_reclaimed += len - live - segment::FILE_HEADER.min(len - live);
            }
            (victims, recs)
        };
        if victims.is_empty() {
            return Ok(stats);
        }
        if victims.iter().any(|&v| Some(v) == w.segw.active()) {
            w.segw.seal_active();
        }
        let mut pend = Pending::default();
        let mut moved = Vec::new();
        if !moved_records.is_empty() {
            let refs: Vec<(u64, &[u32])> = moved_records.iter().map(|(id, s)| (*id, s.as_slice())).collect();
            let written = w.segw.write_compacted(&refs);
            let (seg, locs, len) = match written {
                Ok(x) => x,
                Err(e) => {
                    Self::poison(&mut w, &e);
                    return Err(e);
                }
            };
            pend.seg_created.push(seg);
            pend.seg_lengths.push((seg, len));
            moved = moved_records.iter().map(|(id, _)| *id).zip(locs).collect();
        }
        pend.seg_dropped = victims.clone();
        stats.records_moved = moved.len() as u64;
        stats.segments_rewritten = victims.len() as u64;
        self.commit(&mut w, pend, moved)?;
        let dir = self.inner.path.join("segments");
        for v in victims {
            let p = dir.join(segment::file_name(v));
            match fs::remove_file(&p) {
                Ok(()) => {}
                // Already gone: the unlink is idempotent (its committed length is dropped either way).
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("remove compacted segment", &p, e)),
            }
        }
        Ok(stats)
    }

    /// Flushes RocksDB memtables to SST files (optional; the WAL already makes commits durable).
    pub fn flush(&self) -> Result<()> {
        for name in cf_names(self.inner.config.tables) {
            self.inner.rocks.flush_cf(self.cf(&name)?).map_err(self.rocks_err("flush"))?;
        }
        Ok(())
    }

    /// Flushes and fully compacts every RocksDB column family, then returns: the settled state a
    /// long-running database reaches (for benchmarks, and after bulk loads).
    pub fn compact_index(&self) -> Result<()> {
        self.flush()?;
        for name in cf_names(self.inner.config.tables) {
            self.inner.rocks.compact_range_cf(self.cf(&name)?, None::<&[u8]>, None::<&[u8]>);
        }
        Ok(())
    }

    /// Exact Jaccard between two stored documents (for tools and tests).
    pub fn jaccard_between(&self, a: u64, b: u64) -> Result<Option<f64>> {
        let st = self.inner.state.read();
        match (st.docs.get(&a), st.docs.get(&b)) {
            (Some(ma), Some(mb)) => Ok(Some(jaccard(&st.segs.read(ma.loc, a)?, &st.segs.read(mb.loc, b)?).jaccard)),
            _ => Ok(None),
        }
    }
}

struct PendingDoc {
    id: u64,
    key: String,
    fp: Fingerprint,
    meta: Option<String>,
    biblio: Biblio, // metadata:
    group: u64,
    alive: bool,
}

/// One batch's changes before they are committed.
#[derive(Default)]
struct Pending {
    new_docs: Vec<PendingDoc>,
    keys: HashMap<String, u64>,
    deleted: HashSet<u64>,
    deleted_keys: Vec<String>,
    regroup: IntMap<u64, u64>,
    edges_added: Vec<(u64, u64)>,
    edges_removed: Vec<(u64, u64)>,
    touched_groups: HashSet<u64>,
    seg_created: Vec<u32>,
    seg_lengths: Vec<(u32, u64)>,
    seg_dropped: Vec<u32>,
}

impl Pending {
    fn group_of(&self, st: &State, id: u64) -> u64 {
        if let Some(&g) = self.regroup.get(&id) {
            return g;
        }
        if let Some(p) = self.new_docs.iter().find(|p| p.id == id) {
            return p.group;
        }
        st.docs.get(&id).map_or(id, |m| m.group)
    }

    fn set_group(&mut self, id: u64, g: u64) {
        self.regroup.insert(id, g);
    }

    fn key_of(&self, st: &State, id: u64) -> String {
        match self.new_docs.iter().find(|p| p.id == id) {
            Some(p) => p.key.clone(),
            None => st.docs.get(&id).map(|m| m.key.to_string()).unwrap_or_default(),
        }
    }
}
