//! A task report applied to its job: fencing off stale attempts, then one
//! handler per way an attempt can end. Kept apart from `job.rs` because a
//! report is the one event that touches every table of a job (tasks,
//! counters, locality, phases, records) and the retry rules live here.

use super::*;

/// The attempt a report is about, once fencing has accepted it.
struct Fenced {
    kind: TaskKind,
    tref: TaskRef,
    /// Seconds from the task becoming runnable to this report.
    response: f64,
    runtime: f64,
    /// The report is the backup's, not the first attempt's.
    speculative: bool,
}

/// How the reported attempt ended, in the order the rules are tried: a
/// success, then a failure while the task's other attempt still runs, then
/// the kinds of failure of the task's only attempt.
enum Ending {
    /// With the task's other attempt, if one still runs: it is killed.
    Succeeded(Option<Backup>),
    OtherRuns(Backup),
    HandedBack,
    FetchFailure,
    Failed,
}

impl Job {
    /// Applies a task report. Reports from another attempt or another worker
    /// incarnation than the running one are stale and ignored (fencing).
    /// The loser of a speculated task is told to stop through `out`.
    pub fn update(
        &mut self,
        r: &TaskReport,
        worker_addr: &str,
        now: Instant,
        out: &mut Outbox,
    ) -> Outcome {
        let Some(a) = self.fence(r, now) else {
            return Outcome::Ignored;
        };
        self.record_attempt(r, &a);
        let ending = match self.other_attempt(&a) {
            other if r.succeeded => Ending::Succeeded(other),
            Some(o) => Ending::OtherRuns(o),
            None if r.handed_back => Ending::HandedBack,
            None if r.fetch_failure && !a.tref.is_map => Ending::FetchFailure,
            None => Ending::Failed,
        };
        match ending {
            Ending::Succeeded(other) => self.on_succeeded(r, &a, other, worker_addr, out),
            Ending::OtherRuns(o) => self.on_failed_beside(r, &a, o, now),
            Ending::HandedBack => self.on_handed_back(&a, now),
            Ending::FetchFailure => self.on_fetch_failure(r, &a, now),
            Ending::Failed => self.on_failed(r, &a, now),
        }
    }

    /// The running attempt (or backup) `r` is about, or `None` when the
    /// report is stale, the job over or the task unknown.
    fn fence(&self, r: &TaskReport, now: Instant) -> Option<Fenced> {
        if self.state.is_final() {
            return None;
        }
        let tref = r.task;
        let kind = if tref.is_map {
            TaskKind::Map
        } else {
            TaskKind::Reduce
        };
        let task = self.task(kind, tref.index)?;
        let backup_matches = task.backup.as_ref().is_some_and(|b| {
            b.attempt == tref.attempt && b.worker == r.worker && b.epoch == r.epoch
        });
        let (started, speculative) = match &task.status {
            TaskStatus::Running {
                attempt,
                worker,
                epoch,
                started,
            } if *attempt == tref.attempt && *worker == r.worker && *epoch == r.epoch => {
                (*started, false)
            }
            TaskStatus::Running { .. } if backup_matches => {
                let b = task.backup.as_ref().expect("matched");
                (b.started, true)
            }
            _ => {
                tracing::info!(job = self.id, ?kind, index = tref.index, attempt = tref.attempt, worker = %r.worker,
                    "stale task report fenced off");
                return None;
            }
        };
        Some(Fenced {
            kind,
            tref,
            response: now
                .saturating_duration_since(task.runnable_since)
                .as_secs_f64(),
            runtime: now.saturating_duration_since(started).as_secs_f64(),
            speculative,
        })
    }

    /// The attempt's line of the job history.
    fn record_attempt(&mut self, r: &TaskReport, a: &Fenced) {
        let m = &r.metrics;
        let tref = a.tref;
        self.records.push(json!({
            "type": "task",
            "job_id": self.id,
            "kind": if tref.is_map { "map" } else { "reduce" },
            "index": tref.index,
            "attempt": tref.attempt,
            "node": r.worker,
            "state": if r.succeeded { "succeeded" } else if r.handed_back { "handed_back" } else { "failed" },
            "error": r.error,
            "locality": m.locality,
            "start_ms": m.start_ms,
            "end_ms": m.end_ms,
            "runtime_s": a.runtime,
            "bytes": {"cache": m.bytes_cache, "local": m.bytes_local, "remote_rack": m.bytes_remote_rack,
                      "remote_off_rack": m.bytes_remote_off_rack, "shuffle": m.bytes_shuffle, "output": m.bytes_output},
            "records_in": m.records_in,
            "records_out": m.records_out,
            "spills": m.spills,
            "cpu_s": m.cpu_s,
            "peak_mem_bytes": m.peak_mem_bytes,
            "speculative": a.speculative,
        }));
    }

