//! The event loop. Time advances from event to event (heartbeats, job
//! arrivals, transfer and task ends); at each decision point the policy
//! gets the same `ClusterView` the master would build, kept up to date in
//! place rather than rebuilt, and its assignments are launched as the
//! master launches them. Ties in time break by insertion order and every
//! random draw comes from one seeded generator, so a seed gives one
//! history.
//!
//! When the policy is asked, as the master asks it (`master/src/core`):
//! - [`SimConfig::offers`] on (the master today): on every heartbeat and
//!   task end while a job runs; when work appears (a job arrives, a job's
//!   reduces become runnable) every node with a free slot is offered in
//!   turn (`Trigger::Offer`, most pending maps cached there first, then
//!   stored there, then by name); every launch starts at once, on any node
//!   (the worker's doorbell), and every task end is reported at once.
//! - off (Hadoop's heartbeats, the papers' setting): on a heartbeat of a
//!   node with a free slot, a job arrival and a task end; a launch on a
//!   node other than the one whose call is answered starts at that node's
//!   next heartbeat.
//!
//! A job's maps read their blocks; with `model.shared_reads` a remote read
//! is a transfer over the modelled network ([`crate::network`]: node ports
//! and rack uplinks shared max-min fairly, re-evaluated as transfers start
//! and end), then the map computes. When every map is done, the job's
//! reduces become runnable (the master has no slow start: `Job::runnable`
//! offers reduces once `maps_done`); each fetches its partition of every
//! map's output from the node that ran the map, over the same network,
//! then reduces and writes. The job ends after its last task plus the
//! model's tail (the commit).

use crate::cluster::{self, BlockCache};
use crate::config::SimConfig;
use crate::metrics::SimResult;
use crate::network::{FlowId, Network};
use sched::{
    Assignment, ClusterView, JobView, Locality, NodeView, PendingTask, RunningTask, Scheduler,
    TaskId, TaskKind, TaskReport, Trigger,
};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::time::Instant;

/// Simulated time beyond which a run is declared stuck (a policy that
/// never places some task).
const TIME_LIMIT_S: f64 = 1e7;

const MIB: f64 = (1 << 20) as f64;

/// A map as it runs: where, since when, at what level, reading what.
#[derive(Debug, Clone, Copy, PartialEq)]
struct MapRun {
    node: usize,
    task: TaskId,
    level: Locality,
    start: f64,
    block: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Heartbeat(usize),
    Arrival(usize),
    /// A map launched for a later start (its node's next heartbeat) whose
    /// read goes over the network: the read starts then.
    MapBegin(MapRun),
    MapDone {
        run: MapRun,
        read_s: f64,
    },
    /// A reduce launched for a later start: its fetches start then.
    ReduceBegin {
        node: usize,
        task: TaskId,
    },
    ReduceDone {
        node: usize,
        task: TaskId,
    },
    BackgroundDone(usize),
    /// The network's next transfer end, valid while the network's version
    /// is this one (a transfer started or ended since makes it stale).
    Transfer(u64),
}

#[derive(Debug, Clone, Copy)]
struct Event {
    at: f64,
    seq: u64,
    kind: Kind,
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    /// Earliest first in a max-heap.
    fn cmp(&self, o: &Self) -> Ordering {
        o.at.total_cmp(&self.at).then(o.seq.cmp(&self.seq))
    }
}

struct Job {
    arrival: f64,
    /// Blocks its maps read, by map index.
    blocks: Vec<u64>,
    /// The node each finished map ran on (its output is fetched there).
    map_nodes: Vec<Option<usize>>,
    maps_done: u32,
    reduces: u32,
    reduces_done: u32,
    end: Option<f64>,
    task_time_sum: f64,
    /// Its shuffle bytes, split evenly over its maps' outputs and its
    /// reduces' partitions.
    shuffle: u64,
}

/// What a transfer is for.
#[derive(Debug, Clone, Copy)]
enum Owner {
    MapRead(MapRun),
    Fetch(TaskId),
}

/// A reduce while it fetches.
struct Fetching {
    node: usize,
    left: usize,
}

pub struct Engine {
    cfg: SimConfig,
    sched: Box<dyn Scheduler>,
    rng: fastrand::Rng,
    view: ClusterView,
    queue: BinaryHeap<Event>,
    seq: u64,
    replicas: Vec<Vec<usize>>,
    caches: Vec<BlockCache>,
    jobs: Vec<Job>,
    /// Where each pending task sits in `view.pending`.
    pending_pos: HashMap<TaskId, usize>,
    /// Pending tasks by the block they read, to keep `cached_on` current.
    by_block: HashMap<u64, Vec<TaskId>>,
    /// Nodes caching each block.
    cached_at: HashMap<u64, Vec<usize>>,
    node_names: Vec<String>,
    result: SimResult,
    fairness_sum: f64,
    fairness_n: u64,
    response_sum: f64,
    unfinished: usize,
    /// When each node next heartbeats: without offers, a launch for a node
    /// other than the one whose call triggered the decision reaches it
    /// then, as on Hadoop, where the master answers each worker's own calls.
    next_heartbeat: Vec<f64>,
    net: Network,
    /// Bumped whenever a transfer starts or ends: older `Transfer` events
    /// are stale.
    net_version: u64,
    owners: HashMap<FlowId, Owner>,
    fetching: HashMap<TaskId, Fetching>,
    /// When each running task started (reduces' runtimes).
    started: HashMap<TaskId, f64>,
}

