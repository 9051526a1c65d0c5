//! The job side's files — each job's history, the record that makes a
//! submission durable, the policy's learnt state — written after the
//! coordinator's lock is released, so that no fsync but the edit log's
//! happens under it (`core/lock.rs`). A locked step only queues the bytes;
//! the guard, once it has let the lock go, drains the queue ([`Disk::drain`])
//! on the caller's own thread. One writer at a time drains, in the order the
//! steps queued under the lock, so two handlers never reorder two writes of
//! one file; and a drain returns only when every op queued before it is on
//! disk, whoever wrote it. No thread of its own: the turmoil simulation
//! (`simtest`) stays deterministic, and an error reaches the caller that
//! queued the op.
//!
//! The order is what a crash needs:
//! - a job's `submitted` record is queued before anything else about the
//!   job, and the job is admitted (its tasks placed, its id returned to the
//!   client) only once the record is on disk (`core/offlock.rs`): a crash
//!   before that leaves no trace of a job no client heard of, and a crash
//!   after it finds the record (`recovery.rs`) and ends the job `failed`
//!   rather than reuse its id;
//! - a job's history is queued when it ends, after its `submitted` record,
//!   and replaces that file whole (temp file, fsync, rename, directory
//!   fsync). The ending step's caller writes it before it answers; other
//!   clients may learn of the end from memory a moment before. A crash in
//!   that moment ends the job at the next start as a crash during it would
//!   have: `succeeded` when its output was committed (the commit is an
//!   edit, durable under the lock), else `failed`;
//! - the policy's state is written whole each time, so the last save queued
//!   is the one on disk, and a read after a drain sees every save queued
//!   before it.

use super::{history, recovery, schedstate};
use serde_json::Value;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};

enum Op {
    Submitted {
        id: u64,
        summary: Value,
        done: mpsc::Sender<std::io::Result<()>>,
    },
    History {
        id: u64,
        records: Vec<Value>,
        summary: Value,
    },
    SavePolicy {
        name: String,
        text: String,
    },
}

/// The queue of the job side's file writes. Clones share one queue.
#[derive(Clone)]
pub struct Disk {
    queue: Arc<Mutex<VecDeque<Op>>>,
    /// Held by the one caller draining the queue, while it writes.
    writer: Arc<Mutex<()>>,
    /// Ops ever queued: a lock holder that saw it move queued some, and
    /// drains; the others do not wait on writes they did not ask for.
    queued: Arc<AtomicU64>,
    data_dir: PathBuf,
}

/// What [`Disk::record_submitted`] gives back: whether the record is on
/// disk, known once the queue was drained.
#[derive(Debug)]
pub struct Submitted(mpsc::Receiver<std::io::Result<()>>);

impl Submitted {
    /// The record's fate; call after a drain (the lock's guard drains when
    /// dropped).
    pub fn outcome(self) -> std::io::Result<()> {
        self.0.try_recv().unwrap_or_else(|_| {
            Err(std::io::Error::other(
                "the submission record was not written: its queue was not drained",
            ))
        })
    }
}

impl Disk {
    pub fn new(data_dir: PathBuf) -> Disk {
        Disk {
            queue: Default::default(),
            writer: Default::default(),
            queued: Default::default(),
            data_dir,
        }
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    pub fn history_dir(&self) -> PathBuf {
        self.data_dir.join("history")
    }

    fn push(&self, op: Op) {
        common::sync::lock(&self.queue).push_back(op);
        self.queued.fetch_add(1, Ordering::Relaxed);
    }

    /// How many ops were ever queued (see `core/lock.rs`).
    pub fn queued(&self) -> u64 {
        self.queued.load(Ordering::Relaxed)
    }

    /// Queues job `id`'s `submitted` record.
    pub fn record_submitted(&self, id: u64, summary: Value) -> Submitted {
        let (done, rx) = mpsc::channel();
        self.push(Op::Submitted { id, summary, done });
        Submitted(rx)
    }

    /// Queues job `id`'s whole history.
    pub fn write_history(&self, id: u64, records: Vec<Value>, summary: Value) {
        self.push(Op::History {
            id,
            records,
            summary,
        });
    }

    /// Queues a save of policy `name`'s state.
    pub fn save_policy(&self, name: &str, text: String) {
        let name = name.to_string();
        self.push(Op::SavePolicy { name, text });
    }

    /// Whether anything waits to be written.
    #[cfg(test)]
    fn is_idle(&self) -> bool {
        common::sync::lock(&self.queue).is_empty()
    }

    /// Writes everything queued, in order; returns once every op queued
    /// before the call is on disk. Never under the coordinator's lock.
    pub fn drain(&self) {
        crate::lockmark::assert_unlocked("a job file write");
        let _writer = common::sync::lock(&self.writer);
        loop {
            // Popped under `writer`: the next drainer waits for this op too.
            let Some(op) = common::sync::lock(&self.queue).pop_front() else {
                return;
            };
            self.run(op);
        }
    }

    fn run(&self, op: Op) {
        let dir = &self.data_dir;
        match op {
            Op::Submitted { id, summary, done } => {
                let r = recovery::record_submitted(&dir.join("history"), id, &summary);
                let _ = done.send(r);
            }
            Op::History {
                id,
                records,
                summary,
            } => {
                if let Err(e) = history::write_file(&dir.join("history"), id, &records, &summary) {
                    tracing::warn!(job = id, "cannot write job history: {e}");
                }
            }
            Op::SavePolicy { name, text } => schedstate::write(dir, &name, &text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_land_in_queue_order_and_report_their_fate() {
        let dir = std::env::temp_dir().join(format!("mr-disk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let disk = Disk::new(dir.clone());
        let sub = disk.record_submitted(4, json!({"job_id": 4}));
        disk.write_history(4, vec![json!({"type": "task"})], json!({"job_id": 4}));
        assert!(!disk.is_idle());
        disk.drain();
        assert!(disk.is_idle());
        sub.outcome().unwrap();
        // The history, queued second, replaced the submitted record.
        let text = std::fs::read_to_string(dir.join("history/job-4.jsonl")).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.lines().last().unwrap().contains("\"type\":\"job\""));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_record_that_cannot_be_written_says_so() {
        let file = std::env::temp_dir().join(format!("mr-disk-file-{}", std::process::id()));
        std::fs::write(&file, b"not a directory").unwrap();
        let disk = Disk::new(file.clone());
        let sub = disk.record_submitted(1, json!({}));
        disk.drain();
        assert!(sub.outcome().is_err());
        std::fs::remove_file(&file).unwrap();
    }
}
