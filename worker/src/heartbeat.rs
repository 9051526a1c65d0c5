//! Registration and the heartbeat loop, in a task of its own so that a busy
//! worker never misses heartbeats (Ballista #2159), plus the commands that
//! come back in heartbeat responses.

use crate::monitor::ResourceMonitor;
use crate::node::Node;
use proto::command::Kind;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Registers, then heartbeats every interval until the process stops. Any
/// failure or a `reregister` answer sends the worker back to registration,
/// which carries full block and cache reports.
pub async fn run(node: Arc<Node>) {
    let interval = node.cluster.heartbeat.interval;
    let mut monitor = ResourceMonitor::new();
    // CPU usage is a difference between two refreshes: give the first
    // sample, sent with the registration, an interval to measure.
    tokio::time::sleep(sysinfo::MINIMUM_CPU_UPDATE_INTERVAL).await;
    let mut epoch: Option<u64> = None;
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match epoch {
            None => match register(&node, &mut monitor).await {
                Ok(e) => {
                    node.epoch.store(e, Ordering::SeqCst);
                    epoch = Some(e);
                }
                Err(e) => tracing::warn!("registration failed, retrying: {e}"),
            },
            Some(e) => match beat(&node, e, &mut monitor, false).await {
                Ok(true) => {}
                Ok(false) => epoch = None,
                Err(err) => {
                    tracing::warn!("heartbeat failed, will re-register: {err}");
                    epoch = None;
                }
            },
        }
    }
}

async fn register(
    node: &Arc<Node>,
    monitor: &mut ResourceMonitor,
) -> Result<u64, common::dfs::DfsError> {
    node.store.clear_delta();
    node.cache.clear_delta();
    let req = proto::RegisterRequest {
        protocol_version: common::PROTOCOL_VERSION,
        name: node.me.name.clone(),
        addr: node.me.addr.clone(),
        rack: node.me.rack.clone(),
        map_slots: node.me.map_slots,
        reduce_slots: node.me.reduce_slots,
        cache_capacity_bytes: node.cache.capacity(),
        blocks: node.store.report(),
        cached: node.cache.report(),
        cache_used_bytes: node.cache.used(),
        resources: Some(monitor.sample()),
    };
    let resp = node.dfs.master().register(req).await?.into_inner();
    // A new incarnation: the master has re-queued whatever the previous
    // one ran, and would fence its reports, so stop it here too.
    for (_, (_, _, h)) in node.tasks.lock().unwrap().drain() {
        h.abort();
    }
    for id in &resp.delete_blocks {
        node.cache.remove(*id);
        node.store.delete(*id);
    }
    tracing::info!(
        epoch = resp.epoch,
        deleted_orphans = resp.delete_blocks.len(),
        "registered with the master"
    );
    Ok(resp.epoch)
}

/// One heartbeat; `Ok(false)` when the master no longer knows this epoch.
/// `leaving` makes it the last one of a graceful shutdown.
pub async fn beat(
    node: &Arc<Node>,
    epoch: u64,
    monitor: &mut ResourceMonitor,
    leaving: bool,
) -> Result<bool, common::dfs::DfsError> {
    let (blocks_added, blocks_removed) = node.store.take_delta();
    let (cache_added, cache_removed) = node.cache.take_delta();
    let req = proto::HeartbeatRequest {
        name: node.me.name.clone(),
        epoch,
        free_map_slots: node
            .me
            .map_slots
            .saturating_sub(crate::executor::running(node).0),
        free_reduce_slots: node
            .me
            .reduce_slots
            .saturating_sub(crate::executor::running(node).1),
        resources: Some(monitor.sample()),
        blocks_added,
        blocks_removed,
        cache_added,
        cache_removed,
        cache_used_bytes: node.cache.used(),
        draining: node.is_draining(),
        leaving,
    };
    let resp = node.dfs.master().heartbeat(req).await?.into_inner();
    if resp.reregister {
        tracing::info!("the master asked for a new registration");
        return Ok(false);
    }
    handle(node, resp.commands);
    Ok(true)
}

/// Carries out commands from a heartbeat or task-report answer.
pub fn handle(node: &Arc<Node>, commands: Vec<proto::Command>) {
    for cmd in commands {
        match cmd.kind {
            Some(Kind::Launch(l)) => crate::executor::launch(node, l),
            Some(Kind::KillTask(t)) => crate::executor::kill(node, t),
            Some(Kind::CleanupJob(j)) => crate::executor::cleanup(node, j),
            Some(kind) => {
                tokio::spawn(execute(node.clone(), kind));
            }
            None => {}
        }
    }
}

/// Carries out one command from the master.
#[tracing::instrument(skip(node))]
async fn execute(node: Arc<Node>, kind: Kind) {
    match kind {
        Kind::DeleteBlock(id) => {
            node.cache.remove(id);
            node.store.delete(id);
        }
        Kind::CacheBlock(id) => {
            if let Err(e) = node.read_block(id, true).await {
                tracing::warn!(block = id, "cannot cache: {e}");
            }
        }
        Kind::PinBlock(id) => match node.read_block(id, false).await {
            Ok((data, _)) => match node.cache.pin(id, &data) {
                Ok(()) => tracing::info!(block = id, "block pinned in the cache"),
                Err(e) => tracing::warn!(block = id, "pin refused: {e}"),
            },
            Err(e) => tracing::warn!(block = id, "cannot pin: {e}"),
        },
        Kind::UncacheBlock(id) => {
            node.cache.remove(id);
        }
        Kind::SetCacheCapacity(bytes) => {
            let evicted = node.cache.set_capacity(bytes);
            tracing::info!(bytes, evicted, "cache resized");
        }
        Kind::Launch(_) | Kind::KillTask(_) | Kind::CleanupJob(_) => {}
        Kind::Replicate(r) => {
            let Some(info) = r.block else { return };
            let data = match node.read_block(info.id, false).await {
                Ok((d, _)) => d,
                Err(e) => {
                    tracing::warn!(block = info.id, "cannot replicate: {e}");
                    return;
                }
            };
            for t in r.targets {
                let res = async {
                    let mut conn = node.dfs.worker(&t)?;
                    common::dfs::write_block(&mut conn, info, data.clone()).await
                }
                .await;
                match res {
                    Ok(()) => tracing::info!(block = info.id, target = %t, "block replicated"),
                    Err(e) => {
                        tracing::warn!(block = info.id, target = %t, "replication failed: {e}")
                    }
                }
            }
        }
    }
}
