//! The Hadoop Fair Scheduler's job order (Zaharia et al.), as a [`JobOrder`]
//! that any locality technique can follow: pools below their minimum share
//! come first, the most starved (running / min share) first; then pools by
//! running / weight, so that slots go to the pool furthest below its
//! weighted fair share; within a pool, the job with the fewest running tasks
//! first (fair sharing between jobs), then submission order.
//!
//! Pools are the jobs' `--queue`. Parameters: `min_shares` (`pool:slots,...`,
//! default none) and `weights` (`pool:w,...`, default 1).

use super::compose::JobOrder;
use super::registry::SchedError;
use super::*;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Default)]
pub struct FairOrder {
    min_shares: BTreeMap<String, f64>,
    weights: BTreeMap<String, f64>,
}

impl FairOrder {
    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        let mut f = FairOrder::default();
        for (k, v) in p {
            match k.as_str() {
                "min_shares" => f.min_shares = super::shares::parse("fair", k, v)?,
                "weights" => f.weights = super::shares::parse("fair", k, v)?,
                _ => {
                    return Err(SchedError::UnknownParam {
                        name: "fair".into(),
                        param: k.clone(),
                        takes: "min_shares, weights".into(),
                    })
                }
            }
        }
        Ok(f)
    }
}

impl JobOrder for FairOrder {
    fn name(&self) -> &'static str {
        "fair"
    }

    fn order(&mut self, view: &ClusterView) -> Vec<u64> {
        let mut running: HashMap<&str, f64> = HashMap::new();
        for j in &view.jobs {
            *running.entry(j.pool.as_str()).or_default() += j.running_maps as f64;
        }
        let pool_key = |pool: &str| -> (u8, f64) {
            let r = running.get(pool).copied().unwrap_or(0.0);
            let min = self.min_shares.get(pool).copied().unwrap_or(0.0);
            if r < min {
                (0, r / min)
            } else {
                (
                    1,
                    r / self.weights.get(pool).copied().unwrap_or(1.0).max(1e-9),
                )
            }
        };
        let mut jobs: Vec<&JobView> = view.jobs.iter().collect();
        jobs.sort_by(|a, b| {
            let (pa, pb) = (pool_key(&a.pool), pool_key(&b.pool));
            pa.0.cmp(&pb.0)
                .then(pa.1.total_cmp(&pb.1))
                .then(a.pool.cmp(&b.pool))
                .then(a.running_maps.cmp(&b.running_maps))
                .then(a.order.cmp(&b.order))
        });
        jobs.into_iter().map(|j| j.id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testkit::pooled_job;

    #[test]
    fn starved_pool_first_then_fewest_running() {
        let mut p = BTreeMap::new();
        p.insert("min_shares".to_string(), "b:4".to_string());
        let mut f = FairOrder::from_params(&p).unwrap();
        let v = ClusterView {
            jobs: vec![
                pooled_job(1, "a", 1),
                pooled_job(2, "b", 3),
                pooled_job(3, "a", 0),
            ],
            ..Default::default()
        };
        // b is below its minimum share of 4: first, although it runs more.
        assert_eq!(f.order(&v), vec![2, 3, 1]);
        let mut f = FairOrder::default();
        // Without minimum shares: pool a (1 running) before b (3); inside a,
        // the job with fewer running tasks first.
        assert_eq!(f.order(&v), vec![3, 1, 2]);
    }
}
