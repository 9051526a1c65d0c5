//! `mr bench master`'s flags and their checks.

use crate::args::{parse_duration, parse_size};
use anyhow::bail;
use std::time::Duration;

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
