//! The worker's failures as its gRPC handlers answer them, and their one
//! map to gRPC statuses, so that a client sees the same code for the same
//! failure whichever handler met it.

use crate::store::disk::StoreError;
use common::config::MAX_BLOCK_SIZE;
use tonic::Status;

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// A block this worker does not hold, a replica that fails its
    /// checksum, a received block that does not match its header.
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("empty block write")]
    EmptyWrite,
    #[error("the first chunk of a block write must carry the block info")]
    NoBlockInfo,
    #[error("block {id} has length {len}, outside 1..={max}", max = MAX_BLOCK_SIZE)]
    BadBlockLength { id: u64, len: u64 },
    #[error("block {id} is longer than its declared {len} bytes")]
    LongerThanDeclared { id: u64, len: u64 },
    /// A chunk whose bytes are not the ones its sender checksummed.
    #[error("block {id}: the chunk at byte {at} arrived with CRC32C {crc:#010x}, sent with {sent:#010x}: damaged on the way here")]
    DamagedChunk {
        id: u64,
        at: u64,
        crc: u32,
        sent: u32,
    },
    /// The block's writer thread died.
    #[error("{0}")]
    Writer(String),
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
    /// A peer that took or sent nothing for `[dfs] stream_timeout`.
    #[error("{what} for {timeout:?} ([dfs] stream_timeout)")]
    Stalled {
        what: &'static str,
        timeout: std::time::Duration,
    },
    /// The caller's own stream broke (a cancelled write, a lost
    /// connection): handed back as it came.
    #[error("{0}")]
    Received(Status),
}

impl From<WorkerError> for Status {
    fn from(e: WorkerError) -> Status {
        use WorkerError::*;
        match e {
            // A missing block is NOT_FOUND, bytes that fail their
            // checksum DATA_LOSS, the rest INTERNAL.
            Store(StoreError::Missing(_)) => Status::not_found(e.to_string()),
            Store(StoreError::Corrupt { .. } | StoreError::BadWrite { .. }) => {
                Status::data_loss(e.to_string())
            }
            Store(StoreError::Io(_)) => Status::internal(e.to_string()),
            Store(StoreError::Exists(_)) => Status::already_exists(e.to_string()),
            EmptyWrite
            | NoBlockInfo
            | BadBlockLength { .. }
            | LongerThanDeclared { .. }
            | NoPartition(_) => Status::invalid_argument(e.to_string()),
            DamagedChunk { .. } => Status::data_loss(e.to_string()),
            NoMapOutput { .. } => Status::not_found(e.to_string()),
            Writer(_) | Path { .. } | MapOutputRead(_) => Status::internal(e.to_string()),
            Token(common::blocktoken::TokenError::NoKeys) => Status::unavailable(e.to_string()),
            Token(_) | NotAWorker { .. } => Status::permission_denied(e.to_string()),
            Stalled { .. } => Status::deadline_exceeded(e.to_string()),
            Received(s) => s,
        }
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
        assert_eq!(code(WorkerError::EmptyWrite), Code::InvalidArgument);
        assert_eq!(code(WorkerError::NoPartition(3)), Code::InvalidArgument);
        let damaged = WorkerError::DamagedChunk {
            id: 1,
            at: 0,
            crc: 1,
            sent: 2,
        };
        assert_eq!(code(damaged), Code::DataLoss);
        let missing = WorkerError::NoMapOutput {
            job: 1,
            map: 2,
            attempt: 0,
            why: "gone".into(),
        };
        assert_eq!(code(missing), Code::NotFound);
        let cancelled = Status::cancelled("the writer went away");
        let s = Status::from(WorkerError::Received(cancelled));
        assert_eq!(
            (s.code(), s.message()),
            (Code::Cancelled, "the writer went away")
        );
    }
}
