//! The block cache: an LRU bounded in bytes, not entries, because blocks of
//! one cluster differ in size (the last block of a file is short) and memory
//! is what the bound protects. Every insert and eviction is recorded for the
//! next heartbeat, so the master's cache table follows the worker's.
//!
//! Pinned blocks (`mr cache add`, HDFS's centralized cache directives) live
//! beside the LRU, not in it, so no eviction can reach them; their bytes
//! count against the same capacity, and a pin that does not fit beside the
//! other pins is refused rather than allowed to push the cache past its
//! bound.

use bytes::Bytes;
use common::sync::lock;
use lru::LruCache;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A cached block and the CRC32C its bytes were verified against when
/// they were cached: a hit is checked against the namespace by comparing
/// that CRC, not by reading the block again, as HDFS's DataNode verifies
/// a block once when it caches it and serves cached reads without
/// checksumming them. (The bytes are locked in memory: no disk lies under
/// them to rot.) Computing the CRC of every hit cost a 1 GiB TeraSort
/// 1 GiB of CRC32C per run.
#[derive(Clone)]
struct Cached {
    bytes: Bytes,
    crc32c: u32,
}

impl Cached {
    fn len(&self) -> usize {
        self.bytes.len()
    }
}

struct Inner {
    lru: LruCache<u64, Cached>,
    /// Never evicted; dropped only by [`BlockCache::remove`].
    pinned: HashMap<u64, Cached>,
    pinned_bytes: u64,
    /// Bytes of the LRU and the pins together.
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

    /// Evicts least recently used unpinned blocks until `used <= bound`.
    fn evict_to(&mut self, bound: u64) -> usize {
        let mut evicted = 0;
        while self.used > bound {
            let Some((old, bytes)) = self.lru.pop_lru() else {
                break;
            };
            self.used -= bytes.len() as u64;
            self.note_removed(old);
            tracing::debug!(block = old, "evicted from cache");
            evicted += 1;
        }
        evicted
    }
}

/// Why a pin was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("pinning block {id} ({size} bytes) would pin {} bytes in a cache of {capacity}", pinned + size)]
pub struct PinRefused {
    pub id: u64,
    pub size: u64,
    pub pinned: u64,
    pub capacity: u64,
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
                pinned: HashMap::new(),
                pinned_bytes: 0,
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
    /// cache fits in it. Returns how many blocks were evicted. Pins are
    /// never evicted: the bound is raised to the pinned bytes if it is below
    /// them (the master refuses such a resize before it gets here).
    pub fn set_capacity(&self, capacity: u64) -> usize {
        let mut g = lock(&self.inner);
        let capacity = capacity.max(g.pinned_bytes);
        self.capacity.store(capacity, Ordering::Relaxed);
        g.evict_to(capacity)
    }

    /// Bytes held by pinned blocks.
    pub fn pinned_bytes(&self) -> u64 {
        lock(&self.inner).pinned_bytes
    }

    pub fn is_pinned(&self, id: u64) -> bool {
        lock(&self.inner).pinned.contains_key(&id)
    }

    /// Pins a block: it stays cached until [`BlockCache::remove`], evicting
    /// unpinned blocks to make room. Refused when the pins would exceed the
    /// capacity. Pinning a block already pinned is a no-op.
    pub fn pin(&self, id: u64, data: &Bytes) -> Result<(), PinRefused> {
        self.pin_verified(id, data, crc32c::crc32c(data))
    }

    /// [`BlockCache::pin`] for bytes already checked against `crc32c`.
    pub fn pin_verified(&self, id: u64, data: &Bytes, crc32c: u32) -> Result<(), PinRefused> {
        let size = data.len() as u64;
        let mut g = lock(&self.inner);
        if g.pinned.contains_key(&id) {
            return Ok(());
        }
        let capacity = self.capacity();
        if g.pinned_bytes + size > capacity {
            return Err(PinRefused {
                id,
                size,
                pinned: g.pinned_bytes,
                capacity,
            });
        }
        let bytes = match g.lru.pop(&id) {
            // Already cached: it moves to the pins, counted once.
            Some(b) => {
                g.used -= b.len() as u64;
                b
            }
            None => {
                g.note_added(id);
                Cached {
                    bytes: data.clone(),
                    crc32c,
                }
            }
        };
        g.evict_to(capacity - size);
        g.used += size;
        g.pinned_bytes += size;
        g.pinned.insert(id, bytes);
        Ok(())
    }

