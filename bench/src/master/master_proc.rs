//! The master under test: the real `mr-master` binary as a child process,
//! on a cluster file this bench writes into a directory of its own (the
//! master's data directory inside it), on ports the OS chose. Measured
//! from outside, as an operator would: its resident memory from
//! `/proc/PID/status`, its CPU time from `/proc/PID/stat`, its start-up as
//! the time from spawn until it answers a gRPC call.
//!
//! Dropping a [`MasterProc`] kills the child and removes the directory, so
//! that an error or a Ctrl-C (which drops the bench's future) leaves
//! nothing behind.

use anyhow::{bail, Context};
use common::config::ClusterConfig;
use rpc::dfs::MasterConn;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// What the cluster file says, besides the ports and directories.
#[derive(Debug, Clone)]
pub struct ClusterSpec {
    pub workers: usize,
    pub racks: usize,
    pub map_slots: u32,
    pub reduce_slots: u32,
    pub heartbeat: Duration,
    pub policy: String,
    pub block_size: u64,
    pub replication: u32,
}

/// The emulated worker `i`'s name, rack and advertised address, as the
/// cluster file lists them. The master never dials a worker, so the
/// addresses only need to be distinct: one loopback IP per worker (the
/// 127/8 block has 16 M of them), whatever N.
pub fn worker_name(i: usize) -> String {
    format!("w{:05}", i + 1)
}

/// The index of a worker named by [`worker_name`].
pub fn worker_index(name: &str) -> Option<usize> {
    name.strip_prefix('w')?
        .parse::<usize>()
        .ok()?
        .checked_sub(1)
}

pub fn worker_rack(i: usize, racks: usize) -> String {
    format!("r{:02}", i % racks.max(1) + 1)
}

pub fn worker_addr(i: usize) -> String {
    let n = i + 1;
    format!(
        "127.{}.{}.{}:7101",
        1 + ((n >> 16) & 0x7f),
        (n >> 8) & 0xff,
        n & 0xff
    )
}

/// The cluster file's text: every emulated worker listed, since the master
/// refuses a registration whose name `[[workers]]` does not hold.
pub fn cluster_toml(
    s: &ClusterSpec,
    dir: &Path,
    addr: &str,
    http_addr: &str,
    token: &str,
    worker_token: &str,
) -> String {
    let mut t = String::with_capacity(200 + s.workers * 130);
    let _ = write!(
        t,
        "# Written by `mr bench master`: the master under test and {} emulated workers.\n\
         token = \"{token}\"\nworker_token = \"{worker_token}\"\n\n\
         [master]\naddr = \"{addr}\"\nhttp_addr = \"{http_addr}\"\ndata_dir = {:?}\n\n\
         [heartbeat]\ninterval = \"{}ms\"\n\n\
         [dfs]\nblock_size = {}\nreplication = {}\n\n\
         [scheduler]\nname = \"{}\"\n",
        s.workers,
        dir.join("master").display().to_string(),
        s.heartbeat.as_millis(),
        s.block_size,
        s.replication,
        s.policy,
    );
    for i in 0..s.workers {
        let _ = write!(
            t,
            "\n[[workers]]\nname = \"{}\"\naddr = \"{}\"\nrack = \"{}\"\nmap_slots = {}\nreduce_slots = {}\ndata_dir = \"/nonexistent/{}\"\n",
            worker_name(i),
            worker_addr(i),
            worker_rack(i, s.racks),
            s.map_slots,
            s.reduce_slots,
            worker_name(i),
        );
    }
    t
}

/// Where `mr-master` is: `$MR_BIN_DIR` when set (as the scripts use it),
/// else beside the running `mr`.
pub fn master_binary() -> anyhow::Result<PathBuf> {
    let dir = match std::env::var_os("MR_BIN_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => std::env::current_exe()
            .context("cannot find the mr binary's directory")?
            .parent()
            .context("the mr binary has no directory")?
            .to_path_buf(),
    };
    let bin = dir.join("mr-master");
    if !bin.is_file() {
        bail!(
            "{} is missing: `mr bench master` runs the real master beside `mr` (or in $MR_BIN_DIR); \
             build it with `cargo build --release -p master` (or without --release for a debug `mr`)",
            bin.display()
        );
    }
    Ok(bin)
}

