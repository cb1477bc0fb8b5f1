//! The service's request and response bodies (the OpenAPI schemas, generated from these types'
//! `ToSchema` derives) and the parsing every handler shares: integral JSON numbers, bodies as JSON.

use fpdb::{Hit, InsertOutcome, MatchKind};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::errors::{ApiError, ErrorDetail};

/// What to do when the document has verified near-duplicates.
#[derive(Clone, Copy, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DedupParam {
    /// Store it and join its duplicates' group (default).
    Link,
    /// Do not store it; report its duplicates.
    Skip,
    /// Store it without looking for duplicates.
    Off,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DedupQuery {
    /// `link` (default), `skip` or `off`.
    pub dedup: Option<DedupParam>,
}

/// A document to store.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentIn {
    /// The text (must contain at least one word). Never logged.
    #[schema(pattern = r"[^\W_]", example = "Near-duplicate documents are posted many times on the web.")]
    pub text: String,
    /// Title; with `year`, matched exactly after normalisation (lower case, punctuation dropped).
    #[schema(pattern = r"[^\W_]", max_length = 4096)]
    pub title: Option<String>,
    /// Year of publication.
    #[schema(minimum = -9999, maximum = 9999)]
    #[serde(default, deserialize_with = "int")]
    pub year: Option<i32>,
    /// DOI, bare (`10.1145/123`) or as `doi:` / `https://doi.org/` form; matched exactly after normalisation.
    #[schema(
        pattern = r"^(doi:|https?://(dx\.)?doi\.org/)?10\.[0-9.]+/[^\s\x00-\x1f\x7f-\x9f]+$",
        max_length = 1024
    )]
    pub doi: Option<String>,
    /// A JSON object, stored with the document and returned by GET.
    #[schema(value_type = Option<Object>)]
    pub meta: Option<serde_json::Map<String, serde_json::Value>>,
}

/// One line of a `POST /v1/documents` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkDocumentIn {
    /// The document's key.
    pub key: String,
    /// The text.
    pub text: String,
    /// Title.
    pub title: Option<String>,
    /// Year.
    #[serde(default, deserialize_with = "int")]
    pub year: Option<i32>,
    /// DOI.
    pub doi: Option<String>,
    /// A JSON object.
    #[schema(value_type = Option<Object>)]
    pub meta: Option<serde_json::Map<String, serde_json::Value>>,
}

/// How a hit matched.
#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchOut {
    /// Verified text near-duplicate (SimHash within k, Jaccard ≥ t).
    Text,
    /// Same normalised DOI.
    Doi,
    /// Same normalised title and year.
    TitleYear,
    /// The semantic channel alone: the embeddings' cosine ≥ β (a database made with
    /// `fpdb init --semantic`).
    Semantic,
}

/// A near-duplicate (or metadata match).
#[derive(Debug, Serialize, ToSchema)]
pub struct HitOut {
    /// Its key.
    pub key: String,
    /// Its doc id.
    pub id: u64,
    /// Hamming distance of the SimHashes.
    pub hamming: u32,
    /// Exact Jaccard similarity of the shingle sets.
    pub jaccard: Option<f64>,
    /// Shared shingles.
    pub shared: Option<u32>,
    /// How it matched: `text`, `doi`, `title_year` or `semantic`.
    #[serde(rename = "match")]
    pub matched: MatchOut,
    /// The channels that matched it (paper 001's hybrid): `text` (a verified text duplicate or
    /// a metadata match), `semantic` (cosine ≥ β), or both.
    pub channels: Vec<String>,
    /// The cosine of the embeddings, when the semantic channel saw the document.
    pub cosine: Option<f32>,
}

impl From<&Hit> for HitOut {
    fn from(h: &Hit) -> Self {
        HitOut {
            key: h.key.clone(),
            id: h.id,
            hamming: h.hamming,
            jaccard: h.jaccard,
            shared: h.shared,
            matched: match h.matched {
                MatchKind::Doi => MatchOut::Doi,
                MatchKind::TitleYear => MatchOut::TitleYear,
                MatchKind::Semantic => MatchOut::Semantic,
                _ => MatchOut::Text,
            },
            channels: h.channels.iter().map(|c| c.as_str().to_string()).collect(),
            cosine: h.cosine,
        }
    }
}

