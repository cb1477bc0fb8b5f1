//! The values the database hands in and out: documents, hits, outcomes, reports.

use crate::error::{Error, Result};
use crate::fingerprint::biblio::{self, Biblio, MatchKind};
use crate::fingerprint::similarity::MethodScore;
use crate::fingerprint::Fingerprint;
use crate::store::doc_record::DocRecord;

use super::options::validate_key;

/// One query hit.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Hit {
    /// External key.
    pub key: String,
    /// Doc id.
    pub id: u64,
    /// Hamming distance of the SimHashes; under another method, its distance
    /// (`MethodScore::distance`: differing bits, or differing supershingles).
    pub hamming: u32,
    /// Exact Jaccard of the shingle sets (absent for fingerprint-only queries).
    pub jaccard: Option<f64>,
    /// Number of shared shingles (absent for fingerprint-only queries).
    pub shared: Option<u32>,
    /// Containment of the query in this document, |Q ∩ D| / |Q| (absent for fingerprint-only
    /// queries).
    pub containment: Option<f64>,
    /// Containment of this document in the query, |Q ∩ D| / |D| (absent for fingerprint-only
    /// queries).
    pub reverse_containment: Option<f64>,
    /// How it matched: verified text, or an exact metadata match (then Hamming distance, Jaccard
    /// and containment are given for information only).
    #[serde(rename = "match")]
    pub matched: MatchKind,
    /// The method's own similarity (supershingles shared, agreeing bits, Hamming per
    /// lexicon; the Hamming distance under simhash).
    pub score: MethodScore,
    /// The channels that matched it: `text` (a verified text duplicate or metadata match),
    /// `semantic` (cosine ≥ β in the semantic channel), or both.
    pub channels: Vec<Channel>,
    /// The cosine of the embeddings, when the semantic channel saw this document (absent without
    /// the channel, or before it embedded the document).
    pub cosine: Option<f32>,
}

impl Hit {
    /// A hit whose shingle sets were not compared (a SimHash query's, a semantic match's): its
    /// key, id and Hamming distance, how it matched and by which channel.
    pub(crate) fn unverified(key: String, id: u64, hamming: u32, matched: MatchKind, channel: Channel) -> Hit {
        Hit {
            key,
            id,
            hamming,
            jaccard: None,
            shared: None,
            containment: None,
            reverse_containment: None,
            matched,
            score: MethodScore::Hamming(hamming),
            channels: vec![channel],
            cosine: None,
        }
    }
}

/// A channel of the CORE paper's hybrid: the surface fingerprints or the embeddings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Channel {
    /// The text channel: SimHash (or the method's sketch) + exact Jaccard, or a metadata match.
    Text,
    /// The semantic channel: cosine of sentence embeddings ≥ β.
    Semantic,
}

impl Channel {
    /// The name in JSON (`text`, `semantic`).
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Text => "text",
            Channel::Semantic => "semantic",
        }
    }
}

/// Hits best first: highest Jaccard, then lowest distance, then lowest id.
pub(super) fn sort_hits(hits: &mut [Hit]) {
    hits.sort_by(|a, b| {
        b.jaccard
            .partial_cmp(&a.jaccard)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.hamming.cmp(&b.hamming))
            .then(a.id.cmp(&b.id))
    });
}

/// A query's answer with its bounds (`Db::query_answer`): the hits,
/// how many candidates were verified by exact Jaccard (or containment), and whether some that
/// passed the filters were left unverified (by `QueryOptions::max_candidates` or
/// `QueryOptions::deadline`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[non_exhaustive]
pub struct QueryAnswer {
    /// The verified hits, best first (at most `QueryOptions::limit`).
    pub hits: Vec<Hit>,
    /// True when candidates were left unverified: the hits may be incomplete.
    pub truncated: bool,
    /// How many candidates were verified.
    pub candidates: usize,
    /// Acknowledged documents the semantic channel has not embedded yet (so could not match);
    /// 0 without the channel.
    pub semantic_pending: u64,
}

/// A duplicate group as seen at a point in time.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    /// Containment relations, when asked for ([`IngestOptions::containment`](crate::IngestOptions)):
    /// the documents already in the database (or earlier in the batch) with containment at least
    /// the threshold in either direction. `containment` is this document inside the other,
    /// `reverse_containment` the other inside this one. A relation, not a duplicate: groups do not
    /// change. Empty when not asked for.
    pub containment: Vec<Hit>,
    /// Verified near-duplicates it was not linked to because a curator's `distinct` decision
    /// stands between their groups (empty without decisions).
    pub not_linked: Vec<NotLinked>,
}

/// A verified near-duplicate an insert did not link to, and the decision that held the link.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NotLinked {
    /// Its key.
    pub key: String,
    /// Its doc id.
    pub id: u64,
    /// Exact Jaccard with the new document.
    pub jaccard: Option<f64>,
    /// The two keys of the `distinct` decision that held the link.
    pub blocked_by: Vec<String>,
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
    /// Title, year and DOI: stored, indexed and matched exactly (see [`crate::fingerprint::biblio`]).
    pub biblio: Biblio,
}

