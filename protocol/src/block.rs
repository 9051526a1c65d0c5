//! A block as the protocol names it: what it is, and who holds it.

use serde::{Deserialize, Serialize};

/// A block's identity and checksum, as a replica's meta file and the
/// master's namespace hold them (the namespace persists this very type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct BlockInfo {
    pub id: u64,
    pub len: u64,
    pub crc32c: u32,
    /// The namespace generation the block was allocated in (HDFS's
    /// generation stamp): a replica reported under this id with another
    /// generation is a stale copy, never this block. Absent (0) in edit
    /// logs and fsimages written before generations existed, as in the
    /// meta files of the replicas they wrote.
    #[serde(default)]
    pub generation: u64,
}

/// A worker's name and where to reach it: what block locations and
/// placement answers carry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
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
