//! Locks that survive a panic.
//!
//! A std `Mutex` is poisoned when a thread panics while holding it, and
//! `lock().unwrap()` then panics in every later caller: one bug in one task
//! would take the whole daemon down with it. The data behind our locks
//! (tables, counters, caches) stays usable after such a panic, so, as the
//! master has always done, the lock is taken anyway and the daemon keeps
//! serving the rest.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, recovering the guard if a panic poisoned it.
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_taken_anyway() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let m2 = m.clone();
        let r = std::thread::spawn(move || {
            let _g = m2.lock().unwrap();
            panic!("poisons the lock");
        })
        .join();
        assert!(r.is_err());
        assert!(m.is_poisoned());
        *lock(&m) += 1;
        assert_eq!(*lock(&m), 2);
    }
}
