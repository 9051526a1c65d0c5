//! `mr cache add|rm PATH`: HDFS-like cache directives, pins in the workers'
//! caches that the LRU never evicts; `mr cache resize SIZE`: a new bound.

use super::parse_size;
use clap::Subcommand;
use common::config::ClusterConfig;
use rpc::dfs::{Dfs, DfsError};

#[derive(Subcommand)]
pub enum CacheCmd {
    /// Pin every block of PATH (a file or a directory) in the cache of one
    /// worker storing it, as an HDFS cache directive: pinned blocks are never
    /// evicted by the LRU, count against the cache's capacity, and come back
    /// when their worker restarts (the master sends them again). All or
    /// nothing: a block that fits in no storing worker's cache beside its
    /// other pins is refused with an error and nothing is pinned.
    Add {
        path: String,
        #[arg(long)]
        json: bool,
    },
    /// Unpin every block of PATH and drop it from every cache.
    Rm {
        path: String,
        #[arg(long)]
        json: bool,
    },
    /// Bound the workers' caches at SIZE (e.g. 128MiB), evicting least
    /// recently used blocks; lasts until the worker restarts.
    Resize {
        #[arg(value_parser = parse_size)]
        size: u64,
        /// Only this worker (default: every live one).
        #[arg(long)]
        worker: Option<String>,
    },
}

/// Runs one `mr cache` command.
pub async fn dispatch(cfg: &ClusterConfig, c: CacheCmd) -> anyhow::Result<()> {
    match c {
        CacheCmd::Add { path, json } => set(cfg, &path, true, json).await,
        CacheCmd::Rm { path, json } => set(cfg, &path, false, json).await,
        CacheCmd::Resize { size, worker } => {
            let told = resize(cfg, size, worker.as_deref()).await?;
            println!(
                "cache bound {} on {}",
                common::units::format_size(size),
                told.join(", ")
            );
            Ok(())
        }
    }
}

pub async fn set(cfg: &ClusterConfig, path: &str, cache: bool, json: bool) -> anyhow::Result<()> {
    let dfs = Dfs::connect(cfg)?;
    let r = dfs
        .master()
        .cache_file(proto::CacheFileRequest {
            path: path.into(),
            cache,
        })
        .await
        .map_err(DfsError::from)?
        .into_inner();
    let size = common::units::format_size(r.bytes);
    if json {
        let out = serde_json::json!({
            "path": path,
            "pinned": cache,
            "blocks": r.blocks,
            "bytes": r.bytes,
            "workers": r.workers,
        });
        println!("{out}");
    } else if cache {
        println!(
            "pinned {} block(s) of {path} ({size}) in the cache of {}",
            r.blocks,
            r.workers.join(", ")
        );
    } else {
        println!(
            "unpinned {} block(s) of {path} ({size}) and dropped them from every cache",
            r.blocks
        );
    }
    Ok(())
}

/// Tells one worker (or every live one) to bound its cache at `bytes`;
/// returns the workers told. Takes effect with each one's next heartbeat.
pub async fn resize(
    cfg: &ClusterConfig,
    bytes: u64,
    worker: Option<&str>,
) -> anyhow::Result<Vec<String>> {
    let dfs = Dfs::connect(cfg)?;
    let r = dfs
        .master()
        .set_cache_capacity(proto::CacheCapacityRequest {
            bytes,
            worker: worker.unwrap_or_default().into(),
        })
        .await
        .map_err(DfsError::from)?
        .into_inner();
    Ok(r.workers)
}
