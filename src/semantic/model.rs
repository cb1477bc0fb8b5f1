//! The sentence-transformer, run in-process on the CPU: candle's `BertModel` over a
//! sentence-transformers directory, pooled and normalised as that directory's configuration says.
//!
//! The directory layout (what `scripts/fetch-model.sh` unpacks, and what `testkit::write_tiny_model`
//! writes for the tests):
//!
//! ```text
//! config.json            BERT config (hidden_size, layers, heads, vocab_size, max_position_embeddings)
//! tokenizer.json         a `tokenizers` tokenizer (WordPiece for BERT)
//! model.safetensors      the weights, f32 (read whole, hashed with xxh3-64: the model's identity)
//! modules.json           optional: the module list; a `...models.Normalize` entry = L2 normalisation
//! 1_Pooling/config.json  optional (the path comes from modules.json): pooling_mode_mean_tokens /
//!                        pooling_mode_cls_token; mean pooling when absent
//! ```
//!
//! Everything runs inside a private thread pool of `threads` threads (the `threads` setting bounds
//! the CPU the model takes): candle's matrix products and the tokenizer's batch parallelism both
//! run on the rayon pool they are called from.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use tokenizers::{Tokenizer, TruncationParams};

use super::error::{Result, SemanticError};
use crate::Error;

/// How token vectors become one text vector (from the model's pooling config).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Pooling {
    /// The mean of the token vectors under the attention mask (sentence-transformers' default).
    Mean,
    /// The first (`[CLS]`) token's vector.
    Cls,
}

/// What identifies a model: everything that changes its vectors except the text and truncation.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ModelInfo {
    /// The model directory's name (e.g. `all-MiniLM-L6-v2`).
    pub name: String,
    /// xxh3-64 (seed 0) of model.safetensors: two models with other weights never compare equal.
    pub weights_xxh3: u64,
    /// The vector dimension (the BERT hidden size).
    pub dim: usize,
    /// Pooling, from 1_Pooling/config.json.
    pub pooling: Pooling,
    /// Whether vectors are L2-normalised (a Normalize module in modules.json).
    pub normalize: bool,
    /// The longest input the model accepts (max_position_embeddings), in tokens.
    pub max_positions: usize,
    /// The model's calibrated β ([`super::calibrated_min_cosine`], found by the weights hash):
    /// the β of a database created with this model and no explicit one. Not part of the identity
    /// (not compared on open); absent from a stored spec whose model had none when it was
    /// written, and such a database keeps the `min_cosine` it stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrated_min_cosine: Option<f32>,
}

/// The embedder's settings.
#[derive(Clone, Debug)]
pub struct EmbedderOptions {
    /// Truncation: the number of tokens embedded per text, `[CLS]` and `[SEP]` included (the rest of
    /// the text is ignored). At most the model's `max_position_embeddings`.
    pub max_tokens: usize,
    /// Threads the model may use (≥ 1): the bound on the CPU it takes.
    pub threads: usize,
    /// Texts per forward pass (after sorting a call's texts by length, so padding stays small).
    pub batch: usize,
    /// The niceness of the model's threads (0: the caller's priority; 19: only what the rest of
    /// the machine leaves; Linux, where a thread's niceness is its own). The background indexer
    /// runs at [`BACKGROUND_NICE`] so that the text path keeps the CPU it needs.
    pub nice: i32,
}

/// A build with the `failpoints` feature fails to embed any batch holding a text with this
/// string (tests and the fault figure of docs/serve.md: one document the model cannot embed).
#[doc(hidden)]
pub const FAILPOINT_EMBED: &str = "fpdb-failpoint-embed";

/// The niceness of the background indexer's threads.
pub const BACKGROUND_NICE: i32 = 19;

/// Lowers the calling thread's scheduling priority to `nice` (best effort: a failure leaves it as
/// it was; a thread may always lower its own priority).
pub fn lower_priority(nice: i32) {
    if nice > 0 {
        let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), nice);
    }
}

/// Default truncation: 256 tokens, all-MiniLM-L6-v2's own `max_seq_length`.
pub const DEFAULT_MAX_TOKENS: usize = 256;

impl Default for EmbedderOptions {
    fn default() -> Self {
        EmbedderOptions {
            max_tokens: DEFAULT_MAX_TOKENS,
            threads: 1,
            batch: 8,
            nice: 0,
        }
    }
}

/// A loaded model: tokenizer + BERT + pooling, on a private thread pool.
pub struct Embedder {
    model: BertModel,
    tokenizer: Tokenizer,
    info: ModelInfo,
    opts: EmbedderOptions,
    pad_id: u32,
    pool: rayon_core::ThreadPool,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("info", &self.info)
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

fn need(dir: &Path, file: &str) -> Result<PathBuf> {
    let path = dir.join(file);
    if path.is_file() {
        Ok(path)
    } else {
        Err(SemanticError::ModelMissing {
            dir: dir.to_path_buf(),
            missing: path,
        }
        .into())
    }
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| Error::io("reading a model file", path.to_path_buf(), source))
}

