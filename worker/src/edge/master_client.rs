//! This worker as a client of the master, and the edge where what it tells
//! the master becomes protobuf and the answers come back as the protocol's
//! types (`protocol::wire`): registration, heartbeats, the long poll for
//! commands and their take, task reports and corrupt-block reports. The
//! master's keys, which the protocol's types leave out, are taken here.
//! When to call them is `control/heartbeat.rs`'s and the executor's
//! business.

use crate::edge::safety::Safety;
use common::blocktoken::Verifier;
use protocol::{Heartbeat, Poll, Registered, Registration, Reply, TaskReport};
use rpc::dfs::{Dfs, DfsError};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Why a call to the master failed, as the rest of the worker sees it:
/// the message only. Whether the master was unreachable or refused, every
/// caller does the same (the heartbeat re-registers, a report is retried,
/// a corrupt-block report is logged), so the client's error and its gRPC
/// status stop here.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LinkError(String);

impl From<DfsError> for LinkError {
    fn from(e: DfsError) -> Self {
        LinkError(e.to_string())
    }
}

impl From<tonic::Status> for LinkError {
    fn from(s: tonic::Status) -> Self {
        DfsError::from(s).into()
    }
}

/// This worker's link to the master: the client, and the state its calls
/// and answers keep (the incarnation's epoch, the drain, the master's word
/// on stopping, its keys), owned here so that the heartbeat, the executor's
/// reports, the drain and the probes share one handle, not the node.
pub struct MasterLink {
    /// Client side of the cluster, shared with the tasks' writes and the
    /// calls to other workers.
    dfs: Arc<Dfs>,
    /// This worker's name, which every call carries.
    name: String,
    /// The epoch of the current registration; 0 before the first.
    epoch: AtomicU64,
    /// Set on SIGTERM: launches are handed back, heartbeats say so.
    draining: AtomicBool,
    /// What the master last said of this worker's replicas: whether it may
    /// go (`/readyz`), and while draining, what is left to copy.
    safety: Safety,
    /// Held from taking the store's changes to the master's answer, by
    /// heartbeats, registrations and corrupt-block reports: the master
    /// sees a replica's "added" before its "corrupt", never after.
    reports: tokio::sync::Mutex<()>,
    /// The master's keys: every block access and shuffle token this
    /// worker's port is shown is checked against them.
    keys: Verifier,
}

impl MasterLink {
    pub fn new(dfs: Arc<Dfs>, name: &str) -> MasterLink {
        MasterLink {
            dfs,
            name: name.to_string(),
            epoch: Default::default(),
            draining: Default::default(),
            safety: Default::default(),
            reports: Default::default(),
            keys: Default::default(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The epoch of the last registration; 0 before the first.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    pub fn set_epoch(&self, epoch: u64) {
        self.epoch.store(epoch, Ordering::SeqCst);
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// From now on launches are handed back and heartbeats say so.
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    pub fn safety(&self) -> &Safety {
        &self.safety
    }

    pub fn keys(&self) -> &Verifier {
        &self.keys
    }

    /// Holds off the other reports (see `reports`) while the guard lives.
    pub async fn in_order(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.reports.lock().await
    }
}

pub async fn register(link: &MasterLink, r: Registration) -> Result<Registered, LinkError> {
    let req = proto::RegisterRequest::from(r);
    let mut resp = link.dfs.master().register(req).await?.into_inner();
    take_keys(link, resp.keys.take());
    Ok(resp.into())
}

pub async fn heartbeat(link: &MasterLink, h: Heartbeat) -> Result<Reply, LinkError> {
    let req = proto::HeartbeatRequest::from(h);
    Ok(reply(
        link,
        link.dfs.master().heartbeat(req).await?.into_inner(),
    ))
}

/// The master's block keys, when an answer carries them, go to the
/// checks of this worker's port (`MasterLink::keys`).
fn take_keys(link: &MasterLink, keys: Option<proto::BlockKeys>) {
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
    link.keys
        .update(keys, k.shuffle_secret.to_vec(), common::now_ms());
}

fn reply(link: &MasterLink, mut r: proto::HeartbeatResponse) -> Reply {
    take_keys(link, r.keys.take());
    r.into()
}

/// Takes the commands waiting at the master for incarnation `epoch`.
pub async fn take_commands(link: &MasterLink, epoch: u64) -> Result<Reply, LinkError> {
    let req = poll(link, epoch, Duration::ZERO);
    Ok(reply(
        link,
        link.dfs.master().take_commands(req).await?.into_inner(),
    ))
}

/// Asks the master to answer once commands wait for incarnation `epoch`,
/// or after `wait`. A master without the long poll answers
/// `UNIMPLEMENTED`: [`Poll::Unsupported`].
pub async fn await_commands(
    link: &MasterLink,
    epoch: u64,
    wait: Duration,
) -> Result<Poll, LinkError> {
    let req = poll(link, epoch, wait);
    match link.dfs.master().await_commands(req).await {
        Ok(r) => Ok(r.into_inner().into()),
        Err(s) if s.code() == tonic::Code::Unimplemented => Ok(Poll::Unsupported),
        Err(s) => Err(s.into()),
    }
}

fn poll(link: &MasterLink, epoch: u64, wait: Duration) -> proto::WorkerPoll {
    proto::WorkerPoll {
        name: link.name.clone(),
        epoch,
        wait_ms: wait.as_millis() as u64,
    }
}

/// Sends one report of an attempt (the caller retries).
pub async fn report_task(link: &MasterLink, r: TaskReport) -> Result<Reply, LinkError> {
    let req = proto::TaskUpdateRequest::from(r);
    Ok(reply(
        link,
        link.dfs.master().task_update(req).await?.into_inner(),
    ))
}

/// Tells the master that this worker's replica of block `id` is corrupt.
pub async fn report_bad_block(link: &MasterLink, id: u64, reason: String) -> Result<(), LinkError> {
    let req = proto::ReportBadBlockRequest {
        worker: link.name.clone(),
        block_id: id,
        reason,
        access_token: Default::default(),
    };
    let _order = link.in_order().await;
    link.dfs.master().report_bad_block(req).await?;
    Ok(())
}
