//! `mr sim`: the simulator from the command line, one run per policy on the
//! same cluster and seed, as a table or as `{"results": [...]}`.

use super::parse_size;
use crate::output::table;
use bench::plot::{self, Series};
use clap::Subcommand;
use sched::SchedulerSpec;
use sim::scenario::{self, Figure, SCENARIOS};
use sim::SimConfig;
use std::path::{Path, PathBuf};

/// The simulated cluster and workload. Defaults follow the LSAP paper's
/// section 4.2: 4 slots per node, replication 3, half the slots idle,
/// 20 nodes per rack, as many tasks as idle slots.
///
/// Example: mr sim --nodes 300 --scheduler fifo,lsap --seed 1 --json
#[derive(clap::Args, Clone)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SimArgs {
    #[command(subcommand)]
    cmd: Option<SimCmd>,
    #[arg(long, default_value_t = 100)]
    nodes: usize,
    /// Racks (default: one per 20 nodes).
    #[arg(long)]
    racks: Option<usize>,
    /// Map slots per node.
    #[arg(long, default_value_t = 4)]
    slots: u32,
    /// Reduce slots per node (the trace's jobs have reduces).
    #[arg(long, default_value_t = 1)]
    reduce_slots: u32,
    #[arg(long, default_value_t = 3)]
    replication: usize,
    /// Fraction of slots free at the start (the rest run other work).
    #[arg(long, default_value_t = 0.5)]
    idle_ratio: f64,
    /// Map tasks (default: the idle slots at the start).
    #[arg(long)]
    tasks: Option<usize>,
    /// Jobs the tasks are split over (with --workload mixed: jobs in the
    /// schedule).
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Seconds between job arrivals (0: all at once); with --workload
    /// mixed, the mean of the exponential inter-arrival times (0: the
    /// paper's 14 s).
    #[arg(long, default_value_t = 0.0)]
    interarrival: f64,
    /// `equal`: --tasks split over --jobs in equal shares; `mixed`: the
    /// matchmaking paper's Facebook bins (1 to 200 maps a job, times
    /// --map-scale), each map reading a block drawn from --blocks, as
    /// `mr bench --workloads mixed` runs on a cluster.
    #[arg(long, default_value = "equal", value_parser = ["equal", "mixed"])]
    workload: String,
    /// Mixed: factor on the bins' map counts.
    #[arg(long, default_value_t = 1.0)]
    map_scale: f64,
    /// Replay a SWIM trace's rows (as `mr bench trace` does: bytes scaled
    /// to --nodes, whole blocks of --block-size, at most --max-maps maps,
    /// arrivals compressed by --compression or to --load, at most
    /// --max-reduces reduces fetching the row's scaled shuffle); replaces
    /// --workload.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// The trace slice: rows FROM..FROM+N.
    #[arg(long, default_value_t = 0)]
    trace_from: usize,
    #[arg(long, default_value_t = 40)]
    trace_jobs: usize,
    /// The traced cluster's nodes (known for the FB-2009 and FB-2010 samples).
    #[arg(long)]
    traced_nodes: Option<u32>,
    /// The factor on the trace's bytes (default: --nodes over the traced nodes).
    #[arg(long)]
    byte_scale: Option<f64>,
    #[arg(long, default_value_t = 24)]
    max_maps: u32,
    #[arg(long, default_value_t = 4)]
    max_reduces: u32,
    /// Trace seconds per simulated second.
    #[arg(long, default_value_t = 60.0)]
    compression: f64,
    /// The offered load to compress the arrivals to instead, with the
    /// task model's node-local map times as the task-seconds.
    #[arg(long)]
    load: Option<f64>,
    /// Block cache per node (0: none).
    #[arg(long, default_value = "0", value_parser = parse_size)]
    cache_size: u64,
    #[arg(long, default_value = "64MiB", value_parser = parse_size)]
    block_size: u64,
    /// Distinct blocks read in turn (default: one per task).
    #[arg(long)]
    blocks: Option<usize>,
    /// Heartbeat interval, seconds.
    #[arg(long, default_value_t = 3.0)]
    heartbeat: f64,
    /// When launches happen: `offer` (this project's master: at once on
    /// any node, idle nodes offered when work appears) or `heartbeat`
    /// (Hadoop's, the papers': a node gets work on its own heartbeat).
    #[arg(long, default_value = "offer", value_parser = ["offer", "heartbeat"])]
    launch: String,
    /// Remote reads and shuffle fetches share node ports and rack uplinks
    /// (max-min fair, re-evaluated as transfers start and end), whatever
    /// --model says.
    #[arg(long)]
    shared_network: bool,
    /// Task model from `mr sim calibrate` (default: this project's LAN
    /// measurements).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Policies, comma-separated; each runs on the same cluster and seed.
    #[arg(long, value_delimiter = ',', default_value = "fifo,delay,lsap")]
    scheduler: Vec<String>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand, Clone)]
