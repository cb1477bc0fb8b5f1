//! Test and measurement helpers (not a stable API): a tiny BERT sentence-transformer written from
//! seeded random weights (the same architecture and directory layout as all-MiniLM-L6-v2, so the
//! tests need no download), and [`RocksCorpus`], a bare RocksDB documents store implementing
//! [`Corpus`] the way the db/ integration must (one WriteBatch per commit, deletes win).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use candle_core::{Device, Tensor};
use rocksdb::{ColumnFamilyDescriptor, IteratorMode, Options, WriteBatch, WriteOptions, DB};

use super::channel::{SemanticChannel, COLUMN_FAMILIES};
use super::error::{corrupt, rocks, Result, SemanticError};
use super::indexer::{Corpus, Scan};
use super::store::{stage_aside, stage_floor, stage_unaside, Aside, SemanticSpec};
use super::vector::StoredVector;
use crate::Error;

/// The words of the tiny model's vocabulary (after the five special tokens).
pub const TINY_WORDS: &[&str] = &[
    "the",
    "a",
    "of",
    "and",
    "to",
    "in",
    "is",
    "we",
    "paper",
    "method",
    "data",
    "near",
    "duplicate",
    "documents",
    "text",
    "search",
    "index",
    "fast",
    "slow",
    "model",
    "results",
    "show",
    "that",
    "this",
    "new",
    "large",
    "small",
    "web",
    "graph",
    "network",
    "learning",
    "deep",
    "cat",
    "dog",
    "music",
    "river",
    "mountain",
    "food",
    "cooking",
    "recipe",
    "football",
    "game",
    "score",
    "team",
    "##s",
    "##ing",
    "##ed",
    ".",
    ",",
];

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A unit vector with Gaussian components (Box-Muller over xorshift64), from `seed`.
pub fn gaussian_unit(seed: u64, dim: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
    let mut u = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            let (a, b) = (u().max(1e-12), u());
            ((-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()) as f32
        })
        .collect();
    super::model::normalize(&mut v);
    v
}

/// Vector `i` of a clustered workload: groups of 10 around a random centre, cosine to the centre
/// from ~0.99 (i % 10 = 0) down to ~0.8 (i % 10 = 9).
pub fn clustered(i: u64, dim: usize) -> Vec<f32> {
    let centre = gaussian_unit(i / 10 + (1 << 40), dim);
    let noise = gaussian_unit(i, dim);
    let t = 0.15 + 0.06 * (i % 10) as f32;
    let mut v: Vec<f32> = centre.iter().zip(&noise).map(|(c, e)| c + t * e).collect();
    super::model::normalize(&mut v);
    v
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::io("reading a model file", path.to_path_buf(), source)
}

/// Writes a tiny sentence-transformer into `dir` (hidden 32, 2 layers, 4 heads, max 64 tokens):
/// config.json, tokenizer.json (BERT WordPiece over [`TINY_WORDS`]), model.safetensors (weights
/// uniform in ±0.2 from `seed`), modules.json (Transformer, Pooling, Normalize), 1_Pooling/config.json
/// (mean). Returns `dir`.
pub fn write_tiny_model(dir: &Path, seed: u64) -> Result<PathBuf> {
    write_tiny_model_shaped(dir, seed, 32, 2, &[])
}

/// [`write_tiny_model`] `hidden` wide (a multiple of 4) with `layers` layers, its vocabulary
/// [`TINY_WORDS`] plus each of `pieces` as a word and as a `##` continuation: a load test gives it
/// the syllables its synthetic words are made of, so that each word has its own tokens (an unknown
/// word is `[UNK]`, and texts of unknown words would all embed alike).
pub fn write_tiny_model_shaped(dir: &Path, seed: u64, hidden: usize, layers: usize, pieces: &[&str]) -> Result<PathBuf> {
    let dims = TinyDims {
        hidden,
        layers,
        heads: 4,
        inter: 64,
        max_pos: 64,
    };
    let special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
    let continued: Vec<String> = pieces.iter().map(|p| format!("##{p}")).collect();
    let mut vocab = serde_json::Map::new();
    for w in special
        .iter()
        .chain(TINY_WORDS)
        .copied()
        .chain(pieces.iter().copied())
        .chain(continued.iter().map(String::as_str))
    {
        let next = vocab.len();
        vocab.entry(w.to_string()).or_insert(serde_json::json!(next));
    }
    let vocab_size = vocab.len();
    std::fs::create_dir_all(dir.join("1_Pooling")).map_err(io(dir))?;
    write_tiny_config(dir, &dims, vocab_size)?;
    write_tiny_tokenizer(dir, &special, vocab)?;
    let tensors = tiny_weights(&dims, vocab_size, seed)?;
    let st = dir.join("model.safetensors");
    candle_core::safetensors::save(&tensors, &st).map_err(|e| SemanticError::ModelInvalid {
        path: st.clone(),
        message: e.to_string(),
    })?;
    Ok(dir.to_path_buf())
}

