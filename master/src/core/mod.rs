//! The coordinator: the one `MasterState` that owns the block side
//! ([`Blocks`]), the membership ([`Cluster`]) and the job side ([`Jobs`]),
//! and turns each event (a registration, a heartbeat, a file operation, a
//! job submission, a task report, a tick of the clock) into calls on its
//! owners. Each event gets one [`Outbox`], which the owners fill with what
//! workers must do, however deep the call, and which the event flushes
//! into the workers' queues when it ends; where the event can free or need
//! a slot, it asks the policy once (`schedule.rs`).
//!
//! Every operation is a plain function over plain data: `grpc.rs` converts
//! protobuf to these types and back, so tests and the fuzzer drive this
//! directly. One `std::sync::Mutex` guards it, taken by name (`lock.rs`):
//! nothing async happens while it is held, and the only slow step inside
//! is the edit-log fsync, which must serialise namespace changes anyway,
//! as HDFS's namesystem lock does. The job side's files are written after
//! the lock is let go (`jobs/disk.rs`, `offlock.rs`).

mod decommission;
mod lifecycle;
pub mod lock;
pub mod offlock;
mod schedule;
mod view;
pub mod wait;

use crate::blocks::files::{AddBlock, CompleteFile, CreateFile, Created, NewBlock};
use crate::blocks::lease::Recovered;
use crate::blocks::namespace::is_staging;
use crate::blocks::pins::CacheChange;
use crate::blocks::safemode::SafeModeStatus;
use crate::blocks::Blocks;
use crate::cluster::history::ResourceHistory;
use crate::cluster::status::ClusterStatus;
use crate::cluster::{Cluster, Outbox};
use crate::error::{MasterError, Result};
use crate::jobs::Jobs;
use common::config::ClusterConfig;
pub use decommission::Decommission;
use protocol::{Command, Heartbeat, Registered, Registration, Reply};
use sched::Trigger;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The master's shared state. A std `Mutex`, not a tokio one: no handler
/// awaits while holding it.
pub type Shared = Arc<Mutex<MasterState>>;

/// What `mr admin safemode` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SafeModeAction {
    Get,
    Enter,
    Leave,
}

/// The job whose staging `path` is in, if it is in one.
fn staging_job(path: &str) -> Option<u64> {
    path.strip_prefix("/_staging/job-")
        .and_then(|rest| rest.split_once('/'))
        .and_then(|(n, _)| n.parse::<u64>().ok())
}

pub struct MasterState {
    cfg: ClusterConfig,
    blocks: Blocks,
    cluster: Cluster,
    jobs: Jobs,
    /// Counters and histograms only `/metrics` reads (see `stats.rs`).
    stats: crate::stats::Stats,
    /// Recent resource vectors per worker, for the web UI's sparklines.
    history: ResourceHistory,
    /// What long polls wait on besides a worker's doorbell: job ends, and
    /// the master's shutdown (see `wait.rs`).
    waits: wait::Waits,
    /// How long each site held the lock (see `lock.rs`).
    lock_holds: lock::LockHolds,
    /// When the expiry check last ran, on the monotonic clock: a gap much
    /// longer than the tick says the master itself stalled (see
    /// [`MasterState::stalled`]).
    last_expiry: Option<Instant>,
    /// The scheduling view kept between decisions (see `view.rs`).
    kept: view::KeptView,
}

impl MasterState {
    pub fn open(cfg: ClusterConfig, now: Instant) -> Result<Self> {
        let blocks = Blocks::open(&cfg, now)?;
        let committed = |out: &str| blocks.ns().files.contains_key(&format!("{out}/_SUCCESS"));
        let jobs = Jobs::open(
            cfg.scheduler.spec(),
            cfg.master.data_dir.clone(),
            now,
            &committed,
        )?;
        let mut st = MasterState {
            cfg,
            blocks,
            cluster: Cluster::default(),
            jobs,
            stats: Default::default(),
            history: Default::default(),
            waits: Default::default(),
            lock_holds: Default::default(),
            last_expiry: None,
            kept: Default::default(),
        };
        // No job survives a restart (see `jobs/recovery.rs`): what they
        // staged is garbage.
        // Not refused by the safe mode every start begins in: nothing is
        // reported yet, so the edit only drops names, and the replicas go
        // to the quarantine at registration.
        let mut out = Outbox::default();
        if !st.blocks.ns().matching("/_staging").is_empty() {
            st.blocks.delete("/_staging", &mut out)?;
        }
        for (output, owner) in st.jobs.interrupted_outputs() {
            st.blocks.remove_empty_output(&output, &owner, &mut out);
        }
        st.cluster.flush(out);
        Ok(st)
    }

