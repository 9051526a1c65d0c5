//! Jobs and their tasks as the master tracks them: attempts, retries,
//! fencing, progress and the metrics of the design. Pure state: the caller
//! (`state.rs`) supplies block locations, turns assignments into launches and
//! performs the commit in the namespace.

use common::sched::{JobView, Locality, TaskId, TaskKind};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Instant;

/// Attempts of one task before its job fails, as Hadoop's
/// `mapreduce.{map,reduce}.maxattempts`.
pub const MAX_ATTEMPTS: u32 = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Queued,
    Running,
    Succeeded,
    Failed,
    Killed,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Failed => "failed",
            JobState::Killed => "killed",
        }
    }

    pub fn is_final(self) -> bool {
        matches!(
            self,
            JobState::Succeeded | JobState::Failed | JobState::Killed
        )
    }
}

/// A map's input: one block, where it sits in its file, and the blocks after
/// it (a record straddling the block's end is finished from them).
#[derive(Debug, Clone)]
pub struct MapInput {
    pub block: crate::namespace::BlockMeta,
    pub offset: u64,
    pub following: Vec<crate::namespace::BlockMeta>,
}

#[derive(Debug, Clone)]
pub enum TaskStatus {
    Pending,
    Running {
        attempt: u32,
        worker: String,
        epoch: u64,
        started: Instant,
    },
    Done {
        attempt: u32,
        worker: String,
        addr: String,
    },
}

#[derive(Debug, Clone)]
pub struct Task {
    pub status: TaskStatus,
    /// Attempts launched so far; the next one gets this number.
    pub attempts: u32,
    /// Attempts that failed by the task's own fault (not node loss, not a
    /// fetch failure): the job fails when this reaches [`MAX_ATTEMPTS`].
    pub failures: u32,
    /// Nodes where an attempt failed.
    pub avoid: Vec<String>,
    pub runnable_since: Instant,
    /// The committed attempt's staging path (reduces and map-only maps).
    pub output: Option<String>,
}

impl Task {
    fn new(now: Instant) -> Self {
        Task {
            status: TaskStatus::Pending,
            attempts: 0,
            failures: 0,
            avoid: vec![],
            runnable_since: now,
            output: None,
        }
    }

    pub fn is_pending(&self) -> bool {
        matches!(self.status, TaskStatus::Pending)
    }

    pub fn is_done(&self) -> bool {
        matches!(self.status, TaskStatus::Done { .. })
    }

    pub fn is_running(&self) -> bool {
        matches!(self.status, TaskStatus::Running { .. })
    }
}

/// A task attempt occupying a worker's slot.
#[derive(Debug, Clone)]
pub struct RunningAttempt {
    pub worker: String,
    pub id: TaskId,
    pub attempt: u32,
    pub started: Instant,
}

/// What the client asked for.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub job: String,
    pub inputs: Vec<String>,
    pub output: String,
    pub reducers: u32,
    pub params_json: String,
    pub output_replication: u32,
    pub output_block_size: u64,
    pub splits: Vec<Vec<u8>>,
    pub queue: String,
    pub sort_buffer_bytes: u64,
    pub map_only: bool,
}

#[derive(Debug, Default, Clone)]
pub struct Bytes6 {
    pub cache: u64,
    pub local: u64,
    pub remote_rack: u64,
    pub remote_off_rack: u64,
    pub shuffle: u64,
    pub output: u64,
}

