//! Matchmaking (He, Lu, Swanson: "Matchmaking: A New MapReduce Scheduling
//! Technique", section III, Algorithms 1 and 2). Every node gets a fair
//! chance at local maps before any node gets a non-local one:
//! - on a heartbeat, while the node has free slots, search the jobs in order
//!   (the strict order relaxed) for a map local to the node, and assign it,
//!   counting local assignments in the node's locality marker;
//! - when no job has a local map for the node and the node is not marked,
//!   mark it (marker = 0) and give it nothing this heartbeat: one heartbeat
//!   of patience, in which the other nodes heartbeat and take their local
//!   maps;
//! - when it is already marked (a second failure in a row), give it one
//!   non-local map from the first job with unassigned maps, and no more this
//!   heartbeat (at most one non-local map per heartbeat);
//! - Algorithm 2: when a job arrives, every marker is cleared (null), as
//!   the new job may hold local maps for any node.
//!
//! Algorithm 1 as printed tests `previousMarker == LocalityMarker[i]` before
//! `LocalityMarker[i] == 0`, which would make its non-local branch
//! unreachable; we follow the text of section III, which says what the
//! branches are for: the first failure in a row marks, the second assigns.
//!
//! "Local" is by the block's replicas, caches unseen, as in the paper's
//! Hadoop (`ClusterView::disk_locality`).

use super::compose::{Queue, Technique};
use super::error::SchedError;
use super::*;
use std::collections::{BTreeMap, HashMap, HashSet};

#[derive(Debug)]
pub struct Matchmaking {
    /// "matchmaking", or "localization-id" for HybSMRP's identical rule.
    name: &'static str,
    /// Node → locality marker: absent is the paper's null, 0 means "failed
    /// to find a local map last time", n > 0 counts local maps taken.
    markers: HashMap<String, u32>,
}

impl Default for Matchmaking {
    fn default() -> Self {
        Matchmaking {
            name: "matchmaking",
            markers: HashMap::new(),
        }
    }
}

impl Matchmaking {
    /// HybSMRP's localization ID (its Algorithm 2, lines 1-28): a node that
    /// finds no local task is given none the first time and one non-local
    /// task after the second failure, and every ID is reset to null when a
    /// job arrives: the same rule as matchmaking's markers, under its name.
    pub fn localization_id() -> Self {
        Matchmaking {
            name: "localization-id",
            markers: HashMap::new(),
        }
    }

    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        if let Some(k) = p.keys().next() {
            return Err(SchedError::UnknownParam {
                name: "matchmaking".into(),
                param: k.clone(),
                takes: "no parameters".into(),
            });
        }
        Ok(Matchmaking::default())
    }

    /// The node's marker, for tests and the UI.
    pub fn marker(&self, node: &str) -> Option<u32> {
        self.markers.get(node).copied()
    }
}

impl Technique for Matchmaking {
    fn name(&self) -> &'static str {
        self.name
    }

    fn pick(&mut self, view: &ClusterView, node: &NodeView, queue: &mut Queue) -> Vec<Assignment> {
        let mut out = Vec::new();
        let mut taken: HashSet<TaskId> = HashSet::new();
        let mut s = node.free_map_slots;
        let usable = |t: &PendingTask, taken: &HashSet<TaskId>| {
            t.kind == TaskKind::Map && !taken.contains(&t.id) && !t.avoids(&node.name, &view.nodes)
        };
        while s > 0 {
            let previous = self.markers.get(&node.name).copied();
            let local = queue.jobs().iter().find_map(|job| {
                view.best_map_on_disk(*job, node, Locality::NodeLocal, |t| usable(t, &taken))
                    .map(|(_, t)| t)
            });
            if let Some(t) = local {
                taken.insert(t.id);
                out.push(Assignment {
                    task: t.id,
                    node: node.name.clone(),
                });
                s -= 1;
                *self.markers.entry(node.name.clone()).or_insert(0) += 1;
                queue.launched(t.job);
                continue;
            }
            if previous == Some(0) {
                // Second failure in a row: one non-local map from the first
                // job that has one, then stop.
                let non_local = queue.jobs().iter().find_map(|job| {
                    view.best_map_on_disk(*job, node, Locality::OffRack, |t| usable(t, &taken))
                        .map(|(_, t)| t)
                });
                if let Some(t) = non_local {
                    out.push(Assignment {
                        task: t.id,
                        node: node.name.clone(),
                    });
                }
            } else {
                self.markers.insert(node.name.clone(), 0);
            }
            break;
        }
        out
    }

    fn on_job_added(&mut self, _job: &JobView) {
        // Algorithm 2.
        self.markers.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{self, job, node};

    /// Map `index` of `job`, reading block `index`.
    fn map(job: u64, index: u32, replicas: &[&str]) -> PendingTask {
        testkit::map(job, index, index as u64, replicas, &[])
    }

    /// Nodes a and b, one rack, two free slots each.
    fn view(pending: Vec<PendingTask>) -> ClusterView {
        testkit::view(
            vec![node("a", "r1", 2), node("b", "r1", 2)],
            vec![],
            pending,
        )
    }

    #[test]
    fn a_node_without_local_maps_waits_one_heartbeat_then_gets_one_non_local() {
        let mut m = Matchmaking::default();
        let v = view(vec![
            map(1, 0, &["b"]),
            map(1, 1, &["b"]),
            map(1, 2, &["b"]),
        ]);
        let a = v.node("a").unwrap();
        assert!(
            m.pick(&v, a, &mut Queue::fixed(&v, vec![1])).is_empty(),
            "first failure: skipped"
        );
        assert_eq!(m.marker("a"), Some(0));
        let got = m.pick(&v, a, &mut Queue::fixed(&v, vec![1]));
        assert_eq!(
            got.len(),
            1,
            "second failure: one and only one non-local map, with 2 slots free"
        );
    }

    #[test]
    fn local_maps_across_jobs_and_markers_cleared_on_job_arrival() {
        let mut m = Matchmaking::default();
        let v = view(vec![map(1, 0, &["b"]), map(2, 1, &["a"])]);
        let a = v.node("a").unwrap();
        // The strict order is relaxed: job 2's local map goes to a.
        let got = m.pick(&v, a, &mut Queue::fixed(&v, vec![1, 2]));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].task.job, 2);
        assert_eq!(m.marker("a"), Some(0), "then no more local maps: marked");
        m.on_job_added(&job(3, 1));
        assert_eq!(m.marker("a"), None, "Algorithm 2 clears every marker");
        // After the reset the node waits one heartbeat again.
        let v = view(vec![map(1, 0, &["b"])]);
        assert!(m
            .pick(&v, v.node("a").unwrap(), &mut Queue::fixed(&v, vec![1]))
            .is_empty());
    }
}
