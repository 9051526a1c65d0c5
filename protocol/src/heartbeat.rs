//! Registration, heartbeats and their answers: how a worker joins, stays
//! alive, tells the master what changed, and hears what to do.

use crate::block::BlockInfo;
use crate::command::Command;
use crate::task::TaskRef;
use common::resources::ResourceVector;

/// A worker announcing itself, with full block and cache reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Registration {
    /// Refused by the master unless equal to its own
    /// ([`common::PROTOCOL_VERSION`]).
    pub protocol_version: u32,
    pub name: String,
    pub addr: String,
    pub rack: String,
    pub map_slots: u32,
    pub reduce_slots: u32,
    pub cache_capacity_bytes: u64,
    pub blocks: Vec<BlockInfo>,
    pub cached: Vec<u64>,
    pub cache_used_bytes: u64,
    /// A first sample, so that a new worker does not show zeros until its
    /// first heartbeat.
    pub resources: ResourceVector,
    /// Jobs whose local files (map outputs, spills) the worker holds: the
    /// master cleans up those it does not run.
    pub job_dirs: Vec<u64>,
}

impl Registration {
    /// Refuses slot counts no worker can honour: none at all (the worker
    /// could never run a task, yet would count as capacity), or more than
    /// [`common::config::MAX_SLOTS`] of a kind (a typo that would have the
    /// scheduler pile tasks on one host until it runs out of memory).
    pub fn check_slots(&self) -> Result<(), String> {
        let max = common::config::MAX_SLOTS;
        if self.map_slots == 0 && self.reduce_slots == 0 {
            return Err(format!(
                "worker {} registers with no map or reduce slots: give it at least one",
                self.name
            ));
        }
        if self.map_slots > max || self.reduce_slots > max {
            return Err(format!(
                "worker {} registers with {} map and {} reduce slots: at most {max} of a kind",
                self.name, self.map_slots, self.reduce_slots
            ));
        }
        Ok(())
    }
}

/// The master's answer to a registration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Registered {
    /// This incarnation's epoch, which its heartbeats and reports carry.
    pub epoch: u64,
    pub heartbeat_interval_ms: u64,
    /// Blocks to delete at once. The master sends none since unknown
    /// blocks go to the worker's quarantine by command instead; kept for
    /// the wire format.
    pub delete_blocks: Vec<u64>,
}

/// One heartbeat: liveness, free slots, resources and what changed in the
/// block store and the cache since the last one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Heartbeat {
    pub name: String,
    pub epoch: u64,
    pub free_map_slots: u32,
    pub free_reduce_slots: u32,
    /// None: keep the last sample.
    pub resources: Option<ResourceVector>,
    pub blocks_added: Vec<BlockInfo>,
    pub blocks_removed: Vec<u64>,
    pub cache_added: Vec<u64>,
    pub cache_removed: Vec<u64>,
    pub cache_used_bytes: u64,
    /// Draining (SIGTERM): it runs what it has, offer it nothing new.
    pub draining: bool,
    /// The last heartbeat of a graceful shutdown: gone now, not after the
    /// expiry interval.
    pub leaving: bool,
    /// Every running attempt and its progress counter: the master kills
    /// one whose counter has not moved for the task timeout.
    pub progress: Vec<(TaskRef, u64)>,
}

/// The answer to a heartbeat, a take of commands or a task report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    /// The master does not know this incarnation: register again.
    pub reregister: bool,
    pub commands: Vec<Command>,
    /// Heartbeat answers only: whether the worker may go now; the default
    /// elsewhere.
    pub stop: StopAnswer,
}

impl Reply {
    pub fn reregister() -> Reply {
        Reply {
            reregister: true,
            ..Default::default()
        }
    }
}

/// What a heartbeat's answer says of stopping the worker.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StopAnswer {
    /// It holds replicas nobody else has enough of: an orchestrator must
    /// not take it away (its `/readyz` says so).
    pub unsafe_to_stop: bool,
    /// Of its blocks not yet safe elsewhere, how many the master can still
    /// copy: a draining worker waits for 0. 0 with `unsafe_to_stop` means
    /// no other worker can take them, so waiting would not help.
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
    /// heartbeats only. Made by the worker's edge, never sent.
    Unsupported,
}
