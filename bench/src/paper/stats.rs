//! The figures the papers report, computed from validated rows: job time,
//! makespan per run, locality rates, map response time; and the markdown
//! tables and plots the reports share.

use super::super::plot::{self, Bar, BarSeries, Series};
use super::super::results::{median, Row};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// One policy's figures over a set of rows (all its runs at one point).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    pub jobs: usize,
    pub runs: usize,
    pub mean_s: f64,
    pub median_s: f64,
    /// Mean over runs of first submission to last end.
    pub makespan_s: f64,
    /// Smallest and largest run's mean job time.
    pub run_min_s: f64,
    pub run_max_s: f64,
    /// Node- plus cache-local maps over all maps, percent.
    pub local_pct: f64,
    pub cache_pct: f64,
    pub map_response_s: f64,
}

pub fn stats(rows: &[&Row]) -> Stats {
    if rows.is_empty() {
        return Stats::default();
    }
    let t: Vec<f64> = rows.iter().map(|r| r.exec_time_s).collect();
    let maps: u64 = rows.iter().map(|r| r.locality.iter().sum::<u64>()).sum();
    let pct = |n: u64| 100.0 * n as f64 / maps.max(1) as f64;
    let mut by_run: BTreeMap<u32, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        by_run.entry(r.rep).or_default().push(r);
    }
    let run_means: Vec<f64> = by_run
        .values()
        .map(|v| v.iter().map(|r| r.exec_time_s).sum::<f64>() / v.len() as f64)
        .collect();
    let makespans: Vec<f64> = by_run.values().map(|v| makespan(v)).collect();
    Stats {
        jobs: rows.len(),
        runs: by_run.len(),
        mean_s: t.iter().sum::<f64>() / t.len() as f64,
        median_s: median(&t),
        makespan_s: makespans.iter().sum::<f64>() / makespans.len() as f64,
        run_min_s: run_means.iter().copied().fold(f64::INFINITY, f64::min),
        run_max_s: run_means.iter().copied().fold(0.0, f64::max),
        local_pct: pct(rows.iter().map(|r| r.locality[0] + r.locality[1]).sum()),
        cache_pct: pct(rows.iter().map(|r| r.locality[0]).sum()),
        map_response_s: rows.iter().map(|r| r.map_response_mean_s).sum::<f64>() / rows.len() as f64,
    }
}

/// First submission to last end of one run's jobs, from the master's end
/// times and each job's own execution time.
pub fn makespan(run: &[&Row]) -> f64 {
    let end = run
        .iter()
        .map(|r| r.end_ms as f64 / 1e3)
        .fold(0.0, f64::max);
    let start = run
        .iter()
        .map(|r| r.end_ms as f64 / 1e3 - r.exec_time_s)
        .fold(f64::INFINITY, f64::min);
    (end - start).max(0.0)
}

/// The rows of `label` at point `x`.
pub fn select<'a>(rows: &'a [Row], label: &str, x: &str) -> Vec<&'a Row> {
    rows.iter()
        .filter(|r| r.scheduler == label && r.sweep_value == x)
        .collect()
}

/// Signed percent change of `a` against `base` (negative: `a` is lower).
pub fn change_pct(a: f64, base: f64) -> f64 {
    if base > 0.0 {
        100.0 * (a / base - 1.0)
    } else {
        0.0
    }
}

