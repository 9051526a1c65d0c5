//! What a matrix run leaves beside `results.csv`: `hibench.report` (the
//! HiBench columns, so existing tooling can read it), `summary.md` (a table
//! per workload: median job time per scheduler, its spread, the ratio to
//! FIFO and the locality mix), and the plots.

use super::plot::{self, Bar, BarSeries};
use super::results::{median, Row, LEVELS};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The run as a whole, for the summary's header.
#[derive(Debug, Clone, Default)]
pub struct Meta {
    pub command: String,
    pub started_ms: u64,
    pub cores: usize,
    /// The cluster and network (a row's `config` without the policy).
    pub config: String,
    pub cache: String,
    pub reps: u32,
    pub workloads: Vec<String>,
    pub schedulers: Vec<String>,
    /// The commit the harness was built from and whether the tree was clean.
    pub commit: String,
}

/// Writes `hibench.report`, `summary.md`, `job-time.png` and
/// `locality.png` into `dir`. Plot errors are reported in the summary
/// rather than lose the tables.
pub fn write_all(dir: &Path, rows: &[Row], failures: &[String], meta: &Meta) -> anyhow::Result<()> {
    std::fs::write(dir.join("hibench.report"), hibench(rows))?;
    let mut plots = Vec::new();
    if !rows.is_empty() {
        plots.push(plot_job_time(dir, rows, meta).map(|_| "job-time.png"));
        plots.push(plot_locality(dir, rows, meta).map(|_| "locality.png"));
    }
    std::fs::write(
        dir.join("summary.md"),
        summary(rows, failures, meta, &plots),
    )?;
    Ok(())
}

/// HiBench's `hibench.report`: one line per job run.
pub fn hibench(rows: &[Row]) -> String {
    let mut s = format!(
        "{:<22}{:<11}{:<9}{:>16}{:>13}{:>21}{:>17}  {:<22}{:>11}\n",
        "Type",
        "Date",
        "Time",
        "Input_data_size",
        "Duration(s)",
        "Throughput(bytes/s)",
        "Throughput/node",
        "Scheduler",
        "Local_rate"
    );
    for r in rows {
        let (date, time) = utc(r.end_ms);
        let tput = r.input_bytes as f64 / r.exec_time_s.max(1e-9);
        let _ = writeln!(
            s,
            "{:<22}{:<11}{:<9}{:>16}{:>13.3}{:>21.0}{:>17.0}  {:<22}{:>11.3}",
            format!("Mr{}", camel(&r.workload)),
            date,
            time,
            r.input_bytes,
            r.exec_time_s,
            tput,
            tput / r.workers.max(1) as f64,
            r.scheduler,
            r.local_rate()
        );
    }
    s
}

fn camel(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// (YYYY-MM-DD, HH:MM:SS) in UTC; the civil-from-days algorithm of Howard
/// Hinnant, to need no date crate.
pub fn utc(ms: u64) -> (String, String) {
    let secs = ms / 1000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    (
        format!("{y:04}-{m:02}-{d:02}"),
        format!("{:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60),
    )
}

/// A workload's rows, per scheduler.
type Groups<'a> = Vec<(String, Vec<(String, Vec<&'a Row>)>)>;
/// A key that sorts as the run's order, then by name.
type Ordered = (usize, String);

/// Rows grouped by workload then scheduler, in the run's order.
fn grouped<'a>(rows: &'a [Row], meta: &Meta) -> Groups<'a> {
    let order = |list: &[String], x: &str| list.iter().position(|w| w == x).unwrap_or(usize::MAX);
    let mut by: BTreeMap<Ordered, BTreeMap<Ordered, Vec<&Row>>> = BTreeMap::new();
    for r in rows {
        by.entry((order(&meta.workloads, &r.workload), r.workload.clone()))
            .or_default()
            .entry((order(&meta.schedulers, &r.scheduler), r.scheduler.clone()))
            .or_default()
            .push(r);
    }
    by.into_iter()
        .map(|((_, w), m)| (w, m.into_iter().map(|((_, s), v)| (s, v)).collect()))
        .collect()
}

