//! Counters and reports: `Stats`, `ContainmentStats`, `Fault`, `CheckReport`, `CompactStats` and
//! `IngestStats`.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use fpdb::output::StatsLine;

use super::{int_repr, r, repr_of, ro, to_dict};
use crate::api::{
    CheckReport as EngineCheck, CompactStats as EngineCompact, ContainmentStats as EngineContainmentStats,
    IngestStats as EngineIngestStats, Stats as EngineStats,
};

/// Counters of a database (`fpdb stats`).
#[pyclass(frozen, module = "fpdb")]
#[derive(Clone, Debug)]
pub struct Stats {
    s: EngineStats,
    c: Option<ContainmentStats>,
}

impl Stats {
    pub fn new(s: EngineStats, c: Option<EngineContainmentStats>) -> Self {
        Stats {
            s,
            c: c.map(ContainmentStats),
        }
    }
}

#[pymethods]
impl Stats {
    /// Live documents.
    #[getter]
    fn docs(&self) -> u64 {
        self.s.docs
    }

    /// Groups with at least two members.
    #[getter]
    fn groups(&self) -> u64 {
        self.s.groups
    }

    /// Documents in groups with at least two members.
    #[getter]
    fn grouped_docs(&self) -> u64 {
        self.s.grouped_docs
    }

    /// Segment files.
    #[getter]
    fn segments(&self) -> u64 {
        self.s.segments
    }

    /// Bytes in segment files.
    #[getter]
    fn segment_bytes(&self) -> u64 {
        self.s.segment_bytes
    }

    /// Bytes of live records.
    #[getter]
    fn live_bytes(&self) -> u64 {
        self.s.live_bytes
    }

    /// Number of tables.
    #[getter]
    fn tables(&self) -> u32 {
        self.s.tables
    }

    /// The number of tables the cost model finds best at this size (`reindex(path)` applies it).
    #[getter]
    fn best_tables(&self) -> u32 {
        self.s.best_tables
    }

    /// Default maximum Hamming distance k.
    #[getter]
    fn max_distance(&self) -> u32 {
        self.s.max_distance
    }

    /// Default minimum Jaccard t.
    #[getter]
    fn min_jaccard(&self) -> f64 {
        self.s.min_jaccard
    }

    /// The fingerprint spec, as text.
    #[getter]
    fn spec(&self) -> &str {
        &self.s.spec
    }

    /// Acknowledged documents the semantic channel has not embedded yet (0 without the channel;
    /// `Db.semantic_backfill()` or a query's `wait_semantic` waits for them).
    #[getter]
    fn semantic_pending(&self) -> u64 {
        self.s.semantic_pending
    }

    /// Vectors the semantic channel holds (0 without the channel).
    #[getter]
    fn semantic_vectors(&self) -> u64 {
        self.s.semantic_vectors
    }

    /// The containment index's counters (None: the database has no containment index).
    #[getter]
    fn containment(&self) -> Option<ContainmentStats> {
        self.c.clone()
    }

    fn __repr__(&self) -> String {
        let s = &self.s;
        format!(
            "Stats(docs={}, groups={}, grouped_docs={}, segments={}, segment_bytes={}, live_bytes={}, tables={}, max_distance={}, min_jaccard={}, spec={}, semantic_pending={}, semantic_vectors={})",
            s.docs, s.groups, s.grouped_docs, s.segments, s.segment_bytes, s.live_bytes, s.tables,
            s.max_distance, s.min_jaccard, r(&s.spec), s.semantic_pending, s.semantic_vectors
        )
    }

    /// The counters as a dict: the fields of `fpdb --json stats`, key for key ("containment" is
    /// a dict or None).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, &StatsLine::new(&self.s, self.c.as_ref().map(|c| &c.0)))
    }
}

/// Counters of the containment index (`Stats.containment`; a scan of the index).
#[pyclass(frozen, eq, module = "fpdb")]
#[derive(Clone, Debug, PartialEq)]
pub struct ContainmentStats(EngineContainmentStats);

#[pymethods]
impl ContainmentStats {
    /// Sampling rate n (one shingle in n is a sample).
    #[getter]
    fn sample(&self) -> u32 {
        self.0.sample
    }

    /// Posting lists longer than this are skipped by queries (boilerplate).
    #[getter]
    fn max_postings(&self) -> u32 {
        self.0.max_postings
    }

    /// The cap on a stored document's samples (None: no cap).
    #[getter]
    fn max_samples(&self) -> Option<u32> {
        self.0.max_samples
    }

    /// Index entries (one per document and key).
    #[getter]
    fn entries(&self) -> u64 {
        self.0.entries
    }

    /// Of which short-document entries (every shingle of a document without samples).
    #[getter]
    fn short_entries(&self) -> u64 {
        self.0.short_entries
    }

    /// Documents indexed by their samples.
    #[getter]
    fn sampled_docs(&self) -> u64 {
        self.0.sampled_docs
    }

    /// Short documents (no sample: indexed under every shingle).
    #[getter]
    fn short_docs(&self) -> u64 {
        self.0.short_docs
    }

    /// Distinct keys (posting lists).
    #[getter]
    fn keys(&self) -> u64 {
        self.0.keys
    }

    /// Posting lists longer than `max_postings`: skipped by every query.
    #[getter]
    fn frequent_keys(&self) -> u64 {
        self.0.frequent_keys
    }

    /// Entries in those lists.
    #[getter]
    fn frequent_entries(&self) -> u64 {
        self.0.frequent_entries
    }

    /// The longest posting list.
    #[getter]
    fn longest_posting(&self) -> u64 {
        self.0.longest_posting
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        repr_of(py, "ContainmentStats", &self.0)
    }

    /// The counters as a dict (the "containment" object of `fpdb --json stats`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, &self.0)
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
