//! One partition of a map's output as the shuffle names it, finds it and
//! streams it, in the worker's own types (`edge/convert.rs` turns them into
//! protobuf at the gRPC edge).

use bytes::Bytes;
use std::path::PathBuf;

/// One partition of one map attempt's output: what a reducer asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionRef {
    pub job_id: u64,
    pub map_index: u32,
    pub attempt: u32,
    pub partition: u32,
}

/// Where a partition lies: a byte range of a map's output file, and the
/// CRC32C the map wrote for it (a worker of an older version sends none).
/// With `source`, the range holds references into that block file
/// (`crate::task::mapout::refs`) rather than records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionFile {
    pub path: PathBuf,
    pub offset: u64,
    pub len: u64,
    pub crc32c: Option<u32>,
    pub source: Option<PathBuf>,
}

/// One piece of a streamed partition; the first carries the CRC32C.
#[derive(Debug, Clone)]
pub struct ShuffleChunk {
    pub data: Bytes,
    pub crc32c: Option<u32>,
}
