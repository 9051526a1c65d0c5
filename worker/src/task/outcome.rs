//! What an attempt ends with: the metrics of a success or the reason of a
//! failure. Produced by the map and reduce attempts, reported by the
//! executor as the protocol's flat [`protocol::TaskReport`] ([`report`]),
//! which the edge only puts on the wire.

use protocol::{TaskMetrics, TaskRef, TaskReport};
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

/// How an attempt ended, as the executor knows it; [`report`] says it to
/// the master, and the report commits it.
#[derive(Debug, Clone)]
pub struct Ended {
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

/// When an attempt ran and what it took.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub start_ms: u64,
    pub end_ms: u64,
    pub cpu_s: f64,
    pub peak_mem_bytes: u64,
}

/// Worker `worker`'s report of `e`. A handed-back attempt carries no
/// measurements; one that ran carries its usage, and its outcome's figures
/// and counters when it succeeded, or its failure and the map whose output
/// it could not fetch.
pub fn report(worker: &str, e: Ended) -> TaskReport {
    let (result, usage) = match e.end {
        End::HandedBack => return TaskReport::handed_back(worker, e.epoch, e.task),
        End::Ran { result, usage } => (result, usage),
    };
    let mut r = TaskReport {
        worker: worker.to_string(),
        epoch: e.epoch,
        task: e.task,
        metrics: TaskMetrics {
            start_ms: usage.start_ms,
            end_ms: usage.end_ms,
            cpu_s: usage.cpu_s,
            peak_mem_bytes: usage.peak_mem_bytes,
            ..Default::default()
        },
        ..Default::default()
    };
    match result {
        Ok(o) => {
            r.succeeded = true;
            let m = &mut r.metrics;
            m.locality = o.locality;
            m.bytes_cache = o.bytes_cache;
            m.bytes_local = o.bytes_local;
            m.bytes_remote_rack = o.bytes_remote_rack;
            m.bytes_remote_off_rack = o.bytes_remote_off_rack;
            m.read_s = o.read_s;
            m.shuffle_s = o.shuffle_s;
            m.merge_s = o.merge_s;
            m.reduce_s = o.reduce_s;
            m.commit_s = o.commit_s;
            m.bytes_shuffle = o.bytes_shuffle;
            m.bytes_output = o.bytes_output;
            m.records_in = o.records_in;
            m.records_out = o.records_out;
            m.spills = o.spills;
            r.counters = o.counters;
        }
        Err(f) => {
            r.error = f.msg;
            if let Some(map) = f.fetch_failed_map {
                r.fetch_failure = true;
                r.failed_map = map;
            }
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> TaskRef {
        TaskRef {
            job_id: 1,
            is_map: false,
            index: 0,
            attempt: 3,
        }
    }

    fn ran(result: Result<Outcome, Failure>) -> Ended {
        let usage = Usage {
            start_ms: 10,
            end_ms: 20,
            cpu_s: 0.5,
            peak_mem_bytes: 99,
        };
        Ended {
            task: task(),
            epoch: 2,
            end: End::Ran { result, usage },
        }
    }

    #[test]
    fn a_failure_carries_its_usage_and_the_map_it_could_not_fetch() {
        let r = report(
            "w1",
            ran(Err(Failure {
                msg: "cannot fetch".into(),
                fetch_failed_map: Some(7),
            })),
        );
        assert!(!r.succeeded && r.fetch_failure && !r.handed_back);
        assert_eq!((r.failed_map, r.error.as_str()), (7, "cannot fetch"));
        assert_eq!((r.worker.as_str(), r.epoch, r.task), ("w1", 2, task()));
        assert_eq!((r.metrics.end_ms, r.metrics.peak_mem_bytes), (20, 99));
        assert!(r.metrics.locality.is_empty() && r.counters.is_empty());
    }

    #[test]
    fn a_success_carries_its_outcome_and_counters() {
        let o = Outcome {
            locality: "node".into(),
            bytes_shuffle: 5,
            spills: 2,
            counters: [("lines".to_string(), 4)].into(),
            ..Default::default()
        };
        let r = report("w1", ran(Ok(o)));
        assert!(r.succeeded && r.error.is_empty() && !r.fetch_failure);
        assert_eq!(r.metrics.locality, "node");
        assert_eq!((r.metrics.bytes_shuffle, r.metrics.spills), (5, 2));
        assert_eq!((r.metrics.start_ms, r.metrics.cpu_s), (10, 0.5));
        assert_eq!(r.counters.get("lines"), Some(&4));
    }

    #[test]
    fn a_handed_back_attempt_carries_no_measurements() {
        let back = Ended {
            task: task(),
            epoch: 2,
            end: End::HandedBack,
        };
        let r = report("w1", back);
        assert!(r.handed_back && !r.succeeded);
        assert_eq!(r.error, protocol::report::HANDED_BACK);
        assert_eq!(r.metrics, TaskMetrics::default());
        assert_eq!((r.task.attempt, r.epoch), (3, 2));
    }
}