/// Tasks dealt to jobs in equal shares; each job reads blocks in turn
/// (block k for its k-th task overall).
fn equal_shares(cfg: &SimConfig, tasks: usize, blocks: usize) -> Vec<Job> {
    let mut jobs = Vec::with_capacity(cfg.jobs);
    let mut next_block = 0usize;
    for j in 0..cfg.jobs {
        let n = tasks / cfg.jobs + usize::from(j < tasks % cfg.jobs);
        let bs = (0..n)
            .map(|_| {
                let b = next_block % blocks;
                next_block += 1;
                b as u64
            })
            .collect();
        jobs.push(Job::new(j as f64 * cfg.interarrival_s, bs, 0, 0));
    }
    jobs
}

impl Job {
    fn new(arrival: f64, blocks: Vec<u64>, reduces: u32, shuffle: u64) -> Self {
        Job {
            arrival,
            map_nodes: vec![None; blocks.len()],
            blocks,
            maps_done: 0,
            reduces,
            reduces_done: 0,
            end: None,
            task_time_sum: 0.0,
            shuffle,
        }
    }
}

/// The links of the modelled network, numbered: node `n`'s port in, then
/// out, then rack `r`'s uplink up, then down.
struct Links {
    nodes: usize,
    racks: usize,
}

impl Links {
    fn count(&self) -> usize {
        2 * self.nodes + 2 * self.racks
    }

    /// The links a transfer from `src` to `dst` crosses.
    fn path(&self, src: usize, dst: usize) -> Vec<usize> {
        let (rs, rd) = (
            cluster::rack_of(src, self.racks),
            cluster::rack_of(dst, self.racks),
        );
        let mut v = vec![self.nodes + src, dst];
        if rs != rd {
            v.push(2 * self.nodes + rs);
            v.push(2 * self.nodes + self.racks + rd);
        }
        v
    }
}

impl Engine {
    pub fn new(cfg: SimConfig, sched: Box<dyn Scheduler>) -> Self {
        let mut rng = fastrand::Rng::with_seed(cfg.seed);
        let tasks = cfg.task_count();
        let blocks = cfg.blocks.unwrap_or(tasks);
        let replicas =
            cluster::place_blocks(blocks, cfg.nodes, cfg.racks, cfg.replication, &mut rng);
        let node_names: Vec<String> = (0..cfg.nodes).map(cluster::node_name).collect();
        let nodes: Vec<NodeView> = (0..cfg.nodes)
            .map(|i| NodeView {
                name: node_names[i].clone(),
                rack: format!("r{}", cluster::rack_of(i, cfg.racks)),
                map_slots: cfg.slots,
                reduce_slots: cfg.reduce_slots,
                free_map_slots: cfg.slots,
                free_reduce_slots: cfg.reduce_slots,
                resources: Default::default(),
                cached_blocks: HashSet::new(),
                running: vec![],
            })
            .collect();
        let cache_blocks = (cfg.cache_size / cfg.block_size) as usize;
        let view = ClusterView::new(
            0.0,
            cfg.heartbeat_s,
            nodes,
            vec![],
            vec![],
            (cfg.model.bandwidth[3], cfg.model.bandwidth[4]),
        )
        .with_locality_index();
        let jobs = if cfg.workload.is_empty() {
            equal_shares(&cfg, tasks, blocks)
        } else {
            cfg.workload
                .iter()
                .map(|j| {
                    let bs = if j.blocks.is_empty() {
                        (0..j.maps).map(|_| rng.usize(..blocks) as u64).collect()
                    } else {
                        j.blocks.iter().map(|b| b % blocks as u64).collect()
                    };
                    Job::new(j.arrival_s, bs, j.reduces as u32, j.shuffle_bytes)
                })
                .collect()
        };
        let links = Links {
            nodes: cfg.nodes,
            racks: cfg.racks,
        };
        let m = &cfg.model;
        let port = m.bandwidth[2].max(m.bandwidth[3]);
        let mut capacity = vec![port; 2 * cfg.nodes];
        capacity.extend(std::iter::repeat_n(m.bandwidth[4], 2 * cfg.racks));
        debug_assert_eq!(capacity.len(), links.count());
        let mut e = Engine {
            next_heartbeat: vec![0.0; cfg.nodes],
            net: Network::new(capacity),
            net_version: 0,
            owners: HashMap::new(),
            fetching: HashMap::new(),
            started: HashMap::new(),
            caches: (0..cfg.nodes)
                .map(|_| BlockCache::new(cache_blocks))
                .collect(),
            unfinished: jobs.len(),
            result: SimResult {
                scheduler: sched.name().to_string(),
                ..Default::default()
            },
            cfg,
            sched,
            rng,
            view,
            queue: BinaryHeap::new(),
            seq: 0,
            replicas,
            jobs,
            pending_pos: HashMap::new(),
            by_block: HashMap::new(),
            cached_at: HashMap::new(),
            node_names,
            fairness_sum: 0.0,
            fairness_n: 0,
            response_sum: 0.0,
        };
        e.start();
        e
    }

