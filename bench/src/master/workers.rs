//! N emulated workers in this one process, speaking the worker's side of
//! the protocol to the real master over gRPC, as YARN's Scheduler Load
//! Simulator drives a real ResourceManager with simulated NodeManagers.
//!
//! Each one does what `worker/src/control/heartbeat.rs` and `executor.rs` do (and
//! `simtest/src/worker.rs` models): it registers with its full block report
//! and a resource sample; heartbeats every interval with its free slots,
//! its block-report delta and its running attempts' progress; re-registers
//! when a heartbeat fails or the master asks; holds the long poll
//! (`AwaitCommands`) and takes the commands it announces (`TakeCommands`),
//! as launch on submit needs; carries out the launches, kills, cleanups
//! and map-output notices of every answer; runs each attempt for the task
//! time without doing its work (a reduce first waits for every map's
//! output, as a real one does); creates the staging part the job's commit
//! checks (an empty file, written under the worker identity with the
//! worker as writer); and reports the attempt with `TaskUpdate`, fenced by
//! the launch's epoch, retried as the executor retries.
//!
//! What it does not do: move block data. Replication, cache and pin
//! commands are counted and dropped; the master never dials a worker.
//!
//! Phases are spread evenly over the interval (worker i beats at
//! i/N of it), and the workers share a pool of gRPC channels (worker i on
//! channel i mod C), so the master sees many connections and a steady
//! stream, not N calls at once.

use super::master_proc::{worker_addr, worker_index, worker_name, worker_rack};
use proto::command::Kind;
use rpc::dfs::MasterConn;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{watch, Notify, Semaphore};
use tokio::task::{AbortHandle, JoinHandle};

/// How long a heartbeat may take before it counts as failed (and the
/// worker re-registers, as after any failed heartbeat).
pub const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a registration may take.
const REGISTER_TIMEOUT: Duration = Duration::from_secs(60);
/// The long poll's wait, and the slack before its answer is given up
/// (the real worker's `POLL_WAIT` and `POLL_SLACK`).
const POLL_WAIT: Duration = Duration::from_secs(30);
const POLL_SLACK: Duration = Duration::from_secs(10);
const POLL_RETRY: Duration = Duration::from_millis(500);
/// Registrations in flight at once while the fleet first comes up.
const REGISTER_CONCURRENCY: usize = 64;
/// Cores each emulated worker says it has, in its resource samples.
const CORES: usize = 8;

/// What every emulated worker is.
#[derive(Debug, Clone)]
pub struct FleetSpec {
    pub workers: usize,
    pub racks: usize,
    pub map_slots: u32,
    pub reduce_slots: u32,
    pub heartbeat: Duration,
    pub task_time: Duration,
    /// Hold the long poll, as the real worker does.
    pub long_poll: bool,
}

/// The fleet's figures. The `window` counters and the latencies count only
/// while `measuring` is set; the rest count always.
#[derive(Default)]
pub struct Stats {
    pub measuring: AtomicBool,
    /// Workers through their first registration.
    pub registered: AtomicUsize,
    pub registrations: AtomicU64,
    pub register_failures: AtomicU64,
    pub window: Window,
    /// Client-side heartbeat latencies in the window: (when it was sent,
    /// in ms since the first one measured; how long it took, in µs).
    latencies_us: Mutex<Vec<(u32, u32)>>,
    /// When the first measured heartbeat was sent.
    origin: std::sync::OnceLock<Instant>,
    /// The window's failed heartbeats by what failed them (the status code
    /// and the start of its message, or "timeout").
    errors: Mutex<std::collections::BTreeMap<String, u64>>,
}

/// Counted only while measuring.
#[derive(Default)]
pub struct Window {
    pub heartbeats: AtomicU64,
    pub heartbeats_failed: AtomicU64,
    pub heartbeats_timed_out: AtomicU64,
    /// Answered heartbeats that said "register again": the master had
    /// declared the worker dead (or did not know its epoch).
    pub reregister_asked: AtomicU64,
    /// Registrations after the first: workers coming back after a failed
    /// heartbeat or a "register again".
    pub reregistrations: AtomicU64,
    pub launches: AtomicU64,
    pub task_reports: AtomicU64,
    pub task_reports_failed: AtomicU64,
    pub kills: AtomicU64,
    pub polls_ready: AtomicU64,
    pub takes: AtomicU64,
    /// Commands the emulation does not carry out (replicate, cache, pin).
    pub other_commands: AtomicU64,
}

