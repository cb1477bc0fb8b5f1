//! JSON errors with stable codes: `{"error": {"code": "...", "message": "..."}}`.
//!
//! | status | code | when |
//! |---|---|---|
//! | 400 | `invalid_json` | the body is not JSON, or not the documented shape (unknown field, wrong type) |
//! | 400 | `invalid_document` | the document cannot be stored or checked as given (no words, key too long, bad DOI, ...) |
//! | 400 | `invalid_parameter` | a query parameter or option is out of range (`dedup`, `max_distance`, `min_jaccard`, ...) |
//! | 400 | `invalid_path` | a path segment does not decode (bad percent-encoding, group id not a number) |
//! | 401 | `unauthorized` | the access token is missing or wrong |
//! | 404 | `not_found` | no such endpoint |
//! | 404 | `document_not_found` | no document with that key |
//! | 404 | `group_not_found` | no group with that id |
//! | 405 | `method_not_allowed` | the endpoint exists, the method does not |
//! | 413 | `body_too_large` | the body is over `--max-body-bytes` (`--max-bulk-bytes` for NDJSON) |
//! | 429 | `queue_full` | the writer queue is full, or all bulk-ingest slots are busy: retry after `Retry-After` seconds |
//! | 503 | `shutting_down` | the server is stopping; retry against the restarted server |
//! | 503 | `unavailable` | an earlier write failed and the database handle is poisoned; restart the server |
//! | 500 | `corruption` | a stored record is damaged (`fpdb check`) |
//! | 500 | `internal` | an I/O or RocksDB error |

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// The error code of a response, for the metrics.
#[derive(Clone, Copy, Debug)]
pub struct ErrorCode(pub &'static str);

/// An error answer.
#[derive(Clone, Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
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
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
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

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: self.code.to_string(),
                message: self.message.clone(),
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
    /// The status and stable code of a library error.
    pub fn of(e: &fpdb::Error) -> Self {
        use fpdb::Error as E;
        let (status, code) = match e {
            E::InvalidInput { .. } => (StatusCode::BAD_REQUEST, "invalid_document"),
            E::InvalidOption { .. } => (StatusCode::BAD_REQUEST, "invalid_parameter"),
            E::Poisoned { .. } | E::ReadOnly { .. } => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            E::Corruption { .. } | E::Version { .. } => (StatusCode::INTERNAL_SERVER_ERROR, "corruption"),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        // Library messages name keys, paths and offsets, never document text.
        Self::new(status, code, e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::to_vec(&self.body()).unwrap_or_default();
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
