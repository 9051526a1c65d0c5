//! The [`ClusterView`] a policy decides on, made from the three owners:
//! live nodes and their free slots (membership and running attempts),
//! cached blocks and replicas (block tables), pending tasks and job views
//! (jobs).
//!
//! Built once and then kept from one decision to the next. Building it is
//! O(workers): with ten thousand workers heartbeating each second, a
//! build per heartbeat was the master's whole capacity. Each event says
//! what it changed ([`KeptView`]); the next decision brings only that up
//! to date: a heartbeat its own node, a task report the job side (jobs,
//! pending tasks, and the slots of the nodes running their attempts),
//! anything rarer (a registration, a death, the tick, a file deleted) a
//! fresh build. Debug builds (every test) compare the kept view with a
//! fresh build at every decision, so a change that an event forgot to
//! declare fails the tests.

use super::MasterState;
use sched::{
    ClusterView, JobView, NodeView, PendingTask, RunningTask, TaskKind, DEFAULT_BANDWIDTHS,
};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;

/// Nodes changed since the last decision beyond which a fresh build is
/// cheaper than their refreshes (each join or death shifts the nodes).
const REFRESH_AT_MOST: usize = 64;

/// The view kept between decisions, and what changed in the tables since
/// it was last brought up to date.
#[derive(Debug, Default)]
pub struct KeptView {
    view: Option<ClusterView>,
    /// Membership, or something many nodes show, changed: build afresh.
    all: bool,
    /// The job side, or the block tables its pending tasks read, changed.
    jobs: bool,
    /// Nodes whose own entry changed (resources, cache, drain).
    nodes: BTreeSet<String>,
    /// Nodes that may show running attempts in the kept view: those that
    /// ran some at its last job-side refresh, and those launched on since.
    /// A refresh looks at these and at the nodes running attempts now,
    /// not at every node: that made a task report cost O(workers).
    busy: HashSet<String>,
}

impl MasterState {
    /// The tables changed in a way only a fresh build follows.
    pub(super) fn view_stale(&mut self) {
        self.kept.all = true;
    }

    /// The job side changed, or the replicas or caches of blocks changed.
    pub(super) fn view_stale_jobs(&mut self) {
        self.kept.jobs = true;
    }

    /// Node `name`'s own entry changed.
    pub(super) fn view_stale_node(&mut self, name: &str) {
        if self.kept.view.is_some() && !self.kept.all && !self.kept.nodes.contains(name) {
            self.kept.nodes.insert(name.to_string());
        }
    }

    /// The view one event decides on, brought up to date (see the module
    /// comment); give it back with [`MasterState::keep_view`]. `None` when
    /// no job is active: nothing to decide.
    pub(super) fn event_view(&mut self, now: Instant) -> Option<ClusterView> {
        let kept = std::mem::take(&mut self.kept);
        self.jobs.active().next()?;
        let mut v = match kept.view {
            Some(v) if !kept.all && kept.nodes.len() <= REFRESH_AT_MOST => v,
            _ => return Some(self.fresh_view(now)),
        };
        self.kept.busy = if kept.jobs {
            self.refresh_job_side(&mut v, &kept.busy)
        } else {
            kept.busy
        };
        let mut moved = false;
        for name in &kept.nodes {
            moved |= self.refresh_node(&mut v, name);
        }
        if moved {
            v = v.index();
        }
        v.now = self.view_time(now);
        if cfg!(debug_assertions) {
            let fresh = self.cluster_view(now);
            assert_eq!(
                view_shape(&v),
                view_shape(&fresh),
                "the kept view missed a change (jobs: {}, nodes: {:?})",
                kept.jobs,
                kept.nodes
            );
        }
        Some(v)
    }

    /// Keeps the view an event decided on for the next event.
    pub(super) fn keep_view(&mut self, view: ClusterView) {
        self.kept.view = Some(view);
    }

    /// An attempt was launched on `node` in the view being decided on.
    pub(super) fn view_launched_on(&mut self, node: &str) {
        if !self.kept.busy.contains(node) {
            self.kept.busy.insert(node.to_string());
        }
    }

    /// A view built afresh, its busy nodes noted.
    fn fresh_view(&mut self, now: Instant) -> ClusterView {
        let v = self.cluster_view(now);
        let busy = v.nodes.iter().filter(|n| !n.running.is_empty());
        self.kept.busy = busy.map(|n| n.name.clone()).collect();
        v
    }

    fn view_time(&self, i: Instant) -> f64 {
        i.saturating_duration_since(self.jobs.started())
            .as_secs_f64()
    }

    /// Node `name`'s entry made again from the tables, its running
    /// attempts kept; a node that joined goes in at its place by name, one
    /// that died leaves; true when the nodes moved (the caller indexes
    /// them again, once).
    fn refresh_node(&self, v: &mut ClusterView, name: &str) -> bool {
        let at = v.nodes.binary_search_by(|n| n.name.as_str().cmp(name));
        match (at, self.cluster.alive(name)) {
            (Ok(i), Some(w)) => {
                let running = std::mem::take(&mut v.nodes[i].running);
                v.nodes[i] = self.node_view(w, running);
                return false;
            }
            (Err(i), Some(w)) => v.nodes.insert(i, self.node_view(w, Vec::new())),
            (Ok(i), None) => {
                v.nodes.remove(i);
            }
            (Err(_), None) => return false,
        }
        true
    }

