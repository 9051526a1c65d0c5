//! A job's life as the coordinator sees it: submitted, fed task reports,
//! committed (every part moved to the output in one edit) or failed or
//! killed, then ended (attempts stopped, staging removed, workers told to
//! clean up, history written). These steps touch both the job side and
//! the block side, so they live here rather than in either.

use super::MasterState;
use crate::blocks::namespace::{Edit, FileMeta, DIR_MODE};
use crate::cluster::Outbox;
use crate::error::{MasterError, Result};
use crate::jobs::disk::Submitted;
use crate::jobs::report::Ended;
use crate::jobs::submit::SubmitJob;
use crate::jobs::{staging_dir, Job, JobState, Outcome};
use protocol::{Command, Reply, TaskReport};
use rpc::auth::Identity;
use sched::{Scheduler, SchedulerSpec, Trigger};
use serde_json::Value;
use std::collections::HashSet;
use std::time::Instant;

impl MasterState {
    /// Validates a job spec completely before anything runs, then queues
    /// its `submitted` record; [`MasterState::admit_job`] follows once the
    /// record is on disk (`offlock.rs`).
    ///
    /// Refused in safe mode: its tasks' writes would be (see `core`), so it
    /// could only fail, and after a start its input's blocks may not be
    /// reported yet. Refused at once with the reason rather than queued
    /// until safe mode ends: a manual safe mode lasts until an operator
    /// acts, and a job held that long is better resubmitted knowingly.
    pub fn on_submit(&mut self, req: SubmitJob, now: Instant) -> Result<(u64, Submitted)> {
        self.blocks
            .check_writable(&format!("submit a job writing {}", req.output))?;
        self.view_stale_jobs();
        self.jobs.submit(req, self.blocks.ns(), &self.cfg, now)
    }

    /// A submitted job's record is durable: it is queued, and placed at
    /// once where a slot is free (launch on submit).
    pub fn admit_job(&mut self, id: u64, now: Instant) {
        self.jobs.admit(id);
        self.view_stale_jobs();
        let mut out = Outbox::default();
        if let Err(why) = self.make_output_dir(id) {
            self.jobs.fail(id, why);
            self.end_job(id, &mut out);
            self.cluster.flush(out);
            return;
        }
        if let Some(mut view) = self.event_view(now) {
            self.schedule(&mut view, Trigger::JobAdded(id), now, &mut out);
            self.offer_idle(&mut view, now, &mut out);
            self.check_view(&view, now);
            self.keep_view(view);
        }
        self.cluster.flush(out);
    }

    /// A job's output directory, made at its admission and owned by its
    /// submitter (Hadoop's job setup, `FileOutputCommitter.setupJob`): its
    /// mode keeps others from adding files beside the parts. Refused if a
    /// path appeared there since the submit checked.
    fn make_output_dir(&mut self, id: u64) -> std::result::Result<(), String> {
        let Some(spec) = self.jobs.get(id).map(|j| j.spec()) else {
            return Ok(());
        };
        let (output, owner) = (spec.output.clone(), spec.owner.clone());
        let ns = self.blocks.ns();
        if ns.files.contains_key(&output) || ns.is_dir(&output) {
            return Err(format!(
                "output {output} appeared after the job was submitted: not this job's to write"
            ));
        }
        self.blocks
            .mkdir(&output, &owner, DIR_MODE)
            .map_err(|e| format!("cannot make the output directory {output}: {e}"))
    }

    /// Whether `who` may submit `req`: read every input file, and add the
    /// output where it goes (`blocks/perm.rs`).
    pub fn may_submit(&self, req: &SubmitJob, who: &Identity) -> Result<()> {
        for input in &req.inputs {
            for f in self.blocks.ns().matching(input) {
                self.blocks.may_read(&f, who)?;
            }
        }
        if !req.output.is_empty() {
            self.blocks.may_create(&req.output, who)?;
        }
        Ok(())
    }

    /// A submitted job's record could not be written: it never runs.
    pub fn refuse_job(&mut self, id: u64) {
        self.view_stale_jobs();
        self.jobs.refuse(id);
    }

    /// A task report from a worker; answers with that worker's commands.
    pub fn on_task_report(&mut self, r: TaskReport, now: Instant) -> Reply {
        let worker = r.worker.clone();
        if !self.apply_task_report(r, now) {
            return Reply::reregister();
        }
        Reply {
            commands: self.cluster.take_commands(&worker),
            ..Default::default()
        }
    }

