//! `mr bench trace`: a SWIM trace replayed onto the running cluster.
//!
//! 1. The slice's rows are scaled ([`super::trace`]) and every job reads
//!    whole blocks drawn from one pool of TeraGen blocks (generated once,
//!    then reused), so that reads repeat across jobs as in a real cluster.
//! 2. A solo pass runs every job alone on the idle cluster (one policy,
//!    `--solo-policy`): its time alone (the slowdown's denominator) and its
//!    task-seconds (from the attempts in its history), whose sum sets the
//!    compression for each `--load`.
//! 3. For each load, repetition and policy (policies innermost, so each
//!    repetition runs every policy while the machine is in much the same
//!    state, and each repetition starts one policy further along, so that
//!    no policy always runs first after the solo pass or another load):
//!    caches dropped, the jobs submitted at their compressed
//!    arrival times, followed to their ends, each output checked against
//!    what the synthetic job must write from its input blocks
//!    (`joblib::jobs::swim::expected`), and the run's map- and
//!    reduce-slot use measured from the attempts' times.
//!
//! A job that fails or does not validate fails its run, which is reported
//! and never becomes a figure. Every validated job's history is kept under
//! `OUT/history/load-L/POLICY/repN/`, the input of `mr sim calibrate
//! --history` for fitting the simulator on one run and predicting others.

use super::cluster::{ensure_succeeded, Cluster};
use super::load::{self, Busy};
use super::matrix::restore_scheduler;
use super::oracle::RecordSum;
use super::runner::{Runner, INPUT_DIR};
use super::trace::{self, Scale, ScaledJob};
use super::trace_report::{self, JobRow, ReportMeta, RunRow, SoloRow};
use crate::client::Submit;
use crate::progress::MatrixProgress;
use anyhow::{bail, Context};
use bytes::Bytes;
use common::config::ClusterConfig;
use joblib::jobs::JobParams;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const OUT_DIR: &str = "/bench/trace-out";

/// How long a run may take beyond its last arrival before it is declared
/// stuck: far above any job of a scaled slice (seconds alone), so only a
/// job that stopped making progress reaches it.
const STUCK_AFTER: Duration = Duration::from_secs(300);

/// What `mr bench trace` takes.
#[derive(Debug, Clone)]
pub struct TraceOpts {
    pub trace: PathBuf,
    /// The slice: rows `from .. from + jobs`.
    pub from: usize,
    pub jobs: usize,
    /// The traced cluster's nodes (default: from the file name).
    pub traced_nodes: Option<u32>,
    /// The factor on bytes, instead of our workers over the traced nodes.
    pub byte_scale: Option<f64>,
    /// Target offered loads (each a separate experiment), or, when empty,
    /// one replay at `compression`.
    pub loads: Vec<f64>,
    pub compression: f64,
    pub schedulers: Vec<String>,
    /// The policy every other is compared with, pair by pair (default: the
    /// first of `schedulers`).
    pub baseline: Option<String>,
    /// The comparisons named before the runs (`--compare A:B`, `A:all`);
    /// empty: each policy against the baseline.
    pub compare: Vec<String>,
    pub solo_policy: String,
    pub reps: u32,
    pub block_size: u64,
    pub pool_blocks: u32,
    pub max_maps: u32,
    pub max_reduces: u32,
    /// Multiplies every row's shuffle bytes ([`Scale::shuffle`]).
    pub shuffle_scale: f64,
    pub seed: u64,
    pub out: PathBuf,
    pub quiet: bool,
    /// Job programs a share of the rows run instead of the synthetic job
    /// (`usermix`), and that share.
    pub user_jobs: Vec<super::usermix::UserJob>,
    pub user_share: f64,
}

