//! What the master last said of this worker's replicas, kept by the
//! master link from each heartbeat's answer: whether the worker may be
//! taken away now (`/readyz`, `edge/health.rs`), and while it drains, how
//! many of its blocks are left to copy (`control/drain.rs` waits on it).
//! Here, beside the link that hears it, so the edge names nothing of the
//! control group.

use protocol::StopAnswer;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What the master last said of this worker's replicas, from heartbeat
/// answers.
#[derive(Debug, Default)]
pub struct Safety {
    /// It holds replicas no one else has enough of: being drained and not
    /// yet copied, or the only counted replica of a block that wants more.
    /// `/readyz` answers 503 meanwhile, so that an orchestrator's
    /// disruption budget waits before it takes another worker.
    unsafe_to_stop: AtomicBool,
    /// 1 + the blocks the master can still copy elsewhere, from the last
    /// answer to a draining heartbeat; 0 before one.
    left: AtomicU64,
    /// When that answer came, wall-clock milliseconds.
    at_ms: AtomicU64,
    /// A draining heartbeat failed since that answer: the master is away
    /// (stopped first, or unreachable) and copies nothing meanwhile.
    away: AtomicBool,
}

impl Safety {
    /// A heartbeat's answer; `draining`: the heartbeat said so.
    pub fn heard(&self, draining: bool, stop: StopAnswer) {
        self.unsafe_to_stop
            .store(stop.unsafe_to_stop, Ordering::SeqCst);
        if draining {
            self.left
                .store(stop.blocks_to_copy.saturating_add(1), Ordering::SeqCst);
            self.at_ms.store(common::now_ms(), Ordering::SeqCst);
            self.away.store(false, Ordering::SeqCst);
        }
    }

    /// A heartbeat failed; `draining`: it said so.
    pub fn unanswered(&self, draining: bool) {
        if draining {
            self.away.store(true, Ordering::SeqCst);
        }
    }

    pub fn unsafe_to_stop(&self) -> bool {
        self.unsafe_to_stop.load(Ordering::SeqCst)
    }

    /// The blocks left to copy as of the last draining answer, and when it
    /// came; `None` before one.
    pub fn left(&self) -> Option<(u64, u64)> {
        match self.left.load(Ordering::SeqCst) {
            0 => None,
            n => Some((n - 1, self.at_ms.load(Ordering::SeqCst))),
        }
    }

    /// Forgets the answers to heartbeats sent before the drain began.
    pub fn reset(&self) {
        self.left.store(0, Ordering::SeqCst);
        self.away.store(false, Ordering::SeqCst);
    }

    pub fn away(&self) -> bool {
        self.away.load(Ordering::SeqCst)
    }
}
