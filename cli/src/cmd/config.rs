//! `mr config init`: writes the cluster file (`cluster.toml`) from flags,
//! as every launcher (`scripts/cluster.sh`, `lan.sh`, `deploy.sh`,
//! `docker.sh`) does, and makes the cluster CA and the processes'
//! certificates (`--tls`).

use clap::Subcommand;
use common::config::ClusterConfig;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum ConfigCmd {
    /// With --master: write the cluster file (to --out, else --config)
    /// from flags, as the launchers in scripts/ do; it refuses to replace
    /// a file without --force. Without --master: check the existing
    /// cluster file. With --tls (after writing, or on the existing file):
    /// make the cluster CA and a certificate per process (master, each
    /// worker, the client) carrying the addresses they are reached by, and
    /// add a [tls] section: from then on every port speaks TLS only.
    /// Again: new certificates under the same CA.
    ///
    /// Examples:
    ///   mr config init --out D/cluster.toml --master 127.0.0.1:7070
    ///     --master-dir D/master --workers-dir D
    ///     --worker name=w1,addr=127.0.0.1:7101,rack=r1
    ///     --worker name=w2,addr=127.0.0.1:7102,rack=r2
    ///   mr -c D/cluster.toml config init --tls
    Init {
        #[arg(long)]
        tls: bool,
        /// Where the certificates go (default: `tls` beside the cluster file).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// A further name or IP for every server certificate (repeatable).
        #[arg(long = "san")]
        sans: Vec<String>,
        #[command(flatten)]
        write: InitWrite,
    },
}

/// The fields of a new cluster file (`mr config init --master ...`).
#[derive(clap::Args)]
pub struct InitWrite {
    /// Write here (default: the --config path).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace an existing file.
    #[arg(long, short = 'f')]
    force: bool,
    /// A comment line at the top of the file (repeatable).
    #[arg(long)]
    comment: Vec<String>,
    /// The cluster token (default: 16 random bytes in hex).
    #[arg(long)]
    token: Option<String>,
    /// The master's gRPC address, IP:PORT; makes `init` write a file.
    #[arg(long)]
    master: Option<String>,
    /// The master's web UI, REST API and /metrics address, IP:PORT.
    #[arg(long)]
    http: Option<String>,
    /// The master's data directory (edit log, snapshots).
    #[arg(long)]
    master_dir: Option<PathBuf>,
    #[arg(long, default_value = "64MiB")]
    block_size: String,
    #[arg(long, default_value_t = 3)]
    replication: u32,
    /// How often each worker re-verifies its blocks (default: 6h).
    #[arg(long)]
    scan_interval: Option<String>,
    /// Heartbeat interval.
    #[arg(long, default_value = "1s")]
    heartbeat: String,
    /// Heartbeats missed before a worker is dead (default: 5).
    #[arg(long)]
    dead_after: Option<u32>,
    /// The placement policy (`mr admin scheduler list`; default: fifo).
    #[arg(long)]
    scheduler: Option<String>,
    /// A parameter of --scheduler, key=value (repeatable).
    #[arg(long = "scheduler-param")]
    scheduler_params: Vec<String>,
    /// Speculative execution of straggling tasks.
    #[arg(long)]
    speculative: bool,
    /// [network] kind: what the launcher built (loopback, emulated-lan,
    /// docker, lan).
    #[arg(long)]
    network: Option<String>,
    /// A comment line just above [network].
    #[arg(long)]
    network_comment: Option<String>,
    /// [network] host_rate, e.g. 200mbit.
    #[arg(long)]
    host_rate: Option<String>,
    /// [network] uplink_rate, e.g. 50mbit.
    #[arg(long)]
    uplink_rate: Option<String>,
    /// A worker, repeatable: name=NAME,addr=IP:PORT,rack=RACK and
    /// optionally slots=N (map and reduce), map_slots=N, reduce_slots=N,
    /// cache=SIZE, data_dir=PATH.
    #[arg(long = "worker")]
    workers: Vec<String>,
    /// Map and reduce slots of a worker that does not say.
    #[arg(long, default_value_t = 2)]
    slots: u32,
    /// Block cache of a worker that does not say.
    #[arg(long, default_value = "256MiB")]
    cache: String,
    /// A worker's data_dir, when it does not say, is DIR/NAME.
    #[arg(long)]
    workers_dir: Option<PathBuf>,
}

