//! This worker as a client of the master, and the edge where what it tells
//! the master becomes protobuf and the answers come back as its own types
//! (`convert.rs`): registration, heartbeats, the long poll for commands
//! and their take, task reports and corrupt-block reports. When to call
//! them is `heartbeat.rs`'s and the executor's business.

use crate::block::BlockInfo;
use crate::commands::Command;
use crate::node::Node;
use crate::outcome::TaskReport;
use common::resources::ResourceVector;
use rpc::dfs::DfsError;
use std::time::Duration;

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
}

/// The master's answer to a heartbeat, a take of commands or a task
/// report.
#[derive(Debug)]
pub struct Reply {
    /// The master does not know this incarnation: register again.
    pub reregister: bool,
    pub commands: Vec<Command>,
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
}

pub async fn register(node: &Node, r: Registration) -> Result<Registered, DfsError> {
    let req = proto::RegisterRequest::from(r);
    Ok(node.dfs.master().register(req).await?.into_inner().into())
}

pub async fn heartbeat(node: &Node, h: Heartbeat) -> Result<Reply, DfsError> {
    let req = proto::HeartbeatRequest::from(h);
    Ok(node.dfs.master().heartbeat(req).await?.into_inner().into())
}

/// Takes the commands waiting at the master for incarnation `epoch`.
pub async fn take_commands(node: &Node, epoch: u64) -> Result<Reply, DfsError> {
    let req = poll(node, epoch, Duration::ZERO);
    Ok(node
        .dfs
        .master()
        .take_commands(req)
        .await?
        .into_inner()
        .into())
}

/// Asks the master to answer once commands wait for incarnation `epoch`,
/// or after `wait`. The status of a failed call is kept whole: a master
/// without the long poll answers `UNIMPLEMENTED`.
pub async fn await_commands(
    node: &Node,
    epoch: u64,
    wait: Duration,
) -> Result<Poll, tonic::Status> {
    let req = poll(node, epoch, wait);
    Ok(node
        .dfs
        .master()
        .await_commands(req)
        .await?
        .into_inner()
        .into())
}

fn poll(node: &Node, epoch: u64, wait: Duration) -> proto::WorkerPoll {
    proto::WorkerPoll {
        name: node.me.name.clone(),
        epoch,
        wait_ms: wait.as_millis() as u64,
    }
}

/// Sends one report of an attempt (the caller retries).
pub async fn report_task(node: &Node, r: TaskReport) -> Result<Reply, DfsError> {
    let req = crate::convert::task_update(&node.me.name, r);
    Ok(node
        .dfs
        .master()
        .task_update(req)
        .await?
        .into_inner()
        .into())
}

/// Tells the master that this worker's replica of block `id` is corrupt.
pub async fn report_bad_block(node: &Node, id: u64, reason: String) -> Result<(), DfsError> {
    let req = proto::ReportBadBlockRequest {
        worker: node.me.name.clone(),
        block_id: id,
        reason,
    };
    node.dfs.master().report_bad_block(req).await?;
    Ok(())
}
