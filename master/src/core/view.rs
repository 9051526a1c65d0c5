//! The [`ClusterView`] a policy decides on, built afresh for each decision
//! from the three owners: live nodes and their free slots (membership and
//! running attempts), cached blocks and replicas (block tables), pending
//! tasks and job views (jobs).

use super::MasterState;
use sched::{ClusterView, NodeView, PendingTask, RunningTask, TaskKind, DEFAULT_BANDWIDTHS};
use std::collections::HashMap;
use std::time::Instant;

impl MasterState {
    pub fn cluster_view(&self, now: Instant) -> ClusterView {
        let started = self.jobs.started();
        let t = |i: Instant| i.saturating_duration_since(started).as_secs_f64();
        let mut used: HashMap<String, (u32, u32)> = HashMap::new();
        let mut running: HashMap<String, Vec<RunningTask>> = HashMap::new();
        for j in self.jobs.iter() {
            for r in j.running() {
                let e = used.entry(r.worker.clone()).or_default();
                if r.id.kind == TaskKind::Map {
                    e.0 += 1;
                } else {
                    e.1 += 1;
                }
                running.entry(r.worker).or_default().push(RunningTask {
                    id: r.id,
                    started: t(r.started),
                });
            }
        }
        let mut cached_by_node = self.blocks.cached_per_worker();
        let nodes = self
            .cluster
            .live()
            .map(|w| {
                let (m, r) = used.get(&w.name).copied().unwrap_or_default();
                // Neither a worker shutting down nor one being
                // decommissioned is offered new tasks.
                let closed = w.draining || self.blocks.decommissioned().contains(&w.name);
                NodeView {
                    name: w.name.clone(),
                    rack: w.rack.clone(),
                    map_slots: w.map_slots,
                    reduce_slots: w.reduce_slots,
                    free_map_slots: if closed {
                        0
                    } else {
                        w.map_slots.saturating_sub(m)
                    },
                    free_reduce_slots: if closed {
                        0
                    } else {
                        w.reduce_slots.saturating_sub(r)
                    },
                    resources: w.resources.clone(),
                    cached_blocks: cached_by_node.remove(w.name.as_str()).unwrap_or_default(),
                    running: running.remove(&w.name).unwrap_or_default(),
                }
            })
            .collect();
        let mut pending = Vec::new();
        let mut jobs = Vec::new();
        for j in self.jobs.active() {
            jobs.push(j.view(started));
            for id in j.runnable() {
                let task = j.task(id.kind, id.index).expect("runnable");
                let block = if id.kind == TaskKind::Map {
                    j.map_inputs().get(id.index as usize).map(|m| m.block)
                } else {
                    None
                };
                let (replicas, cached_on) = match block {
                    Some(b) => (
                        self.blocks.stored_on(b.id).cloned().collect(),
                        self.blocks.cached_by(b.id).cloned().collect(),
                    ),
                    None => (vec![], vec![]),
                };
                pending.push(PendingTask {
                    id,
                    job: j.id(),
                    kind: id.kind,
                    block: block.map(|b| b.id),
                    replicas,
                    cached_on,
                    input_bytes: block.map_or(0, |b| b.len),
                    avoid: task.avoid.clone(),
                    runnable_since: t(task.runnable_since),
                });
            }
        }
        // The rates the launcher declared in `[network]`, else the
        // defaults. No locality index: the view is built afresh for each
        // decision, and one scan of `pending` costs less than indexing it
        // (the simulator keeps one current instead).
        let bandwidths = self.cfg.network.bandwidths().unwrap_or(DEFAULT_BANDWIDTHS);
        ClusterView::new(
            t(now),
            self.cfg.heartbeat.interval.as_secs_f64(),
            nodes,
            jobs,
            pending,
            bandwidths,
        )
    }
}
