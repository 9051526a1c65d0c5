//! The job side of the master: jobs, their tasks and attempts, the policy
//! that places them, and what each job leaves behind (its history file,
//! its summary). It reads the block tables ([`crate::blocks`]) to plan map
//! inputs and never changes them: committing a job's output and removing
//! its staging is the coordinator's (`core`).

pub mod disk;
pub mod history;
pub mod job;
pub mod launch;
pub mod owner;
pub mod recovery;
pub mod report;
pub mod schedstate;
pub mod stalls;
pub mod submit;
pub mod task;

use crate::cluster::Outbox;
use crate::error::{MasterError, Result};
use disk::Disk;
pub use job::{staging_dir, staging_part, Job, Outcome};
use protocol::{TaskRef, TaskReport};
use report::Ended;
use sched::{Assignment, ClusterView, Scheduler, SchedulerSpec, TaskId, TaskKind, Trigger};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;
pub use task::{JobSpec, JobState, MapInput, TaskStatus};

pub struct Jobs {
    /// Jobs not yet ended ([`Jobs::end`]): every event reads them, so they
    /// are kept apart from the ended ones, which only grow.
    live: BTreeMap<u64, Job>,
    /// Ended jobs of this master run, kept for their summaries.
    ended: BTreeMap<u64, Job>,
    next_id: u64,
    scheduler: Box<dyn Scheduler>,
    spec: SchedulerSpec,
    /// The scheduler clock's zero.
    started: Instant,
    /// Task reports fed to the policy, to save its state every
    /// [`schedstate::SAVE_EVERY`].
    reports: u64,
    /// Jobs whose `submitted` record is being written: not yet placed,
    /// listed or known to any client (see `disk.rs`).
    admitting: BTreeMap<u64, Job>,
    /// The final record of every job of an earlier master run.
    earlier: BTreeMap<u64, Value>,
    /// Jobs an earlier master run left running, failed by this start.
    interrupted: Vec<u64>,
    /// The job side's files (histories, submissions, the policy's state),
    /// written off the lock.
    disk: Disk,
    /// Running attempts' progress counters, for the task timeout.
    stalls: stalls::Stalls,
}

impl Jobs {
    /// The policy `spec` names, with what it learnt in an earlier run, and
    /// job ids going on from the last run's. `committed` says whether a job
    /// output was committed (see `recovery.rs`).
    pub fn open(
        spec: SchedulerSpec,
        data_dir: PathBuf,
        now: Instant,
        committed: &dyn Fn(&str) -> bool,
    ) -> Result<Self> {
        let mut scheduler = build(&spec)?;
        // At start, before the state is shared: no lock to keep waiting.
        schedstate::load(&data_dir, scheduler.as_mut());
        let found = recovery::recover(&data_dir.join("history"), common::now_ms(), committed);
        Ok(Jobs {
            live: BTreeMap::new(),
            ended: BTreeMap::new(),
            next_id: found.next_id,
            scheduler,
            spec,
            started: now,
            reports: 0,
            admitting: BTreeMap::new(),
            earlier: found.summaries,
            interrupted: found.interrupted,
            disk: Disk::new(data_dir),
            stalls: Default::default(),
        })
    }

    /// The output and owner of each job this start failed: what their
    /// admission made is removed if they left it empty.
    pub fn interrupted_outputs(&self) -> Vec<(String, String)> {
        self.interrupted
            .iter()
            .filter_map(|id| self.earlier.get(id))
            .filter_map(|v| {
                let output = v["output"].as_str()?.to_string();
                Some((output, v["owner"].as_str().unwrap_or("").to_string()))
            })
            .collect()
    }

    pub fn get(&self, id: u64) -> Option<&Job> {
        self.live.get(&id).or_else(|| self.ended.get(&id))
    }

    fn get_mut(&mut self, id: u64) -> Option<&mut Job> {
        match self.live.get_mut(&id) {
            Some(j) => Some(j),
            None => self.ended.get_mut(&id),
        }
    }

