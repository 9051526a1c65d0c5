//! `cluster.toml`: the one file every process reads.
//!
//! ```toml
//! token = "change-me"            # the admin's token, carried by every RPC
//! worker_token = "other"         # optional: the workers' own identity
//!
//! [[users]]                      # optional: one per user
//! name = "ann"
//! token = "ann-secret"
//! role = "user"                  # admin, user or reader
//!
//! [master]
//! addr = "127.0.0.1:7070"
//! data_dir = "/var/lib/mr/master"   # edit log and snapshot, job history
//! data_dirs = ["/disk2/mr/master"]  # optional: more copies of the edit log
//!                                   # and snapshot, written alike (HDFS's
//!                                   # several dfs.namenode.name.dir)
//! http_addr = "127.0.0.1:7080"   # web UI, REST API, /metrics (optional)
//! lease_soft = "60s"             # a silent writer's path may be taken over
//! lease_hard = "1h"              # a silent writer's file is closed by the master
//!
//! [dfs]
//! block_size = "64MiB"
//! replication = 3
//! scan_interval = "6h"           # every stored block re-verified this often
//! scan_first_delay = "1m"        # the first pass, this long after a start
//! scan_rate = "16MiB"            # bytes the scanner reads per second, at most
//!
//! [heartbeat]
//! interval = "1s"
//! dead_after = 5                 # heartbeats missed before a worker is dead
//!
//! [scheduler]
//! name = "fifo"                  # see `mr admin scheduler show`
//!
//! [network]                      # what the launcher built; informational
//! kind = "emulated-lan"          # loopback, emulated-lan, containers, lan
//! host_rate = "200mbit"          # each host port, both directions
//! uplink_rate = "50mbit"         # each rack uplink, both directions
//!
//! [[workers]]
//! name = "w1"
//! addr = "127.0.0.1:7101"
//! rack = "r1"
//! map_slots = 2
//! reduce_slots = 2
//! cache = "256MiB"
//! data_dir = "/var/lib/mr/w1"
//!
//! [tls]                          # optional: TLS only, on every port
//! ca = "tls/ca.pem"              # relative paths: to this file's directory
//! dir = "tls"                    # NAME.pem + NAME.key per process
//! ```
//! Defaults < file; binaries apply their flags on top. Every field is
//! validated at load with an error naming it.

use crate::units::{de_duration, de_size};
use serde::Deserialize;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Smallest block size accepted: HDFS's `fs-limits.min-block-size` is 1 MiB;
/// we allow 64 KiB so that tests can make many blocks out of little data.
pub const MIN_BLOCK_SIZE: u64 = 64 << 10;
/// Largest block size: a block is read whole into memory by a map task.
pub const MAX_BLOCK_SIZE: u64 = 2 << 30;
/// Largest replication factor accepted from outside.
pub const MAX_REPLICATION: u32 = 32;
/// Most slots of one kind a worker may have: the master refuses a
/// registration above it, since every slot is a task's worth of memory.
pub const MAX_SLOTS: u32 = 256;
/// Bounds of a map's sort buffer, bytes: the buffer's record offsets are
/// 32-bit, so it must stay below 4 GiB.
pub const MIN_SORT_BUFFER: u64 = 1 << 20;
pub const MAX_SORT_BUFFER: u64 = (4 << 30) - 1;
/// Bounds of a reduce's in-memory shuffle (`shuffle_memory=`), bytes: the
/// reduce holds this much of fetched segments in memory, beyond it they
/// spool to disk; more than 4 GiB per reduce slot is a typo, not a plan.
pub const MIN_SHUFFLE_MEMORY: u64 = 64 << 10;
pub const MAX_SHUFFLE_MEMORY: u64 = 4 << 30;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {err}")]
    Read { path: PathBuf, err: std::io::Error },
    #[error("invalid config {path}: {msg}")]
    Parse { path: PathBuf, msg: String },
    #[error("invalid config: {0}")]
    Invalid(String),
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    /// The admin's secret: every RPC must carry a known token, or it is
    /// refused. Without `worker_token`, workers use it too.
    pub token: String,
    /// The workers' identity: when set, only it may register a worker,
    /// heartbeat or report tasks, and the admin's token no longer may.
    #[serde(default)]
    pub worker_token: Option<String>,
    /// Per-user tokens, each with a role (see `auth`).
    #[serde(default)]
    pub users: Vec<UserConfig>,
    pub master: MasterConfig,
    #[serde(default)]
    pub dfs: DfsConfig,
    #[serde(default)]
    pub heartbeat: HeartbeatConfig,
    #[serde(default)]
    pub jobs: JobsConfig,
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    #[serde(default)]
    pub network: NetworkConfig,
    #[serde(default)]
    pub workers: Vec<WorkerConfig>,
    /// With it, every port speaks TLS only (see the `tls` module).
    #[serde(default)]
    pub tls: Option<TlsConfig>,
}

/// `[[users]]`: one user's token and role.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserConfig {
    pub name: String,
    pub token: String,
    pub role: crate::role::Role,
}

