//! Per-request bounds: at most `--max-inflight` requests are being
//! worked on at once and at most `--max-queries` duplicate checks; past either bound the request is
//! refused at once with 503 `overloaded` and `Retry-After` instead of queueing (memory and blocking
//! threads stay bounded: each admitted request holds at most one body and one blocking task). Every
//! admitted request must finish within `--request-timeout-s` (503 `timeout`). `/healthz` and
//! `/metrics` are exempt, so that the server answers its health check while saturated.
//!
//! Bodies are read by the handlers ([`super::handlers`]) within `--body-timeout-s` (408), and the
//! request head within `--header-timeout-s` by the connection layer ([`super::conn`]).
//!
//! A 503 or 429 (refused here or by a handler, or past the deadline) may have left the request's
//! body unread, and the connection cannot carry another request after it: the answer says
//! `Connection: close`,
//! so that a client reusing connections opens a new one for its retry instead of writing into a
//! closed socket.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::errors::ApiError;
use super::state::AppState;

/// When an admitted request's answer is due (admission + `--request-timeout-s`): past it the
/// client has its 503 `timeout`, so work done for it (a semantic wait) ends by then.
#[derive(Clone, Copy, Debug)]
pub struct RequestDeadline(pub Instant);

/// Middleware: admission and the request deadline.
pub async fn admit(State(s): State<Arc<AppState>>, mut req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if path == "/healthz" || path == "/metrics" {
        return next.run(req).await;
    }
    let _inflight = match s.permit(&s.inflight, || ApiError::overloaded("too many requests in flight (--max-inflight)")) {
        Ok(p) => p,
        Err(e) => return closing(e.into_response()),
    };
    // The batch form takes its duplicate-check permit itself and holds it while its answer streams.
    let _query = if path == "/v1/duplicates" {
        match s.permit(&s.queries, || {
            ApiError::overloaded("too many duplicate checks in flight (--max-queries)")
        }) {
            Ok(p) => Some(p),
            Err(e) => return closing(e.into_response()),
        }
    } else {
        None
    };
    let limit = s.cfg.request_timeout;
    req.extensions_mut().insert(RequestDeadline(Instant::now() + limit));
    match tokio::time::timeout(limit, next.run(req)).await {
        // A handler's refusal (429, 503) may come before it read the body, too.
        Ok(r) if matches!(r.status().as_u16(), 429 | 503) => closing(r),
        Ok(r) => r,
        Err(_) => closing(ApiError::timeout(limit).into_response()),
    }
}

/// `r` with `Connection: close` (hyper closes the connection once it is written).
fn closing(mut r: Response) -> Response {
    r.headers_mut()
        .insert(axum::http::header::CONNECTION, axum::http::HeaderValue::from_static("close"));
    r
}
