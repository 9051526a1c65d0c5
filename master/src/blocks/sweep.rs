//! The tick's pass over the namespace, a window of blocks at a time.
//!
//! Re-replication and the decommission tally look at every block; at a
//! million blocks one pass holds the master's lock for a large part of a
//! second, every half heartbeat, and every heartbeat waits behind it. As
//! HDFS's replication and decommission monitors bound the blocks one run
//! of theirs looks at, each tick here goes over [`WINDOW`] blocks in id
//! order and carries on from there at the next: a namespace smaller than
//! the window is gone over whole at every tick, as before; a million
//! blocks every 16 ticks (8 s at the default 1 s heartbeat). A block that
//! loses a replica waits at most that long to be queued for copying.

use super::decommission::DrainTally;
use super::Blocks;
use crate::cluster::{Cluster, Outbox};
use std::time::Instant;

/// Blocks one tick goes over.
pub const WINDOW: usize = 65_536;

/// Where the pass is.
#[derive(Debug, Default)]
pub struct Sweep {
    /// The namespace's blocks when the pass began, by id.
    order: Vec<u64>,
    next: usize,
    tally: DrainTally,
}

impl Blocks {
    /// One tick's window: the blocks re-replicated or trimmed, and the
    /// decommission tally advanced (published when the pass ends);
    /// returns the commands queued.
    pub fn sweep(&mut self, cluster: &Cluster, now: Instant, out: &mut Outbox) -> usize {
        let mut s = std::mem::take(&mut self.sweep);
        if s.next >= s.order.len() {
            s.order = self.owners.keys().copied().collect();
            s.order.sort_unstable();
            s.next = 0;
            s.tally = DrainTally::start(self.leaving_names(cluster));
        }
        let end = (s.next + WINDOW).min(s.order.len());
        let window = &s.order[s.next..end];
        let issued = self.replicate(window, cluster, now, out);
        self.tally_drain(window, cluster, &mut s.tally);
        s.next = end;
        if s.next >= s.order.len() {
            self.publish_drain(std::mem::take(&mut s.tally), cluster);
        }
        self.sweep = s;
        issued
    }
}
