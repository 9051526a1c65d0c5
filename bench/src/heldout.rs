//! The simulator scored on runs it was not fitted on, from finished
//! `mr bench trace --out` directories alone (`mr sim heldout DIR...`;
//! `mr bench trace` calls it on its own directory when it ends): no
//! cluster is needed, so a long matrix's results can be scored again as the
//! simulator improves.
//!
//! Each directory gives its cluster (the `cluster and shaping` line of its
//! `summary.md`: workers, racks, slots, cache, replication, heartbeat, the
//! shaped rates), its scaling (block size, pool, seed), its jobs as
//! replayed at each load (`trace-jobs.csv`: arrival, maps, reduces, shuffle
//! bytes, and the blocks each row read, drawn again from the pool with the
//! seed as the replay drew them) and the measured job times. The task model
//! is fitted (`sim::calibrate`) on one run's history
//! (`history/load-L/POLICY/repN/`), then every policy is simulated at every
//! load of every directory and its mean job time compared with the
//! cluster's: Spearman's rank correlation over the policies, and each
//! policy's absolute percentage error. A cell is held out on the axes it
//! differs from the fitted run in: the load, the seed (other blocks drawn,
//! another replay), the trace. The control is the rate-from-config model
//! (no fitting): the default compute and reduce rates with the shaped
//! rates of the config as the links' capacities.

use super::csv_table::read_table;
use super::heldout_cells::{self, Json, Sims};
pub use super::heldout_fit::{config_model, FitChoice};
use super::heldout_fit::{fit_model, fitted_run, Fitted};
use super::paper::simulator::spearman;
use super::trace;
use anyhow::{bail, Context};
use sim::config::JobSpec;
use sim::model::TaskModel;
use sim::SimConfig;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Seeds of the simulator per cell (block placement and jitter); the
/// figure is their mean, as the cluster's is the repetitions'.
const SIM_SEEDS: u64 = 12;

/// The cluster as the report's header recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub nodes: usize,
    pub racks: usize,
    pub map_slots: u32,
    pub reduce_slots: u32,
    pub cache: u64,
    pub replication: usize,
    pub heartbeat_s: f64,
    /// The shaped rates, bytes/s, where the network was shaped.
    pub host_rate: Option<f64>,
    pub uplink_rate: Option<f64>,
}

/// What a `mr bench trace` directory's `summary.md` says about its run.
#[derive(Debug, Clone, PartialEq)]
pub struct DirMeta {
    pub shape: Shape,
    pub trace: String,
    pub block_size: u64,
    pub pool_blocks: usize,
    pub seed: u64,
}

/// Reads the header lines of a `summary.md` (`trace_report::summary`).
pub fn parse_summary(text: &str) -> anyhow::Result<DirMeta> {
    let line = |prefix: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .ok_or_else(|| anyhow::anyhow!("no `{prefix}` line"))
    };
    let cluster = line("- cluster and shaping: ")?;
    let kv: BTreeMap<&str, &str> = cluster
        .split("; ")
        .filter_map(|p| p.split_once('='))
        .collect();
    let get = |k: &str| {
        kv.get(k)
            .copied()
            .ok_or_else(|| anyhow::anyhow!("the cluster line has no {k}="))
    };
    let num = |k: &str| -> anyhow::Result<u64> {
        get(k)?
            .parse()
            .map_err(|_| anyhow::anyhow!("{k}={} is not a number", get(k).unwrap_or("")))
    };
    let size = |s: &str| {
        common::units::parse_size(s).map_err(|e| anyhow::anyhow!("{s:?} is not a size: {e}"))
    };
    let rate = |k: &str| {
        kv.get(k)
            .and_then(|r| common::units::parse_rate(r).ok())
            .filter(|r| *r > 0.0)
    };
    let heartbeat_ms = get("heartbeat")?
        .strip_suffix("ms")
        .and_then(|m| m.parse::<f64>().ok())
        .ok_or_else(|| anyhow::anyhow!("heartbeat= is not in ms"))?;
    let shape = Shape {
        nodes: num("workers")? as usize,
        racks: (num("racks")? as usize).max(1),
        map_slots: num("map_slots")? as u32,
        reduce_slots: num("reduce_slots")? as u32,
        cache: size(get("cache")?)?,
        replication: num("replication")? as usize,
        heartbeat_s: heartbeat_ms / 1e3,
        host_rate: rate("host_rate"),
        uplink_rate: rate("uplink_rate"),
    };
    let scaling = line("- scaling: ")?;
    let between = |s: &'static str, e: &'static str| {
        let a = scaling
            .find(s)
            .ok_or_else(|| anyhow::anyhow!("the scaling line has no `{s}`"))?
            + s.len();
        let len = scaling[a..].find(e).unwrap_or(scaling.len() - a);
        anyhow::Ok(scaling[a..a + len].trim())
    };
    let block_size = size(between("blocks of ", ",")?)?;
    let pool_blocks = between("a pool of ", " blocks")?
        .parse()
        .context("the pool's block count")?;
    let seed = between("with seed ", " ")?
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .context("the seed")?;
    let tr = line("- trace: ")?;
    let trace = tr.split(" rows ").next().unwrap_or(tr).to_string();
    Ok(DirMeta {
        shape,
        trace,
        block_size,
        pool_blocks,
        seed,
    })
}

