//! Query and insert results: `Hit`, `QueryAnswer`, `GroupInfo` and `InsertOutcome`, each holding the library's
//! value; `to_dict()` is the library's JSON shape of it (`fpdb::output`), as the CLI prints it.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{py_value, repr_of, to_dict};
use crate::api::{EngineAnswer, EngineGroup, EngineHit, EngineOutcome};

/// A near-duplicate found by a query or an insert.
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct Hit(EngineHit);

impl From<EngineHit> for Hit {
    fn from(h: EngineHit) -> Self {
        Hit(h)
    }
}

#[pymethods]
impl Hit {
    /// The document's key.
    #[getter]
    fn key(&self) -> &str {
        &self.0.key
    }

    /// Its doc id.
    #[getter]
    fn id(&self) -> u64 {
        self.0.id
    }

    /// Hamming distance between the SimHashes.
    #[getter]
    fn hamming(&self) -> u32 {
        self.0.hamming
    }

    /// Exact Jaccard similarity of the shingle sets (None for SimHash-only queries).
    #[getter]
    fn jaccard(&self) -> Option<f64> {
        self.0.jaccard
    }

    /// Number of shared shingles (None for SimHash-only queries).
    #[getter]
    fn shared(&self) -> Option<u32> {
        self.0.shared
    }

    /// Containment of the query (or inserted document) in this document, |Q ∩ D| / |Q| (None for
    /// SimHash-only queries).
    #[getter]
    fn containment(&self) -> Option<f64> {
        self.0.containment
    }

    /// Containment of this document in the query (or inserted document), |Q ∩ D| / |D| (None for
    /// SimHash-only queries).
    #[getter]
    fn reverse_containment(&self) -> Option<f64> {
        self.0.reverse_containment
    }

    /// How it matched: "text" (verified near-duplicate), "doi" (same DOI), "title_year" (same
    /// title and year) or "semantic" (by the semantic channel alone: cosine >= β, no Jaccard); for
    /// a metadata match the other fields are for information only.
    #[getter]
    fn r#match(&self) -> &'static str {
        self.0.matched.as_str()
    }

    /// The method's own similarity, as a one-entry dict named by its kind: {"hamming": d} under
    /// simhash and weighted-simhash, {"supershingles": {"equal", "of"}} under broder,
    /// {"projection": {"agree", "bits"}} under charikar, {"combined": {...}} under
    /// broder-charikar, {"lexicons": [d or None, ...]} under multi-lexicon.
    #[getter]
    fn score(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        py_value(py, &self.0.score)
    }

    /// The channels that found it: ["text"] (the near-duplicate path, or a metadata match),
    /// ["semantic"] (the semantic channel alone) or both.
    #[getter]
    fn channels(&self) -> Vec<&'static str> {
        self.0.channels.iter().map(|c| c.as_str()).collect()
    }

    /// The cosine of the query's and the document's embeddings, when the semantic channel saw
    /// the document (None without the channel, or before it embedded the document).
    #[getter]
    fn cosine(&self) -> Option<f64> {
        // The f32 as its shortest decimal, the float of `to_dict()` and the CLI's JSON.
        self.0.cosine.map(|c| c.to_string().parse().unwrap_or(f64::from(c)))
    }

    pub(super) fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        repr_of(py, "Hit", &self.0)
    }

    /// The hit as a dict: the fields of `fpdb --json query`, key for key ("match" is `match`,
    /// "score" the dict of `score`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, &self.0)
    }
}

/// A duplicate group: its id (= doc id of its canonical member), canonical key and size.
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct GroupInfo(EngineGroup);

impl From<EngineGroup> for GroupInfo {
    fn from(g: EngineGroup) -> Self {
        GroupInfo(g)
    }
}

#[pymethods]
impl GroupInfo {
    /// Group id = doc id of the canonical (earliest inserted living) member.
    #[getter]
    fn id(&self) -> u64 {
        self.0.id
    }

    /// Key of the canonical member.
    #[getter]
    fn canonical(&self) -> &str {
        &self.0.canonical
    }

    /// Number of members.
    #[getter]
    fn size(&self) -> usize {
        self.0.size
    }

    pub(super) fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        repr_of(py, "GroupInfo", &self.0)
    }

    /// The group as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, &self.0)
    }
}

/// What an insert did: stored (id) or skipped, the document it replaced, its verified
/// near-duplicates and its group.
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct InsertOutcome(EngineOutcome);

