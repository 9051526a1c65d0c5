//! `atlas`: this project's own policy (Assignment by Tiered Locality, Load
//! And Shares). It takes the best idea of each paper, drops the knob each
//! one needs, and prices every choice in the seconds a real job pays.
//!
//! - **Late binding** (Sparrow, Ousterhout et al., SOSP 2013, section 3.3):
//!   a map is bound to a node only when that node offers a slot (its
//!   heartbeat, or the report of a task that just ended there), never
//!   ahead of time. The master delivers a launch in the answer to the
//!   node's own call, so a task bound early to another node waits for that
//!   node's next heartbeat (half an interval on average), while a task
//!   left unbound runs on whichever of its holders asks first. When jobs
//!   last a few heartbeats this is the difference that matters; it also
//!   makes a decision cost the tasks one node can take, not the whole
//!   cluster (the LSAP family solves every idle slot against every task
//!   on every heartbeat).
//! - **All five tiers, priced by what reads cost here** (the CLQLMRS
//!   paper's levels): a map on node n is expected to take its input bytes
//!   times (the read seconds per byte of its tier on n, plus the compute
//!   seconds per byte times n's slowdown). The read cost of each tier is
//!   *measured*: workers report how long each map spent fetching its
//!   input (`read_s`), and atlas keeps an exponential average of read
//!   seconds per byte per tier. LSAP prices cache-local and node-local
//!   alike at 0 and every remote read at a configured bandwidth; on a LAN
//!   slower than the configured figure (the emulated LAN at 200 Mbit/s: a
//!   16 MiB block takes 0.7 s to fetch in the rack, 2.7 s across) a fixed
//!   price sends tasks to reads that cost many times their compute. Before
//!   any measurement a tier starts from the view's bandwidths, scaled by
//!   what the nearest measured network tier showed against its own prior.
//! - **Load** (the Naive-Bayes paper's concern, without its classifier):
//!   a node's slowdown is the larger of its run queue over its cores
//!   (processor sharing) and its measured compute seconds per byte over the
//!   cluster's median (a node throttled by a CPU quota shows no load but
//!   runs slower); a node with less than 5% memory left is given nothing
//!   while another node with an idle slot has memory (it would swap).
//! - **Waiting that pays for itself** (delay scheduling and matchmaking,
//!   without their wait parameter D): a node takes a task unless one of
//!   the task's holders would finish it sooner, counting the expected wait
//!   for that holder's slot (half a heartbeat when it has one free, else
//!   the soonest end of a map running there). Once the task has waited as
//!   long as the extra time it would pay here, it goes anyway: the
//!   ski-rental rule, never more than twice the better of the two choices
//!   in hindsight, and it cannot starve.
//! - **Locality before order, work conservation** (what Quincy and
//!   Firmament get from pricing waiting in the same objective): a slot
//!   goes to the first job, in order, with a task local to the node; only
//!   when no job has one does it go to a remote task, and only to one
//!   worth running here. A remote read holds a slot longer than a local
//!   task would, and a job passed over here is first in line at its own
//!   holders. A job whose task prefers to wait is skipped, not the slot: a
//!   slot stays idle only when no task is worth running there.
//! - **Global optimality where it is cheap** (the LSAP paper's Figure 1):
//!   among a job's tasks local to the node, the one with the fewest other
//!   idle holders goes first, so a task that only this node can run
//!   locally is not left behind for one that another idle node could run
//!   locally.
//! - **Max-min shares, least work left first** (Hadoop's Fair Scheduler,
//!   lsap-fair's sto_i, shortest remaining processing time): the map slots
//!   are divided max-min fairly among the jobs with maps to run (two equal
//!   jobs on eight slots get four each; a job wanting fewer keeps what it
//!   wants). Jobs below their share are offered a slot first, those with
//!   the least work left before the others; jobs at their share only get
//!   slots no job below its share can use. The order is taken again after
//!   every launch, as Hadoop's Fair Scheduler does.
//!
//! Reduces go to the node that asks, as in every other policy, jobs in the
//! same order, but one for each of its free reduce slots rather than one
//! per heartbeat (Hadoop's JobQueueTaskScheduler rule, [`assign_reduces`]):
//! a job's reduces start together instead of one heartbeat apart. A node
//! found at least twice as slow as the cluster takes none while another
//! node has a free reduce slot (a reduce is the job's last step: a slow one
//! delays the whole job).

use super::error::SchedError;
use super::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};

/// Read seconds per byte from a local cache before any measurement: 4 GB/s,
/// a memory copy.
const PRIOR_CACHE_SPB: f64 = 1.0 / 4e9;
/// Read seconds per byte from a local disk before any measurement: 500
/// MB/s, a SATA SSD's sequential read.
const PRIOR_DISK_SPB: f64 = 1.0 / 5e8;
/// Weight of a new sample in an average: the last ~10 tasks dominate, so
/// the estimate follows a change of load or network within a wave.
const EWMA: f64 = 0.2;
/// Samples before an average replaces its prior.
const TRUSTED_AFTER: u32 = 3;
/// Memory fraction in use beyond which a node is treated as overloaded.
const MEM_FULL: f64 = 0.95;
/// Slowdown from which a node takes no reduce while another can.
const SLOW_FOR_REDUCES: f64 = 2.0;
/// Measured compute per byte over the median node's from which a node
/// counts as slow. Map times on one node vary by a few tens of percent
/// from task to task (input skew, the page cache, what else runs there);
/// acting on smaller differences would trade locality for noise, while a
/// CPU-starved or failing node is slower by far more than this.
const SLOW_NODE: f64 = 1.5;
/// Reports between two computations of the median node speed.
const MEDIAN_EVERY: u64 = 32;