impl TraceOpts {
    pub fn validate(&self) -> anyhow::Result<()> {
        if self.schedulers.is_empty() {
            bail!("--schedulers names no scheduler");
        }
        for s in self.schedulers.iter().chain([&self.solo_policy]) {
            sched::registry::build(&sched::SchedulerSpec::new(s))
                .map_err(|e| anyhow::anyhow!("--schedulers: {e}"))?;
        }
        if let Some(b) = &self.baseline {
            if !self.schedulers.contains(b) {
                bail!("--baseline {b} is not one of --schedulers");
            }
        }
        super::compare::expand(&self.compare, &self.schedulers, self.baseline())
            .map_err(|e| anyhow::anyhow!(e))?;
        if self.reps == 0 {
            bail!("--reps must be at least 1");
        }
        if self.jobs == 0 {
            bail!("--jobs must be at least 1");
        }
        if !(0.0..=1.0).contains(&self.user_share) {
            bail!("--user-share is the share of rows that run a --user-job: 0 to 1");
        }
        if self.loads.iter().any(|l| !(*l > 0.0 && l.is_finite())) {
            bail!("--load takes numbers above 0 (0.9: the trace's task-seconds fill 90 % of the slot-seconds)");
        }
        if !(self.compression > 0.0 && self.compression.is_finite()) {
            bail!("--compression must be a number above 0");
        }
        if self.block_size < common::config::MIN_BLOCK_SIZE
            || self.block_size > common::config::MAX_BLOCK_SIZE
        {
            bail!(
                "--block-size must be between {} and {}",
                common::units::format_size(common::config::MIN_BLOCK_SIZE),
                common::units::format_size(common::config::MAX_BLOCK_SIZE)
            );
        }
        if self.byte_scale.is_some_and(|b| !(b > 0.0 && b.is_finite())) {
            bail!("--byte-scale must be a number above 0");
        }
        if !(self.shuffle_scale > 0.0 && self.shuffle_scale.is_finite()) {
            bail!("--shuffle-scale must be a number above 0 (0.05: a twentieth of each row's shuffle)");
        }
        if self.max_maps == 0 || self.max_reduces == 0 {
            bail!("--max-maps and --max-reduces must be at least 1");
        }
        if self.pool_blocks < self.max_maps {
            bail!(
                "--pool-blocks ({}) must be at least --max-maps ({}): a job's blocks are distinct",
                self.pool_blocks,
                self.max_maps
            );
        }
        Ok(())
    }

    fn baseline(&self) -> &str {
        self.baseline.as_deref().unwrap_or(&self.schedulers[0])
    }
}

/// The slice as loaded: rows and where they came from.
pub struct Slice {
    pub file: String,
    pub rows: Vec<trace::TraceRow>,
    pub traced_nodes: u32,
}

/// Reads and slices the trace, with a clear error for a wrong file or an
/// empty slice.
pub fn load_slice(o: &TraceOpts) -> anyhow::Result<Slice> {
    let file = o.trace.display().to_string();
    let text = std::fs::read_to_string(&o.trace)
        .with_context(|| format!("cannot read the trace {file}"))?;
    let all = trace::parse(&file, &text)?;
    let rows = trace::slice(&all, o.from, o.jobs);
    if rows.is_empty() {
        bail!(
            "{file} has {} rows: --from {} leaves none",
            all.len(),
            o.from
        );
    }
    let traced_nodes = o.traced_nodes.or_else(|| trace::traced_nodes(&file)).ok_or_else(|| {
        anyhow::anyhow!("{file}: give --traced-nodes (the traced cluster's size; the FB-2009 and FB-2010 samples are known)")
    })?;
    Ok(Slice {
        file,
        rows,
        traced_nodes,
    })
}

/// The pool: its files (one block each) and their bytes.
struct Pool {
    paths: Vec<String>,
    data: Vec<Bytes>,
    /// The `--user-job`s, shipped once.
    user: Vec<super::usermix::Shipped>,
}

/// What the replayed cells measured, written after each of them.
#[derive(Default)]
struct Measured {
    jobs: Vec<JobRow>,
    runs: Vec<RunRow>,
    failures: Vec<String>,
}

/// What every replayed cell shares.
struct Cells<'a> {
    o: &'a TraceOpts,
    pool: &'a Pool,
    solo: &'a [SoloRow],
    out_root: &'a str,
    map_slots: u32,
    reduce_slots: u32,
}

