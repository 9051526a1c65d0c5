//! Properties every registered policy must keep, over random cluster views:
//! never more assignments than free slots, never a task twice, never a node
//! outside the view, and no pending task starves while slots stay free.

use common::sched::registry::NAMES;
use common::sched::*;
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone)]
struct Spec {
    racks: usize,
    free: Vec<(u32, u32)>,
    jobs: Vec<(usize, usize)>,
    replicas: Vec<Vec<usize>>,
    seed: u64,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        1usize..4,
        prop::collection::vec((0u32..4, 0u32..3), 1..12),
        prop::collection::vec((1usize..12, 0usize..3), 1..5),
        any::<u64>(),
    )
        .prop_flat_map(|(racks, free, jobs, seed)| {
            let n = free.len();
            let maps: usize = jobs.iter().map(|j| j.0).sum();
            let reps = prop::collection::vec(prop::collection::vec(0..n, 1..4), maps);
            (Just(racks), Just(free), Just(jobs), reps, Just(seed))
        })
        .prop_map(|(racks, free, jobs, replicas, seed)| Spec {
            racks,
            free,
            jobs,
            replicas,
            seed,
        })
}

fn view(s: &Spec) -> ClusterView {
    let nodes: Vec<NodeView> = s
        .free
        .iter()
        .enumerate()
        .map(|(i, (m, r))| NodeView {
            name: format!("n{i}"),
            rack: format!("r{}", i % s.racks),
            map_slots: *m,
            reduce_slots: *r,
            free_map_slots: *m,
            free_reduce_slots: *r,
            resources: Resources::default(),
            cached_blocks: HashSet::new(),
            running: vec![],
        })
        .collect();
    let mut pending = Vec::new();
    let mut jobs = Vec::new();
    let mut block = 0u64;
    for (j, (maps, reduces)) in s.jobs.iter().enumerate() {
        let id = j as u64 + 1;
        for index in 0..*maps {
            let reps: Vec<String> = s.replicas[block as usize]
                .iter()
                .map(|i| format!("n{i}"))
                .collect();
            let cached = if block.is_multiple_of(3) {
                vec![reps[0].clone()]
            } else {
                vec![]
            };
            pending.push(PendingTask {
                id: TaskId {
                    job: id,
                    kind: TaskKind::Map,
                    index: index as u32,
                },
                job: id,
                kind: TaskKind::Map,
                block: Some(block),
                replicas: reps,
                cached_on: cached,
                input_bytes: 64 << 20,
                avoid: vec![],
                runnable_since: 0.0,
            });
            block += 1;
        }
        for index in 0..*reduces {
            pending.push(PendingTask {
                id: TaskId {
                    job: id,
                    kind: TaskKind::Reduce,
                    index: index as u32,
                },
                job: id,
                kind: TaskKind::Reduce,
                block: None,
                replicas: vec![],
                cached_on: vec![],
                input_bytes: 0,
                avoid: vec![],
                runnable_since: 0.0,
            });
        }
        jobs.push(JobView {
            id,
            name: "job".into(),
            submit_time: j as f64,
            pool: format!("q{}", j % 3 + 1),
            order: id,
            maps_total: *maps as u32,
            reduces_total: *reduces as u32,
            done: 0,
            running: 0,
            pending: (*maps + *reduces) as u32,
            running_maps: 0,
            pending_maps: *maps as u32,
            avg_task_time: 0.0,
        });
    }
    ClusterView {
        now: 0.0,
        heartbeat_interval: 1.0,
        nodes,
        jobs,
        pending,
        rack_bandwidth: 125e6,
        cross_rack_bandwidth: 37.5e6,
        node_index: Default::default(),
    }
    .index()
}

/// Checks one decision against the view and applies it.
fn apply(v: &mut ClusterView, a: &[Assignment], name: &str) -> Result<(), TestCaseError> {
    let mut seen = HashSet::new();
    let mut maps: HashMap<&str, u32> = HashMap::new();
    let mut reduces: HashMap<&str, u32> = HashMap::new();
    for x in a {
        prop_assert!(
            seen.insert(x.task),
            "{name}: task {:?} assigned twice",
            x.task
        );
        let node = v.node(&x.node);
        prop_assert!(node.is_some(), "{name}: unknown node {}", x.node);
        prop_assert!(
            v.pending.iter().any(|t| t.id == x.task),
            "{name}: {:?} is not pending",
            x.task
        );
        match x.task.kind {
            TaskKind::Map => *maps.entry(&x.node).or_default() += 1,
            TaskKind::Reduce => *reduces.entry(&x.node).or_default() += 1,
        }
    }
    for n in &v.nodes {
        let m = maps.get(n.name.as_str()).copied().unwrap_or(0);
        let r = reduces.get(n.name.as_str()).copied().unwrap_or(0);
        prop_assert!(
            m <= n.free_map_slots,
            "{name}: {m} maps on {} with {} free",
            n.name,
            n.free_map_slots
        );
        prop_assert!(
            r <= n.free_reduce_slots,
            "{name}: {r} reduces on {} with {} free",
            n.name,
            n.free_reduce_slots
        );
    }
    let assigned: HashSet<TaskId> = a.iter().map(|x| x.task).collect();
    v.pending.retain(|t| !assigned.contains(&t.id));
    for x in a {
        let n = v
            .nodes
            .iter_mut()
            .find(|n| n.name == x.node)
            .expect("checked");
        match x.task.kind {
            TaskKind::Map => n.free_map_slots -= 1,
            TaskKind::Reduce => n.free_reduce_slots -= 1,
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_policy_keeps_the_invariants(s in spec()) {
        for name in NAMES {
            let mut sched = build(&SchedulerSpec::new(name)).expect("defaults build");
            let mut v = view(&s);
            for j in v.jobs.clone() {
                sched.on_job_added(&j);
            }
            let a = sched.assign(&v, Trigger::JobAdded(1));
            apply(&mut v, &a, name)?;
            // Heartbeats from every node, time moving on, nothing finishing:
            // slots only fill up.
            let mut rng = s.seed;
            for round in 0..60 {
                v.now = round as f64 * v.heartbeat_interval;
                let mut order: Vec<String> = v.nodes.iter().map(|n| n.name.clone()).collect();
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let k = (rng >> 33) as usize % order.len();
                order.rotate_left(k);
                for n in order {
                    let a = sched.assign(&v, Trigger::Heartbeat(n));
                    apply(&mut v, &a, name)?;
                }
            }
            // No starvation: a pending map with a free map slot anywhere, or a
            // pending reduce with a free reduce slot anywhere, is a stall.
            let free_maps: u32 = v.nodes.iter().map(|n| n.free_map_slots).sum();
            let free_reduces: u32 = v.nodes.iter().map(|n| n.free_reduce_slots).sum();
            let maps_left = v.pending.iter().filter(|t| t.kind == TaskKind::Map).count();
            let reduces_left = v.pending.iter().filter(|t| t.kind == TaskKind::Reduce).count();
            prop_assert!(free_maps == 0 || maps_left == 0, "{name}: {maps_left} maps wait with {free_maps} map slots free");
            prop_assert!(free_reduces == 0 || reduces_left == 0, "{name}: {reduces_left} reduces wait with {free_reduces} reduce slots free");
        }
    }
}
