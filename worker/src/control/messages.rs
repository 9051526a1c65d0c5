//! What the worker and the master tell each other (registration,
//! heartbeat, the answers and the long poll), as the worker's own types;
//! `edge/master_client.rs` sends them and `edge/convert.rs` turns them into protobuf.

use crate::control::command::Command;
use crate::store::block::BlockInfo;
use common::resources::ResourceVector;

/// What a worker registers with: itself and full block and cache reports.
#[derive(Debug, Clone)]
pub struct Registration {
    pub name: String,
    pub addr: String,
    pub rack: String,
    pub map_slots: u32,
    pub reduce_slots: u32,
    pub cache_capacity_bytes: u64,
    pub blocks: Vec<BlockInfo>,
    pub cached: Vec<u64>,
    pub cache_used_bytes: u64,
    pub resources: ResourceVector,
    /// Jobs whose local files this worker holds (`Node::job_dirs`).
    pub job_dirs: Vec<u64>,
}

/// The master's answer to a registration.
#[derive(Debug, Clone)]
pub struct Registered {
    /// This incarnation's epoch, which its heartbeats and reports carry.
    pub epoch: u64,
    /// Blocks the master does not want (orphans of abandoned writes).
    pub delete_blocks: Vec<u64>,
}

/// One heartbeat: liveness, free slots, resources and what changed in the
/// block store and the cache since the last one.
#[derive(Debug, Clone)]
pub struct Heartbeat {
    pub name: String,
    pub epoch: u64,
    pub free_map_slots: u32,
    pub free_reduce_slots: u32,
    pub resources: ResourceVector,
    pub blocks_added: Vec<BlockInfo>,
    pub blocks_removed: Vec<u64>,
    pub cache_added: Vec<u64>,
    pub cache_removed: Vec<u64>,
    pub cache_used_bytes: u64,
    /// Draining: offer this worker nothing.
    pub draining: bool,
    /// The last heartbeat of a graceful shutdown.
    pub leaving: bool,
    /// Every running attempt with its progress counter (`task/progress.rs`).
    pub progress: Vec<(crate::task::launch::TaskRef, u64)>,
}

/// The master's answer to a heartbeat, a take of commands or a task
/// report.
#[derive(Debug)]
pub struct Reply {
    /// The master does not know this incarnation: register again.
    pub reregister: bool,
    pub commands: Vec<Command>,
    /// Heartbeat answers only: this worker holds replicas no one else has
    /// enough of (see [`crate::control::drain::Safety`]).
    pub unsafe_to_stop: bool,
    /// Heartbeat answers only, while draining: how many of its blocks the
    /// master can still copy elsewhere.
    pub blocks_to_copy: u64,
}

/// The long poll's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Poll {
    /// Commands wait: take them.
    Ready,
    /// The master does not know this incarnation.
    Reregister,
    /// Nothing came within the wait.
    Idle,
    /// The master has no long poll (an older master): commands come with
    /// heartbeats only.
    Unsupported,
}
