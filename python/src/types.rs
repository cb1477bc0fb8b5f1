//! The library's result structs as small frozen Python classes (plus `to_dict()` for JSON and tests).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use pyo3::IntoPyObjectExt;

use crate::api::{
    fingerprint as engine_fingerprint, CheckReport as EngineCheck, CompactStats as EngineCompact, ContainPair as EngineContainPair,
    ContainmentStats as EngineContainmentStats, Document as EngineDocument, EngineGroup, EngineHit, EngineOutcome,
    FingerprintSpec as EngineSpec, IngestStats as EngineIngestStats, MethodScore, ShingleUnit, Stats as EngineStats, Weighting,
};
use crate::convert;

fn dict<'py>(py: Python<'py>, items: &[(&str, Py<PyAny>)]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in items {
        d.set_item(*k, v)?;
    }
    Ok(d)
}

fn o<'py, T: IntoPyObject<'py>>(py: Python<'py>, v: T) -> PyResult<Py<PyAny>> {
    v.into_py_any(py)
}

/// A str as Python's repr() shows it (single quotes when the text has none).
pub(crate) fn r(s: &str) -> String {
    if s.contains(['\'', '"', '\\']) || s.chars().any(char::is_control) {
        format!("{s:?}")
    } else {
        format!("'{s}'")
    }
}

pub(crate) fn ro(s: &Option<String>) -> String {
    s.as_deref().map_or("None".into(), r)
}

fn jaccard_repr(j: Option<f64>) -> String {
    j.map_or("None".into(), |j| format!("{j:?}"))
}

fn int_repr<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("None".into(), |v| v.to_string())
}

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
    fn __repr__(&self) -> String {
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

/// Counters of a database (`fpdb stats`).
#[pyclass(frozen, module = "fpdb")]
#[derive(Clone, Debug)]
pub struct Stats {
    /// Live documents.
    #[pyo3(get)]
    pub docs: u64,
    /// Groups with at least two members.
    #[pyo3(get)]
    pub groups: u64,
    /// Documents in groups with at least two members.
    #[pyo3(get)]
    pub grouped_docs: u64,
    /// Segment files.
    #[pyo3(get)]
    pub segments: u64,
    /// Bytes in segment files.
    #[pyo3(get)]
    pub segment_bytes: u64,
    /// Bytes of live records.
    #[pyo3(get)]
    pub live_bytes: u64,
    /// Number of tables.
    #[pyo3(get)]
    pub tables: u32,
    /// The number of tables the cost model finds best at this size (`reindex(path)` applies it).
    #[pyo3(get)]
    pub best_tables: u32,
    /// Default maximum Hamming distance k.
    #[pyo3(get)]
    pub max_distance: u32,
    /// Default minimum Jaccard t.
    #[pyo3(get)]
    pub min_jaccard: f64,
    /// The fingerprint spec, as text.
    #[pyo3(get)]
    pub spec: String,
    /// The containment index's counters (None: the database has no containment index).
    #[pyo3(get)]
    pub containment: Option<ContainmentStats>,
}

impl Stats {
    pub fn new(s: EngineStats, c: Option<EngineContainmentStats>) -> Self {
        Stats {
            containment: c.map(ContainmentStats::from),
            ..Stats::from(s)
        }
    }
}

impl From<EngineStats> for Stats {
    fn from(s: EngineStats) -> Self {
        Stats {
            docs: s.docs,
            groups: s.groups,
            grouped_docs: s.grouped_docs,
            segments: s.segments,
            segment_bytes: s.segment_bytes,
            live_bytes: s.live_bytes,
            tables: s.tables,
            best_tables: s.best_tables,
            max_distance: s.max_distance,
            min_jaccard: s.min_jaccard,
            spec: s.spec,
            containment: None,
        }
    }
}

#[pymethods]
impl Stats {
    fn __repr__(&self) -> String {
        format!(
            "Stats(docs={}, groups={}, grouped_docs={}, segments={}, segment_bytes={}, live_bytes={}, tables={}, max_distance={}, min_jaccard={}, spec={})",
            self.docs, self.groups, self.grouped_docs, self.segments, self.segment_bytes, self.live_bytes, self.tables,
            self.max_distance, self.min_jaccard, r(&self.spec)
        )
    }

    /// The counters as a dict: the fields of `fpdb --json stats`, key for key ("containment" is
    /// a dict or None).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let containment = match &self.containment {
            Some(c) => o(py, c.to_dict(py)?)?,
            None => py.None(),
        };
        dict(
            py,
            &[
                ("docs", o(py, self.docs)?),
                ("groups", o(py, self.groups)?),
                ("grouped_docs", o(py, self.grouped_docs)?),
                ("segments", o(py, self.segments)?),
                ("segment_bytes", o(py, self.segment_bytes)?),
                ("live_bytes", o(py, self.live_bytes)?),
                ("tables", o(py, self.tables)?),
                ("best_tables", o(py, self.best_tables)?),
                ("max_distance", o(py, self.max_distance)?),
                ("min_jaccard", o(py, self.min_jaccard)?),
                ("spec", o(py, &self.spec)?),
                ("containment", containment),
            ],
        )
    }
}

