//! Request bodies: read within their limit and timeout, then decompressed when gzip.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, StatusCode};

use super::blocking;
use crate::errors::ApiError;
use crate::state::AppState;

/// A single-document body (`--max-body-bytes`), read within `--body-timeout-s`, then [`decoded`].
pub(super) async fn body_of(s: &AppState, headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    read_body(s, headers, body, s.cfg.max_body_bytes, "--max-body-bytes").await
}

/// [`body_of`] for the NDJSON endpoints (bulk ingest, batch check): held to `--max-bulk-bytes`.
pub(super) async fn bulk_body_of(s: &AppState, headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    read_body(s, headers, body, s.cfg.max_bulk_bytes, "--max-bulk-bytes").await
}

async fn read_body(s: &AppState, headers: &HeaderMap, body: Body, limit: usize, flag: &str) -> Result<Bytes, ApiError> {
    let body = read_limited(body, limit, flag, s.cfg.body_timeout).await?;
    decoded(headers, body, limit, flag).await
}

/// Reads a whole body, refusing it (413) as soon as it passes `limit` bytes — at once when its
/// `Content-Length` says so — and (408) when it has not fully arrived within `timeout`.
async fn read_limited(body: Body, limit: usize, flag: &str, timeout: Duration) -> Result<Bytes, ApiError> {
    use axum::body::HttpBody as _;
    use futures_util::StreamExt as _;
    if body.size_hint().lower() > limit as u64 {
        return Err(ApiError::too_large(limit, flag));
    }
    let read = async {
        let mut stream = body.into_data_stream();
        let mut buf = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid_json", format!("cannot read the body: {e}")))?;
            if buf.len() + chunk.len() > limit {
                return Err(ApiError::too_large(limit, flag));
            }
            buf.extend_from_slice(&chunk);
        }
        Ok(Bytes::from(buf))
    };
    tokio::time::timeout(timeout, read)
        .await
        .map_err(|_| ApiError::body_timeout(timeout))?
}

/// The content codings of a request, in order, `identity` left out. Every `Content-Encoding`
/// header counts (a repeated header is a list, RFC 9110 §5.3); a value that is not visible ASCII
/// is refused (415), never taken for identity.
fn codings(headers: &HeaderMap) -> Result<Vec<String>, ApiError> {
    let mut out = Vec::new();
    for v in headers.get_all(header::CONTENT_ENCODING) {
        let v = v.to_str().map_err(|_| {
            ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_encoding",
                "the Content-Encoding is not ASCII; send the body uncompressed or with Content-Encoding: gzip",
            )
        })?;
        for c in v.split(',') {
            let c = c.trim().to_ascii_lowercase();
            if !c.is_empty() && c != "identity" {
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// The body as sent, decompressed when its `Content-Encoding` is gzip. The decompressed size is held
/// to the same `limit` as the body (413 past it, without inflating further: a small gzip bomb cannot
/// take memory); a stream that does not decompress is 400. Any other coding (br, deflate, zstd,
/// several codings) is 415, naming the two that are accepted.
async fn decoded(headers: &HeaderMap, body: Bytes, limit: usize, flag: &str) -> Result<Bytes, ApiError> {
    let codings = codings(headers)?;
    match codings.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [] => Ok(body),
        ["gzip" | "x-gzip"] => {
            let flag = flag.to_string();
            blocking(move || {
                use std::io::Read as _;
                let mut out = Vec::new();
                flate2::read::MultiGzDecoder::new(&body[..])
                    .take(limit as u64 + 1)
                    .read_to_end(&mut out)
                    .map_err(|e| {
                        ApiError::new(
                            StatusCode::BAD_REQUEST,
                            "invalid_encoding",
                            format!("the gzip body does not decompress: {e}"),
                        )
                    })?;
                if out.len() > limit {
                    return Err(ApiError::too_large(limit, &format!("{flag}, decompressed")));
                }
                Ok(Bytes::from(out))
            })
            .await
        }
        _ => Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_encoding",
            format!(
                "Content-Encoding {:?} is not supported; send the body uncompressed or with Content-Encoding: gzip (one coding)",
                codings.join(", ")
            ),
        )),
    }
}
