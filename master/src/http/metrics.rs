//! `/metrics` in the Prometheus text exposition format (version 0.0.4),
//! written by hand: a dozen families do not justify a metrics crate and
//! its registry. Behind the cluster token like the API (Prometheus sends
//! it with `authorization: {credentials: TOKEN}` in a scrape config).
//!
//! Counters and histograms reset when the master restarts, which
//! Prometheus's `rate()` and `increase()` expect of counters.

use super::lock;
use crate::cluster::status::{ClusterStatus, WorkerStatus};
use crate::cluster::ResourceVector;
use crate::core::lock::SiteHolds;
use crate::core::MasterState;
use crate::core::Shared;
use crate::jobs::JobState;
use crate::stats::{CacheCounts, Histogram, JOB_BUCKETS};
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use sched::Locality;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Instant;

/// The content type Prometheus asks for and parses.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

#[tracing::instrument(level = "debug", skip_all)]
pub async fn handler(State(s): State<Shared>) -> impl IntoResponse {
    let snapshot = Snapshot::take(&lock(&s, "http_metrics"), Instant::now());
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], snapshot.render())
}

/// A text-format writer over the text so far: one `# HELP`/`# TYPE` per
/// family, then its samples.
struct Text(String);

impl Text {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.0.push_str(name);
        if !labels.is_empty() {
            self.0.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.0.push(',');
                }
                let _ = write!(self.0, "{k}=\"{}\"", escape(v));
            }
            self.0.push('}');
        }
        let _ = writeln!(self.0, " {}", number(value));
    }

    fn histogram(&mut self, name: &str, labels: &[(&str, &str)], h: &Histogram) {
        for (le, count) in h.cumulative() {
            let le = number(le);
            let mut l = labels.to_vec();
            l.push(("le", &le));
            self.sample(&format!("{name}_bucket"), &l, count as f64);
        }
        self.sample(&format!("{name}_sum"), labels, h.sum);
        self.sample(&format!("{name}_count"), labels, h.count() as f64);
    }
}

/// Label values escape backslash, double quote and newline.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn number(v: f64) -> String {
    if v == f64::INFINITY {
        "+Inf".into()
    } else if v.is_nan() {
        "NaN".into()
    } else {
        format!("{v}")
    }
}

/// Every metric of the master, as of `now`.
pub fn render(s: &MasterState, now: Instant) -> String {
    Snapshot::take(s, now).render()
}

/// The numbers `/metrics` prints, copied out under the lock so that the
/// text is formatted after it is released: formatting every worker's
/// samples took tens of milliseconds at 10,000 workers, a stall for every
/// heartbeat queued behind the scrape.
struct Snapshot {
    status: ClusterStatus,
    /// `(worker, rack, seconds since its last heartbeat)`, registered
    /// workers only.
    heartbeat_ages: Vec<(String, String, f64)>,
    /// Cache outcomes in the order of `status.workers`.
    cache: Vec<CacheCounts>,
    by_level: BTreeMap<Locality, u64>,
    /// Jobs per state, in [`JOB_STATES`] order.
    jobs: Vec<usize>,
    exec: BTreeMap<String, Histogram>,
    decisions: Vec<(String, Histogram)>,
    scheduler: String,
    holds: Vec<(&'static str, SiteHolds)>,
}

/// The states `mr_jobs` counts, in the order it prints them.
const JOB_STATES: [JobState; 5] = [
    JobState::Queued,
    JobState::Running,
    JobState::Succeeded,
    JobState::Failed,
    JobState::Killed,
];

impl Snapshot {
    /// Only copies and sums: this is the part of a scrape under the lock.
    fn take(s: &MasterState, now: Instant) -> Snapshot {
        let status = s.cluster_status();
        let heartbeat_ages = s
            .cluster()
            .workers()
            .map(|w| {
                let age = now.saturating_duration_since(w.last_heartbeat);
                (w.name.clone(), w.rack.clone(), age.as_secs_f64())
            })
            .collect();
        let cache = status
            .workers
            .iter()
            .map(|w| s.stats().cache.get(&w.name).copied().unwrap_or_default())
            .collect();
        let mut by_level: BTreeMap<Locality, u64> = BTreeMap::new();
        let mut exec: BTreeMap<String, Histogram> = BTreeMap::new();
        let mut jobs = vec![0; JOB_STATES.len()];
        for j in s.jobs().iter() {
            for (l, n) in j.locality() {
                *by_level.entry(*l).or_default() += u64::from(*n);
            }
            if let Some(i) = JOB_STATES.iter().position(|st| *st == j.state()) {
                jobs[i] += 1;
            }
            if let (JobState::Succeeded, Some(secs)) = (j.state(), j.exec_time_s()) {
                exec.entry(j.scheduler().to_string())
                    .or_insert_with(|| Histogram::new(JOB_BUCKETS))
                    .observe(secs);
            }
        }
        Snapshot {
            status,
            heartbeat_ages,
            cache,
            by_level,
            jobs,
            exec,
            decisions: s
                .stats()
                .decisions
                .iter()
                .map(|(p, h)| (p.to_string(), h.clone()))
                .collect(),
            scheduler: s.jobs().scheduler_spec().name.clone(),
            // This scrape's own hold is not in them: it is recorded when
            // the guard drops, after the copy.
            holds: s.lock_holds().sites().map(|(k, h)| (k, *h)).collect(),
        }
    }