/// One measured job of a directory, as the simulator needs it.
#[derive(Debug, Clone)]
struct Measured {
    load: String,
    policy: String,
    rep: u32,
    row: usize,
    maps: usize,
    reduces: usize,
    shuffle: u64,
    at_s: f64,
    exec_s: f64,
}

/// A finished `mr bench trace --out` directory.
pub struct TraceDir {
    pub path: PathBuf,
    pub meta: DirMeta,
    /// In the order the run made them.
    pub loads: Vec<String>,
    pub policies: Vec<String>,
    jobs: Vec<Measured>,
}

impl TraceDir {
    pub fn load(path: &Path) -> anyhow::Result<TraceDir> {
        let ctx = |what: &str| {
            format!(
                "{} is not a finished `mr bench trace --out` directory ({what})",
                path.display()
            )
        };
        let summary = std::fs::read_to_string(path.join("summary.md"))
            .with_context(|| ctx("no summary.md"))?;
        let meta = parse_summary(&summary).with_context(|| ctx("summary.md's header"))?;
        let mut jobs = Vec::new();
        for (i, r) in read_table(&path.join("trace-jobs.csv"))
            .with_context(|| ctx("trace-jobs.csv"))?
            .iter()
            .enumerate()
        {
            let f = |k: &str| {
                r.get(k)
                    .map(String::as_str)
                    .ok_or_else(|| anyhow::anyhow!("trace-jobs.csv row {}: no {k}", i + 2))
            };
            let n = |k: &str| -> anyhow::Result<f64> {
                f(k)?.parse().map_err(|_| {
                    anyhow::anyhow!("trace-jobs.csv row {}: {k} is not a number", i + 2)
                })
            };
            jobs.push(Measured {
                load: f("load")?.to_string(),
                policy: f("policy")?.to_string(),
                rep: n("rep")? as u32,
                row: n("row")? as usize,
                maps: n("maps")? as usize,
                reduces: n("reduces")? as usize,
                shuffle: n("want_shuffle")? as u64,
                at_s: n("at_s")?,
                exec_s: n("exec_time_s")?,
            });
        }
        if jobs.is_empty() {
            bail!("{}", ctx("trace-jobs.csv holds no job"));
        }
        let mut loads: Vec<String> = Vec::new();
        let mut policies: Vec<String> = Vec::new();
        for r in read_table(&path.join("trace-runs.csv")).with_context(|| ctx("trace-runs.csv"))? {
            if let Some(l) = r.get("load") {
                if !loads.contains(l) {
                    loads.push(l.clone());
                }
            }
            if let Some(p) = r.get("policy") {
                if !policies.contains(p) {
                    policies.push(p.clone());
                }
            }
        }
        for j in &jobs {
            if !loads.contains(&j.load) {
                loads.push(j.load.clone());
            }
            if !policies.contains(&j.policy) {
                policies.push(j.policy.clone());
            }
        }
        Ok(TraceDir {
            path: path.to_path_buf(),
            meta,
            loads,
            policies,
            jobs,
        })
    }

