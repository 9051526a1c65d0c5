//! Workers as the master sees them: registration epochs, heartbeats, liveness.

use proto::{Command, ResourceVector};
use std::time::Instant;

/// One worker incarnation. The entry outlives a death so that `cluster
/// status` keeps showing the worker, and so that its old epoch can be fenced.
#[derive(Debug, Clone)]
pub struct WorkerEntry {
    pub name: String,
    pub addr: String,
    pub rack: String,
    pub map_slots: u32,
    pub reduce_slots: u32,
    pub free_map_slots: u32,
    pub free_reduce_slots: u32,
    pub cache_capacity_bytes: u64,
    pub cache_used_bytes: u64,
    /// Changes at every registration; a heartbeat with another epoch comes
    /// from a stale incarnation and is told to register again.
    pub epoch: u64,
    pub alive: bool,
    /// Shutting down (its heartbeats say so): it finishes what it runs and
    /// is offered nothing new.
    pub draining: bool,
    pub last_heartbeat: Instant,
    /// Wall-clock time of the last heartbeat, for users.
    pub last_heartbeat_ms: u64,
    pub resources: ResourceVector,
    /// Commands waiting for the next heartbeat response.
    pub commands: Vec<Command>,
    /// Blocks this worker stores, per its reports.
    pub blocks: usize,
}

impl WorkerEntry {
    pub fn addr_proto(&self) -> proto::WorkerAddr {
        proto::WorkerAddr {
            name: self.name.clone(),
            addr: self.addr.clone(),
            rack: self.rack.clone(),
        }
    }
}

/// A new epoch, strictly above `prev` and above every epoch a previous master
/// run could have handed out (wall-clock milliseconds), so that fencing
/// survives a master restart.
pub fn next_epoch(prev: u64) -> u64 {
    (prev + 1).max(common::now_ms())
}
