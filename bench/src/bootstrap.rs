//! What the bootstraps share: the interval, its resample count and the
//! quantile. The row-cluster bootstrap (`rowboot.rs`) and the trace
//! figures use them beside Student t over per-run values
//! (`over_runs.rs`), every report's unit of inference (issue 41: a run's
//! jobs share a queue, so a bootstrap over jobs, even resampled within
//! runs, makes the interval too narrow; the two-stage one the `mr bench`
//! and paper reports used until 2026-11-29 went with it). Definitions:
//! `docs/bench/comparing-policies.md`.

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
}