/// An exponential average of seconds per input byte.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
struct Level {
    spb: f64,
    samples: u32,
}

impl Level {
    fn add(&mut self, x: f64) {
        self.spb = if self.samples == 0 {
            x
        } else {
            (1.0 - EWMA) * self.spb + EWMA * x
        };
        self.samples = self.samples.saturating_add(1);
    }

    fn trusted(&self) -> bool {
        self.samples >= TRUSTED_AFTER
    }
}

/// The `atlas` policy (no parameters).
#[derive(Debug, Clone, Default)]
pub struct Atlas {
    /// Read seconds per input byte, per locality level in
    /// [`Locality::ALL`] order.
    levels: [Level; 5],
    /// Seconds per input byte a map spends after its read (parse, map,
    /// sort, spill), over the whole cluster.
    compute: Level,
    /// The same per node, for the measured slowdown.
    node_compute: BTreeMap<String, Level>,
    /// The lower median of the trusted `node_compute` figures, taken again
    /// every [`MEDIAN_EVERY`] reports (a sort per report would cost a
    /// 5000-node cluster more than its decisions).
    median_compute: f64,
    reports: u64,
    /// Per job: since when a node has passed over its best task to wait
    /// for a better place (delay scheduling's timer, Zaharia et al.,
    /// Algorithm 2): reset when the job launches a task where its input
    /// is. The ski-rental rule counts this wait, not the time since the
    /// task became runnable (in a large job every later task has been
    /// runnable for long without ever being passed over).
    skipped_since: HashMap<u64, f64>,
}

/// Equal when they have learnt the same (the timers and counters are
/// not what a saved state keeps).
impl PartialEq for Atlas {
    fn eq(&self, o: &Self) -> bool {
        self.levels == o.levels && self.compute == o.compute && self.node_compute == o.node_compute
    }
}

/// Version 2: `levels` are read costs (version 1 held whole-task times).
const STATE_VERSION: u32 = 2;

#[derive(Serialize, Deserialize)]
struct Saved {
    version: u32,
    levels: Vec<Level>,
    compute: Level,
    #[serde(default)]
    node_compute: BTreeMap<String, Level>,
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

    /// Read seconds per byte expected at each level: a level's own average
    /// once trusted; otherwise its prior, a network tier's prior scaled by
    /// what the nearest measured network tier showed against its own
    /// prior; never cheaper than a better level nor dearer than a worse
    /// measured one.
    pub fn read_costs(&self, view: &ClusterView) -> [f64; 5] {
        let net = |bw: f64| if bw > 0.0 { 1.0 / bw } else { PRIOR_DISK_SPB };
        let prior = [
            PRIOR_CACHE_SPB,
            PRIOR_DISK_SPB,
            net(view.rack_bandwidth),
            net(view.rack_bandwidth),
            net(view.cross_rack_bandwidth),
        ];
        let trusted = |l: usize| self.levels[l].trusted();
        // The network tiers (2..5), nearest first from each.
        let scale = |l: usize| -> f64 {
            let mut near: Vec<usize> = (2..5).filter(|&m| trusted(m)).collect();
            near.sort_by_key(|&m| m.abs_diff(l));
            near.first().map_or(1.0, |&m| self.levels[m].spb / prior[m])
        };
        let mut out = [0.0; 5];
        for (l, o) in out.iter_mut().enumerate() {
            *o = if trusted(l) {
                self.levels[l].spb
            } else {
                let guess = if l >= 2 {
                    prior[l] * scale(l)
                } else {
                    prior[l]
                };
                (l + 1..5)
                    .filter(|&w| trusted(w))
                    .map(|w| self.levels[w].spb)
                    .fold(guess, f64::min)
            };
        }
        for l in 1..5 {
            out[l] = out[l].max(out[l - 1]);
        }
        out
    }

    /// Seconds per input byte a map is expected to take at each level on
    /// a node running at full speed: its read cost plus the measured
    /// compute (0 before any).
    pub fn seconds_per_byte(&self, view: &ClusterView) -> [f64; 5] {
        let c = self.compute_spb();
        self.read_costs(view).map(|r| r + c)
    }

    fn compute_spb(&self) -> f64 {
        if self.compute.samples > 0 {
            self.compute.spb
        } else {
            0.0
        }
    }

    /// Node `n`'s slowdown: the larger of `load1 / cores` and its measured
    /// compute per byte over the median node's; at least 1.
    fn slowdown(&self, n: &NodeView) -> f64 {
        let load = n.resources.load1 / n.resources.cores().max(1) as f64;
        let speed = match self.node_compute.get(&n.name) {
            Some(l) if l.trusted() && self.median_compute > 0.0 => l.spb / self.median_compute,
            _ => 1.0,
        };
        // Below the noise floor a node counts as full speed.
        let speed = if speed >= SLOW_NODE { speed } else { 1.0 };
        load.max(speed).max(1.0)
    }

