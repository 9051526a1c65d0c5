//! `mr bench master`: the master alone under the load of a large cluster,
//! measured as HDFS's NNThroughputBenchmark measures a NameNode and YARN's
//! Scheduler Load Simulator (SLS) a ResourceManager: the real daemon, and
//! one load process emulating every client and worker over the real
//! protocol, so that what is measured is the master and not a cluster's
//! data path.
//!
//! Phases: start the real `mr-master` as a child ([`master_proc`]) and
//! read its idle memory; register N emulated workers ([`workers`]) and read
//! it again (memory per worker); create `--blocks` blocks through the
//! client protocol ([`namespace`]) and read it again (memory per block,
//! blocks per second); submit WordCount jobs and keep them flowing while
//! every heartbeat is timed for `--duration`; read the master's own lock
//! and scheduler figures from `/metrics` ([`scrape`]); stop the master
//! and start it again on the same data directory, timing how long until it
//! answers and until the workers' block reports take it out of safe mode.
//! Everything runs on this machine: the master and the load share its
//! cores, which the report gives with the CPU each used.

pub mod master_proc;
pub mod namespace;
pub mod scrape;
pub mod workers;

use crate::cmd::{parse_duration, parse_size};
use anyhow::{bail, Context};
use master_proc::{ClusterSpec, MasterProc};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use workers::{Fleet, FleetSpec, Stats};

/// The real master under the load of N emulated workers, on this machine:
/// heartbeat latency and throughput, task launches, scheduler and lock
/// times, memory per worker and per block, restart and safe-mode times.
///
/// In the manner of HDFS's NNThroughputBenchmark and YARN's Scheduler Load
/// Simulator: `mr-master` (beside `mr`, or in $MR_BIN_DIR) runs as a child
/// on a cluster file written into a temporary directory, and this one
/// process emulates every worker over the real gRPC protocol: register
/// with a full block report, heartbeat every --heartbeat (phases spread
/// over the interval), hold the long poll, run each launched task for
/// --task-time without doing its work, create the staging part the job's
/// commit checks, report with TaskUpdate. No block data moves. No cluster
/// file is needed, and nothing outside the temporary directory is touched.
///
/// Phases: (1) the master starts, its idle memory is read; (2) the workers
/// register; (3) --blocks blocks are created as files of 1000 blocks,
/// through CreateFile/AddBlock/CompleteFile; (4) --jobs WordCount jobs of
/// --tasks-per-job maps and 1 reduce are submitted, each resubmitted when
/// it ends, while heartbeats are measured for --duration; (5) /metrics is
/// read; (6) the master is stopped (SIGTERM) and started again on the same
/// data directory; (7) everything stops and the directory is removed.
///
/// Figures: heartbeats (answered in the window) and heartbeats_per_s;
/// heartbeat_p50/p99/max_ms, client side, send to answer; heartbeats_failed
/// (errors and timeouts of 10 s: each makes a worker re-register);
/// launches (LaunchTask commands received) and task_reports (TaskUpdate
/// calls answered); sched_decision_mean_ms (the policy's time per
/// decision, mr_scheduler_decision_seconds, in the window); lock_holds_max_ms
/// (the longest hold of the master's lock by site since it started, top 5)
/// and lock_held_pct (share of the window the lock was held);
/// master_rss_idle_mib, bytes_per_worker ((RSS with the workers - idle) /
/// N), bytes_per_block and blocks_per_s; startup_s (spawn to the first gRPC
/// answer after the restart, the namespace loaded) and safemode_exit_s
/// (spawn to safe mode off: the workers re-registered with their block
/// reports, and never before one heartbeat expiry when the namespace has
/// blocks); master_cpu_pct and load_cpu_pct (CPU of the master and of this
/// process in the window: they share the machine).
///
/// Example: mr bench master --workers 10000 --heartbeat 1s --duration 60s --json
#[derive(clap::Args, Clone, Debug)]
pub struct MasterArgs {
    /// Emulated workers, each its own name (w00001...), rack and slots.
    #[arg(long, default_value_t = 1000)]
    pub workers: usize,
    /// Each worker's heartbeat interval (the cluster's [heartbeat] interval).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub heartbeat: Duration,
    /// Blocks to create in the namespace before the jobs (files of 1000).
    #[arg(long, default_value_t = 0)]
    pub blocks: u64,
    /// WordCount jobs in flight at once; each is resubmitted when it ends,
    /// until --duration is over. 0: heartbeats only.
    #[arg(long, default_value_t = 4)]
    pub jobs: u32,
    /// Maps per job: its input is a file of this many blocks (1 reduce).
    #[arg(long, default_value_t = 100)]
    pub tasks_per_job: u32,
    /// How long heartbeats are measured, once every worker registered.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub duration: Duration,
    /// The scheduling policy (`mr admin scheduler list`).
    #[arg(long, default_value = "fifo")]
    pub policy: String,
    /// Racks the workers are spread over (worker i on rack i mod R).
    #[arg(long, default_value_t = 20)]
    pub racks: usize,
    /// Map slots per worker.
    #[arg(long, default_value_t = 2)]
    pub map_slots: u32,
    /// Reduce slots per worker.
    #[arg(long, default_value_t = 2)]
    pub reduce_slots: u32,
    /// How long each launched task "runs" (it does no work).
    #[arg(long, default_value = "200ms", value_parser = parse_duration)]
    pub task_time: Duration,
    /// The cluster's block size: the length every created block has.
    #[arg(long, default_value = "64MiB", value_parser = parse_size)]
    pub block_size: u64,
    /// Replicas per block (at most --workers).
    #[arg(long, default_value_t = 3)]
    pub replication: u32,
    /// gRPC connections the workers share (worker i on connection i mod C).
    #[arg(long, default_value_t = 64)]
    pub connections: usize,
    /// No long poll (AwaitCommands): commands come with heartbeats only.
    #[arg(long)]
    pub no_long_poll: bool,
    /// One JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write the window's heartbeat latencies second by second to
    /// FILE (CSV: second, heartbeats, p50_ms, p99_ms, max_ms, by the
    /// second each was sent): where the tail comes from.
    #[arg(long, value_name = "FILE")]
    pub latency_trace: Option<std::path::PathBuf>,
}

