//! Leases on files being written, after HDFS's LeaseManager.
//!
//! A write holds its path from create to complete or abandon. A writer
//! killed in between would hold it, and leave its blocks orphaned, until
//! the master restarts; so, as in HDFS, a lease has two limits on its
//! holder's silence (the create, each new block and the writer's
//! `RenewLease` calls, every half soft limit, renew it, on the master's
//! monotonic clock):
//!
//! - past the soft limit (`[master] lease_soft`, 60 s), another client's
//!   create of the same path recovers it first (`Blocks::create_file`);
//! - past the hard limit (`lease_hard`, 1 h), the master's tick recovers it
//!   itself, so that nothing stays open for ever.
//!
//! `mr admin recover-lease` (HDFS's `hdfs debug recoverLease`) recovers
//! one at once. Recovery closes the file at its last complete block, as
//! HDFS's block recovery does: the longest run of blocks from the start of
//! the file that a worker has reported a finalized replica of, so that the
//! file holds exactly what some worker acknowledged, in order; the blocks
//! after it are deleted, and a file with no such block is removed. The
//! file is logged as a completed one is (`Edit::AddFile`), so a restart
//! keeps it.
//!
//! A running job's parts are never taken over by a create or
//! `recover-lease`: their writes end with the job (`drop_leases_under`),
//! and only the hard limit applies to them.

use super::files::PendingFile;
use super::namespace::{Edit, FileMeta};
use super::{BlockOwner, Blocks};
use crate::cluster::Outbox;
use crate::error::{MasterError, Result};
use protocol::BlockInfo;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// What a lease recovery did to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The acknowledged blocks became the file.
    Closed { bytes: u64, blocks: usize },
    /// No block was acknowledged: there is no file.
    Removed,
    /// No write of the path was open.
    NoOpenWrite,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    pub outcome: Outcome,
    /// Who held the lease.
    pub holder: String,
    /// How long the holder had been silent.
    pub silent: Duration,
}

impl Recovered {
    /// No write of the path was open.
    pub fn none() -> Self {
        Recovered {
            outcome: Outcome::NoOpenWrite,
            holder: String::new(),
            silent: Duration::ZERO,
        }
    }

    /// For error messages and logs.
    pub fn describe(&self) -> String {
        let what = match self.outcome {
            Outcome::Closed { bytes, blocks } => {
                format!("closed at {bytes} bytes in {blocks} blocks")
            }
            Outcome::Removed => "removed: nothing was acknowledged".to_string(),
            Outcome::NoOpenWrite => return "no write was open".to_string(),
        };
        format!(
            "{what}; held by {:?}, silent for {:.1}s",
            self.holder,
            self.silent.as_secs_f64()
        )
    }
}

/// The holder of an open write, for the checks made before a recovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHolder {
    pub lease: u64,
    pub path: String,
    pub owner: String,
    /// The worker writing it, when a task does.
    pub writer: Option<String>,
    pub last_heard: Instant,
}

impl PendingFile {
    /// Written by a job's task: a worker's write, or a part in staging
    /// (only running jobs' tasks may write there). Its job ends the write.
    fn by_task(&self) -> bool {
        self.writer.is_some() || crate::blocks::namespace::is_staging(&self.path)
    }
}

impl Blocks {
    /// `RenewLease`: the writer of `path` under `lease` is alive, however
    /// long its next block takes to fill (a `put` from a slow pipe).
    pub fn renew_lease(&mut self, path: &str, lease: u64, now: Instant) -> Result<()> {
        let path = common::path::DfsPath::parse_file(path)?;
        self.pending_mut(lease, path.as_str())?.last_heard = now;
        Ok(())
    }

    /// How often a writer renews: half the soft limit, as HDFS's clients.
    pub fn renew_every(&self) -> Duration {
        self.lease_soft / 2
    }

