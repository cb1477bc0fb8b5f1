//! The request layers that need the server's state, outermost first: [`track`] (the request id,
//! the metrics, the log line, the error bodies' finish), [`require_token`] (the token), and
//! `limits::admit` (admission and the request deadline). The types they use (`Auth`, `Metrics`)
//! live below the state and know nothing of it.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::errors::{self, ApiError, ErrorCode, RequestId};
use super::metrics::{method_label, route_label};
use super::state::AppState;

/// Middleware: 401 unless the request carries the token where one is required (`Auth::admits`).
pub async fn require_token(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    if !state.auth.admits(&req) {
        return ApiError::unauthorized().into_response();
    }
    next.run(req).await
}

/// Middleware (the outermost): gives the request its id, counts and times it, and finishes its
/// answer (error bodies get the request id, details go to the log: [`errors::finish`]); with
/// `--log-requests`, one log event per request (method, route template, status, milliseconds,
/// request id, error code; never keys or text: [`super::log`]).
pub async fn track(State(state): State<Arc<AppState>>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = route_label(&req);
    let method = method_label(req.method());
    // An incoming X-Request-Id (a proxy's or the client's) is kept when it is 1..=128 visible
    // ASCII characters, so that one id follows the request through every log; else one is made.
    let id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| (1..=128).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_graphic()))
        .map_or_else(RequestId::next, |v| RequestId(v.to_string()));
    req.extensions_mut().insert(id.clone());
    let resp = errors::finish(next.run(req).await, &id);
    let took = started.elapsed();
    let code = resp.extensions().get::<ErrorCode>().map(|c| c.0);
    state.metrics.observe(&route, method, resp.status().as_u16(), took, code);
    if state.cfg.log_requests {
        let (status, ms) = (resp.status().as_u16(), took.as_secs_f64() * 1e3);
        tracing::info!(
            method,
            route = route.as_str(),
            status,
            ms,
            request_id = id.0.as_str(),
            code = code.unwrap_or(""),
            "{method} {route} {status} {ms:.3} ms {}{}",
            id.0,
            code.map(|c| format!(" {c}")).unwrap_or_default()
        );
    }
    resp
}