impl InitWrite {
    /// The layout to write, or `None` without --master (check mode).
    fn layout(&self) -> anyhow::Result<Option<Layout>> {
        let Some(master) = &self.master else {
            let given = [
                (self.out.is_some(), "--out"),
                (self.master_dir.is_some(), "--master-dir"),
                (!self.workers.is_empty(), "--worker"),
                (self.http.is_some(), "--http"),
                (self.token.is_some(), "--token"),
            ];
            if let Some((_, flag)) = given.iter().find(|(g, _)| *g) {
                anyhow::bail!("{flag} writes a new cluster file: it needs --master IP:PORT too");
            }
            return Ok(None);
        };
        let master_dir = self
            .master_dir
            .clone()
            .ok_or_else(|| anyhow::anyhow!("a new cluster file needs --master-dir DIR"))?;
        if self.slots > 256 {
            anyhow::bail!("--slots must be at most 256, not {}", self.slots);
        }
        let d = WorkerDefaults {
            slots: self.slots,
            cache: self.cache.clone(),
            data_dir: self.workers_dir.clone(),
        };
        let workers = self
            .workers
            .iter()
            .map(|w| parse_worker(w, &d))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let scheduler_params = self
            .scheduler_params
            .iter()
            .map(|kv| {
                kv.split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .ok_or_else(|| anyhow::anyhow!("--scheduler-param {kv:?} is not key=value"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Some(Layout {
            comments: self.comment.clone(),
            token: self.token.clone(),
            master: master.clone(),
            http: self.http.clone(),
            master_dir,
            block_size: self.block_size.clone(),
            replication: self.replication,
            scan_interval: self.scan_interval.clone(),
            heartbeat: self.heartbeat.clone(),
            dead_after: self.dead_after,
            scheduler: self.scheduler.clone(),
            scheduler_params,
            speculative: self.speculative,
            network: self.network.clone(),
            network_comment: self.network_comment.clone(),
            host_rate: self.host_rate.clone(),
            uplink_rate: self.uplink_rate.clone(),
            workers,
        }))
    }
}

/// Runs `mr config init`: writes the cluster file when given --master, else
/// checks `config`; then, with --tls, makes the certificates.
pub fn dispatch(config: &Path, c: ConfigCmd) -> anyhow::Result<()> {
    let ConfigCmd::Init {
        tls,
        dir,
        sans,
        write: new,
    } = c;
    let Some(layout) = new.layout()? else {
        return init(config, tls, dir.as_deref(), &sans);
    };
    let out = new.out.as_deref().unwrap_or(config);
    write(out, &layout, new.force)?;
    if tls {
        init(out, true, dir.as_deref(), &sans)?;
    }
    Ok(())
}

/// What `mr config init --master ...` writes: one field per flag. Optional
/// fields left `None` are left out of the file (the loader's defaults
/// apply), so that a launcher's file keeps the shape it had.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// Comment lines at the top of the file (without the `# `).
    pub comments: Vec<String>,
    /// The shared secret; `None`: 16 random bytes in hex.
    pub token: Option<String>,
    pub master: String,
    pub http: Option<String>,
    pub master_dir: PathBuf,
    pub block_size: String,
    pub replication: u32,
    pub scan_interval: Option<String>,
    pub heartbeat: String,
    pub dead_after: Option<u32>,
    pub scheduler: Option<String>,
    pub scheduler_params: Vec<(String, String)>,
    pub speculative: bool,
    pub network: Option<String>,
    pub network_comment: Option<String>,
    pub host_rate: Option<String>,
    pub uplink_rate: Option<String>,
    pub workers: Vec<WorkerSpec>,
}

/// One `[[workers]]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerSpec {
    pub name: String,
    pub addr: String,
    pub rack: String,
    pub map_slots: u32,
    pub reduce_slots: u32,
    pub cache: String,
    pub data_dir: PathBuf,
}

/// Defaults for the keys a `--worker` spec leaves out.
#[derive(Debug, Clone)]
pub struct WorkerDefaults {
    pub slots: u32,
    pub cache: String,
    /// `data_dir` is this directory joined with the worker's name.
    pub data_dir: Option<PathBuf>,
}

/// Parses `--worker name=w1,addr=IP:PORT,rack=r1[,slots=N][,map_slots=N]
/// [,reduce_slots=N][,cache=SIZE][,data_dir=PATH]`.
pub fn parse_worker(spec: &str, d: &WorkerDefaults) -> anyhow::Result<WorkerSpec> {
    let bad = |m: String| anyhow::anyhow!("--worker {spec:?}: {m}");
    let (mut name, mut addr, mut rack, mut cache, mut data_dir) = (None, None, None, None, None);
    let (mut map_slots, mut reduce_slots) = (d.slots, d.slots);
    for kv in spec.split(',').filter(|kv| !kv.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| bad(format!("{kv:?} is not key=value")))?;
        let slots = || {
            v.parse::<u32>().ok().filter(|n| *n <= 256).ok_or_else(|| {
                bad(format!(
                    "{k} must be a number of slots from 0 to 256, not {v:?}"
                ))
            })
        };
        match k {
            "name" => name = Some(v.to_string()),
            "addr" => addr = Some(v.to_string()),
            "rack" => rack = Some(v.to_string()),
            "cache" => cache = Some(v.to_string()),
            "data_dir" => data_dir = Some(PathBuf::from(v)),
            "slots" => (map_slots, reduce_slots) = (slots()?, slots()?),
            "map_slots" => map_slots = slots()?,
            "reduce_slots" => reduce_slots = slots()?,
            _ => {
                return Err(bad(format!(
                    "unknown key {k:?} (name, addr, rack, slots, map_slots, reduce_slots, cache, data_dir)"
                )))
            }
        }
    }
    let name = name.ok_or_else(|| bad("no name=".into()))?;
    let addr = addr.ok_or_else(|| bad("no addr=IP:PORT".into()))?;
    let rack = rack.ok_or_else(|| bad("no rack=".into()))?;
    let data_dir = match (data_dir, &d.data_dir) {
        (Some(p), _) => p,
        (None, Some(base)) => base.join(&name),
        (None, None) => return Err(bad("no data_dir= and no --workers-dir".into())),
    };
    let w = WorkerSpec {
        name,
        addr,
        rack,
        map_slots,
        reduce_slots,
        cache: cache.unwrap_or_else(|| d.cache.clone()),
        data_dir,
    };
    if w.addr.parse::<SocketAddr>().is_err() {
        return Err(bad(format!("addr {:?} is not an IP:port address", w.addr)));
    }
    common::units::parse_size(&w.cache).map_err(|e| bad(format!("cache: {e}")))?;
    Ok(w)
}

