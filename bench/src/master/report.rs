//! The bench's figures: the report `--json` prints, and its human table.

use super::window::Window;
use super::workers::Stats;
use super::{MasterArgs, Phases, MIB};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

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

/// The report from the flags, the fleet's counts and what each phase
/// measured; `expiry` is the master's heartbeat expiry, the floor of safe
/// mode's exit with blocks.
pub(super) fn assemble(
    a: &MasterArgs,
    st: &Stats,
    p: &Phases,
    win: &Window,
    expiry: Duration,
) -> Report {
    let w = &st.window;
    let window = win.secs;
    let lat = st.latencies_ms();
    let pct = |p: f64| -> Option<f64> {
        if lat.is_empty() {
            return None;
        }
        let i = ((p * lat.len() as f64).ceil() as usize).clamp(1, lat.len()) - 1;
        Some(lat[i])
    };
    let (before, after) = (&win.before, &win.after);
    let (decisions, decision_mean) = after.decisions_since(before);
    let held = after.held_since(before);
    let held_total: f64 = held.iter().map(|h| h.1).sum();
    let hb_mean = held
        .iter()
        .find(|h| h.0 == "heartbeat")
        .filter(|h| h.2 > 0)
        .map(|h| h.1 / h.2 as f64 * 1e3);
    let cpu_pct = |a: Option<f64>, b: Option<f64>| Some((b? - a?) / window * 100.0);
    let heartbeats = Stats::get(&w.heartbeats);
    let jobs = &win.jobs;
    let first_error = jobs.first_error.lock().unwrap().clone();
    let launches = Stats::get(&w.launches);
    let r = &p.restart;
    Report {
        workers: a.workers,
        racks: a.racks,
        heartbeat_interval_ms: a.heartbeat.as_millis() as u64,
        duration_s: window,
        policy: a.policy.clone(),
        task_time_ms: a.task_time.as_millis() as u64,
        long_poll: !a.no_long_poll,
        connections: a.connections,
        register_s: p.register_s,
        registrations_per_s: a.workers as f64 / p.register_s.max(1e-9),
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
        master_cpu_pct: cpu_pct(win.cpu0.0, win.cpu1.0),
        load_cpu_pct: cpu_pct(win.cpu0.1, win.cpu1.1),
        master_rss_idle_mib: p.rss_idle,
        master_rss_workers_mib: p.rss_workers,
        master_rss_mib: win.rss_loaded,
        bytes_per_worker: (p.rss_workers - p.rss_idle) * MIB / a.workers as f64,
        blocks: a.blocks,
        blocks_s: p.blocks_s,
        blocks_per_s: (a.blocks > 0).then(|| a.blocks as f64 / p.blocks_s.max(1e-9)),
        bytes_per_block: p.bytes_per_block,
        block_size: a.block_size,
        replication: a.replication,
        input_blocks: win.input_blocks,
        shutdown_s: r.shutdown.as_secs_f64(),
        startup_s: r.startup.as_secs_f64(),
        safemode_exit_s: r.safemode_exit.as_secs_f64(),
        safemode_extension_s: expiry.as_secs_f64(),
        safemode_reported_blocks: r.reported,
        safemode_total_blocks: r.total,
        commit: crate::report::git_state(),
        machine: machine(),
    }
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
