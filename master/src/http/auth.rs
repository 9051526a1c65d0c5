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
use rpc::auth::Tokens;
use std::sync::Arc;

/// Every token the master knows; the middleware puts the caller's
/// `Identity` in the request's extensions for the handlers that change
/// something to check.
pub struct Bearer {
    tokens: Tokens,
}

impl Bearer {
    pub fn new(tokens: Tokens) -> Self {
        Bearer { tokens }
    }
}

pub async fn require(State(check): State<Arc<Bearer>>, mut req: Request, next: Next) -> Response {
    let id = match req.headers().get(axum::http::header::AUTHORIZATION) {
        None => {
            return ApiError::Unauthorized(
                "missing cluster token: send `Authorization: Bearer TOKEN` with the token in cluster.toml"
                    .into(),
            )
            .into_response()
        }
        Some(v) => check.tokens.lookup(v.as_bytes()).cloned(),
    };
    match id {
        Some(id) => {
            req.extensions_mut().insert(id);
            next.run(req).await
        }
        None => ApiError::Unauthorized(
            "wrong cluster token: it does not match the token in the master's cluster.toml".into(),
        )
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use rpc::auth::Tokens;

    #[test]
    fn only_the_exact_header_matches() {
        let b = Tokens::single("s3cret");
        assert!(b.lookup(b"Bearer s3cret").is_some());
        assert!(b.lookup(b"Bearer s3cre").is_none());
        assert!(b.lookup(b"Bearer s3cret ").is_none());
        assert!(b.lookup(b"bearer s3cret").is_none());
        assert!(b.lookup(b"s3cret").is_none());
    }
}
