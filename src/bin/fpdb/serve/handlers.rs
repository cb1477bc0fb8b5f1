//! One thin handler per endpoint: decode the request, call the library (on the blocking pool), encode
//! the answer. The request and response types are the OpenAPI schemas (`schemas.rs`, collected by
//! `openapi.rs`).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Extension, Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use fpdb::IngestOptions;
use fpdb::{Biblio, Dedup, NewDoc, QueryOptions};
use serde::Serialize;
use tokio::sync::oneshot;

use super::errors::{ApiError, ErrorBody, RequestId};
use super::schemas::{parse_json, MAX_LIMIT};
use super::schemas::{
    BatchLineOut, BulkDocumentIn, BulkLineOut, DedupParam, DedupQuery, DeleteOut, DocumentIn, DocumentOut, DuplicatesIn, DuplicatesOut,
    GroupMembersOut, GroupOut, HealthOut, HitOut, KeyIn, MemberOut, PutResponse, StatsOut,
};
use super::state::AppState;
use super::writer::Job;

type AppResult = Result<Response, ApiError>;

/// A streamed NDJSON answer: the lines a blocking task sends, as they come (the channel's bound
/// holds the task back while the client reads slowly).
fn ndjson(mut rx: tokio::sync::mpsc::Receiver<Bytes>) -> Response {
    let stream = futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx).map(|o| o.map(Ok::<Bytes, std::convert::Infallible>)));
    let mut r = Response::new(Body::from_stream(stream));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson"));
    r
}

fn json<T: Serialize>(status: StatusCode, v: &T) -> Response {
    match serde_json::to_vec(v) {
        Ok(body) => (status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response(),
        Err(e) => ApiError::internal(format!("cannot encode the answer: {e}")).into_response(),
    }
}

/// Runs a blocking library call on tokio's blocking pool (a panic there is a 500 `internal`, its
/// text in the server log only).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T, ApiError> + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        let text = if e.is_panic() {
            let p = e.into_panic();
            p.downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-text panic".into())
        } else {
            e.to_string()
        };
        ApiError::internal(format!("a worker task failed: {text}"))
    })?
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

/// A single-document body (`--max-body-bytes`), read within `--body-timeout-s`, then [`decoded`].
async fn body_of(s: &AppState, headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    read_body(s, headers, body, s.cfg.max_body_bytes, "--max-body-bytes").await
}

/// [`body_of`] for the NDJSON endpoints (bulk ingest, batch check): held to `--max-bulk-bytes`.
async fn bulk_body_of(s: &AppState, headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    read_body(s, headers, body, s.cfg.max_bulk_bytes, "--max-bulk-bytes").await
}

async fn read_body(s: &AppState, headers: &HeaderMap, body: Body, limit: usize, flag: &str) -> Result<Bytes, ApiError> {
    let body = read_limited(body, limit, flag, s.cfg.body_timeout).await?;
    decoded(headers, body, limit, flag).await
}

/// Reads a whole body, refusing it (413) as soon as it passes `limit` bytes — at once when its
/// `Content-Length` says so — and (408) when it has not fully arrived within `timeout`.
async fn read_limited(body: Body, limit: usize, flag: &str, timeout: Duration) -> Result<Bytes, ApiError> {
    use axum::body::HttpBody as _;
    use futures_util::StreamExt as _;
    if body.size_hint().lower() > limit as u64 {
        return Err(ApiError::too_large(limit, flag));
    }
    let read = async {
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
    };
    tokio::time::timeout(timeout, read)
        .await
        .map_err(|_| ApiError::body_timeout(timeout))?
}

