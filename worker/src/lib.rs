//! mr-worker: stores blocks, caches them in a byte-bounded LRU, reports its
//! resources, and (with the MapReduce engine) runs tasks.
//! How it fits with the other crates: `docs/architecture.md`.
//!
//! # Layout
//! The worker's modules are grouped by role; each group's page says what
//! its modules hold.
//!
//! - [`edge`]: the gRPC edge, the only place that names protobuf types: the
//!   server's thin handlers, the clients of the master and of the peers,
//!   the conversions, the handlers' errors, the health probe, the shuffle's
//!   serving side.
//! - [`store`]: the blocks: their files and checksums, the cache, reads,
//!   the write pipeline, the checksum scan and quarantine.
//! - [`task`]: running attempts: launches, the executor and its table, map
//!   and reduce attempts, their input, sort buffer, merge and output parts,
//!   external programs.
//! - [`control`]: the master's side of the conversation: registration and
//!   heartbeats with the resource vector, the commands and how they are
//!   carried out, graceful drain.
//! - [`mem`]: memory handed back to the system and huge pages.
//! - [`node`]: one worker process's owners (blocks, tasks, master link),
//!   held together for the steps that span them.

pub mod control;
pub mod edge;
pub mod mem;
pub mod node;
pub mod store;
pub mod task;

use common::config::ClusterConfig;
use control::{drain, heartbeat};
use edge::{health, service};
use std::future::Future;
use store::{quarantine, scanner};
use tokio::net::TcpListener;

/// Runs worker `name` on `listener` until `shutdown` resolves, then drains
/// for up to `grace` (see [`drain`]) while still serving block reads and
/// shuffle fetches.
pub async fn run(
    cluster: ClusterConfig,
    name: &str,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: std::time::Duration,
) -> anyhow::Result<()> {
    run_with_health(cluster, name, listener, None, shutdown, grace).await
}

/// [`run`], also answering an orchestrator's probes on `health` (see
/// [`health`]) when given.
pub async fn run_with_health(
    mut cluster: ClusterConfig,
    name: &str,
    listener: TcpListener,
    health: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: std::time::Duration,
) -> anyhow::Result<()> {
    // Its port serves every known token (clients read and write blocks);
    // its own calls, to the master and other workers, carry the workers'
    // identity, which no user token can take.
    let tokens = rpc::auth::Tokens::from_config(&cluster);
    cluster.token = cluster.worker_secret().to_string();
    cluster.worker_token = None;
    let tls = rpc::tls::server_config(&cluster, name)?;
    // Dialing the master and other workers, this worker shows its own
    // certificate.
    if let Some(t) = &mut cluster.tls {
        t.me = name.to_string();
    }
    let node = node::Node::open(cluster, name)?;
    tracing::info!(worker = %name, addr = %listener.local_addr()?, rack = %node.me().rack,
        cache = node.blocks().cache().capacity(), "mr-worker listening");
    let hb = tokio::spawn(heartbeat::run(node.clone()));
    let scan = tokio::spawn(scanner::run(
        node.blocks().clone(),
        node.link().clone(),
        node.cluster().dfs.clone(),
    ));
    let probes = health.map(|l| tokio::spawn(health::serve(node.link().clone(), l)));
    let sweeper = tokio::spawn(quarantine::run(node.blocks().clone()));
    let stop = {
        let node = node.clone();
        let hb = hb.abort_handle();
        async move {
            shutdown.await;
            drain::run(node, grace, hb).await;
        }
    };
    let served = service::serve(&node, listener, tls, tokens, stop).await;
    hb.abort();
    scan.abort();
    if let Some(p) = probes {
        p.abort();
    }
    sweeper.abort();
    tracing::info!(worker = %name, "mr-worker stopped");
    served?;
    Ok(())
}
