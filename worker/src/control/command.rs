//! One command of the master's, as the worker's own type: what a
//! heartbeat's, a take's or a task report's answer carries
//! (`edge/convert.rs` makes it from protobuf, `control/apply.rs` carries it out).

use crate::store::block::BlockInfo;
use crate::task::launch::{MapOutputLocation, Refused, TaskRef, TaskSpec};

/// One command of the master's.
#[derive(Debug)]
pub enum Command {
    /// Run an attempt.
    Launch(Box<TaskSpec>),
    /// A launch that came unrunnable: report the attempt failed.
    Refuse(Refused),
    KillTask(TaskRef),
    /// Delete the job's local files (map outputs, spills).
    CleanupJob(u64),
    DeleteBlock(u64),
    /// A block the namespace does not know: into the quarantine.
    QuarantineBlock(u64),
    CacheBlock(u64),
    /// Cache the block and never evict it until it is uncached.
    PinBlock(u64),
    UncacheBlock(u64),
    /// Resize the block cache to this many bytes.
    SetCacheCapacity(u64),
    /// Map outputs finished after this worker's reduces of `job` were
    /// launched (reduce slow-start): for them to fetch.
    MapOutputs {
        job: u64,
        outputs: Vec<MapOutputLocation>,
    },
    /// Send a copy of the block to each of the workers at `targets`,
    /// under the master's `token` (which names them).
    Replicate {
        block: BlockInfo,
        targets: Vec<String>,
        token: bytes::Bytes,
    },
}
