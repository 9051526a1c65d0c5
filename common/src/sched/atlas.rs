//! `atlas`: this project's own policy (Assignment by Tiered Locality, Load
//! And Shares). It takes the best idea of each paper and drops the knob each
//! one needs:
//!
//! - **Global assignment** (the LSAP paper, section 3.2): every idle map
//!   slot and every candidate task at once, solved optimally with the same
//!   solver as `lsap`, so a slot is never spent on a remote task that
//!   another slot could have run locally (the paper's Figure 1).
//! - **All five tiers, priced in seconds** (the CLQLMRS paper's levels):
//!   the cost of task i on node n is its input bytes times the seconds per
//!   byte that maps have *measured* at that tier on this cluster, learnt
//!   from real task completions (an exponential average per level). LSAP
//!   prices cache-local and node-local alike at 0, and every remote read at
//!   a configured bandwidth; here a cached copy beats a disk copy, and on a
//!   network where a remote read is cheap (loopback) the policy learns that
//!   too. Before any completion the tiers start from the view's rack and
//!   cross-rack bandwidths and typical memory and disk speeds.
//! - **Resource vectors** (the Naive-Bayes paper's concern, without its
//!   classifier): a node whose run queue exceeds its cores runs a task
//!   proportionally slower (processor sharing), so its costs are scaled by
//!   `max(1, load1 / cores)`; a node with less than 5% memory left is given
//!   nothing while another node can run the task (it would swap).
//! - **Waiting that pays for itself** (delay scheduling and matchmaking,
//!   without their wait parameter D): a task is placed below its best tier
//!   only when waiting would cost more than the remote read. It waits while
//!   both the expected time until a holder of its block frees a slot and
//!   the time it has already waited are below the extra read time; this is
//!   the ski-rental rule, never more than twice the better of the two
//!   choices in hindsight, and it cannot starve: the waited time grows.
//! - **Shares** (Hadoop's Fair Scheduler, lsap-fair's sto_i, and
//!   shortest remaining work first): half the map slots are divided
//!   max-min fairly among jobs with work, so every job keeps at least half
//!   its fair share; the other half go to the jobs with the least work left
//!   first, which lowers the mean job time ([`FAIR_FRACTION`]). The tasks
//!   within a job's share cost their read time; tasks beyond it cost more
//!   than any read, so they only fill slots that would otherwise stay idle
//!   (work conserving), again least work left first.
//!
//! Why it should beat the others on job execution time: it places at least
//! as many tasks locally as LSAP (the same optimal assignment, plus waits
//! where they pay), prefers cached copies, which LSAP, delay and
//! matchmaking ignore, never waits longer than a remote read would take
//! (delay's fixed D and matchmaking's heartbeat of patience can), it
//! keeps small jobs from queueing behind large ones as FIFO does, and it
//! does not slow every job to the pace of the last as pure fair sharing
//! does. It has no parameter: every figure it uses is measured.
//!
//! Reduces go to the triggering node as in every other policy
//! ([`assign_reduces`]), jobs with the least work left first.
//!
//! At scale: the rows (each job's tasks within its share, then up to one
//! task per slot beyond) come from the view's locality index when it has
//! one, in the same order, looking only at the tasks held on idle nodes and
//! then job by job while a share or a beyond row is open (`rows_indexed`);
//! and a problem too large for a dense matrix (the first decision of a big
//! cluster) is solved exactly by the certificate route of
//! [`super::pruned`], whose check allows for the per-node slowdown.

use super::index::{IdMap, LocalityIndex};
use super::lsap::{assign_matrix, idle_slots, solve_pruned};
use super::pruned::{Cand, Prune, DENSE_MAX};
use super::registry::SchedError;
use super::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Seconds per byte read from a local cache before any measurement: 4 GB/s,
/// a memory copy.
const PRIOR_CACHE_SPB: f64 = 1.0 / 4e9;
/// Seconds per byte read from a local disk before any measurement: 500
/// MB/s, a SATA SSD's sequential read.
const PRIOR_DISK_SPB: f64 = 1.0 / 5e8;
/// Weight of a new sample in a level's average: the last ~10 tasks dominate,
/// so the estimate follows a change of load or network within a wave.
const EWMA: f64 = 0.2;
/// Samples before a level's own average replaces its prior.
const TRUSTED_AFTER: u32 = 3;
/// Memory fraction in use beyond which a node is treated as overloaded.
const MEM_FULL: f64 = 0.95;
/// Cost added to a task beyond its job's fair share: more than any read
/// (seconds), so the solver uses such tasks only for slots nothing within a
/// share can use.
const BEYOND_SHARE: f64 = 1e6;

