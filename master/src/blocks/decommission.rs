//! Decommissioning, as HDFS's `DatanodeAdminManager` does it: a worker an
//! operator decommissions (`mr admin decommission`), or one that drains
//! on SIGTERM, is *leaving*. A leaving worker stays a replication source
//! and keeps serving reads, but takes no new block and no new task, and
//! its replicas do not count toward a block's replication factor, so the
//! replication scan (`replication.rs`) copies what it holds to the other
//! workers. Once every block it holds is safe elsewhere it is
//! `decommissioned`: it can be stopped without losing a replica anyone
//! needs.
//!
//! A block is safe elsewhere once it has its replication factor in live
//! replicas on workers that are not leaving, or at least one such replica
//! and one on every worker that could take a copy (a small cluster).
//! With no worker left to copy to, the drain never ends, as in HDFS: the
//! last copy of a block never goes out of service by itself.
//!
//! Only the operator's set is durable (in the edit log: `Edit::Decommission`,
//! where HDFS reads an excludes file); a worker's own drain ends with its
//! incarnation. A decommissioned worker that is dead, or never registered,
//! is decommissioned at once (HDFS's "dead node is decommissioned
//! immediately"): it holds nothing the master counts. Except just after a
//! master start: until safe mode ends (never before the expiry interval),
//! a worker not yet registered may still come with blocks, and stays
//! `decommissioning`.

use super::Blocks;
use crate::cluster::leaving::AdminState;
use crate::cluster::Cluster;
use crate::error::Result;
use common::placement::Candidate;
use protocol::StopAnswer;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// What the last drain pass found, kept so that heartbeats and `cluster
/// status` read it without a pass of their own.
#[derive(Debug, Default)]
pub struct Drain {
    /// Each live leaving worker: how many of its blocks are not yet safe elsewhere.
    left: BTreeMap<String, u64>,
    /// Live workers, not leaving, holding the only counted replica of a
    /// block that wants more: taking one away now loses the block.
    sole: BTreeSet<String>,
    /// Each decommissioned worker's state as last logged.
    logged: BTreeMap<String, AdminState>,
}

/// A drain pass under way: the workers leaving when it began, with how
/// many of their blocks are not yet safe elsewhere, and the sole holders
/// found so far.
#[derive(Debug, Default)]
pub struct DrainTally {
    left: BTreeMap<String, u64>,
    sole: BTreeSet<String>,
}

impl DrainTally {
    pub fn start(leaving: BTreeSet<String>) -> Self {
        DrainTally {
            left: leaving.into_iter().map(|n| (n, 0)).collect(),
            sole: BTreeSet::new(),
        }
    }
}

/// The live workers and which of them are leaving, for one pass.
struct Leaving {
    names: BTreeSet<String>,
    /// Live workers that are not leaving: where copies can go.
    targets: usize,
}

impl Blocks {
    fn leaving(&self, cluster: &Cluster) -> Leaving {
        let mut names = cluster.draining().clone();
        for w in &self.ns.decommissioned {
            if cluster.is_alive(w) {
                names.insert(w.clone());
            }
        }
        let targets = cluster.candidates().len() - names.len();
        Leaving { names, targets }
    }

    /// The live workers leaving (decommissioned or draining), by name.
    pub(super) fn leaving_names(&self, cluster: &Cluster) -> BTreeSet<String> {
        self.leaving(cluster).names
    }

    /// Whether `worker`'s replicas are sources only, not counted: it is
    /// decommissioned or draining.
    pub fn is_leaving(&self, worker: &str, cluster: &Cluster) -> bool {
        self.ns.decommissioned.contains(worker) || cluster.get(worker).is_some_and(|w| w.draining)
    }

    /// Where new replicas may go: every live worker that is not leaving
    /// (HDFS never chooses a decommissioning node as a target).
    pub fn targets(&self, cluster: &Cluster) -> Arc<[Candidate]> {
        let leaving = self.leaving(cluster);
        let all = cluster.candidates();
        if leaving.names.is_empty() {
            return all;
        }
        (all.iter())
            .filter(|c| !leaving.names.contains(&c.name))
            .cloned()
            .collect()
    }

    /// The workers an operator decommissioned, by name.
    pub fn decommissioned(&self) -> &BTreeSet<String> {
        &self.ns.decommissioned
    }

    /// Adds `worker` to the durable decommission set (`on`) or takes it
    /// out; returns whether that changed anything.
    pub fn set_decommissioned(&mut self, worker: &str, on: bool) -> Result<bool> {
        if self.ns.decommissioned.contains(worker) == on {
            return Ok(false);
        }
        self.commit(super::namespace::Edit::Decommission {
            worker: worker.to_string(),
            on,
        })?;
        if !on {
            self.drain.logged.remove(worker);
        }
        Ok(true)
    }