pub(crate) enum SimCmd {
    /// Rerun a paper's experiment and print our figures beside the
    /// paper's (`list` names them, `all` runs every one); with --out, a
    /// markdown report and a PNG per scenario.
    Scenario {
        name: String,
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The figures as a JSON array (name, title, axes, xs, and per
        /// column our values and the paper's) instead of markdown.
        #[arg(long)]
        json: bool,
    },
    /// Fit the task model (compute s/MiB, read bandwidth per locality
    /// level) to job history: JSON lines from `mr job history ID`, or the
    /// `history/` directory `mr bench` writes.
    Calibrate {
        #[arg(long)]
        history: PathBuf,
        /// Write the model here (for `mr sim --model FILE`).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Score the simulator on runs it was not fitted on, from finished
    /// `mr bench trace --out` directories alone (no cluster): fit on one
    /// run of the first directory, simulate every policy at every load of
    /// every directory, and write held-out Spearman and per-policy errors
    /// beside the rate-from-config control (default: the first
    /// directory's simulator-heldout.md). Each cell is also set beside what
    /// the lab can tell apart: its split-half ceiling, the policy pairs
    /// whose paired difference over runs excludes 0 and how many of them
    /// the model orders alike, errors in seconds, and a control scaled by
    /// one constant.
    ///
    /// Example: mr sim heldout bench-load-fb09 bench-load-fb09-seed2 bench-load-fb10
    Heldout {
        /// `mr bench trace --out` directories; the first holds the fitted run.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// The fitted run's load (default: the first directory's first).
        #[arg(long)]
        fit_load: Option<String>,
        /// The fitted run's policy (default: the first directory's first).
        #[arg(long)]
        fit_policy: Option<String>,
        /// The fitted run's repetition.
        #[arg(long, default_value_t = 1)]
        fit_rep: u32,
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also print to stdout one JSON object: `fitted` {dir, load,
        /// policy, rep}, `control_scale`, and `cells`, one per (directory,
        /// load): dir, trace, shape (map-bound or reduce-bound), load,
        /// held_out_on (load, seed, trace; empty for the fitted cell),
        /// policies, runs, spearman, ceiling, control_spearman,
        /// scaled_control_spearman, mae, control_mae, scaled_control_mae
        /// (seconds), pairs_right, pairs_decided, pairs.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `mr sim` or one of its subcommands.
pub fn dispatch(a: SimArgs) -> anyhow::Result<()> {
    match &a.cmd {
        Some(SimCmd::Scenario {
            name,
            out,
            seed,
            json,
        }) => return scenario(name, out.as_deref(), *seed, *json),
        Some(SimCmd::Calibrate { history, out }) => return calibrate(history, out.as_deref()),
        Some(SimCmd::Heldout {
            dirs,
            fit_load,
            fit_policy,
            fit_rep,
            out,
            json,
        }) => {
            let fit = bench::heldout::FitChoice {
                load: fit_load.clone(),
                policy: fit_policy.clone(),
                rep: *fit_rep,
            };
            let (path, figures) = bench::heldout::run(dirs, &fit, out.as_deref())?;
            eprintln!("report: {}", path.display());
            if *json {
                println!("{}", serde_json::to_string_pretty(&figures)?);
            }
            return Ok(());
        }
        None => {}
    }
    let cfg = sim::SimConfig {
        nodes: a.nodes,
        racks: a.racks.unwrap_or(sim::SimConfig::default_racks(a.nodes)),
        slots: a.slots,
        reduce_slots: a.reduce_slots,
        replication: a.replication,
        idle_ratio: a.idle_ratio,
        tasks: a.tasks,
        jobs: a.jobs,
        interarrival_s: a.interarrival,
        cache_size: a.cache_size,
        block_size: a.block_size,
        blocks: a.blocks,
        heartbeat_s: a.heartbeat,
        offers: a.launch == "offer",
        pools: 3,
        seed: a.seed,
        model: {
            let mut m = match &a.model {
                Some(p) => {
                    sim::calibrate::from_json(&std::fs::read_to_string(p).map_err(|e| {
                        anyhow::anyhow!("cannot read the model {}: {e}", p.display())
                    })?)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?
                }
                None => sim::model::TaskModel::default(),
            };
            m.shared_reads |= a.shared_network;
            m
        },
        workload: if let Some(t) = &a.trace {
            trace_workload(&TraceArgs {
                file: t.clone(),
                from: a.trace_from,
                jobs: a.trace_jobs,
                traced_nodes: a.traced_nodes,
                byte_scale: a.byte_scale,
                nodes: a.nodes,
                slots: a.slots,
                block_size: a.block_size,
                max_maps: a.max_maps,
                max_reduces: a.max_reduces,
                compression: a.compression,
                load: a.load,
            })?
        } else if a.workload == "mixed" {
            if !(a.map_scale.is_finite() && a.map_scale > 0.0) {
                anyhow::bail!("--map-scale must be a number > 0, not {}", a.map_scale);
            }
            let mean = if a.interarrival > 0.0 {
                a.interarrival
            } else {
                14.0
            };
            sim::config::facebook_mixed(a.jobs, mean, a.map_scale, a.seed)
        } else {
            vec![]
        },
    };
    run(&cfg, &a.scheduler, a.json)
}

/// `mr sim --trace`: which rows and how they are scaled.
pub struct TraceArgs {
    pub file: PathBuf,
    pub from: usize,
    pub jobs: usize,
    pub traced_nodes: Option<u32>,
    pub byte_scale: Option<f64>,
    pub nodes: usize,
    pub slots: u32,
    pub block_size: u64,
    pub max_maps: u32,
    pub max_reduces: u32,
    pub compression: f64,
    pub load: Option<f64>,
}

/// The simulator's schedule for a trace slice, scaled as `mr bench trace`
/// scales it (`bench::trace`): the same rows give the same map
/// counts and, at the same compression, the same arrival times. With a
/// load, the compression comes from the task model's node-local map time
/// over the map slots. Each job has the row's reduces (at most
/// `max_reduces`) fetching its scaled shuffle bytes.
pub fn trace_workload(t: &TraceArgs) -> anyhow::Result<Vec<sim::config::JobSpec>> {
    use bench::{load, trace};
    let file = t.file.display().to_string();
    let text = std::fs::read_to_string(&t.file)
        .map_err(|e| anyhow::anyhow!("cannot read the trace {file}: {e}"))?;
    let rows = trace::slice(&trace::parse(&file, &text)?, t.from, t.jobs);
    if rows.is_empty() {
        anyhow::bail!("{file}: --trace-from {} leaves no row", t.from);
    }
    let traced = t
        .traced_nodes
        .or_else(|| trace::traced_nodes(&file))
        .ok_or_else(|| anyhow::anyhow!("{file}: give --traced-nodes"))?;
    let mut scale = trace::Scale::new(
        t.nodes as u32,
        traced,
        t.block_size,
        t.max_maps,
        t.max_reduces,
    );
    if let Some(b) = t.byte_scale {
        if !(b > 0.0 && b.is_finite()) {
            anyhow::bail!("--byte-scale must be a number above 0");
        }
        scale.bytes = b;
    }
    let mut compression = t.compression;
    if !(compression > 0.0 && compression.is_finite()) {
        anyhow::bail!("--compression must be a number above 0");
    }
    if let Some(l) = t.load {
        let jobs = trace::scale(&rows, t.from, &scale, 1.0);
        let model = sim::model::TaskModel::default();
        let per_map = model.mean_duration(sched::Locality::NodeLocal, t.block_size, 0);
        let task_s: f64 = jobs.iter().map(|j| j.maps as f64 * per_map).sum();
        let slots = t.nodes as u32 * t.slots;
        compression =
            load::compression_for(l, task_s, slots, trace::span_s(&rows)).ok_or_else(|| {
                anyhow::anyhow!(
                    "--load needs a number above 0 and a slice whose arrivals span some time"
                )
            })?;
    }
    Ok(trace::scale(&rows, t.from, &scale, compression)
        .into_iter()
        .map(|j| sim::config::JobSpec {
            arrival_s: j.at.as_secs_f64(),
            maps: j.maps as usize,
            reduces: j.reduces as usize,
            shuffle_bytes: (j.maps as f64 * t.block_size as f64 * j.shuffle_ratio) as u64,
            blocks: vec![],
        })
        .collect())
}

pub fn run(cfg: &SimConfig, schedulers: &[String], as_json: bool) -> anyhow::Result<()> {
    cfg.validate()?;
    let mut results = Vec::new();
    for name in schedulers {
        let r =
            sim::run(cfg, &SchedulerSpec::new(name)).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        if !as_json {
            eprintln!(
                "{name}: {} maps, {} decisions in {:.2}s",
                r.maps(),
                r.decisions,
                r.wall_s
            );
        }
        results.push(r);
    }
    if as_json {
        let v: Vec<_> = results.iter().map(|r| r.to_json()).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "results": v }))?
        );
        return Ok(());
    }
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let mut row = vec![
                r.scheduler.clone(),
                format!("{:.1}%", 100.0 * r.locality_rate()),
            ];
            row.extend(r.locality.iter().map(|n| n.to_string()));
            row.extend([
                format!("{:.1}", r.makespan_s),
                format!("{:.3}", r.mean_job_time_s),
                format!("{:.0}", r.data_locality_cost),
                format!("{:.3}", r.fairness_distance),
                format!("{:.3}", r.decision_pct(0.5)),
                format!("{:.3}", r.decision_pct(0.99)),
            ]);
            row
        })
        .collect();
    print!(
        "{}",
        table(
            &[
                "SCHEDULER",
                "LOCAL",
                "CACHE",
                "NODE",
                "C-RACK",
                "RACK",
                "OFF",
                "MAKESPAN s",
                "MEAN JOB s",
                "DLC",
                "FAIRNESS",
                "DECIDE p50 ms",
                "p99 ms",
            ],
            &rows
        )
    );
    Ok(())
}