    /// The other attempt of a speculated task, if one still runs.
    fn other_attempt(&self, a: &Fenced) -> Option<Backup> {
        let t = self.task(a.kind, a.tref.index).expect("exists");
        match (&t.status, &t.backup) {
            (
                TaskStatus::Running {
                    attempt,
                    worker,
                    epoch,
                    started,
                },
                Some(_),
            ) if a.speculative => Some(Backup {
                attempt: *attempt,
                worker: worker.clone(),
                epoch: *epoch,
                started: *started,
            }),
            (_, Some(b)) => Some(b.clone()),
            _ => None,
        }
    }

    fn on_succeeded(
        &mut self,
        r: &TaskReport,
        a: &Fenced,
        other: Option<Backup>,
        worker_addr: &str,
        out: &mut Outbox,
    ) -> Outcome {
        let tref = a.tref;
        let keeps_output = !tref.is_map || self.spec.map_only;
        let id = self.id;
        if let Some(o) = &other {
            // First finisher wins: the other attempt is killed, and its
            // report, if any comes, is fenced off (the task is done).
            tracing::info!(
                job = id,
                kind = ?a.kind,
                index = tref.index,
                winner = tref.attempt,
                loser = o.attempt,
                speculative = a.speculative,
                "speculated task done: killing the other attempt"
            );
            out.send(
                &o.worker,
                Command::KillTask(TaskRef {
                    job_id: id,
                    is_map: tref.is_map,
                    index: tref.index,
                    attempt: o.attempt,
                }),
            );
            if a.speculative {
                self.speculative_won += 1;
            }
        }
        let t = self.task_mut(a.kind, tref.index).expect("exists");
        t.backup = None;
        t.runtime_s = Some(a.runtime);
        t.status = TaskStatus::Done {
            attempt: tref.attempt,
            worker: r.worker.clone(),
            addr: worker_addr.to_string(),
        };
        if keeps_output {
            t.output = Some(staging_part(id, tref.index, tref.attempt));
        }
        if tref.is_map && !self.spec.map_only {
            self.push_map_output(tref.index, out);
        }
        self.add_metrics(r, a);
        if self.maps_done() && self.reduces.iter().all(Task::is_done) {
            return Outcome::ReadyToCommit;
        }
        Outcome::Progress
    }

    /// A succeeded attempt's counters, locality, times and bytes, added to
    /// the job's.
    fn add_metrics(&mut self, r: &TaskReport, a: &Fenced) {
        let m = &r.metrics;
        for (k, v) in &r.counters {
            // Checksum counters are sums that may wrap, by definition.
            let c = self.counters.entry(k.clone()).or_default();
            *c = c.wrapping_add(*v);
        }
        if a.tref.is_map {
            if let Some(l) = Locality::parse(&m.locality) {
                *self.locality.entry(l).or_default() += 1;
            }
            self.map_response_s.push(a.response);
            self.map_times_s.push(a.runtime);
        }
        self.phases.record(a.tref.is_map, m);
        self.bytes.cache += m.bytes_cache;
        self.bytes.local += m.bytes_local;
        self.bytes.remote_rack += m.bytes_remote_rack;
        self.bytes.remote_off_rack += m.bytes_remote_off_rack;
        self.bytes.shuffle += m.bytes_shuffle;
        self.bytes.output += m.bytes_output;
    }

    /// A failed attempt while the task's other attempt still runs: this one
    /// is dropped, no failure counted (the task is not lost).
    fn on_failed_beside(&mut self, r: &TaskReport, a: &Fenced, o: Backup, now: Instant) -> Outcome {
        let t = self.task_mut(a.kind, a.tref.index).expect("exists");
        if !r.handed_back && !r.fetch_failure && !t.avoid.contains(&r.worker) {
            t.avoid.push(r.worker.clone());
        }
        t.backup = None;
        t.status = TaskStatus::Running {
            attempt: o.attempt,
            worker: o.worker,
            epoch: o.epoch,
            started: o.started,
        };
        if r.fetch_failure && !a.tref.is_map {
            return self.fetch_failed(a.tref.index, r.failed_map, now);
        }
        Outcome::Progress
    }

    /// Its worker is shutting down: the task runs elsewhere, and it is not
    /// a failure.
    fn on_handed_back(&mut self, a: &Fenced, now: Instant) -> Outcome {
        self.requeue(a.kind, a.tref.index, now);
        Outcome::Progress
    }

    /// A reduce could not fetch a map's output. Not the reduce's own fault,
    /// so not one of its MAX_ATTEMPTS; but the attempt moves: the next one
    /// avoids this worker, whose own network or disk may be what failed.
    /// The map is re-run only once enough reduces report it
    /// (`fetch_failed`).
    fn on_fetch_failure(&mut self, r: &TaskReport, a: &Fenced, now: Instant) -> Outcome {
        self.requeue(a.kind, a.tref.index, now);
        let t = self.task_mut(a.kind, a.tref.index).expect("exists");
        if !t.avoid.contains(&r.worker) {
            t.avoid.push(r.worker.clone());
        }
        if let Some(out) = self.launches_exhausted(a.kind, a.tref.index, &r.error) {
            return out;
        }
        self.fetch_failed(a.tref.index, r.failed_map, now)
    }

