//! mr-worker: stores blocks, caches them in a byte-bounded LRU, reports its
//! resources, and (with the MapReduce engine) runs tasks.
//! How it fits with the other crates: `docs/architecture.md`.
//!
//! # Layout
//! The gRPC edge is [`service`] (the server), [`master`] and [`peer`] (the
//! clients) and [`convert`]: only these name protobuf types; everything
//! else works on the worker's own ([`block`], [`launch`], [`commands`]).
//!
//! - [`block`]: what a block is and where its copies are.
//! - [`store`]: one file per block plus its CRC32C, read through `memmap2`.
//! - [`cache`]: the byte-bounded LRU block cache and its change log.
//! - [`monitor`]: the atop-like resource vector from `sysinfo`.
//! - [`node`]: what one worker process owns, shared by everything below.
//! - [`scanner`]: the periodic checksum scan of every stored block.
//! - [`quarantine`]: blocks the master does not know, kept for a grace period.
//! - [`heartbeat`]: registration and heartbeats.
//! - [`heap`]: big buffers go back to the system when freed.
//! - [`master`]: the calls to the master.
//! - [`commands`]: the master's commands from heartbeat and report answers.
//! - [`launch`]: a task launch as the worker runs it.
//! - [`executor`]: task lifecycle: launch, report (fenced), kill, clean up.
//! - [`tasks`]: the table of running attempts the node owns.
//! - [`progress`]: an attempt's progress counter, which the master times out.
//! - [`outcome`]: what an attempt reports: its metrics or its failure.
//! - [`hold`]: the fault tests' hold of a job's attempts until a file exists.
//! - [`input`]: a map's block read, cache → disk → remote, with its locality.
//! - [`maptask`], [`reducetask`]: the two kinds of attempt.
//! - [`code`]: what an attempt runs: built-in code or an external process.
//! - [`external`]: Streaming commands and job programs as child processes.
//! - [`mapout`], [`merge`]: map-side sort and spill, reduce-side merge.
//! - [`output`]: output parts written record-aligned into the block store.
//! - [`shuffle`]: serving map-output partitions to reducers.
//! - [`peer`]: the calls to other workers (pipeline, reads, shuffle).
//! - [`service`]: the thin gRPC handlers (block writes and reads).
//! - [`error`]: the handlers' failures and their gRPC codes.
//! - [`convert`]: protobuf to the worker's types and back.
//! - [`drain`]: graceful shutdown: finish or hand back tasks, wait for the
//!   master to copy the blocks elsewhere, say goodbye.
//! - [`health`]: the plain-HTTP liveness and readiness probe endpoint.

pub mod block;
pub mod cache;
pub mod code;
pub mod command;
pub mod commands;
pub mod convert;
pub mod drain;
pub mod error;
pub mod executor;
pub mod external;
pub mod feeds;
pub mod health;
pub mod heap;
pub mod heartbeat;
pub mod hold;
pub mod hugepages;
pub mod input;
pub mod launch;
pub mod mapout;
pub mod maptask;
pub mod master;
pub mod merge;
pub mod messages;
pub mod monitor;
pub mod node;
pub mod outcome;
pub mod output;
pub mod partition;
pub mod peer;
pub mod pipeline;
pub mod prealloc;
pub mod progress;
pub mod quarantine;
pub mod reads;
pub mod reducetask;
pub mod scanner;
pub mod service;
pub mod shuffle;
pub mod store;
pub mod tasks;

use common::config::ClusterConfig;
use rpc::auth::TokenCheck;
use std::future::Future;
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
    tracing::info!(worker = %name, addr = %listener.local_addr()?, rack = %node.me.rack,
        cache = node.cache.capacity(), "mr-worker listening");
    let hb = tokio::spawn(heartbeat::run(node.clone()));
    let scan = tokio::spawn(scanner::run(node.clone()));
    let probes = health.map(|l| tokio::spawn(health::serve(node.clone(), l)));
    let sweeper = tokio::spawn(quarantine::run(node.clone()));
    let stop = {
        let node = node.clone();
        let hb = hb.abort_handle();
        async move {
            shutdown.await;
            drain::run(node, grace, hb).await;
        }
    };
    let mut server = tonic::transport::Server::builder()
        .initial_stream_window_size(rpc::dfs::STREAM_WINDOW)
        .initial_connection_window_size(rpc::dfs::CONNECTION_WINDOW);
    if let Some(t) = tls {
        tracing::info!(worker = %name, "gRPC over TLS only");
        server = server.tls_config(t)?;
    }
    let served = server
        .add_service(tonic::service::interceptor::InterceptedService::new(
            service::server(node.clone()),
            TokenCheck::with_tokens(tokens),
        ))
        // Nagle's algorithm off, as on the master (see `master::no_delay`):
        // shuffle fetches and block writes are answered in small writes too.
        .serve_with_incoming_shutdown(
            tokio_stream::StreamExt::map(
                tokio_stream::wrappers::TcpListenerStream::new(listener),
                |s| {
                    let s = s?;
                    let _ = s.set_nodelay(true);
                    Ok::<_, std::io::Error>(s)
                },
            ),
            stop,
        )
        .await;
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
