//! lsap-sched (Guo, Fox, Zhou, "Investigation of Data Locality and Fairness
//! in MapReduce", section 3.2 and its "Algorithm skeleton of lsap-sched"):
//! all idle map slots and all unscheduled map tasks are considered at once,
//! as one linear sum assignment problem, which gives optimal data locality
//! where Hadoop's slot-at-a-time rule (the paper's dl-sched) does not: in
//! the paper's Figure 1 (tested below) dl-sched places one local task where
//! two are possible.
//!
//! The skeleton, and where each line lives:
//!
//! ```text
//! TS  ← the set of unscheduled tasks          unscheduled_maps()
//! ISS ← the set of idle map slots             idle_slots()
//! C   ← empty |TS| x |ISS| matrix
//! for i, j: set C[i][j] according to (1)      cost()
//! expandToSquare(C, 0); R = lsap(C)           hungarian::solve_flat()
//! R = filterDummy(R); return R                assign_matrix()
//! ```
//!
//! Eq. (1): C(i, j) = 0 when the node of slot j stores the input of task i;
//! otherwise DS(Ti) / max_c BW(ND(Ti, c), N(ISj)), the input size over the
//! bandwidth from the best-connected replica. Here BW is the view's
//! `rack_bandwidth` between nodes of one rack and `cross_rack_bandwidth`
//! across racks, and DS is the task's `input_bytes`, so costs are seconds
//! of transfer.
//!
//! Where the paper is silent, this project's choices:
//! - A node holding the block in its cache stores it, as far as locality
//!   goes (a cache-local task is local, `Locality::is_local`), and can
//!   serve it as a replica does.
//! - With no bandwidth figures in the view, or no live replica, a non-local
//!   task costs 1, the uniform cost of the paper's reference [14].
//! - A task that failed on a node is not placed there again while the view
//!   has a node it did not fail on (the rule every policy here follows):
//!   such pairs cost more than any assignment without them, and a pair that
//!   is still chosen is dropped (the task waits for a better slot).
//! - Ties (equal total cost) go, mostly, to the task first in queue order:
//!   tasks are listed in job order and the solver scans them in that order.
//! - Reduces are placed by [`assign_reduces`] on the triggering node; the
//!   paper schedules map tasks only.
//!
//! At scale (a view with a locality index, as the simulator keeps, or more
//! than 2^20 matrix entries) the problem is first pruned to the tasks that
//! can matter and solved sparsely ([`super::pruned`]): the K = S + F
//! cheapest tasks per idle node, per rack with an idle node and overall
//! (S idle slots, F tasks with nodes to avoid). Eq. (1) has three values
//! per task (0, DS over the rack bandwidth, DS over the cross-rack one), in
//! that order when the rack bandwidth is at least the cross-rack one (else
//! the full problem is solved), so the lemma there applies: the pruned
//! problem has the full one's optimum. Overall, at the last region, a
//! generator costs 0, a task whose input no node holds 1, any other DS
//! over the cross-rack bandwidth: the K smallest inputs (ties by id), the
//! first K generators and the first K such tasks cover the K cheapest.
//! Equal-cost ties may be broken otherwise than by the dense solve.

use super::error::SchedError;
use super::hungarian;
use super::index::{IdMap, LocalityIndex};
use super::pruned::{Cand, Pools, Problem, Prune, Slots};
use super::*;
use std::collections::{BTreeMap, HashMap};

/// The `lsap` policy (no parameters).
#[derive(Debug, Default)]
pub struct Lsap;

impl Lsap {
    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        if let Some(k) = p.keys().next() {
            return Err(SchedError::UnknownParam {
                name: "lsap".into(),
                param: k.clone(),
                takes: "no parameters".into(),
            });
        }
        Ok(Lsap)
    }
}

impl Scheduler for Lsap {
    fn name(&self) -> &'static str {
        "lsap"
    }

    fn assign(&mut self, view: &ClusterView, trigger: Trigger) -> Vec<Assignment> {
        with_reduces(view, trigger, assign_maps(view, Prune::Auto))
    }
}