/// A duplicate group.
#[derive(Debug, Serialize, ToSchema)]
pub struct GroupOut {
    /// Group id (= doc id of the canonical member).
    pub id: u64,
    /// Key of the canonical (earliest) member.
    pub canonical: String,
    /// Members.
    pub size: u64,
}

/// The fate of a stored (or skipped) document; sent once it is durable.
#[derive(Debug, Serialize, ToSchema)]
pub struct PutResponse {
    /// Its key.
    pub key: String,
    /// Its doc id (absent when not stored).
    pub id: Option<u64>,
    /// Whether it was stored (`dedup=skip` does not store near-duplicates).
    pub stored: bool,
    /// Doc id of the earlier document with the same key it replaced.
    pub replaced: Option<u64>,
    /// Verified near-duplicates and exact metadata matches already stored.
    pub duplicates: Vec<HitOut>,
    /// Its group (absent when not stored).
    pub group: Option<GroupOut>,
}

impl From<&InsertOutcome> for PutResponse {
    fn from(o: &InsertOutcome) -> Self {
        PutResponse {
            key: o.key.clone(),
            id: o.id,
            stored: o.id.is_some(),
            replaced: o.replaced,
            duplicates: o.duplicates.iter().map(HitOut::from).collect(),
            group: o.group.as_ref().map(|g| GroupOut {
                id: g.id,
                canonical: g.canonical.clone(),
                size: g.size as u64,
            }),
        }
    }
}

/// One line of the `POST /v1/documents` answer: the result of one input line.
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkLineOut {
    /// 1-based line number in the request body.
    pub line: u64,
    /// The outcome, when the line was processed.
    #[serde(flatten)]
    pub outcome: Option<PutResponse>,
    /// Why the line was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
}

/// One line of the `POST /v1/duplicates:batch` answer: the check of one input line.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchLineOut {
    /// 1-based line number in the request body.
    pub line: u64,
    /// The answer, as `POST /v1/duplicates` gives it, when the line was checked.
    #[serde(flatten)]
    pub answer: Option<DuplicatesOut>,
    /// Why the line was not checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
}

/// A read-only duplicate check.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DuplicatesIn {
    /// The text to check (may be empty when title + year or a DOI is given).
    pub text: String,
    /// Title (matched with `year`).
    #[schema(pattern = r"[^\W_]", max_length = 4096)]
    pub title: Option<String>,
    /// Year.
    #[schema(minimum = -9999, maximum = 9999)]
    #[serde(default, deserialize_with = "int")]
    pub year: Option<i32>,
    /// DOI.
    #[schema(
        pattern = r"^(doi:|https?://(dx\.)?doi\.org/)?10\.[0-9.]+/[^\s\x00-\x1f\x7f-\x9f]+$",
        max_length = 1024
    )]
    pub doi: Option<String>,
    /// Maximum Hamming distance (default: the database's).
    #[schema(minimum = 0, maximum = 32)]
    #[serde(default, deserialize_with = "int")]
    pub max_distance: Option<u32>,
    /// Minimum Jaccard similarity (default: the database's).
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub min_jaccard: Option<f64>,
    /// At most this many hits.
    #[schema(minimum = 0, maximum = 1000000)]
    #[serde(default, deserialize_with = "int")]
    pub limit: Option<u64>,
    /// Semantic channel: β of this check (default: the database's).
    #[schema(minimum = -1.0, maximum = 1.0)]
    pub min_cosine: Option<f32>,
    /// Semantic channel: wait at most this long (milliseconds, within the request deadline) until
    /// every document acknowledged before the check is embedded.
    #[serde(default, deserialize_with = "int")]
    pub wait_semantic_ms: Option<u64>,
}

