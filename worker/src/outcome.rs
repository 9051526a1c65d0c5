//! What an attempt ends with: the metrics of a success or the reason of a
//! failure. Produced by the map and reduce attempts, reported by the
//! executor.

use std::collections::BTreeMap;

/// What a successful attempt reports.
#[derive(Debug, Default)]
pub struct Outcome {
    pub locality: String,
    pub bytes_cache: u64,
    pub bytes_local: u64,
    pub bytes_remote_rack: u64,
    pub bytes_remote_off_rack: u64,
    pub read_s: f64,
    /// A reduce's phases (see `proto::TaskMetrics`).
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
#[derive(Debug)]
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
