//! The review page at `/review`: three static files compiled into the binary (`include_str!`: no
//! build step, no CDN, works offline). The page holds no data: everything it shows comes from the
//! JSON API (`/v1/review`, `/v1/groups/by-key/{key}`, `/v1/documents/{key}?text=true`,
//! `/v1/decisions`), each call carrying the token the curator types in when the server has one.
//! `/review#KEY` opens the group of KEY.

use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

const PAGE: &str = include_str!("index.html");
const SCRIPT: &str = include_str!("review.js");
const STYLE: &str = include_str!("review.css");

fn file(body: &'static str, kind: &'static str) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(kind)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'"),
            ),
        ],
        body,
    )
        .into_response()
}

/// `GET /review`: the page.
pub async fn page() -> Response {
    file(PAGE, "text/html; charset=utf-8")
}

/// `GET /review/{file}`: its script and style sheet.
pub async fn asset(Path(name): Path<String>) -> Response {
    match name.as_str() {
        "review.js" => file(SCRIPT, "text/javascript; charset=utf-8"),
        "review.css" => file(STYLE, "text/css; charset=utf-8"),
        _ => super::handlers::not_found().await.into_response(),
    }
}
