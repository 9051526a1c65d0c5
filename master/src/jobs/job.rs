//! A job as the master tracks it: attempts, retries, fencing, speculation,
//! progress and the metrics of the design. Pure state: the coordinator
//! (`core`) supplies block locations, turns assignments into launches and
//! performs the commit in the namespace.

use crate::cluster::Outbox;
use protocol::{Command, TaskRef, TaskReport};
use sched::{JobView, Locality, TaskId, TaskKind};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Instant;

pub use super::task::*;

pub struct Job {
    id: u64,
    spec: JobSpec,
    state: JobState,
    error: Option<String>,
    scheduler: String,
    /// Queue position (submission order).
    order: u64,
    submitted: Instant,
    submit_ms: u64,
    end_ms: u64,
    exec_time_s: Option<f64>,
    maps: Vec<Task>,
    reduces: Vec<Task>,
    map_inputs: Vec<MapInput>,
    counters: BTreeMap<String, u64>,
    locality: BTreeMap<Locality, u32>,
    bytes: Bytes6,
    map_response_s: Vec<f64>,
    /// Runtimes of its finished map attempts, seconds: HybSMRP's r (Eq. 1)
    /// is the average map runtime, so reduces stay out.
    map_times_s: Vec<f64>,
    phases: Phases,
    /// Per-attempt records, written to the history when the job ends.
    records: Vec<Value>,
    speculative_launched: u32,
    /// Every worker an attempt of this job was launched on: the ones that
    /// may hold its local files, told to clean up when it ends.
    ran_on: std::collections::BTreeSet<String>,
    speculative_won: u32,
}

/// Speculation starts for a kind once this share of its tasks is done.
pub const SPECULATIVE_DONE_SHARE: f64 = 0.75;

/// What the master must do after a task update.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Stale or unknown: ignored.
    Ignored,
    Progress,
    /// Every task is done: commit the output.
    ReadyToCommit,
    /// The job failed: clean up.
    Failed,
}

