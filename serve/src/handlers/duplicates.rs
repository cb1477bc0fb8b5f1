//! Duplicate checks: one (`POST /v1/duplicates`) or many (`POST /v1/duplicates:batch`, NDJSON).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{Extension, State};
use axum::http::{header, HeaderMap, StatusCode};
use fpdb::{Biblio, QueryAnswer, QueryOptions};

use super::body::{body_of, bulk_body_of};
use super::{blocking, json, ndjson, send_line, AppResult};
use crate::errors::{ApiError, ErrorBody, RequestId};
use crate::limits::RequestDeadline;
use crate::schemas::{check_bounds, parse_json, BatchLineOut, DuplicatesIn, DuplicatesOut};
use crate::state::AppState;

/// The longest `wait_semantic_ms` (a day; the request's timeout cuts every wait shorter still).
const MAX_WAIT_SEMANTIC_MS: u64 = 86_400_000;

/// Read-only check: verified text near-duplicates unioned with exact metadata matches (the CORE paper's API).
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
pub async fn post_duplicates(
    State(s): State<Arc<AppState>>,
    due: Option<Extension<RequestDeadline>>,
    headers: HeaderMap,
    body: Body,
) -> AppResult {
    let body = body_of(&s, &headers, body).await?;
    let d: DuplicatesIn = parse_json(&body)?;
    let state = s.clone();
    let due = due.map_or_else(|| Instant::now() + s.cfg.request_timeout, |Extension(RequestDeadline(t))| t);
    let (answer, took_us) = blocking(move || check_one(&state, d, due)).await?;
    Ok(json(StatusCode::OK, &DuplicatesOut::new(&answer, took_us)))
}

/// One duplicate check (`POST /v1/duplicates`, and each line of the batch form): the request's
/// bounds applied, then [`bounded_check`]; the answer and the microseconds it took. The verification deadline counts from here (the body is
/// in): the answer comes at most --query-deadline-ms after, plus the probe (bounded by
/// max_query_distance) and the metadata lookup.
/// A semantic wait (`wait_semantic_ms`) ends by `due`, when the request's 503 `timeout` is
/// answered: no blocking thread waits for a client that has its answer.
fn check_one(state: &AppState, d: DuplicatesIn, due: Instant) -> Result<(QueryAnswer, u64), ApiError> {
    // Checked here whatever the check's path (a text, or a DOI / title alone, which reads no score).
    check_bounds(d.limit, d.max_distance, d.min_jaccard, d.min_containment)?;
    if d.min_cosine.is_some_and(|c| !(-1.0..=1.0).contains(&c)) {
        return Err(ApiError::param("min_cosine must be in -1..=1"));
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
    opts.semantic.min_cosine = d.min_cosine.map(|c| c as f32);
    if d.wait_semantic_ms.is_some_and(|ms| ms > MAX_WAIT_SEMANTIC_MS) {
        return Err(ApiError::param(format!("wait_semantic_ms must be at most {MAX_WAIT_SEMANTIC_MS}")));
    }
    opts.semantic.wait = d
        .wait_semantic_ms
        .map(|ms| std::time::Duration::from_millis(ms).min(due.saturating_duration_since(Instant::now())));
    opts.min_containment = d.min_containment;
    // With `where` the limit applies to the hits that pass it.
    let filters = d.filters()?;
    if !filters.is_empty() {
        opts.limit = None;
    }
    let biblio = Biblio {
        title: d.title,
        year: d.year,
        doi: d.doi,
    };
    let t = Instant::now();
    let mut answer = bounded_check(&state.db, &d.text, &biblio, &opts)?;
    for w in &filters {
        state.db.filter_by_meta(&mut answer.hits, &w.field, &w.value)?;
    }
    if !filters.is_empty() {
        answer
            .hits
            .truncate(d.limit.map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX)));
    }
    if !answer.hits.is_empty() {
        state.metrics.checks_with_hits.fetch_add(1, Ordering::Relaxed);
    }
    Ok((answer, t.elapsed().as_micros() as u64))
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
            // A line's wait is bounded as one request's: a stalled stream is cut by `send_line`.
            let due = Instant::now() + state.cfg.request_timeout;
            let checked = parse_json::<DuplicatesIn>(raw).and_then(|d| check_one(&state, d, due));
            let out = match &checked {
                Ok((a, took_us)) => BatchLineOut {
                    line,
                    answer: Some(DuplicatesOut::new(a, *took_us)),
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
            // The client went away, stopped reading (`send_line`), or the server is stopping: stop
            // checking.
            if !send_line(&tx, Bytes::from(b), state.cfg.request_timeout, &state.stopping) || state.stopping.load(Ordering::Relaxed) {
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
/// The library has no `check_duplicates_answer` yet (the library's bounded answers cover text
/// queries only), so the union is taken here: the metadata hits are those of
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
    let meta = db.metadata().check_duplicates(text, biblio, &text_opts.with_max_candidates(0))?;
    let seen: std::collections::HashSet<u64> = answer.hits.iter().map(|h| h.id).collect();
    answer.hits.extend(meta.into_iter().filter(|h| !seen.contains(&h.id)));
    answer.hits.truncate(opts.limit.unwrap_or(usize::MAX));
    Ok(answer)
}
