//! `mr bench paper NAME --out DIR`: each seed paper's headline experiment
//! rerun with real WordCount, Sort and TeraSort jobs on whatever cluster the
//! config names (the emulated LAN of `scripts/lan.sh` is the reference),
//! scaled to a small cluster, and written as `DIR/NAME.md` (our figures
//! beside the paper's, the setup, and where ours differs) with a PNG and
//! the rows in `DIR/NAME.csv`.
//!
//! Every job is validated as in `mr bench`; a cell that fails is reported
//! and never becomes a figure. Within a repetition every policy runs once,
//! in turn, over the same schedule and inputs. `--quick` shrinks every
//! experiment to a smoke run (one repetition, tiny inputs) that checks the
//! harness end to end, not the papers.
//!
//! The experiments, one file each: [`clqlmrs`], [`hybsmrp`],
//! [`matchmaking`], [`lsap`], [`compat_nb`], and [`simulator`] (the
//! calibrated simulator against the cluster, every policy).

pub mod claims;
pub mod clqlmrs;
pub mod compat_nb;
pub mod hybsmrp;
pub mod lsap;
pub mod matchmaking;
pub mod simulator;
pub mod stats;

use super::cluster::Cluster;
use super::matrix::{
    configured_caches, restore_caches, restore_scheduler, run_cells, SchedulerLeft,
};
use super::report::utc;
use super::results::{CsvWriter, Row};
use super::runner::{Cell, Runner};
use super::{CacheMode, Workload};
use crate::progress::MatrixProgress;
use anyhow::{bail, Context};
use common::config::ClusterConfig;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What `mr bench paper` accepts, in the order `all` runs them.
pub const NAMES: [&str; 6] = [
    "clqlmrs",
    "hybsmrp",
    "matchmaking",
    "lsap",
    "compat-nb",
    "simulator",
];

#[derive(Debug, Clone)]
pub struct PaperOpts {
    pub out: PathBuf,
    /// Repetitions per cell (`--quick`: 1).
    pub reps: u32,
    pub quick: bool,
    pub seed: u64,
    pub quiet: bool,
    /// Make the reports again from the CSVs (and, for `simulator`, the
    /// history) an earlier run left in `out`, without running a job.
    pub reuse: bool,
}

/// The stem of a paper's report files: `DIR/STEM.md`, `.csv`, `.png`.
pub fn stem(paper: &str) -> &str {
    match paper {
        "simulator" => "simulator-vs-lan",
        p => p,
    }
}

/// The papers `name` asks for.
pub fn parse(name: &str) -> anyhow::Result<Vec<&'static str>> {
    if name == "all" {
        return Ok(NAMES.to_vec());
    }
    match NAMES.iter().find(|n| **n == name) {
        Some(n) => Ok(vec![*n]),
        None => bail!("unknown paper {name:?}: use {} or all", NAMES.join(", ")),
    }
}

/// One policy as an experiment runs it: its registry name, parameters,
/// and the label its rows carry.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub label: &'static str,
    pub name: &'static str,
    pub params: &'static [(&'static str, &'static str)],
}

impl Policy {
    pub const fn plain(name: &'static str) -> Self {
        Policy {
            label: name,
            name,
            params: &[],
        }
    }
}

/// The sizes an experiment is built from.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub block: u64,
    /// The mixed workload's block pool.
    pub pool: u64,
    /// Jobs of a mixed schedule and their mean inter-arrival time.
    pub jobs: u32,
    pub interarrival: Duration,
}

impl Scale {
    fn new(quick: bool) -> Self {
        if quick {
            Scale {
                block: 256 << 10,
                pool: 4 << 20,
                jobs: 4,
                interarrival: Duration::from_millis(300),
            }
        } else {
            // The shoot-out's mixed workload (docs/bench/shootout): 16
            // blocks of 16 MiB, 15 jobs 2 s apart on average.
            Scale {
                block: 16 << 20,
                pool: 256 << 20,
                jobs: 15,
                interarrival: Duration::from_secs(2),
            }
        }
    }