pub fn summary(
    rows: &[Row],
    failures: &[String],
    meta: &Meta,
    plots: &[anyhow::Result<&str>],
) -> String {
    let mut s = String::from("# Benchmark summary\n\n");
    let (date, time) = utc(meta.started_ms);
    let _ = writeln!(s, "- started: {date} {time} UTC");
    let _ = writeln!(s, "- command: `{}`", meta.command);
    let _ = writeln!(s, "- commit: {}", meta.commit);
    let _ = writeln!(s, "- machine: {} cores", meta.cores);
    let _ = writeln!(s, "- cluster: {}", meta.config);
    let _ = writeln!(
        s,
        "- caches: {} before each run; {} repetition(s) per cell, schedulers in turn within each",
        meta.cache, meta.reps
    );
    let _ = writeln!(
        s,
        "- figures: over the validated runs: mean, median and 90th percentile job time, spread as min–max (the max is the slowest job), `vs` is the ratio of means; `local %` is node- plus cache-local maps over all maps\n"
    );
    for (workload, scheds) in grouped(rows, meta) {
        let _ = writeln!(s, "## {workload}\n");
        let mixed = workload == "mixed";
        let base = scheds
            .iter()
            .find(|(n, _)| n == "fifo")
            .or(scheds.first())
            .map(|(n, v)| (n.clone(), mean(&times(v))));
        let ratio_to = base.as_ref().map(|b| b.0.clone()).unwrap_or_default();
        let _ = writeln!(
            s,
            "| scheduler | runs | mean job s | median job s | p90 s | min–max s | vs {ratio_to} |{} local % | cache | node | cache-rack | rack | off-rack | remote MiB | map response s |",
            if mixed { " makespan s |" } else { "" }
        );
        let _ = writeln!(
            s,
            "|---|---:|---:|---:|---:|---:|---:|{}---:|---:|---:|---:|---:|---:|---:|---:|",
            if mixed { "---:|" } else { "" }
        );
        for (sched, v) in &scheds {
            let t = times(v);
            let med = median(&t);
            let avg = mean(&t);
            let p90 = percentile(&t, 0.9);
            let (lo, hi) = t
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
            let mut loc = [0u64; 5];
            for r in v {
                for (i, n) in r.locality.iter().enumerate() {
                    loc[i] += n;
                }
            }
            let maps: u64 = loc.iter().sum();
            let local = 100.0 * (loc[0] + loc[1]) as f64 / maps.max(1) as f64;
            let remote: u64 = v.iter().map(|r| r.bytes_remote()).sum();
            let resp = median(&v.iter().map(|r| r.map_response_mean_s).collect::<Vec<_>>());
            let makespan = if mixed {
                format!(" {:.1} |", median(&makespans(v)))
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "| {sched} | {} | {avg:.2} | {med:.2} | {p90:.2} | {lo:.2}–{hi:.2} | {} |{makespan} {local:.0} | {} | {} | {} | {} | {} | {:.0} | {resp:.2} |",
                v.len(),
                base.as_ref()
                    .map(|(_, b)| format!("{:.2}", avg / b))
                    .unwrap_or_default(),
                loc[0],
                loc[1],
                loc[2],
                loc[3],
                loc[4],
                remote as f64 / (1 << 20) as f64 / v.len().max(1) as f64,
            );
        }
        s.push('\n');
        s += &super::intervals::block(&scheds, &ratio_to);
        s.push('\n');
        if mixed {
            let _ = writeln!(
                s,
                "Mixed: every job of a run is a row; `median job s` is over all jobs, `makespan` over runs (first submission to last end).\n"
            );
        }
    }
    if rows.is_empty() {
        s += "No run validated: there is no figure to show.\n\n";
    }
    for p in plots {
        match p {
            Ok(f) => {
                let _ = writeln!(s, "![{f}]({f})\n");
            }
            Err(e) => {
                let _ = writeln!(s, "(a plot could not be drawn: {e:#})\n");
            }
        }
    }
    if !failures.is_empty() {
        let _ = writeln!(s, "## Failed runs (not counted)\n");
        for f in failures {
            let _ = writeln!(s, "- {f}");
        }
    }
    s
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.iter().sum::<f64>() / v.len() as f64
}

/// The nearest-rank percentile `q` (0..=1) of `v`.
fn percentile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = ((q * s.len() as f64).ceil() as usize).clamp(1, s.len());
    s[rank - 1]
}

fn times(v: &[&Row]) -> Vec<f64> {
    v.iter().map(|r| r.exec_time_s).collect()
}

/// Per repetition: from the first submission to the last end.
fn makespans(v: &[&Row]) -> Vec<f64> {
    let mut by: BTreeMap<u32, f64> = BTreeMap::new();
    for r in v {
        let e = by.entry(r.rep).or_default();
        *e = e.max(r.submit_offset_s + r.exec_time_s);
    }
    by.into_values().collect()
}

fn plot_job_time(dir: &Path, rows: &[Row], meta: &Meta) -> anyhow::Result<()> {
    let groups = grouped(rows, meta);
    let names: Vec<String> = groups.iter().map(|(w, _)| w.clone()).collect();
    let mut series: Vec<BarSeries> = Vec::new();
    for sched in &meta.schedulers {
        let values = groups
            .iter()
            .map(|(_, scheds)| {
                scheds.iter().find(|(n, _)| n == sched).map(|(_, v)| {
                    let t = times(v);
                    Bar {
                        median: median(&t),
                        min: t.iter().copied().fold(f64::MAX, f64::min),
                        max: t.iter().copied().fold(f64::MIN, f64::max),
                    }
                })
            })
            .collect();
        series.push(BarSeries {
            label: sched.clone(),
            values,
        });
    }
    plot::grouped_bars(
        &dir.join("job-time.png"),
        "Job execution time (median, min–max over runs)",
        "seconds",
        &names,
        &series,
    )
}

