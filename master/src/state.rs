//! The master's state and every operation on it, as plain functions over
//! plain data: the gRPC layer only converts, so tests drive this directly.
//!
//! One `std::sync::Mutex` guards it (see `service.rs`): nothing async happens
//! while it is held, and the only slow step inside is the edit-log fsync,
//! which must serialise namespace changes anyway, as HDFS's namesystem lock does.

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
    pub workers: BTreeMap<String, WorkerEntry>,
    /// Replications in flight, not re-issued before they time out.
    replicating: HashMap<u64, Instant>,
    /// No re-replication before this: workers need time to report after a
    /// master restart (HDFS's safe mode).
    safe_until: Instant,
    rng: fastrand::Rng,
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
        Ok(MasterState {
            cfg,
            ns,
            log,
            pending: HashMap::new(),
            pending_blocks: HashSet::new(),
            owners,
            locations: HashMap::new(),
            cached: HashMap::new(),
            workers: BTreeMap::new(),
            replicating: HashMap::new(),
            safe_until,
            rng: fastrand::Rng::new(),
        })
    }

    fn commit(&mut self, edit: Edit) -> Result<()> {
        self.log.append(&edit)?;
        self.ns.apply(&edit);
        self.log.maybe_checkpoint(&self.ns)?;
        Ok(())
    }

    pub fn sync(&mut self) -> Result<()> {
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
        // Forget whatever the previous incarnation reported.
        self.drop_worker_tables(&req.name);
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
                last_heartbeat: now,
                last_heartbeat_ms: common::now_ms(),
                resources: Default::default(),
                commands: Vec::new(),
                blocks: stored,
            },
        );
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
            tracing::debug!(worker = %req.name, epoch = req.epoch, "stale heartbeat fenced; asking to re-register");
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
        for name in &dead {
            tracing::warn!(worker = %name, "worker missed {} heartbeats: marked dead", self.cfg.heartbeat.dead_after);
            self.drop_worker_tables(name);
            if let Some(w) = self.workers.get_mut(name) {
                w.alive = false;
                w.commands.clear();
                w.free_map_slots = 0;
                w.free_reduce_slots = 0;
            }
        }
        dead
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

    pub fn delete(&mut self, raw: &str) -> Result<u64> {
        let path = DfsPath::parse(raw)?;
        let paths = self.ns.matching(path.as_str());
        if paths.is_empty() {
            return Err(MasterError::NotFound(format!(
                "{path}: no such file or directory"
            )));
        }
        let ids: Vec<u64> = paths
            .iter()
            .flat_map(|p| self.ns.files[p].blocks.iter().map(|b| b.id))
            .collect();
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

    /// Like an HDFS cache directive: each block of the file is cached on one
    /// worker that stores it (or dropped from every cache).
    pub fn cache_file(&mut self, raw: &str, cache: bool) -> Result<u64> {
        let path = DfsPath::parse(raw)?;
        let paths = self.ns.matching(path.as_str());
        if paths.is_empty() {
            return Err(MasterError::NotFound(format!(
                "{path}: no such file or directory"
            )));
        }
        let ids: Vec<u64> = paths
            .iter()
            .flat_map(|p| self.ns.files[p].blocks.iter().map(|b| b.id))
            .collect();
        let mut n = 0;
        for id in ids {
            if cache {
                if self.cached.get(&id).is_some_and(|s| !s.is_empty()) {
                    n += 1;
                    continue;
                }
                let holders: Vec<String> = self
                    .locations
                    .get(&id)
                    .map(|s| s.iter().cloned().collect())
                    .unwrap_or_default();
                if holders.is_empty() {
                    continue;
                }
                let h = &holders[self.rng.usize(..holders.len())];
                self.workers
                    .get_mut(h)
                    .expect("live")
                    .commands
                    .push(Command {
                        kind: Some(Kind::CacheBlock(id)),
                    });
                n += 1;
            } else {
                let holders: Vec<String> = self
                    .cached
                    .get(&id)
                    .map(|s| s.iter().cloned().collect())
                    .unwrap_or_default();
                for h in holders {
                    if let Some(w) = self.workers.get_mut(&h) {
                        w.commands.push(Command {
                            kind: Some(Kind::UncacheBlock(id)),
                        });
                    }
                }
                n += 1;
            }
        }
        Ok(n)
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
