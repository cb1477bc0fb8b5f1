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

use rocksdb::{ColumnFamily, IteratorMode, WriteBatch, DB};

use super::config::{Groups, SemanticConfig};
use super::error::{Result, SemanticError};
use super::model::ModelInfo;
use super::search::VectorSet;
use super::vector::{decode, DEFAULT_CODE_SEED, DEFAULT_CODE_WORDS};

/// The column family of the vectors.
pub const CF_SEMANTIC: &str = "semantic";
/// The column family of the texts waiting for the indexer (at or above the cursor).
pub const CF_SEMANTIC_QUEUE: &str = "semantic_queue";
/// Meta key of the durable cursor.
pub const META_SEMANTIC_CURSOR: &[u8] = b"semantic_cursor";
/// Meta key of the spec.
pub const META_SEMANTIC_SPEC: &[u8] = b"semantic_spec";
/// The spec format this build writes and reads.
pub const SPEC_VERSION: u32 = 1;

/// Default β for all-MiniLM-L6-v2 (docs/semantic.md says where it comes from).
pub const DEFAULT_MIN_COSINE: f32 = 0.76;

/// Everything that decides a stored vector, checked on open, plus the query default β.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SemanticSpec {
    /// Format of this record.
    pub version: u32,
    /// The model's identity (name, weights hash, dim, pooling, normalisation).
    pub model: ModelInfo,
    /// Truncation, in tokens ([CLS]/[SEP] included).
    pub max_tokens: usize,
    /// What is embedded: a JSONL field (e.g. `abstract`), or the text when `None`.
    pub field: Option<String>,
    /// Sign-code words (64 bits each).
    pub code_words: usize,
    /// Seed of the sign-code hyperplanes.
    pub code_seed: u64,
    /// The default β of queries (not checked on open: a query may ask another).
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
    /// A spec for `model` with the defaults (256-bit codes, β = [`DEFAULT_MIN_COSINE`]).
    pub fn new(model: ModelInfo, max_tokens: usize, field: Option<String>) -> SemanticSpec {
        SemanticSpec {
            version: SPEC_VERSION,
            model,
            max_tokens,
            field,
            code_words: DEFAULT_CODE_WORDS,
            code_seed: DEFAULT_CODE_SEED,
            min_cosine: DEFAULT_MIN_COSINE,
            groups: Groups::Text,
            model_dir: None,
        }
    }

    /// The spec of a new database: `model` (the loaded model's identity) with `cfg`'s settings.
    pub fn from_config(model: ModelInfo, cfg: &SemanticConfig) -> SemanticSpec {
        SemanticSpec {
            min_cosine: cfg.min_cosine,
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
                Err(SemanticError::SpecMismatch { field, stored, given })
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

fn decode_key(key: &[u8]) -> Result<u64> {
    <[u8; 8]>::try_from(key)
        .map(u64::from_be_bytes)
        .map_err(|_| SemanticError::Corruption {
            what: format!("a semantic key of {} bytes, expected 8", key.len()),
            doc: None,
        })
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

/// Up to `max` queued texts with `from ≤ id < until`, ascending.
pub fn scan_queue(db: &DB, queue: &ColumnFamily, from: u64, until: u64, max: usize) -> Result<Vec<(u64, String)>> {
    let mut out = Vec::new();
    let start = vector_key(from);
    for item in db.iterator_cf(queue, IteratorMode::From(&start, rocksdb::Direction::Forward)) {
        let (key, value) = item.map_err(SemanticError::rocks("reading the semantic queue"))?;
        let id = decode_key(&key)?;
        if id >= until || out.len() == max {
            break;
        }
        out.push((id, super::queue::decode(&value, id)?));
    }
    Ok(out)
}

/// Whether `id` still has a queued text (it was not deleted since it was scanned).
pub fn queued(db: &DB, queue: &ColumnFamily, id: u64) -> Result<bool> {
    Ok(db
        .get_pinned_cf(queue, vector_key(id))
        .map_err(SemanticError::rocks("reading the semantic queue"))?
        .is_some())
}

/// Puts the spec into `batch` (creation, or a re-embed that replaces every vector).
pub fn stage_spec(batch: &mut WriteBatch, meta: &ColumnFamily, spec: &SemanticSpec) -> Result<()> {
    let json = serde_json::to_vec(spec).map_err(|e| SemanticError::InvalidOption {
        name: "spec",
        message: e.to_string(),
    })?;
    batch.put_cf(meta, META_SEMANTIC_SPEC, json);
    Ok(())
}

/// The durable cursor (0 when the channel has never written one).
pub fn read_cursor(db: &DB, meta: &ColumnFamily) -> Result<u64> {
    match db
        .get_cf(meta, META_SEMANTIC_CURSOR)
        .map_err(SemanticError::rocks("reading the semantic cursor"))?
    {
        None => Ok(0),
        Some(v) => <[u8; 8]>::try_from(v.as_slice())
            .map(u64::from_le_bytes)
            .map_err(|_| SemanticError::Corruption {
                what: format!("semantic_cursor of {} bytes, expected 8", v.len()),
                doc: None,
            }),
    }
}

/// The stored spec, if the database has the channel.
pub fn read_spec(db: &DB, meta: &ColumnFamily) -> Result<Option<SemanticSpec>> {
    let Some(bytes) = db
        .get_cf(meta, META_SEMANTIC_SPEC)
        .map_err(SemanticError::rocks("reading the semantic spec"))?
    else {
        return Ok(None);
    };
    let spec: SemanticSpec = serde_json::from_slice(&bytes).map_err(|e| SemanticError::Corruption {
        what: format!("semantic_spec is not a spec: {e}"),
        doc: None,
    })?;
    if spec.version != SPEC_VERSION {
        return Err(SemanticError::Corruption {
            what: format!("semantic_spec version {} (this build reads {SPEC_VERSION})", spec.version),
            doc: None,
        });
    }
    Ok(Some(spec))
}

/// Loads every vector of the CF into memory; a record that does not decode is an error naming its doc.
pub fn load(db: &DB, cf: &ColumnFamily, spec: &SemanticSpec) -> Result<VectorSet> {
    let mut set = VectorSet::new(spec.model.dim, spec.code_words);
    for item in db.iterator_cf(cf, IteratorMode::Start) {
        let (key, value) = item.map_err(SemanticError::rocks("loading the semantic vectors"))?;
        let id = decode_key(&key)?;
        set.insert(id, &decode(&value, spec.model.dim, spec.code_words, Some(id))?);
    }
    Ok(set)
}

/// What [`check`] found.
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
    /// Live documents below the cursor without a vector (skipped by the indexer).
    pub missing: Vec<u64>,
}

impl CheckReport {
    /// True when nothing is wrong.
    pub fn is_clean(&self) -> bool {
        self.damaged.is_empty() && self.beyond_cursor.is_empty() && self.orphans.is_empty() && self.missing.is_empty()
    }
}

/// Checks the CF against the cursor and the live documents (`live`: ascending ids of live docs).
pub fn check(db: &DB, cf: &ColumnFamily, meta: &ColumnFamily, spec: &SemanticSpec, live: &[u64]) -> Result<CheckReport> {
    let cursor = read_cursor(db, meta)?;
    let mut report = CheckReport::default();
    let mut have = Vec::new();
    for item in db.iterator_cf(cf, IteratorMode::Start) {
        let (key, value) = item.map_err(SemanticError::rocks("checking the semantic vectors"))?;
        let id = decode_key(&key)?;
        report.vectors += 1;
        if let Err(e) = decode(&value, spec.model.dim, spec.code_words, Some(id)) {
            report.damaged.push((id, e.to_string()));
        }
        if id >= cursor {
            report.beyond_cursor.push(id);
        }
        have.push(id);
    }
    // both ascending: a merge
    let (mut i, mut j) = (0, 0);
    while i < have.len() || j < live.len() {
        match (have.get(i).copied(), live.get(j).copied()) {
            (Some(h), Some(l)) if h == l => {
                i += 1;
                j += 1;
            }
            (Some(h), Some(l)) if l < h => {
                if l < cursor {
                    report.missing.push(l);
                }
                j += 1;
            }
            (None, Some(l)) => {
                if l < cursor {
                    report.missing.push(l);
                }
                j += 1;
            }
            (Some(h), _) => {
                report.orphans.push(h);
                i += 1;
            }
            (None, None) => break,
        }
    }
    Ok(report)
}

/// Compaction's part: deletes (in `batch`) the vectors of ids that are no longer live.
pub fn stage_compact(db: &DB, cf: &ColumnFamily, batch: &mut WriteBatch, live: impl Fn(u64) -> bool) -> Result<u64> {
    let mut dropped = 0;
    for item in db.iterator_cf(cf, IteratorMode::Start) {
        let (key, _) = item.map_err(SemanticError::rocks("compacting the semantic vectors"))?;
        let id = decode_key(&key)?;
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

    /// A queue written before the version byte (format 0: the bare UTF-8 text) is read as it was,
    /// beside format-1 values, in id order; a damaged value is an error naming its document.
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
        let got = scan_queue(&db, queue, 0, 10, 10).unwrap();
        let want = [
            (3, "an old queued text, format 0"),
            (4, "a new one, format 1: LZ4"),
            (5, "ünïcode in format 0"),
        ];
        assert_eq!(got, want.map(|(id, t)| (id, t.to_string())));
        db.put_cf(queue, vector_key(6), [0xF5, 9, 0, 0, 0, 1]).unwrap();
        let err = scan_queue(&db, queue, 0, 10, 10).unwrap_err().to_string();
        assert!(err.contains("at doc 6"), "{err}");
    }
}
