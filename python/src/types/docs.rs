//! `Document`: a stored document as `Db.get` returns it; `to_dict()` is the library's shape of
//! `fpdb --json get` (`fpdb::output::DocumentLine`).

use fpdb::output::DocumentLine;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{r, to_dict, GroupInfo};
use crate::api::Document as EngineDocument;

/// A stored document, as `Db.get` returns it.
#[pyclass(frozen, module = "fpdb")]
#[derive(Clone, Debug)]
pub struct Document {
    line: DocumentLine,
    /// The metadata as stored (JSON text).
    meta: Option<String>,
    grp: GroupInfo,
}

impl Document {
    pub fn new(d: EngineDocument, members: Vec<(u64, String)>) -> Self {
        Document {
            line: DocumentLine::new(&d, &members),
            meta: d.record.meta,
            grp: d.group.into(),
        }
    }

    /// Its key, owned.
    pub fn key_string(self) -> String {
        self.line.key
    }
}

#[pymethods]
impl Document {
    /// Its key.
    #[getter]
    fn key(&self) -> &str {
        &self.line.key
    }

    /// Its doc id.
    #[getter]
    fn id(&self) -> u64 {
        self.line.id
    }

    /// Its 64-bit SimHash.
    #[getter]
    fn simhash(&self) -> u64 {
        self.line.simhash
    }

    /// Number of distinct shingles.
    #[getter]
    fn shingles(&self) -> u32 {
        self.line.shingles
    }

    /// Insertion time, milliseconds since the Unix epoch.
    #[getter]
    fn inserted_at_ms(&self) -> u64 {
        self.line.inserted_at_ms
    }

    /// Metadata stored with it, decoded from its JSON text (a dict for the metadata of `insert`,
    /// `ingest` and `fpdb ingest`); None when there is none. Metadata that is not JSON (stored
    /// through the Rust API) is returned as its text.
    #[getter]
    fn meta(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        match self.meta.as_deref() {
            None => Ok(None),
            Some(m) if serde_json::from_str::<serde::de::IgnoredAny>(m).is_ok() => super::json_loads(py, m).map(Some),
            Some(m) => Ok(Some(m.into_pyobject(py)?.into_any().unbind())),
        }
    }

    /// Keys of its group's members, by doc id (itself alone when it has no near-duplicate).
    #[getter]
    fn members(&self) -> Vec<String> {
        self.line.group_members.clone()
    }

    /// Its title, if it was ingested with one.
    #[getter]
    fn title(&self) -> Option<&str> {
        self.line.title.as_deref()
    }

    /// Its year, if it was ingested with one.
    #[getter]
    fn year(&self) -> Option<i32> {
        self.line.year
    }

    /// Its DOI, if it was ingested with one.
    #[getter]
    fn doi(&self) -> Option<&str> {
        self.line.doi.as_deref()
    }

    /// Its group.
    #[getter]
    fn group(&self) -> GroupInfo {
        self.grp.clone()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Document(key={}, id={}, simhash={:#018x}, shingles={}, group={})",
            r(&self.line.key),
            self.line.id,
            self.line.simhash,
            self.line.shingles,
            self.grp.__repr__(py)?
        ))
    }

    /// The document as a dict: the fields of `fpdb --json get`, key for key ("meta" is the
    /// metadata decoded from its JSON text, None when absent or not JSON).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, &self.line)
    }
}