/// The learnt seconds per input byte of a map at one locality level.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
struct Level {
    spb: f64,
    samples: u32,
}

/// The `atlas` policy (no parameters).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Atlas {
    /// Per locality level, in [`Locality::ALL`] order.
    levels: [Level; 5],
}

#[derive(Serialize, Deserialize)]
struct Saved {
    version: u32,
    levels: Vec<Level>,
}

impl Atlas {
    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        if let Some(k) = p.keys().next() {
            return Err(SchedError::UnknownParam {
                name: "atlas".into(),
                param: k.clone(),
                takes: "no parameters (every figure it uses is measured)".into(),
            });
        }
        Ok(Atlas::default())
    }

    /// Seconds per byte expected at each level: a level's own average once
    /// trusted; otherwise the best trusted level's measured compute time
    /// plus this level's prior read time, but no more than a worse level
    /// was measured at; never cheaper than a better level (a remote read is
    /// never faster than a local one in the model).
    pub fn seconds_per_byte(&self, view: &ClusterView) -> [f64; 5] {
        let net = |bw: f64| if bw > 0.0 { 1.0 / bw } else { PRIOR_DISK_SPB };
        let prior = [
            PRIOR_CACHE_SPB,
            PRIOR_DISK_SPB,
            net(view.rack_bandwidth),
            net(view.rack_bandwidth) + PRIOR_DISK_SPB,
            net(view.cross_rack_bandwidth) + PRIOR_DISK_SPB,
        ];
        let trusted = |l: usize| self.levels[l].samples >= TRUSTED_AFTER;
        let compute = (0..5)
            .find(|&l| trusted(l))
            .map_or(0.0, |l| (self.levels[l].spb - prior[l]).max(0.0));
        let mut out = [0.0; 5];
        for (l, o) in out.iter_mut().enumerate() {
            *o = if trusted(l) {
                self.levels[l].spb
            } else {
                // Capped by what a worse level was measured at: an
                // unmeasured tier costs no more than a measured worse one.
                (l + 1..5)
                    .filter(|&w| trusted(w))
                    .map(|w| self.levels[w].spb)
                    .fold(compute + prior[l], f64::min)
            };
        }
        for l in 1..5 {
            out[l] = out[l].max(out[l - 1]);
        }
        out
    }
}

/// A view's nodes as integers: rack numbers, and which may take work.
struct Topology {
    rack: Vec<u32>,
    /// `max(1, load1 / cores)` per node.
    slowdown: Vec<f64>,
    overloaded: Vec<bool>,
}

impl Topology {
    fn new(view: &ClusterView) -> Self {
        let rack = match view.locality_index() {
            Some(ix) => ix.racks().to_vec(),
            None => view.rack_numbers(),
        };
        let slowdown = view
            .nodes
            .iter()
            .map(|n| {
                let cores = n.resources.cores.max(1) as f64;
                (n.resources.load1 / cores).max(1.0)
            })
            .collect();
        let overloaded = view
            .nodes
            .iter()
            .map(|n| {
                let r = &n.resources;
                r.mem_total_bytes > 0
                    && r.mem_used_bytes as f64 > MEM_FULL * r.mem_total_bytes as f64
            })
            .collect();
        Topology {
            rack,
            slowdown,
            overloaded,
        }
    }
}

/// A candidate task with its block's holders as node indices.
struct Candidate<'a> {
    task: &'a PendingTask,
    cache: Vec<usize>,
    disk: Vec<usize>,
}

impl Candidate<'_> {
    fn level(&self, topo: &Topology, n: usize) -> Locality {
        if self.cache.contains(&n) {
            return Locality::CacheLocal;
        }
        if self.task.block.is_none() || self.disk.contains(&n) {
            return Locality::NodeLocal;
        }
        let near = |h: &Vec<usize>| h.iter().any(|&h| topo.rack[h] == topo.rack[n]);
        if near(&self.cache) {
            Locality::CacheRackLocal
        } else if near(&self.disk) {
            Locality::RackLocal
        } else {
            Locality::OffRack
        }
    }

    /// The best level it can have anywhere in the view.
    fn best_level(&self) -> Locality {
        if self.task.block.is_none() {
            Locality::NodeLocal
        } else if !self.cache.is_empty() {
            Locality::CacheLocal
        } else if !self.disk.is_empty() {
            Locality::NodeLocal
        } else {
            Locality::OffRack
        }
    }

    /// Nodes holding the input, cached or on disk.
    fn holders(&self) -> impl Iterator<Item = usize> + '_ {
        self.cache.iter().chain(&self.disk).copied()
    }
}

