//! Everything one worker process owns, shared by its gRPC service, its
//! heartbeat loop and its command handlers.

use crate::block::BlockInfo;
use crate::cache::BlockCache;
use crate::store::{BlockStore, StoreError};
use crate::tasks::TaskTable;
use bytes::Bytes;
use common::config::{ClusterConfig, WorkerConfig};
use rpc::dfs::Dfs;
use std::sync::Arc;

pub struct Node {
    pub cluster: ClusterConfig,
    pub me: WorkerConfig,
    pub store: BlockStore,
    pub cache: BlockCache,
    /// Client side of the cluster: the master, and other workers for pushes.
    pub dfs: Dfs,
    /// Running attempts, and the job cleanups waiting for them.
    pub tasks: TaskTable,
    /// The epoch of the current registration; 0 before the first.
    pub epoch: std::sync::atomic::AtomicU64,
    /// Set on SIGTERM: launches are handed back, heartbeats say so.
    pub draining: std::sync::atomic::AtomicBool,
}

impl Node {
    /// Where job `job`'s map outputs, spills and reduce segments live on
    /// this worker (removed when the master says the job is over).
    pub fn job_dir(&self, job: u64) -> std::path::PathBuf {
        self.me.data_dir.join("jobs").join(format!("job-{job}"))
    }

    pub fn open(cluster: ClusterConfig, name: &str) -> anyhow::Result<Arc<Self>> {
        let me = cluster
            .worker(name)
            .ok_or_else(|| anyhow::anyhow!("worker {name:?} is not listed in the cluster config"))?
            .clone();
        std::fs::create_dir_all(&me.data_dir)?;
        let store = BlockStore::open(&me.data_dir)?;
        let cache = BlockCache::new(me.cache);
        let mut dfs = Dfs::connect(&cluster)?;
        dfs.rack = Some(me.rack.clone());
        Ok(Arc::new(Node {
            cluster,
            me,
            store,
            cache,
            dfs,
            tasks: Default::default(),
            epoch: Default::default(),
            draining: Default::default(),
        }))
    }

    /// Reads a stored block: from the cache when it is there, else from
    /// disk (verified). Returns the bytes and whether the cache served them.
    /// A corrupt replica is reported to the master before the error returns.
    pub async fn read_block(
        self: &Arc<Self>,
        id: u64,
        fill_cache: bool,
    ) -> Result<(Bytes, bool), StoreError> {
        self.read_block_expecting(id, fill_cache, None).await
    }

    /// [`Node::read_block`], checked against `want`, the length and CRC32C
    /// the master's namespace holds, when the caller knows them: a cached
    /// copy is verified too (it was checked only against this worker's own
    /// metadata when it was cached), and one that differs is dropped and
    /// the disk tried.
    pub async fn read_block_expecting(
        self: &Arc<Self>,
        id: u64,
        fill_cache: bool,
        want: Option<BlockInfo>,
    ) -> Result<(Bytes, bool), StoreError> {
        if let Some(b) = self.cache.get(id) {
            match want.and_then(|w| crate::store::mismatch(&w, b.len() as u64, crc32c::crc32c(&b)))
            {
                None => return Ok((b, true)),
                Some(why) => {
                    tracing::error!(block = id, %why, "cached copy differs from the namespace: dropped");
                    self.cache.remove(id);
                }
            }
        }
        let node = self.clone();
        let res = tokio::task::spawn_blocking(move || {
            if !fill_cache {
                return node.store.read_expecting(id, want.as_ref(), false);
            }
            let data = node.store.read_expecting(id, want.as_ref(), true)?;
            node.cache.insert(id, &data);
            Ok(data)
        })
        .await
        .unwrap_or_else(|e| Err(StoreError::Io(std::io::Error::other(e))));
        if let Err(StoreError::Corrupt { why, .. }) = &res {
            self.report_bad_block(id, why.clone()).await;
        }
        res.map(|d| (d, false))
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub async fn report_bad_block(&self, id: u64, reason: String) {
        self.cache.remove(id);
        if let Err(e) = crate::master::report_bad_block(self, id, reason).await {
            // The next block report corrects the master anyway.
            tracing::warn!(block = id, "could not report a corrupt block: {e}");
        }
    }
}

/// A one-worker node over a fresh directory for unit tests: `module` and
/// `tag` name the directory, so tests of different modules never share one.
#[cfg(test)]
pub(crate) fn test_node(module: &str, tag: &str) -> (Arc<Node>, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("mr-{module}-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let text = format!(
        "token = \"t\"\n[master]\naddr = \"127.0.0.1:1\"\ndata_dir = \"{0}/m\"\n\
         [[workers]]\nname = \"w1\"\naddr = \"127.0.0.1:2\"\ndata_dir = \"{0}/w1\"\n",
        dir.display()
    );
    let cfg = ClusterConfig::parse(&text).unwrap();
    (Node::open(cfg, "w1").unwrap(), dir)
}