    pub fn cfg(&self) -> &ClusterConfig {
        &self.cfg
    }

    /// The block side, read-only: its changes are the events below.
    pub fn blocks(&self) -> &Blocks {
        &self.blocks
    }

    /// The membership, read-only.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The job side, read-only.
    pub fn jobs(&self) -> &Jobs {
        &self.jobs
    }

    /// How long each site held the lock, for `/metrics`.
    pub fn lock_holds(&self) -> &lock::LockHolds {
        &self.lock_holds
    }

    fn lock_holds_mut(&mut self) -> &mut lock::LockHolds {
        &mut self.lock_holds
    }

    pub fn stats(&self) -> &crate::stats::Stats {
        &self.stats
    }

    /// Recent resource vectors per worker (the web UI's sparklines).
    pub fn resource_history(&self) -> &ResourceHistory {
        &self.history
    }

    /// The master is shutting down: every long poll answers now.
    pub fn close_waits(&self) {
        self.waits.close();
    }

    pub fn sync(&mut self) -> Result<()> {
        self.jobs.save_policy();
        self.blocks.sync()
    }

    // ------------------------------------------------------------ membership

    pub fn on_register(&mut self, r: Registration, now: Instant) -> Result<Registered> {
        if r.protocol_version != common::PROTOCOL_VERSION {
            return Err(MasterError::FailedPrecondition(format!(
                "worker {} speaks protocol version {}, this master speaks {}",
                r.name,
                r.protocol_version,
                common::PROTOCOL_VERSION
            )));
        }
        if self.cfg.worker(&r.name).is_none() {
            return Err(MasterError::FailedPrecondition(format!(
                "worker {:?} is not in the master's cluster.toml",
                r.name
            )));
        }
        r.check_slots().map_err(MasterError::InvalidArgument)?;
        // Its node joins the view (or starts over), its previous
        // incarnation's attempts and reports go.
        self.view_stale_node(&r.name);
        self.view_stale_jobs();
        let mut out = Outbox::default();
        // Forget whatever the previous incarnation ran; what was meant for
        // it dies with it, as its queue does.
        self.jobs.worker_lost(&r.name, now, &mut out);
        out.discard_for(&r.name);
        // And what it reported. Blocks the namespace does not know go to
        // the worker's quarantine with its first heartbeat, never straight
        // to deletion.
        let (stored, unknown) = self
            .blocks
            .full_report(&r.name, &r.blocks, &r.cached, &mut out);
        let epoch = self.cluster.admit(&r, stored, now);
        tracing::info!(worker = %r.name, addr = %r.addr, rack = %r.rack, epoch,
            blocks = stored, unknown, "worker registered");
        let delete_blocks = Vec::new();
        // Cleanups this worker may have missed (it was cut off or dead when
        // the job ended), by the job directories it says it holds: ended
        // jobs leave no map outputs behind. Only those: a command per job
        // ever ended, to every worker that registers, grows without end.
        // And the files of jobs this master never ran or no longer knows:
        // a master restart fails the jobs that were running, and their map
        // outputs would stay on the workers for ever.
        for &id in &r.job_dirs {
            let job = self.jobs.get(id);
            if job.is_some_and(|j| !j.state().is_final()) {
                continue;
            }
            if job.is_none() {
                tracing::info!(worker = %r.name, job = id, "sweeping the files of a job this master does not run");
            }
            out.send(&r.name, Command::CleanupJob(id));
        }
        self.blocks
            .repin_on_register(&r.name, &self.cluster, &mut out);
        // Its slots, and whatever its previous incarnation ran, are new.
        self.offer_all(now, &mut out);
        self.cluster.flush(out);
        Ok(Registered {
            epoch,
            heartbeat_interval_ms: self.cfg.heartbeat.interval.as_millis() as u64,
            delete_blocks,
        })
    }

