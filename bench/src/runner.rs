//! One cell of a benchmark: its input (generated once, then reused), its
//! cache state, its job or jobs, their validation, and the rows they give.

use super::cluster::{ensure_succeeded, policy_text, Cluster, Entry};
use super::mixed;
use super::oracle::{RecordSum, WordCounts};
use super::results::Row;
use super::{CacheMode, Workload};
use crate::client::Submit;
use crate::progress::MatrixProgress;
use anyhow::{bail, Context};
use joblib::jobs::JobParams;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Where the harness keeps its inputs; reused across runs (delete the
/// directory to make them anew).
pub const INPUT_DIR: &str = "/bench/input";
const OUT_DIR: &str = "/bench/out";
const CHECK_DIR: &str = "/bench/check";

/// What a workload's output must match.
#[derive(Debug, Clone)]
enum Oracle {
    Words(WordCounts),
    Records(RecordSum),
}

/// A stored input and what it implies.
#[derive(Debug, Clone)]
pub struct Input {
    pub workload: Workload,
    pub path: String,
    pub files: Vec<Entry>,
    pub bytes: u64,
    /// Per data file, in `files` order.
    oracles: Vec<Oracle>,
}

/// How an input is generated: its bytes, block size, seed and replicas
/// (0: the cluster's default).
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub size: u64,
    pub block: u64,
    pub seed: u64,
    pub replication: u32,
}

/// The cell's knobs.
#[derive(Debug, Clone, Default)]
pub struct Cell {
    pub workload: Workload,
    /// The policy's registry name, and its parameters (empty: the
    /// registry's defaults).
    pub scheduler: String,
    pub params: HashMap<String, String>,
    /// How rows and output paths name the policy (default: `scheduler`),
    /// so one policy with two settings shows as two lines.
    pub label: Option<String>,
    pub rep: u32,
    pub size: u64,
    pub block_size: u64,
    pub cache: CacheMode,
    pub reducers: u32,
    /// Mixed only.
    pub jobs: u32,
    pub mean_interarrival: Duration,
    pub map_scale: Option<f64>,
    pub seed: u64,
    /// Replicas of the generated input (0: the cluster's default).
    pub replication: u32,
    pub mix: Mix,
}

/// What the jobs of a mixed cell are, beyond the Facebook bins' default
/// of WordCount jobs in the default queue.
#[derive(Debug, Clone, Default)]
pub struct Mix {
    /// Job `j` runs `jobs[j % len]` over blocks of that workload's pool
    /// (empty: WordCount).
    pub jobs: Vec<Workload>,
    /// Job `j` goes to `queues[j % len]` (empty: `default`).
    pub queues: Vec<String>,
    /// Every job has this many maps instead of a bin's.
    pub maps: Option<u32>,
}

impl Mix {
    fn job(&self, j: usize) -> Workload {
        match self.jobs.len() {
            0 => Workload::WordCount,
            n => self.jobs[j % n],
        }
    }

    fn queue(&self, j: usize) -> &str {
        match self.queues.len() {
            0 => "default",
            n => &self.queues[j % n],
        }
    }
}

impl Cell {
    /// The policy as rows name it.
    pub fn policy(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.scheduler)
    }

    pub fn label(&self, reps: u32) -> String {
        format!(
            "{} × {}, rep {}/{reps}{}",
            self.workload.name(),
            self.policy(),
            self.rep,
            if self.cache == CacheMode::AsLeft {
                ", measured pass"
            } else {
                ""
            }
        )
    }
}

pub struct Runner {
    pub cluster: Cluster,
    inputs: HashMap<String, Input>,
    /// The cluster and network part of each row's `config`.
    pub base_config: String,
    pub workers: u32,
    /// Where each validated job's per-task history is kept (for
    /// `mr sim calibrate --history`), if anywhere.
    pub history_dir: Option<std::path::PathBuf>,
}

impl Runner {
    pub async fn new(cluster: Cluster) -> anyhow::Result<Self> {
        let alive = cluster.alive_workers().await?;
        if alive.is_empty() {
            bail!("the cluster has no live worker");
        }
        let base_config = describe(&cluster.cfg, alive.len());
        Ok(Runner {
            workers: alive.len() as u32,
            cluster,
            inputs: HashMap::new(),
            base_config,
            history_dir: None,
        })
    }

