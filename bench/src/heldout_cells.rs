//! What a held-out cell of `mr sim heldout` is worth, judged by what the
//! lab itself can tell apart (issue 41). A Spearman of 0.3 means little
//! alone: the lab may not repeat its own ranking better than that (the
//! `ceiling`, split-half over its runs), and most pairs of policies may be
//! noise. So each cell also counts the pairs whose run-level paired
//! difference excludes 0 (`pairs_decided`) and, of those, the pairs the
//! simulator orders the same way (`pairs_right`): the only orderings a
//! simulator can be blamed for getting wrong. The control scaled by one
//! constant says how much of the control's error is a mere unit.

use super::csv_table::read_table;
use super::heldout::TraceDir;
use super::over_runs::{self, ByRunRow};
use super::repeatability::{self, spearman};
use super::trace_figures::{self, SEED};
use super::trace_report::{ReportMeta, RunRow, Sidecar, SoloRow};
use super::trace_reread;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One cell's means, per policy the lab measured there, in the same
/// order: the lab's, the fitted model's and the control's.
#[derive(Debug, Clone, Default)]
pub struct Sims {
    /// The index of the cell's directory among those given.
    pub dir: usize,
    pub load: String,
    /// Empty for the fitted run's own cell.
    pub held_out_on: Vec<&'static str>,
    pub policies: Vec<String>,
    pub lab: Vec<f64>,
    pub fitted: Vec<f64>,
    pub control: Vec<f64>,
}

/// A cell's figures, as `--json` prints them (`docs/bench/comparing-policies.md`
/// defines each).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Cell {
    pub dir: String,
    pub trace: String,
    /// `map-bound` or `reduce-bound`; `None` when the directory lacks
    /// `report.json` or `solo.csv`.
    pub shape: Option<String>,
    pub load: String,
    pub held_out_on: Vec<String>,
    pub policies: usize,
    /// The runs every policy has (those the split halves divide).
    pub runs: usize,
    pub spearman: Option<f64>,
    pub ceiling: Option<f64>,
    pub control_spearman: Option<f64>,
    /// Always `control_spearman`: a positive constant keeps the ranks.
    /// Reported so that nobody reads the scaled control's lower error as
    /// a better ranking.
    pub scaled_control_spearman: Option<f64>,
    /// Mean absolute error over the policies' mean job times, seconds.
    pub mae: f64,
    pub control_mae: f64,
    pub scaled_control_mae: Option<f64>,
    pub pairs_right: usize,
    pub pairs_decided: usize,
    /// Every pair of policies, decided or not.
    pub pairs: usize,
}

/// The run the model was fitted on.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FittedRun {
    pub dir: String,
    pub load: String,
    pub policy: String,
    pub rep: u32,
}

/// What `mr sim heldout --json` prints.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Json {
    /// The commit that computed the figures (`report::git_state`).
    pub report_commit: String,
    pub fitted: FittedRun,
    /// The control's constant (see [`control_scale`]).
    pub control_scale: Option<f64>,
    pub cells: Vec<Cell>,
}

/// The constant that brings the control's means nearest the lab's on the
/// fitted cell: least squares through the origin, Σ lab·control /
/// Σ control². The control's rates are the config's, not the cluster's,
/// so a single factor is the cheapest fit it could be given; its error
/// after that factor is the part a unit cannot explain.
pub fn control_scale(lab: &[f64], control: &[f64]) -> Option<f64> {
    let cc: f64 = control.iter().map(|c| c * c).sum();
    let lc: f64 = lab.iter().zip(control).map(|(l, c)| l * c).sum();
    (cc > 0.0 && lab.len() == control.len()).then(|| lc / cc)
}

/// Mean absolute error, seconds: a ranking can be right while every time
/// is off by a factor, and the percentage errors hide which policies'
/// seconds dominate.
pub fn mae(sim: &[f64], lab: &[f64]) -> f64 {
    let n = sim.len().min(lab.len()).max(1) as f64;
    sim.iter().zip(lab).map(|(s, l)| (s - l).abs()).sum::<f64>() / n
}

/// Pairs of policies: (decided, right, all). A pair is decided when the
/// 95 % t interval over runs of its paired difference (per run, the mean
/// over the same trace rows of A − B) excludes 0; right when the
/// simulator's means order it the same way (a tie in the simulator is
/// not right).
pub fn pairs(times: &[ByRunRow], sim: &[f64]) -> (usize, usize, usize) {
    let (mut decided, mut right, mut all) = (0, 0, 0);
    for i in 0..times.len() {
        for j in i + 1..times.len() {
            all += 1;
            let d: Vec<f64> = over_runs::paired_run_means(&times[i], &times[j])
                .into_iter()
                .map(|x| x.1)
                .collect();
            let Some(t) = over_runs::t_interval(&d) else {
                continue;
            };
            if t.contains_zero() {
                continue;
            }
            decided += 1;
            let sim_says = if t.mean < 0.0 {
                sim[i] < sim[j]
            } else {
                sim[i] > sim[j]
            };
            right += usize::from(sim_says);
        }
    }
    (decided, right, all)
}

