//! Hadoop's default FIFO scheduler, as the matchmaking paper describes it
//! (He, Lu, Swanson, "Matchmaking: A New MapReduce Scheduling Technique",
//! section II.A): on a heartbeat from a node with free map slots, look at the
//! first job in the queue that still has unassigned maps; give the node that
//! job's local tasks while slots remain; when the job has no local task
//! left, give the node one and only one non-local task in this heartbeat,
//! whatever its free slots. Strict job order: a later job gets nothing while
//! the first has an unassigned map.
//!
//! "Non-local" picks a rack-local task before an off-rack one, as Hadoop's
//! `obtainNewNonLocalMapTask` scans the node's rack first.
//!
//! Locality is by the block's replicas alone, as Hadoop's `JobInProgress`
//! knows it (`ClusterView::disk_locality`): a cached copy neither draws
//! the task nor makes it local. The CLQLMRS paper's FIFO baseline is this
//! cache-blind rule, and its Fig. 5 (cache locality rising with the cache
//! size above FIFO's) only shows against it.

use super::compose::{Queue, Technique};
use super::*;
use std::collections::HashSet;

#[derive(Debug, Default)]
pub struct Fifo;

impl Scheduler for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn assign(&mut self, view: &ClusterView, trigger: Trigger) -> Vec<Assignment> {
        let Some(node) = trigger.node().and_then(|n| view.node(n)) else {
            return vec![];
        };
        let order = view.jobs_fifo();
        let mut out = assign_maps_fifo(view, node, &mut Queue::fixed(view, order.clone()));
        out.extend(assign_reduces(view, node, &order));
        out
    }
}

/// Hadoop's default locality rule (the module's map rule) as a technique
/// that job orders compose with.
#[derive(Debug, Default)]
pub struct HadoopDefault;

impl Technique for HadoopDefault {
    fn name(&self) -> &'static str {
        "default"
    }
    fn pick(&mut self, view: &ClusterView, node: &NodeView, queue: &mut Queue) -> Vec<Assignment> {
        assign_maps_fifo(view, node, queue)
    }
}

/// The FIFO map rule over a job order (fair and capacity reuse it with
/// their own orders). Under an order that holds for the heartbeat, the
/// first job with an unassigned map is the only one served; under one that
/// re-sorts after each launch (fair, capacity), each slot goes to the job
/// first in the order at that moment. Either way at most one non-local map
/// per heartbeat.
pub fn assign_maps_fifo(view: &ClusterView, node: &NodeView, queue: &mut Queue) -> Vec<Assignment> {
    let mut out = Vec::new();
    let mut free = node.free_map_slots;
    let mut taken: HashSet<TaskId> = HashSet::new();
    let allowed = |t: &PendingTask| !t.avoids(&node.name, &view.nodes);
    let mut first: Option<u64> = None;
    while free > 0 {
        // The first job with a map left, and its best map: least
        // (locality by replicas, index).
        let pick = queue.jobs().iter().find_map(|job| {
            view.best_map_on_disk(*job, node, Locality::OffRack, |t| {
                allowed(t) && !taken.contains(&t.id)
            })
            .map(|b| (*job, b))
        });
        let Some((job, (level, t))) = pick else {
            break;
        };
        // Strict FIFO: the first job with unassigned maps is the only one.
        if !queue.resorts() && *first.get_or_insert(job) != job {
            break;
        }
        taken.insert(t.id);
        out.push(Assignment {
            task: t.id,
            node: node.name.clone(),
        });
        free -= 1;
        queue.launched(job);
        if !level.is_local() {
            // One and only one non-local task per heartbeat.
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{self, job, node};

    /// Map `index` of `job`, reading block `index`.
    fn map(job: u64, index: u32, replicas: &[&str]) -> PendingTask {
        testkit::map(job, index, index as u64, replicas, &[])
    }

    fn view() -> ClusterView {
        testkit::view(
            vec![node("a", "r1", 3), node("b", "r1", 3), node("c", "r2", 3)],
            vec![job(1, 3), job(2, 3)],
            vec![
                map(1, 0, &["a"]),
                map(1, 1, &["b"]),
                map(1, 2, &["b"]),
                map(2, 0, &["c"]),
            ],
        )
    }

    #[test]
    fn local_tasks_of_the_first_job_then_one_nonlocal() {
        let v = view();
        let a = Fifo.assign(&v, Trigger::Heartbeat("a".into()));
        // Job 1's local task 0, then exactly one non-local one, although
        // a third slot is free and job 2 waits.
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].task.index, 0);
        assert_eq!(a[1].task.job, 1);
        let c = Fifo.assign(&v, Trigger::Heartbeat("c".into()));
        // Strict order: c gets job 1's non-local task, not job 2's local one.
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].task.job, 1);
    }

    /// Hadoop's rule sees replicas, not caches: a cached copy neither
    /// draws a later map ahead of an earlier node-local one, nor makes a
    /// map local to a node that holds no replica of it.
    #[test]
    fn caches_are_unseen() {
        let v = testkit::view(
            vec![node("a", "r1", 1), node("b", "r2", 1)],
            vec![job(1, 3)],
            vec![
                testkit::map(1, 0, 0, &["a"], &[]),
                testkit::map(1, 1, 1, &["a"], &["a"]),
                testkit::map(1, 2, 2, &["a"], &["b"]),
            ],
        );
        let a = Fifo.assign(&v, Trigger::Heartbeat("a".into()));
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].task.index, 0, "the least index, not the cached map");
        // On b nothing is local by replicas: one off-rack map, the first.
        let b = Fifo.assign(&v, Trigger::Heartbeat("b".into()));
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].task.index, 0, "the cached copy on b is unseen");
        for indexed in [false, true] {
            let w = if indexed {
                v.clone().with_locality_index()
            } else {
                v.clone()
            };
            let (level, t) = w
                .best_map_on_disk(1, w.node("b").unwrap(), Locality::OffRack, |_| true)
                .unwrap();
            assert_eq!((level, t.id.index), (Locality::OffRack, 0));
        }
    }

    #[test]
    fn next_job_when_first_has_no_pending_maps() {
        let mut v = view();
        v.pending.retain(|t| t.job == 2);
        let c = Fifo.assign(&v, Trigger::Heartbeat("c".into()));
        assert_eq!(
            c,
            vec![Assignment {
                task: v.pending[0].id,
                node: "c".into()
            }]
        );
    }
}
