//! This worker as a client of the master, and the edge where what it tells
//! the master becomes protobuf and the answers come back as the protocol's
//! types (`protocol::wire`): registration, heartbeats, the long poll for
//! commands and their take, task reports and corrupt-block reports. The
//! master's keys, which the protocol's types leave out, are taken here.
//! When to call them is `control/heartbeat.rs`'s and the executor's
//! business.

use crate::node::Node;
use protocol::{Heartbeat, Poll, Registered, Registration, Reply, TaskReport};
use rpc::dfs::DfsError;
use std::time::Duration;

pub async fn register(node: &Node, r: Registration) -> Result<Registered, DfsError> {
    let req = proto::RegisterRequest::from(r);
    let mut resp = node.dfs.master().register(req).await?.into_inner();
    take_keys(node, resp.keys.take());
    Ok(resp.into())
}

pub async fn heartbeat(node: &Node, h: Heartbeat) -> Result<Reply, DfsError> {
    let req = proto::HeartbeatRequest::from(h);
    Ok(reply(
        node,
        node.dfs.master().heartbeat(req).await?.into_inner(),
    ))
}

/// The master's block keys, when an answer carries them, go to the
/// checks of this worker's port (`Node::keys`).
fn take_keys(node: &Node, keys: Option<proto::BlockKeys>) {
    let Some(k) = keys else { return };
    let keys = k
        .keys
        .into_iter()
        .map(|k| common::blocktoken::BlockKey {
            id: k.id,
            secret: k.secret.to_vec(),
            expires_ms: k.expires_ms,
        })
        .collect();
    node.keys
        .update(keys, k.shuffle_secret.to_vec(), common::now_ms());
}

fn reply(node: &Node, mut r: proto::HeartbeatResponse) -> Reply {
    take_keys(node, r.keys.take());
    r.into()
}

/// Takes the commands waiting at the master for incarnation `epoch`.
pub async fn take_commands(node: &Node, epoch: u64) -> Result<Reply, DfsError> {
    let req = poll(node, epoch, Duration::ZERO);
    Ok(reply(
        node,
        node.dfs.master().take_commands(req).await?.into_inner(),
    ))
}

/// Asks the master to answer once commands wait for incarnation `epoch`,
/// or after `wait`. A master without the long poll answers
/// `UNIMPLEMENTED`: [`Poll::Unsupported`].
pub async fn await_commands(node: &Node, epoch: u64, wait: Duration) -> Result<Poll, DfsError> {
    let req = poll(node, epoch, wait);
    match node.dfs.master().await_commands(req).await {
        Ok(r) => Ok(r.into_inner().into()),
        Err(s) if s.code() == tonic::Code::Unimplemented => Ok(Poll::Unsupported),
        Err(s) => Err(s.into()),
    }
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
    let req = proto::TaskUpdateRequest::from(r);
    Ok(reply(
        node,
        node.dfs.master().task_update(req).await?.into_inner(),
    ))
}

/// Tells the master that this worker's replica of block `id` is corrupt.
pub async fn report_bad_block(node: &Node, id: u64, reason: String) -> Result<(), DfsError> {
    let req = proto::ReportBadBlockRequest {
        worker: node.me.name.clone(),
        block_id: id,
        reason,
        access_token: Default::default(),
    };
    let _order = node.reports.lock().await;
    node.dfs.master().report_bad_block(req).await?;
    Ok(())
}