    fn links(&self) -> Links {
        Links {
            nodes: self.cfg.nodes,
            racks: self.cfg.racks,
        }
    }

    fn push(&mut self, at: f64, kind: Kind) {
        self.seq += 1;
        self.queue.push(Event {
            at,
            seq: self.seq,
            kind,
        });
    }

    /// Busy slots, heartbeats (staggered over one interval) and arrivals.
    fn start(&mut self) {
        let total = self.cfg.nodes * self.cfg.slots as usize;
        let busy = total - self.cfg.idle_slots().min(total);
        // Which slots are busy: a seeded shuffle of all of them.
        let mut slots: Vec<usize> = (0..total).collect();
        self.rng.shuffle(&mut slots);
        let mean = self
            .cfg
            .model
            .mean_duration(Locality::NodeLocal, self.cfg.block_size);
        for &s in &slots[..busy] {
            let node = s / self.cfg.slots as usize;
            self.view.nodes[node].free_map_slots -= 1;
            let at = self.rng.f64() * mean;
            self.push(at, Kind::BackgroundDone(node));
        }
        for n in 0..self.cfg.nodes {
            let at = self.rng.f64() * self.cfg.heartbeat_s;
            self.next_heartbeat[n] = at;
            self.push(at, Kind::Heartbeat(n));
        }
        for j in 0..self.jobs.len() {
            let at = self.jobs[j].arrival;
            self.push(at, Kind::Arrival(j));
        }
    }

    /// Drops the view's locality index, so that the policies scan every
    /// pending task as they do without one (for tests: the decisions must
    /// be the same).
    pub fn without_locality_index(mut self) -> Self {
        self.view.locality_index = None;
        self
    }

    /// Whether the policy is asked on this node's heartbeat or task end.
    fn worth_asking(&self, n: usize) -> bool {
        if self.cfg.offers {
            // The master asks whenever a job runs (learning policies watch
            // the nodes on every heartbeat).
            !self.view.jobs.is_empty()
        } else {
            let node = &self.view.nodes[n];
            (node.free_map_slots > 0 || node.free_reduce_slots > 0) && !self.view.pending.is_empty()
        }
    }

    /// Runs to the end: every job finished.
    pub fn run(mut self) -> Result<SimResult, String> {
        let wall = Instant::now();
        let first = self.jobs.iter().map(|j| j.arrival).fold(f64::MAX, f64::min);
        while self.unfinished > 0 {
            let Some(ev) = self.queue.pop() else {
                return Err("the event queue ran dry with jobs unfinished".into());
            };
            if ev.at > TIME_LIMIT_S {
                return Err(format!(
                    "{} left {} job(s) unfinished after {TIME_LIMIT_S} simulated seconds",
                    self.result.scheduler, self.unfinished
                ));
            }
            self.result.events += 1;
            self.view.now = ev.at;
            match ev.kind {
                Kind::Heartbeat(n) => {
                    if self.worth_asking(n) {
                        self.decide(Trigger::Heartbeat(self.node_names[n].clone()));
                    }
                    let next = ev.at + self.cfg.heartbeat_s;
                    self.next_heartbeat[n] = next;
                    self.push(next, Kind::Heartbeat(n));
                }
                Kind::Arrival(j) => {
                    self.arrive(j);
                    self.decide(Trigger::JobAdded(j as u64 + 1));
                    self.offer_idle();
                }
                Kind::BackgroundDone(n) => {
                    self.view.nodes[n].free_map_slots += 1;
                }
                Kind::MapBegin(run) => self.begin_map(run),
                Kind::MapDone { run, read_s } => {
                    let new_work = self.finish_map(run, read_s);
                    self.after_task(run.node, new_work);
                }
                Kind::ReduceBegin { node, task } => self.begin_reduce(node, task),
                Kind::ReduceDone { node, task } => {
                    self.finish_reduce(node, task);
                    self.after_task(node, false);
                }
                Kind::Transfer(v) => {
                    if v == self.net_version {
                        self.transfers_done();
                    }
                }
            }
        }
        let r = &mut self.result;
        let end = self.jobs.iter().filter_map(|j| j.end).fold(0.0, f64::max);
        r.makespan_s = end - first;
        r.mean_job_time_s = self
            .jobs
            .iter()
            .map(|j| j.end.unwrap_or(end) - j.arrival)
            .sum::<f64>()
            / self.jobs.len() as f64;
        r.data_locality_cost = (r.locality[2] + r.locality[3] + r.locality[4]) as f64;
        r.fairness_distance = if self.fairness_n == 0 {
            0.0
        } else {
            self.fairness_sum / self.fairness_n as f64
        };
        r.map_response_s = self.response_sum / r.maps().max(1) as f64;
        r.wall_s = wall.elapsed().as_secs_f64();
        Ok(self.result)
    }

