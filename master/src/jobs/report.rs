//! What a worker reports of one task attempt, and what a learning policy
//! is told of it.

use sched::{Locality, TaskId, TaskKind};
use std::collections::HashMap;

/// One attempt of one task, as workers and kill commands name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AttemptRef {
    pub job_id: u64,
    pub is_map: bool,
    pub index: u32,
    pub attempt: u32,
}

impl AttemptRef {
    pub fn kind(&self) -> TaskKind {
        if self.is_map {
            TaskKind::Map
        } else {
            TaskKind::Reduce
        }
    }

    pub fn task(&self) -> TaskId {
        TaskId {
            job: self.job_id,
            kind: self.kind(),
            index: self.index,
        }
    }
}

/// An attempt's own measurements (the design's metric definitions).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskMetrics {
    pub locality: String,
    pub bytes_cache: u64,
    pub bytes_local: u64,
    pub bytes_remote_rack: u64,
    pub bytes_remote_off_rack: u64,
    pub bytes_shuffle: u64,
    pub bytes_output: u64,
    pub cpu_s: f64,
    pub peak_mem_bytes: u64,
    pub start_ms: u64,
    pub end_ms: u64,
    pub records_in: u64,
    pub records_out: u64,
    pub spills: u32,
    /// Seconds fetching the input, apart from parsing and mapping.
    pub read_s: f64,
    /// A reduce's phases, seconds.
    pub shuffle_s: f64,
    pub merge_s: f64,
    pub reduce_s: f64,
    pub commit_s: f64,
}

/// A worker's report that an attempt ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AttemptReport {
    pub worker: String,
    pub epoch: u64,
    pub task: Option<AttemptRef>,
    pub succeeded: bool,
    pub error: String,
    /// A reduce that could not fetch `failed_map`'s output: not counted
    /// against the reduce's attempts.
    pub fetch_failure: bool,
    pub failed_map: u32,
    pub metrics: TaskMetrics,
    pub counters: HashMap<String, u64>,
    /// Not run to the end because its worker is shutting down.
    pub handed_back: bool,
}

impl AttemptReport {
    /// A succeeded map's locality and the input bytes it read (cache, local
    /// disk or another worker; a generator's are 0), or `None` for any
    /// other attempt.
    pub fn map_read(&self) -> Option<(&str, u64)> {
        if !self.succeeded || !self.task.is_some_and(|t| t.is_map) {
            return None;
        }
        let m = &self.metrics;
        let read = m.bytes_cache + m.bytes_local + m.bytes_remote_rack + m.bytes_remote_off_rack;
        Some((&m.locality, read))
    }

    /// What a learning policy is told of the attempt.
    pub fn for_policy(&self, t: &AttemptRef, job_name: String) -> sched::TaskReport {
        let m = &self.metrics;
        sched::TaskReport {
            task: t.task(),
            job_name,
            node: self.worker.clone(),
            locality: Locality::parse(&m.locality).unwrap_or(Locality::OffRack),
            runtime_s: m.end_ms.saturating_sub(m.start_ms) as f64 / 1e3,
            succeeded: self.succeeded,
            // A reduce's input is what it fetched in the shuffle.
            bytes_read: m.bytes_cache
                + m.bytes_local
                + m.bytes_remote_rack
                + m.bytes_remote_off_rack
                + m.bytes_shuffle,
            read_s: m.read_s,
            bytes_written: m.bytes_output,
            cpu_s: m.cpu_s,
            peak_mem_bytes: m.peak_mem_bytes,
        }
    }
}