impl Job {
    pub fn new(
        id: u64,
        order: u64,
        spec: JobSpec,
        map_inputs: Vec<MapInput>,
        maps: u32,
        scheduler: &str,
        now: Instant,
    ) -> Self {
        let reduces = if spec.map_only { 0 } else { spec.reducers };
        Job {
            ran_on: Default::default(),
            id,
            state: JobState::Queued,
            error: None,
            scheduler: scheduler.to_string(),
            order,
            submitted: now,
            submit_ms: common::now_ms(),
            end_ms: 0,
            exec_time_s: None,
            maps: (0..maps).map(|_| Task::new(now)).collect(),
            reduces: (0..reduces).map(|_| Task::new(now)).collect(),
            map_inputs,
            spec,
            counters: BTreeMap::new(),
            locality: BTreeMap::new(),
            bytes: Bytes6::default(),
            map_response_s: vec![],
            map_times_s: vec![],
            phases: Phases::default(),
            records: vec![],
            speculative_launched: 0,
            speculative_won: 0,
        }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// What the client asked for.
    pub fn spec(&self) -> &JobSpec {
        &self.spec
    }

    pub fn state(&self) -> JobState {
        self.state
    }

    /// The policy that was active when it was submitted.
    pub fn scheduler(&self) -> &str {
        &self.scheduler
    }

    /// Submit to output committed (or to its end), once it ended.
    pub fn exec_time_s(&self) -> Option<f64> {
        self.exec_time_s
    }

    pub fn maps(&self) -> &[Task] {
        &self.maps
    }

    pub fn reduces(&self) -> &[Task] {
        &self.reduces
    }

    /// The tasks whose parts are the output: the reduces, or the maps of a
    /// map-only job.
    pub fn output_tasks(&self) -> &[Task] {
        if self.spec.map_only {
            &self.maps
        } else {
            &self.reduces
        }
    }

    /// One per map, in map order.
    pub fn map_inputs(&self) -> &[MapInput] {
        &self.map_inputs
    }

    /// The counters its successful attempts reported, summed.
    pub fn counters(&self) -> &BTreeMap<String, u64> {
        &self.counters
    }

    /// Its successful maps by the locality level they read at.
    pub fn locality(&self) -> &BTreeMap<Locality, u32> {
        &self.locality
    }

    /// Its finished attempts' records: its history, with its summary, when
    /// it ends.
    pub fn records(&self) -> &[Value] {
        &self.records
    }

    pub fn speculative_launched(&self) -> u32 {
        self.speculative_launched
    }

    pub fn task(&self, kind: TaskKind, index: u32) -> Option<&Task> {
        match kind {
            TaskKind::Map => self.maps.get(index as usize),
            TaskKind::Reduce => self.reduces.get(index as usize),
        }
    }

    fn task_mut(&mut self, kind: TaskKind, index: u32) -> Option<&mut Task> {
        match kind {
            TaskKind::Map => self.maps.get_mut(index as usize),
            TaskKind::Reduce => self.reduces.get_mut(index as usize),
        }
    }

    pub fn maps_done(&self) -> bool {
        self.maps.iter().all(Task::is_done)
    }

    /// Whether its reduces may run: once `slowstart` of its maps are done,
    /// counted as Hadoop counts them (`ceil(slowstart × maps)`). A reduce
    /// launched before the last map gets the outputs still to come pushed
    /// to its worker ([`Job::update`]); it merges only once it has them all.
    pub fn reduces_may_start(&self) -> bool {
        let needed = (self.spec.slowstart * self.maps.len() as f64).ceil() as usize;
        self.maps.iter().filter(|t| t.is_done()).count() >= needed.min(self.maps.len())
    }

    /// Tasks a scheduler may place now: pending maps, and pending reduces
    /// once enough maps are done ([`Job::reduces_may_start`]).
    pub fn runnable(&self) -> Vec<TaskId> {
        if self.state.is_final() {
            return vec![];
        }
        let mut v: Vec<TaskId> = self
            .maps
            .iter()
            .enumerate()
            .filter(|(_, t)| t.is_pending())
            .map(|(i, _)| TaskId {
                job: self.id,
                kind: TaskKind::Map,
                index: i as u32,
            })
            .collect();
        if self.reduces_may_start() {
            v.extend(
                self.reduces
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| t.is_pending())
                    .map(|(i, _)| TaskId {
                        job: self.id,
                        kind: TaskKind::Reduce,
                        index: i as u32,
                    }),
            );
        }
        v
    }

    /// Marks a task launched; returns the attempt number.
    /// The workers its attempts were launched on.
    pub fn ran_on(&self) -> &std::collections::BTreeSet<String> {
        &self.ran_on
    }

    pub fn launch(
        &mut self,
        kind: TaskKind,
        index: u32,
        worker: &str,
        epoch: u64,
        now: Instant,
    ) -> u32 {
        self.state = JobState::Running;
        self.ran_on.insert(worker.to_string());
        let t = self.task_mut(kind, index).expect("task exists");
        let attempt = t.attempts;
        t.attempts += 1;
        t.status = TaskStatus::Running {
            attempt,
            worker: worker.to_string(),
            epoch,
            started: now,
        };
        attempt
    }

    /// Launches a speculative backup of a running task on `worker`; returns
    /// its attempt number, or `None` when the task may not get one.
    pub fn launch_backup(
        &mut self,
        kind: TaskKind,
        index: u32,
        worker: &str,
        epoch: u64,
        now: Instant,
    ) -> Option<u32> {
        let t = self.task_mut(kind, index)?;
        match &t.status {
            TaskStatus::Running { worker: w, .. }
                if w != worker && !t.speculated && !t.avoid.iter().any(|a| a == worker) => {}
            _ => return None,
        }
        let attempt = t.attempts;
        t.attempts += 1;
        t.speculated = true;
        t.backup = Some(Backup {
            attempt,
            worker: worker.to_string(),
            epoch,
            started: now,
        });
        self.speculative_launched += 1;
        self.ran_on.insert(worker.to_string());
        Some(attempt)
    }

