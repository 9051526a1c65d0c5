//! A job submission: the spec validated completely before anything runs,
//! the inputs resolved into one map per block, and the job queued.

use super::disk::Submitted;
use super::{Job, JobSpec, JobState, Jobs, MapInput};
use crate::blocks::namespace::{is_staging, FileMeta, Namespace};
use crate::error::{MasterError, Result};
use common::config::{validate_block_size, validate_replication, ClusterConfig};
use common::path::DfsPath;
use mrjob::JobParams;
use std::time::Instant;

/// Default bytes of map output sorted in memory before a spill: Hadoop's
/// `mapreduce.task.io.sort.mb` default, 100 MiB, which holds one 64 MiB
/// block of 100-byte records with their 24-byte index entries (80 MiB),
/// so a TeraSort map sorts once and never spills.
pub const DEFAULT_SORT_BUFFER: u64 = 100 << 20;
/// Bytes of following blocks a map may read to finish its last record: a
/// longer record is an error rather than an unbounded read.
const MAX_TAIL_BYTES: u64 = 256 << 20;
const MAX_REDUCERS: u32 = 10_000;
const MAX_GENERATOR_MAPS: u32 = 100_000;

/// What a client asks to run.
#[derive(Debug, Clone, Default)]
pub struct SubmitJob {
    pub job: String,
    pub inputs: Vec<String>,
    pub output: String,
    pub reducers: u32,
    pub params_json: String,
    /// 0 selects the cluster default; so do the sizes below.
    pub output_replication: u32,
    pub splits: Vec<Vec<u8>>,
    pub queue: String,
    pub sort_buffer_bytes: u64,
    pub output_block_size: u64,
    /// The job's declared plan (`mrjob::JobPlan` as JSON); empty: the
    /// defaults.
    pub plan_json: String,
    /// Who submitted it (the caller's identity, never the request's say).
    pub owner: String,
}

fn bad(msg: String) -> MasterError {
    MasterError::InvalidArgument(msg)
}

impl Jobs {
    /// Validates `req` against the namespace and queues its `submitted`
    /// record; returns its id and the record's fate. The job waits aside,
    /// unscheduled, until [`Jobs::admit`] (the record on disk) or
    /// [`Jobs::refuse`]. An invalid job uses no id.
    pub fn submit(
        &mut self,
        req: SubmitJob,
        ns: &Namespace,
        cfg: &ClusterConfig,
        now: Instant,
    ) -> Result<(u64, Submitted)> {
        if req.job.is_empty() || req.job.len() > 200 || req.job.chars().any(char::is_control) {
            return Err(bad(format!(
                "job name {:?}: 1 to 200 printable characters",
                req.job
            )));
        }
        // What the job is, as the client declared it: the master runs no
        // job code, so it plans from this alone. A client that sends none
        // gets Hadoop's defaults (text lines in, KEY<TAB>VALUE lines out).
        let plan = if req.plan_json.is_empty() {
            mrjob::JobPlan::default()
        } else {
            mrjob::JobPlan::from_json(&req.plan_json).map_err(bad)?
        };
        let mut params = mrjob::spec::params_from_json(&req.params_json).map_err(bad)?;
        let output = self.check_output(&req.output, ns)?;
        let map_only = plan.map_only;
        let reducers = if map_only { 0 } else { req.reducers };
        if !map_only && !(1..=MAX_REDUCERS).contains(&reducers) {
            return Err(bad(format!(
                "reducers must be between 1 and {MAX_REDUCERS}, not {}",
                req.reducers
            )));
        }
        let sizes = Sizes::of(&req, cfg)?;
        let slowstart = check_reduce_params(&params)?;
        let (map_inputs, maps) = plan_maps(&req, &plan, &params, ns)?;
        if plan.partitioning == mrjob::Partitioning::TotalOrder
            && !map_only
            && req.splits.len() + 1 != reducers as usize
        {
            return Err(bad(format!(
                "{} partitions by sampled ranges: it needs {} split points for {reducers} reducers, got {}",
                req.job,
                reducers.saturating_sub(1),
                req.splits.len()
            )));
        }
        self.inherit_counters(&req, &plan, &mut params);
        let id = self.next_id;
        let spec = JobSpec {
            job: req.job.clone(),
            inputs: req.inputs.clone(),
            output: output.to_string(),
            reducers,
            params_json: mrjob::spec::params_to_json(&params),
            params,
            is_validator: plan.validator,
            plan_json: plan.to_json(),
            output_replication: sizes.replication,
            output_block_size: sizes.block_size,
            splits: req.splits,
            // The fair and capacity policies' pools: the owner's, unless
            // the submitter named one.
            queue: if !req.queue.is_empty() {
                req.queue.clone()
            } else if !req.owner.is_empty() {
                req.owner.clone()
            } else {
                req.queue
            },
            sort_buffer_bytes: sizes.sort_buffer,
            map_only,
            slowstart,
            owner: req.owner.clone(),
        };
        let sched_name = self.spec.name.clone();
        let job = Job::new(id, id, spec, map_inputs, maps, &sched_name, now);
        let record = self.disk.record_submitted(id, job.summary());
        self.next_id += 1;
        tracing::info!(job = id, name = %req.job, maps, reducers, scheduler = %sched_name, "job submitted");
        self.admitting.insert(id, job);
        Ok((id, record))
    }

