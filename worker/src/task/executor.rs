//! Task lifecycle on a worker: launch into a slot, run, report to the
//! master (fenced by attempt and worker epoch), kill, clean up a job's files.
//! The master counts slots; the worker reports what it actually runs.

use crate::task::code::TaskCode;
use crate::task::outcome::{End, Ended, Failure, Outcome, Usage};
use crate::task::runner::TaskRunner;
use crate::task::table::{key, TaskKey};
use crate::task::{map, reduce};
use protocol::Command;
use protocol::{Launch, LaunchKind, Refused, TaskRef};
use std::sync::Arc;
use tracing::Instrument;

/// What to do with the commands that come back in a task report's answer:
/// the command dispatch (`control/apply.rs`, over the whole node), passed
/// in by the caller so that the executor neither imports the module that
/// calls it nor holds the node.
pub type OnCommands = Arc<dyn Fn(Vec<Command>) + Send + Sync>;

/// Starts an attempt in the background; its report's answer goes to
/// `on_commands`.
pub fn launch(runner: &Arc<TaskRunner>, spec: Launch, on_commands: OnCommands) {
    let (t, epoch) = (spec.task, spec.epoch);
    if runner.link().is_draining() {
        // Sent before the master heard that this worker drains.
        tokio::spawn(hand_back(runner.clone(), t, epoch, on_commands));
        return;
    }
    let key: TaskKey = key(&t);
    // A root span: a launch that comes back with another task's report
    // must not nest under that task.
    let span = tracing::info_span!(
        parent: None,
        "task",
        job = t.job_id,
        kind = if t.is_map { "map" } else { "reduce" },
        index = t.index,
        attempt = t.attempt
    );
    let n = runner.clone();
    // Subscribed now, before the next command of this answer can name the
    // job (`task/feeds.rs`).
    let feed = (!t.is_map).then(|| runner.feeds().subscribe(key, t.attempt));
    let progress = crate::task::progress::Counter::default();
    let counter = progress.clone();
    let handle = tokio::spawn(
        async move {
            let start_ms = common::now_ms();
            let started = std::time::Instant::now();
            let cpu0 = thread_cpu_total();
            let res = crate::task::progress::scope(counter, run(n.clone(), spec, feed)).await;
            if !t.is_map {
                n.feeds().unsubscribe(key, t.attempt);
            }
            let cpu_s = (thread_cpu_total() - cpu0).max(0.0);
            // The end is the start plus the monotonic run time: a wall
            // clock stepped during the task would otherwise make a negative
            // or day-long runtime, which the policies learn from.
            let end_ms = start_ms + started.elapsed().as_millis() as u64;
            let times = (start_ms, end_ms);
            report(&n, t, epoch, res, times, cpu_s, on_commands).await;
            n.table().finish(&t);
            cleanup_if_pending(&n, key.0);
        }
        .instrument(span),
    );
    let handle = crate::task::table::Handle {
        join: handle,
        progress,
    };
    runner.table().start(&t, handle);
}

async fn run(
    runner: Arc<TaskRunner>,
    spec: Launch,
    feed: Option<crate::task::feeds::Feed>,
) -> Result<Outcome, Failure> {
    let Launch {
        task: t,
        job_name,
        params_json,
        plan_json,
        output,
        kind,
        ..
    } = spec;
    // The job found and its parameters decoded once for the whole attempt.
    let job = TaskCode::decode(runner.jobs(), &job_name, &params_json, &plan_json)
        .map_err(Failure::msg)?;
    if let Some(release) = crate::task::hold::release_file(&job.params, t.is_map, &runner.me().name)
    {
        crate::task::hold::wait_for(std::path::Path::new(release)).await;
    }
    let dir = runner.job_dir(t.job_id);
    match kind {
        LaunchKind::Map(m) => map::run(runner, job, t, m, output, dir).await,
        LaunchKind::Reduce(r) => reduce::run(runner, job, t, r, feed, output, dir).await,
    }
}

/// Reports a launch that came unrunnable as a failed attempt, at once (or
/// hands it back, on a worker that drains).
pub fn refuse(runner: &Arc<TaskRunner>, r: Refused, on_commands: OnCommands) {
    let runner = runner.clone();
    if runner.link().is_draining() {
        tokio::spawn(hand_back(runner, r.task, r.epoch, on_commands));
        return;
    }
    tokio::spawn(async move {
        let now = common::now_ms();
        let failed = Err(Failure::msg(r.why));
        report(
            &runner,
            r.task,
            r.epoch,
            failed,
            (now, now),
            0.0,
            on_commands,
        )
        .await;
    });
}

