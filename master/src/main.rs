//! mr-master: parse flags, load the config, bind, run until SIGINT/SIGTERM.

use anyhow::Context;
use clap::Parser;
use common::config::ClusterConfig;
use std::path::PathBuf;

/// The coordinator of a mini-MapReduce cluster: namespace, block and cache
/// metadata, worker membership and re-replication; with `http_addr` in the
/// config, a web UI, REST API and Prometheus metrics.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// The cluster file (`cluster.toml`) shared by every process.
    #[arg(long, short = 'c', env = "MR_CONFIG")]
    config: PathBuf,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    common::logging::init("info");
    let args = Args::parse();
    let cfg = ClusterConfig::load(&args.config)?;
    tracing::info!(config = %args.config.display(), ?cfg.dfs, ?cfg.heartbeat, workers = cfg.workers.len(), "effective config");
    let listener = tokio::net::TcpListener::bind(&cfg.master.addr)
        .await
        .with_context(|| format!("cannot listen on {}", cfg.master.addr))?;
    let http = match &cfg.master.http_addr {
        Some(a) => Some(
            tokio::net::TcpListener::bind(a)
                .await
                .with_context(|| format!("cannot listen on http_addr {a}"))?,
        ),
        None => None,
    };
    master::run_with_http(cfg, listener, http, common::shutdown::signal()).await
}
