//! The trace replay's plots: each policy's mean and 99th-percentile job
//! time against the offered load, one line per policy, so where a policy
//! pulls ahead or falls behind as the cluster fills shows at a glance.

use super::plot::{self, Series};
use std::path::Path;

/// Writes `job-time-vs-load.png` (mean) and `p99-vs-load.png` from each
/// job's (load, policy, job time in s); nothing when fewer than two loads
/// are numbers (a fixed compression has no load).
pub fn job_time_against_load(
    dir: &Path,
    policies: &[String],
    jobs: &[(&str, &str, f64)],
) -> anyhow::Result<()> {
    let mut loads: Vec<f64> = jobs.iter().filter_map(|r| r.0.parse().ok()).collect();
    loads.sort_by(f64::total_cmp);
    loads.dedup();
    if loads.len() < 2 {
        return Ok(());
    }
    let series = |stat: &dyn Fn(&mut Vec<f64>) -> f64| -> Vec<Series> {
        policies
            .iter()
            .filter_map(|p| {
                let points: Vec<(f64, f64)> = loads
                    .iter()
                    .filter_map(|&l| {
                        let mut t: Vec<f64> = jobs
                            .iter()
                            .filter(|r| r.1 == p && r.0.parse::<f64>().ok() == Some(l))
                            .map(|r| r.2)
                            .collect();
                        (!t.is_empty()).then(|| (l, stat(&mut t)))
                    })
                    .collect();
                (!points.is_empty()).then(|| Series {
                    label: p.clone(),
                    points,
                })
            })
            .collect()
    };
    // Ticks at two decimals, trailing zeros dropped: 0.3, not 0.30000000000000004.
    let fmt = |x: f64| {
        let s = format!("{x:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    let mean = |t: &mut Vec<f64>| t.iter().sum::<f64>() / t.len() as f64;
    let p99 = |t: &mut Vec<f64>| {
        t.sort_by(f64::total_cmp);
        super::bootstrap::quantile(t, 0.99)
    };
    plot::lines(
        &dir.join("job-time-vs-load.png"),
        "Mean job time against offered load",
        "offered load",
        "mean job time, s",
        &series(&mean),
        false,
        &fmt,
    )?;
    plot::lines(
        &dir.join("p99-vs-load.png"),
        "99th-percentile job time against offered load",
        "offered load",
        "p99 job time, s",
        &series(&p99),
        false,
        &fmt,
    )
}