/// The tiny model's shape.
#[derive(Clone, Copy)]
struct TinyDims {
    hidden: usize,
    layers: usize,
    heads: usize,
    inter: usize,
    max_pos: usize,
}

/// Writes `name` under `dir` as pretty JSON.
fn write_json(dir: &Path, name: &str, v: serde_json::Value) -> Result<()> {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap_or_default()).map_err(io(&p))
}

/// config.json (BERT), modules.json (Transformer, Pooling, Normalize) and 1_Pooling/config.json (mean).
fn write_tiny_config(dir: &Path, dims: &TinyDims, vocab_size: usize) -> Result<()> {
    let TinyDims {
        hidden,
        layers,
        heads,
        inter,
        max_pos,
    } = *dims;
    let write = |name: &str, v: serde_json::Value| write_json(dir, name, v);
    write(
        "config.json",
        serde_json::json!({
            "architectures": ["BertModel"], "model_type": "bert", "hidden_act": "gelu",
            "hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
            "intermediate_size": inter, "max_position_embeddings": max_pos, "type_vocab_size": 2,
            "vocab_size": vocab_size, "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
            "initializer_range": 0.02, "layer_norm_eps": 1e-12, "pad_token_id": 0,
            "position_embedding_type": "absolute"
        }),
    )?;
    write(
        "modules.json",
        serde_json::json!([
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}
        ]),
    )?;
    write(
        "1_Pooling/config.json",
        serde_json::json!({"word_embedding_dimension": hidden, "pooling_mode_cls_token": false, "pooling_mode_mean_tokens": true, "pooling_mode_max_tokens": false, "pooling_mode_mean_sqrt_len_tokens": false}),
    )?;
    Ok(())
}

/// tokenizer.json: BERT WordPiece over `special` then [`TINY_WORDS`].
fn write_tiny_tokenizer(dir: &Path, special: &[&str], vocab: serde_json::Map<String, serde_json::Value>) -> Result<()> {
    let write = |name: &str, v: serde_json::Value| write_json(dir, name, v);
    let added: Vec<_> = special
        .iter()
        .enumerate()
        .map(|(i, t)| serde_json::json!({"id": i, "content": t, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}))
        .collect();
    write(
        "tokenizer.json",
        serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null, "added_tokens": added,
            "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": {
                "type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
                "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]}, "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}
            },
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab}
        }),
    )?;
    Ok(())
}

