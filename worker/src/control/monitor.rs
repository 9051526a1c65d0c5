//! The atop-like resource vector each heartbeat carries: CPU (total and per
//! core), load, memory, disk and network rates, sampled as
//! [`common::resources::ResourceVector`] (the heartbeat converts it to the
//! wire message). Resource-aware schedulers (the Naive-Bayes compatibility
//! scheduler) and the UI read it.
//!
//! Rates are counter deltas over the real time between two samples, so a
//! late heartbeat does not inflate them. Disk counters come from
//! `/proc/diskstats` (whole devices only, so partitions are not counted
//! twice): sysinfo's per-mount counters miss I/O under overlay file systems.

use common::resources::ResourceVector;
use std::time::Instant;
use sysinfo::{CpuRefreshKind, MemoryRefreshKind, Networks, RefreshKind, System};

pub struct ResourceMonitor {
    sys: Option<System>,
    nets: Option<Networks>,
    last: Option<Counters>,
}

#[derive(Clone, Copy)]
struct Counters {
    at: Instant,
    disk_read: u64,
    disk_write: u64,
    net_rx: u64,
    net_tx: u64,
}

impl Default for ResourceMonitor {
    fn default() -> Self {
        Self::new()
    }
}

impl ResourceMonitor {
    pub fn new() -> Self {
        let kind = RefreshKind::nothing()
            .with_cpu(CpuRefreshKind::nothing().with_usage())
            .with_memory(MemoryRefreshKind::nothing().with_ram());
        let sys = System::new_with_specifics(kind).ok();
        let nets = Networks::new_with_refreshed_list().ok();
        let mut m = ResourceMonitor {
            sys,
            nets,
            last: None,
        };
        m.last = Some(m.counters());
        m
    }

    fn counters(&mut self) -> Counters {
        let (disk_read, disk_write) = disk_bytes();
        let (mut net_rx, mut net_tx) = (0, 0);
        if let Some(n) = self.nets.as_mut() {
            n.refresh(true);
            for (name, data) in n.iter() {
                if name != "lo" {
                    net_rx += data.total_received();
                    net_tx += data.total_transmitted();
                }
            }
        }
        Counters {
            at: Instant::now(),
            disk_read,
            disk_write,
            net_rx,
            net_tx,
        }
    }

    /// Takes one sample; rates cover the time since the previous one.
    pub fn sample(&mut self) -> ResourceVector {
        let mut v = ResourceVector::default();
        if let Some(sys) = self.sys.as_mut() {
            sys.refresh_cpu_usage();
            sys.refresh_memory();
            v.cpu_pct = sys.global_cpu_usage() as f64;
            v.cpu_per_core_pct = sys.cpus().iter().map(|c| c.usage() as f64).collect();
            v.mem_used_bytes = sys.used_memory();
            v.mem_total_bytes = sys.total_memory();
        }
        if let Ok(l) = System::load_average() {
            v.load1 = l.one;
            v.load5 = l.five;
            v.load15 = l.fifteen;
        }
        let now = self.counters();
        if let Some(prev) = self.last {
            let dt = now.at.duration_since(prev.at).as_secs_f64();
            if dt > 0.0 {
                let rate = |a: u64, b: u64| (a.saturating_sub(b) as f64 / dt) as u64;
                v.disk_read_bps = rate(now.disk_read, prev.disk_read);
                v.disk_write_bps = rate(now.disk_write, prev.disk_write);
                v.net_rx_bps = rate(now.net_rx, prev.net_rx);
                v.net_tx_bps = rate(now.net_tx, prev.net_tx);
            }
        }
        self.last = Some(now);
        v
    }
}

/// Bytes read and written by whole block devices since boot.
fn disk_bytes() -> (u64, u64) {
    let Ok(text) = std::fs::read_to_string("/proc/diskstats") else {
        return (0, 0);
    };
    let mut r = 0u64;
    let mut w = 0u64;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 10 {
            continue;
        }
        let name = f[2];
        // Whole devices have an entry in /sys/block; partitions and loop
        // devices of no interest are skipped.
        if name.starts_with("loop") || name.starts_with("ram") {
            continue;
        }
        if !std::path::Path::new(&format!("/sys/block/{name}")).exists() {
            continue;
        }
        // Fields 6 and 10 count 512-byte sectors read and written.
        r += f[5].parse::<u64>().unwrap_or(0) * 512;
        w += f[9].parse::<u64>().unwrap_or(0) * 512;
    }
    (r, w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_sane() {
        let mut m = ResourceMonitor::new();
        m.sample();
        // Rates need elapsed time between two samples.
        std::thread::sleep(std::time::Duration::from_millis(100));
        let v = m.sample();
        assert!(v.mem_total_bytes > 0);
        assert!(v.mem_used_bytes <= v.mem_total_bytes);
        assert!(!v.cpu_per_core_pct.is_empty());
        let cores = v.cpu_per_core_pct.len() as f64;
        assert!(v.cpu_pct >= 0.0 && v.cpu_pct <= 100.0 * cores);
    }
}