/// The lab's split-half Spearman over every policy (the trace report's
/// figure, with its seed) and the runs it split.
pub fn ceiling(policies: &[String], times: &[ByRunRow]) -> (Option<f64>, usize) {
    let means: Vec<_> = policies
        .iter()
        .zip(times)
        .map(|(p, t)| (p.clone(), over_runs::run_means(t).into_iter().collect()))
        .collect();
    let s = repeatability::split_half(&means, SEED);
    (s.all, s.runs)
}

/// A directory's measured job times, keyed by (load, policy), and what
/// its offered loads need when it has them.
struct Lab {
    jobs: BTreeMap<(String, String), ByRunRow>,
    offered: Option<(ReportMeta, Vec<SoloRow>, Vec<RunRow>)>,
}

fn read_lab(d: &TraceDir) -> anyhow::Result<Lab> {
    let read = |f: &str| std::fs::read_to_string(d.path.join(f));
    // By the header's names, as `TraceDir` reads it: older directories too.
    let mut jobs: BTreeMap<(String, String), ByRunRow> = BTreeMap::new();
    for r in read_table(&d.path.join("trace-jobs.csv"))? {
        let f = |k: &str| r.get(k).cloned().unwrap_or_default();
        let n = |k: &str| f(k).parse::<f64>().ok().filter(|x| x.is_finite());
        let (Some(rep), Some(row), Some(t)) = (n("rep"), n("row"), n("exec_time_s")) else {
            continue;
        };
        let key = (f("load"), f("policy"));
        jobs.entry(key)
            .or_default()
            .insert((rep as u32, row as usize), t);
    }
    let offered = (|| {
        let meta = serde_json::from_str::<Sidecar>(&read("report.json").ok()?)
            .ok()?
            .meta;
        let solo = trace_reread::read_solo(&read("solo.csv").ok()?).ok()?;
        let runs = trace_reread::read_runs(&read("trace-runs.csv").ok()?).ok()?;
        Some((meta, solo, runs))
    })();
    Ok(Lab { jobs, offered })
}

fn shape(lab: &Lab, load: &str) -> Option<String> {
    let (meta, solo, runs) = lab.offered.as_ref()?;
    let (_, _, o) = trace_figures::offered_at(meta, solo, runs, load);
    Some(format!("{}-bound", o.bottleneck_name()))
}

/// Every cell's figures; the control's constant is fitted on the cell of
/// the fitted run (the one held out on nothing).
pub fn cells(dirs: &[TraceDir], sims: &[Sims]) -> anyhow::Result<(Option<f64>, Vec<Cell>)> {
    let scale = sims
        .iter()
        .find(|c| c.dir == 0 && c.held_out_on.is_empty())
        .and_then(|c| control_scale(&c.lab, &c.control));
    let labs: Vec<Lab> = dirs.iter().map(read_lab).collect::<anyhow::Result<_>>()?;
    let out = sims
        .iter()
        .map(|c| {
            let (d, lab) = (&dirs[c.dir], &labs[c.dir]);
            let times: Vec<ByRunRow> = c
                .policies
                .iter()
                .map(|p| {
                    let key = (c.load.clone(), p.clone());
                    lab.jobs.get(&key).cloned().unwrap_or_default()
                })
                .collect();
            let (ceiling, runs) = ceiling(&c.policies, &times);
            let (pairs_decided, pairs_right, pairs) = pairs(&times, &c.fitted);
            let scaled: Option<Vec<f64>> = scale.map(|k| c.control.iter().map(|x| k * x).collect());
            Cell {
                dir: d.path.display().to_string(),
                trace: d.meta.trace.clone(),
                shape: shape(lab, &c.load),
                load: c.load.clone(),
                held_out_on: c.held_out_on.iter().map(|a| a.to_string()).collect(),
                policies: c.policies.len(),
                runs,
                spearman: spearman(&c.lab, &c.fitted),
                ceiling,
                control_spearman: spearman(&c.lab, &c.control),
                scaled_control_spearman: scaled.as_ref().and_then(|v| spearman(&c.lab, v)),
                mae: mae(&c.fitted, &c.lab),
                control_mae: mae(&c.control, &c.lab),
                scaled_control_mae: scaled.as_ref().map(|v| mae(v, &c.lab)),
                pairs_right,
                pairs_decided,
                pairs,
            }
        })
        .collect();
    Ok((scale, out))
}

