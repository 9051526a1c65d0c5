//! The messages of a block write down the pipeline (`store/pipeline.rs`)
//! and its failures, between workers: not the master's protocol, so not
//! in `protocol`, whose [`BlockInfo`] and [`WorkerAddr`] they carry.

use crate::store::disk::StoreError;
use bytes::Bytes;
use common::blocktoken::TokenError;
use common::config::MAX_BLOCK_SIZE;
use protocol::{BlockInfo, WorkerAddr};
use std::time::Duration;

/// One message of a block write, as a target receives it and forwards it.
#[derive(Debug, Clone, Default)]
pub struct BlockChunk {
    /// The first chunk only: the block the write is for.
    pub block: Option<BlockInfo>,
    pub data: Bytes,
    /// The sender's CRC32C of `data`, when it sent one.
    pub crc32c: Option<u32>,
    /// The first chunk only: the targets after the receiver, in pipeline
    /// order.
    pub downstream: Vec<WorkerAddr>,
    /// The first chunk only: the master's block access token for the
    /// write, which names the only targets the block may go to.
    pub access_token: Bytes,
}

/// A target's answer: the workers that stored the block (this one and
/// those after it), or the first target after it that failed.
#[derive(Debug, Clone, Default)]
pub struct PipelineAnswer {
    pub worker: String,
    pub stored: Vec<String>,
    pub failed: Option<PipelineFailure>,
}

/// A target that failed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelineFailure {
    pub worker: String,
    pub error: String,
}

/// Why this target failed a block write: the pipeline's own failures,
/// mapped to a gRPC status once, at the edge (`edge/error.rs`).
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// A received block that does not match its header, one held already,
    /// a disk that failed.
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
    /// A write without the master's token for this block and its targets.
    #[error("permission denied: {0}")]
    Token(#[from] TokenError),
    /// A peer that took or sent nothing for `[dfs] stream_timeout`.
    #[error("{what} for {timeout:?} ([dfs] stream_timeout)")]
    Stalled {
        what: &'static str,
        timeout: Duration,
    },
    /// The sender's own stream broke (a cancelled write, a lost
    /// connection), as the edge met it: handed back as it came.
    #[error("{0}")]
    Received(Box<dyn std::error::Error + Send + Sync>),
}