/// A document fingerprinted and validated, ready for the writer. Only validated values exist: build
/// one with [`Db::prepare`](crate::Db::prepare) or [`PreparedDoc::new`].
#[derive(Clone, Debug)]
pub struct PreparedDoc {
    pub(super) key: String,
    pub(super) fp: Fingerprint,
    pub(super) meta: Option<String>,
    pub(super) biblio: Biblio,
    /// What the side indexes keep of the text, each in its encoding (`SideIndex::keep_text`; none
    /// for a document made from a fingerprint alone).
    pub(super) text: KeptTexts,
}

/// What side indexes keep of one document's text until it is written, each in its own encoding,
/// by the side index's name (`SideIndex::keep_text`).
#[derive(Clone, Debug, Default)]
pub(crate) struct KeptTexts(pub(crate) Vec<(&'static str, Vec<u8>)>);

impl KeptTexts {
    /// What the side index `name` kept.
    pub(crate) fn get(&self, name: &str) -> Option<&[u8]> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_slice())
    }
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
        Ok(PreparedDoc {
            key,
            fp,
            meta,
            biblio: Biblio::default(),
            text: KeptTexts::default(),
        })
    }

    /// Sets the title, year and DOI, validated (the error names the field and the document's key).
    pub fn with_biblio(mut self, b: Biblio) -> Result<PreparedDoc> {
        biblio::validate(&b).map_err(|e| match e {
            Error::InvalidInput { message, .. } => Error::input(Some(self.key.as_bytes()), message),
            e => e,
        })?;
        self.biblio = b;
        Ok(self)
    }

    /// The title, year and DOI.
    pub fn biblio(&self) -> &Biblio {
        &self.biblio
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
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    /// The number of tables the cost model finds best for this many documents at the default k
    /// (`index::layout::best_tables`; `Db::reindex` with `Tables::Auto`
    /// applies it). Equal to `tables` where a re-layout is not possible (multi-lexicon).
    pub best_tables: u32,
    /// Default k.
    pub max_distance: u32,
    /// Default t.
    pub min_jaccard: f64,
    /// The spec, as text.
    pub spec: String,
    /// Acknowledged documents the semantic channel has not embedded yet (0 without the channel).
    pub semantic_pending: u64,
    /// Vectors held by the semantic channel (0 without it).
    pub semantic_vectors: u64,
    /// Live documents the semantic channel set aside: the model failed on their text, or their
    /// queued text was unreadable (`Db::semantic_set_aside` lists them; 0 without the channel).
    #[serde(default)]
    pub semantic_set_aside: u64,
    /// The semantic indexer's state: `running`, `degraded`, `stopped`, or `off` where this handle
    /// runs none (absent without the channel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic_indexer: Option<String>,
    /// Why the semantic indexer is degraded or stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic_indexer_reason: Option<String>,
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
    /// Containment-index entries verified (0 without the index).
    pub contain_entries: u64,
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

impl Precheck {
    /// The verified near-duplicates found among the documents committed before the snapshot.
    pub fn duplicates(&self) -> &[Hit] {
        &self.dups
    }
}

/// The containment index's counters ([`ContainmentIndex::stats`](crate::ContainmentIndex::stats); a scan
/// of the index).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ContainmentStats {
    /// Sampling rate n (one shingle in n is a sample).
    pub sample: u32,
    /// Posting lists longer than this are skipped by queries (boilerplate).
    pub max_postings: u32,
    /// The cap on a stored document's samples (`ContainmentConfig::max_samples`; None: no cap).
    pub max_samples: Option<u32>,
    /// Index entries (one per document and key).
    pub entries: u64,
    /// Of which short-document entries (every shingle of a document without samples).
    pub short_entries: u64,
    /// Documents indexed by their samples.
    pub sampled_docs: u64,
    /// Short documents (no sample: indexed under every shingle).
    pub short_docs: u64,
    /// Distinct keys (posting lists).
    pub keys: u64,
    /// Posting lists longer than `max_postings`: skipped by every query.
    pub frequent_keys: u64,
    /// Entries in those lists.
    pub frequent_entries: u64,
    /// The longest posting list.
    pub longest_posting: u64,
}

/// One containment pair of [`ContainmentIndex::pairs`](crate::ContainmentIndex::pairs) (a < b by doc id).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ContainPair {
    /// Smaller doc id.
    pub a: u64,
    /// Larger doc id.
    pub b: u64,
    /// |A ∩ B| / |A|: a inside b.
    pub a_in_b: f64,
    /// |A ∩ B| / |B|: b inside a.
    pub b_in_a: f64,
    /// Exact Jaccard.
    pub jaccard: f64,
    /// |A ∩ B|.
    pub shared: u32,
}
