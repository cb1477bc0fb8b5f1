//! The semantic channel's own errors: the model (missing, unusable, failing), its stored spec and
//! its indexer. Each variant carries the evidence and says what the user can do; `crate::Error`
//! holds it (one `#[from]` variant). What the channel shares with the rest of the engine (I/O,
//! RocksDB, a record that does not decode, an invalid option) is `crate::Error`'s own variant, so
//! the channel's functions return `crate::Error` ([`Result`]).

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

/// Result alias of the channel: its functions fail with the engine's [`crate::Error`].
pub type Result<T, E = crate::Error> = std::result::Result<T, E>;

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
            SemanticError::WaitTimeout { .. } => ErrorClass {
                http_status: 503,
                http_code: "semantic_pending",
                ..C::server(2, "SemanticTimeoutError")
            },
            SemanticError::IndexerStopped { .. } | SemanticError::Inference { .. } => C::server(3, "SemanticError"),
        }
    }

    pub(crate) fn candle(op: &'static str, batch: usize) -> impl Fn(candle_core::Error) -> crate::Error {
        move |e| {
            SemanticError::Inference {
                op,
                message: e.to_string(),
                batch,
            }
            .into()
        }
    }
}

/// A RocksDB error of the channel's store at `db` during `op` ([`crate::Error::rocks`]).
pub(crate) fn rocks<'a>(op: &'static str, db: &'a rocksdb::DB) -> impl Fn(rocksdb::Error) -> crate::Error + 'a {
    move |e| crate::Error::rocks(op, db.path(), e)
}

/// A semantic record of the store at `db` that does not decode (`what`: expected vs found).
pub(crate) fn corrupt(db: &rocksdb::DB, doc: Option<u64>, what: impl Into<String>) -> crate::Error {
    crate::Error::corrupt(
        db.path(),
        doc,
        format!("the semantic channel: {}; `fpdb semantic backfill` rebuilds it", what.into()),
    )
}