/// The content codings of a request, in order, `identity` left out. Every `Content-Encoding`
/// header counts (a repeated header is a list, RFC 9110 §5.3); a value that is not visible ASCII
/// is refused (415), never taken for identity.
fn codings(headers: &HeaderMap) -> Result<Vec<String>, ApiError> {
    let mut out = Vec::new();
    for v in headers.get_all(header::CONTENT_ENCODING) {
        let v = v.to_str().map_err(|_| {
            ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_encoding",
                "the Content-Encoding is not ASCII; send the body uncompressed or with Content-Encoding: gzip",
            )
        })?;
        for c in v.split(',') {
            let c = c.trim().to_ascii_lowercase();
            if !c.is_empty() && c != "identity" {
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// The body as sent, decompressed when its `Content-Encoding` is gzip. The decompressed size is held
/// to the same `limit` as the body (413 past it, without inflating further: a small gzip bomb cannot
/// take memory); a stream that does not decompress is 400. Any other coding (br, deflate, zstd,
/// several codings) is 415, naming the two that are accepted.
async fn decoded(headers: &HeaderMap, body: Bytes, limit: usize, flag: &str) -> Result<Bytes, ApiError> {
    let codings = codings(headers)?;
    match codings.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [] => Ok(body),
        ["gzip" | "x-gzip"] => {
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
            format!(
                "Content-Encoding {:?} is not supported; send the body uncompressed or with Content-Encoding: gzip (one coding)",
                codings.join(", ")
            ),
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
        (status = 408, description = "The body did not arrive within --body-timeout-s", body = ErrorBody),
        (status = 413, description = "Body over --max-body-bytes (as sent, or decompressed)", body = ErrorBody),
        (status = 415, description = "A Content-Encoding other than gzip or identity", body = ErrorBody),
        (status = 429, description = "Writer queue full; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
        (status = 500, description = "Storage error", body = ErrorBody),
        (status = 503, description = "Overloaded, past --request-timeout-s, shutting down or unavailable; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
    ),
    security((), ("bearer" = [])))]
pub async fn put_document(
    State(s): State<Arc<AppState>>,
    key: Result<Path<String>, PathRejection>,
    q: Result<Query<DedupQuery>, QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> AppResult {
    let key = key_of(key)?;
    let dedup = dedup_of(q)?;
    let body = body_of(&s, &headers, body).await?;
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
        (status = 408, description = "The body did not arrive within --body-timeout-s", body = ErrorBody),
        (status = 413, description = "Body over --max-bulk-bytes (as sent, or decompressed)", body = ErrorBody),
        (status = 415, description = "A Content-Encoding other than gzip or identity", body = ErrorBody),
        (status = 429, description = "All bulk slots busy; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
        (status = 503, description = "Overloaded, past --request-timeout-s or shutting down; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
    ),
    security((), ("bearer" = [])))]
pub async fn post_documents(
    State(s): State<Arc<AppState>>,
    Extension(rid): Extension<RequestId>,
    q: Result<Query<DedupQuery>, QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> AppResult {
    let dedup = dedup_of(q)?;
    // The slot is taken before the body is read: a slow upload holds it, so the slots bound the
    // memory of bulk bodies (bulk_slots × max_bulk_bytes).
    let permit = s.permit(&s.bulk, || ApiError::queue_full("all bulk-ingest slots are busy (--bulk-slots)"))?;
    let body = bulk_body_of(&s, &headers, body).await?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_json("the body holds no document; send one JSON object per line"));
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(256);
    let db = s.db.clone();
    let metrics = s.metrics.clone();
    let health = s.health.clone();
    let stopping = s.stopping.clone();
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
        // At shutdown the ingest stops taking documents and commits what it took (the answer
        // then ends early: the lines not answered were not stored).
        let input = docs.into_iter().take_while(|_| !stopping.load(Ordering::Relaxed)).map(Ok);
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
                Err(e) => {
                    let e = ApiError::of(e);
                    if let Some(d) = &e.detail {
                        eprintln!("fpdb serve: request {}: line {line}: {}: {d}", rid.0, e.code);
                    }
                    BulkLineOut {
                        line,
                        outcome: None,
                        error: Some(e.body_with_id(e.detail.as_ref().map(|_| &rid)).error),
                    }
                }
            };
            send(&out);
        });
        if let Err(e) = result {
            health.note("a bulk ingest", &e);
            let e = ApiError::from(e);
            if let Some(d) = &e.detail {
                eprintln!("fpdb serve: request {}: {}: {d}", rid.0, e.code);
            }
            send(&BulkLineOut {
                line: 0,
                outcome: None,
                error: Some(e.body_with_id(Some(&rid)).error),
            });
        }
    });
    Ok(ndjson(rx))
}

/// Read-only check: verified text near-duplicates unioned with exact metadata matches (paper 001).
#[utoipa::path(post, path = "/v1/duplicates", tag = "documents",
    request_body(content = DuplicatesIn, content_type = "application/json"),
    responses(
        (status = 200, description = "Hits", body = DuplicatesOut),
        (status = 400, description = "Bad JSON, document or parameter", body = ErrorBody),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 408, description = "The body did not arrive within --body-timeout-s", body = ErrorBody),
        (status = 413, description = "Body over --max-body-bytes (as sent, or decompressed)", body = ErrorBody),
        (status = 415, description = "A Content-Encoding other than gzip or identity", body = ErrorBody),
        (status = 422, description = "max_distance past what the index answers fast at this database size (the message names the largest accepted)", body = ErrorBody),
        (status = 500, description = "Storage error", body = ErrorBody),
        (status = 503, description = "Too many requests in flight, or past --request-timeout-s; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
    ),
    security((), ("bearer" = [])))]