    /// The input of `workload` at `size` in blocks of `block`: generated
    /// when missing, and its oracle computed once per process.
    pub async fn input(
        &mut self,
        workload: Workload,
        pool: bool,
        shape: Shape,
        progress: &mut MatrixProgress,
    ) -> anyhow::Result<Input> {
        let Shape {
            size,
            block,
            seed,
            replication,
        } = shape;
        let gen = workload.generator();
        let kind = if pool { "pool" } else { "file" };
        let mut path = format!("{INPUT_DIR}/{gen}-{kind}-{size}-{block}-s{seed}");
        if replication > 0 {
            path += &format!("-r{replication}");
        }
        if let Some(i) = self.inputs.get(&path) {
            return Ok(i.clone());
        }
        let mut files = self.cluster.data_files(&path).await?;
        if files.is_empty() {
            progress.note(&format!(
                "generating {} of {gen} input in {} blocks into {path}",
                common::units::format_size(size),
                common::units::format_size(block)
            ));
            self.cluster.remove(&path).await?;
            self.cluster
                .generate(gen, &path, size, block, seed, replication)
                .await
                .with_context(|| format!("generating {path}"))?;
            files = self.cluster.data_files(&path).await?;
        } else {
            progress.note(&format!("reusing the input in {path}"));
        }
        progress.note(&format!("computing the oracle of {path}"));
        let mut oracles = Vec::with_capacity(files.len());
        for f in &files {
            let data = self.cluster.read(&f.path).await?;
            oracles.push(match workload {
                Workload::WordCount | Workload::Mixed => Oracle::Words(WordCounts::of_text(&data)),
                Workload::Sort => Oracle::Records(RecordSum::of_kv(&data)?),
                Workload::TeraSort => Oracle::Records(RecordSum::of_tera(&data)?),
            });
        }
        let input = Input {
            workload,
            bytes: files.iter().map(|f| f.size).sum(),
            path: path.clone(),
            files,
            oracles,
        };
        self.inputs.insert(path, input.clone());
        Ok(input)
    }

    /// Runs one cell: every validated job gives a row.
    pub async fn run_cell(
        &mut self,
        cell: &Cell,
        progress: &mut MatrixProgress,
    ) -> anyhow::Result<Vec<Row>> {
        let shape = Shape {
            size: cell.size,
            block: cell.block_size,
            seed: cell.seed,
            replication: cell.replication,
        };
        let mixed = cell.workload == Workload::Mixed;
        let input = self
            .input(
                if mixed {
                    cell.mix.job(0)
                } else {
                    cell.workload
                },
                mixed,
                shape,
                progress,
            )
            .await?;
        let mut pools = vec![input.clone()];
        if mixed {
            for w in cell.mix.jobs.iter().skip(1) {
                if !pools.iter().any(|p| p.workload == *w) {
                    pools.push(self.input(*w, true, shape, progress).await?);
                }
            }
        }
        self.cluster
            .set_scheduler_with(&cell.scheduler, cell.params.clone())
            .await?;
        let policy = policy_text(&self.cluster.scheduler().await?);
        if cell.cache != CacheMode::AsLeft {
            let paths: Vec<String> = pools.iter().map(|p| p.path.clone()).collect();
            self.cluster
                .set_cached(&paths, cell.cache == CacheMode::Warm)
                .await?;
        }
        if cell.cache == CacheMode::ColdOs {
            super::drop_os_page_cache()?;
        }
        let out = format!(
            "{OUT_DIR}/{}/{}/{}",
            cell.workload.name(),
            cell.policy(),
            cell.rep
        );
        let check = format!(
            "{CHECK_DIR}/{}/{}/{}",
            cell.workload.name(),
            cell.policy(),
            cell.rep
        );
        self.cluster.remove(&out).await?;
        self.cluster.remove(&check).await?;
        let mut rows = if cell.workload == Workload::Mixed {
            self.run_mixed(cell, &pools, &out, &check, progress).await?
        } else {
            vec![
                self.run_single(cell, &input, &out, &check, progress)
                    .await?,
            ]
        };
        // Whole trees: the directories the jobs made for their outputs go too.
        self.cluster.remove(OUT_DIR).await?;
        self.cluster.remove(CHECK_DIR).await?;
        if let Some(dir) = &self.history_dir {
            std::fs::create_dir_all(dir)?;
            for r in &rows {
                let lines = self.cluster.history(r.job_id).await?;
                std::fs::write(
                    dir.join(format!("job-{}.jsonl", r.job_id)),
                    lines.join("\n") + "\n",
                )?;
            }
        }
        for r in &mut rows {
            r.scheduler = cell.policy().into();
            r.workload = cell.workload.name().into();
            r.rep = cell.rep;
            r.workers = self.workers;
            r.block_size = cell.block_size;
            r.cache = cell.cache.name().into();
            r.config = format!("{}; policy={policy}", self.base_config);
        }
        Ok(rows)
    }