    pub fn used(&self) -> u64 {
        lock(&self.inner).used
    }

    /// Looks a block up, marking it most recently used.
    pub fn get(&self, id: u64) -> Option<Bytes> {
        self.get_verified(id).map(|(b, _)| b)
    }

    /// [`BlockCache::get`], with the CRC32C the bytes were verified
    /// against when they were cached.
    pub fn get_verified(&self, id: u64) -> Option<(Bytes, u32)> {
        let mut g = lock(&self.inner);
        let hit = match g.pinned.get(&id) {
            Some(b) => Some(b.clone()),
            None => g.lru.get(&id).cloned(),
        };
        if hit.is_some() {
            g.hits += 1;
        } else {
            g.misses += 1;
        }
        hit.map(|c| (c.bytes, c.crc32c))
    }

    pub fn contains(&self, id: u64) -> bool {
        let g = lock(&self.inner);
        g.pinned.contains_key(&id) || g.lru.contains(&id)
    }

    /// Inserts a block, evicting least recently used ones until it fits. A
    /// block larger than the whole cache is not cached. The cache keeps the
    /// bytes it is given, not a copy: for a block of this worker's store,
    /// its verified mapping, locked in memory (`BlockStore::read_locked`),
    /// as HDFS's DataNode caches a block (mmap and mlock), so that cached
    /// blocks are file pages and not the worker's heap; for a block read
    /// from another worker, the buffer it arrived in.
    pub fn insert(&self, id: u64, data: &Bytes) -> bool {
        self.insert_verified(id, data, crc32c::crc32c(data))
    }

    /// [`BlockCache::insert`] for bytes already checked against `crc32c`
    /// (a verified read), which a hit is then checked by.
    pub fn insert_verified(&self, id: u64, data: &Bytes, crc32c: u32) -> bool {
        let size = data.len() as u64;
        let mut g = lock(&self.inner);
        if g.pinned.contains_key(&id) {
            return true;
        }
        // Only the room the pins leave is the LRU's.
        let capacity = self.capacity();
        if g.pinned_bytes + size > capacity {
            return false;
        }
        if g.lru.contains(&id) {
            g.lru.promote(&id);
            return true;
        }
        g.evict_to(capacity - size);
        g.lru.put(
            id,
            Cached {
                bytes: data.clone(),
                crc32c,
            },
        );
        g.used += size;
        g.note_added(id);
        true
    }

    /// Drops a block, pinned or not (`mr cache rm` unpins this way).
    pub fn remove(&self, id: u64) -> bool {
        let mut g = lock(&self.inner);
        if let Some(b) = g.pinned.remove(&id) {
            g.used -= b.len() as u64;
            g.pinned_bytes -= b.len() as u64;
            g.note_removed(id);
            return true;
        }
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
        let g = lock(&self.inner);
        g.pinned
            .keys()
            .chain(g.lru.iter().map(|(k, _)| k))
            .copied()
            .collect()
    }

    /// Takes (added, removed) since the last call, for a heartbeat.
    pub fn take_delta(&self) -> (Vec<u64>, Vec<u64>) {
        let mut g = lock(&self.inner);
        let a = std::mem::take(&mut g.added).into_iter().collect();
        let r = std::mem::take(&mut g.removed).into_iter().collect();
        (a, r)
    }

    /// Forgets pending changes: a full report is about to replace them.
    pub fn clear_delta(&self) {
        let mut g = lock(&self.inner);
        g.added.clear();
        g.removed.clear();
    }

