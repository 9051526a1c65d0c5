//! `mr cache add|rm PATH`: HDFS-like cache directives over the workers' LRUs;
//! `mr cache resize SIZE`: a new bound for them.

use common::config::ClusterConfig;
use common::dfs::{Dfs, DfsError};

pub async fn set(cfg: &ClusterConfig, path: &str, cache: bool) -> anyhow::Result<()> {
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
    if cache {
        println!("caching {} block(s) of {path}", r.blocks);
    } else {
        println!("dropping {} block(s) of {path} from every cache", r.blocks);
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