    pub fn on_heartbeat(&mut self, h: Heartbeat, now: Instant) -> Reply {
        if self.cluster.is_stale(&h.name, h.epoch) {
            // A zombie (paused past its expiry) or a restarted master's old
            // worker: worth a line, and rare.
            tracing::info!(worker = %h.name, epoch = h.epoch, "stale heartbeat fenced; asking to re-register");
            return Reply::reregister();
        }
        let mut out = Outbox::default();
        let stored = self.blocks.incremental_report(
            &h.name,
            &h.blocks_added,
            &h.blocks_removed,
            &h.cache_added,
            &h.cache_removed,
            &mut out,
        );
        self.cluster.beat(&h, stored, now);
        self.view_stale_node(&h.name);
        let reported = [&h.blocks_removed, &h.cache_added, &h.cache_removed];
        if !h.blocks_added.is_empty() || reported.iter().any(|l| !l.is_empty()) {
            // Pending tasks show where their blocks are stored and cached.
            self.view_stale_jobs();
        }
        self.jobs.note_progress(h.epoch, &h.progress, now);
        // What its reports asked leads the answer, before what waited in
        // its queue.
        let mut commands = out.take_for(&h.name);
        if h.leaving {
            // Its queue dies with it: the answer is all it gets.
            self.mark_dead(&h.name, now, "worker left (graceful shutdown)", &mut out);
            self.offer_all(now, &mut out);
            self.cluster.flush(out);
            return Reply {
                commands,
                ..Default::default()
            };
        }
        if let Some(mut view) = self.event_view(now) {
            self.schedule(&mut view, Trigger::Heartbeat(h.name.clone()), now, &mut out);
            self.check_view(&view, now);
            self.keep_view(view);
        }
        self.cluster.flush(out);
        commands.append(&mut self.cluster.take_commands(&h.name));
        Reply {
            reregister: false,
            commands,
            stop: self.blocks.stop_answer(&h.name, &self.cluster),
        }
    }

    /// The clock's work: silent workers declared dead, writes silent past
    /// the lease hard limit closed, then the blocks brought back to their
    /// replication factor (a window of them per tick, `blocks/sweep.rs`).
    pub fn on_tick(&mut self, now: Instant) {
        let caches = self.blocks.cache_generation();
        let mut out = Outbox::default();
        self.expire(now, &mut out);
        self.blocks.recover_expired_leases(now, &mut out);
        self.blocks.sweep(&self.cluster, now, &mut out);
        // Replicas trimmed, writes closed: the pending tasks' holders. A
        // block forgotten leaves caches the view shows per node.
        self.view_stale_jobs();
        if self.blocks.cache_generation() != caches {
            self.view_stale();
        }
        self.cluster.flush(out);
        self.time_out_stalled(now);
        self.blocks.check_resources();
    }

    /// Why `/healthz` should answer unhealthy; empty when healthy.
    pub fn health(&self) -> Vec<String> {
        self.blocks.health()
    }

    /// Replaces how the metadata disk's free space is read: tests make the
    /// disk full without filling one.
    pub fn set_free_space_probe(&mut self, free: crate::blocks::resource::FreeSpace) {
        self.blocks.set_free_space_probe(free);
    }

    /// Marks silent workers dead and forgets their replicas and cache
    /// entries, so that re-replication sees the loss. Returns the names.
    pub fn expire_workers(&mut self, now: Instant) -> Vec<String> {
        let mut out = Outbox::default();
        let dead = self.expire(now, &mut out);
        self.cluster.flush(out);
        dead
    }

    fn expire(&mut self, now: Instant, out: &mut Outbox) -> Vec<String> {
        if let Some(stall) = self.stalled(now) {
            // Heartbeats that arrived during the stall wait unread in the
            // sockets behind it: the silence measured now is the master's
            // own. As HDFS's HeartbeatManager skips its next dead-node scan
            // after "an excessive pause" of its monitor thread (HDFS-9107),
            // nobody is declared dead this round, and every live worker's
            // silence starts over from now. A worker that did die during
            // the stall is found one expiry later; the alternative is every
            // worker dead at once, every map re-run and every block
            // re-replicated.
            tracing::warn!(
                stalled_s = stall.as_secs_f64(),
                workers = self.cluster.live().count(),
                "the master itself stalled for {:.1} s (its expiry check did not run): \
                 no worker is declared dead for it; each live worker gets a fresh grace",
                stall.as_secs_f64()
            );
            self.cluster.grace_all(now);
            return Vec::new();
        }
        let dead = self.cluster.silent(now, self.cfg.heartbeat.expiry());
        let why = format!("missed {} heartbeats", self.cfg.heartbeat.dead_after);
        for name in &dead {
            self.mark_dead(name, now, &why, out);
        }
        if !dead.is_empty() {
            // What they ran went back to the queue: the others may take it.
            self.offer_all(now, out);
        }
        dead
    }

