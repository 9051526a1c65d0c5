//! The block side of the master: the durable namespace (files and their
//! blocks, behind the fsynced edit log), files being written, where each
//! block's replicas and cached copies are, cache pins, and re-replication.
//!
//! It reads the membership ([`Cluster`]) to place replicas and to name live
//! holders, and puts what workers must do in the event's [`Outbox`], which
//! the coordinator (`core`) flushes. Nothing here knows about jobs.

pub mod decommission;
pub mod dirs;
pub mod editlog;
pub mod files;
pub mod fsck;
pub mod holders;
pub mod journal;
pub mod lease;
pub mod namespace;
pub mod perm;
pub mod pins;
pub mod replication;
pub mod resource;
pub mod safemode;
pub mod sweep;

#[cfg(test)]
#[path = "durability_tests.rs"]
mod durability_tests;
#[cfg(test)]
#[path = "lease_tests.rs"]
mod lease_tests;

use crate::cluster::{Cluster, Outbox};
use crate::error::Result;
use common::config::ClusterConfig;
use files::PendingFile;
use holders::Holders;
use journal::Journal;
use namespace::{Edit, Namespace};
use protocol::{BlockInfo, Command, WorkerAddr};
use resource::{FreeSpace, ResourceChecker};
use safemode::{SafeMode, SafeModeStatus};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

/// Where a namespace block belongs, for replication decisions.
#[derive(Debug, Clone, Copy)]
pub struct BlockOwner {
    pub meta: BlockInfo,
    pub replication: u32,
}

pub struct Blocks {
    ns: Namespace,
    /// The edit log in every metadata directory (`journal.rs`).
    log: Journal,
    pending: HashMap<u64, PendingFile>,
    /// Every block of a pending file, so block reports do not delete it.
    pending_blocks: HashSet<u64>,
    /// A pending block's length, CRC and generation as a worker first
    /// reported a finalized replica of it: what a lease recovery closes
    /// the file with, since its writer never said (`lease.rs`).
    pending_reported: HashMap<u64, BlockInfo>,
    /// Every block of the namespace.
    owners: HashMap<u64, BlockOwner>,
    /// Block → live workers storing it (rebuilt from block reports).
    locations: Holders,
    /// Block → live workers holding it in their LRU cache (from cache
    /// reports), and each worker's cached blocks.
    cached: Holders,
    /// Block → the worker whose cache pins it (see `pins.rs`).
    pins: BTreeMap<u64, String>,
    /// Replications in flight, not re-issued before they time out.
    replicating: HashMap<u64, Instant>,
    /// No deletion and no re-replication until enough blocks are reported
    /// after a start (see `safemode.rs`).
    safe: SafeMode,
    /// The metadata disks against `[master] reserved_space` (`resource.rs`).
    resources: ResourceChecker,
    /// Block → workers whose replica was reported corrupt. They are not in
    /// `locations` (never handed to readers), and are deleted only once
    /// the block has its good replicas back: a corrupt last copy is kept.
    /// Loaded from the namespace's durable marks at a start; a mark leaves
    /// this map when its delete is sent, and the durable one when the
    /// worker reports the replica gone (see `Namespace::corrupt`).
    corrupt: HashMap<u64, BTreeSet<String>>,
    /// Blocks with no live replica at the last scan, so that each is
    /// reported once when it goes missing rather than at every scan.
    missing: BTreeSet<u64>,
    /// A replication that did not show up in a block report by then is retried.
    replication_timeout: Duration,
    default_replication: u32,
    default_block_size: u64,
    /// `[master] lease_soft` and `lease_hard` (`lease.rs`).
    lease_soft: Duration,
    lease_hard: Duration,
    rng: fastrand::Rng,
    /// What the last decommission pass found (see `decommission.rs`).
    drain: decommission::Drain,
    /// Where the tick's pass over the blocks is (`sweep.rs`).
    sweep: sweep::Sweep,
}

impl Blocks {
    pub fn open(cfg: &ClusterConfig, now: Instant) -> Result<Self> {
        let dirs = cfg.master.metadata_dirs();
        let (log, ns) = Journal::open(&dirs, cfg.master.snapshot_every)?;
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
        let corrupt = ns.corrupt.iter().map(|(id, w)| (*id, w.clone())).collect();
        let mut blocks = Blocks {
            ns,
            log,
            pending: HashMap::new(),
            pending_blocks: HashSet::new(),
            pending_reported: HashMap::new(),
            owners,
            locations: Holders::default(),
            cached: Holders::default(),
            pins: BTreeMap::new(),
            replicating: HashMap::new(),
            safe: SafeMode::at_start(cfg.master.safemode_threshold, now + cfg.heartbeat.expiry()),
            resources: ResourceChecker::new(dirs, cfg.master.reserved_space),
            corrupt,
            missing: BTreeSet::new(),
            replication_timeout: cfg.heartbeat.interval * 10 + Duration::from_secs(10),
            default_replication: cfg.dfs.replication,
            default_block_size: cfg.dfs.block_size,
            lease_soft: cfg.master.lease_soft,
            lease_hard: cfg.master.lease_hard,
            rng: fastrand::Rng::new(),
            drain: Default::default(),
            sweep: Default::default(),
        };
        // An empty namespace leaves safe mode at once (`SafeMode::update`).
        blocks.update_safe_mode(now);
        blocks.check_resources();
        Ok(blocks)
    }

