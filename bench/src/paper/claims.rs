//! A paper's headline claims against our runs, with the run as the unit:
//! each claim compares one figure (job time, makespan, local %) of two
//! policies at one point, run by run (the policies alternate within a
//! repetition, so repetition k of each is a pair), with the 95 % Student t
//! interval of the per-run differences. The claims of one report are named
//! by the paper before anything runs, so they are one family: each p-value
//! is Holm-adjusted over the report's claims, and a claim needs
//! [`MIN_RUNS_FOR_CLAIM`] pairs.

use super::super::holm;
use super::super::over_runs::{t_interval, TInterval, MIN_RUNS_FOR_CLAIM};
use super::super::results::Row;
use super::stats::{select, stats, Stats};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One figure of two policies at one point, compared run by run.
pub struct Claim<'a> {
    /// What is compared, as the table says it ("makespan s").
    pub figure: &'a str,
    /// The point (`sweep_value`) and its label in the table.
    pub x: &'a str,
    pub policy: &'a str,
    pub baseline: &'a str,
    pub metric: fn(&Stats) -> f64,
}

/// The same comparison at every point.
pub fn at_points<'a>(
    points: &'a [String],
    figure: &'a str,
    policy: &'a str,
    baseline: &'a str,
    metric: fn(&Stats) -> f64,
) -> Vec<Claim<'a>> {
    points
        .iter()
        .map(|x| Claim {
            figure,
            x,
            policy,
            baseline,
            metric,
        })
        .collect()
}

/// Each repetition's figure for `label` at `x`.
fn per_run(rows: &[Row], label: &str, x: &str, metric: fn(&Stats) -> f64) -> BTreeMap<u32, f64> {
    let mut by: BTreeMap<u32, Vec<&Row>> = BTreeMap::new();
    for r in select(rows, label, x) {
        by.entry(r.rep).or_default().push(r);
    }
    by.into_iter()
        .map(|(k, run)| (k, metric(&stats(&run))))
        .collect()
}

/// The paired per-run differences `policy − baseline` and their interval.
pub fn interval(rows: &[Row], c: &Claim) -> Option<TInterval> {
    let a = per_run(rows, c.policy, c.x, c.metric);
    let b = per_run(rows, c.baseline, c.x, c.metric);
    let d: Vec<f64> = a
        .iter()
        .filter_map(|(k, x)| b.get(k).map(|y| x - y))
        .collect();
    t_interval(&d)
}

/// The claims table: each difference with its interval, its Holm-adjusted
/// p-value over the table's rows, and what a report may say of it.
pub fn table(rows: &[Row], claims: &[Claim]) -> String {
    let iv: Vec<Option<TInterval>> = claims.iter().map(|c| interval(rows, c)).collect();
    let p: Vec<f64> = iv.iter().map(|i| i.map_or(1.0, |i| i.p)).collect();
    let adj = holm::adjusted(&p);
    let mut s = String::from(
        "### The paper's claims, run by run\n\n| figure | point | policy minus baseline | paired runs | difference [95 %] | Holm p | verdict |\n|---|---|---|---:|---|---:|---|\n",
    );
    for ((c, i), q) in claims.iter().zip(&iv).zip(&adj) {
        let (runs, d, verdict) = match i {
            Some(i) => {
                let v = if i.runs >= MIN_RUNS_FOR_CLAIM && *q > 0.05 {
                    "not distinguishable (Holm)"
                } else {
                    i.verdict()
                };
                (i.runs, i.to_string(), v)
            }
            None => (0, "-".into(), "fewer than 2 paired runs"),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} − {} | {runs} | {d} | {q:.3} | {verdict} |",
            c.figure, c.x, c.policy, c.baseline
        );
    }
    let _ = write!(
        s,
        "\nRun as the unit: each repetition of a policy gives one value, repetition k of both policies is a pair (they alternate within it); 95 % Student t over the pairs; p two-sided, Holm-adjusted over this table's {} claims, all named by the paper before the runs; a claim needs {MIN_RUNS_FOR_CLAIM} pairs or more and a Holm p of 0.05 or less.\n",
        claims.len()
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(s: &str, rep: u32, t: f64) -> Row {
        Row {
            scheduler: s.into(),
            rep,
            exec_time_s: t,
            end_ms: 1000 * rep as u64 + (t * 1e3) as u64,
            sweep_value: "3".into(),
            ..Row::default()
        }
    }

    /// Ten runs where lsap is 0.5 s faster each time, give or take 0.1:
    /// a claim; the same over three runs is not one.
    #[test]
    fn paired_runs_with_holm() {
        let mut rows = vec![];
        for rep in 1..=10 {
            let wiggle = if rep % 2 == 0 { 0.1 } else { -0.1 };
            rows.push(row("fifo", rep, 2.0));
            rows.push(row("lsap", rep, 1.5 + wiggle));
        }
        let claim = |x| Claim {
            figure: "mean job s",
            x,
            policy: "lsap",
            baseline: "fifo",
            metric: |s| s.mean_s,
        };
        let i = interval(&rows, &claim("3")).unwrap();
        assert_eq!(i.runs, 10);
        assert!((i.mean + 0.5).abs() < 1e-9, "{i:?}");
        let t = table(&rows, &[claim("3"), claim("6")]);
        assert!(
            t.contains("| mean job s | 3 | lsap − fifo | 10 | -0.500 ["),
            "{t}"
        );
        assert!(t.contains("| lower |"), "{t}");
        assert!(
            t.contains("| 6 | lsap − fifo | 0 | - | 1.000 | fewer than 2"),
            "{t}"
        );
        let few: Vec<Row> = rows.iter().filter(|r| r.rep <= 3).cloned().collect();
        assert!(table(&few, &[claim("3")]).contains("too few runs for a claim"));
    }
}
