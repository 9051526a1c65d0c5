//! The snapshot a policy decides on.

use super::index::{LocalityIndex, NodeSite};
pub use super::task::{Locality, PendingTask, TaskId, TaskKind};
use std::collections::HashSet;

/// A node's resources as a policy reads them: the vector its worker
/// sampled (the number of cores is `cores()`, the per-core vector's length).
pub type Resources = common::resources::ResourceVector;

#[derive(Debug, Clone, Default)]
pub struct NodeView {
    pub name: String,
    pub rack: String,
    pub map_slots: u32,
    pub reduce_slots: u32,
    pub free_map_slots: u32,
    pub free_reduce_slots: u32,
    pub resources: Resources,
    pub cached_blocks: HashSet<u64>,
    /// The task attempts running there now: resource-aware policies add
    /// up their demands (the Naive-Bayes paper's T_compound).
    pub running: Vec<RunningTask>,
}

/// A task attempt occupying a slot.
#[derive(Debug, Clone, PartialEq)]
pub struct RunningTask {
    pub id: TaskId,
    /// When it started (seconds, the view's clock).
    pub started: f64,
}

#[derive(Debug, Clone)]
pub struct JobView {
    pub id: u64,
    pub name: String,
    /// Seconds on the view's clock.
    pub submit_time: f64,
    pub pool: String,
    /// Position in the queue (submission order).
    pub order: u64,
    pub maps_total: u32,
    pub reduces_total: u32,
    pub done: u32,
    pub running: u32,
    pub pending: u32,
    pub running_maps: u32,
    pub pending_maps: u32,
    /// Mean runtime of its finished map tasks, seconds (0 when none
    /// finished): HybSMRP's r, "the average run time for the map task"
    /// (its Eq. 1), so reduces, which run longer and later, stay out.
    pub avg_map_time: f64,
}

/// Everything a policy may look at.
#[derive(Debug, Clone, Default)]
pub struct ClusterView {
    /// Seconds since the master started (or the simulation's clock).
    pub now: f64,
    pub heartbeat_interval: f64,
    pub nodes: Vec<NodeView>,
    pub jobs: Vec<JobView>,
    pub pending: Vec<PendingTask>,
    /// Bytes per second between two nodes of one rack, and across racks.
    pub rack_bandwidth: f64,
    pub cross_rack_bandwidth: f64,
    /// Node name → position in `nodes`, once [`ClusterView::index`] built it:
    /// locality lookups are per (task, replica), so a scan would make a
    /// heartbeat cost O(tasks × nodes) on big clusters.
    pub node_index: std::collections::HashMap<String, usize>,
    /// Pending tasks by where their input is, once
    /// [`ClusterView::with_locality_index`] built it: heartbeat policies
    /// then look at the tasks that can be local to the node rather than
    /// scanning `pending` (see [`super::index`]). Kept current by
    /// [`ClusterView::push_pending`], [`ClusterView::remove_pending`] and
    /// [`ClusterView::set_cached`]; a view whose `pending` or `nodes` were
    /// changed otherwise is scanned (the index no longer matches in size)
    /// or must be rebuilt.
    pub locality_index: Option<LocalityIndex>,
}

/// Bytes per second within a rack and across racks when the launcher
/// declared none (`[network]`): 1 Gbit/s and 300 Mbit/s, the emulated
/// LAN's defaults.
pub const DEFAULT_BANDWIDTHS: (f64, f64) = (125e6, 37.5e6);

impl ClusterView {
    /// A view of `nodes`, `jobs` and `pending` at `now`, with the rack and
    /// cross-rack `bandwidths` (bytes/s), its name index built; the
    /// locality index is left to [`ClusterView::with_locality_index`].
    pub fn new(
        now: f64,
        heartbeat_interval: f64,
        nodes: Vec<NodeView>,
        jobs: Vec<JobView>,
        pending: Vec<PendingTask>,
        bandwidths: (f64, f64),
    ) -> Self {
        ClusterView {
            now,
            heartbeat_interval,
            nodes,
            jobs,
            pending,
            rack_bandwidth: bandwidths.0,
            cross_rack_bandwidth: bandwidths.1,
            node_index: Default::default(),
            locality_index: None,
        }
        .index()
    }

