//! A worker's report of one task attempt as the master reads it: the
//! attempt in the scheduler's terms, and what a learning policy is told of
//! it. The report itself is the protocol's ([`protocol::TaskReport`]),
//! shared with the workers; the reading is the master's alone, so it is
//! here, as the [`Ended`] trait.

use protocol::{TaskRef, TaskReport};
use sched::{Locality, TaskId, TaskKind};

/// The task an attempt is of, as the scheduler names it.
fn task_id(t: &TaskRef) -> TaskId {
    TaskId {
        job: t.job_id,
        kind: if t.is_map {
            TaskKind::Map
        } else {
            TaskKind::Reduce
        },
        index: t.index,
    }
}

/// What the master makes of an attempt's end beyond its job's tables.
pub trait Ended {
    /// A succeeded map's locality and the input bytes it read (cache,
    /// local disk or another worker; a generator's are 0), or `None` for
    /// any other attempt.
    fn map_read(&self) -> Option<(&str, u64)>;

    /// What a learning policy is told of the attempt.
    fn for_policy(&self, job_name: String) -> sched::TaskReport;
}

impl Ended for TaskReport {
    fn map_read(&self) -> Option<(&str, u64)> {
        if !self.succeeded || !self.task.is_map {
            return None;
        }
        let m = &self.metrics;
        let read = m.bytes_cache + m.bytes_local + m.bytes_remote_rack + m.bytes_remote_off_rack;
        Some((&m.locality, read))
    }

    fn for_policy(&self, job_name: String) -> sched::TaskReport {
        let m = &self.metrics;
        sched::TaskReport {
            task: task_id(&self.task),
            job_name,
            node: self.worker.clone(),
            locality: Locality::parse(&m.locality).unwrap_or(Locality::OffRack),
            runtime_s: m.end_ms.saturating_sub(m.start_ms) as f64 / 1e3,
            succeeded: self.succeeded,
            // A reduce's input is what it fetched in the shuffle.
            bytes_read: m.bytes_cache
                + m.bytes_local
                + m.bytes_remote_rack
                + m.bytes_remote_off_rack
                + m.bytes_shuffle,
            read_s: m.read_s,
            bytes_written: m.bytes_output,
            cpu_s: m.cpu_s,
            peak_mem_bytes: m.peak_mem_bytes,
        }
    }
}
