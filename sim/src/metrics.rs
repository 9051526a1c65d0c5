//! What one simulated run measured, and its JSON form (`mr sim --json`).

use sched::Locality;
use serde_json::{json, Value};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimResult {
    pub scheduler: String,
    /// Map tasks per level, in [`Locality::ALL`] order.
    pub locality: [u64; 5],
    /// From the first arrival to the last task's end, simulated seconds.
    pub makespan_s: f64,
    /// Mean over jobs of end minus arrival.
    pub mean_job_time_s: f64,
    /// The LSAP paper's data locality cost (section 4.3): 0 for a
    /// data-local task, 1 for any other (equal bandwidths).
    pub data_locality_cost: f64,
    /// The LSAP paper's formula (11): the mean over jobs of |s_i - w_i|,
    /// the share of occupied slots a job holds against its equal share,
    /// averaged over the decisions at which at least one job was active.
    pub fairness_distance: f64,
    /// Mean over map tasks of start minus their job's arrival: the
    /// matchmaking paper's map response time.
    pub map_response_s: f64,
    /// Wall-clock time of each policy call, milliseconds.
    pub decision_ms: Vec<f64>,
    /// Policy calls and events processed.
    pub decisions: u64,
    pub events: u64,
    /// Wall-clock seconds the run took.
    pub wall_s: f64,
}

impl SimResult {
    pub fn maps(&self) -> u64 {
        self.locality.iter().sum()
    }

    /// Node- or cache-local maps over all maps.
    pub fn locality_rate(&self) -> f64 {
        (self.locality[0] + self.locality[1]) as f64 / self.maps().max(1) as f64
    }

    pub fn decision_pct(&self, p: f64) -> f64 {
        if self.decision_ms.is_empty() {
            return 0.0;
        }
        let mut v = self.decision_ms.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        v[((v.len() - 1) as f64 * p).round() as usize]
    }

    pub fn to_json(&self) -> Value {
        let loc: serde_json::Map<String, Value> = Locality::ALL
            .iter()
            .zip(self.locality)
            .map(|(l, n)| (l.as_str().to_string(), json!(n)))
            .collect();
        json!({
            "scheduler": self.scheduler,
            "locality_rate": self.locality_rate(),
            "locality": loc,
            "makespan_s": self.makespan_s,
            "mean_job_time_s": self.mean_job_time_s,
            "data_locality_cost": self.data_locality_cost,
            "fairness_distance": self.fairness_distance,
            "map_response_s": self.map_response_s,
            "decision_ms": {"p50": self.decision_pct(0.5), "p99": self.decision_pct(0.99)},
            "maps": self.maps(),
            "decisions": self.decisions,
            "events": self.events,
            "wall_s": self.wall_s,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_the_documented_fields() {
        let r = SimResult {
            scheduler: "lsap".into(),
            locality: [1, 96, 0, 3, 0],
            decision_ms: vec![1.0, 2.0, 3.0],
            ..Default::default()
        };
        let v = r.to_json();
        assert!((v["locality_rate"].as_f64().unwrap() - 0.97).abs() < 1e-12);
        for k in [
            "cache_local",
            "node_local",
            "cache_rack_local",
            "rack_local",
            "off_rack",
        ] {
            assert!(v["locality"][k].is_u64(), "{k}");
        }
        for k in [
            "makespan_s",
            "mean_job_time_s",
            "data_locality_cost",
            "fairness_distance",
        ] {
            assert!(v[k].is_f64(), "{k}");
        }
        assert_eq!(v["decision_ms"]["p50"], 2.0);
        assert_eq!(v["decision_ms"]["p99"], 3.0);
    }
}
