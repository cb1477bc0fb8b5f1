//! JSON errors with stable codes: `{"error": {"code": "...", "message": "...", "request_id": "..."}}`.
//!
//! The message is short and safe to show anyone: it never carries file paths, RocksDB messages or
//! panic texts. Those details go to the server log (stderr) on one line with the same request id
//! (`fpdb serve: request r-...: internal: ...`), which every answer also carries in `X-Request-Id`.
//!
//! | status | code | when |
//! |---|---|---|
//! | 400 | `invalid_json` | the body is not JSON, or not the documented shape (unknown field, wrong type) |
//! | 400 | `invalid_document` | the document cannot be stored or checked as given (no words, key too long, bad DOI, ...) |
//! | 400 | `invalid_parameter` | a query parameter or option is out of range (`dedup`, `max_distance`, `min_jaccard`, ...) |
//! | 400 | `invalid_path` | a path segment does not decode (bad percent-encoding, group id not a number) |
//! | 400 | `bad_request` | the request itself does not parse as HTTP/1.1 (answered by the connection layer) |
//! | 401 | `unauthorized` | the access token is missing or wrong |
//! | 404 | `not_found` | no such endpoint |
//! | 404 | `document_not_found` | no document with that key |
//! | 404 | `group_not_found` | no group with that id |
//! | 404 | `decision_not_found` | no decision about the two keys (`DELETE /v1/decisions/{a}/{b}`) |
//! | 405 | `method_not_allowed` | the endpoint exists, the method does not |
//! | 408 | `body_timeout` | the body did not arrive within `--body-timeout-s` |
//! | 409 | `contradiction` | a curator's decision contradicts decisions already made; the body's `evidence` lists them |
//! | 413 | `body_too_large` | the body is over `--max-body-bytes` (`--max-bulk-bytes` for NDJSON) |
//! | 414 | `uri_too_long` | the request line is over 65,534 bytes: use the body-addressed `POST /v1/documents:get` |
//! | 422 | `max_distance_too_expensive` | `max_distance` is past what the index answers fast at this size |
//! | 429 | `queue_full` | the writer queue is full, or all bulk-ingest slots are busy: retry after `Retry-After` seconds |
//! | 431 | `headers_too_large` | the request head is over the connection's buffer |
//! | 503 | `overloaded` | too many requests or connections in flight: retry after `Retry-After` seconds |
//! | 503 | `timeout` | the request did not finish within `--request-timeout-s` (a write's outcome is then unknown: GET it) |
//! | 503 | `shutting_down` | the server is stopping; retry against the restarted server |
//! | 503 | `unavailable` | an earlier write failed and the database handle is poisoned; restart the server |
//! | 500 | `corruption` | a stored record is damaged (`fpdb check`) |
//! | 500 | `internal` | an I/O or RocksDB error, or a panic |

use std::sync::atomic::{AtomicU64, Ordering};

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// The error code of a response, for the metrics.
#[derive(Clone, Copy, Debug)]
pub struct ErrorCode(pub &'static str);

/// The id of one request: in `X-Request-Id`, in its error body and in every log line about it.
#[derive(Clone, Debug)]
pub struct RequestId(pub String);

impl RequestId {
    /// A new id, unique within this process: `r-` + 16 hex digits (a per-process random start,
    /// counted up).
    pub fn next() -> RequestId {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        static START: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        let start = *START.get_or_init(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            xxhash_rust::xxh3::xxh3_64(&(t ^ u64::from(std::process::id())).to_le_bytes())
        });
        RequestId(format!("r-{:016x}", start.wrapping_add(NEXT.fetch_add(1, Ordering::Relaxed))))
    }
}

/// An error answer.
#[derive(Clone, Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    /// What the client is told.
    pub message: String,
    /// What only the server log is told (paths, RocksDB messages, panic texts).
    pub detail: Option<String>,
    pub retry_after: Option<u32>,
}

/// Body of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable machine-readable code (see docs/serve.md).
    #[schema(example = "invalid_document")]
    pub code: String,
    /// What is wrong and what to do.
    pub message: String,
    /// The request's id (also in `X-Request-Id`): the server log's line about this error carries it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            detail: None,
            retry_after: None,
        }
    }

    /// The same error with details for the server log only.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    pub fn bad_json(e: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "invalid_json",
            format!("the body is not the documented JSON: {e}"),
        )
    }

    pub fn param(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_parameter", message)
    }

    pub fn too_large(limit: usize, flag: &str) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("the body is over the limit of {limit} bytes ({flag}); split it or raise the limit"),
        )
    }

    pub fn queue_full(what: &str) -> Self {
        ApiError {
            retry_after: Some(1),
            ..Self::new(StatusCode::TOO_MANY_REQUESTS, "queue_full", format!("{what}; retry after 1 second"))
        }
    }

    /// 503 `overloaded`: a concurrency bound is reached; the request was not started.
    pub fn overloaded(what: &str) -> Self {
        ApiError {
            retry_after: Some(1),
            ..Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "overloaded",
                format!("{what}; nothing was done, retry after 1 second"),
            )
        }
    }

    /// 503 `timeout`: the request ran past `--request-timeout-s`.
    pub fn timeout(limit: std::time::Duration) -> Self {
        ApiError {
            retry_after: Some(1),
            ..Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "timeout",
                format!(
                    "the request did not finish within {} s (--request-timeout-s); a write may or may not have been stored: GET the key to see",
                    limit.as_secs_f64()
                ),
            )
        }
    }

    /// 408 `body_timeout`: the body did not arrive in time.
    pub fn body_timeout(limit: std::time::Duration) -> Self {
        Self::new(
            StatusCode::REQUEST_TIMEOUT,
            "body_timeout",
            format!(
                "the body did not arrive within {} s (--body-timeout-s); send it at once",
                limit.as_secs_f64()
            ),
        )
    }

    pub fn shutting_down() -> Self {
        ApiError {
            retry_after: Some(5),
            ..Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "shutting_down",
                "the server is shutting down; retry against the restarted server",
            )
        }
    }

    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing or wrong access token: send `Authorization: Bearer <token>` with the token of the server's --token-file",
        )
    }

    /// 500 `internal`: the client learns that it failed, the log learns why.
    pub fn internal(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the server failed to answer; the server log has the details under this request id",
        )
        .with_detail(detail)
    }

    pub fn body_with_id(&self, request_id: Option<&RequestId>) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: self.code.to_string(),
                message: self.message.clone(),
                request_id: request_id.map(|r| r.0.clone()),
            },
        }
    }
}

