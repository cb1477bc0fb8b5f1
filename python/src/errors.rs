//! Typed Python exceptions, one per kind of `fpdb::Error`, all subclasses of `fpdb.FpdbError`.
//!
//! Where a builtin exception says the same thing, the class also derives from it (an `IoError` is an
//! `OSError`, a missing database a `FileNotFoundError`, bad input a `ValueError`), so generic
//! `except OSError:` handlers keep working. Each raised instance carries the error's evidence as
//! attributes (`path`, `field`, `expected`, `found`, `doc`, `key`, ...).

use pyo3::exceptions::{PyException, PyFileExistsError, PyFileNotFoundError, PyOSError, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use fpdb::output::ErrorFields;

use crate::api::Error;

/// The exception classes, in the order of [`KINDS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Base,
    Io,
    Rocks,
    Locked,
    NotFound,
    AlreadyExists,
    SpecMismatch,
    Version,
    Corruption,
    InvalidOption,
    InvalidInput,
    Poisoned,
    ReadOnly,
    Closed,
    Semantic,
    ModelMissing,
    ModelInvalid,
    SemanticSpecMismatch,
    SemanticTimeout,
}

/// Builtin base classes besides `FpdbError`.
#[derive(Clone, Copy)]
enum Extra {
    None,
    OsError,
    FileNotFound,
    FileExists,
    ValueError,
    TimeoutError,
}

/// (kind, class name, fpdb bases besides `FpdbError`, extra builtin base, docstring); a class
/// comes after its bases.
const KINDS: [(Kind, &str, &[Kind], Extra, &str); 19] = [
    (Kind::Base, "FpdbError", &[], Extra::None, "Base class of every error raised by fpdb."),
    (
        Kind::Io,
        "IoError",
        &[],
        Extra::OsError,
        "An operating-system I/O call failed on a file of the database (attributes: op, path, errno).",
    ),
    (
        Kind::Rocks,
        "RocksError",
        &[],
        Extra::OsError,
        "RocksDB reported an error (attributes: op, path, message).",
    ),
    (
        Kind::Locked,
        "LockedError",
        &[],
        Extra::None,
        "Another process (or another open handle) holds the database open for writing (attribute: path).",
    ),
    (
        Kind::NotFound,
        "NotFoundError",
        &[],
        Extra::FileNotFound,
        "No database exists at the path (attribute: path).",
    ),
    (
        Kind::AlreadyExists,
        "AlreadyExistsError",
        &[],
        Extra::FileExists,
        "Db.create was given a directory that already holds a database (attribute: path).",
    ),
    (
        Kind::SpecMismatch,
        "SpecMismatchError",
        &[],
        Extra::None,
        "The requested fingerprint spec differs from the stored one (attributes: path, field, expected, found).",
    ),
    (
        Kind::Version,
        "VersionError",
        &[],
        Extra::None,
        "A stored structure has a version this build cannot read (attributes: what, path, expected, found).",
    ),
    (
        Kind::Corruption,
        "CorruptionError",
        &[],
        Extra::None,
        "Stored bytes do not decode or fail their checksum (attributes: path, doc, what).",
    ),
    (
        Kind::InvalidOption,
        "InvalidOptionError",
        &[],
        Extra::ValueError,
        "An option value is out of range (attributes: option, message).",
    ),
    (
        Kind::InvalidInput,
        "InvalidInputError",
        &[],
        Extra::ValueError,
        "A document or key cannot be stored as given, e.g. bytes that are not UTF-8 (attributes: key, message).",
    ),
    (
        Kind::Poisoned,
        "PoisonedError",
        &[],
        Extra::None,
        "An earlier write failed; close the handle and reopen the database (attribute: cause).",
    ),
    (
        Kind::ReadOnly,
        "ReadOnlyError",
        &[],
        Extra::None,
        "A write was attempted through a read-only handle (attribute: path).",
    ),
    (
        Kind::Closed,
        "ClosedError",
        &[],
        Extra::ValueError,
        "The Db handle was closed (Db.close or the end of its `with` block).",
    ),
    (
        Kind::Semantic,
        "SemanticError",
        &[],
        Extra::None,
        "An error of the semantic channel (docs/semantic.md); the model failed on an input (attributes: op, message, batch) or the background indexer stopped (attribute: cause; reopen the database). Its subclasses: ModelMissingError, ModelInvalidError, SemanticSpecMismatchError, SemanticTimeoutError. The channel's I/O, RocksDB, corruption and option errors are IoError, RocksError, CorruptionError and InvalidOptionError.",
    ),
    (
        Kind::ModelMissing,
        "ModelMissingError",
        &[Kind::Semantic],
        Extra::FileNotFound,
        "The semantic channel's model directory, or a file in it, does not exist (attributes: path, the model directory; missing, the file that is not there). `bash scripts/fetch-model.sh` fetches all-MiniLM-L6-v2.",
    ),
    (
        Kind::ModelInvalid,
        "ModelInvalidError",
        &[Kind::Semantic],
        Extra::ValueError,
        "A file of the semantic channel's model exists but cannot be used: bad JSON, an unsupported architecture or pooling (attributes: path, message).",
    ),
    (
        Kind::SemanticSpecMismatch,
        "SemanticSpecMismatchError",
        &[Kind::Semantic, Kind::SpecMismatch],
        Extra::None,
        "The model (or a parameter) given differs from the one the database's semantic channel was created with (attributes: field, expected: the value given now, found: the stored one).",
    ),
    (
        Kind::SemanticTimeout,
        "SemanticTimeoutError",
        &[Kind::Semantic],
        Extra::TimeoutError,
        "A query's wait_semantic passed its bound before the channel had embedded every acknowledged document (attributes: target, the doc id waited for; cursor, how far it got; waited_ms).",
    ),
];