/// A TOML basic string.
fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn path_str(p: &Path) -> anyhow::Result<&str> {
    p.to_str().ok_or_else(|| {
        anyhow::anyhow!(
            "{} is not UTF-8: the cluster file cannot name it",
            p.display()
        )
    })
}

/// 16 bytes from the OS's random source, in hex.
fn random_token() -> anyhow::Result<String> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| anyhow::anyhow!("cannot read /dev/urandom for a token (give --token): {e}"))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Checks the flags, each error naming its flag, and renders the file:
/// the sections and keys in the order the launchers always wrote them.
pub fn render(l: &Layout) -> anyhow::Result<String> {
    use anyhow::bail;
    check_flags(l)?;
    let token = match &l.token {
        Some(t) if t.is_empty() || t.chars().any(char::is_control) => {
            bail!("--token must be non-empty, with no control characters")
        }
        Some(t) => t.clone(),
        None => random_token()?,
    };

    let mut f = String::new();
    for c in &l.comments {
        for line in c.lines() {
            writeln!(f, "# {line}")?;
        }
    }
    writeln!(f, "token = {}", q(&token))?;
    writeln!(f, "\n[master]\naddr = {}", q(&l.master))?;
    if let Some(h) = &l.http {
        writeln!(f, "http_addr = {}   # web UI, REST API, /metrics", q(h))?;
    }
    writeln!(f, "data_dir = {}", q(path_str(&l.master_dir)?))?;
    writeln!(
        f,
        "\n[dfs]\nblock_size = {}\nreplication = {}",
        q(&l.block_size),
        l.replication
    )?;
    if let Some(s) = &l.scan_interval {
        writeln!(f, "scan_interval = {}", q(s))?;
    }
    writeln!(f, "\n[heartbeat]\ninterval = {}", q(&l.heartbeat))?;
    if let Some(n) = l.dead_after {
        writeln!(f, "dead_after = {n}")?;
    }
    write_scheduler(&mut f, l)?;
    write_network(&mut f, l)?;
    for w in &l.workers {
        writeln!(
            f,
            "\n[[workers]]\nname = {}\naddr = {}\nrack = {}\nmap_slots = {}\nreduce_slots = {}\ncache = {}\ndata_dir = {}",
            q(&w.name),
            q(&w.addr),
            q(&w.rack),
            w.map_slots,
            w.reduce_slots,
            q(&w.cache),
            q(path_str(&w.data_dir)?)
        )?;
    }
    // The loader has the last word (scheduler names and parameters, worker
    // names, duplicate addresses): what is written always loads.
    ClusterConfig::parse(&f)
        .and_then(|c| sched::check_config(&c))
        .map_err(|e| anyhow::anyhow!("the flags make an invalid cluster file: {e}"))?;
    Ok(f)
}

