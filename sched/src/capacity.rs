//! The Capacity Scheduler's job order (Yahoo's, the Naive-Bayes paper's
//! baseline: "Number of queues in Capacity scheduler 3", "33.3%" each):
//! queues are offered slots least-served first (running maps over the
//! queue's capacity share of the cluster's map slots), FIFO inside a queue.
//! Jobs name their queue with `--queue`; a queue the configuration does not
//! list gets an equal share of what the listed ones leave (none by default:
//! such jobs then wait for the listed queues, so name a listed queue).
//!
//! The queues are sorted again after every map a heartbeat launches,
//! counting it as used capacity: Hadoop's Capacity Scheduler picks, for
//! each free slot, the queue whose ratio of running tasks to guaranteed
//! capacity is lowest (Apache Hadoop 0.20, "Capacity Scheduler Guide",
//! section "Resource allocation"), so a node's free slots are spread over
//! equal queues instead of all going to one.
//!
//! Parameter `queues`: `name:percent,...`, default `default:33.3,q2:33.3,q3:33.4`
//! (three queues, as the paper's baseline, the first the CLI's default queue).

use super::compose::JobOrder;
use super::error::SchedError;
use super::*;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug)]
pub struct CapacityOrder {
    queues: BTreeMap<String, f64>,
}

impl Default for CapacityOrder {
    fn default() -> Self {
        let queues = [("default", 33.3), ("q2", 33.3), ("q3", 33.4)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        CapacityOrder { queues }
    }
}

impl CapacityOrder {
    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        let mut c = CapacityOrder::default();
        for (k, v) in p {
            match k.as_str() {
                "queues" => {
                    c.queues = super::shares::parse("capacity", k, v)?;
                    let total: f64 = c.queues.values().sum();
                    if total <= 0.0 || total > 100.0 + 1e-6 {
                        return Err(SchedError::BadValue {
                            name: "capacity".into(),
                            param: k.clone(),
                            value: v.clone(),
                            why: "capacities must add up to more than 0 and at most 100 percent"
                                .into(),
                        });
                    }
                }
                _ => {
                    return Err(SchedError::UnknownParam {
                        name: "capacity".into(),
                        param: k.clone(),
                        takes: "queues".into(),
                    })
                }
            }
        }
        Ok(c)
    }

    fn capacity(&self, queue: &str) -> f64 {
        if let Some(c) = self.queues.get(queue) {
            return *c;
        }
        (100.0 - self.queues.values().sum::<f64>()).max(0.0)
    }
}

impl JobOrder for CapacityOrder {
    fn name(&self) -> &'static str {
        "capacity"
    }

    fn order(&mut self, view: &ClusterView) -> Vec<u64> {
        self.order_after(view, &HashMap::new())
    }

    fn resorts(&self) -> bool {
        true
    }

    fn order_after(&mut self, view: &ClusterView, launched: &HashMap<u64, u32>) -> Vec<u64> {
        let slots: f64 = view
            .nodes
            .iter()
            .map(|n| n.map_slots as f64)
            .sum::<f64>()
            .max(1.0);
        let mut running: HashMap<&str, f64> = HashMap::new();
        for j in &view.jobs {
            let now = j.running_maps + launched.get(&j.id).copied().unwrap_or(0);
            *running.entry(j.pool.as_str()).or_default() += now as f64;
        }
        // Used fraction of the queue's guaranteed capacity; a queue with no
        // capacity is served last.
        let used = |q: &str| -> f64 {
            let cap = self.capacity(q) / 100.0 * slots;
            let r = running.get(q).copied().unwrap_or(0.0);
            if cap <= 0.0 {
                f64::INFINITY
            } else {
                r / cap
            }
        };
        let mut jobs: Vec<&JobView> = view.jobs.iter().collect();
        jobs.sort_by(|a, b| {
            used(&a.pool)
                .total_cmp(&used(&b.pool))
                .then(a.pool.cmp(&b.pool))
                .then(a.order.cmp(&b.order))
        });
        jobs.into_iter().map(|j| j.id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{node, pooled_job};

    #[test]
    fn least_served_queue_first_fifo_inside() {
        let mut c = CapacityOrder::default();
        let v = ClusterView {
            nodes: vec![NodeView {
                map_slots: 30,
                ..node("n", "r", 10)
            }],
            jobs: vec![
                pooled_job(1, "default", 8),
                pooled_job(2, "q2", 2),
                pooled_job(3, "q2", 0),
                pooled_job(4, "q3", 5),
            ],
            ..Default::default()
        };
        assert_eq!(c.order(&v), vec![2, 3, 4, 1]);
        let mut p = BTreeMap::new();
        p.insert("queues".to_string(), "a:80,b:30".to_string());
        assert!(CapacityOrder::from_params(&p).is_err());
    }

    #[test]
    fn a_heartbeats_slots_are_shared_between_equal_queues() {
        use crate::fair::tests::{split, two_pools_on_a_four_slot_node};
        let v = two_pools_on_a_four_slot_node(["a", "b"]);
        let mut spec = crate::SchedulerSpec::new("capacity");
        spec.params.insert("queues".into(), "a:50,b:50".into());
        for name in ["capacity", "capacity+delay", "capacity+matchmaking"] {
            spec.name = name.into();
            let mut s = crate::build(&spec).unwrap();
            let a = s.assign(&v, Trigger::Heartbeat("n".into()));
            assert_eq!(split(&a), (2, 2), "{name}: {a:?}");
        }
    }
}
