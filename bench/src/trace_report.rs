//! What `mr bench trace` writes: `trace-jobs.csv` (one row per validated
//! job run), `trace-runs.csv` (one per run: its makespan and measured slot
//! use), `solo.csv` (each job alone) and `summary.md`: per load, each
//! policy's mean job time and slowdown with 95 % intervals, its p99, the
//! measured map- and reduce-slot use beside them, and the paired
//! difference with the baseline ("not distinguishable" when its interval
//! holds 0). The header records the commit and whether the tree was clean,
//! the cluster and its shaping, the trace slice and scaling, the load and
//! compression, the repetitions and the date.

use super::bootstrap::{self, Interval, RESAMPLES};
use super::report::utc;
use super::results::csv_line;
use super::trace::{Scale, ScaledJob};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Seeds every interval of a report, so the same CSVs give the same report.
const BOOT_SEED: u64 = 26;

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

pub fn write_all(
    dir: &Path,
    meta: &ReportMeta,
    solo_jobs: &[ScaledJob],
    solo: &[(f64, f64, f64)],
    jobs: &[JobRow],
    runs: &[RunRow],
    failures: &[String],
) -> anyhow::Result<()> {
    std::fs::write(dir.join("trace-jobs.csv"), jobs_csv(jobs))?;
    std::fs::write(dir.join("trace-runs.csv"), runs_csv(runs))?;
    let mut s = header(&[
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
    ]);
    for (j, t) in solo_jobs.iter().zip(solo) {
        s += &csv_line(&[
            j.row.to_string(),
            j.name.clone(),
            j.maps.to_string(),
            j.reduces.to_string(),
            format!("{:.4}", j.shuffle_ratio),
            format!("{:.4}", j.output_ratio),
            j.capped.to_string(),
            format!("{:.3}", t.0),
            format!("{:.3}", t.1),
            format!("{:.3}", t.2),
        ]);
    }
    std::fs::write(dir.join("solo.csv"), s)?;
    let sidecar = Sidecar {
        meta: meta.clone(),
        failures: failures.to_vec(),
    };
    std::fs::write(
        dir.join("report.json"),
        serde_json::to_vec_pretty(&sidecar)?,
    )?;
    write_summary(dir, meta, jobs, runs, failures)
}

/// What the CSVs do not hold: the header's facts and the failed runs.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Sidecar {
    pub meta: ReportMeta,
    pub failures: Vec<String>,
}

/// `summary.md` and the job-time plots.
pub fn write_summary(
    dir: &Path,
    meta: &ReportMeta,
    jobs: &[JobRow],
    runs: &[RunRow],
    failures: &[String],
) -> anyhow::Result<()> {
    std::fs::write(dir.join("summary.md"), summary(meta, jobs, runs, failures))?;
    let times: Vec<(&str, &str, f64)> = jobs
        .iter()
        .map(|r| (r.load.as_str(), r.policy.as_str(), r.exec_time_s))
        .collect();
    super::trace_plot::job_time_against_load(dir, &meta.policies, &times)
}

fn p99(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    bootstrap::quantile(&v, 0.99)
}

fn by_run(rows: &[&JobRow], f: impl Fn(&JobRow) -> f64) -> Vec<Vec<f64>> {
    let mut m: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for r in rows {
        m.entry(r.rep).or_default().push(f(r));
    }
    m.into_values().collect()
}

fn keyed(rows: &[&JobRow]) -> BTreeMap<(u32, usize), f64> {
    rows.iter()
        .map(|r| ((r.rep, r.row), r.exec_time_s))
        .collect()
}

fn show(i: Option<Interval>) -> String {
    i.map_or("-".into(), |i| i.to_string())
}

/// Each policy against the best of the others at one load (the lowest
/// mean job time): the ratio of the means, the paired difference of the
/// same jobs, and the two p99s. This is the comparison a claim that a
/// policy wins needs: against the strongest rival, not a weak baseline.
fn against_best_other(meta: &ReportMeta, jobs: &[JobRow], load: &str) -> String {
    let of = |p: &str| -> Vec<&JobRow> {
        jobs.iter()
            .filter(|r| r.load == load && r.policy == p)
            .collect()
    };
    let mean =
        |rows: &[&JobRow]| rows.iter().map(|r| r.exec_time_s).sum::<f64>() / rows.len() as f64;
    let means: Vec<(&String, f64)> = meta
        .policies
        .iter()
        .filter_map(|p| {
            let rows = of(p);
            (!rows.is_empty()).then(|| (p, mean(&rows)))
        })
        .collect();
    if means.len() < 2 {
        return String::new();
    }
    let mut s = String::from(
        "\nAgainst the best other policy at this load (the lowest mean job time of the rest): ratio of the means, paired difference of the same jobs, s [95 %], and the p99s\n\n| policy | best other | mean / other's | minus other, s [95 %] | p99 / other's p99 |\n|---|---|---:|---|---:|\n",
    );
    for &(p, m) in &means {
        let Some(&(b, mb)) = means
            .iter()
            .filter(|(q, _)| *q != p)
            .min_by(|x, y| x.1.total_cmp(&y.1))
        else {
            continue;
        };
        let (rows, brows) = (of(p), of(b));
        let d = bootstrap::paired(&keyed(&rows), &keyed(&brows), RESAMPLES, BOOT_SEED)
            .map_or("no pairs".into(), |d| bootstrap::verdict(&d));
        let times = |r: &[&JobRow]| r.iter().map(|r| r.exec_time_s).collect::<Vec<_>>();
        let _ = writeln!(
            s,
            "| {p} | {b} | {:.2}x | {d} | {:.2}x |",
            m / mb,
            p99(&times(&rows)) / p99(&times(&brows))
        );
    }
    s
}

