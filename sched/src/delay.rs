//! Delay scheduling (Zaharia et al., as the matchmaking paper describes it in
//! section II.B): start at the first job in order; a job with no map local to
//! the heartbeating node is skipped, and the search goes on to the next job;
//! once a job has been skipped for longer than the node-locality wait it may
//! launch rack-local maps, and after the rack wait as well, any map. A job
//! that launches a local map starts waiting afresh. Both waits default to
//! 1.5 heartbeat intervals, the paper's default D. Unlike Hadoop's default
//! rule, a node may get several non-local maps in one heartbeat (II.B).
//! Locality is by replicas alone, caches unseen, as in Hadoop
//! (`ClusterView::disk_locality`).

use super::compose::{Queue, Technique};
use super::error::SchedError;
use super::*;
use std::collections::{BTreeMap, HashMap, HashSet};

#[derive(Debug, Default)]
pub struct Delay {
    /// Seconds a job waits for a node-local slot; `None`: 1.5 heartbeats.
    node_wait_s: Option<f64>,
    /// Further seconds it waits for a rack-local slot; `None`: 1.5 heartbeats.
    rack_wait_s: Option<f64>,
    /// When each job was first skipped since it last launched a local map.
    skipped_since: HashMap<u64, f64>,
}

impl Delay {
    pub fn new(node_wait_s: Option<f64>, rack_wait_s: Option<f64>) -> Self {
        Delay {
            node_wait_s,
            rack_wait_s,
            skipped_since: HashMap::new(),
        }
    }

    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        let mut d = Delay::default();
        for (k, v) in p {
            let secs = || -> Result<f64, SchedError> {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| SchedError::BadValue {
                        name: "delay".into(),
                        param: k.clone(),
                        value: v.clone(),
                        why: "expected seconds, a number >= 0".into(),
                    })
            };
            match k.as_str() {
                "node_wait" => d.node_wait_s = Some(secs()?),
                "rack_wait" => d.rack_wait_s = Some(secs()?),
                _ => {
                    return Err(SchedError::UnknownParam {
                        name: "delay".into(),
                        param: k.clone(),
                        takes: "node_wait, rack_wait".into(),
                    })
                }
            }
        }
        Ok(d)
    }
}