/// A policy of the family's answer to `trigger`: its `maps`, then the
/// reduces placed on the triggering node (the paper places maps only).
pub(crate) fn with_reduces(
    view: &ClusterView,
    trigger: Trigger,
    mut maps: Vec<Assignment>,
) -> Vec<Assignment> {
    if let Some(node) = trigger.node().and_then(|n| view.node(n)) {
        maps.extend(assign_reduces(view, node, &view.jobs_fifo()));
    }
    maps
}

/// The maps' assignment: the full problem, or (large problems, see
/// [`super::pruned`]) the pruned one, which has the same optimum.
pub(crate) fn assign_maps(view: &ClusterView, prune: Prune) -> Vec<Assignment> {
    solve_maps(
        view,
        prune,
        |slots| solve_pruned_with(view, slots, prune, |sel| pruned_cands(view, sel)),
        |tasks, slots| eq1_matrix(view, tasks, slots),
    )
}

/// C[i][j] by eq. (1), computed once per (task, idle node) and shared by
/// the node's slots.
fn eq1_matrix(view: &ClusterView, tasks: &[&PendingTask], slots: &[usize]) -> Vec<f64> {
    let costs = Costs::new(view, tasks);
    let nodes = idle_nodes(slots);
    let mut c = Vec::with_capacity(tasks.len() * slots.len());
    let mut per_node = vec![0.0; view.nodes.len()];
    for i in 0..tasks.len() {
        for &n in &nodes {
            per_node[n] = costs.cost(i, n);
        }
        c.extend(slots.iter().map(|&n| per_node[n]));
    }
    c
}

/// The skeleton every policy of the family runs, with its own prices: ISS
/// (none idle: nothing to do); the pruned problem when it `applies` and
/// `pruned` (given ISS) can solve it; else TS, the full cost matrix
/// `matrix` (given TS and ISS, row-major) and its optimal assignment.
pub(crate) fn solve_maps(
    view: &ClusterView,
    prune: Prune,
    pruned: impl FnOnce(&[usize]) -> Option<Vec<Assignment>>,
    matrix: impl FnOnce(&[&PendingTask], &[usize]) -> Vec<f64>,
) -> Vec<Assignment> {
    let slots = idle_slots(view);
    if slots.is_empty() {
        return vec![];
    }
    if prune.applies(
        view.locality_index().is_some(),
        pending_maps(view),
        slots.len(),
    ) {
        if let Some(out) = pruned(&slots) {
            return out;
        }
    }
    let tasks = unscheduled_maps(view);
    if tasks.is_empty() {
        return vec![];
    }
    let c = matrix(&tasks, &slots);
    assign_matrix(view, &tasks, &slots, c)
}

/// Pending maps (from the locality index when there is one).
pub(crate) fn pending_maps(view: &ClusterView) -> usize {
    match view.locality_index() {
        Some(ix) => ix.len() - ix.reduce_count(),
        None => view
            .pending
            .iter()
            .filter(|t| t.kind == TaskKind::Map)
            .count(),
    }
}

/// The view's locality index, or one built for this decision (`None`
/// when pending ids repeat).
pub(crate) fn index_of(view: &ClusterView) -> Option<std::borrow::Cow<'_, LocalityIndex>> {
    match view.locality_index() {
        Some(ix) => Some(std::borrow::Cow::Borrowed(ix)),
        None => LocalityIndex::build(&view.sites(), &view.pending).map(std::borrow::Cow::Owned),
    }
}

/// Job → rank in queue order.
pub(crate) fn queue_ranks(view: &ClusterView) -> IdMap<u64, usize> {
    view.jobs_fifo()
        .into_iter()
        .enumerate()
        .map(|(k, j)| (j, k))
        .collect()
}

/// Eq. (1) with the bandwidths the pruning lemma needs (a copy in the
/// rack never reads slower than one across racks): `None` otherwise.
pub(crate) fn region_prices(view: &ClusterView) -> Option<(f64, f64)> {
    let valid = |b: f64| b > 0.0 && b.is_finite();
    let (rb, xb) = (view.rack_bandwidth, view.cross_rack_bandwidth);
    let ok = (valid(rb) && valid(xb) && rb >= xb) || (!valid(rb) && !valid(xb));
    ok.then_some((rb, xb))
}

