//! Counters and reports: `Stats`, `ContainmentStats`, `Fault`, `CheckReport`, `CompactStats` and
//! `IngestStats`.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{dict, int_repr, o, r, ro};
use crate::api::{
    CheckReport as EngineCheck, CompactStats as EngineCompact, ContainmentStats as EngineContainmentStats,
    IngestStats as EngineIngestStats, Stats as EngineStats,
};

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
