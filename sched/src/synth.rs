//! Synthetic cluster views: a seeded cluster of `nodes` in racks with
//! replicated blocks and pending maps, for decision-latency benchmarks and
//! property tests (and later the simulator's start state).

use super::*;
use std::collections::HashSet;

/// Shape of a synthetic view.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub nodes: usize,
    pub racks: usize,
    pub slots: u32,
    /// Fraction of map slots free.
    pub idle: f64,
    pub jobs: usize,
    pub tasks: usize,
    pub replication: usize,
    pub seed: u64,
}

pub fn view(s: Shape) -> ClusterView {
    let mut rng = fastrand::Rng::with_seed(s.seed);
    let racks = s.racks.max(1);
    let nodes: Vec<NodeView> = (0..s.nodes)
        .map(|i| {
            let free = (0..s.slots).filter(|_| rng.f64() < s.idle).count() as u32;
            NodeView {
                name: format!("n{i}"),
                rack: format!("r{}", i % racks),
                map_slots: s.slots,
                reduce_slots: 1,
                free_map_slots: free,
                free_reduce_slots: 1,
                resources: Resources::default(),
                cached_blocks: HashSet::new(),
                running: vec![],
            }
        })
        .collect();
    let jobs_n = s.jobs.max(1);
    let mut pending = Vec::with_capacity(s.tasks);
    for t in 0..s.tasks {
        let job = (t % jobs_n) as u64 + 1;
        let mut reps: Vec<String> = Vec::new();
        while reps.len() < s.replication.min(s.nodes) {
            let n = format!("n{}", rng.usize(..s.nodes));
            if !reps.contains(&n) {
                reps.push(n);
            }
        }
        let cached = if rng.f64() < 0.2 {
            vec![reps[0].clone()]
        } else {
            vec![]
        };
        pending.push(PendingTask {
            id: TaskId {
                job,
                kind: TaskKind::Map,
                index: (t / jobs_n) as u32,
            },
            job,
            kind: TaskKind::Map,
            block: Some(t as u64),
            replicas: reps,
            cached_on: cached,
            input_bytes: 64 << 20,
            avoid: vec![],
            runnable_since: 0.0,
        });
    }
    let jobs = (0..jobs_n)
        .map(|j| {
            let maps = pending.iter().filter(|p| p.job == j as u64 + 1).count() as u32;
            JobView {
                id: j as u64 + 1,
                name: "synthetic".into(),
                submit_time: j as f64,
                pool: format!("q{}", j % 3 + 1),
                order: j as u64 + 1,
                maps_total: maps,
                reduces_total: 0,
                done: 0,
                running: 0,
                pending: maps,
                running_maps: 0,
                pending_maps: maps,
                avg_map_time: 0.0,
            }
        })
        .collect();
    ClusterView::new(0.0, 1.0, nodes, jobs, pending, DEFAULT_BANDWIDTHS)
}

/// Decision latency of one policy: mean seconds per heartbeat decision
/// (every node heartbeating once) and seconds of one batch decision.
pub fn decision_latency(spec: &SchedulerSpec, shape: Shape) -> Result<(f64, f64), SchedError> {
    let v = view(shape);
    let mut s = build(spec)?;
    for j in &v.jobs {
        s.on_job_added(j);
    }
    // Twenty heartbeats are enough for a mean, and keep batch policies
    // (which solve the whole cluster on every call) from taking minutes.
    let sample: Vec<&NodeView> = v.nodes.iter().take(20).collect();
    // One call before the clock starts: a learning policy trains before its
    // first decision (CLQLMRS's warm-up episodes), a one-off cost that is
    // not a decision's.
    std::hint::black_box(s.assign(&v, Trigger::JobAdded(0)));
    let t = std::time::Instant::now();
    for n in &sample {
        std::hint::black_box(s.assign(&v, Trigger::Heartbeat(n.name.clone())));
    }
    let per_hb = t.elapsed().as_secs_f64() / sample.len().max(1) as f64;
    let mut s = build(spec)?;
    std::hint::black_box(s.assign(&v, Trigger::JobAdded(0)));
    let t = std::time::Instant::now();
    std::hint::black_box(s.assign(&v, Trigger::JobAdded(1)));
    Ok((per_hb, t.elapsed().as_secs_f64()))
}
