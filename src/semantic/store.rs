//! The channel's durable state in the database's RocksDB: its column family, its cursor and its spec
//! in `meta`. Writes go into the caller's `WriteBatch` (so vectors and cursor land atomically, and
//! a delete of a document deletes its vector in the document's own batch); reads load it back.
//!
//! | CF         | key                      | value                                                  |
//! |------------|--------------------------|--------------------------------------------------------|
//! | `semantic` | doc id, u64 big-endian   | the vector record ([`super::vector::encode`])           |
//! | `meta`     | `semantic_cursor`        | u64 LE: every live doc with id < cursor has a vector,  |
//! |            |                          | none with id ≥ cursor has one (absent = 0)             |
//! | `meta`     | `semantic_spec`          | the [`SemanticSpec`] as JSON (model identity, etc.)    |
//! | `semantic_queue` | doc id, u64 big-endian | what is to be embedded ([`super::config::embed_text`]), as [`super::queue::encode`] writes it; |
//! |            |                          | written in the document's own batch, deleted with it or when |
//! |            |                          | the indexer's batch moves the cursor past it           |
//! | `meta`     | `semantic_floor`         | u64 LE: documents below it were stored before the channel |
//! |            |                          | was added and get a vector only from a backfill of their  |
//! |            |                          | texts (absent: a database of an fpdb that did not write it; |
//! |            |                          | `check` then cannot tell a lost vector from one never made) |
//! | `meta`     | `semantic_aside` + doc id u64 BE | a live document at or above the floor and below the |
//! |            |                          | cursor that has no vector on purpose: 1 byte kind ([`Aside`]) |
//! |            |                          | then the reason, UTF-8. Written in the batch that moves the |
//! |            |                          | cursor past it (or the document's own, for nothing to embed); |
//! |            |                          | deleted with the document                                |

use rocksdb::{ColumnFamily, IteratorMode, WriteBatch, DB};

use super::config::{Groups, SemanticConfig};
use super::error::{corrupt, rocks, Result, SemanticError};
use super::model::ModelInfo;
use super::search::VectorSet;
use super::vector::{decode, DEFAULT_CODE_SEED, DEFAULT_CODE_WORDS};
use crate::Error;

/// The column family of the vectors.
pub const CF_SEMANTIC: &str = "semantic";
/// The column family of the texts waiting for the indexer (at or above the cursor).
pub const CF_SEMANTIC_QUEUE: &str = "semantic_queue";
/// Meta key of the durable cursor.
pub const META_SEMANTIC_CURSOR: &[u8] = b"semantic_cursor";
/// Meta key of the spec.
pub const META_SEMANTIC_SPEC: &[u8] = b"semantic_spec";
/// Meta key of the floor: documents below it predate the channel.
pub const META_SEMANTIC_FLOOR: &[u8] = b"semantic_floor";
/// Meta key prefix of the documents set aside (followed by the doc id, u64 BE).
pub const META_SEMANTIC_ASIDE: &[u8] = b"semantic_aside";
/// The spec format this build writes and reads.
pub const SPEC_VERSION: u32 = 1;

/// β of a database whose model has no calibration ([`super::CALIBRATIONS`]) and that was given
/// none: the calibrated β of all-MiniLM-L6-v2 (docs/semantic.md, "Calibration on hard
/// negatives"). Another model's cosines lie elsewhere: calibrate it (`fpdb eval --semantic`).
pub const DEFAULT_MIN_COSINE: f32 = 0.76;