/// One load of the matrix: its label, compression, offered load and jobs.
struct Load {
    label: String,
    compression: f64,
    offered: f64,
    jobs: Vec<ScaledJob>,
}

pub async fn run(cfg: ClusterConfig, o: &TraceOpts, command: String) -> anyhow::Result<()> {
    o.validate()?;
    let slice = load_slice(o)?;
    std::fs::create_dir_all(&o.out)
        .with_context(|| format!("cannot create the output directory {}", o.out.display()))?;
    let map_slots: u32 = cfg.workers.iter().map(|w| w.map_slots).sum();
    let reduce_slots: u32 = cfg.workers.iter().map(|w| w.reduce_slots).sum();
    let mut runner = Runner::new(Cluster::connect(cfg)?).await?;
    let mut scale = Scale::new(
        runner.workers,
        slice.traced_nodes,
        o.block_size,
        o.max_maps,
        o.max_reduces,
    );
    if let Some(b) = o.byte_scale {
        scale.bytes = b;
    }
    scale.shuffle = o.shuffle_scale;
    let solo_jobs = trace::scale(&slice.rows, o.from, &scale, 1.0);
    let before = runner.cluster.scheduler().await?;
    let loads: Vec<Option<f64>> = if o.loads.is_empty() {
        vec![None]
    } else {
        o.loads.iter().map(|&l| Some(l)).collect()
    };
    let total = solo_jobs.len() + loads.len() * o.reps as usize * o.schedulers.len();
    let mut progress = MatrixProgress::new(total, o.quiet);
    let pool = pool(&mut runner, o, &mut progress).await?;
    // Outputs under a root of this invocation's own, so that jobs an
    // interrupted earlier run left behind never hold a path this one writes.
    let out_root = format!("{OUT_DIR}/{}", common::now_ms());
    let solo = solo_pass(&mut runner, &solo_jobs, &pool, o, &out_root, &mut progress).await?;
    let task_s = (
        solo.iter().map(|s| s.map_task_s).sum::<f64>(),
        solo.iter().map(|s| s.reduce_task_s).sum::<f64>(),
    );
    let span = trace::span_s(&slice.rows);

    // The commit is read now: a long run outlives commits made meanwhile,
    // and the report names what the binaries were built from.
    let mut meta = ReportMeta {
        command,
        date_ms: common::now_ms(),
        commit: super::report::git_state(),
        cluster: runner.base_config.clone(),
        map_slots,
        reduce_slots,
        trace: slice.file.clone(),
        from: o.from,
        rows: slice.rows.len(),
        traced_nodes: slice.traced_nodes,
        scale,
        pool_blocks: pool.paths.len(),
        compressions: Vec::new(),
        task_s: task_s.0 + task_s.1,
        span_s: span,
        reps: o.reps,
        baseline: o.baseline().to_string(),
        policies: o.schedulers.clone(),
        solo_policy: o.solo_policy.clone(),
        seed: o.seed,
        compare: o.compare.clone(),
        rotated: true,
    };
    let cells = Cells {
        o,
        pool: &pool,
        solo: &solo,
        out_root: &out_root,
        map_slots,
        reduce_slots,
    };
    let mut m = Measured::default();
    for &target in &loads {
        let slots = (map_slots, reduce_slots);
        let compression = compression(target, o, task_s, slots, span)?;
        meta.compressions.push((target, compression));
        let replayed_span = span / compression;
        warn_unsustained(&mut progress, target, replayed_span, &solo);
        let load = Load {
            label: target.map_or(format!("x{compression:.1}"), |l| format!("{l}")),
            compression,
            offered: load::Offered::of(task_s, slots, replayed_span).bottleneck(),
            jobs: trace::scale(&slice.rows, o.from, &scale, compression),
        };
        for rep in 1..=o.reps {
            for policy in policy_order(&o.schedulers, rep) {
                replay_cell(
                    &mut runner,
                    &cells,
                    &load,
                    policy,
                    rep,
                    &mut m,
                    &mut progress,
                )
                .await;
                // Written after every cell, so an interrupted matrix keeps
                // what it measured.
                meta.date_ms = common::now_ms();
                write_all(o, &meta, &cells, &m)?;
            }
        }
    }
    progress.end();
    restore_scheduler(&runner, &before).await;
    write_all(o, &meta, &cells, &m)?;
    heldout_after(o, loads.len())?;
    finish(o, &m)
}

