//! A job's tasks and attempts, its spec, and the figures kept per job.

use protocol::{BlockInfo, MapOutputLocation, TaskMetrics};
use sched::TaskId;
use serde_json::{json, Value};
use std::time::Instant;

/// Attempts of one task before its job fails, as Hadoop's
/// `mapreduce.{map,reduce}.maxattempts`.
pub const MAX_ATTEMPTS: u32 = 4;

/// Attempts of one task launched, whatever ended them (its own failures,
/// fetch failures, lost workers, speculation), before its job fails: the
/// bound that keeps a reducer on a broken host, or maps whose output keeps
/// vanishing, from re-running a job for ever.
pub const MAX_LAUNCHES: u32 = 4 * MAX_ATTEMPTS;

/// Fetch-failure reports against one map's output before the map is
/// declared faulty and re-run, as Hadoop's
/// `mapreduce.reduce.shuffle.max-fetch-failures-notifications`...
pub const FETCH_FAILURE_REPORTS: usize = 3;
/// ...once the reduces reporting it are also at least this share of the
/// reduces still to finish (`max-fetch-failures-fraction`): one reducer on
/// a broken host cannot condemn a map, and with a single reduce three of
/// its attempts, each moved to another worker, must fail.
pub const FETCH_FAILURE_FRACTION: f64 = 0.5;

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
    /// The file the block is of: a map of a job over several inputs may
    /// need to know which (a reduce-side join tags its records by it).
    pub path: std::sync::Arc<str>,
    pub block: BlockInfo,
    pub offset: u64,
    pub following: Vec<BlockInfo>,
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
    /// Maps: the reduces that failed to fetch the current output, one entry
    /// per report (a reduce may report several times); cleared when the
    /// map runs again.
    pub fetch_reports: Vec<u32>,
    pub runnable_since: Instant,
    /// The committed attempt's staging path (reduces and map-only maps).
    pub output: Option<String>,
    /// A speculative copy running beside the `Running` attempt.
    pub backup: Option<Backup>,
    /// A backup was launched for this task already (at most one per task).
    pub speculated: bool,
    /// The winning attempt's runtime, once done (for the speculation median).
    pub runtime_s: Option<f64>,
}

/// A speculative attempt of a running task, on another worker.
#[derive(Debug, Clone)]
pub struct Backup {
    pub attempt: u32,
    pub worker: String,
    pub epoch: u64,
    pub started: Instant,
}

impl Task {
    pub(super) fn new(now: Instant) -> Self {
        Task {
            status: TaskStatus::Pending,
            attempts: 0,
            failures: 0,
            avoid: vec![],
            fetch_reports: vec![],
            runnable_since: now,
            output: None,
            backup: None,
            speculated: false,
            runtime_s: None,
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

    /// Where this task's output is, as map `index`, once it is done.
    pub fn output_location(&self, index: u32) -> Option<MapOutputLocation> {
        match &self.status {
            TaskStatus::Done {
                attempt,
                worker,
                addr,
            } => Some(MapOutputLocation {
                map_index: index,
                attempt: *attempt,
                worker: worker.clone(),
                addr: addr.clone(),
            }),
            _ => None,
        }
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
    /// `params_json` decoded, once, at submission.
    pub params: mrjob::JobParams,
    /// A validator fails when what it checked is wrong (`JobPlan::validator`).
    pub is_validator: bool,
    /// The job's plan as JSON, passed on to every launch: how a worker
    /// cuts and writes the records of a job it has no code for.
    pub plan_json: String,
    pub output_replication: u32,
    pub output_block_size: u64,
    pub splits: Vec<Vec<u8>>,
    pub queue: String,
    pub sort_buffer_bytes: u64,
    pub map_only: bool,
    /// The fraction of its maps done before its reduces may start (the
    /// `slowstart` parameter, Hadoop's
    /// `mapreduce.job.reduce.slowstart.completedmaps`); 1 by default.
    pub slowstart: f64,
    /// The user who submitted it (`auth`); empty from old callers.
    pub owner: String,
}

/// A WordCount of `/in` into `/out`: the spec the master's unit tests run.
#[cfg(test)]
impl JobSpec {
    pub(crate) fn wordcount_for_tests(reducers: u32) -> JobSpec {
        JobSpec {
            job: "wordcount".into(),
            inputs: vec!["/in".into()],
            output: "/out".into(),
            reducers,
            params_json: String::new(),
            params: Default::default(),
            is_validator: false,
            plan_json: String::new(),
            output_replication: 1,
            output_block_size: 1 << 20,
            splits: vec![],
            queue: "default".into(),
            sort_buffer_bytes: 1 << 20,
            map_only: false,
            slowstart: 1.0,
            owner: String::new(),
        }
    }
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

/// Where a job's time went, from its successful attempts' own timings:
/// the map phase's span (first map start to last map end, the workers'
/// clocks) and the phases of the reduce that finished last, the one the
/// job waited for.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Phases {
    pub map_start_ms: Option<u64>,
    pub map_end_ms: u64,
    pub last_reduce_end_ms: u64,
    /// shuffle, merge, reduce, commit seconds of that reduce.
    pub reduce: [f64; 4],
}

impl Phases {
    pub fn record(&mut self, is_map: bool, m: &TaskMetrics) {
        if is_map {
            self.map_start_ms = Some(self.map_start_ms.map_or(m.start_ms, |s| s.min(m.start_ms)));
            self.map_end_ms = self.map_end_ms.max(m.end_ms);
        } else if m.end_ms >= self.last_reduce_end_ms {
            self.last_reduce_end_ms = m.end_ms;
            self.reduce = [m.shuffle_s, m.merge_s, m.reduce_s, m.commit_s];
        }
    }

    /// `phases_s` of the job summary.
    pub fn to_json(&self) -> Value {
        let map = self
            .map_start_ms
            .map_or(0.0, |s| self.map_end_ms.saturating_sub(s) as f64 / 1e3);
        let [shuffle, merge, reduce, commit] = self.reduce;
        json!({"map": map, "shuffle": shuffle, "merge": merge, "reduce": reduce, "commit": commit})
    }
}
