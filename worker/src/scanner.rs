//! The block scanner: re-verifies every stored block's CRC32C at
//! `dfs.scan_interval`, so that a rotten replica is dropped, reported and
//! replaced even if no reader touches it (HDFS's `BlockScanner`).

use crate::node::Node;
use crate::store::StoreError;
use std::sync::Arc;

pub async fn run(node: Arc<Node>) {
    let every = node.cluster.dfs.scan_interval;
    loop {
        tokio::time::sleep(every).await;
        let ids: Vec<u64> = node.store.report().iter().map(|b| b.id).collect();
        let mut bad = 0;
        for id in ids {
            let n = node.clone();
            let res = tokio::task::spawn_blocking(move || n.store.read(id).map(|_| ())).await;
            if let Ok(Err(StoreError::Corrupt { why, .. })) = res {
                bad += 1;
                node.report_bad_block(id, why).await;
            }
        }
        if bad > 0 {
            tracing::warn!(corrupt = bad, "block scan found corrupt replicas");
        }
    }
}
