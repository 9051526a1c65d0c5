//! A real loopback cluster for the HTTP tests: the master in-process on
//! listeners the OS chose (gRPC and HTTP), the `mr-worker` binaries as
//! separate processes, the `mr` CLI for loading data and running jobs, and a
//! tiny HTTP/1.1 client (one request per connection) so that the tests need
//! no HTTP client crate.
#![allow(dead_code)]

use serde_json::Value;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

pub struct Opts {
    /// Workers in cluster.toml.
    pub workers: usize,
    /// Workers started (the first ones); the others stay dead.
    pub start: usize,
    pub racks: usize,
}

pub struct Cluster {
    pub dir: PathBuf,
    pub config: PathBuf,
    pub token: String,
    /// A `reader`'s token: sees every job (all the admin's) in summary.
    pub reader_token: String,
    pub grpc: SocketAddr,
    pub http: SocketAddr,
    pub workers: Vec<String>,
    bin: PathBuf,
    procs: Vec<Child>,
    /// Dropped to stop the master.
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// The in-process master.
    master: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
}

/// Where cargo put this package's binaries; the workspace's other binaries
/// (`mr-worker`, `mr`) are built beside them by `cargo build --workspace
/// --bins`, which scripts/test.sh runs first.
pub fn bin_dir() -> PathBuf {
    let master = PathBuf::from(env!("CARGO_BIN_EXE_mr-master"));
    let dir = master.parent().unwrap().to_path_buf();
    for b in ["mr-worker", "mr"] {
        assert!(
            dir.join(b).exists(),
            "{} is missing: build the daemons first with `cargo build --workspace --bins` (scripts/test.sh does)",
            dir.join(b).display()
        );
    }
    dir
}

/// Ports for the worker processes, which bind what cluster.toml says: all
/// held until every one is chosen so that no two are equal.
fn free_ports(n: usize) -> Vec<u16> {
    let ls: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    ls.iter().map(|l| l.local_addr().unwrap().port()).collect()
}

impl Cluster {
    pub async fn start(name: &str, o: Opts) -> Cluster {
        let dir = std::env::temp_dir().join(format!("mr-http-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let grpc_l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let http_l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let grpc = grpc_l.local_addr().unwrap();
        let http = http_l.local_addr().unwrap();
        let token = format!("tok-{name}-{}", std::process::id());
        let mut toml = format!(
            "token = \"{token}\"\n\n[master]\naddr = \"{grpc}\"\nhttp_addr = \"{http}\"\ndata_dir = \"{}\"\n\n\
             [dfs]\nblock_size = \"256KiB\"\nreplication = 2\n\n\
             [heartbeat]\ninterval = \"100ms\"\ndead_after = 10\n",
            dir.join("master").display(),
        );
        let mut workers = Vec::new();
        for (i, port) in free_ports(o.workers).iter().enumerate() {
            let w = format!("w{}", i + 1);
            toml.push_str(&format!(
                "\n[[workers]]\nname = \"{w}\"\naddr = \"127.0.0.1:{port}\"\nrack = \"r{}\"\n\
                 map_slots = 2\nreduce_slots = 2\ncache = \"8MiB\"\ndata_dir = \"{}\"\n",
                i % o.racks + 1,
                dir.join(&w).display()
            ));
            workers.push(w);
        }
        let reader_token = format!("{token}-reader");
        toml.push_str(&format!(
            "\n[[users]]\nname = \"viewer\"\ntoken = \"{reader_token}\"\nrole = \"reader\"\n"
        ));
        let config = dir.join("cluster.toml");
        std::fs::write(&config, &toml).unwrap();
        let cfg = common::config::ClusterConfig::parse(&toml).unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let master = tokio::spawn(master::run_with_http(cfg, grpc_l, Some(http_l), async {
            let _ = stopped.await;
        }));
        let bin = bin_dir();
        let mut procs = Vec::new();
        for w in workers.iter().take(o.start) {
            let log = std::fs::File::create(dir.join(format!("{w}.log"))).unwrap();
            procs.push(
                Command::new(bin.join("mr-worker"))
                    .args(["--name", w, "--config"])
                    .arg(&config)
                    .env("RUST_LOG", "info")
                    .stdout(Stdio::null())
                    .stderr(log)
                    .kill_on_drop(true)
                    .spawn()
                    .unwrap(),
            );
        }
        let c = Cluster {
            dir,
            config,
            token,
            reader_token,
            grpc,
            http,
            workers,
            bin,
            procs,
            stop: Some(stop),
            master: Some(master),
        };
        let n = o.start;
        c.wait_for(
            &format!("{n} workers alive"),
            Duration::from_secs(60),
            || async {
                let r = c.get("/api/workers").await;
                r.status == 200
                    && r.json()["workers"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|w| w["state"] == "alive")
                        .count()
                        == n
            },
        )
        .await;
        c
    }

    /// Shuts the master down as SIGTERM would; returns what `run_with_http`
    /// returned and how long the shutdown took.
    pub async fn stop_master(&mut self) -> (anyhow::Result<()>, Duration) {
        let t = Instant::now();
        drop(self.stop.take());
        let r = self.master.take().expect("running").await.unwrap();
        (r, t.elapsed())
    }

    /// Runs `mr` against the cluster, asserting success; returns stdout.
    pub async fn mr(&self, args: &[&str]) -> String {
        let out = Command::new(self.bin.join("mr"))
            .arg("--config")
            .arg(&self.config)
            .args(args)
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "mr {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            self.logs_tail()
        );
        String::from_utf8(out.stdout).unwrap()
    }

    pub async fn mr_json(&self, args: &[&str]) -> Value {
        let out = self.mr(args).await;
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("mr {args:?}: {e}: {out}"))
    }