/// The report's table of the cells beside what the lab can tell apart.
pub fn write_table(s: &mut String, scale: Option<f64>, cells: &[Cell]) {
    let opt = |v: Option<f64>, p: usize| v.map_or("-".into(), |x| format!("{x:.p$}"));
    *s += "\n## Every cell beside what the lab can tell apart\n\n";
    let _ = writeln!(
        s,
        "Ceiling: the lab's split-half Spearman (the mean over splits of its runs, seed {SEED}): no model can be asked to rank better than the lab repeats itself. Pairs decided: policy pairs whose paired difference over runs (95 % t) excludes 0; right: of those, the ones the fitted model orders the same way. MAE: mean absolute error of the policies' mean job times, seconds. Scaled control: the control times {}, the least-squares constant (through 0) of the fitted cell's cluster means over the control's; its Spearman is the control's (a positive constant keeps ranks), its MAE is not. Shape: the bottleneck by offered load.\n",
        opt(scale, 3)
    );
    *s += "| dir | load | held out on | shape | runs | Spearman | ceiling | control | MAE s | control MAE s | scaled control MAE s | pairs right / decided / all |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for c in cells {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.3} | {:.3} | {} | {} / {} / {} |",
            c.dir,
            c.load,
            if c.held_out_on.is_empty() {
                "(fitted)".to_string()
            } else {
                c.held_out_on.join(", ")
            },
            c.shape.as_deref().unwrap_or("-"),
            c.runs,
            opt(c.spearman, 2),
            opt(c.ceiling, 2),
            opt(c.control_spearman, 2),
            c.mae,
            c.control_mae,
            opt(c.scaled_control_mae, 3),
            c.pairs_right,
            c.pairs_decided,
            c.pairs
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary's scaling line ends with the shuffle factor since
    /// `--shuffle-scale`: the seed before it still reads back.
    #[test]
    fn a_scaling_line_with_a_shuffle_factor_still_parses() {
        let text = "# Trace replay\n\n\
            - cluster and shaping: workers=6; racks=2; map_slots=2; reduce_slots=1; cache=256.0 MiB; replication=2; dfs_block_size=1.0 MiB; heartbeat=1000ms; network=lan; 12 map and 6 reduce slots\n\
            - trace: t.tsv rows 0..40 (40 jobs, arrivals over 900 s of the trace), traced cluster 600 nodes\n\
            - scaling: bytes x0.01000 (default: our workers over the traced nodes), blocks of 1.0 MiB, at most 24 maps and 4 reduces a job, ratios capped at 8; a pool of 48 blocks, drawn per row with seed 7; shuffles x0.05 (--shuffle-scale)\n";
        let m = super::super::heldout::parse_summary(text).unwrap();
        assert_eq!((m.block_size, m.pool_blocks, m.seed), (1 << 20, 48, 7));
    }

    /// Policy `k`'s job times over `runs` runs of 4 rows: `base` plus a
    /// seeded noise of ±`noise` per job.
    fn times(base: f64, noise: f64, runs: u32, rng: &mut fastrand::Rng) -> ByRunRow {
        let mut t = ByRunRow::new();
        for run in 1..=runs {
            for row in 0..4 {
                t.insert((run, row), base + noise * (2.0 * rng.f64() - 1.0));
            }
        }
        t
    }

    /// a < b < c by a second each with noise of ±0.1: every pair is
    /// decided; d is c again, so (c, d) is not. The simulator orders a, b
    /// right and swaps b and c: of 5 decided pairs, (a,b), (a,c), (a,d)
    /// are right, (b,c), (b,d) wrong.
    #[test]
    fn pairs_count_what_the_lab_decides_and_the_simulator_orders_alike() {
        let mut rng = fastrand::Rng::with_seed(41);
        let t = vec![
            times(1.0, 0.1, 6, &mut rng),
            times(2.0, 0.1, 6, &mut rng),
            times(3.0, 0.1, 6, &mut rng),
            times(3.0, 0.1, 6, &mut rng),
        ];
        let sim = [1.0, 5.0, 4.0, 4.5];
        assert_eq!(pairs(&t, &sim), (5, 3, 6));
        // The right order throughout: every decided pair right.
        assert_eq!(pairs(&t, &[1.0, 2.0, 3.0, 3.0]), (5, 5, 6));
        // One run: no interval, nothing decided.
        let one: Vec<ByRunRow> = t
            .iter()
            .map(|x| {
                x.iter()
                    .filter(|k| k.0 .0 == 1)
                    .map(|(k, v)| (*k, *v))
                    .collect()
            })
            .collect();
        assert_eq!(pairs(&one, &sim), (0, 0, 6));
        let names: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let (c, runs) = ceiling(&names, &t);
        assert_eq!(runs, 6);
        // a < b < {c, d}: the halves agree on a and b, c and d are a coin.
        assert!((0.8..=1.0).contains(&c.unwrap()), "{c:?}");
    }

    /// Control 1, 2, 3 against the lab's 2, 4, 6.5: Σlc = 2+8+19.5 =
    /// 29.5, Σc² = 14, k = 2.107; its MAE beats the unscaled control's.
    #[test]
    fn the_control_constant_is_least_squares_through_zero() {
        let (lab, ctl) = ([2.0, 4.0, 6.5], [1.0, 2.0, 3.0]);
        let k = control_scale(&lab, &ctl).unwrap();
        assert!((k - 29.5 / 14.0).abs() < 1e-12);
        let scaled: Vec<f64> = ctl.iter().map(|c| k * c).collect();
        assert!(mae(&scaled, &lab) < mae(&ctl, &lab));
        assert_eq!(mae(&ctl, &lab), (1.0 + 2.0 + 3.5) / 3.0);
        assert_eq!(spearman(&lab, &scaled), spearman(&lab, &ctl));
        assert_eq!(control_scale(&lab, &[0.0; 3]), None);
    }
}
