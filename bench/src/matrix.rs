//! `mr bench`: every workload × scheduler × repetition, in that nesting
//! with the schedulers innermost, so each repetition runs every policy once
//! while the machine is in much the same state.

use super::cluster::Cluster;
use super::report::{self, Meta};
use super::results::{CsvWriter, Row};
use super::runner::{Cell, Runner};
use super::Opts;
use crate::progress::MatrixProgress;
use anyhow::{bail, Context};
use common::config::ClusterConfig;

pub async fn run(cfg: ClusterConfig, opts: &Opts, command: String) -> anyhow::Result<()> {
    opts.validate()?;
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("cannot create the output directory {}", opts.out.display()))?;
    let mut runner = Runner::new(Cluster::connect(cfg)?).await?;
    runner.history_dir = Some(opts.out.join("history"));
    let before = runner.cluster.scheduler().await?;
    let mut cells = Vec::new();
    for &workload in &opts.workloads {
        for rep in 1..=opts.reps {
            for s in &opts.schedulers {
                cells.push(Cell {
                    workload,
                    scheduler: s.clone(),
                    rep,
                    size: opts.size,
                    block_size: opts.block_size,
                    cache: opts.cache,
                    reducers: opts.reducers,
                    jobs: opts.jobs,
                    mean_interarrival: opts.mean_interarrival,
                    map_scale: opts.map_scale,
                    seed: opts.seed,
                    ..Cell::default()
                });
            }
        }
    }
    let meta = Meta {
        command,
        started_ms: common::now_ms(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        config: runner.base_config.clone(),
        cache: opts.cache.name().into(),
        reps: opts.reps,
        workloads: opts
            .workloads
            .iter()
            .map(|w| w.name().to_string())
            .collect(),
        schedulers: opts.schedulers.clone(),
        commit: report::git_state(),
    };
    let mut csv = CsvWriter::create(&opts.out.join("results.csv"))?;
    let mut progress = MatrixProgress::new(cells.len(), opts.quiet);
    let (rows, failures) = run_cells(
        &mut runner,
        &cells,
        opts.reps,
        Some(&mut csv),
        &mut progress,
    )
    .await;
    progress.end();
    restore_scheduler(&runner, &before).await;
    report::write_all(&opts.out, &rows, &failures, &meta)?;
    if !opts.quiet {
        eprintln!(
            "{} validated run(s) in {}: results.csv, hibench.report, summary.md, job-time.png, locality.png",
            rows.len(),
            opts.out.display()
        );
    }
    if !failures.is_empty() {
        bail!(
            "{} of {} cells failed (not counted); see {}",
            failures.len(),
            cells.len(),
            opts.out.join("summary.md").display()
        );
    }
    Ok(())
}

/// Runs the cells in order, appending each validated row to the CSV (if
/// any) as it comes; a failed cell is noted and the matrix goes on.
pub async fn run_cells(
    runner: &mut Runner,
    cells: &[Cell],
    reps: u32,
    mut csv: Option<&mut CsvWriter>,
    progress: &mut MatrixProgress,
) -> (Vec<Row>, Vec<String>) {
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for cell in cells {
        let label = cell.label(reps);
        progress.start_cell(&label);
        match runner.run_cell(cell, progress).await {
            Ok(rs) => {
                let mut ok = true;
                for r in &rs {
                    if let Some(Err(e)) = csv.as_deref_mut().map(|c| c.append(r)) {
                        failures.push(format!("{label}: cannot write results.csv: {e}"));
                        ok = false;
                    }
                }
                let t: Vec<f64> = rs.iter().map(|r| r.exec_time_s).collect();
                let local: f64 =
                    rs.iter().map(|r| r.local_rate()).sum::<f64>() / rs.len().max(1) as f64;
                progress.finish_cell(&format!(
                    "{} job(s), {:.2}s{}, local {:.0}%",
                    rs.len(),
                    super::results::median(&t),
                    if rs.len() > 1 { " median" } else { "" },
                    100.0 * local
                ));
                if ok {
                    rows.extend(rs);
                }
            }
            Err(e) => {
                let msg = format!("{label}: {e:#}");
                progress.note(&format!("FAILED {msg}"));
                progress.finish_cell("failed");
                failures.push(msg);
            }
        }
    }
    (rows, failures)
}

/// Warns, when dropped holding a name, that the policy active before the
/// benchmark was not put back: an error ended the run before
/// [`restore_scheduler`] (which clears it).
pub struct SchedulerLeft(pub Option<String>);

impl Drop for SchedulerLeft {
    fn drop(&mut self) {
        if let Some(name) = &self.0 {
            tracing::warn!(
                "could not restore the original scheduler {name}: the benchmark stopped on an error; \
                 set it back with `mr admin scheduler set {name}`"
            );
        }
    }
}

/// Puts back the policy, with its parameters, that was active before.
/// Every worker's cache size as `cluster.toml` sets it, to put back after
/// an experiment that bounds the caches ([`restore_caches`]).
pub fn configured_caches(cfg: &common::config::ClusterConfig) -> Vec<(String, u64)> {
    cfg.workers
        .iter()
        .map(|w| (w.name.clone(), w.cache))
        .collect()
}

/// Resizes each worker's cache back to `configured`, warning (not failing)
/// where a worker cannot be told.
pub async fn restore_caches(runner: &Runner, configured: &[(String, u64)]) {
    for (w, bytes) in configured {
        if let Err(e) = runner.cluster.resize_caches(*bytes, w).await {
            tracing::warn!(
                worker = %w,
                "could not restore the original cache size {}: {e:#}",
                common::units::format_size(*bytes)
            );
        }
    }
}

pub async fn restore_scheduler(runner: &Runner, before: &proto::SchedulerResponse) {
    if let Err(e) = runner
        .cluster
        .set_scheduler_with(&before.name, before.params.clone())
        .await
    {
        tracing::warn!(
            "could not restore the original scheduler {}: {e:#}; set it back with `mr admin scheduler set {}`",
            before.name,
            before.name
        );
    }
}
