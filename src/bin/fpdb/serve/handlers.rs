//! One thin handler per endpoint: decode the request, call the library (on the blocking pool), encode
//! the answer. The request and response types are the OpenAPI schemas (`schemas.rs`, collected by
//! `openapi.rs`).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use fpdb::IngestOptions;
use fpdb::{Biblio, Dedup, NewDoc, QueryOptions};
use serde::Serialize;
use tokio::sync::oneshot;

use super::errors::{ApiError, ErrorBody};
use super::router::AppState;
use super::schemas::{parse_json, MAX_LIMIT};
use super::schemas::{
    BulkDocumentIn, BulkLineOut, DedupParam, DedupQuery, DeleteOut, DocumentIn, DocumentOut, DuplicatesIn, DuplicatesOut, GroupMembersOut,
    GroupOut, HealthOut, HitOut, MemberOut, PutResponse, StatsOut,
};
use super::writer::Job;

type AppResult = Result<Response, ApiError>;

fn json<T: Serialize>(status: StatusCode, v: &T) -> Response {
    match serde_json::to_vec(v) {
        Ok(body) => (status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response(),
        Err(e) => ApiError::internal(format!("cannot encode the answer: {e}")).into_response(),
    }
}

/// Runs a blocking library call on tokio's blocking pool.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T, ApiError> + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("a worker task failed: {e}")))?
}

fn key_of(p: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    p.map(|Path(k)| k).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_path",
            format!("the key segment does not decode ({e}); percent-encode keys as UTF-8"),
        )
    })
}

/// A body read whole by axum (within `limit`, the `DefaultBodyLimit`), then [`decoded`].
async fn body_of(headers: &HeaderMap, b: Result<Bytes, BytesRejection>, limit: usize, flag: &str) -> Result<Bytes, ApiError> {
    let body = b.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::too_large(limit, flag)
        } else {
            ApiError::new(StatusCode::BAD_REQUEST, "invalid_json", format!("cannot read the body: {e}"))
        }
    })?;
    decoded(headers, body, limit, flag).await
}

/// Reads a whole body, refusing it (413) as soon as it passes `limit` bytes.
async fn read_limited(body: Body, limit: usize, flag: &str) -> Result<Bytes, ApiError> {
    use futures_util::StreamExt as _;
    let mut stream = body.into_data_stream();
    let mut buf = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid_json", format!("cannot read the body: {e}")))?;
        if buf.len() + chunk.len() > limit {
            return Err(ApiError::too_large(limit, flag));
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(buf))
}

/// The body as sent, decompressed when its `Content-Encoding` is gzip. The decompressed size is held
/// to the same `limit` as the body (413 past it, without inflating further: a small gzip bomb cannot
/// take memory); a stream that does not decompress is 400. Any other coding (br, deflate, zstd,
/// several codings) is 415, naming the two that are accepted.
async fn decoded(headers: &HeaderMap, body: Bytes, limit: usize, flag: &str) -> Result<Bytes, ApiError> {
    let Some(coding) = headers.get(header::CONTENT_ENCODING) else {
        return Ok(body);
    };
    let coding = coding.to_str().unwrap_or("").trim().to_ascii_lowercase();
    match coding.as_str() {
        "" | "identity" => Ok(body),
        "gzip" | "x-gzip" => {
            let flag = flag.to_string();
            blocking(move || {
                use std::io::Read as _;
                let mut out = Vec::new();
                flate2::read::MultiGzDecoder::new(&body[..])
                    .take(limit as u64 + 1)
                    .read_to_end(&mut out)
                    .map_err(|e| {
                        ApiError::new(
                            StatusCode::BAD_REQUEST,
                            "invalid_encoding",
                            format!("the gzip body does not decompress: {e}"),
                        )
                    })?;
                if out.len() > limit {
                    return Err(ApiError::too_large(limit, &format!("{flag}, decompressed")));
                }
                Ok(Bytes::from(out))
            })
            .await
        }
        _ => Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_encoding",
            format!("Content-Encoding {coding:?} is not supported; send the body uncompressed or with Content-Encoding: gzip"),
        )),
    }
}