/// The common per-policy table of one point: job time (mean, median,
/// change against the first policy), makespan, locality, map response.
pub fn policy_table(rows: &[Row], labels: &[&str], x: &str) -> String {
    let mut s = String::from(
        "| policy | runs | jobs | mean job s | median job s | vs first | makespan s | local % | cache-local % | map response s |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let base = stats(&select(rows, labels[0], x)).mean_s;
    for l in labels {
        let st = stats(&select(rows, l, x));
        if st.jobs == 0 {
            let _ = writeln!(s, "| {l} | 0 | 0 | — | — | — | — | — | — | — |");
            continue;
        }
        let _ = writeln!(
            s,
            "| {l} | {} | {} | {:.3} | {:.3} | {:+.1} % | {:.1} | {:.0} | {:.0} | {:.3} |",
            st.runs,
            st.jobs,
            st.mean_s,
            st.median_s,
            change_pct(st.mean_s, base),
            st.makespan_s,
            st.local_pct,
            st.cache_pct,
            st.map_response_s
        );
    }
    let groups: Vec<(String, Vec<&Row>)> = labels
        .iter()
        .map(|l| (l.to_string(), select(rows, l, x)))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    s.push('\n');
    s += &super::super::intervals::block(&groups, labels[0]);
    s
}

/// Bars of each policy's mean job time at one point, whiskers from its
/// fastest to its slowest run; returns the markdown image line, or why
/// there is no plot.
pub fn job_time_bars(path: &Path, title: &str, rows: &[Row], labels: &[&str], x: &str) -> String {
    let series: Vec<BarSeries> = labels
        .iter()
        .map(|l| {
            let st = stats(&select(rows, l, x));
            BarSeries {
                label: l.to_string(),
                values: vec![(st.jobs > 0).then_some(Bar {
                    median: st.mean_s,
                    min: st.run_min_s,
                    max: st.run_max_s,
                })],
            }
        })
        .collect();
    image(
        path,
        plot::grouped_bars(
            path,
            title,
            "mean job execution time, s",
            &[x.to_string()],
            &series,
        ),
    )
}

/// One line per policy of `metric` over the points `xs` (numeric);
/// `axes` is the title, the x label and the y label.
pub fn metric_lines(
    path: &Path,
    axes: [&str; 3],
    rows: &[Row],
    labels: &[&str],
    xs: &[u64],
    metric: &dyn Fn(&Stats) -> f64,
) -> String {
    let series: Vec<Series> = labels
        .iter()
        .map(|l| Series {
            label: l.to_string(),
            points: xs
                .iter()
                .filter_map(|x| {
                    let st = stats(&select(rows, l, &x.to_string()));
                    (st.jobs > 0).then(|| (*x as f64, metric(&st)))
                })
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if series.is_empty() {
        return "(no plot: no validated run)\n".into();
    }
    let [title, x_label, y_label] = axes;
    image(
        path,
        plot::lines(path, title, x_label, y_label, &series, false, &|x| {
            format!("{x:.0}")
        }),
    )
}

fn image(path: &Path, r: anyhow::Result<()>) -> String {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    match r {
        Ok(()) => format!("![{name}]({name})\n"),
        Err(e) => format!("(no plot: {e:#})\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, rep: u32, t: f64, end_ms: u64, loc: [u64; 5]) -> Row {
        Row {
            scheduler: label.into(),
            rep,
            exec_time_s: t,
            end_ms,
            locality: loc,
            sweep_value: "x".into(),
            ..Row::default()
        }
    }

    #[test]
    fn stats_per_run_and_table() {
        let rows = vec![
            row("fifo", 1, 1.0, 10_000, [0, 1, 0, 1, 0]),
            row("fifo", 1, 2.0, 12_000, [1, 1, 0, 0, 0]),
            row("fifo", 2, 3.0, 20_000, [0, 0, 0, 2, 0]),
            row("lsap", 1, 0.5, 9_000, [0, 2, 0, 0, 0]),
        ];
        let st = stats(&select(&rows, "fifo", "x"));
        assert_eq!((st.jobs, st.runs), (3, 2));
        assert!((st.mean_s - 2.0).abs() < 1e-9);
        // Run 1: from 9.0 s (10 - 1) to 12 s; run 2: 3 s.
        assert!((st.makespan_s - 3.0).abs() < 1e-9);
        assert!((st.run_min_s - 1.5).abs() < 1e-9 && (st.run_max_s - 3.0).abs() < 1e-9);
        assert!((st.local_pct - 50.0).abs() < 1e-9);
        assert!((st.cache_pct - 100.0 / 6.0).abs() < 1e-9);
        let t = policy_table(&rows, &["fifo", "lsap", "delay"], "x");
        assert!(
            t.contains("| lsap | 1 | 1 | 0.500 | 0.500 | -75.0 % |"),
            "{t}"
        );
        assert!(t.contains("| delay | 0 | 0 |"), "{t}");
        assert_eq!(change_pct(1.0, 0.0), 0.0);
    }
}
