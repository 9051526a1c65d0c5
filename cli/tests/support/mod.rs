//! A real loopback cluster for integration tests: the `mr-master` and
//! `mr-worker` binaries as separate processes on OS-chosen ports, driven
//! through the real `mr` client.
#![allow(dead_code)]

use serde_json::Value;
use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub struct Opts {
    pub workers: usize,
    pub racks: usize,
    pub block_size: &'static str,
    pub replication: u32,
    pub cache: &'static str,
    pub heartbeat: &'static str,
    pub dead_after: u32,
    pub scan_interval: &'static str,
    /// TOML added after the cluster token (e.g. `[[users]]` tables).
    pub extra_toml: &'static str,
    /// Lines added to the `[master]` table (e.g. `lease_soft = "2s"`),
    /// which `extra_toml` cannot reach: TOML defines a table once.
    pub master_toml: &'static str,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            workers: 4,
            racks: 2,
            block_size: "1MiB",
            replication: 3,
            cache: "8MiB",
            heartbeat: "100ms",
            dead_after: 10,
            scan_interval: "6h",
            extra_toml: "",
            master_toml: "",
        }
    }
}

pub struct Cluster {
    pub dir: PathBuf,
    pub config: PathBuf,
    pub token: String,
    bin: PathBuf,
    procs: HashMap<String, Child>,
    pub workers: Vec<String>,
    /// The web UI's address, when the cluster serves one ([`Cluster::start_tls`]).
    pub http: Option<String>,
}

fn bin_dir() -> PathBuf {
    let mr = PathBuf::from(env!("CARGO_BIN_EXE_mr"));
    let dir = mr.parent().unwrap().to_path_buf();
    for b in ["mr-master", "mr-worker"] {
        assert!(
            dir.join(b).exists(),
            "{} is missing: build the daemons first with `cargo build --workspace --bins` (scripts/test.sh does)",
            dir.join(b).display()
        );
    }
    dir
}

/// Ports the OS hands out, all held until every one is chosen so that no
/// two are equal; released just before the daemons bind them.
fn free_ports(n: usize) -> Vec<u16> {
    let ls: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    ls.iter().map(|l| l.local_addr().unwrap().port()).collect()
}

impl Cluster {
    pub fn start(name: &str, o: Opts) -> Cluster {
        Self::start_with(name, o, false)
    }

    /// Like [`Cluster::start`], with a web UI and TLS on every port: the
    /// certificates made by `mr config init --tls`, as a person would.
    pub fn start_tls(name: &str, o: Opts) -> Cluster {
        Self::start_with(name, o, true)
    }

