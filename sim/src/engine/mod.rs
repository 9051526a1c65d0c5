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
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::time::Instant;

mod event;
mod job;
mod tasks;
#[cfg(test)]
mod tests;

use event::{Event, Kind};
use job::{equal_shares, Fetching, Job, Links, MapRun, Owner};

/// Simulated time beyond which a run is declared stuck (a policy that
/// never places some task).
const TIME_LIMIT_S: f64 = 1e7;

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
            .mean_duration(Locality::NodeLocal, self.cfg.block_size, 0);
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
            let out = self.jobs[(task.job - 1) as usize].map_out();
            let m = &self.cfg.model;
            let d = m.duration(level, task.input_bytes, out, &mut self.rng);
            let read_s = d * m.read_fraction(level, task.input_bytes, out);
            self.push(now + d, Kind::MapDone { run, read_s });
        }
    }
}