/// Counters of the containment index (`Stats.containment`; a scan of the index).
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct ContainmentStats {
    /// Sampling rate n (one shingle in n is a sample).
    #[pyo3(get)]
    pub sample: u32,
    /// Posting lists longer than this are skipped by queries (boilerplate).
    #[pyo3(get)]
    pub max_postings: u32,
    /// Index entries (one per document and key).
    #[pyo3(get)]
    pub entries: u64,
    /// Of which short-document entries (every shingle of a document without samples).
    #[pyo3(get)]
    pub short_entries: u64,
    /// Documents indexed by their samples.
    #[pyo3(get)]
    pub sampled_docs: u64,
    /// Short documents (no sample: indexed under every shingle).
    #[pyo3(get)]
    pub short_docs: u64,
    /// Distinct keys (posting lists).
    #[pyo3(get)]
    pub keys: u64,
    /// Posting lists longer than `max_postings`: skipped by every query.
    #[pyo3(get)]
    pub frequent_keys: u64,
    /// Entries in those lists.
    #[pyo3(get)]
    pub frequent_entries: u64,
    /// The longest posting list.
    #[pyo3(get)]
    pub longest_posting: u64,
}

impl From<EngineContainmentStats> for ContainmentStats {
    fn from(c: EngineContainmentStats) -> Self {
        ContainmentStats {
            sample: c.sample,
            max_postings: c.max_postings,
            entries: c.entries,
            short_entries: c.short_entries,
            sampled_docs: c.sampled_docs,
            short_docs: c.short_docs,
            keys: c.keys,
            frequent_keys: c.frequent_keys,
            frequent_entries: c.frequent_entries,
            longest_posting: c.longest_posting,
        }
    }
}

#[pymethods]
impl ContainmentStats {
    fn __repr__(&self) -> String {
        format!(
            "ContainmentStats(sample={}, max_postings={}, entries={}, short_entries={}, sampled_docs={}, short_docs={}, keys={}, frequent_keys={}, frequent_entries={}, longest_posting={})",
            self.sample, self.max_postings, self.entries, self.short_entries, self.sampled_docs, self.short_docs, self.keys,
            self.frequent_keys, self.frequent_entries, self.longest_posting
        )
    }

    /// The counters as a dict (the "containment" object of `fpdb --json stats`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        dict(
            py,
            &[
                ("sample", o(py, self.sample)?),
                ("max_postings", o(py, self.max_postings)?),
                ("entries", o(py, self.entries)?),
                ("short_entries", o(py, self.short_entries)?),
                ("sampled_docs", o(py, self.sampled_docs)?),
                ("short_docs", o(py, self.short_docs)?),
                ("keys", o(py, self.keys)?),
                ("frequent_keys", o(py, self.frequent_keys)?),
                ("frequent_entries", o(py, self.frequent_entries)?),
                ("longest_posting", o(py, self.longest_posting)?),
            ],
        )
    }
}

/// One problem found by `Db.check`.
#[pyclass(frozen, module = "fpdb")]
#[derive(Clone, Debug)]
pub struct Fault {
    /// The document, when the problem is one document's.
    #[pyo3(get)]
    pub doc: Option<u64>,
    /// Its key, when known.
    #[pyo3(get)]
    pub key: Option<String>,
    /// The file concerned.
    #[pyo3(get)]
    pub path: String,
    /// What is wrong.
    #[pyo3(get)]
    pub what: String,
}

#[pymethods]
impl Fault {
    fn __repr__(&self) -> String {
        format!(
            "Fault(doc={}, key={}, path={}, what={})",
            int_repr(self.doc),
            ro(&self.key),
            r(&self.path),
            r(&self.what)
        )
    }
}

/// Result of `Db.check`: what was verified and every fault found.
#[pyclass(frozen, module = "fpdb")]
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// Documents verified.
    #[pyo3(get)]
    pub docs: u64,
    /// Table entries verified.
    #[pyo3(get)]
    pub table_entries: u64,
    /// Problems found.
    #[pyo3(get)]
    pub faults: Vec<Fault>,
}

