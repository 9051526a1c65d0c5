//! `mr cluster status`: every worker as configured or last heard from.

use super::leaving::AdminState;
use super::{Cluster, ResourceVector};
use common::config::ClusterConfig;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkerStatus {
    pub name: String,
    pub addr: String,
    pub rack: String,
    pub alive: bool,
    pub last_heartbeat_ms: u64,
    pub map_slots: u32,
    pub reduce_slots: u32,
    pub free_map_slots: u32,
    pub free_reduce_slots: u32,
    pub cache_used_bytes: u64,
    pub cache_capacity_bytes: u64,
    pub blocks: u64,
    pub resources: ResourceVector,
    pub epoch: u64,
    /// Bytes of the cache held by pinned blocks.
    pub cache_pinned_bytes: u64,
    /// On its way out or not (`blocks/decommission.rs`), and how many of
    /// its blocks are not yet safe elsewhere while it is.
    pub admin_state: AdminState,
    pub blocks_under_replicated: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterStatus {
    pub workers: Vec<WorkerStatus>,
    pub files: u64,
    pub blocks: u64,
    pub under_replicated_blocks: u64,
}

impl Cluster {
    /// Every worker, configured workers that never registered shown dead
    /// (so that a worker that failed to start is visible), `w2` before `w10`.
    pub fn status(&self, cfg: &ClusterConfig, pinned: impl Fn(&str) -> u64) -> Vec<WorkerStatus> {
        let mut workers: Vec<WorkerStatus> = self
            .workers
            .values()
            .map(|w| WorkerStatus {
                name: w.name.clone(),
                addr: w.addr.clone(),
                rack: w.rack.clone(),
                alive: w.alive,
                last_heartbeat_ms: w.last_heartbeat_ms,
                map_slots: w.map_slots,
                reduce_slots: w.reduce_slots,
                free_map_slots: w.free_map_slots,
                free_reduce_slots: w.free_reduce_slots,
                cache_used_bytes: w.cache_used_bytes,
                cache_capacity_bytes: w.cache_capacity_bytes,
                blocks: w.blocks as u64,
                resources: w.resources.clone(),
                epoch: w.epoch,
                cache_pinned_bytes: pinned(&w.name),
                ..Default::default()
            })
            .collect();
        for c in &cfg.workers {
            if !self.workers.contains_key(&c.name) {
                workers.push(WorkerStatus {
                    name: c.name.clone(),
                    addr: c.addr.clone(),
                    rack: c.rack.clone(),
                    map_slots: c.map_slots,
                    reduce_slots: c.reduce_slots,
                    cache_capacity_bytes: c.cache,
                    ..Default::default()
                });
            }
        }
        workers.sort_by_key(|w| natural_key(&w.name));
        workers
    }
}

/// Sorts `w2` before `w10`.
fn natural_key(s: &str) -> (String, u64) {
    let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (head, tail) = s.split_at(s.len() - digits);
    (head.to_string(), tail.parse().unwrap_or(0))
}
