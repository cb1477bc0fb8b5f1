//! The service's request and response bodies (the OpenAPI schemas, generated from these types'
//! `ToSchema` derives) and the parsing every handler shares: integral JSON numbers, bodies as JSON.

use fpdb::output::{AnswerBounds, HttpHit, HttpOutcome, HttpStats, View};
use fpdb::{GroupInfo, QueryAnswer};
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

/// One line of the `POST /v1/documents` answer: the result of one input line.
#[derive(Serialize, ToSchema)]
pub struct BulkLineOut<'a> {
    /// 1-based line number in the request body.
    pub line: u64,
    /// The outcome, when the line was processed.
    #[serde(flatten)]
    pub outcome: Option<HttpOutcome<'a>>,
    /// Why the line was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
}

/// One line of the `POST /v1/duplicates:batch` answer: the check of one input line.
#[derive(Serialize, ToSchema)]
pub struct BatchLineOut<'a> {
    /// 1-based line number in the request body.
    pub line: u64,
    /// The answer, as `POST /v1/duplicates` gives it, when the line was checked.
    #[serde(flatten)]
    pub answer: Option<DuplicatesOut<'a>>,
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
#[derive(Serialize, ToSchema)]
pub struct DuplicatesOut<'a> {
    /// Text hits first (best first), then metadata-only hits.
    pub hits: Vec<HttpHit<'a>>,
    /// The answer's bounds.
    #[serde(flatten)]
    pub bounds: AnswerBounds<'a>,
    /// Time spent in the engine, microseconds.
    pub took_us: u64,
}

impl<'a> DuplicatesOut<'a> {
    /// The answer to one check, which took `took_us` in the engine.
    pub fn new(answer: &'a QueryAnswer, took_us: u64) -> Self {
        DuplicatesOut {
            hits: answer.hits.iter().map(View::of).collect(),
            bounds: View::of(answer),
            took_us,
        }
    }
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
    pub group: GroupInfo,
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
#[derive(Serialize, ToSchema)]
pub struct StatsOut<'a> {
    /// The database's counters, k, t and spec.
    #[serde(flatten)]
    pub stats: HttpStats<'a>,
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