pub async fn post_duplicates(State(s): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> AppResult {
    let body = body_of(&s, &headers, body).await?;
    let d: DuplicatesIn = parse_json(&body)?;
    let state = s.clone();
    let out = blocking(move || check_one(&state, d)).await?;
    Ok(json(StatusCode::OK, &out))
}

/// One duplicate check (`POST /v1/duplicates`, and each line of the batch form): the request's
/// bounds applied, then [`bounded_check`]. The verification deadline counts from here (the body is
/// in): the answer comes at most --query-deadline-ms after, plus the probe (bounded by
/// max_query_distance) and the metadata lookup.
fn check_one(state: &AppState, d: DuplicatesIn) -> Result<DuplicatesOut, ApiError> {
    if d.limit.is_some_and(|l| l > MAX_LIMIT) {
        return Err(ApiError::param(format!("limit must be at most {MAX_LIMIT}")));
    }
    let deadline = Instant::now() + state.cfg.query_deadline;
    if let Some(k) = d.max_distance {
        let bound = state.distance_bound();
        // Past 32 the library refuses it (400 `invalid_parameter`, out of range).
        if k > bound && k <= fpdb::MAX_DISTANCE {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "max_distance_too_expensive",
                format!(
                    "max_distance {k} is past what the index answers fast at this database size: at most {bound} (GET /v1/stats: max_query_distance; docs/serve.md, \"Limits of a duplicate check\")"
                ),
            ));
        }
    }
    let mut opts = QueryOptions::default()
        .with_max_candidates(state.cfg.max_candidates)
        .with_deadline(deadline);
    if let Some(k) = d.max_distance {
        opts = opts.with_max_distance(k);
    }
    if let Some(t) = d.min_jaccard {
        opts = opts.with_min_jaccard(t);
    }
    if let Some(l) = d.limit {
        opts = opts.with_limit(usize::try_from(l).unwrap_or(usize::MAX));
    }
    opts.min_cosine = d.min_cosine;
    opts.wait_semantic = d.wait_semantic_ms.map(Duration::from_millis);
    let biblio = Biblio {
        title: d.title,
        year: d.year,
        doi: d.doi,
    };
    let t = Instant::now();
    let answer = bounded_check(&state.db, &d.text, &biblio, &opts)?;
    Ok(DuplicatesOut {
        hits: answer.hits.iter().map(HitOut::from).collect(),
        truncated: answer.truncated,
        candidates: answer.candidates as u64,
        semantic_pending: answer.semantic_pending,
        took_us: t.elapsed().as_micros() as u64,
    })
}

/// Many duplicate checks in one request (NDJSON, one `DuplicatesIn` per line): a harvest checked
/// without a request per text. Each line is checked as `POST /v1/duplicates` checks its body (the
/// same bounds, the deadline per line) and answered on one NDJSON line, in input order, streamed as
/// it is done; a line that is not the documented JSON, or that the check refuses, answers an error
/// object with its line number and the rest go on. The body is bounded like the bulk ingest's
/// (`--max-bulk-bytes`) and holds one of its slots (`--bulk-slots`) as well as a duplicate-check
/// one (`--max-queries`); a client that reads slowly holds the checks back (a small buffer).
#[utoipa::path(post, path = "/v1/duplicates:batch", tag = "documents",
    request_body(content = serde_json::Value, content_type = "application/x-ndjson",
        description = "One duplicate check per line, each the JSON body of POST /v1/duplicates (DuplicatesIn). Any line is accepted: one that is not a DuplicatesIn is answered on its own line with an error, and the others are checked"),
    responses(
        (status = 200, description = "One BatchLineOut per non-blank input line, in input order (none for a body without one)", body = BatchLineOut, content_type = "application/x-ndjson"),
        (status = 400, description = "No body (no bytes and no Content-Type)", body = ErrorBody),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 408, description = "The body did not arrive within --body-timeout-s", body = ErrorBody),
        (status = 413, description = "Body over --max-bulk-bytes (as sent, or decompressed)", body = ErrorBody),
        (status = 415, description = "A Content-Encoding other than gzip or identity", body = ErrorBody),
        (status = 429, description = "All bulk slots busy; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
        (status = 503, description = "Too many requests in flight, or past --request-timeout-s; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
    ),
    security((), ("bearer" = [])))]