/// Fraction of the map slots divided max-min fairly among the jobs with
/// maps to run; the rest goes to the jobs with the least work left first.
/// A half bounds any job's slowdown against pure fair sharing by 2x (it
/// always holds at least half its fair share), while the other half runs
/// shortest-remaining-work first, which minimises the mean job time (with
/// equal jobs, pure fair sharing makes every job as slow as the last).
const FAIR_FRACTION: f64 = 0.5;

/// How many more maps each job with maps to run may start within its
/// share: a max-min fair share of [`FAIR_FRACTION`] of the map slots, plus
/// the rest handed out in `order` (least work left first), minus what the
/// job runs already.
fn allowances(
    view: &ClusterView,
    order: &[u64],
    pending_maps: &HashMap<u64, u32>,
) -> HashMap<u64, u32> {
    let total: f64 = view.nodes.iter().map(|n| n.map_slots as f64).sum();
    // (job, demand, running) of the jobs with maps to run, in `order`.
    let jobs: HashMap<u64, &JobView> = view.jobs.iter().map(|j| (j.id, j)).collect();
    let demand: Vec<(u64, f64, u32)> = order
        .iter()
        .filter_map(|id| {
            let p = pending_maps.get(id).copied().unwrap_or(0);
            let running = jobs.get(id).map_or(0, |j| j.running_maps);
            (p > 0).then_some((*id, (running + p) as f64, running))
        })
        .collect();
    let mut by_demand: Vec<usize> = (0..demand.len()).collect();
    by_demand.sort_by(|&a, &b| demand[a].1.total_cmp(&demand[b].1));
    let mut share = vec![0.0; demand.len()];
    let mut left = total * FAIR_FRACTION;
    for (k, &i) in by_demand.iter().enumerate() {
        share[i] = (left / (demand.len() - k) as f64).min(demand[i].1);
        left -= share[i];
    }
    let mut left = total - share.iter().sum::<f64>();
    for (i, d) in demand.iter().enumerate() {
        let more = (d.1 - share[i]).min(left).max(0.0);
        share[i] += more;
        left -= more;
    }
    demand
        .iter()
        .zip(share)
        .map(|((id, _, running), s)| (*id, (s - *running as f64).max(0.0).ceil() as u32))
        .collect()
}

impl Scheduler for Atlas {
    fn name(&self) -> &'static str {
        "atlas"
    }

    fn assign(&mut self, view: &ClusterView, trigger: Trigger) -> Vec<Assignment> {
        let (order, pending_maps) = inputs(view);
        let mut out = self.assign_maps(view, &order, &pending_maps, Prune::Auto);
        if let Some(node) = trigger.node().and_then(|n| view.node(n)) {
            out.extend(assign_reduces(view, node, &order));
        }
        out
    }

    fn on_task_finished(&mut self, _view: &ClusterView, r: &TaskReport) {
        if r.task.kind != TaskKind::Map || !r.succeeded || r.bytes_read == 0 || r.runtime_s <= 0.0 {
            return;
        }
        let l = &mut self.levels[r.locality as usize];
        let x = r.runtime_s / r.bytes_read as f64;
        l.spb = if l.samples == 0 {
            x
        } else {
            (1.0 - EWMA) * l.spb + EWMA * x
        };
        l.samples = l.samples.saturating_add(1);
    }

    fn save_state(&self) -> Option<String> {
        let s = Saved {
            version: 1,
            levels: self.levels.to_vec(),
        };
        serde_json::to_string(&s).ok()
    }

    fn load_state(&mut self, state: &str) -> Result<(), String> {
        let s: Saved = serde_json::from_str(state).map_err(|e| e.to_string())?;
        if s.version != 1 {
            return Err(format!("state version {} is not 1", s.version));
        }
        let levels: [Level; 5] = s
            .levels
            .try_into()
            .map_err(|_| "expected 5 levels".to_string())?;
        if levels.iter().any(|l| !l.spb.is_finite() || l.spb < 0.0) {
            return Err("a level's seconds per byte is not a number >= 0".into());
        }
        self.levels = levels;
        Ok(())
    }
}

