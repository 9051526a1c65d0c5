//! mr-master: parse flags, load the config, bind, run until SIGINT/SIGTERM.

use anyhow::Context;
use clap::{Parser, ValueEnum};
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
    /// Start-up recovery of a corrupt edit log, as HDFS's NameNode recovery
    /// mode. Without it the master refuses to start when `edits.log` is
    /// corrupt anywhere but in its last record, and names the byte offset
    /// and the last good txid. `truncate` keeps every record before the
    /// corrupt one, copies the original log to
    /// `edits.log.corrupt-<unix-ts>` beside it, cuts the log there, logs
    /// what was dropped, then starts; in every metadata directory
    /// (`data_dir` and `data_dirs`), and the start then takes the newest
    /// copy. Edits after the corruption are lost unless another directory
    /// holds them: restoring from a backup is the alternative. A corrupt
    /// snapshot (`fsimage`) is still refused: there is nothing safe to cut.
    #[arg(long, value_enum, value_name = "MODE")]
    recover: Option<Recover>,
    /// Bind gRPC here instead of `[master] addr`, which stays what workers
    /// and clients dial: `0.0.0.0:7070` where that name resolves to this
    /// host only once it runs (a pod behind a headless Service, a task).
    #[arg(long, env = "MR_LISTEN")]
    listen: Option<String>,
    /// Bind the web UI here instead of `[master] http_addr` (as `--listen`
    /// for gRPC), e.g. `0.0.0.0:7080`.
    #[arg(long, env = "MR_HTTP_LISTEN")]
    http_listen: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Recover {
    /// Keep the records before the first corrupt one and drop the rest.
    Truncate,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    common::logging::init("info");
    let args = Args::parse();
    let cfg = ClusterConfig::load(&args.config)?;
    sched::check_config(&cfg)?;
    tracing::info!(config = %args.config.display(), ?cfg.dfs, ?cfg.heartbeat, workers = cfg.workers.len(), "effective config");
    if let Some(Recover::Truncate) = args.recover {
        master::blocks::journal::recover_truncate(&cfg.master.metadata_dirs())?;
    }
    let bind = args.listen.as_deref().unwrap_or(&cfg.master.addr);
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .with_context(|| format!("cannot listen on {bind}"))?;
    let http = match args.http_listen.as_ref().or(cfg.master.http_addr.as_ref()) {
        Some(a) => Some(
            tokio::net::TcpListener::bind(a)
                .await
                .with_context(|| format!("cannot listen on http_addr {a}"))?,
        ),
        None => None,
    };
    master::run_with_http(cfg, listener, http, common::shutdown::signal()).await
}
