//! Typed errors. Every variant carries the evidence a user needs (the path, what was expected and what
//! was found) and its message says what to do next.

use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The kind of a RocksDB failure, kept from RocksDB's own status code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RocksKind {
    /// An I/O error (a full disk, a failed sync, a missing file).
    Io,
    /// Busy, try again or timed out.
    Busy,
    /// RocksDB rejected an argument.
    InvalidArgument,
    /// Not supported by this RocksDB build.
    NotSupported,
    /// Shutting down or aborted.
    Aborted,
    /// Any other status.
    Other,
}

impl std::fmt::Display for RocksKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RocksKind::Io => "I/O",
            RocksKind::Busy => "busy",
            RocksKind::InvalidArgument => "invalid-argument",
            RocksKind::NotSupported => "not-supported",
            RocksKind::Aborted => "aborted",
            RocksKind::Other => "other",
        })
    }
}

/// Everything that can go wrong in fpdb.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O call failed on a file of the database.
    #[error("I/O error during {op} on {path}: {source} (check that the path exists, is writable and the disk is not full)")]
    Io {
        /// What fpdb was doing.
        op: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// RocksDB reported an error (other than corruption, which is [`Error::Corruption`]).
    #[error("RocksDB {kind} error during {op} in {path}: {message} (check that the disk is not full and the directory is writable)")]
    Rocks {
        /// What fpdb was doing.
        op: &'static str,
        /// The RocksDB directory.
        path: PathBuf,
        /// RocksDB's error kind.
        kind: RocksKind,
        /// RocksDB's message.
        message: String,
    },
    /// Another process holds the database open for writing.
    #[error("database {path} is locked by another process; stop the other fpdb process (or open it read-only)")]
    Locked {
        /// The database directory.
        path: PathBuf,
    },
    /// No database exists at the path.
    #[error("no fpdb database at {path}; create one first with `fpdb init` (or `Db::create`)")]
    NotFound {
        /// The path that was opened.
        path: PathBuf,
    },
    /// `create` was asked for a directory that already holds a database.
    #[error("a database already exists at {path}; open it instead, or choose an empty directory")]
    AlreadyExists {
        /// The database directory.
        path: PathBuf,
    },
    /// The fingerprint spec the caller asked for differs from the one stored in the database.
    #[error("fingerprint spec mismatch in {path}: field `{field}` is {found} in the database but {expected} was requested; open without a spec (use the stored one) or create a new database")]
    SpecMismatch {
        /// The database directory.
        path: PathBuf,
        /// The first field that differs.
        field: &'static str,
        /// The requested value.
        expected: String,
        /// The stored value.
        found: String,
    },
    /// A stored structure has a version this build cannot read.
    #[error("unsupported {what} version in {path}: this build reads {expected}, found {found}; use a matching fpdb version")]
    Version {
        /// Which structure.
        what: &'static str,
        /// Where it was found.
        path: PathBuf,
        /// The version this build understands.
        expected: u32,
        /// The version found.
        found: u32,
    },
    /// Stored bytes do not decode or do not match their checksum.
    #[error("corruption in {path}{}: {what}; run `fpdb check` to list every damaged document, then delete or re-insert them", doc.map(|d| format!(" (doc {d})")).unwrap_or_default())]
    Corruption {
        /// The file (segment or RocksDB directory).
        path: PathBuf,
        /// The document concerned, when known.
        doc: Option<u64>,
        /// What is wrong (expected vs found).
        what: String,
    },
    /// An option value is out of range.
    #[error("invalid option `{name}`: {message}")]
    InvalidOption {
        /// The option.
        name: &'static str,
        /// Why it is rejected and what is accepted.
        message: String,
    },
    /// A document or key cannot be stored as given.
    #[error("invalid input{}: {message}", key.as_ref().map(|k| format!(" for key {k:?}")).unwrap_or_default())]
    InvalidInput {
        /// The key of the document, when known (lossy UTF-8).
        key: Option<String>,
        /// What is wrong and what is accepted.
        message: String,
    },
    /// An operation on stored documents (a curator's decision) names a key no stored document has.
    #[error("no stored document has key {key:?}; a decision names two stored documents (store it first, or check the key)")]
    NoSuchDocument {
        /// The key (lossy UTF-8, at most 200 bytes).
        key: String,
    },
    /// An operation on a pair of documents (a curator's decision) names one document twice.
    #[error("key {key:?} is named twice; a decision is about two different documents")]
    SameDocument {
        /// The key named twice.
        key: String,
    },
    /// An earlier write failed in a way that leaves the on-disk state unknown to this handle.
    #[error("database handle is poisoned by an earlier failed write ({cause}); drop the handle and reopen the database, recovery will restore a consistent state")]
    Poisoned {
        /// The first failure.
        cause: String,
    },
    /// A write was attempted through a read-only handle.
    #[error("database {path} is open read-only; open it for writing to change it")]
    ReadOnly {
        /// The database directory.
        path: PathBuf,
    },
    /// fpdb's own code panicked (a bug): a pipeline worker, the writer or a batch job. A panic in the
    /// writer also poisons the handle; nothing after the last reported document was stored.
    #[error("internal panic in {stage}: {message}; this is a bug in fpdb, please report it (the database is consistent: reopen it and re-run the input from the last reported document)")]
    Panicked {
        /// Where it happened (`ingest worker`, `writer`, `pairs worker`, ...).
        stage: &'static str,
        /// The panic message.
        message: String,
    },
    /// A curator's decision contradicts decisions already made (`distinct` between two documents
    /// that `same` decisions join, or `same` between two that a `distinct` decision separates);
    /// nothing was changed.
    #[error("the decision `{decision} {a:?} {b:?}` contradicts {}; undo one of them first (`fpdb review undo DB KEY_A KEY_B`)", evidence.iter().map(|d| format!("`{} {:?} {:?}`", d.decision, d.a, d.b)).collect::<Vec<_>>().join(", "))]
    Contradiction {
        /// The decision's smaller key.
        a: String,
        /// Its larger key.
        b: String,
        /// `same` or `distinct`.
        decision: String,
        /// The decisions it contradicts: the chain of `same` decisions (and the `distinct` one).
        evidence: Vec<crate::db::Decision>,
    },
    /// A fault injected by a failpoint (only with the `failpoints` feature).
    #[error("injected failure at failpoint `{0}`")]
    Injected(&'static str),
    /// The semantic channel (feature `semantic`) failed in what is its own: its model (missing: the
    /// message names `scripts/fetch-model.sh`; unusable; failing on an input), its stored spec (a
    /// different model) or its indexer (stopped, or not caught up in time). Its I/O, RocksDB,
    /// corruption and option errors are this enum's `Io`, `Rocks`, `Corruption`, `InvalidOption`.
    #[cfg(feature = "semantic")]
    #[error(transparent)]
    Semantic(#[from] crate::semantic::SemanticError),
}

impl Error {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// Maps a RocksDB error by its kind (never by its message text): corruption becomes
    /// [`Error::Corruption`], everything else [`Error::Rocks`] with the kind kept.
    pub(crate) fn rocks(op: &'static str, path: impl Into<PathBuf>, e: rocksdb::Error) -> Self {
        use rocksdb::ErrorKind as K;
        let path = path.into();
        let kind = match e.kind() {
            K::Corruption => {
                return Error::Corruption {
                    path,
                    doc: None,
                    what: format!("RocksDB reports corruption during {op}: {}", e.into_string()),
                }
            }
            K::IOError => RocksKind::Io,
            K::Busy | K::TryAgain | K::TimedOut => RocksKind::Busy,
            K::InvalidArgument => RocksKind::InvalidArgument,
            K::NotSupported => RocksKind::NotSupported,
            K::ShutdownInProgress | K::Aborted => RocksKind::Aborted,
            _ => RocksKind::Other,
        };
        Error::Rocks {
            op,
            path,
            kind,
            message: e.into_string(),
        }
    }

    /// A panic payload as an error (its message when it is a string).
    pub(crate) fn panicked(stage: &'static str, payload: &(dyn std::any::Any + Send)) -> Self {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        Error::Panicked { stage, message }
    }

    pub(crate) fn corrupt(path: impl Into<PathBuf>, doc: Option<u64>, what: impl Into<String>) -> Self {
        Error::Corruption {
            path: path.into(),
            doc,
            what: what.into(),
        }
    }

    pub(crate) fn input(key: Option<&[u8]>, message: impl Into<String>) -> Self {
        Error::InvalidInput {
            key: key.map(|k| String::from_utf8_lossy(&k[..k.len().min(200)]).into_owned()),
            message: message.into(),
        }
    }

    /// True when the error reports a damaged database (as opposed to bad input or an environment problem).
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }

    /// What this error is to each front end ([`ErrorClass`]): the one table the CLI's exit code,
    /// `fpdb serve`'s status and code and the Python exception class are read from.
    pub fn class(&self) -> ErrorClass {
        use ErrorClass as C;
        match self {
            Error::Io { .. } => C::server(3, "IoError"),
            Error::Rocks { .. } => C::server(3, "RocksError"),
            Error::Locked { .. } => C::server(5, "LockedError"),
            Error::NotFound { .. } => C::server(2, "NotFoundError"),
            // The message names a server path: the client gets a fixed one.
            Error::AlreadyExists { .. } => ErrorClass {
                about_request: false,
                ..C::caller(2, 409, "already_exists", "AlreadyExistsError")
            },
            Error::SpecMismatch { .. } => C::server(2, "SpecMismatchError"),
            Error::Version { .. } => C::damage("VersionError"),
            Error::Corruption { .. } => C::damage("CorruptionError"),
            Error::InvalidOption { .. } => C::caller(2, 400, "invalid_parameter", "InvalidOptionError"),
            Error::InvalidInput { .. } => C::caller(2, 400, "invalid_document", "InvalidInputError"),
            // Python: a subclass of InvalidInputError is not needed to tell them apart (the message
            // and `.key` do), and code that catches InvalidInputError keeps working.
            Error::NoSuchDocument { .. } => C::caller(2, 404, "document_not_found", "InvalidInputError"),
            Error::SameDocument { .. } => C::caller(2, 409, "same_document", "InvalidInputError"),
            Error::Poisoned { .. } => C::unavailable(3, "PoisonedError"),
            Error::ReadOnly { .. } => C::unavailable(2, "ReadOnlyError"),
            Error::Panicked { .. } => C::server(3, "FpdbError"),
            Error::Injected(_) => C::server(2, "FpdbError"),
            Error::Contradiction { .. } => C::caller(2, 409, "contradiction", "FpdbError"),
            #[cfg(feature = "semantic")]
            Error::Semantic(s) => s.class(),
        }
    }
}

/// What an error is to a caller, for every front end: [`Error::class`] is the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ErrorClass {
    /// The `fpdb` command's exit code: 2 usage (bad arguments, no database, spec mismatch), 3 I/O,
    /// RocksDB, a poisoned handle or a panic, 4 damage, 5 locked (`fpdb --help` lists them).
    pub exit_code: u8,
    /// The HTTP status `fpdb serve` answers with.
    pub http_status: u16,
    /// The stable code of the HTTP error body (`error.code`).
    pub http_code: &'static str,
    /// The Python exception class (`fpdb.IoError`, ...; each derives from `fpdb.FpdbError`).
    pub python: &'static str,
    /// Whether the error is about the caller's request, so that its message (a key, a rule, never
    /// a path) is shown to an HTTP client; otherwise the client gets a fixed message for the code
    /// and the library's text goes to the server's log.
    pub about_request: bool,
}

impl ErrorClass {
    /// The caller's request is wrong: its own message, this status and code.
    pub(crate) const fn caller(exit_code: u8, http_status: u16, http_code: &'static str, python: &'static str) -> Self {
        ErrorClass {
            exit_code,
            http_status,
            http_code,
            python,
            about_request: true,
        }
    }

    /// The server failed: 500 `internal`.
    pub(crate) const fn server(exit_code: u8, python: &'static str) -> Self {
        ErrorClass {
            exit_code,
            http_status: 500,
            http_code: "internal",
            python,
            about_request: false,
        }
    }

    /// Stored data is damaged: exit 4, 500 `corruption`.
    pub(crate) const fn damage(python: &'static str) -> Self {
        ErrorClass {
            exit_code: 4,
            http_status: 500,
            http_code: "corruption",
            python,
            about_request: false,
        }
    }

    /// The handle takes no writes: 503 `unavailable`.
    pub(crate) const fn unavailable(exit_code: u8, python: &'static str) -> Self {
        ErrorClass {
            exit_code,
            http_status: 503,
            http_code: "unavailable",
            python,
            about_request: false,
        }
    }
}