/// Hits of a duplicate check.
#[derive(Debug, Serialize, ToSchema)]
pub struct DuplicatesOut {
    /// Text hits first (best first), then metadata-only hits.
    pub hits: Vec<HitOut>,
    /// True when candidates were left unverified (past `--max-candidates` or the deadline
    /// `--query-deadline-ms`): the text hits may be incomplete; a narrower check
    /// (smaller `max_distance`, higher `min_jaccard`) finishes.
    pub truncated: bool,
    /// Candidates verified by exact Jaccard.
    pub candidates: u64,
    /// Acknowledged documents the semantic channel has not embedded yet (they cannot match by
    /// cosine); 0 without the channel.
    pub semantic_pending: u64,
    /// Time spent in the engine, microseconds.
    pub took_us: u64,
}

/// A stored document.
#[derive(Debug, Serialize, ToSchema)]
pub struct DocumentOut {
    /// Key.
    pub key: String,
    /// Doc id.
    pub id: u64,
    /// SimHash, hex.
    #[schema(example = "0x1f2e3d4c5b6a7988")]
    pub simhash: String,
    /// Number of shingles.
    pub shingles: u32,
    /// Insertion time, ms since the Unix epoch.
    pub inserted_at_ms: u64,
    /// Title.
    pub title: Option<String>,
    /// Year.
    pub year: Option<i32>,
    /// DOI as given.
    pub doi: Option<String>,
    /// Stored metadata.
    #[schema(value_type = Option<Object>)]
    pub meta: Option<serde_json::Value>,
    /// Its group.
    pub group: GroupOut,
}

/// A deleted document.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeleteOut {
    /// Key.
    pub key: String,
    /// Always true (a missing key is a 404).
    pub deleted: bool,
}

/// A group member.
#[derive(Debug, Serialize, ToSchema)]
pub struct MemberOut {
    /// Doc id.
    pub id: u64,
    /// Key.
    pub key: String,
}

/// A duplicate group and its members.
#[derive(Debug, Serialize, ToSchema)]
pub struct GroupMembersOut {
    /// Group id (= doc id of the canonical member).
    pub id: u64,
    /// Key of the canonical member.
    pub canonical: String,
    /// Number of members.
    pub size: u64,
    /// Members by doc id.
    pub members: Vec<MemberOut>,
}

/// Database counters.
#[derive(Debug, Serialize, ToSchema)]
pub struct StatsOut {
    /// Live documents.
    pub docs: u64,
    /// Groups with at least two members.
    pub groups: u64,
    /// Documents in such groups.
    pub grouped_docs: u64,
    /// Segment files.
    pub segments: u64,
    /// Bytes in segment files.
    pub segment_bytes: u64,
    /// Bytes of live records.
    pub live_bytes: u64,
    /// Number of SimHash tables.
    pub tables: u32,
    /// Default maximum Hamming distance.
    pub max_distance: u32,
    /// Default minimum Jaccard.
    pub min_jaccard: f64,
    /// Fingerprint spec.
    pub spec: String,
    /// The largest `max_distance` a duplicate check accepts now (grows and shrinks with the
    /// database: docs/serve.md, "Limits of a duplicate check").
    pub max_query_distance: u32,
}

/// Liveness.
#[derive(Debug, Serialize, ToSchema)]
pub struct HealthOut {
    /// `ok`, or `failed` (then answered with 503: restart the server).
    pub status: String,
    /// Why the server failed (absent when `ok`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A key given in the body (`POST /v1/documents:get`, `POST /v1/documents:delete`): any key the
/// database holds, however long.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyIn {
    /// The document's key.
    pub key: String,
}

/// Largest `limit` of a duplicate check.
pub(super) const MAX_LIMIT: u64 = 1_000_000;

/// Integer fields: JSON Schema counts `2.0` as an integer, so integral floats are accepted too.
fn int<'de, D: serde::Deserializer<'de>, T: TryFrom<i128>>(d: D) -> Result<Option<T>, D::Error> {
    use serde::de::Error as _;
    let Some(n) = Option::<serde_json::Number>::deserialize(d)? else {
        return Ok(None);
    };
    let i = n
        .as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
        .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 1e30).map(|f| f as i128))
        .ok_or_else(|| D::Error::custom(format!("expected an integer, found {n}")))?;
    T::try_from(i)
        .map(Some)
        .map_err(|_| D::Error::custom(format!("{n} is out of range")))
}

pub(super) fn parse_json<T: for<'de> Deserialize<'de>>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(ApiError::bad_json)
}