async fn report(
    runner: &Arc<TaskRunner>,
    t: TaskRef,
    epoch: u64,
    result: Result<Outcome, Failure>,
    (start_ms, end_ms): (u64, u64),
    cpu_s: f64,
    on_commands: OnCommands,
) {
    match &result {
        Ok(o) => {
            tracing::info!(secs = (end_ms - start_ms) as f64 / 1e3, locality = %o.locality, "task succeeded")
        }
        Err(f) => tracing::warn!("task failed: {}", f.msg),
    }
    let usage = Usage {
        start_ms,
        end_ms,
        cpu_s,
        peak_mem_bytes: peak_rss(),
    };
    let ended = Ended {
        task: t,
        epoch,
        end: End::Ran { result, usage },
    };
    send_report(runner, ended, on_commands).await;
}

/// Gives an attempt back to the master unrun or unfinished, because this
/// worker is shutting down: the master queues it again without counting a
/// failure.
pub async fn hand_back(runner: Arc<TaskRunner>, t: TaskRef, epoch: u64, on_commands: OnCommands) {
    tracing::info!(
        job = t.job_id,
        map = t.is_map,
        index = t.index,
        "task handed back"
    );
    let ended = Ended {
        task: t,
        epoch,
        end: End::HandedBack,
    };
    send_report(&runner, ended, on_commands).await;
}

/// The report is what commits the attempt: retry it a few times.
async fn send_report(runner: &Arc<TaskRunner>, ended: Ended, on_commands: OnCommands) {
    let report = crate::task::outcome::report(&runner.me().name, ended);
    for i in 0..5u64 {
        match crate::edge::master_client::report_task(runner.link(), report.clone()).await {
            Ok(reply) => {
                on_commands(reply.commands);
                return;
            }
            Err(e) => {
                tracing::warn!("task report failed (try {}): {e}", i + 1);
                tokio::time::sleep(std::time::Duration::from_millis(200 * (i + 1))).await;
            }
        }
    }
}

pub fn kill(tasks: &TaskRunner, t: TaskRef) {
    if tasks.table().kill(&t) {
        tracing::info!(job = t.job_id, index = t.index, "task killed");
    }
    cleanup_if_pending(tasks, t.job_id);
}

/// Removes a finished job's local files (map outputs, spills, segments).
/// When an attempt of the job is still finishing (its own report's answer
/// carries the cleanup), the cleanup waits until the last one is gone.
pub fn cleanup(tasks: &TaskRunner, job: u64) {
    if tasks.table().defer_cleanup(job) {
        return;
    }
    tasks.table().cleanup_done(job);
    let dir = tasks.job_dir(job);
    if dir.exists() {
        let keep = tasks.me().map_slots as usize * crate::task::mapout::recycle::KEEP_PER_SLOT;
        crate::task::mapout::recycle::keep_outputs(&dir, keep);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Runs a deferred [`cleanup`] once no attempt of `job` is left.
fn cleanup_if_pending(tasks: &TaskRunner, job: u64) {
    if tasks.table().cleanup_pending(job) {
        cleanup(tasks, job);
    }
}

/// CPU seconds of the whole process: the per-task figure is the difference
/// around the task, which is exact when it ran alone and an upper bound
/// when tasks overlap (threads are shared by the runtime).
fn thread_cpu_total() -> f64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let after = s.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 (utime, stime) are at 11 and 12 after the command name.
    let ticks = f.get(11).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    ticks / 100.0
}

/// Peak resident memory of this worker process (VmHWM).
pub fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<u64>().ok())
            })
        })
        .map_or(0, |kb| kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(tag: &str) -> (Arc<TaskRunner>, std::path::PathBuf) {
        let (n, dir) = crate::node::test_node("exec", tag);
        (n.tasks().clone(), dir)
    }

    fn running() -> crate::task::table::Handle {
        crate::task::table::Handle {
            join: tokio::spawn(async {}),
            progress: Default::default(),
        }
    }

    /// The last attempt's own report answer carries the job's cleanup while
    /// that attempt is still in `tasks`: the cleanup must happen once it
    /// leaves, not be dropped (it leaked every finished job's map outputs).
    #[tokio::test]
    async fn cleanup_waits_for_the_last_attempt_then_runs() {
        let (n, dir) = node("cleanup");
        let jd = n.job_dir(7);
        std::fs::create_dir_all(&jd).unwrap();
        std::fs::write(jd.join("map-0-0.out"), b"x").unwrap();
        let reduce = TaskRef {
            job_id: 7,
            is_map: false,
            index: 0,
            attempt: 0,
        };
        n.table().start(&reduce, running());
        cleanup(&n, 7);
        assert!(jd.exists(), "cleaned while an attempt still runs");
        n.table().finish(&reduce);
        cleanup_if_pending(&n, 7);
        assert!(!jd.exists(), "deferred cleanup did not run");
        assert!(n.table().no_cleanup_pending());
        // a killed attempt also runs the deferred cleanup
        std::fs::create_dir_all(&jd).unwrap();
        let map = TaskRef {
            job_id: 7,
            is_map: true,
            index: 1,
            attempt: 2,
        };
        n.table().start(&map, running());
        cleanup(&n, 7);
        assert!(jd.exists());
        kill(&n, map);
        assert!(!jd.exists(), "cleanup after kill did not run");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
