//! One seeded run: build the simulated cluster, step it while the nemesis
//! applies its plan, heal once the job has ended, let it settle, check.

use crate::checks::{self, World};
use crate::cluster::{Layout, CLIENT, MASTER};
use crate::faults::{self, Plan};
use crate::history::{History, JobEnd};
use crate::node::{Disk, Snapshot};
use crate::{client, master_host, worker, Flag};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// Simulated time within which the job must have ended: the last fault
/// plus many times the expiry and the work itself.
pub const JOB_BOUND: Duration = Duration::from_secs(60);
/// Simulated time after which a run is cut short (turmoil's own bound).
const SIM_LIMIT: Duration = Duration::from_secs(120);

/// What a run did, for the summary line.
#[derive(Debug)]
pub struct Outcome {
    pub seed: u64,
    pub sim_time: Duration,
    pub faults: usize,
    pub job_end: Option<JobEnd>,
    pub digest: u32,
    /// Task reports that were stale when sent (late or replayed): each one
    /// a fencing decision the master had to get right.
    pub stale_reports: usize,
    /// Master incarnations (1 + restarts).
    pub master_starts: u32,
    /// Real time the run took.
    pub real_time: Duration,
}

/// A run that broke an invariant: what broke, the plan, the trace's tail.
#[derive(Debug)]
pub struct Failure {
    pub seed: u64,
    pub violations: Vec<String>,
    pub plan: Plan,
    pub trace_tail: Vec<String>,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "seed {} broke {} invariant(s):",
            self.seed,
            self.violations.len()
        )?;
        for v in &self.violations {
            writeln!(f, "  - {v}")?;
        }
        writeln!(f, "fault plan: {:?}", self.plan.events)?;
        writeln!(f, "last trace lines:")?;
        for l in &self.trace_tail {
            writeln!(f, "  {l}")?;
        }
        write!(
            f,
            "rerun: MR_SIM_SEED={} cargo test -p simtest --test seeds -- --nocapture one_seed (MR_SIM_LOG=debug for the master's logs)",
            self.seed
        )
    }
}

/// One run at a time in a process: tokio's task ids come from one
/// process-wide counter (see [`align_task_ids`]), so runs on parallel test
/// threads would interleave their ids by the luck of real scheduling.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn run(seed: u64) -> Result<Outcome, Failure> {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let started = std::time::Instant::now();
    align_task_ids();
    // The master's RNG and the DFS client's replica shuffle fork the
    // thread's fastrand generator: seed it, so they replay too.
    fastrand::seed(seed);
    // Timestamps and the master's epochs read the simulated wall clock.
    common::set_wall_clock(|| turmoil::since_epoch().map(|d| d.as_millis() as u64));
    let mut rng = fastrand::Rng::with_seed(seed);
    let layout = Layout {
        workers: rng.usize(3..=5),
        racks: 2,
        replication: 2,
        map_slots: rng.u32(1..=2),
        reduce_slots: rng.u32(1..=2),
        scheduler: ["fifo", "fifo", "fair", "delay"][rng.usize(0..4)],
    };
    let reducers = rng.u32(1..=3);
    let plan = Plan::random(&mut rng, &layout);
    let dir = scratch_dir(seed);
    let cfg = layout.config(&dir);
    let history: crate::history::Shared = Arc::new(Mutex::new(History::default()));

    let mut b = turmoil::Builder::new();
    b.rng_seed(seed)
        .epoch(std::time::UNIX_EPOCH + Duration::from_secs(1_800_000_000))
        .simulation_duration(SIM_LIMIT)
        .tick_duration(Duration::from_millis(1))
        .min_message_latency(Duration::from_millis(1))
        .max_message_latency(Duration::from_millis(rng.u64(2..=25)))
        .tcp_capacity(4096);
    let mut sim = b.build();

    let Hosts {
        slot,
        disks,
        snapshots,
        replay,
    } = add_hosts(&mut sim, &layout, &cfg, &history, seed);
    let healed: Flag = Arc::new(Mutex::new(false));
    sim.client(
        CLIENT,
        client::run(client::Spec {
            layout: layout.clone(),
            cfg: cfg.clone(),
            history: history.clone(),
            seed,
            files: rng.usize(1..=4),
            reducers,
            healed: healed.clone(),
        }),
    );
    assert_eq!(sim.lookup(MASTER).to_string(), layout.master_ip());
    assert_eq!(sim.lookup(CLIENT).to_string(), layout.client_ip());

    let mut violations = drive(&mut sim, &plan, &layout, &history, &replay, &healed);
    let sim_time = sim.elapsed();
    let master = slot.lock().unwrap().upgrade();
    let guard = master
        .as_ref()
        .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()));
    let workers = (0..layout.workers)
        .map(|i| {
            (
                sim.is_host_running(layout.worker(i)),
                disks[i].clone(),
                snapshots[i].lock().unwrap().clone(),
            )
        })
        .collect();
    let h = history.lock().unwrap();
    if violations.is_empty() && h.client_done {
        violations.extend(checks::all(
            &h,
            &World {
                layout: &layout,
                reducers,
                master: guard.as_deref(),
                workers,
            },
        ));
    } else if violations.is_empty() {
        violations.push("the client did not finish".into());
    }
    drop(guard);
    let outcome = Outcome {
        seed,
        sim_time,
        faults: plan.events.len(),
        job_end: h.job_end.clone(),
        digest: h.digest(),
        stale_reports: h.reports.iter().filter(|r| r.stale).count(),
        master_starts: h.master_starts,
        real_time: started.elapsed(),
    };
    let trace_tail = keep_trace(&h, seed);
    drop(h);
    drop(master);
    drop(sim);
    let _ = std::fs::remove_dir_all(&dir);
    if violations.is_empty() {
        Ok(outcome)
    } else {
        Err(Failure {
            seed,
            violations,
            plan,
            trace_tail,
        })
    }
}