    /// Whether block `id`'s replicas on workers that are not leaving make
    /// it safe without the leaving ones.
    fn safe_without_leaving(&self, id: u64, want: u32, leaving: &Leaving) -> (bool, usize) {
        let counted = (self.locations.of(id))
            .filter(|w| !leaving.names.contains(*w))
            .count();
        let safe = counted >= want as usize || (counted >= 1 && counted >= leaving.targets);
        (safe, counted)
    }

    /// One pass over every block: how much each leaving worker still has
    /// to hand over, and who holds a last counted replica. Logs each
    /// decommissioned worker's changes of state. Run when a decommission
    /// starts or ends; the tick does the same a window at a time
    /// (`sweep.rs`).
    pub fn update_drain(&mut self, cluster: &Cluster) {
        let mut tally = DrainTally::start(self.leaving(cluster).names);
        let ids: Vec<u64> = self.owners.keys().copied().collect();
        self.tally_drain(&ids, cluster, &mut tally);
        self.publish_drain(tally, cluster);
    }

    /// Adds blocks `ids` to `tally` (ids no longer in the namespace are
    /// skipped).
    pub(super) fn tally_drain(&self, ids: &[u64], cluster: &Cluster, tally: &mut DrainTally) {
        let leaving = self.leaving(cluster);
        for id in ids {
            let Some(owner) = self.owners.get(id) else {
                continue;
            };
            let (safe, counted) = self.safe_without_leaving(*id, owner.replication, &leaving);
            let holders = self.locations.of(*id);
            if !safe {
                for h in holders.clone() {
                    if let Some(n) = tally.left.get_mut(h) {
                        *n += 1;
                    }
                }
            }
            if counted == 1 && owner.replication >= 2 {
                if let Some(h) = holders.into_iter().find(|h| !leaving.names.contains(*h)) {
                    tally.sole.insert(h.clone());
                }
            }
        }
    }

    /// Makes a finished tally the drain state, and logs what changed.
    /// Only workers leaving for the whole of its pass are counted: one
    /// that began to leave halfway reads "not yet counted", never a
    /// partial 0 ("decommissioned").
    pub(super) fn publish_drain(&mut self, tally: DrainTally, cluster: &Cluster) {
        let leaving = self.leaving(cluster).names;
        let DrainTally { mut left, sole } = tally;
        left.retain(|n, _| leaving.contains(n));
        self.drain.left = left;
        self.drain.sole = sole;
        let names: Vec<String> = self.ns.decommissioned.iter().cloned().collect();
        for name in names {
            let (state, n) = self.admin_state(&name, cluster);
            let was = self.drain.logged.insert(name.clone(), state);
            if was != Some(state) {
                match state {
                    AdminState::Decommissioned => tracing::info!(worker = %name,
                        "worker decommissioned: every block it holds is safe elsewhere; it can be stopped"),
                    _ => tracing::info!(worker = %name, blocks_left = n,
                        "worker decommissioning: copying its blocks to other workers"),
                }
            }
        }
    }

    /// `worker`'s state and how many of its blocks are not yet safe
    /// elsewhere, as of the last pass (0 for a worker that is not leaving).
    pub fn admin_state(&self, worker: &str, cluster: &Cluster) -> (AdminState, u64) {
        let alive = cluster.is_alive(worker);
        let left = self.drain.left.get(worker).copied();
        if self.ns.decommissioned.contains(worker) {
            // Not heard from since this master started, and it may still
            // register with blocks (safe mode lasts at least the expiry).
            let unknown = !alive && cluster.get(worker).is_none() && self.safe.is_on();
            return match (alive, left) {
                (false, _) if unknown => (AdminState::Decommissioning, 0),
                (false, _) | (true, Some(0)) => (AdminState::Decommissioned, 0),
                // Not yet counted since it came back or was decommissioned.
                (true, None) => (AdminState::Decommissioning, 0),
                (true, Some(n)) => (AdminState::Decommissioning, n),
            };
        }
        match cluster.get(worker) {
            Some(w) if w.alive && w.draining => (AdminState::Draining, left.unwrap_or(0)),
            _ => (AdminState::Normal, 0),
        }
    }

    /// What a heartbeat of `worker` answers on whether it may go. A leaving
    /// worker's count is taken now, not at the last pass: the heartbeat
    /// that started its drain must not be told it is done.
    pub fn stop_answer(&self, worker: &str, cluster: &Cluster) -> StopAnswer {
        if !self.is_leaving(worker, cluster) {
            return StopAnswer {
                unsafe_to_stop: self.drain.sole.contains(worker),
                blocks_to_copy: 0,
            };
        }
        let leaving = self.leaving(cluster);
        let left = (self.locations.blocks_of(worker).into_iter())
            .filter_map(|id| self.owners.get(&id).map(|o| (id, o.replication)))
            .filter(|&(id, want)| !self.safe_without_leaving(id, want, &leaving).0)
            .count() as u64;
        StopAnswer {
            unsafe_to_stop: left > 0,
            blocks_to_copy: if leaving.targets > 0 { left } else { 0 },
        }
    }
}