/// `mr sim scenario NAME|list|all`.
pub fn scenario(name: &str, out: Option<&Path>, seed: u64, json: bool) -> anyhow::Result<()> {
    if name == "list" {
        if json {
            let v: Vec<_> = SCENARIOS
                .iter()
                .map(|s| serde_json::json!({"name": s.name, "about": s.about}))
                .collect();
            println!("{}", serde_json::Value::Array(v));
            return Ok(());
        }
        for s in SCENARIOS {
            println!("{:<16} {}", s.name, s.about);
        }
        return Ok(());
    }
    let mut figures = Vec::new();
    let chosen: Vec<&scenario::Scenario> = if name == "all" {
        SCENARIOS.iter().collect()
    } else {
        vec![scenario::find(name).map_err(anyhow::Error::msg)?]
    };
    if let Some(dir) = out {
        std::fs::create_dir_all(dir)?;
    }
    let mut report = String::from("# Simulated scenarios: our figures beside the papers'\n\n");
    for s in chosen {
        let t = std::time::Instant::now();
        let f = s
            .run(seed)
            .map_err(|e| anyhow::anyhow!("{}: {e}", s.name))?;
        eprintln!("{}: {:.1}s", s.name, t.elapsed().as_secs_f64());
        let md = f.markdown();
        if json {
            figures.push(figure_json(&f));
        } else {
            println!("{md}");
        }
        report += &md;
        if let Some(dir) = out {
            match plot_figure(&f, &dir.join(format!("{}.png", f.name))) {
                Ok(()) => report += &format!("\n![{0}]({0}.png)\n\n", f.name),
                Err(e) => report += &format!("\n(plot failed: {e:#})\n\n"),
            }
        }
    }
    if let Some(dir) = out {
        std::fs::write(dir.join("scenarios.md"), report)?;
        eprintln!("report: {}", dir.join("scenarios.md").display());
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&figures)?);
    }
    Ok(())
}

