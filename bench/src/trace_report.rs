//! What `mr bench trace` writes: `trace-jobs.csv` (one row per validated
//! job run), `trace-runs.csv` (one per run: its makespan and measured slot
//! use), `solo.csv` (each job alone), `report.json` (the facts of the
//! experiment and every figure, [`super::trace_figures`]) and `summary.md`
//! ([`super::trace_summary`]). Everything but the CSVs is computed from
//! them, so `mr bench trace-report` can make it again.

use super::results::csv_line;
use super::trace::{Scale, ScaledJob};
use super::trace_figures::{self, Figures};
use super::trace_summary;
use serde_json::Value;
use std::path::Path;

/// One validated job of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobRow {
    pub load: String,
    pub policy: String,
    pub rep: u32,
    /// The trace row: with the seed, the pairing key across policies.
    pub row: usize,
    pub name: String,
    pub job_id: u64,
    pub maps: u64,
    pub reduces: u64,
    pub input_bytes: u64,
    pub shuffle_bytes: u64,
    pub output_bytes: u64,
    /// What the scaling asked for: the input is the job's pool blocks (each
    /// a little under the block size), shuffle and output follow from the
    /// row's ratios.
    pub want_input: u64,
    pub want_shuffle: u64,
    pub want_output: u64,
    pub at_s: f64,
    pub submit_ms: u64,
    pub end_ms: u64,
    pub exec_time_s: f64,
    pub alone_s: f64,
    pub local_maps: u64,
}

impl JobRow {
    pub fn from_summary(v: &Value, j: &ScaledJob, policy: &str, input: u64) -> JobRow {
        let u = |x: &Value| x.as_u64().unwrap_or(0);
        let b = &v["bytes"];
        JobRow {
            policy: policy.into(),
            row: j.row,
            name: j.name.clone(),
            job_id: u(&v["job_id"]),
            maps: u(&v["maps"]),
            reduces: u(&v["reduces"]),
            input_bytes: u(&b["cache"])
                + u(&b["local"])
                + u(&b["remote_rack"])
                + u(&b["remote_off_rack"]),
            shuffle_bytes: u(&b["shuffle"]),
            output_bytes: u(&b["output"]),
            want_input: input,
            want_shuffle: (input as f64 * j.shuffle_ratio) as u64,
            want_output: (input as f64 * j.shuffle_ratio * j.output_ratio) as u64,
            at_s: j.at.as_secs_f64(),
            submit_ms: u(&v["submit_ms"]),
            end_ms: u(&v["end_ms"]),
            exec_time_s: v["exec_time_s"].as_f64().unwrap_or(0.0),
            local_maps: u(&v["locality"]["cache_local"]) + u(&v["locality"]["node_local"]),
            ..Default::default()
        }
    }

    pub fn slowdown(&self) -> f64 {
        if self.alone_s > 0.0 {
            self.exec_time_s / self.alone_s
        } else {
            f64::NAN
        }
    }
}

/// One run: a policy at a load in a repetition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunRow {
    pub load: String,
    pub compression: f64,
    /// The offered load the compression gives (the solo pass's
    /// task-seconds over the slot-seconds of the replayed span).
    pub offered: f64,
    pub policy: String,
    pub rep: u32,
    pub jobs: usize,
    pub makespan_s: f64,
    pub map_slot_use: f64,
    pub reduce_slot_use: f64,
}

/// The experiment as a whole, for the summary's header. Kept beside the
/// CSVs as `report.json`, so `mr bench trace-report` can write the summary
/// and plots again from a finished directory.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ReportMeta {
    pub command: String,
    pub date_ms: u64,
    pub commit: String,
    pub cluster: String,
    pub map_slots: u32,
    pub reduce_slots: u32,
    pub trace: String,
    pub from: usize,
    pub rows: usize,
    pub traced_nodes: u32,
    pub scale: Scale,
    pub pool_blocks: usize,
    /// (target load, compression) per experiment.
    pub compressions: Vec<(Option<f64>, f64)>,
    pub task_s: f64,
    pub span_s: f64,
    pub reps: u32,
    pub baseline: String,
    pub policies: Vec<String>,
    pub solo_policy: String,
    pub seed: u64,
    /// `--compare` as given (empty: each policy against the baseline).
    #[serde(default)]
    pub compare: Vec<String>,
    /// Whether each repetition started its policies one further along
    /// (false in directories from before the rotation).
    #[serde(default)]
    pub rotated: bool,
}

pub const JOB_HEADER: &[&str] = &[
    "load",
    "policy",
    "rep",
    "row",
    "name",
    "job_id",
    "maps",
    "reduces",
    "input_bytes",
    "shuffle_bytes",
    "output_bytes",
    "want_input",
    "want_shuffle",
    "want_output",
    "at_s",
    "submit_ms",
    "end_ms",
    "exec_time_s",
    "alone_s",
    "slowdown",
    "local_maps",
];

pub const RUN_HEADER: &[&str] = &[
    "load",
    "compression",
    "offered_load",
    "policy",
    "rep",
    "jobs",
    "makespan_s",
    "map_slot_use",
    "reduce_slot_use",
];