    /// The output path, refused when it exists, lies under a file or the
    /// staging area, or overlaps a job's output that has not ended: two
    /// jobs' commits would fight over it.
    fn check_output(&self, output: &str, ns: &Namespace) -> Result<DfsPath> {
        let output = DfsPath::parse_file(output).map_err(|e| bad(format!("output: {e}")))?;
        if is_staging(output.as_str()) {
            return Err(bad(format!(
                "output {output}: /_staging/ is reserved for the runtime's job staging"
            )));
        }
        if ns.files.contains_key(output.as_str()) || ns.is_dir(output.as_str()) {
            return Err(MasterError::AlreadyExists(format!(
                "output {output} already exists: choose another path or remove it (mr fs rm {output})"
            )));
        }
        if let Some(a) = ns.file_ancestor(output.as_str()) {
            return Err(bad(format!("output {output}: its parent {a} is a file")));
        }
        if let Some(id) = self.output_owner(output.as_str()) {
            return Err(MasterError::AlreadyExists(format!(
                "output {output} overlaps the output of job {id}, which has not ended"
            )));
        }
        Ok(output)
    }

    /// A job whose plan inherits counters takes them from the newest
    /// succeeded job that wrote one of its inputs (a sort's validator
    /// compares with what the sort's maps counted on its input).
    fn inherit_counters(&self, req: &SubmitJob, plan: &mrjob::JobPlan, params: &mut JobParams) {
        if plan.inherit.is_empty() {
            return;
        }
        let made_input = |j: &&Job| {
            j.state() == JobState::Succeeded
                && req
                    .inputs
                    .iter()
                    .any(|i| DfsPath::parse(i).is_ok_and(|p| p.as_str() == j.spec().output))
        };
        let all = self.live.values().chain(self.ended.values());
        if let Some(src) = all.filter(made_input).max_by_key(|j| j.id()) {
            for (k, name) in &plan.inherit {
                if let Some(v) = src.counters().get(k) {
                    params.extra.entry(name.clone()).or_insert(v.to_string());
                }
            }
        }
    }

    /// Job `id`'s `submitted` record is on disk: the job joins the queue
    /// and the policy hears of it.
    pub fn admit(&mut self, id: u64) {
        let Some(job) = self.admitting.remove(&id) else {
            return;
        };
        self.scheduler.on_job_added(&job.view(self.started));
        self.live.insert(id, job);
    }

    /// Job `id`'s `submitted` record could not be written: the job is
    /// dropped, unseen (its id stays unused).
    pub fn refuse(&mut self, id: u64) {
        self.admitting.remove(&id);
    }
}

/// The output's replication and block size and the map's sort buffer,
/// with 0 in the request meaning the cluster's default.
struct Sizes {
    replication: u32,
    block_size: u64,
    sort_buffer: u64,
}

impl Sizes {
    fn of(req: &SubmitJob, cfg: &ClusterConfig) -> Result<Sizes> {
        let replication = if req.output_replication == 0 {
            cfg.dfs.replication
        } else {
            req.output_replication
        };
        validate_replication(replication).map_err(|e| bad(format!("output replication: {e}")))?;
        let block_size = if req.output_block_size == 0 {
            cfg.dfs.block_size
        } else {
            req.output_block_size
        };
        validate_block_size(block_size).map_err(bad)?;
        let sort_buffer = if req.sort_buffer_bytes == 0 {
            DEFAULT_SORT_BUFFER
        } else {
            req.sort_buffer_bytes
        };
        common::config::validate_sort_buffer(sort_buffer).map_err(bad)?;
        Ok(Sizes {
            replication,
            block_size,
            sort_buffer,
        })
    }
}

