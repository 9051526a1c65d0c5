//! Big buffers kept from one task for the next. A fresh buffer's pages are
//! faulted in and zeroed as it fills, and on a VM that gives freed memory
//! back to its host each of those faults also goes to the host (the sort
//! index and scratch of every map, the block buffers of every output
//! part). A worker keeps a few, bounded in number by each keeper, so the
//! memory it holds this way stays bounded.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// At most `most` empty buffers of `T`, for [`Spares::take`].
pub struct Spares<T> {
    kept: Mutex<Vec<Vec<T>>>,
    most: AtomicUsize,
}

impl<T> Spares<T> {
    pub const fn new(most: usize) -> Self {
        Spares {
            kept: Mutex::new(Vec::new()),
            most: AtomicUsize::new(most),
        }
    }

    /// Keeps at most `most` buffers from now on (a worker sizes its keepers
    /// by its slots when it opens); any kept beyond that are freed.
    pub fn keep_at_most(&self, most: usize) {
        self.most.store(most, Ordering::Relaxed);
        common::sync::lock(&self.kept).truncate(most);
    }

    /// An empty buffer with room for `cap`: a kept one if one is big
    /// enough, else a new one (huge pages where they can be).
    pub fn take(&self, cap: usize) -> Vec<T> {
        let mut kept = common::sync::lock(&self.kept);
        match kept.iter().position(|v| v.capacity() >= cap) {
            Some(i) => kept.swap_remove(i),
            None => {
                drop(kept);
                crate::mem::hugepages::with_capacity(cap)
            }
        }
    }

    /// Keeps `v`, emptied, if there is room.
    pub fn keep(&self, mut v: Vec<T>) {
        if v.capacity() == 0 {
            return;
        }
        v.clear();
        let mut kept = common::sync::lock(&self.kept);
        if kept.len() < self.most.load(Ordering::Relaxed) {
            kept.push(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_buffer_comes_back_only_if_big_enough_and_room_is_bounded() {
        let s: Spares<u64> = Spares::new(1);
        let mut a = s.take(100);
        a.push(7);
        let ptr = a.as_ptr();
        s.keep(a);
        let b = s.take(200);
        assert_ne!(b.as_ptr(), ptr, "too small a kept buffer was handed out");
        let c = s.take(50);
        assert_eq!((c.as_ptr(), c.len()), (ptr, 0));
        s.keep(c);
        s.keep(b);
        assert_eq!(common::sync::lock(&s.kept).len(), 1);
        // Sized up, it keeps more; sized down, it frees what is over.
        s.keep_at_most(3);
        for _ in 0..4 {
            s.keep(Vec::with_capacity(10));
        }
        assert_eq!(common::sync::lock(&s.kept).len(), 3);
        s.keep_at_most(2);
        assert_eq!(common::sync::lock(&s.kept).len(), 2);
    }
}
