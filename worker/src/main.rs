//! mr-worker: parse flags, load the config, bind, run until SIGINT/SIGTERM,
//! then drain.

use anyhow::Context;
use clap::Parser;
use common::config::ClusterConfig;
use std::path::PathBuf;

/// A worker of a mini-MapReduce cluster: stores and caches blocks, reports
/// its resources, runs tasks. Its address, rack, slots, cache size and data
/// directory come from its entry in the cluster file.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// The cluster file (`cluster.toml`) shared by every process.
    #[arg(long, short = 'c', env = "MR_CONFIG")]
    config: PathBuf,
    /// This worker's name: its `[[workers]]` entry in the cluster file.
    #[arg(long, short = 'n')]
    name: String,
    /// On SIGTERM, how long running tasks may take to finish before they
    /// are handed back to the master, and the master may take to copy this
    /// worker's blocks elsewhere (decommissioning) before it leaves anyway
    /// (e.g. 30s, 2m, 0 to hand back and leave at once).
    #[arg(long, env = "MR_DRAIN_TIMEOUT", default_value = "30s", value_parser = grace)]
    drain_timeout: std::time::Duration,
    /// Listen here for an orchestrator's probes (plain HTTP, no token):
    /// `/healthz` (alive) and `/readyz` (registered, not draining, holding
    /// no replica the master still needs), e.g.
    /// `0.0.0.0:7180`. None by default.
    #[arg(long, env = "MR_HEALTH_ADDR")]
    health_addr: Option<String>,
    /// Bind the gRPC port here instead of this worker's `addr` in the
    /// cluster file, which stays what others dial: `0.0.0.0:7100` where
    /// that name resolves to this host only once it runs (a pod, a task).
    #[arg(long, env = "MR_LISTEN")]
    listen: Option<String>,
}

fn grace(s: &str) -> Result<std::time::Duration, String> {
    common::units::parse_duration(s).map_err(|e| e.to_string())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    worker::mem::heap::hold_mmap_threshold();
    common::logging::init("info");
    let args = Args::parse();
    let cfg = ClusterConfig::load(&args.config)?;
    let me = cfg
        .worker(&args.name)
        .with_context(|| {
            format!(
                "worker {:?} is not listed in {}",
                args.name,
                args.config.display()
            )
        })?
        .clone();
    let bind = args.listen.as_deref().unwrap_or(&me.addr);
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .with_context(|| format!("cannot listen on {bind}"))?;
    let health = match &args.health_addr {
        Some(a) => Some(
            tokio::net::TcpListener::bind(a)
                .await
                .with_context(|| format!("cannot listen on --health-addr {a}"))?,
        ),
        None => None,
    };
    worker::run_with_health(
        cfg,
        &args.name,
        listener,
        health,
        common::shutdown::signal(),
        args.drain_timeout,
    )
    .await
}
