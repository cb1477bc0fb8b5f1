//! Per-request bounds (issue 31, items 2 and 3): at most `--max-inflight` requests are being
//! worked on at once and at most `--max-queries` duplicate checks; past either bound the request is
//! refused at once with 503 `overloaded` and `Retry-After` instead of queueing (memory and blocking
//! threads stay bounded: each admitted request holds at most one body and one blocking task). Every
//! admitted request must finish within `--request-timeout-s` (503 `timeout`). `/healthz` and
//! `/metrics` are exempt, so that the server answers its health check while saturated.
//!
//! Bodies are read by the handlers ([`super::handlers`]) within `--body-timeout-s` (408), and the
//! request head within `--header-timeout-s` by the connection layer ([`super::conn`]).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::errors::ApiError;
use super::state::AppState;

/// Middleware: admission and the request deadline.
pub async fn admit(State(s): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if path == "/healthz" || path == "/metrics" {
        return next.run(req).await;
    }
    let _inflight = match s.permit(&s.inflight, || ApiError::overloaded("too many requests in flight (--max-inflight)")) {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    // The batch form takes its duplicate-check permit itself and holds it while its answer streams.
    let _query = if path == "/v1/duplicates" {
        match s.permit(&s.queries, || {
            ApiError::overloaded("too many duplicate checks in flight (--max-queries)")
        }) {
            Ok(p) => Some(p),
            Err(e) => return e.into_response(),
        }
    } else {
        None
    };
    let limit = s.cfg.request_timeout;
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(r) => r,
        Err(_) => ApiError::timeout(limit).into_response(),
    }
}