    /// The jobs of `load` as replayed, in arrival order: each row once,
    /// reading the blocks the replay drew for it.
    pub fn workload(&self, load: &str) -> Vec<JobSpec> {
        let mut rows: BTreeMap<usize, &Measured> = BTreeMap::new();
        for j in self.jobs.iter().filter(|j| j.load == load) {
            rows.entry(j.row).or_insert(j);
        }
        let mut v: Vec<JobSpec> = rows
            .values()
            .map(|j| JobSpec {
                arrival_s: j.at_s,
                maps: j.maps,
                reduces: j.reduces,
                shuffle_bytes: j.shuffle,
                blocks: trace::blocks(j.row, j.maps as u32, self.meta.pool_blocks, self.meta.seed)
                    .into_iter()
                    .map(|b| b as u64)
                    .collect(),
            })
            .collect();
        v.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
        v
    }

    /// The cluster's mean job time of `policy` at `load` over every
    /// repetition, and the repetitions.
    fn measured(&self, load: &str, policy: &str) -> Option<(f64, usize)> {
        let v: Vec<&Measured> = self
            .jobs
            .iter()
            .filter(|j| j.load == load && j.policy == policy)
            .collect();
        let mut reps: Vec<u32> = v.iter().map(|j| j.rep).collect();
        reps.sort_unstable();
        reps.dedup();
        (!v.is_empty()).then(|| {
            (
                v.iter().map(|j| j.exec_s).sum::<f64>() / v.len() as f64,
                reps.len(),
            )
        })
    }

    /// The simulator's cluster for this directory.
    fn base(&self) -> SimConfig {
        let s = &self.meta.shape;
        SimConfig {
            nodes: s.nodes,
            racks: s.racks.min(s.nodes.max(1)),
            slots: s.map_slots,
            reduce_slots: s.reduce_slots,
            replication: s.replication.min(s.nodes.max(1)),
            idle_ratio: 1.0,
            blocks: Some(self.meta.pool_blocks),
            block_size: self.meta.block_size,
            cache_size: s.cache,
            heartbeat_s: s.heartbeat_s,
            offers: true,
            ..SimConfig::default()
        }
    }
}

