//! Query and insert results: `Hit` (with its method score as a dict and as Python's repr()
//! shows it), `GroupInfo` and `InsertOutcome`.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{dict, int_repr, jaccard_repr, o, r};
use crate::api::{EngineGroup, EngineHit, EngineOutcome, MethodScore};

/// A near-duplicate found by a query or an insert.
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// The document's key.
    #[pyo3(get)]
    pub key: String,
    /// Its doc id.
    #[pyo3(get)]
    pub id: u64,
    /// Hamming distance between the SimHashes.
    #[pyo3(get)]
    pub hamming: u32,
    /// Exact Jaccard similarity of the shingle sets (None for SimHash-only queries).
    #[pyo3(get)]
    pub jaccard: Option<f64>,
    /// Number of shared shingles (None for SimHash-only queries).
    #[pyo3(get)]
    pub shared: Option<u32>,
    /// Containment of the query (or inserted document) in this document, |Q ∩ D| / |Q| (None for
    /// SimHash-only queries).
    #[pyo3(get)]
    pub containment: Option<f64>,
    /// Containment of this document in the query (or inserted document), |Q ∩ D| / |D| (None for
    /// SimHash-only queries).
    #[pyo3(get)]
    pub reverse_containment: Option<f64>,
    /// How it matched: "text" (verified near-duplicate), "doi" (same DOI) or "title_year" (same
    /// title and year); for a metadata match the other fields are for information only.
    #[pyo3(get, name = "match")]
    pub matched: &'static str,
    score: MethodScore,
}

impl From<EngineHit> for Hit {
    fn from(h: EngineHit) -> Self {
        Hit {
            key: h.key,
            id: h.id,
            hamming: h.hamming,
            jaccard: h.jaccard,
            shared: h.shared,
            containment: h.containment,
            reverse_containment: h.reverse_containment,
            matched: h.matched.as_str(),
            score: h.score,
        }
    }
}

/// A method's score as the CLI's JSON writes it (serde's externally tagged, snake_case form):
/// `{"hamming": 6}`, `{"supershingles": {"equal": 3, "of": 6}}`, ...
fn score_dict<'py>(py: Python<'py>, score: &MethodScore) -> PyResult<Bound<'py, PyDict>> {
    let (tag, value) = match score {
        MethodScore::Hamming(d) => ("hamming", o(py, d)?),
        MethodScore::Supershingles { equal, of } => ("supershingles", o(py, dict(py, &[("equal", o(py, equal)?), ("of", o(py, of)?)])?)?),
        MethodScore::Projection { agree, bits } => ("projection", o(py, dict(py, &[("agree", o(py, agree)?), ("bits", o(py, bits)?)])?)?),
        MethodScore::Combined { equal, of, agree, bits } => (
            "combined",
            o(
                py,
                dict(
                    py,
                    &[
                        ("equal", o(py, equal)?),
                        ("of", o(py, of)?),
                        ("agree", o(py, agree)?),
                        ("bits", o(py, bits)?),
                    ],
                )?,
            )?,
        ),
        MethodScore::Lexicons(per) => ("lexicons", o(py, per.clone())?),
    };
    dict(py, &[(tag, value)])
}

/// [`score_dict`] as Python's repr() shows it.
fn score_repr(score: &MethodScore) -> String {
    match score {
        MethodScore::Hamming(d) => format!("{{'hamming': {d}}}"),
        MethodScore::Supershingles { equal, of } => format!("{{'supershingles': {{'equal': {equal}, 'of': {of}}}}}"),
        MethodScore::Projection { agree, bits } => format!("{{'projection': {{'agree': {agree}, 'bits': {bits}}}}}"),
        MethodScore::Combined { equal, of, agree, bits } => {
            format!("{{'combined': {{'equal': {equal}, 'of': {of}, 'agree': {agree}, 'bits': {bits}}}}}")
        }
        MethodScore::Lexicons(per) => format!(
            "{{'lexicons': [{}]}}",
            per.iter().map(|d| int_repr(*d)).collect::<Vec<_>>().join(", ")
        ),
    }
}

#[pymethods]
impl Hit {
    /// The method's own similarity, as a one-entry dict named by its kind: {"hamming": d} under
    /// simhash and weighted-simhash, {"supershingles": {"equal", "of"}} under broder,
    /// {"projection": {"agree", "bits"}} under charikar, {"combined": {...}} under
    /// broder-charikar, {"lexicons": [d or None, ...]} under multi-lexicon.
    #[getter]
    fn score<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        score_dict(py, &self.score)
    }

    fn __repr__(&self) -> String {
        format!(
            "Hit(key={}, id={}, hamming={}, jaccard={}, shared={}, containment={}, reverse_containment={}, match={}, score={})",
            r(&self.key),
            self.id,
            self.hamming,
            jaccard_repr(self.jaccard),
            int_repr(self.shared),
            jaccard_repr(self.containment),
            jaccard_repr(self.reverse_containment),
            r(self.matched),
            score_repr(&self.score)
        )
    }

    /// The hit as a dict: the fields of `fpdb --json query`, key for key ("match" is `match`,
    /// "score" the dict of `score`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        dict(
            py,
            &[
                ("key", o(py, &self.key)?),
                ("id", o(py, self.id)?),
                ("hamming", o(py, self.hamming)?),
                ("jaccard", o(py, self.jaccard)?),
                ("shared", o(py, self.shared)?),
                ("containment", o(py, self.containment)?),
                ("reverse_containment", o(py, self.reverse_containment)?),
                ("match", o(py, self.matched)?),
                ("score", o(py, score_dict(py, &self.score)?)?),
            ],
        )
    }
}

