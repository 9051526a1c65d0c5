//! A task's life in the engine after its launch: reads and fetches over
//! the network, the ends of maps, reduces and jobs, and the caches and
//! fairness they change.

use super::*;

impl Engine {
    /// A remote read over the network; the map computes when it ends.
    pub(super) fn begin_map(&mut self, run: MapRun) {
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
    pub(super) fn read_source(&self, block: u64, node: usize, level: Locality) -> usize {
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
    pub(super) fn begin_reduce(&mut self, node: usize, task: TaskId) {
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
    pub(super) fn compute_reduce(&mut self, node: usize, task: TaskId) {
        let job = &self.jobs[(task.job - 1) as usize];
        let part = job.shuffle / job.reduces.max(1) as u64;
        let d = self.cfg.model.reduce_duration(part, &mut self.rng);
        self.push(self.view.now + d, Kind::ReduceDone { node, task });
    }

    /// Schedules the network's next transfer end (older ones go stale).
    pub(super) fn net_changed(&mut self) {
        self.net_version += 1;
        if let Some(at) = self.net.next_end() {
            let v = self.net_version;
            self.push(at.max(self.view.now), Kind::Transfer(v));
        }
    }

    pub(super) fn transfers_done(&mut self) {
        let done = self.net.finish_due(self.view.now);
        for id in done {
            match self.owners.remove(&id) {
                Some(Owner::MapRead(run)) => {
                    let out = self.jobs[(run.task.job - 1) as usize].map_out();
                    let f = 1.0 + self.cfg.model.jitter * (2.0 * self.rng.f64() - 1.0);
                    let compute = self.cfg.model.map_compute_s(self.cfg.block_size, out) * f;
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

    pub(super) fn remove_pending(&mut self, pos: usize) -> PendingTask {
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
    pub(super) fn finish_map(&mut self, run: MapRun, read_s: f64) -> bool {
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

    pub(super) fn finish_reduce(&mut self, node: usize, task: TaskId) {
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
    pub(super) fn end_job(&mut self, j: usize) {
        let job = &mut self.jobs[j];
        job.end = Some(self.view.now + self.cfg.model.tail_s(job.shuffle));
        self.unfinished -= 1;
        let id = j as u64 + 1;
        self.view.jobs.retain(|jv| jv.id != id);
    }

    /// Keeps the cache map and the pending tasks reading `block` in step
    /// with the caches.
    pub(super) fn set_cached(&mut self, block: u64, node: usize, cached: bool) {
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
    pub(super) fn note_fairness(&mut self) {
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
