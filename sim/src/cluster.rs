//! The simulated cluster's fixed parts: nodes in racks, where each block's
//! replicas are, and each node's block cache.

use lru::LruCache;

/// Node `i`'s name and rack, as the view shows them.
pub fn node_name(i: usize) -> String {
    format!("n{i}")
}

/// Nodes are dealt to racks in turn, as the launch scripts do.
pub fn rack_of(i: usize, racks: usize) -> usize {
    i % racks
}

/// Replicas of `blocks` blocks, as node indices, by HDFS's default rule
/// (the one `common::placement` applies to real writes): a random first
/// node (no writer is a worker), the second on another rack, the third on
/// the second's rack, any further ones anywhere; always distinct nodes.
/// Done on indices with rejection sampling, so placing 100 000 blocks on
/// 5000 nodes takes milliseconds rather than a scan per replica.
pub fn place_blocks(
    blocks: usize,
    nodes: usize,
    racks: usize,
    replication: usize,
    rng: &mut fastrand::Rng,
) -> Vec<Vec<usize>> {
    let replication = replication.min(nodes);
    let per_rack: Vec<Vec<usize>> = (0..racks)
        .map(|r| (0..nodes).filter(|&i| rack_of(i, racks) == r).collect())
        .collect();
    (0..blocks)
        .map(|_| {
            let mut chosen: Vec<usize> = Vec::with_capacity(replication);
            while chosen.len() < replication {
                let pick = match chosen.len() {
                    0 => Some(rng.usize(..nodes)),
                    1 if racks > 1 => {
                        // Another rack, then any node of it.
                        let mut r = rng.usize(..racks - 1);
                        if r >= rack_of(chosen[0], racks) {
                            r += 1;
                        }
                        let pool = &per_rack[r];
                        Some(pool[rng.usize(..pool.len())])
                    }
                    2 if racks > 1 => {
                        let pool = &per_rack[rack_of(chosen[1], racks)];
                        let free: Vec<usize> = pool
                            .iter()
                            .copied()
                            .filter(|n| !chosen.contains(n))
                            .collect();
                        (!free.is_empty()).then(|| free[rng.usize(..free.len())])
                    }
                    _ => None,
                };
                let n = match pick {
                    Some(n) if !chosen.contains(&n) => n,
                    _ => loop {
                        let n = rng.usize(..nodes);
                        if !chosen.contains(&n) {
                            break n;
                        }
                    },
                };
                chosen.push(n);
            }
            chosen
        })
        .collect()
}

/// A node's block cache: LRU over block ids, bounded in blocks (all blocks
/// of a simulation have one size).
pub struct BlockCache {
    lru: Option<LruCache<u64, ()>>,
}

impl BlockCache {
    pub fn new(blocks: usize) -> Self {
        BlockCache {
            lru: std::num::NonZeroUsize::new(blocks).map(LruCache::new),
        }
    }

    /// Reads fill the cache, as the worker's do. Returns the evicted block.
    pub fn insert(&mut self, block: u64) -> Option<u64> {
        let lru = self.lru.as_mut()?;
        match lru.push(block, ()) {
            Some((old, ())) if old != block => Some(old),
            _ => None,
        }
    }

    pub fn contains(&self, block: u64) -> bool {
        self.lru.as_ref().is_some_and(|l| l.contains(&block))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_follows_the_hdfs_rule() {
        let mut rng = fastrand::Rng::with_seed(3);
        let racks = 5;
        let p = place_blocks(2000, 100, racks, 3, &mut rng);
        for r in &p {
            assert_eq!(r.len(), 3);
            assert!(r[0] != r[1] && r[1] != r[2] && r[0] != r[2]);
            assert_ne!(rack_of(r[0], racks), rack_of(r[1], racks));
            assert_eq!(rack_of(r[1], racks), rack_of(r[2], racks));
        }
        // Spread over every node.
        let mut seen = vec![0; 100];
        p.iter().flatten().for_each(|&n| seen[n] += 1);
        assert!(seen.iter().all(|&c| c > 20), "{seen:?}");
        // One rack, and replication above the node count, still work.
        assert!(place_blocks(10, 3, 1, 5, &mut rng)
            .iter()
            .all(|r| r.len() == 3));
    }

    #[test]
    fn the_cache_is_an_lru_in_blocks() {
        let mut c = BlockCache::new(2);
        assert_eq!(c.insert(1), None);
        assert_eq!(c.insert(2), None);
        assert_eq!(c.insert(1), None); // refreshes 1
        assert_eq!(c.insert(3), Some(2));
        assert!(c.contains(1) && c.contains(3) && !c.contains(2));
        let mut none = BlockCache::new(0);
        assert_eq!(none.insert(1), None);
        assert!(!none.contains(1));
    }
}
