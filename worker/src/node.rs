//! One worker process's owners, held together for the steps that span
//! them (the heartbeat, the master's commands, the drain); everything
//! else takes the one owner it uses.

use crate::edge::master_client::MasterLink;
use crate::store::blocks::Blocks;
use crate::store::cache::BlockCache;
use crate::store::disk::BlockStore;
use crate::store::pipeline::Target;
use crate::task::runner::TaskRunner;
use common::config::{ClusterConfig, WorkerConfig};
use rpc::dfs::Dfs;
use std::sync::Arc;

/// The owners of one worker process, each behind its own handle: a
/// function takes the narrowest one it uses, and a spawned task clones the
/// `Arc` of the owner it needs rather than the whole node.
pub struct Node {
    cluster: ClusterConfig,
    me: WorkerConfig,
    /// Client side of the cluster: the master, and other workers for
    /// pushes, reads and the tasks' output writes.
    dfs: Arc<Dfs>,
    blocks: Arc<Blocks>,
    tasks: Arc<TaskRunner>,
    link: Arc<MasterLink>,
    /// This worker as a block write pipeline's target, over `blocks`,
    /// `link` and `dfs`.
    pipeline: Arc<Target>,
}

impl Node {
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
        let blocks = Blocks::new(store, cache, &me.data_dir, cluster.master.quarantine_grace);
        let mut dfs = Dfs::connect(&cluster)?;
        dfs.rack = Some(me.rack.clone());
        let dfs = Arc::new(dfs);
        let blocks = Arc::new(blocks);
        let link = Arc::new(MasterLink::new(dfs.clone(), &me.name));
        let pipeline = Arc::new(Target::new(
            blocks.clone(),
            link.clone(),
            dfs.clone(),
            cluster.dfs.stream_timeout,
        ));
        let tasks = TaskRunner::new(
            jobs,
            me.clone(),
            blocks.clone(),
            link.clone(),
            dfs.clone(),
            pipeline.clone(),
        );
        Ok(Arc::new(Node {
            tasks: Arc::new(tasks),
            pipeline,
            link,
            blocks,
            dfs,
            cluster,
            me,
        }))
    }

    pub fn cluster(&self) -> &ClusterConfig {
        &self.cluster
    }

    pub fn me(&self) -> &WorkerConfig {
        &self.me
    }

    pub fn dfs(&self) -> &Arc<Dfs> {
        &self.dfs
    }

    pub fn blocks(&self) -> &Arc<Blocks> {
        &self.blocks
    }

    pub fn tasks(&self) -> &Arc<TaskRunner> {
        &self.tasks
    }

    pub fn link(&self) -> &Arc<MasterLink> {
        &self.link
    }

    pub fn pipeline(&self) -> &Arc<Target> {
        &self.pipeline
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
        let t = n.tasks();
        assert!(t.job_dirs().is_empty());
        for d in ["job-10", "job-3", "junk", "job-x"] {
            std::fs::create_dir_all(n.me().data_dir.join("jobs").join(d)).unwrap();
        }
        assert_eq!(t.job_dirs(), vec![3, 10]);
        assert_eq!(t.job_dir(3), n.me().data_dir.join("jobs").join("job-3"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