    /// Bytes the generators cut into exactly `maps` blocks.
    pub fn bytes_for_maps(&self, maps: u64) -> u64 {
        maps * (self.block - self.block / 32)
    }
}

/// What an experiment works with: the cluster, the options, and where its
/// rows and failures go.
pub struct Ctx<'a> {
    /// None with `--reuse`: nothing runs.
    runner: Option<&'a mut Runner>,
    pub opts: &'a PaperOpts,
    pub scale: Scale,
    pub cfg: &'a ClusterConfig,
    /// The paper being run: rows' `sweep` column.
    pub paper: &'static str,
    csv: CsvWriter,
    pub rows: Vec<Row>,
    pub failures: Vec<String>,
    /// An experiment's own bound on `--reps`, where a cell takes minutes
    /// (TeraSort over a shaped network, every policy in the simulator's).
    pub max_reps: Option<u32>,
    /// `--reuse`: the earlier run's rows, which [`Ctx::run`] returns
    /// instead of running cells.
    reused: Option<Vec<Row>>,
}

impl Ctx<'_> {
    pub fn reps(&self) -> u32 {
        if self.opts.quick {
            1
        } else {
            self.opts.reps.min(self.max_reps.unwrap_or(u32::MAX))
        }
    }

    /// A mixed-workload cell of `policy`, cold caches, the scale's
    /// schedule; the caller adjusts the rest.
    pub fn mixed(&self, policy: Policy, rep: u32) -> Cell {
        Cell {
            workload: Workload::Mixed,
            scheduler: policy.name.into(),
            params: policy
                .params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<HashMap<_, _>>(),
            label: Some(policy.label.into()),
            rep,
            size: self.scale.pool,
            block_size: self.scale.block,
            cache: CacheMode::Cold,
            reducers: 2,
            jobs: self.scale.jobs,
            mean_interarrival: self.scale.interarrival,
            seed: self.opts.seed,
            ..Cell::default()
        }
    }

    /// Runs `cells` (their rows tagged with `x`, the experiment's point),
    /// appending each to the CSV; returns the validated rows.
    pub async fn run(&mut self, x: &str, cells: Vec<Cell>) -> Vec<Row> {
        if let Some(prev) = &self.reused {
            let rows: Vec<Row> = prev
                .iter()
                .filter(|r| r.sweep_value == x)
                .cloned()
                .collect();
            if rows.is_empty() {
                self.failures
                    .push(format!("{x}: --reuse found no row of this point"));
            }
            for r in &rows {
                if let Err(e) = self.csv.append(r) {
                    self.failures.push(format!("cannot write the CSV: {e}"));
                }
            }
            self.rows.extend(rows.iter().cloned());
            return rows;
        }
        let mut progress = MatrixProgress::new(cells.len(), self.opts.quiet);
        progress.note(&format!("{}: {x}", self.paper));
        let reps = self.reps();
        let (rows, failures) = match self.runner.as_deref_mut() {
            Some(runner) => run_cells(runner, &cells, reps, None, &mut progress).await,
            None => (Vec::new(), vec!["no cluster to run on".into()]),
        };
        progress.end();
        self.failures
            .extend(failures.into_iter().map(|f| format!("{x}: {f}")));
        let mut out = Vec::with_capacity(rows.len());
        for mut r in rows {
            r.sweep = self.paper.into();
            r.sweep_value = x.into();
            if let Err(e) = self.csv.append(&r) {
                self.failures.push(format!("cannot write the CSV: {e}"));
            }
            out.push(r);
        }
        self.rows.extend(out.iter().cloned());
        out
    }

    /// Every policy of `policies` once per repetition, in turn, each cell
    /// made by `cell`.
    pub fn interleaved(
        &self,
        policies: &[Policy],
        cell: &dyn Fn(Policy, u32) -> Cell,
    ) -> Vec<Cell> {
        let mut v = Vec::new();
        for rep in 1..=self.reps() {
            for p in policies {
                v.push(cell(*p, rep));
            }
        }
        v
    }

    /// Bounds every worker's block cache (nothing with `--reuse`); the
    /// configured sizes are put back after the experiment.
    pub async fn bound_caches(&mut self, bytes: u64) -> anyhow::Result<()> {
        if let Some(r) = self.runner.as_deref_mut() {
            r.cluster.resize_caches(bytes, "").await?;
        }
        Ok(())
    }

    /// Live workers when the experiment ran.
    pub fn workers(&self) -> usize {
        match &self.runner {
            Some(r) => r.workers as usize,
            None => self.rows.first().map_or(0, |r| r.workers as usize),
        }
    }

    /// Where the simulator experiment keeps its jobs' history.
    pub fn history_dir(&self) -> PathBuf {
        self.opts.out.join("history-simulator")
    }

    pub fn png(&self, suffix: &str) -> PathBuf {
        self.opts
            .out
            .join(format!("{}{suffix}.png", stem(self.paper)))
    }
}