    /// The decision a task end triggers, then the offers if it brought
    /// work (as `on_task_report`).
    fn after_task(&mut self, node: usize, new_work: bool) {
        if self.worth_asking(node) {
            self.decide(Trigger::TaskFinished(self.node_names[node].clone()));
        }
        if new_work {
            self.offer_idle();
        }
    }

    /// With offers: every node with a free slot offered to the policy, one
    /// decision each, while work is pending (`offer_idle` and
    /// `offer_order` of the master's `core/schedule.rs`).
    fn offer_idle(&mut self) {
        if !self.cfg.offers || self.view.pending.is_empty() {
            return;
        }
        let mut cached = vec![0usize; self.cfg.nodes];
        let mut stored = vec![0usize; self.cfg.nodes];
        for t in self.view.pending.iter().filter(|t| t.kind == TaskKind::Map) {
            if let Some(b) = t.block {
                for &n in self.cached_at.get(&b).into_iter().flatten() {
                    cached[n] += 1;
                }
                for &n in &self.replicas[b as usize] {
                    stored[n] += 1;
                }
            }
        }
        let mut order: Vec<usize> = (0..self.cfg.nodes)
            .filter(|&n| {
                let v = &self.view.nodes[n];
                v.free_map_slots > 0 || v.free_reduce_slots > 0
            })
            .collect();
        order.sort_by(|&a, &b| {
            cached[b]
                .cmp(&cached[a])
                .then(stored[b].cmp(&stored[a]))
                .then(self.node_names[a].cmp(&self.node_names[b]))
        });
        for n in order {
            if self.view.pending.is_empty() {
                break;
            }
            self.decide(Trigger::Offer(self.node_names[n].clone()));
        }
    }

    fn arrive(&mut self, j: usize) {
        let id = j as u64 + 1;
        let blocks = self.jobs[j].blocks.clone();
        let bytes = self.cfg.block_size;
        for (i, &b) in blocks.iter().enumerate() {
            let task = TaskId {
                job: id,
                kind: TaskKind::Map,
                index: i as u32,
            };
            let replicas: Vec<String> = self.replicas[b as usize]
                .iter()
                .map(|&n| self.node_names[n].clone())
                .collect();
            let cached_on: Vec<String> = self
                .cached_at
                .get(&b)
                .map(|v| v.iter().map(|&n| self.node_names[n].clone()).collect())
                .unwrap_or_default();
            self.pending_pos.insert(task, self.view.pending.len());
            self.by_block.entry(b).or_default().push(task);
            self.view.push_pending(PendingTask {
                id: task,
                job: id,
                kind: TaskKind::Map,
                block: Some(b),
                replicas,
                cached_on,
                input_bytes: bytes,
                avoid: vec![],
                runnable_since: self.view.now,
            });
        }
        let n = blocks.len() as u32;
        let r = self.jobs[j].reduces;
        let jv = JobView {
            id,
            name: "sim".into(),
            submit_time: self.view.now,
            pool: format!("pool{}", j % self.cfg.pools.max(1) + 1),
            order: id,
            maps_total: n,
            reduces_total: r,
            done: 0,
            running: 0,
            pending: n + r,
            running_maps: 0,
            pending_maps: n,
            avg_map_time: 0.0,
        };
        self.sched.on_job_added(&jv);
        self.view.jobs.push(jv);
    }

    fn job_view(&mut self, id: u64) -> Option<&mut JobView> {
        self.view.jobs.iter_mut().find(|j| j.id == id)
    }

    /// Asks the policy, times it, and launches what fits.
    fn decide(&mut self, trigger: Trigger) {
        let t = Instant::now();
        let live = trigger.node().and_then(|n| self.view.position(n));
        let out = self.sched.assign(&self.view, trigger);
        self.result
            .decision_ms
            .push(t.elapsed().as_secs_f64() * 1e3);
        self.result.decisions += 1;
        for a in out {
            self.launch(a, live);
        }
        self.note_fairness();
    }

