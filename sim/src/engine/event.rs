//! The events of the loop, earliest first.

use super::job::MapRun;
use sched::TaskId;
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Heartbeat(usize),
    Arrival(usize),
    /// A map launched for a later start (its node's next heartbeat) whose
    /// read goes over the network: the read starts then.
    MapBegin(MapRun),
    MapDone {
        run: MapRun,
        read_s: f64,
    },
    /// A reduce launched for a later start: its fetches start then.
    ReduceBegin {
        node: usize,
        task: TaskId,
    },
    ReduceDone {
        node: usize,
        task: TaskId,
    },
    BackgroundDone(usize),
    /// The network's next transfer end, valid while the network's version
    /// is this one (a transfer started or ended since makes it stale).
    Transfer(u64),
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Event {
    pub(super) at: f64,
    pub(super) seq: u64,
    pub(super) kind: Kind,
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
