//! Groups, counters, health, metrics, the contract, and the fallbacks.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use fpdb::output::View;

use super::{blocking, json, key_of, AppResult};
use crate::errors::{ApiError, ErrorBody};
use crate::schemas::{GroupMembersOut, HealthOut, MemberOut, StatsOut};
use crate::state::AppState;

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
            stats: View::of(&st),
            max_query_distance: bound,
        },
    ))
}

/// Liveness (never needs a token, never refused for load): 503 once the server can no longer
/// write (the writer panicked, or a failed write poisoned the database handle), so that an
/// orchestrator restarts it.
#[utoipa::path(get, path = "/healthz", tag = "service",
    responses(
        (status = 200, description = "Serving (`degraded`: the semantic channel is not embedding every document, or every request slot is busy; `reason` says why)", body = HealthOut),
        (status = 503, description = "Failed: restart the server (`reason` says why)", body = HealthOut),
    ))]
pub async fn healthz(State(s): State<Arc<AppState>>) -> Response {
    match s.health.failed() {
        None => {
            // Serving; the semantic channel degraded (its indexer retrying a failed step, or
            // stopped, or documents set aside) is said, and still answered with 200: the text
            // channel answers every request, and a restart would not mend a document that fails.
            // Saturated (every request slot, or every duplicate-check slot, held): new requests are
            // refused with 503 `overloaded` until one ends, which a load balancer should know.
            #[cfg(feature = "semantic")]
            let channel =
                s.db.semantic()
                    .status()
                    .filter(|c| matches!(c.state, "degraded" | "stopped"))
                    .map(|c| c.reason.unwrap_or_else(|| format!("semantic channel {}", c.state)));
            #[cfg(not(feature = "semantic"))]
            let channel: Option<String> = None;
            let reason = channel.or_else(|| saturated(&s));
            let status = if reason.is_some() { "degraded" } else { "ok" };
            json(
                StatusCode::OK,
                &HealthOut {
                    status: status.into(),
                    reason,
                },
            )
        }
        Some(reason) => json(
            StatusCode::SERVICE_UNAVAILABLE,
            &HealthOut {
                status: "failed".into(),
                reason: Some(reason),
            },
        ),
    }
}

/// Why the server refuses new requests right now, if it does: every `--max-inflight` slot (each
/// holds at most one blocking thread) or every `--max-queries` slot is held.
fn saturated(s: &AppState) -> Option<String> {
    if s.inflight.available_permits() == 0 {
        Some(format!(
            "saturated: all {} request slots are busy (--max-inflight); new requests are refused with 503 overloaded",
            s.cfg.max_inflight
        ))
    } else if s.queries.available_permits() == 0 {
        Some(format!(
            "saturated: all {} duplicate-check slots are busy (--max-queries); new checks are refused with 503 overloaded",
            s.cfg.max_queries
        ))
    } else {
        None
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
    let doc = DOC.get_or_init(crate::openapi::json);
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
