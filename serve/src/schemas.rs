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
#[serde(deny_unknown_fields)]
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
    /// Title; with `year`, matched exactly after normalisation (lower case, punctuation dropped;
    /// a title without a letter or digit is kept but never matched).
    #[schema(max_length = 4096)]
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

/// A metadata value a `where` filter matches: a string, or a number or boolean (compared as its
/// JSON text). Only the OpenAPI schema: the filter reads the JSON value itself.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
#[serde(untagged)]
pub enum WhereValue {
    /// A string.
    Text(String),
    /// A number.
    Number(f64),
    /// A boolean.
    Flag(bool),
}

/// A read-only duplicate check.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DuplicatesIn {
    /// The text to check (may be empty when title + year or a DOI is given).
    pub text: String,
    /// Title (matched with `year`).
    #[schema(max_length = 4096)]
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
    pub min_cosine: Option<f64>,
    /// Semantic channel: wait at most this long (milliseconds; at most --request-timeout-s, a
    /// longer value is cut to it) until every document acknowledged before the check is embedded.
    #[schema(minimum = 0, maximum = 86400000)]
    #[serde(default, deserialize_with = "int")]
    pub wait_semantic_ms: Option<u64>,
    /// Containment check instead: the stored documents that contain the text or that it contains,
    /// with containment >= C in either direction (a database with the containment index).
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub min_containment: Option<f64>,
    /// Only hits whose stored document has each of these metadata fields (or `title`, `year`,
    /// `doi`) equal to the value given, e.g. `{"repository": "arxiv"}`.
    #[serde(rename = "where")]
    #[schema(value_type = Option<std::collections::HashMap<String, WhereValue>>)]
    pub where_: Option<serde_json::Map<String, serde_json::Value>>,
}

impl DuplicatesIn {
    /// The `where` filters: each field and the text its value must have.
    pub fn filters(&self) -> Result<Vec<Where>, ApiError> {
        let Some(w) = &self.where_ else { return Ok(Vec::new()) };
        w.iter()
            .map(|(field, v)| {
                let value = match v {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Number(_) | serde_json::Value::Bool(_) => v.to_string(),
                    _ => return Err(ApiError::param(format!("`where.{field}` must be a string, number or boolean"))),
                };
                Ok(Where {
                    field: field.clone(),
                    value,
                })
            })
            .collect()
    }
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
    /// Its stored text, exactly as given (only with `?text=true`, on a database that stores texts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// `GET /v1/documents/{key}`'s parameters.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TextQuery {
    /// `true`: add the stored text (a database made with `--store-text`; 400 on another).
    pub text: Option<bool>,
}

impl From<fpdb::Document> for DocumentOut {
    fn from(doc: fpdb::Document) -> DocumentOut {
        let r = doc.record;
        DocumentOut {
            key: r.key,
            id: doc.id,
            simhash: format!("{:#018x}", r.simhash),
            shingles: r.count,
            inserted_at_ms: r.inserted_at_ms,
            title: r.biblio.title,
            year: r.biblio.year,
            doi: r.biblio.doi,
            meta: r.meta.as_deref().and_then(|m| serde_json::from_str(m).ok()),
            group: doc.group,
            text: None,
        }
    }
}