impl Atlas {
    /// The nodes, the idle slots that may take work and the rows (tasks
    /// with the constant each pays on any slot); `None` without a slot.
    #[allow(clippy::type_complexity)]
    fn rows<'v>(
        &self,
        view: &'v ClusterView,
        order: &[u64],
        pending_maps: &HashMap<u64, u32>,
    ) -> Option<(Topology, Vec<usize>, Vec<(Candidate<'v>, f64)>)> {
        let topo = Topology::new(view);
        let any_light = topo.overloaded.iter().any(|o| !o);
        let slots: Vec<usize> = idle_slots(view)
            .into_iter()
            .filter(|&n| !(any_light && topo.overloaded[n]))
            .collect();
        if slots.is_empty() {
            return None;
        }
        let rank: HashMap<u64, usize> = order.iter().enumerate().map(|(k, j)| (*j, k)).collect();
        // Rows: each job's tasks within its share, then at most one task
        // beyond shares per slot.
        let mut allowed = allowances(view, order, pending_maps);
        let (mut rows, beyond) = match view.locality_index() {
            Some(ix) => rows_indexed(view, ix, &slots, &rank, &mut allowed),
            None => rows_scanned(view, &slots, &rank, &mut allowed),
        };
        let n_jobs = order.len().max(1) as f64;
        for c in beyond {
            let r = rank.get(&c.task.job).copied().unwrap_or(order.len()) as f64;
            rows.push((c, BEYOND_SHARE * (1.0 + r / n_jobs)));
        }
        Some((topo, slots, rows))
    }

    /// `prune`: [`Prune::Sparse`] takes the certificate route whatever the
    /// size (with an index), [`Prune::Never`] never; else above
    /// [`DENSE_MAX`] entries.
    fn assign_maps(
        &self,
        view: &ClusterView,
        order: &[u64],
        pending_maps: &HashMap<u64, u32>,
        prune: Prune,
    ) -> Vec<Assignment> {
        let Some((topo, slots, rows)) = self.rows(view, order, pending_maps) else {
            return vec![];
        };
        let spb = self.seconds_per_byte(view);
        let read = |c: &Candidate, n: usize| -> f64 {
            c.task.input_bytes.max(1) as f64 * spb[c.level(&topo, n) as usize] * topo.slowdown[n]
        };
        let chosen = match view.locality_index() {
            Some(ix)
                if prune != Prune::Never
                    && (prune == Prune::Sparse || rows.len() * slots.len() > DENSE_MAX) =>
            {
                // Too large for a dense matrix (the first decision of a big
                // cluster): the same problem by the certificate route of
                // [`super::pruned`], priced per region.
                let cands: Vec<Cand> = rows
                    .iter()
                    .filter_map(|(c, extra)| {
                        let mut k = Cand::new(view, ix, ix.position(c.task.id)?);
                        let b = c.task.input_bytes.max(1) as f64;
                        let level = |r: usize| match (c.task.block.is_none(), r) {
                            (true, 0) => spb[0],
                            (true, _) => spb[1],
                            (false, r) => spb[r],
                        };
                        k.cost = std::array::from_fn(|r| b * level(r));
                        k.extra = *extra;
                        Some(k)
                    })
                    .collect();
                solve_pruned(
                    view,
                    ix,
                    &slots,
                    Some(&topo.slowdown),
                    &cands,
                    Prune::Sparse,
                )
            }
            _ => {
                let mut cost = Vec::with_capacity(rows.len() * slots.len());
                let mut per_node = vec![0.0; view.nodes.len()];
                for (c, extra) in &rows {
                    for &n in &slots {
                        per_node[n] = read(c, n) + extra;
                    }
                    cost.extend(slots.iter().map(|&n| per_node[n]));
                }
                let tasks: Vec<&PendingTask> = rows.iter().map(|(c, _)| c.task).collect();
                assign_matrix(view, &tasks, &slots, cost)
            }
        };
        // Waits that pay for themselves (see the module docs).
        let by_id: HashMap<TaskId, &Candidate> = rows.iter().map(|(c, _)| (c.task.id, c)).collect();
        let pos = |name: &str| view.position(name).expect("assigned to a view node");
        let mut taken: HashMap<usize, u32> = HashMap::new();
        for a in &chosen {
            *taken.entry(pos(&a.node)).or_default() += 1;
        }
        chosen
            .into_iter()
            .filter(|a| {
                let c = by_id[&a.task];
                let n = pos(&a.node);
                let best = c.best_level();
                if c.level(&topo, n) <= best {
                    return true;
                }
                let bytes = c.task.input_bytes.max(1) as f64;
                let penalty = read(c, n) - bytes * spb[best as usize];
                let waited = view.now - c.task.runnable_since;
                let local_run = bytes * spb[Locality::NodeLocal as usize];
                let wait = c
                    .holders()
                    .filter(|&h| !topo.overloaded[h])
                    .map(|h| time_to_free_slot(view, h, taken.get(&h).copied(), local_run))
                    .fold(f64::INFINITY, f64::min);
                !(waited < penalty && wait < penalty)
            })
            .collect()
    }
}