/// Everything that decides a stored vector, checked on open, plus the query default β.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SemanticSpec {
    /// Format of this record.
    pub version: u32,
    /// The model's identity (name, weights hash, dim, pooling, normalisation).
    pub model: ModelInfo,
    /// Truncation, in tokens (`[CLS]`/`[SEP]` included).
    pub max_tokens: usize,
    /// What is embedded: a JSONL field (e.g. `abstract`), or the text when `None`.
    pub field: Option<String>,
    /// Sign-code words (64 bits each).
    pub code_words: usize,
    /// Seed of the sign-code hyperplanes.
    pub code_seed: u64,
    /// The default β of queries (not checked on open: a query may ask another): the one given at
    /// creation, else the model's calibrated β (`model.calibrated_min_cosine`) as it was then,
    /// else [`DEFAULT_MIN_COSINE`]. A database keeps it when the calibration changes.
    pub min_cosine: f32,
    /// Which edges form the groups (not checked on open: fixed at creation).
    #[serde(default)]
    pub groups: Groups,
    /// The model directory given at creation: where a handle looks for the model when it is given
    /// none (not checked: the identity is `model`).
    #[serde(default)]
    pub model_dir: Option<std::path::PathBuf>,
}

impl SemanticSpec {
    /// A spec for `model` with the defaults (256-bit codes, β = the model's calibrated β, else
    /// [`DEFAULT_MIN_COSINE`]).
    pub fn new(model: ModelInfo, max_tokens: usize, field: Option<String>) -> SemanticSpec {
        SemanticSpec {
            min_cosine: model.calibrated_min_cosine.unwrap_or(DEFAULT_MIN_COSINE),
            version: SPEC_VERSION,
            model,
            max_tokens,
            field,
            code_words: DEFAULT_CODE_WORDS,
            code_seed: DEFAULT_CODE_SEED,
            groups: Groups::Text,
            model_dir: None,
        }
    }

    /// The spec of a new database: `model` (the loaded model's identity) with `cfg`'s settings.
    pub fn from_config(model: ModelInfo, cfg: &SemanticConfig) -> SemanticSpec {
        SemanticSpec {
            min_cosine: cfg.min_cosine.or(model.calibrated_min_cosine).unwrap_or(DEFAULT_MIN_COSINE),
            groups: cfg.groups,
            model_dir: Some(cfg.model_dir.clone()),
            ..SemanticSpec::new(model, cfg.max_tokens, cfg.field.clone())
        }
    }

    /// Field by field comparison of what decides a vector; the first difference is the error.
    pub fn check_matches(&self, given: &SemanticSpec) -> Result<()> {
        let diff = |field: &'static str, stored: String, given: String| -> Result<()> {
            if stored == given {
                Ok(())
            } else {
                Err(SemanticError::SpecMismatch { field, stored, given }.into())
            }
        };
        let (s, g) = (&self.model, &given.model);
        diff(
            "model.weights_xxh3",
            format!("{:016x} ({})", s.weights_xxh3, s.name),
            format!("{:016x} ({})", g.weights_xxh3, g.name),
        )?;
        diff("model.dim", s.dim.to_string(), g.dim.to_string())?;
        diff("model.pooling", format!("{:?}", s.pooling), format!("{:?}", g.pooling))?;
        diff("model.normalize", s.normalize.to_string(), g.normalize.to_string())?;
        diff("max_tokens", self.max_tokens.to_string(), given.max_tokens.to_string())?;
        diff("field", format!("{:?}", self.field), format!("{:?}", given.field))?;
        diff("code_words", self.code_words.to_string(), given.code_words.to_string())?;
        diff("code_seed", self.code_seed.to_string(), given.code_seed.to_string())
    }
}

/// The key of `id`'s vector (big-endian: the CF iterates in id order).
pub fn vector_key(id: u64) -> [u8; 8] {
    id.to_be_bytes()
}

fn decode_key(db: &DB, key: &[u8]) -> Result<u64> {
    <[u8; 8]>::try_from(key)
        .map(u64::from_be_bytes)
        .map_err(|_| corrupt(db, None, format!("a semantic key of {} bytes, expected 8", key.len())))
}

/// Puts each (id, encoded vector) and the new cursor into `batch`: written together, durable together.
pub fn stage_vectors(batch: &mut WriteBatch, cf: &ColumnFamily, meta: &ColumnFamily, vectors: &[(u64, Vec<u8>)], cursor: u64) {
    for (id, bytes) in vectors {
        batch.put_cf(cf, vector_key(*id), bytes);
    }
    batch.put_cf(meta, META_SEMANTIC_CURSOR, cursor.to_le_bytes());
}