/// The policies of repetition `rep` (from 1): all of them, in turn,
/// starting one further along each repetition, so that none always runs
/// first (after the solo pass, a cache drop, another load).
fn policy_order(schedulers: &[String], rep: u32) -> Vec<&String> {
    let n = schedulers.len();
    (0..n)
        .map(|k| &schedulers[(k + rep as usize - 1) % n])
        .collect()
}

/// Says before the runs, not only in the report hours later, when a load's
/// arrivals will be one burst and a drain.
fn warn_unsustained(
    progress: &mut MatrixProgress,
    target: Option<f64>,
    replayed_span: f64,
    solo: &[SoloRow],
) {
    let longest = solo.iter().map(|s| s.alone_s).fold(0.0, f64::max);
    if !load::sustained(replayed_span, longest) {
        progress.note(&format!(
            "WARNING: {}: the arrivals span {replayed_span:.1} s, under {} times the longest job alone ({longest:.2} s): not a sustained load, every run a burst and a drain (replay more rows with --jobs, or ask a lower --load)",
            target.map_or("the compression".to_string(), |l| format!("load {l}")),
            load::SUSTAINED_SPAN
        ));
    }
}

/// Every report file, from what was measured so far.
fn write_all(o: &TraceOpts, meta: &ReportMeta, c: &Cells, m: &Measured) -> anyhow::Result<()> {
    trace_report::write_all(&o.out, meta, c.solo, &m.jobs, &m.runs, &m.failures)
}

/// The solo pass: each job alone on the cluster, for its time alone and
/// its task-seconds.
async fn solo_pass(
    runner: &mut Runner,
    solo_jobs: &[ScaledJob],
    pool: &Pool,
    o: &TraceOpts,
    out_root: &str,
    progress: &mut MatrixProgress,
) -> anyhow::Result<Vec<SoloRow>> {
    runner.cluster.set_scheduler(&o.solo_policy).await?;
    runner.cluster.set_cached(&pool.paths, false).await?;
    let mut solo = Vec::with_capacity(solo_jobs.len());
    for j in solo_jobs {
        progress.start_cell(&format!("alone: {j}"));
        let out = format!("{out_root}/solo/{:05}", j.row);
        runner.cluster.remove(&out).await?;
        let id = runner.cluster.submit(submit(j, pool, o, &out)).await?;
        let v = runner.cluster.wait(id, &mut |v| progress.job(v)).await?;
        ensure_succeeded(&v)?;
        check_output(&runner.cluster, j, pool, o, &out).await?;
        let busy = load::attempts(&runner.cluster.history(id).await?);
        let (m, r) = load::task_seconds(&busy);
        runner.cluster.remove(&out).await?;
        let t = v["exec_time_s"].as_f64().unwrap_or(0.0);
        progress.finish_cell(&format!("{t:.2}s alone, {:.2} task-s", m + r));
        solo.push(SoloRow::new(j, (t, m, r)));
    }
    Ok(solo)
}

/// The compression that gives the bottleneck resource load `target`
/// (`--compression` without).
fn compression(
    target: Option<f64>,
    o: &TraceOpts,
    task_s: (f64, f64),
    slots: (u32, u32),
    span: f64,
) -> anyhow::Result<f64> {
    match target {
        Some(l) => load::compression_for_bottleneck(l, task_s, slots, span).ok_or_else(|| {
            anyhow::anyhow!(
                "--load needs a slice whose arrivals span some time and whose jobs take some: span {span:.1}s, {:.2} map and {:.2} reduce task-seconds",
                task_s.0,
                task_s.1
            )
        }),
        None => Ok(o.compression),
    }
}

