//! Files: writes under a lease (create, add a block, complete or abandon),
//! deletes, and what `fs stat` and `fs ls` show.

use super::namespace::{DirMeta, Edit, FileMeta};
use super::{BlockOwner, Blocks};
use crate::cluster::{Cluster, Outbox};
use crate::error::{MasterError, Result};
use common::config::{validate_block_size, validate_replication};
use common::path::DfsPath;
use common::placement::choose_targets;
use protocol::{BlockInfo, WorkerAddr};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

/// Ids reserved per edit-log record: one fsync per this many blocks.
const BLOCK_ID_BATCH: u64 = 1024;
/// Most blocks one file may have, as HDFS's `fs-limits.max-blocks-per-file`.
const MAX_BLOCKS_PER_FILE: usize = 10_000;

/// A file being written: invisible until completed.
#[derive(Debug)]
pub(super) struct PendingFile {
    pub path: String,
    pub replication: u32,
    pub block_size: u64,
    pub overwrite: bool,
    pub writer: Option<String>,
    pub owner: String,
    pub blocks: Vec<u64>,
    /// Where each block goes in the file, for the blocks whose writer said
    /// (`AddBlock::offset`): what a lease recovery orders them by.
    pub offsets: HashMap<u64, u64>,
    /// When the holder was last heard from (its create, its last new
    /// block): how long it has been silent decides whether its lease may
    /// be recovered (`lease.rs`).
    pub last_heard: Instant,
}

