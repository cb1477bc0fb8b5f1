//! Results of `Db.pairs` and `Db.containment_pairs`: `Pair`, `ContainPair`, `PairGroup`,
//! `DistRow` and `PairsReport`.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{dict, jaccard_repr, o, r};
use crate::api::ContainPair as EngineContainPair;

/// One pair of stored documents within the distance (a < b by doc id).
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    /// Key of the earlier document.
    #[pyo3(get)]
    pub a: String,
    /// Key of the later document.
    #[pyo3(get)]
    pub b: String,
    /// Doc id of the earlier document.
    #[pyo3(get)]
    pub a_id: u64,
    /// Doc id of the later document.
    #[pyo3(get)]
    pub b_id: u64,
    /// Hamming distance.
    #[pyo3(get)]
    pub hamming: u32,
    /// Exact Jaccard (only when min_jaccard was given).
    #[pyo3(get)]
    pub jaccard: Option<f64>,
}

#[pymethods]
impl Pair {
    fn __repr__(&self) -> String {
        format!(
            "Pair(a={}, b={}, a_id={}, b_id={}, hamming={}, jaccard={})",
            r(&self.a),
            r(&self.b),
            self.a_id,
            self.b_id,
            self.hamming,
            jaccard_repr(self.jaccard)
        )
    }

    /// The pair as a dict (the fields of `fpdb --json pairs`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        dict(
            py,
            &[
                ("a", o(py, &self.a)?),
                ("b", o(py, &self.b)?),
                ("a_id", o(py, self.a_id)?),
                ("b_id", o(py, self.b_id)?),
                ("hamming", o(py, self.hamming)?),
                ("jaccard", o(py, self.jaccard)?),
            ],
        )
    }
}

/// One containment pair of `Db.containment_pairs` (a < b by doc id): one document inside the
/// other (or each inside the other) with containment at least the threshold.
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct ContainPair {
    /// Key of the earlier document.
    #[pyo3(get)]
    pub a: String,
    /// Key of the later document.
    #[pyo3(get)]
    pub b: String,
    /// Doc id of the earlier document.
    #[pyo3(get)]
    pub a_id: u64,
    /// Doc id of the later document.
    #[pyo3(get)]
    pub b_id: u64,
    /// "a<b" (a inside b), "b<a" (b inside a) or "both", at the threshold asked for.
    #[pyo3(get)]
    pub direction: &'static str,
    /// |A ∩ B| / |A|: a inside b.
    #[pyo3(get)]
    pub a_in_b: f64,
    /// |A ∩ B| / |B|: b inside a.
    #[pyo3(get)]
    pub b_in_a: f64,
    /// Exact Jaccard.
    #[pyo3(get)]
    pub jaccard: f64,
    /// |A ∩ B|: shared shingles.
    #[pyo3(get)]
    pub shared: u32,
}

impl ContainPair {
    /// `p` with its keys and its direction at threshold `c` (as `fpdb pairs --min-containment`).
    pub fn new(p: EngineContainPair, c: f64, key: impl Fn(u64) -> String) -> Self {
        let direction = match (p.a_in_b >= c, p.b_in_a >= c) {
            (true, true) => "both",
            (true, false) => "a<b",
            _ => "b<a",
        };
        ContainPair {
            a: key(p.a),
            b: key(p.b),
            a_id: p.a,
            b_id: p.b,
            direction,
            a_in_b: p.a_in_b,
            b_in_a: p.b_in_a,
            jaccard: p.jaccard,
            shared: p.shared,
        }
    }
}

#[pymethods]
impl ContainPair {
    fn __repr__(&self) -> String {
        format!(
            "ContainPair(a={}, b={}, a_id={}, b_id={}, direction={}, a_in_b={:?}, b_in_a={:?}, jaccard={:?}, shared={})",
            r(&self.a),
            r(&self.b),
            self.a_id,
            self.b_id,
            r(self.direction),
            self.a_in_b,
            self.b_in_a,
            self.jaccard,
            self.shared
        )
    }

    /// The pair as a dict (the fields of `fpdb --json pairs --min-containment`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        dict(
            py,
            &[
                ("a", o(py, &self.a)?),
                ("b", o(py, &self.b)?),
                ("a_id", o(py, self.a_id)?),
                ("b_id", o(py, self.b_id)?),
                ("direction", o(py, self.direction)?),
                ("a_in_b", o(py, self.a_in_b)?),
                ("b_in_a", o(py, self.b_in_a)?),
                ("jaccard", o(py, self.jaccard)?),
                ("shared", o(py, self.shared)?),
            ],
        )
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