/// The summary's head: what was replayed, on what, and how it is read.
fn write_setup(s: &mut String, meta: &ReportMeta) {
    let (date, time) = utc(meta.date_ms);
    let sc = &meta.scale;
    let _ = writeln!(s, "- command: `{}`", meta.command);
    let _ = writeln!(s, "- date: {date} {time} UTC; commit {}", meta.commit);
    let _ = writeln!(
        s,
        "- cluster and shaping: {}; {} map and {} reduce slots",
        meta.cluster, meta.map_slots, meta.reduce_slots
    );
    let _ = writeln!(
        s,
        "- trace: {} rows {}..{} ({} jobs, arrivals over {:.0} s of the trace), traced cluster {} nodes",
        meta.trace,
        meta.from,
        meta.from + meta.rows,
        meta.rows,
        meta.span_s,
        meta.traced_nodes
    );
    let _ = writeln!(
        s,
        "- scaling: bytes x{:.5} (default: our workers over the traced nodes), blocks of {}, at most {} maps and {} reduces a job, ratios capped at {}; a pool of {} blocks, drawn per row with seed {}",
        sc.bytes,
        common::units::format_size(sc.block),
        sc.max_maps,
        sc.max_reduces,
        super::trace::MAX_RATIO,
        meta.pool_blocks,
        meta.seed
    );
    let _ = writeln!(
        s,
        "- solo pass ({}): {:.2} task-seconds in all, each job alone on the idle cluster",
        meta.solo_policy, meta.task_s
    );
    for (l, c) in &meta.compressions {
        let _ = writeln!(
            s,
            "- {}: compression x{c:.2}, arrivals over {:.1} s",
            l.map_or("fixed compression".to_string(), |l| format!("load {l}")),
            meta.span_s / c
        );
    }
    let _ = writeln!(
        s,
        "- repetitions: {}; baseline of the paired differences: {}; intervals: 95 %, bootstrap over jobs resampled within runs (runs drawn, then jobs within them), {RESAMPLES} resamples, seed {BOOT_SEED}",
        meta.reps, meta.baseline
    );
    *s += "\nOffered load: the jobs' task-seconds alone over the cluster's slot-seconds (map plus reduce slots) in the span of the arrivals. Slot use: busy slot-seconds over available slot-seconds from the first submit to the last commit, per run (mean over runs, and the range). Slowdown: job time under load over the same job's time alone.\n";
}

/// The markdown summary.
pub fn summary(meta: &ReportMeta, jobs: &[JobRow], runs: &[RunRow], failures: &[String]) -> String {
    let mut s = String::from("# Trace replay\n\n");
    write_setup(&mut s, meta);
    let mut loads: Vec<&str> = Vec::new();
    for r in runs {
        if !loads.contains(&r.load.as_str()) {
            loads.push(&r.load);
        }
    }
    for load in loads {
        let lruns: Vec<&RunRow> = runs.iter().filter(|r| r.load == load).collect();
        let offered = lruns.first().map_or(0.0, |r| r.offered);
        let _ = writeln!(s, "\n## Load {load} (offered {offered:.2})\n");
        s += "| policy | runs | jobs | mean job time, s [95 %] | p99, s | mean slowdown [95 %] | map slot use | reduce slot use | makespan, s |\n|---|---:|---:|---|---:|---|---|---|---:|\n";
        for p in &meta.policies {
            write_policy_row(&mut s, jobs, &lruns, load, p);
        }
        write_paired(&mut s, meta, jobs, load);
        s += &against_best_other(meta, jobs, load);
    }
    if !failures.is_empty() {
        s += "\n## Failed runs (not counted)\n\n";
        for f in failures {
            let _ = writeln!(s, "- {f}");
        }
    }
    s
}

