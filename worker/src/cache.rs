//! The block cache: an LRU bounded in bytes, not entries, because blocks of
//! one cluster differ in size (the last block of a file is short) and memory
//! is what the bound protects. Every insert and eviction is recorded for the
//! next heartbeat, so the master's cache table follows the worker's.

use bytes::Bytes;
use lru::LruCache;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

struct Inner {
    lru: LruCache<u64, Bytes>,
    used: u64,
    added: HashSet<u64>,
    removed: HashSet<u64>,
    hits: u64,
    misses: u64,
}

impl Inner {
    fn note_added(&mut self, id: u64) {
        if !self.removed.remove(&id) {
            self.added.insert(id);
        }
    }

    fn note_removed(&mut self, id: u64) {
        if !self.added.remove(&id) {
            self.removed.insert(id);
        }
    }
}

pub struct BlockCache {
    /// Atomic: the master may resize a running cache (`mr cache resize`,
    /// the cache-size sweep of `mr bench`).
    capacity: AtomicU64,
    /// A std `Mutex`: held only for map operations, never across an await.
    inner: Mutex<Inner>,
}

impl BlockCache {
    pub fn new(capacity: u64) -> Self {
        BlockCache {
            capacity: AtomicU64::new(capacity),
            inner: Mutex::new(Inner {
                lru: LruCache::unbounded(),
                used: 0,
                added: HashSet::new(),
                removed: HashSet::new(),
                hits: 0,
                misses: 0,
            }),
        }
    }

    pub fn capacity(&self) -> u64 {
        self.capacity.load(Ordering::Relaxed)
    }

    /// Sets a new bound, evicting least recently used blocks until the
    /// cache fits in it. Returns how many blocks were evicted.
    pub fn set_capacity(&self, capacity: u64) -> usize {
        let mut g = self.inner.lock().unwrap();
        self.capacity.store(capacity, Ordering::Relaxed);
        let mut evicted = 0;
        while g.used > capacity {
            let Some((old, bytes)) = g.lru.pop_lru() else {
                break;
            };
            g.used -= bytes.len() as u64;
            g.note_removed(old);
            evicted += 1;
        }
        evicted
    }

    pub fn used(&self) -> u64 {
        self.inner.lock().unwrap().used
    }

    /// Looks a block up, marking it most recently used.
    pub fn get(&self, id: u64) -> Option<Bytes> {
        let mut g = self.inner.lock().unwrap();
        let hit = g.lru.get(&id).cloned();
        if hit.is_some() {
            g.hits += 1;
        } else {
            g.misses += 1;
        }
        hit
    }

    pub fn contains(&self, id: u64) -> bool {
        self.inner.lock().unwrap().lru.contains(&id)
    }

    /// Inserts a block, evicting least recently used ones until it fits. A
    /// block larger than the whole cache is not cached. The data is copied
    /// so that the cache owns memory, not a view of a mapped file.
    pub fn insert(&self, id: u64, data: &[u8]) -> bool {
        let size = data.len() as u64;
        let mut g = self.inner.lock().unwrap();
        let capacity = self.capacity();
        if size > capacity {
            return false;
        }
        if g.lru.contains(&id) {
            g.lru.promote(&id);
            return true;
        }
        while g.used + size > capacity {
            let Some((old, bytes)) = g.lru.pop_lru() else {
                break;
            };
            g.used -= bytes.len() as u64;
            g.note_removed(old);
            tracing::debug!(block = old, "evicted from cache");
        }
        g.lru.put(id, Bytes::copy_from_slice(data));
        g.used += size;
        g.note_added(id);
        true
    }

    pub fn remove(&self, id: u64) -> bool {
        let mut g = self.inner.lock().unwrap();
        match g.lru.pop(&id) {
            Some(b) => {
                g.used -= b.len() as u64;
                g.note_removed(id);
                true
            }
            None => false,
        }
    }

    /// Every cached block: the full cache report.
    pub fn report(&self) -> Vec<u64> {
        self.inner
            .lock()
            .unwrap()
            .lru
            .iter()
            .map(|(k, _)| *k)
            .collect()
    }

    /// Takes (added, removed) since the last call, for a heartbeat.
    pub fn take_delta(&self) -> (Vec<u64>, Vec<u64>) {
        let mut g = self.inner.lock().unwrap();
        let a = std::mem::take(&mut g.added).into_iter().collect();
        let r = std::mem::take(&mut g.removed).into_iter().collect();
        (a, r)
    }

    /// Forgets pending changes: a full report is about to replace them.
    pub fn clear_delta(&self) {
        let mut g = self.inner.lock().unwrap();
        g.added.clear();
        g.removed.clear();
    }

    /// (hits, misses) since start.
    pub fn hit_miss(&self) -> (u64, u64) {
        let g = self.inner.lock().unwrap();
        (g.hits, g.misses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_by_bytes_in_lru_order() {
        let c = BlockCache::new(100);
        assert!(c.insert(1, &[0; 40]));
        assert!(c.insert(2, &[0; 40]));
        assert!(c.get(1).is_some()); // 2 is now the least recently used
        assert!(c.insert(3, &[0; 40]));
        assert_eq!(c.used(), 80);
        assert!(c.contains(1) && c.contains(3) && !c.contains(2));
        let (mut added, removed) = c.take_delta();
        added.sort();
        // 2 was added and evicted within one interval: nothing to report.
        assert_eq!(added, vec![1, 3]);
        assert!(removed.is_empty());
        assert!(c.insert(4, &[0; 90]));
        assert_eq!(c.used(), 90);
        let (added, mut removed) = c.take_delta();
        removed.sort();
        assert_eq!(added, vec![4]);
        assert_eq!(removed, vec![1, 3]);
    }

    #[test]
    fn refuses_oversized_and_removes() {
        let c = BlockCache::new(10);
        assert!(!c.insert(1, &[0; 11]));
        assert!(c.insert(2, &[0; 10]));
        assert!(c.remove(2));
        assert_eq!(c.used(), 0);
        assert_eq!(c.take_delta(), (vec![], vec![]));
    }

    #[test]
    fn shrinking_evicts_lru_first_and_bounds_later_inserts() {
        let c = BlockCache::new(100);
        for id in 1..=4 {
            assert!(c.insert(id, &[0; 25]));
        }
        c.take_delta();
        assert!(c.get(1).is_some()); // 2 is now the least recently used
        assert_eq!(c.set_capacity(50), 2);
        assert_eq!(c.capacity(), 50);
        assert!(c.contains(1) && c.contains(4) && !c.contains(2) && !c.contains(3));
        let (_, mut removed) = c.take_delta();
        removed.sort();
        assert_eq!(removed, vec![2, 3]);
        assert!(!c.insert(9, &[0; 60]));
        assert_eq!(c.set_capacity(0), 2);
        assert_eq!(c.used(), 0);
    }
}
