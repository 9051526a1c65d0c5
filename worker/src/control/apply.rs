//! The master's commands, from a heartbeat's or a task report's answer:
//! task launches, kills and job cleanups go to the [`executor`], block
//! commands (delete, quarantine, cache, pin, replicate, resize) are
//! carried out here.
//! The heartbeat loop and the executor's task reports both call
//! [`handle`]; the executor gets it as a closure ([`on_commands`]), so
//! neither module imports the other and the executor holds no node.

use crate::edge::master_client::MasterLink;
use crate::node::Node;
use crate::store::blocks::Blocks;
use crate::task::executor;
use protocol::Command;
use rpc::dfs::Dfs;
use std::sync::Arc;

/// [`handle`] over `node`, for the executor to call with the commands
/// that come back in a task report's answer.
pub fn on_commands(node: &Arc<Node>) -> executor::OnCommands {
    let node = node.clone();
    Arc::new(move |commands| handle(&node, commands))
}

/// Carries out commands from a heartbeat or task-report answer.
pub fn handle(node: &Arc<Node>, commands: Vec<Command>) {
    for cmd in commands {
        match cmd {
            Command::Launch(spec) => executor::launch(node.tasks(), *spec, on_commands(node)),
            Command::Refuse(r) => executor::refuse(node.tasks(), r, on_commands(node)),
            Command::KillTask(t) => executor::kill(node.tasks(), t),
            Command::CleanupJob(j) => executor::cleanup(node.tasks(), j),
            Command::MapOutputs { job, outputs } => {
                let n = outputs.len();
                let heard = node.tasks().feeds().publish(job, outputs);
                tracing::debug!(
                    job,
                    outputs = n,
                    reduces = heard,
                    "map outputs for running reduces"
                );
            }
            kind => {
                let (blocks, link) = (node.blocks().clone(), node.link().clone());
                tokio::spawn(execute(blocks, link, node.dfs().clone(), kind));
            }
        }
    }
}

/// Carries out one block command from the master.
#[tracing::instrument(skip(blocks, link, dfs))]
async fn execute(blocks: Arc<Blocks>, link: Arc<MasterLink>, dfs: Arc<Dfs>, kind: Command) {
    match kind {
        Command::DeleteBlock(id) => blocks.delete(id),
        Command::QuarantineBlock(id) => crate::store::quarantine::quarantine(&blocks, id),
        Command::CacheBlock(id) => {
            if let Err(e) = blocks.read_block(&link, id, true).await {
                tracing::warn!(block = id, "cannot cache: {e}");
            }
        }
        Command::PinBlock(id) => match blocks.read_block(&link, id, false).await {
            Ok((data, _)) => match blocks.cache().pin(id, &data) {
                Ok(()) => tracing::info!(block = id, "block pinned in the cache"),
                Err(e) => tracing::warn!(block = id, "pin refused: {e}"),
            },
            Err(e) => tracing::warn!(block = id, "cannot pin: {e}"),
        },
        Command::UncacheBlock(id) => {
            blocks.cache().remove(id);
        }
        Command::SetCacheCapacity(bytes) => {
            let evicted = blocks.cache().set_capacity(bytes);
            tracing::info!(bytes, evicted, "cache resized");
        }
        // The executor's, from `handle`.
        Command::Launch(_) | Command::Refuse(_) => {}
        Command::KillTask(_) | Command::CleanupJob(_) | Command::MapOutputs { .. } => {}
        Command::Replicate {
            block: info,
            targets,
            token,
        } => {
            let data = match blocks.read_block(&link, info.id, false).await {
                Ok((d, _)) => d,
                Err(e) => {
                    tracing::warn!(block = info.id, "cannot replicate: {e}");
                    return;
                }
            };
            for t in targets {
                let res = async {
                    let mut conn = dfs.worker(&t)?;
                    crate::edge::peers::write_block(&mut conn, info, data.clone(), &token).await
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
