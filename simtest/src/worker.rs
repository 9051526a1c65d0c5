//! A model worker as a turmoil host: the worker's side of the protocol as
//! the real worker speaks it (register with full reports, heartbeat with
//! deltas, re-register on a failed heartbeat or when told, carry out the
//! commands that come back, report attempts fenced by the launch's epoch),
//! with an in-memory disk and the model job instead of files, `memmap2`,
//! `sysinfo` and blocking threads, which turmoil cannot simulate. When to
//! register and what an answer or a failure does is the real worker's own
//! state machine (`protocol::session`); the messages are `protocol`'s and
//! go through its one wire conversion; the gRPC services and clients are
//! the real generated ones.

use crate::cluster::{Layout, WORKER_PORT};
use crate::history::{self, note};
use crate::node::{Delta, Node, SharedDisk, Snapshot};
use crate::service::ModelWorker;
use common::config::ClusterConfig;
use protocol::session::{Answer, Call};
use protocol::{BlockInfo, Command, Heartbeat, Registered, Registration, Reply};
use rpc::auth::TokenCheck;
use std::sync::{Arc, Mutex};

/// What a worker host needs, cloned into each incarnation.
#[derive(Clone)]
pub struct Spec {
    pub index: usize,
    pub layout: Layout,
    pub cfg: ClusterConfig,
    pub disk: SharedDisk,
    pub history: history::Shared,
    pub seed: u64,
    pub snapshot: Arc<Mutex<Snapshot>>,
    /// Set by the run to make this worker replay its old reports once.
    pub replay: Arc<Mutex<bool>>,
}

/// The host's software: one incarnation of the worker.
pub async fn run(spec: Spec) -> turmoil::Result {
    let name = spec.layout.worker(spec.index);
    let dfs = rpc::dfs::Dfs::connect_with(&spec.cfg, crate::net::maker())?;
    let node = Arc::new(Node {
        name: name.clone(),
        addr: spec.layout.worker_addr(spec.index),
        rack: spec.layout.rack_of(spec.index),
        cfg: spec.cfg.clone(),
        disk: spec.disk.clone(),
        delta: Mutex::new(Delta::default()),
        map_outputs: Default::default(),
        tasks: Default::default(),
        session: Default::default(),
        dfs: Arc::new(dfs),
        history: spec.history.clone(),
        rng: Mutex::new(fastrand::Rng::with_seed(spec.seed)),
        sent: Default::default(),
        snapshot: spec.snapshot.clone(),
    });
    spec.history.lock().unwrap().epochs.insert(name.clone(), 0);
    note(&spec.history, format!("{name} starts"));
    tokio::spawn(heartbeats(node.clone(), spec.replay.clone()));
    let incoming = crate::net::incoming(WORKER_PORT).await?;
    tonic::transport::Server::builder()
        .add_service(tonic::service::interceptor::InterceptedService::new(
            proto::worker_server::WorkerServer::new(ModelWorker(node)),
            TokenCheck::new(&spec.cfg.token),
        ))
        .serve_with_incoming(incoming)
        .await?;
    Ok(())
}

/// Registers, then heartbeats every interval; any failure or a
/// `reregister` answer goes back to registration, by the rules of the
/// real worker's session (`protocol::session`), which this one drives.
/// The model has no long poll: its commands come with the answers.
async fn heartbeats(node: Arc<Node>, replay: Arc<Mutex<bool>>) {
    let mut tick = tokio::time::interval(node.cfg.heartbeat.interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        node.publish();
        if std::mem::take(&mut *replay.lock().unwrap()) {
            replay_reports(&node).await;
        }
        let call = node.session.lock().unwrap().next(false);
        let answer = match call {
            Call::Register => register(&node).await.map(|r| {
                node.session.lock().unwrap().registered(&r);
                None
            }),
            Call::Beat(e) | Call::Take(e) => beat(&node, e).await.map(Some),
        };
        match answer {
            Ok(None) => {}
            Ok(Some(reply)) => {
                let answer = node.session.lock().unwrap().answered(reply);
                match answer {
                    Answer::Commands { commands, .. } => handle(&node, commands),
                    Answer::Reregister => {
                        note(&node.history, format!("{} told to re-register", node.name))
                    }
                }
            }
            Err(err) => {
                note(
                    &node.history,
                    format!("{} {call:?} failed: {err}", node.name),
                );
                node.session.lock().unwrap().failed(call);
            }
        }
        let epoch = node.session.lock().unwrap().epoch();
        node.history
            .lock()
            .unwrap()
            .epochs
            .insert(node.name.clone(), epoch.unwrap_or(0));
    }
}

