//! The events that read or write a file other than the edit log, split
//! around it: a locked step that decides and queues, the file work with the
//! lock released (the guard drains the job side's file queue when dropped,
//! `jobs/disk.rs`), and, where the outcome matters, a second locked step
//! that acts on it. The gRPC and HTTP handlers call these instead of
//! taking the lock themselves (`http/api.rs` splits a job's page the same
//! way, next to the view it renders).

use super::lock::lock;
use super::MasterState;
use crate::error::{MasterError, Result};
use crate::jobs::schedstate;
use crate::jobs::submit::SubmitJob;
use rpc::auth::Identity;
use sched::SchedulerSpec;
use std::sync::Mutex;

/// A job submission: validated and its `submitted` record queued under
/// the lock; the record written; then the job admitted and placed at once
/// (or refused, if the record could not be written). The client hears the
/// id only after that, so every id it holds is on disk.
pub fn submit_job(state: &Mutex<MasterState>, who: &Identity, req: SubmitJob) -> Result<u64> {
    let (id, record) = {
        let mut s = lock(state, "submit_job");
        s.may_submit(&req, who)?;
        s.on_submit(req, crate::now())?
    };
    match record.outcome() {
        Ok(()) => {
            lock(state, "admit_job").admit_job(id, crate::now());
            Ok(id)
        }
        Err(e) => {
            lock(state, "refuse_job").refuse_job(id);
            Err(MasterError::Unavailable(format!(
                "cannot record job {id}: {e}"
            )))
        }
    }
}

/// Switches the policy: the new one is built first (a bad spec changes
/// nothing), the current one's state saved, the new one's saved state read
/// (after that save: the same policy keeps what it learnt), then swapped
/// in. Returns the spec now in force.
pub fn set_scheduler(state: &Mutex<MasterState>, spec: SchedulerSpec) -> Result<SchedulerSpec> {
    let mut policy = crate::jobs::build(&spec)?;
    let dir = {
        let s = lock(state, "set_scheduler");
        s.jobs().save_policy();
        s.jobs().disk().data_dir().to_path_buf()
    };
    schedstate::apply(policy.as_mut(), schedstate::read(&dir, &spec.name));
    let mut s = lock(state, "set_scheduler");
    s.set_scheduler(spec, policy);
    Ok(s.jobs().scheduler_spec().clone())
}

/// A finished job's history, if `who` may see the job: from memory, or
/// from its file (a job of an earlier master run) read off the lock.
pub fn job_history(state: &Mutex<MasterState>, who: &Identity, id: u64) -> Result<Vec<String>> {
    let history = {
        let s = lock(state, "job_history");
        crate::jobs::owner::may_see(who, &s.jobs().job_json(id)?, id)?;
        s.jobs().job_history(id)?
    };
    history.read()
}
