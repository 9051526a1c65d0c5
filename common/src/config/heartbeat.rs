//! `[heartbeat]` and `[jobs]`: how long the master waits on workers and
//! on task attempts before it gives up on them.

use super::*;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeartbeatConfig {
    #[serde(deserialize_with = "de_duration", default = "default_interval")]
    pub interval: Duration,
    /// Heartbeats missed before a worker is dead. At least 2, so that one late
    /// heartbeat of a busy worker never kills it (Ballista #785).
    #[serde(default = "default_dead_after")]
    pub dead_after: u32,
}

pub(super) fn default_interval() -> Duration {
    Duration::from_secs(1)
}
pub(super) fn default_dead_after() -> u32 {
    5
}

impl Default for HeartbeatConfig {
    fn default() -> Self {
        HeartbeatConfig {
            interval: default_interval(),
            dead_after: default_dead_after(),
        }
    }
}

/// `[jobs]`: what the master holds every job's attempts to.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobsConfig {
    /// An attempt whose progress counter has not moved for this long is
    /// killed and tried again on another worker: Hadoop's
    /// `mapreduce.task.timeout`, whose default (600 s) this is. `0s`
    /// turns it off. Never less than two heartbeat intervals in effect
    /// ([`ClusterConfig::task_timeout`]): progress arrives with heartbeats.
    #[serde(deserialize_with = "de_duration", default = "default_task_timeout")]
    pub task_timeout: Duration,
}

pub(super) fn default_task_timeout() -> Duration {
    Duration::from_secs(600)
}

impl Default for JobsConfig {
    fn default() -> Self {
        JobsConfig {
            task_timeout: default_task_timeout(),
        }
    }
}

impl HeartbeatConfig {
    /// Silence after which a worker is declared dead.
    pub fn expiry(&self) -> Duration {
        self.interval * self.dead_after
    }
}
