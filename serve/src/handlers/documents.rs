//! One document: store (`PUT`), read and delete it, by its key in the path or in the body.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use fpdb::output::HttpOutcome;
use fpdb::{Biblio, Dedup};
use tokio::sync::oneshot;

use super::body::body_of;
use super::{blocking, dedup_of, json, key_of, new_doc, AppResult};
use crate::errors::{ApiError, ErrorBody};
use crate::schemas::{parse_json, DedupQuery, DeleteOut, DocumentIn, DocumentOut, KeyIn, TextQuery};
use crate::state::AppState;
use crate::writer::Job;

/// Store (or replace) one document; answers once it is durable.
#[utoipa::path(put, path = "/v1/documents/{key}", tag = "documents",
    params(("key" = String, Path, description = "The document's key (percent-encoded UTF-8, 1..=65536 bytes)"), DedupQuery),
    request_body(content = DocumentIn, content_type = "application/json"),
    responses(
        (status = 200, description = "Durable; its duplicates and group", body = HttpOutcome),
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
    let doc = new_doc(
        key,
        d.text,
        d.meta,
        Biblio {
            title: d.title,
            year: d.year,
            doi: d.doi,
        },
    );
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
    Ok(json(StatusCode::OK, &HttpOutcome::from(&outcome)))
}

/// A stored document and its group.
#[utoipa::path(get, path = "/v1/documents/{key}", tag = "documents",
    params(("key" = String, Path, description = "The document's key (percent-encoded)"), TextQuery),
    responses(
        (status = 200, description = "The document", body = DocumentOut),
        (status = 400, description = "The key does not decode, or `text=true` on a database without stored texts", body = ErrorBody),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
        (status = 404, description = "No document with that key", body = ErrorBody),
        (status = 500, description = "Storage error", body = ErrorBody),
        (status = 503, description = "Overloaded or past --request-timeout-s; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
    ),
    security((), ("bearer" = [])))]
pub async fn get_document(
    State(s): State<Arc<AppState>>,
    key: Result<Path<String>, PathRejection>,
    q: Result<Query<TextQuery>, QueryRejection>,
) -> AppResult {
    let Query(q) = q.map_err(|e| ApiError::param(format!("{e}; `text` is true or false")))?;
    get_by_key(&s, key_of(key)?, q.text.unwrap_or(false)).await
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
    get_by_key(&s, k.key, false).await
}

async fn get_by_key(s: &AppState, key: String, with_text: bool) -> AppResult {
    let db = s.db.clone();
    let k = key.clone();
    let (doc, text) = blocking(move || {
        let doc = db.get(&k)?;
        let text = if with_text && doc.is_some() { db.texts().get(&k)? } else { None };
        Ok((doc, text))
    })
    .await?;
    let Some(doc) = doc else { return Err(not_found_doc(&key)) };
    if with_text && text.is_none() {
        return Err(not_found_doc(&key));
    }
    let mut out = DocumentOut::from(doc);
    out.text = text;
    Ok(json(StatusCode::OK, &out))
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