impl From<fpdb::Error> for ApiError {
    fn from(e: fpdb::Error) -> Self {
        ApiError::of(&e)
    }
}

impl ApiError {
    /// The status, stable code and client message of a library error, by its class
    /// (`fpdb::Error::class`, the library's one table). Errors about the request (invalid input or
    /// option, a contradicting decision) say what is wrong: their messages name the key and the
    /// rule, never a path. Every other error gets a fixed message for its code; the library's text
    /// (paths, offsets, RocksDB messages, panic payloads) is kept as the detail, for the server
    /// log only.
    pub fn of(e: &fpdb::Error) -> Self {
        let class = e.class();
        let status = StatusCode::from_u16(class.http_status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if class.about_request {
            return Self::new(status, class.http_code, e.to_string());
        }
        let message = match class.http_code {
            "already_exists" => "the directory exists; name a new one",
            "unavailable" => "an earlier write failed and the database is closed to writes; restart the server (the server log has the cause)",
            "corruption" => "a stored record is damaged; run `fpdb check` on the database (the server log has the details)",
            "semantic_pending" => "the semantic channel had not embedded every acknowledged document within wait_semantic_ms; retry later or check without waiting",
            _ => return Self::internal(e.to_string()),
        };
        Self::new(status, class.http_code, message).with_detail(e.to_string())
    }

    /// Whether this error means the handle no longer accepts writes (the health check reports it).
    pub fn is_fatal(e: &fpdb::Error) -> bool {
        !matches!(
            e,
            fpdb::Error::InvalidInput { .. } | fpdb::Error::InvalidOption { .. } | fpdb::Error::ReadOnly { .. }
        ) && !Self::semantic_not_fatal(e)
    }

    /// The semantic channel's errors never close the handle to writes (its indexer stops alone).
    #[cfg(feature = "semantic")]
    fn semantic_not_fatal(e: &fpdb::Error) -> bool {
        matches!(e, fpdb::Error::Semantic(_))
    }

    #[cfg(not(feature = "semantic"))]
    fn semantic_not_fatal(_: &fpdb::Error) -> bool {
        false
    }

    /// The whole answer, with the request id in the body (see [`finish`]).
    pub fn response(&self, request_id: Option<&RequestId>) -> Response {
        let body = serde_json::to_vec(&self.body_with_id(request_id)).unwrap_or_default();
        let mut r = (
            self.status,
            [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            body,
        )
            .into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"fpdb\""));
        }
        r.extensions_mut().insert(ErrorCode(self.code));
        r
    }
}

impl IntoResponse for ApiError {
    /// The answer without a request id; the outermost middleware ([`finish`]) gives it one.
    fn into_response(self) -> Response {
        let mut r = self.response(None);
        r.extensions_mut().insert(self);
        r
    }
}

/// Called on every answer by the outermost middleware: an error answer is rebuilt with the
/// request id in its body, and its detail (if any) goes to the log under that id.
pub fn finish(resp: Response, id: &RequestId) -> Response {
    let mut resp = match resp.extensions().get::<ApiError>().cloned() {
        Some(e) => {
            if let Some(d) = &e.detail {
                tracing::warn!(request_id = id.0.as_str(), code = e.code, "request {}: {}: {d}", id.0, e.code);
            }
            // The rebuilt answer keeps what the inner layers said of the connection (`Connection:
            // close` after a refusal that left the body unread).
            let connection = resp.headers().get(axum::http::header::CONNECTION).cloned();
            let mut rebuilt = e.response(Some(id));
            if let Some(c) = connection {
                rebuilt.headers_mut().insert(axum::http::header::CONNECTION, c);
            }
            rebuilt
        }
        None => resp,
    };
    if let Ok(v) = HeaderValue::from_str(&id.0) {
        resp.headers_mut().insert("x-request-id", v);
    }
    resp
}

/// The answer the connection layer writes itself for a request that is not HTTP/1.1 it can parse
/// (hyper answers these with an empty body; `conn::JsonParseErrors` swaps in this one): JSON with a
/// stable code like every other error, and `Connection: close`.
pub fn parse_error_response(status: u16) -> Vec<u8> {
    let (reason, code, message) = match status {
        414 => (
            "URI Too Long",
            "uri_too_long",
            "the request line is over 65,534 bytes: address a long key in the body (POST /v1/documents:get, POST /v1/documents:delete)",
        ),
        431 => (
            "Request Header Fields Too Large",
            "headers_too_large",
            "the request head is too large; send fewer or shorter headers",
        ),
        _ => ("Bad Request", "bad_request", "the request is not HTTP/1.1 this server can parse"),
    };
    let body = ErrorBody {
        error: ErrorDetail {
            code: code.into(),
            message: message.into(),
            request_id: None,
        },
    };
    let body = serde_json::to_string(&body).unwrap_or_default();
    format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}
