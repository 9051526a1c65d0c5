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

pub mod args;
pub mod master_proc;
pub mod namespace;
pub mod report;
pub mod scrape;
mod window;
pub mod workers;

use anyhow::{bail, Context};
use master_proc::{ClusterSpec, MasterProc};
use rpc::dfs::MasterConn;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use workers::{Fleet, FleetSpec, Stats};

pub use args::MasterArgs;
pub use report::{table, Machine, Report};

const MIB: f64 = (1 << 20) as f64;

/// Runs the bench and prints its report. Ctrl-C stops the master and
/// removes its directory (the guards drop with the future).
pub async fn run(a: &MasterArgs) -> anyhow::Result<()> {
    a.validate()?;
    let bin = master_proc::master_binary()?;
    let quiet = crate::client::quiet();
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

/// What the phases before and after the window measured.
struct Phases {
    rss_idle: f64,
    register_s: f64,
    rss_workers: f64,
    blocks_s: f64,
    bytes_per_block: Option<f64>,
    restart: Restart,
}

/// The master stopped and started again on the same data directory.
struct Restart {
    shutdown: Duration,
    startup: Duration,
    safemode_exit: Duration,
    reported: u64,
    total: u64,
}

/// The phases in order, each on the state the previous one left.
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
    let (mut fleet, register_s) = register(a, &m, quiet).await?;
    // Every worker heartbeats before the memory is read.
    tokio::time::sleep(a.heartbeat * 2).await;
    let rss_workers = rss_mib(&m)?;

    // 3. The namespace.
    let admin: Vec<_> = (0..namespace::WRITERS)
        .map(|_| m.admin_conn())
        .collect::<anyhow::Result<_>>()?;
    let (blocks_s, bytes_per_block) = create_blocks(a, &m, &admin, &fleet, quiet).await?;

    // 4. Jobs, and the measured window; 5. the master's own figures.
    let window = window::measure(a, &m, &admin, &fleet, quiet).await?;

    // 6. Restart on the same data directory.
    let restart = restart(&mut m, quiet).await?;

    // 7. Stop everything (the directory goes with `m`).
    fleet.stop();
    let _ = m.stop(Duration::from_secs(60)).await;

    if let Some(path) = &a.latency_trace {
        write_latency_trace(&fleet.stats, path)?;
    }
    let phases = Phases {
        rss_idle,
        register_s,
        rss_workers,
        blocks_s,
        bytes_per_block,
        restart,
    };
    let expiry = a.heartbeat * m.cfg.heartbeat.dead_after;
    Ok(report::assemble(a, &fleet.stats, &phases, &window, expiry))
}

/// Starts the emulated workers and waits until every one has registered;
/// returns them and the seconds it took.
async fn register(a: &MasterArgs, m: &MasterProc, quiet: bool) -> anyhow::Result<(Fleet, f64)> {
    let conns = (0..a.connections)
        .map(|_| m.worker_conn())
        .collect::<anyhow::Result<Vec<_>>>()?;
    let fleet = Fleet::start(
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
    Ok((fleet, register_s))
}

/// Creates `--blocks` blocks; returns the seconds it took and the
/// master's memory per block (none without blocks).
async fn create_blocks(
    a: &MasterArgs,
    m: &MasterProc,
    admin: &[MasterConn],
    fleet: &Fleet,
    quiet: bool,
) -> anyhow::Result<(f64, Option<f64>)> {
    if a.blocks == 0 {
        return Ok((0.0, None));
    }
    let before = m.rss()?;
    let files = namespace::plan("/bench/ns", a.blocks);
    let (n, secs) =
        namespace::create(admin, fleet, files, a.block_size, "creating blocks", quiet).await?;
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
    Ok((secs, Some((after as f64 - before as f64) / a.blocks as f64)))
}

async fn restart(m: &mut MasterProc, quiet: bool) -> anyhow::Result<Restart> {
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
    Ok(Restart {
        shutdown,
        startup,
        safemode_exit,
        reported,
        total,
    })
}

/// `--latency-trace`: the heartbeats' latencies by the second each was sent.
fn write_latency_trace(st: &Stats, path: &std::path::Path) -> anyhow::Result<()> {
    let mut csv = String::from("second,heartbeats,p50_ms,p99_ms,max_ms\n");
    for (s, n, p50, p99, max) in st.latency_seconds() {
        csv += &format!("{s},{n},{p50:.1},{p99:.1},{max:.1}\n");
    }
    std::fs::write(path, csv).with_context(|| format!("cannot write {}", path.display()))
}