/// One cell: `policy` replaying the load's jobs once; a failure is noted
/// and kept for the report, never a figure.
async fn replay_cell(
    runner: &mut Runner,
    c: &Cells<'_>,
    load: &Load,
    policy: &str,
    rep: u32,
    m: &mut Measured,
    progress: &mut MatrixProgress,
) {
    let o = c.o;
    let load_label = &load.label;
    let label = format!("load {load_label}, {policy}, rep {rep}/{}", o.reps);
    progress.start_cell(&label);
    let hist = o
        .out
        .join("history")
        .join(format!("load-{load_label}"))
        .join(policy)
        .join(format!("rep{rep}"));
    let run_out = format!("{}/{load_label}/{policy}/{rep}", c.out_root);
    let (rows, busy) = match replay(
        runner,
        policy,
        &load.jobs,
        c.pool,
        o,
        (&run_out, &hist),
        progress,
    )
    .await
    {
        Ok(r) => r,
        Err(e) => {
            let msg = format!("{label}: {e:#}");
            progress.note(&format!("FAILED {msg}"));
            progress.finish_cell("failed");
            m.failures.push(msg);
            return;
        }
    };
    let from = rows.iter().map(|r| r.submit_ms).min().unwrap_or(0);
    let to = rows.iter().map(|r| r.end_ms).max().unwrap_or(0);
    let (mu, ru) = load::slot_use(&busy, from, to, c.map_slots, c.reduce_slots);
    let mean = rows.iter().map(|r| r.exec_time_s).sum::<f64>() / rows.len().max(1) as f64;
    progress.finish_cell(&format!(
        "{} jobs, mean {mean:.2}s, map slots {:.0}%, reduce slots {:.0}%",
        rows.len(),
        100.0 * mu,
        100.0 * ru
    ));
    m.runs.push(RunRow {
        load: load_label.clone(),
        compression: load.compression,
        offered: load.offered,
        policy: policy.to_string(),
        rep,
        jobs: rows.len(),
        makespan_s: to.saturating_sub(from) as f64 / 1e3,
        map_slot_use: mu,
        reduce_slot_use: ru,
    });
    for mut r in rows {
        r.load = load_label.clone();
        r.rep = rep;
        let k = c.solo.iter().position(|s| s.row == r.row).unwrap_or(0);
        r.alone_s = c.solo[k].alone_s;
        m.jobs.push(r);
    }
}

/// The simulator, fitted on the first run, against the others, from the
/// files just written (as `mr sim heldout OUT` does later); with one load
/// there is nothing held out.
fn heldout_after(o: &TraceOpts, loads: usize) -> anyhow::Result<()> {
    if loads > 1 {
        if let Err(e) = super::heldout::run(
            std::slice::from_ref(&o.out),
            &super::heldout::FitChoice::default(),
            None,
        ) {
            std::fs::write(
                o.out.join("simulator-heldout.md"),
                format!("# The simulator on runs it was not fitted on\n\nNot made: {e:#}\n"),
            )?;
        }
    }
    Ok(())
}

/// Says where the report is, and fails when a run did.
fn finish(o: &TraceOpts, m: &Measured) -> anyhow::Result<()> {
    if !o.quiet {
        eprintln!(
            "{} validated job run(s) in {}: trace-jobs.csv, trace-runs.csv, summary.md",
            m.jobs.len(),
            o.out.display()
        );
    }
    if !m.failures.is_empty() {
        bail!(
            "{} run(s) failed (not counted); see {}",
            m.failures.len(),
            o.out.join("summary.md").display()
        );
    }
    Ok(())
}