    fn start_with(name: &str, o: Opts, tls: bool) -> Cluster {
        let dir = std::env::temp_dir().join(format!("mr-it-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let ports = free_ports(o.workers + 2);
        let http = tls.then(|| format!("127.0.0.1:{}", ports[o.workers + 1]));
        let token = format!("tok-{name}-{}", std::process::id());
        let mut toml = format!(
            "token = \"{token}\"\n{}\n\n[master]\naddr = \"127.0.0.1:{}\"\ndata_dir = \"{}\"\n{}\n\
             [dfs]\nblock_size = \"{}\"\nreplication = {}\nscan_interval = \"{}\"\n\n\
             [heartbeat]\ninterval = \"{}\"\ndead_after = {}\n",
            o.extra_toml,
            ports[0],
            dir.join("master").display(),
            o.master_toml,
            o.block_size,
            o.replication,
            o.scan_interval,
            o.heartbeat,
            o.dead_after
        );
        let mut workers = Vec::new();
        if let Some(h) = &http {
            toml = toml.replace("[dfs]", &format!("http_addr = \"{h}\"\n\n[dfs]"));
        }
        for (i, port) in ports.iter().enumerate().take(o.workers + 1).skip(1) {
            let w = format!("w{i}");
            toml.push_str(&format!(
                "\n[[workers]]\nname = \"{w}\"\naddr = \"127.0.0.1:{}\"\nrack = \"r{}\"\n\
                 map_slots = 2\nreduce_slots = 2\ncache = \"{}\"\ndata_dir = \"{}\"\n",
                port,
                (i - 1) % o.racks + 1,
                o.cache,
                dir.join(&w).display()
            ));
            workers.push(w);
        }
        let config = dir.join("cluster.toml");
        std::fs::write(&config, toml).unwrap();
        let mut c = Cluster {
            dir,
            config,
            token,
            bin: bin_dir(),
            procs: HashMap::new(),
            workers,
            http,
        };
        if tls {
            c.mr_ok(&["config", "init", "--tls"]);
        }
        c.start_proc("master");
        for w in c.workers.clone() {
            c.start_proc(&w);
        }
        c.wait_alive(o.workers, Duration::from_secs(30));
        c
    }

    pub fn start_proc(&mut self, name: &str) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("{name}.log")))
            .unwrap();
        let mut cmd = if name == "master" {
            Command::new(self.bin.join("mr-master"))
        } else {
            let mut c = Command::new(self.bin.join("mr-worker"));
            c.args(["--name", name]);
            c
        };
        let child = cmd
            .arg("--config")
            .arg(&self.config)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.procs.insert(name.to_string(), child);
    }

    /// SIGKILL: a crash, not a shutdown.
    pub fn kill(&mut self, name: &str) {
        if let Some(mut c) = self.procs.remove(name) {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM, a graceful stop, then waits up to `limit` for the process
    /// to exit; returns how long that took.
    pub fn terminate(&mut self, name: &str, limit: Duration) -> Duration {
        let mut c = self.procs.remove(name).expect("a running process");
        let t = Instant::now();
        let sent = Command::new("kill")
            .args(["-TERM", &c.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -TERM {name} failed");
        while t.elapsed() < limit {
            if c.try_wait().unwrap().is_some() {
                return t.elapsed();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = c.kill();
        let _ = c.wait();
        panic!(
            "{name} did not exit within {limit:?} of SIGTERM\n{}",
            self.logs_tail()
        );
    }

    /// `mr` as the user whose token is `token` (a copy of the cluster file
    /// with that token as the client's).
    pub fn mr_as(&self, token: &str, args: &[&str]) -> Output {
        // The client's token first; the users' tables are the master's.
        let text = std::fs::read_to_string(&self.config).unwrap();
        let rest = &text[text.find("[master]").unwrap()..];
        let text = format!("token = \"{token}\"\n\n{rest}");
        let mine = self.dir.join(format!("client-{token}.toml"));
        std::fs::write(&mine, text).unwrap();
        Command::new(self.bin.join("mr"))
            .arg("--config")
            .arg(&mine)
            .args(args)
            .output()
            .unwrap()
    }

    pub fn mr(&self, args: &[&str]) -> Output {
        Command::new(self.bin.join("mr"))
            .arg("--config")
            .arg(&self.config)
            .args(args)
            .output()
            .unwrap()
    }

    /// Runs `mr`, asserting success; returns stdout.
    pub fn mr_ok(&self, args: &[&str]) -> String {
        let out = self.mr(args);
        assert!(
            out.status.success(),
            "mr {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            self.logs_tail()
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The paths of the `part-*` files of job output `dir`, in part order.
    pub fn part_paths(&self, dir: &str) -> Vec<String> {
        let ls = self.json(&["fs", "ls", dir, "--json"]);
        let mut names: Vec<String> = ls
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap().to_string())
            .filter(|p| p.rsplit('/').next().unwrap().starts_with("part-"))
            .collect();
        names.sort();
        names
    }

    /// Every part of job output `dir`, concatenated in part order.
    pub fn output(&self, dir: &str) -> Vec<u8> {
        self.part_paths(dir)
            .iter()
            .flat_map(|p| self.mr(&["fs", "cat", p]).stdout)
            .collect()
    }

    pub fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.mr_ok(args)).unwrap()
    }

    pub fn status(&self) -> Value {
        self.json(&["cluster", "status", "--json"])
    }

    pub fn stat(&self, path: &str) -> Value {
        self.json(&["fs", "stat", path, "--json"])
    }

    /// Polls `check` every 100 ms until it holds or `limit` passes.
    pub fn wait_for(&self, what: &str, limit: Duration, mut check: impl FnMut(&Cluster) -> bool) {
        let t = Instant::now();
        while t.elapsed() < limit {
            if check(self) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "timed out after {limit:?} waiting for {what}\n{}",
            self.logs_tail()
        );
    }

    pub fn wait_alive(&self, n: usize, limit: Duration) {
        self.wait_for(&format!("{n} alive workers"), limit, |c| {
            let out = c.mr(&["cluster", "status", "--json"]);
            if !out.status.success() {
                return false;
            }
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            v["workers"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|w| w["state"] == "alive")
                .count()
                == n
        });
    }

    pub fn worker_state(&self, name: &str) -> String {
        let v = self.status();
        v["workers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["name"] == name)
            .map(|w| w["state"].as_str().unwrap().to_string())
            .unwrap()
    }

    /// Worker name → rack, from `cluster status`.
    pub fn racks(&self) -> HashMap<String, String> {
        self.status()["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                (
                    w["name"].as_str().unwrap().to_string(),
                    w["rack"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    pub fn block_file(&self, worker: &str, id: u64) -> PathBuf {
        self.dir
            .join(worker)
            .join("blocks")
            .join(format!("blk_{id}"))
    }

    pub fn logs_tail(&self) -> String {
        let mut s = String::new();
        for name in std::iter::once("master".to_string()).chain(self.workers.iter().cloned()) {
            let p = self.dir.join(format!("{name}.log"));
            if let Ok(t) = std::fs::read_to_string(&p) {
                let lines: Vec<&str> = t.lines().collect();
                let from = lines.len().saturating_sub(15);
                s.push_str(&format!(
                    "--- {name}.log ---\n{}\n",
                    lines[from..].join("\n")
                ));
            }
        }
        s
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for (_, mut c) in self.procs.drain() {
            let _ = c.kill();
            let _ = c.wait();
        }
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Deterministic pseudo-random bytes (xorshift), so a failure reproduces.
pub fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut v = vec![0u8; n];
    rng.fill(&mut v);
    v
}

pub fn write_file(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p
}