    /// At every tick: safe mode while a metadata disk is below its reserve
    /// (`resource.rs`), and each failed metadata directory restored once
    /// its disk is not, so that `/healthz` clears without waiting for a
    /// write.
    pub fn check_resources(&mut self) {
        let low = self.resources.check();
        let failed: Vec<_> = (self.log.failures().into_iter())
            .map(|(dir, _)| dir.to_path_buf())
            .filter(|dir| !low.iter().any(|l| l.dir == *dir))
            .collect();
        for dir in failed {
            if let Err(e) = self.log.restore(&dir, &self.ns) {
                tracing::warn!(
                    dir = %dir.display(),
                    "the failed metadata directory cannot be restored yet: {e}"
                );
            }
        }
        self.safe.set_low_resources(resource::reason(&low));
    }

    /// Replaces how the metadata disks' free space is read (tests).
    pub fn set_free_space_probe(&mut self, free: FreeSpace) {
        self.resources.set_probe(free);
    }

    /// What makes the master unhealthy for `/healthz`: a failed metadata
    /// directory (one copy fewer; with every one failed, no namespace
    /// change is taken) and a metadata disk below its reserve.
    pub fn health(&self) -> Vec<String> {
        let all = self.log.all_failed();
        let mut problems: Vec<String> = (self.log.failures().into_iter())
            .map(|(dir, why)| match all {
                true => format!(
                    "the edit log is failed in {} ({why}), as in every metadata directory; \
                     namespace changes are refused until one is restored",
                    dir.display()
                ),
                false => format!(
                    "the edit log is failed in {} ({why}); the other metadata directories take \
                     namespace changes, and it is restored once a fresh snapshot and log can \
                     be written there",
                    dir.display()
                ),
            })
            .collect();
        if let Some(low) = self.safe.low_resources() {
            problems.push(low.to_string());
        }
        problems
    }

    /// Logs an edit durably, then applies it. Once the append returned, the
    /// edit is acknowledged whatever happens next: a failed checkpoint is
    /// logged, not returned (the caller would report a durable change as
    /// failed), and a directory that cannot go on is failed and skipped.
    /// With every directory failed, they are first restored
    /// (`Journal::recover`): the edit is refused only while that still
    /// fails. One failed directory among others is left to the tick, which
    /// waits for its disk to have room rather than rewrite a snapshot at
    /// every edit.
    pub fn commit(&mut self, edit: Edit) -> Result<()> {
        if self.log.all_failed() {
            self.log.recover(&self.ns)?;
        }
        self.log.append(&edit)?;
        self.ns.apply(&edit);
        if let Err(e) = self.log.maybe_checkpoint(&self.ns) {
            tracing::error!(
                "checkpoint failed after a durable edit: {e}; the edit stands, and a metadata \
                 directory whose log could not be replaced is failed until it is restored"
            );
        }
        Ok(())
    }

    pub fn sync(&mut self) -> Result<()> {
        Ok(self.log.sync()?)
    }

    /// The durable namespace, read-only: only [`Blocks::commit`] changes it.
    pub fn ns(&self) -> &Namespace {
        &self.ns
    }

    /// The file block `id` belongs to, with its replication factor.
    pub fn owner(&self, id: u64) -> Option<&BlockOwner> {
        self.owners.get(&id)
    }

    /// The workers storing block `id` as last reported, live or not yet
    /// known dead, by name.
    pub fn stored_on(&self, id: u64) -> impl Iterator<Item = &String> {
        self.locations.of(id)
    }

    /// The workers caching block `id` as last reported, by name.
    pub fn cached_by(&self, id: u64) -> impl Iterator<Item = &String> {
        self.cached.of(id)
    }

    /// One worker's cached blocks: what a scheduling view shows per node.
    pub fn cached_at(&self, worker: &str) -> HashSet<u64> {
        self.cached.blocks_of(worker)
    }

    /// Changes whenever a cached copy is recorded or forgotten.
    pub fn cache_generation(&self) -> u64 {
        self.cached.generation()
    }

    /// How many blocks `worker` reported cached.
    pub fn cached_count_at(&self, worker: &str) -> usize {
        self.cached.count_on(worker)
    }

    /// Blocks cached on at least one worker.
    pub fn cached_blocks(&self) -> usize {
        self.cached.len()
    }