    /// Tasks deserving a speculative backup now, slowest first, each with
    /// the nodes a backup may not run on (its running worker and `avoid`).
    ///
    /// The rule is Hadoop's LATE, simplified: once at least 75 % of a job's
    /// tasks of a kind (maps, or reduces) are done, a running attempt whose
    /// elapsed time exceeds max(2 × the median runtime of that kind's
    /// completed attempts, that median + 1 s) gets one backup attempt on
    /// another worker; at most one backup per task. The first attempt to
    /// succeed wins, and the other is killed.
    pub fn speculation_candidates(&self, now: Instant) -> Vec<(TaskId, Vec<String>)> {
        if self.state.is_final() {
            return vec![];
        }
        let mut v = vec![];
        for (kind, tasks) in [
            (TaskKind::Map, &self.maps),
            (TaskKind::Reduce, &self.reduces),
        ] {
            let mut times: Vec<f64> = tasks.iter().filter_map(|t| t.runtime_s).collect();
            if times.is_empty()
                || (times.len() as f64) < SPECULATIVE_DONE_SHARE * tasks.len() as f64
            {
                continue;
            }
            times.sort_by(|a, b| a.total_cmp(b));
            let n = times.len();
            let median = if n % 2 == 1 {
                times[n / 2]
            } else {
                (times[n / 2 - 1] + times[n / 2]) / 2.0
            };
            let threshold = (2.0 * median).max(median + 1.0);
            for (i, t) in tasks.iter().enumerate() {
                if let TaskStatus::Running {
                    worker, started, ..
                } = &t.status
                {
                    let elapsed = now.saturating_duration_since(*started).as_secs_f64();
                    if !t.speculated && t.backup.is_none() && elapsed > threshold {
                        let mut not_on = t.avoid.clone();
                        not_on.push(worker.clone());
                        v.push((
                            elapsed,
                            TaskId {
                                job: self.id,
                                kind,
                                index: i as u32,
                            },
                            not_on,
                        ));
                    }
                }
            }
        }
        v.sort_by(|a, b| b.0.total_cmp(&a.0));
        v.into_iter().map(|(_, id, n)| (id, n)).collect()
    }

    /// A worker died: its running attempts go back to the queue (not counted
    /// as failures), and so do its finished maps while a reduce still needs
    /// their output (Hadoop's `actOnUnusableNode`). Reduces running
    /// elsewhere would only retry fetches from the dead worker until they
    /// fail, so they go back too, to run again once the lost maps have:
    /// their attempts are killed through `out`.
    pub fn worker_lost(&mut self, worker: &str, now: Instant, out: &mut Outbox) {
        if self.state.is_final() {
            return;
        }
        let reduces_need_maps = !self.spec.map_only && !self.reduces.iter().all(Task::is_done);
        let mut lost_maps = false;
        for kind in [TaskKind::Map, TaskKind::Reduce] {
            let n = match kind {
                TaskKind::Map => self.maps.len(),
                TaskKind::Reduce => self.reduces.len(),
            };
            for i in 0..n as u32 {
                // A speculated task keeps running on its other worker.
                let job_id = self.id;
                let t = self.task_mut(kind, i).expect("in range");
                if t.backup.as_ref().is_some_and(|b| b.worker == worker) {
                    tracing::warn!(
                        job = job_id,
                        ?kind,
                        index = i,
                        worker,
                        "backup attempt dropped: its worker was lost"
                    );
                    t.backup = None;
                    continue;
                }
                if let (TaskStatus::Running { worker: w, .. }, Some(b)) = (&t.status, &t.backup) {
                    if w == worker {
                        tracing::warn!(
                            job = job_id,
                            ?kind,
                            index = i,
                            worker,
                            "primary attempt dropped: its worker was lost; the backup runs on"
                        );
                        t.status = TaskStatus::Running {
                            attempt: b.attempt,
                            worker: b.worker.clone(),
                            epoch: b.epoch,
                            started: b.started,
                        };
                        t.backup = None;
                        continue;
                    }
                }
                let t = self.task(kind, i).expect("in range");
                let hit = match &t.status {
                    TaskStatus::Running { worker: w, .. } => w == worker,
                    TaskStatus::Done { worker: w, .. } => {
                        w == worker && kind == TaskKind::Map && reduces_need_maps
                    }
                    TaskStatus::Pending => false,
                };
                if hit {
                    lost_maps |= kind == TaskKind::Map && t.is_done();
                    tracing::warn!(
                        job = self.id,
                        ?kind,
                        index = i,
                        worker,
                        "re-queued: its worker was lost"
                    );
                    self.requeue(kind, i, now);
                }
            }
        }
        if !lost_maps {
            return;
        }
        let kills: Vec<_> = self
            .running_attempts()
            .into_iter()
            .filter(|(_, t)| !t.is_map)
            .collect();
        for (w, t) in kills {
            tracing::info!(job = self.id, index = t.index, worker = %w,
                "reduce re-queued: map outputs it needs were lost");
            self.requeue(TaskKind::Reduce, t.index, now);
            out.send(&w, Command::KillTask(t));
        }
    }