fn job_fields(r: &JobRow) -> Vec<String> {
    vec![
        r.load.clone(),
        r.policy.clone(),
        r.rep.to_string(),
        r.row.to_string(),
        r.name.clone(),
        r.job_id.to_string(),
        r.maps.to_string(),
        r.reduces.to_string(),
        r.input_bytes.to_string(),
        r.shuffle_bytes.to_string(),
        r.output_bytes.to_string(),
        r.want_input.to_string(),
        r.want_shuffle.to_string(),
        r.want_output.to_string(),
        format!("{:.3}", r.at_s),
        r.submit_ms.to_string(),
        r.end_ms.to_string(),
        format!("{:.3}", r.exec_time_s),
        format!("{:.3}", r.alone_s),
        format!("{:.3}", r.slowdown()),
        r.local_maps.to_string(),
    ]
}

fn run_fields(r: &RunRow) -> Vec<String> {
    vec![
        r.load.clone(),
        format!("{:.3}", r.compression),
        format!("{:.3}", r.offered),
        r.policy.clone(),
        r.rep.to_string(),
        r.jobs.to_string(),
        format!("{:.3}", r.makespan_s),
        format!("{:.4}", r.map_slot_use),
        format!("{:.4}", r.reduce_slot_use),
    ]
}

fn header(h: &[&str]) -> String {
    csv_line(&h.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

/// `trace-jobs.csv` as written (and read back by `trace_reread`).
pub fn jobs_csv(jobs: &[JobRow]) -> String {
    jobs.iter()
        .fold(header(JOB_HEADER), |s, r| s + &csv_line(&job_fields(r)))
}

/// `trace-runs.csv` as written.
pub fn runs_csv(runs: &[RunRow]) -> String {
    runs.iter()
        .fold(header(RUN_HEADER), |s, r| s + &csv_line(&run_fields(r)))
}

/// `solo.csv`'s columns.
pub const SOLO_HEADER: &[&str] = &[
    "row",
    "name",
    "maps",
    "reduces",
    "shuffle_ratio",
    "output_ratio",
    "capped",
    "alone_s",
    "map_task_s",
    "reduce_task_s",
];

/// One job of the slice alone on the idle cluster: the slowdown's
/// denominator, its size class, and (summed) the offered load per
/// resource.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SoloRow {
    pub row: usize,
    pub name: String,
    pub maps: u32,
    pub reduces: u32,
    pub shuffle_ratio: f64,
    pub output_ratio: f64,
    pub capped: bool,
    pub alone_s: f64,
    pub map_task_s: f64,
    pub reduce_task_s: f64,
}

impl SoloRow {
    /// Job `j` as the solo pass measured it: (time alone, map and reduce
    /// task-seconds).
    pub fn new(j: &ScaledJob, (alone_s, map_task_s, reduce_task_s): (f64, f64, f64)) -> SoloRow {
        SoloRow {
            row: j.row,
            name: j.name.clone(),
            maps: j.maps,
            reduces: j.reduces,
            shuffle_ratio: j.shuffle_ratio,
            output_ratio: j.output_ratio,
            capped: j.capped,
            alone_s,
            map_task_s,
            reduce_task_s,
        }
    }
}

/// `solo.csv` as written (and read back by `trace_reread`).
pub fn solo_csv(solo: &[SoloRow]) -> String {
    solo.iter().fold(header(SOLO_HEADER), |s, j| {
        s + &csv_line(&[
            j.row.to_string(),
            j.name.clone(),
            j.maps.to_string(),
            j.reduces.to_string(),
            format!("{:.4}", j.shuffle_ratio),
            format!("{:.4}", j.output_ratio),
            j.capped.to_string(),
            format!("{:.3}", j.alone_s),
            format!("{:.3}", j.map_task_s),
            format!("{:.3}", j.reduce_task_s),
        ])
    })
}

pub fn write_all(
    dir: &Path,
    meta: &ReportMeta,
    solo: &[SoloRow],
    jobs: &[JobRow],
    runs: &[RunRow],
    failures: &[String],
) -> anyhow::Result<()> {
    std::fs::write(dir.join("trace-jobs.csv"), jobs_csv(jobs))?;
    std::fs::write(dir.join("trace-runs.csv"), runs_csv(runs))?;
    std::fs::write(dir.join("solo.csv"), solo_csv(solo))?;
    write_summary(dir, meta, solo, jobs, runs, failures)
}

/// What the CSVs do not hold: the header's facts and the failed runs.
/// `report.json` also carries the figures, which a reread computes again
/// (and so does not read).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Sidecar {
    pub meta: ReportMeta,
    pub failures: Vec<String>,
}

/// `report.json`: the sidecar and every figure the summary prints.
#[derive(serde::Serialize)]
struct ReportJson<'a> {
    meta: &'a ReportMeta,
    failures: &'a [String],
    figures: &'a Figures,
}

/// `report.json`, `summary.md` and the job-time plots, the figures
/// computed by this binary (whose commit the report names beside the
/// runs').
pub fn write_summary(
    dir: &Path,
    meta: &ReportMeta,
    solo: &[SoloRow],
    jobs: &[JobRow],
    runs: &[RunRow],
    failures: &[String],
) -> anyhow::Result<()> {
    let figures = trace_figures::compute(meta, solo, jobs, runs, super::report::git_state());
    let json = ReportJson {
        meta,
        failures,
        figures: &figures,
    };
    std::fs::write(dir.join("report.json"), serde_json::to_vec_pretty(&json)?)?;
    std::fs::write(
        dir.join("summary.md"),
        trace_summary::summary(meta, &figures, failures),
    )?;
    let times: Vec<(&str, &str, f64)> = jobs
        .iter()
        .map(|r| (r.load.as_str(), r.policy.as_str(), r.exec_time_s))
        .collect();
    super::trace_plot::job_time_against_load(dir, &meta.policies, &times)
}
