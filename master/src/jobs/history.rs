//! What a job leaves behind: its history file (one record per attempt and
//! the final summary, fsynced) and the summaries clients ask for, from
//! memory while the master knows the job, else from the file.

use super::Jobs;
use crate::error::{MasterError, Result};
use serde_json::Value;
use std::path::PathBuf;

impl Jobs {
    pub fn history_dir(&self) -> PathBuf {
        self.data_dir.join("history")
    }

    pub fn write_history(&self, id: u64, records: &[Value], summary: &Value) {
        use std::io::Write;
        let dir = self.history_dir();
        let res = (|| -> std::io::Result<()> {
            std::fs::create_dir_all(&dir)?;
            let mut f = std::fs::File::create(dir.join(format!("job-{id}.jsonl")))?;
            for r in records {
                writeln!(f, "{r}")?;
            }
            let mut s = summary.clone();
            s["type"] = serde_json::json!("job");
            writeln!(f, "{s}")?;
            // The final record is never dropped.
            f.sync_all()
        })();
        if let Err(e) = res {
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
        if self.jobs.get(&id).is_some_and(|j| !j.state.is_final()) {
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
