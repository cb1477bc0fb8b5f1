//! Typed Python exceptions, one per kind of `fpdb::Error`, all subclasses of `fpdb.FpdbError`.
//!
//! Where a builtin exception says the same thing, the class also derives from it (an `IoError` is an
//! `OSError`, a missing database a `FileNotFoundError`, bad input a `ValueError`), so generic
//! `except OSError:` handlers keep working. Each raised instance carries the error's evidence as
//! attributes (`path`, `field`, `expected`, `found`, `doc`, `key`, ...).

use pyo3::exceptions::{PyException, PyFileExistsError, PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::IntoPyObjectExt;

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
}

/// Builtin base classes besides `FpdbError`.
#[derive(Clone, Copy)]
enum Extra {
    None,
    OsError,
    FileNotFound,
    FileExists,
    ValueError,
}

/// (kind, class name, extra builtin base, docstring).
const KINDS: [(Kind, &str, Extra, &str); 14] = [
    (Kind::Base, "FpdbError", Extra::None, "Base class of every error raised by fpdb."),
    (
        Kind::Io,
        "IoError",
        Extra::OsError,
        "An operating-system I/O call failed on a file of the database (attributes: op, path, errno).",
    ),
    (
        Kind::Rocks,
        "RocksError",
        Extra::OsError,
        "RocksDB reported an error (attributes: op, path, message).",
    ),
    (
        Kind::Locked,
        "LockedError",
        Extra::None,
        "Another process (or another open handle) holds the database open for writing (attribute: path).",
    ),
    (
        Kind::NotFound,
        "NotFoundError",
        Extra::FileNotFound,
        "No database exists at the path (attribute: path).",
    ),
    (
        Kind::AlreadyExists,
        "AlreadyExistsError",
        Extra::FileExists,
        "Db.create was given a directory that already holds a database (attribute: path).",
    ),
    (
        Kind::SpecMismatch,
        "SpecMismatchError",
        Extra::None,
        "The requested fingerprint spec differs from the stored one (attributes: path, field, expected, found).",
    ),
    (
        Kind::Version,
        "VersionError",
        Extra::None,
        "A stored structure has a version this build cannot read (attributes: what, path, expected, found).",
    ),
    (
        Kind::Corruption,
        "CorruptionError",
        Extra::None,
        "Stored bytes do not decode or fail their checksum (attributes: path, doc, what).",
    ),
    (
        Kind::InvalidOption,
        "InvalidOptionError",
        Extra::ValueError,
        "An option value is out of range (attributes: option, message).",
    ),
    (
        Kind::InvalidInput,
        "InvalidInputError",
        Extra::ValueError,
        "A document or key cannot be stored as given, e.g. bytes that are not UTF-8 (attributes: key, message).",
    ),
    (
        Kind::Poisoned,
        "PoisonedError",
        Extra::None,
        "An earlier write failed; close the handle and reopen the database (attribute: cause).",
    ),
    (
        Kind::ReadOnly,
        "ReadOnlyError",
        Extra::None,
        "A write was attempted through a read-only handle (attribute: path).",
    ),
    (
        Kind::Closed,
        "ClosedError",
        Extra::ValueError,
        "The Db handle was closed (Db.close or the end of its `with` block).",
    ),
];

static TYPES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

fn build(py: Python<'_>) -> PyResult<Vec<Py<PyType>>> {
    let type_ = py.get_type::<PyType>();
    let mut out: Vec<Py<PyType>> = Vec::with_capacity(KINDS.len());
    for (kind, name, extra, doc) in KINDS {
        let base = match kind {
            Kind::Base => py.get_type::<PyException>(),
            _ => out[0].bind(py).clone(),
        };
        let bases = match extra {
            Extra::None => PyTuple::new(py, [base])?,
            Extra::OsError => PyTuple::new(py, [base, py.get_type::<PyOSError>()])?,
            Extra::FileNotFound => PyTuple::new(py, [base, py.get_type::<PyFileNotFoundError>()])?,
            Extra::FileExists => PyTuple::new(py, [base, py.get_type::<PyFileExistsError>()])?,
            Extra::ValueError => PyTuple::new(py, [base, py.get_type::<PyValueError>()])?,
        };
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
    for (kind, name, _, _) in KINDS {
        m.add(name, class(py, kind)?)?;
    }
    Ok(())
}

/// A new exception of `kind` with `message` and the given attributes.
pub fn raise(py: Python<'_>, kind: Kind, message: String, attrs: &[(&str, Py<PyAny>)]) -> PyErr {
    let ty = match class(py, kind) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let err = PyErr::from_type(ty, (message,));
    let value = err.value(py);
    for (name, v) in attrs {
        if let Err(e) = value.setattr(*name, v) {
            return e;
        }
    }
    err
}

fn obj<'py, T: IntoPyObject<'py>>(py: Python<'py>, v: T) -> Py<PyAny> {
    v.into_py_any(py).unwrap_or_else(|_| py.None())
}

/// The Python exception for a library error.
pub fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let message = e.to_string();
    let p = |path: &std::path::Path| obj(py, path.display().to_string());
    match &e {
        Error::Io { op, path, source } => raise(
            py,
            Kind::Io,
            message,
            &[
                ("op", obj(py, *op)),
                ("path", p(path)),
                // errno alone (no filename/strerror) keeps str(e) = fpdb's message.
                ("errno", obj(py, source.raw_os_error())),
            ],
        ),
        Error::Rocks {
            op,
            path,
            kind,
            message: m,
        } => raise(
            py,
            Kind::Rocks,
            message,
            &[
                ("op", obj(py, *op)),
                ("path", p(path)),
                ("kind", obj(py, kind.to_string())),
                ("message", obj(py, m.as_str())),
            ],
        ),
        Error::Locked { path } => raise(py, Kind::Locked, message, &[("path", p(path))]),
        Error::NotFound { path } => raise(py, Kind::NotFound, message, &[("path", p(path))]),
        Error::AlreadyExists { path } => raise(py, Kind::AlreadyExists, message, &[("path", p(path))]),
        Error::SpecMismatch {
            path,
            field,
            expected,
            found,
        } => raise(
            py,
            Kind::SpecMismatch,
            message,
            &[
                ("path", p(path)),
                ("field", obj(py, *field)),
                ("expected", obj(py, expected.as_str())),
                ("found", obj(py, found.as_str())),
            ],
        ),
        Error::Version {
            what,
            path,
            expected,
            found,
        } => raise(
            py,
            Kind::Version,
            message,
            &[
                ("what", obj(py, *what)),
                ("path", p(path)),
                ("expected", obj(py, *expected)),
                ("found", obj(py, *found)),
            ],
        ),
        Error::Corruption { path, doc, what } => raise(
            py,
            Kind::Corruption,
            message,
            &[("path", p(path)), ("doc", obj(py, *doc)), ("what", obj(py, what.as_str()))],
        ),
        Error::InvalidOption { name, message: m } => raise(
            py,
            Kind::InvalidOption,
            message,
            &[("option", obj(py, *name)), ("message", obj(py, m.as_str()))],
        ),
        Error::InvalidInput { key, message: m } => raise(
            py,
            Kind::InvalidInput,
            message,
            &[("key", obj(py, key.as_deref())), ("message", obj(py, m.as_str()))],
        ),
        Error::Poisoned { cause } => raise(py, Kind::Poisoned, message, &[("cause", obj(py, cause.as_str()))]),
        Error::ReadOnly { path } => raise(py, Kind::ReadOnly, message, &[("path", p(path))]),
        // Failpoint injections and kinds added to the library later: the base class.
        _ => raise(py, Kind::Base, message, &[]),
    }
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