    /// Launches `a`; with offers, at once wherever it goes; without,
    /// `live` (the node whose own call is being answered) starts its task
    /// now and any other node at its next heartbeat (its slot is taken from
    /// now).
    fn launch(&mut self, a: Assignment, live: Option<usize>) {
        let Some(node) = self.view.position(&a.node) else {
            return;
        };
        let Some(&pos) = self.pending_pos.get(&a.task) else {
            return;
        };
        let kind = self.view.pending[pos].kind;
        let free = match kind {
            TaskKind::Map => self.view.nodes[node].free_map_slots,
            TaskKind::Reduce => self.view.nodes[node].free_reduce_slots,
        };
        if free == 0 {
            return;
        }
        let level = self
            .view
            .locality(&self.view.pending[pos], &self.view.nodes[node]);
        let task = self.remove_pending(pos);
        let now = if self.cfg.offers || live == Some(node) {
            self.view.now
        } else {
            self.next_heartbeat[node].max(self.view.now)
        };
        let n = &mut self.view.nodes[node];
        match kind {
            TaskKind::Map => n.free_map_slots -= 1,
            TaskKind::Reduce => n.free_reduce_slots -= 1,
        }
        n.running.push(RunningTask {
            id: task.id,
            started: now,
        });
        self.started.insert(task.id, now);
        if let Some(j) = self.job_view(task.job) {
            j.pending -= 1;
            j.running += 1;
            if kind == TaskKind::Map {
                j.pending_maps -= 1;
                j.running_maps += 1;
            }
        }
        if kind == TaskKind::Reduce {
            if now > self.view.now {
                self.push(
                    now,
                    Kind::ReduceBegin {
                        node,
                        task: task.id,
                    },
                );
            } else {
                self.begin_reduce(node, task.id);
            }
            return;
        }
        let i = Locality::ALL.iter().position(|l| *l == level).unwrap_or(4);
        self.result.locality[i] += 1;
        self.response_sum += now - self.jobs[(task.job - 1) as usize].arrival;
        let run = MapRun {
            node,
            task: task.id,
            level,
            start: now,
            block: task.block.unwrap_or(0),
        };
        if self.cfg.model.shared_reads && !level.is_local() {
            if now > self.view.now {
                self.push(now, Kind::MapBegin(run));
            } else {
                self.begin_map(run);
            }
        } else {
            let d = self
                .cfg
                .model
                .duration(level, task.input_bytes, &mut self.rng);
            let read_s = d * self.cfg.model.read_fraction(level, task.input_bytes);
            self.push(now + d, Kind::MapDone { run, read_s });
        }
    }

    /// A remote read over the network; the map computes when it ends.
    fn begin_map(&mut self, run: MapRun) {
        let src = self.read_source(run.block, run.node, run.level);
        let i = Locality::ALL
            .iter()
            .position(|l| *l == run.level)
            .unwrap_or(4);
        let cap = self.cfg.model.bandwidth[i];
        let path = self.links().path(src, run.node);
        let bytes = self.cfg.block_size as f64;
        let id = self.net.start(self.view.now, path, bytes, cap);
        self.owners.insert(id, Owner::MapRead(run));
        self.net_changed();
    }

    /// The node a remote read of `block` at `level` comes from: a cached
    /// copy in the rack, a replica in the rack, else the first replica.
    fn read_source(&self, block: u64, node: usize, level: Locality) -> usize {
        let rack = |n: usize| cluster::rack_of(n, self.cfg.racks);
        let replicas = &self.replicas[block as usize];
        let same = |n: &&usize| rack(**n) == rack(node) && **n != node;
        match level {
            Locality::CacheRackLocal => self
                .cached_at
                .get(&block)
                .and_then(|v| v.iter().find(same).copied()),
            Locality::RackLocal => replicas.iter().find(same).copied(),
            _ => None,
        }
        .unwrap_or(replicas[0])
    }

    /// A reduce fetches its partition of every map's output: one transfer
    /// from each other node that ran maps of its job (its own node's share
    /// is read locally, at no network cost).
    fn begin_reduce(&mut self, node: usize, task: TaskId) {
        let j = (task.job - 1) as usize;
        let job = &self.jobs[j];
        let per = job.shuffle as f64 / job.reduces.max(1) as f64 / job.blocks.len().max(1) as f64;
        let mut from: Vec<f64> = vec![0.0; self.cfg.nodes];
        for n in job.map_nodes.iter().flatten() {
            from[*n] += per;
        }
        let mut left = 0;
        let links = self.links();
        for (src, bytes) in from.into_iter().enumerate() {
            if src == node || bytes <= 0.0 {
                continue;
            }
            let (path, cap) = if self.cfg.model.shared_reads {
                (links.path(src, node), f64::INFINITY)
            } else {
                let same =
                    cluster::rack_of(src, self.cfg.racks) == cluster::rack_of(node, self.cfg.racks);
                (vec![], self.cfg.model.bandwidth[if same { 3 } else { 4 }])
            };
            let id = self.net.start(self.view.now, path, bytes, cap);
            self.owners.insert(id, Owner::Fetch(task));
            left += 1;
        }
        if left == 0 {
            self.compute_reduce(node, task);
        } else {
            self.fetching.insert(task, Fetching { node, left });
            self.net_changed();
        }
    }

