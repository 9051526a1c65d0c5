//! `mr`: the client of a mini-MapReduce cluster.

use clap::{Parser, Subcommand};
use cli::cmd;
use std::path::PathBuf;

/// Client of a mini-MapReduce cluster: files, caches, jobs and cluster state.
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
    /// More log lines on stderr: -v info, -vv debug (default: warnings).
    #[arg(long, short = 'v', action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// No progress display and no log lines on stderr (for scripts);
    /// errors are still printed.
    #[arg(long, short = 'q', global = true, conflicts_with = "verbose")]
    quiet: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Files in the cluster's block store.
    #[command(subcommand)]
    Fs(cmd::fs::FsCmd),
    /// Pin files in the workers' block caches (never evicted), or unpin them.
    #[command(subcommand)]
    Cache(cmd::cache::CacheCmd),
    /// The cluster's workers and their state.
    #[command(subcommand)]
    Cluster(cmd::cluster::ClusterCmd),
    /// Run and follow MapReduce jobs (wordcount, sort, terasort, validators).
    #[command(subcommand)]
    Job(cmd::job::JobCmd),
    /// Generate benchmark input with a distributed map-only job.
    Gen(cmd::job::GenArgs),
    /// Cluster administration.
    #[command(subcommand)]
    Admin(cmd::admin::AdminCmd),
    /// The cluster file.
    #[command(subcommand)]
    Config(cmd::config::ConfigCmd),
    /// Benchmarks: a matrix of workloads × schedulers on the cluster, the
    /// CLQLMRS sweeps, and scheduler decision latency (no cluster needed).
    Bench(bench::BenchArgs),
    /// Simulate a cluster of up to thousands of nodes running the real
    /// placement policies (discrete events, seeded: no cluster needed).
    Sim(cmd::sim::SimArgs),
    /// Run a job's map and reduce code in this process, with no cluster:
    /// the single-process baseline for benchmarks.
    Local(cmd::local::LocalArgs),
}

/// Log lines (`tracing`) on stderr: warnings by default, `-v` info, `-vv`
/// debug, `-q` none; `RUST_LOG` (e.g. `rpc=debug`) wins over `-v`.
fn init_logging(verbose: u8, quiet: bool) {
    use tracing_subscriber::EnvFilter;
    // -vv: this project's crates at debug, not the gRPC stack's frames
    // (-vvv, or RUST_LOG, for those).
    let level = match (quiet, verbose) {
        (true, _) => "off",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, 2) => "info,mr=debug,cli=debug,common=debug,joblib=debug,proto=debug,rpc=debug,sched=debug,sim=debug",
        (false, _) => "debug",
    };
    let filter = match std::env::var("RUST_LOG") {
        Ok(s) if !quiet && !s.is_empty() => EnvFilter::try_new(s),
        _ => EnvFilter::try_new(level),
    }
    .unwrap_or_else(|_| EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .without_time()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
}

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    cli::output::set_quiet(cli.quiet);
    init_logging(cli.verbose, cli.quiet);
    if let Err(e) = run(cli).await {
        eprintln!("mr: error: {e:#}");
        std::process::exit(1);
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let config = cli.config.as_path();
    match cli.cmd {
        // No cluster file needed.
        Cmd::Local(a) => cmd::local::dispatch(a),
        Cmd::Sim(a) => cmd::sim::dispatch(a),
        Cmd::Config(c) => cmd::config::dispatch(config, c),
        // The cluster file for the subcommands that talk to the cluster.
        Cmd::Bench(b) => cli::harness::run(config, b).await,
        Cmd::Admin(c) => cmd::admin::dispatch(config, c).await,
        // The cluster file always.
        Cmd::Fs(c) => cmd::fs::dispatch(&cmd::load_config(config)?, c).await,
        Cmd::Cache(c) => cmd::cache::dispatch(&cmd::load_config(config)?, c).await,
        Cmd::Cluster(c) => cmd::cluster::dispatch(&cmd::load_config(config)?, c).await,
        Cmd::Job(c) => cmd::job::dispatch(&cmd::load_config(config)?, c).await,
        Cmd::Gen(g) => cmd::job::generate(&cmd::load_config(config)?, g).await,
    }
}