    fn update_median(&mut self) {
        let mut m: Vec<f64> = self
            .node_compute
            .values()
            .filter(|l| l.trusted())
            .map(|l| l.spb)
            .collect();
        // The lower median: with one slow node of three (or two), the
        // others. Selected, not sorted: this runs at every map's end.
        let at = m.len().saturating_sub(1) / 2;
        self.median_compute = if m.is_empty() {
            0.0
        } else {
            *m.select_nth_unstable_by(at, f64::total_cmp).1
        };
    }
}

fn overloaded(n: &NodeView) -> bool {
    let r = &n.resources;
    r.mem_total_bytes > 0 && r.mem_used_bytes as f64 > MEM_FULL * r.mem_total_bytes as f64
}

/// How many more maps each job with maps to run may start within its
/// share: a max-min fair share of all the map slots (each job's demand is
/// what it runs plus what it has pending), rounded so that the shares add
/// up to the slots (fractions go to the jobs in the view's order), minus
/// what the job runs already.
fn allowances(view: &ClusterView) -> HashMap<u64, u32> {
    let total: f64 = view.nodes.iter().map(|n| n.map_slots as f64).sum();
    let demand: Vec<(u64, f64, u32)> = view
        .jobs
        .iter()
        .filter(|j| j.pending_maps > 0)
        .map(|j| {
            (
                j.id,
                (j.running_maps + j.pending_maps) as f64,
                j.running_maps,
            )
        })
        .collect();
    let mut by_demand: Vec<usize> = (0..demand.len()).collect();
    by_demand.sort_by(|&a, &b| demand[a].1.total_cmp(&demand[b].1));
    let mut share = vec![0.0; demand.len()];
    let mut left = total;
    for (k, &i) in by_demand.iter().enumerate() {
        share[i] = (left / (demand.len() - k) as f64).min(demand[i].1);
        left -= share[i];
    }
    let mut spare = total - share.iter().map(|s| s.floor()).sum::<f64>();
    demand
        .iter()
        .zip(share)
        .map(|((id, d, running), s)| {
            let mut whole = s.floor();
            if whole < *d && spare >= 1.0 && s > whole {
                whole += 1.0;
                spare -= 1.0;
            }
            (*id, (whole - *running as f64).max(0.0) as u32)
        })
        .collect()
}

/// Jobs in the order they are offered a slot: below their share first,
/// then by work left (tasks pending or running), then by submission.
fn job_order(view: &ClusterView, allowed: &HashMap<u64, u32>) -> Vec<u64> {
    let mut jobs: Vec<&JobView> = view.jobs.iter().filter(|j| j.pending > 0).collect();
    jobs.sort_by_key(|j| {
        let below = allowed.get(&j.id).is_some_and(|a| *a > 0);
        (!below, j.pending + j.running, j.order)
    });
    jobs.into_iter().map(|j| j.id).collect()
}

/// Expected seconds until node `h` can start one more map: half a
/// heartbeat if it has a slot free (it takes work when it next asks), else
/// the soonest end of a map running there (its job's mean task time, or
/// `typical` before the job has one), and never if nothing runs there.
fn time_to_slot(view: &ClusterView, h: &NodeView, typical: f64) -> f64 {
    if h.free_map_slots > 0 {
        return view.heartbeat_interval / 2.0;
    }
    h.running
        .iter()
        .filter(|r| r.id.kind == TaskKind::Map)
        .map(|r| {
            let mean = view
                .jobs
                .iter()
                .find(|j| j.id == r.id.job)
                .map(|j| j.avg_map_time)
                .filter(|t| *t > 0.0)
                .unwrap_or(typical);
            (mean - (view.now - r.started)).max(0.0)
        })
        .fold(f64::INFINITY, f64::min)
}

/// One decision's prices: seconds per byte read at each level, and of
/// compute at full speed.
struct Prices {
    read: [f64; 5],
    compute: f64,
}

impl Prices {
    /// Expected seconds of `t` at `level` on a node with `slowdown`.
    fn time(&self, t: &PendingTask, level: Locality, slowdown: f64) -> f64 {
        let b = t.input_bytes.max(1) as f64;
        b * (self.read[level as usize] + self.compute * slowdown)
    }
}

impl Atlas {
    /// Whether node `n` (slowdown `slow`) should run `t` now, at `level`,
    /// rather than leave it for one of its holders, its job having been
    /// passed over for `waited` seconds (see the module docs).
    #[allow(clippy::too_many_arguments)]
    fn worth_running_here(
        &self,
        view: &ClusterView,
        p: &Prices,
        n: &NodeView,
        slow: f64,
        t: &PendingTask,
        level: Locality,
        waited: f64,
    ) -> bool {
        let here = p.time(t, level, slow);
        let typical = p.time(t, Locality::NodeLocal, 1.0);
        let mut best_cost = f64::INFINITY;
        let mut best_total = f64::INFINITY;
        let holders = t
            .cached_on
            .iter()
            .map(|h| (h, Locality::CacheLocal))
            .chain(t.replicas.iter().map(|h| (h, Locality::NodeLocal)));
        for (h, l) in holders {
            if *h == n.name {
                continue;
            }
            let Some(hv) = view.node(h) else { continue };
            if overloaded(hv) {
                continue;
            }
            let cost = p.time(t, l, self.slowdown(hv));
            best_cost = best_cost.min(cost);
            best_total = best_total.min(cost + time_to_slot(view, hv, typical));
        }
        if here <= best_total {
            return true;
        }
        // Ski rental: it has waited as long as going now would lose.
        waited >= here - best_cost
    }

