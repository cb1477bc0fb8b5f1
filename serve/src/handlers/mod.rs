//! One thin handler per endpoint: decode the request, call the library (on the blocking pool), encode
//! the answer. The request and response types are the OpenAPI schemas (`schemas.rs` and the
//! library's `fpdb::output`, collected by `openapi.rs`). By resource: `documents.rs` (one
//! document: put, get, delete), `browse.rs` (a stored document's duplicates; documents and
//! groups by page), `bulk.rs` (the NDJSON ingest), `duplicates.rs` (the checks),
//! `service.rs` (groups, stats, health, metrics, the contract, the fallbacks); `body.rs` reads and
//! decodes request bodies.

use axum::body::{Body, Bytes};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use fpdb::{Biblio, Dedup, NewDoc};
use serde::Serialize;

use super::errors::ApiError;
use super::schemas::{DedupParam, DedupQuery};

mod admin;
mod body;
mod browse;
mod bulk;
mod decisions;
mod documents;
mod duplicates;
mod service;

pub use admin::*;
pub use browse::*;
pub use bulk::*;
pub use decisions::*;
pub use documents::*;
pub use duplicates::*;
pub use service::*;

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

/// A streamed answer's line from its blocking task: sent as soon as the channel has room. A client
/// that reads nothing for `--request-timeout-s` (`stall`) is cut off (false: the task stops), and
/// once the server is stopping a full channel is not waited for, so that shutdown ends within
/// `--shutdown-timeout-s`. Once it returned false, the answer is over: the caller sends no more.
fn send_line(
    tx: &tokio::sync::mpsc::Sender<Bytes>,
    line: Bytes,
    stall: std::time::Duration,
    stopping: &std::sync::atomic::AtomicBool,
) -> bool {
    use tokio::sync::mpsc::error::TrySendError;
    let start = std::time::Instant::now();
    let mut line = line;
    loop {
        match tx.try_send(line) {
            Ok(()) => return true,
            Err(TrySendError::Closed(_)) => return false,
            Err(TrySendError::Full(back)) => {
                if stopping.load(std::sync::atomic::Ordering::Relaxed) || start.elapsed() >= stall {
                    return false;
                }
                line = back;
                // a blocking thread: it polls (2 ms) rather than holding a runtime handle
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
    }
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

fn dedup_of(q: Result<Query<DedupQuery>, QueryRejection>) -> Result<Dedup, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::param(format!("{e}; `dedup` is one of link, skip, off")))?;
    Ok(match q.dedup.unwrap_or(DedupParam::Link) {
        DedupParam::Link => Dedup::Link,
        DedupParam::Skip => Dedup::Skip,
        DedupParam::Off => Dedup::Off,
    })
}

/// A document to store from a request's fields; `meta` is kept as JSON text.
fn new_doc(key: String, text: String, meta: Option<serde_json::Map<String, serde_json::Value>>, biblio: Biblio) -> NewDoc {
    NewDoc {
        key,
        text,
        meta: meta.map(|m| serde_json::Value::Object(m).to_string()),
        biblio,
    }
}
