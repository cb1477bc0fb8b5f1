//! `POST /v1/documents`: many documents (NDJSON) through the library's ingest pipeline.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Extension, Query, State};
use axum::http::HeaderMap;
use fpdb::output::HttpOutcome;
use fpdb::{Biblio, Dedup, IngestOptions, InsertOutcome, NewDoc};

use super::body::bulk_body_of;
use super::{blocking, dedup_of, ndjson, new_doc, send_line, AppResult};
use crate::errors::{ApiError, ErrorBody, RequestId};
use crate::schemas::{BulkDocumentIn, BulkLineOut, DedupQuery};
use crate::state::AppState;

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
    let (lines, docs) = blocking(move || parse_bulk(&body)).await?;
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(256);
    let state = s.clone();
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        ingest_bulk(&state, &rid, dedup, lines, docs, &tx);
    });
    Ok(ndjson(rx))
}

/// The documents of a bulk body with their 1-based line numbers. Every line must be the
/// documented JSON: one that is not rejects the whole request (400, nothing stored, the line
/// number in the message). Documents that parse but cannot be stored (no words, bad DOI, ...) are
/// reported on their own result line instead.
fn parse_bulk(body: &[u8]) -> Result<(Vec<u64>, Vec<NewDoc>), ApiError> {
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
        docs.push(new_doc(
            d.key,
            d.text,
            d.meta,
            Biblio {
                title: d.title,
                year: d.year,
                doi: d.doi,
            },
        ));
    }
    Ok((lines, docs))
}

/// Runs a bulk body's documents through the library's ingest pipeline (on this blocking thread),
/// sending one NDJSON line per document once its batch is durable, and one error line (line 0)
/// when the ingest fails.
fn ingest_bulk(s: &AppState, rid: &RequestId, dedup: Dedup, lines: Vec<u64>, docs: Vec<NewDoc>, tx: &tokio::sync::mpsc::Sender<Bytes>) {
    let opts = IngestOptions::default()
        .with_workers(s.cfg.workers)
        .with_batch_size(s.cfg.batch_size)
        .with_batch_latency(Duration::from_millis(10))
        .with_dedup(dedup);
    // Once a line could not be sent (the client went away or stopped reading, `send_line`), the
    // answer is over: no more lines, and the ingest takes no more documents.
    let cut = std::sync::atomic::AtomicBool::new(false);
    let send = |v: &BulkLineOut| {
        if cut.load(Ordering::Relaxed) {
            return;
        }
        let mut b = serde_json::to_vec(v).unwrap_or_default();
        b.push(b'\n');
        if !send_line(tx, Bytes::from(b), s.cfg.request_timeout, &s.stopping) {
            cut.store(true, Ordering::Relaxed);
        }
    };
    // At shutdown the ingest stops taking documents and commits what it took (the answer then
    // ends early: the lines not answered were not stored, save those a client that had stopped
    // reading, or read too slowly to empty the channel, was not sent).
    let input = docs
        .into_iter()
        .take_while(|_| !s.stopping.load(Ordering::Relaxed) && !cut.load(Ordering::Relaxed))
        .map(Ok);
    let result = s.db.ingest(input, &opts, |r| {
        let line = lines.get(r.seq as usize).copied().unwrap_or_default();
        if r.result.as_ref().is_ok_and(|o| o.id.is_some()) {
            s.metrics.bulk_docs.fetch_add(1, Ordering::Relaxed);
        }
        send(&bulk_line(line, &r.result, rid));
    });
    if let Err(e) = result {
        s.health.note("a bulk ingest", &e);
        let e = ApiError::from(e);
        if let Some(d) = &e.detail {
            eprintln!("fpdb serve: request {}: {}: {d}", rid.0, e.code);
        }
        send(&BulkLineOut {
            line: 0,
            outcome: None,
            error: Some(e.body_with_id(Some(rid)).error),
        });
    }
}

/// One document's result line: its outcome, or its error (its details logged with the request id).
fn bulk_line<'a>(line: u64, result: &'a Result<InsertOutcome, fpdb::Error>, rid: &RequestId) -> BulkLineOut<'a> {
    match result {
        Ok(o) => BulkLineOut {
            line,
            outcome: Some(HttpOutcome::from(o)),
            error: None,
        },
        Err(e) => {
            let e = ApiError::of(e);
            if let Some(d) = &e.detail {
                eprintln!("fpdb serve: request {}: line {line}: {}: {d}", rid.0, e.code);
            }
            BulkLineOut {
                line,
                outcome: None,
                error: Some(e.body_with_id(e.detail.as_ref().map(|_| rid)).error),
            }
        }
    }
}
