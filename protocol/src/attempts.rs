//! The attempts running on one worker, and the job cleanups that wait for
//! them: the executor's bookkeeping without I/O, which the real worker
//! (`worker/src/task/executor.rs`) and `simtest`'s model worker both keep
//! with it, each with its own handle on a running attempt.
//!
//! Its rules are what the master's fencing and cleanup rely on: one slot
//! per task whatever its attempt, so that a new attempt replaces (and
//! aborts) one a kill missed; a kill names the attempt it means, so a late
//! kill of an old attempt never stops the new one; an attempt leaving
//! frees its slot only if it still holds it; and a job's cleanup that
//! comes while one of its attempts still finishes (the last report's own
//! answer carries it) waits for that attempt to leave.

use crate::task::TaskRef;
use common::sync::lock;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// Key of a running attempt: (job, is_map, index).
pub type TaskKey = (u64, bool, u32);

/// The task's key in the table: one slot per task, whatever its attempt.
pub fn key(t: &TaskRef) -> TaskKey {
    (t.job_id, t.is_map, t.index)
}

/// What a running attempt is stopped through (a tokio task's handle, in
/// both workers).
pub trait Abort {
    fn abort(&self);
}

/// A running attempt, as the table records it.
pub struct Running<H> {
    /// Which attempt of the task: a kill names the one it means.
    pub attempt: u32,
    pub is_map: bool,
    /// Aborted on a kill, a replacing attempt, a new registration or a
    /// drain.
    pub handle: H,
}

/// Running attempts by key, and the jobs whose cleanup waits for one.
/// Each is a std `Mutex`: nothing async happens while it is held.
pub struct Attempts<H> {
    running: Mutex<HashMap<TaskKey, Running<H>>>,
    pending_cleanup: Mutex<HashSet<u64>>,
}

impl<H> Default for Attempts<H> {
    fn default() -> Self {
        Attempts {
            running: Mutex::new(HashMap::new()),
            pending_cleanup: Mutex::new(HashSet::new()),
        }
    }
}

impl<H: Abort> Attempts<H> {
    /// Records a started attempt; one it replaces is aborted.
    pub fn start(&self, t: &TaskRef, handle: H) {
        let old = lock(&self.running).insert(
            key(t),
            Running {
                attempt: t.attempt,
                is_map: t.is_map,
                handle,
            },
        );
        if let Some(old) = old {
            old.handle.abort();
        }
    }

    /// Forgets attempt `t` once its report is through, if it still holds
    /// its task's slot (a newer attempt may have replaced it).
    pub fn finish(&self, t: &TaskRef) {
        let mut running = lock(&self.running);
        if running.get(&key(t)).is_some_and(|r| r.attempt == t.attempt) {
            running.remove(&key(t));
        }
    }

    /// Aborts and forgets attempt `t` if it is the one running; true when
    /// it was.
    pub fn kill(&self, t: &TaskRef) -> bool {
        let mut running = lock(&self.running);
        if running.get(&key(t)).is_none_or(|r| r.attempt != t.attempt) {
            return false;
        }
        match running.remove(&key(t)) {
            Some(r) => {
                r.handle.abort();
                true
            }
            None => false,
        }
    }

    /// Aborts every running attempt (a new incarnation of this worker: the
    /// master has queued them again and would fence their reports).
    pub fn abort_all(&self) {
        for (_, r) in lock(&self.running).drain() {
            r.handle.abort();
        }
    }

    /// Takes every running attempt out of the table, unaborted (a drain
    /// hands them back).
    pub fn take_all(&self) -> Vec<(TaskKey, Running<H>)> {
        lock(&self.running).drain().collect()
    }

    /// Attempts running.
    pub fn len(&self) -> usize {
        lock(&self.running).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// (map, reduce) attempts running: what the free slots of a heartbeat
    /// are counted from.
    pub fn counts(&self) -> (u32, u32) {
        let running = lock(&self.running);
        let maps = running.values().filter(|r| r.is_map).count() as u32;
        (maps, running.len() as u32 - maps)
    }

    /// `f` of every running attempt, in key order.
    pub fn each<T>(&self, f: impl Fn(&TaskKey, &Running<H>) -> T) -> Vec<T> {
        let running = lock(&self.running);
        let mut keys: Vec<&TaskKey> = running.keys().collect();
        keys.sort_unstable();
        keys.into_iter().map(|k| f(k, &running[k])).collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[derive(Clone, Default)]
    struct Flag(Arc<AtomicBool>);

    impl Abort for Flag {
        fn abort(&self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    impl Flag {
        fn aborted(&self) -> bool {
            self.0.load(Ordering::SeqCst)
        }
    }

    fn attempt(index: u32, attempt: u32) -> TaskRef {
        TaskRef {
            job_id: 7,
            is_map: true,
            index,
            attempt,
        }
    }

    #[test]
    fn a_new_attempt_replaces_and_aborts_the_old_and_a_late_finish_keeps_it() {
        let t = Attempts::default();
        let (old, new) = (Flag::default(), Flag::default());
        t.start(&attempt(0, 1), old.clone());
        t.start(&attempt(0, 2), new.clone());
        assert!(old.aborted() && !new.aborted());
        assert_eq!(t.len(), 1);
        t.finish(&attempt(0, 1));
        assert_eq!(
            t.len(),
            1,
            "the old attempt's finish freed the new one's slot"
        );
        assert!(!t.kill(&attempt(0, 1)), "a kill of the old attempt");
        assert!(!new.aborted());
        assert!(t.kill(&attempt(0, 2)));
        assert!(new.aborted() && t.is_empty());
    }

    #[test]
    fn a_cleanup_waits_for_the_jobs_last_attempt() {
        let t = Attempts::default();
        t.start(&attempt(0, 1), Flag::default());
        t.start(&attempt(1, 1), Flag::default());
        assert_eq!(t.counts(), (2, 0));
        assert!(t.defer_cleanup(7) && t.cleanup_pending(7));
        t.finish(&attempt(0, 1));
        assert!(t.defer_cleanup(7));
        t.finish(&attempt(1, 1));
        assert!(!t.defer_cleanup(8) && !t.defer_cleanup(7));
        t.cleanup_done(7);
        assert!(t.no_cleanup_pending());
    }

    #[test]
    fn every_attempt_is_visited_in_key_order_and_a_drain_takes_them_unaborted() {
        let t = Attempts::default();
        let f = Flag::default();
        t.start(&attempt(3, 1), f.clone());
        t.start(&attempt(1, 4), f.clone());
        assert_eq!(t.each(|k, r| (k.2, r.attempt)), vec![(1, 4), (3, 1)]);
        assert_eq!(t.take_all().len(), 2);
        assert!(t.is_empty() && !f.aborted());
    }
}