    /// Records that the expiry check runs at `now`; returns how long the
    /// master was away if the gap since the last run says it stalled (a
    /// GC-like pause of the process, a VM frozen, a lock held far too long,
    /// the clock loop starved).
    ///
    /// The bound is half the expiry. The check runs every half heartbeat
    /// interval, so that is `dead_after - 1` ticks late: two whole seconds
    /// at the defaults (1 s, 5), more than scheduling jitter. And once the
    /// master has not looked for half the expiry, half of the silence it
    /// would measure on any worker may be its own: too much to call a
    /// worker dead on. A bound of a few intervals instead would not scale
    /// with a long `dead_after`, set where pauses are expected. A death is
    /// never missed, only found one expiry later.
    fn stalled(&mut self, now: Instant) -> Option<std::time::Duration> {
        let prev = self.last_expiry.replace(now)?;
        let gap = now.saturating_duration_since(prev);
        (gap > self.cfg.heartbeat.expiry() / 2).then_some(gap)
    }

    /// Brings every block back to its replication factor; returns how many
    /// commands were issued.
    pub fn replication_scan(&mut self, now: Instant) -> usize {
        self.view_stale();
        let mut out = Outbox::default();
        let n = self.blocks.replication_scan(&self.cluster, now, &mut out);
        self.cluster.flush(out);
        n
    }

    /// Forgets a worker's replicas and cache entries, so that re-replication
    /// sees the loss, and re-queues what it ran or holds for running jobs.
    fn mark_dead(&mut self, name: &str, now: Instant, why: &str, out: &mut Outbox) {
        self.view_stale_node(name);
        self.view_stale_jobs();
        tracing::warn!(worker = %name, "worker marked dead: {why}");
        self.blocks.drop_worker(name);
        self.cluster.mark_dead(name);
        self.jobs.worker_lost(name, now, out);
        self.blocks.move_pins_of(name, &self.cluster, out);
    }

    pub fn report_bad_block(&mut self, worker: &str, block: u64, reason: &str) {
        self.view_stale();
        self.blocks.report_bad_block(worker, block, reason);
    }

    // ------------------------------------------------------------ admin

    /// `mr admin safemode get|enter|leave`.
    pub fn safe_mode(&mut self, action: SafeModeAction, now: Instant) -> SafeModeStatus {
        match action {
            SafeModeAction::Get => self.blocks.update_safe_mode(now),
            SafeModeAction::Enter => self.blocks.enter_safe_mode(),
            SafeModeAction::Leave => self.blocks.leave_safe_mode(),
        }
        self.blocks.safe_mode_status()
    }

    // ------------------------------------------------------------ files

    // Safe mode refuses the clients' writes and deletes (`create_file`,
    // `add_block`, `complete_file`, `delete`) and job submissions
    // (`lifecycle.rs`), as HDFS's NameNode does. Abandoning a write is
    // let through: it changes no durable state, and frees the path. The
    // master's own steps are too: a job's commit finishes parts written
    // before safe mode began, and removing staging only drops names.

    pub fn create_file(&mut self, req: CreateFile, now: Instant) -> Result<Created> {
        self.blocks
            .check_writable(&format!("create {}", req.path))?;
        self.check_staging_open(&req.path)?;
        self.check_not_an_output(&req.path)?;
        let mut out = Outbox::default();
        let r = self.blocks.create_file(req, now, &mut out);
        self.cluster.flush(out);
        r
    }