/// Eq. (1) per [`Region`] for the task at `pos` (a map): 0 where the input
/// is, DS/BW within its rack, DS/BW across racks; a generator is local
/// anywhere, a task whose input no view node holds costs 1 anywhere.
pub(crate) fn eq1_by_region(view: &ClusterView, ix: &LocalityIndex, pos: usize) -> [f64; 5] {
    let (_, generator, c, d) = ix.at(pos);
    if generator {
        return [0.0; 5];
    }
    if c.is_empty() && d.is_empty() {
        return [1.0; 5];
    }
    let t = &view.pending[pos];
    let (rb, xb) = (view.rack_bandwidth, view.cross_rack_bandwidth);
    let a = transfer(t.input_bytes, rb);
    [0.0, 0.0, a, a, transfer(t.input_bytes, xb)]
}

/// The pruned problem's candidates (see [`super::pruned`]) and their
/// prices by eq. (1).
fn pruned_cands(view: &ClusterView, sel: &Slots<'_>) -> Option<Vec<Cand>> {
    let ix = sel.ix;
    let costs = |p: usize| -> Option<([f64; 5], f64)> {
        (view.pending[p].kind == TaskKind::Map).then(|| (eq1_by_region(view, ix, p), 0.0))
    };
    let k = sel.k();
    // Eq. (1) on a node holding the input is 0 for every map, and at a
    // rack's region DS/BW (the rack's bandwidth), 0 for a generator: it
    // grows along the index's rack order.
    let mut picked = sel.local_lists(&costs, Pools::Ordered);
    // The global lists: at the last region a generator costs 0, a task
    // whose input no node holds 1, any other DS over the cross-rack
    // bandwidth, so the K smallest inputs are the K cheapest.
    picked.extend(ix.generators().take(k));
    picked.extend(ix.homeless().take(k));
    picked.extend(ix.by_size().take(k));
    sel.cands(picked, &costs)
}