    /// The maps node `n` takes for its free slots.
    fn assign_maps(&mut self, view: &ClusterView, n: &NodeView) -> Vec<Assignment> {
        if n.free_map_slots == 0 {
            return vec![];
        }
        if overloaded(n)
            && view
                .nodes
                .iter()
                .any(|m| m.free_map_slots > 0 && !overloaded(m))
        {
            return vec![];
        }
        let prices = Prices {
            read: self.read_costs(view),
            compute: self.compute_spb(),
        };
        let slow = self.slowdown(n);
        let usable = |t: &PendingTask| !t.avoids(&n.name, &view.nodes);
        let mut local = local_maps(view, n);
        let mut allowed = allowances(view);
        let mut taken: HashSet<TaskId> = HashSet::new();
        // Local tasks looked at and left: the remote pass skips them.
        let mut passed: HashSet<TaskId> = HashSet::new();
        let mut skipped: HashSet<u64> = HashSet::new();
        let mut out = Vec::new();
        let now = view.now;
        for _ in 0..n.free_map_slots {
            let order = job_order(view, &allowed);
            let waited = |s: &Self, job: u64| s.skipped_since.get(&job).map_or(0.0, |t| now - t);
            // First a task local to n, jobs in order; only if no job has
            // one worth running here, a remote one. A remote read holds
            // the slot longer than a local task would: where a local task
            // is waiting, the slot is worth more to it.
            let mut chosen: Option<(&PendingTask, bool)> = None;
            for job in &order {
                let Some(list) = local.get_mut(job) else {
                    continue;
                };
                while let Some(Local {
                    key: (level, ..),
                    t,
                }) = list.pop()
                {
                    if taken.contains(&t.id) {
                        continue;
                    }
                    if self.worth_running_here(view, &prices, n, slow, t, level, waited(self, *job))
                    {
                        chosen = Some((t, true));
                        break;
                    }
                    passed.insert(t.id);
                    skipped.insert(*job);
                }
                if chosen.is_some() {
                    break;
                }
            }
            if chosen.is_none() {
                for job in &order {
                    let remote = view.best_map(*job, n, Locality::OffRack, |t| {
                        usable(t) && !taken.contains(&t.id) && !passed.contains(&t.id)
                    });
                    let Some((level, t)) = remote else { continue };
                    if self.worth_running_here(view, &prices, n, slow, t, level, waited(self, *job))
                    {
                        chosen = Some((t, level.is_local()));
                        break;
                    }
                    skipped.insert(*job);
                }
            }
            let Some((t, local_launch)) = chosen else {
                break;
            };
            if local_launch {
                self.skipped_since.remove(&t.job);
                skipped.remove(&t.job);
            }
            taken.insert(t.id);
            if let Some(a) = allowed.get_mut(&t.job) {
                *a = a.saturating_sub(1);
            }
            out.push(Assignment {
                task: t.id,
                node: n.name.clone(),
            });
        }
        for job in skipped {
            self.skipped_since.entry(job).or_insert(now);
        }
        out
    }
}

/// Each job's maps local to `n` that `n` may run, best first (see
/// [`Local`]), as a heap: a decision takes a task or two of a node's
/// hundreds, so no full sort.
fn local_maps<'v>(view: &'v ClusterView, n: &NodeView) -> HashMap<u64, BinaryHeap<Local<'v>>> {
    let usable = |t: &PendingTask| !t.avoids(&n.name, &view.nodes);
    // Each job's tasks local to n, best first: by level; then those
    // with no cached copy elsewhere (a cached copy is cheaper to read
    // where it is); then those with the fewest other idle holders
    // (LSAP's Figure 1: leave to another idle node what it can run
    // locally); then by index.
    let idle = |h: &String| *h != n.name && view.node(h).is_some_and(|x| x.free_map_slots > 0);
    let mut local: HashMap<u64, Vec<Local<'v>>> = HashMap::new();
    let mut add_local = |t: &'v PendingTask| {
        let level = view.locality(t, n);
        if level.is_local() && t.kind == TaskKind::Map && usable(t) {
            let cached_elsewhere =
                level != Locality::CacheLocal && t.cached_on.iter().any(|h| *h != n.name);
            let alts = t
                .cached_on
                .iter()
                .chain(&t.replicas)
                .filter(|h| idle(h))
                .count();
            local.entry(t.job).or_default().push(Local {
                key: (level, cached_elsewhere, alts, t.id.index),
                t,
            });
        }
    };
    match view
        .locality_index()
        .and_then(|ix| Some((ix, ix.node_position(&n.name)?)))
    {
        // With the index: the level and the other idle holders from
        // node positions (the same answers as above, without a lookup
        // by name per holder: at 10,000 nodes and a million maps a
        // node holds hundreds of maps, looked at on every decision).
        Some((ix, p)) => {
            let mut add = |q: usize| {
                let (id, _, c, d) = ix.at(q);
                // Held here: the level is read from the holders.
                let level = if c.contains(&(p as u32)) {
                    Locality::CacheLocal
                } else if d.contains(&(p as u32)) {
                    Locality::NodeLocal
                } else {
                    match ix.level(id, p).filter(|l| l.is_local()) {
                        Some(l) => l,
                        None => return,
                    }
                };
                let t = &view.pending[q];
                if t.kind != TaskKind::Map || !usable(t) {
                    return;
                }
                let cached_elsewhere =
                    level != Locality::CacheLocal && t.cached_on.iter().any(|h| *h != n.name);
                let alts = c
                    .iter()
                    .chain(d)
                    .filter(|&&h| h as usize != p && view.nodes[h as usize].free_map_slots > 0)
                    .count();
                local.entry(t.job).or_default().push(Local {
                    key: (level, cached_elsewhere, alts, t.id.index),
                    t,
                });
            };
            ix.held_on(p).for_each(&mut add);
            // Generators not held here (those held here were added).
            for q in ix.generators() {
                let (_, _, c, d) = ix.at(q);
                if !c.iter().chain(d).any(|&h| h as usize == p) {
                    add(q);
                }
            }
        }
        None => view.pending.iter().for_each(&mut add_local),
    }
    // Each job's list a heap: a decision takes a task or two of a
    // node's hundreds, so no full sort.
    local
        .into_iter()
        .map(|(j, v)| (j, BinaryHeap::from(v)))
        .collect()
}

