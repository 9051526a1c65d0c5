//! The task side of a worker as one owner: the table of running attempts,
//! the slow-start feeds of its reduces, the jobs it runs in its own code
//! and the directories of their local files, with the handles of the other
//! owners an attempt uses (the blocks it reads, the pipeline its output
//! enters, the clients of the master and of the peers). The executor and
//! the attempts hold this, not the node; the heartbeat (free slots,
//! progress), the drain and the shuffle's serving side read it.

use crate::edge::master_client::MasterLink;
use crate::store::blocks::Blocks;
use crate::store::pipeline::Target;
use crate::task::feeds::Feeds;
use crate::task::table::TaskTable;
use common::config::WorkerConfig;
use joblib::jobs::registry::Registry;
use rpc::dfs::Dfs;
use std::path::PathBuf;
use std::sync::Arc;

pub struct TaskRunner {
    table: TaskTable,
    feeds: Feeds,
    /// The jobs this worker runs in its own code; any other comes as a
    /// command or a program (`external`).
    jobs: Registry,
    /// This worker's entry in the cluster file: its name, address, rack
    /// and data directory, under which each job's files live.
    me: WorkerConfig,
    blocks: Arc<Blocks>,
    link: Arc<MasterLink>,
    dfs: Arc<Dfs>,
    pipeline: Arc<Target>,
}

impl TaskRunner {
    /// The task side of worker `me`, running `jobs` in its own code, over
    /// the other owners an attempt uses.
    pub fn new(
        jobs: Registry,
        me: WorkerConfig,
        blocks: Arc<Blocks>,
        link: Arc<MasterLink>,
        dfs: Arc<Dfs>,
        pipeline: Arc<Target>,
    ) -> TaskRunner {
        // The buffers kept between tasks, as many as the slots use at once.
        crate::task::mapout::keep_index_buffers_for(me.map_slots);
        crate::task::part::keep_buffers_for(me.reduce_slots);
        TaskRunner {
            table: TaskTable::default(),
            feeds: Feeds::default(),
            jobs,
            me,
            blocks,
            link,
            dfs,
            pipeline,
        }
    }

    pub fn me(&self) -> &WorkerConfig {
        &self.me
    }

    pub fn blocks(&self) -> &Arc<Blocks> {
        &self.blocks
    }

    pub fn link(&self) -> &Arc<MasterLink> {
        &self.link
    }

    pub fn dfs(&self) -> &Arc<Dfs> {
        &self.dfs
    }

    pub fn pipeline(&self) -> &Arc<Target> {
        &self.pipeline
    }

    /// Running attempts, and the job cleanups waiting for them.
    pub fn table(&self) -> &TaskTable {
        &self.table
    }

    /// Map outputs for running reduces launched before every map finished.
    pub fn feeds(&self) -> &Feeds {
        &self.feeds
    }

    pub fn jobs(&self) -> &Registry {
        &self.jobs
    }

    /// Where job `job`'s map outputs, spills and reduce segments live on
    /// this worker (removed when the master says the job is over).
    pub fn job_dir(&self, job: u64) -> PathBuf {
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
}
