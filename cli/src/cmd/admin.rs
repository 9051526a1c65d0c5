//! `mr admin scheduler set|show`: the active placement policy;
//! `mr admin safemode get|enter|leave` and `mr admin fsck`: the storage's
//! health; `mr admin recover-lease`: a dead writer's file closed now;
//! `mr admin decommission|recommission`: taking a worker out of service
//! without losing a replica; `mr admin auth-probe`.

use clap::Subcommand;
use common::config::ClusterConfig;
use rpc::dfs::{Dfs, DfsError};
use std::path::Path;

#[derive(Subcommand)]
pub enum AdminCmd {
    /// The placement policy.
    #[command(subcommand)]
    Scheduler(SchedCmd),
    /// Safe mode: after a start the master takes no writes or deletes, and
    /// deletes and re-replicates nothing, until enough blocks are reported
    /// (`[master] safemode_threshold`, default 0.999) or an operator leaves
    /// it.
    Safemode {
        #[arg(value_enum)]
        action: SafemodeAction,
        #[arg(long)]
        json: bool,
    },
    /// Missing, corrupt and under-replicated blocks, with the files they
    /// belong to; exits non-zero when a block is missing or corrupt.
    Fsck {
        #[arg(long)]
        json: bool,
    },
    /// Close a file whose writer died mid-write at its last complete block
    /// now, rather than after `[master] lease_soft` (when the next create of
    /// the path would) or `lease_hard` (when the master would), as `hdfs
    /// debug recoverLease`. Its owner or an admin; never a running job's
    /// part.
    RecoverLease {
        path: String,
        #[arg(long)]
        json: bool,
    },
    /// Take a worker out of service without losing a replica.
    ///
    /// As HDFS decommissions a DataNode: the worker gets no new tasks and
    /// no new blocks but keeps serving reads, and the master copies every
    /// block it holds to the other workers. Once `mr cluster status` shows it `decommissioned`
    /// it can be stopped, or killed, safely. Blocks held only by
    /// decommissioned workers are never given up: with nowhere to copy
    /// them, the worker stays `decommissioning`. Kept across master
    /// restarts until `mr admin recommission`. A dead worker is
    /// decommissioned at once. (Stopping a worker with SIGTERM drains it
    /// the same way, within its --drain-timeout.)
    ///
    /// Example: mr admin decommission w3 --wait && scripts/cluster.sh kill w3
    Decommission {
        /// The worker's name in the cluster file.
        worker: String,
        /// Return only once it is decommissioned, with progress (its blocks
        /// still under-replicated elsewhere) on stderr.
        #[arg(long)]
        wait: bool,
        /// With --wait: give up after this long and exit non-zero (the
        /// decommission goes on).
        #[arg(long, requires = "wait", value_parser = super::parse_duration)]
        timeout: Option<std::time::Duration>,
        /// `{"worker", "admin_state", "blocks_under_replicated"}`.
        #[arg(long)]
        json: bool,
    },
    /// Undo `decommission`: the worker takes tasks and blocks again.
    ///
    /// The extra copies made of its blocks meanwhile are trimmed by the
    /// master as excess replicas.
    Recommission {
        worker: String,
        /// `{"worker", "admin_state", "blocks_under_replicated"}`.
        #[arg(long)]
        json: bool,
    },
    /// Debug: call every gRPC method of the master and of each listed worker
    /// with no token and with a wrong one; each must be refused
    /// (Unauthenticated). Exits non-zero otherwise.
    AuthProbe {
        /// Worker addresses to probe (default: every worker in the cluster file).
        #[arg(long = "worker")]
        workers: Vec<String>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum SafemodeAction {
    /// Show whether the master is in safe mode and how many blocks are reported.
    Get,
    /// Enter safe mode by hand (only `leave` ends it).
    Enter,
    /// Leave safe mode now.
    Leave,
}

#[derive(Subcommand)]
pub enum SchedCmd {
    /// Switch policy: new decisions use it; running tasks are untouched.
    Set {
        name: String,
        /// Parameters, key=value.
        params: Vec<String>,
        /// `{"name": ..., "params": {...}}`, as `GET /api/scheduler`.
        #[arg(long)]
        json: bool,
    },
    /// The active policy and its parameters.
    Show {
        /// `{"name": ..., "params": {...}}`, as `GET /api/scheduler`.
        #[arg(long)]
        json: bool,
    },
    /// Every policy name `set` accepts with default parameters (no cluster
    /// needed); `ORDER+TECHNIQUE` composes the others.
    List {
        /// A JSON array of the names.
        #[arg(long)]
        json: bool,
    },
}

/// Runs one `mr admin` command; loads the cluster file `config` unless the
/// command needs no cluster (`scheduler list`).
pub async fn dispatch(config: &Path, c: AdminCmd) -> anyhow::Result<()> {
    if let AdminCmd::Scheduler(SchedCmd::List { json }) = c {
        if json {
            println!("{}", serde_json::json!(sched::registry::NAMES));
        } else {
            for name in sched::registry::NAMES {
                println!("{name}");
            }
        }
        return Ok(());
    }
    let cfg = super::load_config(config)?;
    match c {
        AdminCmd::Scheduler(c) => match c {
            SchedCmd::Set { name, params, json } => scheduler_set(&cfg, &name, &params, json).await,
            SchedCmd::Show { json } => scheduler_show(&cfg, json).await,
            SchedCmd::List { .. } => unreachable!("handled before loading the config"),
        },
        AdminCmd::Safemode { action, json } => {
            let action = match action {
                SafemodeAction::Get => "get",
                SafemodeAction::Enter => "enter",
                SafemodeAction::Leave => "leave",
            };
            safemode(&cfg, action, json).await
        }
        AdminCmd::Fsck { json } => fsck(&cfg, json).await,
        AdminCmd::RecoverLease { path, json } => recover_lease(&cfg, &path, json).await,
        AdminCmd::Decommission {
            worker,
            wait,
            timeout,
            json,
        } => decommission(&cfg, &worker, wait, timeout, json).await,
        AdminCmd::Recommission { worker, json } => recommission(&cfg, &worker, json).await,
        AdminCmd::AuthProbe { workers } => auth_probe(&cfg, &workers).await,
    }
}

pub async fn scheduler_set(
    cfg: &ClusterConfig,
    name: &str,
    kvs: &[String],
    json: bool,
) -> anyhow::Result<()> {
    let mut params = std::collections::HashMap::new();
    for kv in kvs {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("parameter {kv:?} is not key=value"))?;
        params.insert(k.to_string(), v.to_string());
    }
    let r = Dfs::connect(cfg)?
        .master()
        .set_scheduler(proto::SchedulerRequest {
            name: name.to_string(),
            params,
        })
        .await
        .map_err(DfsError::from)?
        .into_inner();
    print_spec(&r, json);
    Ok(())
}

pub async fn scheduler_show(cfg: &ClusterConfig, json: bool) -> anyhow::Result<()> {
    let r = Dfs::connect(cfg)?
        .master()
        .get_scheduler(proto::Empty {})
        .await
        .map_err(DfsError::from)?
        .into_inner();
    print_spec(&r, json);
    Ok(())
}

fn print_spec(r: &proto::SchedulerResponse, json: bool) {
    if json {
        let params: std::collections::BTreeMap<_, _> = r.params.iter().collect();
        println!("{}", serde_json::json!({"name": r.name, "params": params}));
        return;
    }
    let mut params: Vec<_> = r.params.iter().collect();
    params.sort();
    let p: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    println!("scheduler: {} {}", r.name, p.join(" "));
}

/// `mr admin safemode get|enter|leave`.
pub async fn safemode(cfg: &ClusterConfig, action: &str, json: bool) -> anyhow::Result<()> {
    let r = Dfs::connect(cfg)?
        .master()
        .safe_mode(proto::SafeModeRequest {
            action: action.to_string(),
        })
        .await
        .map_err(DfsError::from)?
        .into_inner();
    if json {
        println!(
            "{}",
            serde_json::json!({
                "safe_mode": r.on,
                "manual": r.manual,
                "threshold": r.threshold,
                "reported_blocks": r.reported_blocks,
                "total_blocks": r.total_blocks,
                "low_resources": (!r.low_resources.is_empty()).then_some(&r.low_resources),
            })
        );
        return Ok(());
    }
    let state = match (r.on, r.manual) {
        _ if !r.low_resources.is_empty() => {
            "ON (the metadata disk is low: it ends once space is back)"
        }
        (false, _) => "OFF",
        (true, false) => "ON (until enough blocks are reported)",
        (true, true) => "ON (entered by an operator: `mr admin safemode leave` ends it)",
    };
    println!(
        "safe mode is {state}; {} of {} blocks reported (threshold {})",
        r.reported_blocks, r.total_blocks, r.threshold
    );
    if !r.low_resources.is_empty() {
        println!("{}", r.low_resources);
    }
    Ok(())
}

/// `mr admin fsck [--json]`: missing, corrupt and under-replicated blocks
/// with their files. Exits non-zero when a block is missing or corrupt, so
/// scripts can check the storage's health.
pub async fn fsck(cfg: &ClusterConfig, json: bool) -> anyhow::Result<()> {
    let r = Dfs::connect(cfg)?
        .master()
        .fsck(proto::Empty {})
        .await
        .map_err(DfsError::from)?
        .into_inner();
    let block = |b: &proto::FsckBlock| {
        serde_json::json!({
            "block_id": b.block_id,
            "files": b.files,
            "live": b.live,
            "want": b.want,
            "corrupt_on": b.corrupt_on,
        })
    };
    if json {
        let list = |v: &[proto::FsckBlock]| v.iter().map(block).collect::<Vec<_>>();
        println!(
            "{}",
            serde_json::json!({
                "total_blocks": r.total_blocks,
                "safe_mode": r.safe_mode,
                "missing": list(&r.missing),
                "corrupt": list(&r.corrupt),
                "under_replicated": list(&r.under_replicated),
                "healthy": r.missing.is_empty() && r.corrupt.is_empty(),
            })
        );
    } else {
        if r.safe_mode {
            println!("the master is in safe mode: blocks not yet reported show as missing");
        }
        for (what, v) in [
            ("MISSING", &r.missing),
            ("CORRUPT", &r.corrupt),
            ("UNDER-REPLICATED", &r.under_replicated),
        ] {
            for b in v.iter() {
                let corrupt = if b.corrupt_on.is_empty() {
                    String::new()
                } else {
                    format!(", corrupt on {}", b.corrupt_on.join(","))
                };
                println!(
                    "{what:<16} block {} ({}/{} live{corrupt}) in {}",
                    b.block_id,
                    b.live,
                    b.want,
                    b.files.join(", ")
                );
            }
        }
        println!(
            "{} blocks: {} missing, {} corrupt, {} under-replicated: {}",
            r.total_blocks,
            r.missing.len(),
            r.corrupt.len(),
            r.under_replicated.len(),
            if r.missing.is_empty() && r.corrupt.is_empty() {
                "HEALTHY"
            } else {
                "CORRUPT"
            }
        );
    }
    if !r.missing.is_empty() || !r.corrupt.is_empty() {
        anyhow::bail!(
            "{} missing and {} corrupt blocks",
            r.missing.len(),
            r.corrupt.len()
        );
    }
    Ok(())
}

/// `mr admin recover-lease PATH [--json]`: says what became of the file.
pub async fn recover_lease(cfg: &ClusterConfig, path: &str, json: bool) -> anyhow::Result<()> {
    let r = Dfs::connect(cfg)?
        .master()
        .recover_lease(proto::PathRequest {
            path: path.to_string(),
        })
        .await
        .map_err(DfsError::from)?
        .into_inner();
    if json {
        println!(
            "{}",
            serde_json::json!({
                "path": path,
                "outcome": r.outcome,
                "bytes": r.bytes,
                "blocks": r.blocks,
                "holder": r.holder,
                "silent_ms": r.silent_ms,
            })
        );
        return Ok(());
    }
    let held = format!(
        "held by {}, silent for {:.1}s",
        r.holder,
        r.silent_ms as f64 / 1000.0
    );
    match r.outcome.as_str() {
        "closed" => println!(
            "{path}: lease recovered ({held}): closed at {} bytes in {} blocks",
            r.bytes, r.blocks
        ),
        "removed" => {
            println!("{path}: lease recovered ({held}): removed, nothing was acknowledged")
        }
        _ => println!("{path}: no open write"),
    }
    Ok(())
}

fn print_decommission(r: &proto::DecommissionResponse, json: bool) {
    if json {
        println!(
            "{}",
            serde_json::json!({
                "worker": r.worker,
                "admin_state": r.admin_state,
                "blocks_under_replicated": r.blocks_under_replicated,
            })
        );
        return;
    }
    match r.admin_state.as_str() {
        "decommissioned" => println!("{} is decommissioned: it can be stopped safely", r.worker),
        "decommissioning" => println!(
            "{} is decommissioning: {} of its blocks still under-replicated elsewhere",
            r.worker, r.blocks_under_replicated
        ),
        other => println!("{} is {other}", r.worker),
    }
}

/// `mr admin decommission WORKER [--wait [--timeout D]]`: asks once, then
/// (with `--wait`) follows `cluster status` until the worker is
/// decommissioned, saying on stderr how many of its blocks are left
/// whenever that changes.
pub async fn decommission(
    cfg: &ClusterConfig,
    worker: &str,
    wait: bool,
    timeout: Option<std::time::Duration>,
    json: bool,
) -> anyhow::Result<()> {
    let dfs = Dfs::connect(cfg)?;
    let mut r = dfs
        .master()
        .decommission(proto::DecommissionRequest {
            worker: worker.to_string(),
        })
        .await
        .map_err(DfsError::from)?
        .into_inner();
    if wait {
        let deadline = timeout.map(|t| std::time::Instant::now() + t);
        let mut said = None;
        while r.admin_state != "decommissioned" {
            let now = (r.admin_state.clone(), r.blocks_under_replicated);
            if said.as_ref() != Some(&now) && !crate::output::quiet() {
                eprintln!(
                    "{worker}: {}, {} blocks still under-replicated elsewhere",
                    now.0, now.1
                );
                said = Some(now);
            }
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                anyhow::bail!(
                    "{worker} is still {} after {:?} ({} blocks left); the decommission goes on",
                    r.admin_state,
                    timeout.unwrap_or_default(),
                    r.blocks_under_replicated
                );
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            let st = dfs
                .master()
                .cluster_status(proto::Empty {})
                .await
                .map_err(DfsError::from)?
                .into_inner();
            let w = st
                .workers
                .iter()
                .find(|w| w.name == worker)
                .ok_or_else(|| anyhow::anyhow!("the master no longer lists {worker}"))?;
            r.admin_state = w.admin_state.clone();
            r.blocks_under_replicated = w.blocks_under_replicated;
            if r.admin_state != "decommissioning" && r.admin_state != "decommissioned" {
                anyhow::bail!(
                    "{worker} is {} now: recommissioned meanwhile?",
                    r.admin_state
                );
            }
        }
    }
    print_decommission(&r, json);
    Ok(())
}

/// `mr admin recommission WORKER`.
pub async fn recommission(cfg: &ClusterConfig, worker: &str, json: bool) -> anyhow::Result<()> {
    let r = Dfs::connect(cfg)?
        .master()
        .recommission(proto::DecommissionRequest {
            worker: worker.to_string(),
        })
        .await
        .map_err(DfsError::from)?
        .into_inner();
    print_decommission(&r, json);
    Ok(())
}

/// A probe call's outcome: refused as Unauthenticated is printed, anything
/// else goes to `bad`.
fn judge<T>(what: &str, r: Result<T, tonic::Status>, bad: &mut Vec<String>) {
    match r {
        Err(s) if s.code() == tonic::Code::Unauthenticated => {
            println!("refused  {what}: {}", s.message())
        }
        Err(s) => bad.push(format!("{what}: {:?} {}", s.code(), s.message())),
        Ok(_) => bad.push(format!("{what}: ACCEPTED")),
    }
}
/// Every method of the master's service, on client `$c` (with or
/// without a token: another type each): the generated clients have one
/// function per rpc.
macro_rules! master_all {
    ($c:expr, $tag:expr, $bad:expr) => {{
        let c = &mut $c;
        macro_rules! m {
            ($name:ident, $req:expr) => {
                judge(
                    &format!("master {} {}", stringify!($name), $tag),
                    c.$name($req).await,
                    $bad,
                )
            };
        }
        m!(register, proto::RegisterRequest::default());
        m!(heartbeat, proto::HeartbeatRequest::default());
        m!(report_bad_block, proto::ReportBadBlockRequest::default());
        m!(create_file, proto::CreateFileRequest::default());
        m!(add_block, proto::AddBlockRequest::default());
        m!(complete_file, proto::CompleteFileRequest::default());
        m!(abandon_file, proto::AbandonFileRequest::default());
        m!(get_file, proto::PathRequest::default());
        m!(list_files, proto::PathRequest::default());
        m!(delete_file, proto::PathRequest::default());
        m!(mkdir, proto::MkdirRequest::default());
        m!(set_attr, proto::SetAttrRequest::default());
        m!(renew_lease, proto::AbandonFileRequest::default());
        m!(cache_file, proto::CacheFileRequest::default());
        m!(set_cache_capacity, proto::CacheCapacityRequest::default());
        m!(cluster_status, proto::Empty::default());
        m!(submit_job, proto::SubmitJobRequest::default());
        m!(get_job, proto::JobRequest::default());
        m!(list_jobs, proto::Empty::default());
        m!(kill_job, proto::JobRequest::default());
        m!(job_history, proto::JobRequest::default());
        m!(set_scheduler, proto::SchedulerRequest::default());
        m!(get_scheduler, proto::Empty::default());
        m!(task_update, proto::TaskUpdateRequest::default());
        m!(await_commands, proto::WorkerPoll::default());
        m!(take_commands, proto::WorkerPoll::default());
        m!(wait_job, proto::WaitJobRequest::default());
        m!(safe_mode, proto::SafeModeRequest::default());
        m!(fsck, proto::Empty::default());
        m!(recover_lease, proto::PathRequest::default());
        m!(decommission, proto::DecommissionRequest::default());
        m!(recommission, proto::DecommissionRequest::default());
    }};
}

/// Every method of a worker's service, as `master_all` for the master's.
macro_rules! worker_all {
    ($c:expr, $tag:expr, $addr:expr, $bad:expr) => {{
        let c = &mut $c;
        let w = |m: &str| format!("worker {} {m} {}", $addr, $tag);
        let r = c
            .write_block(tokio_stream::iter(vec![proto::WriteBlockChunk::default()]))
            .await;
        judge(&w("write_block"), r, $bad);
        let r = c.read_block(proto::ReadBlockRequest::default()).await;
        judge(&w("read_block"), r, $bad);
        let r = c
            .fetch_partition(proto::FetchPartitionRequest::default())
            .await;
        judge(&w("fetch_partition"), r, $bad);
        let r = c
            .locate_partition(proto::FetchPartitionRequest::default())
            .await;
        judge(&w("locate_partition"), r, $bad);
    }};
}

/// `mr admin auth-probe`: every method of the master's and the workers'
/// gRPC services, called with no token and with a wrong token, must come
/// back Unauthenticated (the token check runs before any handler, so the
/// empty requests sent here never reach one).
pub async fn auth_probe(cfg: &ClusterConfig, workers: &[String]) -> anyhow::Result<()> {
    use proto::master_client::MasterClient;
    use proto::worker_client::WorkerClient;

    // Under TLS the probe dials as the client does, certificate and all, so
    // that its calls reach the token check and show it refusing them.
    let tls = rpc::tls::client_config(cfg)?;
    let chan = |addr: String| {
        let ep = rpc::dfs::endpoint(&addr, tls.as_ref());
        async move {
            Ok::<_, anyhow::Error>(
                ep?.connect_timeout(std::time::Duration::from_secs(5))
                    .timeout(std::time::Duration::from_secs(10))
                    .connect()
                    .await?,
            )
        }
    };
    let wrong = format!("not-{}", cfg.token);
    let mut bad = Vec::new();
    let ch = chan(cfg.master.addr.clone()).await?;
    let mut none = MasterClient::new(ch.clone());
    master_all!(none, "(no token)", &mut bad);
    let mut wrong_c = rpc::dfs::master_conn_on(ch, &wrong)?;
    master_all!(wrong_c, "(wrong token)", &mut bad);
    let addrs: Vec<String> = if workers.is_empty() {
        cfg.workers.iter().map(|w| w.addr.clone()).collect()
    } else {
        workers.to_vec()
    };
    for a in &addrs {
        let ch = chan(a.clone()).await?;
        let mut none = WorkerClient::new(ch.clone());
        worker_all!(none, "(no token)", a, &mut bad);
        let mut wrong_c = rpc::dfs::worker_conn_on(ch, &wrong)?;
        worker_all!(wrong_c, "(wrong token)", a, &mut bad);
    }
    if bad.is_empty() {
        println!(
            "auth-probe: every call refused (master and {} workers)",
            addrs.len()
        );
        Ok(())
    } else {
        anyhow::bail!(
            "calls not refused as Unauthenticated:\n  {}",
            bad.join("\n  ")
        )
    }
}
