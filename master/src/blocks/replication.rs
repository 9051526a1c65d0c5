//! Re-replication, as HDFS's replication monitor: every block back to its
//! replication factor, rack-aware, and extra replicas trimmed. Replicas on
//! leaving workers (decommissioned or draining, `decommission.rs`) are
//! sources but do not count, and are never trimmed: they are what is
//! being copied away.

use super::Blocks;
use crate::cluster::{Cluster, Command, Outbox};
use common::placement::{choose_targets, Candidate};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

impl Blocks {
    /// One pass over every block; returns how many commands were queued.
    /// Nothing in safe mode: a block not yet reported is not lost.
    pub fn replication_scan(&mut self, cluster: &Cluster, now: Instant, out: &mut Outbox) -> usize {
        self.update_safe_mode(now);
        if self.safe.is_on() {
            return 0;
        }
        let timeout = self.replication_timeout;
        self.replicating
            .retain(|_, t| now.saturating_duration_since(*t) < timeout);
        let nodes = self.targets(cluster);
        let mut issued = 0;
        let mut ids: Vec<u64> = self.owners.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let owner = self.owners[&id];
            let live: Vec<String> = self
                .locations
                .get(&id)
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default();
            // What counts toward `want`: `live` less the leaving workers'.
            let counted: Vec<String> = live
                .iter()
                .filter(|n| !self.is_leaving(n, cluster))
                .cloned()
                .collect();
            let want = owner.replication as usize;
            if counted.len() >= want {
                self.replicating.remove(&id);
                // Good copies are back: the corrupt ones can go.
                for w in self.corrupt.remove(&id).unwrap_or_default() {
                    tracing::info!(block = id, worker = %w, "deleting a corrupt replica now replaced");
                    out.send(&w, Command::DeleteBlock(id));
                    issued += 1;
                }
            }
            if live.is_empty() {
                // Missing: nothing to copy from. Said once, and listed by fsck.
                if self.missing.insert(id) {
                    let corrupt = self.corrupt.get(&id).map_or(0, |s| s.len());
                    tracing::error!(
                        block = id,
                        corrupt_replicas = corrupt,
                        "block has no live good replica: missing (see `mr admin fsck`)"
                    );
                }
                continue;
            }
            self.missing.remove(&id);
            if self.replicating.contains_key(&id) {
                continue;
            }
            if counted.len() < want {
                let existing: Vec<Candidate> = counted
                    .iter()
                    .filter_map(|n| cluster.candidate(n))
                    .collect();
                // A corrupt holder is no target: its copy would be deleted.
                let exclude: HashSet<String> = self
                    .corrupt
                    .get(&id)
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .collect();
                let targets = choose_targets(
                    &nodes,
                    &existing,
                    &exclude,
                    None,
                    want - counted.len(),
                    &mut self.rng,
                );
                if targets.is_empty() {
                    // Every other node holds a copy, some of them corrupt
                    // (a small cluster): the corrupt copies must make room,
                    // or the block stays short for ever. A good copy
                    // exists (`live` is not empty), so none of them is the
                    // last; the freed nodes are targets on the next pass.
                    // This is HDFS's "live + corrupt > replication" case.
                    for w in self.corrupt.remove(&id).unwrap_or_default() {
                        tracing::info!(block = id, worker = %w,
                            "deleting a corrupt replica to make room for a good copy");
                        out.send(&w, Command::DeleteBlock(id));
                        issued += 1;
                    }
                    continue;
                }
                let source = live[self.rng.usize(..live.len())].clone();
                let addrs: Vec<String> = targets
                    .iter()
                    .filter_map(|t| cluster.get(&t.name).map(|w| w.addr.clone()))
                    .collect();
                tracing::info!(block = id, from = %source, to = ?targets.iter().map(|t| &t.name).collect::<Vec<_>>(),
                    "re-replicating under-replicated block");
                out.send(
                    &source,
                    Command::Replicate {
                        block: owner.meta,
                        targets: addrs,
                    },
                );
                self.replicating.insert(id, now);
                issued += 1;
            } else if counted.len() > want {
                // Drop a replica from the rack holding the most, so rack spread survives.
                let mut by_rack: HashMap<String, usize> = HashMap::new();
                for n in &counted {
                    if let Some(c) = cluster.candidate(n) {
                        *by_rack.entry(c.rack).or_default() += 1;
                    }
                }
                let victim = counted
                    .iter()
                    .max_by_key(|n| cluster.candidate(n).map(|c| by_rack[&c.rack]).unwrap_or(0))
                    .cloned()
                    .expect("non-empty");
                tracing::info!(block = id, worker = %victim, "removing an excess replica");
                self.locations.get_mut(&id).expect("live").remove(&victim);
                out.send(&victim, Command::DeleteBlock(id));
                issued += 1;
            }
        }
        issued
    }
}