/// Jobs with the least work left first (reduces, and the order in which
/// tasks beyond their share fill leftover slots), and each job's pending
/// maps.
fn inputs(view: &ClusterView) -> (Vec<u64>, HashMap<u64, u32>) {
    let mut pending_maps: HashMap<u64, u32> = HashMap::new();
    match view.locality_index() {
        Some(ix) => pending_maps.extend(ix.map_jobs().map(|j| (j, ix.job_input(j).maps))),
        None => {
            for t in view.pending.iter().filter(|t| t.kind == TaskKind::Map) {
                *pending_maps.entry(t.job).or_default() += 1;
            }
        }
    }
    let mut order: Vec<&JobView> = view.jobs.iter().collect();
    order.sort_by_key(|j| (j.pending + j.running, j.order));
    (order.into_iter().map(|j| j.id).collect(), pending_maps)
}

/// The rows, from a pass over every pending map: candidates, best
/// placeable first (cached on an idle node, stored on an idle node, then
/// the rest; within a class, jobs in order); each job's first ones within
/// its share, then up to one per slot beyond shares.
fn rows_scanned<'v>(
    view: &'v ClusterView,
    slots: &[usize],
    rank: &HashMap<u64, usize>,
    allowed: &mut HashMap<u64, u32>,
) -> (Vec<(Candidate<'v>, f64)>, Vec<Candidate<'v>>) {
    let idle: std::collections::HashSet<usize> = slots.iter().copied().collect();
    let resolve = |names: &[String]| -> Vec<usize> {
        names.iter().filter_map(|r| view.position(r)).collect()
    };
    let mut cands: Vec<(u8, Candidate)> = view
        .pending
        .iter()
        .filter(|t| t.kind == TaskKind::Map)
        .map(|t| {
            let c = Candidate {
                task: t,
                cache: resolve(&t.cached_on),
                disk: resolve(&t.replicas),
            };
            let class = if t.block.is_none() || c.cache.iter().any(|h| idle.contains(h)) {
                0
            } else if c.disk.iter().any(|h| idle.contains(h)) {
                1
            } else {
                2
            };
            (class, c)
        })
        .collect();
    cands.sort_by_key(|(class, c)| {
        (
            *class,
            rank.get(&c.task.job).copied().unwrap_or(usize::MAX),
            c.task.id,
        )
    });
    let mut rows: Vec<(Candidate, f64)> = Vec::new();
    let mut beyond = Vec::new();
    for (_, c) in cands {
        match allowed.get_mut(&c.task.job) {
            Some(a) if *a > 0 => {
                *a -= 1;
                rows.push((c, 0.0));
            }
            _ if beyond.len() < slots.len() => beyond.push(c),
            _ => {}
        }
    }
    (rows, beyond)
}

/// [`rows_scanned`]'s rows in the same order from the locality index,
/// looking at the maps held on idle nodes (classes 0 and 1) and then at the
/// rest, job by job in order, only while a share or a beyond row is open:
/// in a busy cluster the shares left are about the idle slots, so a
/// decision looks at a few tasks per idle slot, not at the whole queue.
fn rows_indexed<'v>(
    view: &'v ClusterView,
    ix: &LocalityIndex,
    slots: &[usize],
    rank: &HashMap<u64, usize>,
    allowed: &mut HashMap<u64, u32>,
) -> (Vec<(Candidate<'v>, f64)>, Vec<Candidate<'v>>) {
    let cand = |p: usize| -> Candidate<'v> {
        let t = &view.pending[p];
        let (c, d) = ix.holders(t.id).unwrap_or((&[], &[]));
        Candidate {
            task: t,
            cache: c.iter().map(|&x| x as usize).collect(),
            disk: d.iter().map(|&x| x as usize).collect(),
        }
    };
    let mut idle = slots.to_vec();
    idle.dedup();
    let mut class: IdMap<usize, u8> = IdMap::default();
    for &n in &idle {
        class.extend(ix.cached_at(n).map(|p| (p, 0)));
    }
    class.extend(ix.generators().map(|p| (p, 0)));
    for &n in &idle {
        for p in ix.stored_at(n) {
            class.entry(p).or_insert(1);
        }
    }
    let rank_of = |job: u64| rank.get(&job).copied().unwrap_or(usize::MAX);
    let mut first: Vec<(u8, usize, TaskId, usize)> = class
        .iter()
        .map(|(&p, &c)| {
            let t = &view.pending[p];
            (c, rank_of(t.job), t.id, p)
        })
        .collect();
    first.sort_unstable();
    let mut rows: Vec<(Candidate, f64)> = Vec::new();
    let mut beyond: Vec<Candidate> = Vec::new();
    let max_beyond = slots.len();
    // The rule of `rows_scanned`.
    let take = |p: usize,
                allowed: &mut HashMap<u64, u32>,
                rows: &mut Vec<(Candidate<'v>, f64)>,
                beyond: &mut Vec<Candidate<'v>>| {
        match allowed.get_mut(&view.pending[p].job) {
            Some(a) if *a > 0 => {
                *a -= 1;
                rows.push((cand(p), 0.0));
            }
            _ if beyond.len() < max_beyond => beyond.push(cand(p)),
            _ => {}
        }
    };
    for &(_, _, _, p) in &first {
        take(p, allowed, &mut rows, &mut beyond);
    }
    // Class 2, jobs in order, while the job has a share open or a beyond
    // row is free.
    let mut jobs: Vec<u64> = ix.map_jobs().collect();
    jobs.sort_unstable_by_key(|&j| (rank_of(j), j));
    for j in jobs {
        for p in ix.maps_of(j) {
            let open = allowed.get(&j).is_some_and(|a| *a > 0);
            if !open && beyond.len() >= max_beyond {
                break;
            }
            if !class.contains_key(&p) {
                take(p, allowed, &mut rows, &mut beyond);
            }
        }
    }
    (rows, beyond)
}