impl std::fmt::Debug for UserConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserConfig")
            .field("name", &self.name)
            .field("token", &"<redacted>")
            .field("role", &self.role)
            .finish()
    }
}

/// Written by hand so that a config logged or printed in a panic never
/// shows a token.
impl std::fmt::Debug for ClusterConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterConfig")
            .field("token", &"<redacted>")
            .field(
                "worker_token",
                &self.worker_token.as_ref().map(|_| "<redacted>"),
            )
            .field("users", &self.users)
            .field("master", &self.master)
            .field("dfs", &self.dfs)
            .field("heartbeat", &self.heartbeat)
            .field("scheduler", &self.scheduler)
            .field("network", &self.network)
            .field("workers", &self.workers)
            .field("tls", &self.tls)
            .finish()
    }
}

/// The identity a client presents when nothing else is said.
pub const CLIENT_NAME: &str = "client";

/// `[tls]`: where the cluster CA and each process's certificate are.
/// `mr config init --tls` writes them and this section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// The cluster CA's certificate, which every peer is verified against.
    pub ca: PathBuf,
    /// `NAME.pem` and `NAME.key` for each process: `master`, the workers
    /// by name, `client`.
    pub dir: PathBuf,
    /// Whose certificate this process presents when it dials; not in the
    /// file: a worker sets its name, the CLI `client` (or `MR_TLS_NAME`).
    #[serde(skip, default = "default_tls_me")]
    pub me: String,
}

fn default_tls_me() -> String {
    CLIENT_NAME.into()
}

impl TlsConfig {
    pub fn cert_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.pem"))
    }
    pub fn key_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.key"))
    }
}

/// `[network]`: what the launcher built between the hosts. Benchmarks
/// record it beside their figures, because a locality rate means little
/// without the bandwidths it was measured on; and the master gives the
/// policies its rates as the bandwidths of a remote read
/// ([`NetworkConfig::bandwidths`]), as Hadoop gives them the rack topology.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkConfig {
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub host_rate: String,
    #[serde(default)]
    pub uplink_rate: String,
}

impl NetworkConfig {
    /// Bytes per second of a read from another host of the rack (its host
    /// port) and from another rack (the slower of the port and the
    /// uplink), when the launcher wrote both rates.
    pub fn bandwidths(&self) -> Option<(f64, f64)> {
        let host = crate::units::parse_rate(&self.host_rate).ok()?;
        let up = crate::units::parse_rate(&self.uplink_rate).ok()?;
        Some((host, host.min(up)))
    }
}

/// `[scheduler]`: the policy placing tasks, by name, with its parameters
/// (`[scheduler.params]`); `mr admin scheduler set` changes it at run time.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulerConfig {
    #[serde(default = "default_scheduler")]
    pub name: String,
    #[serde(default)]
    pub params: std::collections::BTreeMap<String, toml::Value>,
    /// Speculative execution: a backup attempt for a straggling task (the
    /// rule is `master::jobs::Job::speculation_candidates`). Off by default.
    #[serde(default)]
    pub speculative: bool,
}

fn default_scheduler() -> String {
    "fifo".into()
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            name: default_scheduler(),
            params: Default::default(),
            speculative: false,
        }
    }
}

/// A policy name and its parameters, as configured. Built into a policy by
/// `sched::build`, which this crate does not link.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchedulerSpec {
    pub name: String,
    pub params: std::collections::BTreeMap<String, String>,
}

impl SchedulerSpec {
    pub fn new(name: &str) -> Self {
        SchedulerSpec {
            name: name.to_string(),
            params: Default::default(),
        }
    }
}