    /// The reduce function and the output write, after the fetches.
    fn compute_reduce(&mut self, node: usize, task: TaskId) {
        let job = &self.jobs[(task.job - 1) as usize];
        let part = job.shuffle / job.reduces.max(1) as u64;
        let d = self.cfg.model.reduce_duration(part, &mut self.rng);
        self.push(self.view.now + d, Kind::ReduceDone { node, task });
    }

    /// Schedules the network's next transfer end (older ones go stale).
    fn net_changed(&mut self) {
        self.net_version += 1;
        if let Some(at) = self.net.next_end() {
            let v = self.net_version;
            self.push(at.max(self.view.now), Kind::Transfer(v));
        }
    }

    fn transfers_done(&mut self) {
        let done = self.net.finish_due(self.view.now);
        for id in done {
            match self.owners.remove(&id) {
                Some(Owner::MapRead(run)) => {
                    let bytes = self.cfg.block_size as f64;
                    let f = 1.0 + self.cfg.model.jitter * (2.0 * self.rng.f64() - 1.0);
                    let compute = bytes / MIB * self.cfg.model.compute_s_per_mib * f;
                    let read_s = self.view.now - run.start;
                    self.push(self.view.now + compute, Kind::MapDone { run, read_s });
                }
                Some(Owner::Fetch(task)) => {
                    let f = self.fetching.get_mut(&task).expect("a fetching reduce");
                    f.left -= 1;
                    if f.left == 0 {
                        let node = f.node;
                        self.fetching.remove(&task);
                        self.compute_reduce(node, task);
                    }
                }
                None => {}
            }
        }
        self.net_changed();
    }

    fn remove_pending(&mut self, pos: usize) -> PendingTask {
        let task = self.view.remove_pending(pos);
        self.pending_pos.remove(&task.id);
        if let Some(moved) = self.view.pending.get(pos) {
            self.pending_pos.insert(moved.id, pos);
        }
        if let Some(v) = task.block.and_then(|b| self.by_block.get_mut(&b)) {
            v.retain(|t| *t != task.id);
        }
        task
    }

    /// Frees the slot; true when the job's reduces became runnable.
    fn finish_map(&mut self, run: MapRun, read_s: f64) -> bool {
        let MapRun {
            node,
            task,
            level,
            start,
            block,
        } = run;
        let now = self.view.now;
        self.started.remove(&task);
        let n = &mut self.view.nodes[node];
        n.free_map_slots += 1;
        n.running.retain(|r| r.id != task);
        // The read filled this node's cache, as a worker's read does.
        let evicted = self.caches[node].insert(block);
        if self.caches[node].contains(block) && self.view.nodes[node].cached_blocks.insert(block) {
            self.set_cached(block, node, true);
        }
        if let Some(old) = evicted {
            self.view.nodes[node].cached_blocks.remove(&old);
            self.set_cached(old, node, false);
        }
        let runtime = now - start;
        let j = (task.job - 1) as usize;
        let job = &mut self.jobs[j];
        job.maps_done += 1;
        job.map_nodes[task.index as usize] = Some(node);
        job.task_time_sum += runtime;
        let (done, avg) = (job.maps_done, job.task_time_sum / job.maps_done as f64);
        let maps_over = done as usize == job.blocks.len();
        let reduces = job.reduces;
        if let Some(jv) = self.job_view(task.job) {
            jv.running -= 1;
            jv.running_maps -= 1;
            jv.done += 1;
            jv.avg_map_time = avg;
        }
        let report = TaskReport {
            task,
            job_name: "sim".into(),
            node: self.node_names[node].clone(),
            locality: level,
            runtime_s: runtime,
            succeeded: true,
            bytes_read: self.cfg.block_size,
            read_s,
            ..Default::default()
        };
        self.sched.on_task_finished(&self.view, &report);
        if !maps_over {
            return false;
        }
        if reduces == 0 {
            self.end_job(j);
            return false;
        }
        let part = self.jobs[j].shuffle / reduces as u64;
        for i in 0..reduces {
            let id = TaskId {
                job: task.job,
                kind: TaskKind::Reduce,
                index: i,
            };
            self.pending_pos.insert(id, self.view.pending.len());
            self.view.push_pending(PendingTask {
                id,
                job: task.job,
                kind: TaskKind::Reduce,
                block: None,
                replicas: vec![],
                cached_on: vec![],
                input_bytes: part,
                avoid: vec![],
                runnable_since: now,
            });
        }
        true
    }

