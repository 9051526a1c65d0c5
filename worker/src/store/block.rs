//! The messages of a block write down the pipeline (`store/pipeline.rs`),
//! between workers: not the master's protocol, so not in `protocol`, whose
//! [`BlockInfo`] and [`WorkerAddr`] they carry.

use bytes::Bytes;
use protocol::{BlockInfo, WorkerAddr};

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
