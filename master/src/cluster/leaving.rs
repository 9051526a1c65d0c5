//! How a leaving worker looks from outside: its admin state in `cluster
//! status`. The decisions are `blocks/decommission.rs`'s, which counts the
//! replicas, as is the heartbeat answer's word on whether the worker may
//! stop (`protocol::StopAnswer`); the word is here, with the membership
//! whose status carries it, so that `cluster` imports nothing of `blocks`.

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
