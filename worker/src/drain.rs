//! Graceful shutdown. On SIGTERM a worker stops taking tasks (its
//! heartbeats say it drains, so the master offers it nothing, and a launch
//! already on its way is handed back), lets what it runs finish within a
//! grace period, hands back whatever is still running after it, and sends a
//! last heartbeat so the master marks it gone at once instead of after the
//! expiry interval (YARN's graceful decommission, without the wait for
//! whole applications: a finished map's output is re-run elsewhere, as for
//! any lost worker).

use crate::monitor::ResourceMonitor;
use crate::node::Node;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::AbortHandle;

/// How long the last heartbeat may take before the worker exits anyway;
/// the master's expiry covers a lost one.
const LAST_BEAT: Duration = Duration::from_secs(5);

/// Drains `node`, then stops its heartbeat loop (`heartbeat`) and says
/// goodbye to the master. Returns when the gRPC server may stop.
#[tracing::instrument(skip_all, fields(worker = %node.me.name))]
pub async fn run(node: Arc<Node>, grace: Duration, heartbeat: AbortHandle) {
    node.draining.store(true, Ordering::SeqCst);
    let running = node.tasks.len();
    tracing::info!(running, ?grace, "draining: no new tasks");
    let deadline = tokio::time::Instant::now() + grace;
    // Attempts remove themselves once their report is through.
    while !node.tasks.is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let epoch = node.epoch.load(Ordering::SeqCst);
    for ((job_id, is_map, index), r) in node.tasks.take_all() {
        r.handle.abort();
        let t = crate::launch::TaskRef {
            job_id,
            is_map,
            index,
            attempt: r.attempt,
        };
        crate::executor::hand_back(node.clone(), t, epoch, crate::commands::handle).await;
    }
    heartbeat.abort();
    if epoch == 0 {
        tracing::info!("never registered: nothing to tell the master");
        return;
    }
    let mut monitor = ResourceMonitor::new();
    match tokio::time::timeout(
        LAST_BEAT,
        crate::heartbeat::beat(&node, epoch, &mut monitor, true),
    )
    .await
    {
        Ok(Ok(_)) => tracing::info!("last heartbeat sent: the master has let this worker go"),
        Ok(Err(e)) => {
            tracing::warn!("last heartbeat failed (the master will expire this worker): {e}")
        }
        Err(_) => tracing::warn!("last heartbeat timed out (the master will expire this worker)"),
    }
}
