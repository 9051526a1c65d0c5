//! Re-replication, as HDFS's replication monitor: every block back to its
//! replication factor, rack-aware, and extra replicas trimmed. Replicas on
//! leaving workers (decommissioned or draining, `decommission.rs`) are
//! sources but do not count, and are never trimmed: they are what is
//! being copied away.

use super::{BlockOwner, Blocks};
use crate::cluster::{Cluster, Outbox};
use common::placement::{choose_targets, Candidate};
use protocol::Command;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;

impl Blocks {
    /// One pass over every block; returns how many commands were queued.
    /// Nothing in safe mode: a block not yet reported is not lost.
    pub fn replication_scan(&mut self, cluster: &Cluster, now: Instant, out: &mut Outbox) -> usize {
        let mut ids: Vec<u64> = self.owners.keys().copied().collect();
        ids.sort_unstable();
        self.replicate(&ids, cluster, now, out)
    }

    /// [`Blocks::replication_scan`] over the blocks `ids` (ids no longer
    /// in the namespace are skipped): the tick goes over a big namespace a
    /// window at a time (`sweep.rs`).
    pub(super) fn replicate(
        &mut self,
        ids: &[u64],
        cluster: &Cluster,
        now: Instant,
        out: &mut Outbox,
    ) -> usize {
        self.update_safe_mode(now);
        if self.safe.is_on() {
            return 0;
        }
        let timeout = self.replication_timeout;
        self.replicating
            .retain(|_, t| now.saturating_duration_since(*t) < timeout);
        let nodes = self.targets(cluster);
        let pass = Pass {
            cluster,
            anyone_leaving: nodes.len() < cluster.candidates().len(),
            nodes: &nodes,
            now,
        };
        let mut issued = 0;
        for &id in ids {
            issued += self.replicate_block(id, &pass, out);
        }
        issued
    }

    /// Block `id` back to its factor: trimmed, reported missing or copied.
    /// Returns how many commands were queued.
    fn replicate_block(&mut self, id: u64, pass: &Pass, out: &mut Outbox) -> usize {
        let Some(&owner) = self.owners.get(&id) else {
            return 0;
        };
        // The common case, a block at its factor with nobody leaving
        // and nothing corrupt, decided without a copy of its holders.
        let held = self.locations.count(id);
        if held == owner.replication as usize
            && held > 0
            && !pass.anyone_leaving
            && !self.corrupt.contains_key(&id)
        {
            self.replicating.remove(&id);
            self.missing.remove(&id);
            return 0;
        }
        let live: Vec<String> = self.locations.of(id).cloned().collect();
        // What counts toward `want`: `live` less the leaving workers'.
        let counted: Vec<String> = live
            .iter()
            .filter(|n| !self.is_leaving(n, pass.cluster))
            .cloned()
            .collect();
        let want = owner.replication as usize;
        if !counted.is_empty() && counted.len() >= want {
            self.replicating.remove(&id);
            self.missing.remove(&id);
            return self.trim(id, &counted, want, pass.cluster, out);
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
            return 0;
        }
        self.missing.remove(&id);
        if self.replicating.contains_key(&id) || counted.len() >= want {
            return 0;
        }
        self.copy_up(id, &owner, &live, &counted, pass, out)
    }

    /// Good copies are back: the corrupt ones go, and good ones beyond the
    /// factor.
    fn trim(
        &mut self,
        id: u64,
        counted: &[String],
        want: usize,
        cluster: &Cluster,
        out: &mut Outbox,
    ) -> usize {
        let mut issued = 0;
        let corrupt = self.corrupt.remove(&id).unwrap_or_default();
        let rack = |n: &str| cluster.candidate(n).map(|c| c.rack);
        for victim in choose_excess(counted, &corrupt, want, rack) {
            if corrupt.contains(&victim) {
                tracing::info!(block = id, worker = %victim, "deleting a corrupt replica now replaced");
            } else {
                tracing::info!(block = id, worker = %victim, "removing an excess replica");
                self.locations.remove(id, &victim);
            }
            out.send(&victim, Command::DeleteBlock(id));
            issued += 1;
        }
        issued
    }

