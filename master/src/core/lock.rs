//! The coordinator's one lock, taken by name. Every holder says where it
//! takes the lock (`"heartbeat"`, `"submit_job"`, ...), and the guard, when
//! dropped, adds how long it was held to that site's figures, which
//! `/metrics` publishes (`mr_master_lock_hold_max_seconds{site}`): a slow
//! step that creeps under the lock shows there by name, not as a vague
//! rise in every RPC's latency.
//!
//! When the guard lets the lock go, it writes the files the locked step
//! queued (`jobs/disk.rs`): every event's file work happens after its
//! locked step and before its handler answers, with no call site able to
//! forget it. A holder that queued nothing writes nothing and waits for
//! nothing.
//!
//! The guard also marks its thread as holding the lock (`lockmark.rs`), so
//! that the functions that touch files
//! ([`assert_unlocked`](crate::lockmark::assert_unlocked)) can refuse to
//! run under it.

use super::MasterState;
use crate::lockmark;
use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long one site held the lock.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SiteHolds {
    pub count: u64,
    pub total: Duration,
    pub max: Duration,
}

/// Hold times by site, kept inside the state they measure: the guard
/// records them while it still holds the lock, so no second lock exists.
#[derive(Debug, Default)]
pub struct LockHolds {
    sites: BTreeMap<&'static str, SiteHolds>,
}

impl LockHolds {
    fn record(&mut self, site: &'static str, held: Duration) {
        let s = self.sites.entry(site).or_default();
        s.count += 1;
        s.total += held;
        s.max = s.max.max(held);
    }

    /// Every site that took the lock since the master started.
    pub fn sites(&self) -> impl Iterator<Item = (&'static str, &SiteHolds)> {
        self.sites.iter().map(|(k, v)| (*k, v))
    }
}

/// The coordinator, locked by `site`.
pub struct Held<'a> {
    /// Always `Some` until dropped.
    guard: Option<MutexGuard<'a, MasterState>>,
    site: &'static str,
    since: Instant,
    /// The job side's queued file ops when the lock was taken.
    queued: u64,
}

/// Takes the coordinator's lock for `site`, recovering it after a panic
/// (see `common::sync::lock`).
pub fn lock<'a>(state: &'a Mutex<MasterState>, site: &'static str) -> Held<'a> {
    let guard = common::sync::lock(state);
    lockmark::set(true);
    let queued = guard.jobs().disk().queued();
    Held {
        guard: Some(guard),
        site,
        since: Instant::now(),
        queued,
    }
}

impl Deref for Held<'_> {
    type Target = MasterState;
    fn deref(&self) -> &MasterState {
        self.guard.as_ref().expect("held until dropped")
    }
}

impl DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut MasterState {
        self.guard.as_mut().expect("held until dropped")
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let Some(mut guard) = self.guard.take() else {
            return;
        };
        // Only a holder that queued file work waits for it (and for what
        // was queued before it, which its writes must follow).
        let disk = guard.jobs().disk();
        let files = (disk.queued() != self.queued).then(|| disk.clone());
        let held = self.since.elapsed();
        guard.lock_holds_mut().record(self.site, held);
        drop(guard);
        lockmark::set(false);
        if let Some(disk) = files {
            disk.drain();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_are_counted_by_site() {
        let mut h = LockHolds::default();
        h.record("a", Duration::from_millis(3));
        h.record("a", Duration::from_millis(1));
        h.record("b", Duration::from_millis(2));
        let a = h.sites().find(|(s, _)| *s == "a").unwrap().1;
        assert_eq!(a.count, 2);
        assert_eq!(a.max, Duration::from_millis(3));
        assert_eq!(a.total, Duration::from_millis(4));
    }
}
