//! The master's state and every operation on it, as plain functions over
//! plain data: the gRPC layer only converts, so tests drive this directly.
//!
//! One `std::sync::Mutex` guards it (see `service.rs`): nothing async happens
//! while it is held, and the only slow step inside is the edit-log fsync,
//! which must serialise namespace changes anyway, as HDFS's namesystem lock does.

mod pins;
mod views;

use crate::editlog::EditLog;
use crate::error::{MasterError, Result};
use crate::membership::{next_epoch, WorkerEntry};
use crate::namespace::{BlockMeta, Edit, FileMeta, Namespace};
use common::config::{validate_block_size, validate_replication, ClusterConfig};
use common::path::DfsPath;
use common::placement::{choose_targets, Candidate};
use proto::{command::Kind, Command};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

/// Ids reserved per edit-log record: one fsync per this many blocks.
const BLOCK_ID_BATCH: u64 = 1024;
/// Most blocks one file may have, as HDFS's `fs-limits.max-blocks-per-file`.
const MAX_BLOCKS_PER_FILE: usize = 10_000;

/// A file being written: invisible until completed.
#[derive(Debug)]
struct PendingFile {
    path: String,
    replication: u32,
    block_size: u64,
    overwrite: bool,
    writer: Option<String>,
    blocks: Vec<u64>,
}

/// Where a namespace block belongs, for replication decisions.
#[derive(Debug, Clone, Copy)]
struct BlockOwner {
    meta: BlockMeta,
    replication: u32,
}

pub struct MasterState {
    pub cfg: ClusterConfig,
    ns: Namespace,
    log: EditLog,
    pending: HashMap<u64, PendingFile>,
    /// Every block of a pending file, so block reports do not delete it.
    pending_blocks: HashSet<u64>,
    /// Every block of the namespace.
    owners: HashMap<u64, BlockOwner>,
    /// Block → live workers storing it (rebuilt from block reports).
    locations: HashMap<u64, BTreeSet<String>>,
    /// Block → live workers holding it in their LRU cache (from cache reports).
    cached: HashMap<u64, BTreeSet<String>>,
    /// Block → the worker whose cache pins it (see `state/pins.rs`).
    pins: BTreeMap<u64, String>,
    pub workers: BTreeMap<String, WorkerEntry>,
    /// Replications in flight, not re-issued before they time out.
    replicating: HashMap<u64, Instant>,
    /// No re-replication before this: workers need time to report after a
    /// master restart (HDFS's safe mode).
    safe_until: Instant,
    rng: fastrand::Rng,
    pub jobs: Jobs,
    /// Counters and histograms only `/metrics` reads (see `stats.rs`).
    pub stats: crate::stats::Stats,
    /// Recent resource vectors per worker, for the web UI's sparklines.
    pub history: crate::history::ResourceHistory,
}

impl MasterState {
    pub fn open(cfg: ClusterConfig, now: Instant) -> Result<Self> {
        let (log, ns) = EditLog::open(&cfg.master.data_dir, cfg.master.snapshot_every)?;
        let mut owners = HashMap::new();
        for f in ns.files.values() {
            for b in &f.blocks {
                owners.insert(
                    b.id,
                    BlockOwner {
                        meta: *b,
                        replication: f.replication,
                    },
                );
            }
        }
        let safe_until = now + cfg.heartbeat.expiry();
        let mut jobs = Jobs::new(cfg.scheduler.spec(), now)?;
        crate::schedstate::load(&cfg.master.data_dir, jobs.scheduler.as_mut());
        let (next_id, _interrupted) =
            crate::recovery::recover(&cfg.master.data_dir.join("history"), common::now_ms());
        jobs.next_id = next_id;
        let mut st = MasterState {
            jobs,
            cfg,
            ns,
            log,
            pending: HashMap::new(),
            pending_blocks: HashSet::new(),
            owners,
            locations: HashMap::new(),
            cached: HashMap::new(),
            pins: BTreeMap::new(),
            workers: BTreeMap::new(),
            replicating: HashMap::new(),
            safe_until,
            rng: fastrand::Rng::new(),
            stats: Default::default(),
            history: Default::default(),
        };
        // No job survives a restart (see `recovery.rs`): what they staged
        // is garbage.
        if !st.ns.matching("/_staging").is_empty() {
            st.delete("/_staging")?;
        }
        Ok(st)
    }

    fn commit(&mut self, edit: Edit) -> Result<()> {
        self.log.append(&edit)?;
        self.ns.apply(&edit);
        self.log.maybe_checkpoint(&self.ns)?;
        Ok(())
    }

    pub fn sync(&mut self) -> Result<()> {
        crate::schedstate::save(&self.cfg.master.data_dir, self.jobs.scheduler.as_ref());
        Ok(self.log.sync()?)
    }

    // ------------------------------------------------------------ membership

    pub fn register(
        &mut self,
        req: proto::RegisterRequest,
        now: Instant,
    ) -> Result<proto::RegisterResponse> {
        if req.protocol_version != common::PROTOCOL_VERSION {
            return Err(MasterError::FailedPrecondition(format!(
                "worker {} speaks protocol version {}, this master speaks {}",
                req.name,
                req.protocol_version,
                common::PROTOCOL_VERSION
            )));
        }
        if self.cfg.worker(&req.name).is_none() {
            return Err(MasterError::FailedPrecondition(format!(
                "worker {:?} is not in the master's cluster.toml",
                req.name
            )));
        }
        // Forget whatever the previous incarnation reported or ran.
        self.drop_worker_tables(&req.name);
        self.worker_lost(&req.name, now);
        let prev_epoch = self.workers.get(&req.name).map_or(0, |w| w.epoch);
        let epoch = next_epoch(prev_epoch);
        let mut delete_blocks = Vec::new();
        let mut stored = 0;
        for b in &req.blocks {
            if self.is_known_block(b.id, b.len) {
                self.locations
                    .entry(b.id)
                    .or_default()
                    .insert(req.name.clone());
                stored += 1;
            } else {
                delete_blocks.push(b.id);
            }
        }
        for id in &req.cached {
            if self.owners.contains_key(id) {
                self.cached.entry(*id).or_default().insert(req.name.clone());
            }
        }
        tracing::info!(worker = %req.name, addr = %req.addr, rack = %req.rack, epoch,
            blocks = stored, orphans = delete_blocks.len(), "worker registered");
        self.workers.insert(
            req.name.clone(),
            WorkerEntry {
                name: req.name.clone(),
                addr: req.addr,
                rack: req.rack,
                map_slots: req.map_slots,
                reduce_slots: req.reduce_slots,
                free_map_slots: req.map_slots,
                free_reduce_slots: req.reduce_slots,
                cache_capacity_bytes: req.cache_capacity_bytes,
                cache_used_bytes: req.cache_used_bytes,
                epoch,
                alive: true,
                draining: false,
                last_heartbeat: now,
                last_heartbeat_ms: common::now_ms(),
                resources: req.resources.unwrap_or_default(),
                commands: Vec::new(),
                blocks: stored,
            },
        );
        // Cleanups this worker may have missed (it was cut off or dead when
        // the job ended): ended jobs leave no map outputs behind.
        let ended: Vec<u64> = self
            .jobs
            .jobs
            .values()
            .filter(|j| j.state.is_final())
            .map(|j| j.id)
            .collect();
        if let Some(w) = self.workers.get_mut(&req.name) {
            for id in ended {
                w.commands.push(Command {
                    kind: Some(Kind::CleanupJob(id)),
                });
            }
        }
        self.repin_on_register(&req.name);
        Ok(proto::RegisterResponse {
            epoch,
            heartbeat_interval_ms: self.cfg.heartbeat.interval.as_millis() as u64,
            delete_blocks,
        })
    }

    /// A block a worker may keep: in the namespace with that length, or part
    /// of a file being written.
    fn is_known_block(&self, id: u64, len: u64) -> bool {
        self.pending_blocks.contains(&id) || self.owners.get(&id).is_some_and(|o| o.meta.len == len)
    }

    fn drop_worker_tables(&mut self, name: &str) {
        for set in self.locations.values_mut() {
            set.remove(name);
        }
        for set in self.cached.values_mut() {
            set.remove(name);
        }
    }

