//! Means with 95 % intervals, and paired differences, by a seeded
//! two-stage bootstrap: runs drawn with replacement, then jobs drawn with
//! replacement within each drawn run. Drawing jobs alone would treat a
//! policy's 5 runs as one big sample and hide how much a whole run moves
//! (issue 26 saw atlas's mean at 0.236, 0.314 and 0.195 s in three runs of
//! one configuration); drawing runs first makes that spread count. With one
//! run it is the plain bootstrap over jobs.
//!
//! The interval of the `mr bench`, sweep and paper reports
//! (`intervals.rs`): 95 %, at least [`RESAMPLES`] resamples, seeded;
//! paired difference: the same job (schedule position, seed, input) under
//! two policies, "not distinguishable" when the interval contains 0. The
//! trace report has moved to the run as the unit of inference (issue 41:
//! a run's jobs share a queue, so even resampled within runs they make the
//! interval too narrow): Student t over per-run values (`over_runs.rs`),
//! with the row-cluster bootstrap (`rowboot.rs`) beside it. Definitions:
//! `docs/bench/comparing-policies.md`.

use std::collections::BTreeMap;
use std::fmt;

/// Resamples per interval: 2,000 puts the 2.5 % and 97.5 % points on the
/// 50th and 1,950th values, each stable to a few per cent of the width.
pub const RESAMPLES: usize = 2000;

/// A mean and its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Interval {
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
    /// Jobs and runs it came from.
    pub n: usize,
    pub runs: usize,
}

impl Interval {
    /// An interval that holds 0 says the data cannot tell the sign.
    pub fn contains_zero(&self) -> bool {
        self.lo <= 0.0 && self.hi >= 0.0
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} [{:.3}, {:.3}]", self.mean, self.lo, self.hi)
    }
}

/// The `q` quantile of sorted values, nearest rank (`q` in [0, 1]): the
/// value at index `round(q * (n - 1))`.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = (q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i]
}

/// The mean of `runs` (each run its jobs' values) with a 95 % interval from
/// `resamples` two-stage resamples seeded by `seed`. Empty runs are left
/// out; `None` when no value is left.
pub fn mean_interval(runs: &[Vec<f64>], resamples: usize, seed: u64) -> Option<Interval> {
    let runs: Vec<&Vec<f64>> = runs.iter().filter(|r| !r.is_empty()).collect();
    let n: usize = runs.iter().map(|r| r.len()).sum();
    if n == 0 {
        return None;
    }
    let mean = runs.iter().flat_map(|r| r.iter()).sum::<f64>() / n as f64;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut means = Vec::with_capacity(resamples.max(1));
    for _ in 0..resamples.max(1) {
        let (mut sum, mut count) = (0.0, 0usize);
        for _ in 0..runs.len() {
            let run = runs[rng.usize(..runs.len())];
            for _ in 0..run.len() {
                sum += run[rng.usize(..run.len())];
            }
            count += run.len();
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

/// The paired difference `a - b`: values keyed by (run, job); only keys
/// present in both count, grouped by run for the resampling.
pub fn paired(
    a: &BTreeMap<(u32, usize), f64>,
    b: &BTreeMap<(u32, usize), f64>,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    let mut by_run: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (k, x) in a {
        if let Some(y) = b.get(k) {
            by_run.entry(k.0).or_default().push(x - y);
        }
    }
    mean_interval(&by_run.into_values().collect::<Vec<_>>(), resamples, seed)
}

/// How a report writes a paired difference: the interval, and "not
/// distinguishable" when it holds 0.
pub fn verdict(d: &Interval) -> String {
    if d.contains_zero() {
        format!("{d}: not distinguishable")
    } else if d.mean < 0.0 {
        format!("{d}: lower")
    } else {
        format!("{d}: higher")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_hand() {
        let v: Vec<f64> = (1..=101).map(f64::from).collect();
        // round(0.025 * 100) = 3 (2.5 rounds away from zero): the 4th value.
        assert_eq!(quantile(&v, 0.025), 4.0);
        assert_eq!(quantile(&v, 0.975), 99.0);
        assert_eq!(quantile(&v, 0.5), 51.0);
        assert_eq!(quantile(&[7.0], 0.975), 7.0);
    }

    /// Two runs whose jobs all take 1 s and 3 s. Drawing two runs with
    /// replacement gives {1,1}, {1,3}, {3,1} or {3,3} with probability 1/4
    /// each, so resample means of 1, 2, 2, 3: P(1) = 1/4, P(2) = 1/2,
    /// P(3) = 1/4. The 2.5 % point is 1 and the 97.5 % point 3 (each
    /// tail holds a quarter), the mean 2. A bootstrap over jobs alone
    /// would give [2, 2]: no run-to-run spread.
    #[test]
    fn two_constant_runs_give_the_interval_computed_by_hand() {
        let runs = vec![vec![1.0; 10], vec![3.0; 10]];
        let i = mean_interval(&runs, RESAMPLES, 42).unwrap();
        assert_eq!((i.mean, i.lo, i.hi, i.n, i.runs), (2.0, 1.0, 3.0, 20, 2));
        // Same seed, same interval.
        assert_eq!(mean_interval(&runs, RESAMPLES, 42), Some(i));
    }

    /// One run of the jobs {0, 1}: resampling 2 jobs gives means 0, 0.5, 1
    /// with probability 1/4, 1/2, 1/4: the interval [0, 1] around 0.5.
    /// Ten jobs, five 0 and five 1: the resample mean is Binomial(10, 1/2)
    /// / 10, whose 2.5 % and 97.5 % points are 0.2 and 0.8 (P(X <= 1) =
    /// 11/1024 = 1.1 %, P(X <= 2) = 56/1024 = 5.5 %).
    #[test]
    fn one_run_is_the_plain_bootstrap_over_jobs() {
        let i = mean_interval(&[vec![0.0, 1.0]], RESAMPLES, 1).unwrap();
        assert_eq!((i.mean, i.lo, i.hi), (0.5, 0.0, 1.0));
        let mut ten = vec![0.0; 5];
        ten.extend([1.0; 5]);
        let i = mean_interval(&[ten], 20_000, 1).unwrap();
        assert_eq!((i.mean, i.lo, i.hi), (0.5, 0.2, 0.8));
        assert!(mean_interval(&[vec![], vec![]], RESAMPLES, 1).is_none());
    }

    #[test]
    fn paired_differences_match_jobs_and_say_when_they_cannot_tell() {
        let mut a = BTreeMap::new();
        let mut b = BTreeMap::new();
        for run in 0..3u32 {
            for job in 0..10usize {
                let base = 1.0 + job as f64 + run as f64;
                a.insert((run, job), base + 0.5);
                b.insert((run, job), base);
            }
        }
        // A job only one policy ran does not count.
        a.insert((9, 0), 100.0);
        let d = paired(&a, &b, RESAMPLES, 7).unwrap();
        assert_eq!((d.mean, d.lo, d.hi, d.n), (0.5, 0.5, 0.5, 30));
        assert!(verdict(&d).ends_with("higher"));
        // +1 and -1 in equal numbers: the interval holds 0.
        let mut c = b.clone();
        for ((_, job), v) in c.iter_mut() {
            *v += if job % 2 == 0 { 1.0 } else { -1.0 };
        }
        let d = paired(&c, &b, RESAMPLES, 7).unwrap();
        assert!(d.contains_zero(), "{d}");
        assert!(verdict(&d).ends_with("not distinguishable"));
    }
}
