//! The intervals block every `mr bench` summary and paper report carries
//! under its tables: each policy's mean job time with its 95 % interval, and
//! its paired difference with a named baseline (the same job of the same
//! repetition: the single-job workloads' one job, or the mixed schedule's
//! job in submission order), "not distinguishable" when the interval holds
//! 0. Definitions: `docs/bench/comparing-policies.md`.

use super::bootstrap::{self, RESAMPLES};
use super::results::Row;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Seeds every interval of a report, so the same CSV gives the same report.
pub const SEED: u64 = 26;

/// Job times by repetition (the bootstrap's runs).
fn by_run(rows: &[&Row]) -> Vec<Vec<f64>> {
    let mut m: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for r in rows {
        m.entry(r.rep).or_default().push(r.exec_time_s);
    }
    m.into_values().collect()
}

/// Job times keyed by (repetition, position in submission order).
fn keyed(rows: &[&Row]) -> BTreeMap<(u32, usize), f64> {
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
        "| policy | mean job s [95 %] | minus {} (paired), s [95 %] |\n|---|---|---|\n",
        base.0
    );
    for (name, rows) in groups {
        let m = bootstrap::mean_interval(&by_run(rows), RESAMPLES, SEED)
            .map_or("-".into(), |i| i.to_string());
        let d = if name == &base.0 {
            "baseline".to_string()
        } else {
            bootstrap::paired(&keyed(rows), &kb, RESAMPLES, SEED).map_or("no pairs".into(), |d| {
                format!("{} ({} pairs)", bootstrap::verdict(&d), d.n)
            })
        };
        let _ = writeln!(s, "| {name} | {m} | {d} |");
    }
    s += &format!(
        "\nIntervals: 95 %, bootstrap over jobs resampled within runs, {RESAMPLES} resamples, seed {SEED}; paired: the same job of the same repetition under both policies.\n"
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
        for rep in 1..=3 {
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
            s.contains("| fifo | 4.000 [") && s.contains("| baseline |"),
            "{s}"
        );
        assert!(
            s.contains("| delay | 3.500 [")
                && s.contains("-0.500 [-0.500, -0.500]: lower (15 pairs)"),
            "{s}"
        );
    }
}
