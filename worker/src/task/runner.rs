//! The task side of a worker as one owner: the table of running attempts,
//! the slow-start feeds of its reduces, the jobs it runs in its own code
//! and the directories of their local files. The executor, the heartbeat
//! (free slots, progress), the drain and the shuffle's serving side hold
//! this handle, not the node.

use crate::task::feeds::Feeds;
use crate::task::table::TaskTable;
use joblib::jobs::registry::Registry;
use std::path::{Path, PathBuf};

pub struct TaskRunner {
    table: TaskTable,
    feeds: Feeds,
    /// The jobs this worker runs in its own code; any other comes as a
    /// command or a program (`external`).
    jobs: Registry,
    /// The worker's data directory, under which each job's files live.
    data_dir: PathBuf,
}

impl TaskRunner {
    pub fn new(jobs: Registry, data_dir: &Path) -> TaskRunner {
        TaskRunner {
            table: TaskTable::default(),
            feeds: Feeds::default(),
            jobs,
            data_dir: data_dir.to_path_buf(),
        }
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
        self.data_dir.join("jobs").join(format!("job-{job}"))
    }

    /// The jobs whose directories (`job_dir`) exist here.
    pub fn job_dirs(&self) -> Vec<u64> {
        let Ok(rd) = std::fs::read_dir(self.data_dir.join("jobs")) else {
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