    /// Builds the name index; call after filling `nodes`.
    pub fn index(mut self) -> Self {
        self.node_index = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), i))
            .collect();
        self
    }

    pub fn node(&self, name: &str) -> Option<&NodeView> {
        self.position(name).map(|i| &self.nodes[i])
    }

    /// Where node `name` stands in `nodes`.
    pub fn position(&self, name: &str) -> Option<usize> {
        if self.node_index.is_empty() {
            return self.nodes.iter().position(|n| n.name == name);
        }
        self.node_index.get(name).copied()
    }

    /// Each node's rack as a small number, in `nodes` order: policies that
    /// compare racks for every (task, node) pair compare integers, not
    /// names.
    pub fn rack_numbers(&self) -> Vec<u32> {
        let mut racks: std::collections::HashMap<&str, u32> = Default::default();
        self.nodes
            .iter()
            .map(|n| {
                let k = racks.len() as u32;
                *racks.entry(n.rack.as_str()).or_insert(k)
            })
            .collect()
    }

    /// The locality a map task would have on `node`.
    pub fn locality(&self, task: &PendingTask, node: &NodeView) -> Locality {
        if task.cached_on.contains(&node.name) {
            return Locality::CacheLocal;
        }
        if task.replicas.contains(&node.name) {
            return Locality::NodeLocal;
        }
        let same_rack = |n: &String| self.node(n).is_some_and(|x| x.rack == node.rack);
        if task.cached_on.iter().any(same_rack) {
            return Locality::CacheRackLocal;
        }
        if task.replicas.iter().any(same_rack) {
            return Locality::RackLocal;
        }
        if task.block.is_none() {
            // Generators read nothing: every node is as good as local.
            return Locality::NodeLocal;
        }
        Locality::OffRack
    }

    /// The locality of `task` on `node` as Hadoop's schedulers see it: by
    /// the block's replicas alone, caches unseen. Hadoop's default rule,
    /// delay scheduling and matchmaking place maps by the replicas'
    /// hosts (`obtainNewLocalMapTask`); only the cache-aware policies
    /// (ACL, CLQLMRS, atlas) look at caches. A cached block still counts
    /// as cache-local in the metrics: a blind policy may land on it by
    /// chance.
    pub fn disk_locality(&self, task: &PendingTask, node: &NodeView) -> Locality {
        if task.replicas.contains(&node.name) {
            return Locality::NodeLocal;
        }
        let same_rack = |n: &String| self.node(n).is_some_and(|x| x.rack == node.rack);
        if task.replicas.iter().any(same_rack) {
            return Locality::RackLocal;
        }
        if task.block.is_none() {
            return Locality::NodeLocal;
        }
        Locality::OffRack
    }

    /// Each node's name and rack, in `nodes` order: what the locality
    /// index needs of the nodes.
    pub fn sites(&self) -> Vec<NodeSite<'_>> {
        self.nodes
            .iter()
            .map(|n| NodeSite {
                name: &n.name,
                rack: &n.rack,
            })
            .collect()
    }

    /// Builds the locality index (after `nodes` and `pending` are filled).
    pub fn with_locality_index(mut self) -> Self {
        self.build_locality_index();
        self
    }

    /// Builds (or rebuilds) the locality index; none when two pending
    /// tasks share an id.
    pub fn build_locality_index(&mut self) {
        self.locality_index = LocalityIndex::build(&self.sites(), &self.pending);
    }

    /// The locality index, if the view carries one that matches it.
    pub fn locality_index(&self) -> Option<&LocalityIndex> {
        self.locality_index
            .as_ref()
            .filter(|ix| ix.len() == self.pending.len() && ix.nodes() == self.nodes.len())
    }

    /// The index and the position of `node` in it.
    fn indexed(&self, node: &NodeView) -> Option<(&LocalityIndex, usize)> {
        let ix = self.locality_index()?;
        Some((ix, ix.node_position(&node.name)?))
    }

    /// Appends a pending task, keeping the locality index current.
    pub fn push_pending(&mut self, t: PendingTask) {
        if let Some(ix) = &mut self.locality_index {
            if !ix.insert(self.pending.len(), &t) {
                self.locality_index = None;
            }
        }
        self.pending.push(t);
    }

    /// Removes the pending task at `pos` as `Vec::swap_remove` does (the
    /// last task takes its place), keeping the locality index current.
    pub fn remove_pending(&mut self, pos: usize) -> PendingTask {
        let t = self.pending.swap_remove(pos);
        if let Some(ix) = &mut self.locality_index {
            ix.remove(t.id);
            ix.swap_removed(pos);
            if let Some(moved) = self.pending.get(pos) {
                ix.moved(moved.id, pos);
            }
        }
        t
    }

    /// Adds node `node` to (or removes it from) the `cached_on` of the
    /// pending task at `pos`, keeping the locality index current.
    pub fn set_cached(&mut self, pos: usize, node: &str, cached: bool) {
        let id = self.pending[pos].id;
        if let Some(ix) = &mut self.locality_index {
            ix.remove(id);
        }
        let c = &mut self.pending[pos].cached_on;
        if cached {
            if !c.iter().any(|n| n == node) {
                c.push(node.to_string());
            }
        } else {
            c.retain(|n| n != node);
        }
        if let Some(ix) = &mut self.locality_index {
            ix.insert(pos, &self.pending[pos]);
        }
    }

    /// Where task `id` is in `pending`.
    pub fn pending_position(&self, id: TaskId) -> Option<usize> {
        match self.locality_index() {
            Some(ix) => ix.position(id),
            None => self.pending.iter().position(|t| t.id == id),
        }
    }

    /// The map of `job` with the least `(locality on node, index)` among
    /// those `usable` accepts, if that locality is at most `worst`: the
    /// choice of the cache-aware policies (ACL, atlas). From the locality
    /// index when the view has one, else by a scan; the same answer either
    /// way.
    pub fn best_map(
        &self,
        job: u64,
        node: &NodeView,
        worst: Locality,
        usable: impl Fn(&PendingTask) -> bool,
    ) -> Option<(Locality, &PendingTask)> {
        if let Some((ix, n)) = self.indexed(node) {
            return ix
                .best(job, n, worst, &mut |p| usable(&self.pending[p]))
                .map(|(l, p)| (l, &self.pending[p]));
        }
        self.scan_best(job, worst, usable, |t| self.locality(t, node))
    }

    /// The map of `job` with the least `(disk locality on node, index)`
    /// among those `usable` accepts, if that locality is at most `worst`
    /// (one of node-local, rack-local, off-rack): the choice of a
    /// cache-blind scheduler ([`ClusterView::disk_locality`]).
    pub fn best_map_on_disk(
        &self,
        job: u64,
        node: &NodeView,
        worst: Locality,
        usable: impl Fn(&PendingTask) -> bool,
    ) -> Option<(Locality, &PendingTask)> {
        if let Some((ix, n)) = self.indexed(node) {
            return ix
                .best_on_disk(job, n, worst, &mut |p| usable(&self.pending[p]))
                .map(|(l, p)| (l, &self.pending[p]));
        }
        self.scan_best(job, worst, usable, |t| self.disk_locality(t, node))
    }

    /// The scan behind [`ClusterView::best_map`] and
    /// [`ClusterView::best_map_on_disk`] on a view without an index: the
    /// least `(level, index)` map of `job` that `usable` accepts, if its
    /// level is at most `worst`.
    fn scan_best(
        &self,
        job: u64,
        worst: Locality,
        usable: impl Fn(&PendingTask) -> bool,
        level: impl Fn(&PendingTask) -> Locality,
    ) -> Option<(Locality, &PendingTask)> {
        self.pending
            .iter()
            .filter(|t| t.job == job && t.kind == TaskKind::Map && usable(t))
            .map(|t| (level(t), t))
            .filter(|(l, _)| *l <= worst)
            .min_by_key(|(l, t)| (*l, t.id.index))
    }

    /// The least-index map of `job` whose locality on `node` is exactly
    /// `level`, among those `usable` accepts (index or scan, as
    /// [`ClusterView::best_map`]).
    pub fn first_map_at(
        &self,
        job: u64,
        node: &NodeView,
        level: Locality,
        usable: impl Fn(&PendingTask) -> bool,
    ) -> Option<&PendingTask> {
        if let Some((ix, n)) = self.indexed(node) {
            return ix
                .first_exact(job, n, level, &mut |p| usable(&self.pending[p]))
                .map(|p| &self.pending[p]);
        }
        self.pending
            .iter()
            .filter(|t| t.job == job && t.kind == TaskKind::Map && usable(t))
            .filter(|t| self.locality(t, node) == level)
            .min_by_key(|t| t.id.index)
    }

    /// Jobs with a pending map, by id.
    pub fn jobs_with_maps(&self) -> Vec<u64> {
        if let Some(ix) = self.locality_index() {
            return ix.map_jobs().collect();
        }
        let mut j: Vec<u64> = self
            .pending
            .iter()
            .filter(|t| t.kind == TaskKind::Map)
            .map(|t| t.job)
            .collect();
        j.sort_unstable();
        j.dedup();
        j
    }

    /// Jobs in queue (submission) order.
    pub fn jobs_fifo(&self) -> Vec<u64> {
        let mut j: Vec<&JobView> = self.jobs.iter().collect();
        j.sort_by_key(|j| j.order);
        j.into_iter().map(|j| j.id).collect()
    }
}

