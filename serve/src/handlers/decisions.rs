//! Curator decisions and what a curator reviews: `POST`/`GET /v1/decisions`, `DELETE
//! /v1/decisions/{a}/{b}`, `GET /v1/groups/by-key/{key}` (a group with every edge, its channel and
//! scores, and its decisions), `GET /v1/review` (the groups and the queue of pairs). Each calls one
//! library function (`Db::decide_pair`, `Db::decisions`, `Db::undecide`, `Db::group_view`, `Db::review`).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use fpdb::{Decision, DecisionKind, GroupView, ReviewAnswer, ReviewOptions, ReviewOrder};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::body::body_of;
use super::{blocking, json, key_of, AppResult};
use crate::errors::{ApiError, ErrorBody, ErrorDetail};
use crate::schemas::parse_json;
use crate::state::AppState;

/// A decision to record.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionIn {
    /// One document's key.
    #[schema(min_length = 1, max_length = 65536)]
    pub a: String,
    /// The other's.
    #[schema(min_length = 1, max_length = 65536)]
    pub b: String,
    /// `same` (one work, whatever the scores say) or `distinct` (never in one group).
    pub decision: DecisionKind,
    /// Why.
    #[serde(default)]
    pub reason: Option<String>,
    /// Who decided.
    #[serde(default)]
    pub author: Option<String>,
}

/// Every decision.
#[derive(Debug, Serialize, ToSchema)]
pub struct DecisionsOut {
    pub decisions: Vec<Decision>,
}

/// The decision removed.
#[derive(Debug, Serialize, ToSchema)]
pub struct UndoneOut {
    pub undone: Decision,
}

/// A refused decision: the error and the decisions it contradicts.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContradictionOut {
    pub error: ErrorDetail,
    /// The decisions it contradicts (the chain of `same` decisions, and the `distinct` one).
    pub evidence: Vec<Decision>,
}

/// The review's query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ReviewQuery {
    /// Groups by `size` (largest first, the default) or `weakest` (lowest Jaccard edge first).
    pub order: Option<ReviewOrder>,
    /// The queue's window: pairs with Jaccard at least this (default 0).
    #[param(minimum = 0.0, maximum = 1.0)]
    pub min_jaccard: Option<f64>,
    /// ... and at most this (default 1).
    #[param(minimum = 0.0, maximum = 1.0)]
    pub max_jaccard: Option<f64>,
    /// Keep decided pairs in the queue (default false).
    pub decided: Option<bool>,
    /// At most this many groups and pairs (default 100, at most 10000).
    #[param(minimum = 0, maximum = 10000)]
    pub limit: Option<usize>,
}

