//! mr-worker: parse flags, load the config, bind, run until SIGINT/SIGTERM.

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
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
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
    let listener = tokio::net::TcpListener::bind(&me.addr)
        .await
        .with_context(|| format!("cannot listen on {}", me.addr))?;
    worker::run(cfg, &args.name, listener, common::shutdown::signal()).await
}
