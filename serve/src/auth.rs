//! Who may write: with `--token-file`, every request that changes data (`PUT`, `DELETE`,
//! `POST /v1/documents`) must carry `Authorization: Bearer <token>`, and so must reads with
//! `--token-for-reads`; `GET /healthz` never needs it. The comparison takes the same time whatever
//! the bytes (`subtle`); only the length of the candidate leaks, as with any comparison.

use axum::extract::Request;
use axum::http::{header, Method};
use subtle::ConstantTimeEq;

pub struct Auth {
    token: Option<Vec<u8>>,
    for_reads: bool,
}

impl Auth {
    pub fn new(token: Option<Vec<u8>>, for_reads: bool) -> Self {
        Auth { token, for_reads }
    }

    pub fn enabled(&self) -> bool {
        self.token.is_some()
    }

    /// Whether a request with this method and path changes data.
    pub fn is_write(method: &Method, path: &str) -> bool {
        *method == Method::PUT
            || *method == Method::DELETE
            || (*method == Method::POST && (path == "/v1/documents" || path == "/v1/documents:delete" || path == "/v1/decisions"))
            || path.starts_with("/v1/admin/")
    }

    fn allows(&self, presented: Option<&[u8]>) -> bool {
        match (&self.token, presented) {
            (None, _) => true,
            (Some(t), Some(p)) => bool::from(t.as_slice().ct_eq(p)),
            (Some(_), None) => false,
        }
    }

    /// Whether `req` may pass: it carries the token where one is required. The review page's
    /// static files hold no data (its calls to the API carry the token), and `/healthz` is open.
    pub fn admits(&self, req: &Request) -> bool {
        let path = req.uri().path();
        let open = path == "/healthz" || path == "/review" || path.starts_with("/review/");
        let needed = self.enabled() && !open && (self.for_reads || Auth::is_write(req.method(), path));
        !needed || self.allows(req.headers().get(header::AUTHORIZATION).and_then(|v| bearer(v.as_bytes())))
    }
}

/// The token of an `Authorization: Bearer <token>` value. The scheme name is case-insensitive
/// (RFC 7235 §2.1: `bearer`, `BEARER` are the same scheme); one or more spaces follow it.
fn bearer(v: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = v.split_at_checked(6)?;
    if !scheme.eq_ignore_ascii_case(b"bearer") || rest.first() != Some(&b' ') {
        return None;
    }
    Some(rest.trim_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_must_match_exactly() {
        let a = Auth::new(Some(b"0123456789abcdef".to_vec()), false);
        assert!(a.allows(Some(b"0123456789abcdef")));
        assert!(!a.allows(Some(b"0123456789abcdeF")));
        assert!(!a.allows(Some(b"0123456789abcde")));
        assert!(!a.allows(Some(b"")));
        assert!(!a.allows(None));
        assert!(Auth::new(None, false).allows(None));
        assert!(Auth::is_write(&Method::POST, "/v1/documents"));
        assert!(!Auth::is_write(&Method::POST, "/v1/duplicates"));
        assert!(Auth::is_write(&Method::DELETE, "/v1/documents/x"));
        assert!(!Auth::is_write(&Method::GET, "/v1/documents/x"));
        assert!(Auth::is_write(&Method::POST, "/v1/documents:delete"));
        assert!(!Auth::is_write(&Method::POST, "/v1/documents:get"));
    }

    #[test]
    fn bearer_scheme_is_case_insensitive() {
        for v in ["Bearer tok", "bearer tok", "BEARER tok", "bEaReR   tok "] {
            assert_eq!(bearer(v.as_bytes()), Some(&b"tok"[..]), "{v}");
        }
        for v in ["Bearertok", "Basic tok", "Bear tok", ""] {
            assert_eq!(bearer(v.as_bytes()), None, "{v}");
        }
    }
}