impl MasterArgs {
    pub fn validate(&self) -> anyhow::Result<()> {
        if self.workers == 0 {
            bail!("--workers must be at least 1");
        }
        if self.workers > 1_000_000 {
            bail!("--workers must be at most 1000000");
        }
        if self.heartbeat < Duration::from_millis(10) {
            bail!(
                "--heartbeat must be at least 10ms (the master's smallest interval), not {}ms",
                self.heartbeat.as_millis()
            );
        }
        if self.duration.is_zero() {
            bail!("--duration must be longer than 0");
        }
        if self.jobs > 0 && self.tasks_per_job == 0 {
            bail!("--tasks-per-job must be at least 1 when --jobs is");
        }
        if self.tasks_per_job > 10_000 {
            bail!("--tasks-per-job must be at most 10000 (the master's blocks per file)");
        }
        if self.racks == 0 {
            bail!("--racks must be at least 1");
        }
        let max = common::config::MAX_SLOTS;
        if self.map_slots > max || self.reduce_slots > max {
            bail!("--map-slots and --reduce-slots must be at most {max}");
        }
        if self.jobs > 0 && (self.map_slots == 0 || self.reduce_slots == 0) {
            bail!("--map-slots and --reduce-slots must be at least 1 to run jobs");
        }
        if self.map_slots == 0 && self.reduce_slots == 0 {
            bail!("--map-slots or --reduce-slots must be at least 1");
        }
        common::config::validate_block_size(self.block_size)
            .map_err(|e| anyhow::anyhow!("--block-size: {e}"))?;
        if self.replication == 0 || self.replication as usize > self.workers {
            bail!("--replication must be between 1 and --workers");
        }
        common::config::validate_replication(self.replication)
            .map_err(|e| anyhow::anyhow!("--replication: {e}"))?;
        if self.connections == 0 {
            bail!("--connections must be at least 1");
        }
        sched::registry::build(&sched::SchedulerSpec::new(&self.policy))
            .map_err(|e| anyhow::anyhow!("--policy: {e}"))?;
        Ok(())
    }
}