impl Stats {
    fn count(&self, c: &AtomicU64) {
        if self.measuring.load(Ordering::Relaxed) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }

    fn error(&self, what: String) {
        if self.measuring.load(Ordering::Relaxed) {
            *self.errors.lock().unwrap().entry(what).or_default() += 1;
        }
    }

    /// The window's failed heartbeats by cause.
    pub fn errors(&self) -> std::collections::BTreeMap<String, u64> {
        self.errors.lock().unwrap().clone()
    }

    /// The window's heartbeat latencies, sorted, milliseconds.
    pub fn latencies_ms(&self) -> Vec<f64> {
        let mut v: Vec<f64> = (self.latencies_us.lock().unwrap().iter())
            .map(|&(_, us)| f64::from(us) / 1e3)
            .collect();
        v.sort_by(f64::total_cmp);
        v
    }

    /// The window's heartbeats second by second: (second, count, p50 ms,
    /// p99 ms, max ms), by the second each was sent in. A tail that comes
    /// in bursts (a periodic stall) shows as a few bad seconds; one spread
    /// evenly, as many.
    pub fn latency_seconds(&self) -> Vec<(u32, usize, f64, f64, f64)> {
        let mut by: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
        for &(at, us) in self.latencies_us.lock().unwrap().iter() {
            by.entry(at / 1000).or_default().push(us);
        }
        let pick = |v: &[u32], p: f64| {
            let i = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
            f64::from(v[i]) / 1e3
        };
        (by.into_iter())
            .map(|(s, mut v)| {
                v.sort_unstable();
                (s, v.len(), pick(&v, 0.5), pick(&v, 0.99), pick(&v, 1.0))
            })
            .collect()
    }
}

type TaskKey = (u64, bool, u32);

struct Running {
    attempt: u32,
    abort: AbortHandle,
    started: Instant,
}

/// What one emulated worker holds and runs.
#[derive(Default)]
struct State {
    /// Every block it stores: its full report.
    blocks: Vec<proto::BlockInfo>,
    /// Changes since the last heartbeat sent.
    added: Vec<proto::BlockInfo>,
    removed: Vec<u64>,
    tasks: HashMap<TaskKey, Running>,
    /// The map outputs each job's reduces here have heard of.
    map_outputs: HashMap<u64, HashSet<u32>>,
}

pub struct Emu {
    index: usize,
    name: String,
    addr: String,
    rack: String,
    conn: MasterConn,
    spec: Arc<FleetSpec>,
    stats: Arc<Stats>,
    st: Mutex<State>,
    resources: proto::ResourceVector,
    /// The long poll says commands wait: take them now.
    ring: Notify,
    /// The heartbeat loop has been to the master since the last ring.
    taken: Notify,
    /// A map-output notice arrived (reduces waiting for their maps).
    outputs: Notify,
}

/// The emulated workers and their tasks; dropping it stops them all.
pub struct Fleet {
    emus: Vec<Arc<Emu>>,
    pub stats: Arc<Stats>,
    handles: Vec<JoinHandle<()>>,
}

impl Fleet {
    /// Starts every worker: each registers (a bounded number at once), then
    /// heartbeats on its phase of `origin`'s grid until the fleet is dropped.
    /// `conns` is the channel pool (worker i uses `conns[i % len]`).
    pub fn start(spec: FleetSpec, conns: &[MasterConn]) -> Fleet {
        assert!(!conns.is_empty(), "at least one channel");
        let spec = Arc::new(spec);
        let stats = Arc::new(Stats::default());
        let gate = Arc::new(Semaphore::new(REGISTER_CONCURRENCY));
        let origin = tokio::time::Instant::now();
        let mut emus = Vec::with_capacity(spec.workers);
        let mut handles = Vec::with_capacity(spec.workers);
        let mut rng = fastrand::Rng::with_seed(7);
        for i in 0..spec.workers {
            let emu = Arc::new(Emu {
                index: i,
                name: worker_name(i),
                addr: worker_addr(i),
                rack: worker_rack(i, spec.racks),
                conn: conns[i % conns.len()].clone(),
                spec: spec.clone(),
                stats: stats.clone(),
                st: Mutex::new(State::default()),
                resources: sample(&mut rng),
                ring: Notify::new(),
                taken: Notify::new(),
                outputs: Notify::new(),
            });
            emus.push(emu.clone());
            let gate = gate.clone();
            handles.push(tokio::spawn(async move { emu.run(origin, gate).await }));
        }
        Fleet {
            emus,
            stats,
            handles,
        }
    }