/// The weights, uniform in ±0.2 from `seed` (LayerNorms at 1 and 0), by their BERT names.
fn tiny_weights(dims: &TinyDims, vocab_size: usize, seed: u64) -> Result<HashMap<String, Tensor>> {
    let TinyDims {
        hidden,
        layers,
        inter,
        max_pos,
        ..
    } = *dims;
    let mut state = seed;
    let mut tensors: HashMap<String, Tensor> = HashMap::new();
    let mut add = |name: String, shape: &[usize], init: Option<f32>| -> Result<()> {
        let n: usize = shape.iter().product();
        let data: Vec<f32> = match init {
            Some(c) => vec![c; n],
            None => (0..n)
                .map(|_| ((splitmix64(&mut state) >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.4)
                .collect(),
        };
        let t = Tensor::from_vec(data, shape, &Device::Cpu).map_err(SemanticError::candle("building the tiny model", 0))?;
        tensors.insert(name, t);
        Ok(())
    };
    let e = "embeddings";
    add(format!("{e}.word_embeddings.weight"), &[vocab_size, hidden], None)?;
    add(format!("{e}.position_embeddings.weight"), &[max_pos, hidden], None)?;
    add(format!("{e}.token_type_embeddings.weight"), &[2, hidden], None)?;
    add(format!("{e}.LayerNorm.weight"), &[hidden], Some(1.0))?;
    add(format!("{e}.LayerNorm.bias"), &[hidden], Some(0.0))?;
    for l in 0..layers {
        let p = format!("encoder.layer.{l}");
        for m in [
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output.dense",
        ] {
            add(format!("{p}.{m}.weight"), &[hidden, hidden], None)?;
            add(format!("{p}.{m}.bias"), &[hidden], None)?;
        }
        add(format!("{p}.intermediate.dense.weight"), &[inter, hidden], None)?;
        add(format!("{p}.intermediate.dense.bias"), &[inter], None)?;
        add(format!("{p}.output.dense.weight"), &[hidden, inter], None)?;
        add(format!("{p}.output.dense.bias"), &[hidden], None)?;
        for ln in ["attention.output.LayerNorm", "output.LayerNorm"] {
            add(format!("{p}.{ln}.weight"), &[hidden], Some(1.0))?;
            add(format!("{p}.{ln}.bias"), &[hidden], Some(0.0))?;
        }
    }
    Ok(tensors)
}

/// A documents store on a bare RocksDB (CFs `meta`, `docs`, `semantic`) that feeds the indexer the
/// way the db/ integration must: `scan` reads live docs, `commit` writes vectors + cursor in one
/// synced WriteBatch under the writer lock and leaves out docs deleted meanwhile, deletes remove the
/// vector in the doc's own batch. `fail_at_commit` simulates a crash: that commit (1-based) fails
/// before writing anything.
pub struct RocksCorpus {
    /// The RocksDB.
    pub db: Arc<DB>,
    /// The channel (loaded or created).
    pub channel: Arc<SemanticChannel>,
    next_doc: AtomicU64,
    writer: Mutex<()>,
    commits: AtomicUsize,
    /// The 1-based commit that fails (0: none).
    pub fail_at_commit: AtomicUsize,
    /// Every id committed by this handle, in order (to prove nothing is embedded twice).
    pub committed: Mutex<Vec<u64>>,
}

const CF_DOCS: &str = "docs";
const META_NEXT: &[u8] = b"next_doc";

impl RocksCorpus {
    /// Opens (or creates) the store at `path`; a new one gets `spec`, an existing one checks it.
    /// Returns the store and the durable cursor.
    pub fn open(path: &Path, spec: &SemanticSpec) -> Result<(RocksCorpus, u64)> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        let names = ["meta", CF_DOCS]
            .iter()
            .chain(COLUMN_FAMILIES)
            .map(|n| ColumnFamilyDescriptor::new(*n, Options::default()));
        let db =
            DB::open_cf_descriptors(&opts, path, names.collect::<Vec<_>>()).map_err(|e| Error::rocks("opening the test store", path, e))?;
        let (channel, cursor) = match SemanticChannel::load(&db, Some(spec))? {
            Some(c) => c,
            None => {
                let mut batch = WriteBatch::default();
                let c = SemanticChannel::create(&db, &mut batch, spec.clone())?;
                let meta = db.cf_handle("meta").ok_or_else(|| corrupt(&db, None, "no meta CF"))?;
                stage_floor(&mut batch, meta, 0);
                db.write(batch).map_err(rocks("creating the channel", &db))?;
                (c, 0)
            }
        };
        let meta = db.cf_handle("meta").ok_or_else(|| corrupt(&db, None, "no meta CF"))?;
        let next = db
            .get_cf(meta, META_NEXT)
            .map_err(rocks("reading next_doc", &db))?
            .and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok().map(u64::from_le_bytes))
            .unwrap_or(0);
        let corpus = RocksCorpus {
            db: Arc::new(db),
            channel: Arc::new(channel),
            next_doc: AtomicU64::new(next),
            writer: Mutex::new(()),
            commits: AtomicUsize::new(0),
            fail_at_commit: AtomicUsize::new(0),
            committed: Mutex::new(Vec::new()),
        };
        Ok((corpus, cursor))
    }

    fn cf(&self, name: &str) -> Result<&rocksdb::ColumnFamily> {
        self.db
            .cf_handle(name)
            .ok_or_else(|| corrupt(&self.db, None, format!("no {name} CF")))
    }

    /// Stores a document durably (the text path's acknowledgement) and returns its id.
    pub fn add(&self, text: &str) -> Result<u64> {
        let _w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let id = self.next_doc.load(Ordering::SeqCst);
        let mut batch = WriteBatch::default();
        batch.put_cf(self.cf(CF_DOCS)?, id.to_be_bytes(), text);
        batch.put_cf(self.cf("meta")?, META_NEXT, (id + 1).to_le_bytes());
        self.db.write(batch).map_err(rocks("adding a doc", &self.db))?;
        self.next_doc.store(id + 1, Ordering::SeqCst);
        Ok(id)
    }

    /// Deletes a document and its vector in one batch.
    pub fn delete(&self, id: u64) -> Result<()> {
        let _w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let mut batch = WriteBatch::default();
        batch.delete_cf(self.cf(CF_DOCS)?, id.to_be_bytes());
        self.channel.write_delete(&self.db, &mut batch, id)?;
        stage_unaside(&mut batch, self.cf("meta")?, id);
        self.db.write(batch).map_err(rocks("deleting a doc", &self.db))?;
        self.channel.publish_delete(id);
        Ok(())
    }

    /// The live doc ids, ascending.
    pub fn live(&self) -> Result<Vec<u64>> {
        let mut ids = Vec::new();
        for item in self.db.iterator_cf(self.cf(CF_DOCS)?, IteratorMode::Start) {
            let (k, _) = item.map_err(rocks("listing docs", &self.db))?;
            ids.extend(<[u8; 8]>::try_from(&k[..]).ok().map(u64::from_be_bytes));
        }
        Ok(ids)
    }
}

