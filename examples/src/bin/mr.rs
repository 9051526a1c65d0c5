//! `mr`: the client of a mini-MapReduce cluster.

use clap::{Parser, Subcommand};
use examples::cli;
use std::path::PathBuf;

/// Client of a mini-MapReduce cluster: files, caches and cluster state.
///
/// Every command reads the cluster file (`cluster.toml`) for the master's
/// address and the cluster token. `scripts/cluster.sh up` writes one.
#[derive(Parser)]
#[command(version, propagate_version = true)]
struct Cli {
    /// The cluster file.
    #[arg(
        long,
        short = 'c',
        env = "MR_CONFIG",
        default_value = "cluster.toml",
        global = true
    )]
    config: PathBuf,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Files in the cluster's block store.
    #[command(subcommand)]
    Fs(FsCmd),
    /// Pin files in the workers' block caches, or drop them.
    #[command(subcommand)]
    Cache(CacheCmd),
    /// The cluster's workers and their state.
    #[command(subcommand)]
    Cluster(ClusterCmd),
}

#[derive(Subcommand)]
enum FsCmd {
    /// Copy a local file into the cluster; returns once every replica is durable.
    Put {
        local: PathBuf,
        path: String,
        /// Replicas per block (default: the cluster's).
        #[arg(long, short = 'r')]
        replication: Option<u32>,
        /// Block size, e.g. 64MiB (default: the cluster's).
        #[arg(long, value_parser = parse_size)]
        block_size: Option<u64>,
        /// Replace an existing file.
        #[arg(long, short = 'f')]
        force: bool,
    },
    /// Copy a file out of the cluster.
    Get { path: String, local: PathBuf },
    /// Print a file to standard output.
    Cat { path: String },
    /// List a directory (default: the root).
    Ls {
        #[arg(default_value = "/")]
        path: String,
        #[arg(long)]
        json: bool,
    },
    /// Delete a file, or a directory and everything under it.
    Rm { path: String },
    /// A file's blocks, their replicas and where they are cached.
    Stat {
        path: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum CacheCmd {
    /// Cache every block of PATH on one of the workers storing it.
    Add { path: String },
    /// Drop every block of PATH from every cache.
    Rm { path: String },
}

#[derive(Subcommand)]
enum ClusterCmd {
    /// Workers: state, slots, blocks, cache and resource vectors.
    Status {
        #[arg(long)]
        json: bool,
    },
}

fn parse_size(s: &str) -> Result<u64, String> {
    common::units::parse_size(s).map_err(|e| e.to_string())
}

#[tokio::main]
async fn main() {
    if let Err(e) = run(Cli::parse()).await {
        eprintln!("mr: error: {e:#}");
        std::process::exit(1);
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let cfg = cli::load_config(&cli.config)?;
    match cli.cmd {
        Cmd::Fs(c) => match c {
            FsCmd::Put {
                local,
                path,
                replication,
                block_size,
                force,
            } => cli::fs::put(&cfg, &local, &path, replication, block_size, force).await,
            FsCmd::Get { path, local } => cli::fs::get(&cfg, &path, &local).await,
            FsCmd::Cat { path } => cli::fs::cat(&cfg, &path).await,
            FsCmd::Ls { path, json } => cli::fs::ls(&cfg, &path, json).await,
            FsCmd::Rm { path } => cli::fs::rm(&cfg, &path).await,
            FsCmd::Stat { path, json } => cli::fs::stat(&cfg, &path, json).await,
        },
        Cmd::Cache(c) => match c {
            CacheCmd::Add { path } => cli::cache::set(&cfg, &path, true).await,
            CacheCmd::Rm { path } => cli::cache::set(&cfg, &path, false).await,
        },
        Cmd::Cluster(ClusterCmd::Status { json }) => cli::cluster::status(&cfg, json).await,
    }
}