/// A duplicate group: its id (= doc id of its canonical member), canonical key and size.
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct GroupInfo {
    /// Group id = doc id of the canonical (earliest inserted living) member.
    #[pyo3(get)]
    pub id: u64,
    /// Key of the canonical member.
    #[pyo3(get)]
    pub canonical: String,
    /// Number of members.
    #[pyo3(get)]
    pub size: usize,
}

impl From<EngineGroup> for GroupInfo {
    fn from(g: EngineGroup) -> Self {
        GroupInfo {
            id: g.id,
            canonical: g.canonical,
            size: g.size,
        }
    }
}

#[pymethods]
impl GroupInfo {
    pub(super) fn __repr__(&self) -> String {
        format!("GroupInfo(id={}, canonical={}, size={})", self.id, r(&self.canonical), self.size)
    }

    /// The group as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        dict(
            py,
            &[
                ("id", o(py, self.id)?),
                ("canonical", o(py, &self.canonical)?),
                ("size", o(py, self.size)?),
            ],
        )
    }
}

/// What an insert did: stored (id) or skipped, the document it replaced, its verified
/// near-duplicates and its group.
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct InsertOutcome {
    /// The document's key.
    #[pyo3(get)]
    pub key: String,
    /// Its doc id, or None when it was not stored (dedup="skip" and it had duplicates).
    #[pyo3(get)]
    pub id: Option<u64>,
    /// Doc id of the earlier document with the same key that this one replaced.
    #[pyo3(get)]
    pub replaced: Option<u64>,
    dups: Vec<Hit>,
    grp: Option<GroupInfo>,
    contained: Vec<Hit>,
}

impl From<EngineOutcome> for InsertOutcome {
    fn from(o: EngineOutcome) -> Self {
        InsertOutcome {
            key: o.key,
            id: o.id,
            replaced: o.replaced,
            dups: o.duplicates.into_iter().map(Hit::from).collect(),
            grp: o.group.map(GroupInfo::from),
            contained: o.containment.into_iter().map(Hit::from).collect(),
        }
    }
}

#[pymethods]
impl InsertOutcome {
    /// True when the document was stored.
    #[getter]
    fn stored(&self) -> bool {
        self.id.is_some()
    }

    /// Verified near-duplicates already in the database (or earlier in the same batch), best first.
    #[getter]
    fn duplicates(&self) -> Vec<Hit> {
        self.dups.clone()
    }

    /// The document's group after the insert (None when it was not stored).
    #[getter]
    fn group(&self) -> Option<GroupInfo> {
        self.grp.clone()
    }

    /// Containment relations, when asked for (`containment=C` of insert/ingest): the documents
    /// already in the database (or earlier in the batch) with containment at least C in either
    /// direction; `containment` is this document inside the other, `reverse_containment` the
    /// other inside this one. A relation, not a duplicate: groups do not change. Empty when not
    /// asked for.
    #[getter]
    fn containment(&self) -> Vec<Hit> {
        self.contained.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "InsertOutcome(key={}, id={}, replaced={}, duplicates=[{}], group={}, containment=[{}])",
            r(&self.key),
            self.id.map_or("None".into(), |i| i.to_string()),
            self.replaced.map_or("None".into(), |i| i.to_string()),
            self.dups.iter().map(Hit::__repr__).collect::<Vec<_>>().join(", "),
            self.grp.as_ref().map_or("None".into(), GroupInfo::__repr__),
            self.contained.iter().map(Hit::__repr__).collect::<Vec<_>>().join(", "),
        )
    }

    /// The outcome as a dict; `group` is a dict or None, `duplicates` and `containment` lists of
    /// hit dicts. (`fpdb --json insert` prints the group flat: "group" (its id), "canonical",
    /// "group_size".)
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let hits = |hs: &[Hit]| hs.iter().map(|h| h.to_dict(py)).collect::<PyResult<Vec<_>>>();
        let group = match &self.grp {
            Some(g) => o(py, g.to_dict(py)?)?,
            None => py.None(),
        };
        dict(
            py,
            &[
                ("key", o(py, &self.key)?),
                ("id", o(py, self.id)?),
                ("stored", o(py, self.id.is_some())?),
                ("replaced", o(py, self.replaced)?),
                ("duplicates", o(py, hits(&self.dups)?)?),
                ("group", group),
                ("containment", o(py, hits(&self.contained)?)?),
            ],
        )
    }
}
