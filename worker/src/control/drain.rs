//! Graceful shutdown. On SIGTERM a worker stops taking tasks (its
//! heartbeats say it drains, so the master offers it nothing, and a launch
//! already on its way is handed back), lets what it runs finish within a
//! grace period, hands back whatever is still running after it, and sends a
//! last heartbeat so the master marks it gone at once instead of after the
//! expiry interval (YARN's graceful decommission, without the wait for
//! whole applications: a finished map's output is re-run elsewhere, as for
//! any lost worker).
//!
//! Its blocks are drained too, within the same grace period: a draining
//! heartbeat is a request to decommission this incarnation (the master's
//! `blocks/decommission.rs`, HDFS's decommissioning), so the master copies
//! what it holds to other workers while it keeps serving reads, and answers
//! each heartbeat with how many blocks are left. The worker leaves once
//! none is, so that stopping workers one after another at replication 2
//! never takes a block's last replica. It leaves at once when nothing can
//! be copied (every other worker is leaving too: a whole cluster stopping),
//! and without waiting when the master does not answer.

use crate::control::monitor::ResourceMonitor;
use crate::node::Node;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::AbortHandle;

/// How long the last heartbeat may take before the worker exits anyway;
/// the master's expiry covers a lost one.
const LAST_BEAT: Duration = Duration::from_secs(5);

/// Whether the drain may stop waiting for the blocks: the master said
/// none is left to copy, or has not answered a draining heartbeat for
/// `silence` (since `since_ms`, the drain's start, or its last answer).
fn blocks_done(left: Option<(u64, u64)>, since_ms: u64, now_ms: u64, silence: Duration) -> bool {
    match left {
        Some((0, _)) => true,
        Some((_, at)) => now_ms.saturating_sub(at.max(since_ms)) > silence.as_millis() as u64,
        None => now_ms.saturating_sub(since_ms) > silence.as_millis() as u64,
    }
}

/// Drains `node`, then stops its heartbeat loop (`heartbeat`) and says
/// goodbye to the master. Returns when the gRPC server may stop.
#[tracing::instrument(skip_all, fields(worker = %node.me().name))]
pub async fn run(node: Arc<Node>, grace: Duration, heartbeat: AbortHandle) {
    node.link().safety().reset();
    node.link().start_draining();
    let running = node.tasks().table().len();
    tracing::info!(
        running,
        ?grace,
        "draining: no new tasks; the master copies this worker's blocks elsewhere"
    );
    let deadline = tokio::time::Instant::now() + grace;
    let since = common::now_ms();
    // Three heartbeats unanswered: the master is away, and copies nothing.
    let silence = node.cluster().heartbeat.interval * 3 + Duration::from_secs(1);
    let registered = node.link().epoch() != 0;
    let mut said = None;
    // Attempts remove themselves once their report is through; the
    // heartbeat loop, still running, brings the master's count of blocks.
    loop {
        let left = node.link().safety().left();
        let blocks = !registered
            || node.link().safety().away()
            || blocks_done(left, since, common::now_ms(), silence);
        if node.tasks().table().is_empty() && blocks {
            if registered && left.is_some() {
                if node.link().safety().unsafe_to_stop() {
                    tracing::warn!("no other worker can take a copy of what is left here (all are leaving): leaving anyway");
                } else {
                    tracing::info!("the master says every block here is safe elsewhere");
                }
            }
            break;
        }
        if tokio::time::Instant::now() >= deadline {
            if let (Some((n, _)), false) = (left, blocks) {
                tracing::warn!(blocks_left = n,
                    "grace period over: leaving with blocks not yet copied elsewhere (the master re-replicates them from the other replicas)");
            }
            break;
        }
        let n = left.map(|(n, _)| n);
        if n != said && n.is_some_and(|n| n > 0) {
            tracing::info!(
                blocks_left = n.unwrap_or(0),
                "waiting for the master to copy this worker's blocks elsewhere"
            );
        }
        said = n;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let epoch = node.link().epoch();
    for ((job_id, is_map, index), r) in node.tasks().table().take_all() {
        r.handle.join.abort();
        let t = protocol::TaskRef {
            job_id,
            is_map,
            index,
            attempt: r.attempt,
        };
        crate::task::executor::hand_back(
            node.tasks().clone(),
            t,
            epoch,
            crate::control::apply::on_commands(&node),
        )
        .await;
    }
    heartbeat.abort();
    if epoch == 0 {
        tracing::info!("never registered: nothing to tell the master");
        return;
    }
    let mut monitor = ResourceMonitor::new();
    match tokio::time::timeout(
        LAST_BEAT,
        crate::control::heartbeat::beat(&node, epoch, &mut monitor, true),
    )
    .await
    {
        Ok(Ok(reply)) => {
            tracing::info!("last heartbeat sent: the master has let this worker go");
            if !reply.reregister {
                crate::control::apply::handle(&node, reply.commands);
            }
        }
        Ok(Err(e)) => {
            tracing::warn!("last heartbeat failed (the master will expire this worker): {e}")
        }
        Err(_) => tracing::warn!("last heartbeat timed out (the master will expire this worker)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::safety::Safety;
    use protocol::StopAnswer;

    fn stop(unsafe_to_stop: bool, blocks_to_copy: u64) -> StopAnswer {
        StopAnswer {
            unsafe_to_stop,
            blocks_to_copy,
        }
    }

    /// The drain waits for the master's count to reach 0, but not for a
    /// master that does not answer, and never on an answer from before
    /// the drain.
    #[test]
    fn the_drain_waits_for_the_masters_word_or_its_silence() {
        let s = Duration::from_secs(2);
        let safety = Safety::default();
        safety.heard(false, stop(true, 0));
        assert!(safety.unsafe_to_stop() && safety.left().is_none());
        assert!(!blocks_done(safety.left(), 1_000, 2_000, s));
        assert!(blocks_done(safety.left(), 1_000, 3_001, s));
        safety.heard(true, stop(true, 4));
        let (n, at) = safety.left().unwrap();
        assert_eq!(n, 4);
        assert!(!blocks_done(safety.left(), 0, at + 1_000, s));
        assert!(blocks_done(safety.left(), 0, at + 2_001, s));
        safety.unanswered(true);
        assert!(safety.away());
        safety.heard(true, stop(false, 0));
        assert!(!safety.unsafe_to_stop() && !safety.away());
        assert!(blocks_done(safety.left(), 0, 0, s));
        safety.reset();
        assert!(safety.left().is_none());
    }
}
