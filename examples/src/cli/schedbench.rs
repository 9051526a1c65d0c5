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
    // The LSAP solver alone on the LSAP paper's square sizes (it reports 7,
    // 130, 450 and 1000 ms for them).
    let mut solver = Vec::new();
    for (n, paper_ms) in [(100usize, 7.0), (500, 130.0), (1700, 450.0), (2900, 1000.0)] {
        let ms = common::sched::hungarian::bench(n, 7).as_secs_f64() * 1e3;
        solver.push(vec![
            n.to_string(),
            format!("{ms:.1}"),
            format!("{paper_ms:.0}"),
            format!("{:.1}x", paper_ms / ms.max(1e-9)),
        ]);
        out.push(serde_json::json!({"solver": "lsap", "n": n, "ms": ms, "paper_ms": paper_ms}));
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
        println!();
        print!(
            "{}",
            table(&["LSAP N", "SOLVE ms", "PAPER ms", "SPEED-UP"], &solver)
        );
    }
    Ok(())
}
