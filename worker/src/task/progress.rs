//! An attempt's progress counter: bumped where its work moves (an input
//! block read, a batch of records mapped or reduced, a segment fetched, an
//! output block written, a child's I/O), sent in every heartbeat, and
//! compared by the master, which kills an attempt whose counter has not
//! moved for `[jobs] task_timeout` (Hadoop's `mapreduce.task.timeout`).
//!
//! Why a task-local and a thread-local rather than a handle passed down:
//! the places that see work move are deep in code shared by every kind of
//! attempt (the output writer, the map output buffer, the merge), most of
//! it in `spawn_blocking` closures; [`spawn_blocking`] carries the
//! attempt's counter into them, and [`bump`] finds it wherever it runs.

use std::cell::RefCell;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub type Counter = Arc<AtomicU64>;

tokio::task_local! {
    static TASK: Counter;
}

thread_local! {
    static THREAD: RefCell<Option<Counter>> = const { RefCell::new(None) };
}

/// Records made between two bumps in per-record loops: a bump per record
/// would cost an atomic add each.
pub const EVERY_RECORDS: u64 = 4096;

/// The counter of the attempt this code runs for, if any.
pub fn current() -> Option<Counter> {
    TASK.try_with(Arc::clone)
        .ok()
        .or_else(|| THREAD.with(|t| t.borrow().clone()))
}

/// Notes that the current attempt moved.
pub fn bump() {
    if let Ok(()) = TASK.try_with(|c| {
        c.fetch_add(1, Ordering::Relaxed);
    }) {
        return;
    }
    THREAD.with(|t| {
        if let Some(c) = t.borrow().as_ref() {
            c.fetch_add(1, Ordering::Relaxed);
        }
    });
}

/// Runs `f` as an attempt whose counter is `c`.
pub async fn scope<F: Future>(c: Counter, f: F) -> F::Output {
    TASK.scope(c, f).await
}

/// `tokio::task::spawn_blocking`, with the current attempt's counter
/// carried into the closure.
pub fn spawn_blocking<F, R>(f: F) -> tokio::task::JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let c = current();
    tokio::task::spawn_blocking(move || {
        let _restore = Restore(THREAD.with(|t| t.replace(c)));
        f()
    })
}

/// Puts back the thread's previous counter, also when the closure panics:
/// the pool's thread runs other closures later.
struct Restore(Option<Counter>);

impl Drop for Restore {
    fn drop(&mut self) {
        let prev = self.0.take();
        THREAD.with(|t| *t.borrow_mut() = prev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bumps_reach_the_attempts_counter_in_async_and_blocking_code() {
        let c: Counter = Default::default();
        scope(c.clone(), async {
            bump();
            spawn_blocking(bump).await.unwrap();
        })
        .await;
        assert_eq!(c.load(Ordering::Relaxed), 2);
        // Outside an attempt, and on a blocking thread used again later,
        // a bump goes nowhere.
        bump();
        spawn_blocking(bump).await.unwrap();
        assert_eq!(c.load(Ordering::Relaxed), 2);
    }
}
