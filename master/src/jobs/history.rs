//! What a job leaves behind: its history file (one record per attempt and
//! the final summary, fsynced) and the summaries clients ask for. Both come
//! from memory under the lock: a job of this master run keeps its records,
//! and the final record of every earlier run's job is read once, at start
//! (`recovery.rs`). Only an earlier job's whole history is read from its
//! file, by the caller, after the lock is released.

use super::Jobs;
use crate::error::{MasterError, Result};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A history's lines: one per attempt record, then the summary as the
/// final `job` record.
pub fn lines(records: &[Value], summary: &Value) -> Vec<String> {
    let mut s = summary.clone();
    s["type"] = serde_json::json!("job");
    records
        .iter()
        .chain(std::iter::once(&s))
        .map(Value::to_string)
        .collect()
}

/// Writes the whole history to a temp file and renames it over
/// `job-N.jsonl`, then fsyncs the directory: a crash mid-write leaves
/// the `submitted` record that [`super::recovery`] needs, never a
/// truncated file. Called by [`super::disk::Disk`], off the lock.
pub fn write_file(dir: &Path, id: u64, records: &[Value], summary: &Value) -> std::io::Result<()> {
    crate::lockmark::assert_unlocked("a job history write");
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("job-{id}.jsonl"));
    let tmp = dir.join(format!("job-{id}.jsonl.tmp"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    for l in lines(records, summary) {
        writeln!(f, "{l}")?;
    }
    // The final record is never dropped.
    f.into_inner()?.sync_all()?;
    std::fs::rename(&tmp, &path)?;
    std::fs::File::open(dir)?.sync_all()
}

/// Where a job's history is: in memory for a job of this master run, in
/// its file for one from before a restart, read off the lock
/// ([`History::read`]).
pub enum History {
    Lines(Vec<String>),
    File(PathBuf),
}

impl History {
    pub fn read(self) -> Result<Vec<String>> {
        match self {
            History::Lines(l) => Ok(l),
            History::File(p) => {
                crate::lockmark::assert_unlocked("a job history read");
                match std::fs::read_to_string(&p) {
                    Ok(t) => Ok(t.lines().map(str::to_string).collect()),
                    Err(e) => Err(MasterError::NotFound(format!(
                        "the history file {} cannot be read: {e}",
                        p.display()
                    ))),
                }
            }
        }
    }
}

impl Jobs {
    pub fn history_dir(&self) -> PathBuf {
        self.disk.history_dir()
    }

    /// A job's summary: from memory for a job of this master run, else the
    /// final record its history held when this master started.
    pub fn job_json(&self, id: u64) -> Result<Value> {
        if let Some(j) = self.get(id) {
            return Ok(j.summary());
        }
        self.earlier
            .get(&id)
            .cloned()
            .ok_or_else(|| MasterError::NotFound(format!("no job {id}")))
    }

    pub fn list_jobs(&self) -> Vec<Value> {
        self.iter().map(|j| j.summary()).collect()
    }

    /// A finished job's history: its records and final summary.
    pub fn job_history(&self, id: u64) -> Result<History> {
        match self.get(id) {
            Some(j) if !j.state().is_final() => Err(MasterError::FailedPrecondition(format!(
                "job {id} is still running: its history is written when it ends"
            ))),
            Some(j) => Ok(History::Lines(lines(j.records(), &j.summary()))),
            None if self.earlier.contains_key(&id) => Ok(History::File(
                self.history_dir().join(format!("job-{id}.jsonl")),
            )),
            None => Err(MasterError::NotFound(format!("no history for job {id}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A hard link keeps the old inode: had the file been truncated and
    /// rewritten in place, the link would show the new bytes (or, after a
    /// crash mid-write, none).
    #[test]
    fn history_is_replaced_whole_never_truncated_in_place() {
        let dir = std::env::temp_dir().join(format!("mr-history-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        super::super::recovery::record_submitted(&dir, 7, &json!({"job_id": 7})).unwrap();
        let link = dir.join("old-7");
        std::fs::hard_link(dir.join("job-7.jsonl"), &link).unwrap();
        let before = std::fs::read_to_string(&link).unwrap();
        write_file(
            &dir,
            7,
            &[json!({"type": "attempt"})],
            &json!({"job_id": 7}),
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(&link).unwrap(), before);
        let now = std::fs::read_to_string(dir.join("job-7.jsonl")).unwrap();
        assert_eq!(now.lines().count(), 2);
        assert!(now.lines().last().unwrap().contains("\"type\":\"job\""));
        assert!(!dir.join("job-7.jsonl.tmp").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