    /// The job side made again: jobs, pending tasks, and the running
    /// attempts and free slots of the nodes that run one now or did
    /// (`busy`, from the last refresh and the launches since); returns the
    /// nodes that run one now.
    fn refresh_job_side(&self, v: &mut ClusterView, busy: &HashSet<String>) -> HashSet<String> {
        let running = self.running_by_worker();
        for name in busy {
            if running.contains_key(name.as_str()) {
                continue;
            }
            if let Some(i) = v.position(name) {
                if !v.nodes[i].running.is_empty() {
                    self.set_running(v, i, Vec::new());
                }
            }
        }
        let mut now_busy = HashSet::with_capacity(running.len());
        for (name, list) in running {
            if let Some(i) = v.position(name) {
                if !same_attempts(&v.nodes[i].running, &list) {
                    self.set_running(v, i, list);
                }
            }
            now_busy.insert(name.to_string());
        }
        let (jobs, pending) = self.job_side();
        v.jobs = jobs;
        v.pending = pending;
        if v.locality_index.is_some() {
            v.build_locality_index();
        }
        now_busy
    }

    /// Node `i`'s running attempts and the free slots they leave.
    fn set_running(&self, v: &mut ClusterView, i: usize, running: Vec<RunningTask>) {
        let Some(w) = self.cluster.alive(&v.nodes[i].name) else {
            return;
        };
        let cached = std::mem::take(&mut v.nodes[i].cached_blocks);
        v.nodes[i] = NodeView {
            cached_blocks: cached,
            ..self.node_shell(w, running)
        };
    }

    /// Running attempts by worker, on the view's clock. Ended jobs run
    /// none, and are not looked at: they only grow.
    fn running_by_worker(&self) -> HashMap<&str, Vec<RunningTask>> {
        let mut running: HashMap<&str, Vec<RunningTask>> = HashMap::new();
        for j in self.jobs.live() {
            j.each_running(|worker, id, _, started| {
                running.entry(worker).or_default().push(RunningTask {
                    id,
                    started: self.view_time(started),
                })
            });
        }
        running
    }

    /// A live worker's entry, with `running` its attempts, its cached
    /// blocks left empty.
    fn node_shell(&self, w: &crate::cluster::WorkerEntry, running: Vec<RunningTask>) -> NodeView {
        let count = |k| running.iter().filter(|r| r.id.kind == k).count() as u32;
        let (m, r) = (count(TaskKind::Map), count(TaskKind::Reduce));
        // Neither a worker shutting down nor one being decommissioned is
        // offered new tasks.
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
            cached_blocks: Default::default(),
            running,
        }
    }

    fn node_view(&self, w: &crate::cluster::WorkerEntry, running: Vec<RunningTask>) -> NodeView {
        NodeView {
            cached_blocks: self.blocks.cached_at(&w.name),
            ..self.node_shell(w, running)
        }
    }

    /// A view built afresh from the tables.
    pub fn cluster_view(&self, now: Instant) -> ClusterView {
        let mut running = self.running_by_worker();
        let nodes = self
            .cluster
            .live()
            .map(|w| self.node_view(w, running.remove(w.name.as_str()).unwrap_or_default()))
            .collect();
        let (jobs, pending) = self.job_side();
        // The rates the launcher declared in `[network]`, else the
        // defaults. No locality index: policies scan `pending`, which
        // costs less than keeping an index of it through each launch (the
        // simulator keeps one instead).
        let bandwidths = self.cfg.network.bandwidths().unwrap_or(DEFAULT_BANDWIDTHS);
        ClusterView::new(
            self.view_time(now),
            self.cfg.heartbeat.interval.as_secs_f64(),
            nodes,
            jobs,
            pending,
            bandwidths,
        )
    }

    /// The active jobs' views and their runnable tasks, in order.
    fn job_side(&self) -> (Vec<JobView>, Vec<PendingTask>) {
        let started = self.jobs.started();
        let t = |i: Instant| self.view_time(i);
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
        (jobs, pending)
    }
}

/// Whether two nodes' running attempts are the same, in any order (a
/// node's few attempts are listed in launch order in the view, by job in
/// the tables).
fn same_attempts(a: &[RunningTask], b: &[RunningTask]) -> bool {
    a.len() == b.len() && a.iter().all(|x| b.contains(x))
}

/// Everything a policy reads of a view, in a form two views compare by:
/// running attempts and cached blocks as sets (their order in a node
/// follows the launches), the rest as it is.
pub(super) fn view_shape(v: &ClusterView) -> Vec<String> {
    let mut out = vec![format!(
        "now {} interval {} bandwidths {} {}",
        v.now, v.heartbeat_interval, v.rack_bandwidth, v.cross_rack_bandwidth
    )];
    for n in &v.nodes {
        let mut running: Vec<String> = n.running.iter().map(|r| format!("{r:?}")).collect();
        running.sort_unstable();
        let mut cached: Vec<u64> = n.cached_blocks.iter().copied().collect();
        cached.sort_unstable();
        out.push(format!(
            "node {} {} slots {}/{} free {}/{} {:?} cached {cached:?} running {running:?}",
            n.name,
            n.rack,
            n.map_slots,
            n.reduce_slots,
            n.free_map_slots,
            n.free_reduce_slots,
            n.resources
        ));
    }
    out.extend(v.pending.iter().map(|t| format!("pending {t:?}")));
    out.extend(v.jobs.iter().map(|j| format!("job {j:?}")));
    out
}
