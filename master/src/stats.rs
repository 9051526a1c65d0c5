//! Counters and histograms the master keeps for `/metrics` that its other
//! tables do not already hold: scheduler decision latency by policy and
//! block-cache hits and misses by worker.
//!
//! Tasks by locality level and job execution times are not kept here: the
//! jobs table holds every job of this master run, so `/metrics` sums them
//! when asked (counters that only reset with the master, as Prometheus
//! expects of counters).

use std::collections::BTreeMap;
use std::time::Duration;

/// Bucket bounds of the scheduler decision latency, seconds: from the
/// tens of microseconds a heartbeat policy takes on a small cluster to the
/// seconds an LSAP solve can take at thousands of nodes.
pub const DECISION_BUCKETS: &[f64] = &[
    1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0,
];

/// Bucket bounds of job execution time, seconds: loopback test jobs take
/// about a second, benchmark jobs on the emulated LAN minutes.
pub const JOB_BUCKETS: &[f64] = &[
    1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
];

/// A Prometheus histogram: fixed upper bounds, a count per bucket, a sum.
#[derive(Debug, Clone)]
pub struct Histogram {
    /// Upper bounds, ascending; `+Inf` is implied after the last.
    pub bounds: &'static [f64],
    /// Observations per bucket (not cumulative); one more than `bounds`,
    /// the last for values above every bound.
    counts: Vec<u64>,
    /// Sum of every observation.
    pub sum: f64,
}

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Self {
        Histogram {
            bounds,
            counts: vec![0; bounds.len() + 1],
            sum: 0.0,
        }
    }

    pub fn observe(&mut self, v: f64) {
        let i = self.bounds.partition_point(|b| *b < v);
        self.counts[i] += 1;
        self.sum += v;
    }

    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// `(le, cumulative count)` per bound, then `(+Inf, count)`, as the
    /// text format writes `_bucket` lines.
    pub fn cumulative(&self) -> Vec<(f64, u64)> {
        let mut acc = 0;
        self.bounds
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .zip(&self.counts)
            .map(|(le, c)| {
                acc += c;
                (le, acc)
            })
            .collect()
    }
}

/// Block-cache outcomes of the map tasks one worker ran.
#[derive(Debug, Default, Clone, Copy)]
pub struct CacheCounts {
    /// Maps that read their block from this worker's cache.
    pub hits: u64,
    /// Maps that read an input block from anywhere else (local disk or
    /// another worker). Generator maps read nothing and count as neither.
    pub misses: u64,
}

#[derive(Debug, Default)]
pub struct Stats {
    /// Decision latency per policy name (as selected, parameters aside).
    pub decisions: BTreeMap<String, Histogram>,
    /// Per worker name; kept across the worker's restarts so that the
    /// counters only grow.
    pub cache: BTreeMap<String, CacheCounts>,
}

impl Stats {
    /// One call of the policy's `assign`, however many tasks it placed.
    pub fn decided(&mut self, policy: &str, took: Duration) {
        self.decisions
            .entry(policy.to_string())
            .or_insert_with(|| Histogram::new(DECISION_BUCKETS))
            .observe(took.as_secs_f64());
    }

    /// A map that succeeded on `worker` (a report the job manager
    /// accepted, `jobs::report::Ended::map_read`), at `locality`, having read
    /// `read` bytes of input. Plain values, so that the counters import
    /// nothing of the job side they count.
    pub fn map_succeeded(&mut self, worker: &str, locality: &str, read: u64) {
        let c = self.cache.entry(worker.to_string()).or_default();
        if locality == sched::Locality::CacheLocal.as_str() {
            c.hits += 1;
        } else if read > 0 {
            c.misses += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::report::Ended;
    use protocol::{TaskMetrics, TaskRef, TaskReport};

    #[test]
    fn buckets_are_cumulative_and_inclusive() {
        let mut h = Histogram::new(&[1.0, 2.0]);
        for v in [0.5, 1.0, 1.5, 3.0] {
            h.observe(v);
        }
        assert_eq!(h.cumulative(), vec![(1.0, 2), (2.0, 3), (f64::INFINITY, 4)]);
        assert_eq!(h.count(), 4);
        assert_eq!(h.sum, 6.0);
    }

    /// Only successful maps count (`jobs::report::Ended::map_read` says which),
    /// and a generator map, which read nothing, is neither.
    #[test]
    fn cache_hits_and_misses_come_from_successful_maps() {
        let report = |locality: &str, local: u64, is_map: bool, ok: bool| TaskReport {
            worker: "w1".into(),
            succeeded: ok,
            task: TaskRef {
                is_map,
                ..Default::default()
            },
            metrics: TaskMetrics {
                locality: locality.into(),
                bytes_cache: if locality == "cache_local" { 10 } else { 0 },
                bytes_local: local,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut s = Stats::default();
        for r in [
            report("cache_local", 0, true, true),
            report("node_local", 10, true, true),
            report("node_local", 0, true, true),   // a generator
            report("node_local", 10, true, false), // failed
            report("", 10, false, true),           // a reduce
        ] {
            if let Some((locality, read)) = r.map_read() {
                s.map_succeeded(&r.worker, locality, read);
            }
        }
        let c = s.cache["w1"];
        assert_eq!((c.hits, c.misses), (1, 1));
    }
}