    /// (hits, misses) since start.
    pub fn hit_miss(&self) -> (u64, u64) {
        let g = lock(&self.inner);
        (g.hits, g.misses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(byte: u8, len: usize) -> Bytes {
        Bytes::from(vec![byte; len])
    }

    #[test]
    fn evicts_by_bytes_in_lru_order() {
        let c = BlockCache::new(100);
        assert!(c.insert(1, &block(0, 40)));
        assert!(c.insert(2, &block(0, 40)));
        assert!(c.get(1).is_some()); // 2 is now the least recently used
        assert!(c.insert(3, &block(0, 40)));
        assert_eq!(c.used(), 80);
        assert!(c.contains(1) && c.contains(3) && !c.contains(2));
        let (mut added, removed) = c.take_delta();
        added.sort();
        // 2 was added and evicted within one interval: nothing to report.
        assert_eq!(added, vec![1, 3]);
        assert!(removed.is_empty());
        assert!(c.insert(4, &block(0, 90)));
        assert_eq!(c.used(), 90);
        let (added, mut removed) = c.take_delta();
        removed.sort();
        assert_eq!(added, vec![4]);
        assert_eq!(removed, vec![1, 3]);
    }

    #[test]
    fn refuses_oversized_and_removes() {
        let c = BlockCache::new(10);
        assert!(!c.insert(1, &block(0, 11)));
        assert!(c.insert(2, &block(0, 10)));
        assert!(c.remove(2));
        assert_eq!(c.used(), 0);
        assert_eq!(c.take_delta(), (vec![], vec![]));
    }

    #[test]
    fn pinned_blocks_survive_a_flood() {
        let c = BlockCache::new(100);
        assert!(c.insert(1, &block(1, 30)));
        c.pin(1, &block(1, 30)).unwrap(); // cached already: moves to the pins
        c.pin(2, &block(2, 30)).unwrap();
        assert_eq!((c.used(), c.pinned_bytes()), (60, 60));
        // a flood of unpinned blocks, each as big as the room left
        for id in 10..60 {
            assert!(c.insert(id, &block(0, 40)));
            assert!(c.used() <= 100);
        }
        assert!(
            !c.insert(99, &block(0, 41)),
            "only the room beside the pins is the LRU's"
        );
        assert_eq!(c.get(1).unwrap()[0], 1);
        assert_eq!(c.get(2).unwrap()[0], 2);
        assert!(c.is_pinned(1) && c.is_pinned(2));
        // the cache never reported a pinned block removed
        let (_, removed) = c.take_delta();
        assert!(!removed.contains(&1) && !removed.contains(&2));
        // shrinking never evicts a pin
        c.set_capacity(10);
        assert_eq!(c.capacity(), 60);
        assert!(c.contains(1) && c.contains(2) && !c.contains(59));
    }

    #[test]
    fn a_pin_that_does_not_fit_is_refused_and_rm_unpins() {
        let c = BlockCache::new(100);
        c.pin(1, &block(0, 60)).unwrap();
        assert_eq!(
            c.pin(2, &block(0, 50)),
            Err(PinRefused {
                id: 2,
                size: 50,
                pinned: 60,
                capacity: 100
            })
        );
        assert!(!c.contains(2));
        assert!(c.remove(1));
        assert_eq!((c.used(), c.pinned_bytes()), (0, 0));
        c.pin(2, &block(0, 50)).unwrap();
        assert!(c.insert(3, &block(0, 50)));
        assert!(c.insert(4, &block(0, 50)), "4 evicts 3, never the pinned 2");
        assert!(c.contains(2) && c.contains(4) && !c.contains(3));
    }

    #[test]
    fn shrinking_evicts_lru_first_and_bounds_later_inserts() {
        let c = BlockCache::new(100);
        for id in 1..=4 {
            assert!(c.insert(id, &block(0, 25)));
        }
        c.take_delta();
        assert!(c.get(1).is_some()); // 2 is now the least recently used
        assert_eq!(c.set_capacity(50), 2);
        assert_eq!(c.capacity(), 50);
        assert!(c.contains(1) && c.contains(4) && !c.contains(2) && !c.contains(3));
        let (_, mut removed) = c.take_delta();
        removed.sort();
        assert_eq!(removed, vec![2, 3]);
        assert!(!c.insert(9, &block(0, 60)));
        assert_eq!(c.set_capacity(0), 2);
        assert_eq!(c.used(), 0);
    }
}