    pub fn heartbeat(
        &mut self,
        req: proto::HeartbeatRequest,
        now: Instant,
    ) -> proto::HeartbeatResponse {
        let stale = match self.workers.get(&req.name) {
            None => true,
            Some(w) => !w.alive || w.epoch != req.epoch,
        };
        if stale {
            // A zombie (paused past its expiry) or a restarted master's old
            // worker: worth a line, and rare.
            tracing::info!(worker = %req.name, epoch = req.epoch, "stale heartbeat fenced; asking to re-register");
            return proto::HeartbeatResponse {
                reregister: true,
                commands: vec![],
            };
        }
        let mut commands = Vec::new();
        for b in &req.blocks_added {
            if self.is_known_block(b.id, b.len) {
                self.locations
                    .entry(b.id)
                    .or_default()
                    .insert(req.name.clone());
            } else {
                commands.push(Command {
                    kind: Some(Kind::DeleteBlock(b.id)),
                });
            }
        }
        for id in &req.blocks_removed {
            if let Some(s) = self.locations.get_mut(id) {
                s.remove(&req.name);
            }
        }
        for id in &req.cache_added {
            if self.owners.contains_key(id) {
                self.cached.entry(*id).or_default().insert(req.name.clone());
            }
        }
        for id in &req.cache_removed {
            if let Some(s) = self.cached.get_mut(id) {
                s.remove(&req.name);
            }
        }
        let blocks = self
            .locations
            .values()
            .filter(|s| s.contains(&req.name))
            .count();
        let w = self.workers.get_mut(&req.name).expect("checked above");
        w.last_heartbeat = now;
        w.last_heartbeat_ms = common::now_ms();
        w.free_map_slots = req.free_map_slots;
        w.free_reduce_slots = req.free_reduce_slots;
        w.cache_used_bytes = req.cache_used_bytes;
        w.blocks = blocks;
        if let Some(r) = req.resources {
            w.resources = r;
        }
        if req.draining && !w.draining {
            tracing::info!(worker = %req.name, "worker draining: no new tasks");
        }
        w.draining = req.draining || req.leaving;
        if req.leaving {
            self.mark_dead(&req.name, now, "worker left (graceful shutdown)");
            return proto::HeartbeatResponse {
                reregister: false,
                commands,
            };
        }
        self.schedule(Trigger::Heartbeat(req.name.clone()), now);
        let w = self.workers.get_mut(&req.name).expect("checked above");
        commands.append(&mut w.commands);
        proto::HeartbeatResponse {
            reregister: false,
            commands,
        }
    }

    /// Marks silent workers dead and forgets their replicas and cache
    /// entries, so that re-replication sees the loss. Returns the names.
    pub fn expire_workers(&mut self, now: Instant) -> Vec<String> {
        let expiry = self.cfg.heartbeat.expiry();
        let dead: Vec<String> = self
            .workers
            .values()
            .filter(|w| w.alive && now.saturating_duration_since(w.last_heartbeat) > expiry)
            .map(|w| w.name.clone())
            .collect();
        let why = format!("missed {} heartbeats", self.cfg.heartbeat.dead_after);
        for name in &dead {
            self.mark_dead(name, now, &why);
        }
        dead
    }

    /// Forgets a worker's replicas and cache entries, so that re-replication
    /// sees the loss, and re-queues what it ran or holds for running jobs.
    fn mark_dead(&mut self, name: &str, now: Instant, why: &str) {
        tracing::warn!(worker = %name, "worker marked dead: {why}");
        self.drop_worker_tables(name);
        if let Some(w) = self.workers.get_mut(name) {
            w.alive = false;
            w.commands.clear();
            w.free_map_slots = 0;
            w.free_reduce_slots = 0;
        }
        self.worker_lost(name, now);
        self.move_pins_of(name);
    }

    /// Re-queues what `name` ran or holds for running jobs, and kills the
    /// reduce attempts that re-queueing made useless.
    fn worker_lost(&mut self, name: &str, now: Instant) {
        let mut kills = Vec::new();
        for j in self.jobs.jobs.values_mut() {
            kills.extend(j.worker_lost(name, now));
            kills.append(&mut j.kills);
        }
        for (w, t) in kills {
            if let Some(e) = self.workers.get_mut(&w).filter(|e| e.alive) {
                e.commands.push(Command {
                    kind: Some(Kind::KillTask(t)),
                });
            }
        }
    }

    pub fn report_bad_block(&mut self, worker: &str, block: u64, reason: &str) {
        tracing::warn!(
            worker,
            block,
            reason,
            "corrupt replica reported; it will be replaced"
        );
        if let Some(s) = self.locations.get_mut(&block) {
            s.remove(worker);
        }
        if let Some(s) = self.cached.get_mut(&block) {
            s.remove(worker);
        }
        self.replicating.remove(&block);
    }

    // ------------------------------------------------------------ replication

    fn alive_candidates(&self) -> Vec<Candidate> {
        self.workers
            .values()
            .filter(|w| w.alive)
            .map(|w| Candidate {
                name: w.name.clone(),
                rack: w.rack.clone(),
            })
            .collect()
    }

    fn candidate(&self, name: &str) -> Option<Candidate> {
        self.workers.get(name).map(|w| Candidate {
            name: w.name.clone(),
            rack: w.rack.clone(),
        })
    }