    fn finish_reduce(&mut self, node: usize, task: TaskId) {
        let now = self.view.now;
        let start = self.started.remove(&task).unwrap_or(now);
        let n = &mut self.view.nodes[node];
        n.free_reduce_slots += 1;
        n.running.retain(|r| r.id != task);
        let j = (task.job - 1) as usize;
        let job = &mut self.jobs[j];
        job.reduces_done += 1;
        let over = job.reduces_done == job.reduces;
        let part = job.shuffle / job.reduces.max(1) as u64;
        if let Some(jv) = self.job_view(task.job) {
            jv.running -= 1;
            jv.done += 1;
        }
        let report = TaskReport {
            task,
            job_name: "sim".into(),
            node: self.node_names[node].clone(),
            locality: Locality::NodeLocal,
            runtime_s: now - start,
            succeeded: true,
            bytes_read: part,
            ..Default::default()
        };
        self.sched.on_task_finished(&self.view, &report);
        if over {
            self.end_job(j);
        }
    }

    /// The job's last task is done: it ends after the model's tail.
    fn end_job(&mut self, j: usize) {
        let job = &mut self.jobs[j];
        job.end = Some(self.view.now + self.cfg.model.tail_s(job.shuffle));
        self.unfinished -= 1;
        let id = j as u64 + 1;
        self.view.jobs.retain(|jv| jv.id != id);
    }

    /// Keeps the cache map and the pending tasks reading `block` in step
    /// with the caches.
    fn set_cached(&mut self, block: u64, node: usize, cached: bool) {
        let at = self.cached_at.entry(block).or_default();
        if cached {
            at.push(node);
        } else {
            at.retain(|&n| n != node);
        }
        let Some(tasks) = self.by_block.get(&block) else {
            return;
        };
        let name = &self.node_names[node];
        for t in tasks {
            if let Some(&p) = self.pending_pos.get(t) {
                self.view.set_cached(p, name, cached);
            }
        }
    }

