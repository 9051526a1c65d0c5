//! The measured window: WordCount jobs kept flowing while every
//! heartbeat is timed.

use super::master_proc::{self, MasterProc};
use super::workers::{Fleet, Stats};
use super::{namespace, progress, rss_mib, scrape};
use anyhow::Context;
use rpc::dfs::MasterConn;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the window measured, beside the fleet's own counts.
pub(super) struct Window {
    /// Its length, seconds.
    pub(super) secs: f64,
    pub(super) input_blocks: u64,
    /// The master's `/metrics` at the window's start and end.
    pub(super) before: scrape::Scrape,
    pub(super) after: scrape::Scrape,
    /// CPU seconds of the master and of this process, at the start and
    /// the end.
    pub(super) cpu0: (Option<f64>, Option<f64>),
    pub(super) cpu1: (Option<f64>, Option<f64>),
    pub(super) rss_loaded: f64,
    pub(super) jobs: Arc<Jobs>,
}

/// Creates the jobs' inputs, keeps `--jobs` streams of jobs flowing for
/// `--duration` while the fleet times its heartbeats, then waits for the
/// jobs in flight.
pub(super) async fn measure(
    a: &super::MasterArgs,
    m: &MasterProc,
    admin: &[MasterConn],
    fleet: &Fleet,
    quiet: bool,
) -> anyhow::Result<Window> {
    let inputs: Vec<namespace::FilePlan> = (0..a.jobs)
        .map(|k| namespace::FilePlan {
            path: format!("/bench/input/job-{k:03}"),
            blocks: u64::from(a.tasks_per_job),
        })
        .collect();
    let input_blocks: u64 = inputs.iter().map(|f| f.blocks).sum();
    if !inputs.is_empty() {
        namespace::create(
            admin,
            fleet,
            inputs.clone(),
            a.block_size,
            "job inputs",
            quiet,
        )
        .await?;
    }
    let before = scrape::scrape(&m.http_addr, &m.cfg.token).await?;
    progress(
        quiet,
        format_args!(
            "measuring {} heartbeats for {:?} with {} jobs of {} maps in flight",
            a.workers, a.duration, a.jobs, a.tasks_per_job
        ),
    );
    let open = Arc::new(AtomicBool::new(true));
    let jobs = Arc::new(Jobs::default());
    let seq = Arc::new(AtomicU64::new(0));
    let cpu0 = (m.cpu_s(), master_proc::cpu_seconds("/proc/self/stat"));
    let t0 = Instant::now();
    fleet.stats.measuring.store(true, Ordering::SeqCst);
    let drain_until = t0 + a.duration + Duration::from_secs(60);
    let streams: Vec<_> = inputs
        .iter()
        .map(|f| {
            tokio::spawn(job_stream(
                m.cfg.clone(),
                f.path.clone(),
                open.clone(),
                seq.clone(),
                jobs.clone(),
                drain_until,
            ))
        })
        .collect();
    wait_out(a.duration, &fleet.stats, t0, quiet).await;
    fleet.stats.measuring.store(false, Ordering::SeqCst);
    open.store(false, Ordering::SeqCst);
    let secs = t0.elapsed().as_secs_f64();
    let cpu1 = (m.cpu_s(), master_proc::cpu_seconds("/proc/self/stat"));
    // 5. The master's own figures, at the window's end.
    let after = scrape::scrape(&m.http_addr, &m.cfg.token).await?;
    let rss_loaded = rss_mib(m)?;
    if !streams.is_empty() {
        progress(quiet, "waiting for the jobs in flight to end");
    }
    for s in streams {
        s.await.context("a job stream panicked")??;
    }
    Ok(Window {
        secs,
        input_blocks,
        before,
        after,
        cpu0,
        cpu1,
        rss_loaded,
        jobs,
    })
}

/// Sleeps out the window, saying every 10 s how far it is.
async fn wait_out(duration: Duration, stats: &Stats, t0: Instant, quiet: bool) {
    let end = tokio::time::Instant::now() + duration;
    loop {
        let step = Duration::from_secs(10);
        let now = tokio::time::Instant::now();
        if now + step >= end {
            tokio::time::sleep_until(end).await;
            break;
        }
        tokio::time::sleep(step).await;
        let w = &stats.window;
        progress(
            quiet,
            format_args!(
                "{:.0}s of {:?}: {} heartbeats, {} failed, {} launches",
                t0.elapsed().as_secs_f64(),
                duration,
                Stats::get(&w.heartbeats),
                Stats::get(&w.heartbeats_failed),
                Stats::get(&w.launches)
            ),
        );
    }
}

/// Job counts over every stream.
#[derive(Default)]
pub(super) struct Jobs {
    pub(super) submitted: AtomicU64,
    pub(super) succeeded: AtomicU64,
    pub(super) failed: AtomicU64,
    pub(super) unfinished: AtomicU64,
    /// Calls that failed: submissions, and waits for a job's end.
    pub(super) submit_errors: AtomicU64,
    pub(super) wait_errors: AtomicU64,
    pub(super) first_error: Mutex<Option<String>>,
}

impl Jobs {
    /// Counts one more in `c` and keeps the first error's text.
    fn note_error(&self, c: &AtomicU64, e: String) {
        c.fetch_add(1, Ordering::Relaxed);
        self.first_error.lock().unwrap().get_or_insert(e);
    }
}

/// One stream of jobs: submit a WordCount of `input`, wait for its end,
/// again while `open`; a job still running at `drain_until` is left.
async fn job_stream(
    cfg: common::config::ClusterConfig,
    input: String,
    open: Arc<AtomicBool>,
    seq: Arc<AtomicU64>,
    jobs: Arc<Jobs>,
    drain_until: Instant,
) -> anyhow::Result<()> {
    let dfs = rpc::dfs::Dfs::connect(&cfg)?;
    while open.load(Ordering::SeqCst) {
        let n = seq.fetch_add(1, Ordering::Relaxed);
        let submit = crate::client::Submit {
            job: "wordcount".into(),
            inputs: vec![input.clone()],
            output: format!("/bench/out/job-{n:06}"),
            reducers: 1,
            ..Default::default()
        };
        // A saturated master may fail calls (a connection whose pings went
        // unanswered): noted, and tried again, as `mr job run` waits out a
        // master that does not answer.
        let id = match crate::client::client().submit(&cfg, submit).await {
            Ok(id) => id,
            Err(e) => {
                jobs.note_error(&jobs.submit_errors, format!("submit: {e:#}"));
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        jobs.submitted.fetch_add(1, Ordering::Relaxed);
        loop {
            let v = match crate::client::client()
                .wait_end(&dfs, id, Duration::from_secs(1))
                .await
            {
                Ok(v) => v,
                Err(e) => {
                    jobs.note_error(&jobs.wait_errors, format!("waiting for job {id}: {e:#}"));
                    if Instant::now() > drain_until {
                        jobs.unfinished.fetch_add(1, Ordering::Relaxed);
                        return Ok(());
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            match v["state"].as_str() {
                Some("succeeded") => {
                    jobs.succeeded.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                Some("failed" | "killed") => {
                    jobs.note_error(&jobs.failed, format!("job {id}: {}", v["error"]));
                    break;
                }
                _ if Instant::now() > drain_until => {
                    jobs.unfinished.fetch_add(1, Ordering::Relaxed);
                    return Ok(());
                }
                _ => {}
            }
        }
    }
    Ok(())
}
