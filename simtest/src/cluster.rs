//! The simulated cluster's layout and its `cluster.toml`: host names,
//! addresses (turmoil hands out 192.168.0.1, .2, ... in creation order:
//! master, workers, client) and the fast timing of the simulation.

use common::config::ClusterConfig;
use std::path::Path;
use std::time::Duration;

pub const MASTER: &str = "master";
pub const CLIENT: &str = "client";
pub const MASTER_PORT: u16 = 7070;
pub const WORKER_PORT: u16 = 7100;
pub const TOKEN: &str = "sim-token";

/// Heartbeat interval of the simulated cluster: a tenth of the daemons'
/// default, so that a run covers many heartbeats in few simulated seconds.
pub const HEARTBEAT: Duration = Duration::from_millis(100);
/// Heartbeats missed before a worker is dead (expiry = 500 ms).
pub const DEAD_AFTER: u32 = 5;
/// The smallest block size the config accepts: inputs of a few KiB still
/// make several blocks when written block by block.
pub const BLOCK_SIZE: u64 = common::config::MIN_BLOCK_SIZE;

#[derive(Debug, Clone)]
pub struct Layout {
    pub workers: usize,
    pub racks: usize,
    pub replication: u32,
    pub map_slots: u32,
    pub reduce_slots: u32,
    pub scheduler: &'static str,
}

impl Layout {
    pub fn worker(&self, i: usize) -> String {
        format!("w{}", i + 1)
    }

    pub fn worker_names(&self) -> Vec<String> {
        (0..self.workers).map(|i| self.worker(i)).collect()
    }

    pub fn rack_of(&self, i: usize) -> String {
        format!("r{}", i % self.racks + 1)
    }

    /// The address turmoil gives the `n`-th host created (0-based).
    fn ip(n: usize) -> String {
        format!("192.168.{}.{}", (n + 1) / 256, (n + 1) % 256)
    }

    pub fn master_ip(&self) -> String {
        Self::ip(0)
    }

    pub fn worker_ip(&self, i: usize) -> String {
        Self::ip(1 + i)
    }

    pub fn client_ip(&self) -> String {
        Self::ip(1 + self.workers)
    }

    pub fn worker_addr(&self, i: usize) -> String {
        format!("{}:{WORKER_PORT}", self.worker_ip(i))
    }

    /// The cluster file every simulated host reads.
    pub fn config(&self, master_dir: &Path) -> ClusterConfig {
        let mut t = format!(
            "token = \"{TOKEN}\"\n\
             [master]\naddr = \"{}:{MASTER_PORT}\"\ndata_dir = \"{}\"\n\
             [dfs]\nblock_size = {BLOCK_SIZE}\nreplication = {}\n\
             [heartbeat]\ninterval = \"{}ms\"\ndead_after = {DEAD_AFTER}\n\
             [scheduler]\nname = \"{}\"\n",
            self.master_ip(),
            master_dir.display(),
            self.replication,
            HEARTBEAT.as_millis(),
            self.scheduler,
        );
        for i in 0..self.workers {
            t.push_str(&format!(
                "[[workers]]\nname = \"{}\"\naddr = \"{}\"\nrack = \"{}\"\n\
                 map_slots = {}\nreduce_slots = {}\ncache = \"1MiB\"\n\
                 data_dir = \"/nonexistent/sim/{}\"\n",
                self.worker(i),
                self.worker_addr(i),
                self.rack_of(i),
                self.map_slots,
                self.reduce_slots,
                self.worker(i),
            ));
        }
        ClusterConfig::parse(&t).expect("the simulated cluster file is valid")
    }
}