/// The pruned path every policy of the family runs, with its own
/// candidates: the premises (prices the lemma holds for, a locality
/// index), the selection over ISS `slots`, the policy's `cands` from it,
/// and their optimal assignment. `None` when a premise or `cands` fails
/// (then the full problem is solved).
pub(crate) fn solve_pruned_with(
    view: &ClusterView,
    slots: &[usize],
    prune: Prune,
    cands: impl FnOnce(&Slots<'_>) -> Option<Vec<Cand>>,
) -> Option<Vec<Assignment>> {
    region_prices(view)?;
    let ix = index_of(view)?;
    let ix = ix.as_ref();
    let rank = queue_ranks(view);
    let sel = Slots {
        view,
        ix,
        slots,
        factor: None,
        rank: &rank,
    };
    let cands = cands(&sel)?;
    Some(solve_pruned(view, ix, slots, None, &cands, prune))
}

/// The pruned problem's optimal assignment: densely when small (the same
/// solver and failed-node rule as the full problem), else by the
/// certificate route.
pub(crate) fn solve_pruned(
    view: &ClusterView,
    ix: &LocalityIndex,
    slots: &[usize],
    factor: Option<&[f64]>,
    cands: &[Cand],
    prune: Prune,
) -> Vec<Assignment> {
    if cands.is_empty() {
        return vec![];
    }
    let problem = Problem::new(slots, ix.racks(), factor, cands);
    if prune.dense(cands.len() * slots.len()) {
        let tasks: Vec<&PendingTask> = cands.iter().map(|c| &view.pending[c.pos]).collect();
        let mut c = Vec::with_capacity(cands.len() * slots.len());
        for i in 0..cands.len() {
            c.extend((0..slots.len()).map(|j| problem.price_unpenalised(j, i)));
        }
        return assign_matrix(view, &tasks, slots, c);
    }
    problem
        .solve()
        .into_iter()
        .filter(|&(j, i)| !cands[i].forbidden(slots[j]))
        .map(|(j, i)| Assignment {
            task: view.pending[cands[i].pos].id,
            node: view.nodes[slots[j]].name.clone(),
        })
        .collect()
}

/// TS: the unscheduled map tasks, in queue order (job order, then index;
/// tasks of jobs absent from the view last).
pub fn unscheduled_maps(view: &ClusterView) -> Vec<&PendingTask> {
    let order: HashMap<u64, usize> = view
        .jobs_fifo()
        .into_iter()
        .enumerate()
        .map(|(k, j)| (j, k))
        .collect();
    let mut ts: Vec<&PendingTask> = view
        .pending
        .iter()
        .filter(|t| t.kind == TaskKind::Map)
        .collect();
    ts.sort_by_key(|t| (order.get(&t.job).copied().unwrap_or(usize::MAX), t.id));
    ts
}

/// ISS: one entry per idle map slot, the index of its node in `view.nodes`
/// (a node with k free map slots appears k times).
pub fn idle_slots(view: &ClusterView) -> Vec<usize> {
    view.nodes
        .iter()
        .enumerate()
        .flat_map(|(i, n)| std::iter::repeat_n(i, n.free_map_slots as usize))
        .collect()
}

/// INS: the nodes with idle slots (indices in `view.nodes`, sorted), from
/// [`idle_slots`].
pub fn idle_nodes(slots: &[usize]) -> Vec<usize> {
    let mut n = slots.to_vec();
    n.dedup();
    n
}

/// co-locate(T, node): the node stores or caches T's input, or T reads no
/// input (a generator is local anywhere).
pub fn co_located(t: &PendingTask, node: &NodeView) -> bool {
    t.block.is_none() || t.replicas.contains(&node.name) || t.cached_on.contains(&node.name)
}

/// BW(N1, N2): the view's bandwidth between two nodes.
pub fn bandwidth(view: &ClusterView, a: &NodeView, b: &NodeView) -> f64 {
    if a.rack == b.rack {
        view.rack_bandwidth
    } else {
        view.cross_rack_bandwidth
    }
}

/// Eq. (1): the cost of running `t` on `node`, seconds of transfer (or the
/// uniform 1 of [14] without bandwidth figures or a live replica).
pub fn cost(view: &ClusterView, t: &PendingTask, node: &NodeView) -> f64 {
    if co_located(t, node) {
        return 0.0;
    }
    let best = t
        .replicas
        .iter()
        .chain(&t.cached_on)
        .filter_map(|r| view.node(r))
        .map(|src| bandwidth(view, src, node))
        .fold(0.0f64, f64::max);
    transfer(t.input_bytes, best)
}

/// DS / BW, or 1 when BW is unknown.
fn transfer(bytes: u64, bw: f64) -> f64 {
    if bw > 0.0 && bw.is_finite() {
        bytes as f64 / bw
    } else {
        1.0
    }
}

/// Eq. (1) for many (task, node) pairs: each task's replica and cache
/// holders resolved once to node indices and racks, so that a pair costs a
/// few integer comparisons rather than name lookups.
pub(crate) struct Costs<'a> {
    view: &'a ClusterView,
    tasks: &'a [&'a PendingTask],
    /// Rack number of each view node.
    rack: Vec<u32>,
    /// Per task: indices of the view nodes that store or cache its input.
    holders: Vec<Vec<usize>>,
}

