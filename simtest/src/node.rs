//! One model worker incarnation: its durable disk (an in-memory block store
//! that outlives crashes, as a real disk does), and what dies with the
//! process: the block-report delta, the map outputs (volatile here, so a
//! restarted worker has lost them: the strict case), the running attempts,
//! the epoch.

use crate::history::{self, TaskKey};
use bytes::Bytes;
use protocol::BlockInfo;
use rpc::dfs::Dfs;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

/// The blocks a worker stores; shared across its incarnations.
#[derive(Default)]
pub struct Disk {
    pub blocks: BTreeMap<u64, (BlockInfo, Bytes)>,
}

pub type SharedDisk = Arc<Mutex<Disk>>;

/// Block changes since the last heartbeat the master answered.
#[derive(Default)]
pub struct Delta {
    pub added: BTreeMap<u64, BlockInfo>,
    pub removed: BTreeSet<u64>,
}

/// A map attempt's output: one buffer per partition.
pub type MapOutputKey = (u64, u32, u32);

/// What a model worker observes of itself at the end of a run.
#[derive(Debug, Default, Clone)]
pub struct Snapshot {
    pub running: Vec<TaskKey>,
    pub map_output_jobs: BTreeSet<u64>,
}

pub struct Node {
    pub name: String,
    pub addr: String,
    pub rack: String,
    pub cfg: common::config::ClusterConfig,
    pub disk: SharedDisk,
    pub delta: Mutex<Delta>,
    pub map_outputs: Mutex<BTreeMap<MapOutputKey, Vec<Bytes>>>,
    /// Running attempts and the cleanups waiting for them, kept by the
    /// real executor's rules (`protocol::attempts`).
    pub tasks: protocol::attempts::Attempts<crate::task::Attempt>,
    /// This incarnation's standing with the master, as the real worker
    /// keeps it (`protocol::session`).
    pub session: Mutex<protocol::session::Session>,
    pub dfs: Arc<Dfs>,
    pub history: history::Shared,
    pub rng: Mutex<fastrand::Rng>,
    /// Successful reports this incarnation sent, for the replay fault.
    pub sent: Mutex<Vec<protocol::TaskReport>>,
    /// Where the run reads this worker's state at the end.
    pub snapshot: Arc<Mutex<Snapshot>>,
}

impl Node {
    pub fn store(&self, info: BlockInfo, data: Bytes) {
        let mut d = self.disk.lock().unwrap();
        if d.blocks.contains_key(&info.id) {
            return;
        }
        d.blocks.insert(info.id, (info, data));
        let mut delta = self.delta.lock().unwrap();
        delta.removed.remove(&info.id);
        delta.added.insert(info.id, info);
    }

    pub fn delete(&self, id: u64) {
        if self.disk.lock().unwrap().blocks.remove(&id).is_some() {
            let mut delta = self.delta.lock().unwrap();
            delta.added.remove(&id);
            delta.removed.insert(id);
        }
    }

    pub fn read(&self, id: u64) -> Option<(BlockInfo, Bytes)> {
        self.disk.lock().unwrap().blocks.get(&id).cloned()
    }

    pub fn rand_ms(&self, lo: u64, hi: u64) -> std::time::Duration {
        std::time::Duration::from_millis(self.rng.lock().unwrap().u64(lo..hi))
    }

    /// The jobs whose map outputs this model worker holds (the real
    /// worker's job directories), each once, in order.
    pub fn output_jobs(&self) -> Vec<u64> {
        let outputs = self.map_outputs.lock().unwrap();
        let jobs: std::collections::BTreeSet<u64> = outputs.keys().map(|k| k.0).collect();
        jobs.into_iter().collect()
    }

    /// Publishes what the end-of-run checks look at.
    pub fn publish(&self) {
        let running = self.tasks.each(|k, _| *k);
        let map_output_jobs = self
            .map_outputs
            .lock()
            .unwrap()
            .keys()
            .map(|k| k.0)
            .collect();
        *self.snapshot.lock().unwrap() = Snapshot {
            running,
            map_output_jobs,
        };
    }
}