async fn register(node: &Arc<Node>) -> Result<Registered, rpc::dfs::DfsError> {
    *node.delta.lock().unwrap() = Delta::default();
    let blocks = node
        .disk
        .lock()
        .unwrap()
        .blocks
        .values()
        .map(|(i, _)| *i)
        .collect();
    let req = Registration {
        protocol_version: common::PROTOCOL_VERSION,
        name: node.name.clone(),
        addr: node.addr.clone(),
        rack: node.rack.clone(),
        map_slots: node.cfg.worker(&node.name).map_or(2, |w| w.map_slots),
        reduce_slots: node.cfg.worker(&node.name).map_or(2, |w| w.reduce_slots),
        cache_capacity_bytes: 1 << 20,
        blocks,
        // The model keeps map outputs in memory: the jobs it holds some
        // of stand for the real worker's job directories, whose ended
        // jobs the master has cleaned up.
        job_dirs: node.output_jobs(),
        ..Default::default()
    };
    let resp = node
        .dfs
        .master()
        .register(proto::RegisterRequest::from(req))
        .await?
        .into_inner();
    let resp = Registered::from(resp);
    for id in &resp.delete_blocks {
        node.delete(*id);
    }
    note(
        &node.history,
        format!(
            "{} registered epoch {} ({} orphans deleted)",
            node.name,
            resp.epoch,
            resp.delete_blocks.len()
        ),
    );
    Ok(resp)
}

async fn beat(node: &Arc<Node>, epoch: u64) -> Result<Reply, rpc::dfs::DfsError> {
    let delta = std::mem::take(&mut *node.delta.lock().unwrap());
    let (running_maps, running_reduces) = node.tasks.counts();
    let me = node.cfg.worker(&node.name).expect("configured");
    let req = Heartbeat {
        name: node.name.clone(),
        epoch,
        free_map_slots: me.map_slots.saturating_sub(running_maps),
        free_reduce_slots: me.reduce_slots.saturating_sub(running_reduces),
        resources: Some(Default::default()),
        blocks_added: delta.added.into_values().collect(),
        blocks_removed: delta.removed.into_iter().collect(),
        ..Default::default()
    };
    let resp = node
        .dfs
        .master()
        .heartbeat(proto::HeartbeatRequest::from(req))
        .await?;
    Ok(resp.into_inner().into())
}

/// Carries out commands from a heartbeat or task-report answer.
pub fn handle(node: &Arc<Node>, commands: Vec<Command>) {
    for cmd in commands {
        match cmd {
            Command::Launch(l) => crate::task::launch(node, *l, handle),
            Command::Refuse(r) => crate::task::refuse(node, r, handle),
            Command::KillTask(t) => crate::task::kill(node, t),
            Command::CleanupJob(j) => crate::task::cleanup(node, j),
            Command::DeleteBlock(id) => node.delete(id),
            // The simulated store has no disk to keep a quarantine on.
            Command::QuarantineBlock(id) => node.delete(id),
            Command::Replicate {
                block,
                targets,
                token,
            } => {
                tokio::spawn(replicate(node.clone(), block, targets, token));
            }
            Command::CacheBlock(_)
            | Command::PinBlock(_)
            | Command::UncacheBlock(_)
            | Command::SetCacheCapacity(_) => {}
            // Simulated jobs run without reduce slow-start: their reduces
            // start with every map output in the launch.
            Command::MapOutputs { .. } => {}
        }
    }
}

async fn replicate(node: Arc<Node>, info: BlockInfo, targets: Vec<String>, token: bytes::Bytes) {
    let Some((_, data)) = node.read(info.id) else {
        return;
    };
    for t in targets {
        let res = async {
            let mut conn = node.dfs.worker(&t)?;
            rpc::dfs::write_block(&mut conn, info.into(), data.clone(), &token).await
        }
        .await;
        note(
            &node.history,
            format!(
                "{} replicate block {} to {t}: {}",
                node.name,
                info.id,
                res.map_or_else(|e| e.to_string(), |_| "ok".into())
            ),
        );
    }
}

/// The zombie fault: send again every successful report this incarnation
/// sent, as a late duplicate would arrive. Each is judged stale or not now.
async fn replay_reports(node: &Arc<Node>) {
    let sent = node.sent.lock().unwrap().clone();
    for r in sent {
        let t = r.task;
        let key = (t.job_id, t.is_map, t.index);
        {
            let mut h = node.history.lock().unwrap();
            let stale = h.is_stale(key, t.attempt, &node.name, r.epoch);
            h.reports.push(crate::history::Report {
                task: key,
                attempt: t.attempt,
                worker: node.name.clone(),
                epoch: r.epoch,
                succeeded: true,
                stale,
            });
            h.note(format!(
                "{} replays its report of {key:?} attempt {} (stale: {stale})",
                node.name, t.attempt
            ));
        }
        // Any answer carries this worker's queued commands: carry them out.
        let req = proto::TaskUpdateRequest::from(r);
        if let Ok(resp) = node.dfs.master().task_update(req).await {
            handle(node, Reply::from(resp.into_inner()).commands);
        }
    }
}
