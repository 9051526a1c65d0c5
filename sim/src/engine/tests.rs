use super::*;
use sched::{build, SchedulerSpec};

const MIB: f64 = (1 << 20) as f64;

/// Everything a run decides, not how long it took.
fn history(r: &SimResult) -> String {
    format!(
        "{:?} {} {} {:.9} {:.9} {:.9}",
        r.locality, r.decisions, r.events, r.makespan_s, r.mean_job_time_s, r.fairness_distance
    )
}

/// The locality index the engine keeps in its view changes no
/// decision of the heartbeat policies: a run without it (every policy
/// scans the pending tasks) has the same history, with jobs arriving,
/// blocks read again and caches filling and evicting. (lsap and
/// lsap-fair prune their problem with it: the same optimum, ties
/// possibly broken otherwise; see `sched::pruned`.)
#[test]
fn the_index_changes_no_history() {
    let cfg = SimConfig {
        nodes: 60,
        racks: 3,
        jobs: 4,
        interarrival_s: 1.5,
        cache_size: 256 << 20,
        blocks: Some(150),
        tasks: Some(400),
        seed: 11,
        ..SimConfig::default()
    };
    let mut cache_hits = 0;
    for name in sched::registry::NAMES {
        if ["lsap", "lsap-fair"].contains(name) {
            continue;
        }
        let run = |indexed: bool| {
            let s = build(&SchedulerSpec::new(name)).unwrap();
            let e = Engine::new(cfg.clone(), s);
            let e = if indexed {
                e
            } else {
                e.without_locality_index()
            };
            e.run().unwrap()
        };
        let (a, b) = (run(true), run(false));
        assert_eq!(history(&a), history(&b), "{name}");
        assert_eq!(a.maps(), 400, "{name}");
        cache_hits += a.locality[0];
    }
    assert!(cache_hits > 0, "the caches never served a map");
}

/// Concurrent remote reads share bandwidth when the model says so:
/// later job ends; a job's tail after its last task moves its end by
/// exactly the tail.
#[test]
fn shared_reads_and_the_tail_lengthen_jobs() {
    let base = SimConfig {
        nodes: 6,
        racks: 2,
        slots: 2,
        replication: 1,
        idle_ratio: 1.0,
        tasks: Some(48),
        jobs: 4,
        seed: 5,
        ..SimConfig::default()
    };
    let run = |cfg: &SimConfig| {
        Engine::new(cfg.clone(), build(&SchedulerSpec::new("fifo")).unwrap())
            .run()
            .unwrap()
    };
    let alone = run(&base);
    assert!(
        alone.locality[2..].iter().sum::<u64>() > 0,
        "{:?}",
        alone.locality
    );
    let mut shared = base.clone();
    shared.model.shared_reads = true;
    let s = run(&shared);
    assert!(
        s.mean_job_time_s > alone.mean_job_time_s,
        "{} vs {}",
        s.mean_job_time_s,
        alone.mean_job_time_s
    );
    let mut tail = base.clone();
    tail.model.tail_fixed_s = 2.0;
    let t = run(&tail);
    assert!((t.mean_job_time_s - alone.mean_job_time_s - 2.0).abs() < 1e-9);
}

fn exact(nodes: usize, workload: Vec<crate::config::JobSpec>) -> SimConfig {
    let mut cfg = SimConfig {
        nodes,
        racks: 1,
        slots: 1,
        reduce_slots: 1,
        replication: nodes,
        idle_ratio: 1.0,
        blocks: Some(1),
        heartbeat_s: 3.0,
        workload,
        ..SimConfig::default()
    };
    cfg.model.jitter = 0.0;
    cfg.model.shared_reads = true;
    cfg
}

fn fifo(cfg: &SimConfig) -> SimResult {
    Engine::new(cfg.clone(), build(&SchedulerSpec::new("fifo")).unwrap())
        .run()
        .unwrap()
}

/// One job by hand: two maps of one 64 MiB block stored on both nodes
/// (node-local: 64 x 0.015 s compute + 64 MiB at 1.6 GB/s), started at
/// its arrival (the master offers the idle nodes at once); then its one
/// reduce fetches the other node's half of 120 MB of shuffle over the
/// ports (60 MB at 120 MB/s: 0.5 s), then reduces 0.2 s + 120 MB in
/// MiB x 0.01 s.
#[test]
fn a_job_with_a_reduce_by_hand() {
    let job = crate::config::JobSpec {
        arrival_s: 1.0,
        maps: 2,
        reduces: 1,
        shuffle_bytes: 120_000_000,
        blocks: vec![0, 0],
    };
    let mut cfg = exact(2, vec![job]);
    cfg.model.reduce_fixed_s = 0.2;
    cfg.model.reduce_s_per_mib = 0.01;
    let b = (64u64 << 20) as f64;
    let map = 64.0 * 0.015 + b / 1.6e9;
    let reduce = 0.5 + 0.2 + 120e6 / MIB * 0.01;
    let r = fifo(&cfg);
    assert!(
        (r.mean_job_time_s - (map + reduce)).abs() < 1e-9,
        "{} vs {}",
        r.mean_job_time_s,
        map + reduce
    );
    assert_eq!(r.locality[1], 2);
    // Without reduce slots the schedule is refused, not stuck.
    cfg.reduce_slots = 0;
    assert!(crate::run(&cfg, &SchedulerSpec::new("fifo"))
        .unwrap_err()
        .contains("--reduce-slots"));
}

/// Two reads off one node share its port out: each at half the rate
/// while both run. Node 0 holds the block; nodes 1 and 2 read it at
/// once (rack-local), 64 MiB each over a 120 MB/s port: 2 x 64 MiB /
/// 120 MB/s, then compute. A third map is node-local on node 0.
#[test]
fn concurrent_reads_share_the_source_port() {
    let job = crate::config::JobSpec {
        arrival_s: 0.0,
        maps: 3,
        blocks: vec![0, 0, 0],
        ..Default::default()
    };
    let mut cfg = exact(3, vec![job]);
    cfg.replication = 1;
    let b = (64u64 << 20) as f64;
    let r = fifo(&cfg);
    let compute = 64.0 * 0.015;
    let shared = 2.0 * b / 120e6 + compute;
    // The job ends with its last map: the two remote ones.
    assert!(
        (r.makespan_s - shared).abs() < 1e-9,
        "{} vs {shared}",
        r.makespan_s
    );
    assert_eq!(r.locality, [0, 1, 0, 2, 0]);
}

/// With offers a job's first map starts at its arrival; with Hadoop's
/// heartbeats it waits for the node's heartbeat.
#[test]
fn offers_launch_at_once_heartbeats_wait() {
    let job = crate::config::JobSpec {
        arrival_s: 0.5,
        maps: 1,
        blocks: vec![0],
        ..Default::default()
    };
    let mut cfg = exact(1, vec![job]);
    let alone = cfg
        .model
        .mean_duration(Locality::NodeLocal, cfg.block_size, 0);
    let r = fifo(&cfg);
    assert!((r.mean_job_time_s - alone).abs() < 1e-9);
    assert!(r.map_response_s.abs() < 1e-12);
    cfg.offers = false;
    let r = fifo(&cfg);
    assert!(r.map_response_s > 0.0, "{}", r.map_response_s);
    assert!((r.mean_job_time_s - alone - r.map_response_s).abs() < 1e-9);
}