    /// Brings every block back to its replication factor, rack-aware, and
    /// trims extra replicas. Returns how many commands were issued.
    pub fn replication_scan(&mut self, now: Instant) -> usize {
        if now < self.safe_until {
            return 0;
        }
        // A replication that did not show up in a block report by then is retried.
        let timeout = self.cfg.heartbeat.interval * 10 + Duration::from_secs(10);
        self.replicating
            .retain(|_, t| now.saturating_duration_since(*t) < timeout);
        let nodes = self.alive_candidates();
        let mut issued = 0;
        let mut ids: Vec<u64> = self.owners.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let owner = self.owners[&id];
            let live: Vec<String> = self
                .locations
                .get(&id)
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default();
            let want = owner.replication as usize;
            if live.len() >= want {
                self.replicating.remove(&id);
            }
            if live.is_empty() || self.replicating.contains_key(&id) {
                continue;
            }
            if live.len() < want {
                let existing: Vec<Candidate> =
                    live.iter().filter_map(|n| self.candidate(n)).collect();
                let targets = choose_targets(
                    &nodes,
                    &existing,
                    &HashSet::new(),
                    None,
                    want - live.len(),
                    &mut self.rng,
                );
                if targets.is_empty() {
                    continue;
                }
                let source = &live[self.rng.usize(..live.len())];
                let addrs: Vec<String> = targets
                    .iter()
                    .filter_map(|t| self.workers.get(&t.name).map(|w| w.addr.clone()))
                    .collect();
                tracing::info!(block = id, from = %source, to = ?targets.iter().map(|t| &t.name).collect::<Vec<_>>(),
                    "re-replicating under-replicated block");
                self.workers
                    .get_mut(source)
                    .expect("live")
                    .commands
                    .push(Command {
                        kind: Some(Kind::Replicate(proto::ReplicateBlock {
                            block: Some(to_info(&owner.meta)),
                            targets: addrs,
                        })),
                    });
                self.replicating.insert(id, now);
                issued += 1;
            } else if live.len() > want {
                // Drop a replica from the rack holding the most, so rack spread survives.
                let mut by_rack: HashMap<String, usize> = HashMap::new();
                for n in &live {
                    if let Some(c) = self.candidate(n) {
                        *by_rack.entry(c.rack).or_default() += 1;
                    }
                }
                let victim = live
                    .iter()
                    .max_by_key(|n| self.candidate(n).map(|c| by_rack[&c.rack]).unwrap_or(0))
                    .cloned()
                    .expect("non-empty");
                tracing::info!(block = id, worker = %victim, "removing an excess replica");
                self.locations.get_mut(&id).expect("live").remove(&victim);
                self.workers
                    .get_mut(&victim)
                    .expect("live")
                    .commands
                    .push(Command {
                        kind: Some(Kind::DeleteBlock(id)),
                    });
                issued += 1;
            }
        }
        issued
    }

    /// Paths with an open write (a lease not yet completed or abandoned),
    /// sorted: what the simulation's leak check looks at.
    pub fn open_writes(&self) -> Vec<String> {
        let mut v: Vec<String> = self.pending.values().map(|p| p.path.clone()).collect();
        v.sort();
        v
    }

    pub fn under_replicated(&self) -> usize {
        self.owners
            .iter()
            .filter(|(id, o)| {
                self.locations.get(id).map_or(0, |s| s.len()) < o.replication as usize
            })
            .count()
    }

    // ------------------------------------------------------------ namespace

    pub fn create_file(
        &mut self,
        req: proto::CreateFileRequest,
    ) -> Result<proto::CreateFileResponse> {
        let path = DfsPath::parse_file(&req.path)?;
        let replication = if req.replication == 0 {
            self.cfg.dfs.replication
        } else {
            req.replication
        };
        validate_replication(replication).map_err(MasterError::InvalidArgument)?;
        let block_size = if req.block_size == 0 {
            self.cfg.dfs.block_size
        } else {
            req.block_size
        };
        validate_block_size(block_size).map_err(MasterError::InvalidArgument)?;
        self.check_creatable(path.as_str(), req.overwrite)?;
        self.check_staging_open(path.as_str())?;
        if self.pending.values().any(|p| p.path == path.as_str()) {
            return Err(MasterError::AlreadyExists(format!(
                "{path} is being written by another client"
            )));
        }
        let lease = loop {
            let l = self.rng.u64(1..);
            if !self.pending.contains_key(&l) {
                break l;
            }
        };
        self.pending.insert(
            lease,
            PendingFile {
                path: path.to_string(),
                replication,
                block_size,
                overwrite: req.overwrite,
                writer: (!req.writer.is_empty()).then_some(req.writer),
                blocks: Vec::new(),
            },
        );
        Ok(proto::CreateFileResponse {
            lease,
            replication,
            block_size,
        })
    }

    /// A part staged for a job that ended (a late attempt, or one from
    /// before a master restart) is refused: nothing would ever commit or
    /// remove it.
    fn check_staging_open(&self, path: &str) -> Result<()> {
        let Some(rest) = path.strip_prefix("/_staging/job-") else {
            return Ok(());
        };
        let id = rest.split('/').next().and_then(|n| n.parse::<u64>().ok());
        match id.and_then(|id| self.jobs.jobs.get(&id)) {
            Some(j) if !j.state.is_final() => Ok(()),
            _ => Err(MasterError::FailedPrecondition(format!(
                "cannot write {path}: its job is not running"
            ))),
        }
    }

    fn check_creatable(&self, path: &str, overwrite: bool) -> Result<()> {
        if self.ns.files.contains_key(path) && !overwrite {
            return Err(MasterError::AlreadyExists(format!("{path} already exists")));
        }
        if self.ns.is_dir(path) {
            return Err(MasterError::AlreadyExists(format!("{path} is a directory")));
        }
        if let Some(a) = self.ns.file_ancestor(path) {
            return Err(MasterError::FailedPrecondition(format!(
                "cannot create {path}: its parent {a} is a file"
            )));
        }
        Ok(())
    }

    fn pending_mut(&mut self, lease: u64, path: &str) -> Result<&mut PendingFile> {
        match self.pending.get_mut(&lease) {
            Some(p) if p.path == path => Ok(p),
            _ => Err(MasterError::FailedPrecondition(format!(
                "no write of {path} is open under this lease (the master may have restarted): write the file again"
            ))),
        }
    }

    pub fn add_block(&mut self, req: proto::AddBlockRequest) -> Result<proto::AddBlockResponse> {
        let path = DfsPath::parse_file(&req.path)?;
        let p = self.pending_mut(req.lease, path.as_str())?;
        if p.blocks.len() >= MAX_BLOCKS_PER_FILE {
            return Err(MasterError::InvalidArgument(format!(
                "{path} would have more than {MAX_BLOCKS_PER_FILE} blocks: use a bigger block size"
            )));
        }
        let replication = p.replication;
        let writer = p.writer.clone();
        let count = if req.count == 0 {
            replication as usize
        } else {
            (req.count as usize).min(common::config::MAX_REPLICATION as usize)
        };
        let exclude: HashSet<String> = req.exclude.into_iter().collect();
        let nodes = self.alive_candidates();
        let targets = choose_targets(
            &nodes,
            &[],
            &exclude,
            writer.as_deref(),
            count,
            &mut self.rng,
        );
        if targets.is_empty() {
            return Err(MasterError::Unavailable(
                "no live worker can take a block: check `mr cluster status`".into(),
            ));
        }
        let id = self.allocate_block_id()?;
        self.pending_blocks.insert(id);
        self.pending
            .get_mut(&req.lease)
            .expect("checked")
            .blocks
            .push(id);
        Ok(proto::AddBlockResponse {
            block_id: id,
            targets: targets
                .iter()
                .map(|t| self.workers[&t.name].addr_proto())
                .collect(),
        })
    }

    fn allocate_block_id(&mut self) -> Result<u64> {
        if self.ns.next_block_id == 0 {
            self.ns.next_block_id = 1;
        }
        if self.ns.next_block_id >= self.ns.reserved_block_ids {
            let upto = self.ns.next_block_id + BLOCK_ID_BATCH;
            self.log.append(&Edit::ReserveBlockIds { upto })?;
            self.ns.reserved_block_ids = upto;
        }
        let id = self.ns.next_block_id;
        self.ns.next_block_id += 1;
        Ok(id)
    }

    pub fn complete_file(&mut self, req: proto::CompleteFileRequest) -> Result<()> {
        let path = DfsPath::parse_file(&req.path)?;
        let p = self.pending_mut(req.lease, path.as_str())?;
        let mut blocks = Vec::with_capacity(req.blocks.len());
        for cb in &req.blocks {
            let b = cb.block.as_ref().ok_or_else(|| {
                MasterError::InvalidArgument("a completed block has no block info".into())
            })?;
            if !p.blocks.contains(&b.id) {
                return Err(MasterError::InvalidArgument(format!(
                    "block {} was not allocated to {path}",
                    b.id
                )));
            }
            if b.len == 0 || b.len > p.block_size {
                return Err(MasterError::InvalidArgument(format!(
                    "block {} has length {}, outside 1..={}",
                    b.id, b.len, p.block_size
                )));
            }
            if cb.stored_on.is_empty() {
                return Err(MasterError::InvalidArgument(format!(
                    "block {} is stored on no worker",
                    b.id
                )));
            }
            blocks.push(BlockMeta {
                id: b.id,
                len: b.len,
                crc32c: b.crc32c,
            });
        }
        let (replication, block_size, overwrite, allocated) =
            (p.replication, p.block_size, p.overwrite, p.blocks.clone());
        // Re-check: another file may have appeared since create.
        self.check_creatable(path.as_str(), overwrite)?;
        let old = self.ns.files.get(path.as_str()).cloned();
        let file = FileMeta {
            replication,
            block_size,
            blocks: blocks.clone(),
            mtime_ms: common::now_ms(),
        };
        self.commit(Edit::AddFile {
            path: path.to_string(),
            file,
        })?;
        self.pending.remove(&req.lease);
        for id in &allocated {
            self.pending_blocks.remove(id);
        }
        for (meta, cb) in blocks.iter().zip(&req.blocks) {
            self.owners.insert(
                meta.id,
                BlockOwner {
                    meta: *meta,
                    replication,
                },
            );
            let set = self.locations.entry(meta.id).or_default();
            for w in &cb.stored_on {
                if self.workers.get(w).is_some_and(|e| e.alive) {
                    set.insert(w.clone());
                }
            }
        }
        // Allocated blocks the client did not use (failed attempts) are orphans.
        let used: HashSet<u64> = blocks.iter().map(|b| b.id).collect();
        for id in allocated.into_iter().filter(|id| !used.contains(id)) {
            self.forget_block(id);
        }
        if let Some(old) = old {
            for b in old.blocks {
                self.forget_block(b.id);
            }
        }
        tracing::info!(path = %path, blocks = blocks.len(), "file completed");
        Ok(())
    }

    pub fn abandon_file(&mut self, req: proto::AbandonFileRequest) -> Result<()> {
        let path = DfsPath::parse_file(&req.path)?;
        self.pending_mut(req.lease, path.as_str())?;
        let p = self.pending.remove(&req.lease).expect("checked");
        for id in p.blocks {
            self.pending_blocks.remove(&id);
            self.forget_block(id);
        }
        Ok(())
    }

    /// Removes a block from every table and tells its holders to delete it.
    /// Holders we do not know of delete it at their next block report.
    fn forget_block(&mut self, id: u64) {
        self.owners.remove(&id);
        self.replicating.remove(&id);
        let holders: BTreeSet<String> = self
            .locations
            .remove(&id)
            .unwrap_or_default()
            .into_iter()
            .chain(self.cached.remove(&id).unwrap_or_default())
            .collect();
        for h in holders {
            if let Some(w) = self.workers.get_mut(&h) {
                w.commands.push(Command {
                    kind: Some(Kind::DeleteBlock(id)),
                });
            }
        }
    }

    /// Files at or under a path and their blocks; an error if there are none.
    fn files_under(&self, raw: &str) -> Result<(DfsPath, Vec<String>, Vec<u64>)> {
        let path = DfsPath::parse(raw)?;
        let paths = self.ns.matching(path.as_str());
        if paths.is_empty() {
            return Err(MasterError::NotFound(format!(
                "{path}: no such file or directory"
            )));
        }
        let ids = paths
            .iter()
            .flat_map(|p| self.ns.files[p].blocks.iter().map(|b| b.id))
            .collect();
        Ok((path, paths, ids))
    }

    pub fn delete(&mut self, raw: &str) -> Result<u64> {
        let (path, paths, ids) = self.files_under(raw)?;
        let n = paths.len() as u64;
        self.commit(Edit::Delete { paths })?;
        for id in ids {
            self.forget_block(id);
        }
        tracing::info!(path = %path, files = n, "deleted");
        Ok(n)
    }

    pub fn file_status(&self, raw: &str) -> Result<proto::FileStatus> {
        let path = DfsPath::parse_file(raw)?;
        let f = self.ns.files.get(path.as_str()).ok_or_else(|| {
            if self.ns.is_dir(path.as_str()) {
                MasterError::InvalidArgument(format!("{path} is a directory"))
            } else {
                MasterError::NotFound(format!("{path}: no such file"))
            }
        })?;
        Ok(proto::FileStatus {
            path: path.to_string(),
            size: f.size(),
            replication: f.replication,
            block_size: f.block_size,
            mtime_ms: f.mtime_ms,
            blocks: f
                .blocks
                .iter()
                .map(|b| proto::BlockStatus {
                    block: Some(to_info(b)),
                    replicas: self.holders(&self.locations, b.id),
                    cached_on: self.holders(&self.cached, b.id),
                    pinned_on: self.pinned_on(b.id),
                })
                .collect(),
        })
    }

    fn holders(&self, table: &HashMap<u64, BTreeSet<String>>, id: u64) -> Vec<proto::WorkerAddr> {
        table
            .get(&id)
            .into_iter()
            .flatten()
            .filter_map(|n| self.workers.get(n))
            .filter(|w| w.alive)
            .map(|w| w.addr_proto())
            .collect()
    }

    pub fn list(&self, raw: &str) -> Result<Vec<proto::ListEntry>> {
        let path = DfsPath::parse(if raw.is_empty() { "/" } else { raw })?;
        if let Some(f) = self.ns.files.get(path.as_str()) {
            return Ok(vec![entry(path.as_str(), f)]);
        }
        let prefix = path.dir_prefix();
        let mut out: Vec<proto::ListEntry> = Vec::new();
        let mut dirs: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
        for (p, f) in self.ns.files.range(prefix.clone()..) {
            let Some(rest) = p.strip_prefix(&prefix) else {
                break;
            };
            match rest.find('/') {
                None => out.push(entry(p, f)),
                Some(i) => {
                    let d = dirs.entry(format!("{prefix}{}", &rest[..i])).or_default();
                    d.0 += f.size();
                    d.1 += f.blocks.len() as u64;
                    d.2 = d.2.max(f.mtime_ms);
                }
            }
        }
        if out.is_empty() && dirs.is_empty() && !path.is_root() {
            return Err(MasterError::NotFound(format!(
                "{path}: no such file or directory"
            )));
        }
        out.extend(
            dirs.into_iter()
                .map(|(p, (size, blocks, mtime))| proto::ListEntry {
                    path: p,
                    is_dir: true,
                    size,
                    replication: 0,
                    blocks,
                    mtime_ms: mtime,
                }),
        );
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    /// `mr cache add|rm`: pins every block of the file in one worker's
    /// cache, or unpins it and drops it from every cache (`state/pins.rs`).
    pub fn cache_file(&mut self, raw: &str, cache: bool) -> Result<proto::CacheFileResponse> {
        if cache {
            self.pin_file(raw)
        } else {
            self.unpin_file(raw)
        }
    }

    /// Resizes the block cache of one worker, or of every live one. The
    /// master's copy of the capacity changes at once, so the views the
    /// scheduler sees and `cluster status` agree with what was asked; the
    /// evictions arrive with the workers' next cache reports. Not kept
    /// across a worker restart: its config's `cache` applies again.
    pub fn set_cache_capacity(&mut self, bytes: u64, worker: &str) -> Result<Vec<String>> {
        if !worker.is_empty() && !self.workers.contains_key(worker) {
            return Err(Self::bad(format!("no worker named {worker:?}")));
        }
        // Pins are never evicted: a bound below them is refused.
        for w in self.workers.values() {
            let pinned = self.pinned_bytes(&w.name);
            if w.alive && (worker.is_empty() || w.name == worker) && bytes < pinned {
                return Err(MasterError::FailedPrecondition(format!(
                    "worker {} pins {pinned} bytes in its cache, more than {bytes}: unpin first (mr cache rm)",
                    w.name
                )));
            }
        }
        let mut told = Vec::new();
        for w in self.workers.values_mut() {
            if !w.alive || !(worker.is_empty() || w.name == worker) {
                continue;
            }
            w.cache_capacity_bytes = bytes;
            w.commands.push(Command {
                kind: Some(Kind::SetCacheCapacity(bytes)),
            });
            told.push(w.name.clone());
        }
        told.sort();
        Ok(told)
    }

    pub fn cluster_status(&self) -> proto::ClusterStatusResponse {
        let mut workers: Vec<proto::WorkerStatus> = self
            .workers
            .values()
            .map(|w| proto::WorkerStatus {
                name: w.name.clone(),
                addr: w.addr.clone(),
                rack: w.rack.clone(),
                alive: w.alive,
                last_heartbeat_ms: w.last_heartbeat_ms,
                map_slots: w.map_slots,
                reduce_slots: w.reduce_slots,
                free_map_slots: w.free_map_slots,
                free_reduce_slots: w.free_reduce_slots,
                cache_used_bytes: w.cache_used_bytes,
                cache_capacity_bytes: w.cache_capacity_bytes,
                blocks: w.blocks as u64,
                resources: Some(w.resources.clone()),
                epoch: w.epoch,
                cache_pinned_bytes: self.pinned_bytes(&w.name),
            })
            .collect();
        // Configured workers that never registered are shown dead, so that a
        // worker that failed to start is visible.
        for c in &self.cfg.workers {
            if !self.workers.contains_key(&c.name) {
                workers.push(proto::WorkerStatus {
                    name: c.name.clone(),
                    addr: c.addr.clone(),
                    rack: c.rack.clone(),
                    map_slots: c.map_slots,
                    reduce_slots: c.reduce_slots,
                    cache_capacity_bytes: c.cache,
                    resources: Some(Default::default()),
                    ..Default::default()
                });
            }
        }
        workers.sort_by_key(|w| natural_key(&w.name));
        proto::ClusterStatusResponse {
            workers,
            files: self.ns.files.len() as u64,
            blocks: self.ns.block_count() as u64,
            under_replicated_blocks: self.under_replicated() as u64,
        }
    }
}