/// The flags the file's loader would refuse, refused first with the flag's
/// name.
fn check_flags(l: &Layout) -> anyhow::Result<()> {
    use anyhow::bail;
    let addr_ok = |flag: &str, a: &str| -> anyhow::Result<()> {
        if a.parse::<SocketAddr>().is_err() {
            bail!("{flag} {a:?} is not an IP:port address (e.g. 127.0.0.1:7070)");
        }
        Ok(())
    };
    addr_ok("--master", &l.master)?;
    if let Some(h) = &l.http {
        addr_ok("--http", h)?;
        if *h == l.master {
            bail!("--http {h} is also --master: give the web UI its own port");
        }
    }
    let size = common::units::parse_size(&l.block_size)
        .map_err(|e| anyhow::anyhow!("--block-size {:?}: {e}", l.block_size))?;
    common::config::validate_block_size(size).map_err(|e| anyhow::anyhow!("--block-size: {e}"))?;
    common::config::validate_replication(l.replication)
        .map_err(|e| anyhow::anyhow!("--replication: {e}"))?;
    let hb = common::units::parse_duration(&l.heartbeat)
        .map_err(|e| anyhow::anyhow!("--heartbeat {:?}: {e}", l.heartbeat))?;
    if hb < std::time::Duration::from_millis(10) {
        bail!("--heartbeat must be at least 10ms, not {}", l.heartbeat);
    }
    if let Some(s) = &l.scan_interval {
        common::units::parse_duration(s)
            .map_err(|e| anyhow::anyhow!("--scan-interval {s:?}: {e}"))?;
    }
    if let Some(n) = l.dead_after {
        if n < 2 {
            bail!("--dead-after must be at least 2 heartbeats, not {n}");
        }
    }
    for (flag, r) in [
        ("--host-rate", &l.host_rate),
        ("--uplink-rate", &l.uplink_rate),
    ] {
        if let Some(r) = r {
            common::units::parse_rate(r).map_err(|e| anyhow::anyhow!("{flag} {r:?}: {e}"))?;
        }
    }
    if l.scheduler.is_some() || !l.scheduler_params.is_empty() {
        let spec = sched::SchedulerSpec {
            name: l.scheduler.clone().unwrap_or_else(|| "fifo".into()),
            params: l.scheduler_params.iter().cloned().collect(),
        };
        sched::build(&spec).map_err(|e| anyhow::anyhow!("--scheduler: {e}"))?;
    }
    Ok(())
}

/// `[scheduler]` and `[scheduler.params]`, when a flag set them.
fn write_scheduler(f: &mut String, l: &Layout) -> std::fmt::Result {
    if l.scheduler.is_some() || l.speculative || !l.scheduler_params.is_empty() {
        writeln!(f, "\n[scheduler]")?;
        if let Some(s) = &l.scheduler {
            writeln!(f, "name = {}", q(s))?;
        }
        if l.speculative {
            writeln!(f, "speculative = true")?;
        }
        if !l.scheduler_params.is_empty() {
            writeln!(f, "\n[scheduler.params]")?;
            for (k, v) in &l.scheduler_params {
                writeln!(f, "{} = {}", q(k), q(v))?;
            }
        }
    }
    Ok(())
}