    async fn run_single(
        &mut self,
        cell: &Cell,
        input: &Input,
        out: &str,
        check: &str,
        progress: &mut MatrixProgress,
    ) -> anyhow::Result<Row> {
        let mut params = JobParams::default();
        if cell.workload == Workload::Sort {
            // Total order, so that SortValidate can check the whole output.
            params.extra.insert("total_order".into(), "true".into());
        }
        let s = Submit {
            job: cell.workload.job().into(),
            inputs: vec![input.path.clone()],
            output: out.into(),
            reducers: cell.reducers,
            params,
            output_replication: 1,
            queue: "default".into(),
            ..Default::default()
        };
        let v = self.cluster.run(s, &mut |v| progress.job(v)).await?;
        ensure_succeeded(&v)?;
        self.validate(cell.workload, &input.oracles, out, check, progress)
            .await
            .with_context(|| format!("job {} did not validate", v["job_id"]))?;
        let mut row = Row::from_summary(&v);
        row.input_bytes = input.bytes;
        Ok(row)
    }

    /// The mixed workload: the schedule's jobs submitted at their arrival
    /// times, followed together, each validated against its blocks' oracle.
    /// Job `j` reads the blocks the schedule drew from the pool of its
    /// workload (`pools` holds one per workload of the mix, in the same
    /// block count).
    async fn run_mixed(
        &mut self,
        cell: &Cell,
        pools: &[Input],
        out: &str,
        check: &str,
        progress: &mut MatrixProgress,
    ) -> anyhow::Result<Vec<Row>> {
        let pool_of = |w: Workload| {
            pools
                .iter()
                .find(|p| p.workload == w)
                .expect("a pool per workload of the mix")
        };
        let blocks = pools.iter().map(|p| p.files.len()).min().unwrap_or(0);
        // The same schedule for every policy within a repetition.
        let mut sched = mixed::schedule(
            cell.jobs as usize,
            cell.mean_interarrival,
            blocks,
            cell.map_scale,
            cell.seed.wrapping_add(cell.rep as u64),
        );
        if let Some(m) = cell.mix.maps {
            mixed::fix_maps(&mut sched, m as usize, blocks, cell.seed);
        }
        let start = Instant::now();
        let mut ids: Vec<Option<u64>> = vec![None; sched.len()];
        let mut done: Vec<Option<serde_json::Value>> = vec![None; sched.len()];
        loop {
            for (j, a) in sched.iter().enumerate() {
                if ids[j].is_none() && start.elapsed() >= a.at {
                    let w = cell.mix.job(j);
                    let pool = pool_of(w);
                    let mut params = JobParams::default();
                    if w == Workload::Sort {
                        params.extra.insert("total_order".into(), "true".into());
                    }
                    let s = Submit {
                        job: w.job().into(),
                        inputs: a
                            .blocks
                            .iter()
                            .map(|&b| pool.files[b].path.clone())
                            .collect(),
                        output: format!("{out}/{j:03}"),
                        reducers: (a.blocks.len() as u32 / 4).clamp(1, cell.reducers),
                        params,
                        output_replication: 1,
                        queue: cell.mix.queue(j).into(),
                        ..Default::default()
                    };
                    ids[j] = Some(self.cluster.submit(s).await?);
                }
            }
            let mut running = 0;
            for j in 0..sched.len() {
                if let (Some(id), None) = (ids[j], &done[j]) {
                    let v = self.cluster.job(id).await?;
                    if matches!(v["state"].as_str(), Some("succeeded" | "failed" | "killed")) {
                        done[j] = Some(v);
                    } else {
                        running += 1;
                    }
                }
            }
            let submitted = ids.iter().flatten().count();
            let finished = done.iter().flatten().count();
            progress.job_line(format!(
                "mixed: {submitted}/{} jobs submitted, {running} running, {finished} done ({:.1}s)",
                sched.len(),
                start.elapsed().as_secs_f64()
            ));
            if finished == sched.len() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let mut rows = Vec::with_capacity(sched.len());
        for (j, (a, v)) in sched.iter().zip(done).enumerate() {
            let v = v.expect("every job finished");
            ensure_succeeded(&v)?;
            let w = cell.mix.job(j);
            let pool = pool_of(w);
            let oracles: Vec<Oracle> = a.blocks.iter().map(|&b| pool.oracles[b].clone()).collect();
            let part_out = format!("{out}/{j:03}");
            let part_check = format!("{check}/{j:03}");
            self.validate(w, &oracles, &part_out, &part_check, progress)
                .await
                .with_context(|| format!("mixed job {} did not validate", v["job_id"]))?;
            let mut row = Row::from_summary(&v);
            row.input_bytes = a.blocks.iter().map(|&b| pool.files[b].size).sum();
            row.submit_offset_s = a.at.as_secs_f64();
            rows.push(row);
        }
        Ok(rows)
    }

    /// Checks `out` against the oracles of the input files it was made of.
    async fn validate(
        &mut self,
        workload: Workload,
        oracles: &[Oracle],
        out: &str,
        check: &str,
        progress: &mut MatrixProgress,
    ) -> anyhow::Result<()> {
        match workload {
            Workload::WordCount | Workload::Mixed => {
                let mut want = WordCounts::default();
                for o in oracles {
                    if let Oracle::Words(w) = o {
                        want.add(w);
                    }
                }
                let mut parts = Vec::new();
                for f in self.cluster.data_files(out).await? {
                    parts.push(self.cluster.read(&f.path).await?);
                }
                let got = WordCounts::of_output(&parts)?;
                if let Some(d) = want.diff(&got) {
                    bail!("the word counts differ from the input's: {d}");
                }
                Ok(())
            }
            Workload::Sort | Workload::TeraSort => {
                let mut sum = RecordSum::default();
                for o in oracles {
                    if let Oracle::Records(r) = o {
                        sum.merge(*r);
                    }
                }
                let mut params = JobParams::default();
                params.extra.extend(sum.params());
                if workload == Workload::Sort {
                    params.extra.insert("total_order".into(), "true".into());
                }
                let validator = joblib::jobs::registry::lookup(workload.job())
                    .and_then(|j| j.validator())
                    .ok_or_else(|| anyhow::anyhow!("{} has no validator", workload.job()))?;
                let s = Submit {
                    job: validator.into(),
                    inputs: vec![out.into()],
                    output: check.into(),
                    reducers: 1,
                    params,
                    output_replication: 1,
                    queue: "default".into(),
                    ..Default::default()
                };
                let v = self.cluster.run(s, &mut |v| progress.job(v)).await?;
                ensure_succeeded(&v)
            }
        }
    }
}

/// The cluster and network as a row's `config` records them.
fn describe(cfg: &common::config::ClusterConfig, alive: usize) -> String {
    use common::units::format_size;
    let racks: std::collections::BTreeSet<&str> =
        cfg.workers.iter().map(|w| w.rack.as_str()).collect();
    let w0 = cfg.workers.first();
    let net = &cfg.network;
    let mut s = format!(
        "workers={alive}; racks={}; map_slots={}; reduce_slots={}; cache={}; replication={}; dfs_block_size={}; heartbeat={}ms",
        racks.len(),
        w0.map_or(0, |w| w.map_slots),
        w0.map_or(0, |w| w.reduce_slots),
        format_size(w0.map_or(0, |w| w.cache)),
        cfg.dfs.replication,
        format_size(cfg.dfs.block_size),
        cfg.heartbeat.interval.as_millis(),
    );
    s += &format!(
        "; network={}",
        if net.kind.is_empty() {
            "unrecorded"
        } else {
            &net.kind
        }
    );
    if !net.host_rate.is_empty() {
        s += &format!("; host_rate={}", net.host_rate);
    }
    if !net.uplink_rate.is_empty() {
        s += &format!("; uplink_rate={}", net.uplink_rate);
    }
    s += &format!(
        "; client_cores={}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    s
}
