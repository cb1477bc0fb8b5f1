//! `Document`: a stored document as `Db.get` returns it.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{dict, o, r, GroupInfo};
use crate::api::Document as EngineDocument;
use crate::convert;

/// A stored document, as `Db.get` returns it.
#[pyclass(frozen, module = "fpdb")]
#[derive(Clone, Debug)]
pub struct Document {
    /// Its key.
    #[pyo3(get)]
    pub key: String,
    /// Its doc id.
    #[pyo3(get)]
    pub id: u64,
    /// Its 64-bit SimHash.
    #[pyo3(get)]
    pub simhash: u64,
    /// Number of distinct shingles.
    #[pyo3(get)]
    pub shingles: u32,
    /// Insertion time, milliseconds since the Unix epoch.
    #[pyo3(get)]
    pub inserted_at_ms: u64,
    /// Metadata stored with it (JSON text), if any.
    #[pyo3(get)]
    pub meta: Option<String>,
    /// Keys of its group's members, by doc id (itself alone when it has no near-duplicate).
    #[pyo3(get)]
    pub members: Vec<String>,
    /// Its title, if it was ingested with one.
    #[pyo3(get)]
    pub title: Option<String>,
    /// Its year, if it was ingested with one.
    #[pyo3(get)]
    pub year: Option<i32>,
    /// Its DOI, if it was ingested with one.
    #[pyo3(get)]
    pub doi: Option<String>,
    grp: GroupInfo,
}

impl Document {
    pub fn new(d: EngineDocument, members: Vec<(u64, String)>) -> Self {
        Document {
            key: d.record.key,
            id: d.id,
            simhash: d.record.simhash,
            shingles: d.record.count,
            inserted_at_ms: d.record.inserted_at_ms,
            meta: d.record.meta,
            members: members.into_iter().map(|m| m.1).collect(),
            title: d.record.biblio.title,
            year: d.record.biblio.year,
            doi: d.record.biblio.doi,
            grp: d.group.into(),
        }
    }
}

#[pymethods]
impl Document {
    /// Its group.
    #[getter]
    fn group(&self) -> GroupInfo {
        self.grp.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "Document(key={}, id={}, simhash={:#018x}, shingles={}, group={})",
            r(&self.key),
            self.id,
            self.simhash,
            self.shingles,
            self.grp.__repr__()
        )
    }

    /// The document as a dict: the fields of `fpdb --json get`, key for key ("meta" is the
    /// metadata decoded from its JSON text, None when absent or not JSON).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let meta = match &self.meta {
            Some(m) => convert::json_loads(py, m).unwrap_or_else(|_| py.None()),
            None => py.None(),
        };
        dict(
            py,
            &[
                ("key", o(py, &self.key)?),
                ("id", o(py, self.id)?),
                ("simhash", o(py, self.simhash)?),
                ("shingles", o(py, self.shingles)?),
                ("group", o(py, self.grp.id)?),
                ("canonical", o(py, &self.grp.canonical)?),
                ("group_members", o(py, &self.members)?),
                ("inserted_at_ms", o(py, self.inserted_at_ms)?),
                ("meta", meta),
                ("title", o(py, &self.title)?),
                ("year", o(py, self.year)?),
                ("doi", o(py, &self.doi)?),
            ],
        )
    }
}