/// The run's trace: all of it to a file of its own under `MR_SIM_TRACE`
/// when set (diff two runs of one seed), and its last 60 lines for a
/// failure's report.
fn keep_trace(h: &History, seed: u64) -> Vec<String> {
    if let Ok(dir) = std::env::var("MR_SIM_TRACE") {
        // The whole trace, one file per run: diff two runs of one seed.
        let n = std::fs::read_dir(&dir).map_or(0, |d| d.count());
        let _ = std::fs::write(
            std::path::Path::new(&dir).join(format!("seed-{seed}-{n}.txt")),
            h.trace().join("\n"),
        );
    }
    let t = h.trace();
    t[t.len().saturating_sub(60)..].to_vec()
}

/// The hosts of a run beside the client, and what the checks read of them.
struct Hosts {
    /// The master's state, while it runs.
    slot: master_host::Slot,
    disks: Vec<Arc<Mutex<Disk>>>,
    snapshots: Vec<Arc<Mutex<Snapshot>>>,
    /// Set to make a worker replay its disk at its next start.
    replay: Vec<Flag>,
}

/// The master and the workers as hosts of `sim`, each worker with its own
/// seed derived from the run's.
fn add_hosts(
    sim: &mut turmoil::Sim<'_>,
    layout: &Layout,
    cfg: &common::config::ClusterConfig,
    history: &crate::history::Shared,
    seed: u64,
) -> Hosts {
    let slot: master_host::Slot = Arc::new(Mutex::new(Weak::new()));
    {
        let (cfg, history, slot) = (cfg.clone(), history.clone(), slot.clone());
        sim.host(MASTER, move || {
            master_host::run(cfg.clone(), history.clone(), slot.clone())
        });
    }
    let mut disks = Vec::new();
    let mut snapshots = Vec::new();
    let mut replay: Vec<Flag> = Vec::new();
    for i in 0..layout.workers {
        let spec = worker::Spec {
            index: i,
            layout: layout.clone(),
            cfg: cfg.clone(),
            disk: Arc::new(Mutex::new(Disk::default())),
            history: history.clone(),
            seed: seed.wrapping_mul(31).wrapping_add(i as u64),
            snapshot: Arc::new(Mutex::new(Snapshot::default())),
            replay: Arc::new(Mutex::new(false)),
        };
        disks.push(spec.disk.clone());
        snapshots.push(spec.snapshot.clone());
        replay.push(spec.replay.clone());
        sim.host(layout.worker(i), move || worker::run(spec.clone()));
    }
    Hosts {
        slot,
        disks,
        snapshots,
        replay,
    }
}

/// Steps the simulation to its end: the plan's faults applied as their
/// time comes, everything healed once the job has ended. Returns what went
/// wrong on the way (the job not ending in time, the simulation failing).
fn drive(
    sim: &mut turmoil::Sim<'_>,
    plan: &Plan,
    layout: &Layout,
    history: &crate::history::Shared,
    replay: &[Flag],
    healed: &Flag,
) -> Vec<String> {
    let mut violations = Vec::new();
    let mut next = 0;
    let mut is_healed = false;
    loop {
        let now = sim.elapsed();
        while !is_healed && next < plan.events.len() && plan.events[next].0 <= now {
            let f = &plan.events[next].1;
            history
                .lock()
                .unwrap()
                .note_at(now, format!("nemesis: {f:?}"));
            faults::apply(sim, layout, f, replay);
            next += 1;
        }
        let ended = history.lock().unwrap().job_end.is_some();
        if ended && !is_healed {
            history
                .lock()
                .unwrap()
                .note_at(now, "nemesis: heal everything".into());
            faults::heal(sim, layout);
            is_healed = true;
            *healed.lock().unwrap() = true;
        }
        if !ended && now > JOB_BOUND {
            violations.push(format!(
                "the job did not end within {JOB_BOUND:?} of simulated time"
            ));
            break;
        }
        match sim.step() {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => {
                violations.push(format!("the simulation failed: {e}"));
                break;
            }
        }
    }
    violations
}

/// tokio numbers tasks from one process-wide counter, and a runtime that
/// is dropped (a crashed host) shuts its tasks down shard by shard, the
/// shard being the task id modulo a small power of two: so the order of a
/// crash's effects (connections reset, messages drawn latencies from the
/// seeded RNG) would depend on how many tasks the process made before this
/// run. Bringing the counter to a multiple of 64 first makes a seed run the
/// same alone (its replay) or after a thousand others (in a shard).
fn align_task_ids() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        loop {
            let h = tokio::spawn(async {});
            let id: u64 = h.id().to_string().parse().unwrap_or(63);
            let _ = h.await;
            if id % 64 == 63 {
                break;
            }
        }
    });
}

/// A fresh directory for the master's edit log: in memory when the machine
/// has /dev/shm (an fsync there costs nothing).
fn scratch_dir(seed: u64) -> std::path::PathBuf {
    let base = if std::path::Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let d = base.join(format!("mr-simtest-{}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch directory");
    d
}