fn dedup_of(q: Result<Query<DedupQuery>, QueryRejection>) -> Result<Dedup, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::param(format!("{e}; `dedup` is one of link, skip, off")))?;
    Ok(match q.dedup.unwrap_or(DedupParam::Link) {
        DedupParam::Link => Dedup::Link,
        DedupParam::Skip => Dedup::Skip,
        DedupParam::Off => Dedup::Off,
    })
}

// ---------------------------------------------------------------------------------------------
// Handlers

/// Store (or replace) one document; answers once it is durable.
#[utoipa::path(put, path = "/v1/documents/{key}", tag = "documents",
    params(("key" = String, Path, description = "The document's key (percent-encoded UTF-8, 1..=65536 bytes)"), DedupQuery),
    request_body(content = DocumentIn, content_type = "application/json"),
    responses(
        (status = 200, description = "Durable; its duplicates and group", body = PutResponse),
        (status = 400, description = "Bad JSON, document or parameter", body = ErrorBody),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 413, description = "Body over --max-body-bytes (as sent, or decompressed)", body = ErrorBody),
        (status = 415, description = "A Content-Encoding other than gzip or identity", body = ErrorBody),
        (status = 429, description = "Writer queue full; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
        (status = 500, description = "Storage error", body = ErrorBody),
        (status = 503, description = "Shutting down or unavailable; see Retry-After", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn put_document(
    State(s): State<Arc<AppState>>,
    key: Result<Path<String>, PathRejection>,
    q: Result<Query<DedupQuery>, QueryRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> AppResult {
    let key = key_of(key)?;
    let dedup = dedup_of(q)?;
    let body = body_of(&headers, body, s.cfg.max_body_bytes, "--max-body-bytes").await?;
    let d: DocumentIn = parse_json(&body)?;
    if s.writer.is_full() {
        s.metrics.rejected_busy.fetch_add(1, Ordering::Relaxed);
        return Err(ApiError::queue_full("the writer queue is full (--queue-depth)"));
    }
    let doc = NewDoc {
        key,
        text: d.text,
        meta: d.meta.map(|m| serde_json::Value::Object(m).to_string()),
        biblio: Biblio {
            title: d.title,
            year: d.year,
            doi: d.doi,
        },
    };
    let db = s.db.clone();
    // Fingerprint and pre-verify off the async threads; the writer only completes the check.
    let (prepared, pre) = blocking(move || {
        let p = db.prepare(&mut db.fingerprinter(), doc)?;
        let pre = if dedup == Dedup::Off { None } else { Some(db.precheck(&p)?) };
        Ok((p, pre))
    })
    .await?;
    let (tx, rx) = oneshot::channel();
    s.writer.submit(Job {
        doc: prepared,
        pre,
        dedup,
        reply: tx,
    })?;
    let outcome = rx.await.map_err(|_| ApiError::shutting_down())??;
    Ok(json(StatusCode::OK, &PutResponse::from(&outcome)))
}

/// Store many documents (NDJSON, one `BulkDocumentIn` per line) through the ingestion pipeline
/// (group commit); streams one NDJSON result line per input line once its batch is durable.
#[utoipa::path(post, path = "/v1/documents", tag = "documents",
    params(DedupQuery),
    request_body(content = BulkDocumentIn, content_type = "application/x-ndjson",
        description = "One JSON document per line: {\"key\", \"text\", \"title\"?, \"year\"?, \"doi\"?, \"meta\"?}"),
    responses(
        (status = 200, description = "One BulkLineOut per input line, in input order, each sent once durable", body = BulkLineOut, content_type = "application/x-ndjson"),
        (status = 400, description = "Bad parameter", body = ErrorBody),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 413, description = "Body over --max-bulk-bytes (as sent, or decompressed)", body = ErrorBody),
        (status = 415, description = "A Content-Encoding other than gzip or identity", body = ErrorBody),
        (status = 429, description = "All bulk slots busy; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
        (status = 503, description = "Shutting down", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn post_documents(
    State(s): State<Arc<AppState>>,
    q: Result<Query<DedupQuery>, QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> AppResult {
    let dedup = dedup_of(q)?;
    // The slot is taken before the body is read: a slow upload holds it, so the slots bound the
    // memory of bulk bodies (bulk_slots × max_bulk_bytes).
    let Ok(permit) = s.bulk.clone().try_acquire_owned() else {
        s.metrics.rejected_busy.fetch_add(1, Ordering::Relaxed);
        return Err(ApiError::queue_full("all bulk-ingest slots are busy (--bulk-slots)"));
    };
    let body = read_limited(body, s.cfg.max_bulk_bytes, "--max-bulk-bytes").await?;
    let body = decoded(&headers, body, s.cfg.max_bulk_bytes, "--max-bulk-bytes").await?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_json("the body holds no document; send one JSON object per line"));
    }
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Bytes>(256);
    let db = s.db.clone();
    let metrics = s.metrics.clone();
    let opts = IngestOptions::default()
        .with_workers(s.cfg.workers)
        .with_batch_size(s.cfg.batch_size)
        .with_batch_latency(Duration::from_millis(10))
        .with_dedup(dedup);
    // Every line must be the documented JSON: one that is not rejects the whole request (400,
    // nothing stored, the line number in the message). Documents that parse but cannot be stored
    // (no words, bad DOI, ...) are reported on their own result line instead.
    let parsed = blocking(move || {
        let mut lines: Vec<u64> = Vec::new();
        let mut docs: Vec<NewDoc> = Vec::new();
        for (i, raw) in body.split(|&b| b == b'\n').enumerate() {
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let d: BulkDocumentIn =
                serde_json::from_slice(raw).map_err(|e| ApiError::bad_json(format!("line {}: {e}; nothing was stored", i + 1)))?;
            lines.push(i as u64 + 1);
            docs.push(NewDoc {
                key: d.key,
                text: d.text,
                meta: d.meta.map(|m| serde_json::Value::Object(m).to_string()),
                biblio: Biblio {
                    title: d.title,
                    year: d.year,
                    doi: d.doi,
                },
            });
        }
        Ok((lines, docs))
    });
    let (lines, docs) = parsed.await?;
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let send = |v: &BulkLineOut| {
            let mut b = serde_json::to_vec(v).unwrap_or_default();
            b.push(b'\n');
            let _ = tx.blocking_send(Bytes::from(b));
        };
        let input = docs.into_iter().map(Ok);
        let result = db.ingest(input, &opts, |r| {
            let seq = r.seq as usize;
            let line = lines.get(seq).copied().unwrap_or_default();
            let out = match &r.result {
                Ok(o) => {
                    if o.id.is_some() {
                        metrics.bulk_docs.fetch_add(1, Ordering::Relaxed);
                    }
                    BulkLineOut {
                        line,
                        outcome: Some(PutResponse::from(o)),
                        error: None,
                    }
                }
                Err(e) => BulkLineOut {
                    line,
                    outcome: None,
                    error: Some(ApiError::of(e).body().error),
                },
            };
            send(&out);
        });
        if let Err(e) = result {
            let e = ApiError::from(e);
            send(&BulkLineOut {
                line: 0,
                outcome: None,
                error: Some(e.body().error),
            });
        }
    });
    let stream = futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx).map(|o| o.map(Ok::<Bytes, std::convert::Infallible>)));
    let mut r = Response::new(Body::from_stream(stream));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson"));
    Ok(r)
}

