//! `mr job ...`, `mr gen ...`: submit, follow and inspect jobs.

use super::{parse_size, RecordFormat};
use crate::output::{table, JobProgress};
use anyhow::{bail, Context};
use clap::Subcommand;
use common::config::ClusterConfig;
use joblib::jobs::{registry, JobParams, Partitioning};
use rpc::dfs::{Dfs, DfsError};
use serde_json::Value;
use std::time::{Duration, Instant};

#[derive(clap::Args, Clone)]
pub struct GenArgs {
    /// randomtextwriter, randomwriter or teragen.
    generator: String,
    /// Total bytes to generate, e.g. 256MiB.
    #[arg(long, value_parser = parse_size)]
    size: u64,
    #[arg(long)]
    output: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Block size of the generated files (default: the cluster's).
    #[arg(long, value_parser = parse_size)]
    block_size: Option<u64>,
    /// Number of maps (default: one per block of output).
    #[arg(long)]
    maps: Option<u32>,
    /// Replicas of the generated files (default: the cluster's).
    #[arg(long)]
    replication: Option<u32>,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Clone)]
#[command(after_help = "Your own jobs:
  mr job run streaming --input /text --output /wc --mapper 'python3 m.py' \\
      --reducer 'python3 r.py' --file m.py --file r.py
      Hadoop Streaming: the mapper reads input lines on stdin and prints
      KEY<TAB>VALUE lines; the reducer reads its partition's lines sorted by
      key. No --reducer: identity reduce; --reducers 0: map-only.
  mr job run program --program target/release/my-job --input /in --output /out
      A binary built against the mrjob crate (see examples/).