/// The machine the figures were taken on.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cores: usize,
    pub memory_bytes: u64,
}

fn machine() -> Machine {
    let memory_kb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .unwrap_or(0);
    Machine {
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes: memory_kb * 1024,
    }
}

/// Every figure, as `--json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub workers: usize,
    pub racks: usize,
    pub heartbeat_interval_ms: u64,
    pub duration_s: f64,
    pub policy: String,
    pub task_time_ms: u64,
    pub long_poll: bool,
    pub connections: usize,
    pub register_s: f64,
    pub registrations_per_s: f64,
    pub heartbeats: u64,
    pub heartbeats_failed: u64,
    pub heartbeats_timed_out: u64,
    /// Failed heartbeats by cause (status code and message, or timeout).
    pub heartbeat_errors: BTreeMap<String, u64>,
    /// Answered with "register again": the master had given the worker up.
    pub heartbeats_reregister: u64,
    /// Workers that registered again in the window (after a failed
    /// heartbeat or a "register again").
    pub reregistrations: u64,
    pub heartbeats_per_s: f64,
    pub heartbeat_mean_ms: Option<f64>,
    pub heartbeat_p50_ms: Option<f64>,
    pub heartbeat_p90_ms: Option<f64>,
    pub heartbeat_p99_ms: Option<f64>,
    pub heartbeat_max_ms: Option<f64>,
    pub launches: u64,
    pub launches_per_s: f64,
    pub task_reports: u64,
    pub task_reports_failed: u64,
    pub commands_taken: u64,
    pub jobs_submitted: u64,
    pub jobs_succeeded: u64,
    pub jobs_failed: u64,
    pub jobs_unfinished: u64,
    /// Client calls about jobs that failed (submit, wait): a saturated
    /// master's.
    pub job_call_errors: u64,
    pub job_error: Option<String>,
    pub sched_decisions: u64,
    pub sched_decision_mean_ms: Option<f64>,
    pub lock_holds_max_ms: BTreeMap<String, f64>,
    pub lock_held_pct: f64,
    pub lock_held_s_by_site: BTreeMap<String, f64>,
    pub lock_hold_heartbeat_mean_ms: Option<f64>,
    pub master_cpu_pct: Option<f64>,
    pub load_cpu_pct: Option<f64>,
    pub master_rss_idle_mib: f64,
    pub master_rss_workers_mib: f64,
    pub master_rss_mib: f64,
    pub bytes_per_worker: f64,
    pub blocks: u64,
    pub blocks_s: f64,
    pub blocks_per_s: Option<f64>,
    pub bytes_per_block: Option<f64>,
    pub block_size: u64,
    pub replication: u32,
    pub input_blocks: u64,
    pub shutdown_s: f64,
    pub startup_s: f64,
    pub safemode_exit_s: f64,
    /// The floor of safemode_exit_s with blocks: one heartbeat expiry.
    pub safemode_extension_s: f64,
    pub safemode_reported_blocks: u64,
    pub safemode_total_blocks: u64,
    pub commit: String,
    pub machine: Machine,
}

const MIB: f64 = (1 << 20) as f64;

/// Runs the bench and prints its report. Ctrl-C stops the master and
/// removes its directory (the guards drop with the future).
pub async fn run(a: &MasterArgs) -> anyhow::Result<()> {
    a.validate()?;
    let bin = master_proc::master_binary()?;
    let quiet = crate::output::quiet();
    let r = tokio::select! {
        r = measure(a, bin, quiet) => r?,
        _ = tokio::signal::ctrl_c() => bail!("interrupted: the master was stopped and its directory removed"),
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print!("{}", table(&r));
    }
    Ok(())
}

fn progress(quiet: bool, msg: impl std::fmt::Display) {
    if !quiet {
        eprintln!("mr bench master: {msg}");
    }
}

fn rss_mib(p: &MasterProc) -> anyhow::Result<f64> {
    Ok(p.rss()? as f64 / MIB)
}

/// Job counts over every stream.
#[derive(Default)]
struct Jobs {
    submitted: AtomicU64,
    succeeded: AtomicU64,
    failed: AtomicU64,
    unfinished: AtomicU64,
    /// Calls that failed: submissions, and waits for a job's end.
    submit_errors: AtomicU64,
    wait_errors: AtomicU64,
    first_error: Mutex<Option<String>>,
}

