//! The intervals block every `mr bench` summary and paper report carries
//! under its tables: each policy's mean job time with its 95 % interval, and
//! its paired difference with a named baseline (the same job of the same
//! repetition: the single-job workloads' one job, or the mixed schedule's
//! job in submission order). The run is the unit: jobs of one run share a
//! queue, so each run gives one value (its mean, its mean paired
//! difference) and the interval is Student's t over those values; below
//! [`MIN_RUNS_FOR_CLAIM`] runs the block says so rather than make a claim.
//! Definitions: `docs/bench/comparing-policies.md`.

use super::over_runs::{paired_run_means, run_means, t_interval, ByRunRow, MIN_RUNS_FOR_CLAIM};
use super::results::Row;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Job times keyed by (repetition, position in submission order).
fn keyed(rows: &[&Row]) -> ByRunRow {
    let mut by: BTreeMap<u32, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        by.entry(r.rep).or_default().push(r);
    }
    let mut out = BTreeMap::new();
    for (rep, mut v) in by {
        v.sort_by(|a, b| {
            a.submit_offset_s
                .total_cmp(&b.submit_offset_s)
                .then(a.job_id.cmp(&b.job_id))
        });
        for (i, r) in v.into_iter().enumerate() {
            out.insert((rep, i), r.exec_time_s);
        }
    }
    out
}

fn values(v: Vec<(u32, f64)>) -> Vec<f64> {
    v.into_iter().map(|(_, x)| x).collect()
}

/// The block for one table: `groups` are (policy, its rows); `baseline`
/// names the policy the others are paired with (the first when absent).
pub fn block(groups: &[(String, Vec<&Row>)], baseline: &str) -> String {
    if groups.is_empty() {
        return String::new();
    }
    let base = groups
        .iter()
        .find(|(n, _)| n == baseline)
        .unwrap_or(&groups[0]);
    let kb = keyed(&base.1);
    let mut s = format!(
        "| policy | runs | mean job s [95 %] | minus {} (paired per run), s [95 %] | p |\n|---|---|---|---|---|\n",
        base.0
    );
    for (name, rows) in groups {
        let k = keyed(rows);
        let means = values(run_means(&k));
        let m = t_interval(&means).map_or("-".into(), |i| i.to_string());
        let (d, p) = if name == &base.0 {
            ("baseline".to_string(), "-".to_string())
        } else {
            match t_interval(&values(paired_run_means(&k, &kb))) {
                Some(d) => (format!("{d}: {}", d.verdict()), format!("{:.3}", d.p)),
                None => ("fewer than 2 paired runs".into(), "-".into()),
            }
        };
        let _ = writeln!(s, "| {name} | {} | {m} | {d} | {p} |", means.len());
    }
    s += &format!(
        "\nIntervals: 95 %, Student's t over runs (each run's mean job time; paired: each run's mean of the same jobs' differences, the same job of the same repetition under both policies); a claim needs {MIN_RUNS_FOR_CLAIM} runs or more.\n"
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(s: &str, rep: u32, at: f64, t: f64) -> Row {
        Row {
            scheduler: s.into(),
            rep,
            submit_offset_s: at,
            exec_time_s: t,
            ..Default::default()
        }
    }

    #[test]
    fn pairs_follow_submission_order_within_a_repetition() {
        let mut a = vec![];
        let mut b = vec![];
        for rep in 1..=10 {
            for k in 0..5 {
                // Listed in reverse: pairing must sort by submission.
                a.push(row("fifo", rep, 10.0 - k as f64, 2.0 + k as f64));
                b.push(row("delay", rep, 10.0 - k as f64, 1.5 + k as f64));
            }
        }
        let g = vec![
            ("fifo".to_string(), a.iter().collect::<Vec<_>>()),
            ("delay".to_string(), b.iter().collect::<Vec<_>>()),
        ];
        let s = block(&g, "fifo");
        assert!(
            s.contains("| fifo | 10 | 4.000 [") && s.contains("| baseline |"),
            "{s}"
        );
        assert!(
            s.contains("| delay | 10 | 3.500 [")
                && s.contains("-0.500 [-0.500, -0.500]: lower | 0.000 |"),
            "{s}"
        );
        // Three runs make no claim, however clear.
        let few: Vec<(String, Vec<&Row>)> = g
            .iter()
            .map(|(n, v)| {
                (
                    n.clone(),
                    v.iter().copied().filter(|r| r.rep <= 3).collect(),
                )
            })
            .collect();
        let s = block(&few, "fifo");
        assert!(s.contains(": too few runs for a claim"), "{s}");
    }
}