    /// The open write of `path`, if any.
    pub fn lease_holder(&self, path: &str) -> Option<LeaseHolder> {
        self.pending
            .iter()
            .find(|(_, p)| p.path == path)
            .map(|(lease, p)| LeaseHolder {
                lease: *lease,
                path: p.path.clone(),
                owner: p.owner.clone(),
                writer: p.writer.clone(),
                last_heard: p.last_heard,
            })
    }

    /// Refuses (and logs) the recovery of another's open write of `raw` by
    /// `who`, unless `who` is an admin: it would make their partial file
    /// visible, or let an overwrite replace it. No open write is no
    /// refusal.
    pub fn may_recover(&self, raw: &str, who: &rpc::auth::Identity) -> Result<()> {
        let Ok(path) = common::path::DfsPath::parse_file(raw) else {
            return Ok(()); // the call itself says what is wrong with it
        };
        let Some(h) = self.lease_holder(path.as_str()) else {
            return Ok(());
        };
        let owner = match h.owner.as_str() {
            "" => rpc::auth::ADMIN_NAME,
            o => o,
        };
        if who.owns_or_admin(owner) {
            return Ok(());
        }
        tracing::warn!(user = %who.name, path = %path, owner, "permission denied: not the writer's lease");
        Err(MasterError::PermissionDenied(format!(
            "permission denied: {path} is being written by {owner:?}; user {:?} may only recover their own writes",
            who.name
        )))
    }

    /// A create's view of an open write of its path: refused while its
    /// holder is within the soft limit (saying when it may be recovered)
    /// or is a task, recovered past it. Returns what the recovery did.
    pub(super) fn take_over_stale_lease(
        &mut self,
        path: &str,
        overwrite: bool,
        now: Instant,
        out: &mut Outbox,
    ) -> Result<Option<Recovered>> {
        let Some((&lease, p)) = self.pending.iter().find(|(_, p)| p.path == path) else {
            return Ok(None);
        };
        let silent = now.saturating_duration_since(p.last_heard);
        if p.by_task() || silent < self.lease_soft {
            // A file that is there and may not be replaced is the answer
            // whoever writes it.
            self.check_creatable(path, overwrite)?;
            if p.by_task() {
                return Err(MasterError::AlreadyExists(format!(
                    "{path} is being written by a task of a running job: the write ends with the job"
                )));
            }
            return Err(MasterError::AlreadyExists(format!(
                "{path} is being written by another client ({:?}, silent for {:.1}s): its lease \
                 may be recovered in {:.1}s (lease_soft {:.1}s); `mr admin recover-lease {path}` \
                 recovers it now",
                p.owner,
                silent.as_secs_f64(),
                (self.lease_soft - silent).as_secs_f64(),
                self.lease_soft.as_secs_f64()
            )));
        }
        self.recover_lease(lease, now, "soft limit", out).map(Some)
    }

    /// The master's tick: recovers every lease whose holder has been
    /// silent for the hard limit, tasks' too. Returns how many.
    pub fn recover_expired_leases(&mut self, now: Instant, out: &mut Outbox) -> usize {
        let mut expired: Vec<(String, u64)> = self
            .pending
            .iter()
            .filter(|(_, p)| now.saturating_duration_since(p.last_heard) >= self.lease_hard)
            .map(|(lease, p)| (p.path.clone(), *lease))
            .collect();
        // The same order in every run (the simulation replays seeds).
        expired.sort();
        let mut n = 0;
        for (path, lease) in expired {
            match self.recover_lease(lease, now, "hard limit", out) {
                Ok(_) => n += 1,
                Err(e) => {
                    tracing::warn!(path = %path, "lease past its hard limit not recovered: {e}")
                }
            }
        }
        n
    }