/// Policy `p`'s row of a load's table: its job times, slowdowns and slot
/// use over its runs `lruns` of the load.
fn write_policy_row(s: &mut String, jobs: &[JobRow], lruns: &[&RunRow], load: &str, p: &str) {
    let rows: Vec<&JobRow> = jobs
        .iter()
        .filter(|r| r.load == load && r.policy == p)
        .collect();
    let pr: Vec<&&RunRow> = lruns.iter().filter(|r| r.policy == p).collect();
    if rows.is_empty() {
        let _ = writeln!(s, "| {p} | 0 | 0 | no validated run | | | | | |");
        return;
    }
    let t = bootstrap::mean_interval(&by_run(&rows, |r| r.exec_time_s), RESAMPLES, BOOT_SEED);
    let sd = bootstrap::mean_interval(
        &by_run(&rows, |r| r.slowdown())
            .into_iter()
            .map(|v| v.into_iter().filter(|x| x.is_finite()).collect())
            .collect::<Vec<_>>(),
        RESAMPLES,
        BOOT_SEED,
    );
    let range = |f: &dyn Fn(&RunRow) -> f64| {
        let v: Vec<f64> = pr.iter().map(|r| f(r)).collect();
        let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        format!(
            "{:.0} % ({:.0}-{:.0})",
            100.0 * mean,
            100.0 * lo,
            100.0 * hi
        )
    };
    let makespan = pr.iter().map(|r| r.makespan_s).sum::<f64>() / pr.len().max(1) as f64;
    let _ = writeln!(
        s,
        "| {p} | {} | {} | {} | {:.3} | {} | {} | {} | {makespan:.1} |",
        pr.len(),
        rows.len(),
        show(t),
        p99(&rows.iter().map(|r| r.exec_time_s).collect::<Vec<_>>()),
        show(sd),
        range(&|r| r.map_slot_use),
        range(&|r| r.reduce_slot_use),
    );
}

/// Each policy's job times paired with the baseline's, row by row.
fn write_paired(s: &mut String, meta: &ReportMeta, jobs: &[JobRow], load: &str) {
    let base: Vec<&JobRow> = jobs
        .iter()
        .filter(|r| r.load == load && r.policy == meta.baseline)
        .collect();
    if base.is_empty() || meta.policies.len() <= 1 {
        return;
    }
    let _ = writeln!(
        s,
        "\nPaired with {} (the same trace row in the same repetition): mean of the job-time differences, s [95 %]\n",
        meta.baseline
    );
    *s += "| policy | pairs | minus baseline, s [95 %] |\n|---|---:|---|\n";
    let kb = keyed(&base);
    for p in meta.policies.iter().filter(|p| **p != meta.baseline) {
        let rows: Vec<&JobRow> = jobs
            .iter()
            .filter(|r| r.load == load && &r.policy == p)
            .collect();
        match bootstrap::paired(&keyed(&rows), &kb, RESAMPLES, BOOT_SEED) {
            Some(d) => {
                let _ = writeln!(s, "| {p} | {} | {} |", d.n, bootstrap::verdict(&d));
            }
            None => {
                let _ = writeln!(s, "| {p} | 0 | no pairs |");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(policy: &str, rep: u32, row: usize, t: f64) -> JobRow {
        JobRow {
            load: "0.5".into(),
            policy: policy.into(),
            rep,
            row,
            exec_time_s: t,
            alone_s: 1.0,
            ..Default::default()
        }
    }

    #[test]
    fn the_summary_gives_intervals_slot_use_and_paired_verdicts() {
        let mut jobs = vec![];
        let mut runs = vec![];
        for rep in 1..=3 {
            for k in 0..8 {
                jobs.push(row("fifo", rep, k, 2.0 + k as f64));
                jobs.push(row("delay", rep, k, 1.0 + k as f64));
                jobs.push(row(
                    "lsap",
                    rep,
                    k,
                    2.0 + k as f64 + if k % 2 == 0 { 0.5 } else { -0.5 },
                ));
            }
            for p in ["fifo", "delay", "lsap"] {
                runs.push(RunRow {
                    load: "0.5".into(),
                    compression: 10.0,
                    offered: 0.5,
                    policy: p.into(),
                    rep,
                    jobs: 8,
                    makespan_s: 20.0,
                    map_slot_use: 0.4,
                    reduce_slot_use: 0.1,
                });
            }
        }
        let meta = ReportMeta {
            command: "mr bench trace".into(),
            date_ms: 0,
            commit: "abc (clean tree)".into(),
            cluster: "workers=6".into(),
            map_slots: 12,
            reduce_slots: 6,
            trace: "t.tsv".into(),
            from: 0,
            rows: 8,
            traced_nodes: 600,
            scale: Scale::new(6, 600, 1 << 20, 8, 4),
            pool_blocks: 32,
            compressions: vec![(Some(0.5), 10.0)],
            task_s: 100.0,
            span_s: 400.0,
            reps: 3,
            baseline: "fifo".into(),
            policies: vec!["fifo".into(), "delay".into(), "lsap".into()],
            solo_policy: "fifo".into(),
            seed: 1,
        };
        let s = summary(&meta, &jobs, &runs, &[]);
        assert!(s.contains("commit abc (clean tree)"), "{s}");
        assert!(s.contains("## Load 0.5 (offered 0.50)"), "{s}");
        assert!(s.contains("| 40 % (40-40) | 10 % (10-10) |"), "{s}");
        // delay is 1 s faster on every job: an interval of exactly -1.
        assert!(
            s.contains("| delay | 24 | -1.000 [-1.000, -1.000]: lower |"),
            "{s}"
        );
        // lsap's differences are +0.5 and -0.5 in equal numbers.
        assert!(
            s.contains("| lsap | 24 |") && s.contains("not distinguishable"),
            "{s}"
        );
    }
}