    /// Formula (11) of the LSAP paper with equal weights over the jobs
    /// that have work: the mean of |s_i - w_i|.
    fn note_fairness(&mut self) {
        let active: Vec<&JobView> = self
            .view
            .jobs
            .iter()
            .filter(|j| j.pending_maps + j.running_maps > 0)
            .collect();
        let running: u32 = active.iter().map(|j| j.running_maps).sum();
        if active.is_empty() || running == 0 {
            return;
        }
        let w = 1.0 / active.len() as f64;
        let d: f64 = active
            .iter()
            .map(|j| (j.running_maps as f64 / running as f64 - w).abs())
            .sum::<f64>()
            / active.len() as f64;
        self.fairness_sum += d;
        self.fairness_n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sched::{build, SchedulerSpec};

    /// Everything a run decides, not how long it took.
    fn history(r: &SimResult) -> String {
        format!(
            "{:?} {} {} {:.9} {:.9} {:.9}",
            r.locality, r.decisions, r.events, r.makespan_s, r.mean_job_time_s, r.fairness_distance
        )
    }

    /// The locality index the engine keeps in its view changes no
    /// decision of the heartbeat policies: a run without it (every policy
    /// scans the pending tasks) has the same history, with jobs arriving,
    /// blocks read again and caches filling and evicting. (lsap and
    /// lsap-fair prune their problem with it: the same optimum, ties
    /// possibly broken otherwise; see `sched::pruned`.)
    #[test]
    fn the_index_changes_no_history() {
        let cfg = SimConfig {
            nodes: 60,
            racks: 3,
            jobs: 4,
            interarrival_s: 1.5,
            cache_size: 256 << 20,
            blocks: Some(150),
            tasks: Some(400),
            seed: 11,
            ..SimConfig::default()
        };
        let mut cache_hits = 0;
        for name in sched::registry::NAMES {
            if ["lsap", "lsap-fair"].contains(name) {
                continue;
            }
            let run = |indexed: bool| {
                let s = build(&SchedulerSpec::new(name)).unwrap();
                let e = Engine::new(cfg.clone(), s);
                let e = if indexed {
                    e
                } else {
                    e.without_locality_index()
                };
                e.run().unwrap()
            };
            let (a, b) = (run(true), run(false));
            assert_eq!(history(&a), history(&b), "{name}");
            assert_eq!(a.maps(), 400, "{name}");
            cache_hits += a.locality[0];
        }
        assert!(cache_hits > 0, "the caches never served a map");
    }

    /// Concurrent remote reads share bandwidth when the model says so:
    /// later job ends; a job's tail after its last task moves its end by
    /// exactly the tail.
    #[test]
    fn shared_reads_and_the_tail_lengthen_jobs() {
        let base = SimConfig {
            nodes: 6,
            racks: 2,
            slots: 2,
            replication: 1,
            idle_ratio: 1.0,
            tasks: Some(48),
            jobs: 4,
            seed: 5,
            ..SimConfig::default()
        };
        let run = |cfg: &SimConfig| {
            Engine::new(cfg.clone(), build(&SchedulerSpec::new("fifo")).unwrap())
                .run()
                .unwrap()
        };
        let alone = run(&base);
        assert!(
            alone.locality[2..].iter().sum::<u64>() > 0,
            "{:?}",
            alone.locality
        );
        let mut shared = base.clone();
        shared.model.shared_reads = true;
        let s = run(&shared);
        assert!(
            s.mean_job_time_s > alone.mean_job_time_s,
            "{} vs {}",
            s.mean_job_time_s,
            alone.mean_job_time_s
        );
        let mut tail = base.clone();
        tail.model.tail_fixed_s = 2.0;
        let t = run(&tail);
        assert!((t.mean_job_time_s - alone.mean_job_time_s - 2.0).abs() < 1e-9);
    }

    fn exact(nodes: usize, workload: Vec<crate::config::JobSpec>) -> SimConfig {
        let mut cfg = SimConfig {
            nodes,
            racks: 1,
            slots: 1,
            reduce_slots: 1,
            replication: nodes,
            idle_ratio: 1.0,
            blocks: Some(1),
            heartbeat_s: 3.0,
            workload,
            ..SimConfig::default()
        };
        cfg.model.jitter = 0.0;
        cfg.model.shared_reads = true;
        cfg
    }

    fn fifo(cfg: &SimConfig) -> SimResult {
        Engine::new(cfg.clone(), build(&SchedulerSpec::new("fifo")).unwrap())
            .run()
            .unwrap()
    }

    /// One job by hand: two maps of one 64 MiB block stored on both nodes
    /// (node-local: 64 x 0.015 s compute + 64 MiB at 1.6 GB/s), started at
    /// its arrival (the master offers the idle nodes at once); then its one
    /// reduce fetches the other node's half of 120 MB of shuffle over the
    /// ports (60 MB at 120 MB/s: 0.5 s), then reduces 0.2 s + 120 MB in
    /// MiB x 0.01 s.
    #[test]
    fn a_job_with_a_reduce_by_hand() {
        let job = crate::config::JobSpec {
            arrival_s: 1.0,
            maps: 2,
            reduces: 1,
            shuffle_bytes: 120_000_000,
            blocks: vec![0, 0],
        };
        let mut cfg = exact(2, vec![job]);
        cfg.model.reduce_fixed_s = 0.2;
        cfg.model.reduce_s_per_mib = 0.01;
        let b = (64u64 << 20) as f64;
        let map = 64.0 * 0.015 + b / 1.6e9;
        let reduce = 0.5 + 0.2 + 120e6 / MIB * 0.01;
        let r = fifo(&cfg);
        assert!(
            (r.mean_job_time_s - (map + reduce)).abs() < 1e-9,
            "{} vs {}",
            r.mean_job_time_s,
            map + reduce
        );
        assert_eq!(r.locality[1], 2);
        // Without reduce slots the schedule is refused, not stuck.
        cfg.reduce_slots = 0;
        assert!(crate::run(&cfg, &SchedulerSpec::new("fifo"))
            .unwrap_err()
            .contains("--reduce-slots"));
    }

    /// Two reads off one node share its port out: each at half the rate
    /// while both run. Node 0 holds the block; nodes 1 and 2 read it at
    /// once (rack-local), 64 MiB each over a 120 MB/s port: 2 x 64 MiB /
    /// 120 MB/s, then compute. A third map is node-local on node 0.
    #[test]
    fn concurrent_reads_share_the_source_port() {
        let job = crate::config::JobSpec {
            arrival_s: 0.0,
            maps: 3,
            blocks: vec![0, 0, 0],
            ..Default::default()
        };
        let mut cfg = exact(3, vec![job]);
        cfg.replication = 1;
        let b = (64u64 << 20) as f64;
        let r = fifo(&cfg);
        let compute = 64.0 * 0.015;
        let shared = 2.0 * b / 120e6 + compute;
        // The job ends with its last map: the two remote ones.
        assert!(
            (r.makespan_s - shared).abs() < 1e-9,
            "{} vs {shared}",
            r.makespan_s
        );
        assert_eq!(r.locality, [0, 1, 0, 2, 0]);
    }

    /// With offers a job's first map starts at its arrival; with Hadoop's
    /// heartbeats it waits for the node's heartbeat.
    #[test]
    fn offers_launch_at_once_heartbeats_wait() {
        let job = crate::config::JobSpec {
            arrival_s: 0.5,
            maps: 1,
            blocks: vec![0],
            ..Default::default()
        };
        let mut cfg = exact(1, vec![job]);
        let alone = cfg.model.mean_duration(Locality::NodeLocal, cfg.block_size);
        let r = fifo(&cfg);
        assert!((r.mean_job_time_s - alone).abs() < 1e-9);
        assert!(r.map_response_s.abs() < 1e-12);
        cfg.offers = false;
        let r = fifo(&cfg);
        assert!(r.map_response_s > 0.0, "{}", r.map_response_s);
        assert!((r.mean_job_time_s - alone - r.map_response_s).abs() < 1e-9);
    }
}
