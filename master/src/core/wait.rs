//! Long polls: a worker waiting for commands (launch on submit) and a
//! client waiting for a job's end (results pushed). Each takes the
//! coordinator's lock only to look and to subscribe, and waits with it
//! released: the lock is a std `Mutex` that nothing may hold across an
//! await. Subscribing and looking happen under one lock, so an event in
//! between is never missed.
//!
//! A long poll is held at most [`MAX_WAIT`], and all of them answer at once
//! when the master shuts down ([`Waits::close`]): the gRPC server's
//! graceful stop waits for every call in flight, and must not wait for
//! these.

use super::lock::lock;
use super::MasterState;
use crate::error::Result;
use protocol::Reply;
use serde_json::Value;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::watch;

/// The longest a long poll is held, whatever the caller asked: a client
/// that went away without a reset is noticed within it.
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// What long polls wait on besides a worker's doorbell.
#[derive(Debug)]
pub struct Waits {
    /// Counts job ends; a `WaitJob` wakes on each and looks at its job.
    ends: watch::Sender<u64>,
    /// Set once the master shuts down: every long poll answers at once.
    closing: watch::Sender<bool>,
}

impl Default for Waits {
    fn default() -> Self {
        Waits {
            ends: watch::channel(0).0,
            closing: watch::channel(false).0,
        }
    }
}

impl Waits {
    /// A job reached its final state; its history is queued, and written
    /// by the ending event's handler once the lock is let go
    /// (`jobs/disk.rs`); clients read it from memory meanwhile.
    pub fn job_ended(&self) {
        self.ends.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The master is shutting down: answer every long poll now.
    pub fn close(&self) {
        self.closing.send_replace(true);
    }
}

impl MasterState {
    /// The commands waiting for `worker` (a `TakeCommands` call), or a
    /// request to register again from an incarnation this master does not
    /// know.
    pub fn take_commands(&mut self, worker: &str, epoch: u64) -> Reply {
        if self.cluster.is_stale(worker, epoch) {
            return Reply::reregister();
        }
        Reply {
            commands: self.cluster.take_commands(worker),
            ..Default::default()
        }
    }

