//! The event loop's determinism and the LSAP paper's headline figure.

use sched::SchedulerSpec;
use sim::{run, SimConfig, SimResult};

fn cfg(nodes: usize, seed: u64) -> SimConfig {
    SimConfig {
        nodes,
        racks: SimConfig::default_racks(nodes),
        seed,
        ..SimConfig::default()
    }
}

/// Everything but the wall-clock figures.
fn history(r: &SimResult) -> (String, [u64; 5], u64, u64, String) {
    (
        r.scheduler.clone(),
        r.locality,
        r.decisions,
        r.events,
        format!(
            "{:.9} {:.9} {:.9}",
            r.makespan_s, r.mean_job_time_s, r.fairness_distance
        ),
    )
}

#[test]
fn a_seed_gives_one_history_for_every_policy() {
    let mut c = cfg(60, 7);
    c.jobs = 3;
    c.interarrival_s = 2.0;
    c.cache_size = 256 << 20;
    c.blocks = Some(40);
    for name in sched::registry::NAMES {
        let spec = SchedulerSpec::new(name);
        let a = run(&c, &spec).unwrap();
        let b = run(&c, &spec).unwrap();
        assert_eq!(history(&a), history(&b), "{name} is not deterministic");
        assert_eq!(a.maps(), c.task_count() as u64, "{name} lost tasks");
    }
    let a = run(&c, &SchedulerSpec::new("fifo")).unwrap();
    c.seed = 8;
    let b = run(&c, &SchedulerSpec::new("fifo")).unwrap();
    assert_ne!(history(&a), history(&b), "the seed changes nothing");
}

#[test]
fn repeated_blocks_become_cache_local() {
    let mut c = cfg(40, 3);
    c.jobs = 4;
    c.interarrival_s = 30.0;
    c.blocks = Some(20);
    c.tasks = Some(80);
    c.cache_size = 1 << 30;
    let r = run(&c, &SchedulerSpec::new("fifo")).unwrap();
    assert!(r.locality[0] > 0, "no cache-local map: {:?}", r.locality);
    c.cache_size = 0;
    let r = run(&c, &SchedulerSpec::new("fifo")).unwrap();
    assert_eq!(r.locality[0], 0);
}

/// LSAP paper section 4.2, Fig. 3: 4 slots, replication 3, half the slots
/// idle, as many tasks as idle slots: lsap-sched about 97%, dl-sched 83%.
#[test]
fn lsap_beats_fifo_on_the_papers_setup() {
    // The paper's Hadoop: work reaches a node on its own heartbeat.
    let c = SimConfig {
        offers: false,
        ..cfg(300, 1)
    };
    let fifo = run(&c, &SchedulerSpec::new("fifo")).unwrap();
    let lsap = run(&c, &SchedulerSpec::new("lsap")).unwrap();
    assert!(
        lsap.locality_rate() >= 0.93,
        "lsap {}",
        lsap.locality_rate()
    );
    assert!(
        lsap.locality_rate() - fifo.locality_rate() >= 0.08,
        "lsap {} fifo {}",
        lsap.locality_rate(),
        fifo.locality_rate()
    );
}

#[test]
fn bad_configs_are_refused() {
    let bad = |f: &dyn Fn(&mut SimConfig)| {
        let mut c = cfg(10, 1);
        f(&mut c);
        run(&c, &SchedulerSpec::new("fifo")).unwrap_err()
    };
    assert!(bad(&|c| c.nodes = 0).contains("--nodes"));
    assert!(bad(&|c| c.replication = 11).contains("--replication"));
    assert!(bad(&|c| c.idle_ratio = 1.5).contains("--idle-ratio"));
    assert!(bad(&|c| c.jobs = 1000).contains("--jobs"));
    assert!(run(&cfg(10, 1), &SchedulerSpec::new("nope")).is_err());
}
