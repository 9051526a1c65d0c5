//! The job side of the master: jobs, their tasks and attempts, the policy
//! that places them, and what each job leaves behind (its history file,
//! its summary). It reads the block tables ([`crate::blocks`]) to plan map
//! inputs and never changes them: committing a job's output and removing
//! its staging is the coordinator's (`core`).

pub mod history;
pub mod job;
pub mod launch;
pub mod owner;
pub mod recovery;
pub mod report;
pub mod schedstate;
pub mod submit;
pub mod task;

use crate::error::{MasterError, Result};
pub use job::{staging_dir, staging_part, Job, Outcome};
use sched::{Scheduler, SchedulerSpec};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;
pub use task::{JobSpec, JobState, MapInput, TaskStatus};

pub struct Jobs {
    pub jobs: BTreeMap<u64, Job>,
    pub next_id: u64,
    pub scheduler: Box<dyn Scheduler>,
    pub spec: SchedulerSpec,
    /// The scheduler clock's zero.
    pub started: Instant,
    /// Task reports fed to the policy, to save its state every
    /// [`schedstate::SAVE_EVERY`].
    pub reports: u64,
    /// The master's data directory: job histories and the policy's state.
    data_dir: PathBuf,
}

impl Jobs {
    /// The policy `spec` names, with what it learnt in an earlier run, and
    /// job ids going on from the last run's. `committed` says whether a job
    /// output was committed (see `recovery.rs`).
    pub fn open(
        spec: SchedulerSpec,
        data_dir: PathBuf,
        now: Instant,
        committed: &dyn Fn(&str) -> bool,
    ) -> Result<Self> {
        let mut scheduler = build(&spec)?;
        schedstate::load(&data_dir, scheduler.as_mut());
        let (next_id, _interrupted) =
            recovery::recover(&data_dir.join("history"), common::now_ms(), committed);
        Ok(Jobs {
            jobs: BTreeMap::new(),
            next_id,
            scheduler,
            spec,
            started: now,
            reports: 0,
            data_dir,
        })
    }

    /// Jobs not yet ended.
    pub fn active(&self) -> impl Iterator<Item = &Job> {
        self.jobs.values().filter(|j| !j.state.is_final())
    }

    /// Saves what the policy learnt.
    pub fn save_policy(&self) {
        schedstate::save(&self.data_dir, self.scheduler.as_ref());
    }

    /// Counts a report fed to the policy, saving its state now and then.
    pub fn policy_told(&mut self) {
        self.reports += 1;
        if self.reports.is_multiple_of(schedstate::SAVE_EVERY) {
            self.save_policy();
        }
    }

    pub fn set_scheduler(&mut self, spec: SchedulerSpec) -> Result<()> {
        let mut s = build(&spec)?;
        self.save_policy();
        schedstate::load(&self.data_dir, s.as_mut());
        tracing::info!(scheduler = %spec.name, params = ?spec.params, "scheduler switched");
        self.scheduler = s;
        self.spec = spec;
        Ok(())
    }

    pub fn scheduler_spec(&self) -> &SchedulerSpec {
        &self.spec
    }
}

fn build(spec: &SchedulerSpec) -> Result<Box<dyn Scheduler>> {
    sched::build(spec).map_err(|e| MasterError::InvalidArgument(e.to_string()))
}
