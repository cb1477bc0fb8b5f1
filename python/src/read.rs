//! `fpdb.read(path)`: the documents of a file or a directory, read by the library's reader
//! (`fpdb::input`), the one `fpdb ingest` reads with: JSONL (other fields kept as metadata; title,
//! year and DOI also indexed), WARC and WET files, directories of text files, gzip and zstd,
//! standard input as `-`. Its items go straight into `Db.ingest`, which then reports a bad line
//! as `fpdb ingest` does: as that item's error, with its line number, the rest still ingested.

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::api::{input, Error, NewDoc};
use crate::errors::to_py;

/// read(path, *, key_field="key", text_field="text", hidden=False) -> Reader
///
/// The documents of `path` as `fpdb ingest` reads them: a directory's text files (keyed by their
/// relative path; hidden files only when `hidden`), else a JSONL, WARC or WET file, gzip or zstd
/// compressed or not (`"-"`: standard input). Pass it to `Db.ingest`. Raises NotFoundError /
/// IoError when `path` cannot be opened, InvalidInputError for a format fpdb does not read.
#[pyfunction]
#[pyo3(signature = (path, *, key_field = "key", text_field = "text", hidden = false))]
pub fn read(py: Python<'_>, path: PathBuf, key_field: &str, text_field: &str, hidden: bool) -> PyResult<Reader> {
    let Some(name) = path.to_str() else {
        return Err(to_py(
            py,
            Error::InvalidInput {
                key: None,
                message: format!("{}: the path is not UTF-8; rename it or pass the file's contents", path.display()),
            },
        ));
    };
    let origins = input::Origins::default();
    let items = py
        .detach(|| input::open(name, key_field, text_field, hidden, &origins))
        .map_err(|e| to_py(py, e))?;
    Ok(Reader {
        inner: Mutex::new(Some(Open { items, origins, seq: 0 })),
    })
}

struct Open {
    items: input::Items,
    origins: input::Origins,
    /// The input position of the next item.
    seq: u64,
}

/// The iterator `fpdb.read` returns: one ReadItem per document of the input, in input order.
#[pyclass(module = "fpdb._fpdb", frozen)]
pub struct Reader {
    /// None once the input is exhausted (or failed).
    inner: Mutex<Option<Open>>,
}

#[pymethods]
impl Reader {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// The next item; a line that is not a document is an item with its `error`. An I/O error
    /// (a truncated gzip stream, a read that failed) is raised, and ends the iteration.
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<ReadItem>> {
        // try_lock: a thread that blocked here holding the GIL would stop the one reading without it.
        let mut guard = self
            .inner
            .try_lock()
            .map_err(|_| PyRuntimeError::new_err("this Reader is being read by another thread"))?;
        let Some(open) = guard.as_mut() else { return Ok(None) };
        let items = &mut open.items;
        let next = py.detach(|| items.next());
        let seq = open.seq;
        open.seq += 1;
        let origin = input::lock(&open.origins).take(seq).unwrap_or_else(|| format!("item {}", seq + 1));
        match next {
            None => {
                *guard = None;
                Ok(None)
            }
            Some(Ok(doc)) => Ok(Some(ReadItem { doc: Ok(doc), origin })),
            Some(Err(Error::InvalidInput { key, message })) => Ok(Some(ReadItem {
                doc: Err(Rejected { key, message }),
                origin,
            })),
            Some(Err(e)) => {
                *guard = None;
                Err(to_py(py, e))
            }
        }
    }
}

/// One item of `fpdb.read`: a document, or the reason its line is not one (`error`).
#[pyclass(module = "fpdb._fpdb", frozen)]
pub struct ReadItem {
    doc: Result<NewDoc, Rejected>,
    origin: String,
}

/// The reader's `Error::InvalidInput` for a line that is not a document, kept to be handed on.
#[derive(Clone)]
struct Rejected {
    key: Option<String>,
    message: String,
}

impl ReadItem {
    /// The document, or its rejection as the library's error (what `Db.ingest` reports for it).
    pub(crate) fn item(&self) -> Result<NewDoc, Error> {
        self.doc.clone().map_err(|r| Error::InvalidInput {
            key: r.key,
            message: r.message,
        })
    }
}

#[pymethods]
impl ReadItem {
    /// Its key (None for a line that is not a document).
    #[getter]
    fn key(&self) -> Option<&str> {
        self.doc.as_ref().ok().map(|d| d.key.as_str())
    }

    /// Its text (None for a line that is not a document).
    #[getter]
    fn text(&self) -> Option<&str> {
        self.doc.as_ref().ok().map(|d| d.text.as_str())
    }

    /// Its metadata, decoded from JSON (the fields other than key and text), or None.
    #[getter]
    fn meta(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        match self.doc.as_ref().ok().and_then(|d| d.meta.as_deref()) {
            None => Ok(None),
            Some(m) => crate::types::json_loads(py, m).map(Some),
        }
    }

    /// Where it came from: `FILE line N`, `FILE record N (byte B decompressed)`, or a file's path.
    #[getter]
    fn origin(&self) -> &str {
        &self.origin
    }

    /// Why its line is not a document (the message `fpdb ingest` prints), or None.
    #[getter]
    fn error(&self) -> Option<String> {
        self.item().err().map(|e| input::rejection(&self.origin, &e))
    }

    fn __repr__(&self) -> String {
        match (&self.doc, self.error()) {
            (Ok(d), _) => format!("ReadItem(key={:?}, origin={:?})", d.key, self.origin),
            (Err(_), e) => format!("ReadItem(error={:?})", e.unwrap_or_default()),
        }
    }
}
