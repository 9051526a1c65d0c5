//! The mark a thread carries while it holds the coordinator's lock, and
//! the check every file function of the job side makes against it. The
//! lock itself is `core/lock.rs`, which sets and clears the mark; the mark
//! is here, below every owner, because the functions that check it
//! (`jobs/disk.rs`, `history.rs`, `recovery.rs`, `schedstate.rs`) sit
//! below `core` and may not import it.
//!
//! The mark is sound because a std `MutexGuard` cannot be held across an
//! `.await` in a handler tonic or axum spawns (the future would not be
//! `Send`): while the mark is set, the thread does nothing but the locked
//! step.

use std::cell::Cell;

thread_local! {
    static HELD: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as holding the coordinator's lock, or not.
pub(crate) fn set(held: bool) {
    HELD.with(|h| h.set(held));
}

/// Panics, in debug builds, when the calling thread holds the coordinator's
/// lock; logs an error in release builds. Called by every function of the
/// master that reads or writes a file other than the edit log, whose
/// append is the one slow step the lock must cover (namespace changes are
/// durable in their order).
pub fn assert_unlocked(what: &str) {
    if HELD.with(Cell::get) {
        if cfg!(debug_assertions) {
            panic!("{what} under the master's lock");
        }
        tracing::error!("{what} under the master's lock");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check itself can fail: under the mark it panics (tests build
    /// with debug assertions), and the mark goes with the guard.
    #[test]
    fn file_work_under_the_mark_panics() {
        set(true);
        let r = std::panic::catch_unwind(|| assert_unlocked("a test write"));
        set(false);
        assert!(r.is_err());
        assert_unlocked("a test write");
    }
}
