//! How a leaving worker looks from outside: its admin state in `cluster
//! status` and the heartbeat answer's word on whether it may stop. The
//! decisions are `blocks/decommission.rs`'s, which counts the replicas;
//! the words are here, with the membership whose status and heartbeat
//! answers carry them, so that `cluster` imports nothing of `blocks` but
//! its plain-data namespace.

/// Where a worker is on its way out, as `mr cluster status` shows it
/// (HDFS's `AdminStates`, with `draining` for a worker's own SIGTERM).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AdminState {
    #[default]
    Normal,
    /// Shutting down on SIGTERM: its blocks are copied away meanwhile.
    Draining,
    /// Decommissioned by an operator; its blocks are not yet safe elsewhere.
    Decommissioning,
    /// Decommissioned by an operator, and nothing it holds is needed: it can be stopped.
    Decommissioned,
}

impl AdminState {
    pub fn as_str(self) -> &'static str {
        match self {
            AdminState::Normal => "normal",
            AdminState::Draining => "draining",
            AdminState::Decommissioning => "decommissioning",
            AdminState::Decommissioned => "decommissioned",
        }
    }
}

/// The heartbeat answer's word on whether this worker may go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StopAnswer {
    /// It holds replicas nobody else has enough of: an orchestrator must
    /// not take it away (its `/readyz` says so).
    pub unsafe_to_stop: bool,
    /// Of its blocks not yet safe elsewhere, how many the master can still
    /// copy: a draining worker waits for 0. 0 with `unsafe_to_stop` means
    /// no other worker can take them, so waiting would not help.
    pub blocks_to_copy: u64,
}
