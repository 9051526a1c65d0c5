//! A short ring of each worker's resource vectors, kept in master memory
//! for the web UI's sparklines: the latest vector alone (what `cluster
//! status` shows) cannot show a trend, and the workers keep none.

use super::ResourceVector;
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

/// Samples kept per worker: two minutes at [`HISTORY_EVERY`], enough to
/// see a job's maps come and go, small enough (about 10 KiB a worker) not
/// to matter at thousands of workers.
pub const HISTORY_LEN: usize = 120;

/// One sample per worker this often, whatever the heartbeat interval, so
/// that sparklines of different clusters have the same time scale.
pub const HISTORY_EVERY: Duration = Duration::from_secs(1);

/// One resource vector at one time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Wall-clock milliseconds of the sample.
    pub t_ms: u64,
    /// The fields of the worker's last heartbeat's resource vector that the
    /// UI draws; per-core figures and the 5/15-minute loads are left out.
    pub cpu_pct: f64,
    pub load1: f64,
    pub mem_used_bytes: u64,
    pub mem_total_bytes: u64,
    pub disk_read_bps: u64,
    pub disk_write_bps: u64,
    pub net_rx_bps: u64,
    pub net_tx_bps: u64,
}

#[derive(Debug, Default)]
pub struct ResourceHistory {
    /// Worker name → its samples, oldest first, at most [`HISTORY_LEN`].
    rings: BTreeMap<String, VecDeque<Sample>>,
}

impl ResourceHistory {
    pub fn record(&mut self, worker: &str, r: &ResourceVector, t_ms: u64) {
        // Every live worker each second, under the master's lock: a name
        // is copied only the first time (at 10,000 workers, a copy each
        // time held the lock 25 ms a second).
        if !self.rings.contains_key(worker) {
            let ring = VecDeque::with_capacity(HISTORY_LEN);
            self.rings.insert(worker.to_string(), ring);
        }
        let ring = self.rings.get_mut(worker).expect("just inserted");
        if ring.len() == HISTORY_LEN {
            ring.pop_front();
        }
        ring.push_back(Sample {
            t_ms,
            cpu_pct: r.cpu_pct,
            load1: r.load1,
            mem_used_bytes: r.mem_used_bytes,
            mem_total_bytes: r.mem_total_bytes,
            disk_read_bps: r.disk_read_bps,
            disk_write_bps: r.disk_write_bps,
            net_rx_bps: r.net_rx_bps,
            net_tx_bps: r.net_tx_bps,
        });
    }

    pub fn samples(&self, worker: &str) -> impl Iterator<Item = &Sample> {
        self.rings.get(worker).into_iter().flatten()
    }

    /// One array per field, oldest first: compact, and what a sparkline
    /// draws from.
    pub fn json(&self, worker: &str) -> Value {
        let col = |f: fn(&Sample) -> Value| -> Vec<Value> { self.samples(worker).map(f).collect() };
        json!({
            "t_ms": col(|s| json!(s.t_ms)),
            "cpu_pct": col(|s| json!(s.cpu_pct)),
            "load1": col(|s| json!(s.load1)),
            "mem_used_bytes": col(|s| json!(s.mem_used_bytes)),
            "mem_total_bytes": col(|s| json!(s.mem_total_bytes)),
            "disk_read_bps": col(|s| json!(s.disk_read_bps)),
            "disk_write_bps": col(|s| json!(s.disk_write_bps)),
            "net_rx_bps": col(|s| json!(s.net_rx_bps)),
            "net_tx_bps": col(|s| json!(s.net_tx_bps)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_keeps_the_latest() {
        let mut h = ResourceHistory::default();
        for i in 0..(HISTORY_LEN as u64 + 5) {
            let r = ResourceVector {
                cpu_pct: i as f64,
                ..Default::default()
            };
            h.record("w1", &r, i);
        }
        let v = h.json("w1");
        let t = v["t_ms"].as_array().unwrap();
        assert_eq!(t.len(), HISTORY_LEN);
        assert_eq!(t[0], 5);
        assert_eq!(v["cpu_pct"][HISTORY_LEN - 1], (HISTORY_LEN + 4) as f64);
        assert_eq!(h.json("nobody")["t_ms"], json!([]));
    }
}