/// The pool of TeraGen blocks, generated when missing, read once.
async fn pool(
    runner: &mut Runner,
    o: &TraceOpts,
    progress: &mut MatrixProgress,
) -> anyhow::Result<Pool> {
    let path = format!(
        "{INPUT_DIR}/swim-pool-{}-{}-s{}",
        o.pool_blocks, o.block_size, o.seed
    );
    let mut files = runner.cluster.data_files(&path).await?;
    if files.is_empty() {
        progress.note(&format!(
            "generating the pool: {} blocks of {} into {path}",
            o.pool_blocks,
            common::units::format_size(o.block_size)
        ));
        runner.cluster.remove(&path).await?;
        // TeraGen writes a little under a block per map; asking for the
        // blocks' worth less 1/32 gives `pool_blocks` files of one block.
        let size = (o.pool_blocks as u64 * (o.block_size - o.block_size / 32)) / 100 * 100;
        runner
            .cluster
            .generate("teragen", &path, size, o.block_size, o.seed, 0)
            .await
            .with_context(|| format!("generating {path}"))?;
        files = runner.cluster.data_files(&path).await?;
    } else {
        progress.note(&format!("reusing the pool in {path}"));
    }
    if files.len() < o.max_maps as usize {
        bail!(
            "the pool {path} has {} files, fewer than --max-maps {}: delete it to make it anew",
            files.len(),
            o.max_maps
        );
    }
    let mut data = Vec::with_capacity(files.len());
    for f in &files {
        data.push(runner.cluster.read(&f.path).await?);
    }
    let user = super::usermix::ship(&runner.cluster.dfs, &o.user_jobs).await?;
    Ok(Pool {
        paths: files.into_iter().map(|f| f.path).collect(),
        data,
        user,
    })
}

/// The user job row `j` runs instead of the synthetic one, if any.
fn user_job<'a>(
    j: &ScaledJob,
    pool: &'a Pool,
    o: &TraceOpts,
) -> Option<&'a super::usermix::Shipped> {
    super::usermix::pick(j.row, o.seed, o.user_share, pool.user.len()).map(|i| &pool.user[i])
}

fn submit(j: &ScaledJob, pool: &Pool, o: &TraceOpts, out: &str) -> Submit {
    let inputs: Vec<String> = trace::blocks(j.row, j.maps, pool.paths.len(), o.seed)
        .into_iter()
        .map(|b| pool.paths[b].clone())
        .collect();
    if let Some(u) = user_job(j, pool, o) {
        return super::usermix::submit(u, inputs, out, j.reduces);
    }
    let mut params = JobParams::default();
    params
        .extra
        .insert("shuffle_ratio".into(), format!("{}", j.shuffle_ratio));
    params
        .extra
        .insert("output_ratio".into(), format!("{}", j.output_ratio));
    Submit {
        job: "swim".into(),
        inputs,
        output: out.into(),
        reducers: j.reduces,
        params,
        output_replication: 1,
        queue: "default".into(),
        ..Default::default()
    }
}

/// Checks a job's output against what the synthetic job must write from
/// its input blocks: the count and checksum of its records.
async fn check_output(
    cluster: &Cluster,
    j: &ScaledJob,
    pool: &Pool,
    o: &TraceOpts,
    out: &str,
) -> anyhow::Result<()> {
    if user_job(j, pool, o).is_some() {
        // A program's bytes are its own: committed is what can be checked.
        cluster.data_files(out).await?;
        return Ok(());
    }
    let (mut want_n, mut want_sum) = (0u64, 0u64);
    for b in trace::blocks(j.row, j.maps, pool.paths.len(), o.seed) {
        let (n, s) = joblib::jobs::swim::expected(&pool.data[b], j.shuffle_ratio, j.output_ratio);
        want_n += n;
        want_sum = want_sum.wrapping_add(s);
    }
    let mut got = RecordSum::default();
    for f in cluster.data_files(out).await? {
        got.merge(RecordSum::of_tera(&cluster.read(&f.path).await?)?);
    }
    if (got.records, got.checksum) != (want_n, want_sum) {
        bail!(
            "{} (row {}) wrote {} records (checksum {}), its input implies {want_n} (checksum {want_sum})",
            j.name,
            j.row,
            got.records,
            got.checksum
        );
    }
    Ok(())
}