    /// A request with the cluster's token.
    pub async fn get(&self, path: &str) -> Resp {
        request(self.http, "GET", path, Some(&self.token), None).await
    }

    pub async fn send(&self, method: &str, path: &str, body: Option<&str>) -> Resp {
        request(self.http, method, path, Some(&self.token), body).await
    }

    /// A 200 answer's JSON.
    pub async fn api(&self, path: &str) -> Value {
        let r = self.get(path).await;
        assert_eq!(r.status, 200, "GET {path}: {}", r.body);
        r.json()
    }

    /// Polls `check` every 100 ms until it holds or `limit` passes.
    pub async fn wait_for<F, Fut>(&self, what: &str, limit: Duration, mut check: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let t = Instant::now();
        while t.elapsed() < limit {
            if check().await {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "timed out after {limit:?} waiting for {what}\n{}",
            self.logs_tail()
        );
    }

    /// Writes `lines` lines of words to a local file and puts it at `path`.
    pub async fn put_text(&self, path: &str, lines: usize) {
        let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
        let mut s = String::new();
        for i in 0..lines {
            for j in 0..8 {
                s.push_str(words[(i * 7 + j * 3) % words.len()]);
                s.push(if j == 7 { '\n' } else { ' ' });
            }
        }
        let local = self.dir.join("input.txt");
        std::fs::write(&local, s).unwrap();
        self.mr(&["fs", "put", local.to_str().unwrap(), path]).await;
    }

    pub fn logs_tail(&self) -> String {
        let mut s = String::new();
        for w in &self.workers {
            if let Ok(t) = std::fs::read_to_string(self.dir.join(format!("{w}.log"))) {
                let lines: Vec<&str> = t.lines().collect();
                let from = lines.len().saturating_sub(10);
                s.push_str(&format!("--- {w}.log ---\n{}\n", lines[from..].join("\n")));
            }
        }
        s
    }

    pub fn artifacts() -> PathBuf {
        // target/debug/mr-master → target/ui-test
        let d = bin_dir().parent().unwrap().join("ui-test");
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for p in &mut self.procs {
            let _ = p.start_kill();
        }
        drop(self.stop.take());
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// One HTTP/1.1 request on its own connection (`Connection: close`).
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> Resp {
    request_with(
        addr,
        method,
        path,
        token.map(|t| format!("Bearer {t}")).as_deref(),
        body,
    )
    .await
}

/// As [`request`], with the whole `Authorization` value given.
pub async fn request_with(
    addr: SocketAddr,
    method: &str,
    path: &str,
    authorization: Option<&str>,
    body: Option<&str>,
) -> Resp {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(a) = authorization {
        req.push_str(&format!("Authorization: {a}\r\n"));
    }
    let body = body.unwrap_or("");
    if !body.is_empty() || method != "GET" {
        req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut raw))
        .await
        .expect("the master answers within 30 s")
        .unwrap();
    parse(&raw)
}

fn parse(raw: &[u8]) -> Resp {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a complete HTTP head");
    let head = std::str::from_utf8(&raw[..split]).unwrap();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Resp {
        status,
        headers,
        body: String::from_utf8(body).unwrap(),
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let n = usize::from_str_radix(std::str::from_utf8(&b[..eol]).unwrap().trim(), 16).unwrap();
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + n]);
        b = &b[eol + 2 + n + 2..];
    }
}
