//! `mr bench sched`: decision latency of each policy on synthetic clusters,
//! per heartbeat and per batch, with no cluster running.

use crate::output::table;
use common::sched::registry::NAMES;
use common::sched::synth::{decision_latency, Shape};
use common::sched::SchedulerSpec;

pub fn run(nodes: &[usize], schedulers: &[String], as_json: bool) -> anyhow::Result<()> {
    let names: Vec<String> = if schedulers.is_empty() {
        NAMES.iter().map(|s| s.to_string()).collect()
    } else {
        schedulers.to_vec()
    };
    let mut rows = Vec::new();
    let mut out = Vec::new();
    for name in &names {
        for &n in nodes {
            let shape = Shape {
                nodes: n,
                racks: (n / 20).max(2),
                slots: 4,
                idle: 0.5,
                jobs: 10,
                tasks: n * 2,
                replication: 3,
                seed: 1,
            };
            let (hb, batch) = decision_latency(&SchedulerSpec::new(name), shape)?;
            rows.push(vec![
                name.clone(),
                n.to_string(),
                format!("{:.1}", hb * 1e6),
                format!("{:.2}", batch * 1e3),
            ]);
            out.push(serde_json::json!({"scheduler": name, "nodes": n,
                "heartbeat_us": hb * 1e6, "batch_ms": batch * 1e3}));
        }
    }
    if as_json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!(
            "{}",
            table(
                &["SCHEDULER", "NODES", "PER HEARTBEAT us", "BATCH ms"],
                &rows
            )
        );
    }
    Ok(())
}
