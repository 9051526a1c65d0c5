//! The Hadoop Fair Scheduler's job order (Zaharia et al.), as a [`JobOrder`]
//! that any locality technique can follow: pools below their minimum share
//! come first, the most starved (running / min share) first; then pools by
//! running / weight, so that slots go to the pool furthest below its
//! weighted fair share; within a pool, the job with the fewest running tasks
//! first (fair sharing between jobs), then submission order.
//!
//! The order is sorted again after every map a heartbeat launches, counting
//! it as running: the Fair Scheduler sorts its jobs by running tasks each
//! time it fills a free slot (Zaharia et al., "Delay Scheduling: A Simple
//! Technique for Achieving Locality and Fairness in Cluster Scheduling",
//! EuroSys 2010, section 3, Algorithm 1, naive fair sharing, which delay
//! scheduling keeps), so a node with four free slots and two equal pools
//! gives each pool two, not all four to whichever was first.
//!
//! Pools are the jobs' `--queue`. Parameters: `min_shares` (`pool:slots,...`,
//! default none) and `weights` (`pool:w,...`, default 1).

use super::compose::JobOrder;
use super::error::SchedError;
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
        self.order_after(view, &HashMap::new())
    }

    fn resorts(&self) -> bool {
        true
    }

    fn order_after(&mut self, view: &ClusterView, launched: &HashMap<u64, u32>) -> Vec<u64> {
        let running_maps = |j: &JobView| j.running_maps + launched.get(&j.id).copied().unwrap_or(0);
        let mut running: HashMap<&str, f64> = HashMap::new();
        for j in &view.jobs {
            *running.entry(j.pool.as_str()).or_default() += running_maps(j) as f64;
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
                .then(running_maps(a).cmp(&running_maps(b)))
                .then(a.order.cmp(&b.order))
        });
        jobs.into_iter().map(|j| j.id).collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testkit::{self, node, pooled_job};

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

    /// Two equal pools with a job each, both with maps stored on a node
    /// that heartbeats with four free slots.
    pub(crate) fn two_pools_on_a_four_slot_node(pools: [&str; 2]) -> ClusterView {
        let maps = (0..8u32)
            .map(|i| testkit::map(1 + (i % 2) as u64, i / 2, i as u64, &["n"], &[]))
            .collect();
        testkit::view(
            vec![node("n", "r", 4)],
            vec![pooled_job(1, pools[0], 0), pooled_job(2, pools[1], 0)],
            maps,
        )
    }

    /// Per job, how many of `a`'s maps it got.
    pub(crate) fn split(a: &[Assignment]) -> (usize, usize) {
        let of = |j| a.iter().filter(|x| x.task.job == j).count();
        (of(1), of(2))
    }

    #[test]
    fn a_heartbeats_slots_are_shared_between_equal_pools() {
        let v = two_pools_on_a_four_slot_node(["a", "b"]);
        for name in ["fair", "fair+delay", "fair+matchmaking"] {
            let mut s = crate::build(&crate::SchedulerSpec::new(name)).unwrap();
            let a = s.assign(&v, Trigger::Heartbeat("n".into()));
            assert_eq!(split(&a), (2, 2), "{name}: {a:?}");
        }
    }
}