pub struct Job {
    pub id: u64,
    pub spec: JobSpec,
    pub state: JobState,
    pub error: Option<String>,
    pub scheduler: String,
    /// Queue position (submission order).
    pub order: u64,
    pub submitted: Instant,
    pub submit_ms: u64,
    pub end_ms: u64,
    pub exec_time_s: Option<f64>,
    pub maps: Vec<Task>,
    pub reduces: Vec<Task>,
    pub map_inputs: Vec<MapInput>,
    pub counters: BTreeMap<String, u64>,
    pub locality: BTreeMap<Locality, u32>,
    pub bytes: Bytes6,
    pub map_response_s: Vec<f64>,
    pub task_times_s: Vec<f64>,
    /// Per-attempt records, written to the history when the job ends.
    pub records: Vec<Value>,
}

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
            task_times_s: vec![],
            records: vec![],
        }
    }

    pub fn task(&self, kind: TaskKind, index: u32) -> Option<&Task> {
        match kind {
            TaskKind::Map => self.maps.get(index as usize),
            TaskKind::Reduce => self.reduces.get(index as usize),
        }
    }

    pub fn task_mut(&mut self, kind: TaskKind, index: u32) -> Option<&mut Task> {
        match kind {
            TaskKind::Map => self.maps.get_mut(index as usize),
            TaskKind::Reduce => self.reduces.get_mut(index as usize),
        }
    }

    pub fn maps_done(&self) -> bool {
        self.maps.iter().all(Task::is_done)
    }

    /// Tasks a scheduler may place now: pending maps, and pending reduces
    /// once every map is done (reduces start when their input is complete).
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
        if self.maps_done() {
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
    pub fn launch(
        &mut self,
        kind: TaskKind,
        index: u32,
        worker: &str,
        epoch: u64,
        now: Instant,
    ) -> u32 {
        self.state = JobState::Running;
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

    /// Applies a task report. Reports from another attempt or another worker
    /// incarnation than the running one are stale and ignored (fencing).
    pub fn update(
        &mut self,
        r: &proto::TaskUpdateRequest,
        worker_addr: &str,
        now: Instant,
    ) -> Outcome {
        if self.state.is_final() {
            return Outcome::Ignored;
        }
        let Some(tref) = r.task else {
            return Outcome::Ignored;
        };
        let kind = if tref.is_map {
            TaskKind::Map
        } else {
            TaskKind::Reduce
        };
        let Some(task) = self.task(kind, tref.index) else {
            return Outcome::Ignored;
        };
        let (started, runnable_since) = match &task.status {
            TaskStatus::Running {
                attempt,
                worker,
                epoch,
                started,
            } if *attempt == tref.attempt && *worker == r.worker && *epoch == r.epoch => {
                (*started, task.runnable_since)
            }
            _ => {
                tracing::info!(job = self.id, ?kind, index = tref.index, attempt = tref.attempt, worker = %r.worker,
                    "stale task report fenced off");
                return Outcome::Ignored;
            }
        };
        let m = r.metrics.clone().unwrap_or_default();
        let runtime = now.saturating_duration_since(started).as_secs_f64();
        self.records.push(json!({
            "type": "task",
            "job_id": self.id,
            "kind": if tref.is_map { "map" } else { "reduce" },
            "index": tref.index,
            "attempt": tref.attempt,
            "node": r.worker,
            "state": if r.succeeded { "succeeded" } else if r.handed_back { "handed_back" } else { "failed" },
            "error": r.error,
            "locality": m.locality,
            "start_ms": m.start_ms,
            "end_ms": m.end_ms,
            "runtime_s": runtime,
            "bytes": {"cache": m.bytes_cache, "local": m.bytes_local, "remote_rack": m.bytes_remote_rack,
                      "remote_off_rack": m.bytes_remote_off_rack, "shuffle": m.bytes_shuffle, "output": m.bytes_output},
            "records_in": m.records_in,
            "records_out": m.records_out,
            "spills": m.spills,
            "cpu_s": m.cpu_s,
            "peak_mem_bytes": m.peak_mem_bytes,
        }));
        if r.succeeded {
            let keeps_output = !tref.is_map || self.spec.map_only;
            let id = self.id;
            let t = self.task_mut(kind, tref.index).expect("exists");
            t.status = TaskStatus::Done {
                attempt: tref.attempt,
                worker: r.worker.clone(),
                addr: worker_addr.to_string(),
            };
            if keeps_output {
                t.output = Some(staging_part(id, tref.index, tref.attempt));
            }
            for (k, v) in &r.counters {
                // Checksum counters are sums that may wrap, by definition.
                let c = self.counters.entry(k.clone()).or_default();
                *c = c.wrapping_add(*v);
            }
            if tref.is_map {
                if let Some(l) = Locality::parse(&m.locality) {
                    *self.locality.entry(l).or_default() += 1;
                }
                self.map_response_s
                    .push(now.saturating_duration_since(runnable_since).as_secs_f64());
            }
            self.task_times_s.push(runtime);
            self.bytes.cache += m.bytes_cache;
            self.bytes.local += m.bytes_local;
            self.bytes.remote_rack += m.bytes_remote_rack;
            self.bytes.remote_off_rack += m.bytes_remote_off_rack;
            self.bytes.shuffle += m.bytes_shuffle;
            self.bytes.output += m.bytes_output;
            if self.maps_done() && self.reduces.iter().all(Task::is_done) {
                return Outcome::ReadyToCommit;
            }
            return Outcome::Progress;
        }
        // A failed attempt.
        if r.handed_back {
            // Its worker is shutting down: run it elsewhere, not a failure.
            self.requeue(kind, tref.index, now);
            return Outcome::Progress;
        }
        if r.fetch_failure && !tref.is_map {
            // The map output is lost, not the reduce's fault: re-run the map,
            // and the reduce again once every map is done.
            self.requeue(kind, tref.index, now);
            if (r.failed_map as usize) < self.maps.len() {
                tracing::warn!(
                    job = self.id,
                    map = r.failed_map,
                    "fetch failure: re-running the map"
                );
                self.requeue(TaskKind::Map, r.failed_map, now);
            }
            return Outcome::Progress;
        }
        let t = self.task_mut(kind, tref.index).expect("exists");
        t.failures += 1;
        if !t.avoid.contains(&r.worker) {
            t.avoid.push(r.worker.clone());
        }
        t.status = TaskStatus::Pending;
        t.runnable_since = now;
        if t.failures >= MAX_ATTEMPTS {
            self.fail(format!(
                "{} task {} failed {MAX_ATTEMPTS} times; last error: {}",
                if tref.is_map { "map" } else { "reduce" },
                tref.index,
                r.error
            ));
            return Outcome::Failed;
        }
        Outcome::Progress
    }

    fn requeue(&mut self, kind: TaskKind, index: u32, now: Instant) {
        if let Some(t) = self.task_mut(kind, index) {
            t.status = TaskStatus::Pending;
            t.runnable_since = now;
            t.output = None;
        }
    }

    /// A worker died: its running attempts go back to the queue (not counted
    /// as failures), and so do its finished maps while a reduce still needs
    /// their output (Hadoop's `actOnUnusableNode`). Reduces running
    /// elsewhere would only retry fetches from the dead worker until they
    /// fail, so they go back too, to run again once the lost maps have:
    /// the attempts returned are to be killed on their workers.
    pub fn worker_lost(&mut self, worker: &str, now: Instant) -> Vec<(String, proto::TaskRef)> {
        if self.state.is_final() {
            return Vec::new();
        }
        let reduces_need_maps = !self.spec.map_only && !self.reduces.iter().all(Task::is_done);
        let mut lost_maps = false;
        for kind in [TaskKind::Map, TaskKind::Reduce] {
            let n = match kind {
                TaskKind::Map => self.maps.len(),
                TaskKind::Reduce => self.reduces.len(),
            };
            for i in 0..n as u32 {
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
            return Vec::new();
        }
        let kills: Vec<_> = self
            .running_attempts()
            .into_iter()
            .filter(|(_, t)| !t.is_map)
            .collect();
        for (w, t) in &kills {
            tracing::info!(job = self.id, index = t.index, worker = %w,
                "reduce re-queued: map outputs it needs were lost");
            self.requeue(TaskKind::Reduce, t.index, now);
        }
        kills
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

    /// Workers running an attempt of this job, with the attempt, as the
    /// wire names it (to kill it).
    pub fn running_attempts(&self) -> Vec<(String, proto::TaskRef)> {
        self.running()
            .into_iter()
            .map(|r| {
                let t = proto::TaskRef {
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
                    v.push(RunningAttempt {
                        worker: worker.clone(),
                        id: TaskId {
                            job: self.id,
                            kind,
                            index: i as u32,
                        },
                        attempt: *attempt,
                        started: *started,
                    });
                }
            }
        }
        v
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
            avg_task_time: if self.task_times_s.is_empty() {
                0.0
            } else {
                self.task_times_s.iter().sum::<f64>() / self.task_times_s.len() as f64
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
