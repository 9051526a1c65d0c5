//! The interval over runs: jobs of one run share a queue, so they are not
//! independent draws and a bootstrap over them makes the interval too
//! narrow (issue 41). Each run gives one value (its mean job time, its
//! paired difference); the interval is Student's t over those values with
//! runs − 1 degrees of freedom, and a claim needs [`MIN_RUNS_FOR_CLAIM`].

use super::tdist;
use std::collections::BTreeMap;

/// Runs below this make no claim, whatever the interval: with 5 runs the
/// t interval is 2.8 standard errors wide each side and the estimate of
/// the spread itself is poor.
pub const MIN_RUNS_FOR_CLAIM: usize = 10;

/// A mean over runs with its 95 % t interval, and the t statistic against
/// 0 with its two-sided p-value (for paired differences).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct TInterval {
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
    pub runs: usize,
    /// The standard deviation of the per-run values.
    pub sd: f64,
    pub t: f64,
    pub p: f64,
}

/// The 95 % t interval of the per-run `values`; `None` below two runs
/// (no spread to estimate).
pub fn t_interval(values: &[f64]) -> Option<TInterval> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let sd = var.sqrt();
    let se = sd / (n as f64).sqrt();
    let df = (n - 1) as f64;
    let half = tdist::quantile(0.975, df) * se;
    let t = if se > 0.0 {
        mean / se
    } else if mean == 0.0 {
        0.0
    } else {
        mean.signum() * f64::INFINITY
    };
    Some(TInterval {
        mean,
        lo: mean - half,
        hi: mean + half,
        runs: n,
        sd,
        t,
        p: tdist::two_sided_p(t, df),
    })
}

impl TInterval {
    pub fn contains_zero(&self) -> bool {
        self.lo <= 0.0 && self.hi >= 0.0
    }

    /// What a report may say of a paired difference.
    pub fn verdict(&self) -> &'static str {
        if self.runs < MIN_RUNS_FOR_CLAIM {
            "too few runs for a claim"
        } else if self.contains_zero() {
            "not distinguishable"
        } else if self.mean < 0.0 {
            "lower"
        } else {
            "higher"
        }
    }
}

impl std::fmt::Display for TInterval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.3} [{:.3}, {:.3}]", self.mean, self.lo, self.hi)
    }
}

/// Values keyed by (run, trace row).
pub type ByRunRow = BTreeMap<(u32, usize), f64>;

/// Each run's mean of its values, in run order.
pub fn run_means(v: &ByRunRow) -> Vec<(u32, f64)> {
    let mut m: BTreeMap<u32, (f64, usize)> = BTreeMap::new();
    for (&(run, _), &x) in v {
        let e = m.entry(run).or_default();
        e.0 += x;
        e.1 += 1;
    }
    m.into_iter().map(|(r, (s, n))| (r, s / n as f64)).collect()
}

/// The paired differences `a − b` of the keys both hold (the same trace
/// row in the same run).
pub fn differences(a: &ByRunRow, b: &ByRunRow) -> ByRunRow {
    a.iter()
        .filter_map(|(k, x)| b.get(k).map(|y| (*k, x - y)))
        .collect()
}

/// Per run, the mean over the same jobs of `a − b`: the paired
/// difference's per-run values.
pub fn paired_run_means(a: &ByRunRow, b: &ByRunRow) -> Vec<(u32, f64)> {
    run_means(&differences(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Five runs 1..5: mean 3, sd √2.5 = 1.5811, se 0.7071, t(0.975, 4) =
    /// 2.7764: half-width 1.9632.
    #[test]
    fn the_interval_by_hand() {
        let i = t_interval(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!((i.mean, i.runs), (3.0, 5));
        assert!((i.sd - 2.5f64.sqrt()).abs() < 1e-12);
        assert!((i.lo - (3.0 - 1.9632)).abs() < 1e-3, "{i}");
        assert!((i.hi - (3.0 + 1.9632)).abs() < 1e-3, "{i}");
        // t = 3 / 0.7071 = 4.243 on 4 df: p = 0.0132 (two-sided).
        assert!(
            (i.t - 4.2426).abs() < 1e-3 && (i.p - 0.0132).abs() < 1e-3,
            "{i:?}"
        );
        assert_eq!(i.verdict(), "too few runs for a claim");
        assert!(t_interval(&[1.0]).is_none());
    }

    #[test]
    fn verdicts_need_ten_runs_and_a_sign() {
        let up: Vec<f64> = (0..10).map(|k| 1.0 + 0.1 * k as f64).collect();
        assert_eq!(t_interval(&up).unwrap().verdict(), "higher");
        let down: Vec<f64> = up.iter().map(|x| -x).collect();
        assert_eq!(t_interval(&down).unwrap().verdict(), "lower");
        let around: Vec<f64> = (0..10)
            .map(|k: u32| if k.is_multiple_of(2) { 1.0 } else { -1.0 })
            .collect();
        let i = t_interval(&around).unwrap();
        assert_eq!((i.mean, i.verdict()), (0.0, "not distinguishable"));
        // No spread: the interval is the point, the p-value 0 (or 1 at 0).
        let c = t_interval(&[0.5; 10]).unwrap();
        assert_eq!((c.lo, c.hi, c.p, c.verdict()), (0.5, 0.5, 0.0, "higher"));
        assert_eq!(t_interval(&[0.0; 3]).unwrap().p, 1.0);
    }

    #[test]
    fn paired_means_are_per_run_over_the_common_rows() {
        let mut a = ByRunRow::new();
        let mut b = ByRunRow::new();
        for run in 1..=3u32 {
            for row in 0..4usize {
                a.insert((run, row), run as f64 + row as f64 + 0.5 * row as f64);
                b.insert((run, row), run as f64 + row as f64);
            }
        }
        // A row only `a` ran in run 2 does not count.
        a.insert((2, 9), 100.0);
        // Run 1's differences 0, .5, 1, 1.5: mean 0.75; every run the same.
        assert_eq!(
            paired_run_means(&a, &b),
            vec![(1, 0.75), (2, 0.75), (3, 0.75)]
        );
        assert_eq!(run_means(&b)[0], (1, 2.5));
    }
}