/// A figure for `--json`: our values and the paper's (null where it gives
/// none) per column, over the same xs.
fn figure_json(f: &Figure) -> serde_json::Value {
    serde_json::json!({
        "name": f.name,
        "title": f.title,
        "x_label": f.x_label,
        "y_label": f.y_label,
        "xs": f.xs,
        "columns": f.columns.iter().map(|c| serde_json::json!({
            "label": c.label, "ours": c.ours, "paper": c.paper,
        })).collect::<Vec<_>>(),
        "notes": f.notes,
    })
}

/// Our curves as lines; the paper's points as a second series per column.
fn plot_figure(f: &Figure, path: &Path) -> anyhow::Result<()> {
    let mut series = Vec::new();
    for c in &f.columns {
        series.push(Series {
            label: format!("{} (ours)", c.label),
            points: f.xs.iter().copied().zip(c.ours.iter().copied()).collect(),
        });
        let paper: Vec<(f64, f64)> =
            f.xs.iter()
                .zip(&c.paper)
                .filter_map(|(&x, p)| p.map(|p| (x, p)))
                .collect();
        if !paper.is_empty() {
            series.push(Series {
                label: format!("{} (paper)", c.label),
                points: paper,
            });
        }
    }
    let fmt = |x: f64| {
        if x >= (1u64 << 30) as f64 {
            common::units::format_size(x as u64)
        } else {
            format!("{x}")
        }
    };
    plot::lines(
        path, &f.title, &f.x_label, &f.y_label, &series, f.x_log2, &fmt,
    )
}

/// `mr sim calibrate --history DIR [--out FILE]`.
pub fn calibrate(history: &Path, out: Option<&Path>) -> anyhow::Result<()> {
    let samples = sim::calibrate::load(history).map_err(anyhow::Error::msg)?;
    let (mut model, mut said) =
        sim::calibrate::fit(&samples).map_err(|e| anyhow::anyhow!("{}: {e}", history.display()))?;
    // The reduces' time after their fetches, and the jobs' tails after
    // their last tasks (the commit), from the same files.
    let reduces = sim::calibrate::load_reduces(history).map_err(anyhow::Error::msg)?;
    said.push(sim::calibrate::fit_reduce(&mut model, &reduces));
    let tails = sim::calibrate::load_tails(history).map_err(anyhow::Error::msg)?;
    said.push(sim::calibrate::fit_tail(&mut model, &tails));
    for l in &said {
        eprintln!("{l}");
    }
    let text = serde_json::to_string_pretty(&sim::calibrate::to_json(&model))?;
    match out {
        Some(p) => {
            std::fs::write(p, text + "\n")?;
            eprintln!(
                "model written to {} (use: mr sim --model {})",
                p.display(),
                p.display()
            );
        }
        None => println!("{text}"),
    }
    Ok(())
}