    fn render(&self) -> String {
        let mut t = Text(String::with_capacity(16 << 10));
        self.workers(&mut t);
        self.jobs(&mut t);
        self.scheduler(&mut t);
        self.dfs(&mut t);
        self.lock_holds(&mut t);
        t.0
    }

    /// The per-worker families: resources, slots, blocks, cache, liveness.
    fn workers(&self, t: &mut Text) {
        for (name, help, f) in WORKER_GAUGES {
            t.family(name, "gauge", help);
            for w in &self.status.workers {
                t.sample(
                    name,
                    &[("worker", &w.name), ("rack", &w.rack)],
                    f(w, &w.resources),
                );
            }
        }

        t.family(
            "mr_worker_heartbeat_age_seconds",
            "gauge",
            "Seconds since the worker's last heartbeat (registered workers only).",
        );
        for (name, rack, age) in &self.heartbeat_ages {
            t.sample(
                "mr_worker_heartbeat_age_seconds",
                &[("worker", name), ("rack", rack)],
                *age,
            );
        }

        for (name, help, hits) in [
            (
                "mr_worker_cache_hits_total",
                "Map tasks on this worker that read their block from its cache.",
                true,
            ),
            (
                "mr_worker_cache_misses_total",
                "Map tasks on this worker that read their block from its disk or another worker.",
                false,
            ),
        ] {
            t.family(name, "counter", help);
            for (w, c) in self.status.workers.iter().zip(&self.cache) {
                let v = if hits { c.hits } else { c.misses };
                t.sample(name, &[("worker", &w.name), ("rack", &w.rack)], v as f64);
            }
        }
    }

    /// Map tasks by locality, jobs by state, and job execution times.
    fn jobs(&self, t: &mut Text) {
        t.family(
            "mr_map_tasks_total",
            "counter",
            "Map tasks that succeeded, by the locality level they ran at.",
        );
        for l in Locality::ALL {
            let n = self.by_level.get(&l).copied().unwrap_or(0);
            t.sample("mr_map_tasks_total", &[("locality", l.as_str())], n as f64);
        }

        t.family("mr_jobs", "gauge", "Jobs this master run knows, by state.");
        for (state, n) in JOB_STATES.iter().zip(&self.jobs) {
            t.sample("mr_jobs", &[("state", state.as_str())], *n as f64);
        }

        t.family(
            "mr_job_exec_time_seconds",
            "histogram",
            "Execution time (submit to output committed) of succeeded jobs, by the scheduler that placed them.",
        );
        for (sched, h) in &self.exec {
            t.histogram("mr_job_exec_time_seconds", &[("scheduler", sched)], h);
        }
    }

    fn scheduler(&self, t: &mut Text) {
        t.family(
            "mr_scheduler_decision_seconds",
            "histogram",
            "Time the scheduling policy took per decision (one assign call), by policy.",
        );
        for (policy, h) in &self.decisions {
            t.histogram("mr_scheduler_decision_seconds", &[("policy", policy)], h);
        }

        t.family(
            "mr_scheduler_active",
            "gauge",
            "1 for the policy placing tasks now.",
        );
        t.sample("mr_scheduler_active", &[("policy", &self.scheduler)], 1.0);
    }

    fn dfs(&self, t: &mut Text) {
        let st = &self.status;
        for (name, help, v) in [
            ("mr_dfs_files", "Files in the namespace.", st.files),
            ("mr_dfs_blocks", "Blocks in the namespace.", st.blocks),
            (
                "mr_dfs_under_replicated_blocks",
                "Blocks with fewer live replicas than their replication factor.",
                st.under_replicated_blocks,
            ),
        ] {
            t.family(name, "gauge", help);
            t.sample(name, &[], v as f64);
        }
    }

