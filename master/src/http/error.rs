//! The one place that decides HTTP statuses: master errors map as their
//! gRPC codes do (`error.rs`), and every error body is `{"error": "..."}`.

use crate::error::MasterError;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error(transparent)]
    Master(#[from] MasterError),
    /// A request the API cannot parse (bad id, bad JSON body).
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    NotFound(String),
    /// Missing or wrong token.
    #[error("{0}")]
    Unauthorized(String),
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Master(e) => match e {
                MasterError::InvalidArgument(_) => StatusCode::BAD_REQUEST,
                MasterError::NotFound(_) => StatusCode::NOT_FOUND,
                MasterError::AlreadyExists(_) | MasterError::FailedPrecondition(_) => {
                    StatusCode::CONFLICT
                }
                MasterError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
                MasterError::PermissionDenied(_) => StatusCode::FORBIDDEN,
                MasterError::Io(_) | MasterError::Storage(_) => StatusCode::INTERNAL_SERVER_ERROR,
            },
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::warn!(%status, "REST request failed: {self}");
        }
        let body = serde_json::json!({ "error": self.to_string() }).to_string();
        let mut r = (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
        if status == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer realm=\"mr\""),
            );
        }
        r
    }
}