/// The reduce's shuffle settings, checked here so that a typo fails the
/// submission rather than every reduce attempt (and the job); returns the
/// slow-start fraction.
fn check_reduce_params(params: &JobParams) -> Result<f64> {
    if let Some(v) = params.extra.get("shuffle_memory") {
        common::config::parse_shuffle_memory(v).map_err(bad)?;
    }
    if let Some(v) = params.extra.get("shuffle_in_place") {
        if v != "true" && v != "false" {
            return Err(bad(format!("bad shuffle_in_place {v:?}: true or false")));
        }
    }
    if let Some(v) = params.extra.get("map_output_by_reference") {
        if !["auto", "always", "never"].contains(&v.as_str()) {
            return Err(bad(format!(
                "bad map_output_by_reference {v:?}: auto, always or never"
            )));
        }
    }
    match params.extra.get("slowstart") {
        None => Ok(1.0),
        Some(v) => v
            .parse::<f64>()
            .ok()
            .filter(|f| (0.0..=1.0).contains(f))
            .ok_or_else(|| {
                bad(format!(
                    "bad slowstart {v:?}: the fraction of maps done before the reduces start, \
                     0 to 1 (Hadoop's mapreduce.job.reduce.slowstart.completedmaps)"
                ))
            }),
    }
}

/// The job's map inputs and map count: a generator's maps read nothing,
/// any other job has one map per input block.
fn plan_maps(
    req: &SubmitJob,
    plan: &mrjob::JobPlan,
    params: &JobParams,
    ns: &Namespace,
) -> Result<(Vec<MapInput>, u32)> {
    let input_format = plan.input_format;
    if input_format == mrjob::InputFormat::Generated {
        if !req.inputs.is_empty() {
            return Err(bad(format!(
                "{} is a generator: it takes no --input",
                req.job
            )));
        }
        if params.maps == 0 || params.maps > MAX_GENERATOR_MAPS {
            return Err(bad(format!(
                "maps must be between 1 and {MAX_GENERATOR_MAPS}"
            )));
        }
        if params.size == 0 {
            return Err(bad("a generator needs --size greater than 0".into()));
        }
        return Ok((vec![], params.maps));
    }
    let inputs = resolve_inputs(ns, &req.inputs)?;
    if let mrjob::InputFormat::Fixed { len, .. } = input_format {
        for (path, f) in &inputs {
            if f.size() % len as u64 != 0 {
                return Err(bad(format!(
                    "{path} is {} bytes, not a multiple of the {len}-byte records {} reads",
                    f.size(),
                    req.job
                )));
            }
        }
    }
    let mi = map_inputs(&inputs);
    // Only empty files: no map runs, and each reducer commits an empty
    // part, as Hadoop and Spark do, so a pipeline whose earlier stage
    // produced nothing goes on.
    let n = mi.len() as u32;
    Ok((mi, n))
}

/// Input paths (files or directories) → files in path order; names
/// starting with `_` or `.` are skipped as Hadoop's input formats do.
fn resolve_inputs(ns: &Namespace, inputs: &[String]) -> Result<Vec<(String, FileMeta)>> {
    if inputs.is_empty() {
        return Err(bad("the job needs --input".into()));
    }
    let mut out = Vec::new();
    for raw in inputs {
        let p = DfsPath::parse(raw).map_err(|e| bad(format!("input: {e}")))?;
        let files = ns.matching(p.as_str());
        if files.is_empty() {
            return Err(MasterError::NotFound(format!("input {p} does not exist")));
        }
        for f in files {
            let hidden = f
                .strip_prefix(&p.dir_prefix())
                .unwrap_or("")
                .split('/')
                .any(|c| c.starts_with('_') || c.starts_with('.'));
            if hidden {
                continue;
            }
            out.push((f.clone(), ns.files[&f].clone()));
        }
    }
    Ok(out)
}

