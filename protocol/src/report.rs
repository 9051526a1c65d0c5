//! A worker's report that an attempt ended, with its measurements.

use crate::task::TaskRef;
use std::collections::BTreeMap;

/// The error a handed-back attempt is reported with.
pub const HANDED_BACK: &str = "handed back: the worker is shutting down";

/// A worker's report that an attempt ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskReport {
    pub worker: String,
    /// The epoch of the launch: the master ignores reports of an older
    /// incarnation of the worker.
    pub epoch: u64,
    pub task: TaskRef,
    pub succeeded: bool,
    pub error: String,
    /// A reduce that could not fetch `failed_map`'s output: not counted
    /// against the reduce's attempts.
    pub fetch_failure: bool,
    pub failed_map: u32,
    pub metrics: TaskMetrics,
    pub counters: BTreeMap<String, u64>,
    /// Not run to the end because its worker is shutting down: queued
    /// again, not counted as a failure.
    pub handed_back: bool,
}

impl TaskReport {
    /// `task` handed back unrun or unfinished by `worker`, launched for
    /// `epoch`.
    pub fn handed_back(worker: &str, epoch: u64, task: TaskRef) -> TaskReport {
        TaskReport {
            worker: worker.to_string(),
            epoch,
            task,
            error: HANDED_BACK.into(),
            handed_back: true,
            ..Default::default()
        }
    }
}

/// An attempt's own measurements (the design's metric definitions).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskMetrics {
    /// A map's locality level as [`common::locality::Locality::as_str`]
    /// names it.
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
    /// Seconds fetching the input, apart from parsing and mapping: the
    /// read cost of the task's locality level.
    pub read_s: f64,
    /// A reduce's phases, seconds: fetching the map outputs, merging,
    /// the reduce function with its writes, closing the output.
    pub shuffle_s: f64,
    pub merge_s: f64,
    pub reduce_s: f64,
    pub commit_s: f64,
}
