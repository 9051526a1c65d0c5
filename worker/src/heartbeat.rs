//! Registration and the heartbeat loop, in a task of its own so that a busy
//! worker never misses heartbeats (Ballista #2159). The commands that come
//! back in heartbeat answers are carried out by [`crate::commands`].

use crate::monitor::ResourceMonitor;
use crate::node::Node;
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
        resources: Some(monitor.sample().into()),
    };
    let resp = node.dfs.master().register(req).await?.into_inner();
    // A new incarnation: the master has re-queued whatever the previous
    // one ran, and would fence its reports, so stop it here too.
    node.tasks.abort_all();
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
    let (maps, reduces) = node.tasks.counts();
    let req = proto::HeartbeatRequest {
        name: node.me.name.clone(),
        epoch,
        free_map_slots: node.me.map_slots.saturating_sub(maps),
        free_reduce_slots: node.me.reduce_slots.saturating_sub(reduces),
        resources: Some(monitor.sample().into()),
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
    crate::commands::handle(node, resp.commands);
    Ok(true)
}
