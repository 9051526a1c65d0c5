//! Keeping one [`ClusterView`] current through an event. The master decides
//! several times in one event (the heartbeat's node, then every idle node
//! when new work appeared, then speculative backups); rather than build a
//! view from its tables for each decision, it builds one and applies what
//! each decision changed. Each method leaves the view as a fresh build
//! would give it: `pending` in its order, the slot taken or freed, the
//! job's counts moved. The master checks that equality in its debug builds
//! after every event (`master/src/core/schedule.rs`).

use crate::{ClusterView, RunningTask, TaskId, TaskKind};

impl ClusterView {
    /// Task `id`, pending, started on `node`: it leaves `pending` (the
    /// others keep their order), takes a slot of its kind there, and its
    /// job counts one pending task less and one running more. False when
    /// the view does not hold the task or the node.
    pub fn launched(&mut self, id: TaskId, node: &str) -> bool {
        let (Some(pos), Some(n)) = (self.pending_position(id), self.position(node)) else {
            return false;
        };
        let t = self.pending.remove(pos);
        if self.locality_index.is_some() {
            self.build_locality_index();
        }
        self.take_slot(n, id);
        if let Some(j) = self.jobs.iter_mut().find(|j| j.id == t.job) {
            j.pending = j.pending.saturating_sub(1);
            j.running += 1;
            if t.kind == TaskKind::Map {
                j.pending_maps = j.pending_maps.saturating_sub(1);
                j.running_maps += 1;
            }
        }
        true
    }

    /// A speculative backup of running task `id` started on `node`: a slot
    /// taken there; the job's task counts do not move (the task was already
    /// running).
    pub fn backup_launched(&mut self, id: TaskId, node: &str) -> bool {
        let Some(n) = self.position(node) else {
            return false;
        };
        self.take_slot(n, id);
        true
    }

    fn take_slot(&mut self, n: usize, id: TaskId) {
        let now = self.now;
        let node = &mut self.nodes[n];
        match id.kind {
            TaskKind::Map => node.free_map_slots = node.free_map_slots.saturating_sub(1),
            TaskKind::Reduce => node.free_reduce_slots = node.free_reduce_slots.saturating_sub(1),
        }
        node.running.push(RunningTask { id, started: now });
    }

    /// Job `job` ended: it leaves the view with its pending tasks, and its
    /// running attempts, stopped, give their slots back.
    pub fn job_ended(&mut self, job: u64) {
        self.jobs.retain(|j| j.id != job);
        let before = self.pending.len();
        self.pending.retain(|t| t.job != job);
        if self.pending.len() != before && self.locality_index.is_some() {
            self.build_locality_index();
        }
        for n in &mut self.nodes {
            let (mut maps, mut reduces) = (0, 0);
            n.running.retain(|r| {
                let stays = r.id.job != job;
                if !stays {
                    match r.id.kind {
                        TaskKind::Map => maps += 1,
                        TaskKind::Reduce => reduces += 1,
                    }
                }
                stays
            });
            if n.free_map_slots + maps <= n.map_slots {
                n.free_map_slots += maps;
            }
            if n.free_reduce_slots + reduces <= n.reduce_slots {
                n.free_reduce_slots += reduces;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{job, map, node, view as build};
    use crate::{ClusterView, TaskId, TaskKind};

    /// Two nodes of two map slots; job 1's maps 0, 1 and 2 and job 2's map
    /// 0 pending, at time 5.
    fn view() -> ClusterView {
        let pending = vec![
            map(1, 0, 10, &[], &[]),
            map(1, 1, 11, &[], &[]),
            map(2, 0, 20, &[], &[]),
            map(1, 2, 12, &[], &[]),
        ];
        let mut v = build(
            vec![node("a", "r", 2), node("b", "r", 2)],
            vec![job(1, 3), job(2, 1)],
            pending,
        );
        v.now = 5.0;
        v
    }

    #[test]
    fn a_launch_takes_the_task_and_a_slot_keeping_the_order() {
        let mut v = view();
        let id = TaskId {
            job: 1,
            kind: TaskKind::Map,
            index: 0,
        };
        assert!(v.launched(id, "b"));
        let left: Vec<(u64, u32)> = v.pending.iter().map(|t| (t.job, t.id.index)).collect();
        assert_eq!(left, vec![(1, 1), (2, 0), (1, 2)]);
        let b = v.node("b").unwrap();
        assert_eq!((b.free_map_slots, b.running.len()), (1, 1));
        assert_eq!(b.running[0].started, 5.0);
        let j = &v.jobs[0];
        assert_eq!(
            (j.pending, j.running, j.pending_maps, j.running_maps),
            (2, 1, 2, 1)
        );
        // Not pending any more: a second launch is refused, nothing moves.
        assert!(!v.launched(id, "a"));
        assert!(v.backup_launched(id, "a"));
        assert_eq!(v.node("a").unwrap().free_map_slots, 1);
        assert_eq!(v.jobs[0].running, 1);
    }

    #[test]
    fn an_ended_job_leaves_with_its_tasks_and_slots() {
        let mut v = view();
        let t = |job, index| TaskId {
            job,
            kind: TaskKind::Map,
            index,
        };
        v.launched(t(1, 0), "a");
        v.launched(t(2, 0), "a");
        v.backup_launched(t(1, 0), "b");
        v.job_ended(1);
        assert_eq!(v.jobs.len(), 1);
        assert!(v.pending.iter().all(|p| p.job == 2));
        let (a, b) = (v.node("a").unwrap(), v.node("b").unwrap());
        assert_eq!((a.free_map_slots, a.running.len()), (1, 1));
        assert_eq!((b.free_map_slots, b.running.len()), (2, 0));
    }
}