    /// Every job of this master run, by id, ended ones included: for
    /// listings, which are rare (a sort over every job).
    pub fn iter(&self) -> impl Iterator<Item = &Job> {
        let mut all: Vec<&Job> = self.live.values().chain(self.ended.values()).collect();
        all.sort_unstable_by_key(|j| j.id());
        all.into_iter()
    }

    /// How many jobs this master run knows.
    pub fn len(&self) -> usize {
        self.live.len() + self.ended.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Jobs not yet ended, by id: the only ones with running attempts
    /// ([`Job::end`] stops them), what every event reads.
    pub fn live(&self) -> impl Iterator<Item = &Job> {
        self.live.values()
    }

    /// The id the next accepted job gets.
    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// Jobs not yet in a final state.
    pub fn active(&self) -> impl Iterator<Item = &Job> {
        self.live.values().filter(|j| !j.state().is_final())
    }

    /// The job, running or still being admitted, whose output `path` is,
    /// is inside, or holds: until that job ends, nothing else writes
    /// there (its parts appear at its commit).
    pub fn output_owner(&self, path: &str) -> Option<u64> {
        let nested =
            |a: &str, b: &str| a == b || a.strip_prefix(b).is_some_and(|r| r.starts_with('/'));
        self.active()
            .chain(self.admitting.values())
            .find(|j| {
                let o = j.spec().output.as_str();
                nested(path, o) || nested(o, path)
            })
            .map(|j| j.id())
    }

    /// The scheduler clock's zero: views give times as seconds since it.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Pending runnable tasks over every job: what an event compares before
    /// and after to tell whether it brought new work.
    pub fn runnable_count(&self) -> usize {
        self.active().map(|j| j.runnable().len()).sum()
    }

    /// Map and reduce attempts running on `worker` (backups included).
    pub fn slots_used(&self, worker: &str) -> (u32, u32) {
        let mut m = 0;
        let mut r = 0;
        for j in self.live.values() {
            for a in j.running() {
                if a.worker == worker {
                    if a.id.kind == TaskKind::Map {
                        m += 1;
                    } else {
                        r += 1;
                    }
                }
            }
        }
        (m, r)
    }

    /// A heartbeat's progress counters (see `stalls.rs`).
    pub fn note_progress(&mut self, epoch: u64, progress: &[(TaskRef, u64)], now: Instant) {
        self.stalls.note(epoch, progress, now);
    }

    /// Running attempts whose progress has not moved for `timeout`.
    pub fn stalled(
        &mut self,
        now: Instant,
        timeout: std::time::Duration,
    ) -> Vec<(String, TaskRef, std::time::Duration)> {
        let running: Vec<(String, TaskRef)> =
            self.active().flat_map(|j| j.running_attempts()).collect();
        self.stalls.stalled(&running, now, timeout)
    }

    /// Applies a worker's report on one attempt to its job.
    pub fn report(
        &mut self,
        r: &TaskReport,
        worker_addr: &str,
        now: Instant,
        out: &mut Outbox,
    ) -> Outcome {
        let job_id = r.task.job_id;
        match self.get_mut(job_id) {
            Some(j) => j.update(r, worker_addr, now, out),
            None => Outcome::Ignored,
        }
    }

    /// Tells the policy of a finished attempt, and saves what it learnt
    /// every [`schedstate::SAVE_EVERY`] reports.
    pub fn tell_policy(&mut self, view: &ClusterView, r: &TaskReport) {
        let name = self.get(r.task.job_id).map(|j| j.spec().job.clone());
        let report = r.for_policy(name.unwrap_or_default());
        self.scheduler.on_task_finished(view, &report);
        self.reports += 1;
        if self.reports.is_multiple_of(schedstate::SAVE_EVERY) {
            self.save_policy();
        }
    }

    /// The policy's decision on `view`.
    pub fn assign(&mut self, view: &ClusterView, trigger: Trigger) -> Vec<Assignment> {
        self.scheduler.assign(view, trigger)
    }

    /// Whether task `id` may be launched now (pending, and a reduce only
    /// once enough maps are done); `None` when its job is unknown.
    pub fn launchable(&self, id: TaskId) -> Option<bool> {
        let job = self.live.get(&id.job)?;
        Some(
            job.task(id.kind, id.index).is_some_and(|t| t.is_pending())
                && (id.kind == TaskKind::Map || job.reduces_may_start()),
        )
    }

    /// Records the launch of task `id` on `worker`; returns the attempt
    /// number. The caller checked [`Jobs::launchable`].
    pub fn launch(&mut self, id: TaskId, worker: &str, epoch: u64, now: Instant) -> Option<u32> {
        let job = self.live.get_mut(&id.job)?;
        Some(job.launch(id.kind, id.index, worker, epoch, now))
    }

    /// Records a speculative backup of task `id` on `worker`; `None` when
    /// the task may not get one.
    pub fn launch_backup(
        &mut self,
        id: TaskId,
        worker: &str,
        epoch: u64,
        now: Instant,
    ) -> Option<u32> {
        self.live
            .get_mut(&id.job)?
            .launch_backup(id.kind, id.index, worker, epoch, now)
    }

    /// Tasks deserving a speculative backup now, over every job.
    pub fn speculation_candidates(&self, now: Instant) -> Vec<(TaskId, Vec<String>)> {
        self.live
            .values()
            .flat_map(|j| j.speculation_candidates(now))
            .collect()
    }

    /// A worker was lost: re-queues what it ran or holds for running jobs,
    /// and kills through `out` the reduces that re-queueing made useless.
    pub fn worker_lost(&mut self, name: &str, now: Instant, out: &mut Outbox) {
        for j in self.live.values_mut() {
            j.worker_lost(name, now, out);
        }
    }

    /// Fails job `id` with `why`.
    pub fn fail(&mut self, id: u64, why: String) {
        if let Some(j) = self.get_mut(id) {
            j.fail(why);
        }
    }

    /// Puts job `id` in its final state `state`.
    pub fn finish(&mut self, id: u64, state: JobState) {
        if let Some(j) = self.get_mut(id) {
            j.finish(state);
        }
    }

    /// See [`Job::end`]; the job moves to the ended ones.
    pub fn end(&mut self, id: u64) -> Option<(Vec<Value>, Value)> {
        if let Some(job) = self.live.remove(&id) {
            self.ended.insert(id, job);
        }
        self.ended.get_mut(&id).map(Job::end)
    }

    /// A job built by a test, queued as a submission would queue it.
    #[cfg(test)]
    pub(crate) fn insert_for_tests(&mut self, job: Job) {
        self.live.insert(job.id(), job);
    }

    /// Queues a save of what the policy learnt.
    pub fn save_policy(&self) {
        if let Some(text) = self.scheduler.save_state() {
            self.disk.save_policy(self.scheduler.name(), text);
        }
    }

    /// The job side's file queue (see `disk.rs`).
    pub fn disk(&self) -> &Disk {
        &self.disk
    }

    /// Installs `policy`, built by the caller from `spec` with the state it
    /// read off the lock (`core/offlock.rs`), after queueing a save of the
    /// one it replaces.
    pub fn set_scheduler(&mut self, spec: SchedulerSpec, policy: Box<dyn Scheduler>) {
        self.save_policy();
        tracing::info!(scheduler = %spec.name, params = ?spec.params, "scheduler switched");
        self.scheduler = policy;
        self.spec = spec;
    }

    pub fn scheduler_spec(&self) -> &SchedulerSpec {
        &self.spec
    }
}

/// The policy `spec` names; a bad spec is the caller's invalid argument.
pub(crate) fn build(spec: &SchedulerSpec) -> Result<Box<dyn Scheduler>> {
    sched::build(spec).map_err(|e| MasterError::InvalidArgument(e.to_string()))
}
