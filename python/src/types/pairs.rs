//! Results of `Db.pairs` and `Db.containment_pairs`: `Pair`, `ContainPair`, `PairGroup`,
//! `DistRow` and `PairsReport`.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use fpdb::output::{ContainPairLine, PairLine};

use super::{r, repr_of, to_dict};
use crate::api::{ContainPair as EngineContainPair, Pair as EnginePair};

/// A pair of stored documents within the distance (a_id < b_id): their keys and ids, Hamming
/// distance and (when verified) Jaccard.
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct Pair(PairLine);

impl Pair {
    pub fn new(p: &EnginePair, key: impl Fn(u64) -> String) -> Self {
        Pair(PairLine::new(p, key))
    }
}

#[pymethods]
impl Pair {
    /// Key of the document with the smaller id.
    #[getter]
    fn a(&self) -> &str {
        &self.0.a
    }

    /// Key of the document with the larger id.
    #[getter]
    fn b(&self) -> &str {
        &self.0.b
    }

    /// The smaller doc id.
    #[getter]
    fn a_id(&self) -> u64 {
        self.0.a_id
    }

    /// The larger doc id.
    #[getter]
    fn b_id(&self) -> u64 {
        self.0.b_id
    }

    /// Hamming distance of the SimHashes (a method's own distance under another method).
    #[getter]
    fn hamming(&self) -> u32 {
        self.0.hamming
    }

    /// Exact Jaccard (only when min_jaccard was given).
    #[getter]
    fn jaccard(&self) -> Option<f64> {
        self.0.jaccard
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        repr_of(py, "Pair", &self.0)
    }

    /// The pair as a dict: the fields of `fpdb --json pairs`, key for key.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, &self.0)
    }
}

/// A pair of stored documents, one inside the other at the threshold asked (a_id < b_id).
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct ContainPair(ContainPairLine);

impl ContainPair {
    pub fn new(p: EngineContainPair, c: f64, key: impl Fn(u64) -> String) -> Self {
        ContainPair(ContainPairLine::new(&p, c, key))
    }
}

#[pymethods]
impl ContainPair {
    /// Key of the document with the smaller id.
    #[getter]
    fn a(&self) -> &str {
        &self.0.a
    }

    /// Key of the document with the larger id.
    #[getter]
    fn b(&self) -> &str {
        &self.0.b
    }

    /// The smaller doc id.
    #[getter]
    fn a_id(&self) -> u64 {
        self.0.a_id
    }

    /// The larger doc id.
    #[getter]
    fn b_id(&self) -> u64 {
        self.0.b_id
    }

    /// "a<b" (a inside b), "b<a", or "both" (each inside the other at the threshold).
    #[getter]
    fn direction(&self) -> &str {
        &self.0.direction
    }

    /// |A ∩ B| / |A|: a inside b.
    #[getter]
    fn a_in_b(&self) -> f64 {
        self.0.a_in_b
    }

    /// |A ∩ B| / |B|: b inside a.
    #[getter]
    fn b_in_a(&self) -> f64 {
        self.0.b_in_a
    }

    /// Exact Jaccard.
    #[getter]
    fn jaccard(&self) -> f64 {
        self.0.jaccard
    }

    /// Shared shingles, |A ∩ B|.
    #[getter]
    fn shared(&self) -> u32 {
        self.0.shared
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        repr_of(py, "ContainPair", &self.0)
    }

    /// The pair as a dict: the fields of `fpdb --json pairs --min-containment`, key for key.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, &self.0)
    }
}

/// A connected component of the pair graph (canonical = earliest member).
#[pyclass(frozen, module = "fpdb")]
#[derive(Clone, Debug)]
pub struct PairGroup {
    /// Doc id of the canonical member.
    #[pyo3(get)]
    pub id: u64,
    /// Key of the canonical member.
    #[pyo3(get)]
    pub canonical: String,
    /// Keys of the members, by doc id.
    #[pyo3(get)]
    pub members: Vec<String>,
}

#[pymethods]
impl PairGroup {
    /// Number of members.
    #[getter]
    fn size(&self) -> usize {
        self.members.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "PairGroup(id={}, canonical={}, members=[{}])",
            self.id,
            r(&self.canonical),
            self.members.iter().map(|m| r(m)).collect::<Vec<_>>().join(", ")
        )
    }
}

/// A row of a pairs distribution table.
#[pyclass(frozen, module = "fpdb")]
#[derive(Clone, Debug)]
pub struct DistRow {
    /// A distance, or a Jaccard range like "0.9-1.0".
    #[pyo3(get)]
    pub label: String,
    /// Pairs in the row.
    #[pyo3(get)]
    pub pairs: u64,
    /// Distinct documents in those pairs.
    #[pyo3(get)]
    pub docs: u64,
}

#[pymethods]
impl DistRow {
    fn __repr__(&self) -> String {
        format!("DistRow(label={}, pairs={}, docs={})", r(&self.label), self.pairs, self.docs)
    }
}

/// Result of `Db.pairs`: the pairs, their groups and distribution tables.
#[pyclass(frozen, module = "fpdb")]
#[derive(Clone, Debug)]
pub struct PairsReport {
    /// Documents considered.
    #[pyo3(get)]
    pub docs: u64,
    /// The pairs, sorted by (a_id, b_id).
    #[pyo3(get)]
    pub pairs: Vec<Pair>,
    /// Connected components of the pairs, sorted by canonical id.
    #[pyo3(get)]
    pub groups: Vec<PairGroup>,
    /// Pairs and distinct documents per Hamming distance 0..=k.
    #[pyo3(get)]
    pub by_hamming: Vec<DistRow>,
    /// Pairs and distinct documents per Jaccard range (only when min_jaccard was given).
    #[pyo3(get)]
    pub by_jaccard: Vec<DistRow>,
    /// Seconds spent in the Hamming search.
    #[pyo3(get)]
    pub hamming_seconds: f64,
    /// Seconds spent verifying Jaccard.
    #[pyo3(get)]
    pub verify_seconds: f64,
}

#[pymethods]
impl PairsReport {
    fn __len__(&self) -> usize {
        self.pairs.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "PairsReport(docs={}, pairs={}, groups={})",
            self.docs,
            self.pairs.len(),
            self.groups.len()
        )
    }
}
