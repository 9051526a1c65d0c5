//! The kept view follows the tables through the events that patch it
//! rather than rebuild it: each check is on the view the next decision
//! gets, and holds in release builds too (debug builds also compare every
//! kept view with a fresh build, in `view.rs`).

use super::MasterState;
use crate::cluster::ResourceVector;
use crate::jobs::{Job, JobSpec};
use common::config::ClusterConfig;
use protocol::{Heartbeat, Registration, TaskRef, TaskReport};
use sched::TaskKind;
use std::time::{Duration, Instant};

fn state(workers: &[&str]) -> (MasterState, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "mr-view-{}-{}",
        std::process::id(),
        fastrand::u64(..)
    ));
    let mut toml = format!(
        "token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = {:?}\n",
        dir.join("m")
    );
    for (i, w) in workers.iter().enumerate() {
        toml += &format!(
            "[[workers]]\nname = \"{w}\"\naddr = \"127.0.0.1:{}\"\ndata_dir = \"/x{i}\"\n",
            7101 + i
        );
    }
    let cfg = ClusterConfig::parse(&toml).unwrap();
    (MasterState::open(cfg, Instant::now()).unwrap(), dir)
}

fn register(st: &mut MasterState, name: &str, now: Instant) -> u64 {
    st.on_register(
        Registration {
            protocol_version: common::PROTOCOL_VERSION,
            name: name.into(),
            addr: format!("{name}:1"),
            rack: "r1".into(),
            map_slots: 1,
            reduce_slots: 1,
            ..Default::default()
        },
        now,
    )
    .unwrap()
    .epoch
}

fn beat(st: &mut MasterState, name: &str, epoch: u64, cpu: f64, now: Instant) {
    st.on_heartbeat(
        Heartbeat {
            name: name.into(),
            epoch,
            resources: Some(ResourceVector {
                cpu_pct: cpu,
                ..Default::default()
            }),
            ..Default::default()
        },
        now,
    );
}

/// The view the next decision gets, given back for the one after.
fn next_view(st: &mut MasterState, now: Instant) -> sched::ClusterView {
    let v = st.event_view(now).expect("a job is active");
    st.keep_view(v.clone());
    v
}

#[test]
fn heartbeats_registrations_deaths_and_reports_reach_the_kept_view() {
    let (mut st, dir) = state(&["a", "b", "c"]);
    let t0 = Instant::now();
    let ea = register(&mut st, "a", t0);
    let ec = register(&mut st, "c", t0);
    // Six maps reading nothing: one runs on each node as it comes.
    let spec = JobSpec::wordcount_for_tests(1);
    st.jobs
        .insert_for_tests(Job::new(1, 1, spec, vec![], 6, "fifo", t0));
    let v = next_view(&mut st, t0);
    assert_eq!(
        v.nodes.iter().map(|n| &n.name).collect::<Vec<_>>(),
        ["a", "c"]
    );

    // A heartbeat's resource vector reaches its node, and only its node.
    beat(&mut st, "a", ea, 42.0, t0);
    let v = next_view(&mut st, t0);
    assert_eq!(v.node("a").unwrap().resources.cpu_pct, 42.0);
    assert_eq!(v.node("c").unwrap().resources.cpu_pct, 0.0);

    // A worker joining goes in at its place by name, with the name index.
    let eb = register(&mut st, "b", t0);
    let v = next_view(&mut st, t0);
    assert_eq!(
        v.nodes.iter().map(|n| &n.name).collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
    assert_eq!(v.position("c"), Some(2));

    // Each node got a map by now (launch on registration): the report of
    // a's frees its slot and counts as done.
    let running = |v: &sched::ClusterView, n: &str| v.node(n).unwrap().running.clone();
    let on_a = running(&v, "a");
    assert_eq!(on_a.len(), 1, "{v:?}");
    assert_eq!(on_a[0].id.kind, TaskKind::Map);
    st.on_task_report(
        TaskReport {
            worker: "a".into(),
            epoch: ea,
            task: TaskRef {
                job_id: 1,
                is_map: true,
                index: on_a[0].id.index,
                attempt: 0,
            },
            succeeded: true,
            ..Default::default()
        },
        t0 + Duration::from_secs(1),
    );
    let v = next_view(&mut st, t0 + Duration::from_secs(1));
    assert_eq!(v.jobs[0].done, 1);
    // The freed slot was offered at once: a's runs the next map.
    assert_eq!(running(&v, "a").len(), 1);
    assert_ne!(running(&v, "a")[0].id.index, on_a[0].id.index);

    // A worker leaving takes its node and its attempt's slot with it: the
    // map goes back to pending (and to a free slot, if any).
    st.on_heartbeat(
        Heartbeat {
            name: "b".into(),
            epoch: eb,
            leaving: true,
            ..Default::default()
        },
        t0 + Duration::from_secs(2),
    );
    let v = next_view(&mut st, t0 + Duration::from_secs(2));
    assert_eq!(
        v.nodes.iter().map(|n| &n.name).collect::<Vec<_>>(),
        ["a", "c"]
    );
    assert_eq!(v.position("c"), Some(1));
    let _ = ec;
    let _ = std::fs::remove_dir_all(dir);
}