    /// The coordinator's lock, by the site that took it (`core/lock.rs`).
    fn lock_holds(&self, t: &mut Text) {
        type Hold = fn(&SiteHolds) -> f64;
        let families: [(&str, &str, &str, Hold); 3] = [
            (
                "mr_master_lock_hold_max_seconds",
                "gauge",
                "The longest the site held the master's lock since the master started.",
                |h| h.max.as_secs_f64(),
            ),
            (
                "mr_master_lock_hold_seconds_total",
                "counter",
                "Time the site held the master's lock.",
                |h| h.total.as_secs_f64(),
            ),
            (
                "mr_master_lock_holds_total",
                "counter",
                "Times the site took the master's lock.",
                |h| h.count as f64,
            ),
        ];
        for (name, kind, help, value) in families {
            t.family(name, kind, help);
            for (site, h) in &self.holds {
                t.sample(name, &[("site", site)], value(h));
            }
        }
    }
}

type Gauge = (
    &'static str,
    &'static str,
    fn(&WorkerStatus, &ResourceVector) -> f64,
);

/// The per-worker gauges read from `cluster status`, in the order printed.
const WORKER_GAUGES: &[Gauge] = &[
    (
        "mr_worker_up",
        "1 if the worker is registered and heartbeating, else 0.",
        |w, _| f64::from(u8::from(w.alive)),
    ),
    (
        "mr_worker_cpu_percent",
        "CPU busy, percent of all cores.",
        |_, r| r.cpu_pct,
    ),
    ("mr_worker_load1", "One-minute load average.", |_, r| {
        r.load1
    }),
    ("mr_worker_memory_used_bytes", "Memory in use.", |_, r| {
        r.mem_used_bytes as f64
    }),
    (
        "mr_worker_memory_total_bytes",
        "Memory installed.",
        |_, r| r.mem_total_bytes as f64,
    ),
    (
        "mr_worker_disk_read_bytes_per_second",
        "Disk read rate.",
        |_, r| r.disk_read_bps as f64,
    ),
    (
        "mr_worker_disk_write_bytes_per_second",
        "Disk write rate.",
        |_, r| r.disk_write_bps as f64,
    ),
    (
        "mr_worker_network_receive_bytes_per_second",
        "Network receive rate.",
        |_, r| r.net_rx_bps as f64,
    ),
    (
        "mr_worker_network_transmit_bytes_per_second",
        "Network transmit rate.",
        |_, r| r.net_tx_bps as f64,
    ),
    ("mr_worker_map_slots", "Map slots.", |w, _| {
        f64::from(w.map_slots)
    }),
    (
        "mr_worker_map_slots_free",
        "Map slots free at the last heartbeat.",
        |w, _| f64::from(w.free_map_slots),
    ),
    ("mr_worker_reduce_slots", "Reduce slots.", |w, _| {
        f64::from(w.reduce_slots)
    }),
    (
        "mr_worker_reduce_slots_free",
        "Reduce slots free at the last heartbeat.",
        |w, _| f64::from(w.free_reduce_slots),
    ),
    (
        "mr_worker_blocks",
        "Block replicas the worker stores.",
        |w, _| w.blocks as f64,
    ),
    (
        "mr_worker_cache_used_bytes",
        "Bytes in the worker's block cache.",
        |w, _| w.cache_used_bytes as f64,
    ),
    (
        "mr_worker_cache_capacity_bytes",
        "Byte bound of the worker's block cache.",
        |w, _| w.cache_capacity_bytes as f64,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_and_histograms_follow_the_text_format() {
        let mut t = Text(String::new());
        t.family("m", "gauge", "help");
        t.sample("m", &[("a", "x\"y\\z\n")], 1.5);
        let mut h = Histogram::new(&[0.5]);
        h.observe(0.25);
        h.observe(2.0);
        t.histogram("h", &[("p", "fifo")], &h);
        assert_eq!(
            t.0,
            "# HELP m help\n# TYPE m gauge\nm{a=\"x\\\"y\\\\z\\n\"} 1.5\n\
             h_bucket{p=\"fifo\",le=\"0.5\"} 1\nh_bucket{p=\"fifo\",le=\"+Inf\"} 2\n\
             h_sum{p=\"fifo\"} 2.25\nh_count{p=\"fifo\"} 2\n"
        );
    }
}