    /// Attempts whose progress counter held for `[jobs] task_timeout`
    /// (see `jobs/stalls.rs`): failed as if their worker had reported the
    /// failure (so the task's next attempt avoids that worker), and killed
    /// there.
    pub(super) fn time_out_stalled(&mut self, now: Instant) {
        let timeout = self.cfg.task_timeout();
        for (worker, t, held) in self.jobs.stalled(now, timeout) {
            let Some(epoch) = self.cluster.alive(&worker).map(|w| w.epoch) else {
                continue;
            };
            let error = format!(
                "task_timeout: no progress for {:.0} s on {worker} ([jobs] task_timeout is {} s): attempt killed",
                held.as_secs_f64(),
                timeout.as_secs()
            );
            tracing::warn!(job = t.job_id, map = t.is_map, index = t.index, attempt = t.attempt, %worker, "{error}");
            let mut out = Outbox::default();
            out.send(&worker, Command::KillTask(t));
            self.cluster.flush(out);
            let r = TaskReport {
                worker,
                epoch,
                task: t,
                succeeded: false,
                error,
                ..Default::default()
            };
            self.apply_task_report(r, now);
        }
    }

    /// Applies a task report; false when it came from a stale incarnation
    /// (fenced off). The commands it leads to wait in the workers' queues.
    fn apply_task_report(&mut self, r: TaskReport, now: Instant) -> bool {
        let Some(addr) = self
            .cluster
            .current(&r.worker, r.epoch)
            .map(|w| w.addr.clone())
        else {
            tracing::info!(worker = %r.worker, epoch = r.epoch, "task report from a stale worker incarnation fenced off");
            return false;
        };
        let job_id = r.task.job_id;
        let runnable_before = self.jobs.runnable_count();
        let mut out = Outbox::default();
        let outcome = self.jobs.report(&r, &addr, now, &mut out);
        self.view_stale_jobs();
        // The event's one view: the policy learns on it, then decides on it.
        let mut view = self.event_view(now);
        if let Some(view) = &view {
            if outcome != Outcome::Ignored {
                if let Some((locality, read)) = r.map_read() {
                    self.stats.map_succeeded(&r.worker, locality, read);
                }
                self.jobs.tell_policy(view, &r);
            }
        }
        // Reduces that became runnable, a failed attempt queued again.
        let new_work = self.jobs.runnable_count() > runnable_before;
        match outcome {
            Outcome::ReadyToCommit => self.commit_job(job_id, &mut out),
            Outcome::Failed => self.end_job(job_id, &mut out),
            _ => {}
        }
        if let Some(view) = &mut view {
            if self.jobs.get(job_id).is_some_and(|j| j.state().is_final()) {
                view.job_ended(job_id);
            }
            self.schedule(view, Trigger::TaskFinished(r.worker.clone()), now, &mut out);
            if new_work {
                self.offer_idle(view, now, &mut out);
            }
            self.check_view(view, now);
        }
        if let Some(view) = view {
            self.keep_view(view);
        }
        self.cluster.flush(out);
        true
    }

    /// Moves every committed part to the output in one edit, then ends the job.
    fn commit_job(&mut self, id: u64, out: &mut Outbox) {
        let Some(job) = self.jobs.get(id) else {
            return;
        };
        let ns = self.blocks.ns();
        let spec = job.spec();
        let mut renames = Vec::new();
        for (i, t) in job.output_tasks().iter().enumerate() {
            if let Some(src) = &t.output {
                if ns.files.contains_key(src) {
                    renames.push((src.clone(), format!("{}/part-{i:05}", spec.output)));
                } else {
                    let why = format!("part {i} ({src}) is missing at commit");
                    self.jobs.fail(id, why);
                    self.end_job(id, out);
                    return;
                }
            }
        }
        let staging = ns.matching(&staging_dir(id));
        let renamed: HashSet<&String> = renames.iter().map(|(f, _)| f).collect();
        let leftovers: Vec<String> = staging
            .iter()
            .filter(|p| !renamed.contains(p))
            .cloned()
            .collect();
        let leftover_blocks: Vec<u64> = leftovers
            .iter()
            .flat_map(|p| ns.files[p].blocks.iter().map(|b| b.id))
            .collect();
        // The commit adds and never replaces: a file at a part's name (or
        // `_SUCCESS`) is not this job's, whoever wrote it.
        let taken = renames
            .iter()
            .map(|(_, to)| to.clone())
            .chain(std::iter::once(format!("{}/_SUCCESS", spec.output)))
            .find(|p| ns.files.contains_key(p));
        if let Some(p) = taken {
            let owner = ns.files[&p].owner.clone();
            self.jobs.fail(
                id,
                format!(
                    "commit refused: {p} exists (owner {owner:?}) and is not this job's to replace"
                ),
            );
            self.end_job(id, out);
            return;
        }
        let success = FileMeta {
            mode: crate::blocks::namespace::FILE_MODE,
            replication: spec.output_replication,
            block_size: spec.output_block_size,
            blocks: vec![],
            mtime_ms: common::now_ms(),
            owner: spec.owner.clone(),
        };
        let edit = Edit::Commit {
            renames,
            add: vec![(format!("{}/_SUCCESS", spec.output), success)],
            delete: leftovers,
            owner: spec.owner.clone(),
        };
        let failure = validation_failure(job);
        if let Err(e) = self.blocks.commit(edit) {
            self.jobs.fail(id, format!("commit failed: {e}"));
            self.end_job(id, out);
            return;
        }
        for b in leftover_blocks {
            self.blocks.forget_block(b, out);
        }
        match failure {
            Some(why) => self.jobs.fail(id, why),
            None => self.jobs.finish(id, JobState::Succeeded),
        }
        if let Some(job) = self.jobs.get(id) {
            tracing::info!(
                job = id,
                state = job.state().as_str(),
                secs = job.exec_time_s(),
                "job finished"
            );
        }
        self.end_job(id, out);
    }