/// A page of `GET /v1/documents`.
#[derive(Debug, Serialize, ToSchema)]
pub struct DocumentsPage {
    /// The documents, by id.
    pub documents: Vec<DocumentOut>,
    /// The cursor of the next page (pass it as `after`); absent after the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// A page of `GET /v1/groups`.
#[derive(Debug, Serialize, ToSchema)]
pub struct GroupsPage {
    /// The groups of two or more members, by id.
    pub groups: Vec<GroupMembersOut>,
    /// The cursor of the next page (pass it as `after`); absent after the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// The query of a listing.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    /// The `next` of the previous page (absent: from the first).
    #[param(pattern = "^[0-9]{1,19}$")]
    pub after: Option<String>,
    /// Items per page (1..=10000; default 100).
    #[param(minimum = 1, maximum = 10000)]
    pub limit: Option<u64>,
}

impl PageQuery {
    /// The cursor and the page size, checked.
    pub fn cursor(&self) -> Result<(Option<u64>, usize), ApiError> {
        let after = match &self.after {
            None => None,
            Some(a) => Some(a.parse::<u64>().map_err(|_| {
                ApiError::param(format!(
                    "`after` must be the `next` of a previous page (an unsigned integer), not {a:?}"
                ))
            })?),
        };
        let limit = self.limit.unwrap_or(100);
        if !(1..=fpdb::MAX_PAGE as u64).contains(&limit) {
            return Err(ApiError::param(format!("`limit` must be in 1..={}", fpdb::MAX_PAGE)));
        }
        Ok((after, limit as usize))
    }
}

/// The query of `GET /v1/documents/{key}/duplicates`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct StoredDuplicatesQuery {
    /// Maximum Hamming distance (default: the database's).
    #[param(minimum = 0, maximum = 32)]
    pub max_distance: Option<u32>,
    /// Minimum Jaccard similarity (default: the database's).
    #[param(minimum = 0.0, maximum = 1.0)]
    pub min_jaccard: Option<f64>,
    /// Containment instead: the stored documents that contain this one or that it contains, with
    /// containment >= C in either direction (a database with the containment index).
    #[param(minimum = 0.0, maximum = 1.0)]
    pub min_containment: Option<f64>,
    /// At most this many hits.
    #[param(minimum = 0, maximum = 1000000)]
    pub limit: Option<usize>,
    /// `FIELD:VALUE`: only hits whose stored document has this metadata field (or `title`,
    /// `year`, `doi`) equal to VALUE (a string, or a number's or boolean's JSON text); the field's
    /// name ends at the first colon.
    #[serde(rename = "where")]
    #[param(rename = "where", pattern = "^[^:]+:")]
    pub where_: Option<String>,
}

/// A filter on one metadata field.
#[derive(Debug, Clone)]
pub struct Where {
    pub field: String,
    pub value: String,
}

/// The bounds a duplicate check's options share (`POST /v1/duplicates`, `GET
/// /v1/documents/{key}/duplicates`): checked before any path of the check runs.
pub fn check_bounds(
    limit: Option<u64>,
    max_distance: Option<u32>,
    min_jaccard: Option<f64>,
    min_containment: Option<f64>,
) -> Result<(), ApiError> {
    if limit.is_some_and(|l| l > MAX_LIMIT) {
        return Err(ApiError::param(format!("limit must be at most {MAX_LIMIT}")));
    }
    for (name, v) in [("min_jaccard", min_jaccard), ("min_containment", min_containment)] {
        if v.is_some_and(|v| !(0.0..=1.0).contains(&v)) {
            return Err(ApiError::param(format!("{name} must be in 0..=1")));
        }
    }
    if max_distance.is_some_and(|k| k > fpdb::MAX_DISTANCE) {
        return Err(ApiError::param(format!("max_distance must be at most {}", fpdb::MAX_DISTANCE)));
    }
    Ok(())
}

impl StoredDuplicatesQuery {
    /// The filter, when `where` is given; the other parameters' bounds checked.
    pub fn filter(&self) -> Result<Option<Where>, ApiError> {
        check_bounds(
            self.limit.map(|l| l as u64),
            self.max_distance,
            self.min_jaccard,
            self.min_containment,
        )?;
        match self.where_.as_deref().map(|w| w.split_once(':')) {
            None => Ok(None),
            Some(Some((field, value))) if !field.is_empty() => Ok(Some(Where {
                field: field.to_string(),
                value: value.to_string(),
            })),
            Some(_) => Err(ApiError::param("`where` is FIELD:VALUE (e.g. `where=repository:core`)")),
        }
    }
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
    /// `ok`; `degraded` (answered with 200: the semantic channel's indexer is retrying a failed
    /// step or stopped, or documents were set aside); or `failed` (then answered with 503:
    /// restart the server).
    pub status: String,
    /// Why the server is degraded or failed (absent when `ok`).
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

/// `POST /v1/admin/backup`'s body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BackupIn {
    /// The copy's directory on the server's file system (must not exist; made through `DIR.tmp`).
    #[schema(min_length = 1, pattern = r"^[^\x00]+$")]
    pub dir: String,
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
