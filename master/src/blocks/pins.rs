//! Cache pins (`mr cache add`), as HDFS's centralized cache directives:
//! every block of the file is pinned in the cache of one worker that stores
//! it, and the worker never evicts it until `mr cache rm`.
//!
//! The master decides where each block is pinned, not the workers, because
//! it is the one that can (a) refuse a pin that does not fit before any
//! worker is asked, with an error the user sees, since a worker's pinned
//! bytes count against its cache capacity; (b) give a worker back its pins
//! when it registers again, since a restart empties its cache; and (c) move
//! the pins of a dead worker to another worker that stores the block.
//! Pins live in the master's memory: a master restart forgets them, as it
//! forgets running jobs.

use super::Blocks;
use crate::cluster::{Cluster, Outbox};
use crate::error::{MasterError, Result};
use protocol::{Command, WorkerAddr};
use std::collections::BTreeMap;

/// What `mr cache add|rm` did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CacheChange {
    pub blocks: u64,
    /// Bytes of the file's blocks pinned (add) or unpinned (rm).
    pub bytes: u64,
    /// The workers whose caches pin (add) or held (rm) them.
    pub workers: Vec<String>,
}

impl Blocks {
    /// Bytes pinned in `worker`'s cache, as this master assigned them.
    pub fn pinned_bytes(&self, worker: &str) -> u64 {
        self.pins
            .iter()
            .filter(|(_, w)| w.as_str() == worker)
            .filter_map(|(id, _)| self.owners.get(id))
            .map(|o| o.meta.len)
            .sum()
    }

    /// The live worker pinning block `id`, for `fs stat` and the web UI.
    pub fn pinned_on(&self, id: u64, cluster: &Cluster) -> Vec<WorkerAddr> {
        cluster.live_addrs(self.pins.get(&id))
    }

    /// Pins every block of `raw` (a file or a directory) on one worker that
    /// stores it, all or nothing: when one block fits nowhere, nothing is
    /// pinned and the error names the block and each candidate's room.
    pub fn pin_file(
        &mut self,
        raw: &str,
        cluster: &Cluster,
        out: &mut Outbox,
    ) -> Result<CacheChange> {
        self.forget_deleted_pins();
        let (_, _, ids) = self.files_under(raw)?;
        let blocks = ids.len() as u64;
        let mut planned: BTreeMap<String, u64> = BTreeMap::new();
        let mut plan = Vec::new();
        let mut bytes = 0;
        for id in ids {
            let len = self.owners.get(&id).map_or(0, |o| o.meta.len);
            bytes += len;
            if let Some(w) = self.pins.get(&id) {
                planned.entry(w.clone()).or_default();
                continue;
            }
            let room = |st: &Self, w: &str, planned: &BTreeMap<String, u64>| {
                let cap = cluster.get(w).map_or(0, |e| e.cache_capacity_bytes);
                cap.saturating_sub(st.pinned_bytes(w) + planned.get(w).copied().unwrap_or(0))
            };
            let holders: Vec<String> = (self.locations.of(id))
                .filter(|n| cluster.is_alive(n))
                .cloned()
                .collect();
            if holders.is_empty() {
                return Err(MasterError::Unavailable(format!(
                    "cannot pin block {id} of {raw}: no live worker stores it"
                )));
            }
            // Where it is cached already (no read), else where most room is left.
            let cached = self.cached.set_of(id);
            let best = holders
                .iter()
                .filter(|w| room(self, w, &planned) >= len)
                .max_by_key(|w| (cached.contains(*w), room(self, w, &planned)));
            let Some(best) = best.cloned() else {
                let rooms: Vec<String> = holders
                    .iter()
                    .map(|w| {
                        let cap = cluster.get(w).map_or(0, |e| e.cache_capacity_bytes);
                        format!(
                            "{w}: {} of {cap} bytes free for pins",
                            room(self, w, &planned)
                        )
                    })
                    .collect();
                return Err(MasterError::FailedPrecondition(format!(
                    "cannot pin {raw}: block {id} ({len} bytes) fits in the cache of no worker storing it ({}); \
                     unpin something (mr cache rm) or grow the caches (mr cache resize); nothing was pinned",
                    rooms.join(", ")
                )));
            };
            *planned.entry(best.clone()).or_default() += len;
            plan.push((id, best));
        }
        for (id, w) in plan {
            out.send(&w, Command::PinBlock(id));
            self.pins.insert(id, w);
        }
        Ok(CacheChange {
            blocks,
            bytes,
            workers: planned.into_keys().collect(),
        })
    }

