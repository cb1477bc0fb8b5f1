//! Reading the database by what it holds: the near-duplicates of a stored document
//! (`GET /v1/documents/{key}/duplicates`), and the documents and groups a page at a time
//! (`GET /v1/documents`, `GET /v1/groups`, by a cursor). Each calls one library method
//! (`Db::query_stored`, `Db::filter_by_meta`, `Db::list_documents`, `Db::list_groups`).

use std::sync::Arc;
use std::time::Instant;

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use fpdb::QueryOptions;

use super::{blocking, json, key_of, AppResult};
use crate::errors::{ApiError, ErrorBody};
use crate::schemas::{
    DocumentOut, DocumentsPage, DuplicatesOut, GroupMembersOut, GroupsPage, MemberOut, PageQuery, StoredDuplicatesQuery, Where,
};
use crate::state::AppState;

/// The near-duplicates of a stored document, found from its stored fingerprint (no text sent):
/// the hits `POST /v1/duplicates` gives for its text, less the document itself. Text matches
/// only (the semantic channel and the metadata matches need the text or its title, year, DOI).
#[utoipa::path(get, path = "/v1/documents/{key}/duplicates", tag = "documents",
    params(("key" = String, Path, description = "The stored document's key (percent-encoded UTF-8)"), StoredDuplicatesQuery),
    responses(
        (status = 200, description = "Hits", body = DuplicatesOut),
        (status = 400, description = "Bad parameter", body = ErrorBody),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
        (status = 404, description = "No document with that key", body = ErrorBody),
        (status = 500, description = "Storage error", body = ErrorBody),
        (status = 503, description = "Overloaded or past --request-timeout-s; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
    ),
    security((), ("bearer" = [])))]
pub async fn get_document_duplicates(
    State(s): State<Arc<AppState>>,
    key: Result<Path<String>, PathRejection>,
    q: Result<Query<StoredDuplicatesQuery>, QueryRejection>,
) -> AppResult {
    let key = key_of(key)?;
    let Query(q) = q.map_err(|e| ApiError::param(e.to_string()))?;
    let filter = q.filter()?;
    let _permit = s.permit(&s.queries, || {
        ApiError::overloaded("too many duplicate checks in flight (--max-queries)")
    })?;
    let mut opts = QueryOptions::default()
        .with_max_candidates(s.cfg.max_candidates)
        .with_deadline(Instant::now() + s.cfg.query_deadline);
    opts.max_distance = q.max_distance;
    opts.min_jaccard = q.min_jaccard;
    opts.min_containment = q.min_containment;
    // With a filter the limit applies to the hits that pass it.
    opts.limit = if filter.is_some() { None } else { q.limit };
    let db = s.db.clone();
    let k = key.clone();
    let (answer, took_us) = blocking(move || {
        let t = Instant::now();
        let Some(mut answer) = db.query_stored(&k, &opts)? else {
            return Ok((None, 0));
        };
        if let Some(Where { field, value }) = &filter {
            db.filter_by_meta(&mut answer.hits, field, value)?;
            answer.hits.truncate(q.limit.unwrap_or(usize::MAX));
        }
        Ok((Some(answer), t.elapsed().as_micros() as u64))
    })
    .await?;
    let Some(answer) = answer else {
        let shown: String = key.chars().take(200).collect();
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "document_not_found",
            format!("no document with key {shown:?}"),
        ));
    };
    Ok(json(StatusCode::OK, &DuplicatesOut::new(&answer, took_us)))
}

/// The stored documents, a page at a time in id order: pass the answer's `next` as `after` for the
/// next page (absent after the last). A cursor stays valid while the database is written.
#[utoipa::path(get, path = "/v1/documents", tag = "documents",
    params(PageQuery),
    responses(
        (status = 200, description = "A page of documents", body = DocumentsPage),
        (status = 400, description = "Bad parameter", body = ErrorBody),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
        (status = 500, description = "Storage error", body = ErrorBody),
        (status = 503, description = "Overloaded or past --request-timeout-s; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
    ),
    security((), ("bearer" = [])))]
pub async fn list_documents(State(s): State<Arc<AppState>>, q: Result<Query<PageQuery>, QueryRejection>) -> AppResult {
    let Query(q) = q.map_err(|e| ApiError::param(e.to_string()))?;
    let (after, limit) = q.cursor()?;
    let db = s.db.clone();
    let page = blocking(move || Ok(db.list_documents(after, limit)?)).await?;
    Ok(json(
        StatusCode::OK,
        &DocumentsPage {
            documents: page.items.into_iter().map(DocumentOut::from).collect(),
            next: page.next.map(|n| n.to_string()),
        },
    ))
}

/// The duplicate groups (two or more members), a page at a time in id order, each with its
/// members; `next` as for `GET /v1/documents`.
#[utoipa::path(get, path = "/v1/groups", tag = "groups",
    params(PageQuery),
    responses(
        (status = 200, description = "A page of groups", body = GroupsPage),
        (status = 400, description = "Bad parameter", body = ErrorBody),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
        (status = 503, description = "Overloaded or past --request-timeout-s; see Retry-After", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait"))),
    ),
    security((), ("bearer" = [])))]
pub async fn list_groups(State(s): State<Arc<AppState>>, q: Result<Query<PageQuery>, QueryRejection>) -> AppResult {
    let Query(q) = q.map_err(|e| ApiError::param(e.to_string()))?;
    let (after, limit) = q.cursor()?;
    let db = s.db.clone();
    let page = blocking(move || Ok(db.list_groups(after, limit))).await?;
    Ok(json(
        StatusCode::OK,
        &GroupsPage {
            groups: page
                .items
                .into_iter()
                .map(|g| GroupMembersOut {
                    id: g.id,
                    canonical: g.canonical,
                    size: g.members.len() as u64,
                    members: g.members.into_iter().map(|(id, key)| MemberOut { id, key }).collect(),
                })
                .collect(),
            next: page.next.map(|n| n.to_string()),
        },
    ))
}