/// Deletes `id`'s vector in `batch` (the document's delete or replace).
pub fn stage_delete(batch: &mut WriteBatch, cf: &ColumnFamily, id: u64) {
    batch.delete_cf(cf, vector_key(id));
}

/// Queues `id`'s text for the indexer, in the document's own batch: `value` is the text encoded
/// by [`super::queue::encode`] (on the ingest workers, so the writer only copies it).
pub fn stage_queue(batch: &mut WriteBatch, queue: &ColumnFamily, id: u64, value: &[u8]) {
    batch.put_cf(queue, vector_key(id), value);
}

/// Drops `id`'s queued text (the document's delete or replace).
pub fn stage_unqueue(batch: &mut WriteBatch, queue: &ColumnFamily, id: u64) {
    batch.delete_cf(queue, vector_key(id));
}

/// Drops the queued texts of ids in `from..to` (the indexer's batch moved the cursor past them).
pub fn stage_dequeue(batch: &mut WriteBatch, queue: &ColumnFamily, from: u64, to: u64) {
    batch.delete_range_cf(queue, vector_key(from), vector_key(to));
}

/// Up to `max` queued entries with `from ≤ id < until`, ascending: each its text, or why its value
/// does not decode (that document is set aside, the others embedded).
pub fn scan_queue(db: &DB, queue: &ColumnFamily, from: u64, until: u64, max: usize) -> Result<Vec<(u64, Result<String>)>> {
    let mut out = Vec::new();
    let start = vector_key(from);
    for item in db.iterator_cf(queue, IteratorMode::From(&start, rocksdb::Direction::Forward)) {
        let (key, value) = item.map_err(rocks("reading the semantic queue", db))?;
        let id = decode_key(db, &key)?;
        if id >= until || out.len() == max {
            break;
        }
        out.push((id, super::queue::decode(&value).map_err(|what| corrupt(db, Some(id), what))));
    }
    Ok(out)
}

/// Why a document has no vector on purpose (the first byte of its `semantic_aside` value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Aside {
    /// Its text (or field) is empty: nothing to embed.
    Empty = 0,
    /// The model failed on its text alone.
    EmbedFailed = 1,
    /// Its queued value does not decode.
    Unreadable = 2,
}

impl Aside {
    fn from_byte(b: u8) -> Option<Aside> {
        match b {
            0 => Some(Aside::Empty),
            1 => Some(Aside::EmbedFailed),
            2 => Some(Aside::Unreadable),
            _ => None,
        }
    }

    /// True for the kinds that are failures (reported by the channel's state); an empty text is not.
    pub fn is_failure(self) -> bool {
        self != Aside::Empty
    }
}