pub async fn post_duplicates_batch(
    State(s): State<Arc<AppState>>,
    Extension(rid): Extension<RequestId>,
    headers: HeaderMap,
    body: Body,
) -> AppResult {
    // As the bulk ingest: the slot is taken before the body is read, so the slots bound the memory
    // of bulk bodies.
    let permit = s.permit(&s.bulk, || ApiError::queue_full("all bulk slots are busy (--bulk-slots)"))?;
    // A duplicate check's permit (--max-queries), held until the last line is answered.
    let query = s.permit(&s.queries, || {
        ApiError::overloaded("too many duplicate checks in flight (--max-queries)")
    })?;
    let body = bulk_body_of(&s, &headers, body).await?;
    // No body at all (no bytes, no Content-Type) is a malformed request; an NDJSON body without a
    // line is zero checks, answered with zero lines.
    if body.is_empty() && !headers.contains_key(header::CONTENT_TYPE) {
        return Err(ApiError::bad_json("the request has no body; send one JSON object per line"));
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(64);
    let state = s.clone();
    tokio::task::spawn_blocking(move || {
        let _permits = (permit, query);
        for (i, raw) in body.split(|&b| b == b'\n').enumerate() {
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let line = i as u64 + 1;
            let out = match parse_json::<DuplicatesIn>(raw).and_then(|d| check_one(&state, d)) {
                Ok(a) => BatchLineOut {
                    line,
                    answer: Some(a),
                    error: None,
                },
                Err(e) => {
                    if let Some(d) = &e.detail {
                        eprintln!("fpdb serve: request {}: line {line}: {}: {d}", rid.0, e.code);
                    }
                    BatchLineOut {
                        line,
                        answer: None,
                        error: Some(e.body_with_id(e.detail.as_ref().map(|_| &rid)).error),
                    }
                }
            };
            let mut b = serde_json::to_vec(&out).unwrap_or_default();
            b.push(b'\n');
            // The client went away (or the request timed out): stop checking.
            if tx.blocking_send(Bytes::from(b)).is_err() || state.stopping.load(Ordering::Relaxed) {
                return;
            }
        }
    });
    Ok(ndjson(rx))
}

/// `Db::check_duplicates` with its bounds reported: the verified text hits of a bounded query
/// (`Db::query_fingerprint_answer`: `truncated` when candidates were left unverified) followed by
/// the metadata-only hits, the whole list cut to `opts.limit`.
///
/// The library has no `check_duplicates_answer` yet (the `db` helper's API of issue 31 reports the
/// bounds of text queries only), so the union is taken here: the metadata hits are those of
/// `check_duplicates` with no candidate verified, less the documents already among the text hits
/// — the rule `check_duplicates` applies. Without metadata it is the library's answer as is.
fn bounded_check(db: &fpdb::Db, text: &str, biblio: &Biblio, opts: &QueryOptions) -> Result<fpdb::QueryAnswer, ApiError> {
    let fp = db.fingerprinter().fingerprint(text);
    let mut text_opts = opts.clone();
    if !biblio.is_empty() {
        text_opts.limit = None; // the limit applies to the union
    }
    let mut answer = if fp.shingles.is_empty() {
        // No words: no text hits (as in `check_duplicates`), nothing verified.
        let mut a = db.query_fingerprint_answer(&fp, &text_opts.clone().with_max_candidates(0))?;
        a.hits.clear();
        a.truncated = false;
        a
    } else {
        // by its text: the semantic channel, when the database has one, embeds it
        db.query_answer(text, &text_opts)?
    };
    if biblio.is_empty() {
        return Ok(answer);
    }
    let meta = db.check_duplicates(text, biblio, &text_opts.with_max_candidates(0))?;
    let seen: std::collections::HashSet<u64> = answer.hits.iter().map(|h| h.id).collect();
    answer.hits.extend(meta.into_iter().filter(|h| !seen.contains(&h.id)));
    answer.hits.truncate(opts.limit.unwrap_or(usize::MAX));
    Ok(answer)
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
        (status = 503, description = "Overloaded or past --request-timeout-s; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
    ),
    security((), ("bearer" = [])))]
