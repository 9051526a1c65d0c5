//! The ground truth a run records as it goes, shared by every simulated
//! host (they all run on the test's one thread): what was launched where,
//! which task reports were sent and whether they were already stale when
//! sent, which puts were acknowledged, how the job ended. The checks judge
//! the run against it, and its trace is what a failing seed prints.

use bytes::Bytes;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

/// (job, is_map, index): one task of a job.
pub type TaskKey = (u64, bool, u32);

#[derive(Debug, Clone)]
pub struct Launch {
    pub attempt: u32,
    pub worker: String,
    pub epoch: u64,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub task: TaskKey,
    pub attempt: u32,
    pub worker: String,
    pub epoch: u64,
    pub succeeded: bool,
    /// A later attempt of the task had been launched, or the worker had
    /// registered again, before this report left: the master must ignore it.
    pub stale: bool,
}

/// How the client saw its job end.
#[derive(Debug, Clone, PartialEq)]
pub enum JobEnd {
    Succeeded {
        id: u64,
    },
    Failed {
        id: u64,
        error: String,
    },
    /// The master restarted and no longer knows the job.
    Vanished {
        id: u64,
        status: String,
    },
}

#[derive(Default)]
pub struct History {
    pub launches: BTreeMap<TaskKey, Vec<Launch>>,
    pub reports: Vec<Report>,
    /// The epoch each worker model currently holds (0: unregistered).
    pub epochs: BTreeMap<String, u64>,
    /// Every file the client tried to write, with its content.
    pub intended: BTreeMap<String, Bytes>,
    /// The files whose put returned Ok.
    pub acked: Vec<String>,
    pub job_end: Option<JobEnd>,
    /// Submissions (a vanished job is submitted again under a new output).
    pub submissions: Vec<(u64, String)>,
    /// Output read back by the client after the run settled: path → bytes
    /// (or the error that stopped the read).
    pub read_back: BTreeMap<String, Result<Bytes, String>>,
    /// Paths listed under the job's output after it settled.
    pub output_listing: Vec<String>,
    /// The client finished its script (healed cluster, everything read).
    pub client_done: bool,
    pub master_starts: u32,
    trace: Vec<String>,
}

pub type Shared = Arc<Mutex<History>>;

impl History {
    pub fn note(&mut self, line: String) {
        let t = turmoil::sim_elapsed().unwrap_or_default();
        self.note_at(t, line)
    }

    /// A trace line at a given simulated time (for the run's own notes,
    /// made outside any host).
    pub fn note_at(&mut self, t: std::time::Duration, line: String) {
        let mut s = String::new();
        let _ = write!(s, "{:>9.3}s {line}", t.as_secs_f64());
        self.trace.push(s);
    }

    pub fn trace(&self) -> &[String] {
        &self.trace
    }

    /// A digest of the trace up to the heal (the job, the faults and every
    /// decision): equal digests for two runs of a seed mean it replays. The
    /// read-back after the heal is left out: its timing can move by a
    /// millisecond on a loaded machine, because h2 forgets streams it reset
    /// (calls given up at their deadline) after a second of real time.
    pub fn digest(&self) -> u32 {
        let mut c = 0u32;
        for l in &self.trace {
            c = crc32c::crc32c_append(c, l.as_bytes());
            if l.ends_with("nemesis: heal everything") {
                break;
            }
        }
        c
    }

    /// Whether a report sent now for `task`/`attempt` from `worker` at
    /// `epoch` is already stale.
    pub fn is_stale(&self, task: TaskKey, attempt: u32, worker: &str, epoch: u64) -> bool {
        let later = self
            .launches
            .get(&task)
            .is_some_and(|v| v.iter().any(|l| l.attempt > attempt));
        later || self.epochs.get(worker).copied().unwrap_or(0) != epoch
    }
}

/// Records a trace line.
pub fn note(h: &Shared, line: impl Into<String>) {
    h.lock().unwrap().note(line.into());
}