fn mape(sim: f64, lan: f64) -> f64 {
    if lan > 0.0 {
        100.0 * (sim - lan).abs() / lan
    } else {
        f64::NAN
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The report's head: the fitted run, both models, and how they are run.
fn write_models(s: &mut String, first: &TraceDir, f: &Fitted, m: &TaskModel, notes: &[String]) {
    let _ = writeln!(
        s,
        "Fitted on one run: {}, load {}, {}, repetition {} ({}).\n",
        first.path.display(),
        f.load,
        f.policy,
        f.rep,
        f.dir.display()
    );
    let ctl0 = config_model(first.meta.shape.host_rate, first.meta.shape.uplink_rate);
    let _ = writeln!(
        s,
        "- fitted model: a map's compute {:.4} s + {:.4} s per input MiB + {:.4} s per output MiB; one read alone, MB/s: cache {:.0}, node {:.0}, cache-rack {:.1}, rack (port) {:.1}, off-rack (uplink) {:.1}; reduce {:.3} s + {:.4} s/MiB after its fetches; tail after the last task {:.3} s + {:.4} s per shuffle MiB",
        m.map_fixed_s,
        m.compute_s_per_mib,
        m.compute_s_per_out_mib,
        m.bandwidth[0] / 1e6,
        m.bandwidth[1] / 1e6,
        m.bandwidth[2] / 1e6,
        m.bandwidth[3] / 1e6,
        m.bandwidth[4] / 1e6,
        m.reduce_fixed_s,
        m.reduce_s_per_mib,
        m.tail_fixed_s,
        m.tail_s_per_shuffle_mib
    );
    let _ = writeln!(
        s,
        "- control (rate from config, no fitting): compute {:.4} s/MiB; port {:.1}, uplink {:.1} MB/s; reduce {:.3} s + {:.4} s/MiB; no tail",
        ctl0.compute_s_per_mib,
        ctl0.bandwidth[3] / 1e6,
        ctl0.bandwidth[4] / 1e6,
        ctl0.reduce_fixed_s,
        ctl0.reduce_s_per_mib
    );
    for n in notes {
        let _ = writeln!(s, "- calibration: {n}");
    }
    let _ = writeln!(
        s,
        "\nBoth models run the same simulator: maps reading the blocks each row read on the cluster, remote reads and shuffle fetches sharing node ports and rack uplinks max-min fairly (re-evaluated as transfers start and end), reduces once a job's maps are done, the master's launch timing (launches at once, idle nodes offered when work appears, heartbeats at the cluster's interval). Each figure is the mean over {SIM_SEEDS} simulator seeds (block placement, jitter); the cluster's is the mean over its repetitions. Mean job times in seconds; error: |sim - cluster| / cluster. A cell is held out on the axes it differs from the fitted run in.",
    );
}

/// The held-out cells' figures, gathered for the closing summary.
#[derive(Default)]
struct HeldOut {
    /// Spearman of each held-out cell: fitted, control.
    rho: Vec<(f64, f64)>,
    /// Errors per policy: fitted, control.
    per_policy: BTreeMap<String, (Vec<f64>, Vec<f64>)>,
    /// Every held-out (cell, policy) mean: cluster, fitted, control.
    pooled: (Vec<f64>, Vec<f64>, Vec<f64>),
}

/// The axes a cell differs from the fitted run in; none for the fitted
/// run's own cell.
fn held_axes(d: &TraceDir, first: &TraceDir, load: &str, fit_load: &str) -> Vec<&'static str> {
    let mut axes = Vec::new();
    if !std::ptr::eq(d, first) {
        if d.meta.trace != first.meta.trace {
            axes.push("trace");
        }
        if d.meta.seed != first.meta.seed {
            axes.push("seed");
        }
        if axes.is_empty() {
            axes.push("run of the same trace and seed");
        }
    }
    if load != fit_load {
        axes.push("load");
    }
    axes
}

/// The mean job time the simulator gives `policy` with `model` over
/// [`SIM_SEEDS`] seeds.
fn sim_mean(
    base: &SimConfig,
    workload: &[JobSpec],
    model: &TaskModel,
    policy: &str,
) -> anyhow::Result<f64> {
    let spec = sched::SchedulerSpec::new(policy);
    let mut t = 0.0;
    for seed in 1..=SIM_SEEDS {
        let cfg = SimConfig {
            workload: workload.to_vec(),
            model: model.clone(),
            seed,
            ..base.clone()
        };
        t += sim::run(&cfg, &spec)
            .map_err(|e| anyhow::anyhow!("simulating {policy}: {e}"))?
            .mean_job_time_s;
    }
    Ok(t / SIM_SEEDS as f64)
}

/// One (directory, load) cell: a row per policy, the cell's Spearman and
/// errors; a held-out cell's figures also go to `h`; its means returned.
fn write_cell(
    s: &mut String,
    d: &TraceDir,
    first: &TraceDir,
    load: &str,
    f: &Fitted,
    fitted: &TaskModel,
    h: &mut HeldOut,
) -> anyhow::Result<Sims> {
    let control = config_model(d.meta.shape.host_rate, d.meta.shape.uplink_rate);
    let base = d.base();
    let axes = held_axes(d, first, load, &f.load);
    let held = !axes.is_empty();
    let _ = writeln!(
        s,
        "\n## {}, load {load}: {}\n",
        d.path.display(),
        if held {
            format!("held out (another {})", axes.join(", another "))
        } else {
            format!(
                "the fitted run's load and seed (in-sample for {})",
                f.policy
            )
        }
    );
    let _ = writeln!(
        s,
        "Trace {}, seed {}, {} jobs.\n",
        d.meta.trace,
        d.meta.seed,
        d.workload(load).len()
    );
    *s += "| policy | cluster runs | cluster | sim fitted | error % | sim control | error % |\n|---|---:|---:|---:|---:|---:|---:|\n";
    let workload = d.workload(load);
    let (mut lan, mut fit_t, mut ctl_t, mut ps) = (vec![], vec![], vec![], vec![]);
    for p in &d.policies {
        let Some((m, reps)) = d.measured(load, p) else {
            continue;
        };
        let f = sim_mean(&base, &workload, fitted, p)?;
        let c = sim_mean(&base, &workload, &control, p)?;
        let (ef, ec) = (mape(f, m), mape(c, m));
        let _ = writeln!(
            s,
            "| {p} | {reps} | {m:.3} | {f:.3} | {ef:.0} | {c:.3} | {ec:.0} |"
        );
        lan.push(m);
        ps.push(p.clone());
        fit_t.push(f);
        ctl_t.push(c);
        if held {
            let e = h.per_policy.entry(p.clone()).or_default();
            e.0.push(ef);
            e.1.push(ec);
            h.pooled.0.push(m);
            h.pooled.1.push(f);
            h.pooled.2.push(c);
        }
    }
    let errs = |sim: &[f64]| {
        mean(
            &lan.iter()
                .zip(sim)
                .map(|(m, x)| mape(*x, *m))
                .collect::<Vec<_>>(),
        )
    };
    let (rf, rc) = (spearman(&lan, &fit_t), spearman(&lan, &ctl_t));
    let _ = writeln!(
        s,
        "\nSpearman over {} policies: fitted {rf:.2}, control {rc:.2}; mean error: fitted {:.0} %, control {:.0} %.",
        lan.len(),
        errs(&fit_t),
        errs(&ctl_t)
    );
    if held && lan.len() > 1 {
        h.rho.push((rf, rc));
    }
    Ok(Sims {
        load: load.to_string(),
        held_out_on: axes,
        policies: ps,
        lab: lan,
        fitted: fit_t,
        control: ctl_t,
        ..Sims::default()
    })
}

/// The closing section: every held-out cell together.
fn write_held_out(s: &mut String, h: &HeldOut) {
    *s += "\n## Held out, all together\n\n";
    if h.rho.is_empty() {
        *s += "No held-out cell: give a directory with another load, seed or trace.\n";
        return;
    }
    let _ = writeln!(
        s,
        "Spearman over the policies, per held-out cell, then the mean over {} cells: fitted {:.2}, control {:.2}. Over all {} held-out (cell, policy) means at once: fitted {:.2}, control {:.2}.\n",
        h.rho.len(),
        mean(&h.rho.iter().map(|r| r.0).collect::<Vec<_>>()),
        mean(&h.rho.iter().map(|r| r.1).collect::<Vec<_>>()),
        h.pooled.0.len(),
        spearman(&h.pooled.0, &h.pooled.1),
        spearman(&h.pooled.0, &h.pooled.2),
    );
    *s += "| policy | held-out cells | mean error, fitted % | mean error, control % |\n|---|---:|---:|---:|\n";
    for (p, (f, c)) in &h.per_policy {
        let _ = writeln!(s, "| {p} | {} | {:.0} | {:.0} |", f.len(), mean(f), mean(c));
    }
    let all_f: Vec<f64> = h.per_policy.values().flat_map(|v| v.0.clone()).collect();
    let all_c: Vec<f64> = h.per_policy.values().flat_map(|v| v.1.clone()).collect();
    let _ = writeln!(
        s,
        "| all | {} | {:.0} | {:.0} |",
        all_f.len(),
        mean(&all_f),
        mean(&all_c)
    );
}

/// The markdown report over `dirs` (the first holds the fitted run), and
/// its figures per cell for `--json`.
pub fn report(dirs: &[TraceDir], fit: &FitChoice) -> anyhow::Result<(String, Json)> {
    let first = dirs
        .first()
        .ok_or_else(|| anyhow::anyhow!("no directory given"))?;
    let f = fitted_run(first, fit)?;
    let (fitted, notes) = fit_model(first, &f.dir)?;
    // Whose code scored the runs: the report is redone as the simulator improves.
    let commit = super::report::git_state();
    let mut s = format!(
        "# The simulator on runs it was not fitted on\n\n- computed by commit {commit}\n\n"
    );
    write_models(&mut s, first, &f, &fitted, &notes);
    // Per held-out cell: Spearman for both models; per policy: errors.
    let (mut h, mut sims) = (HeldOut::default(), vec![]);
    for (i, d) in dirs.iter().enumerate() {
        for load in &d.loads {
            let c = write_cell(&mut s, d, first, load, &f, &fitted, &mut h)?;
            sims.push(Sims { dir: i, ..c });
        }
    }
    write_held_out(&mut s, &h);
    let (control_scale, cells) = heldout_cells::cells(dirs, &sims)?;
    heldout_cells::write_table(&mut s, control_scale, &cells);
    let fitted = heldout_cells::FittedRun {
        dir: first.path.display().to_string(),
        load: f.load,
        policy: f.policy,
        rep: f.rep,
    };
    let json = Json {
        report_commit: commit,
        fitted,
        control_scale,
        cells,
    };
    Ok((s, json))
}

/// `mr sim heldout DIR...`: the report, written to `out` (default: the
/// first directory's `simulator-heldout.md`), and its figures per cell.
pub fn run(
    dirs: &[PathBuf],
    fit: &FitChoice,
    out: Option<&Path>,
) -> anyhow::Result<(PathBuf, Json)> {
    let loaded: Vec<TraceDir> = dirs
        .iter()
        .map(|d| TraceDir::load(d))
        .collect::<anyhow::Result<_>>()?;
    let (md, json) = report(&loaded, fit)?;
    let path = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dirs[0].join("simulator-heldout.md"));
    std::fs::write(&path, md).with_context(|| format!("cannot write {}", path.display()))?;
    Ok((path, json))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUMMARY: &str = "# Trace replay\n\n- command: `mr bench trace`\n\
        - date: 2024-01-01 00:00 UTC; commit abc (clean tree)\n\
        - cluster and shaping: workers=6; racks=2; map_slots=2; reduce_slots=1; cache=256.0 MiB; replication=2; dfs_block_size=1.0 MiB; heartbeat=1000ms; network=lan; host_rate=200mbit; uplink_rate=50mbit; client_cores=2; 12 map and 6 reduce slots\n\
        - trace: traces/swim/FB-2009_samples_24_times_1hr_0.tsv rows 0..40 (40 jobs, arrivals over 900 s of the trace), traced cluster 600 nodes\n\
        - scaling: bytes x0.01000 (default: our workers over the traced nodes), blocks of 1.0 MiB, at most 24 maps and 4 reduces a job, ratios capped at 8; a pool of 48 blocks, drawn per row with seed 7\n";

    #[test]
    fn the_summary_header_gives_the_cluster_and_the_scaling() {
        let m = parse_summary(SUMMARY).unwrap();
        assert_eq!(
            m.shape,
            Shape {
                nodes: 6,
                racks: 2,
                map_slots: 2,
                reduce_slots: 1,
                cache: 256 << 20,
                replication: 2,
                heartbeat_s: 1.0,
                host_rate: Some(25e6),
                uplink_rate: Some(6.25e6),
            }
        );
        assert_eq!(m.trace, "traces/swim/FB-2009_samples_24_times_1hr_0.tsv");
        assert_eq!((m.block_size, m.pool_blocks, m.seed), (1 << 20, 48, 7));
        let e = parse_summary("# Trace replay\n").unwrap_err();
        assert!(e.to_string().contains("cluster and shaping"), "{e}");
    }

    #[test]
    fn the_control_takes_its_rates_from_the_shaping() {
        let d = TaskModel {
            shared_reads: true,
            ..Default::default()
        };
        assert_eq!(config_model(None, None), d);
        let m = config_model(Some(25e6), Some(6.25e6));
        assert_eq!(m.bandwidth[3], 25e6);
        assert_eq!(m.bandwidth[4], 6.25e6);
        assert_eq!(mape(1.5, 1.0), 50.0);
    }

    /// A directory as `mr bench trace` leaves it, made by hand: the report
    /// is made again from its files alone, fitted at load 0.3 and holding
    /// out 0.9, for both policies.
    #[test]
    fn a_report_is_made_from_a_directory_alone() {
        let dir = std::env::temp_dir().join(format!("mr-heldout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let hist = dir.join("history/load-0.3/fifo/rep1");
        std::fs::create_dir_all(&hist).unwrap();
        std::fs::write(dir.join("summary.md"), SUMMARY).unwrap();
        let mut jobs = String::from(
            "load,policy,rep,row,name,job_id,maps,reduces,input_bytes,shuffle_bytes,output_bytes,want_input,want_shuffle,want_output,at_s,submit_ms,end_ms,exec_time_s,alone_s,slowdown,local_maps\n",
        );
        let mut runs = String::from("load,compression,offered_load,policy,rep,jobs,makespan_s,map_slot_use,reduce_slot_use\n");
        for (load, gap) in [("0.3", 4.0), ("0.9", 1.0)] {
            for (p, t) in [("fifo", 1.5), ("delay", 1.2)] {
                for row in 0..4 {
                    jobs += &format!(
                        "{load},{p},1,{row},job{row},{row},2,1,2000000,1000000,1000000,2000000,1000000,1000000,{},0,0,{t},1.0,{t},2\n",
                        row as f64 * gap
                    );
                }
                runs += &format!("{load},10,{load},{p},1,4,10,0.3,0.1\n");
            }
        }
        std::fs::write(dir.join("trace-jobs.csv"), jobs).unwrap();
        std::fs::write(dir.join("trace-runs.csv"), runs).unwrap();
        let mut h = String::new();
        for i in 0..4 {
            h += &format!(
                "{{\"type\":\"task\",\"kind\":\"map\",\"state\":\"succeeded\",\"locality\":\"node_local\",\"node\":\"w1\",\"start_ms\":{},\"end_ms\":{},\"runtime_s\":0.2,\"bytes\":{{\"local\":1048576}}}}\n",
                i * 1000,
                i * 1000 + 200
            );
        }
        h += "{\"type\":\"task\",\"kind\":\"reduce\",\"state\":\"succeeded\",\"end_ms\":4000,\"runtime_s\":0.5,\"bytes\":{\"shuffle\":1000000}}\n";
        h += "{\"type\":\"job\",\"end_ms\":4100,\"bytes\":{\"shuffle\":1000000}}\n";
        std::fs::write(hist.join("job-1.jsonl"), h).unwrap();

        let d = TraceDir::load(&dir).unwrap();
        assert_eq!(d.loads, vec!["0.3", "0.9"]);
        assert_eq!(d.policies, vec!["fifo", "delay"]);
        let w = d.workload("0.9");
        assert_eq!(w.len(), 4);
        assert_eq!((w[1].arrival_s, w[1].maps, w[1].reduces), (1.0, 2, 1));
        assert_eq!(w[1].blocks.len(), 2);
        let (md, json) = report(&[d], &FitChoice::default()).unwrap();
        assert_eq!((json.cells.len(), json.fitted.load.as_str()), (2, "0.3"));
        let c = &json.cells[1];
        assert_eq!(
            (c.held_out_on.clone(), c.pairs),
            (vec!["load".to_string()], 1)
        );
        assert!(c.shape.is_none() && c.ceiling.is_none(), "{c:?}");
        assert!(md.contains("load 0.3, fifo, repetition 1"), "{md}");
        assert!(md.contains("load 0.9: held out (another load)"), "{md}");
        assert!(
            md.contains("map compute 0.2000 s + 0.0000 s per input MiB + 0.0000 s per output MiB from 4 local maps"),
            "{md}"
        );
        assert!(md.contains("## Held out, all together"), "{md}");
        assert!(
            md.contains("| fifo | 1 |") && md.contains("| delay | 1 |"),
            "{md}"
        );
        // A fitted run that is not there is named.
        let e = report(
            &[TraceDir::load(&dir).unwrap()],
            &FitChoice {
                policy: Some("lsap".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("no history of the fitted run"),
            "{e}"
        );
        assert!(TraceDir::load(&dir.join("nope")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