/// One map per block, each with the blocks after it in its file (up to
/// [`MAX_TAIL_BYTES`]) to finish a record straddling its end.
fn map_inputs(inputs: &[(String, FileMeta)]) -> Vec<MapInput> {
    let mut mi = Vec::new();
    for (path, f) in inputs {
        let path: std::sync::Arc<str> = path.as_str().into();
        let mut off = 0;
        for (i, b) in f.blocks.iter().enumerate() {
            let mut following = Vec::new();
            let mut tail = 0;
            for nb in &f.blocks[i + 1..] {
                if tail >= MAX_TAIL_BYTES {
                    break;
                }
                tail += nb.len;
                following.push(*nb);
            }
            mi.push(MapInput {
                path: path.clone(),
                block: *b,
                offset: off,
                following,
            });
            off += b.len;
        }
    }
    mi
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::namespace::{Edit, FileMeta};
    use protocol::BlockInfo;

    fn setup(tag: &str) -> (Jobs, Namespace, ClusterConfig, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("mr-submit-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let toml = format!(
            "token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = {:?}\n\
             [[workers]]\nname = \"w1\"\naddr = \"127.0.0.1:7101\"\ndata_dir = \"/x1\"\n",
            dir.join("m")
        );
        let cfg = ClusterConfig::parse(&toml).unwrap();
        let jobs = Jobs::open(cfg.scheduler.spec(), dir.join("m"), Instant::now(), &|_| {
            false
        })
        .unwrap();
        let mut ns = Namespace::default();
        ns.apply(&Edit::AddFile {
            path: "/in".into(),
            file: FileMeta {
                mode: crate::blocks::namespace::FILE_MODE,
                owner: String::new(),
                replication: 1,
                block_size: 1 << 20,
                blocks: vec![BlockInfo {
                    id: 1,
                    len: 12,
                    crc32c: 0,
                    generation: 0,
                }],
                mtime_ms: 0,
            },
        });
        (jobs, ns, cfg, dir)
    }

    fn wordcount(extra: &[(&str, &str)], sort_buffer: u64) -> SubmitJob {
        let mut p = mrjob::JobParams::default();
        for (k, v) in extra {
            p.extra.insert(k.to_string(), v.to_string());
        }
        SubmitJob {
            job: "wordcount".into(),
            inputs: vec!["/in".into()],
            output: "/out".into(),
            reducers: 1,
            params_json: mrjob::spec::params_to_json(&p),
            sort_buffer_bytes: sort_buffer,
            ..Default::default()
        }
    }

    /// An oversized `shuffle_memory` (a reduce would try to hold it all in
    /// memory) or sort buffer is refused at submission with a message
    /// naming the setting and its bounds, and uses no job id (issue 28).
    #[test]
    fn oversized_shuffle_memory_and_sort_buffer_are_refused_clearly() {
        let (mut jobs, ns, cfg, dir) = setup("bounds");
        let now = Instant::now();
        for (req, want) in [
            (
                wordcount(&[("shuffle_memory", "1TiB")], 0),
                "shuffle_memory",
            ),
            (
                wordcount(&[("shuffle_memory", "lots")], 0),
                "shuffle_memory",
            ),
            (
                wordcount(&[("shuffle_in_place", "maybe")], 0),
                "shuffle_in_place",
            ),
            (
                wordcount(&[("map_output_by_reference", "sometimes")], 0),
                "map_output_by_reference",
            ),
            (wordcount(&[], 4 << 30), "sort buffer"),
            (wordcount(&[], 64 << 30), "sort buffer"),
        ] {
            let e = jobs.submit(req, &ns, &cfg, now).unwrap_err();
            assert!(
                matches!(e, MasterError::InvalidArgument(_)) && e.to_string().contains(want),
                "{e}"
            );
        }
        assert!(jobs.is_empty());
        let ok = wordcount(&[("shuffle_memory", "300KiB")], 64 << 20);
        jobs.submit(ok, &ns, &cfg, now).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The master plans from the plan the client declares, whatever the
    /// job's name: a job it has no code for is planned as a built-in one,
    /// a map-only plan runs no reduce, a plan it cannot read or a nameless
    /// job is refused and uses no id.
    #[test]
    fn a_job_is_planned_from_its_declared_plan() {
        let (mut jobs, ns, cfg, dir) = setup("plan");
        let now = Instant::now();
        for (job, plan, want) in [
            ("mine", "{\"input\":\"csv\"}", "input format"),
            ("mine", "not json", "plan"),
            ("", "{}", "job name"),
            (
                "mine",
                "{\"input\":\"fixed\",\"record_len\":5}",
                "not a multiple",
            ),
        ] {
            let req = SubmitJob {
                job: job.into(),
                plan_json: plan.into(),
                ..wordcount(&[], 0)
            };
            let e = jobs.submit(req, &ns, &cfg, now).unwrap_err();
            assert!(e.to_string().contains(want), "{plan}: {e}");
        }
        assert!(jobs.admitting.is_empty() && jobs.is_empty());
        let map_only = mrjob::JobPlan {
            map_only: true,
            ..Default::default()
        };
        let req = SubmitJob {
            job: "my-streaming-job".into(),
            plan_json: map_only.to_json(),
            reducers: 4,
            ..wordcount(&[], 0)
        };
        let (id, _) = jobs.submit(req, &ns, &cfg, now).unwrap();
        let j = &jobs.admitting[&id];
        assert_eq!((j.spec().reducers, j.spec().map_only), (0, true));
        assert_eq!(
            mrjob::JobPlan::from_json(&j.spec().plan_json).unwrap(),
            map_only
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
