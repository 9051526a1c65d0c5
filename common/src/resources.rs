//! The atop-like resource vector of one worker: CPU (total and per core),
//! load, memory, disk and network rates. One type from the worker's sample
//! (`worker::control::monitor`) through the heartbeat (the protobuf
//! `ResourceVector`, converted in `proto::resources` and only there) to
//! what a policy reads (`sched::NodeView::resources`) and what users read
//! (the JSON of `mr cluster status --json` and `GET /api/workers`).

use serde::{Deserialize, Serialize};

/// One sample of a worker's resources. Rates are per second over the time
/// since the previous sample.
///
/// Serialized, it is the JSON users read: the 5- and 15-minute loads are
/// left out of it (the UI and the CLI show the 1-minute load only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceVector {
    /// CPU use over all cores, percent.
    pub cpu_pct: f64,
    /// Per logical core, percent; its length is the number of cores, a
    /// hardware spec the Naive-Bayes classifier uses as a feature.
    pub cpu_per_core_pct: Vec<f64>,
    pub load1: f64,
    #[serde(skip_serializing, default)]
    pub load5: f64,
    #[serde(skip_serializing, default)]
    pub load15: f64,
    pub mem_used_bytes: u64,
    pub mem_total_bytes: u64,
    pub disk_read_bps: u64,
    pub disk_write_bps: u64,
    pub net_rx_bps: u64,
    pub net_tx_bps: u64,
}

impl ResourceVector {
    /// Logical cores: the length of the per-core vector (0 when unknown).
    pub fn cores(&self) -> u32 {
        self.cpu_per_core_pct.len() as u32
    }

    /// The JSON users read (see the type's docs).
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> ResourceVector {
        ResourceVector {
            cpu_pct: 12.5,
            cpu_per_core_pct: vec![10.0, 15.0],
            load1: 0.5,
            load5: 0.25,
            load15: 0.125,
            mem_used_bytes: 1,
            mem_total_bytes: 2,
            disk_read_bps: 3,
            disk_write_bps: 4,
            net_rx_bps: 5,
            net_tx_bps: 6,
        }
    }

    #[test]
    fn cores_are_the_per_core_entries() {
        assert_eq!(sample().cores(), 2);
        assert_eq!(ResourceVector::default().cores(), 0);
    }

    /// The shape `mr cluster status --json` and `GET /api/workers` have
    /// always had: no 5- or 15-minute load.
    #[test]
    fn the_json_shape_is_the_users() {
        let r = sample();
        assert_eq!(
            r.json(),
            json!({
                "cpu_pct": r.cpu_pct,
                "cpu_per_core_pct": r.cpu_per_core_pct,
                "load1": r.load1,
                "mem_used_bytes": r.mem_used_bytes,
                "mem_total_bytes": r.mem_total_bytes,
                "disk_read_bps": r.disk_read_bps,
                "disk_write_bps": r.disk_write_bps,
                "net_rx_bps": r.net_rx_bps,
                "net_tx_bps": r.net_tx_bps,
            })
        );
        assert_eq!(
            r.json().to_string(),
            json!({
                "cpu_pct": r.cpu_pct,
                "cpu_per_core_pct": r.cpu_per_core_pct,
                "load1": r.load1,
                "mem_used_bytes": r.mem_used_bytes,
                "mem_total_bytes": r.mem_total_bytes,
                "disk_read_bps": r.disk_read_bps,
                "disk_write_bps": r.disk_write_bps,
                "net_rx_bps": r.net_rx_bps,
                "net_tx_bps": r.net_tx_bps,
            })
            .to_string()
        );
    }
}
