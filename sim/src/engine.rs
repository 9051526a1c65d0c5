//! The event loop. Time advances from event to event (heartbeats, job
//! arrivals, task ends); at each decision point the policy gets the same
//! `ClusterView` the master would build, kept up to date in place rather
//! than rebuilt, and its assignments are launched as the master launches
//! them: at once, if the node has a free slot and the task is still
//! pending. Ties in time break by insertion order and every random draw
//! comes from one seeded generator, so a seed gives one history.

use crate::cluster::{self, BlockCache};
use crate::config::SimConfig;
use crate::metrics::SimResult;
use common::sched::{
    Assignment, ClusterView, JobView, Locality, NodeView, PendingTask, RunningTask, Scheduler,
    TaskId, TaskKind, TaskReport, Trigger,
};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::time::Instant;

/// Simulated time beyond which a run is declared stuck (a policy that
/// never places some task).
const TIME_LIMIT_S: f64 = 1e7;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Heartbeat(usize),
    Arrival(usize),
    MapDone {
        node: usize,
        task: TaskId,
        level: Locality,
        start: f64,
        block: u64,
    },
    BackgroundDone(usize),
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
    done: u32,
    end: Option<f64>,
    task_time_sum: f64,
    /// Its shuffle bytes: the model's tail after its last map.
    shuffle: u64,
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
    /// When each node next heartbeats: a launch for a node other than the
    /// one whose call triggered the decision reaches it then, as on the
    /// real cluster, where the master answers each worker's own calls.
    next_heartbeat: Vec<f64>,
    /// Remote reads running into each node, and off-rack reads crossing
    /// each rack's uplink (the model's shared bandwidth).
    remote_in: Vec<u32>,
    uplink: Vec<u32>,
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
        jobs.push(Job {
            arrival: j as f64 * cfg.interarrival_s,
            blocks: bs,
            done: 0,
            end: None,
            task_time_sum: 0.0,
            shuffle: 0,
        });
    }
    jobs
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
                reduce_slots: 0,
                free_map_slots: cfg.slots,
                free_reduce_slots: 0,
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
                .map(|j| Job {
                    arrival: j.arrival_s,
                    blocks: (0..j.maps).map(|_| rng.usize(..blocks) as u64).collect(),
                    done: 0,
                    end: None,
                    task_time_sum: 0.0,
                    shuffle: j.shuffle_bytes,
                })
                .collect()
        };
        let mut e = Engine {
            next_heartbeat: vec![0.0; cfg.nodes],
            remote_in: vec![0; cfg.nodes],
            uplink: vec![0; cfg.racks.max(1)],
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
                    if self.view.nodes[n].free_map_slots > 0 && !self.view.pending.is_empty() {
                        self.decide(Trigger::Heartbeat(self.node_names[n].clone()));
                    }
                    let next = ev.at + self.cfg.heartbeat_s;
                    self.next_heartbeat[n] = next;
                    self.push(next, Kind::Heartbeat(n));
                }
                Kind::Arrival(j) => {
                    self.arrive(j);
                    self.decide(Trigger::JobAdded(j as u64 + 1));
                }
                Kind::BackgroundDone(n) => {
                    self.view.nodes[n].free_map_slots += 1;
                }
                Kind::MapDone {
                    node,
                    task,
                    level,
                    start,
                    block,
                } => {
                    self.finish(node, task, level, start, block);
                    if !self.view.pending.is_empty() {
                        self.decide(Trigger::TaskFinished(self.node_names[node].clone()));
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
        let jv = JobView {
            id,
            name: "sim".into(),
            submit_time: self.view.now,
            pool: format!("pool{}", j % self.cfg.pools.max(1) + 1),
            order: id,
            maps_total: n,
            reduces_total: 0,
            done: 0,
            running: 0,
            pending: n,
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

    /// Launches `a`; `live`: the node whose own call is being answered,
    /// which starts its task now; any other node starts it at its next
    /// heartbeat (its slot is taken from now).
    fn launch(&mut self, a: Assignment, live: Option<usize>) {
        let Some(node) = self.view.position(&a.node) else {
            return;
        };
        let Some(&pos) = self.pending_pos.get(&a.task) else {
            return;
        };
        if self.view.nodes[node].free_map_slots == 0 {
            return;
        }
        let level = self
            .view
            .locality(&self.view.pending[pos], &self.view.nodes[node]);
        let task = self.remove_pending(pos);
        let block = task.block.unwrap_or(0);
        let remote = !level.is_local();
        let rack = cluster::rack_of(node, self.cfg.racks);
        let d = if self.cfg.model.shared_reads && remote {
            let mut sharers = self.remote_in[node];
            if level == Locality::OffRack {
                sharers = sharers.max(self.uplink[rack]);
            }
            self.cfg
                .model
                .duration_shared(level, task.input_bytes, sharers, &mut self.rng)
        } else {
            self.cfg
                .model
                .duration(level, task.input_bytes, &mut self.rng)
        };
        if remote {
            self.remote_in[node] += 1;
            if level == Locality::OffRack {
                self.uplink[rack] += 1;
            }
        }
        let now = if live == Some(node) {
            self.view.now
        } else {
            self.next_heartbeat[node].max(self.view.now)
        };
        let n = &mut self.view.nodes[node];
        n.free_map_slots -= 1;
        n.running.push(RunningTask {
            id: task.id,
            started: now,
        });
        if let Some(j) = self.job_view(task.job) {
            j.pending -= 1;
            j.pending_maps -= 1;
            j.running += 1;
            j.running_maps += 1;
        }
        let i = Locality::ALL.iter().position(|l| *l == level).unwrap_or(4);
        self.result.locality[i] += 1;
        self.response_sum += now - self.jobs[(task.job - 1) as usize].arrival;
        self.push(
            now + d,
            Kind::MapDone {
                node,
                task: task.id,
                level,
                start: now,
                block,
            },
        );
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

    fn finish(&mut self, node: usize, task: TaskId, level: Locality, start: f64, block: u64) {
        let now = self.view.now;
        if !level.is_local() {
            self.remote_in[node] = self.remote_in[node].saturating_sub(1);
            if level == Locality::OffRack {
                let rack = cluster::rack_of(node, self.cfg.racks);
                self.uplink[rack] = self.uplink[rack].saturating_sub(1);
            }
        }
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
        job.done += 1;
        job.task_time_sum += runtime;
        let (done, avg) = (job.done, job.task_time_sum / job.done as f64);
        let finished = done as usize == job.blocks.len();
        if finished {
            job.end = Some(now + self.cfg.model.tail_s(job.shuffle));
            self.unfinished -= 1;
        }
        if let Some(jv) = self.job_view(task.job) {
            jv.running -= 1;
            jv.running_maps -= 1;
            jv.done = done;
            jv.avg_map_time = avg;
        }
        if finished {
            self.view.jobs.retain(|jv| jv.id != task.job);
        }
        let report = TaskReport {
            task,
            job_name: "sim".into(),
            node: self.node_names[node].clone(),
            locality: level,
            runtime_s: runtime,
            succeeded: true,
            bytes_read: self.cfg.block_size,
            read_s: runtime * self.cfg.model.read_fraction(level, self.cfg.block_size),
            ..Default::default()
        };
        self.sched.on_task_finished(&self.view, &report);
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
    use common::sched::{build, SchedulerSpec};

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
    /// possibly broken otherwise; see `common::sched::pruned`.)
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
        for name in common::sched::registry::NAMES {
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
    /// the same decisions (durations are longer, not reordered at launch)
    /// and later job ends; a job's tail after its last map moves its end by
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
}
