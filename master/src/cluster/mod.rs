//! Membership: the workers as the master sees them (registration epochs,
//! heartbeats, liveness, slots, cache sizes, resource vectors) and each
//! worker's queue of [`Command`]s. The other owners read it (who is alive,
//! where, in which rack) and put commands in the event's [`Outbox`], which
//! the coordinator flushes into the queues; only the coordinator changes
//! it.

pub mod doorbell;
pub mod history;
pub mod leaving;
pub mod outbox;
pub mod status;

use common::placement::Candidate;
pub use common::resources::ResourceVector;
pub use doorbell::{Bell, Doorbells};
pub use outbox::Outbox;
use protocol::{Command, Heartbeat, Registration, WorkerAddr};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// One worker incarnation. The entry outlives a death so that `cluster
/// status` keeps showing the worker, and so that its old epoch can be fenced.
#[derive(Debug, Clone)]
pub struct WorkerEntry {
    pub name: String,
    pub addr: String,
    pub rack: String,
    pub map_slots: u32,
    pub reduce_slots: u32,
    pub free_map_slots: u32,
    pub free_reduce_slots: u32,
    pub cache_capacity_bytes: u64,
    pub cache_used_bytes: u64,
    /// Changes at every registration; a heartbeat with another epoch comes
    /// from a stale incarnation and is told to register again.
    pub epoch: u64,
    pub alive: bool,
    /// Shutting down (its heartbeats say so): it finishes what it runs and
    /// is offered nothing new.
    pub draining: bool,
    pub last_heartbeat: Instant,
    /// Wall-clock time of the last heartbeat, for users.
    pub last_heartbeat_ms: u64,
    pub resources: ResourceVector,
    /// Blocks this worker stores, per its reports.
    pub blocks: usize,
}

impl WorkerEntry {
    pub fn addr(&self) -> WorkerAddr {
        WorkerAddr {
            name: self.name.clone(),
            addr: self.addr.clone(),
            rack: self.rack.clone(),
        }
    }
}

/// A new epoch, strictly above `prev` and above every epoch a previous master
/// run could have handed out (wall-clock milliseconds), so that fencing
/// survives a master restart.
pub fn next_epoch(prev: u64) -> u64 {
    (prev + 1).max(common::now_ms())
}

#[derive(Debug, Default)]
pub struct Cluster {
    workers: BTreeMap<String, WorkerEntry>,
    /// Commands waiting for each live worker to take them: with its next
    /// heartbeat or task report, or at once when its long poll is woken
    /// ([`Doorbells`]). Filled only by [`Cluster::flush`], which keeps the
    /// bell in step.
    queues: BTreeMap<String, Vec<Command>>,
    /// Whether each worker's queue holds commands, for its long poll.
    bells: Doorbells,
    /// The live workers as placement candidates, made once per change of
    /// membership: every new block chooses among them, and copying ten
    /// thousand names per block was most of an AddBlock.
    candidates: OnceLock<Arc<[Candidate]>>,
    /// The live workers shutting down.
    draining: BTreeSet<String>,
}

impl Cluster {
    pub fn get(&self, name: &str) -> Option<&WorkerEntry> {
        self.workers.get(name)
    }

    /// Every worker ever registered, by name, dead ones included.
    pub fn workers(&self) -> impl Iterator<Item = &WorkerEntry> {
        self.workers.values()
    }

    /// The live workers, by name.
    pub fn live(&self) -> impl Iterator<Item = &WorkerEntry> {
        self.workers.values().filter(|w| w.alive)
    }

    /// The master's copy of a worker's cache bound (the worker is told by
    /// command).
    pub fn set_cache_capacity(&mut self, name: &str, bytes: u64) {
        if let Some(w) = self.workers.get_mut(name) {
            w.cache_capacity_bytes = bytes;
        }
    }

    /// The worker if it is alive.
    pub fn alive(&self, name: &str) -> Option<&WorkerEntry> {
        self.workers.get(name).filter(|w| w.alive)
    }

    pub fn is_alive(&self, name: &str) -> bool {
        self.alive(name).is_some()
    }

