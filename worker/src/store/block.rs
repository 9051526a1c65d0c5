//! What the worker knows of a block: what it is (id, length, CRC32C,
//! generation stamp, as its meta file and the master's namespace hold
//! them), for one it reads, which workers hold a copy, and the messages of
//! a block write down the pipeline (`store/pipeline.rs`).

use bytes::Bytes;

/// A block's identity and checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockInfo {
    pub id: u64,
    pub len: u64,
    pub crc32c: u32,
    /// The namespace generation the block was allocated in: a replica of
    /// another generation is stale.
    pub generation: u64,
}

/// A worker as another worker dials it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorkerAddr {
    pub name: String,
    pub addr: String,
    pub rack: String,
}

/// A block and the workers that store or cache it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockLocation {
    pub block: BlockInfo,
    pub replicas: Vec<WorkerAddr>,
    pub cached_on: Vec<WorkerAddr>,
}

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