/// Sorts `w2` before `w10`.
fn natural_key(s: &str) -> (String, u64) {
    let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (head, tail) = s.split_at(s.len() - digits);
    (head.to_string(), tail.parse().unwrap_or(0))
}

fn to_info(b: &BlockMeta) -> proto::BlockInfo {
    proto::BlockInfo {
        id: b.id,
        len: b.len,
        crc32c: b.crc32c,
    }
}

fn entry(path: &str, f: &FileMeta) -> proto::ListEntry {
    proto::ListEntry {
        path: path.to_string(),
        is_dir: false,
        size: f.size(),
        replication: f.replication,
        blocks: f.blocks.len() as u64,
        mtime_ms: f.mtime_ms,
    }
}

// ---------------------------------------------------------------- jobs
//
// Everything below ties the job manager (`jobs.rs`) to the namespace, the
// block tables and the scheduler.

use crate::jobs::{staging_dir, Job, JobSpec, JobState, MapInput, Outcome, TaskStatus};
use common::sched::{
    Assignment, ClusterView, Locality, NodeView, PendingTask, Resources, RunningTask, Scheduler,
    SchedulerSpec, TaskId, TaskKind, Trigger, DEFAULT_BANDWIDTHS,
};

/// Default bytes of map output sorted in memory before a spill.
pub const DEFAULT_SORT_BUFFER: u64 = 64 << 20;
/// Bytes of following blocks a map may read to finish its last record: a
/// longer record is an error rather than an unbounded read.
const MAX_TAIL_BYTES: u64 = 256 << 20;
const MAX_REDUCERS: u32 = 10_000;
const MAX_GENERATOR_MAPS: u32 = 100_000;

pub struct Jobs {
    pub jobs: BTreeMap<u64, Job>,
    pub next_id: u64,
    pub scheduler: Box<dyn Scheduler>,
    pub spec: SchedulerSpec,
    /// The scheduler clock's zero.
    pub started: Instant,
    /// Task reports fed to the policy, to save its state every
    /// [`crate::schedstate::SAVE_EVERY`].
    pub reports: u64,
}