impl SchedulerConfig {
    pub fn spec(&self) -> SchedulerSpec {
        SchedulerSpec {
            name: self.name.clone(),
            params: self
                .params
                .iter()
                .map(|(k, v)| {
                    let s = match v {
                        toml::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), s)
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MasterConfig {
    /// Where the master listens for workers and clients (gRPC).
    pub addr: String,
    /// Edit log and snapshots of the namespace; job history and the
    /// scheduler's learnt state.
    pub data_dir: PathBuf,
    /// More directories holding the namespace's edit log and snapshots,
    /// written alike with `data_dir`'s, as HDFS writes every
    /// `dfs.namenode.name.dir`: with them on other disks, losing one disk
    /// loses no acknowledged edit and does not stop the master. Adding one
    /// is one line: it is filled from the others at the next start. No
    /// two may be the same or one inside another.
    #[serde(default)]
    pub data_dirs: Vec<PathBuf>,
    /// Edits between two snapshots; a snapshot bounds restart replay time.
    #[serde(default = "default_snapshot_every")]
    pub snapshot_every: u64,
    /// Where the master serves its web UI, REST API (`/api/...`) and
    /// Prometheus `/metrics` over HTTP; none when absent. Must differ from
    /// `addr`: gRPC and the browser do not share a port.
    #[serde(default)]
    pub http_addr: Option<String>,
    /// The fraction of the namespace's blocks that must have a reported
    /// replica before the master leaves safe mode after a start (no
    /// deletion, no re-replication before): HDFS's
    /// `dfs.namenode.safemode.threshold-pct`. In `0.0..=1.0`; 0 leaves it
    /// once the heartbeat expiry has passed.
    #[serde(default = "default_safemode_threshold")]
    pub safemode_threshold: f64,
    /// How long a worker keeps a block the namespace does not know, in its
    /// quarantine directory, before deleting it: time for an operator to
    /// restore an older or lost fsimage and get the blocks back. Read by
    /// the workers (they share this file).
    #[serde(deserialize_with = "de_duration", default = "default_quarantine_grace")]
    pub quarantine_grace: Duration,
    /// How long the holder of a write may stay silent (no create, no new
    /// block) before another client's create of the same path may recover
    /// its lease: HDFS's LeaseManager soft limit (60 s there too). Shorter
    /// frees a path sooner after a writer dies; longer spares a slow writer
    /// that fills a block more slowly than this.
    #[serde(deserialize_with = "de_duration", default = "default_lease_soft")]
    pub lease_soft: Duration,
    /// Silence after which the master itself recovers a lease, closing the
    /// file at its last complete block: HDFS's LeaseManager hard limit (1 h
    /// there too), so that a writer killed mid-put neither locks its path
    /// nor leaves orphan blocks until the next restart. At least `lease_soft`.
    #[serde(deserialize_with = "de_duration", default = "default_lease_hard")]
    pub lease_hard: Duration,
    /// Free space each of the master's metadata disks (under `data_dir`
    /// and every `data_dirs`) must keep: below it the master enters safe
    /// mode by itself, before a full disk fails an edit-log write, and
    /// leaves it once space is back. HDFS's
    /// `dfs.namenode.resource.du.reserved` (100 MiB there too).
    #[serde(deserialize_with = "de_size", default = "default_reserved_space")]
    pub reserved_space: u64,
}

impl MasterConfig {
    /// Where the namespace's edit log and snapshots are written:
    /// `data_dir`, then every `data_dirs`.
    pub fn metadata_dirs(&self) -> Vec<PathBuf> {
        std::iter::once(&self.data_dir)
            .chain(&self.data_dirs)
            .cloned()
            .collect()
    }

    /// The metadata directories are distinct and none is inside another:
    /// two copies in one place are one copy, and a copy inside another
    /// directory would be written over by it. Compared as written (after
    /// dropping `.` and trailing slashes): symbolic links and mounts are
    /// the operator's to get right.
    fn validate_dirs(&self) -> Result<(), String> {
        let dirs = self.metadata_dirs();
        let norm: Vec<PathBuf> = (dirs.iter())
            .map(|d| {
                (d.components())
                    .filter(|c| *c != std::path::Component::CurDir)
                    .collect()
            })
            .collect();
        for i in 0..dirs.len() {
            for j in i + 1..dirs.len() {
                let (a, b) = (&dirs[i], &dirs[j]);
                if norm[i] == norm[j] {
                    return Err(format!(
                        "master.data_dirs: {} and {} are the same directory; data_dir and \
                         every data_dirs entry each hold a copy of the namespace, so each \
                         needs its own",
                        a.display(),
                        b.display()
                    ));
                }
                let (outer, inner) = if norm[j].starts_with(&norm[i]) {
                    (a, b)
                } else if norm[i].starts_with(&norm[j]) {
                    (b, a)
                } else {
                    continue;
                };
                return Err(format!(
                    "master.data_dirs: {} is inside {}; each copy of the namespace needs a \
                     directory of its own, not nested in another (best on another disk)",
                    inner.display(),
                    outer.display()
                ));
            }
        }
        Ok(())
    }
}

fn default_reserved_space() -> u64 {
    100 << 20
}

fn default_snapshot_every() -> u64 {
    10_000
}

fn default_safemode_threshold() -> f64 {
    0.999
}

fn default_quarantine_grace() -> Duration {
    Duration::from_secs(24 * 3600)
}

fn default_lease_soft() -> Duration {
    Duration::from_secs(60)
}

fn default_lease_hard() -> Duration {
    Duration::from_secs(3600)
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DfsConfig {
    #[serde(deserialize_with = "de_size", default = "default_block_size")]
    pub block_size: u64,
    #[serde(default = "default_replication")]
    pub replication: u32,
    /// How often each worker re-verifies every stored block's checksum, so
    /// that rot is found before a reader needs the block (HDFS's block
    /// scanner re-verifies every 3 weeks; disks here are smaller).
    #[serde(deserialize_with = "de_duration", default = "default_scan_interval")]
    pub scan_interval: Duration,
    /// How long after a worker's start its first scan begins: minutes, not
    /// a whole `scan_interval`, so that rot on a worker that restarts often
    /// is still found. A `scan_interval` shorter than this wins.
    #[serde(deserialize_with = "de_duration", default = "default_scan_first_delay")]
    pub scan_first_delay: Duration,
    /// Bytes per second the scanner may read, so that a scan never competes
    /// with tasks for the disk (HDFS's `dfs.block.scanner.volume.bytes.per.second`,
    /// 1 MiB/s there, where a scan has three weeks). Between
    /// [`MIN_SCAN_RATE`] and [`MAX_SCAN_RATE`].
    #[serde(deserialize_with = "de_size", default = "default_scan_rate")]
    pub scan_rate: u64,
    /// How long a block stream may go without moving (no chunk taken by
    /// the next hop, no chunk or answer received) before the peer counts
    /// as failed: a slow or stalled target is then left out of the
    /// pipeline, or a reader goes on to the next replica, as for a dead
    /// one. HTTP/2 keep-alives only catch a peer that is gone, not one
    /// that answers pings and takes no data. HDFS's
    /// `dfs.client.socket-timeout`, whose default (60 s) this is.
    #[serde(deserialize_with = "de_duration", default = "default_stream_timeout")]
    pub stream_timeout: Duration,
}

fn default_stream_timeout() -> Duration {
    Duration::from_secs(60)
}

/// Slowest scan accepted: 64 KiB/s still scans 5 GiB in a day.
pub const MIN_SCAN_RATE: u64 = 64 << 10;
/// Fastest scan accepted: beyond what one disk reads.
pub const MAX_SCAN_RATE: u64 = 10 << 30;

fn default_scan_interval() -> Duration {
    Duration::from_secs(6 * 3600)
}
fn default_scan_first_delay() -> Duration {
    Duration::from_secs(60)
}
fn default_scan_rate() -> u64 {
    16 << 20
}

fn default_block_size() -> u64 {
    64 << 20
}
fn default_replication() -> u32 {
    3
}

impl Default for DfsConfig {
    fn default() -> Self {
        DfsConfig {
            block_size: default_block_size(),
            replication: default_replication(),
            scan_interval: default_scan_interval(),
            scan_first_delay: default_scan_first_delay(),
            scan_rate: default_scan_rate(),
            stream_timeout: default_stream_timeout(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeartbeatConfig {
    #[serde(deserialize_with = "de_duration", default = "default_interval")]
    pub interval: Duration,
    /// Heartbeats missed before a worker is dead. At least 2, so that one late
    /// heartbeat of a busy worker never kills it (Ballista #785).
    #[serde(default = "default_dead_after")]
    pub dead_after: u32,
}

fn default_interval() -> Duration {
    Duration::from_secs(1)
}
fn default_dead_after() -> u32 {
    5
}

impl Default for HeartbeatConfig {
    fn default() -> Self {
        HeartbeatConfig {
            interval: default_interval(),
            dead_after: default_dead_after(),
        }
    }
}

/// `[jobs]`: what the master holds every job's attempts to.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobsConfig {
    /// An attempt whose progress counter has not moved for this long is
    /// killed and tried again on another worker: Hadoop's
    /// `mapreduce.task.timeout`, whose default (600 s) this is. `0s`
    /// turns it off. Never less than two heartbeat intervals in effect
    /// ([`ClusterConfig::task_timeout`]): progress arrives with heartbeats.
    #[serde(deserialize_with = "de_duration", default = "default_task_timeout")]
    pub task_timeout: Duration,
}

fn default_task_timeout() -> Duration {
    Duration::from_secs(600)
}

impl Default for JobsConfig {
    fn default() -> Self {
        JobsConfig {
            task_timeout: default_task_timeout(),
        }
    }
}

impl HeartbeatConfig {
    /// Silence after which a worker is declared dead.
    pub fn expiry(&self) -> Duration {
        self.interval * self.dead_after
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerConfig {
    pub name: String,
    /// Address the worker listens on and advertises to others.
    pub addr: String,
    #[serde(default = "default_rack")]
    pub rack: String,
    #[serde(default = "default_slots")]
    pub map_slots: u32,
    #[serde(default = "default_slots")]
    pub reduce_slots: u32,
    /// Byte bound of the block LRU cache.
    #[serde(deserialize_with = "de_size", default = "default_cache")]
    pub cache: u64,
    pub data_dir: PathBuf,
}

fn default_rack() -> String {
    "default".into()
}
fn default_slots() -> u32 {
    2
}
fn default_cache() -> u64 {
    256 << 20
}

impl ClusterConfig {
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|err| ConfigError::Read {
            path: path.to_path_buf(),
            err,
        })?;
        let mut cfg = Self::parse(&text).map_err(|e| match e {
            ConfigError::Parse { msg, .. } => ConfigError::Parse {
                path: path.to_path_buf(),
                msg,
            },
            other => other,
        })?;
        // The same file is read on every host and in containers, each with
        // the certificates beside it: relative paths follow the file.
        if let (Some(t), Some(base)) = (&mut cfg.tls, path.parent()) {
            t.ca = base.join(&t.ca);
            t.dir = base.join(&t.dir);
        }
        Ok(cfg)
    }

    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let cfg: ClusterConfig = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: PathBuf::new(),
            msg: e.to_string(),
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// The token this process's clients carry when it acts as a worker.
    /// The task timeout in effect: `[jobs] task_timeout`, but at least two
    /// heartbeat intervals, so that an attempt is never timed out between
    /// two reports of its progress; zero when turned off.
    pub fn task_timeout(&self) -> Duration {
        let t = self.jobs.task_timeout;
        if t.is_zero() {
            return t;
        }
        t.max(2 * self.heartbeat.interval)
    }

    pub fn worker_secret(&self) -> &str {
        self.worker_token.as_deref().unwrap_or(&self.token)
    }

    fn validate_users(&self) -> Result<(), ConfigError> {
        let bad = |m: String| Err(ConfigError::Invalid(m));
        let mut tokens = HashSet::from([self.token.as_str()]);
        if let Some(w) = &self.worker_token {
            if w.is_empty() || !tokens.insert(w) {
                return bad("worker_token must be non-empty and differ from token".into());
            }
        }
        let mut names = HashSet::from([crate::role::ADMIN_NAME, crate::role::WORKER_NAME]);
        for u in &self.users {
            let valid = !u.name.is_empty()
                && u.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.@".contains(c));
            if !valid {
                return bad(format!(
                    "users: name {:?} must be non-empty letters, digits, '-', '_', '.' or '@'",
                    u.name
                ));
            }
            if !names.insert(&u.name) {
                return bad(format!(
                    "users: name {:?} is used twice or is reserved (admin, worker)",
                    u.name
                ));
            }
            if u.token.is_empty() || !tokens.insert(&u.token) {
                return bad(format!(
                    "users: the token of {:?} is empty or another's token",
                    u.name
                ));
            }
        }
        Ok(())
    }

    /// Everything but `[scheduler]`'s name and parameters, which only the
    /// policies can judge: `sched::check_config` does, in the processes
    /// that link them (the master, the CLI).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: String| Err(ConfigError::Invalid(m));
        if self.token.is_empty() {
            return bad("token must not be empty".into());
        }
        self.validate_users()?;
        if !is_host_port(&self.master.addr) {
            return bad(format!(
                "master.addr {:?} is not an IP:port or host:port address",
                self.master.addr
            ));
        }
        if self.dfs.stream_timeout.is_zero() {
            return bad("dfs.stream_timeout must be above 0 (default 60s)".into());
        }
        self.master.validate_dirs().map_err(ConfigError::Invalid)?;
        let t = self.master.safemode_threshold;
        if !(0.0..=1.0).contains(&t) {
            return bad(format!(
                "master.safemode_threshold {t} is not a fraction in 0.0..=1.0 (default 0.999)"
            ));
        }
        let (soft, hard) = (self.master.lease_soft, self.master.lease_hard);
        if soft.is_zero() || hard.is_zero() {
            return bad("master.lease_soft and master.lease_hard must be longer than 0".into());
        }
        if soft > hard {
            return bad(format!(
                "master.lease_soft ({soft:?}) is longer than master.lease_hard ({hard:?}): \
                 the master would close a file before another writer could recover it"
            ));
        }
        if let Some(h) = &self.master.http_addr {
            if !is_host_port(h) {
                return bad(format!(
                    "master.http_addr {h:?} is not an IP:port or host:port address"
                ));
            }
            if *h == self.master.addr {
                return bad(format!(
                    "master.http_addr {h} is also master.addr: give the web UI its own port"
                ));
            }
        }
        validate_block_size(self.dfs.block_size).map_err(ConfigError::Invalid)?;
        validate_replication(self.dfs.replication).map_err(ConfigError::Invalid)?;
        if self.dfs.scan_interval < Duration::from_millis(100) {
            return bad("dfs.scan_interval must be at least 100ms".into());
        }
        if !(MIN_SCAN_RATE..=MAX_SCAN_RATE).contains(&self.dfs.scan_rate) {
            return bad(format!(
                "dfs.scan_rate {} bytes/s is outside {MIN_SCAN_RATE}..={MAX_SCAN_RATE} (64KiB to 10GiB a second)",
                self.dfs.scan_rate
            ));
        }
        if self.heartbeat.interval < Duration::from_millis(10) {
            return bad("heartbeat.interval must be at least 10ms".into());
        }
        if self.heartbeat.dead_after < 2 {
            return bad("heartbeat.dead_after must be at least 2 heartbeats".into());
        }
        let mut names = HashSet::new();
        let mut addrs = HashSet::new();
        for w in &self.workers {
            if w.name.is_empty()
                || w.name.len() > 64
                || !w
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
            {
                return bad(format!(
                    "worker name {:?} must be 1-64 characters of [A-Za-z0-9._-]",
                    w.name
                ));
            }
            if !names.insert(&w.name) {
                return bad(format!("worker name {:?} appears twice", w.name));
            }
            if !is_host_port(&w.addr) {
                return bad(format!(
                    "worker {} addr {:?} is not an IP:port or host:port address",
                    w.name, w.addr
                ));
            }
            if !addrs.insert(&w.addr) {
                return bad(format!("worker address {} appears twice", w.addr));
            }
            if w.rack.is_empty() {
                return bad(format!("worker {} has an empty rack", w.name));
            }
            if w.map_slots > MAX_SLOTS || w.reduce_slots > MAX_SLOTS {
                return bad(format!(
                    "worker {} has more than {MAX_SLOTS} slots of a kind",
                    w.name
                ));
            }
            if w.map_slots == 0 && w.reduce_slots == 0 {
                return bad(format!(
                    "worker {} has no slots: give it map_slots or reduce_slots",
                    w.name
                ));
            }
        }
        Ok(())
    }

    pub fn worker(&self, name: &str) -> Option<&WorkerConfig> {
        self.workers.iter().find(|w| w.name == name)
    }

    /// `https` with `[tls]`, else `http`: the scheme of every URL.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() {
            "https"
        } else {
            "http"
        }
    }

    /// The URL clients and workers dial to reach the master.
    pub fn master_url(&self) -> String {
        format!("{}://{}", self.scheme(), self.master.addr)
    }

    /// The web UI's address, when the master serves one (`http_addr`).
    pub fn ui_url(&self) -> Option<String> {
        self.master
            .http_addr
            .as_ref()
            .map(|a| format!("{}://{a}/", self.scheme()))
    }
}

/// An address a process listens on and others dial: `IP:port`, or
/// `host:port` with a DNS name, because an orchestrator (Kubernetes,
/// Docker Swarm) gives a restarted process a new IP but keeps its name.
pub fn is_host_port(s: &str) -> bool {
    if s.parse::<SocketAddr>().is_ok() {
        return true;
    }
    let Some((host, port)) = s.rsplit_once(':') else {
        return false;
    };
    let label = |l: &str| {
        (1..=63).contains(&l.len())
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    port.parse::<u16>().is_ok()
        && (1..=253).contains(&host.len())
        && host.split('.').all(label)
        // All digits and dots is a mistyped IP, not a name.
        && !host.chars().all(|c| c.is_ascii_digit() || c == '.')
}

pub fn validate_block_size(n: u64) -> Result<(), String> {
    if !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&n) {
        return Err(format!(
            "block size {n} is out of range: it must be between 64KiB and 2GiB"
        ));
    }
    Ok(())
}

/// A map's sort buffer, refused with a message naming its bounds.
pub fn validate_sort_buffer(n: u64) -> Result<(), String> {
    if !(MIN_SORT_BUFFER..=MAX_SORT_BUFFER).contains(&n) {
        return Err(format!(
            "sort buffer {n} bytes is out of range: it must be at least 1MiB and below 4GiB"
        ));
    }
    Ok(())
}

/// A reduce's `shuffle_memory`, as the job's parameter spells it: a size
/// within its bounds, or a message saying why not.
pub fn parse_shuffle_memory(v: &str) -> Result<u64, String> {
    let n = crate::units::parse_size(v).map_err(|e| format!("bad shuffle_memory {v:?}: {e}"))?;
    if !(MIN_SHUFFLE_MEMORY..=MAX_SHUFFLE_MEMORY).contains(&n) {
        return Err(format!(
            "shuffle_memory {v} is out of range: it must be between 64KiB and 4GiB"
        ));
    }
    Ok(n)
}

pub fn validate_replication(n: u32) -> Result<(), String> {
    if n == 0 || n > MAX_REPLICATION {
        return Err(format!(
            "replication {n} is out of range: it must be between 1 and {MAX_REPLICATION}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
token = "t"
[master]
addr = "127.0.0.1:7070"
data_dir = "/tmp/m"
[[workers]]
name = "w1"
addr = "127.0.0.1:7101"
data_dir = "/tmp/w1"
cache = "1MiB"
"#;

    /// The default task timeout stands beside any heartbeat interval (a
    /// cluster of 600 s heartbeats once refused to start), and is never
    /// less than two intervals in effect.
    #[test]
    fn the_task_timeout_in_effect_outlasts_two_heartbeats() {
        let c =
            ClusterConfig::parse(&format!("{BASE}\n[heartbeat]\ninterval = \"600s\"\n")).unwrap();
        assert_eq!(c.task_timeout(), Duration::from_secs(1200));
        let c = ClusterConfig::parse(&format!("{BASE}\n[jobs]\ntask_timeout = \"2s\"\n")).unwrap();
        assert_eq!(c.task_timeout(), Duration::from_secs(2));
        let c = ClusterConfig::parse(&format!("{BASE}\n[jobs]\ntask_timeout = \"0s\"\n")).unwrap();
        assert!(c.task_timeout().is_zero());
        assert!(
            ClusterConfig::parse(&format!("{BASE}\n[dfs]\nstream_timeout = \"0s\"\n")).is_err()
        );
    }

    #[test]
    fn debug_never_prints_a_token_and_users_are_checked() {
        let text = format!(
            "{}\n[[users]]\nname = \"ann\"\ntoken = \"ann-secret\"\nrole = \"user\"\n",
            BASE.replace(
                "token = \"t\"",
                "token = \"adm-secret\"\nworker_token = \"wrk-secret\""
            )
        );
        let c = ClusterConfig::parse(&text).unwrap();
        assert_eq!(c.users.len(), 1);
        assert_eq!(c.worker_secret(), "wrk-secret");
        let shown = format!("{c:?} {c:#?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("ann"));
        let dup = text.replace("ann-secret", "adm-secret");
        assert!(ClusterConfig::parse(&dup)
            .unwrap_err()
            .to_string()
            .contains("another's token"));
        let reserved = text.replace("name = \"ann\"", "name = \"admin\"");
        assert!(ClusterConfig::parse(&reserved)
            .unwrap_err()
            .to_string()
            .contains("reserved"));
        let role = text.replace("role = \"user\"", "role = \"root\"");
        assert!(ClusterConfig::parse(&role).is_err());
    }

    #[test]
    fn addresses_may_be_dns_names_as_orchestrators_give() {
        let named = BASE
            .replace("127.0.0.1:7070", "mr-master:7070")
            .replace("127.0.0.1:7101", "mr-worker-0.mr-worker.mr.svc:7100");
        let c = ClusterConfig::parse(&named).unwrap();
        assert_eq!(c.master.addr, "mr-master:7070");
        assert_eq!(c.workers[0].addr, "mr-worker-0.mr-worker.mr.svc:7100");
        for bad in [
            "mr-master",
            "mr-master:",
            "mr-master:70700",
            "-bad:7070",
            "a..b:7070",
            "under_score:7070",
            "10.0.0.300:7070",
            ":7070",
        ] {
            let text = BASE.replace("127.0.0.1:7070", bad);
            assert!(ClusterConfig::parse(&text).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn defaults() {
        let c = ClusterConfig::parse(BASE).unwrap();
        assert_eq!(c.dfs.block_size, 64 << 20);
        assert_eq!(c.dfs.replication, 3);
        assert_eq!(c.heartbeat.interval, Duration::from_secs(1));
        assert_eq!(c.workers[0].cache, 1 << 20);
        assert_eq!(c.workers[0].map_slots, 2);
        assert_eq!(c.master.http_addr, None);
    }

    #[test]
    fn lease_limits_default_to_hdfs_and_are_checked() {
        let c = ClusterConfig::parse(BASE).unwrap();
        assert_eq!(c.master.lease_soft, Duration::from_secs(60));
        assert_eq!(c.master.lease_hard, Duration::from_secs(3600));
        let with = |soft: &str, hard: &str| {
            BASE.replace(
                "data_dir = \"/tmp/m\"",
                &format!("data_dir = \"/tmp/m\"\nlease_soft = \"{soft}\"\nlease_hard = \"{hard}\""),
            )
        };
        let c = ClusterConfig::parse(&with("2s", "10s")).unwrap();
        assert_eq!(
            (c.master.lease_soft, c.master.lease_hard),
            (Duration::from_secs(2), Duration::from_secs(10))
        );
        let e = ClusterConfig::parse(&with("10s", "2s")).unwrap_err();
        assert!(e.to_string().contains("lease_soft"), "{e}");
        assert!(ClusterConfig::parse(&with("0s", "2s")).is_err());
        assert!(ClusterConfig::parse(&with("2s", "2s")).is_ok());
    }

    #[test]
    fn speculative_is_off_by_default_and_parsed() {
        assert!(!ClusterConfig::parse(BASE).unwrap().scheduler.speculative);
        let on = format!("{BASE}[scheduler]\nspeculative = true\n");
        assert!(ClusterConfig::parse(&on).unwrap().scheduler.speculative);
        let typo = format!("{BASE}[scheduler]\nspeculation = true\n");
        assert!(
            ClusterConfig::parse(&typo).is_err(),
            "unknown fields are refused"
        );
    }

    #[test]
    fn http_addr() {
        let with = |a: &str| {
            BASE.replace(
                "data_dir = \"/tmp/m\"",
                &format!("data_dir = \"/tmp/m\"\nhttp_addr = \"{a}\""),
            )
        };
        let c = ClusterConfig::parse(&with("127.0.0.1:7080")).unwrap();
        assert_eq!(c.master.http_addr.as_deref(), Some("127.0.0.1:7080"));
        let e = ClusterConfig::parse(&with("nowhere")).unwrap_err();
        assert!(e.to_string().contains("http_addr"), "{e}");
        let e = ClusterConfig::parse(&with("127.0.0.1:7070")).unwrap_err();
        assert!(e.to_string().contains("own port"), "{e}");
    }

    #[test]
    fn refuses_bad_fields() {
        let e = ClusterConfig::parse(&BASE.replace("\"t\"", "\"\"")).unwrap_err();
        assert!(e.to_string().contains("token"));
        let e =
            ClusterConfig::parse(&format!("{BASE}\n[dfs]\nblock_size = \"1KiB\"\n")).unwrap_err();
        assert!(e.to_string().contains("block size"), "{e}");
        let e = ClusterConfig::parse(&format!("{BASE}\nbogus = 1\n")).unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let dup = format!(
            "{BASE}\n[[workers]]\nname = \"w1\"\naddr = \"127.0.0.1:7102\"\ndata_dir = \"/x\"\n"
        );
        assert!(ClusterConfig::parse(&dup)
            .unwrap_err()
            .to_string()
            .contains("twice"));
    }

    /// Several metadata directories: `data_dir` first, none by default;
    /// the same directory twice, or one inside another, is refused with
    /// both named.
    #[test]
    fn metadata_dirs_are_distinct_and_not_nested() {
        assert!(ClusterConfig::parse(BASE)
            .unwrap()
            .master
            .data_dirs
            .is_empty());
        let with = |dirs: &str| {
            BASE.replace(
                "data_dir = \"/tmp/m\"",
                &format!("data_dir = \"/tmp/m\"\ndata_dirs = {dirs}"),
            )
        };
        let c = ClusterConfig::parse(&with(r#"["/b/m", "/c/m"]"#)).unwrap();
        assert_eq!(
            c.master.metadata_dirs(),
            [
                PathBuf::from("/tmp/m"),
                PathBuf::from("/b/m"),
                PathBuf::from("/c/m")
            ]
        );
        // Siblings sharing a prefix are not nested.
        assert!(ClusterConfig::parse(&with(r#"["/tmp/m2"]"#)).is_ok());
        for (dirs, both) in [
            (r#"["/tmp/m"]"#, ["/tmp/m", "/tmp/m"]),
            (r#"["/tmp/m/"]"#, ["/tmp/m", "/tmp/m/"]),
            (r#"["/b", "/c", "/b"]"#, ["/b", "/b"]),
            (r#"["/b", "/b/./"]"#, ["/b", "/b/./"]),
        ] {
            let e = ClusterConfig::parse(&with(dirs)).unwrap_err().to_string();
            assert!(e.contains("the same directory"), "{dirs}: {e}");
            assert!(e.contains(both[0]) && e.contains(both[1]), "{dirs}: {e}");
        }
        for (dirs, inner, outer) in [
            (r#"["/tmp/m/copy"]"#, "/tmp/m/copy", "/tmp/m"),
            (r#"["/tmp"]"#, "/tmp/m", "/tmp"),
            (r#"["/b/c", "/b"]"#, "/b/c", "/b"),
        ] {
            let e = ClusterConfig::parse(&with(dirs)).unwrap_err().to_string();
            assert!(
                e.contains(&format!("{inner} is inside {outer}")),
                "{dirs}: {e}"
            );
        }
    }

    /// The scanner's first pass and throttle are settings, and a rate that
    /// would never finish (or never pause) is refused by name.
    #[test]
    fn scanner_keys_are_parsed_and_bounded() {
        let c = ClusterConfig::parse(BASE).unwrap();
        assert_eq!(c.dfs.scan_first_delay, Duration::from_secs(60));
        assert_eq!(c.dfs.scan_rate, 16 << 20);
        let set = |k: &str| format!("{BASE}[dfs]\n{k}\n");
        let c =
            ClusterConfig::parse(&set("scan_first_delay = \"5s\"\nscan_rate = \"1MiB\"")).unwrap();
        assert_eq!(c.dfs.scan_first_delay, Duration::from_secs(5));
        assert_eq!(c.dfs.scan_rate, 1 << 20);
        for bad in [
            "scan_rate = \"0\"",
            "scan_rate = \"1KiB\"",
            "scan_rate = \"1TiB\"",
        ] {
            let e = ClusterConfig::parse(&set(bad)).unwrap_err();
            assert!(e.to_string().contains("dfs.scan_rate"), "{bad}: {e}");
        }
        let e = ClusterConfig::parse(&set("scan_interval = \"0s\"")).unwrap_err();
        assert!(e.to_string().contains("scan_interval"), "{e}");
    }

    /// Slot counts a worker could not honour are refused at load.
    #[test]
    fn slot_counts_are_bounded() {
        let with = |m: u32, r: u32| {
            BASE.replace(
                "cache = \"1MiB\"",
                &format!("cache = \"1MiB\"\nmap_slots = {m}\nreduce_slots = {r}"),
            )
        };
        assert!(ClusterConfig::parse(&with(0, 1)).is_ok());
        let e = ClusterConfig::parse(&with(0, 0)).unwrap_err();
        assert!(e.to_string().contains("no slots"), "{e}");
        let e = ClusterConfig::parse(&with(10_000, 2)).unwrap_err();
        assert!(e.to_string().contains("256"), "{e}");
    }

    /// An oversized `shuffle_memory` or sort buffer gets a clear error.
    #[test]
    fn shuffle_memory_and_sort_buffer_are_bounded() {
        assert_eq!(parse_shuffle_memory("300KiB").unwrap(), 300 << 10);
        let e = parse_shuffle_memory("1TiB").unwrap_err();
        assert!(e.contains("shuffle_memory") && e.contains("4GiB"), "{e}");
        assert!(parse_shuffle_memory("1KiB").is_err());
        assert!(parse_shuffle_memory("lots")
            .unwrap_err()
            .contains("bad shuffle_memory"));
        assert!(validate_sort_buffer(64 << 20).is_ok());
        assert!(validate_sort_buffer(4 << 30).unwrap_err().contains("4GiB"));
        assert!(validate_sort_buffer(1 << 10).is_err());
    }
}