pub async fn get_document(State(s): State<Arc<AppState>>, key: Result<Path<String>, PathRejection>) -> AppResult {
    get_by_key(&s, key_of(key)?).await
}

/// A stored document by a key given in the body: for keys too long for a URL (the request line
/// is at most 65,534 bytes, and percent-encoding triples non-ASCII bytes; keys may have 65,536).
#[utoipa::path(post, path = "/v1/documents:get", tag = "documents",
    request_body(content = KeyIn, content_type = "application/json"),
    responses(
        (status = 200, description = "The document", body = DocumentOut),
        (status = 400, description = "Bad JSON", body = ErrorBody),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
        (status = 404, description = "No document with that key", body = ErrorBody),
        (status = 408, description = "The body did not arrive within --body-timeout-s", body = ErrorBody),
        (status = 413, description = "Body over --max-body-bytes", body = ErrorBody),
        (status = 415, description = "A Content-Encoding other than gzip or identity", body = ErrorBody),
        (status = 500, description = "Storage error", body = ErrorBody),
        (status = 503, description = "Overloaded or past --request-timeout-s; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
    ),
    security((), ("bearer" = [])))]
pub async fn post_documents_get(State(s): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> AppResult {
    let body = body_of(&s, &headers, body).await?;
    let k: KeyIn = parse_json(&body)?;
    get_by_key(&s, k.key).await
}

async fn get_by_key(s: &AppState, key: String) -> AppResult {
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
    delete_by_key(&s, key_of(key)?).await
}

/// Delete a document by a key given in the body (see `POST /v1/documents:get`).
#[utoipa::path(post, path = "/v1/documents:delete", tag = "documents",
    request_body(content = KeyIn, content_type = "application/json"),
    responses(
        (status = 200, description = "Deleted, durably", body = DeleteOut),
        (status = 400, description = "Bad JSON", body = ErrorBody),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 404, description = "No document with that key", body = ErrorBody),
        (status = 408, description = "The body did not arrive within --body-timeout-s", body = ErrorBody),
        (status = 413, description = "Body over --max-body-bytes", body = ErrorBody),
        (status = 415, description = "A Content-Encoding other than gzip or identity", body = ErrorBody),
        (status = 500, description = "Storage error", body = ErrorBody),
        (status = 503, description = "Unavailable", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn post_documents_delete(State(s): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> AppResult {
    let body = body_of(&s, &headers, body).await?;
    let k: KeyIn = parse_json(&body)?;
    delete_by_key(&s, k.key).await
}

async fn delete_by_key(s: &AppState, key: String) -> AppResult {
    let db = s.db.clone();
    let health = s.health.clone();
    let k = key.clone();
    let deleted = blocking(move || {
        db.delete(&k).map_err(|e| {
            health.note("a delete", &e);
            ApiError::from(e)
        })
    })
    .await?;
    if deleted {
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
        (status = 503, description = "Overloaded or past --request-timeout-s; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
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
        (status = 503, description = "Overloaded or past --request-timeout-s; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
    ),
    security((), ("bearer" = [])))]
pub async fn get_stats(State(s): State<Arc<AppState>>) -> AppResult {
    let state = s.clone();
    let (st, bound) = blocking(move || Ok((state.db.stats(), state.distance_bound()))).await?;
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
            max_query_distance: bound,
        },
    ))
}

/// Liveness (never needs a token, never refused for load): 503 once the server can no longer
/// write (the writer panicked, or a failed write poisoned the database handle), so that an
/// orchestrator restarts it.
#[utoipa::path(get, path = "/healthz", tag = "service",
    responses(
        (status = 200, description = "Serving", body = HealthOut),
        (status = 503, description = "Failed: restart the server (`reason` says why)", body = HealthOut),
    ))]
pub async fn healthz(State(s): State<Arc<AppState>>) -> Response {
    match s.health.failed() {
        None => json(
            StatusCode::OK,
            &HealthOut {
                status: "ok".into(),
                reason: None,
            },
        ),
        Some(reason) => json(
            StatusCode::SERVICE_UNAVAILABLE,
            &HealthOut {
                status: "failed".into(),
                reason: Some(reason),
            },
        ),
    }
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
    let inflight = s.cfg.max_inflight.saturating_sub(s.inflight.available_permits()) as u64;
    let text = s.metrics.render(&st, inflight);
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