    /// Closes the write under `lease` at its last complete block, whoever
    /// holds it (the callers check): see the module's comment.
    pub fn recover_lease(
        &mut self,
        lease: u64,
        now: Instant,
        why: &'static str,
        out: &mut Outbox,
    ) -> Result<Recovered> {
        let Some(p) = self.pending.get(&lease) else {
            return Ok(Recovered::none());
        };
        let path = p.path.clone();
        let mut r = Recovered {
            outcome: Outcome::Removed,
            holder: p.owner.clone(),
            silent: now.saturating_duration_since(p.last_heard),
        };
        let blocks = self.acknowledged(p);
        // The path may have become a directory, or a file's child, since
        // the create: then the blocks cannot become that file.
        let creatable = self.check_creatable(&path, p.overwrite);
        if blocks.is_empty() || creatable.is_err() {
            self.drop_lease(lease, out);
            if let Err(e) = creatable {
                tracing::warn!(path = %path, why, "lease recovered, but the file cannot be closed ({e}): its blocks are deleted");
            } else {
                tracing::info!(path = %path, holder = %r.holder, silent_s = r.silent.as_secs_f64(), why,
                    "lease recovered: no block was acknowledged, nothing becomes visible");
            }
            return Ok(r);
        }
        let (replication, block_size, owner) = (p.replication, p.block_size, p.owner.clone());
        let old = self.ns.files.get(&path).cloned();
        self.commit(Edit::AddFile {
            path: path.clone(),
            file: FileMeta {
                mode: crate::blocks::namespace::FILE_MODE,
                replication,
                block_size,
                blocks: blocks.clone(),
                mtime_ms: common::now_ms(),
                owner,
            },
        })?;
        let p = self.pending.remove(&lease).expect("checked");
        let kept: HashSet<u64> = blocks.iter().map(|b| b.id).collect();
        for id in p.blocks {
            self.pending_blocks.remove(&id);
            self.pending_reported.remove(&id);
            if !kept.contains(&id) {
                self.forget_block(id, out);
            }
        }
        for b in &blocks {
            self.owners.insert(
                b.id,
                BlockOwner {
                    meta: *b,
                    replication,
                },
            );
        }
        if let Some(old) = old {
            for b in old.blocks {
                self.forget_block(b.id, out);
            }
        }
        let bytes = blocks.iter().map(|b| b.len).sum();
        r.outcome = Outcome::Closed {
            bytes,
            blocks: blocks.len(),
        };
        tracing::info!(path = %path, holder = %r.holder, silent_s = r.silent.as_secs_f64(), why,
            bytes, blocks = blocks.len(), "lease recovered: file closed at its last complete block");
        Ok(r)
    }

    /// The file's acknowledged blocks, in order: from offset 0, each next
    /// block is one placed right after the previous that a live worker
    /// holds a finalized replica of. A block whose place is unknown, or a
    /// hole, ends it. Among copies of one place (a retried block) the
    /// best-replicated wins, then the later.
    fn acknowledged(&self, p: &PendingFile) -> Vec<BlockInfo> {
        let mut at: HashMap<u64, (usize, usize, BlockInfo)> = HashMap::new();
        for (order, id) in p.blocks.iter().enumerate() {
            let (Some(&offset), Some(meta)) = (p.offsets.get(id), self.pending_reported.get(id))
            else {
                continue;
            };
            let live = self.locations.count(*id);
            if live == 0 || meta.len == 0 || meta.len > p.block_size {
                continue;
            }
            let better = at
                .get(&offset)
                .is_none_or(|&(l, o, _)| (live, order) > (l, o));
            if better {
                at.insert(offset, (live, order, *meta));
            }
        }
        let mut blocks = Vec::new();
        let mut offset = 0;
        while let Some((_, _, meta)) = at.remove(&offset) {
            offset += meta.len;
            blocks.push(meta);
        }
        blocks
    }

    /// Remembers a pending block's reported length and CRC, from its
    /// first finalized replica: the writer, if it dies, never says them.
    pub(super) fn note_pending_replica(&mut self, b: &BlockInfo) {
        if self.pending_blocks.contains(&b.id) {
            self.pending_reported.entry(b.id).or_insert(*b);
        }
    }
}