impl Jobs {
    pub fn new(spec: SchedulerSpec, now: Instant) -> Result<Self> {
        let scheduler =
            common::sched::build(&spec).map_err(|e| MasterError::InvalidArgument(e.to_string()))?;
        Ok(Jobs {
            jobs: BTreeMap::new(),
            next_id: 1,
            scheduler,
            spec,
            started: now,
            reports: 0,
        })
    }
}

impl MasterState {
    fn bad(msg: String) -> MasterError {
        MasterError::InvalidArgument(msg)
    }

    /// Validates a job spec completely before anything runs, then queues it.
    pub fn submit_job(&mut self, req: proto::SubmitJobRequest, now: Instant) -> Result<u64> {
        let job = examples::jobs::registry::lookup(&req.job).ok_or_else(|| {
            Self::bad(format!(
                "unknown job {:?}; known jobs: {}",
                req.job,
                examples::jobs::registry::NAMES.join(", ")
            ))
        })?;
        let params = examples::spec::params_from_json(&req.params_json).map_err(Self::bad)?;
        let output =
            DfsPath::parse_file(&req.output).map_err(|e| Self::bad(format!("output: {e}")))?;
        if self.ns.files.contains_key(output.as_str()) || self.ns.is_dir(output.as_str()) {
            return Err(MasterError::AlreadyExists(format!(
                "output {output} already exists: choose another path or remove it (mr fs rm {output})"
            )));
        }
        if let Some(a) = self.ns.file_ancestor(output.as_str()) {
            return Err(Self::bad(format!(
                "output {output}: its parent {a} is a file"
            )));
        }
        if let Some(j) = self.jobs.jobs.values().find(|j| {
            !j.state.is_final()
                && (j.spec.output == output.as_str()
                    || j.spec.output.starts_with(&output.dir_prefix()))
        }) {
            return Err(MasterError::AlreadyExists(format!(
                "output {output} is being written by job {}",
                j.id
            )));
        }
        let map_only = job.map_only();
        let reducers = if map_only { 0 } else { req.reducers };
        if !map_only && !(1..=MAX_REDUCERS).contains(&reducers) {
            return Err(Self::bad(format!(
                "reducers must be between 1 and {MAX_REDUCERS}, not {}",
                req.reducers
            )));
        }
        let replication = if req.output_replication == 0 {
            self.cfg.dfs.replication
        } else {
            req.output_replication
        };
        validate_replication(replication)
            .map_err(|e| Self::bad(format!("output replication: {e}")))?;
        let out_bs = if req.output_block_size == 0 {
            self.cfg.dfs.block_size
        } else {
            req.output_block_size
        };
        validate_block_size(out_bs).map_err(Self::bad)?;
        let sort_buffer = if req.sort_buffer_bytes == 0 {
            DEFAULT_SORT_BUFFER
        } else {
            req.sort_buffer_bytes
        };
        if !(1 << 20..=4 << 30).contains(&sort_buffer) {
            return Err(Self::bad(
                "sort buffer must be between 1MiB and 4GiB".into(),
            ));
        }
        let input_format = job.input_format(&params);
        let (map_inputs, maps) = if input_format == examples::jobs::InputFormat::Generated {
            if !req.inputs.is_empty() {
                return Err(Self::bad(format!(
                    "{} is a generator: it takes no --input",
                    req.job
                )));
            }
            if params.maps == 0 || params.maps > MAX_GENERATOR_MAPS {
                return Err(Self::bad(format!(
                    "maps must be between 1 and {MAX_GENERATOR_MAPS}"
                )));
            }
            if params.size == 0 {
                return Err(Self::bad("a generator needs --size greater than 0".into()));
            }
            (vec![], params.maps)
        } else {
            let inputs = self.resolve_inputs(&req.inputs)?;
            if let examples::jobs::InputFormat::Fixed { len, .. } = input_format {
                for (path, f) in &inputs {
                    if f.size() % len as u64 != 0 {
                        return Err(Self::bad(format!(
                            "{path} is {} bytes, not a multiple of the {len}-byte records {} reads",
                            f.size(),
                            req.job
                        )));
                    }
                }
            }
            let mut mi = Vec::new();
            for (_, f) in &inputs {
                let mut off = 0;
                for (i, b) in f.blocks.iter().enumerate() {
                    let mut following = Vec::new();
                    let mut tail = 0;
                    for nb in &f.blocks[i + 1..] {
                        if tail >= MAX_TAIL_BYTES {
                            break;
                        }
                        tail += nb.len;
                        following.push(*nb);
                    }
                    mi.push(MapInput {
                        block: *b,
                        offset: off,
                        following,
                    });
                    off += b.len;
                }
            }
            // Only empty files: no map runs, and each reducer commits an
            // empty part, as Hadoop and Spark do, so a pipeline whose
            // earlier stage produced nothing goes on.
            let n = mi.len() as u32;
            (mi, n)
        };
        if job.partitioning(&params) == examples::jobs::Partitioning::TotalOrder
            && !map_only
            && req.splits.len() + 1 != reducers as usize
        {
            return Err(Self::bad(format!(
                "{} partitions by sampled ranges: it needs {} split points for {reducers} reducers, got {}",
                req.job,
                reducers.saturating_sub(1),
                req.splits.len()
            )));
        }
        let mut params = params;
        let inherited = job.inherited_counters();
        if !inherited.is_empty() {
            // Compare with what the sort's maps counted on its input.
            if let Some(src) = self.jobs.jobs.values().rev().find(|j| {
                j.state == JobState::Succeeded
                    && req
                        .inputs
                        .iter()
                        .any(|i| DfsPath::parse(i).is_ok_and(|p| p.as_str() == j.spec.output))
            }) {
                for &(k, name) in inherited {
                    if let Some(v) = src.counters.get(k) {
                        params
                            .extra
                            .entry(name.to_string())
                            .or_insert(v.to_string());
                    }
                }
            }
        }
        let id = self.jobs.next_id;
        let spec = JobSpec {
            job: req.job.clone(),
            inputs: req.inputs.clone(),
            output: output.to_string(),
            reducers,
            params_json: examples::spec::params_to_json(&params),
            output_replication: replication,
            output_block_size: out_bs,
            splits: req.splits.iter().map(|b| b.to_vec()).collect(),
            queue: if req.queue.is_empty() {
                "default".into()
            } else {
                req.queue.clone()
            },
            sort_buffer_bytes: sort_buffer,
            map_only,
        };
        let sched_name = self.jobs.spec.name.clone();
        let job = Job::new(id, id, spec, map_inputs, maps, &sched_name, now);
        crate::recovery::record_submitted(&self.history_dir(), id, &job.summary())
            .map_err(|e| MasterError::Unavailable(format!("cannot record job {id}: {e}")))?;
        // Only now: a refused job uses no id.
        self.jobs.next_id += 1;
        let view = job.view(self.jobs.started);
        self.jobs.scheduler.on_job_added(&view);
        tracing::info!(job = id, name = %req.job, maps, reducers, scheduler = %sched_name, "job submitted");
        self.jobs.jobs.insert(id, job);
        self.schedule(Trigger::JobAdded(id), now);
        Ok(id)
    }

    /// Input paths (files or directories) → files in path order; names
    /// starting with `_` or `.` are skipped as Hadoop's input formats do.
    fn resolve_inputs(&self, inputs: &[String]) -> Result<Vec<(String, FileMeta)>> {
        if inputs.is_empty() {
            return Err(Self::bad("the job needs --input".into()));
        }
        let mut out = Vec::new();
        for raw in inputs {
            let p = DfsPath::parse(raw).map_err(|e| Self::bad(format!("input: {e}")))?;
            let files = self.ns.matching(p.as_str());
            if files.is_empty() {
                return Err(MasterError::NotFound(format!("input {p} does not exist")));
            }
            for f in files {
                let hidden = f
                    .strip_prefix(&p.dir_prefix())
                    .unwrap_or("")
                    .split('/')
                    .any(|c| c.starts_with('_') || c.starts_with('.'));
                if hidden {
                    continue;
                }
                out.push((f.clone(), self.ns.files[&f].clone()));
            }
        }
        Ok(out)
    }

    fn slots_in_use(&self, worker: &str) -> (u32, u32) {
        let mut m = 0;
        let mut r = 0;
        for j in self.jobs.jobs.values() {
            for a in j.running() {
                if a.worker == worker {
                    if a.id.kind == TaskKind::Map {
                        m += 1;
                    } else {
                        r += 1;
                    }
                }
            }
        }
        (m, r)
    }

