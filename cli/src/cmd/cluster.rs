//! `mr cluster status`: every worker, its state, slots, cache and resources.

use super::parse_duration;
use crate::output::table;
use clap::Subcommand;
use common::config::ClusterConfig;
use common::units::format_size;
use rpc::dfs::Dfs;

#[derive(Subcommand)]
pub enum ClusterCmd {
    /// Workers: state, slots, blocks, cache and resource vectors.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Exits 0 when the master answers (and, with --worker, when that worker
    /// is registered and alive), 1 otherwise: for container health checks
    /// and scripts waiting for a cluster.
    Health {
        /// Also require this worker to be alive.
        #[arg(long)]
        worker: Option<String>,
        /// Give up after this long.
        #[arg(long, default_value = "3s", value_parser = parse_duration)]
        timeout: std::time::Duration,
        /// Also require at least this many workers alive.
        #[arg(long)]
        workers: Option<usize>,
        /// Keep asking (every 200 ms) until healthy or this long has
        /// passed, as launch scripts wait for a new cluster: e.g.
        /// `mr cluster health --workers 6 --wait 60s`.
        #[arg(long, value_parser = parse_duration)]
        wait: Option<std::time::Duration>,
        /// `{"master", "up", "workers_alive"}` (and `worker`), when healthy.
        #[arg(long)]
        json: bool,
    },
}

/// Runs one `mr cluster` command.
pub async fn dispatch(cfg: &ClusterConfig, c: ClusterCmd) -> anyhow::Result<()> {
    match c {
        ClusterCmd::Status { json } => status(cfg, json).await,
        ClusterCmd::Health {
            worker,
            timeout,
            workers,
            wait,
            json,
        } => {
            let (what, v) = wait_healthy(cfg, worker.as_deref(), workers, timeout, wait).await?;
            if json {
                println!("{v}");
            } else {
                println!("{what}");
            }
            Ok(())
        }
    }
}

/// `mr cluster health`: what answered, or an error saying what did not.
pub async fn health(
    cfg: &ClusterConfig,
    worker: Option<&str>,
    timeout: std::time::Duration,
) -> anyhow::Result<(String, serde_json::Value)> {
    let ask = async {
        let dfs = Dfs::connect(cfg)?;
        let st = dfs
            .master()
            .cluster_status(proto::Empty {})
            .await
            .map_err(rpc::dfs::DfsError::from)?
            .into_inner();
        anyhow::Ok(st)
    };
    let st = tokio::time::timeout(timeout, ask).await.map_err(|_| {
        anyhow::anyhow!(
            "the master at {} did not answer in {timeout:?}",
            cfg.master.addr
        )
    })??;
    let alive = st.workers.iter().filter(|w| w.alive).count();
    let v = serde_json::json!({"master": cfg.master.addr, "up": true, "workers_alive": alive,
                               "worker": worker});
    match worker {
        None => Ok((
            format!("master {} up, {alive} workers alive", cfg.master.addr),
            v,
        )),
        Some(name) => match st.workers.iter().find(|w| w.name == name) {
            Some(w) if w.alive => Ok((format!("worker {name} alive"), v)),
            Some(_) => anyhow::bail!("worker {name} is not alive"),
            None => anyhow::bail!("worker {name} has not registered"),
        },
    }
}

/// [`health`], also requiring `workers` alive, asked again every 200 ms
/// until it holds or `wait` has passed (once without `wait`); the last
/// answer's error is the one returned.
pub async fn wait_healthy(
    cfg: &ClusterConfig,
    worker: Option<&str>,
    workers: Option<usize>,
    timeout: std::time::Duration,
    wait: Option<std::time::Duration>,
) -> anyhow::Result<(String, serde_json::Value)> {
    let deadline = std::time::Instant::now() + wait.unwrap_or_default();
    loop {
        let r = health(cfg, worker, timeout).await.and_then(|(what, v)| {
            let alive = v["workers_alive"].as_u64().unwrap_or(0) as usize;
            match workers {
                Some(n) if alive < n => anyhow::bail!("only {alive} of {n} workers alive"),
                _ => Ok((what, v)),
            }
        });
        match r {
            Ok(x) => return Ok(x),
            Err(e) if std::time::Instant::now() >= deadline => {
                return Err(match wait {
                    Some(w) => e.context(format!("not healthy after {w:?}")),
                    None => e,
                })
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(200)).await,
        }
    }
}

pub async fn status(cfg: &ClusterConfig, as_json: bool) -> anyhow::Result<()> {
    let dfs = Dfs::connect(cfg)?;
    let st = dfs
        .master()
        .cluster_status(proto::Empty {})
        .await
        .map_err(rpc::dfs::DfsError::from)?
        .into_inner();
    if as_json {
        let ui = cfg.ui_url();
        let out = rpc::json::cluster_status(&st, &cfg.master.addr, ui.as_deref());
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    let now = common::now_ms();
    let rows: Vec<Vec<String>> = st
        .workers
        .iter()
        .map(|w| {
            let r = w.resources.clone().unwrap_or_default();
            vec![
                w.name.clone(),
                w.addr.clone(),
                w.rack.clone(),
                state(w),
                if w.last_heartbeat_ms == 0 {
                    "never".into()
                } else {
                    format!(
                        "{:.1}s ago",
                        now.saturating_sub(w.last_heartbeat_ms) as f64 / 1e3
                    )
                },
                format!("{}/{}", w.free_map_slots, w.map_slots),
                format!("{}/{}", w.free_reduce_slots, w.reduce_slots),
                w.blocks.to_string(),
                format!(
                    "{}/{}",
                    format_size(w.cache_used_bytes),
                    format_size(w.cache_capacity_bytes)
                ),
                format!("{:.0}%", r.cpu_pct),
                format!("{:.2}", r.load1),
                format!(
                    "{}/{}",
                    format_size(r.mem_used_bytes),
                    format_size(r.mem_total_bytes)
                ),
                format!(
                    "{}/{}",
                    format_size(r.disk_read_bps),
                    format_size(r.disk_write_bps)
                ),
                format!(
                    "{}/{}",
                    format_size(r.net_rx_bps),
                    format_size(r.net_tx_bps)
                ),
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &[
                "NAME",
                "ADDR",
                "RACK",
                "STATE",
                "HEARTBEAT",
                "MAP",
                "REDUCE",
                "BLOCKS",
                "CACHE",
                "CPU",
                "LOAD",
                "MEM",
                "DISK R/W /s",
                "NET RX/TX /s"
            ],
            &rows
        )
    );
    let alive = st.workers.iter().filter(|w| w.alive).count();
    println!(
        "\n{alive}/{} workers alive; {} files, {} blocks, {} under-replicated",
        st.workers.len(),
        st.files,
        st.blocks,
        st.under_replicated_blocks
    );
    if let Some(ui) = cfg.ui_url() {
        println!("web UI, REST API and metrics: {ui}");
    }
    Ok(())
}

/// `alive` or `dead`, and where the worker is on its way out, with its
/// blocks left to copy while it is: `alive, decommissioning (12 left)`.
fn state(w: &proto::WorkerStatus) -> String {
    let life = if w.alive { "alive" } else { "dead" };
    match w.admin_state.as_str() {
        "" | "normal" => life.to_string(),
        "decommissioned" => format!("{life}, decommissioned"),
        s => format!("{life}, {s} ({} left)", w.blocks_under_replicated),
    }
}