/// One replay of the jobs under `policy`: every job's row and every
/// attempt's time in a slot.
async fn replay(
    runner: &mut Runner,
    policy: &str,
    jobs: &[ScaledJob],
    pool: &Pool,
    o: &TraceOpts,
    (out, history): (&str, &std::path::Path),
    progress: &mut MatrixProgress,
) -> anyhow::Result<(Vec<JobRow>, Vec<Busy>)> {
    runner.cluster.set_scheduler(policy).await?;
    runner.cluster.set_cached(&pool.paths, false).await?;
    runner.cluster.remove(out).await?;
    let last_arrival = jobs.iter().map(|j| j.at).max().unwrap_or_default();
    let start = Instant::now();
    let mut ids: Vec<Option<u64>> = vec![None; jobs.len()];
    let mut done: Vec<Option<serde_json::Value>> = vec![None; jobs.len()];
    loop {
        for (k, j) in jobs.iter().enumerate() {
            if ids[k].is_none() && start.elapsed() >= j.at {
                let s = submit(j, pool, o, &format!("{out}/{:05}", j.row));
                ids[k] = Some(runner.cluster.submit(s).await?);
            }
        }
        let mut running = 0;
        for k in 0..jobs.len() {
            if let (Some(id), None) = (ids[k], &done[k]) {
                let v = runner.cluster.job(id).await?;
                if matches!(v["state"].as_str(), Some("succeeded" | "failed" | "killed")) {
                    done[k] = Some(v);
                } else {
                    running += 1;
                }
            }
        }
        let submitted = ids.iter().flatten().count();
        let finished = done.iter().flatten().count();
        progress.job_line(format!(
            "{policy}: {submitted}/{} jobs submitted, {running} running, {finished} done ({:.1}s)",
            jobs.len(),
            start.elapsed().as_secs_f64()
        ));
        if finished == jobs.len() {
            break;
        }
        if start.elapsed() > last_arrival + STUCK_AFTER {
            let stuck: Vec<String> = ids
                .iter()
                .zip(&done)
                .filter_map(|(id, d)| id.filter(|_| d.is_none()).map(|i| i.to_string()))
                .collect();
            bail!(
                "job(s) {} made no end {} s after the last arrival: stuck (see `mr job status ID`; `mr job kill ID` ends them)",
                stuck.join(", "),
                STUCK_AFTER.as_secs()
            );
        }
        // Sleep to the next arrival or poll, whichever is sooner.
        let next = jobs
            .iter()
            .zip(&ids)
            .filter(|(_, id)| id.is_none())
            .map(|(j, _)| j.at.saturating_sub(start.elapsed()))
            .min()
            .unwrap_or(Duration::MAX);
        tokio::time::sleep(next.min(Duration::from_millis(100))).await;
    }
    let mut rows = Vec::with_capacity(jobs.len());
    let mut busy = Vec::new();
    for (j, v) in jobs.iter().zip(done) {
        let v = v.expect("every job finished");
        ensure_succeeded(&v)?;
        let dir = format!("{out}/{:05}", j.row);
        check_output(&runner.cluster, j, pool, o, &dir)
            .await
            .with_context(|| format!("job {} did not validate", v["job_id"]))?;
        let id = v["job_id"].as_u64().unwrap_or(0);
        // Kept for `mr sim calibrate --history` (fit on one run, predict
        // the others).
        let lines = runner.cluster.history(id).await?;
        std::fs::create_dir_all(history)?;
        std::fs::write(
            history.join(format!("job-{id}.jsonl")),
            lines.join("\n") + "\n",
        )?;
        busy.extend(load::attempts(&lines));
        let input: u64 = trace::blocks(j.row, j.maps, pool.paths.len(), o.seed)
            .iter()
            .map(|&b| pool.data[b].len() as u64)
            .sum();
        rows.push(JobRow::from_summary(&v, j, policy, input));
    }
    runner.cluster.remove(out).await?;
    Ok((rows, busy))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_repetition_starts_one_policy_further_along() {
        let p: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let order = |rep| {
            policy_order(&p, rep)
                .into_iter()
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(order(1), ["a", "b", "c"]);
        assert_eq!(order(2), ["b", "c", "a"]);
        assert_eq!(order(4), ["a", "b", "c"]);
    }
}
