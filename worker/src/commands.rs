//! The master's commands, from a heartbeat's or a task report's answer:
//! task launches, kills and job cleanups go to the [`executor`], block
//! commands (delete, quarantine, cache, pin, replicate, resize) are
//! carried out here.
//! The heartbeat loop and the executor's task reports both call
//! [`handle`]; the executor gets it as a function argument, so neither
//! module imports the other.

use crate::executor;
use crate::node::Node;
use proto::command::Kind;
use std::sync::Arc;

/// Carries out commands from a heartbeat or task-report answer.
pub fn handle(node: &Arc<Node>, commands: Vec<proto::Command>) {
    for cmd in commands {
        match cmd.kind {
            Some(Kind::Launch(l)) => executor::launch(node, l, handle),
            Some(Kind::KillTask(t)) => executor::kill(node, t),
            Some(Kind::CleanupJob(j)) => executor::cleanup(node, j),
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
        Kind::QuarantineBlock(id) => crate::quarantine::quarantine(&node, id),
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
                    rpc::dfs::write_block(&mut conn, info, data.clone()).await
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