/// One experiment's report body (markdown, after the common header).
pub struct Report {
    pub title: String,
    pub body: String,
}

/// Runs the papers `name` names, writing `DIR/NAME.md`, `.csv`, `.png`.
pub async fn run(
    cfg: ClusterConfig,
    name: &str,
    opts: &PaperOpts,
    command: String,
) -> anyhow::Result<()> {
    let papers = parse(name)?;
    if opts.reps == 0 {
        bail!("--reps must be at least 1");
    }
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("cannot create the output directory {}", opts.out.display()))?;
    let configured = configured_caches(&cfg);
    let mut runner = if opts.reuse {
        None
    } else {
        Some(Runner::new(Cluster::connect(cfg.clone())?).await?)
    };
    let before = match &runner {
        Some(r) => Some(r.cluster.scheduler().await?),
        None => None,
    };
    // Until restore_scheduler below: an error on the way warns.
    let mut left = SchedulerLeft(before.as_ref().map(|b| b.name.clone()));
    let mut failed = Vec::new();
    for paper in papers {
        let started = Instant::now();
        let started_ms = common::now_ms();
        let csv_path = opts.out.join(format!("{}.csv", stem(paper)));
        let reused = prepare(runner.as_mut(), opts, paper, &csv_path)?;
        let base_config = base_config(runner.as_ref(), reused.as_deref());
        let csv = CsvWriter::create(&csv_path)?;
        let mut ctx = Ctx {
            runner: runner.as_mut(),
            opts,
            scale: Scale::new(opts.quick),
            cfg: &cfg,
            paper,
            csv,
            rows: Vec::new(),
            failures: Vec::new(),
            max_reps: None,
            reused,
        };
        let report = match paper {
            "clqlmrs" => clqlmrs::run(&mut ctx).await,
            "hybsmrp" => hybsmrp::run(&mut ctx).await,
            "matchmaking" => matchmaking::run(&mut ctx).await,
            "lsap" => lsap::run(&mut ctx).await,
            "compat-nb" => compat_nb::run(&mut ctx).await,
            "simulator" => simulator::run(&mut ctx).await,
            _ => unreachable!("parse() names only these"),
        };
        let failures = std::mem::take(&mut ctx.failures);
        drop(ctx);
        if let Some(r) = &runner {
            // Experiments that bound the caches leave them bounded on error.
            restore_caches(r, &configured).await;
        }
        let report = match report {
            Ok(r) => r,
            Err(e) => {
                failed.push(format!("{paper}: {e:#}"));
                continue;
            }
        };
        let written = written_line(opts, paper, &command, started, started_ms);
        if let Some(f) = write_report(opts, paper, &written, &base_config, &report, &failures)? {
            failed.push(f);
        }
    }
    if let (Some(r), Some(b)) = (&runner, &before) {
        restore_scheduler(r, b).await;
    }
    left.0 = None;
    if !failed.is_empty() {
        bail!("{}", failed.join("; "));
    }
    Ok(())
}