impl Jobs {
    /// Counts one more in `c` and keeps the first error's text.
    fn note_error(&self, c: &AtomicU64, e: String) {
        c.fetch_add(1, Ordering::Relaxed);
        self.first_error.lock().unwrap().get_or_insert(e);
    }
}

async fn measure(a: &MasterArgs, bin: std::path::PathBuf, quiet: bool) -> anyhow::Result<Report> {
    let spec = ClusterSpec {
        workers: a.workers,
        racks: a.racks,
        map_slots: a.map_slots,
        reduce_slots: a.reduce_slots,
        heartbeat: a.heartbeat,
        policy: a.policy.clone(),
        block_size: a.block_size,
        replication: a.replication,
    };
    // 1. The master, idle.
    let mut m = MasterProc::start(bin, &spec)?;
    progress(quiet, format_args!("master started in {}", m.dir.display()));
    m.wait_ready(Duration::from_secs(60)).await?;
    m.wait_safe_mode_off(Duration::from_secs(60)).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_idle = rss_mib(&m)?;

    // 2. The workers register.
    let conns = (0..a.connections)
        .map(|_| m.worker_conn())
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut fleet = Fleet::start(
        FleetSpec {
            workers: a.workers,
            racks: a.racks,
            map_slots: a.map_slots,
            reduce_slots: a.reduce_slots,
            heartbeat: a.heartbeat,
            task_time: a.task_time,
            long_poll: !a.no_long_poll,
        },
        &conns,
    );
    let t = Instant::now();
    let limit = Duration::from_secs(120) + Duration::from_millis(20) * a.workers as u32;
    let mut last_note = Instant::now();
    loop {
        let n = fleet.stats.registered.load(Ordering::Relaxed);
        if n >= a.workers {
            break;
        }
        if t.elapsed() > limit {
            bail!(
                "only {n} of {} workers registered in {limit:?}; the end of the master's log:\n{}",
                a.workers,
                m.log_tail()
            );
        }
        if last_note.elapsed() > Duration::from_secs(5) {
            progress(
                quiet,
                format_args!("registering workers: {n}/{}", a.workers),
            );
            last_note = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let register_s = t.elapsed().as_secs_f64();
    progress(
        quiet,
        format_args!("{} workers registered in {register_s:.1}s", a.workers),
    );
    // Every worker heartbeats before the memory is read.
    tokio::time::sleep(a.heartbeat * 2).await;
    let rss_workers = rss_mib(&m)?;

    // 3. The namespace.
    let admin: Vec<_> = (0..namespace::WRITERS)
        .map(|_| m.admin_conn())
        .collect::<anyhow::Result<_>>()?;
    let (mut blocks_s, mut bytes_per_block) = (0.0, None);
    if a.blocks > 0 {
        let before = m.rss()?;
        let files = namespace::plan("/bench/ns", a.blocks);
        let (n, secs) = namespace::create(
            &admin,
            &fleet,
            files,
            a.block_size,
            "creating blocks",
            quiet,
        )
        .await?;
        blocks_s = secs;
        progress(
            quiet,
            format_args!(
                "{n} blocks created in {secs:.1}s ({:.0}/s)",
                n as f64 / secs
            ),
        );
        // Their holders' heartbeats have carried the new replicas.
        tokio::time::sleep(a.heartbeat * 2).await;
        let after = m.rss()?;
        bytes_per_block = Some((after as f64 - before as f64) / a.blocks as f64);
    }

    // 4. Jobs, and the measured window.
    let inputs: Vec<namespace::FilePlan> = (0..a.jobs)
        .map(|k| namespace::FilePlan {
            path: format!("/bench/input/job-{k:03}"),
            blocks: u64::from(a.tasks_per_job),
        })
        .collect();
    let input_blocks: u64 = inputs.iter().map(|f| f.blocks).sum();
    if !inputs.is_empty() {
        namespace::create(
            &admin,
            &fleet,
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
    let end = tokio::time::Instant::now() + a.duration;
    loop {
        let step = Duration::from_secs(10);
        let now = tokio::time::Instant::now();
        if now + step >= end {
            tokio::time::sleep_until(end).await;
            break;
        }
        tokio::time::sleep(step).await;
        let w = &fleet.stats.window;
        progress(
            quiet,
            format_args!(
                "{:.0}s of {:?}: {} heartbeats, {} failed, {} launches",
                t0.elapsed().as_secs_f64(),
                a.duration,
                Stats::get(&w.heartbeats),
                Stats::get(&w.heartbeats_failed),
                Stats::get(&w.launches)
            ),
        );
    }
    fleet.stats.measuring.store(false, Ordering::SeqCst);
    open.store(false, Ordering::SeqCst);
    let window = t0.elapsed().as_secs_f64();
    let cpu1 = (m.cpu_s(), master_proc::cpu_seconds("/proc/self/stat"));
    // 5. The master's own figures, at the window's end.
    let after = scrape::scrape(&m.http_addr, &m.cfg.token).await?;
    let rss_loaded = rss_mib(&m)?;
    if !streams.is_empty() {
        progress(quiet, "waiting for the jobs in flight to end");
    }
    for s in streams {
        s.await.context("a job stream panicked")??;
    }

    // 6. Restart on the same data directory.
    progress(quiet, "restarting the master");
    let shutdown = m.stop(Duration::from_secs(120)).await?;
    m.spawn()?;
    let startup = m.wait_ready(Duration::from_secs(1800)).await?;
    let (safemode_exit, reported, total) = m.wait_safe_mode_off(Duration::from_secs(1800)).await?;
    progress(
        quiet,
        format_args!(
            "restarted: gRPC after {:.2}s, safe mode off after {:.2}s",
            startup.as_secs_f64(),
            safemode_exit.as_secs_f64()
        ),
    );

    // 7. Stop everything (the directory goes with `m`).
    fleet.stop();
    let _ = m.stop(Duration::from_secs(60)).await;

    let st = &fleet.stats;
    let w = &st.window;
    let lat = st.latencies_ms();
    if let Some(path) = &a.latency_trace {
        let mut csv = String::from("second,heartbeats,p50_ms,p99_ms,max_ms\n");
        for (s, n, p50, p99, max) in st.latency_seconds() {
            csv += &format!("{s},{n},{p50:.1},{p99:.1},{max:.1}\n");
        }
        std::fs::write(path, csv).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let pct = |p: f64| -> Option<f64> {
        if lat.is_empty() {
            return None;
        }
        let i = ((p * lat.len() as f64).ceil() as usize).clamp(1, lat.len()) - 1;
        Some(lat[i])
    };
    let (decisions, decision_mean) = after.decisions_since(&before);
    let held = after.held_since(&before);
    let held_total: f64 = held.iter().map(|h| h.1).sum();
    let hb_mean = held
        .iter()
        .find(|h| h.0 == "heartbeat")
        .filter(|h| h.2 > 0)
        .map(|h| h.1 / h.2 as f64 * 1e3);
    let cpu_pct = |a: Option<f64>, b: Option<f64>| Some((b? - a?) / window * 100.0);
    let heartbeats = Stats::get(&w.heartbeats);
    let first_error = jobs.first_error.lock().unwrap().clone();
    let launches = Stats::get(&w.launches);
    Ok(Report {
        workers: a.workers,
        racks: a.racks,
        heartbeat_interval_ms: a.heartbeat.as_millis() as u64,
        duration_s: window,
        policy: a.policy.clone(),
        task_time_ms: a.task_time.as_millis() as u64,
        long_poll: !a.no_long_poll,
        connections: a.connections,
        register_s,
        registrations_per_s: a.workers as f64 / register_s.max(1e-9),
        heartbeats,
        heartbeats_failed: Stats::get(&w.heartbeats_failed),
        heartbeats_timed_out: Stats::get(&w.heartbeats_timed_out),
        heartbeat_errors: st.errors(),
        heartbeats_reregister: Stats::get(&w.reregister_asked),
        reregistrations: Stats::get(&w.reregistrations),
        heartbeats_per_s: heartbeats as f64 / window,
        heartbeat_mean_ms: (!lat.is_empty()).then(|| lat.iter().sum::<f64>() / lat.len() as f64),
        heartbeat_p50_ms: pct(0.50),
        heartbeat_p90_ms: pct(0.90),
        heartbeat_p99_ms: pct(0.99),
        heartbeat_max_ms: lat.last().copied(),
        launches,
        launches_per_s: launches as f64 / window,
        task_reports: Stats::get(&w.task_reports),
        task_reports_failed: Stats::get(&w.task_reports_failed),
        commands_taken: Stats::get(&w.takes),
        jobs_submitted: jobs.submitted.load(Ordering::Relaxed),
        jobs_succeeded: jobs.succeeded.load(Ordering::Relaxed),
        jobs_failed: jobs.failed.load(Ordering::Relaxed),
        jobs_unfinished: jobs.unfinished.load(Ordering::Relaxed),
        job_call_errors: jobs.submit_errors.load(Ordering::Relaxed)
            + jobs.wait_errors.load(Ordering::Relaxed),
        job_error: first_error,
        sched_decisions: decisions,
        sched_decision_mean_ms: decision_mean,
        lock_holds_max_ms: after.top_max_ms(5).into_iter().collect(),
        lock_held_pct: held_total / window * 100.0,
        lock_held_s_by_site: held.iter().take(5).map(|h| (h.0.clone(), h.1)).collect(),
        lock_hold_heartbeat_mean_ms: hb_mean,
        master_cpu_pct: cpu_pct(cpu0.0, cpu1.0),
        load_cpu_pct: cpu_pct(cpu0.1, cpu1.1),
        master_rss_idle_mib: rss_idle,
        master_rss_workers_mib: rss_workers,
        master_rss_mib: rss_loaded,
        bytes_per_worker: (rss_workers - rss_idle) * MIB / a.workers as f64,
        blocks: a.blocks,
        blocks_s,
        blocks_per_s: (a.blocks > 0).then(|| a.blocks as f64 / blocks_s.max(1e-9)),
        bytes_per_block,
        block_size: a.block_size,
        replication: a.replication,
        input_blocks,
        shutdown_s: shutdown.as_secs_f64(),
        startup_s: startup.as_secs_f64(),
        safemode_exit_s: safemode_exit.as_secs_f64(),
        safemode_extension_s: (a.heartbeat * m.cfg.heartbeat.dead_after).as_secs_f64(),
        safemode_reported_blocks: reported,
        safemode_total_blocks: total,
        commit: crate::bench::report::git_state(),
        machine: machine(),
    })
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
        let submit = crate::cmd::job::Submit {
            job: "wordcount".into(),
            inputs: vec![input.clone()],
            output: format!("/bench/out/job-{n:06}"),
            reducers: 1,
            ..Default::default()
        };
        // A saturated master may fail calls (a connection whose pings went
        // unanswered): noted, and tried again, as `mr job run` waits out a
        // master that does not answer.
        let id = match crate::cmd::job::submit(&cfg, submit).await {
            Ok(id) => id,
            Err(e) => {
                jobs.note_error(&jobs.submit_errors, format!("submit: {e:#}"));
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        jobs.submitted.fetch_add(1, Ordering::Relaxed);
        loop {
            let v = match crate::cmd::job::wait_end(&dfs, id, Duration::from_secs(1)).await {
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

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2} ms"))
}

/// The human report: a short table.
pub fn table(r: &Report) -> String {
    let mut s = String::new();
    let mut row = |k: &str, v: String| s.push_str(&format!("  {k:<20} {v}\n"));
    let locks: Vec<String> = {
        let mut v: Vec<(&String, &f64)> = r.lock_holds_max_ms.iter().collect();
        v.sort_by(|a, b| b.1.total_cmp(a.1));
        v.iter().map(|(k, t)| format!("{k} {t:.1} ms")).collect()
    };
    let mut out = format!(
        "mr bench master: {} workers on {} racks, heartbeat {} ms, {:.1}s measured, policy {}\n\
         ({} cores, {:.1} GiB; commit {})\n\n",
        r.workers,
        r.racks,
        r.heartbeat_interval_ms,
        r.duration_s,
        r.policy,
        r.machine.cores,
        r.machine.memory_bytes as f64 / (1u64 << 30) as f64,
        r.commit
    );
    row(
        "heartbeats",
        format!(
            "{} ({:.1}/s), {} failed ({} timed out), {} told to re-register, {} re-registered",
            r.heartbeats,
            r.heartbeats_per_s,
            r.heartbeats_failed,
            r.heartbeats_timed_out,
            r.heartbeats_reregister,
            r.reregistrations
        ),
    );
    row(
        "heartbeat latency",
        format!(
            "p50 {}  p99 {}  max {}",
            ms(r.heartbeat_p50_ms),
            ms(r.heartbeat_p99_ms),
            ms(r.heartbeat_max_ms)
        ),
    );
    row(
        "tasks",
        format!(
            "{} launched ({:.1}/s), {} reported",
            r.launches, r.launches_per_s, r.task_reports
        ),
    );
    row(
        "jobs",
        format!(
            "{} submitted, {} succeeded, {} failed, {} unfinished",
            r.jobs_submitted, r.jobs_succeeded, r.jobs_failed, r.jobs_unfinished
        ),
    );
    row(
        "scheduler",
        format!(
            "{} per decision ({} decisions)",
            ms(r.sched_decision_mean_ms),
            r.sched_decisions
        ),
    );
    row(
        "master lock",
        format!(
            "held {:.1}% of the window; longest holds: {}",
            r.lock_held_pct,
            locks.join(", ")
        ),
    );
    row(
        "CPU in the window",
        format!(
            "master {}, load process {}",
            r.master_cpu_pct.map_or("-".into(), |v| format!("{v:.0}%")),
            r.load_cpu_pct.map_or("-".into(), |v| format!("{v:.0}%"))
        ),
    );
    row(
        "master memory",
        format!(
            "{:.1} MiB idle, {:.1} MiB with the workers, {:.1} MiB loaded; {:.0} B per worker",
            r.master_rss_idle_mib, r.master_rss_workers_mib, r.master_rss_mib, r.bytes_per_worker
        ),
    );
    if r.blocks > 0 {
        row(
            "namespace",
            format!(
                "{} blocks in {:.1}s ({:.0}/s), {} per block",
                r.blocks,
                r.blocks_s,
                r.blocks_per_s.unwrap_or(0.0),
                r.bytes_per_block
                    .map_or("-".into(), |b| format!("{b:.0} B"))
            ),
        );
    }
    row(
        "restart",
        format!(
            "stopped in {:.2}s; answers after {:.2}s, out of safe mode after {:.2}s ({} of {} blocks reported)",
            r.shutdown_s,
            r.startup_s,
            r.safemode_exit_s,
            r.safemode_reported_blocks,
            r.safemode_total_blocks
        ),
    );
    if let Some(e) = &r.job_error {
        row(
            "first job error",
            format!("{e} ({} failed calls)", r.job_call_errors),
        );
    }
    out.push_str(&s);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: MasterArgs,
    }

    fn args(extra: &[&str]) -> MasterArgs {
        let mut v = vec!["t"];
        v.extend_from_slice(extra);
        T::parse_from(v).a
    }

    #[test]
    fn defaults_are_valid_and_bad_flags_are_refused_clearly() {
        let a = args(&[]);
        assert_eq!(a.workers, 1000);
        assert_eq!(a.heartbeat, Duration::from_secs(1));
        assert_eq!((a.jobs, a.tasks_per_job), (4, 100));
        assert_eq!(a.duration, Duration::from_secs(60));
        a.validate().unwrap();
        for (flags, want) in [
            (&["--workers", "0"][..], "--workers must be at least 1"),
            (
                &["--heartbeat", "0s"][..],
                "--heartbeat must be at least 10ms",
            ),
            (&["--duration", "0s"][..], "--duration"),
            (&["--policy", "nope"][..], "--policy"),
            (&["--racks", "0"][..], "--racks"),
            (&["--workers", "2"][..], "--replication"),
            (&["--tasks-per-job", "0"][..], "--tasks-per-job"),
        ] {
            let e = args(flags).validate().unwrap_err().to_string();
            assert!(e.contains(want), "{flags:?}: {e}");
        }
    }
}
