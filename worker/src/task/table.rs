//! The table of attempts running on this worker, and the job cleanups that
//! wait for them. The task runner (`task/runner.rs`) owns it; the executor
//! fills and empties it, the heartbeat reads its free slots, the drain
//! hands back what is left in it.

use common::sync::lock;
use protocol::TaskRef;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use tokio::task::JoinHandle;

/// Key of a running attempt: (job, is_map, index).
pub type TaskKey = (u64, bool, u32);

/// The task's key in the table: one slot per task, whatever its attempt,
/// so that a new attempt replaces the one a kill missed.
pub fn key(t: &TaskRef) -> TaskKey {
    (t.job_id, t.is_map, t.index)
}

/// A running attempt.
pub struct Running {
    /// Which attempt of the task: a kill names the one it means.
    pub attempt: u32,
    pub is_map: bool,
    /// Its task, aborted on a kill, a new registration or a drain.
    pub handle: JoinHandle<()>,
    /// Bumped as its work moves (`task/progress.rs`); heartbeats carry it.
    pub progress: crate::task::progress::Counter,
}

/// Running attempts by key, and the jobs whose cleanup came while one of
/// their attempts was still finishing. Each is a std `Mutex`, not a tokio
/// one: nothing async happens while it is held.
#[derive(Default)]
pub struct TaskTable {
    running: Mutex<HashMap<TaskKey, Running>>,
    /// Jobs whose cleanup came while one of their attempts was still
    /// finishing (the last report's answer carries the cleanup): done when
    /// that attempt leaves the table.
    pending_cleanup: Mutex<HashSet<u64>>,
}

impl TaskTable {
    /// Records a started attempt; one it replaces is aborted.
    pub fn start(
        &self,
        key: TaskKey,
        attempt: u32,
        is_map: bool,
        handle: JoinHandle<()>,
        progress: crate::task::progress::Counter,
    ) {
        let old = lock(&self.running).insert(
            key,
            Running {
                attempt,
                is_map,
                handle,
                progress,
            },
        );
        if let Some(old) = old {
            old.handle.abort();
        }
    }

    /// Forgets an attempt whose report is through.
    pub fn finish(&self, key: &TaskKey) {
        lock(&self.running).remove(key);
    }

    /// Aborts and forgets `attempt` of `key` if it is the one running;
    /// true when it was.
    pub fn kill(&self, key: &TaskKey, attempt: u32) -> bool {
        let mut running = lock(&self.running);
        if running.get(key).is_none_or(|r| r.attempt != attempt) {
            return false;
        }
        match running.remove(key) {
            Some(r) => {
                r.handle.abort();
                true
            }
            None => false,
        }
    }

    /// Aborts every running attempt (a new incarnation of this worker).
    pub fn abort_all(&self) {
        for (_, r) in lock(&self.running).drain() {
            r.handle.abort();
        }
    }

    /// Takes every running attempt out of the table, unaborted.
    pub fn take_all(&self) -> Vec<(TaskKey, Running)> {
        lock(&self.running).drain().collect()
    }

    /// Attempts running.
    pub fn len(&self) -> usize {
        lock(&self.running).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every running attempt (key and attempt number) with its progress
    /// counter, for the heartbeat.
    pub fn progress(&self) -> Vec<(TaskKey, u32, u64)> {
        lock(&self.running)
            .iter()
            .map(|(k, r)| {
                let p = r.progress.load(std::sync::atomic::Ordering::Relaxed);
                (*k, r.attempt, p)
            })
            .collect()
    }

    /// (map, reduce) attempts running.
    pub fn counts(&self) -> (u32, u32) {
        let running = lock(&self.running);
        let maps = running.values().filter(|r| r.is_map).count() as u32;
        (maps, running.len() as u32 - maps)
    }

    /// When `job` still has a running attempt, marks its cleanup pending
    /// and returns true. The mark is made under the table's lock, so an
    /// attempt leaving meanwhile sees it.
    pub fn defer_cleanup(&self, job: u64) -> bool {
        let running = lock(&self.running);
        if running.keys().any(|k| k.0 == job) {
            lock(&self.pending_cleanup).insert(job);
            return true;
        }
        false
    }

    /// Clears `job`'s pending-cleanup mark (its cleanup is being done).
    pub fn cleanup_done(&self, job: u64) {
        lock(&self.pending_cleanup).remove(&job);
    }

    /// Whether `job`'s cleanup waits for an attempt.
    pub fn cleanup_pending(&self, job: u64) -> bool {
        lock(&self.pending_cleanup).contains(&job)
    }

    /// Whether no cleanup waits.
    pub fn no_cleanup_pending(&self) -> bool {
        lock(&self.pending_cleanup).is_empty()
    }
}
