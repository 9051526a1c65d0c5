//! The worker's failures as its gRPC handlers answer them, and their one
//! map to gRPC statuses, so that a client sees the same code for the same
//! failure whichever handler met it. The block pipeline's own error type
//! ([`PipelineError`]) is mapped here too, not in `store/`.

use crate::store::block::PipelineError;
use crate::store::disk::StoreError;
use tonic::Status;

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// A block this worker does not hold, a replica that fails its
    /// checksum, a received block that does not match its header.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A block write this worker failed as a pipeline target.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    #[error("no output of map {map} attempt {attempt} of job {job} here: {why}")]
    NoMapOutput {
        job: u64,
        map: u32,
        attempt: u32,
        why: String,
    },
    #[error("no partition {0}")]
    NoPartition(u32),
    #[error("{path}: {err}")]
    Path { path: String, err: std::io::Error },
    #[error("map output read failed: {0}")]
    MapOutputRead(std::io::Error),
    /// A call without the right block access or shuffle token.
    #[error("permission denied: {0}")]
    Token(#[from] common::blocktoken::TokenError),
    /// A caller that is not a worker asked for what only workers get.
    #[error("permission denied: user {user:?} may not {action}: only workers may")]
    NotAWorker { user: String, action: &'static str },
}

impl From<WorkerError> for Status {
    fn from(e: WorkerError) -> Status {
        use WorkerError::*;
        let msg = e.to_string();
        match e {
            Store(s) => store_status(&s, msg),
            Pipeline(p) => pipeline_status(p, msg),
            NoPartition(_) => Status::invalid_argument(msg),
            NoMapOutput { .. } => Status::not_found(msg),
            Path { .. } | MapOutputRead(_) => Status::internal(msg),
            Token(t) => token_status(&t, msg),
            NotAWorker { .. } => Status::permission_denied(msg),
        }
    }
}

impl From<PipelineError> for Status {
    fn from(e: PipelineError) -> Status {
        WorkerError::Pipeline(e).into()
    }
}

/// A missing block is NOT_FOUND, bytes that fail their checksum
/// DATA_LOSS, the rest INTERNAL.
fn store_status(e: &StoreError, msg: String) -> Status {
    match e {
        StoreError::Missing(_) => Status::not_found(msg),
        StoreError::Corrupt { .. } | StoreError::BadWrite { .. } => Status::data_loss(msg),
        StoreError::Io(_) => Status::internal(msg),
        StoreError::Exists(_) => Status::already_exists(msg),
    }
}

fn token_status(e: &common::blocktoken::TokenError, msg: String) -> Status {
    match e {
        common::blocktoken::TokenError::NoKeys => Status::unavailable(msg),
        _ => Status::permission_denied(msg),
    }
}

fn pipeline_status(e: PipelineError, msg: String) -> Status {
    use PipelineError::*;
    match e {
        Store(s) => store_status(&s, msg),
        EmptyWrite | NoBlockInfo | BadBlockLength { .. } | LongerThanDeclared { .. } => {
            Status::invalid_argument(msg)
        }
        DamagedChunk { .. } => Status::data_loss(msg),
        Writer(_) => Status::internal(msg),
        Token(t) => token_status(&t, msg),
        Stalled { .. } => Status::deadline_exceeded(msg),
        // The caller's own status, as it came; anything else the edge
        // never puts there.
        Received(r) => match r.downcast::<Status>() {
            Ok(s) => *s,
            Err(r) => Status::internal(r.to_string()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::Code;

    /// Each kind of failure keeps the code a client has always seen for it.
    #[test]
    fn failures_map_to_their_codes() {
        let code = |e: WorkerError| Status::from(e).code();
        assert_eq!(code(StoreError::Missing(1).into()), Code::NotFound);
        let corrupt = StoreError::Corrupt {
            id: 1,
            why: "x".into(),
        };
        assert_eq!(code(corrupt.into()), Code::DataLoss);
        assert_eq!(
            code(PipelineError::EmptyWrite.into()),
            Code::InvalidArgument
        );
        assert_eq!(code(WorkerError::NoPartition(3)), Code::InvalidArgument);
        let damaged = PipelineError::DamagedChunk {
            id: 1,
            at: 0,
            crc: 1,
            sent: 2,
        };
        assert_eq!(code(damaged.into()), Code::DataLoss);
        let missing = WorkerError::NoMapOutput {
            job: 1,
            map: 2,
            attempt: 0,
            why: "gone".into(),
        };
        assert_eq!(code(missing), Code::NotFound);
        let cancelled = Status::cancelled("the writer went away");
        let s = Status::from(PipelineError::Received(Box::new(cancelled)));
        assert_eq!(
            (s.code(), s.message()),
            (Code::Cancelled, "the writer went away")
        );
    }
}