    pub fn cluster_view(&self, now: Instant) -> ClusterView {
        let t = |i: Instant| i.saturating_duration_since(self.jobs.started).as_secs_f64();
        let mut used: HashMap<String, (u32, u32)> = HashMap::new();
        let mut running: HashMap<String, Vec<RunningTask>> = HashMap::new();
        for j in self.jobs.jobs.values() {
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
        let mut cached_by_node: HashMap<&str, HashSet<u64>> = HashMap::new();
        for (id, set) in &self.cached {
            for n in set {
                cached_by_node.entry(n.as_str()).or_default().insert(*id);
            }
        }
        let nodes = self
            .workers
            .values()
            .filter(|w| w.alive)
            .map(|w| {
                let (m, r) = used.get(&w.name).copied().unwrap_or_default();
                NodeView {
                    name: w.name.clone(),
                    rack: w.rack.clone(),
                    map_slots: w.map_slots,
                    reduce_slots: w.reduce_slots,
                    free_map_slots: if w.draining {
                        0
                    } else {
                        w.map_slots.saturating_sub(m)
                    },
                    free_reduce_slots: if w.draining {
                        0
                    } else {
                        w.reduce_slots.saturating_sub(r)
                    },
                    resources: Resources::from(&w.resources),
                    cached_blocks: cached_by_node.remove(w.name.as_str()).unwrap_or_default(),
                    running: running.remove(&w.name).unwrap_or_default(),
                }
            })
            .collect();
        let mut pending = Vec::new();
        let mut jobs = Vec::new();
        for j in self.jobs.jobs.values().filter(|j| !j.state.is_final()) {
            jobs.push(j.view(self.jobs.started));
            for id in j.runnable() {
                let task = j.task(id.kind, id.index).expect("runnable");
                let block = if id.kind == TaskKind::Map {
                    j.map_inputs.get(id.index as usize).map(|m| m.block)
                } else {
                    None
                };
                let names = |table: &HashMap<u64, BTreeSet<String>>| -> Vec<String> {
                    block
                        .and_then(|b| table.get(&b.id))
                        .map(|s| s.iter().cloned().collect())
                        .unwrap_or_default()
                };
                pending.push(PendingTask {
                    id,
                    job: j.id,
                    kind: id.kind,
                    block: block.map(|b| b.id),
                    replicas: names(&self.locations),
                    cached_on: names(&self.cached),
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

    /// Asks the policy for assignments and queues the launches.
    pub fn schedule(&mut self, trigger: Trigger, now: Instant) {
        if !self.jobs.jobs.values().any(|j| !j.state.is_final()) {
            return;
        }
        let view = self.cluster_view(now);
        // Asked even with nothing pending while jobs run: learning policies
        // (compat-nb) watch the nodes' load on every heartbeat.
        if view.nodes.is_empty() {
            return;
        }
        let t0 = Instant::now();
        let assignments = self.jobs.scheduler.assign(&view, trigger);
        let took = t0.elapsed();
        self.stats.decided(&self.jobs.spec.name, took);
        if !assignments.is_empty() {
            tracing::debug!(n = assignments.len(), ?took, "scheduler decision");
        }
        for a in assignments {
            self.launch(&view, a, now);
        }
        if self.cfg.scheduler.speculative {
            self.speculate(now);
        }
    }

    /// Speculative execution (see [`Job::speculation_candidates`] for the
    /// rule): after the policy's own assignments, so backups only take the
    /// slots it left free, each candidate gets one backup on an alive worker
    /// with a free slot of its kind, not its running worker nor in `avoid`.
    fn speculate(&mut self, now: Instant) {
        let cands: Vec<(TaskId, Vec<String>)> = self
            .jobs
            .jobs
            .values()
            .flat_map(|j| j.speculation_candidates(now))
            .collect();
        if cands.is_empty() {
            return;
        }
        let mut nodes = self.cluster_view(now).nodes;
        for (id, not_on) in cands {
            let Some(node) = backup_node(&mut nodes, id.kind, &not_on) else {
                continue;
            };
            let Some(epoch) = self.workers.get(&node).filter(|w| w.alive).map(|w| w.epoch) else {
                continue;
            };
            let Some(job) = self.jobs.jobs.get_mut(&id.job) else {
                continue;
            };
            let Some(attempt) = job.launch_backup(id.kind, id.index, &node, epoch, now) else {
                continue;
            };
            tracing::info!(job = id.job, task = ?id.kind, index = id.index, attempt, node = %node, "speculative backup launched");
            self.send_launch(id, &node, attempt, epoch);
        }
    }

    fn launch(&mut self, view: &ClusterView, a: Assignment, now: Instant) {
        let Some(node) = view.node(&a.node) else {
            return;
        };
        let (used_m, used_r) = self.slots_in_use(&a.node);
        let fits = match a.task.kind {
            TaskKind::Map => used_m < node.map_slots,
            TaskKind::Reduce => used_r < node.reduce_slots,
        };
        let Some(w) = self.workers.get(&a.node).filter(|w| w.alive) else {
            return;
        };
        let epoch = w.epoch;
        let Some(job) = self.jobs.jobs.get_mut(&a.task.job) else {
            return;
        };
        let runnable = job
            .task(a.task.kind, a.task.index)
            .is_some_and(|t| t.is_pending())
            && (a.task.kind == TaskKind::Map || job.maps_done());
        if !fits || !runnable {
            tracing::warn!(task = ?a.task, node = %a.node, "scheduler returned an impossible assignment; ignored");
            return;
        }
        let attempt = job.launch(a.task.kind, a.task.index, &a.node, epoch, now);
        tracing::info!(job = a.task.job, task = ?a.task.kind, index = a.task.index, attempt, node = %a.node, "task launched");
        self.send_launch(a.task, &a.node, attempt, epoch);
    }

    /// Queues the launch command of `attempt` of task `id` for `node`.
    fn send_launch(&mut self, id: TaskId, node: &str, attempt: u32, epoch: u64) {
        let a = Assignment {
            task: id,
            node: node.to_string(),
        };
        let job = &self.jobs.jobs[&a.task.job];
        let loc = |b: &BlockMeta| proto::BlockLocation {
            block: Some(to_info(b)),
            replicas: self.holders(&self.locations, b.id),
            cached_on: self.holders(&self.cached, b.id),
        };
        let mut l = proto::LaunchTask {
            task: Some(proto::TaskRef {
                job_id: job.id,
                is_map: a.task.kind == TaskKind::Map,
                index: a.task.index,
                attempt,
            }),
            job_name: job.spec.job.clone(),
            params_json: job.spec.params_json.clone(),
            reducers: job.spec.reducers,
            splits: job.spec.splits.iter().map(|s| s.clone().into()).collect(),
            output_replication: job.spec.output_replication,
            output_block_size: job.spec.output_block_size,
            sort_buffer_bytes: job.spec.sort_buffer_bytes,
            epoch,
            ..Default::default()
        };
        match a.task.kind {
            TaskKind::Map => {
                if let Some(mi) = job.map_inputs.get(a.task.index as usize) {
                    l.input = Some(loc(&mi.block));
                    l.input_offset = mi.offset;
                    l.following = mi.following.iter().map(loc).collect();
                }
                if job.spec.map_only {
                    l.output_path = crate::jobs::staging_part(job.id, a.task.index, attempt);
                }
            }
            TaskKind::Reduce => {
                l.output_path = crate::jobs::staging_part(job.id, a.task.index, attempt);
                l.map_outputs = job
                    .maps
                    .iter()
                    .enumerate()
                    .filter_map(|(i, t)| match &t.status {
                        TaskStatus::Done {
                            attempt,
                            worker,
                            addr,
                        } => Some(proto::MapOutputLocation {
                            map_index: i as u32,
                            attempt: *attempt,
                            worker: worker.clone(),
                            addr: addr.clone(),
                        }),
                        _ => None,
                    })
                    .collect();
            }
        }
        self.workers
            .get_mut(&a.node)
            .expect("alive")
            .commands
            .push(Command {
                kind: Some(Kind::Launch(l)),
            });
    }

    /// A task report from a worker; answers with that worker's commands.
    pub fn task_update(
        &mut self,
        r: proto::TaskUpdateRequest,
        now: Instant,
    ) -> proto::HeartbeatResponse {
        let current = self
            .workers
            .get(&r.worker)
            .filter(|w| w.alive && w.epoch == r.epoch)
            .map(|w| w.addr.clone());
        let Some(addr) = current else {
            tracing::info!(worker = %r.worker, epoch = r.epoch, "task report from a stale worker incarnation fenced off");
            return proto::HeartbeatResponse {
                reregister: true,
                commands: vec![],
            };
        };
        let job_id = r.task.map_or(0, |t| t.job_id);
        let outcome = match self.jobs.jobs.get_mut(&job_id) {
            Some(j) => j.update(&r, &addr, now),
            None => Outcome::Ignored,
        };
        if let Some(t) = r.task {
            if outcome != Outcome::Ignored {
                self.stats.task_reported(&r);
                let job_name = self.jobs.jobs.get(&t.job_id).map(|j| j.spec.job.clone());
                let report = task_report(&r, &t, job_name.unwrap_or_default());
                let view = self.cluster_view(now);
                self.jobs.scheduler.on_task_finished(&view, &report);
                self.jobs.reports += 1;
                if self
                    .jobs
                    .reports
                    .is_multiple_of(crate::schedstate::SAVE_EVERY)
                {
                    crate::schedstate::save(
                        &self.cfg.master.data_dir,
                        self.jobs.scheduler.as_ref(),
                    );
                }
            }
        }
        self.push_kills(job_id);
        match outcome {
            Outcome::ReadyToCommit => self.commit_job(job_id),
            Outcome::Failed => self.end_job(job_id),
            _ => {}
        }
        self.schedule(Trigger::TaskFinished(r.worker.clone()), now);
        let w = self.workers.get_mut(&r.worker).expect("checked");
        proto::HeartbeatResponse {
            reregister: false,
            commands: std::mem::take(&mut w.commands),
        }
    }

    /// Sends the kills a job queued (losers of speculation) to their workers.
    fn push_kills(&mut self, job_id: u64) {
        let Some(j) = self.jobs.jobs.get_mut(&job_id) else {
            return;
        };
        for (w, t) in std::mem::take(&mut j.kills) {
            if let Some(e) = self.workers.get_mut(&w) {
                e.commands.push(Command {
                    kind: Some(Kind::KillTask(t)),
                });
            }
        }
    }

    /// Moves every committed part to the output in one edit, then ends the job.
    fn commit_job(&mut self, id: u64) {
        let Some(job) = self.jobs.jobs.get(&id) else {
            return;
        };
        let tasks = if job.spec.map_only {
            &job.maps
        } else {
            &job.reduces
        };
        let mut renames = Vec::new();
        for (i, t) in tasks.iter().enumerate() {
            if let Some(src) = &t.output {
                if self.ns.files.contains_key(src) {
                    renames.push((src.clone(), format!("{}/part-{i:05}", job.spec.output)));
                } else {
                    let why = format!("part {i} ({src}) is missing at commit");
                    self.jobs.jobs.get_mut(&id).expect("exists").fail(why);
                    self.end_job(id);
                    return;
                }
            }
        }
        let staging = self.ns.matching(&staging_dir(id));
        let renamed: HashSet<&String> = renames.iter().map(|(f, _)| f).collect();
        let leftovers: Vec<String> = staging
            .iter()
            .filter(|p| !renamed.contains(p))
            .cloned()
            .collect();
        let leftover_blocks: Vec<u64> = leftovers
            .iter()
            .flat_map(|p| self.ns.files[p].blocks.iter().map(|b| b.id))
            .collect();
        let success = FileMeta {
            replication: job.spec.output_replication,
            block_size: job.spec.output_block_size,
            blocks: vec![],
            mtime_ms: common::now_ms(),
        };
        let edit = Edit::Commit {
            renames,
            add: vec![(format!("{}/_SUCCESS", job.spec.output), success)],
            delete: leftovers,
        };
        if let Err(e) = self.commit(edit) {
            self.jobs
                .jobs
                .get_mut(&id)
                .expect("exists")
                .fail(format!("commit failed: {e}"));
            self.end_job(id);
            return;
        }
        for b in leftover_blocks {
            self.forget_block(b);
        }
        let job = self.jobs.jobs.get_mut(&id).expect("exists");
        match validation_failure(job) {
            Some(why) => job.fail(why),
            None => job.finish(JobState::Succeeded),
        }
        tracing::info!(
            job = id,
            state = job.state.as_str(),
            secs = job.exec_time_s,
            "job finished"
        );
        self.end_job(id);
    }

    /// After a job reached a final state: stop its attempts, drop staging
    /// (a failed job leaves no partial output), tell workers to clean up,
    /// write the history.
    fn end_job(&mut self, id: u64) {
        let Some(job) = self.jobs.jobs.get(&id) else {
            return;
        };
        let running = job.running_attempts();
        for (w, t) in running {
            if let Some(e) = self.workers.get_mut(&w) {
                e.commands.push(Command {
                    kind: Some(Kind::KillTask(t)),
                });
            }
        }
        let staging = staging_dir(id);
        let open: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| p.path.starts_with(&format!("{staging}/")))
            .map(|(lease, _)| *lease)
            .collect();
        for lease in open {
            // A late complete of this lease fails; its blocks go.
            if let Some(p) = self.pending.remove(&lease) {
                for b in p.blocks {
                    self.pending_blocks.remove(&b);
                    self.forget_block(b);
                }
            }
        }
        if !self.ns.matching(&staging).is_empty() {
            if let Err(e) = self.delete(&staging) {
                tracing::warn!(job = id, "could not remove staging: {e}");
            }
        }
        for w in self.workers.values_mut().filter(|w| w.alive) {
            w.commands.push(Command {
                kind: Some(Kind::CleanupJob(id)),
            });
        }
        let job = self.jobs.jobs.get_mut(&id).expect("exists");
        if !job.state.is_final() {
            job.finish(JobState::Failed);
        }
        // Mark running tasks as no longer running, so slots free up.
        for t in job.maps.iter_mut().chain(job.reduces.iter_mut()) {
            if t.is_running() {
                t.status = TaskStatus::Pending;
            }
            t.backup = None;
        }
        let summary = job.summary();
        let records = std::mem::take(&mut job.records);
        self.write_history(id, &records, &summary);
    }

    fn history_dir(&self) -> std::path::PathBuf {
        self.cfg.master.data_dir.join("history")
    }

    fn write_history(&self, id: u64, records: &[serde_json::Value], summary: &serde_json::Value) {
        use std::io::Write;
        let dir = self.history_dir();
        let res = (|| -> std::io::Result<()> {
            std::fs::create_dir_all(&dir)?;
            let mut f = std::fs::File::create(dir.join(format!("job-{id}.jsonl")))?;
            for r in records {
                writeln!(f, "{r}")?;
            }
            let mut s = summary.clone();
            s["type"] = serde_json::json!("job");
            writeln!(f, "{s}")?;
            // The final record is never dropped.
            f.sync_all()
        })();
        if let Err(e) = res {
            tracing::warn!(job = id, "cannot write job history: {e}");
        }
    }

    pub fn job_json(&self, id: u64) -> Result<serde_json::Value> {
        if let Some(j) = self.jobs.jobs.get(&id) {
            return Ok(j.summary());
        }
        // A job from before a master restart: its history's final record.
        self.job_history(id)?
            .last()
            .and_then(|l| serde_json::from_str(l).ok())
            .ok_or_else(|| MasterError::NotFound(format!("no job {id}")))
    }

    pub fn list_jobs(&self) -> Vec<serde_json::Value> {
        self.jobs.jobs.values().map(|j| j.summary()).collect()
    }

    pub fn job_history(&self, id: u64) -> Result<Vec<String>> {
        if self.jobs.jobs.get(&id).is_some_and(|j| !j.state.is_final()) {
            return Err(MasterError::FailedPrecondition(format!(
                "job {id} is still running: its history is written when it ends"
            )));
        }
        let p = self.history_dir().join(format!("job-{id}.jsonl"));
        match std::fs::read_to_string(&p) {
            Ok(t) => Ok(t.lines().map(str::to_string).collect()),
            Err(_) if self.jobs.jobs.contains_key(&id) => Err(MasterError::FailedPrecondition(
                format!("job {id} is still running: its history is written when it ends"),
            )),
            Err(_) => Err(MasterError::NotFound(format!("no history for job {id}"))),
        }
    }

    /// On a graceful stop. Jobs live in the master's memory only, so each
    /// unfinished one ends here, failed, its staging removed and its history
    /// written, rather than vanish unrecorded; clients are told to resubmit.
    pub fn abandon_jobs(&mut self, why: &str) -> usize {
        let ids: Vec<u64> = self
            .jobs
            .jobs
            .values()
            .filter(|j| !j.state.is_final())
            .map(|j| j.id)
            .collect();
        for &id in &ids {
            if let Some(j) = self.jobs.jobs.get_mut(&id) {
                j.fail(why.to_string());
            }
            self.end_job(id);
        }
        ids.len()
    }

    pub fn kill_job(&mut self, id: u64) -> Result<serde_json::Value> {
        let job = self
            .jobs
            .jobs
            .get_mut(&id)
            .ok_or_else(|| MasterError::NotFound(format!("no job {id}")))?;
        if !job.state.is_final() {
            tracing::info!(job = id, "job killed");
            job.finish(JobState::Killed);
            self.end_job(id);
        }
        Ok(self.jobs.jobs[&id].summary())
    }

    pub fn set_scheduler(&mut self, spec: SchedulerSpec) -> Result<()> {
        let mut s =
            common::sched::build(&spec).map_err(|e| MasterError::InvalidArgument(e.to_string()))?;
        let dir = &self.cfg.master.data_dir;
        crate::schedstate::save(dir, self.jobs.scheduler.as_ref());
        crate::schedstate::load(dir, s.as_mut());
        tracing::info!(scheduler = %spec.name, params = ?spec.params, "scheduler switched");
        self.jobs.scheduler = s;
        self.jobs.spec = spec;
        Ok(())
    }

    pub fn scheduler_spec(&self) -> &SchedulerSpec {
        &self.jobs.spec
    }
}

/// The node for a backup of a `kind` task: alive (in the view), with a
/// free slot of that kind, not in `not_on`; the one with the most free slots
/// (then by name). Takes the slot in `nodes`.
fn backup_node(nodes: &mut [NodeView], kind: TaskKind, not_on: &[String]) -> Option<String> {
    let free = |n: &NodeView| match kind {
        TaskKind::Map => n.free_map_slots,
        TaskKind::Reduce => n.free_reduce_slots,
    };
    let n = nodes
        .iter_mut()
        .filter(|n| free(n) > 0 && !not_on.contains(&n.name))
        .min_by(|a, b| free(b).cmp(&free(a)).then_with(|| a.name.cmp(&b.name)))?;
    match kind {
        TaskKind::Map => n.free_map_slots -= 1,
        TaskKind::Reduce => n.free_reduce_slots -= 1,
    }
    Some(n.name.clone())
}

/// What a learning policy is told of a finished attempt.
fn task_report(
    r: &proto::TaskUpdateRequest,
    t: &proto::TaskRef,
    job_name: String,
) -> common::sched::TaskReport {
    let m = r.metrics.clone().unwrap_or_default();
    common::sched::TaskReport {
        task: common::sched::TaskId {
            job: t.job_id,
            kind: if t.is_map {
                TaskKind::Map
            } else {
                TaskKind::Reduce
            },
            index: t.index,
        },
        job_name,
        node: r.worker.clone(),
        locality: Locality::parse(&m.locality).unwrap_or(Locality::OffRack),
        runtime_s: m.end_ms.saturating_sub(m.start_ms) as f64 / 1e3,
        succeeded: r.succeeded,
        // A reduce's input is what it fetched in the shuffle.
        bytes_read: m.bytes_cache
            + m.bytes_local
            + m.bytes_remote_rack
            + m.bytes_remote_off_rack
            + m.bytes_shuffle,
        read_s: m.read_s,
        bytes_written: m.bytes_output,
        cpu_s: m.cpu_s,
        peak_mem_bytes: m.peak_mem_bytes,
    }
}

/// Validator jobs fail when what they checked is wrong; their report is
/// committed all the same, so the user can read why.
fn validation_failure(job: &Job) -> Option<String> {
    let c = &job.counters;
    let get = |k: &str| c.get(k).copied().unwrap_or(0);
    match examples::jobs::registry::lookup(&job.spec.job) {
        Some(j) if j.is_validator() => {
            if get("unsorted") > 0 {
                return Some(format!(
                    "validation failed: the input is not sorted; see the report in {}",
                    job.spec.output
                ));
            }
            let params =
                examples::spec::params_from_json(&job.spec.params_json).unwrap_or_default();
            for (counter, expect) in [
                ("records", "expect_records"),
                ("checksum", "expect_checksum"),
            ] {
                if let Some(want) = params.extra.get(expect).and_then(|v| v.parse::<u64>().ok()) {
                    if get(counter) != want {
                        return Some(format!(
                            "validation failed: {counter} is {} but the sorted input had {want}; see {}",
                            get(counter),
                            job.spec.output
                        ));
                    }
                }
            }
            None
        }
        _ => None,
    }
}

#[cfg(test)]
mod speculation_tests {
    use super::*;
    use std::time::Duration;

    fn state(speculative: bool) -> (MasterState, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!(
            "mr-spec-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        let toml = format!(
            "token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = {:?}\n\
             [scheduler]\nspeculative = {speculative}\n\
             [[workers]]\nname = \"w1\"\naddr = \"127.0.0.1:7101\"\ndata_dir = \"/x1\"\n\
             [[workers]]\nname = \"w2\"\naddr = \"127.0.0.1:7102\"\ndata_dir = \"/x2\"\n",
            dir.join("m")
        );
        let cfg = ClusterConfig::parse(&toml).unwrap();
        assert_eq!(cfg.scheduler.speculative, speculative);
        (MasterState::open(cfg, Instant::now()).unwrap(), dir)
    }

    fn register(st: &mut MasterState, name: &str, now: Instant) -> u64 {
        st.register(
            proto::RegisterRequest {
                protocol_version: common::PROTOCOL_VERSION,
                name: name.into(),
                addr: format!("{name}:1"),
                rack: "r1".into(),
                map_slots: 2,
                reduce_slots: 1,
                ..Default::default()
            },
            now,
        )
        .unwrap();
        st.workers[name].epoch
    }

    /// Four maps: 0, 1 on w1, 2, 3 on w2; all but map 3 done after 2 s.
    /// Returns the commands w1 got by 5 s, when map 3 is a straggler.
    fn run(speculative: bool) -> (MasterState, Vec<Command>) {
        let (mut st, dir) = state(speculative);
        let t0 = Instant::now();
        let e1 = register(&mut st, "w1", t0);
        let e2 = register(&mut st, "w2", t0);
        let spec = JobSpec::wordcount_for_tests(1);
        let mut j = Job::new(1, 1, spec, vec![], 4, "fifo", t0);
        for (i, (w, e)) in [("w1", e1), ("w1", e1), ("w2", e2), ("w2", e2)]
            .into_iter()
            .enumerate()
        {
            j.launch(TaskKind::Map, i as u32, w, e, t0);
        }
        st.jobs.jobs.insert(1, j);
        let at2 = t0 + Duration::from_secs(2);
        for (i, (w, e)) in [("w1", e1), ("w1", e1), ("w2", e2)].into_iter().enumerate() {
            st.task_update(
                proto::TaskUpdateRequest {
                    worker: w.into(),
                    epoch: e,
                    task: Some(proto::TaskRef {
                        job_id: 1,
                        is_map: true,
                        index: i as u32,
                        attempt: 0,
                    }),
                    succeeded: true,
                    ..Default::default()
                },
                at2,
            );
        }
        st.workers.get_mut("w1").unwrap().commands.clear();
        st.schedule(Trigger::Heartbeat("w1".into()), t0 + Duration::from_secs(5));
        let cmds = std::mem::take(&mut st.workers.get_mut("w1").unwrap().commands);
        let _ = std::fs::remove_dir_all(dir);
        (st, cmds)
    }

    fn launches(cmds: &[Command]) -> Vec<proto::TaskRef> {
        cmds.iter()
            .filter_map(|c| match &c.kind {
                Some(Kind::Launch(l)) => l.task,
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_backup_launches_only_when_enabled() {
        let (st, cmds) = run(false);
        assert!(launches(&cmds).is_empty());
        assert_eq!(st.jobs.jobs[&1].speculative_launched, 0);
        let (st, cmds) = run(true);
        let l = launches(&cmds);
        assert_eq!(l.len(), 1, "{cmds:?}");
        assert_eq!((l[0].is_map, l[0].index, l[0].attempt), (true, 3, 1));
        // The backup holds a slot of w1; w2's attempt keeps its own.
        assert_eq!(st.slots_in_use("w1"), (1, 0));
        assert_eq!(st.slots_in_use("w2"), (1, 0));
        assert_eq!(st.jobs.jobs[&1].speculative_launched, 1);
    }

    #[test]
    fn backup_node_is_never_the_running_worker_and_needs_a_free_slot() {
        let node = |name: &str, free_map: u32| NodeView {
            name: name.into(),
            map_slots: 2,
            free_map_slots: free_map,
            ..Default::default()
        };
        let not_on = vec!["w2".to_string()];
        let mut nodes = vec![node("w1", 0), node("w2", 2), node("w3", 1)];
        assert_eq!(
            backup_node(&mut nodes, TaskKind::Map, &not_on),
            Some("w3".into())
        );
        // Its slot is taken now: nothing left but the running worker.
        assert_eq!(backup_node(&mut nodes, TaskKind::Map, &not_on), None);
        assert_eq!(backup_node(&mut nodes, TaskKind::Reduce, &[]), None);
    }
}