/// Expected seconds until node `h` has a map slot for one more task: 0 if
/// one is still free after this round's assignments, else the soonest end
/// of a map running there (its job's mean task time, or `local_run` before
/// the job has one), and never if nothing runs there.
fn time_to_free_slot(view: &ClusterView, h: usize, taken: Option<u32>, local_run: f64) -> f64 {
    let node = &view.nodes[h];
    if node.free_map_slots > taken.unwrap_or(0) {
        return 0.0;
    }
    node.running
        .iter()
        .filter(|r| r.id.kind == TaskKind::Map)
        .map(|r| {
            let mean = view
                .jobs
                .iter()
                .find(|j| j.id == r.id.job)
                .map(|j| j.avg_map_time)
                .filter(|t| *t > 0.0)
                .unwrap_or(local_run);
            (mean - (view.now - r.started)).max(0.0)
        })
        .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::lsap::tests::figure_1;
    use crate::sched::lsap::Lsap;
    use crate::sched::testkit::{job, local_count, map, node, view};

    /// The total of C (read times slowdown plus the row's constant) over
    /// the assignments.
    fn objective(s: &Atlas, v: &ClusterView, a: &[Assignment]) -> f64 {
        let (order, pending) = inputs(v);
        let Some((topo, _, rows)) = s.rows(v, &order, &pending) else {
            assert!(a.is_empty());
            return 0.0;
        };
        let spb = s.seconds_per_byte(v);
        a.iter()
            .map(|x| {
                let (c, extra) = rows.iter().find(|(c, _)| c.task.id == x.task).unwrap();
                let n = v.position(&x.node).unwrap();
                c.task.input_bytes.max(1) as f64
                    * spb[c.level(&topo, n) as usize]
                    * topo.slowdown[n]
                    + extra
            })
            .sum()
    }

    /// The certificate route finds an assignment as cheap as the dense
    /// solver's, with slowdowns, trained levels, shares and beyond-share
    /// rows (waits off: the clock is far ahead, so nothing waits).
    #[test]
    fn the_sparse_route_keeps_the_optimum() {
        use crate::sched::lsap::tests::{check_slots, prunable};
        let mut rng = fastrand::Rng::with_seed(8);
        for seed in 0..300 {
            let mut v = prunable(seed).with_locality_index();
            v.now = 1e12;
            for n in v.nodes.iter_mut() {
                n.resources.cores = 4;
                n.resources.load1 = [0.0, 2.0, 6.0, 9.0][rng.usize(..4)];
            }
            for j in v.jobs.iter_mut() {
                j.running_maps = rng.u32(0..4);
                j.running = j.running_maps;
            }
            let mut s = Atlas::default();
            if seed % 2 == 1 {
                for (l, secs) in [(Locality::NodeLocal, 1.0), (Locality::OffRack, 3.0)] {
                    for _ in 0..3 {
                        s.on_task_finished(
                            &v,
                            &TaskReport {
                                locality: l,
                                runtime_s: secs,
                                bytes_read: 64 << 20,
                                succeeded: true,
                                ..Default::default()
                            },
                        );
                    }
                }
            }
            let (order, pending) = inputs(&v);
            let dense = s.assign_maps(&v, &order, &pending, Prune::Never);
            let sparse = s.assign_maps(&v, &order, &pending, Prune::Sparse);
            check_slots(&v, &sparse);
            assert_eq!(sparse.len(), dense.len(), "seed {seed}");
            let (a, b) = (objective(&s, &v, &dense), objective(&s, &v, &sparse));
            assert!(
                (a - b).abs() <= 1e-9 * (1.0 + a.abs()),
                "seed {seed}: {b} vs {a}"
            );
        }
    }

    #[test]
    fn matches_lsap_on_figure_1() {
        let v = figure_1();
        let a = Atlas::default().assign(&v, Trigger::JobAdded(1));
        let l = Lsap.assign(&v, Trigger::JobAdded(1));
        assert_eq!(local_count(&v, &a), local_count(&v, &l));
        assert_eq!(local_count(&v, &a), 2);
    }

    #[test]
    fn a_cached_copy_beats_a_disk_copy() {
        // One slot on each of a and b; the task is on disk at a and cached
        // at b; the other task is on disk at both. LSAP sees two zero-cost
        // assignments either way; atlas puts the first task on its cache.
        let v = view(
            vec![node("a", "r1", 1), node("b", "r1", 1)],
            vec![job(1, 2)],
            vec![
                map(1, 0, 10, &["a", "b"], &["b"]),
                map(1, 1, 11, &["a", "b"], &[]),
            ],
        );
        let a = Atlas::default().assign(&v, Trigger::JobAdded(1));
        assert_eq!(a.len(), 2);
        let on_b = a.iter().find(|a| a.node == "b").unwrap();
        assert_eq!(on_b.task.index, 0);
    }

    fn running_map(job: u64, index: u32, started: f64) -> RunningTask {
        RunningTask {
            id: TaskId {
                job,
                kind: TaskKind::Map,
                index,
            },
            started,
        }
    }

    #[test]
    fn waits_for_a_local_slot_only_while_waiting_is_cheaper() {
        // The task's only replica is on busy node a (in another rack), whose
        // map ends in about 0.1 s; an off-rack read of 64 MiB at 37.5 MB/s
        // costs 1.8 s. So it waits, until it has waited as long as the read.
        let mut a = node("a", "r1", 0);
        a.map_slots = 1;
        a.running = vec![running_map(1, 9, 0.0)];
        let mut j = job(1, 1);
        j.avg_map_time = 0.1;
        j.running_maps = 1;
        let mut v = view(
            vec![a, node("b", "r2", 1)],
            vec![j],
            vec![map(1, 0, 10, &["a"], &[])],
        );
        let mut s = Atlas::default();
        assert!(s.assign(&v, Trigger::Heartbeat("b".into())).is_empty());
        v.now = 2.0;
        let got = s.assign(&v, Trigger::Heartbeat("b".into()));
        assert_eq!(got.len(), 1, "waited longer than the read costs");
        // A holder with nothing running never frees a slot: no wait.
        v.now = 0.0;
        v.nodes[0].running.clear();
        assert_eq!(s.assign(&v, Trigger::Heartbeat("b".into())).len(), 1);
    }

    #[test]
    fn shares_split_slots_between_jobs_and_leftovers_are_used() {
        // Four idle slots, a 10-map job and a 2-map job: 2 and 2 within
        // shares; with a single 10-map job all four go to it.
        let nodes = vec![node("a", "r1", 2), node("b", "r1", 2)];
        let mut pending: Vec<PendingTask> = (0..10)
            .map(|i| map(1, i, i as u64, &["a", "b"], &[]))
            .collect();
        pending.extend((0..2).map(|i| map(2, i, 100 + i as u64, &["a", "b"], &[])));
        let v = view(nodes.clone(), vec![job(1, 10), job(2, 2)], pending.clone());
        let a = Atlas::default().assign(&v, Trigger::JobAdded(2));
        let per_job = |j: u64| a.iter().filter(|a| a.task.job == j).count();
        assert_eq!((per_job(1), per_job(2)), (2, 2));
        // Two equal jobs, eight slots: two each by fairness, the other four
        // to the first in order (equal work left).
        let nodes8 = vec![node("a", "r1", 4), node("b", "r1", 4)];
        let mut eq: Vec<PendingTask> = (0..10)
            .map(|i| map(1, i, i as u64, &["a", "b"], &[]))
            .collect();
        eq.extend((0..10).map(|i| map(2, i, 100 + i as u64, &["a", "b"], &[])));
        let v = view(nodes8, vec![job(1, 10), job(2, 10)], eq);
        let a = Atlas::default().assign(&v, Trigger::JobAdded(2));
        let per_job = |j: u64| a.iter().filter(|a| a.task.job == j).count();
        assert_eq!((per_job(1), per_job(2)), (6, 2));
        pending.retain(|t| t.job == 1);
        let v = view(nodes, vec![job(1, 10)], pending);
        assert_eq!(Atlas::default().assign(&v, Trigger::JobAdded(1)).len(), 4);
    }

    #[test]
    fn overloaded_nodes_get_nothing_while_others_can_run() {
        let mut a = node("a", "r1", 2);
        a.resources.mem_total_bytes = 100;
        a.resources.mem_used_bytes = 99;
        let v = view(
            vec![a, node("b", "r1", 1)],
            vec![job(1, 2)],
            vec![map(1, 0, 10, &["a"], &[]), map(1, 1, 11, &["a"], &[])],
        );
        let got = Atlas::default().assign(&v, Trigger::JobAdded(1));
        assert!(got.iter().all(|a| a.node == "b"), "{got:?}");
    }

    #[test]
    fn learns_tier_costs_and_keeps_them() {
        let mut s = Atlas::default();
        let v = view(vec![node("a", "r1", 1)], vec![], vec![]);
        let before = s.seconds_per_byte(&v);
        for _ in 0..5 {
            for (l, secs) in [(Locality::NodeLocal, 1.0), (Locality::OffRack, 1.2)] {
                s.on_task_finished(
                    &v,
                    &TaskReport {
                        locality: l,
                        runtime_s: secs,
                        bytes_read: 64 << 20,
                        succeeded: true,
                        ..Default::default()
                    },
                );
            }
        }
        let after = s.seconds_per_byte(&v);
        assert!(after[Locality::OffRack as usize] < before[Locality::OffRack as usize] + after[1]);
        assert!((after[4] / after[1] - 1.2).abs() < 1e-9, "{after:?}");
        // Monotone: levels between two measured ones are no cheaper.
        assert!(after.windows(2).all(|w| w[0] <= w[1]), "{after:?}");
        let saved = s.save_state().unwrap();
        let mut t = Atlas::default();
        t.load_state(&saved).unwrap();
        assert_eq!(t, s);
        assert!(t.load_state("{\"version\":1,\"levels\":[]}").is_err());
        assert!(t.load_state("garbage").is_err());
        assert_eq!(t, s, "a refused state changes nothing");
    }

    #[test]
    fn no_parameters() {
        assert!(Atlas::from_params(&BTreeMap::new()).is_ok());
        let mut p = BTreeMap::new();
        p.insert("x".into(), "1".into());
        assert!(Atlas::from_params(&p).is_err());
    }
}