/// Two free loopback ports: bound together (so they differ), then released
/// for the master to bind.
fn free_ports() -> anyhow::Result<(u16, u16)> {
    let a = std::net::TcpListener::bind("127.0.0.1:0").context("cannot bind a loopback port")?;
    let b = std::net::TcpListener::bind("127.0.0.1:0").context("cannot bind a loopback port")?;
    Ok((a.local_addr()?.port(), b.local_addr()?.port()))
}

/// The running master and everything it was started with.
pub struct MasterProc {
    pub dir: PathBuf,
    pub config_path: PathBuf,
    pub cfg: ClusterConfig,
    pub addr: String,
    pub http_addr: String,
    bin: PathBuf,
    child: Option<tokio::process::Child>,
    /// When the current child was spawned.
    pub spawned: Instant,
}

impl MasterProc {
    /// Writes the cluster file into a new directory and starts the master
    /// on it; does not wait for it to answer ([`MasterProc::wait_ready`]).
    pub fn start(bin: PathBuf, spec: &ClusterSpec) -> anyhow::Result<Self> {
        let nonce = fastrand::u64(..);
        let dir = std::env::temp_dir().join(format!(
            "mr-bench-master-{}-{nonce:016x}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let (p1, p2) = free_ports()?;
        let addr = format!("127.0.0.1:{p1}");
        let http_addr = format!("127.0.0.1:{p2}");
        let token = format!("bench-admin-{:016x}", fastrand::u64(..));
        let worker_token = format!("bench-worker-{:016x}", fastrand::u64(..));
        let text = cluster_toml(spec, &dir, &addr, &http_addr, &token, &worker_token);
        let config_path = dir.join("cluster.toml");
        let mut me = MasterProc {
            dir,
            config_path,
            // Filled below: the guard must exist before anything can fail,
            // so that the directory is removed whatever happens.
            cfg: ClusterConfig::parse(&text)
                .map_err(|e| anyhow::anyhow!("the bench wrote a bad cluster file: {e}"))?,
            addr,
            http_addr,
            bin,
            child: None,
            spawned: Instant::now(),
        };
        std::fs::write(&me.config_path, &text)
            .with_context(|| format!("cannot write {}", me.config_path.display()))?;
        me.spawn()?;
        Ok(me)
    }

    /// Starts the master (again) on the same cluster file and data directory.
    pub fn spawn(&mut self) -> anyhow::Result<()> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("master.log"))
            .context("cannot open the master's log file")?;
        let child = tokio::process::Command::new(&self.bin)
            .arg("--config")
            .arg(&self.config_path)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", self.bin.display()))?;
        self.spawned = Instant::now();
        self.child = Some(child);
        Ok(())
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.id())
    }

    pub fn admin_conn(&self) -> anyhow::Result<MasterConn> {
        Ok(rpc::dfs::master_conn(&self.addr, &self.cfg.token)?)
    }

    pub fn worker_conn(&self) -> anyhow::Result<MasterConn> {
        Ok(rpc::dfs::master_conn(&self.addr, self.cfg.worker_secret())?)
    }

    /// The last lines of the master's log, for an error message.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.join("master.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let from = lines.len().saturating_sub(15);
        lines[from..].join("\n")
    }

    /// Fails with the log when the child has exited.
    fn check_alive(&mut self) -> anyhow::Result<()> {
        if let Some(c) = &mut self.child {
            if let Some(st) = c.try_wait()? {
                bail!(
                    "the master exited ({st}); the end of its log:\n{}",
                    self.log_tail()
                );
            }
        }
        Ok(())
    }

    /// Waits until the master answers `ClusterStatus`; returns the time
    /// since spawn.
    pub async fn wait_ready(&mut self, within: Duration) -> anyhow::Result<Duration> {
        let conn = self.admin_conn()?;
        loop {
            let mut c = conn.clone();
            let call = c.cluster_status(proto::Empty {});
            if let Ok(Ok(_)) = tokio::time::timeout(Duration::from_secs(2), call).await {
                return Ok(self.spawned.elapsed());
            }
            self.check_alive()?;
            if self.spawned.elapsed() > within {
                bail!(
                    "the master did not answer within {within:?}; the end of its log:\n{}",
                    self.log_tail()
                );
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Waits until the master is out of safe mode; returns the time since
    /// spawn and the blocks it had reported of its total.
    pub async fn wait_safe_mode_off(
        &mut self,
        within: Duration,
    ) -> anyhow::Result<(Duration, u64, u64)> {
        let conn = self.admin_conn()?;
        loop {
            let mut c = conn.clone();
            let call = c.safe_mode(proto::SafeModeRequest {
                action: "get".into(),
            });
            if let Ok(Ok(r)) = tokio::time::timeout(Duration::from_secs(5), call).await {
                let r = r.into_inner();
                if !r.on {
                    return Ok((self.spawned.elapsed(), r.reported_blocks, r.total_blocks));
                }
            }
            self.check_alive()?;
            if self.spawned.elapsed() > within {
                bail!(
                    "the master stayed in safe mode for {within:?}; the end of its log:\n{}",
                    self.log_tail()
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The master's resident memory, bytes (`VmRSS`).
    pub fn rss(&self) -> anyhow::Result<u64> {
        let pid = self.pid().context("the master is not running")?;
        let s = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .with_context(|| format!("cannot read /proc/{pid}/status"))?;
        s.lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .context("no VmRSS in /proc/PID/status")
    }

    /// CPU seconds the master has used (user + system), if it runs.
    pub fn cpu_s(&self) -> Option<f64> {
        cpu_seconds(&format!("/proc/{}/stat", self.pid()?))
    }

    /// SIGTERM, then waits for the exit (SIGKILL after `within`). Returns
    /// how long the stop took.
    pub async fn stop(&mut self, within: Duration) -> anyhow::Result<Duration> {
        let Some(mut child) = self.child.take() else {
            return Ok(Duration::ZERO);
        };
        let t = Instant::now();
        if let Some(pid) = child.id() {
            // No libc in this crate: the `kill` utility sends the signal.
            let sent = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
            if !sent.is_ok_and(|s| s.success()) {
                let _ = child.start_kill();
            }
        }
        match tokio::time::timeout(within, child.wait()).await {
            Ok(r) => {
                r.context("waiting for the master to exit")?;
            }
            Err(_) => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                bail!(
                    "the master did not stop within {within:?} of SIGTERM (killed); the end of its log:\n{}",
                    self.log_tail()
                );
            }
        }
        Ok(t.elapsed())
    }
}

impl Drop for MasterProc {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.start_kill();
            // Give the kill a moment to land before the files go.
            for _ in 0..50 {
                if c.try_wait().ok().flatten().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// User + system CPU seconds from a `/proc/.../stat` file.
pub fn cpu_seconds(path: &str) -> Option<f64> {
    let s = std::fs::read_to_string(path).ok()?;
    let after = s.rsplit(')').next()?;
    let f: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15: 11 and 12 after the name.
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_addresses_and_the_cluster_file() {
        assert_eq!(worker_name(0), "w00001");
        assert_eq!(worker_index("w00001"), Some(0));
        assert_eq!(worker_index(&worker_name(123_456)), Some(123_456));
        assert_eq!(worker_index("x1"), None);
        let addrs: std::collections::HashSet<String> = (0..70_000).map(worker_addr).collect();
        assert_eq!(addrs.len(), 70_000);
        let spec = ClusterSpec {
            workers: 3,
            racks: 2,
            map_slots: 2,
            reduce_slots: 1,
            heartbeat: Duration::from_millis(200),
            policy: "fifo".into(),
            block_size: 1 << 20,
            replication: 3,
        };
        let t = cluster_toml(
            &spec,
            Path::new("/tmp/x"),
            "127.0.0.1:1",
            "127.0.0.1:2",
            "a",
            "b",
        );
        let cfg = ClusterConfig::parse(&t).unwrap();
        assert_eq!(cfg.workers.len(), 3);
        assert_eq!(cfg.workers[2].rack, "r01");
        assert_eq!(cfg.heartbeat.interval, Duration::from_millis(200));
        assert_eq!(cfg.worker_secret(), "b");
    }
}
