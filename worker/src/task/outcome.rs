//! What an attempt ends with: the metrics of a success or the reason of a
//! failure. Produced by the map and reduce attempts, reported by the
//! executor.

use crate::task::launch::TaskRef;
use std::collections::BTreeMap;

/// What a successful attempt reports.
#[derive(Debug, Default, Clone)]
pub struct Outcome {
    pub locality: String,
    pub bytes_cache: u64,
    pub bytes_local: u64,
    pub bytes_remote_rack: u64,
    pub bytes_remote_off_rack: u64,
    pub read_s: f64,
    /// A reduce's phases (see `TaskMetrics` in `proto/mr.proto`).
    pub shuffle_s: f64,
    pub merge_s: f64,
    pub reduce_s: f64,
    pub commit_s: f64,
    pub bytes_shuffle: u64,
    pub bytes_output: u64,
    pub records_in: u64,
    pub records_out: u64,
    pub spills: u32,
    pub counters: BTreeMap<String, u64>,
}

/// Why an attempt failed. A fetch failure names the map whose output could
/// not be read: the master re-runs it and does not hold it against the reduce.
#[derive(Debug, Clone)]
pub struct Failure {
    pub msg: String,
    pub fetch_failed_map: Option<u32>,
}

impl Failure {
    pub fn msg(m: impl Into<String>) -> Self {
        Failure {
            msg: m.into(),
            fetch_failed_map: None,
        }
    }

    pub fn from_err(e: impl std::fmt::Display) -> Self {
        Self::msg(e.to_string())
    }
}

/// What the master is told of an attempt; the report commits it.
#[derive(Debug, Clone)]
pub struct TaskReport {
    pub task: TaskRef,
    /// The epoch of the launch: the master ignores reports of an older
    /// incarnation of this worker.
    pub epoch: u64,
    pub end: End,
}

#[derive(Debug, Clone)]
pub enum End {
    /// It ran, and succeeded or failed.
    Ran {
        result: Result<Outcome, Failure>,
        usage: Usage,
    },
    /// Given back unrun or unfinished, because this worker is shutting
    /// down: the master queues it again without counting a failure.
    HandedBack,
}

/// The error a handed-back attempt is reported with.
pub const HANDED_BACK: &str = "handed back: the worker is shutting down";

/// When an attempt ran and what it took.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub start_ms: u64,
    pub end_ms: u64,
    pub cpu_s: f64,
    pub peak_mem_bytes: u64,
}