/// The `meta` key of `id`'s set-aside entry.
pub fn aside_key(id: u64) -> Vec<u8> {
    let mut k = META_SEMANTIC_ASIDE.to_vec();
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// Records `id` as set aside (`kind`, `reason`) in `batch`.
pub fn stage_aside(batch: &mut WriteBatch, meta: &ColumnFamily, id: u64, kind: Aside, reason: &str) {
    let mut v = Vec::with_capacity(1 + reason.len());
    v.push(kind as u8);
    v.extend_from_slice(reason.as_bytes());
    batch.put_cf(meta, aside_key(id), v);
}

/// Drops `id`'s set-aside entry in `batch` (the document's delete or replace).
pub fn stage_unaside(batch: &mut WriteBatch, meta: &ColumnFamily, id: u64) {
    batch.delete_cf(meta, aside_key(id));
}

/// Every set-aside entry, ascending by id.
pub fn read_aside(db: &DB, meta: &ColumnFamily) -> Result<Vec<(u64, Aside, String)>> {
    let mut out = Vec::new();
    for item in db.prefix_iterator_cf(meta, META_SEMANTIC_ASIDE) {
        let (key, value) = item.map_err(rocks("reading the set-aside documents", db))?;
        let Some(id) = key.strip_prefix(META_SEMANTIC_ASIDE) else { break };
        let id = decode_key(db, id)?;
        let kind = value.first().copied().and_then(Aside::from_byte).ok_or_else(|| {
            corrupt(
                db,
                Some(id),
                format!("a set-aside entry whose kind byte is {:?}, expected 0, 1 or 2", value.first()),
            )
        })?;
        out.push((id, kind, String::from_utf8_lossy(&value[1..]).into_owned()));
    }
    Ok(out)
}

/// Puts the floor into `batch` (the channel's creation or addition).
pub fn stage_floor(batch: &mut WriteBatch, meta: &ColumnFamily, floor: u64) {
    batch.put_cf(meta, META_SEMANTIC_FLOOR, floor.to_le_bytes());
}

/// The floor, when the database records one.
pub fn read_floor(db: &DB, meta: &ColumnFamily) -> Result<Option<u64>> {
    read_u64(db, meta, META_SEMANTIC_FLOOR, "semantic_floor")
}

fn read_u64(db: &DB, meta: &ColumnFamily, key: &[u8], name: &str) -> Result<Option<u64>> {
    match db.get_cf(meta, key).map_err(rocks("reading the semantic channel's meta", db))? {
        None => Ok(None),
        Some(v) => <[u8; 8]>::try_from(v.as_slice())
            .map(|b| Some(u64::from_le_bytes(b)))
            .map_err(|_| corrupt(db, None, format!("{name} of {} bytes, expected 8", v.len()))),
    }
}

/// Whether `id` still has a queued text (it was not deleted since it was scanned).
pub fn queued(db: &DB, queue: &ColumnFamily, id: u64) -> Result<bool> {
    Ok(db
        .get_pinned_cf(queue, vector_key(id))
        .map_err(rocks("reading the semantic queue", db))?
        .is_some())
}

/// Puts the spec into `batch` (creation, or a re-embed that replaces every vector).
pub fn stage_spec(batch: &mut WriteBatch, meta: &ColumnFamily, spec: &SemanticSpec) -> Result<()> {
    let json = serde_json::to_vec(spec).map_err(|e| Error::InvalidOption {
        name: "spec",
        message: e.to_string(),
    })?;
    batch.put_cf(meta, META_SEMANTIC_SPEC, json);
    Ok(())
}

/// The durable cursor (0 when the channel has never written one).
pub fn read_cursor(db: &DB, meta: &ColumnFamily) -> Result<u64> {
    Ok(read_u64(db, meta, META_SEMANTIC_CURSOR, "semantic_cursor")?.unwrap_or(0))
}

/// The stored spec, if the database has the channel.
pub fn read_spec(db: &DB, meta: &ColumnFamily) -> Result<Option<SemanticSpec>> {
    let Some(bytes) = db
        .get_cf(meta, META_SEMANTIC_SPEC)
        .map_err(rocks("reading the semantic spec", db))?
    else {
        return Ok(None);
    };
    let spec: SemanticSpec = serde_json::from_slice(&bytes).map_err(|e| corrupt(db, None, format!("semantic_spec is not a spec: {e}")))?;
    if spec.version != SPEC_VERSION {
        return Err(corrupt(
            db,
            None,
            format!("semantic_spec version {} (this build reads {SPEC_VERSION})", spec.version),
        ));
    }
    Ok(Some(spec))
}

/// Loads every vector of the CF into memory; a record that does not decode is an error naming its doc.
pub fn load(db: &DB, cf: &ColumnFamily, spec: &SemanticSpec) -> Result<VectorSet> {
    let mut set = VectorSet::new(spec.model.dim, spec.code_words);
    for item in db.iterator_cf(cf, IteratorMode::Start) {
        let (key, value) = item.map_err(rocks("loading the semantic vectors", db))?;
        let id = decode_key(db, &key)?;
        set.insert(
            id,
            &decode(&value, spec.model.dim, spec.code_words).map_err(|what| corrupt(db, Some(id), what))?,
        );
    }
    Ok(set)
}

/// What `check` found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckReport {
    /// Vectors read.
    pub vectors: u64,
    /// Docs whose record does not decode (the decoder's message).
    pub damaged: Vec<(u64, String)>,
    /// Vectors at or above the cursor (never written by the indexer: a broken invariant).
    pub beyond_cursor: Vec<u64>,
    /// Vectors of documents that are not live (deleted without their vector).
    pub orphans: Vec<u64>,
    /// Live documents at or above the floor and below the cursor with neither a vector nor a
    /// set-aside entry: vectors lost.
    pub missing: Vec<u64>,
    /// Live documents below the floor without a vector (stored before the channel was added, not
    /// backfilled yet; with no floor recorded, every live document below the cursor without one).
    pub not_backfilled: u64,
    /// Live documents set aside as failures ([`Aside::is_failure`]).
    pub set_aside: Vec<u64>,
    /// Set-aside entries of documents that are not live, or that have a vector.
    pub stale_aside: Vec<u64>,
}

