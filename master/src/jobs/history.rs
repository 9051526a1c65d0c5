//! What a job leaves behind: its history file (one record per attempt and
//! the final summary, fsynced) and the summaries clients ask for, from
//! memory while the master knows the job, else from the file.

use super::Jobs;
use crate::error::{MasterError, Result};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

fn write_history_file(
    dir: &Path,
    id: u64,
    records: &[Value],
    summary: &Value,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("job-{id}.jsonl"));
    let tmp = dir.join(format!("job-{id}.jsonl.tmp"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    for r in records {
        writeln!(f, "{r}")?;
    }
    let mut s = summary.clone();
    s["type"] = serde_json::json!("job");
    writeln!(f, "{s}")?;
    // The final record is never dropped.
    f.into_inner()?.sync_all()?;
    std::fs::rename(&tmp, &path)?;
    std::fs::File::open(dir)?.sync_all()
}

impl Jobs {
    pub fn history_dir(&self) -> PathBuf {
        self.data_dir.join("history")
    }

    /// Writes the whole history to a temp file and renames it over
    /// `job-N.jsonl`, then fsyncs the directory: a crash mid-write leaves
    /// the `submitted` record that [`super::recovery`] needs, never a
    /// truncated file.
    pub fn write_history(&self, id: u64, records: &[Value], summary: &Value) {
        if let Err(e) = write_history_file(&self.history_dir(), id, records, summary) {
            tracing::warn!(job = id, "cannot write job history: {e}");
        }
    }

    pub fn job_json(&self, id: u64) -> Result<Value> {
        if let Some(j) = self.jobs.get(&id) {
            return Ok(j.summary());
        }
        // A job from before a master restart: its history's final record.
        self.job_history(id)?
            .last()
            .and_then(|l| serde_json::from_str(l).ok())
            .ok_or_else(|| MasterError::NotFound(format!("no job {id}")))
    }

    pub fn list_jobs(&self) -> Vec<Value> {
        self.jobs.values().map(|j| j.summary()).collect()
    }

    pub fn job_history(&self, id: u64) -> Result<Vec<String>> {
        let still_running = || {
            MasterError::FailedPrecondition(format!(
                "job {id} is still running: its history is written when it ends"
            ))
        };
        if self.jobs.get(&id).is_some_and(|j| !j.state().is_final()) {
            return Err(still_running());
        }
        let p = self.history_dir().join(format!("job-{id}.jsonl"));
        match std::fs::read_to_string(&p) {
            Ok(t) => Ok(t.lines().map(str::to_string).collect()),
            Err(_) if self.jobs.contains_key(&id) => Err(still_running()),
            Err(_) => Err(MasterError::NotFound(format!("no history for job {id}"))),
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
        write_history_file(
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
