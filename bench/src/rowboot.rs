//! The row-cluster bootstrap, beside the t interval over runs: it asks
//! whether a figure would hold on other jobs. The t interval over runs
//! says how much a whole run moves when the same rows are replayed again;
//! it says nothing of which rows the slice happened to hold. Resampling
//! trace rows, each drawn row bringing its value in every run (the rows
//! are the clusters; a row's runs are not independent of each other),
//! does.

use super::bootstrap::{quantile, Interval};
use super::over_runs::ByRunRow;
use std::collections::BTreeMap;

/// The mean of `v` (values keyed by run and row) with its 95 % interval
/// from `resamples` resamples of the rows, seeded by `seed`: each resample
/// draws as many rows as there are, with replacement, and takes the mean
/// of every value the drawn rows bring. `None` when `v` is empty.
pub fn interval(v: &ByRunRow, resamples: usize, seed: u64) -> Option<Interval> {
    let mut by_row: BTreeMap<usize, (f64, usize)> = BTreeMap::new();
    let mut runs: Vec<u32> = Vec::new();
    for (&(run, row), &x) in v {
        let e = by_row.entry(row).or_default();
        e.0 += x;
        e.1 += 1;
        if !runs.contains(&run) {
            runs.push(run);
        }
    }
    let rows: Vec<(f64, usize)> = by_row.into_values().collect();
    if rows.is_empty() {
        return None;
    }
    let n: usize = rows.iter().map(|r| r.1).sum();
    let mean = rows.iter().map(|r| r.0).sum::<f64>() / n as f64;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut means = Vec::with_capacity(resamples.max(1));
    for _ in 0..resamples.max(1) {
        let (mut sum, mut count) = (0.0, 0usize);
        for _ in 0..rows.len() {
            let r = rows[rng.usize(..rows.len())];
            sum += r.0;
            count += r.1;
        }
        means.push(sum / count as f64);
    }
    means.sort_by(f64::total_cmp);
    Some(Interval {
        mean,
        lo: quantile(&means, 0.025),
        hi: quantile(&means, 0.975),
        n,
        runs: runs.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::RESAMPLES;

    /// Two rows, one at 1 s and one at 3 s in every run: drawing two rows
    /// gives means 1, 2, 2, 3 with probability 1/4, 1/2, 1/4, so the 95 %
    /// interval is [1, 3] however many runs there are: runs that agree
    /// do not make the slice's two rows more representative.
    #[test]
    fn two_rows_give_the_interval_computed_by_hand() {
        let mut v = ByRunRow::new();
        for run in 1..=10 {
            v.insert((run, 0), 1.0);
            v.insert((run, 1), 3.0);
        }
        let i = interval(&v, RESAMPLES, 5).unwrap();
        assert_eq!((i.mean, i.lo, i.hi, i.n, i.runs), (2.0, 1.0, 3.0, 20, 10));
        assert_eq!(interval(&v, RESAMPLES, 5), Some(i));
        assert!(interval(&ByRunRow::new(), RESAMPLES, 5).is_none());
    }

    /// A row's runs travel together: rows that are all the same give a
    /// point however much the runs differ.
    #[test]
    fn runs_of_one_row_are_drawn_together() {
        let mut v = ByRunRow::new();
        for run in 1..=5u32 {
            for row in 0..6 {
                v.insert((run, row), run as f64);
            }
        }
        let i = interval(&v, RESAMPLES, 1).unwrap();
        assert_eq!((i.mean, i.lo, i.hi), (3.0, 3.0, 3.0));
    }
}