    pub fn fail(&mut self, why: String) {
        tracing::error!(job = self.id, "job failed: {why}");
        self.error = Some(why);
        self.finish(JobState::Failed);
    }

    pub fn finish(&mut self, state: JobState) {
        self.state = state;
        self.end_ms = common::now_ms();
        self.exec_time_s = Some(self.submitted.elapsed().as_secs_f64());
    }

    /// After its final state (or as a failure, if it has none yet): its
    /// attempts stop holding slots (their tasks go back to pending, never
    /// to run again: the job is final); returns what its history is made
    /// of, its attempt records and its summary.
    pub fn end(&mut self) -> (Vec<Value>, Value) {
        if !self.state.is_final() {
            self.finish(JobState::Failed);
        }
        for t in self.maps.iter_mut().chain(self.reduces.iter_mut()) {
            if t.is_running() {
                t.status = TaskStatus::Pending;
            }
            t.backup = None;
        }
        let summary = self.summary();
        (self.records.clone(), summary)
    }

    /// Workers running an attempt of this job, with the attempt, as the
    /// wire names it (to kill it).
    pub fn running_attempts(&self) -> Vec<(String, TaskRef)> {
        self.running()
            .into_iter()
            .map(|r| {
                let t = TaskRef {
                    job_id: self.id,
                    is_map: r.id.kind == TaskKind::Map,
                    index: r.id.index,
                    attempt: r.attempt,
                };
                (r.worker, t)
            })
            .collect()
    }

    /// Every running attempt of this job.
    pub fn running(&self) -> Vec<RunningAttempt> {
        let mut v = vec![];
        self.each_running(|worker, id, attempt, started| {
            v.push(RunningAttempt {
                worker: worker.to_string(),
                id,
                attempt,
                started,
            })
        });
        v
    }

    /// Calls `f(worker, task, attempt, started)` for every running attempt
    /// (backups included), copying nothing: the scheduling view reads them
    /// at every task report.
    pub fn each_running<'a>(&'a self, mut f: impl FnMut(&'a str, TaskId, u32, Instant)) {
        for (kind, tasks) in [
            (TaskKind::Map, &self.maps),
            (TaskKind::Reduce, &self.reduces),
        ] {
            for (i, t) in tasks.iter().enumerate() {
                if let TaskStatus::Running {
                    attempt,
                    worker,
                    started,
                    ..
                } = &t.status
                {
                    let id = TaskId {
                        job: self.id,
                        kind,
                        index: i as u32,
                    };
                    f(worker, id, *attempt, *started);
                    if let Some(b) = &t.backup {
                        f(&b.worker, id, b.attempt, b.started);
                    }
                }
            }
        }
    }

