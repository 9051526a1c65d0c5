//! What the worker knows of a block: what it is (id, length, CRC32C,
//! generation stamp, as its meta file and the master's namespace hold
//! them) and, for one it reads, which workers hold a copy.

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