    /// `mr admin safemode enter`: only an operator leaves it then.
    pub fn enter_safe_mode(&mut self) {
        self.safe.enter();
    }

    /// `mr admin safemode leave`.
    pub fn leave_safe_mode(&mut self) {
        self.safe.leave();
    }

    /// Refuses a client's write or delete (`what`) while in safe mode
    /// (`safemode.rs`). FailedPrecondition, not Unavailable: retrying does
    /// not help until the reports arrive or an operator acts, and clients
    /// read Unavailable as "the master is unreachable".
    pub fn check_writable(&self, what: &str) -> Result<()> {
        if !self.safe.is_on() {
            return Ok(());
        }
        Err(crate::error::MasterError::FailedPrecondition(
            self.safe_mode_status().refusal(what),
        ))
    }

    /// A block a worker may keep: in the namespace with that length and
    /// generation, or part of a file being written (in this generation). A
    /// replica with the right id but another generation is a stale copy
    /// (an id handed out again, a worker back from long ago): it is treated
    /// as unknown, quarantined and never counted, whatever its CRC says.
    fn is_known_block(&self, b: &BlockInfo) -> bool {
        if self.pending_blocks.contains(&b.id) {
            return b.generation == self.ns.generation;
        }
        self.owners
            .get(&b.id)
            .is_some_and(|o| o.meta.len == b.len && o.meta.generation == b.generation)
    }

    /// A worker's full reports at registration: returns how many of its
    /// blocks are known and how many it is told to move to its quarantine
    /// (never deleted outright: a namespace that does not know a block may
    /// be an older one, restored or recovered, and the block the only
    /// copy).
    pub fn full_report(
        &mut self,
        worker: &str,
        blocks: &[BlockInfo],
        cached: &[u64],
        out: &mut Outbox,
    ) -> (usize, usize) {
        self.drop_worker(worker);
        self.recheck_corrupt_marks(worker, blocks);
        let mut unknown = 0;
        let mut stored = 0;
        for b in blocks {
            if self.is_corrupt_on(b.id, worker) {
                continue;
            }
            if self.is_known_block(b) {
                self.note_pending_replica(b);
                self.locations.insert(b.id, worker);
                stored += 1;
            } else {
                out.send(worker, Command::QuarantineBlock(b.id));
                unknown += 1;
            }
        }
        for id in cached {
            if self.owners.contains_key(id) {
                self.cached.insert(*id, worker);
            }
        }
        (stored, unknown)
    }

    /// A full report settles `worker`'s corrupt marks: a marked replica it
    /// still holds is corrupt again, even if its delete was sent (the
    /// command died with the worker's queue when it restarted); one it no
    /// longer holds is forgotten, durably.
    fn recheck_corrupt_marks(&mut self, worker: &str, blocks: &[BlockInfo]) {
        let held: HashSet<u64> = blocks.iter().map(|b| b.id).collect();
        let marked: BTreeSet<u64> = (self.ns.corrupt.iter())
            .chain(self.corrupt.iter())
            .filter(|(_, s)| s.contains(worker))
            .map(|(id, _)| *id)
            .collect();
        for id in marked {
            if held.contains(&id) {
                self.corrupt
                    .entry(id)
                    .or_default()
                    .insert(worker.to_string());
            } else {
                self.unmark_corrupt(id, worker);
            }
        }
    }

    /// A heartbeat's incremental reports: returns the blocks the worker now
    /// stores; blocks it must not keep go to its quarantine.
    pub fn incremental_report(
        &mut self,
        worker: &str,
        added: &[BlockInfo],
        removed: &[u64],
        cache_added: &[u64],
        cache_removed: &[u64],
        out: &mut Outbox,
    ) -> usize {
        for b in added {
            if self.is_known_block(b) {
                self.note_pending_replica(b);
                // A fresh copy written over a corrupt one is good.
                self.unmark_corrupt(b.id, worker);
                self.locations.insert(b.id, worker);
            } else {
                out.send(worker, Command::QuarantineBlock(b.id));
            }
        }
        for id in removed {
            self.locations.remove(*id, worker);
            // A corrupt copy the worker dropped itself is no longer there
            // to keep or delete; the worker can take a good copy again.
            self.unmark_corrupt(*id, worker);
        }
        for id in cache_added {
            if self.owners.contains_key(id) {
                self.cached.insert(*id, worker);
            }
        }
        for id in cache_removed {
            self.cached.remove(*id, worker);
        }
        self.locations.count_on(worker)
    }

    /// Forgets what a worker stores and caches (it died or re-registers).
    pub fn drop_worker(&mut self, name: &str) {
        self.locations.drop_worker(name);
        self.cached.drop_worker(name);
    }

