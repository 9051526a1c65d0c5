//! `mr cache add|rm PATH`: HDFS-like cache directives, pins in the workers'
//! caches that the LRU never evicts; `mr cache resize SIZE`: a new bound.

use common::config::ClusterConfig;
use common::dfs::{Dfs, DfsError};

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
