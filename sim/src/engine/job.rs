//! The simulated jobs and what their tasks hold while they run: the
//! reads and fetches in flight, the links they cross.

use crate::cluster;
use crate::config::SimConfig;
use sched::{Locality, TaskId};

/// A map as it runs: where, since when, at what level, reading what.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct MapRun {
    pub(super) node: usize,
    pub(super) task: TaskId,
    pub(super) level: Locality,
    pub(super) start: f64,
    pub(super) block: u64,
}

pub(super) struct Job {
    pub(super) arrival: f64,
    /// Blocks its maps read, by map index.
    pub(super) blocks: Vec<u64>,
    /// The node each finished map ran on (its output is fetched there).
    pub(super) map_nodes: Vec<Option<usize>>,
    pub(super) maps_done: u32,
    pub(super) reduces: u32,
    pub(super) reduces_done: u32,
    pub(super) end: Option<f64>,
    pub(super) task_time_sum: f64,
    /// Its shuffle bytes, split evenly over its maps' outputs and its
    /// reduces' partitions.
    pub(super) shuffle: u64,
}

/// What a transfer is for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Owner {
    MapRead(MapRun),
    Fetch(TaskId),
}

/// A reduce while it fetches.
pub(super) struct Fetching {
    pub(super) node: usize,
    pub(super) left: usize,
}

/// Tasks dealt to jobs in equal shares; each job reads blocks in turn
/// (block k for its k-th task overall).
pub(super) fn equal_shares(cfg: &SimConfig, tasks: usize, blocks: usize) -> Vec<Job> {
    let mut jobs = Vec::with_capacity(cfg.jobs);
    let mut next_block = 0usize;
    for j in 0..cfg.jobs {
        let n = tasks / cfg.jobs + usize::from(j < tasks % cfg.jobs);
        let bs = (0..n)
            .map(|_| {
                let b = next_block % blocks;
                next_block += 1;
                b as u64
            })
            .collect();
        jobs.push(Job::new(j as f64 * cfg.interarrival_s, bs, 0, 0));
    }
    jobs
}

impl Job {
    pub(super) fn new(arrival: f64, blocks: Vec<u64>, reduces: u32, shuffle: u64) -> Self {
        Job {
            arrival,
            map_nodes: vec![None; blocks.len()],
            blocks,
            maps_done: 0,
            reduces,
            reduces_done: 0,
            end: None,
            task_time_sum: 0.0,
            shuffle,
        }
    }

    /// What each of its maps emits: its shuffle split evenly.
    pub(super) fn map_out(&self) -> u64 {
        self.shuffle / self.blocks.len().max(1) as u64
    }
}

/// The links of the modelled network, numbered: node `n`'s port in, then
/// out, then rack `r`'s uplink up, then down.
pub(super) struct Links {
    pub(super) nodes: usize,
    pub(super) racks: usize,
}

impl Links {
    pub(super) fn count(&self) -> usize {
        2 * self.nodes + 2 * self.racks
    }

    /// The links a transfer from `src` to `dst` crosses.
    pub(super) fn path(&self, src: usize, dst: usize) -> Vec<usize> {
        let (rs, rd) = (
            cluster::rack_of(src, self.racks),
            cluster::rack_of(dst, self.racks),
        );
        let mut v = vec![self.nodes + src, dst];
        if rs != rd {
            v.push(2 * self.nodes + rs);
            v.push(2 * self.nodes + self.racks + rd);
        }
        v
    }
}
