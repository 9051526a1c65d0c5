//! `mr cache add|rm PATH`: HDFS-like cache directives over the workers' LRUs.

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