/// Read-only check: verified text near-duplicates unioned with exact metadata matches (paper 001).
#[utoipa::path(post, path = "/v1/duplicates", tag = "documents",
    request_body(content = DuplicatesIn, content_type = "application/json"),
    responses(
        (status = 200, description = "Hits", body = DuplicatesOut),
        (status = 400, description = "Bad JSON, document or parameter", body = ErrorBody),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 413, description = "Body over --max-body-bytes (as sent, or decompressed)", body = ErrorBody),
        (status = 415, description = "A Content-Encoding other than gzip or identity", body = ErrorBody),
        (status = 500, description = "Storage error", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn post_duplicates(State(s): State<Arc<AppState>>, headers: HeaderMap, body: Result<Bytes, BytesRejection>) -> AppResult {
    let body = body_of(&headers, body, s.cfg.max_body_bytes, "--max-body-bytes").await?;
    let d: DuplicatesIn = parse_json(&body)?;
    if d.limit.is_some_and(|l| l > MAX_LIMIT) {
        return Err(ApiError::param(format!("limit must be at most {MAX_LIMIT}")));
    }
    let db = s.db.clone();
    let (hits, took) = blocking(move || {
        let mut opts = QueryOptions::default();
        if let Some(k) = d.max_distance {
            opts = opts.with_max_distance(k);
        }
        if let Some(t) = d.min_jaccard {
            opts = opts.with_min_jaccard(t);
        }
        if let Some(l) = d.limit {
            opts = opts.with_limit(usize::try_from(l).unwrap_or(usize::MAX));
        }
        let biblio = Biblio {
            title: d.title,
            year: d.year,
            doi: d.doi,
        };
        let t = Instant::now();
        let hits = db.check_duplicates(&d.text, &biblio, &opts)?;
        Ok((hits, t.elapsed()))
    })
    .await?;
    Ok(json(
        StatusCode::OK,
        &DuplicatesOut {
            hits: hits.iter().map(HitOut::from).collect(),
            took_us: took.as_micros() as u64,
        },
    ))
}

/// A stored document and its group.
#[utoipa::path(get, path = "/v1/documents/{key}", tag = "documents",
    params(("key" = String, Path, description = "The document's key (percent-encoded)")),
    responses(
        (status = 200, description = "The document", body = DocumentOut),
        (status = 400, description = "The key does not decode", body = ErrorBody),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
        (status = 404, description = "No document with that key", body = ErrorBody),
        (status = 500, description = "Storage error", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn get_document(State(s): State<Arc<AppState>>, key: Result<Path<String>, PathRejection>) -> AppResult {
    let key = key_of(key)?;
    let db = s.db.clone();
    let k = key.clone();
    let doc = blocking(move || Ok(db.get(&k)?)).await?;
    let Some(doc) = doc else { return Err(not_found_doc(&key)) };
    let r = doc.record;
    Ok(json(
        StatusCode::OK,
        &DocumentOut {
            key: r.key,
            id: doc.id,
            simhash: format!("{:#018x}", r.simhash),
            shingles: r.count,
            inserted_at_ms: r.inserted_at_ms,
            title: r.biblio.title,
            year: r.biblio.year,
            doi: r.biblio.doi,
            meta: r.meta.as_deref().and_then(|m| serde_json::from_str(m).ok()),
            group: GroupOut {
                id: doc.group.id,
                canonical: doc.group.canonical,
                size: doc.group.size as u64,
            },
        },
    ))
}

fn not_found_doc(key: &str) -> ApiError {
    let shown: String = key.chars().take(200).collect();
    ApiError::new(
        StatusCode::NOT_FOUND,
        "document_not_found",
        format!("no document with key {shown:?}"),
    )
}

/// Delete a document (its group splits if it was a bridge).
#[utoipa::path(delete, path = "/v1/documents/{key}", tag = "documents",
    params(("key" = String, Path, description = "The document's key (percent-encoded)")),
    responses(
        (status = 200, description = "Deleted, durably", body = DeleteOut),
        (status = 400, description = "The key does not decode", body = ErrorBody),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 404, description = "No document with that key", body = ErrorBody),
        (status = 500, description = "Storage error", body = ErrorBody),
        (status = 503, description = "Unavailable", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn delete_document(State(s): State<Arc<AppState>>, key: Result<Path<String>, PathRejection>) -> AppResult {
    let key = key_of(key)?;
    let db = s.db.clone();
    let k = key.clone();
    if blocking(move || Ok(db.delete(&k)?)).await? {
        Ok(json(StatusCode::OK, &DeleteOut { key, deleted: true }))
    } else {
        Err(not_found_doc(&key))
    }
}

/// A duplicate group and its members.
#[utoipa::path(get, path = "/v1/groups/{id}", tag = "groups",
    params(("id" = u64, Path, description = "Group id (= doc id of its canonical member)")),
    responses(
        (status = 200, description = "The group", body = GroupMembersOut),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
        (status = 404, description = "No group with that id", body = ErrorBody),
        (status = 500, description = "Storage error", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn get_group(State(s): State<Arc<AppState>>, id: Result<Path<String>, PathRejection>) -> AppResult {
    let raw = key_of(id)?;
    let gid: u64 = raw.parse().map_err(|_| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_path",
            "the group id must be an unsigned decimal integer (the `group.id` of a document)",
        )
    })?;
    let db = s.db.clone();
    let members = blocking(move || {
        let members = db.group_members(gid);
        // A lone document is a group of one only when it is its own canonical.
        if let [(_, key)] = members.as_slice() {
            if db.get(key)?.is_none_or(|d| d.group.id != gid) {
                return Ok(Vec::new());
            }
        }
        Ok(members)
    })
    .await?;
    let Some((_, canonical)) = members.iter().find(|(id, _)| *id == gid) else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "group_not_found",
            format!("no group {gid}: group ids are doc ids of canonical members"),
        ));
    };
    Ok(json(
        StatusCode::OK,
        &GroupMembersOut {
            id: gid,
            canonical: canonical.clone(),
            size: members.len() as u64,
            members: members.iter().map(|(id, key)| MemberOut { id: *id, key: key.clone() }).collect(),
        },
    ))
}

/// Database counters.
#[utoipa::path(get, path = "/v1/stats", tag = "service",
    responses(
        (status = 200, description = "Counters", body = StatsOut),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn get_stats(State(s): State<Arc<AppState>>) -> AppResult {
    let db = s.db.clone();
    let st = blocking(move || Ok(db.stats())).await?;
    Ok(json(
        StatusCode::OK,
        &StatsOut {
            docs: st.docs,
            groups: st.groups,
            grouped_docs: st.grouped_docs,
            segments: st.segments,
            segment_bytes: st.segment_bytes,
            live_bytes: st.live_bytes,
            tables: st.tables,
            max_distance: st.max_distance,
            min_jaccard: st.min_jaccard,
            spec: st.spec,
        },
    ))
}

/// Liveness (never needs a token).
#[utoipa::path(get, path = "/healthz", tag = "service",
    responses((status = 200, description = "Serving", body = HealthOut)))]
pub async fn healthz() -> Response {
    json(StatusCode::OK, &HealthOut { status: "ok".into() })
}

/// Prometheus metrics (text format 0.0.4).
#[utoipa::path(get, path = "/metrics", tag = "service",
    responses(
        (status = 200, description = "Metrics", body = String, content_type = "text/plain"),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn metrics(State(s): State<Arc<AppState>>) -> AppResult {
    let db = s.db.clone();
    let st = blocking(move || Ok(db.stats())).await?;
    let text = s.metrics.render(&st);
    Ok((
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        text,
    )
        .into_response())
}

/// This contract (OpenAPI 3.1), generated from the code.
#[utoipa::path(get, path = "/openapi.json", tag = "service",
    responses(
        (status = 200, description = "The OpenAPI document", body = Object),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn openapi_json() -> Response {
    static DOC: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let doc = DOC.get_or_init(super::openapi::json);
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        doc.clone(),
    )
        .into_response()
}

/// Unknown endpoint.
pub async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such endpoint; see /openapi.json for the endpoints",
    )
}

/// Known endpoint, unsupported method.
pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not support that method; see /openapi.json",
    )
}
