//! Attempts that stopped making progress: Hadoop's `mapreduce.task.timeout`.
//!
//! A hung disk, a frozen peer or a child that sleeps leave an attempt in its
//! slot for ever while its worker goes on heartbeating, so the worker's
//! liveness says nothing about its attempts. Each heartbeat carries every
//! running attempt's progress counter (`worker/src/task/progress.rs`); an attempt
//! whose counter has not moved for `[jobs] task_timeout` is failed (its
//! worker goes on the task's avoid list, so the next attempt runs
//! elsewhere) and killed. Workers that send no counters (the simulation's
//! model worker, an older worker) are never timed out: no report is not
//! evidence of no progress.

use protocol::TaskRef;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The last counter seen for each attempt, and since when it has held.
#[derive(Debug, Default)]
pub struct Stalls {
    seen: HashMap<TaskRef, Seen>,
}

#[derive(Debug, Clone, Copy)]
struct Seen {
    worker_epoch: u64,
    progress: u64,
    since: Instant,
}

impl Stalls {
    /// One heartbeat's counters from the worker incarnation `epoch`.
    pub fn note(&mut self, epoch: u64, progress: &[(TaskRef, u64)], now: Instant) {
        for &(t, p) in progress {
            let e = self.seen.entry(t).or_insert(Seen {
                worker_epoch: epoch,
                progress: p,
                since: now,
            });
            if e.progress != p || e.worker_epoch != epoch {
                *e = Seen {
                    worker_epoch: epoch,
                    progress: p,
                    since: now,
                };
            }
        }
    }

    /// Of the attempts `running` (each with its worker), those whose
    /// counter has not moved for `timeout`, with how long it has held.
    /// Forgets every attempt no longer running.
    pub fn stalled(
        &mut self,
        running: &[(String, TaskRef)],
        now: Instant,
        timeout: Duration,
    ) -> Vec<(String, TaskRef, Duration)> {
        let live: std::collections::HashSet<&TaskRef> = running.iter().map(|(_, t)| t).collect();
        self.seen.retain(|t, _| live.contains(t));
        if timeout.is_zero() {
            return Vec::new();
        }
        running
            .iter()
            .filter_map(|(w, t)| {
                let s = self.seen.get(t)?;
                let held = now.saturating_duration_since(s.since);
                (held >= timeout).then(|| (w.clone(), *t, held))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(index: u32) -> TaskRef {
        TaskRef {
            job_id: 1,
            is_map: true,
            index,
            attempt: 0,
        }
    }

    #[test]
    fn only_a_counter_that_holds_for_the_timeout_is_stalled() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut st = Stalls::default();
        let running = vec![("w1".to_string(), a(0)), ("w2".to_string(), a(1))];
        st.note(7, &[(a(0), 0), (a(1), 0)], t0);
        st.note(7, &[(a(0), 0), (a(1), 5)], t0 + s(5));
        assert!(st.stalled(&running, t0 + s(9), s(10)).is_empty());
        let got = st.stalled(&running, t0 + s(10), s(10));
        assert_eq!(got, vec![("w1".to_string(), a(0), s(10))]);
        // a(1) moved at 5 s: stalled only from 15 s.
        assert_eq!(st.stalled(&running, t0 + s(15), s(10)).len(), 2);
        // Off at 0; an attempt never reported is never stalled.
        assert!(st.stalled(&running, t0 + s(100), Duration::ZERO).is_empty());
        let unseen = vec![("w3".to_string(), a(2))];
        assert!(st.stalled(&unseen, t0 + s(100), s(10)).is_empty());
        // Attempts that ended are forgotten.
        assert!(st.seen.is_empty());
    }
}