impl CheckReport {
    /// True when nothing is wrong (documents set aside are reported, not faults).
    pub fn is_clean(&self) -> bool {
        self.damaged.is_empty()
            && self.beyond_cursor.is_empty()
            && self.orphans.is_empty()
            && self.missing.is_empty()
            && self.stale_aside.is_empty()
    }
}

/// Checks the CF against the cursor, the floor, the set-aside entries and the live documents
/// (`live`: ascending ids of live docs). A database whose channel was just added and not opened
/// for writing since has no `semantic` column family (`cf` None): it holds no vector.
pub fn check(db: &DB, cf: Option<&ColumnFamily>, meta: &ColumnFamily, spec: &SemanticSpec, live: &[u64]) -> Result<CheckReport> {
    let cursor = read_cursor(db, meta)?;
    let floor = read_floor(db, meta)?;
    let aside: std::collections::BTreeMap<u64, Aside> = read_aside(db, meta)?.into_iter().map(|(id, k, _)| (id, k)).collect();
    let mut report = CheckReport::default();
    let mut have = Vec::new();
    for item in cf.into_iter().flat_map(|cf| db.iterator_cf(cf, IteratorMode::Start)) {
        let (key, value) = item.map_err(rocks("checking the semantic vectors", db))?;
        let id = decode_key(db, &key)?;
        report.vectors += 1;
        if let Err(what) = decode(&value, spec.model.dim, spec.code_words) {
            report.damaged.push((id, corrupt(db, Some(id), what).to_string()));
        }
        if id >= cursor {
            report.beyond_cursor.push(id);
        }
        if aside.contains_key(&id) {
            report.stale_aside.push(id);
        }
        have.push(id);
    }
    let without = |l: u64, report: &mut CheckReport| {
        if l >= cursor {
            return;
        }
        match (aside.get(&l), floor) {
            (Some(k), _) => {
                if k.is_failure() {
                    report.set_aside.push(l);
                }
            }
            (None, Some(f)) if l >= f => report.missing.push(l),
            (None, _) => report.not_backfilled += 1,
        }
    };
    // both ascending: a merge
    let (mut i, mut j) = (0, 0);
    while i < have.len() || j < live.len() {
        match (have.get(i).copied(), live.get(j).copied()) {
            (Some(h), Some(l)) if h == l => {
                i += 1;
                j += 1;
            }
            (Some(h), Some(l)) if l < h => {
                without(l, &mut report);
                j += 1;
            }
            (None, Some(l)) => {
                without(l, &mut report);
                j += 1;
            }
            (Some(h), _) => {
                report.orphans.push(h);
                i += 1;
            }
            (None, None) => break,
        }
    }
    report.stale_aside.extend(aside.keys().filter(|id| live.binary_search(id).is_err()));
    report.stale_aside.sort_unstable();
    report.stale_aside.dedup();
    Ok(report)
}