    /// `mr admin recover-lease`: closes the open write of `raw` at its last
    /// complete block now, whatever its soft limit (the caller checked who
    /// may: `Blocks::may_recover`). A running job's part is refused: its
    /// task may still complete it, and the job's end drops it anyway.
    pub fn recover_lease(&mut self, raw: &str, now: Instant) -> Result<Recovered> {
        let path = common::path::DfsPath::parse_file(raw)?;
        let Some(h) = self.blocks.lease_holder(path.as_str()) else {
            return Ok(Recovered::none());
        };
        if let Some(job) = staging_job(path.as_str()) {
            if self.jobs.get(job).is_some_and(|j| !j.state().is_final()) {
                return Err(MasterError::FailedPrecondition(format!(
                    "{path} is being written by a task of job {job}, which is running: its write \
                     ends with the task or the job (`mr job kill {job}`)"
                )));
            }
        } else if let Some(w) = &h.writer {
            return Err(MasterError::FailedPrecondition(format!(
                "{path} is being written by a task on worker {w}: its write ends with the task"
            )));
        }
        self.view_stale();
        let mut out = Outbox::default();
        let r = self
            .blocks
            .recover_lease(h.lease, now, "recover-lease", &mut out);
        self.cluster.flush(out);
        r
    }

    /// A running job's output is its own until it commits: a file created
    /// there would be replaced by the commit or hide a part (issue 39).
    /// Hadoop's output committer relies on HDFS permissions of a
    /// directory created at job setup for the same.
    fn check_not_an_output(&self, raw: &str) -> Result<()> {
        let Ok(path) = common::path::DfsPath::parse_file(raw) else {
            return Ok(());
        };
        let inside = |o: &str| {
            path.as_str() == o
                || path
                    .as_str()
                    .strip_prefix(o)
                    .is_some_and(|r| r.starts_with('/'))
        };
        match self
            .jobs
            .active()
            .find(|j| inside(j.spec().output.as_str()))
        {
            Some(j) => Err(MasterError::FailedPrecondition(format!(
                "cannot write {path}: {} is the output of job {}, which is running; its files appear when it commits",
                j.spec().output,
                j.id()
            ))),
            None => Ok(()),
        }
    }

    /// Only the runtime writes under `/_staging/`, and only into the
    /// staging of a running job: the start removes all of `/_staging`, so a
    /// user's file there would be deleted at the next restart. A part
    /// staged for a job that ended (a late attempt, or one from before a
    /// master restart) is refused too: nothing would ever commit or remove
    /// it.
    fn check_staging_open(&self, raw: &str) -> Result<()> {
        let Ok(path) = common::path::DfsPath::parse_file(raw) else {
            return Ok(()); // create_file says what is wrong with it
        };
        if !is_staging(path.as_str()) {
            return Ok(());
        }
        let Some(id) = staging_job(path.as_str()) else {
            return Err(MasterError::InvalidArgument(format!(
                "cannot write {path}: /_staging/ is reserved for the runtime's job staging \
                 (its contents are removed at every master start); choose another path"
            )));
        };
        match self.jobs.get(id) {
            Some(j) if !j.state().is_final() => Ok(()),
            _ => Err(MasterError::FailedPrecondition(format!(
                "cannot write {path}: its job is not running"
            ))),
        }
    }

    pub fn add_block(&mut self, req: AddBlock, now: Instant) -> Result<NewBlock> {
        self.blocks
            .check_writable(&format!("add a block to {}", req.path))?;
        self.blocks.add_block(req, &self.cluster, now)
    }

    pub fn complete_file(&mut self, req: CompleteFile) -> Result<()> {
        self.blocks
            .check_writable(&format!("complete {}", req.path))?;
        // Its blocks' replicas are recorded.
        self.view_stale_jobs();
        let mut out = Outbox::default();
        let r = self.blocks.complete_file(req, &self.cluster, &mut out);
        self.cluster.flush(out);
        r
    }

    /// A writer's keep-alive: no durable change, so safe mode lets it by.
    pub fn renew_lease(&mut self, path: &str, lease: u64, now: Instant) -> Result<()> {
        self.blocks.renew_lease(path, lease, now)
    }

    pub fn abandon_file(&mut self, path: &str, lease: u64) -> Result<()> {
        self.view_stale();
        let mut out = Outbox::default();
        let r = self.blocks.abandon_file(path, lease, &mut out);
        self.cluster.flush(out);
        r
    }