fn json(path: &Path) -> Result<serde_json::Value> {
    serde_json::from_slice(&read(path)?).map_err(|e| {
        SemanticError::ModelInvalid {
            path: path.to_path_buf(),
            message: format!("not JSON: {e}"),
        }
        .into()
    })
}

fn invalid(path: &Path, message: impl Into<String>) -> Error {
    SemanticError::ModelInvalid {
        path: path.to_path_buf(),
        message: message.into(),
    }
    .into()
}

/// Pooling and normalisation from modules.json and the pooling module's config (both optional).
fn read_pipeline(dir: &Path, hidden: usize) -> Result<(Pooling, bool)> {
    let modules_path = dir.join("modules.json");
    let (pool_dir, normalize) = if modules_path.is_file() {
        let modules = json(&modules_path)?;
        let list = modules
            .as_array()
            .ok_or_else(|| invalid(&modules_path, "expected a JSON array of modules"))?;
        let ty = |m: &serde_json::Value| m.get("type").and_then(|t| t.as_str()).unwrap_or("").to_string();
        let pool_dir = list
            .iter()
            .find(|m| ty(m).ends_with("models.Pooling"))
            .and_then(|m| m.get("path").and_then(|p| p.as_str()).map(|p| dir.join(p)));
        let normalize = list.iter().any(|m| ty(m).ends_with("models.Normalize"));
        (pool_dir, normalize)
    } else {
        let default = dir.join("1_Pooling");
        (default.is_dir().then_some(default), false)
    };
    let Some(pool_dir) = pool_dir else {
        return Ok((Pooling::Mean, normalize));
    };
    let cfg_path = need(&pool_dir, "config.json").map_err(|_| SemanticError::ModelMissing {
        dir: dir.to_path_buf(),
        missing: pool_dir.join("config.json"),
    })?;
    let cfg = json(&cfg_path)?;
    let flag = |k: &str| cfg.get(k).and_then(|v| v.as_bool()).unwrap_or(false);
    if let Some(d) = cfg.get("word_embedding_dimension").and_then(|v| v.as_u64()) {
        if d as usize != hidden {
            return Err(invalid(
                &cfg_path,
                format!("word_embedding_dimension {d} but config.json's hidden_size is {hidden}"),
            ));
        }
    }
    let others = [
        "pooling_mode_max_tokens",
        "pooling_mode_mean_sqrt_len_tokens",
        "pooling_mode_weightedmean_tokens",
        "pooling_mode_lasttoken",
    ];
    if let Some(o) = others.iter().find(|k| flag(k)) {
        return Err(invalid(&cfg_path, format!("{o} is not supported (mean or CLS pooling only)")));
    }
    match (flag("pooling_mode_mean_tokens"), flag("pooling_mode_cls_token")) {
        (true, false) => Ok((Pooling::Mean, normalize)),
        (false, true) => Ok((Pooling::Cls, normalize)),
        (m, c) => Err(invalid(
            &cfg_path,
            format!("exactly one of pooling_mode_mean_tokens ({m}) and pooling_mode_cls_token ({c}) must be true"),
        )),
    }
}