/// Record a curator's decision; the groups follow at once.
#[utoipa::path(post, path = "/v1/decisions", tag = "decisions",
    request_body(content = DecisionIn, content_type = "application/json"),
    responses(
        (status = 200, description = "Durable; the decision as stored", body = Decision),
        (status = 400, description = "Bad JSON", body = ErrorBody),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 404, description = "A key with no stored document (`document_not_found`)", body = ErrorBody),
        (status = 409, description = "It contradicts decisions already made (`contradiction`, nothing changed: the evidence), or names one document twice (`same_document`, no evidence)", body = ContradictionOut),
        (status = 500, description = "Storage error", body = ErrorBody),
        (status = 503, description = "Overloaded, past --request-timeout-s or unavailable", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn post_decision(State(s): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> AppResult {
    let body = body_of(&s, &headers, body).await?;
    let d: DecisionIn = parse_json(&body)?;
    let db = s.db.clone();
    let made = blocking(move || {
        Ok(db
            .decisions()
            .decide(&d.a, &d.b, d.decision, d.reason.as_deref(), d.author.as_deref()))
    })
    .await?;
    match made {
        Ok(d) => Ok(json(StatusCode::OK, &d)),
        // Every 409 (a contradiction with its evidence, one document named twice with none) has
        // the contradiction's body; the rest (404 for a key with no document) the common one.
        Err(e) => {
            let evidence = match &e {
                fpdb::Error::Contradiction { evidence, .. } => evidence.clone(),
                fpdb::Error::SameDocument { .. } => Vec::new(),
                _ => return Err(e.into()),
            };
            Ok(json(
                StatusCode::CONFLICT,
                &ContradictionOut {
                    error: ErrorDetail {
                        code: e.class().http_code.into(),
                        message: e.to_string(),
                        request_id: None,
                    },
                    evidence,
                },
            ))
        }
    }
}

/// Every decision, by key pair.
#[utoipa::path(get, path = "/v1/decisions", tag = "decisions",
    responses(
        (status = 200, description = "Every decision", body = DecisionsOut),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
        (status = 503, description = "Overloaded or past --request-timeout-s", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn get_decisions(State(s): State<Arc<AppState>>) -> AppResult {
    let db = s.db.clone();
    let decisions = blocking(move || Ok(db.decisions().list())).await?;
    Ok(json(StatusCode::OK, &DecisionsOut { decisions }))
}

/// Remove the decision about two keys (in either order); the groups follow at once.
#[utoipa::path(delete, path = "/v1/decisions/{a}/{b}", tag = "decisions",
    params(("a" = String, Path, description = "One key (percent-encoded)"), ("b" = String, Path, description = "The other")),
    responses(
        (status = 200, description = "Durable; the decision removed", body = UndoneOut),
        (status = 401, description = "Token missing or wrong", body = ErrorBody),
        (status = 404, description = "No decision about the two keys", body = ErrorBody),
        (status = 500, description = "Storage error", body = ErrorBody),
        (status = 503, description = "Overloaded, past --request-timeout-s or unavailable", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn delete_decision(State(s): State<Arc<AppState>>, p: Result<Path<(String, String)>, PathRejection>) -> AppResult {
    let Path((a, b)) = p.map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_path",
            format!("the key segments do not decode ({e})"),
        )
    })?;
    let db = s.db.clone();
    let (ka, kb) = (a.clone(), b.clone());
    match blocking(move || Ok(db.decisions().undo(&ka, &kb)?)).await? {
        Some(undone) => Ok(json(StatusCode::OK, &UndoneOut { undone })),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "decision_not_found",
            format!("no decision about {a:?} and {b:?}"),
        )),
    }
}

/// The group of a document: its members, every edge with its channel and scores (and the links a
/// `distinct` decision holds), and the decisions about its members.
#[utoipa::path(get, path = "/v1/groups/by-key/{key}", tag = "decisions",
    params(("key" = String, Path, description = "A member's key (percent-encoded)")),
    responses(
        (status = 200, description = "The group", body = GroupView),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
        (status = 404, description = "No document with that key", body = ErrorBody),
        (status = 500, description = "Storage error", body = ErrorBody),
        (status = 503, description = "Overloaded or past --request-timeout-s", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn get_group_by_key(State(s): State<Arc<AppState>>, key: Result<Path<String>, PathRejection>) -> AppResult {
    let key = key_of(key)?;
    let db = s.db.clone();
    let k = key.clone();
    match blocking(move || Ok(db.decisions().group(&k)?)).await? {
        Some(v) => Ok(json(StatusCode::OK, &v)),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "document_not_found",
            format!("no document with key {key:?}"),
        )),
    }
}

/// The groups of two or more (by size or weakest edge) and the queue of pairs in a Jaccard window
/// (weakest first; decided pairs left out unless asked for).
#[utoipa::path(get, path = "/v1/review", tag = "decisions",
    params(ReviewQuery),
    responses(
        (status = 200, description = "The groups and the queue", body = ReviewAnswer),
        (status = 400, description = "A parameter out of range", body = ErrorBody),
        (status = 401, description = "Token missing or wrong (--token-for-reads)", body = ErrorBody),
        (status = 500, description = "Storage error", body = ErrorBody),
        (status = 503, description = "Overloaded or past --request-timeout-s", body = ErrorBody),
    ),
    security((), ("bearer" = [])))]
pub async fn get_review(State(s): State<Arc<AppState>>, q: Result<Query<ReviewQuery>, QueryRejection>) -> AppResult {
    let Query(q) = q.map_err(|e| ApiError::param(e.to_string()))?;
    let d = ReviewOptions::default();
    let opts = ReviewOptions {
        order: q.order.unwrap_or(d.order),
        min_jaccard: q.min_jaccard.unwrap_or(d.min_jaccard),
        max_jaccard: q.max_jaccard.unwrap_or(d.max_jaccard),
        decided: q.decided.unwrap_or(d.decided),
        limit: q.limit.unwrap_or(d.limit),
    };
    if !(0.0..=1.0).contains(&opts.min_jaccard) || !(0.0..=1.0).contains(&opts.max_jaccard) || opts.limit > 10_000 {
        return Err(ApiError::param("min_jaccard and max_jaccard are in [0, 1]; limit is at most 10000"));
    }
    let db = s.db.clone();
    let answer = blocking(move || Ok(db.decisions().review(&opts)?)).await?;
    Ok(json(StatusCode::OK, &answer))
}
