//! What the master asks of a worker. The master queues them per worker;
//! they leave with the answer to its next heartbeat, task report or take
//! of commands, and the worker carries them out.

use crate::block::BlockInfo;
use crate::task::{Launch, MapOutputLocation, Refused, TaskRef};
use bytes::Bytes;

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Run an attempt.
    Launch(Box<Launch>),
    /// Made by the worker's edge, never sent: a launch that came
    /// unrunnable, to be reported failed at once.
    Refuse(Refused),
    KillTask(TaskRef),
    /// Delete the job's local files (map outputs, spills).
    CleanupJob(u64),
    DeleteBlock(u64),
    /// A block the namespace does not know: into the worker's quarantine,
    /// deleted only after a grace period.
    QuarantineBlock(u64),
    CacheBlock(u64),
    /// Cache the block and never evict it until it is uncached.
    PinBlock(u64),
    UncacheBlock(u64),
    /// Resize the block cache to this many bytes.
    SetCacheCapacity(u64),
    /// Map outputs finished after the job's reduces on this worker were
    /// launched (reduce slow-start): for them to fetch.
    MapOutputs {
        job: u64,
        outputs: Vec<MapOutputLocation>,
    },
    /// Send a copy of the block to each of the workers at `targets`, under
    /// `token`, which names them (empty until the master's edge signs it).
    Replicate {
        block: BlockInfo,
        targets: Vec<String>,
        token: Bytes,
    },
}