impl<'a> Costs<'a> {
    pub(crate) fn new(view: &'a ClusterView, tasks: &'a [&'a PendingTask]) -> Self {
        let rack = view.rack_numbers();
        let holders = tasks
            .iter()
            .map(|t| {
                let mut h: Vec<usize> = t
                    .replicas
                    .iter()
                    .chain(&t.cached_on)
                    .filter_map(|r| view.position(r))
                    .collect();
                h.sort_unstable();
                h.dedup();
                h
            })
            .collect();
        Costs {
            view,
            tasks,
            rack,
            holders,
        }
    }

    /// co-locate(tasks[i], nodes[n]).
    pub(crate) fn co_located(&self, i: usize, n: usize) -> bool {
        self.tasks[i].block.is_none() || self.holders[i].contains(&n)
    }

    /// Some holder of task i's input is among `nodes` (indices, sorted).
    pub(crate) fn resides_on_any(&self, i: usize, nodes: &[usize]) -> bool {
        self.tasks[i].block.is_none()
            || self.holders[i]
                .iter()
                .any(|h| nodes.binary_search(h).is_ok())
    }

    /// Eq. (1) for tasks[i] on nodes[n]; equals [`cost`].
    pub(crate) fn cost(&self, i: usize, n: usize) -> f64 {
        if self.co_located(i, n) {
            return 0.0;
        }
        let v = self.view;
        let best = self.holders[i]
            .iter()
            .map(|&h| {
                if self.rack[h] == self.rack[n] {
                    v.rack_bandwidth
                } else {
                    v.cross_rack_bandwidth
                }
            })
            .fold(0.0f64, f64::max);
        transfer(self.tasks[i].input_bytes, best)
    }
}

/// Solves the |TS| × |ISS| cost matrix `c` (row-major, task i × slot j)
/// optimally and returns the real (task, slot) pairs: the paper's
/// `expandToSquare(C, 0)`, `lsap(C)` and `filterDummy(R)` (the solver
/// handles the rectangle directly, which is the same optimum). Adds the
/// failed-node rule described in the module docs.
pub fn assign_matrix(
    view: &ClusterView,
    tasks: &[&PendingTask],
    slots: &[usize],
    mut c: Vec<f64>,
) -> Vec<Assignment> {
    let (t, s) = (tasks.len(), slots.len());
    assert_eq!(c.len(), t * s);
    if t == 0 || s == 0 {
        return vec![];
    }
    // (task, slot) pairs on a node the task failed on, while it has
    // another node to go to.
    let forbidden = |i: usize, j: usize| -> bool {
        let task = tasks[i];
        !task.avoid.is_empty()
            && task.avoid.contains(&view.nodes[slots[j]].name)
            && view.nodes.iter().any(|n| !task.avoid.contains(&n.name))
    };
    let any_forbidden = tasks.iter().any(|t| !t.avoid.is_empty());
    if any_forbidden {
        // More than any assignment of allowed pairs can cost, so that the
        // optimum uses as few forbidden pairs as possible.
        let max = c.iter().fold(0.0f64, |a, &x| a.max(x.abs()));
        let big = (max + 1.0) * (t.min(s) as f64 + 1.0);
        for i in 0..t {
            for j in 0..s {
                if forbidden(i, j) {
                    c[i * s + j] += big;
                }
            }
        }
    }
    hungarian::solve_flat(t, s, &c)
        .into_iter()
        .enumerate()
        .filter_map(|(i, j)| j.map(|j| (i, j)))
        .filter(|&(i, j)| !(any_forbidden && forbidden(i, j)))
        .map(|(i, j)| Assignment {
            task: tasks[i].id,
            node: view.nodes[slots[j]].name.clone(),
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testkit::{self, job, local_count, node, view};
    use std::collections::HashSet;

    /// Map `index` of `job`, reading block `job * 1000 + index` (64 MiB,
    /// the size the costs below are computed from), uncached.
    pub fn map(job: u64, index: u32, replicas: &[&str]) -> PendingTask {
        testkit::map(job, index, job * 1000 + index as u64, replicas, &[])
    }

    /// The paper's dl-sched: idle slots one at a time, each taking the
    /// first local task in queue order, else the first task.
    pub fn dl_sched(v: &ClusterView) -> Vec<Assignment> {
        let mut out = Vec::new();
        let mut left: Vec<&PendingTask> = v.pending.iter().collect();
        for n in &v.nodes {
            for _ in 0..n.free_map_slots {
                if left.is_empty() {
                    return out;
                }
                let pick = left
                    .iter()
                    .position(|t| v.locality(t, n).is_local())
                    .unwrap_or(0);
                out.push(Assignment {
                    task: left.remove(pick).id,
                    node: n.name.clone(),
                });
            }
        }
        out
    }

    /// A random cluster for the property tests: one to seven nodes in two
    /// racks, zero to three free slots each, and up to 19 maps of jobs 1 to
    /// 3, each stored on one to three of the nodes.
    pub fn random_cluster(rng: &mut fastrand::Rng) -> (Vec<NodeView>, Vec<PendingTask>) {
        let nodes: Vec<NodeView> = (0..rng.usize(1..8))
            .map(|i| node(&format!("n{i}"), &format!("r{}", i % 2), rng.u32(0..4)))
            .collect();
        let names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
        let pending: Vec<PendingTask> = (0..rng.u32(0..20))
            .map(|i| {
                let reps: Vec<&str> = (0..rng.usize(1..4))
                    .map(|_| names[rng.usize(..names.len())].as_str())
                    .collect();
                map(1 + (i % 3) as u64, i, &reps)
            })
            .collect();
        (nodes, pending)
    }

    /// Figure 1: T1's block on A and B, T2's only on A, one idle slot on
    /// each node; tasks queued {T1, T2}, A considered first.
    pub fn figure_1() -> ClusterView {
        view(
            vec![node("A", "r1", 1), node("B", "r1", 1)],
            vec![job(1, 10)],
            vec![map(1, 1, &["A", "B"]), map(1, 2, &["A"])],
        )
    }

    #[test]
    fn figure_1_dl_sched_gets_one_local_task_lsap_two() {
        let v = figure_1();
        let greedy = dl_sched(&v);
        assert_eq!(greedy[0].node, "A");
        assert_eq!(greedy[0].task.index, 1, "A takes T1");
        assert_eq!(local_count(&v, &greedy), 1);
        let a = Lsap.assign(&v, Trigger::JobAdded(1));
        assert_eq!(a.len(), 2);
        assert_eq!(local_count(&v, &a), 2, "{a:?}");
        let on = |n: &str| a.iter().find(|x| x.node == n).unwrap().task.index;
        assert_eq!((on("A"), on("B")), (2, 1), "Figure 1(c)");
    }

    /// A synthetic view with what the pruning must get right: several
    /// racks and input sizes, cached copies, generators, inputs no node
    /// holds, failed nodes to avoid, more or fewer tasks than slots.
    pub fn prunable(seed: u64) -> ClusterView {
        let mut rng = fastrand::Rng::with_seed(seed);
        let nodes = rng.usize(2..30);
        let mut v = crate::synth::view(crate::synth::Shape {
            nodes,
            racks: rng.usize(1..5),
            slots: rng.u32(1..4),
            idle: rng.f64() * rng.f64(),
            jobs: rng.usize(1..4),
            tasks: rng.usize(1..nodes * 8),
            replication: rng.usize(1..4),
            seed,
        });
        // Every third view keeps the data in rack 0 and the idle slots
        // elsewhere (every slot prices every task at the last region); every
        // third has idle slots only beside rack 0's busy data nodes, with
        // half the inputs there (rack region, larger inputs) and half in
        // rack 1 (smaller inputs, dearer across racks): the global and rack
        // lists must each hold their K cheapest. Input sizes differ.
        let racks = v
            .nodes
            .iter()
            .map(|n| n.rack.clone())
            .collect::<HashSet<_>>()
            .len();
        let in_rack =
            |r: &str| -> Vec<usize> { (0..nodes).filter(|&i| v.nodes[i].rack == r).collect() };
        let (rack0, rack1) = (in_rack("r0"), in_rack("r1"));
        let mode = if racks > 1 && rack0.len() > 1 {
            seed % 3
        } else {
            0
        };
        let half = v.pending.len() / 2;
        if mode == 1 {
            for &i in &rack0 {
                v.nodes[i].free_map_slots = 0;
            }
            for t in v.pending.iter_mut() {
                t.replicas = vec![format!("n{}", rack0[rng.usize(..rack0.len())])];
                t.cached_on.clear();
                t.input_bytes = rng.u64(1..1000) << 20;
            }
        }
        if mode == 2 {
            let data0: Vec<usize> = rack0.iter().copied().step_by(2).collect();
            for n in v.nodes.iter_mut() {
                n.free_map_slots = 0;
            }
            for &i in rack0.iter().skip(1).step_by(2) {
                v.nodes[i].free_map_slots = v.nodes[i].map_slots;
            }
            for (k, t) in v.pending.iter_mut().enumerate() {
                let (pool, lo, hi) = if k < half {
                    (&data0, 1000, 2000)
                } else {
                    (&rack1, 400, 1000)
                };
                t.replicas = vec![format!("n{}", pool[rng.usize(..pool.len())])];
                t.cached_on.clear();
                t.input_bytes = rng.u64(lo..hi) << 20;
            }
        }
        let sizes = rng.u64(1..4);
        for t in v.pending.iter_mut() {
            if mode == 0 {
                t.input_bytes = rng.u64(1..=sizes) << 26;
            }
            match rng.u32(0..30) {
                0 => {
                    t.block = None;
                    t.replicas.clear();
                    t.cached_on.clear();
                }
                1 => t.replicas = vec!["gone".into()],
                2 => t.avoid = vec![format!("n{}", rng.usize(..nodes))],
                3 => t.cached_on.push(format!("n{}", rng.usize(..nodes))),
                _ => {}
            }
        }
        v
    }

    /// Assignments made, eq. (1) cost and forbidden pairs used.
    pub fn score(v: &ClusterView, a: &[Assignment]) -> (usize, f64) {
        let mut total = 0.0;
        for x in a {
            let t = v.pending.iter().find(|t| t.id == x.task).unwrap();
            total += cost(v, t, v.node(&x.node).unwrap());
        }
        (a.len(), total)
    }

    /// Valid: each task once, no more maps on a node than its free slots.
    pub fn check_slots(v: &ClusterView, a: &[Assignment]) {
        let ids: HashSet<TaskId> = a.iter().map(|x| x.task).collect();
        assert_eq!(ids.len(), a.len(), "a task twice: {a:?}");
        for n in &v.nodes {
            let k = a.iter().filter(|x| x.node == n.name).count();
            assert!(k <= n.free_map_slots as usize, "{} over its slots", n.name);
        }
    }

    #[test]
    fn pruning_keeps_the_optimum() {
        for seed in 0..300 {
            let v = prunable(seed);
            let full = assign_maps(&v, Prune::Never);
            let (n, want) = score(&v, &full);
            for prune in [Prune::Always, Prune::Sparse] {
                for indexed in [false, true] {
                    let w = if indexed {
                        v.clone().with_locality_index()
                    } else {
                        v.clone()
                    };
                    let got = assign_maps(&w, prune);
                    check_slots(&v, &got);
                    let (m, have) = score(&v, &got);
                    assert_eq!(m, n, "seed {seed} {prune:?}: {got:?} vs {full:?}");
                    assert!(
                        (have - want).abs() < 1e-9 * (1.0 + want),
                        "seed {seed} {prune:?}: cost {have} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn cost_follows_eq_1() {
        let v = view(
            vec![node("a", "r1", 1), node("b", "r1", 1), node("c", "r2", 1)],
            vec![job(1, 10)],
            vec![
                map(1, 0, &["a"]),
                map(1, 1, &["a", "c"]),
                map(1, 2, &["gone"]),
            ],
        );
        let n = |i: usize| &v.nodes[i];
        let ds = (64u64 << 20) as f64;
        assert_eq!(cost(&v, &v.pending[0], n(0)), 0.0);
        assert_eq!(cost(&v, &v.pending[0], n(1)), ds / 125e6, "same rack");
        assert_eq!(cost(&v, &v.pending[0], n(2)), ds / 37.5e6, "across racks");
        // The best-connected replica is the data source.
        assert_eq!(cost(&v, &v.pending[1], n(1)), ds / 125e6);
        assert_eq!(cost(&v, &v.pending[1], n(2)), 0.0);
        // No live replica: the uniform cost.
        assert_eq!(cost(&v, &v.pending[2], n(0)), 1.0);
        // A cached copy is local.
        let mut t = map(1, 3, &["c"]);
        t.cached_on = vec!["b".into()];
        assert_eq!(cost(&v, &t, n(1)), 0.0);
        assert_eq!(cost(&v, &t, n(0)), ds / 125e6);
        let tasks: Vec<&PendingTask> = v.pending.iter().chain([&t]).collect();
        let c = Costs::new(&v, &tasks);
        for (i, t) in tasks.iter().enumerate() {
            for k in 0..3 {
                assert_eq!(c.cost(i, k), cost(&v, t, n(k)));
            }
        }
    }

    #[test]
    fn never_more_than_the_free_slots_and_each_task_once() {
        let mut rng = fastrand::Rng::with_seed(5);
        for round in 0..200 {
            let (nodes, pending) = random_cluster(&mut rng);
            let names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
            let jobs = (1..=3).map(|j| job(j, 10)).collect();
            let v = view(nodes, jobs, pending);
            let trigger = if round % 2 == 0 {
                Trigger::JobAdded(1)
            } else {
                Trigger::Heartbeat(names[0].clone())
            };
            let a = Lsap.assign(&v, trigger);
            let maps: Vec<&Assignment> =
                a.iter().filter(|x| x.task.kind == TaskKind::Map).collect();
            let free: u32 = v.nodes.iter().map(|n| n.free_map_slots).sum();
            assert_eq!(maps.len(), (free as usize).min(v.pending.len()));
            let ids: HashSet<TaskId> = a.iter().map(|x| x.task).collect();
            assert_eq!(ids.len(), a.len(), "a task twice");
            for n in &v.nodes {
                let k = maps.iter().filter(|x| x.node == n.name).count();
                assert!(k <= n.free_map_slots as usize, "{k} on {}", n.name);
            }
            // Optimal: no assignment of the same size costs less.
            let tasks = unscheduled_maps(&v);
            let total: f64 = maps
                .iter()
                .map(|x| {
                    let t = tasks.iter().find(|t| t.id == x.task).unwrap();
                    cost(&v, t, v.node(&x.node).unwrap())
                })
                .sum();
            let greedy: f64 = dl_sched(&v)
                .iter()
                .map(|x| {
                    let t = tasks.iter().find(|t| t.id == x.task).unwrap();
                    cost(&v, t, v.node(&x.node).unwrap())
                })
                .sum();
            assert!(total <= greedy + 1e-9, "{total} > dl-sched's {greedy}");
        }
    }

    #[test]
    fn rack_aware_prefers_the_cheaper_remote_read() {
        // One slot on b (rack r1) and one on c (rack r2); x's block is on a
        // (r1), y's on d (r2). Both are remote anyway; the optimum reads
        // within each rack.
        let v = view(
            vec![
                node("a", "r1", 0),
                node("b", "r1", 1),
                node("c", "r2", 1),
                node("d", "r2", 0),
            ],
            vec![job(1, 10)],
            vec![map(1, 0, &["d"]), map(1, 1, &["a"])],
        );
        let a = Lsap.assign(&v, Trigger::JobAdded(1));
        let on = |n: &str| a.iter().find(|x| x.node == n).unwrap().task.index;
        assert_eq!((on("b"), on("c")), (1, 0));
    }

    #[test]
    fn a_failed_node_is_avoided_while_another_exists() {
        let mut v = figure_1();
        v.pending[1].avoid = vec!["A".into()];
        let a = Lsap.assign(&v, Trigger::JobAdded(1));
        assert!(
            !a.iter().any(|x| x.task.index == 2 && x.node == "A"),
            "{a:?}"
        );
        // Only A has a slot: T2 waits rather than run there again.
        v.nodes[1].free_map_slots = 0;
        v.pending.remove(0);
        assert!(Lsap.assign(&v, Trigger::JobAdded(1)).is_empty());
        // A single-node cluster runs it anyway.
        v.nodes.remove(1);
        let v = v.index();
        assert_eq!(Lsap.assign(&v, Trigger::JobAdded(1)).len(), 1);
    }

    #[test]
    fn reduces_on_the_triggering_node() {
        let mut v = figure_1();
        v.pending.push(PendingTask {
            id: TaskId {
                job: 1,
                kind: TaskKind::Reduce,
                index: 0,
            },
            kind: TaskKind::Reduce,
            block: None,
            replicas: vec![],
            ..map(1, 0, &[])
        });
        let a = Lsap.assign(&v, Trigger::Heartbeat("B".into()));
        assert_eq!(a.len(), 3);
        assert!(a
            .iter()
            .any(|x| x.task.kind == TaskKind::Reduce && x.node == "B"));
        let a = Lsap.assign(&v, Trigger::JobAdded(1));
        assert_eq!(a.len(), 2, "no reduce without a node");
    }

    #[test]
    fn params() {
        assert!(Lsap::from_params(&BTreeMap::new()).is_ok());
        let mut p = BTreeMap::new();
        p.insert("alpha".to_string(), "1".to_string());
        assert!(Lsap::from_params(&p).is_err());
    }
}