    /// Unpins every block of `raw` and drops it from every cache.
    pub fn unpin_file(
        &mut self,
        raw: &str,
        cluster: &Cluster,
        out: &mut Outbox,
    ) -> Result<CacheChange> {
        let (_, _, ids) = self.files_under(raw)?;
        let mut workers = std::collections::BTreeSet::new();
        let mut bytes = 0;
        for &id in &ids {
            bytes += self.owners.get(&id).map_or(0, |o| o.meta.len);
            if let Some(w) = self.pins.remove(&id) {
                workers.insert(w);
            }
            let holders: Vec<String> = self.cached.of(id).cloned().collect();
            for h in holders {
                if cluster.get(&h).is_some() {
                    out.send(&h, Command::UncacheBlock(id));
                    workers.insert(h);
                }
            }
        }
        // A pin on a worker that has not reported the block cached yet.
        for w in &workers {
            for &id in &ids {
                let c = Command::UncacheBlock(id);
                if !out.holds(w, &c) {
                    out.send(w, c);
                }
            }
        }
        Ok(CacheChange {
            blocks: ids.len() as u64,
            bytes,
            workers: workers.into_iter().collect(),
        })
    }

    /// A worker (re-)registered with an empty cache: send it its pins again;
    /// a pinned block it no longer stores is pinned elsewhere.
    pub fn repin_on_register(&mut self, name: &str, cluster: &Cluster, out: &mut Outbox) {
        self.forget_deleted_pins();
        let mine: Vec<u64> = self
            .pins
            .iter()
            .filter(|(_, w)| w.as_str() == name)
            .map(|(id, _)| *id)
            .collect();
        for id in mine {
            if self.locations.holds(id, name) {
                out.send(name, Command::PinBlock(id));
            } else {
                self.pins.remove(&id);
                self.place_pin(id, cluster, out);
            }
        }
        // Pins that found no room before (their worker died) may fit here.
        let homeless: Vec<u64> = self
            .pins
            .iter()
            .filter(|(_, w)| !cluster.is_alive(w))
            .map(|(id, _)| *id)
            .collect();
        for id in homeless {
            if self.locations.holds(id, name) {
                self.place_pin(id, cluster, out);
            }
        }
    }

    /// A worker died: its pins move to other live workers storing the block
    /// with room for them; those that fit nowhere wait for it to come back.
    pub fn move_pins_of(&mut self, dead: &str, cluster: &Cluster, out: &mut Outbox) {
        let ids: Vec<u64> = self
            .pins
            .iter()
            .filter(|(_, w)| w.as_str() == dead)
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            self.place_pin(id, cluster, out);
        }
    }

    /// (Re-)pins block `id` on a live worker that stores it and has room,
    /// if there is one; else the pin keeps its current worker.
    fn place_pin(&mut self, id: u64, cluster: &Cluster, out: &mut Outbox) {
        let Some(len) = self.owners.get(&id).map(|o| o.meta.len) else {
            self.pins.remove(&id);
            return;
        };
        let current = self.pins.get(&id).cloned();
        let target = (self.locations.of(id))
            .filter(|n| Some(*n) != current.as_ref())
            .filter_map(|n| cluster.alive(n))
            .find(|w| w.cache_capacity_bytes >= self.pinned_bytes(&w.name) + len)
            .map(|w| w.name.clone());
        if let Some(t) = target {
            out.send(&t, Command::PinBlock(id));
            self.pins.insert(id, t);
        }
    }

    /// Pins of deleted files go with them.
    fn forget_deleted_pins(&mut self) {
        let owners = &self.owners;
        self.pins.retain(|id, _| owners.contains_key(id));
    }
}