/// A map local to the asking node and its rank there: by level; then
/// those with no cached copy elsewhere; then the fewest other idle holders;
/// then by index. The heap pops the least key first.
struct Local<'v> {
    key: (Locality, bool, usize, u32),
    t: &'v PendingTask,
}

impl PartialEq for Local<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}

impl Eq for Local<'_> {}

impl PartialOrd for Local<'_> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Local<'_> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.key.cmp(&self.key)
    }
}

/// Reduces for every free reduce slot of `node` (it asked, so it starts
/// them now; a job's other reduces would otherwise wait for one heartbeat
/// each), jobs in `order`, a reduce's failed nodes avoided while another
/// node exists.
fn reduces_for(view: &ClusterView, node: &NodeView, order: &[u64]) -> Vec<Assignment> {
    let mut out = Vec::new();
    for job in order {
        let free = node.free_reduce_slots as usize - out.len();
        if free == 0 {
            break;
        }
        let reduces: Box<dyn Iterator<Item = &PendingTask>> = match view.locality_index() {
            Some(ix) => Box::new(ix.reduces_of(*job).map(|p| &view.pending[p])),
            None => Box::new(
                view.pending
                    .iter()
                    .filter(|t| t.job == *job && t.kind == TaskKind::Reduce),
            ),
        };
        out.extend(
            reduces
                .filter(|t| !t.avoids(&node.name, &view.nodes))
                .take(free)
                .map(|t| Assignment {
                    task: t.id,
                    node: node.name.clone(),
                }),
        );
    }
    out
}