    pub fn view(&self, epoch: Instant) -> JobView {
        let count = |f: fn(&Task) -> bool| -> u32 {
            (self.maps.iter().filter(|t| f(t)).count()
                + self.reduces.iter().filter(|t| f(t)).count()) as u32
        };
        JobView {
            id: self.id,
            name: self.spec.job.clone(),
            submit_time: self
                .submitted
                .saturating_duration_since(epoch)
                .as_secs_f64(),
            pool: self.spec.queue.clone(),
            order: self.order,
            maps_total: self.maps.len() as u32,
            reduces_total: self.reduces.len() as u32,
            done: count(Task::is_done),
            running: count(Task::is_running),
            pending: count(Task::is_pending),
            running_maps: self.maps.iter().filter(|t| t.is_running()).count() as u32,
            pending_maps: self.maps.iter().filter(|t| t.is_pending()).count() as u32,
            avg_map_time: if self.map_times_s.is_empty() {
                0.0
            } else {
                self.map_times_s.iter().sum::<f64>() / self.map_times_s.len() as f64
            },
        }
    }

    /// The job summary object of the design (what `--json` prints).
    pub fn summary(&self) -> Value {
        let mut rt = self.map_response_s.clone();
        rt.sort_by(|a, b| a.total_cmp(b));
        let pct = |p: f64| -> f64 {
            if rt.is_empty() {
                0.0
            } else {
                rt[((rt.len() - 1) as f64 * p).round() as usize]
            }
        };
        let mean = if rt.is_empty() {
            0.0
        } else {
            rt.iter().sum::<f64>() / rt.len() as f64
        };
        let loc: serde_json::Map<String, Value> = Locality::ALL
            .iter()
            .map(|l| {
                (
                    l.as_str().to_string(),
                    json!(self.locality.get(l).copied().unwrap_or(0)),
                )
            })
            .collect();
        let exec = self
            .exec_time_s
            .unwrap_or_else(|| self.submitted.elapsed().as_secs_f64());
        json!({
            "job_id": self.id,
            "job": self.spec.job,
            "scheduler": self.scheduler,
            "state": self.state.as_str(),
            "error": self.error,
            "input": self.spec.inputs,
            "output": self.spec.output,
            "queue": self.spec.queue,
            "owner": self.spec.owner,
            "submit_ms": self.submit_ms,
            "end_ms": self.end_ms,
            "exec_time_s": exec,
            "maps": self.maps.len(),
            "reduces": self.reduces.len(),
            "progress": {
                "maps_done": self.maps.iter().filter(|t| t.is_done()).count(),
                "maps_running": self.maps.iter().filter(|t| t.is_running()).count(),
                "reduces_done": self.reduces.iter().filter(|t| t.is_done()).count(),
                "reduces_running": self.reduces.iter().filter(|t| t.is_running()).count(),
                // Attempts failed by the task's own fault (a task timeout
                // included), as Hadoop's "failed task attempts".
                "map_attempts_failed": self.maps.iter().map(|t| t.failures).sum::<u32>(),
                "reduce_attempts_failed": self.reduces.iter().map(|t| t.failures).sum::<u32>(),
            },
            "locality": loc,
            "bytes": {
                "cache": self.bytes.cache,
                "local": self.bytes.local,
                "remote_rack": self.bytes.remote_rack,
                "remote_off_rack": self.bytes.remote_off_rack,
                "shuffle": self.bytes.shuffle,
                "output": self.bytes.output,
            },
            "map_response_time_s": {"mean": mean, "p50": pct(0.5), "p95": pct(0.95)},
            "phases_s": self.phases.to_json(),
            "speculative_launched": self.speculative_launched,
            "speculative_won": self.speculative_won,
            "counters": self.counters,
        })
    }
}

/// Where attempt `attempt` of part `index` is written before commit.
pub fn staging_dir(job: u64) -> String {
    format!("/_staging/job-{job}")
}

pub fn staging_part(job: u64, index: u32, attempt: u32) -> String {
    format!("{}/part-{index:05}.attempt-{attempt}", staging_dir(job))
}

#[path = "job_update.rs"]
mod update;

#[cfg(test)]
#[path = "job_tests.rs"]
mod tests;
