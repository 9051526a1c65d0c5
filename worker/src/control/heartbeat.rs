//! Registration, the heartbeat loop, and the long poll that brings the
//! master's commands between heartbeats, in a task of their own so that a
//! busy worker never misses heartbeats (Ballista #2159). The commands that
//! come back are carried out by [`crate::control::apply`]; the calls themselves
//! are [`crate::edge::master_client`]'s.
//!
//! Heartbeats stay the liveness signal, at their interval. Launch on
//! submit is the long poll's: the master answers it as soon as this
//! worker's outbox holds commands, and the heartbeat loop then takes them
//! (`TakeCommands`). The poll's answer carries none itself, so one lost on
//! a broken connection loses nothing: the commands wait for the next
//! heartbeat.
//!
//! Which call comes next, and what an answer or a failure does to the
//! incarnation, is `protocol::session`'s, shared with the simulated worker;
//! this module makes the calls.

use crate::control::monitor::ResourceMonitor;
use crate::edge::master_client::{self, MasterLink};
use crate::node::Node;
use protocol::session::{Answer, Call, Session};
use protocol::{Heartbeat, Poll, Registered, Registration, Reply};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{watch, Notify};

/// How long one long poll may wait at the master (which caps it at a
/// minute); then it is asked again.
const POLL_WAIT: Duration = Duration::from_secs(30);
/// Beyond [`POLL_WAIT`], how long a poll's answer may take before the
/// poll is given up and asked again (HTTP/2 keep-alives usually fail a
/// dead connection sooner).
const POLL_SLACK: Duration = Duration::from_secs(10);
/// The pause after a failed poll (a master restarting), before the next.
const POLL_RETRY: Duration = Duration::from_millis(500);

/// Between the long poll and the heartbeat loop.
#[derive(Default)]
struct Wakeups {
    /// The master has commands: take them now.
    ring: Notify,
    /// The heartbeat loop has been to the master since the last ring: the
    /// poll may wait again (before that, the outbox is still full and the
    /// poll would answer at once).
    taken: Notify,
}

/// Registers, then heartbeats every interval until the process stops, and
/// takes the master's commands whenever the long poll says there are some.
/// Any failure or a `reregister` answer sends the worker back to
/// registration, which carries full block and cache reports.
pub async fn run(node: Arc<Node>) {
    let (epoch_tx, epoch_rx) = watch::channel(0u64);
    let wake = Wakeups::default();
    // One task: the drain's abort of it stops both.
    tokio::join!(
        beats(&node, epoch_tx, &wake),
        listen(node.link(), epoch_rx, &wake)
    );
}

async fn beats(node: &Arc<Node>, epoch_tx: watch::Sender<u64>, wake: &Wakeups) {
    let interval = node.cluster().heartbeat.interval;
    let mut monitor = ResourceMonitor::new();
    // CPU usage is a difference between two refreshes: give the first
    // sample, sent with the registration, an interval to measure.
    tokio::time::sleep(sysinfo::MINIMUM_CPU_UPDATE_INTERVAL).await;
    let mut session = Session::new();
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let rung = tokio::select! {
            _ = tick.tick() => false,
            _ = wake.ring.notified(), if session.epoch().is_some() => true,
        };
        let was = session.epoch();
        let call = session.next(rung);
        let answer = match call {
            Call::Register => register(node, &mut monitor).await.map(|r| {
                node.link().set_epoch(r.epoch);
                session.registered(&r);
                None
            }),
            Call::Take(e) => master_client::take_commands(node.link(), e).await.map(Some),
            Call::Beat(e) => beat(node, e, &mut monitor, false).await.map(Some),
        };
        match answer {
            Ok(Some(reply)) => match session.answered(reply) {
                Answer::Commands { commands, .. } => crate::control::apply::handle(node, commands),
                Answer::Reregister => tracing::info!("the master asked for a new registration"),
            },
            Ok(None) => {}
            Err(e) => {
                match call {
                    Call::Register => tracing::warn!("registration failed, retrying: {e}"),
                    // Not a heartbeat: a failure here says nothing of
                    // liveness, and the commands stay queued for the next.
                    Call::Take(_) => tracing::warn!("taking the master's commands failed: {e}"),
                    Call::Beat(_) => tracing::warn!("heartbeat failed, will re-register: {e}"),
                }
                session.failed(call);
            }
        }
        if session.epoch() != was {
            epoch_tx.send_replace(session.epoch().unwrap_or(0));
        }
        wake.taken.notify_one();
    }
}