impl Scheduler for Atlas {
    fn name(&self) -> &'static str {
        "atlas"
    }

    fn assign(&mut self, view: &ClusterView, trigger: Trigger) -> Vec<Assignment> {
        // Late binding: only the node that asks is given work.
        let Some(node) = trigger.node().and_then(|n| view.node(n)) else {
            return vec![];
        };
        if self.skipped_since.len() > view.jobs.len() + 64 {
            let live: HashSet<u64> = view.jobs.iter().map(|j| j.id).collect();
            self.skipped_since.retain(|j, _| live.contains(j));
        }
        let mut out = self.assign_maps(view, node);
        if node.free_reduce_slots > 0 {
            let blocked = self.slowdown(node) >= SLOW_FOR_REDUCES
                && view.nodes.iter().any(|m| {
                    m.name != node.name
                        && m.free_reduce_slots > 0
                        && self.slowdown(m) < SLOW_FOR_REDUCES
                });
            if !blocked {
                let allowed = allowances(view);
                out.extend(reduces_for(view, node, &job_order(view, &allowed)));
            }
        }
        out
    }

    fn on_task_finished(&mut self, _view: &ClusterView, r: &TaskReport) {
        if r.task.kind != TaskKind::Map || !r.succeeded || r.bytes_read == 0 || r.runtime_s <= 0.0 {
            return;
        }
        let bytes = r.bytes_read as f64;
        let read = r.read_s.clamp(0.0, r.runtime_s);
        let compute = (r.runtime_s - read) / bytes;
        self.levels[r.locality as usize].add(read / bytes);
        self.compute.add(compute);
        let node = self.node_compute.entry(r.node.clone()).or_default();
        node.add(compute);
        let newly_trusted = node.samples == TRUSTED_AFTER;
        self.reports += 1;
        if newly_trusted || self.reports.is_multiple_of(MEDIAN_EVERY) {
            self.update_median();
        }
    }

    fn save_state(&self) -> Option<String> {
        let s = Saved {
            version: STATE_VERSION,
            levels: self.levels.to_vec(),
            compute: self.compute,
            node_compute: self.node_compute.clone(),
        };
        serde_json::to_string(&s).ok()
    }

    fn load_state(&mut self, state: &str) -> Result<(), String> {
        let s: Saved = serde_json::from_str(state).map_err(|e| e.to_string())?;
        if s.version != STATE_VERSION {
            return Err(format!(
                "state version {} is not {STATE_VERSION} (read costs per level)",
                s.version
            ));
        }
        let levels: [Level; 5] = s
            .levels
            .try_into()
            .map_err(|_| "expected 5 levels".to_string())?;
        let ok = |l: &Level| l.spb.is_finite() && l.spb >= 0.0;
        if !levels.iter().all(ok) || !ok(&s.compute) || !s.node_compute.values().all(ok) {
            return Err("a seconds-per-byte figure is not a number >= 0".into());
        }
        self.levels = levels;
        self.compute = s.compute;
        self.node_compute = s.node_compute;
        self.update_median();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsap::tests::figure_1;
    use crate::lsap::Lsap;
    use crate::testkit::{job, local_count, map, node, view};

    fn beat(s: &mut Atlas, v: &ClusterView, n: &str) -> Vec<Assignment> {
        s.assign(v, Trigger::Heartbeat(n.into()))
    }

    /// Launches `a` in `v` as the master would: the task leaves `pending`,
    /// its node's slot is taken, its job counts it running.
    fn apply(v: &mut ClusterView, a: &[Assignment]) {
        for x in a {
            let p = v.pending.iter().position(|t| t.id == x.task).unwrap();
            v.pending.remove(p);
            let n = v.position(&x.node).unwrap();
            v.nodes[n].free_map_slots -= 1;
            v.nodes[n].running.push(RunningTask {
                id: x.task,
                started: v.now,
            });
            let j = v.jobs.iter_mut().find(|j| j.id == x.task.job).unwrap();
            j.pending -= 1;
            j.pending_maps -= 1;
            j.running += 1;
            j.running_maps += 1;
        }
        v.build_locality_index();
    }

    /// Every node asks once, in `order`; what they got, launched in `v`.
    fn round(s: &mut Atlas, v: &mut ClusterView, order: &[&str]) -> Vec<Assignment> {
        let mut all = vec![];
        for n in order {
            let a = beat(s, v, n);
            apply(v, &a);
            all.extend(a);
        }
        all
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

    /// Teaches `s` that a 16 MiB read costs `secs` at `level` (three
    /// reports, enough to trust it), with 0.1 s of compute after it.
    fn teach(s: &mut Atlas, v: &ClusterView, level: Locality, secs: f64) {
        for _ in 0..3 {
            s.on_task_finished(
                v,
                &TaskReport {
                    locality: level,
                    runtime_s: secs + 0.1,
                    read_s: secs,
                    bytes_read: 16 << 20,
                    succeeded: true,
                    ..Default::default()
                },
            );
        }
    }

    #[test]
    fn binds_late_only_the_asking_node_gets_work() {
        let v = figure_1();
        let mut s = Atlas::default();
        assert!(s.assign(&v, Trigger::JobAdded(1)).is_empty());
        assert!(beat(&mut s, &v, "A").iter().all(|a| a.node == "A"));
    }

    #[test]
    fn matches_lsap_on_figure_1_whichever_node_asks_first() {
        for first in [["A", "B"], ["B", "A"]] {
            let mut v = figure_1();
            let a = round(&mut Atlas::default(), &mut v, &first);
            let v0 = figure_1();
            let l = Lsap.assign(&v0, Trigger::JobAdded(1));
            assert_eq!(
                local_count(&v0, &a),
                local_count(&v0, &l),
                "{first:?}: {a:?}"
            );
            assert_eq!(local_count(&v0, &a), 2);
        }
    }

    #[test]
    fn a_cached_copy_beats_a_disk_copy() {
        // One slot on each of a and b; the task 0 is on disk at a and
        // cached at b; task 1 is on disk at both. Whichever asks first,
        // task 0 runs from b's cache.
        for first in [["a", "b"], ["b", "a"]] {
            let mut v = view(
                vec![node("a", "r1", 1), node("b", "r1", 1)],
                vec![job(1, 2)],
                vec![
                    map(1, 0, 10, &["a", "b"], &["b"]),
                    map(1, 1, 11, &["a", "b"], &[]),
                ],
            );
            let a = round(&mut Atlas::default(), &mut v, &first);
            assert_eq!(a.len(), 2);
            let on_b = a.iter().find(|a| a.node == "b").unwrap();
            assert_eq!(on_b.task.index, 0, "{first:?}");
        }
    }

    #[test]
    fn a_slot_left_by_a_waiting_task_goes_to_a_task_local_to_it() {
        // Nodes a and b are idle, c is busy. Job 1 has maps stored on a and
        // on b; job 2, with the least work left, has one map stored only on
        // c. A remote read costs far more than c's map has left to run, so
        // job 2's map waits for c, and neither a nor b stays idle: job 1's
        // maps run where they are stored.
        let mut c = node("c", "r1", 0);
        c.running = vec![running_map(3, 0, 0.0)];
        let mut j3 = job(3, 1);
        j3.pending = 0;
        j3.pending_maps = 0;
        j3.running = 1;
        j3.running_maps = 1;
        j3.avg_map_time = 0.2;
        let fresh = || {
            view(
                vec![node("a", "r1", 1), node("b", "r1", 1), c.clone()],
                vec![job(1, 2), job(2, 1), j3.clone()],
                vec![
                    map(1, 0, 10, &["a"], &[]),
                    map(1, 1, 11, &["b"], &[]),
                    map(2, 0, 12, &["c"], &[]),
                ],
            )
        };
        let mut s = Atlas::default();
        teach(&mut s, &fresh(), Locality::RackLocal, 2.0);
        let mut v = fresh();
        let got = round(&mut s, &mut v, &["a", "b", "c"]);
        let v0 = fresh();
        let l = Lsap.assign(&v0, Trigger::JobAdded(2));
        assert!(
            local_count(&v0, &got) >= local_count(&v0, &l),
            "{got:?} vs lsap {l:?}"
        );
        assert_eq!(local_count(&v0, &got), 2, "{got:?}");
        assert_eq!(got.len(), 2, "no idle slot while a map local to it waits");
        assert!(
            got.iter().all(|a| a.task.job == 1),
            "job 2's map waits for c"
        );
        assert_eq!(v.pending.len(), 1);
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
        assert!(beat(&mut s, &v, "b").is_empty());
        v.now = 2.0;
        assert_eq!(
            beat(&mut s, &v, "b").len(),
            1,
            "waited longer than the read costs"
        );
        // A holder with nothing running never frees a slot: no wait.
        v.now = 0.0;
        v.nodes[0].running.clear();
        assert_eq!(beat(&mut s, &v, "b").len(), 1);
    }

    #[test]
    fn a_node_measured_slow_leaves_work_to_a_fast_holder() {
        // Three nodes; s runs maps three times slower than f1 and f2 (a CPU
        // quota: no load shows). A map stored on s and on idle f1 waits for
        // f1 rather than run on s, until it has waited as long as s would
        // lose.
        let nodes = vec![node("s", "r1", 1), node("f1", "r1", 1), node("f2", "r1", 1)];
        let mut v = view(
            nodes,
            vec![job(1, 1)],
            vec![map(1, 0, 10, &["s", "f1"], &[])],
        );
        let mut s = Atlas::default();
        for (n, secs) in [("s", 3.0), ("f1", 1.0), ("f2", 1.0)] {
            for _ in 0..3 {
                s.on_task_finished(
                    &v,
                    &TaskReport {
                        node: n.into(),
                        locality: Locality::NodeLocal,
                        runtime_s: secs,
                        bytes_read: 16 << 20,
                        succeeded: true,
                        ..Default::default()
                    },
                );
            }
        }
        let slow: Vec<f64> = v.nodes.iter().map(|n| s.slowdown(n)).collect();
        assert!((slow[0] - 3.0).abs() < 1e-9 && slow[1] == 1.0, "{slow:?}");
        assert_eq!(beat(&mut s.clone(), &v, "f1").len(), 1);
        assert!(beat(&mut s, &v, "s").is_empty());
        v.now = 5.0;
        assert!(beat(&mut s, &v, "s").is_empty(), "passed over for 5 s only");
        v.now = 100.0;
        assert_eq!(beat(&mut s, &v, "s").len(), 1, "it waited long enough");
    }

    #[test]
    fn shares_are_max_min_and_leftovers_are_used() {
        // Two equal jobs, eight free slots: four each.
        let nodes8 = || vec![node("a", "r1", 4), node("b", "r1", 4)];
        let maps = |j: u64, n: u32| -> Vec<PendingTask> {
            (0..n)
                .map(|i| map(j, i, 100 * j + i as u64, &["a", "b"], &[]))
                .collect()
        };
        let per_job = |a: &[Assignment], j: u64| a.iter().filter(|a| a.task.job == j).count();
        let mut v = view(
            nodes8(),
            vec![job(1, 10), job(2, 10)],
            [maps(1, 10), maps(2, 10)].concat(),
        );
        let a = round(&mut Atlas::default(), &mut v, &["a", "b"]);
        assert_eq!((per_job(&a, 1), per_job(&a, 2)), (4, 4));
        // A 10-map job and a 2-map job on four slots: 2 and 2.
        let nodes4 = vec![node("a", "r1", 2), node("b", "r1", 2)];
        let mut v = view(
            nodes4.clone(),
            vec![job(1, 10), job(2, 2)],
            [maps(1, 10), maps(2, 2)].concat(),
        );
        let a = round(&mut Atlas::default(), &mut v, &["a", "b"]);
        assert_eq!((per_job(&a, 1), per_job(&a, 2)), (2, 2));
        // A job wanting one slot keeps one; the other takes the rest.
        let mut v = view(
            nodes8(),
            vec![job(1, 10), job(2, 1)],
            [maps(1, 10), maps(2, 1)].concat(),
        );
        let a = round(&mut Atlas::default(), &mut v, &["a", "b"]);
        assert_eq!((per_job(&a, 1), per_job(&a, 2)), (7, 1));
        // Alone, a job takes every slot.
        let mut v = view(nodes4, vec![job(1, 10)], maps(1, 10));
        assert_eq!(round(&mut Atlas::default(), &mut v, &["a", "b"]).len(), 4);
    }

    #[test]
    fn overloaded_nodes_get_nothing_while_others_can_run() {
        let mut a = node("a", "r1", 2);
        a.resources.mem_total_bytes = 100;
        a.resources.mem_used_bytes = 99;
        let mut v = view(
            vec![a, node("b", "r1", 1)],
            vec![job(1, 2)],
            vec![map(1, 0, 10, &["a"], &[]), map(1, 1, 11, &["a"], &[])],
        );
        let mut s = Atlas::default();
        assert!(beat(&mut s, &v, "a").is_empty());
        assert_eq!(
            beat(&mut s, &v, "b").len(),
            1,
            "the holder is overloaded: no wait"
        );
        // With no other node free, the overloaded node is used.
        v.nodes[1].free_map_slots = 0;
        assert_eq!(beat(&mut s, &v, "a").len(), 2);
    }

    #[test]
    fn learnt_read_costs_converge_to_the_tiers_bandwidth() {
        // Reads at 25 MB/s in the rack and 6.25 MB/s across racks (the
        // emulated LAN's 200 and 50 Mbit/s), 1 GB/s from a local disk.
        let v = view(vec![node("a", "r1", 1)], vec![], vec![]);
        let mut s = Atlas::default();
        let bytes = 16u64 << 20;
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..60 {
            for (l, bw) in [
                (Locality::NodeLocal, 1e9),
                (Locality::RackLocal, 25e6),
                (Locality::OffRack, 6.25e6),
            ] {
                // +-10% noise around the tier's read time.
                let read = bytes as f64 / bw * (0.9 + 0.2 * rng.f64());
                s.on_task_finished(
                    &v,
                    &TaskReport {
                        locality: l,
                        runtime_s: read + 0.05,
                        read_s: read,
                        bytes_read: bytes,
                        succeeded: true,
                        ..Default::default()
                    },
                );
            }
        }
        let r = s.read_costs(&v);
        for (l, bw) in [(1, 1e9), (3, 25e6), (4, 6.25e6)] {
            let got = 1.0 / r[l];
            assert!((got / bw - 1.0).abs() < 0.1, "level {l}: {got} B/s vs {bw}");
        }
        // The unmeasured network tier (cached in the rack) is no dearer
        // than the measured rack tier, and no cheaper than a local read.
        assert!(r[2] <= r[3] && r[2] >= r[1], "{r:?}");
        // The compute per byte is what the reports had beyond the read.
        let c = s.seconds_per_byte(&v)[1] - r[1];
        assert!((c * bytes as f64 - 0.05).abs() < 0.01, "{c}");
    }

    #[test]
    fn one_measured_network_tier_scales_the_others_priors() {
        // The rack tier is measured 5x slower than the view's bandwidth:
        // the off-rack prior is taken 5x slower too.
        let v = view(vec![node("a", "r1", 1)], vec![], vec![]);
        let before = Atlas::default().read_costs(&v);
        let mut s = Atlas::default();
        let rack_read = (16u64 << 20) as f64 * before[3] * 5.0;
        teach(&mut s, &v, Locality::RackLocal, rack_read);
        let after = s.read_costs(&v);
        assert!(
            (after[4] / before[4] - 5.0).abs() < 1e-6,
            "{after:?} {before:?}"
        );
    }

    #[test]
    fn keeps_what_it_learnt_and_refuses_a_bad_state() {
        let mut s = Atlas::default();
        let v = view(vec![node("a", "r1", 1)], vec![], vec![]);
        teach(&mut s, &v, Locality::NodeLocal, 0.01);
        teach(&mut s, &v, Locality::OffRack, 2.0);
        let after = s.seconds_per_byte(&v);
        // Monotone: levels between two measured ones are no cheaper.
        assert!(after.windows(2).all(|w| w[0] <= w[1]), "{after:?}");
        let saved = s.save_state().unwrap();
        let mut t = Atlas::default();
        t.load_state(&saved).unwrap();
        assert_eq!(t, s);
        assert!(t.load_state("{\"version\":2,\"levels\":[]}").is_err());
        // Version 1 held whole-task times per level, not read costs.
        let v1 = saved.replace("\"version\":2", "\"version\":1");
        assert!(t.load_state(&v1).is_err());
        assert!(t.load_state("garbage").is_err());
        assert_eq!(t, s, "a refused state changes nothing");
    }

    #[test]
    fn the_asking_node_takes_a_reduce_per_free_slot() {
        let reduce = |i: u32| PendingTask {
            id: TaskId {
                job: 1,
                kind: TaskKind::Reduce,
                index: i,
            },
            kind: TaskKind::Reduce,
            block: None,
            replicas: vec![],
            input_bytes: 0,
            ..map(1, 0, 0, &[], &[])
        };
        let mut a = node("a", "r1", 0);
        a.reduce_slots = 2;
        a.free_reduce_slots = 2;
        let mut j = job(1, 0);
        j.pending = 3;
        let v = view(
            vec![a, node("b", "r1", 0)],
            vec![j],
            (0..3).map(reduce).collect(),
        );
        let got = beat(&mut Atlas::default(), &v, "a");
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got
            .iter()
            .all(|x| x.node == "a" && x.task.kind == TaskKind::Reduce));
    }

    #[test]
    fn no_parameters() {
        assert!(Atlas::from_params(&BTreeMap::new()).is_ok());
        let mut p = BTreeMap::new();
        p.insert("x".into(), "1".into());
        assert!(Atlas::from_params(&p).is_err());
    }
}