impl From<EngineCheck> for CheckReport {
    fn from(r: EngineCheck) -> Self {
        CheckReport {
            docs: r.docs,
            table_entries: r.table_entries,
            faults: r
                .faults
                .into_iter()
                .map(|f| Fault {
                    doc: f.doc,
                    key: f.key,
                    path: f.path,
                    what: f.what,
                })
                .collect(),
        }
    }
}

#[pymethods]
impl CheckReport {
    /// True when no fault was found.
    #[getter]
    fn ok(&self) -> bool {
        self.faults.is_empty()
    }

    fn __repr__(&self) -> String {
        format!(
            "CheckReport(docs={}, table_entries={}, faults={})",
            self.docs,
            self.table_entries,
            self.faults.len()
        )
    }
}

/// Result of `Db.compact`.
#[pyclass(frozen, module = "fpdb")]
#[derive(Clone, Debug)]
pub struct CompactStats {
    /// Segments rewritten.
    #[pyo3(get)]
    pub segments_rewritten: u64,
    /// Bytes reclaimed.
    #[pyo3(get)]
    pub bytes_reclaimed: u64,
    /// Records moved.
    #[pyo3(get)]
    pub records_moved: u64,
}

impl From<EngineCompact> for CompactStats {
    fn from(s: EngineCompact) -> Self {
        CompactStats {
            segments_rewritten: s.segments_rewritten,
            bytes_reclaimed: s.bytes_reclaimed,
            records_moved: s.records_moved,
        }
    }
}

#[pymethods]
impl CompactStats {
    fn __repr__(&self) -> String {
        format!(
            "CompactStats(segments_rewritten={}, bytes_reclaimed={}, records_moved={})",
            self.segments_rewritten, self.bytes_reclaimed, self.records_moved
        )
    }
}

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

/// Totals of a finished ingest.
#[pyclass(frozen, module = "fpdb")]
#[derive(Clone, Debug)]
pub struct IngestStats {
    /// Input items seen.
    #[pyo3(get)]
    pub items: u64,
    /// Documents stored.
    #[pyo3(get)]
    pub stored: u64,
    /// Documents not stored because they duplicate a stored one (dedup="skip").
    #[pyo3(get)]
    pub skipped: u64,
    /// Stored documents that had at least one verified near-duplicate.
    #[pyo3(get)]
    pub with_duplicates: u64,
    /// Documents with at least one containment relation (ingest with `containment=C`).
    #[pyo3(get)]
    pub with_containment: u64,
    /// Items rejected (bad input).
    #[pyo3(get)]
    pub errors: u64,
    /// Group commits.
    #[pyo3(get)]
    pub batches: u64,
    /// Bytes of text fingerprinted.
    #[pyo3(get)]
    pub text_bytes: u64,
    /// Wall-clock seconds of the engine's pipeline.
    #[pyo3(get)]
    pub seconds: f64,
}

impl From<EngineIngestStats> for IngestStats {
    fn from(s: EngineIngestStats) -> Self {
        IngestStats {
            items: s.items,
            stored: s.stored,
            skipped: s.skipped,
            with_duplicates: s.with_duplicates,
            with_containment: s.with_containment,
            errors: s.errors,
            batches: s.batches,
            text_bytes: s.text_bytes,
            seconds: s.seconds,
        }
    }
}

#[pymethods]
impl IngestStats {
    pub(crate) fn __repr__(&self) -> String {
        format!(
            "IngestStats(items={}, stored={}, skipped={}, with_duplicates={}, with_containment={}, errors={}, batches={}, text_bytes={}, seconds={:.3})",
            self.items, self.stored, self.skipped, self.with_duplicates, self.with_containment, self.errors, self.batches, self.text_bytes, self.seconds
        )
    }
}

/// The fingerprint spec: what a shingle is, the hash seed and the SimHash weighting. Databases and
/// fingerprints are comparable only under equal specs.
#[pyclass(frozen, eq, hash, module = "fpdb", name = "FingerprintSpec")]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Spec(pub EngineSpec);

#[pymethods]
impl Spec {
    /// `FingerprintSpec(shingle="word:3", weights="binary", seed=None)`: word or character
    /// n-grams (n in 1..=32), binary (each distinct shingle once) or count weights, the xxh3 seed
    /// (None = the library's default).
    #[new]
    #[pyo3(signature = (shingle = "word:3", weights = "binary", seed = None))]
    fn new(py: Python<'_>, shingle: &str, weights: &str, seed: Option<u64>) -> PyResult<Self> {
        convert::spec(py, Some(shingle), Some(weights), seed).map(Spec)
    }