#[derive(Debug, Clone, Default)]
pub struct CreateFile {
    pub path: String,
    /// 0 selects the cluster default.
    pub replication: u32,
    pub block_size: u64,
    /// The writer's worker name, when a worker writes: the first replica
    /// goes there, as in HDFS.
    pub writer: String,
    pub overwrite: bool,
    /// Who writes it (the caller's identity, never the request's say).
    pub owner: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Created {
    pub lease: u64,
    pub replication: u32,
    pub block_size: u64,
    /// How often the writer renews its lease (`lease.rs`).
    pub renew_every: std::time::Duration,
}

#[derive(Debug, Clone, Default)]
pub struct AddBlock {
    pub path: String,
    pub lease: u64,
    /// Workers that already failed for this block.
    pub exclude: Vec<String>,
    /// Targets wanted; 0 means the file's replication factor.
    pub count: u32,
    /// The block's place in the file (bytes before it), when the writer
    /// says: allocation order is not file order (blocks are written two
    /// at a time and retried under new ids), and a lease recovery keeps
    /// only blocks whose place it knows.
    pub offset: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewBlock {
    pub block_id: u64,
    pub targets: Vec<WorkerAddr>,
    /// The generation stamp the writer gives the block's replicas.
    pub generation: u64,
}

#[derive(Debug, Clone, Default)]
pub struct CompletedBlock {
    pub block: Option<BlockInfo>,
    /// Workers that acknowledged a durable copy.
    pub stored_on: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct CompleteFile {
    pub path: String,
    pub lease: u64,
    pub blocks: Vec<CompletedBlock>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BlockStatus {
    pub block: BlockInfo,
    pub replicas: Vec<WorkerAddr>,
    pub cached_on: Vec<WorkerAddr>,
    /// The worker whose cache pins it, if any.
    pub pinned_on: Vec<WorkerAddr>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FileStatus {
    pub path: String,
    pub size: u64,
    pub replication: u32,
    pub block_size: u64,
    pub blocks: Vec<BlockStatus>,
    pub mtime_ms: u64,
    pub owner: String,
    pub mode: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ListEntry {
    pub path: String,
    pub is_dir: bool,
    pub size: u64,
    pub replication: u32,
    pub blocks: u64,
    pub mtime_ms: u64,
    pub owner: String,
    pub mode: u32,
}

impl Blocks {
    /// Opens a write under a new lease. A path whose writer has been silent
    /// past the soft limit is taken over: its lease is recovered first.
    pub fn create_file(
        &mut self,
        req: CreateFile,
        now: Instant,
        out: &mut Outbox,
    ) -> Result<Created> {
        let path = DfsPath::parse_file(&req.path)?;
        let replication = if req.replication == 0 {
            self.default_replication
        } else {
            req.replication
        };
        validate_replication(replication).map_err(MasterError::InvalidArgument)?;
        let block_size = if req.block_size == 0 {
            self.default_block_size
        } else {
            req.block_size
        };
        validate_block_size(block_size).map_err(MasterError::InvalidArgument)?;
        let recovered = self.take_over_stale_lease(path.as_str(), req.overwrite, now, out)?;
        if let Err(e) = self.check_creatable(path.as_str(), req.overwrite) {
            return Err(match (e, recovered) {
                (MasterError::AlreadyExists(m), Some(r)) => MasterError::AlreadyExists(format!(
                    "{m}: the previous writer's lease was recovered ({})",
                    r.describe()
                )),
                (e, _) => e,
            });
        }
        self.make_parents_of(path.as_str(), &req.owner)?;
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
                owner: req.owner,
                blocks: Vec::new(),
                offsets: HashMap::new(),
                last_heard: now,
            },
        );
        Ok(Created {
            lease,
            replication,
            block_size,
            renew_every: self.renew_every(),
        })
    }

    pub fn check_creatable(&self, path: &str, overwrite: bool) -> Result<()> {
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

    pub(super) fn pending_mut(&mut self, lease: u64, path: &str) -> Result<&mut PendingFile> {
        match self.pending.get_mut(&lease) {
            Some(p) if p.path == path => Ok(p),
            _ => Err(MasterError::FailedPrecondition(format!(
                "no write of {path} is open under this lease (the master may have restarted): write the file again"
            ))),
        }
    }

    /// Allocates a block to a write; the call renews the writer's lease.
    pub fn add_block(
        &mut self,
        req: AddBlock,
        cluster: &Cluster,
        now: Instant,
    ) -> Result<NewBlock> {
        let path = DfsPath::parse_file(&req.path)?;
        let p = self.pending_mut(req.lease, path.as_str())?;
        p.last_heard = now;
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
        let nodes = self.targets(cluster);
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
        let p = self.pending.get_mut(&req.lease).expect("checked");
        p.blocks.push(id);
        if let Some(at) = req.offset {
            p.offsets.insert(id, at);
        }
        Ok(NewBlock {
            block_id: id,
            generation: self.ns.generation,
            targets: targets
                .iter()
                .filter_map(|t| cluster.get(&t.name).map(|w| w.addr()))
                .collect(),
        })
    }

    pub(crate) fn allocate_block_id(&mut self) -> Result<u64> {
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

    pub fn complete_file(
        &mut self,
        req: CompleteFile,
        cluster: &Cluster,
        out: &mut Outbox,
    ) -> Result<()> {
        let path = DfsPath::parse_file(&req.path)?;
        let generation = self.ns.generation;
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
            // Pending blocks were all allocated in this run's generation
            // (a restart forgets them): replicas stamped otherwise would
            // never count as the block.
            if b.generation != generation {
                return Err(MasterError::InvalidArgument(format!(
                    "block {} has generation {}, allocated in {generation}: write the file again",
                    b.id, b.generation
                )));
            }
            blocks.push(*b);
        }
        let (replication, block_size, overwrite, allocated, owner) = (
            p.replication,
            p.block_size,
            p.overwrite,
            p.blocks.clone(),
            p.owner.clone(),
        );
        // Re-check: another file may have appeared since create.
        self.check_creatable(path.as_str(), overwrite)?;
        let old = self.ns.files.get(path.as_str()).cloned();
        let file = FileMeta {
            mode: crate::blocks::namespace::FILE_MODE,
            replication,
            block_size,
            blocks: blocks.clone(),
            mtime_ms: common::now_ms(),
            owner,
        };
        self.commit(Edit::AddFile {
            path: path.to_string(),
            file,
        })?;
        self.pending.remove(&req.lease);
        for id in &allocated {
            self.pending_blocks.remove(id);
            self.pending_reported.remove(id);
        }
        for (meta, cb) in blocks.iter().zip(&req.blocks) {
            self.owners.insert(
                meta.id,
                BlockOwner {
                    meta: *meta,
                    replication,
                },
            );
            for w in &cb.stored_on {
                if cluster.is_alive(w) {
                    self.locations.insert(meta.id, w);
                }
            }
        }
        // Allocated blocks the client did not use (failed attempts) are orphans.
        let used: HashSet<u64> = blocks.iter().map(|b| b.id).collect();
        for id in allocated.into_iter().filter(|id| !used.contains(id)) {
            self.forget_block(id, out);
        }
        if let Some(old) = old {
            for b in old.blocks {
                self.forget_block(b.id, out);
            }
        }
        tracing::info!(path = %path, blocks = blocks.len(), "file completed");
        Ok(())
    }

    pub fn abandon_file(&mut self, path: &str, lease: u64, out: &mut Outbox) -> Result<()> {
        let path = DfsPath::parse_file(path)?;
        self.pending_mut(lease, path.as_str())?;
        self.drop_lease(lease, out);
        Ok(())
    }

    /// Ends a write: a late complete under the lease fails, its blocks go.
    pub(super) fn drop_lease(&mut self, lease: u64, out: &mut Outbox) {
        if let Some(p) = self.pending.remove(&lease) {
            for id in p.blocks {
                self.pending_blocks.remove(&id);
                self.pending_reported.remove(&id);
                self.forget_block(id, out);
            }
        }
    }

    /// Ends every write open under `dir` (a job's staging, when it ends).
    pub fn drop_leases_under(&mut self, dir: &str, out: &mut Outbox) {
        let prefix = format!("{dir}/");
        let open: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| p.path.starts_with(&prefix))
            .map(|(lease, _)| *lease)
            .collect();
        for lease in open {
            self.drop_lease(lease, out);
        }
    }

    /// Files at or under a path and their blocks; an error if there are none.
    pub(super) fn files_under(&self, raw: &str) -> Result<(DfsPath, Vec<String>, Vec<u64>)> {
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

    /// Refuses (and logs) a change to the files at or under `raw` when
    /// `who` is no admin and one of them is another's; nothing there is no
    /// refusal (the change itself says so).
    pub fn may_change(&self, raw: &str, who: &rpc::auth::Identity) -> Result<()> {
        if who.role == rpc::auth::Role::Admin {
            return Ok(());
        }
        let Ok(path) = DfsPath::parse(raw) else {
            return Ok(());
        };
        for p in self.ns.matching(path.as_str()) {
            let owner = match self.ns.files[&p].owner.as_str() {
                "" => rpc::auth::ADMIN_NAME,
                o => o,
            };
            if owner != who.name {
                tracing::warn!(user = %who.name, path = %p, owner, "permission denied: not the file's owner");
                return Err(MasterError::PermissionDenied(format!(
                    "permission denied: {p} belongs to {owner:?}; user {:?} may only change their own files",
                    who.name
                )));
            }
        }
        Ok(())
    }

    /// Deletes the files at or under `raw` and its recorded directories;
    /// returns how many files went.
    pub fn delete(&mut self, raw: &str, out: &mut Outbox) -> Result<u64> {
        let path = DfsPath::parse(raw)?;
        let dirs = self.ns.dirs_under(path.as_str());
        let (paths, ids) = match self.files_under(raw) {
            Ok((_, paths, ids)) => (paths, ids),
            Err(MasterError::NotFound(_)) if !dirs.is_empty() => (vec![], vec![]),
            Err(e) => return Err(e),
        };
        let n = paths.len() as u64;
        self.commit(Edit::Delete { paths, dirs })?;
        for id in ids {
            self.forget_block(id, out);
        }
        tracing::info!(path = %path, files = n, "deleted");
        Ok(n)
    }

    pub fn block_status(&self, b: &BlockInfo, cluster: &Cluster) -> BlockStatus {
        BlockStatus {
            block: *b,
            replicas: self.replicas(b.id, cluster),
            cached_on: self.cached_on(b.id, cluster),
            pinned_on: self.pinned_on(b.id, cluster),
        }
    }

    pub fn file_status(&self, raw: &str, cluster: &Cluster) -> Result<FileStatus> {
        let path = DfsPath::parse_file(raw)?;
        let f = self.ns.files.get(path.as_str()).ok_or_else(|| {
            if self.ns.is_dir(path.as_str()) {
                MasterError::InvalidArgument(format!("{path} is a directory"))
            } else {
                MasterError::NotFound(format!("{path}: no such file"))
            }
        })?;
        Ok(FileStatus {
            path: path.to_string(),
            size: f.size(),
            replication: f.replication,
            block_size: f.block_size,
            mtime_ms: f.mtime_ms,
            owner: super::perm::owner_name(&f.owner).to_string(),
            mode: f.mode,
            blocks: f
                .blocks
                .iter()
                .map(|b| self.block_status(b, cluster))
                .collect(),
        })
    }

    pub fn list(&self, raw: &str) -> Result<Vec<ListEntry>> {
        let path = DfsPath::parse(if raw.is_empty() { "/" } else { raw })?;
        if let Some(f) = self.ns.files.get(path.as_str()) {
            return Ok(vec![entry(path.as_str(), f)]);
        }
        let prefix = path.dir_prefix();
        let mut out: Vec<ListEntry> = Vec::new();
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
        // Recorded directories directly under `path`, empty ones too.
        for d in self.ns.dirs.range(prefix.clone()..).map(|(d, _)| d) {
            let Some(rest) = d.strip_prefix(&prefix) else {
                break;
            };
            if !rest.contains('/') {
                dirs.entry(d.clone()).or_default();
            }
        }
        if out.is_empty() && dirs.is_empty() && !path.is_root() && !self.ns.is_dir(path.as_str()) {
            return Err(MasterError::NotFound(format!(
                "{path}: no such file or directory"
            )));
        }
        out.extend(dirs.into_iter().map(|(p, (size, blocks, mtime))| {
            let d = self.ns.dir(&p).unwrap_or_else(DirMeta::implied);
            ListEntry {
                path: p,
                is_dir: true,
                size,
                replication: 0,
                blocks,
                mtime_ms: mtime,
                owner: super::perm::owner_name(&d.owner).to_string(),
                mode: d.mode,
            }
        }));
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }
}

fn entry(path: &str, f: &FileMeta) -> ListEntry {
    ListEntry {
        path: path.to_string(),
        is_dir: false,
        size: f.size(),
        replication: f.replication,
        blocks: f.blocks.len() as u64,
        mtime_ms: f.mtime_ms,
        owner: super::perm::owner_name(&f.owner).to_string(),
        mode: f.mode,
    }
}