    /// The current incarnation's address, if `epoch` is it.
    pub fn current(&self, name: &str, epoch: u64) -> Option<&WorkerEntry> {
        self.alive(name).filter(|w| w.epoch == epoch)
    }

    /// Placement candidates: every live worker, by name.
    pub fn candidates(&self) -> Arc<[Candidate]> {
        self.candidates
            .get_or_init(|| {
                self.live()
                    .map(|w| Candidate {
                        name: w.name.clone(),
                        rack: w.rack.clone(),
                    })
                    .collect()
            })
            .clone()
    }

    /// The live workers shutting down, by name.
    pub fn draining(&self) -> &BTreeSet<String> {
        &self.draining
    }

    pub fn candidate(&self, name: &str) -> Option<Candidate> {
        self.workers.get(name).map(|w| Candidate {
            name: w.name.clone(),
            rack: w.rack.clone(),
        })
    }

    /// The addresses of the live workers among `names`.
    pub fn live_addrs<'a>(&self, names: impl IntoIterator<Item = &'a String>) -> Vec<WorkerAddr> {
        names
            .into_iter()
            .filter_map(|n| self.alive(n))
            .map(WorkerEntry::addr)
            .collect()
    }

    /// Moves an event's commands into the queues of their workers, in
    /// order, and rings the bells of those that got some. A worker that is
    /// not alive gets nothing: its queue was dropped when it died, and a
    /// new incarnation starts with an empty one.
    pub fn flush(&mut self, mut out: Outbox) {
        for (w, c) in out.drain() {
            if !self.is_alive(&w) {
                continue;
            }
            self.queues.entry(w.clone()).or_default().push(c);
            self.bells.set(&w, true);
        }
    }

    pub fn take_commands(&mut self, worker: &str) -> Vec<Command> {
        self.bells.set(worker, false);
        self.queues
            .get_mut(worker)
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// What `worker`'s long poll waits on; `None` when `epoch` is not its
    /// current incarnation.
    pub fn bell(&mut self, worker: &str, epoch: u64) -> Option<Bell> {
        self.current(worker, epoch)?;
        Some(self.bells.listen(worker))
    }

    /// Admits a new incarnation of `r.name` holding `stored` known blocks;
    /// returns its epoch.
    pub fn admit(&mut self, r: &Registration, stored: usize, now: Instant) -> u64 {
        let prev_epoch = self.workers.get(&r.name).map_or(0, |w| w.epoch);
        let epoch = next_epoch(prev_epoch);
        self.workers.insert(
            r.name.clone(),
            WorkerEntry {
                name: r.name.clone(),
                addr: r.addr.clone(),
                rack: r.rack.clone(),
                map_slots: r.map_slots,
                reduce_slots: r.reduce_slots,
                free_map_slots: r.map_slots,
                free_reduce_slots: r.reduce_slots,
                cache_capacity_bytes: r.cache_capacity_bytes,
                cache_used_bytes: r.cache_used_bytes,
                epoch,
                alive: true,
                draining: false,
                last_heartbeat: now,
                last_heartbeat_ms: common::now_ms(),
                resources: r.resources.clone(),
                blocks: stored,
            },
        );
        self.queues.insert(r.name.clone(), Vec::new());
        self.bells.set(&r.name, false);
        self.draining.remove(&r.name);
        self.candidates = OnceLock::new();
        epoch
    }

    /// Whether a heartbeat comes from an incarnation this master does not
    /// know (a zombie paused past its expiry, or a restarted master's).
    pub fn is_stale(&self, name: &str, epoch: u64) -> bool {
        self.current(name, epoch).is_none()
    }

    /// Records what a (current) heartbeat says of its worker.
    pub fn beat(&mut self, h: &Heartbeat, blocks: usize, now: Instant) {
        let Some(w) = self.workers.get_mut(&h.name) else {
            return;
        };
        w.last_heartbeat = now;
        w.last_heartbeat_ms = common::now_ms();
        // A worker cannot have more free slots than it registered with:
        // bound what it says rather than trust it.
        if h.free_map_slots > w.map_slots || h.free_reduce_slots > w.reduce_slots {
            tracing::warn!(worker = %h.name, free_map = h.free_map_slots, free_reduce = h.free_reduce_slots,
                map_slots = w.map_slots, reduce_slots = w.reduce_slots,
                "heartbeat claims more free slots than registered: bounded");
        }
        w.free_map_slots = h.free_map_slots.min(w.map_slots);
        w.free_reduce_slots = h.free_reduce_slots.min(w.reduce_slots);
        w.cache_used_bytes = h.cache_used_bytes;
        w.blocks = blocks;
        if let Some(r) = &h.resources {
            w.resources = r.clone();
        }
        if h.draining && !w.draining {
            tracing::info!(worker = %h.name, "worker draining: no new tasks");
        }
        w.draining = h.draining || h.leaving;
        if w.draining {
            self.draining.insert(h.name.clone());
        } else {
            self.draining.remove(&h.name);
        }
    }

    /// Live workers silent for longer than `expiry`.
    pub fn silent(&self, now: Instant, expiry: Duration) -> Vec<String> {
        self.workers
            .values()
            .filter(|w| w.alive && now.saturating_duration_since(w.last_heartbeat) > expiry)
            .map(|w| w.name.clone())
            .collect()
    }

    /// After the master's own stall: every live worker's last heartbeat
    /// counts as no older than `now`, the end of the stall, since the
    /// master could not have read one during it (see `core::expire`).
    pub fn grace_all(&mut self, now: Instant) {
        for w in self.workers.values_mut().filter(|w| w.alive) {
            w.last_heartbeat = w.last_heartbeat.max(now);
        }
    }

    /// Marks a worker dead: no slots, no pending commands.
    pub fn mark_dead(&mut self, name: &str) {
        if let Some(w) = self.workers.get_mut(name) {
            w.alive = false;
            self.draining.remove(name);
            self.candidates = OnceLock::new();
            self.queues.remove(name);
            self.bells.set(name, false);
            w.free_map_slots = 0;
            w.free_reduce_slots = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::MasterState;
    use crate::error::MasterError;
    use common::config::ClusterConfig;

    fn state() -> (MasterState, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!(
            "mr-slots-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        let toml = format!(
            "token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = {:?}\n\
             [[workers]]\nname = \"w1\"\naddr = \"127.0.0.1:7101\"\ndata_dir = \"/x1\"\n",
            dir.join("m")
        );
        let cfg = ClusterConfig::parse(&toml).unwrap();
        (MasterState::open(cfg, Instant::now()).unwrap(), dir)
    }

    fn reg(map_slots: u32, reduce_slots: u32) -> Registration {
        Registration {
            protocol_version: common::PROTOCOL_VERSION,
            name: "w1".into(),
            addr: "127.0.0.1:7101".into(),
            rack: "r1".into(),
            map_slots,
            reduce_slots,
            ..Default::default()
        }
    }

    /// A worker announcing 0 or 10 000 slots is refused with an error that
    /// says why, and is not admitted (issue 28); a heartbeat claiming more
    /// free slots than registered is bounded.
    #[test]
    fn slot_counts_from_a_worker_are_bounded() {
        let (mut st, dir) = state();
        let now = Instant::now();
        for (m, r, want) in [(0, 0, "no map or reduce slots"), (10_000, 2, "at most 256")] {
            let e = st.on_register(reg(m, r), now).unwrap_err();
            assert!(
                matches!(e, MasterError::InvalidArgument(_)) && e.to_string().contains(want),
                "{e}"
            );
            assert!(st.cluster().get("w1").is_none(), "admitted anyway");
        }
        let epoch = st.on_register(reg(2, 1), now).unwrap().epoch;
        st.on_heartbeat(
            Heartbeat {
                name: "w1".into(),
                epoch,
                free_map_slots: 10_000,
                free_reduce_slots: 7,
                ..Default::default()
            },
            now,
        );
        let w = st.cluster().get("w1").unwrap();
        assert_eq!((w.free_map_slots, w.free_reduce_slots), (2, 1));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