    pub fn delete(&mut self, raw: &str) -> Result<u64> {
        self.blocks.check_writable(&format!("delete {raw}"))?;
        self.view_stale();
        let mut out = Outbox::default();
        let r = self.blocks.delete(raw, &mut out);
        self.cluster.flush(out);
        r
    }

    /// `mr fs mkdir` (the caller checked who may: `Blocks::may_create`).
    pub fn mkdir(&mut self, raw: &str, owner: &str, mode: u32) -> Result<()> {
        self.blocks.check_writable(&format!("make {raw}"))?;
        if common::path::DfsPath::parse_file(raw).is_ok_and(|p| is_staging(p.as_str())) {
            return Err(MasterError::InvalidArgument(format!(
                "cannot make {raw}: /_staging/ is reserved for the runtime's job staging"
            )));
        }
        self.check_not_an_output(raw)?;
        self.blocks.mkdir(raw, owner, mode)
    }

    /// `mr fs chmod` / `chown` (the caller checked who may).
    pub fn set_attr(&mut self, raw: &str, owner: Option<String>, mode: Option<u32>) -> Result<()> {
        self.blocks.check_writable(&format!("change {raw}"))?;
        self.blocks.set_attr(raw, owner, mode)
    }

    /// `mr cache add|rm`: pins every block of the file in one worker's
    /// cache, or unpins it and drops it from every cache (`blocks/pins.rs`).
    pub fn cache_file(&mut self, raw: &str, cache: bool) -> Result<CacheChange> {
        self.view_stale();
        let mut out = Outbox::default();
        let r = if cache {
            self.blocks.pin_file(raw, &self.cluster, &mut out)
        } else {
            self.blocks.unpin_file(raw, &self.cluster, &mut out)
        };
        self.cluster.flush(out);
        r
    }

    /// Resizes the block cache of one worker, or of every live one. The
    /// master's copy of the capacity changes at once, so the views the
    /// scheduler sees and `cluster status` agree with what was asked; the
    /// evictions arrive with the workers' next cache reports. Not kept
    /// across a worker restart: its config's `cache` applies again.
    pub fn set_cache_capacity(&mut self, bytes: u64, worker: &str) -> Result<Vec<String>> {
        if !worker.is_empty() && self.cluster.get(worker).is_none() {
            return Err(MasterError::InvalidArgument(format!(
                "no worker named {worker:?}"
            )));
        }
        let chosen =
            |w: &crate::cluster::WorkerEntry| w.alive && (worker.is_empty() || w.name == worker);
        // Pins are never evicted: a bound below them is refused.
        for w in self.cluster.workers().filter(|w| chosen(w)) {
            let pinned = self.blocks.pinned_bytes(&w.name);
            if bytes < pinned {
                return Err(MasterError::FailedPrecondition(format!(
                    "worker {} pins {pinned} bytes in its cache, more than {bytes}: unpin first (mr cache rm)",
                    w.name
                )));
            }
        }
        let mut told: Vec<String> = self
            .cluster
            .workers()
            .filter(|w| chosen(w))
            .map(|w| w.name.clone())
            .collect();
        let mut out = Outbox::default();
        for w in &told {
            self.cluster.set_cache_capacity(w, bytes);
            out.send(w, Command::SetCacheCapacity(bytes));
        }
        self.cluster.flush(out);
        told.sort();
        Ok(told)
    }

    pub fn cluster_status(&self) -> ClusterStatus {
        ClusterStatus {
            workers: self.worker_statuses(),
            files: self.blocks.ns().files.len() as u64,
            blocks: self.blocks.ns().block_count() as u64,
            under_replicated_blocks: self.blocks.under_replicated() as u64,
        }
    }

    /// Appends every live worker's latest resource vector to its history.
    pub fn sample_resources(&mut self, t_ms: u64) {
        for w in self.cluster.live() {
            self.history.record(&w.name, &w.resources, t_ms);
        }
    }
}

#[cfg(test)]
#[path = "storage_tests.rs"]
mod storage_tests;

#[cfg(test)]
#[path = "pause_tests.rs"]
mod pause_tests;

#[cfg(test)]
#[path = "decommission_tests.rs"]
mod decommission_tests;

#[cfg(test)]
#[path = "view_tests.rs"]
mod view_tests;