static TYPES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

fn build(py: Python<'_>) -> PyResult<Vec<Py<PyType>>> {
    let type_ = py.get_type::<PyType>();
    let mut out: Vec<Py<PyType>> = Vec::with_capacity(KINDS.len());
    for (kind, name, parents, extra, doc) in KINDS {
        let mut bases: Vec<Bound<'_, PyType>> = match kind {
            Kind::Base => vec![py.get_type::<PyException>()],
            _ if parents.is_empty() => vec![out[0].bind(py).clone()],
            _ => parents
                .iter()
                .map(|p| out[KINDS.iter().position(|k| k.0 == *p).unwrap_or(0)].bind(py).clone())
                .collect(),
        };
        match extra {
            Extra::None => {}
            Extra::OsError => bases.push(py.get_type::<PyOSError>()),
            Extra::FileNotFound => bases.push(py.get_type::<PyFileNotFoundError>()),
            Extra::FileExists => bases.push(py.get_type::<PyFileExistsError>()),
            Extra::ValueError => bases.push(py.get_type::<PyValueError>()),
            Extra::TimeoutError => bases.push(py.get_type::<PyTimeoutError>()),
        }
        let bases = PyTuple::new(py, bases)?;
        let dict = PyDict::new(py);
        dict.set_item("__doc__", doc)?;
        dict.set_item("__module__", "fpdb")?;
        let ty = type_.call1((name, bases, dict))?.cast_into::<PyType>()?;
        out.push(ty.unbind());
    }
    Ok(out)
}

fn class(py: Python<'_>, kind: Kind) -> PyResult<Bound<'_, PyType>> {
    let types = TYPES.get_or_try_init(py, || build(py))?;
    let i = KINDS.iter().position(|k| k.0 == kind).unwrap_or(0);
    Ok(types[i].bind(py).clone())
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    for (kind, name, _, _, _) in KINDS {
        m.add(name, class(py, kind)?)?;
    }
    Ok(())
}

/// A new exception of `kind` with `message` and the given attributes.
pub fn raise<N: AsRef<str>>(py: Python<'_>, kind: Kind, message: String, attrs: &[(N, Py<PyAny>)]) -> PyErr {
    let ty = match class(py, kind) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let err = PyErr::from_type(ty, (message,));
    let value = err.value(py);
    for (name, v) in attrs {
        if let Err(e) = value.setattr(name.as_ref(), v) {
            return e;
        }
    }
    err
}

/// The Python exception for a library error: its class by kind, its message, and the error's
/// evidence (`fpdb::output::ErrorFields`: op, path, errno, field, expected, found, doc, key, ...)
/// as attributes.
pub fn to_py(py: Python<'_>, e: Error) -> PyErr {
    // The class by the library's one table (`fpdb::Error::class`); a name this binding does not
    // know (a kind added to the library later) gets the base class.
    let name = e.class().python;
    let kind = KINDS.iter().find(|k| k.1 == name).map_or(Kind::Base, |k| k.0);
    let attrs = match crate::types::to_dict(py, &ErrorFields(&e)) {
        Ok(d) => d.iter().map(|(k, v)| (k.to_string(), v.unbind())).collect::<Vec<_>>(),
        Err(err) => return err,
    };
    raise(py, kind, e.to_string(), &attrs)
}

/// `Result<T, fpdb::Error>` → `PyResult<T>`.
pub trait OrRaise<T> {
    /// Maps the library error to its Python exception.
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, Error> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}

/// An `InvalidOptionError` for a binding-level option (e.g. `dedup="maybe"`).
pub fn invalid_option(py: Python<'_>, name: &'static str, message: String) -> PyErr {
    to_py(py, Error::InvalidOption { name, message })
}