/// The long poll: asks the master to answer when it has commands for this
/// incarnation, and rings the heartbeat loop when it does.
async fn listen(link: &MasterLink, mut epoch: watch::Receiver<u64>, wake: &Wakeups) {
    loop {
        let e = *epoch.borrow_and_update();
        if e == 0 {
            if epoch.changed().await.is_err() {
                return;
            }
            continue;
        }
        let answer = tokio::time::timeout(
            POLL_WAIT + POLL_SLACK,
            master_client::await_commands(link, e, POLL_WAIT),
        )
        .await;
        match answer {
            Ok(Ok(Poll::Ready)) => {
                wake.ring.notify_one();
                wake.taken.notified().await;
            }
            Ok(Ok(Poll::Reregister)) => {
                // The heartbeat loop finds out too, and registers anew.
                let _ = epoch.changed().await;
            }
            Ok(Ok(Poll::Idle)) => {}
            Ok(Ok(Poll::Unsupported)) => {
                tracing::info!("the master has no long poll: commands come with heartbeats");
                std::future::pending::<()>().await;
            }
            Ok(Err(s)) => {
                tracing::debug!("long poll failed: {s}");
                tokio::time::sleep(POLL_RETRY).await;
            }
            Err(_) => tracing::debug!("long poll unanswered; asking again"),
        }
    }
}

/// Registers with full block and cache reports; a new incarnation stops
/// whatever the previous one ran.
async fn register(
    node: &Arc<Node>,
    monitor: &mut ResourceMonitor,
) -> Result<Registered, crate::edge::master_client::LinkError> {
    let _order = node.link().in_order().await;
    node.blocks().store().clear_delta();
    node.blocks().cache().clear_delta();
    let req = Registration {
        protocol_version: common::PROTOCOL_VERSION,
        name: node.me().name.clone(),
        addr: node.me().addr.clone(),
        rack: node.me().rack.clone(),
        map_slots: node.me().map_slots,
        reduce_slots: node.me().reduce_slots,
        cache_capacity_bytes: node.blocks().cache().capacity(),
        blocks: node.blocks().store().report(),
        cached: node.blocks().cache().report(),
        cache_used_bytes: node.blocks().cache().used(),
        resources: monitor.sample(),
        job_dirs: node.tasks().job_dirs(),
    };
    let resp = master_client::register(node.link(), req).await?;
    // A new incarnation: the master has re-queued whatever the previous
    // one ran, and would fence its reports, so stop it here too.
    node.tasks().table().abort_all();
    for id in &resp.delete_blocks {
        node.blocks().delete(*id);
    }
    tracing::info!(
        epoch = resp.epoch,
        deleted_orphans = resp.delete_blocks.len(),
        "registered with the master"
    );
    Ok(resp)
}

/// One heartbeat, and the master's answer, whose word on stopping this
/// worker it records unless the answer asks for a new registration; the
/// commands are the caller's. `leaving` makes it the last one of a
/// graceful shutdown.
pub async fn beat(
    node: &Arc<Node>,
    epoch: u64,
    monitor: &mut ResourceMonitor,
    leaving: bool,
) -> Result<Reply, crate::edge::master_client::LinkError> {
    let order = node.link().in_order().await;
    let (blocks_added, blocks_removed) = node.blocks().store().take_delta();
    let (cache_added, cache_removed) = node.blocks().cache().take_delta();
    let (maps, reduces) = node.tasks().table().counts();
    // Read once: the answer to a draining heartbeat is what the drain waits on.
    let draining = node.link().is_draining();
    let req = Heartbeat {
        name: node.me().name.clone(),
        epoch,
        free_map_slots: node.me().map_slots.saturating_sub(maps),
        free_reduce_slots: node.me().reduce_slots.saturating_sub(reduces),
        resources: Some(monitor.sample()),
        blocks_added,
        blocks_removed,
        cache_added,
        cache_removed,
        cache_used_bytes: node.blocks().cache().used(),
        draining,
        leaving,
        progress: crate::task::table::progress(node.tasks().table()),
    };
    let resp = master_client::heartbeat(node.link(), req)
        .await
        .inspect_err(|_| {
            node.link().safety().unanswered(draining);
        })?;
    drop(order);
    if !resp.reregister && !leaving {
        node.link().safety().heard(draining, resp.stop);
    }
    Ok(resp)
}