    /// The task's only attempt failed: counted against the task, which runs
    /// again elsewhere until it has failed [`MAX_ATTEMPTS`] times.
    fn on_failed(&mut self, r: &TaskReport, a: &Fenced, now: Instant) -> Outcome {
        let (kind, index) = (a.kind, a.tref.index);
        let t = self.task_mut(kind, index).expect("exists");
        t.failures += 1;
        if !t.avoid.contains(&r.worker) {
            t.avoid.push(r.worker.clone());
        }
        t.status = TaskStatus::Pending;
        t.runnable_since = now;
        if let Some(out) = self.launches_exhausted(kind, index, &r.error) {
            return out;
        }
        let t = self.task(kind, index).expect("exists");
        if t.failures >= MAX_ATTEMPTS {
            self.fail(format!(
                "{} task {} failed {MAX_ATTEMPTS} times; last error: {}",
                if a.tref.is_map { "map" } else { "reduce" },
                index,
                r.error
            ));
            return Outcome::Failed;
        }
        Outcome::Progress
    }

    /// Reduce slow-start: map `index` just finished; each worker running a
    /// reduce attempt of this job (a backup too) hears where its output is.
    fn push_map_output(&self, index: u32, out: &mut Outbox) {
        let Some(loc) = self
            .maps
            .get(index as usize)
            .and_then(|t| t.output_location(index))
        else {
            return;
        };
        let mut workers: Vec<String> = self
            .running_attempts()
            .into_iter()
            .filter(|(_, t)| !t.is_map)
            .map(|(w, _)| w)
            .collect();
        workers.sort_unstable();
        workers.dedup();
        for w in workers {
            out.send(
                &w,
                Command::MapOutputs {
                    job: self.id,
                    outputs: vec![loc.clone()],
                },
            );
        }
    }

    /// Reduce `reduce` could not fetch map `map`'s output. The report
    /// counts against that output; the map is declared faulty and re-run
    /// when [`FETCH_FAILURE_REPORTS`] reports from at least
    /// [`FETCH_FAILURE_FRACTION`] of the unfinished reduces have come in
    /// (Hadoop's rule), and a map declared faulty [`MAX_ATTEMPTS`] times
    /// fails the job.
    fn fetch_failed(&mut self, reduce: u32, map: u32, now: Instant) -> Outcome {
        let unfinished = self.reduces.iter().filter(|t| !t.is_done()).count().max(1);
        let id = self.id;
        let Some(t) = self.maps.get_mut(map as usize) else {
            return Outcome::Progress;
        };
        let TaskStatus::Done { worker, .. } = &t.status else {
            // Already running again: this report is about an output gone.
            return Outcome::Progress;
        };
        let worker = worker.clone();
        t.fetch_reports.push(reduce);
        let reports = t.fetch_reports.len();
        let mut reporters = t.fetch_reports.clone();
        reporters.sort_unstable();
        reporters.dedup();
        let share = reporters.len() as f64 / unfinished as f64;
        if reports < FETCH_FAILURE_REPORTS || share < FETCH_FAILURE_FRACTION {
            tracing::warn!(
                job = id,
                map,
                reduce,
                reports,
                reducers = reporters.len(),
                "fetch failure reported; the map's output is kept for now"
            );
            return Outcome::Progress;
        }
        t.failures += 1;
        if !t.avoid.contains(&worker) {
            t.avoid.push(worker.clone());
        }
        let failures = t.failures;
        if failures >= MAX_ATTEMPTS {
            self.fail(format!(
                "map task {map}'s output could not be fetched by the reduces {MAX_ATTEMPTS} times \
                 (last on {worker}, {reports} reports from {} reduces)",
                reporters.len()
            ));
            return Outcome::Failed;
        }
        tracing::warn!(
            job = id,
            map,
            worker = %worker,
            reports,
            reducers = reporters.len(),
            "too many fetch failures: re-running the map"
        );
        self.requeue(TaskKind::Map, map, now);
        if let Some(out) =
            self.launches_exhausted(TaskKind::Map, map, "its output could not be fetched")
        {
            return out;
        }
        Outcome::Progress
    }

    /// Fails the job when task `index` has had [`MAX_LAUNCHES`] attempts and
    /// is to run again: the bound on every re-run loop.
    fn launches_exhausted(&mut self, kind: TaskKind, index: u32, last: &str) -> Option<Outcome> {
        let launched = self.task(kind, index)?.attempts;
        if launched < MAX_LAUNCHES {
            return None;
        }
        let what = match kind {
            TaskKind::Map => "map",
            TaskKind::Reduce => "reduce",
        };
        self.fail(format!(
            "{what} task {index} was launched {launched} times without finishing; giving up \
             (last error: {last})"
        ));
        Some(Outcome::Failed)
    }

    pub(super) fn requeue(&mut self, kind: TaskKind, index: u32, now: Instant) {
        if let Some(t) = self.task_mut(kind, index) {
            t.fetch_reports.clear();
            t.status = TaskStatus::Pending;
            t.runnable_since = now;
            t.output = None;
            t.backup = None;
            t.runtime_s = None;
        }
    }
}