    /// The default spec of new databases.
    #[classmethod]
    fn default(_cls: &Bound<'_, PyType>) -> Self {
        Spec(EngineSpec::default())
    }

    /// "word" or "char".
    #[getter]
    fn unit(&self) -> &'static str {
        match self.0.unit {
            ShingleUnit::Word => "word",
            ShingleUnit::Char => "char",
        }
    }

    /// Shingle length in units.
    #[getter]
    fn n(&self) -> u32 {
        self.0.n
    }

    /// "word:N" or "char:N".
    #[getter]
    fn shingle(&self) -> String {
        format!("{}:{}", self.unit(), self.0.n)
    }

    /// "binary" or "count".
    #[getter]
    fn weights(&self) -> &'static str {
        match self.0.weighting {
            Weighting::Binary => "binary",
            Weighting::Count => "count",
        }
    }

    /// Seed of the shingle hash.
    #[getter]
    fn seed(&self) -> u64 {
        self.0.seed
    }

    /// Normalizer version.
    #[getter]
    fn normalizer(&self) -> u32 {
        self.0.normalizer
    }

    /// The near-duplicate method with its parameters, e.g. "simhash" or
    /// "broder(supershingles=6,...)" (fixed when the database was created: `Db.create(method=...)`).
    #[getter]
    fn method(&self) -> String {
        self.0.method.to_string()
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "FingerprintSpec(shingle={}, weights={}, seed={:#x})",
            r(&self.shingle()),
            r(self.weights()),
            self.0.seed
        )
    }
}

/// A spec argument: a `FingerprintSpec`, a shingle string like "word:3", or None (the default).
pub fn spec_arg(py: Python<'_>, spec: Option<&Bound<'_, PyAny>>) -> PyResult<EngineSpec> {
    match spec {
        None => Ok(EngineSpec::default()),
        Some(s) if s.is_none() => Ok(EngineSpec::default()),
        Some(s) => {
            if let Ok(sp) = s.cast::<Spec>() {
                return Ok(sp.get().0.clone());
            }
            match s.extract::<String>() {
                Ok(text) => convert::spec(py, Some(&text), None, None),
                Err(_) => Err(pyo3::exceptions::PyTypeError::new_err(
                    "spec must be a FingerprintSpec, a shingle string such as \"word:3\", or None",
                )),
            }
        }
    }
}

/// A document's fingerprint: its 64-bit SimHash and its sorted shingle hashes.
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct Fingerprint {
    /// 64-bit SimHash.
    #[pyo3(get)]
    pub simhash: u64,
    /// Low 32 bits of each distinct shingle hash, sorted.
    #[pyo3(get)]
    pub shingles: Vec<u32>,
}

#[pymethods]
impl Fingerprint {
    fn __repr__(&self) -> String {
        format!(
            "Fingerprint(simhash={:#018x}, shingles=<{} hashes>)",
            self.simhash,
            self.shingles.len()
        )
    }
}

/// fingerprint(text, spec=None) -> Fingerprint
///
/// The SimHash and shingle set of `text` (str, or bytes holding UTF-8) under `spec` (a
/// FingerprintSpec, a shingle string like "word:3", or None for the default) — exactly what a
/// database with that spec stores. The GIL is released while hashing.
#[pyfunction]
#[pyo3(signature = (text, spec = None))]
pub fn fingerprint(py: Python<'_>, text: &Bound<'_, PyAny>, spec: Option<&Bound<'_, PyAny>>) -> PyResult<Fingerprint> {
    let text = convert::text_arg(py, text, "text", None)?;
    let spec = spec_arg(py, spec)?;
    let fp = py.detach(|| engine_fingerprint(&spec, &text));
    Ok(Fingerprint {
        simhash: fp.simhash,
        shingles: fp.shingles,
    })
}

/// Adds the result classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Hit>()?;
    m.add_class::<GroupInfo>()?;
    m.add_class::<InsertOutcome>()?;
    m.add_class::<Document>()?;
    m.add_class::<Stats>()?;
    m.add_class::<ContainmentStats>()?;
    m.add_class::<ContainPair>()?;
    m.add_class::<Fault>()?;
    m.add_class::<CheckReport>()?;
    m.add_class::<CompactStats>()?;
    m.add_class::<Pair>()?;
    m.add_class::<PairGroup>()?;
    m.add_class::<DistRow>()?;
    m.add_class::<PairsReport>()?;
    m.add_class::<IngestStats>()?;
    m.add_class::<Spec>()?;
    m.add_class::<Fingerprint>()?;
    Ok(())
}