impl Technique for Delay {
    fn name(&self) -> &'static str {
        "delay"
    }

    fn pick(&mut self, view: &ClusterView, node: &NodeView, queue: &mut Queue) -> Vec<Assignment> {
        let d_node = self.node_wait_s.unwrap_or(1.5 * view.heartbeat_interval);
        let d_rack = self.rack_wait_s.unwrap_or(1.5 * view.heartbeat_interval);
        let mut out = Vec::new();
        let mut taken: HashSet<TaskId> = HashSet::new();
        let mut free = node.free_map_slots;
        let allowed = |t: &PendingTask| !(t.avoids(&node.name, &view.nodes));
        while free > 0 {
            let mut chosen = None;
            for job in queue.jobs() {
                let Some((level, best)) =
                    view.best_map_on_disk(*job, node, Locality::OffRack, |t| {
                        allowed(t) && !taken.contains(&t.id)
                    })
                else {
                    continue;
                };
                let launch = if level.is_local() {
                    self.skipped_since.remove(job);
                    true
                } else {
                    // A job skipped in this heartbeat keeps its first skip
                    // time: it is not skipped twice for one slot.
                    let since = *self.skipped_since.entry(*job).or_insert(view.now);
                    let waited = view.now - since;
                    match level {
                        Locality::CacheRackLocal | Locality::RackLocal => waited >= d_node,
                        _ => waited >= d_node + d_rack,
                    }
                };
                if launch {
                    chosen = Some((*job, best.id));
                    break;
                }
            }
            let Some((job, task)) = chosen else {
                break;
            };
            taken.insert(task);
            out.push(Assignment {
                task,
                node: node.name.clone(),
            });
            free -= 1;
            queue.launched(job);
        }
        out
    }

    fn on_job_added(&mut self, _job: &JobView) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{self, node};

    /// Map `index` of `job`, reading block `100 * job + index`.
    fn map(job: u64, index: u32, replicas: &[&str]) -> PendingTask {
        testkit::map(job, index, index as u64 + 100 * job, replicas, &[])
    }

    fn view(now: f64, pending: Vec<PendingTask>) -> ClusterView {
        ClusterView {
            now,
            ..testkit::view(
                vec![node("a", "r1", 1), node("b", "r1", 1), node("c", "r2", 1)],
                vec![],
                pending,
            )
        }
    }

    #[test]
    fn skips_a_job_without_a_local_task_then_relaxes() {
        let mut d = Delay::new(None, None);
        // Job 1's only map is on c (rack r2); job 2 has a map local to a.
        let v = view(0.0, vec![map(1, 0, &["c"]), map(2, 0, &["a"])]);
        let a = d.pick(&v, v.node("a").unwrap(), &mut Queue::fixed(&v, vec![1, 2]));
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].task.job, 2, "job 1 is skipped for job 2's local task");
        // Job 1 alone now; at t=1 (< 1.5) it still waits, even off-rack.
        let v = view(1.0, vec![map(1, 0, &["c"])]);
        assert!(d
            .pick(&v, v.node("a").unwrap(), &mut Queue::fixed(&v, vec![1]))
            .is_empty());
        // Rack-local would be allowed after 1.5 s, but the task is off-rack
        // for a: it needs 3 s.
        let v = view(2.0, vec![map(1, 0, &["c"])]);
        assert!(d
            .pick(&v, v.node("a").unwrap(), &mut Queue::fixed(&v, vec![1]))
            .is_empty());
        let v = view(3.0, vec![map(1, 0, &["c"])]);
        assert_eq!(
            d.pick(&v, v.node("a").unwrap(), &mut Queue::fixed(&v, vec![1]))
                .len(),
            1
        );
    }

    #[test]
    fn rack_local_after_the_node_wait() {
        let mut d = Delay::new(Some(1.0), Some(10.0));
        let v = view(0.0, vec![map(1, 0, &["b"])]);
        assert!(d
            .pick(&v, v.node("a").unwrap(), &mut Queue::fixed(&v, vec![1]))
            .is_empty());
        let v = view(1.0, vec![map(1, 0, &["b"])]);
        assert_eq!(
            d.pick(&v, v.node("a").unwrap(), &mut Queue::fixed(&v, vec![1]))
                .len(),
            1
        );
    }

    #[test]
    fn the_wait_restarts_after_a_local_launch() {
        let mut d = Delay::new(None, None);
        // Job 1's maps are stored on b: node-local there, rack-local on a.
        let both = || vec![map(1, 0, &["b"]), map(1, 1, &["b"])];
        let v = view(0.0, both());
        assert!(d
            .pick(&v, v.node("a").unwrap(), &mut Queue::fixed(&v, vec![1]))
            .is_empty());
        // At t=1 b heartbeats and job 1 launches a local map: its skip
        // count resets (Zaharia et al., "Delay Scheduling", EuroSys 2010,
        // Algorithm 2 sets a job's skip count to 0 when it launches a
        // local task).
        let v = view(1.0, both());
        let got = d.pick(&v, v.node("b").unwrap(), &mut Queue::fixed(&v, vec![1]));
        assert_eq!(got.len(), 1);
        // At t=2 a has waited 2 s since the first skip, past the 1.5 s
        // node wait, but the job's wait began again at the local launch:
        // it is skipped now, for the first time since.
        let v = view(2.0, vec![map(1, 1, &["b"])]);
        assert!(
            d.pick(&v, v.node("a").unwrap(), &mut Queue::fixed(&v, vec![1]))
                .is_empty(),
            "the wait must restart after a local launch"
        );
        let v = view(3.4, vec![map(1, 1, &["b"])]);
        assert!(d
            .pick(&v, v.node("a").unwrap(), &mut Queue::fixed(&v, vec![1]))
            .is_empty());
        let v = view(3.5, vec![map(1, 1, &["b"])]);
        assert_eq!(
            d.pick(&v, v.node("a").unwrap(), &mut Queue::fixed(&v, vec![1]))
                .len(),
            1,
            "1.5 s after the new first skip: rack-local allowed"
        );
    }

    #[test]
    fn params() {
        let mut p = BTreeMap::new();
        p.insert("node_wait".to_string(), "2".to_string());
        assert!(Delay::from_params(&p).is_ok());
        p.insert("bogus".to_string(), "1".to_string());
        assert!(Delay::from_params(&p).is_err());
    }
}
