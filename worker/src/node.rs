//! Everything one worker process owns, shared by its gRPC service, its
//! heartbeat loop and its command handlers.

use crate::store::cache::BlockCache;
use crate::store::disk::BlockStore;
use crate::task::table::TaskTable;
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
    /// Map outputs for running reduces launched before every map finished.
    pub feeds: crate::task::feeds::Feeds,
    /// The epoch of the current registration; 0 before the first.
    pub epoch: std::sync::atomic::AtomicU64,
    /// Set on SIGTERM: launches are handed back, heartbeats say so.
    pub draining: std::sync::atomic::AtomicBool,
    /// What the master last said of this worker's replicas: whether it may
    /// go (`/readyz`), and while draining, what is left to copy.
    pub safety: crate::control::drain::Safety,
    /// Held from taking the store's changes to the master's answer, by
    /// heartbeats, registrations and corrupt-block reports: the master
    /// sees a replica's "added" before its "corrupt", never after.
    pub reports: tokio::sync::Mutex<()>,
    /// The jobs this worker runs in its own code; any other comes as a
    /// command or a program (`external`).
    pub jobs: joblib::jobs::registry::Registry,
    /// The master's keys: every block access and shuffle token this
    /// worker's port is shown is checked against them.
    pub keys: common::blocktoken::Verifier,
}

impl Node {
    /// Where job `job`'s map outputs, spills and reduce segments live on
    /// this worker (removed when the master says the job is over).
    pub fn job_dir(&self, job: u64) -> std::path::PathBuf {
        self.me.data_dir.join("jobs").join(format!("job-{job}"))
    }

    /// The jobs whose directories (`job_dir`) exist here.
    pub fn job_dirs(&self) -> Vec<u64> {
        let Ok(rd) = std::fs::read_dir(self.me.data_dir.join("jobs")) else {
            return Vec::new();
        };
        let mut ids: Vec<u64> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name();
                name.to_str()?.strip_prefix("job-")?.parse().ok()
            })
            .collect();
        ids.sort_unstable();
        ids
    }

    /// The worker `name` of `cluster`, running the built-in jobs.
    pub fn open(cluster: ClusterConfig, name: &str) -> anyhow::Result<Arc<Self>> {
        Self::open_with(cluster, name, joblib::jobs::registry::Registry::builtins())
    }

    /// [`Node::open`] with the built-in jobs `jobs`.
    pub fn open_with(
        cluster: ClusterConfig,
        name: &str,
        jobs: joblib::jobs::registry::Registry,
    ) -> anyhow::Result<Arc<Self>> {
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
            feeds: Default::default(),
            epoch: Default::default(),
            draining: Default::default(),
            safety: Default::default(),
            reports: Default::default(),
            jobs,
            keys: Default::default(),
        }))
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(std::sync::atomic::Ordering::SeqCst)
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

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn job_dirs_lists_the_jobs_with_files_here() {
        let (n, dir) = super::test_node("node", "jobdirs");
        assert!(n.job_dirs().is_empty());
        for d in ["job-10", "job-3", "junk", "job-x"] {
            std::fs::create_dir_all(n.me.data_dir.join("jobs").join(d)).unwrap();
        }
        assert_eq!(n.job_dirs(), vec![3, 10]);
        assert_eq!(n.job_dir(3), n.me.data_dir.join("jobs").join("job-3"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
