//! The cluster token on HTTP, as on gRPC: `Authorization: Bearer TOKEN` on
//! every `/api` request and on `/metrics`; missing or wrong is a 401.
//!
//! The browser UI keeps the token the user typed in `sessionStorage` and
//! sends it as that header: no cookie, so no request forged from another
//! site carries it (no CSRF to defend against), and it is gone when the tab
//! closes.

use super::error::ApiError;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

pub struct Bearer {
    /// The whole expected header value, `Bearer TOKEN`.
    expected: String,
}

impl Bearer {
    pub fn new(token: &str) -> Self {
        Bearer {
            expected: format!("Bearer {token}"),
        }
    }

    /// Compares in time independent of where the first difference is, so
    /// that response times do not reveal the token a byte at a time.
    pub fn matches(&self, header: &[u8]) -> bool {
        let want = self.expected.as_bytes();
        header.len() == want.len()
            && header
                .iter()
                .zip(want)
                .fold(0u8, |acc, (x, y)| acc | (x ^ y))
                == 0
    }
}

pub async fn require(State(check): State<Arc<Bearer>>, req: Request, next: Next) -> Response {
    match req.headers().get(axum::http::header::AUTHORIZATION) {
        None => ApiError::Unauthorized(
            "missing cluster token: send `Authorization: Bearer TOKEN` with the token in cluster.toml"
                .into(),
        )
        .into_response(),
        Some(v) if check.matches(v.as_bytes()) => next.run(req).await,
        Some(_) => ApiError::Unauthorized(
            "wrong cluster token: it does not match the token in the master's cluster.toml".into(),
        )
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_header_matches() {
        let b = Bearer::new("s3cret");
        assert!(b.matches(b"Bearer s3cret"));
        assert!(!b.matches(b"Bearer s3cre"));
        assert!(!b.matches(b"Bearer s3cret "));
        assert!(!b.matches(b"bearer s3cret"));
        assert!(!b.matches(b"s3cret"));
    }
}