/// What caused a decision.
#[derive(Debug, Clone, PartialEq)]
pub enum Trigger {
    Heartbeat(String),
    JobAdded(u64),
    TaskFinished(String),
    /// A node's free slots offered between its heartbeats, because new work
    /// appeared (a job arrived, its reduces became runnable, a task went
    /// back to the queue): as its heartbeat would, without a new resource
    /// sample.
    Offer(String),
}

impl Trigger {
    /// The node whose slots this trigger offers, if any.
    pub fn node(&self) -> Option<&str> {
        match self {
            Trigger::Heartbeat(n) | Trigger::TaskFinished(n) | Trigger::Offer(n) => Some(n),
            Trigger::JobAdded(_) => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub task: TaskId,
    pub node: String,
}

/// A finished task attempt, for learning policies.
#[derive(Debug, Clone, Default)]
pub struct TaskReport {
    pub task: TaskId,
    /// The job's type (`wordcount`, `terasort`, ...): task demands are
    /// learnt per type.
    pub job_name: String,
    pub node: String,
    pub locality: Locality,
    pub runtime_s: f64,
    pub succeeded: bool,
    /// Input bytes the task read (cache, local disk or remote).
    pub bytes_read: u64,
    /// Seconds of `runtime_s` spent fetching the input (a map's block from
    /// its cache, disk or a remote worker): the read cost of `locality`.
    pub read_s: f64,
    /// Bytes it wrote (map output or job output).
    pub bytes_written: u64,
    /// CPU seconds it used.
    pub cpu_s: f64,
    pub peak_mem_bytes: u64,
}
