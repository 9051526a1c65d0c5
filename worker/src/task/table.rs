//! The table of attempts running on this worker, and the job cleanups that
//! wait for them: `protocol::attempts`, the bookkeeping the model worker of
//! `simtest` keeps too, over this worker's handle on an attempt (its tokio
//! task and its progress counter). The task runner (`task/runner.rs`) owns
//! it; the executor fills and empties it, the heartbeat reads its free
//! slots and progress, the drain hands back what is left in it.

use protocol::attempts::{Abort, Attempts};
use protocol::TaskRef;
use tokio::task::JoinHandle;

pub use protocol::attempts::{key, TaskKey};

/// This worker's handle on a running attempt.
pub struct Handle {
    /// Its task, aborted on a kill, a new registration or a drain.
    pub join: JoinHandle<()>,
    /// Bumped as its work moves (`task/progress.rs`); heartbeats carry it.
    pub progress: crate::task::progress::Counter,
}

impl Abort for Handle {
    fn abort(&self) {
        self.join.abort();
    }
}

pub type TaskTable = Attempts<Handle>;

/// Every running attempt with its progress counter, for the heartbeat.
pub fn progress(table: &TaskTable) -> Vec<(TaskRef, u64)> {
    table.each(|&(job_id, is_map, index), r| {
        let t = TaskRef {
            job_id,
            is_map,
            index,
            attempt: r.attempt,
        };
        let p = r.handle.progress.load(std::sync::atomic::Ordering::Relaxed);
        (t, p)
    })
}