fn plot_locality(dir: &Path, rows: &[Row], meta: &Meta) -> anyhow::Result<()> {
    let mut labels = Vec::new();
    let mut fractions = Vec::new();
    for (w, scheds) in grouped(rows, meta) {
        for (sched, v) in scheds {
            let mut loc = [0u64; 5];
            for r in &v {
                for (i, n) in r.locality.iter().enumerate() {
                    loc[i] += n;
                }
            }
            let maps = loc.iter().sum::<u64>().max(1) as f64;
            labels.push(format!("{w}/{sched}"));
            fractions.push(loc.iter().map(|&n| n as f64 / maps).collect());
        }
    }
    plot::stacked_fractions(
        &dir.join("locality.png"),
        "Map tasks by locality level",
        "fraction of map tasks",
        &labels,
        &LEVELS,
        &fractions,
    )
}

/// The commit the harness was built from and whether the tree was clean,
/// from `git` in the current directory ("unknown" outside a checkout).
pub fn git_state() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(c) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            format!(
                "{c} ({})",
                if dirty { "tree modified" } else { "clean tree" }
            )
        }
        None => "unknown (not run from a git checkout)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(w: &str, s: &str, rep: u32, t: f64, loc: [u64; 5]) -> Row {
        Row {
            workload: w.into(),
            scheduler: s.into(),
            rep,
            exec_time_s: t,
            locality: loc,
            input_bytes: 1 << 30,
            workers: 4,
            end_ms: 1_763_812_800_000,
            ..Default::default()
        }
    }

    #[test]
    fn dates_are_utc_civil_dates() {
        assert_eq!(utc(0), ("1970-01-01".into(), "00:00:00".into()));
        assert_eq!(
            utc(951_782_400_000),
            ("2000-02-29".into(), "00:00:00".into())
        );
        assert_eq!(
            utc(1_763_812_861_000),
            ("2025-11-22".into(), "12:01:01".into())
        );
    }

    #[test]
    fn summary_gives_means_medians_p90_spread_and_ratio_to_fifo() {
        let rows = vec![
            row("wordcount", "lsap", 1, 8.0, [0, 10, 0, 0, 0]),
            row("wordcount", "fifo", 1, 10.0, [0, 5, 0, 5, 0]),
            row("wordcount", "lsap", 2, 6.0, [0, 10, 0, 0, 0]),
            row("wordcount", "fifo", 2, 14.0, [0, 5, 0, 0, 5]),
        ];
        let meta = Meta {
            workloads: vec!["wordcount".into()],
            schedulers: vec!["fifo".into(), "lsap".into()],
            cores: 2,
            config: "network=emulated-lan; host_rate=200mbit".into(),
            ..Default::default()
        };
        let s = summary(
            &rows,
            &["sort × delay, rep 1: job 3 failed".into()],
            &meta,
            &[],
        );
        assert!(s.contains("- machine: 2 cores"), "{s}");
        // Intervals and the paired difference with FIFO over runs: lsap is
        // 5 s faster on average (8 vs 10, 6 vs 14: -2 and -8), t on 1
        // degree of freedom (12.706 standard errors) and no claim on 2 runs.
        assert!(
            s.contains("| fifo | 2 | 12.000 [-13.412, 37.412] | baseline | - |"),
            "{s}"
        );
        assert!(
            s.contains(
                "| lsap | 2 | 7.000 [-5.706, 19.706] | -5.000 [-43.119, 33.119]: too few runs for a claim | 0.344 |"
            ),
            "{s}"
        );
        assert!(s.contains("host_rate=200mbit"));
        assert!(
            s.contains("| fifo | 2 | 12.00 | 12.00 | 14.00 | 10.00–14.00 | 1.00 | 50 | 0 | 10 | 0 | 5 | 5 |"),
            "{s}"
        );
        assert!(
            s.contains("| lsap | 2 | 7.00 | 7.00 | 8.00 | 6.00–8.00 | 0.58 | 100 |"),
            "{s}"
        );
        // fifo's row comes first, as in --schedulers.
        assert!(s.find("| fifo").unwrap() < s.find("| lsap").unwrap());
        assert!(s.contains("## Failed runs (not counted)\n\n- sort × delay"));
        let h = hibench(&rows);
        assert!(h.starts_with("Type"));
        assert!(
            h.lines()
                .nth(1)
                .unwrap()
                .starts_with("MrWordcount           2025-11-22 12:00:00"),
            "{h}"
        );
        assert_eq!(h.lines().count(), 5);
    }
}
