//! Block → the workers holding it: the replica map and the cache map.
//!
//! At a million blocks this is most of the master's memory and, before,
//! most of its per-heartbeat time: a `BTreeSet<String>` per block costs a
//! whole B-tree leaf and a string per replica (about 400 bytes a block),
//! and a worker's block count was a scan of every block. Here a worker's
//! name is stored once and each block keeps a short list of small numbers,
//! sorted by name (the order the sets gave, which placement and the views
//! rely on for determinism); and each worker's own blocks are kept as
//! they change, so that its count, its death and a scheduling view's
//! refresh of its node cost what it holds, not what the cluster holds.

use std::collections::{BTreeSet, HashMap, HashSet};

#[derive(Debug, Default)]
pub struct Holders {
    /// Worker number → name; a name keeps its number for ever (workers
    /// are few, and a dead one usually comes back).
    names: Vec<String>,
    numbers: HashMap<String, u32>,
    by_block: HashMap<u64, Vec<u32>>,
    /// Each worker's blocks, per worker number.
    by_worker: Vec<HashSet<u64>>,
    /// Counts the changes, for readers that only ask whether any happened.
    generation: u64,
}

impl Holders {
    fn number(&mut self, name: &str) -> u32 {
        if let Some(&n) = self.numbers.get(name) {
            return n;
        }
        let n = self.names.len() as u32;
        self.names.push(name.to_string());
        self.numbers.insert(name.to_string(), n);
        self.by_worker.push(HashSet::new());
        n
    }

    /// Records `worker` holding `block`; false if it already did.
    pub fn insert(&mut self, block: u64, worker: &str) -> bool {
        let n = self.number(worker);
        let names = &self.names;
        let list = self.by_block.entry(block).or_default();
        let Err(at) = list.binary_search_by(|&x| names[x as usize].as_str().cmp(worker)) else {
            return false;
        };
        list.insert(at, n);
        self.by_worker[n as usize].insert(block);
        self.generation += 1;
        true
    }

    /// Forgets `worker` holding `block`; false if it did not.
    pub fn remove(&mut self, block: u64, worker: &str) -> bool {
        let Some(&n) = self.numbers.get(worker) else {
            return false;
        };
        let Some(list) = self.by_block.get_mut(&block) else {
            return false;
        };
        let Some(at) = list.iter().position(|&x| x == n) else {
            return false;
        };
        list.remove(at);
        if list.is_empty() {
            self.by_block.remove(&block);
        }
        self.by_worker[n as usize].remove(&block);
        self.generation += 1;
        true
    }

    /// Forgets the block; returns who held it, by name.
    pub fn remove_block(&mut self, block: u64) -> Vec<String> {
        let list = self.by_block.remove(&block).unwrap_or_default();
        self.generation += 1;
        for &n in &list {
            self.by_worker[n as usize].remove(&block);
        }
        list.iter()
            .map(|&n| self.names[n as usize].clone())
            .collect()
    }

    /// Forgets everything `worker` holds.
    pub fn drop_worker(&mut self, worker: &str) {
        let Some(&n) = self.numbers.get(worker) else {
            return;
        };
        self.generation += 1;
        for b in std::mem::take(&mut self.by_worker[n as usize]) {
            if let Some(list) = self.by_block.get_mut(&b) {
                list.retain(|&x| x != n);
                if list.is_empty() {
                    self.by_block.remove(&b);
                }
            }
        }
    }

    /// Who holds `block`, by name in name order.
    pub fn of(&self, block: u64) -> impl Iterator<Item = &String> + Clone + '_ {
        (self.by_block.get(&block).into_iter().flatten()).map(|&n| &self.names[n as usize])
    }

    /// Changes whenever a holder is recorded or forgotten.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// How many workers hold `block`.
    pub fn count(&self, block: u64) -> usize {
        self.by_block.get(&block).map_or(0, Vec::len)
    }

    pub fn holds(&self, block: u64, worker: &str) -> bool {
        self.numbers
            .get(worker)
            .is_some_and(|n| self.by_block.get(&block).is_some_and(|l| l.contains(n)))
    }

    /// How many blocks `worker` holds.
    pub fn count_on(&self, worker: &str) -> usize {
        self.numbers
            .get(worker)
            .map_or(0, |&n| self.by_worker[n as usize].len())
    }

    /// The blocks `worker` holds.
    pub fn blocks_of(&self, worker: &str) -> HashSet<u64> {
        self.numbers
            .get(worker)
            .map(|&n| self.by_worker[n as usize].clone())
            .unwrap_or_default()
    }

    /// Blocks held by at least one worker.
    pub fn blocks(&self) -> impl Iterator<Item = u64> + '_ {
        self.by_block.keys().copied()
    }

    /// Blocks held by at least one worker, how many.
    pub fn len(&self) -> usize {
        self.by_block.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_block.is_empty()
    }

    /// The holders of `block` as a set, for callers that compare sets.
    pub fn set_of(&self, block: u64) -> BTreeSet<String> {
        self.of(block).cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(h: &Holders, b: u64) -> Vec<&str> {
        h.of(b).map(String::as_str).collect()
    }

    #[test]
    fn holders_stay_in_name_order_and_counts_follow() {
        {
            let mut h = Holders::default();
            assert!(h.insert(1, "w3"));
            assert!(h.insert(1, "w1"));
            assert!(h.insert(1, "w2"));
            assert!(!h.insert(1, "w1"));
            assert!(h.insert(2, "w1"));
            assert_eq!(names(&h, 1), ["w1", "w2", "w3"]);
            assert_eq!(
                (h.count_on("w1"), h.count_on("w2"), h.count_on("x")),
                (2, 1, 0)
            );
            assert!(h.holds(2, "w1") && !h.holds(2, "w2"));
            assert!(h.remove(1, "w2"));
            assert!(!h.remove(1, "w2"));
            assert_eq!(names(&h, 1), ["w1", "w3"]);
            h.drop_worker("w1");
            assert_eq!(names(&h, 1), ["w3"]);
            assert_eq!(h.count(2), 0);
            assert_eq!(h.count_on("w1"), 0);
            assert_eq!(h.len(), 1);
            assert_eq!(h.remove_block(1), ["w3"]);
            assert_eq!(h.count_on("w3"), 0);
            assert!(h.is_empty());
        }
    }

    #[test]
    fn the_reverse_index_lists_a_workers_blocks() {
        let mut h = Holders::default();
        h.insert(7, "a");
        h.insert(8, "a");
        h.insert(8, "b");
        h.remove(7, "a");
        assert_eq!(h.blocks_of("a"), HashSet::from([8]));
        h.remove_block(8);
        assert!(h.blocks_of("a").is_empty() && h.blocks_of("b").is_empty());
    }
}
