//! The master's errors and the one place that maps them to gRPC codes.

use tonic::Status;

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
    #[error("edit log: {0}")]
    Io(#[from] std::io::Error),
    /// The snapshot or edit log could not be loaded at start.
    #[error(transparent)]
    Storage(#[from] crate::editlog::EditLogError),
}

pub type Result<T> = std::result::Result<T, MasterError>;

impl From<common::path::PathError> for MasterError {
    fn from(e: common::path::PathError) -> Self {
        MasterError::InvalidArgument(e.to_string())
    }
}

impl From<MasterError> for Status {
    fn from(e: MasterError) -> Status {
        match e {
            MasterError::InvalidArgument(m) => Status::invalid_argument(m),
            MasterError::NotFound(m) => Status::not_found(m),
            MasterError::AlreadyExists(m) => Status::already_exists(m),
            MasterError::FailedPrecondition(m) => Status::failed_precondition(m),
            MasterError::Unavailable(m) => Status::unavailable(m),
            MasterError::Io(e) => Status::internal(format!("master storage error: {e}")),
            MasterError::Storage(e) => Status::internal(format!("master storage error: {e}")),
        }
    }
}