    /// After a job reached a final state: stop its attempts, drop staging
    /// (a failed job leaves no partial output), tell workers to clean up,
    /// write the history.
    fn end_job(&mut self, id: u64, out: &mut Outbox) {
        let Some(job) = self.jobs.get(id) else {
            return;
        };
        for (w, t) in job.running_attempts() {
            out.send(&w, Command::KillTask(t));
        }
        let staging = staging_dir(id);
        self.blocks.drop_leases_under(&staging, out);
        if !self.blocks.ns().matching(&staging).is_empty() {
            if let Err(e) = self.blocks.delete(&staging, out) {
                tracing::warn!(job = id, "could not remove staging: {e}");
            }
        }
        // A job that did not succeed leaves no output, not even the empty
        // directory its admission made: the same output can be given again.
        if job.state() != JobState::Succeeded {
            let (output, owner) = (job.spec().output.clone(), job.spec().owner.clone());
            self.blocks.remove_empty_output(&output, &owner, out);
        }
        // Only where its attempts ran: a job's end used to wake every
        // worker's long poll, ten thousand calls per job at ten thousand
        // workers. One that missed it (dead then) is swept at its
        // registration, which lists the job directories it holds.
        for w in job.ran_on() {
            out.send(w, Command::CleanupJob(id));
        }
        let (records, summary) = self.jobs.end(id).expect("exists");
        // Written once the lock is let go (`jobs/disk.rs`).
        self.jobs.disk().write_history(id, records, summary);
        // Clients waiting on the job (`WaitJob`) hear of its end now.
        self.waits.job_ended();
    }

    /// On a graceful stop. Jobs live in the master's memory only, so each
    /// unfinished one ends here, failed, its staging removed and its history
    /// written, rather than vanish unrecorded; clients are told to resubmit.
    pub fn abandon_jobs(&mut self, why: &str) -> usize {
        self.view_stale();
        let ids: Vec<u64> = self.jobs.active().map(|j| j.id()).collect();
        let mut out = Outbox::default();
        for &id in &ids {
            self.jobs.fail(id, why.to_string());
            self.end_job(id, &mut out);
        }
        self.cluster.flush(out);
        ids.len()
    }

    pub fn kill_job(&mut self, id: u64) -> Result<Value> {
        let job = self
            .jobs
            .get(id)
            .ok_or_else(|| MasterError::NotFound(format!("no job {id}")))?;
        if !job.state().is_final() {
            tracing::info!(job = id, "job killed");
            self.view_stale();
            self.jobs.finish(id, JobState::Killed);
            let mut out = Outbox::default();
            self.end_job(id, &mut out);
            self.cluster.flush(out);
        }
        Ok(self.jobs.get(id).expect("exists").summary())
    }

    /// `mr admin scheduler set`: `policy` (built from `spec` off the lock,
    /// with its saved state) replaces the current one, whose state is saved.
    pub fn set_scheduler(&mut self, spec: SchedulerSpec, policy: Box<dyn Scheduler>) {
        self.view_stale();
        self.jobs.set_scheduler(spec, policy)
    }
}

/// Validator jobs fail when what they checked is wrong; their report is
/// committed all the same, so the user can read why.
fn validation_failure(job: &Job) -> Option<String> {
    let spec = job.spec();
    if !spec.is_validator {
        return None;
    }
    let get = |k: &str| job.counters().get(k).copied().unwrap_or(0);
    if get("unsorted") > 0 {
        return Some(format!(
            "validation failed: the input is not sorted; see the report in {}",
            spec.output
        ));
    }
    for (counter, expect) in [
        ("records", "expect_records"),
        ("checksum", "expect_checksum"),
    ] {
        let want = spec.params.extra.get(expect);
        if let Some(want) = want.and_then(|v| v.parse::<u64>().ok()) {
            if get(counter) != want {
                return Some(format!(
                    "validation failed: {counter} is {} but the sorted input had {want}; see {}",
                    get(counter),
                    spec.output
                ));
            }
        }
    }
    None
}
