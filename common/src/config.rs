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

mod dfs;
mod heartbeat;
mod limits;
mod master;
mod network;
mod scheduler;
#[cfg(test)]
mod tests;
mod tls;
mod worker;

pub use dfs::{DfsConfig, MAX_SCAN_RATE, MIN_SCAN_RATE};
pub use heartbeat::{HeartbeatConfig, JobsConfig};
pub use limits::*;
pub use master::MasterConfig;
pub use network::NetworkConfig;
pub use scheduler::{SchedulerConfig, SchedulerSpec};
pub use tls::{TlsConfig, CLIENT_NAME};
pub use worker::WorkerConfig;

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
