//! The semantic channel's typed errors. Each variant carries the evidence (the path, what was
//! expected and what was found) and says what the user can do. The db/ integration wraps it in
//! `crate::Error` (one `#[from]` variant) when the channel is registered as a side index.

use std::path::PathBuf;

use crate::error::ErrorClass;

/// The script that fetches the default model (named by [`SemanticError::ModelMissing`]).
pub const FETCH_SCRIPT: &str = "scripts/fetch-model.sh";

/// Everything that can go wrong in the semantic channel.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SemanticError {
    /// The model directory or one of its files does not exist.
    #[error("no sentence-transformer model at {dir}: {missing} is missing; fetch all-MiniLM-L6-v2 with `bash {FETCH_SCRIPT}` (it prints the model directory) and pass that directory")]
    ModelMissing {
        /// The model directory that was opened.
        dir: PathBuf,
        /// The file (or the directory itself) that is not there.
        missing: PathBuf,
    },
    /// A model file exists but cannot be used (bad JSON, an unsupported architecture or pooling,
    /// tensors of the wrong shape).
    #[error("unusable model file {path}: {message}; re-fetch the model with `bash {FETCH_SCRIPT}` or pass a BERT-family sentence-transformer directory")]
    ModelInvalid {
        /// The file at fault.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Reading a model file failed.
    #[error("I/O error reading {path}: {source} (check that the model directory is readable)")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The tokenizer or the network failed on an input (a bug or resource exhaustion, not bad text).
    #[error("the model failed while {op}: {message} (the input batch was {batch} texts; retry with a smaller batch or fewer threads)")]
    Inference {
        /// What the model was doing.
        op: &'static str,
        /// The library's message.
        message: String,
        /// How many texts were in the batch.
        batch: usize,
    },
    /// The database's stored semantic spec differs from the model or parameters given.
    #[error("semantic spec mismatch: field `{field}` is {stored} in the database but {given} was given; open with the model the database was created with (`fpdb init --semantic` records it), or re-embed into a new database")]
    SpecMismatch {
        /// The field that differs.
        field: &'static str,
        /// The stored value.
        stored: String,
        /// The value given now.
        given: String,
    },
    /// A stored semantic record or cursor does not decode.
    #[error("corruption in the semantic channel ({what}){}: run `fpdb check`; the channel can be rebuilt with `fpdb semantic backfill`", doc.map(|d| format!(" at doc {d}")).unwrap_or_default())]
    Corruption {
        /// What is wrong (expected vs found).
        what: String,
        /// The document whose record is damaged, when known.
        doc: Option<u64>,
    },
    /// RocksDB failed reading or writing the channel's column family or cursor.
    #[error("RocksDB error during {op}: {message} (check that the disk is not full and the directory is writable)")]
    Rocks {
        /// What the channel was doing.
        op: &'static str,
        /// RocksDB's message.
        message: String,
    },
    /// An invalid parameter (β outside [-1, 1], zero threads, a dimension mismatch).
    #[error("invalid semantic option `{name}`: {message}")]
    InvalidOption {
        /// The option.
        name: &'static str,
        /// Why it is invalid and what is allowed.
        message: String,
    },
    /// The background indexer stopped on an error; the channel is poisoned until reopened.
    #[error("the semantic indexer stopped: {cause}; reopen the database (the indexer resumes from its durable cursor)")]
    IndexerStopped {
        /// The error that stopped it.
        cause: String,
    },
    /// `wait_until` passed its deadline before the channel caught up.
    #[error("the semantic channel had not caught up with doc {target} after {waited_ms} ms (it has embedded up to {cursor}); wait longer or query without --wait-semantic")]
    WaitTimeout {
        /// The doc id waited for.
        target: u64,
        /// The cursor when the wait gave up.
        cursor: u64,
        /// How long it waited.
        waited_ms: u64,
    },
}

/// Result alias of the channel.
pub type Result<T, E = SemanticError> = std::result::Result<T, E>;

impl SemanticError {
    /// Its row of the one error table ([`crate::Error::class`]): a bad β is the request's, a wait
    /// past its bound 503 `semantic_pending` (retry later, or check without waiting), damage exit
    /// 4, the model's and the options' other faults usage (exit 2), the rest the server's.
    pub fn class(&self) -> ErrorClass {
        use ErrorClass as C;
        match self {
            SemanticError::ModelMissing { .. } => C::server(2, "ModelMissingError"),
            SemanticError::ModelInvalid { .. } => C::server(2, "ModelInvalidError"),
            SemanticError::SpecMismatch { .. } => C::server(2, "SemanticSpecMismatchError"),
            SemanticError::InvalidOption { .. } => C::caller(2, 400, "invalid_parameter", "InvalidOptionError"),
            SemanticError::WaitTimeout { .. } => ErrorClass {
                http_status: 503,
                http_code: "semantic_pending",
                ..C::server(2, "SemanticTimeoutError")
            },
            SemanticError::Corruption { .. } => ErrorClass {
                http_code: "internal",
                ..C::damage("CorruptionError")
            },
            SemanticError::Io { .. } => C::server(3, "IoError"),
            SemanticError::Rocks { .. } => C::server(3, "RocksError"),
            SemanticError::IndexerStopped { .. } | SemanticError::Inference { .. } => C::server(3, "SemanticError"),
        }
    }

    pub(crate) fn rocks(op: &'static str) -> impl Fn(rocksdb::Error) -> SemanticError {
        move |e| SemanticError::Rocks {
            op,
            message: e.into_string(),
        }
    }

    pub(crate) fn candle(op: &'static str, batch: usize) -> impl Fn(candle_core::Error) -> SemanticError {
        move |e| SemanticError::Inference {
            op,
            message: e.to_string(),
            batch,
        }
    }
}