    /// A replica failed its checksum. It stops being handed to readers at
    /// once; it is deleted only after the block has its good replicas back
    /// (`replication.rs`), and never when it is the last copy: a corrupt
    /// block may still be partly readable, and deleting it loses the data
    /// for good (HDFS keeps corrupt replicas until a good one exists).
    pub fn report_bad_block(&mut self, worker: &str, block: u64, reason: &str) {
        if !self.owners.contains_key(&block) && !self.pending_blocks.contains(&block) {
            tracing::info!(
                worker,
                block,
                reason,
                "bad block reported for a block the namespace does not know"
            );
            return;
        }
        let good_elsewhere = self.locations.of(block).filter(|w| *w != worker).count();
        if good_elsewhere == 0 {
            tracing::error!(
                worker,
                block,
                reason,
                "the last replica of the block is corrupt: kept, marked corrupt, not served to \
                 readers (see `mr admin fsck`)"
            );
        } else {
            tracing::warn!(
                worker,
                block,
                reason,
                good_elsewhere,
                "corrupt replica reported; it is replaced from a good one, then deleted"
            );
        }
        let held = self.locations.remove(block, worker);
        self.cached.remove(block, worker);
        // A worker that already reported the copy removed (it drops a
        // replica failing its checksum) holds nothing to keep or delete.
        if held {
            self.corrupt
                .entry(block)
                .or_default()
                .insert(worker.to_string());
            if !self.durably_corrupt(block, worker) {
                self.log_corrupt(Edit::MarkCorrupt {
                    block,
                    worker: worker.to_string(),
                });
            }
        }
        self.replicating.remove(&block);
    }

    fn durably_corrupt(&self, block: u64, worker: &str) -> bool {
        self.ns
            .corrupt
            .get(&block)
            .is_some_and(|s| s.contains(worker))
    }

    /// Records a corrupt mark's change in the edit log. A failed append
    /// leaves the mark in memory only: it holds until a restart, as every
    /// mark did before they were logged, and the log says so.
    fn log_corrupt(&mut self, edit: Edit) {
        if let Err(e) = self.commit(edit.clone()) {
            tracing::error!(
                ?edit,
                "cannot log a corrupt-replica mark: {e}; it holds until the master restarts"
            );
        }
    }

    fn is_corrupt_on(&self, block: u64, worker: &str) -> bool {
        self.corrupt.get(&block).is_some_and(|s| s.contains(worker))
    }

    /// The worker reported the replica gone or written afresh: the mark
    /// goes, from memory and from the log.
    fn unmark_corrupt(&mut self, block: u64, worker: &str) {
        if let Some(s) = self.corrupt.get_mut(&block) {
            s.remove(worker);
            if s.is_empty() {
                self.corrupt.remove(&block);
            }
        }
        if self.durably_corrupt(block, worker) {
            self.log_corrupt(Edit::ClearCorrupt {
                block,
                worker: worker.to_string(),
            });
        }
    }

    /// Namespace blocks with at least one live replica reported.
    pub fn reported_blocks(&self) -> u64 {
        self.owners
            .keys()
            .filter(|id| self.locations.count(**id) > 0)
            .count() as u64
    }

    /// Leaves safe mode if the reports reached the threshold.
    pub fn update_safe_mode(&mut self, now: Instant) {
        // Counting the reported blocks is a pass over all of them: only
        // while the start-up's safe mode waits for reports.
        if !self.safe.awaits_reports() {
            return;
        }
        let (reported, total) = (self.reported_blocks(), self.owners.len() as u64);
        self.safe.update(reported, total, now);
    }

    pub fn safe_mode_status(&self) -> SafeModeStatus {
        self.safe
            .status(self.reported_blocks(), self.owners.len() as u64)
    }

    /// Removes a block from every table and tells its holders to delete it.
    /// Holders we do not know of delete it at their next block report.
    pub fn forget_block(&mut self, id: u64, out: &mut Outbox) {
        self.owners.remove(&id);
        self.replicating.remove(&id);
        self.missing.remove(&id);
        let corrupt = self.corrupt.remove(&id).unwrap_or_default();
        let holders: BTreeSet<String> = (self.locations.remove_block(id).into_iter())
            .chain(self.cached.remove_block(id))
            .chain(corrupt)
            .collect();
        for h in holders {
            out.send(&h, Command::DeleteBlock(id));
        }
    }

    /// The live workers storing block `id`.
    pub fn replicas(&self, id: u64, cluster: &Cluster) -> Vec<WorkerAddr> {
        cluster.live_addrs(self.locations.of(id))
    }

    /// The live workers caching block `id`.
    pub fn cached_on(&self, id: u64, cluster: &Cluster) -> Vec<WorkerAddr> {
        cluster.live_addrs(self.cached.of(id))
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
            .filter(|(id, o)| self.locations.count(**id) < o.replication as usize)
            .count()
    }
}
