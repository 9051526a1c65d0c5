//! The master's errors. `grpc.rs` maps them to gRPC codes, `http/error.rs`
//! to HTTP statuses.

#[derive(Debug, thiserror::Error)]
pub enum MasterError {
    #[error("{0}")]
    InvalidArgument(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    AlreadyExists(String),
    #[error("{0}")]
    FailedPrecondition(String),
    #[error("{0}")]
    Unavailable(String),
    /// The caller's role or ownership does not allow it (`auth`).
    #[error("{0}")]
    PermissionDenied(String),
    #[error("edit log: {0}")]
    Io(#[from] std::io::Error),
    /// The snapshot or edit log could not be loaded at start.
    #[error(transparent)]
    Storage(#[from] crate::blocks::editlog::EditLogError),
}

pub type Result<T> = std::result::Result<T, MasterError>;

impl From<common::path::PathError> for MasterError {
    fn from(e: common::path::PathError) -> Self {
        MasterError::InvalidArgument(e.to_string())
    }
}