/// `[network]`, when a flag set it.
fn write_network(f: &mut String, l: &Layout) -> std::fmt::Result {
    if l.network.is_some() || l.host_rate.is_some() || l.uplink_rate.is_some() {
        writeln!(f)?;
        if let Some(c) = &l.network_comment {
            writeln!(f, "# {c}")?;
        }
        writeln!(f, "[network]")?;
        if let Some(k) = &l.network {
            writeln!(f, "kind = {}", q(k))?;
        }
        if let Some(r) = &l.host_rate {
            writeln!(f, "host_rate = {}", q(r))?;
        }
        if let Some(r) = &l.uplink_rate {
            writeln!(f, "uplink_rate = {}", q(r))?;
        }
    }
    Ok(())
}

/// Writes the cluster file to `out`; an existing file only with `force`.
pub fn write(out: &Path, l: &Layout, force: bool) -> anyhow::Result<()> {
    let text = render(l)?;
    if let Some(dir) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    }
    let mut o = std::fs::OpenOptions::new();
    o.write(true);
    // It holds the cluster's token: only its owner may read it.
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    if force {
        o.create(true).truncate(true);
    } else {
        o.create_new(true);
    }
    let mut file = o.open(out).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            anyhow::anyhow!("{} exists: pass --force to replace it", out.display())
        } else {
            anyhow::anyhow!("cannot write {}: {e}", out.display())
        }
    })?;
    // A replaced file keeps its old mode: narrow it too.
    std::fs::set_permissions(out, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .map_err(|e| anyhow::anyhow!("cannot make {} private: {e}", out.display()))?;
    std::io::Write::write_all(&mut file, text.as_bytes())
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))?;
    println!("wrote {} ({} workers)", out.display(), l.workers.len());
    Ok(())
}

/// Checks the cluster file; with `tls`, makes (or reuses) the cluster CA,
/// issues a certificate per process into `dir` (default: `tls` beside the
/// file) and adds a `[tls]` section pointing there. The CA's key goes to
/// `ca.key` beside the file, outside `dir`, so that copying `dir` to the
/// hosts never ships it. Running it again re-issues every certificate
/// under the same CA (after a worker was added, say).
pub fn init(config: &Path, tls: bool, dir: Option<&Path>, sans: &[String]) -> anyhow::Result<()> {
    let cfg = super::load_config(config)?;
    if !tls {
        println!(
            "{}: valid, {} workers; nothing to add (--tls makes a CA and certificates)",
            config.display(),
            cfg.workers.len()
        );
        return Ok(());
    }
    let base = match config.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (dir, add_section) = match (&cfg.tls, dir) {
        (Some(t), Some(d)) if t.dir != d => anyhow::bail!(
            "{} already has [tls] with dir {}; drop --dir or edit the file",
            config.display(),
            t.dir.display()
        ),
        (Some(t), _) => (t.dir.clone(), false),
        (None, Some(d)) => (d.to_path_buf(), true),
        (None, None) => (base.join("tls"), true),
    };
    let ca_key = base.join("ca.key");
    let issued = crate::certs::write_cluster_certs(&cfg, &dir, &ca_key, sans)?;
    for i in &issued {
        println!(
            "{:<8} {}  ({})",
            i.name,
            dir.join(format!("{}.pem", i.name)).display(),
            i.sans.join(", ")
        );
    }
    println!(
        "CA key   {} (keep it here: no process needs it)",
        ca_key.display()
    );
    if add_section {
        let rel = relative_to(&dir, &base);
        let section = format!(
            "\n[tls]   # written by mr config init --tls: TLS only, on every port\n\
             ca = {:?}\ndir = {:?}\n",
            rel.join("ca.pem").display().to_string(),
            rel.display().to_string()
        );
        let mut text = std::fs::read_to_string(config)?;
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&section);
        std::fs::write(config, &text)?;
        // What was written must load: a bad path shows now, not at start.
        let back = ClusterConfig::load(config)?;
        rpc::tls::client_config(&back)?;
        println!("added [tls] to {}", config.display());
    }
    Ok(())
}

/// `path` relative to `base` when it lies under it (so that the file and
/// the certificates can move together, to hosts and into containers).
fn relative_to(path: &Path, base: &Path) -> PathBuf {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    match abs(path).strip_prefix(abs(base)) {
        Ok(r) if !r.as_os_str().is_empty() => r.to_path_buf(),
        _ => abs(path),
    }
}
