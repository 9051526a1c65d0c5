//! `mr sim`: the simulator from the command line, one run per policy on the
//! same cluster and seed, as a table or as `{"results": [...]}`.

use crate::output::table;
use common::sched::SchedulerSpec;
use sim::SimConfig;

pub fn run(cfg: &SimConfig, schedulers: &[String], as_json: bool) -> anyhow::Result<()> {
    cfg.validate()?;
    let mut results = Vec::new();
    for name in schedulers {
        let r =
            sim::run(cfg, &SchedulerSpec::new(name)).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        if !as_json {
            eprintln!(
                "{name}: {} maps, {} decisions in {:.2}s",
                r.maps(),
                r.decisions,
                r.wall_s
            );
        }
        results.push(r);
    }
    if as_json {
        let v: Vec<_> = results.iter().map(|r| r.to_json()).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "results": v }))?
        );
        return Ok(());
    }
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let mut row = vec![
                r.scheduler.clone(),
                format!("{:.1}%", 100.0 * r.locality_rate()),
            ];
            row.extend(r.locality.iter().map(|n| n.to_string()));
            row.extend([
                format!("{:.1}", r.makespan_s),
                format!("{:.1}", r.mean_job_time_s),
                format!("{:.0}", r.data_locality_cost),
                format!("{:.3}", r.fairness_distance),
                format!("{:.3}", r.decision_pct(0.5)),
                format!("{:.3}", r.decision_pct(0.99)),
            ]);
            row
        })
        .collect();
    print!(
        "{}",
        table(
            &[
                "SCHEDULER",
                "LOCAL",
                "CACHE",
                "NODE",
                "C-RACK",
                "RACK",
                "OFF",
                "MAKESPAN s",
                "MEAN JOB s",
                "DLC",
                "FAIRNESS",
                "DECIDE p50 ms",
                "p99 ms",
            ],
            &rows
        )
    );
    Ok(())
}
