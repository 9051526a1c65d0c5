//! Jobs across a master restart. Jobs live in memory only, so a restart
//! cannot resume them; what it must not do is lose them silently or hand
//! out their ids again (a client polling job 3 would read another job 3,
//! and a late attempt of the old job could write into the new one's
//! staging). So a job's history file is created, fsynced, when the job is
//! accepted, holding a `submitted` record; the final `job` record is
//! written when it ends. At start the master reads the history directory:
//! ids continue after the highest one, and every job without a final
//! record ends `failed` with the reason "the master restarted", which its
//! clients then read (faults.sh master-restart: never stuck, never
//! succeeded with partial output; it can be submitted again).
//!
//! A job whose commit edit is durable but whose history was not written
//! (a crash between the two) did succeed: its output holds every part and
//! `_SUCCESS`. Reporting it failed would make a client run it again into
//! an output that exists; so the caller says which outputs are committed,
//! and those jobs end `succeeded`.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// Why a job that was running when the master stopped ended.
pub const RESTARTED: &str =
    "the master restarted while the job ran: its output was discarded; submit it again";

/// The note on a job found committed at start.
pub const COMMITTED_BEFORE_RESTART: &str =
    "the master restarted after the job's output was committed and before its history was \
     written: the output is complete; this record was written at the restart";

fn file(dir: &Path, id: u64) -> std::path::PathBuf {
    dir.join(format!("job-{id}.jsonl"))
}

/// Writes the job's first history record, durably, before its id is
/// returned to the client (queued by `disk.rs`, written off the lock).
pub fn record_submitted(dir: &Path, id: u64, summary: &Value) -> std::io::Result<()> {
    crate::lockmark::assert_unlocked("a job's submitted record");
    std::fs::create_dir_all(dir)?;
    let mut s = summary.clone();
    s["type"] = json!("submitted");
    let mut f = std::fs::File::create(file(dir, id))?;
    writeln!(f, "{s}")?;
    f.sync_all()?;
    // The new name must survive a crash too.
    std::fs::File::open(dir)?.sync_all()
}

/// What the history directory held at start.
#[derive(Debug, Default)]
pub struct Recovered {
    /// The id the next job gets: after every id a history file has.
    pub next_id: u64,
    /// Jobs that were running when the master stopped, now `failed`.
    pub interrupted: Vec<u64>,
    /// Every earlier job's final record, by id: what `mr job status` and
    /// the web UI show of it, kept in memory so that no request reads a
    /// file under the lock.
    pub summaries: BTreeMap<u64, Value>,
}

/// Reads the history directory at start: the next job id, and the jobs
/// that were still running, each now ended with [`RESTARTED`], or
/// `succeeded` when `committed` says its output was committed.
pub fn recover(dir: &Path, now_ms: u64, committed: &dyn Fn(&str) -> bool) -> Recovered {
    let mut max = 0;
    let mut interrupted = Vec::new();
    let mut summaries = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Recovered {
            next_id: 1,
            ..Default::default()
        };
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(id) = name
            .to_str()
            .and_then(|n| n.strip_prefix("job-"))
            .and_then(|n| n.strip_suffix(".jsonl"))
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        max = max.max(id);
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        let last: Value = text
            .lines()
            .last()
            .and_then(|l| serde_json::from_str(l).ok())
            .unwrap_or(Value::Null);
        if last["type"] == "job" {
            summaries.insert(id, last);
            continue;
        }
        let mut fin = if last.is_object() {
            last
        } else {
            json!({ "job_id": id })
        };
        fin["type"] = json!("job");
        fin["end_ms"] = json!(now_ms);
        let done = fin["output"].as_str().is_some_and(committed);
        if done {
            fin["state"] = json!("succeeded");
            fin["note"] = json!(COMMITTED_BEFORE_RESTART);
        } else {
            fin["state"] = json!("failed");
            fin["error"] = json!(RESTARTED);
        }
        let res = std::fs::OpenOptions::new()
            .append(true)
            .open(e.path())
            .and_then(|mut f| {
                writeln!(f, "{fin}")?;
                f.sync_all()
            });
        match res {
            Ok(()) if done => {
                tracing::warn!(
                    job = id,
                    "job was committed when the master stopped: succeeded"
                );
            }
            Ok(()) => {
                tracing::warn!(job = id, "job was running when the master stopped: failed");
                interrupted.push(id);
            }
            Err(err) => tracing::warn!(job = id, "cannot end an interrupted job: {err}"),
        }
        summaries.insert(id, fin);
    }
    interrupted.sort_unstable();
    Recovered {
        next_id: max + 1,
        interrupted,
        summaries,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(r: Recovered) -> (u64, Vec<u64>) {
        (r.next_id, r.interrupted)
    }

    #[test]
    fn interrupted_jobs_fail_and_ids_continue() {
        let d = std::env::temp_dir().join(format!("mr-recovery-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let none = |_: &str| false;
        assert_eq!(ids(recover(&d, 0, &none)), (1, vec![]));
        record_submitted(&d, 1, &json!({"job_id": 1, "state": "queued"})).unwrap();
        record_submitted(&d, 2, &json!({"job_id": 2, "state": "queued"})).unwrap();
        // Job 2 ended before the restart.
        std::fs::write(
            file(&d, 2),
            "{\"type\":\"submitted\"}\n{\"type\":\"job\",\"state\":\"succeeded\"}\n",
        )
        .unwrap();
        assert_eq!(ids(recover(&d, 5, &none)), (3, vec![1]));
        let last = std::fs::read_to_string(file(&d, 1)).unwrap();
        let v: Value = serde_json::from_str(last.lines().last().unwrap()).unwrap();
        assert_eq!(v["state"], "failed");
        assert_eq!(v["error"], RESTARTED);
        // A second start finds nothing more to end.
        assert_eq!(ids(recover(&d, 6, &none)), (3, vec![]));
        // Every earlier job's final record is kept, for status requests.
        let r = recover(&d, 7, &none);
        assert_eq!(r.summaries.len(), 2);
        assert_eq!(r.summaries[&1]["state"], "failed");
        assert_eq!(r.summaries[&2]["type"], "job");
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A crash between the commit edit and the history write: the job's
    /// output is committed, so it is reported succeeded, not failed.
    #[test]
    fn a_job_committed_before_a_crash_is_not_reported_failed() {
        let d = std::env::temp_dir().join(format!("mr-recovery-c-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let sub = |id: u64, out: &str| json!({"job_id": id, "state": "running", "output": out});
        record_submitted(&d, 1, &sub(1, "/out/done")).unwrap();
        record_submitted(&d, 2, &sub(2, "/out/running")).unwrap();
        let committed = |out: &str| out == "/out/done";
        assert_eq!(ids(recover(&d, 5, &committed)), (3, vec![2]));
        let last = |id: u64| -> Value {
            let t = std::fs::read_to_string(file(&d, id)).unwrap();
            serde_json::from_str(t.lines().last().unwrap()).unwrap()
        };
        assert_eq!(last(1)["state"], "succeeded");
        assert_eq!(last(1)["type"], "job");
        assert_eq!(last(2)["state"], "failed");
        let _ = std::fs::remove_dir_all(&d);
    }
}