Commands and programs run on the workers as the worker's OS user.")]
pub struct JobArgs {
    /// wordcount, sort, terasort, teravalidate, sortvalidate, ...; or
    /// streaming (--mapper), or program (--program).
    name: String,
    /// Input file or directory (repeatable).
    #[arg(long, required = true)]
    input: Vec<String>,
    /// Output directory; must not exist.
    #[arg(long)]
    output: String,
    #[arg(long, short = 'r', default_value_t = 4)]
    reducers: u32,
    /// Replicas of the output parts (default: the cluster's).
    #[arg(long)]
    output_replication: Option<u32>,
    /// Sort: make the concatenation of the parts sorted (sampled ranges).
    #[arg(long)]
    total_order: bool,
    /// Sort: `kv` (length-prefixed records) or `lines` (KEY<TAB>VALUE).
    #[arg(long, value_enum, default_value_t = RecordFormat::Kv)]
    format: RecordFormat,
    /// Queue (capacity) or pool (fair) of the job.
    #[arg(long, default_value = "default")]
    queue: String,
    /// Map-side sort buffer per task, e.g. 64MiB [default: 100MiB].
    #[arg(long, value_parser = parse_size)]
    sort_buffer: Option<u64>,
    /// Extra job parameters, key=value.
    #[arg(long = "param")]
    params: Vec<String>,
    /// Streaming: the map command, run by `sh -c` in the task's directory.
    #[arg(long)]
    mapper: Option<String>,
    /// Streaming: the reduce command [default: identity].
    #[arg(long)]
    reducer: Option<String>,
    /// Streaming: the combine command, run over each map's sorted output.
    #[arg(long)]
    combiner: Option<String>,
    /// program: a binary built against the mrjob crate.
    #[arg(long)]
    program: Option<std::path::PathBuf>,
    /// A local file every task finds in its working directory (repeatable).
    #[arg(long = "file")]
    files: Vec<std::path::PathBuf>,
    /// NAME=VALUE in the commands' environment (repeatable).
    #[arg(long = "cmdenv")]
    cmdenv: Vec<String>,
    /// Seconds a task's command may read nothing and write nothing before
    /// it is killed [default: 600, Hadoop's mapreduce.task.timeout].
    #[arg(long)]
    task_timeout: Option<f64>,
    /// `run`: the job summary as JSON; `submit`: `{"job_id": N}`.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
pub enum JobCmd {
    /// Run a job to its end, showing progress; prints the summary.
    Run(JobArgs),
    /// Queue a job and print its id at once.
    Submit(JobArgs),
    /// A job's summary.
    Status {
        id: u64,
        #[arg(long)]
        json: bool,
    },
    /// Every job the master knows.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Wait for a job to end; exits non-zero unless it succeeded.
    Wait {
        id: u64,
        #[arg(long)]
        json: bool,
    },
    /// Stop a job and every attempt of it.
    Kill {
        id: u64,
        /// The killed job's summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Per-task records of a finished job, as JSON lines.
    History { id: u64 },
}

/// Runs one `mr job` command.
pub async fn dispatch(cfg: &ClusterConfig, c: JobCmd) -> anyhow::Result<()> {
    match c {
        JobCmd::Run(a) => {
            let id = submit(cfg, job_submit(&a).await?).await?;
            let v = wait(cfg, id).await?;
            finish(&v, a.json)
        }
        JobCmd::Submit(a) => {
            let id = submit(cfg, job_submit(&a).await?).await?;
            if a.json {
                println!("{}", serde_json::json!({ "job_id": id }));
            } else {
                println!("{id}");
            }
            Ok(())
        }
        JobCmd::Status { id, json } => status(cfg, id, json).await,
        JobCmd::List { json } => list(cfg, json).await,
        JobCmd::Wait { id, json } => {
            let v = wait(cfg, id).await?;
            finish(&v, json)
        }
        JobCmd::Kill { id, json } => kill(cfg, id, json).await,
        JobCmd::History { id } => history(cfg, id).await,
    }
}

/// `mr gen GENERATOR`: a map-only job writing benchmark input, run to its end.
pub async fn generate(cfg: &ClusterConfig, g: GenArgs) -> anyhow::Result<()> {
    // Each map's share is a little under one block: output blocks are
    // cut at record boundaries, so a share of exactly one block would
    // spill a sliver into a second block (and a second, tiny map).
    let block = g.block_size.unwrap_or(cfg.dfs.block_size);
    let maps = g
        .maps
        .unwrap_or_else(|| g.size.div_ceil(block - block / 32).clamp(1, 10_000) as u32);
    let params = JobParams {
        size: g.size,
        seed: g.seed,
        maps,
        ..Default::default()
    };
    let s = Submit {
        job: g.generator,
        inputs: vec![],
        output: g.output.clone(),
        reducers: 0,
        params,
        output_replication: g.replication.unwrap_or(0),
        output_block_size: g.block_size.unwrap_or(0),
        queue: "default".into(),
        sort_buffer: 0,
        ..Default::default()
    };
    let id = submit(cfg, s).await?;
    let v = wait(cfg, id).await?;
    finish(&v, g.json)
}

async fn job_submit(a: &JobArgs) -> anyhow::Result<Submit> {
    let mut params = JobParams {
        format_lines: a.format == RecordFormat::Lines,
        ..Default::default()
    };
    if a.total_order {
        params.extra.insert("total_order".into(), "true".into());
    }
    for kv in &a.params {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--param {kv:?} is not key=value"))?;
        params.extra.insert(k.into(), v.into());
    }
    let user = super::userjob::UserJob {
        mapper: a.mapper.clone(),
        reducer: a.reducer.clone(),
        combiner: a.combiner.clone(),
        program: a.program.clone(),
        files: a.files.clone(),
        cmdenv: a.cmdenv.clone(),
        task_timeout: a.task_timeout,
    };
    let ship = super::userjob::prepare(&a.name, &user, &mut params)?;
    let (plan, name) = match a.name.as_str() {
        "streaming" => (
            Some(super::userjob::streaming_plan(
                a.reducers,
                a.combiner.is_some(),
            )),
            a.name.clone(),
        ),
        "program" => {
            let path = a.program.as_ref().expect("checked by prepare");
            let (mut plan, name) = super::userjob::describe(path, &params).await?;
            plan.map_only |= a.reducers == 0;
            (Some(plan), name)
        }
        _ => (None, a.name.clone()),
    };
    if a.reducers == 0 && plan.is_none() {
        anyhow::bail!(
            "--reducers must be at least 1 (0, map-only, is for streaming and program jobs)"
        );
    }
    // 0 on the wire means "the default": a typed 0 is refused, not defaulted.
    if a.sort_buffer == Some(0) {
        anyhow::bail!("--sort-buffer must be between 1MiB and 4GiB (got 0)");
    }
    Ok(Submit {
        job: name,
        plan,
        ship,
        program: a.name == "program",
        inputs: a.input.clone(),
        output: a.output.clone(),
        reducers: a.reducers,
        params,
        output_replication: a.output_replication.unwrap_or(0),
        output_block_size: 0,
        queue: a.queue.clone(),
        sort_buffer: a.sort_buffer.unwrap_or(0),
    })
}

/// The request is the harness's too (`mr bench` submits through
/// [`submit`]), so it is defined in the crate below.
pub use bench::client::Submit;

/// Validates what the client can check alone, samples split points for
/// total-order jobs, and submits. Returns the job id.
pub async fn submit(cfg: &ClusterConfig, s: Submit) -> anyhow::Result<u64> {
    let dfs = Dfs::connect(cfg)?;
    let mut params = s.params.clone();
    let (plan, reducers, builtin) = match &s.plan {
        Some(plan) => {
            if plan.partitioning == Partitioning::TotalOrder && !plan.map_only {
                bail!(
                    "{}: total-order partitioning is for the built-in sorts",
                    s.job
                );
            }
            let reducers = if plan.map_only { 0 } else { s.reducers };
            (plan.clone(), reducers, None)
        }
        None => {
            let job = registry::lookup(&s.job).with_context(|| {
                format!(
                    "unknown job {:?}; known jobs: {}, or streaming, or program",
                    s.job,
                    registry::NAMES.join(", ")
                )
            })?;
            // A validator reads everything in one reduce, whatever was asked.
            let reducers = job.fixed_reducers().unwrap_or(s.reducers);
            params.reducers = reducers;
            (job.plan(&params), reducers, Some(job))
        }
    };
    params.reducers = reducers;
    super::userjob::ship_all(&dfs, s.program, &s.ship, &mut params).await?;
    let mut splits = Vec::new();
    if let Some(job) = &builtin {
        if !plan.map_only && plan.partitioning == Partitioning::TotalOrder && reducers > 1 {
            let job: &dyn joblib::jobs::Job = job.as_ref();
            splits = sample_splits(&dfs, job, &params, &s.inputs, reducers).await?;
        }
    }
    let r = dfs
        .master()
        .submit_job(proto::SubmitJobRequest {
            job: s.job.clone(),
            inputs: s.inputs.clone(),
            output: s.output.clone(),
            reducers,
            params_json: joblib::spec::params_to_json(&params),
            plan_json: plan.to_json(),
            output_replication: s.output_replication,
            splits: splits.into_iter().map(Into::into).collect(),
            queue: s.queue.clone(),
            sort_buffer_bytes: s.sort_buffer,
            output_block_size: s.output_block_size,
        })
        .await
        .map_err(DfsError::from)?
        .into_inner();
    Ok(r.job_id)
}

/// Keys sampled from the first MiB of up to 10 input blocks spread over the
/// input, as Hadoop's TeraSort samples its splits before it starts.
async fn sample_splits(
    dfs: &Dfs,
    job: &dyn joblib::jobs::Job,
    params: &JobParams,
    inputs: &[String],
    reducers: u32,
) -> anyhow::Result<Vec<Vec<u8>>> {
    const SAMPLE_BLOCKS: usize = 10;
    const SAMPLE_BYTES: u64 = 1 << 20;
    let mut blocks = Vec::new();
    for input in inputs {
        let entries = dfs
            .master()
            .list_files(proto::PathRequest {
                path: input.clone(),
            })
            .await
            .map_err(DfsError::from)?
            .into_inner()
            .entries;
        for e in entries.iter().filter(|e| !e.is_dir) {
            let name = e.path.rsplit('/').next().unwrap_or("");
            if name.starts_with('_') || name.starts_with('.') {
                continue;
            }
            let st = dfs.stat(&e.path).await?;
            let mut off = 0;
            for b in st.blocks {
                let len = b.block.map_or(0, |i| i.len);
                blocks.push((b, off));
                off += len;
            }
        }
    }
    if blocks.is_empty() {
        // Only empty files: no record to place, so any split points do; the
        // job succeeds with empty parts.
        return Ok(vec![Vec::new(); reducers.saturating_sub(1) as usize]);
    }
    let step = (blocks.len() as f64 / SAMPLE_BLOCKS as f64).max(1.0);
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let format = job.input_format(params);
    let mut i = 0.0;
    while (i as usize) < blocks.len() {
        let (b, off) = &blocks[i as usize];
        i += step;
        let info = b.block.unwrap_or_default();
        let Some(w) = b.cached_on.first().or(b.replicas.first()) else {
            continue;
        };
        let mut conn = dfs.worker(&w.addr)?;
        let mut stream = conn
            .read_block(proto::ReadBlockRequest {
                block_id: info.id,
                offset: 0,
                len: SAMPLE_BYTES,
                fill_cache: false,
                expect: b.block,
                access_token: b.access_token.clone(),
            })
            .await
            .map_err(DfsError::from)?
            .into_inner();
        let mut data = Vec::new();
        while let Some(c) = stream.message().await.map_err(DfsError::from)? {
            data.extend_from_slice(&c.data);
        }
        // A cut record at the sample's end may error; the keys before it count.
        let mut ctx = joblib::jobs::TaskCtx {
            params: params.clone(),
            ..Default::default()
        };
        let mut none = || None;
        let mut on = |k: &[u8], v: &[u8]| {
            job.map(&mut ctx, k, v, &mut |k2: &[u8], _v2: &[u8]| {
                keys.push(k2.to_vec())
            });
        };
        let _ = joblib::jobs::formats::read_split(format, &data, *off, &mut none, &mut on);
    }
    if keys.is_empty() {
        bail!("sampling the input found no records");
    }
    Ok(joblib::jobs::formats::choose_splits(keys, reducers))
}

/// A job's summary object, as the master builds it.
pub async fn get(dfs: &Dfs, id: u64) -> anyhow::Result<Value> {
    let r = dfs
        .master()
        .get_job(proto::JobRequest { job_id: id })
        .await
        .map_err(DfsError::from)?
        .into_inner();
    Ok(serde_json::from_str(&r.json)?)
}

/// How long `wait` waits for a master that stopped answering.
const MASTER_WAIT: Duration = Duration::from_secs(60);

enum MasterGone {
    Unreachable,
    Forgot,
    No,
}

/// A call that never got an answer: the connection was refused, or broke
/// under it (a master killed mid-call comes back as Unknown "transport
/// error", not Unavailable), or was cancelled with it.
fn unreachable(s: &tonic::Status) -> bool {
    use std::error::Error as _;
    match s.code() {
        tonic::Code::Unavailable | tonic::Code::Cancelled => true,
        tonic::Code::Unknown => {
            s.message().contains("transport error")
                || s.source()
                    .is_some_and(|e| e.downcast_ref::<tonic::transport::Error>().is_some())
        }
        _ => false,
    }
}

fn master_gone(e: &anyhow::Error) -> MasterGone {
    match e.downcast_ref::<DfsError>() {
        Some(DfsError::Rpc(s)) if unreachable(s) => MasterGone::Unreachable,
        Some(DfsError::Rpc(s)) if s.code() == tonic::Code::NotFound => MasterGone::Forgot,
        Some(DfsError::Connect { .. }) => MasterGone::Unreachable,
        _ => MasterGone::No,
    }
}

fn is_final(v: &Value) -> bool {
    matches!(v["state"].as_str(), Some("succeeded" | "failed" | "killed"))
}

/// How long one `WaitJob` may be held while progress is shown: the
/// progress bar's (or log lines') refresh step. The job's end is pushed
/// whatever the step.
const PROGRESS_STEP: Duration = Duration::from_millis(200);
/// How long one `WaitJob` may be held when nothing is shown (`-q`).
const QUIET_STEP: Duration = Duration::from_secs(30);

/// The job's summary as soon as it has ended, or after `step` its summary
/// so far: the master answers the call when the job ends (a long poll),
/// so the client learns of the end when it happens.
pub async fn wait_end(dfs: &Dfs, id: u64, step: Duration) -> anyhow::Result<Value> {
    let r = dfs
        .master()
        .wait_job(proto::WaitJobRequest {
            job_id: id,
            wait_ms: step.as_millis() as u64,
        })
        .await
        .map_err(DfsError::from)?
        .into_inner();
    Ok(serde_json::from_str(&r.json)?)
}

fn unimplemented(e: &anyhow::Error) -> bool {
    matches!(e.downcast_ref::<DfsError>(), Some(DfsError::Rpc(s)) if s.code() == tonic::Code::Unimplemented)
}

/// Follows a job to its end, drawing progress on a terminal. The end comes
/// pushed (`WaitJob`); a master without that call is polled instead.
pub async fn wait(cfg: &ClusterConfig, id: u64) -> anyhow::Result<Value> {
    let dfs = Dfs::connect(cfg)?;
    let mut progress = JobProgress::new();
    let mut away: Option<Instant> = None;
    let mut pushed = true;
    let step = if crate::output::quiet() {
        QUIET_STEP
    } else {
        PROGRESS_STEP
    };
    loop {
        let got = if pushed {
            wait_end(&dfs, id, step).await
        } else {
            get(&dfs, id).await
        };
        let v = match got {
            Ok(v) => {
                if away.take().is_some() {
                    progress.note(&format!("job {id}: the master answers again"));
                }
                v
            }
            Err(e) if pushed && unimplemented(&e) => {
                pushed = false;
                continue;
            }
            Err(e) => match master_gone(&e) {
                // A master that restarts (an upgrade, a crash) is waited
                // for: the job may still be there if it only lost a call.
                MasterGone::Unreachable if away.is_none_or(|t| t.elapsed() < MASTER_WAIT) => {
                    if away.is_none() {
                        progress.note(&format!(
                            "job {id}: the master does not answer ({e:#}); waiting up to {}s",
                            MASTER_WAIT.as_secs()
                        ));
                    }
                    away.get_or_insert_with(Instant::now);
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue;
                }
                // Jobs live in the master's memory: one that restarted has
                // forgotten this job (its history on disk says how it ended).
                MasterGone::Forgot if away.is_some() || progress.started() => anyhow::bail!(
                    "the master restarted and no longer knows job {id}: it did not finish; \
                     resubmit it (its input is intact, and nothing of its output was committed)"
                ),
                _ => return Err(e),
            },
        };
        progress.update(&v);
        if is_final(&v) {
            progress.finish();
            return Ok(v);
        }
        if !pushed {
            tokio::time::sleep(PROGRESS_STEP).await;
        }
    }
}

/// Prints a finished job and turns a failure into an error exit.
pub fn finish(v: &Value, as_json: bool) -> anyhow::Result<()> {
    if as_json {
        println!("{}", serde_json::to_string_pretty(v)?);
    } else {
        print_summary(v);
    }
    match v["state"].as_str() {
        Some("succeeded") => Ok(()),
        Some(s) => bail!(
            "job {} {s}: {}",
            v["job_id"],
            v["error"].as_str().unwrap_or("no reason given")
        ),
        None => bail!("job state unknown"),
    }
}

pub fn print_summary(v: &Value) {
    let loc = &v["locality"];
    let maps = v["maps"].as_u64().unwrap_or(0).max(1) as f64;
    let b = &v["bytes"];
    println!(
        "job {} {} ({}): {} in {:.2}s with scheduler {}",
        v["job_id"],
        v["job"].as_str().unwrap_or(""),
        v["output"].as_str().unwrap_or(""),
        v["state"].as_str().unwrap_or(""),
        v["exec_time_s"].as_f64().unwrap_or(0.0),
        v["scheduler"].as_str().unwrap_or("")
    );
    println!(
        "  maps {} reduces {}; locality: cache {} node {} cache-rack {} rack {} off-rack {} (local rate {:.0}%)",
        v["maps"],
        v["reduces"],
        loc["cache_local"],
        loc["node_local"],
        loc["cache_rack_local"],
        loc["rack_local"],
        loc["off_rack"],
        100.0 * (loc["cache_local"].as_f64().unwrap_or(0.0) + loc["node_local"].as_f64().unwrap_or(0.0)) / maps
    );
    let f = |k: &str| common::units::format_size(b[k].as_u64().unwrap_or(0));
    println!(
        "  bytes: cache {} local {} remote-rack {} remote-off-rack {} shuffle {} output {}",
        f("cache"),
        f("local"),
        f("remote_rack"),
        f("remote_off_rack"),
        f("shuffle"),
        f("output")
    );
    let rt = &v["map_response_time_s"];
    println!(
        "  map response time: mean {:.2}s p50 {:.2}s p95 {:.2}s",
        rt["mean"].as_f64().unwrap_or(0.0),
        rt["p50"].as_f64().unwrap_or(0.0),
        rt["p95"].as_f64().unwrap_or(0.0)
    );
    if let Some(e) = v["error"].as_str() {
        println!("  error: {e}");
    }
}

pub async fn status(cfg: &ClusterConfig, id: u64, as_json: bool) -> anyhow::Result<()> {
    let v = get(&Dfs::connect(cfg)?, id).await?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print_summary(&v);
    }
    Ok(())
}

pub async fn list(cfg: &ClusterConfig, as_json: bool) -> anyhow::Result<()> {
    let dfs = Dfs::connect(cfg)?;
    let r = dfs
        .master()
        .list_jobs(proto::Empty {})
        .await
        .map_err(DfsError::from)?
        .into_inner();
    let jobs: Vec<Value> = r
        .json
        .iter()
        .filter_map(|j| serde_json::from_str(j).ok())
        .collect();
    if as_json {
        println!("{}", serde_json::to_string_pretty(&jobs)?);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = jobs
        .iter()
        .map(|v| {
            vec![
                v["job_id"].to_string(),
                v["job"].as_str().unwrap_or("").into(),
                v["state"].as_str().unwrap_or("").into(),
                format!("{}/{}", v["progress"]["maps_done"], v["maps"]),
                format!("{}/{}", v["progress"]["reduces_done"], v["reduces"]),
                format!("{:.2}s", v["exec_time_s"].as_f64().unwrap_or(0.0)),
                v["scheduler"].as_str().unwrap_or("").into(),
                v["owner"].as_str().unwrap_or("").into(),
                v["output"].as_str().unwrap_or("").into(),
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &[
                "ID",
                "JOB",
                "STATE",
                "MAPS",
                "REDUCES",
                "TIME",
                "SCHEDULER",
                "OWNER",
                "OUTPUT"
            ],
            &rows
        )
    );
    Ok(())
}

pub async fn kill(cfg: &ClusterConfig, id: u64, json: bool) -> anyhow::Result<()> {
    let dfs = Dfs::connect(cfg)?;
    let r = dfs
        .master()
        .kill_job(proto::JobRequest { job_id: id })
        .await
        .map_err(DfsError::from)?
        .into_inner();
    let v: Value = serde_json::from_str(&r.json)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        eprintln!("job {id}: {}", v["state"].as_str().unwrap_or(""));
    }
    Ok(())
}

pub async fn history(cfg: &ClusterConfig, id: u64) -> anyhow::Result<()> {
    let dfs = Dfs::connect(cfg)?;
    let r = dfs
        .master()
        .job_history(proto::JobRequest { job_id: id })
        .await
        .map_err(DfsError::from)?
        .into_inner();
    for line in r.json {
        println!("{line}");
    }
    Ok(())
}

#[cfg(test)]
mod master_gone_tests {
    use super::*;

    #[test]
    fn a_broken_connection_is_waited_for_a_refusal_is_not() {
        let gone = |s: tonic::Status| master_gone(&anyhow::Error::new(DfsError::Rpc(s)));
        // what a master killed mid-call gives (seen in scripts/faults.sh master-restart)
        assert!(matches!(
            gone(tonic::Status::unknown("transport error")),
            MasterGone::Unreachable
        ));
        assert!(matches!(
            gone(tonic::Status::unavailable("connection refused")),
            MasterGone::Unreachable
        ));
        assert!(matches!(
            gone(tonic::Status::not_found("no job 3")),
            MasterGone::Forgot
        ));
        assert!(matches!(
            gone(tonic::Status::unknown("some handler error")),
            MasterGone::No
        ));
        assert!(matches!(
            gone(tonic::Status::unauthenticated("wrong token")),
            MasterGone::No
        ));
    }
}