/// `--reuse`: the paper's earlier rows; otherwise none, and the runner
/// set up for a fresh run of it.
fn prepare(
    runner: Option<&mut Runner>,
    opts: &PaperOpts,
    paper: &str,
    csv_path: &Path,
) -> anyhow::Result<Option<Vec<Row>>> {
    if opts.reuse {
        return Ok(Some(super::results::read_csv(csv_path).context("--reuse")?));
    }
    if let Some(r) = runner {
        r.history_dir = (paper == "simulator").then(|| opts.out.join("history-simulator"));
    }
    if paper == "simulator" {
        // A rerun must not calibrate on an earlier run's jobs.
        let _ = std::fs::remove_dir_all(opts.out.join("history-simulator"));
    }
    Ok(None)
}

/// The cluster line: the runner's, or the earlier run's rows'.
fn base_config(runner: Option<&Runner>, reused: Option<&[Row]>) -> String {
    match (runner, reused) {
        (Some(r), _) => r.base_config.clone(),
        (None, Some(rows)) => rows
            .first()
            .map(|r| r.config.split("; policy=").next().unwrap_or("").to_string())
            .unwrap_or_default(),
        (None, None) => String::new(),
    }
}

/// The report's "Written by" line: what ran, when and how long; made
/// again from its rows, the earlier run's line kept.
fn written_line(
    opts: &PaperOpts,
    paper: &str,
    command: &str,
    started: Instant,
    started_ms: u64,
) -> String {
    let (day, time) = utc(started_ms);
    if opts.reuse {
        // Keep the run's own line: what ran, when and how long.
        let earlier = std::fs::read_to_string(opts.out.join(format!("{}.md", stem(paper))))
            .ok()
            .and_then(|md| {
                md.lines()
                    .find(|l| l.starts_with("Written by"))
                    .map(|l| l.trim_end_matches('.').to_string())
            });
        format!(
            "{}{}report made again from its rows ({}.csv) by `{command}` on {day} at {time} UTC",
            earlier.as_deref().unwrap_or(""),
            if earlier.is_some() { "; " } else { "" },
            stem(paper)
        )
    } else {
        format!(
            "Written by `{command}` on {day} at {time} UTC in {:.0} s ({} cores)",
            started.elapsed().as_secs_f64(),
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        )
    }
}

/// Writes `DIR/NAME.md`; returns what to say of its failed cells, if any.
fn write_report(
    opts: &PaperOpts,
    paper: &str,
    written: &str,
    base_config: &str,
    report: &Report,
    failures: &[String],
) -> anyhow::Result<Option<String>> {
    let mut md = format!(
        "# {}\n\n{written}; commit {}.\n\nCluster: {base_config}.\n\n{}",
        report.title,
        super::report::git_state(),
        report.body
    );
    let mut failed = None;
    if !failures.is_empty() {
        md += "\n## Failed cells (not counted)\n\n";
        for f in failures {
            md += &format!("- {f}\n");
        }
        failed = Some(format!("{paper}: {} cell(s) failed", failures.len()));
    }
    let md_path = opts.out.join(format!("{}.md", stem(paper)));
    std::fs::write(&md_path, md)?;
    if !opts.quiet {
        eprintln!("{paper}: {}", md_path.display());
    }
    Ok(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_all_is_every_paper() {
        assert_eq!(parse("all").unwrap(), NAMES.to_vec());
        assert_eq!(parse("lsap").unwrap(), vec!["lsap"]);
        let e = parse("late").unwrap_err().to_string();
        assert!(e.contains("clqlmrs") && e.contains("all"), "{e}");
    }

    #[test]
    fn maps_from_bytes_as_the_generators_cut_them() {
        let s = Scale::new(false);
        // A share a little under a block per map: exactly n blocks.
        let b = s.bytes_for_maps(6);
        assert_eq!(b.div_ceil(s.block - s.block / 32), 6);
    }
}
