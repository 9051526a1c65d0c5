//! What the master asks of a worker. An event puts them in its
//! [`super::Outbox`]; flushed, they wait in the worker's queue
//! ([`super::Cluster::flush`]) and leave with whichever comes first: the
//! answer to its next heartbeat, to its next task report, or to the
//! `TakeCommands` call its long poll makes as soon as the queue fills
//! ([`super::doorbell`]); `grpc/convert.rs` turns them into the protobuf
//! `Command`.

use crate::jobs::launch::{Launch, MapOutputLocation};
use crate::jobs::report::AttemptRef;
use protocol::BlockInfo;

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Copy a stored block to the workers at these addresses.
    Replicate {
        block: BlockInfo,
        targets: Vec<String>,
    },
    DeleteBlock(u64),
    /// Move a block the namespace does not know into the worker's
    /// quarantine, deleted only after a grace period.
    QuarantineBlock(u64),
    UncacheBlock(u64),
    Launch(Box<Launch>),
    KillTask(AttemptRef),
    /// Delete the job's local files (map outputs, spills).
    CleanupJob(u64),
    /// Resize the block cache to this many bytes.
    SetCacheCapacity(u64),
    /// Cache this stored block and never evict it until uncached.
    PinBlock(u64),
    /// Map outputs finished after the job's reduces on the worker were
    /// launched (reduce slow-start).
    MapOutputs {
        job: u64,
        outputs: Vec<MapOutputLocation>,
    },
}
