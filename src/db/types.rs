//! The values the database hands in and out: documents, hits, outcomes, reports.

use crate::error::{Error, Result};
use crate::fingerprint::similarity::MethodScore;
use crate::fingerprint::Fingerprint;
use crate::store::doc_record::DocRecord;

use super::options::validate_key;

/// One query hit.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// External key.
    pub key: String,
    /// Doc id.
    pub id: u64,
    /// Hamming distance of the SimHashes; under another method, its distance
    /// ([`MethodScore::distance`]: differing bits, or differing supershingles).
    pub hamming: u32,
    /// Exact Jaccard of the shingle sets (absent for fingerprint-only queries).
    pub jaccard: Option<f64>,
    /// Number of shared shingles (absent for fingerprint-only queries).
    pub shared: Option<u32>,
    /// method: the method's own similarity (supershingles shared, agreeing bits, Hamming per
    /// lexicon; the Hamming distance under simhash).
    pub score: MethodScore,
}

/// A duplicate group as seen at a point in time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupInfo {
    /// Group id = doc id of the canonical member.
    pub id: u64,
    /// Key of the canonical (earliest inserted living) member.
    pub canonical: String,
    /// Number of members.
    pub size: usize,
}

/// Result of inserting one document.
#[derive(Clone, Debug, PartialEq)]
pub struct InsertOutcome {
    /// The document's key.
    pub key: String,
    /// Its doc id, when stored.
    pub id: Option<u64>,
    /// Doc id of the earlier document with the same key that this one replaced.
    pub replaced: Option<u64>,
    /// Verified near-duplicates already in the database (or earlier in the batch).
    pub duplicates: Vec<Hit>,
    /// Its group after the insert (when stored).
    pub group: Option<GroupInfo>,
}

/// A document to insert.
#[derive(Clone, Debug)]
pub struct NewDoc {
    /// External key (1..=65536 bytes).
    pub key: String,
    /// Text.
    pub text: String,
    /// Optional metadata (JSON text), stored with the record.
    pub meta: Option<String>,
}

/// A document fingerprinted and validated, ready for the writer. Only validated values exist: build
/// one with [`Db::prepare`](crate::Db::prepare) or [`PreparedDoc::new`].
#[derive(Clone, Debug)]
pub struct PreparedDoc {
    pub(super) key: String,
    pub(super) fp: Fingerprint,
    pub(super) meta: Option<String>,
}

impl PreparedDoc {
    /// Validates a document whose fingerprint was computed elsewhere (tools, tests, a fingerprint
    /// received from another process): the key must be 1..=65536 bytes and the shingle set
    /// non-empty, sorted and unique. The SimHash is taken as given.
    pub fn new(key: String, fp: Fingerprint, meta: Option<String>) -> Result<PreparedDoc> {
        validate_key(&key)?;
        if fp.shingles.is_empty() {
            return Err(Error::input(Some(key.as_bytes()), "the shingle set is empty; nothing to store"));
        }
        if let Some(i) = fp.shingles.windows(2).position(|w| w[0] >= w[1]) {
            return Err(Error::input(
                Some(key.as_bytes()),
                format!(
                    "the shingle set must be sorted and unique, but element {} ({}) is followed by {}",
                    i,
                    fp.shingles[i],
                    fp.shingles[i + 1]
                ),
            ));
        }
        Ok(PreparedDoc { key, fp, meta })
    }

    /// The external key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The fingerprint.
    pub fn fingerprint(&self) -> &Fingerprint {
        &self.fp
    }
}

/// A stored document.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// Doc id.
    pub id: u64,
    /// The record.
    pub record: DocRecord,
    /// Its group.
    pub group: GroupInfo,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Stats {
    /// Live documents.
    pub docs: u64,
    /// Groups with at least two members.
    pub groups: u64,
    /// Documents in groups with at least two members.
    pub grouped_docs: u64,
    /// Segment files.
    pub segments: u64,
    /// Bytes in segment files.
    pub segment_bytes: u64,
    /// Bytes of live records.
    pub live_bytes: u64,
    /// Number of tables.
    pub tables: u32,
    /// Default k.
    pub max_distance: u32,
    /// Default t.
    pub min_jaccard: f64,
    /// The spec, as text.
    pub spec: String,
}

/// One problem found by [`Db::check`](crate::Db::check).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Fault {
    /// The document, when the problem is one document's.
    pub doc: Option<u64>,
    /// Its key, when known.
    pub key: Option<String>,
    /// The file concerned.
    pub path: String,
    /// What is wrong.
    pub what: String,
}

/// Result of [`Db::check`](crate::Db::check).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CheckReport {
    /// Documents verified.
    pub docs: u64,
    /// Table entries verified.
    pub table_entries: u64,
    /// Problems.
    pub faults: Vec<Fault>,
}

/// Result of [`Db::compact`](crate::Db::compact).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CompactStats {
    /// Segments rewritten.
    pub segments_rewritten: u64,
    /// Bytes reclaimed.
    pub bytes_reclaimed: u64,
    /// Records moved.
    pub records_moved: u64,
}

/// Duplicates of a prepared document verified by a worker against the committed documents with id
/// below `upto`; the writer completes it with the documents committed since and the batch's own.
#[derive(Clone, Debug)]
pub struct Precheck {
    pub(super) upto: u64,
    pub(super) dups: Vec<Hit>,
}