impl From<EngineOutcome> for InsertOutcome {
    fn from(o: EngineOutcome) -> Self {
        InsertOutcome(o)
    }
}

#[pymethods]
impl InsertOutcome {
    /// The document's key.
    #[getter]
    fn key(&self) -> &str {
        &self.0.key
    }

    /// Its doc id, or None when it was not stored (dedup="skip" and it had duplicates).
    #[getter]
    fn id(&self) -> Option<u64> {
        self.0.id
    }

    /// Doc id of the earlier document with the same key that this one replaced.
    #[getter]
    fn replaced(&self) -> Option<u64> {
        self.0.replaced
    }

    /// True when the document was stored.
    #[getter]
    pub(crate) fn stored(&self) -> bool {
        self.0.id.is_some()
    }

    /// Verified near-duplicates already in the database (or earlier in the same batch), best first.
    #[getter]
    fn duplicates(&self) -> Vec<Hit> {
        self.0.duplicates.iter().cloned().map(Hit).collect()
    }

    /// The document's group after the insert (None when it was not stored).
    #[getter]
    fn group(&self) -> Option<GroupInfo> {
        self.0.group.clone().map(GroupInfo)
    }

    /// Containment relations, when asked for (`containment=C` of insert/ingest): the documents
    /// already in the database (or earlier in the batch) with containment at least C in either
    /// direction; `containment` is this document inside the other, `reverse_containment` the
    /// other inside this one. A relation, not a duplicate: groups do not change. Empty when not
    /// asked for.
    #[getter]
    fn containment(&self) -> Vec<Hit> {
        self.0.containment.iter().cloned().map(Hit).collect()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let hits = |hs: &[EngineHit]| -> PyResult<String> {
            Ok(hs
                .iter()
                .map(|h| Hit(h.clone()).__repr__(py))
                .collect::<PyResult<Vec<_>>>()?
                .join(", "))
        };
        let o = &self.0;
        Ok(format!(
            "InsertOutcome(key={}, id={}, replaced={}, duplicates=[{}], group={}, containment=[{}])",
            super::r(&o.key),
            o.id.map_or("None".into(), |i| i.to_string()),
            o.replaced.map_or("None".into(), |i| i.to_string()),
            hits(&o.duplicates)?,
            match &o.group {
                Some(g) => GroupInfo(g.clone()).__repr__(py)?,
                None => "None".into(),
            },
            hits(&o.containment)?,
        ))
    }

    /// The outcome as a dict; `group` is a dict or None, `duplicates` and `containment` lists of
    /// hit dicts. (`fpdb --json insert` prints the group flat: "group" (its id), "canonical",
    /// "group_size".)
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, &self.0)
    }
}

/// A query's answer (`Db.query_answer`): the hits and the answer's bounds.
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct QueryAnswer(EngineAnswer);

impl From<EngineAnswer> for QueryAnswer {
    fn from(a: EngineAnswer) -> Self {
        QueryAnswer(a)
    }
}

impl QueryAnswer {
    /// The hits, for `Db.query`.
    pub fn into_hits(self) -> Vec<Hit> {
        self.0.hits.into_iter().map(Hit::from).collect()
    }
}

#[pymethods]
impl QueryAnswer {
    /// The verified hits, best first (at most the query's `limit`).
    #[getter]
    fn hits(&self) -> Vec<Hit> {
        self.0.hits.iter().cloned().map(Hit::from).collect()
    }

    /// True when candidates were left unverified: the hits may be incomplete.
    #[getter]
    fn truncated(&self) -> bool {
        self.0.truncated
    }

    /// How many candidates were verified.
    #[getter]
    fn candidates(&self) -> usize {
        self.0.candidates
    }

    /// Acknowledged documents the semantic channel had not embedded when the query ran (they
    /// could not match by cosine; `wait_semantic` waits for them); 0 without the channel.
    #[getter]
    fn semantic_pending(&self) -> u64 {
        self.0.semantic_pending
    }

    fn __len__(&self) -> usize {
        self.0.hits.len()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        repr_of(py, "QueryAnswer", &self.0)
    }

    /// The answer as a dict: "hits" (each as `Hit.to_dict()`), "truncated", "candidates",
    /// "semantic_pending", as the library serializes `QueryAnswer`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, &self.0)
    }
}
