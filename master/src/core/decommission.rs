//! `mr admin decommission|recommission`: the operator's side of
//! `blocks/decommission.rs`. The replication scan does the copying at
//! each tick; these only change the durable set and say where a worker is.

use super::MasterState;
use crate::cluster::leaving::AdminState;
use crate::cluster::status::WorkerStatus;
use crate::cluster::Outbox;
use crate::error::{MasterError, Result};
use std::time::Instant;

/// Where a worker is after a decommission or recommission.
#[derive(Debug, Clone, PartialEq)]
pub struct Decommission {
    pub worker: String,
    pub state: AdminState,
    /// Its blocks not yet safe elsewhere.
    pub blocks_under_replicated: u64,
}

impl MasterState {
    /// Starts decommissioning `worker` (`on`), or ends it: a recommissioned
    /// worker takes tasks and new blocks again, and the copies made of its
    /// blocks meanwhile are trimmed as excess replicas by the next scans
    /// (as HDFS does on recommission). Asking twice changes nothing.
    pub fn decommission(&mut self, worker: &str, on: bool, now: Instant) -> Result<Decommission> {
        // A name no longer in the cluster file (a worker scaled away after
        // its decommission) may still be taken out of the set.
        let known = self.cfg.worker(worker).is_some()
            || self.cluster.get(worker).is_some()
            || (!on && self.blocks.decommissioned().contains(worker));
        if !known {
            return Err(MasterError::NotFound(format!(
                "no worker named {worker:?} in the master's cluster file"
            )));
        }
        if self.blocks.set_decommissioned(worker, on)? {
            self.view_stale();
            if on {
                tracing::info!(worker, "decommission requested: no new tasks or blocks; its blocks are copied elsewhere");
            } else {
                tracing::info!(worker, "recommissioned: it takes tasks and blocks again");
                // Its slots are free for the queue again.
                let mut out = Outbox::default();
                self.offer_all(now, &mut out);
                self.cluster.flush(out);
            }
        }
        self.blocks.update_drain(&self.cluster);
        let (state, left) = self.blocks.admin_state(worker, &self.cluster);
        Ok(Decommission {
            worker: worker.to_string(),
            state,
            blocks_under_replicated: left,
        })
    }

    /// Every worker as `cluster status` shows it, with where it is on its way out.
    pub(super) fn worker_statuses(&self) -> Vec<WorkerStatus> {
        let mut workers = self
            .cluster
            .status(&self.cfg, |w| self.blocks.pinned_bytes(w));
        for w in &mut workers {
            (w.admin_state, w.blocks_under_replicated) =
                self.blocks.admin_state(&w.name, &self.cluster);
        }
        workers
    }
}