impl Embedder {
    /// Loads the sentence-transformer in `dir`. A missing directory or file is
    /// [`SemanticError::ModelMissing`] (naming `scripts/fetch-model.sh`); an unusable one
    /// [`SemanticError::ModelInvalid`].
    pub fn load(dir: impl AsRef<Path>, opts: &EmbedderOptions) -> Result<Embedder> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(SemanticError::ModelMissing {
                dir: dir.to_path_buf(),
                missing: dir.to_path_buf(),
            }
            .into());
        }
        let config_path = need(dir, "config.json")?;
        let tokenizer_path = need(dir, "tokenizer.json")?;
        let weights_path = need(dir, "model.safetensors")?;
        check_counts(opts)?;

        let config: BertConfig =
            serde_json::from_slice(&read(&config_path)?).map_err(|e| invalid(&config_path, format!("not a BERT config: {e}")))?;
        if opts.max_tokens < 2 || opts.max_tokens > config.max_position_embeddings {
            return Err(Error::InvalidOption {
                name: "max_tokens",
                message: format!(
                    "{} is outside 2..={} (the model's max_position_embeddings)",
                    opts.max_tokens, config.max_position_embeddings
                ),
            });
        }
        let (pooling, normalize) = read_pipeline(dir, config.hidden_size)?;

        let tokenizer = load_tokenizer(&tokenizer_path, opts.max_tokens)?;

        let weights = read(&weights_path)?;
        let weights_xxh3 = xxhash_rust::xxh3::xxh3_64(&weights);
        let vb =
            VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu).map_err(|e| invalid(&weights_path, e.to_string()))?;
        let model = BertModel::load(vb, &config).map_err(|e| invalid(&weights_path, e.to_string()))?;

        let pool = embed_pool(opts)?;
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string());
        let mut info = ModelInfo {
            name,
            weights_xxh3,
            dim: config.hidden_size,
            pooling,
            normalize,
            max_positions: config.max_position_embeddings,
            calibrated_min_cosine: None,
        };
        info.calibrated_min_cosine = super::calibration::calibrated_min_cosine(info.weights_xxh3);
        Ok(Embedder {
            model,
            tokenizer,
            info,
            opts: opts.clone(),
            pad_id: config.pad_token_id as u32,
            pool,
        })
    }

    /// The model's identity and shape.
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// The settings it was loaded with.
    pub fn options(&self) -> &EmbedderOptions {
        &self.opts
    }

    /// Embeds each text (its first `max_tokens` tokens): one `dim`-long vector per text, in order,
    /// unit-length when the model normalises. Deterministic: the same texts in the same call give
    /// the same bits; a text's vector in another batch differs only by float rounding (≪ 1e-5).
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        #[cfg(feature = "failpoints")]
        if texts.iter().any(|t| t.contains(FAILPOINT_EMBED)) {
            return Err(SemanticError::Inference {
                op: "embedding (failpoint)",
                message: format!("a text holds `{FAILPOINT_EMBED}`"),
                batch: texts.len(),
            }
            .into());
        }
        self.pool.install(|| self.embed_in_pool(texts))
    }

    fn embed_in_pool(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let n = texts.len();
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| SemanticError::Inference {
                op: "tokenizing",
                message: e.to_string(),
                batch: n,
            })?;
        // Sort by length so each forward pass pads little; results go back to input order.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let mut out = vec![Vec::new(); n];
        for chunk in order.chunks(self.opts.batch) {
            let ids: Vec<&[u32]> = chunk.iter().map(|&i| encodings[i].get_ids()).collect();
            for (&i, v) in chunk.iter().zip(self.forward(&ids)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// One padded forward pass + pooling + normalisation.
    fn forward(&self, ids: &[&[u32]]) -> Result<Vec<Vec<f32>>> {
        let b = ids.len();
        let err = |op| SemanticError::candle(op, b);
        let len = ids.iter().map(|t| t.len()).max().unwrap_or(0).max(1);
        let mut flat = vec![self.pad_id; b * len];
        let mut mask = vec![0u32; b * len];
        for (row, t) in ids.iter().enumerate() {
            flat[row * len..row * len + t.len()].copy_from_slice(t);
            mask[row * len..row * len + t.len()].iter_mut().for_each(|m| *m = 1);
        }
        let dev = Device::Cpu;
        let input = Tensor::from_vec(flat, (b, len), &dev).map_err(err("building the input"))?;
        let mask = Tensor::from_vec(mask, (b, len), &dev).map_err(err("building the mask"))?;
        let types = input.zeros_like().map_err(err("building the token types"))?;
        let hidden = self.model.forward(&input, &types, Some(&mask)).map_err(err("running BERT"))?;
        let pooled = match self.info.pooling {
            Pooling::Mean => {
                let m = mask.to_dtype(DType::F32).and_then(|m| m.unsqueeze(2)).map_err(err("pooling"))?;
                let sum = hidden.broadcast_mul(&m).and_then(|x| x.sum(1)).map_err(err("pooling"))?;
                let count = m.sum(1).and_then(|c| c.clamp(1e-9f32, f32::MAX)).map_err(err("pooling"))?;
                sum.broadcast_div(&count).map_err(err("pooling"))?
            }
            Pooling::Cls => hidden.narrow(1, 0, 1).and_then(|x| x.squeeze(1)).map_err(err("pooling"))?,
        };
        let mut rows = pooled.to_vec2::<f32>().map_err(err("reading the vectors"))?;
        if self.info.normalize {
            rows.iter_mut().for_each(|r| normalize(r));
        }
        Ok(rows)
    }
}

/// Scales `v` to unit L2 length (sentence-transformers' Normalize: divides by max(‖v‖, 1e-12)).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= norm);
}

/// `threads` and `batch` are at least 1.
fn check_counts(opts: &EmbedderOptions) -> Result<()> {
    for (name, n) in [("threads", opts.threads), ("batch", opts.batch)] {
        if n == 0 {
            return Err(Error::InvalidOption {
                name,
                message: "must be at least 1".into(),
            });
        }
    }
    Ok(())
}

/// The model's tokenizer, unpadded, truncating at `max_tokens`.
fn load_tokenizer(path: &Path, max_tokens: usize) -> Result<Tokenizer> {
    let mut tokenizer = Tokenizer::from_file(path).map_err(|e| invalid(path, e.to_string()))?;
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            ..Default::default()
        }))
        .map_err(|e| invalid(path, e.to_string()))?;
    Ok(tokenizer)
}

/// The embedding threads (`opts.threads`, at `opts.nice`).
fn embed_pool(opts: &EmbedderOptions) -> Result<rayon_core::ThreadPool> {
    rayon_core::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .thread_name(|i| format!("fpdb-embed-{i}"))
        .start_handler({
            let nice = opts.nice;
            move |_| lower_priority(nice)
        })
        .build()
        .map_err(|e| Error::InvalidOption {
            name: "threads",
            message: format!("cannot start {} threads: {e}", opts.threads),
        })
}