    /// Gives worker `name` a replica of `b`, as a finished block write does:
    /// in its full report from now on, and in its next heartbeat's delta.
    pub fn hold(&self, name: &str, b: proto::BlockInfo) {
        let Some(e) = worker_index(name).and_then(|i| self.emus.get(i)) else {
            return;
        };
        let mut st = e.st.lock().unwrap();
        st.blocks.push(b);
        st.added.push(b);
    }

    /// Replicas held over the whole fleet.
    pub fn replicas(&self) -> u64 {
        (self.emus.iter())
            .map(|e| e.st.lock().unwrap().blocks.len() as u64)
            .sum()
    }

    pub fn stop(&mut self) {
        for h in self.handles.drain(..) {
            h.abort();
        }
        for e in &self.emus {
            for (_, r) in e.st.lock().unwrap().tasks.drain() {
                r.abort.abort();
            }
        }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A resource sample as a worker's monitor sends it, with every field
/// filled (the master stores and serves them all).
fn sample(rng: &mut fastrand::Rng) -> proto::ResourceVector {
    let per_core: Vec<f64> = (0..CORES).map(|_| rng.f64() * 100.0).collect();
    proto::ResourceVector {
        cpu_pct: per_core.iter().sum::<f64>() / CORES as f64,
        cpu_per_core_pct: per_core,
        load1: rng.f64() * 4.0,
        load5: rng.f64() * 4.0,
        load15: rng.f64() * 4.0,
        mem_used_bytes: rng.u64(1 << 30..16 << 30),
        mem_total_bytes: 32 << 30,
        disk_read_bps: rng.u64(0..100 << 20),
        disk_write_bps: rng.u64(0..100 << 20),
        net_rx_bps: rng.u64(0..100 << 20),
        net_tx_bps: rng.u64(0..100 << 20),
    }
}

enum Beat {
    Ok,
    Reregister,
}

impl Emu {
    async fn run(self: Arc<Self>, origin: tokio::time::Instant, gate: Arc<Semaphore>) {
        let (epoch_tx, epoch_rx) = watch::channel(0u64);
        // The first registration: as many at once as the gate lets through.
        let epoch = loop {
            let permit = gate.acquire().await;
            let r = self.register().await;
            drop(permit);
            match r {
                Ok(e) => break e,
                Err(_) => tokio::time::sleep(self.spec.heartbeat).await,
            }
        };
        self.stats.registered.fetch_add(1, Ordering::Relaxed);
        epoch_tx.send_replace(epoch);
        let listen = {
            let me = self.clone();
            async move {
                if me.spec.long_poll {
                    me.listen(epoch_rx).await
                }
            }
        };
        tokio::join!(self.beats(origin, epoch, epoch_tx), listen);
    }

    /// The heartbeat loop, on this worker's phase of the grid.
    async fn beats(
        self: &Arc<Self>,
        origin: tokio::time::Instant,
        first: u64,
        epoch_tx: watch::Sender<u64>,
    ) {
        let interval = self.spec.heartbeat;
        let phase = interval.mul_f64(self.index as f64 / self.spec.workers as f64);
        // The first grid point of this phase after now.
        let now = tokio::time::Instant::now();
        let mut start = origin + phase;
        if start < now {
            let behind = (now - start).as_nanos() / interval.as_nanos().max(1);
            start += interval * (behind as u32 + 1);
        }
        let mut tick = tokio::time::interval_at(start, interval);
        // Skip, not Delay: a late beat keeps its phase, so the load stays
        // spread over the interval.
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut epoch = Some(first);
        loop {
            let rung = tokio::select! {
                _ = tick.tick() => false,
                _ = self.ring.notified(), if epoch.is_some() => true,
            };
            let was = epoch;
            match epoch {
                None => epoch = self.register().await.ok(),
                Some(e) if rung => {
                    if let Ok(Beat::Reregister) = self.take(e).await {
                        epoch = None;
                    }
                }
                Some(e) => match self.beat(e).await {
                    Ok(Beat::Ok) => {}
                    Ok(Beat::Reregister) | Err(()) => epoch = None,
                },
            }
            if epoch != was {
                epoch_tx.send_replace(epoch.unwrap_or(0));
            }
            self.taken.notify_one();
        }
    }

    async fn register(self: &Arc<Self>) -> Result<u64, ()> {
        let blocks = {
            let mut st = self.st.lock().unwrap();
            st.added.clear();
            st.removed.clear();
            st.blocks.clone()
        };
        let req = proto::RegisterRequest {
            protocol_version: common::PROTOCOL_VERSION,
            name: self.name.clone(),
            addr: self.addr.clone(),
            rack: self.rack.clone(),
            map_slots: self.spec.map_slots,
            reduce_slots: self.spec.reduce_slots,
            cache_capacity_bytes: 256 << 20,
            blocks,
            cached: vec![],
            cache_used_bytes: 0,
            resources: Some(self.resources.clone()),
            job_dirs: vec![],
        };
        let r = tokio::time::timeout(REGISTER_TIMEOUT, self.conn.clone().register(req)).await;
        match r {
            Ok(Ok(resp)) => {
                if self.stats.registrations.fetch_add(1, Ordering::Relaxed)
                    >= self.spec.workers as u64
                {
                    self.stats.count(&self.stats.window.reregistrations);
                }
                // A new incarnation: what the old one ran is the master's
                // to re-queue, as the real worker aborts it.
                for (_, r) in self.st.lock().unwrap().tasks.drain() {
                    r.abort.abort();
                }
                Ok(resp.into_inner().epoch)
            }
            _ => {
                self.stats.register_failures.fetch_add(1, Ordering::Relaxed);
                Err(())
            }
        }
    }

    fn heartbeat_request(&self, epoch: u64) -> proto::HeartbeatRequest {
        let mut st = self.st.lock().unwrap();
        let added = std::mem::take(&mut st.added);
        let removed = std::mem::take(&mut st.removed);
        let maps = st.tasks.keys().filter(|k| k.1).count() as u32;
        let reduces = st.tasks.len() as u32 - maps;
        let progress = (st.tasks.iter())
            .map(|(&(job_id, is_map, index), r)| proto::TaskProgress {
                task: Some(proto::TaskRef {
                    job_id,
                    is_map,
                    index,
                    attempt: r.attempt,
                }),
                progress: r.started.elapsed().as_millis() as u64,
            })
            .collect();
        proto::HeartbeatRequest {
            name: self.name.clone(),
            epoch,
            free_map_slots: self.spec.map_slots.saturating_sub(maps),
            free_reduce_slots: self.spec.reduce_slots.saturating_sub(reduces),
            resources: Some(self.resources.clone()),
            blocks_added: added,
            blocks_removed: removed,
            cache_added: vec![],
            cache_removed: vec![],
            cache_used_bytes: 0,
            draining: false,
            leaving: false,
            progress,
        }
    }

    /// One heartbeat, timed from send to answer.
    async fn beat(self: &Arc<Self>, epoch: u64) -> Result<Beat, ()> {
        let req = self.heartbeat_request(epoch);
        let w = &self.stats.window;
        let t = Instant::now();
        let r = tokio::time::timeout(HEARTBEAT_TIMEOUT, self.conn.clone().heartbeat(req)).await;
        let took = t.elapsed();
        let resp = match r {
            Ok(Ok(resp)) => resp.into_inner(),
            Ok(Err(s)) => {
                self.stats.count(&w.heartbeats_failed);
                let msg: String = s.message().chars().take(40).collect();
                self.stats.error(format!("{:?}: {msg}", s.code()));
                return Err(());
            }
            Err(_) => {
                self.stats.count(&w.heartbeats_failed);
                self.stats.count(&w.heartbeats_timed_out);
                self.stats.error("timeout".into());
                return Err(());
            }
        };
        if self.stats.measuring.load(Ordering::Relaxed) {
            w.heartbeats.fetch_add(1, Ordering::Relaxed);
            let us = took.as_micros().min(u32::MAX as u128) as u32;
            let origin = *self.stats.origin.get_or_init(|| t);
            let at = t.saturating_duration_since(origin).as_millis() as u32;
            self.stats.latencies_us.lock().unwrap().push((at, us));
        }
        if resp.reregister {
            self.stats.count(&w.reregister_asked);
            return Ok(Beat::Reregister);
        }
        self.handle(resp.commands);
        Ok(Beat::Ok)
    }

    /// Takes the commands the long poll announced.
    async fn take(self: &Arc<Self>, epoch: u64) -> Result<Beat, ()> {
        let req = proto::WorkerPoll {
            name: self.name.clone(),
            epoch,
            wait_ms: 0,
        };
        let r = tokio::time::timeout(HEARTBEAT_TIMEOUT, self.conn.clone().take_commands(req)).await;
        let Ok(Ok(resp)) = r else { return Err(()) };
        self.stats.count(&self.stats.window.takes);
        let resp = resp.into_inner();
        if resp.reregister {
            return Ok(Beat::Reregister);
        }
        self.handle(resp.commands);
        Ok(Beat::Ok)
    }

    /// The long poll: rings the heartbeat loop when commands wait.
    async fn listen(self: Arc<Self>, mut epoch: watch::Receiver<u64>) {
        loop {
            let e = *epoch.borrow_and_update();
            if e == 0 {
                if epoch.changed().await.is_err() {
                    return;
                }
                continue;
            }
            let req = proto::WorkerPoll {
                name: self.name.clone(),
                epoch: e,
                wait_ms: POLL_WAIT.as_millis() as u64,
            };
            let mut c = self.conn.clone();
            let call = c.await_commands(req);
            match tokio::time::timeout(POLL_WAIT + POLL_SLACK, call).await {
                Ok(Ok(r)) => {
                    let r = r.into_inner();
                    if r.ready {
                        self.stats.count(&self.stats.window.polls_ready);
                        self.ring.notify_one();
                        self.taken.notified().await;
                    } else if r.reregister {
                        let _ = epoch.changed().await;
                    }
                }
                Ok(Err(s)) if s.code() == tonic::Code::Unimplemented => {
                    std::future::pending::<()>().await
                }
                Ok(Err(_)) => tokio::time::sleep(POLL_RETRY).await,
                Err(_) => {}
            }
        }
    }

    /// Carries out the commands of any answer.
    fn handle(self: &Arc<Self>, commands: Vec<proto::Command>) {
        let w = &self.stats.window;
        for c in commands {
            match c.kind {
                Some(Kind::Launch(l)) => {
                    self.stats.count(&w.launches);
                    self.launch(l);
                }
                Some(Kind::KillTask(t)) => {
                    let mut st = self.st.lock().unwrap();
                    let key = (t.job_id, t.is_map, t.index);
                    if st.tasks.get(&key).is_some_and(|r| r.attempt == t.attempt) {
                        if let Some(r) = st.tasks.remove(&key) {
                            r.abort.abort();
                            self.stats.count(&w.kills);
                        }
                    }
                }
                Some(Kind::CleanupJob(j)) => {
                    self.st.lock().unwrap().map_outputs.remove(&j);
                }
                Some(Kind::MapOutputs(m)) => {
                    let mut st = self.st.lock().unwrap();
                    let seen = st.map_outputs.entry(m.job_id).or_default();
                    seen.extend(m.outputs.iter().map(|o| o.map_index));
                    drop(st);
                    self.outputs.notify_waiters();
                }
                Some(Kind::DeleteBlock(id) | Kind::QuarantineBlock(id)) => {
                    let mut st = self.st.lock().unwrap();
                    let before = st.blocks.len();
                    st.blocks.retain(|b| b.id != id);
                    if st.blocks.len() != before {
                        st.removed.push(id);
                    }
                }
                Some(_) => self.stats.count(&w.other_commands),
                None => {}
            }
        }
    }

    /// Starts an attempt: registered as running before its task can end.
    fn launch(self: &Arc<Self>, l: proto::LaunchTask) {
        let Some(t) = l.task else { return };
        let key = (t.job_id, t.is_map, t.index);
        let mut st = self.st.lock().unwrap();
        if !t.is_map {
            let seen = st.map_outputs.entry(t.job_id).or_default();
            seen.extend(l.map_outputs.iter().map(|o| o.map_index));
        }
        let me = self.clone();
        let h = tokio::spawn(async move {
            let start_ms = common::now_ms();
            let result = me.run_task(&l).await;
            me.report(&l, t, start_ms, result).await;
            let mut st = me.st.lock().unwrap();
            if st.tasks.get(&key).is_some_and(|r| r.attempt == t.attempt) {
                st.tasks.remove(&key);
            }
        });
        let running = Running {
            attempt: t.attempt,
            abort: h.abort_handle(),
            started: Instant::now(),
        };
        if let Some(old) = st.tasks.insert(key, running) {
            old.abort.abort();
        }
    }

    /// The attempt's "work": a reduce waits for every map's output, then
    /// the task time passes, then the staging part (if the launch names
    /// one) is created empty.
    async fn run_task(&self, l: &proto::LaunchTask) -> Result<(), String> {
        let t = l.task.expect("checked at launch");
        if !t.is_map {
            loop {
                let heard = self.outputs.notified();
                let have =
                    (self.st.lock().unwrap().map_outputs.get(&t.job_id)).map_or(0, |s| s.len());
                if have >= l.maps_total as usize {
                    break;
                }
                // Notices come in answers to this worker's own calls; the
                // timeout only guards a notice missed between look and wait.
                let _ = tokio::time::timeout(Duration::from_millis(200), heard).await;
            }
        }
        tokio::time::sleep(self.spec.task_time).await;
        if !l.output_path.is_empty() {
            self.write_part(l).await?;
        }
        Ok(())
    }

    /// Creates the attempt's staging part as the output writer would, with
    /// no blocks: the commit checks that it exists.
    async fn write_part(&self, l: &proto::LaunchTask) -> Result<(), String> {
        let mut conn = self.conn.clone();
        let created = conn
            .create_file(proto::CreateFileRequest {
                path: l.output_path.clone(),
                replication: l.output_replication,
                block_size: l.output_block_size,
                writer: self.name.clone(),
                overwrite: false,
            })
            .await
            .map_err(|s| format!("output: create {}: {}", l.output_path, s.message()))?
            .into_inner();
        conn.complete_file(proto::CompleteFileRequest {
            path: l.output_path.clone(),
            lease: created.lease,
            blocks: vec![],
        })
        .await
        .map_err(|s| format!("output: complete {}: {}", l.output_path, s.message()))?;
        Ok(())
    }

    /// The locality a map's read would have had.
    fn locality(&self, l: &proto::LaunchTask) -> &'static str {
        let Some(input) = &l.input else { return "" };
        if input.replicas.iter().any(|r| r.name == self.name) {
            "node_local"
        } else if input.replicas.iter().any(|r| r.rack == self.rack) {
            "rack_local"
        } else {
            "off_rack"
        }
    }

    /// Reports the attempt as the executor does: five tries, 200 ms more
    /// between each; the answer's commands are carried out.
    async fn report(
        self: &Arc<Self>,
        l: &proto::LaunchTask,
        t: proto::TaskRef,
        start_ms: u64,
        result: Result<(), String>,
    ) {
        let mut req = proto::TaskUpdateRequest {
            worker: self.name.clone(),
            epoch: l.epoch,
            task: Some(t),
            metrics: Some(proto::TaskMetrics {
                locality: if t.is_map { self.locality(l) } else { "" }.into(),
                start_ms,
                end_ms: common::now_ms(),
                peak_mem_bytes: 64 << 20,
                ..Default::default()
            }),
            ..Default::default()
        };
        match result {
            Ok(()) => req.succeeded = true,
            Err(e) => req.error = e,
        }
        let w = &self.stats.window;
        for i in 0..5u64 {
            let mut c = self.conn.clone();
            let call = c.task_update(req.clone());
            match tokio::time::timeout(HEARTBEAT_TIMEOUT, call).await {
                Ok(Ok(resp)) => {
                    self.stats.count(&w.task_reports);
                    self.handle(resp.into_inner().commands);
                    return;
                }
                _ => {
                    self.stats.count(&w.task_reports_failed);
                    tokio::time::sleep(Duration::from_millis(200 * (i + 1))).await;
                }
            }
        }
    }
}