/// Compaction's part: deletes (in `batch`) the vectors of ids that are no longer live.
pub fn stage_compact(db: &DB, cf: &ColumnFamily, batch: &mut WriteBatch, live: impl Fn(u64) -> bool) -> Result<u64> {
    let mut dropped = 0;
    for item in db.iterator_cf(cf, IteratorMode::Start) {
        let (key, _) = item.map_err(rocks("compacting the semantic vectors", db))?;
        let id = decode_key(db, &key)?;
        if !live(id) {
            batch.delete_cf(cf, key);
            dropped += 1;
        }
    }
    Ok(dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Format-0 values (the bare UTF-8 text, no format byte) are read as they are, beside format-1
    /// values, in id order; a damaged value is an error naming its document.
    #[test]
    fn scan_queue_reads_both_formats() {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = rocksdb::Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        let db = DB::open_cf(&opts, dir.path(), [CF_SEMANTIC_QUEUE]).unwrap();
        let queue = db.cf_handle(CF_SEMANTIC_QUEUE).unwrap();
        let mut b = WriteBatch::default();
        b.put_cf(queue, vector_key(3), "an old queued text, format 0".as_bytes());
        stage_queue(&mut b, queue, 4, &super::super::queue::encode("a new one, format 1: LZ4"));
        b.put_cf(queue, vector_key(5), "ünïcode in format 0".as_bytes());
        db.write(b).unwrap();
        let got: Vec<(u64, String)> = scan_queue(&db, queue, 0, 10, 10)
            .unwrap()
            .into_iter()
            .map(|(id, t)| (id, t.unwrap()))
            .collect();
        let want = [
            (3, "an old queued text, format 0"),
            (4, "a new one, format 1: LZ4"),
            (5, "ünïcode in format 0"),
        ];
        assert_eq!(got, want.map(|(id, t)| (id, t.to_string())));
        db.put_cf(queue, vector_key(6), [0xF5, 9, 0, 0, 0, 1]).unwrap();
        let got = scan_queue(&db, queue, 0, 10, 10).unwrap();
        assert_eq!(got.len(), 4, "the damaged value is one entry among the others");
        let err = got[3].1.as_ref().unwrap_err().to_string();
        assert!(err.contains("(doc 6)"), "{err}");
    }

    fn model(calibrated: Option<f32>) -> ModelInfo {
        ModelInfo {
            name: "m".into(),
            weights_xxh3: 7,
            dim: 4,
            pooling: super::super::model::Pooling::Mean,
            normalize: true,
            max_positions: 64,
            calibrated_min_cosine: calibrated,
        }
    }

    /// A spec stored without the model's calibrated β (as every spec of a model without one is)
    /// reads back with its stored β; a new database takes the calibrated β unless given one.
    #[test]
    fn stored_beta_stays_and_new_databases_take_the_calibration() {
        let stored = r#"{"version":1,"model":{"name":"all-MiniLM-L6-v2","weights_xxh3":1,"dim":384,"pooling":"mean",
            "normalize":true,"max_positions":512},"max_tokens":256,"field":null,"code_words":4,"code_seed":5,
            "min_cosine":0.76,"groups":"union","model_dir":"/m"}"#;
        let spec: SemanticSpec = serde_json::from_str(stored).unwrap();
        assert_eq!(
            (spec.min_cosine, spec.model.calibrated_min_cosine, spec.groups),
            (0.76, None, Groups::Union)
        );
        let mut cfg = SemanticConfig::new("/m");
        assert_eq!(SemanticSpec::from_config(model(Some(0.9)), &cfg).min_cosine, 0.9);
        assert_eq!(SemanticSpec::from_config(model(None), &cfg).min_cosine, DEFAULT_MIN_COSINE);
        cfg.min_cosine = Some(0.5);
        let given = SemanticSpec::from_config(model(Some(0.9)), &cfg);
        assert_eq!((given.min_cosine, given.model.calibrated_min_cosine), (0.5, Some(0.9)));
        // the calibration is stored with the model, and is no part of its identity
        let back: SemanticSpec = serde_json::from_str(&serde_json::to_string(&given).unwrap()).unwrap();
        assert_eq!(back, given);
        assert!(given.check_matches(&SemanticSpec::from_config(model(None), &cfg)).is_ok());
    }
}
