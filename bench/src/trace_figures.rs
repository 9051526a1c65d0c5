//! Every figure a trace report prints, computed once from the CSVs and
//! the report's facts (`report.json`'s `figures`; the summary renders
//! them and computes none of its own). Definitions:
//! `docs/bench/comparing-policies.md`. The unit of inference is the run:
//! each run gives one value (its mean job time, its mean paired
//! difference), and intervals are Student t over those values; the
//! row-cluster bootstrap beside them says whether the figure would hold
//! on other rows of the trace.

use super::bootstrap::{self, Interval, RESAMPLES};
use super::compare::{self, Comparison};
use super::holm;
use super::load::{self, Offered};
use super::over_runs::{self, ByRunRow, TInterval};
use super::repeatability::{self, SplitHalf};
use super::rowboot;
use super::sizeclass::{Classes, SizeClass};
use super::trace_report::{JobRow, ReportMeta, RunRow, SoloRow};
use std::collections::BTreeMap;

/// Seeds every resampled interval and sampled split of a report, so the
/// same CSVs give the same report.
pub const SEED: u64 = 26;

/// The level of every interval and of Holm's family of comparisons.
pub const ALPHA: f64 = 0.05;

#[derive(Debug, Clone, serde::Serialize)]
pub struct Figures {
    /// The commit the runs were made by, and the one this report was
    /// computed by (they differ when `mr bench trace-report` rereads old
    /// runs with a newer binary).
    pub runs_commit: String,
    pub report_commit: String,
    /// How the figures were computed: the level, the runs a claim needs,
    /// the row bootstrap's resamples and the seed of every draw.
    pub alpha: f64,
    pub min_runs_for_claim: usize,
    pub resamples: usize,
    pub seed: u64,
    /// Size-class boundaries (terciles of the slice's times alone), and
    /// the slice's jobs in each class.
    pub size_classes: Option<Classes>,
    pub class_jobs: BTreeMap<SizeClass, usize>,
    pub comparisons: Vec<String>,
    pub loads: Vec<LoadFigures>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LoadFigures {
    pub load: String,
    pub compression: f64,
    /// The replayed arrivals' span, seconds.
    pub arrivals_span_s: f64,
    /// Offered load per resource, and the bottleneck's.
    pub offered: Offered,
    pub offered_bottleneck: f64,
    pub bottleneck: String,
    pub longest_alone_s: f64,
    /// Arrivals over at least three times the longest job alone (every run
    /// of a load replays the same slice at the same compression).
    pub sustained: bool,
    pub policies: Vec<PolicyFigures>,
    pub comparisons: Vec<ComparisonFigures>,
    pub repeatability: SplitHalf,
}

/// A mean over runs and its range.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Range {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

impl Range {
    fn of(v: &[f64]) -> Range {
        Range {
            mean: v.iter().sum::<f64>() / v.len().max(1) as f64,
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct PolicyFigures {
    pub policy: String,
    pub runs: usize,
    pub jobs: usize,
    /// The mean over runs of each run's mean job time, with its t interval
    /// (`None` below two runs) and the row-cluster bootstrap's.
    pub mean_job_s: f64,
    pub mean_job_s_t: Option<TInterval>,
    pub mean_job_s_rows: Option<Interval>,
    /// The mean over runs of each run's 99th-percentile job time.
    pub p99_job_s: f64,
    pub slowdown: f64,
    pub slowdown_t: Option<TInterval>,
    /// Mean slowdown per size class, over runs.
    pub slowdown_by_class: BTreeMap<SizeClass, ClassSlowdown>,
    pub map_slot_use: Range,
    pub reduce_slot_use: Range,
    pub makespan_s: Range,
}

#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct ClassSlowdown {
    pub mean: f64,
    pub t: Option<TInterval>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ComparisonFigures {
    pub policy: String,
    pub comparator: String,
    /// Runs both policies have, and jobs paired in them.
    pub runs: usize,
    pub pairs: usize,
    /// Per run, the mean over the same rows of policy − comparator job
    /// time: the t interval over runs, and the row-cluster bootstrap's.
    pub diff_s_t: Option<TInterval>,
    pub diff_s_rows: Option<Interval>,
    /// The raw two-sided p-value of the t statistic, Holm's adjusted one
    /// over this load's comparisons, and whether it is a claim at 5 %.
    pub p: f64,
    pub p_holm: f64,
    pub holm_claim: bool,
    pub verdict: String,
    /// The same pairing of each run's p99 job time.
    pub p99_diff_s_t: Option<TInterval>,
}

/// Job times (or any per-job value) of one policy at one load.
fn by_run_row(jobs: &[&JobRow], f: impl Fn(&JobRow) -> f64) -> ByRunRow {
    jobs.iter()
        .map(|r| ((r.rep, r.row), f(r)))
        .filter(|(_, x)| x.is_finite())
        .collect()
}

fn p99_by_run(v: &ByRunRow) -> BTreeMap<u32, f64> {
    let mut m: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (&(run, _), &x) in v {
        m.entry(run).or_default().push(x);
    }
    m.into_iter()
        .map(|(r, mut t)| {
            t.sort_by(f64::total_cmp);
            (r, bootstrap::quantile(&t, 0.99))
        })
        .collect()
}

fn values(v: &[(u32, f64)]) -> Vec<f64> {
    v.iter().map(|x| x.1).collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The comparisons of the report: `--compare` as given, or each policy
/// against the baseline.
pub fn comparisons(meta: &ReportMeta) -> Vec<Comparison> {
    compare::expand(&meta.compare, &meta.policies, &meta.baseline).unwrap_or_default()
}

/// Every figure of the report.
pub fn compute(
    meta: &ReportMeta,
    solo: &[SoloRow],
    jobs: &[JobRow],
    runs: &[RunRow],
    report_commit: String,
) -> Figures {
    let alone: Vec<f64> = solo.iter().map(|s| s.alone_s).collect();
    let classes = Classes::terciles(&alone);
    let mut class_jobs = BTreeMap::new();
    if let Some(c) = &classes {
        for a in &alone {
            *class_jobs.entry(c.of(*a)).or_insert(0) += 1;
        }
    }
    let mut labels: Vec<&str> = Vec::new();
    for r in runs {
        if !labels.contains(&r.load.as_str()) {
            labels.push(&r.load);
        }
    }
    let cmp = comparisons(meta);
    let loads = labels
        .into_iter()
        .map(|l| load_figures(meta, solo, classes.as_ref(), jobs, runs, l, &cmp))
        .collect();
    Figures {
        runs_commit: meta.commit.clone(),
        report_commit,
        alpha: ALPHA,
        min_runs_for_claim: over_runs::MIN_RUNS_FOR_CLAIM,
        resamples: RESAMPLES,
        seed: SEED,
        size_classes: classes,
        class_jobs,
        comparisons: cmp.iter().map(|c| c.to_string()).collect(),
        loads,
    }
}

/// A load's compression, replayed span and offered load per resource:
/// the solo pass's task-seconds over the slots in the compressed span.
/// Public so that `mr sim heldout` names a cell's bottleneck as the
/// report does.
pub fn offered_at(
    meta: &ReportMeta,
    solo: &[SoloRow],
    runs: &[RunRow],
    label: &str,
) -> (f64, f64, Offered) {
    let compression = runs
        .iter()
        .find(|r| r.load == label)
        .map_or(1.0, |r| r.compression);
    let span = meta.span_s / compression;
    let task_s = (
        solo.iter().map(|s| s.map_task_s).sum(),
        solo.iter().map(|s| s.reduce_task_s).sum(),
    );
    let offered = Offered::of(task_s, (meta.map_slots, meta.reduce_slots), span);
    (compression, span, offered)
}

fn load_figures(
    meta: &ReportMeta,
    solo: &[SoloRow],
    classes: Option<&Classes>,
    jobs: &[JobRow],
    runs: &[RunRow],
    label: &str,
    cmp: &[Comparison],
) -> LoadFigures {
    let lruns: Vec<&RunRow> = runs.iter().filter(|r| r.load == label).collect();
    let (compression, span, offered) = offered_at(meta, solo, runs, label);
    let longest = solo.iter().map(|s| s.alone_s).fold(0.0, f64::max);
    let of = |p: &str| -> Vec<&JobRow> {
        jobs.iter()
            .filter(|r| r.load == label && r.policy == p)
            .collect()
    };
    let times: Vec<(String, ByRunRow)> = meta
        .policies
        .iter()
        .map(|p| (p.clone(), by_run_row(&of(p), |r| r.exec_time_s)))
        .filter(|(_, t)| !t.is_empty())
        .collect();
    let policies = times
        .iter()
        .map(|(p, t)| {
            let pruns: Vec<&RunRow> = lruns.iter().copied().filter(|r| &r.policy == p).collect();
            policy_figures(p, t, &of(p), &pruns, classes)
        })
        .collect();
    let means: Vec<(String, BTreeMap<u32, f64>)> = times
        .iter()
        .map(|(p, t)| (p.clone(), over_runs::run_means(t).into_iter().collect()))
        .collect();
    LoadFigures {
        load: label.to_string(),
        compression,
        arrivals_span_s: span,
        offered,
        offered_bottleneck: offered.bottleneck(),
        bottleneck: offered.bottleneck_name().into(),
        longest_alone_s: longest,
        sustained: load::sustained(span, longest),
        policies,
        comparisons: comparison_figures(cmp, &times),
        repeatability: repeatability::split_half(&means, SEED),
    }
}

fn policy_figures(
    policy: &str,
    times: &ByRunRow,
    jobs: &[&JobRow],
    runs: &[&RunRow],
    classes: Option<&Classes>,
) -> PolicyFigures {
    let run_means = values(&over_runs::run_means(times));
    let p99: Vec<f64> = p99_by_run(times).into_values().collect();
    let slow = by_run_row(jobs, |r| r.slowdown());
    let slow_means = values(&over_runs::run_means(&slow));
    let mut slowdown_by_class = BTreeMap::new();
    for (k, c) in classes.iter().flat_map(|c| SizeClass::ALL.map(|k| (k, c))) {
        let v = by_run_row(jobs, |r| {
            if c.of(r.alone_s) == k {
                r.slowdown()
            } else {
                f64::NAN
            }
        });
        let m = values(&over_runs::run_means(&v));
        if !m.is_empty() {
            slowdown_by_class.insert(
                k,
                ClassSlowdown {
                    mean: mean(&m),
                    t: over_runs::t_interval(&m),
                },
            );
        }
    }
    let field =
        |f: &dyn Fn(&RunRow) -> f64| Range::of(&runs.iter().map(|r| f(r)).collect::<Vec<_>>());
    PolicyFigures {
        policy: policy.into(),
        runs: run_means.len(),
        jobs: times.len(),
        mean_job_s: mean(&run_means),
        mean_job_s_t: over_runs::t_interval(&run_means),
        mean_job_s_rows: rowboot::interval(times, RESAMPLES, SEED),
        p99_job_s: mean(&p99),
        slowdown: mean(&slow_means),
        slowdown_t: over_runs::t_interval(&slow_means),
        slowdown_by_class,
        map_slot_use: field(&|r| r.map_slot_use),
        reduce_slot_use: field(&|r| r.reduce_slot_use),
        makespan_s: field(&|r| r.makespan_s),
    }
}

/// The named comparisons of one load, Holm-corrected together.
fn comparison_figures(cmp: &[Comparison], times: &[(String, ByRunRow)]) -> Vec<ComparisonFigures> {
    let get = |p: &str| times.iter().find(|t| t.0 == p).map(|t| &t.1);
    let mut out: Vec<ComparisonFigures> = cmp
        .iter()
        .filter_map(|c| {
            let (a, b) = (get(&c.policy)?, get(&c.comparator)?);
            let d = over_runs::differences(a, b);
            let per_run = values(&over_runs::run_means(&d));
            let (pa, pb) = (p99_by_run(a), p99_by_run(b));
            let p99: Vec<f64> = pa
                .iter()
                .filter_map(|(r, x)| pb.get(r).map(|y| x - y))
                .collect();
            let t = over_runs::t_interval(&per_run);
            Some(ComparisonFigures {
                policy: c.policy.clone(),
                comparator: c.comparator.clone(),
                runs: per_run.len(),
                pairs: d.len(),
                diff_s_t: t,
                diff_s_rows: rowboot::interval(&d, RESAMPLES, SEED),
                p: t.map_or(f64::NAN, |t| t.p),
                p_holm: f64::NAN,
                holm_claim: false,
                verdict: String::new(),
                p99_diff_s_t: over_runs::t_interval(&p99),
            })
        })
        .collect();
    let p: Vec<f64> = out.iter().map(|c| c.p).collect();
    for (c, adj) in out.iter_mut().zip(holm::adjusted(&p)) {
        c.p_holm = adj;
        c.holm_claim = adj <= ALPHA && c.runs >= over_runs::MIN_RUNS_FOR_CLAIM;
        c.verdict = verdict(c);
    }
    out
}

/// What the report may say of one comparison.
fn verdict(c: &ComparisonFigures) -> String {
    let Some(t) = c.diff_s_t else {
        return "too few runs for a claim".into();
    };
    match t.verdict() {
        "lower" | "higher" if !c.holm_claim => "not a claim after Holm's correction".into(),
        v => v.into(),
    }
}
