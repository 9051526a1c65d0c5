//! `mr bench sched`: decision latency of each policy on synthetic clusters,
//! per heartbeat and per batch, with no cluster running; the LSAP solver
//! alone at the LSAP paper's sizes; with `--at-scale`, the batch policies'
//! first decision on a 5000-node cluster. Timings are figures to read, not
//! pass/fail checks, so they live here rather than in the unit tests,
//! where they would only slow the suite and assert nothing.

use crate::table::table;
use sched::registry::NAMES;
use sched::synth::{decision_latency, view, Shape};
use sched::{build, SchedulerSpec, Trigger};

pub fn run(
    nodes: &[usize],
    schedulers: &[String],
    at_scale: bool,
    as_json: bool,
) -> anyhow::Result<()> {
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
        // Best of three matrices: the least disturbed by the machine's
        // other work.
        let ms = (0..3)
            .map(|seed| sched::hungarian::bench(n, seed))
            .min()
            .unwrap_or_default()
            .as_secs_f64()
            * 1e3;
        solver.push(vec![
            n.to_string(),
            format!("{ms:.1}"),
            format!("{paper_ms:.0}"),
            format!("{:.1}x", paper_ms / ms.max(1e-9)),
        ]);
        out.push(serde_json::json!({"solver": "lsap", "n": n, "ms": ms, "paper_ms": paper_ms}));
    }
    let mut scale = Vec::new();
    if at_scale {
        // The first decision of `mr sim --nodes 5000 --tasks 100000`:
        // every idle slot (about 10 000) against every pending map, with
        // the simulator's locality index.
        let v = view(Shape {
            nodes: 5000,
            racks: 250,
            slots: 4,
            idle: 0.5,
            jobs: 1,
            tasks: 100_000,
            replication: 3,
            seed: 1,
        })
        .with_locality_index();
        let slots: u32 = v.nodes.iter().map(|n| n.free_map_slots).sum();
        let batch = ["lsap", "lsap-fair"];
        for name in batch
            .iter()
            .filter(|n| schedulers.is_empty() || schedulers.iter().any(|s| s == *n))
        {
            let mut s = build(&SchedulerSpec::new(name))?;
            let t = std::time::Instant::now();
            let filled = s.assign(&v, Trigger::JobAdded(1)).len();
            let ms = t.elapsed().as_secs_f64() * 1e3;
            scale.push(vec![
                name.to_string(),
                format!("{filled} of {slots}"),
                format!("{ms:.0}"),
            ]);
            out.push(
                serde_json::json!({"at_scale": name, "nodes": 5000, "tasks": 100_000,
                "idle_slots": slots, "filled": filled, "ms": ms}),
            );
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
        println!();
        print!(
            "{}",
            table(&["LSAP N", "SOLVE ms", "PAPER ms", "SPEED-UP"], &solver)
        );
        if !scale.is_empty() {
            println!();
            println!("5000 nodes, 100000 pending maps, first batch decision:");
            print!(
                "{}",
                table(&["SCHEDULER", "SLOTS FILLED", "DECISION ms"], &scale)
            );
        }
    }
    Ok(())
}