    /// An under-replicated block with a good copy in `live`: one copy
    /// command to a random holder, for every missing replica at once.
    fn copy_up(
        &mut self,
        id: u64,
        owner: &BlockOwner,
        live: &[String],
        counted: &[String],
        pass: &Pass,
        out: &mut Outbox,
    ) -> usize {
        let cluster = pass.cluster;
        let want = owner.replication as usize;
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
            pass.nodes,
            &existing,
            &exclude,
            None,
            want - counted.len(),
            &mut self.rng,
        );
        if targets.is_empty() {
            // Every other node holds a copy, some of them corrupt (a small
            // cluster): the corrupt copies must make room, or the block
            // stays short for ever. A good copy exists (`live` is not
            // empty), so none of them is the last; the freed nodes are
            // targets on the next pass. This is HDFS's "live + corrupt >
            // replication" case.
            let mut issued = 0;
            for w in self.corrupt.remove(&id).unwrap_or_default() {
                tracing::info!(block = id, worker = %w,
                    "deleting a corrupt replica to make room for a good copy");
                out.send(&w, Command::DeleteBlock(id));
                issued += 1;
            }
            return issued;
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
                // Signed at the edge (`grpc/tokens.rs`), after the lock.
                token: Default::default(),
            },
        );
        self.replicating.insert(id, pass.now);
        1
    }
}

/// What one replication pass shares across its blocks.
struct Pass<'a> {
    cluster: &'a Cluster,
    /// Where copies may go: live workers that are not leaving.
    nodes: &'a [Candidate],
    /// Some live worker is leaving, so a block at its factor may still
    /// count too few.
    anyone_leaving: bool,
    now: Instant,
}

/// The replicas to delete from a block with at least `want` good ones
/// (`good`), as HDFS's BlockManager does with extra replicas: the corrupt
/// ones first, all of them (its `invalidateCorruptReplicas` once enough
/// live ones exist), then good ones while more than `want` are left, each
/// from the rack holding the most (`BlockPlacementPolicyDefault`'s
/// `chooseReplicaToDelete`), so that rack spread survives. A good replica
/// is never chosen while a corrupt one is kept, and the last good one
/// never: a trim that took a good copy over a corrupt one would leave
/// the block unreadable.
pub fn choose_excess(
    good: &[String],
    corrupt: &BTreeSet<String>,
    want: usize,
    rack: impl Fn(&str) -> Option<String>,
) -> Vec<String> {
    if good.is_empty() {
        return vec![];
    }
    let mut victims: Vec<String> = corrupt.iter().cloned().collect();
    let mut left: Vec<&String> = good.iter().filter(|g| !corrupt.contains(*g)).collect();
    while left.len() > want.max(1) {
        let mut by_rack: HashMap<Option<String>, usize> = HashMap::new();
        for n in &left {
            *by_rack.entry(rack(n)).or_default() += 1;
        }
        let (i, _) = (left.iter().enumerate())
            .max_by_key(|(_, n)| by_rack[&rack(n)])
            .expect("non-empty");
        victims.push(left.remove(i).clone());
    }
    victims
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn rack(n: &str) -> Option<String> {
        Some(if n == "w1" || n == "w2" { "r1" } else { "r2" }.to_string())
    }

    #[test]
    fn the_corrupt_go_first_and_the_last_good_copy_stays() {
        let corrupt: BTreeSet<String> = names(&["w3"]).into_iter().collect();
        // One good copy at replication 1: only the corrupt one goes.
        assert_eq!(
            choose_excess(&names(&["w1"]), &corrupt, 1, rack),
            names(&["w3"])
        );
        // Three good at 1: the corrupt, then two good, from the fuller rack
        // first, never the last.
        let v = choose_excess(&names(&["w1", "w2", "w4"]), &corrupt, 1, rack);
        assert_eq!(v[0], "w3");
        assert_eq!(v.len(), 3, "{v:?}");
        assert!(["w1", "w2"].contains(&v[1].as_str()), "{v:?}");
        // No good copy: nothing is deleted, the corrupt ones included.
        assert!(choose_excess(&[], &corrupt, 1, rack).is_empty());
        // A factor of 0 (never written so) still keeps one good copy.
        assert_eq!(
            choose_excess(&names(&["w1", "w4"]), &BTreeSet::new(), 0, rack).len(),
            1
        );
    }
}
