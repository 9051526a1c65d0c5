//! mr-master: the namespace (durable), block and cache tables, membership
//! and re-replication.
//!
//! # Layout (see `docs/architecture.md`)
//! - [`grpc`]: the edge: protobuf to domain types and back (a worker's
//!   messages in `protocol::wire`), thin handlers.
//! - [`core`]: the coordinator: each event turned into calls on the owners
//!   below, their commands delivered, the policy asked once.
//! - [`blocks`]: the namespace and its edit log, files being written, block
//!   and cache tables, pins, re-replication.
//! - [`cluster`]: membership (workers, epochs, heartbeats), each worker's
//!   command queue, `cluster status`, resource history.
//! - [`jobs`]: jobs, tasks, attempts, fencing, submission, launches, task
//!   reports, histories, recovery across a restart, the policy's state.
//! - [`http`]: the REST API, the web UI and `/metrics` on `http_addr`.
//! - [`stats`]: decision-latency and cache counters only `/metrics` reads.
//! - [`lockmark`]: which thread holds the coordinator's lock, checked by
//!   every file function of the job side.
//! - [`error`]: the master's errors.
//!
//! Imports run one way: `grpc` and `http` → `core` → the owners; `jobs`
//! reads `blocks`; `blocks` and `jobs` read `cluster` and put commands in
//! the event's [`cluster::Outbox`], which `core` flushes into it. The
//! commands, heartbeats, launches and task reports are the `protocol`
//! crate's plain types, so `cluster` imports no owner: no file imports
//! another that imports it. `tests/architecture.rs` fails on an import
//! against these rules.

pub mod blocks;
pub mod cluster;
pub mod core;
pub mod error;
pub mod grpc;
pub mod http;
pub mod jobs;
pub mod lockmark;
pub mod stats;

use crate::core::MasterState;
use crate::core::Shared;
use common::config::ClusterConfig;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::net::TcpListener;

/// Runs the master on `listener` until `shutdown` resolves, then flushes the
/// edit log. The caller injects the socket so tests can bind port 0.
pub async fn run(
    cfg: ClusterConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let state = open(cfg)?;
    tracing::info!(addr = %listener.local_addr()?, "mr-master listening");
    serve(state, no_delay(listener), shutdown).await
}

/// Runs the master as [`run`] does and, when `http` is given (the caller
/// binds `http_addr`), its web UI, REST API and `/metrics` there, until the
/// same `shutdown`.
pub async fn run_with_http(
    cfg: ClusterConfig,
    listener: TcpListener,
    http: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let Some(http) = http else {
        return run(cfg, listener, shutdown).await;
    };
    // A bad certificate stops the master at start, not just its web UI.
    rpc::tls::web_config(&cfg, "master")?;
    let state = open(cfg)?;
    tracing::info!(addr = %listener.local_addr()?, "mr-master listening");
    // The web server stops when gRPC serving has (dropping `stop`), so the
    // edit log is flushed before the process can exit.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let web = tokio::spawn(http::serve(state.clone(), http, async {
        let _ = stopped.await;
    }));
    let served = serve(state, no_delay(listener), shutdown).await;
    drop(stop);
    http::join(web).await;
    served
}

/// The accepted connections, with Nagle's algorithm off. An answer is
/// several small writes (HTTP/2 headers, data, trailers): with it on, the
/// second waits for the client's delayed acknowledgement of the first, up
/// to 40 ms a call, which made every launch on submit (a long poll's answer,
/// then `TakeCommands`) take 80 ms on loopback. Clients set it already
/// (`rpc::dfs`).
pub fn no_delay(
    listener: TcpListener,
) -> impl tokio_stream::Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    use tokio_stream::StreamExt;
    tokio_stream::wrappers::TcpListenerStream::new(listener).map(|s| {
        let s = s?;
        // Only a latency matter: a socket that refuses keeps serving.
        let _ = s.set_nodelay(true);
        Ok(s)
    })
}

/// Opens the master's state from its data directory (snapshot + edit log).
pub fn open(cfg: ClusterConfig) -> anyhow::Result<Shared> {
    Ok(Arc::new(Mutex::new(MasterState::open(cfg, now())?)))
}

/// Serves `state` over any stream of connections until `shutdown`
/// resolves, then flushes the edit log. [`run`] passes a TCP listener; the
/// deterministic simulation (`simtest/`) passes turmoil's simulated sockets
/// and keeps `state` to check its invariants.
pub async fn serve<I, IO, IE>(
    state: Shared,
    incoming: I,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()>
where
    I: tokio_stream::Stream<Item = Result<IO, IE>>,
    IO: tokio::io::AsyncRead
        + tokio::io::AsyncWrite
        + tonic::transport::server::Connected
        + Unpin
        + Send
        + 'static,
    IE: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    // The certificate files are read off the lock: the web server may
    // already be serving on the state (`run_with_http`).
    let cfg = crate::core::lock::lock(&state, "start").cfg().clone();
    let tls = rpc::tls::server_config(&cfg, "master")?;
    let (interval, token) = (cfg.heartbeat.interval, rpc::auth::Tokens::from_config(&cfg));
    let mut server = tonic::transport::Server::builder();
    if let Some(t) = tls {
        tracing::info!("gRPC over TLS only; callers need a certificate of the cluster CA");
        server = server.tls_config(t)?;
    }
    let bg = tokio::spawn(background(state.clone(), interval));
    let svc = grpc::service(state.clone(), token);
    // Long polls answer first, or the graceful stop would wait them out.
    let shutdown = {
        let state = state.clone();
        async move {
            shutdown.await;
            crate::core::lock::lock(&state, "shutdown").close_waits();
        }
    };
    let served = server
        .add_service(svc)
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await;
    bg.abort();
    let mut s = crate::core::lock::lock(&state, "shutdown");
    let abandoned = s.abandon_jobs("the master shut down while the job ran; resubmit it");
    if abandoned > 0 {
        tracing::warn!(jobs = abandoned, "unfinished jobs failed at shutdown");
    }
    s.sync()?;
    drop(s);
    tracing::info!("mr-master stopped; edit log flushed");
    served?;
    Ok(())
}

/// The master's clock: `std::time::Instant::now()` in the daemon, and the
/// runtime's paused, simulated clock under turmoil (tokio's `Instant::now`
/// reads the paused clock when there is one and the system clock otherwise),
/// so that heartbeat expiry is deterministic in the simulation.
pub fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// Liveness and re-replication, at half the heartbeat interval so that a
/// death is noticed within one interval of its deadline.
async fn background(state: Shared, interval: std::time::Duration) {
    let mut tick = tokio::time::interval(interval / 2);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let now = now();
        let mut s = crate::core::lock::lock(&state, "tick");
        s.on_tick(now);
    }
}