impl Corpus for RocksCorpus {
    fn scan(&self, from: u64, max: usize) -> Result<Scan> {
        let ack = self.acknowledged();
        let mut docs = Vec::new();
        let mode = IteratorMode::From(&from.to_be_bytes(), rocksdb::Direction::Forward);
        for item in self.db.iterator_cf(self.cf(CF_DOCS)?, mode) {
            let (k, v) = item.map_err(rocks("scanning docs", &self.db))?;
            let id = <[u8; 8]>::try_from(&k[..])
                .map(u64::from_be_bytes)
                .map_err(|_| corrupt(&self.db, None, "doc key"))?;
            if id >= ack {
                break;
            }
            docs.push((id, String::from_utf8_lossy(&v).into_owned()));
            if docs.len() == max {
                return Ok(Scan {
                    next: id + 1,
                    docs,
                    unreadable: Vec::new(),
                });
            }
        }
        Ok(Scan {
            docs,
            unreadable: Vec::new(),
            next: ack,
        })
    }

    fn acknowledged(&self) -> u64 {
        self.next_doc.load(Ordering::SeqCst)
    }

    fn commit(&self, vectors: Vec<(u64, StoredVector, Vec<u8>)>, aside: Vec<(u64, Aside, String)>, _from: u64, cursor: u64) -> Result<()> {
        let n = self.commits.fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.fail_at_commit.load(Ordering::SeqCst) {
            return Err(Error::Rocks {
                op: "a simulated crash",
                path: self.db.path().to_path_buf(),
                kind: crate::RocksKind::Io,
                message: format!("commit {n} failed before writing"),
            });
        }
        let _w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let docs = self.cf(CF_DOCS)?;
        let mut kept = Vec::with_capacity(vectors.len());
        for v in vectors {
            if self
                .db
                .get_pinned_cf(docs, v.0.to_be_bytes())
                .map_err(rocks("checking a doc", &self.db))?
                .is_some()
            {
                kept.push(v);
            }
        }
        let records: Vec<(u64, Vec<u8>)> = kept.iter().map(|(id, _, b)| (*id, b.clone())).collect();
        let mut batch = WriteBatch::default();
        self.channel.write_vectors(&self.db, &mut batch, &records, cursor)?;
        let meta = self.cf("meta")?;
        for (id, kind, why) in &aside {
            stage_aside(&mut batch, meta, *id, *kind, why);
        }
        let mut wo = WriteOptions::default();
        wo.set_sync(true);
        self.db.write_opt(batch, &wo).map_err(rocks("committing vectors", &self.db))?;
        let published: Vec<(u64, StoredVector)> = kept.into_iter().map(|(id, v, _)| (id, v)).collect();
        self.channel.publish(&published);
        self.committed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(published.iter().map(|(id, _)| *id));
        Ok(())
    }
}