    /// Whether the job is over, or gone from memory (a job from before a
    /// restart, which only its history knows).
    fn job_over(&self, id: u64) -> bool {
        self.jobs.get(id).is_none_or(|j| j.state().is_final())
    }
}

/// A worker's long poll: `Some(true)` as soon as its queue holds
/// commands, `Some(false)` after `wait` without any (or at shutdown),
/// `None` when `epoch` is not its current incarnation.
pub async fn await_commands(
    state: &Mutex<MasterState>,
    worker: &str,
    epoch: u64,
    wait: Duration,
) -> Option<bool> {
    let (bell, mut closing) = {
        let mut s = lock(state, "await_commands");
        (s.cluster.bell(worker, epoch)?, s.waits.closing.subscribe())
    };
    if *closing.borrow_and_update() {
        return Some(false);
    }
    tokio::select! {
        rung = bell.rung_within(spread(wait.min(MAX_WAIT), worker, epoch)) => Some(rung),
        _ = closing.changed() => Some(false),
    }
}

/// A long poll's wait, shortened by up to a half by a hash of the worker
/// and its incarnation. Polls asked at the same moment (every worker
/// registering at once, after a master restart or when a benchmark brings
/// up its fleet) would otherwise all end together and all ask again
/// together, every `wait`: at 10,000 workers, 10,000 calls in a burst
/// that stalled heartbeats for seconds each 30 s. With the waits spread,
/// the polls drift apart. A hash, not a random draw, so that the
/// deterministic simulation replays.
fn spread(wait: Duration, worker: &str, epoch: u64) -> Duration {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (worker, epoch).hash(&mut h);
    let share = 0.5 + 0.5 * (h.finish() >> 11) as f64 / (1u64 << 53) as f64;
    wait.mul_f64(share)
}

/// A client's wait for job `id`: its summary as soon as it has ended, or
/// after `wait` (or at shutdown) its summary so far.
pub async fn wait_job(state: &Mutex<MasterState>, id: u64, wait: Duration) -> Result<Value> {
    let deadline = tokio::time::Instant::now() + wait.min(MAX_WAIT);
    let (mut ends, mut closing) = {
        let s = lock(state, "wait_job");
        (s.waits.ends.subscribe(), s.waits.closing.subscribe())
    };
    loop {
        {
            let s = lock(state, "wait_job");
            if s.job_over(id) || *closing.borrow_and_update() {
                return s.jobs.job_json(id);
            }
            // Marks every end so far as seen, under the same lock as the
            // look above: `changed` then wakes only for a later one.
            ends.borrow_and_update();
        }
        tokio::select! {
            r = ends.changed() => {
                if r.is_err() {
                    return lock(state, "wait_job").jobs.job_json(id);
                }
            }
            _ = closing.changed() => {}
            _ = tokio::time::sleep_until(deadline) => return lock(state, "wait_job").jobs.job_json(id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::{Job, JobSpec};
    use common::config::ClusterConfig;
    use protocol::{Command, Registration};
    use std::sync::Arc;
    use std::time::Instant;

    fn state(tag: &str) -> (Arc<Mutex<MasterState>>, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("mr-wait-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let toml = format!(
            "token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = {:?}\n\
             [[workers]]\nname = \"w1\"\naddr = \"127.0.0.1:7101\"\ndata_dir = \"/x1\"\n",
            dir.join("m")
        );
        let cfg = ClusterConfig::parse(&toml).unwrap();
        let st = MasterState::open(cfg, Instant::now()).unwrap();
        (Arc::new(Mutex::new(st)), dir)
    }

    fn register(st: &Mutex<MasterState>) -> u64 {
        lock(st, "test")
            .on_register(
                Registration {
                    protocol_version: common::PROTOCOL_VERSION,
                    name: "w1".into(),
                    addr: "w1:1".into(),
                    rack: "r1".into(),
                    map_slots: 2,
                    reduce_slots: 1,
                    ..Default::default()
                },
                Instant::now(),
            )
            .unwrap()
            .epoch
    }

    /// A command queued while the worker's poll waits wakes it, and the
    /// poll's answer carries nothing: the commands stay queued until taken.
    #[tokio::test]
    async fn a_queued_command_wakes_the_workers_poll() {
        let (st, dir) = state("bell");
        let epoch = register(&st);
        lock(&st, "test").cluster.take_commands("w1");
        let poll = {
            let st = st.clone();
            tokio::spawn(async move {
                await_commands(&st, "w1", epoch, Duration::from_secs(3600)).await
            })
        };
        tokio::task::yield_now().await;
        let mut out = crate::cluster::Outbox::default();
        out.send("w1", Command::CleanupJob(9));
        lock(&st, "test").cluster.flush(out);
        assert_eq!(poll.await.unwrap(), Some(true));
        let r = lock(&st, "test").take_commands("w1", epoch);
        assert_eq!(r.commands, vec![Command::CleanupJob(9)]);
        // A stale incarnation is told to register again.
        assert_eq!(
            await_commands(&st, "w1", epoch + 1, Duration::ZERO).await,
            None
        );
        assert!(lock(&st, "test").take_commands("w1", epoch + 1).reregister);
        let _ = std::fs::remove_dir_all(dir);
    }

    /// The waits of polls asked together end apart, each within its ask.
    #[test]
    fn long_poll_waits_are_spread() {
        let wait = Duration::from_secs(30);
        let mut ends: Vec<Duration> = (0..1000)
            .map(|i| spread(wait, &format!("w{i:05}"), 1))
            .collect();
        assert!(ends.iter().all(|d| *d >= wait / 2 && *d <= wait));
        assert_eq!(
            spread(wait, "w00001", 1),
            ends[1],
            "the same poll, the same wait"
        );
        ends.sort();
        // Over the whole half-interval, no clump: each tenth of it holds a
        // tenth of the polls, give or take.
        for k in 0..10 {
            let lo = wait / 2 + wait / 20 * k;
            let n = ends
                .iter()
                .filter(|d| **d >= lo && **d < lo + wait / 20)
                .count();
            assert!((60..=140).contains(&n), "{n} polls in tenth {k}");
        }
    }

    /// A client waiting on a job hears of its end when it happens, and of a
    /// shutdown at once.
    #[tokio::test]
    async fn a_job_wait_answers_at_the_jobs_end_and_at_shutdown() {
        let (st, dir) = state("job");
        let now = Instant::now();
        for id in [1, 2] {
            let j = Job::new(
                id,
                id,
                JobSpec::wordcount_for_tests(1),
                vec![],
                1,
                "fifo",
                now,
            );
            lock(&st, "test").jobs.insert_for_tests(j);
        }
        let waiter = |id: u64| {
            let st = st.clone();
            tokio::spawn(async move { wait_job(&st, id, Duration::from_secs(3600)).await })
        };
        let w1 = waiter(1);
        tokio::task::yield_now().await;
        // Another job's end wakes the wait, which sees its own still running.
        lock(&st, "test").kill_job(2).unwrap();
        tokio::task::yield_now().await;
        assert!(!w1.is_finished());
        lock(&st, "test").kill_job(1).unwrap();
        let v = w1.await.unwrap().unwrap();
        assert_eq!(v["state"], "killed");
        let j = Job::new(
            3,
            3,
            JobSpec::wordcount_for_tests(1),
            vec![],
            1,
            "fifo",
            now,
        );
        lock(&st, "test").jobs.insert_for_tests(j);
        let w3 = waiter(3);
        tokio::task::yield_now().await;
        lock(&st, "test").waits.close();
        let v = w3.await.unwrap().unwrap();
        assert!(!lock(&st, "test").jobs.get(3).unwrap().state().is_final());
        assert_eq!(
            v["state"],
            lock(&st, "test").jobs.get(3).unwrap().state().as_str()
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
