//! Decommissioning (`blocks/decommission.rs`): the state machine, what the
//! replication scan copies and where, that a leaving worker gets no new
//! block or task, what its heartbeats are told, and the durable set.

use super::*;
use crate::blocks::files::{AddBlock, CreateFile};
use crate::blocks::namespace::{Edit, FileMeta};
use crate::cluster::leaving::AdminState;
use protocol::{BlockInfo, Heartbeat};
use std::path::PathBuf;

const WORKERS: [&str; 4] = ["w1", "w2", "w3", "w4"];

fn config(dir: &std::path::Path) -> ClusterConfig {
    config_of(dir, &WORKERS)
}

fn config_of(dir: &std::path::Path, workers: &[&str]) -> ClusterConfig {
    let mut toml = format!(
        "token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = {:?}\n",
        dir.join("m")
    );
    for (i, w) in workers.iter().enumerate() {
        toml += &format!(
            "[[workers]]\nname = \"{w}\"\naddr = \"127.0.0.1:{}\"\ndata_dir = \"/x{w}\"\n",
            7101 + i
        );
    }
    ClusterConfig::parse(&toml).unwrap()
}

fn meta(id: u64) -> BlockInfo {
    BlockInfo {
        id,
        len: 100,
        crc32c: 1,
        generation: 0,
    }
}

fn dir(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "mr-decom-{tag}-{}-{}",
        std::process::id(),
        fastrand::u64(..)
    ))
}

/// A master restarted over a namespace of `files` (path, block,
/// replication), out of safe mode.
fn master(dir: &std::path::Path, files: &[(&str, u64, u32)]) -> MasterState {
    let mut st = MasterState::open(config(dir), Instant::now()).unwrap();
    for (path, id, replication) in files {
        st.blocks
            .commit(Edit::AddFile {
                path: path.to_string(),
                file: FileMeta {
                    mode: crate::blocks::namespace::FILE_MODE,
                    owner: String::new(),
                    replication: *replication,
                    block_size: 100,
                    blocks: vec![meta(*id)],
                    mtime_ms: 1,
                },
            })
            .unwrap();
    }
    drop(st);
    let mut st = MasterState::open(config(dir), Instant::now()).unwrap();
    st.safe_mode(SafeModeAction::Leave, Instant::now());
    st
}

/// Registers `name` holding `blocks`; returns its epoch.
fn register(st: &mut MasterState, name: &str, blocks: &[u64], now: Instant) -> u64 {
    let rack = if name == "w1" || name == "w3" {
        "r1"
    } else {
        "r2"
    };
    st.on_register(
        Registration {
            protocol_version: common::PROTOCOL_VERSION,
            name: name.into(),
            addr: format!("{name}:1"),
            rack: rack.into(),
            map_slots: 2,
            reduce_slots: 1,
            blocks: blocks.iter().map(|&id| meta(id)).collect(),
            ..Default::default()
        },
        now,
    )
    .unwrap()
    .epoch
}

fn heartbeat(st: &mut MasterState, name: &str, epoch: u64, added: &[u64], now: Instant) -> Reply {
    st.on_heartbeat(
        Heartbeat {
            name: name.into(),
            epoch,
            free_map_slots: 2,
            free_reduce_slots: 1,
            blocks_added: added.iter().map(|&id| meta(id)).collect(),
            ..Default::default()
        },
        now,
    )
}

/// Every command queued for any worker: (worker, command).
fn take_all(st: &mut MasterState) -> Vec<(String, Command)> {
    WORKERS
        .iter()
        .flat_map(|w| {
            st.cluster
                .take_commands(w)
                .into_iter()
                .map(|c| (w.to_string(), c))
        })
        .collect()
}

/// The replications among `cmds`: (block, source, target names).
fn replications(cmds: &[(String, Command)]) -> Vec<(u64, String, Vec<String>)> {
    let mut v: Vec<_> = cmds
        .iter()
        .filter_map(|(w, c)| match c {
            Command::Replicate { block, targets, .. } => Some((
                block.id,
                w.clone(),
                targets
                    .iter()
                    .map(|a| a.trim_end_matches(":1").to_string())
                    .collect(),
            )),
            _ => None,
        })
        .collect();
    v.sort();
    v
}

fn deletes(cmds: &[(String, Command)]) -> Vec<(String, u64)> {
    cmds.iter()
        .filter_map(|(w, c)| match c {
            Command::DeleteBlock(id) => Some((w.clone(), *id)),
            _ => None,
        })
        .collect()
}

fn state(st: &MasterState, w: &str) -> (AdminState, u64) {
    let s = st.cluster_status();
    let w = s.workers.iter().find(|s| s.name == w).unwrap();
    (w.admin_state, w.blocks_under_replicated)
}

/// The whole path: decommissioning, the scan copying each of the worker's
/// blocks from a holder (it may be the worker itself) to a worker that is
/// neither leaving nor a holder, its heartbeats told it may not go yet,
/// then decommissioned once the copies are reported, its own replicas
/// never trimmed; and a recommission trims the excess copies again.
#[test]
fn a_decommissioned_workers_blocks_are_copied_before_it_is_decommissioned() {
    let d = dir("path");
    let mut st = master(&d, &[("/a", 5, 2), ("/b", 6, 2), ("/c", 7, 2)]);
    let t0 = Instant::now();
    let e1 = register(&mut st, "w1", &[5, 6], t0);
    register(&mut st, "w2", &[5, 7], t0);
    register(&mut st, "w3", &[6, 7], t0);
    register(&mut st, "w4", &[], t0);
    st.on_tick(t0);
    assert!(replications(&take_all(&mut st)).is_empty());
    assert_eq!(state(&st, "w1"), (AdminState::Normal, 0));
    assert!(!heartbeat(&mut st, "w1", e1, &[], t0).stop.unsafe_to_stop);

    let d1 = st.decommission("w1", true, t0).unwrap();
    assert_eq!(
        (d1.state, d1.blocks_under_replicated),
        (AdminState::Decommissioning, 2)
    );
    let r = heartbeat(&mut st, "w1", e1, &[], t0);
    assert!(r.stop.unsafe_to_stop && r.stop.blocks_to_copy == 2, "{r:?}");
    st.on_tick(t0);
    let cmds = take_all(&mut st);
    let reps = replications(&cmds);
    assert_eq!(reps.len(), 2, "{cmds:?}");
    // Block 5 (on w1, w2) may go to w3 or w4; block 6 (on w1, w3) to w2
    // or w4: never to the leaving w1, never to a holder.
    for (block, source, targets) in &reps {
        let holders: &[&str] = if *block == 5 {
            &["w1", "w2"]
        } else {
            &["w1", "w3"]
        };
        assert!(holders.contains(&source.as_str()), "{reps:?}");
        assert_eq!(targets.len(), 1, "{reps:?}");
        assert!(
            targets[0] != "w1" && !holders.contains(&targets[0].as_str()),
            "{reps:?}"
        );
    }
    // Block 7 is not w1's: left alone. Nothing is deleted.
    assert!(deletes(&cmds).is_empty(), "{cmds:?}");
    // Still a source: readers are handed w1's replica.
    let f = st.blocks.file_status("/a", &st.cluster).unwrap();
    assert!(f.blocks[0].replicas.iter().any(|r| r.name == "w1"));

    // The copies arrive: w1 is decommissioned, and may go.
    for (block, _, targets) in &reps {
        let e = st.cluster.get(&targets[0]).unwrap().epoch;
        heartbeat(&mut st, &targets[0], e, &[*block], t0);
    }
    st.on_tick(t0);
    assert_eq!(state(&st, "w1"), (AdminState::Decommissioned, 0));
    let r = heartbeat(&mut st, "w1", e1, &[], t0);
    assert!(
        !r.stop.unsafe_to_stop && r.stop.blocks_to_copy == 0,
        "{r:?}"
    );
    // Three replicas of 5 and 6, two counted: no trim of w1's.
    st.on_tick(t0);
    assert!(deletes(&take_all(&mut st)).is_empty());
    assert!(st.blocks.fsck().is_healthy());

    // Recommissioned: the excess copies go, one per block.
    let d1 = st.decommission("w1", false, t0).unwrap();
    assert_eq!(d1.state, AdminState::Normal);
    st.on_tick(t0);
    let mut del: Vec<u64> = deletes(&take_all(&mut st))
        .into_iter()
        .map(|(_, b)| b)
        .collect();
    del.sort();
    assert_eq!(del, vec![5, 6]);
    let _ = std::fs::remove_dir_all(&d);
}

/// A leaving worker is chosen as no block target and offered no task.
#[test]
fn a_decommissioned_worker_gets_no_new_block_or_task() {
    let d = dir("targets");
    let mut st = master(&d, &[]);
    let t0 = Instant::now();
    for w in WORKERS {
        register(&mut st, w, &[], t0);
    }
    st.decommission("w2", true, t0).unwrap();
    // An empty worker is decommissioned at once.
    assert_eq!(state(&st, "w2").0, AdminState::Decommissioned);
    let c = st
        .create_file(
            CreateFile {
                path: "/f".into(),
                replication: 3,
                writer: "w2".into(),
                ..Default::default()
            },
            t0,
        )
        .unwrap();
    for _ in 0..50 {
        let b = st
            .add_block(
                AddBlock {
                    path: "/f".into(),
                    lease: c.lease,
                    ..Default::default()
                },
                t0,
            )
            .unwrap();
        assert_eq!(b.targets.len(), 3);
        assert!(b.targets.iter().all(|t| t.name != "w2"), "{b:?}");
    }
    let view = st.cluster_view(t0);
    let node = |n: &str| view.nodes.iter().find(|v| v.name == n).unwrap().clone();
    assert_eq!(
        (node("w2").free_map_slots, node("w2").free_reduce_slots),
        (0, 0)
    );
    assert_eq!(node("w1").free_map_slots, 2);
    // Recommissioned, it takes both again.
    st.decommission("w2", false, t0).unwrap();
    assert_eq!(st.cluster_view(t0).nodes[1].free_map_slots, 2);
    let _ = std::fs::remove_dir_all(&d);
}

/// Two workers decommissioned together, a block on both only: it needs
/// two new copies. With no worker left that could take one, the drain
/// never ends (HDFS's rule: the last copy never goes out of service by
/// itself), and the block is not missing meanwhile.
#[test]
fn the_last_copies_are_never_decommissioned_away() {
    let d = dir("last");
    let mut st = master(&d, &[("/a", 5, 2)]);
    let t0 = Instant::now();
    register(&mut st, "w1", &[5], t0);
    register(&mut st, "w2", &[5], t0);
    register(&mut st, "w3", &[], t0);
    register(&mut st, "w4", &[], t0);
    st.decommission("w1", true, t0).unwrap();
    st.decommission("w2", true, t0).unwrap();
    st.on_tick(t0);
    let reps = replications(&take_all(&mut st));
    assert_eq!(reps.len(), 1, "{reps:?}");
    let mut to = reps[0].2.clone();
    to.sort();
    assert_eq!(to, vec!["w3".to_string(), "w4".to_string()]);
    assert_eq!(state(&st, "w1"), (AdminState::Decommissioning, 1));

    // Now without w3 and w4 (never registered): nowhere to copy to.
    let d2 = dir("last2");
    let mut st = master(&d2, &[("/a", 5, 2)]);
    let e1 = register(&mut st, "w1", &[5], t0);
    register(&mut st, "w2", &[5], t0);
    // One of two decommissioned: the other holds the block and is every
    // worker that could take a copy: safe.
    st.decommission("w1", true, t0).unwrap();
    assert_eq!(state(&st, "w1").0, AdminState::Decommissioned);
    st.decommission("w2", true, t0).unwrap();
    for _ in 0..3 {
        st.on_tick(t0);
    }
    for w in ["w1", "w2"] {
        assert_eq!(state(&st, w), (AdminState::Decommissioning, 1), "{w}");
    }
    assert!(st.blocks.fsck().missing.is_empty());
    // Unsafe to stop, but nothing the master can copy: a draining worker
    // would not wait in vain.
    let r = heartbeat(&mut st, "w1", e1, &[], t0);
    assert!(r.stop.unsafe_to_stop && r.stop.blocks_to_copy == 0, "{r:?}");
    let _ = std::fs::remove_dir_all(&d);
    let _ = std::fs::remove_dir_all(&d2);
}

/// A worker's own drain (SIGTERM: its heartbeats say `draining`) leaves
/// like a decommission, but only for that incarnation, and nothing of it
/// is durable.
#[test]
fn a_draining_worker_is_told_what_is_left_to_copy() {
    let d = dir("drain");
    let mut st = master(&d, &[("/a", 5, 2)]);
    let t0 = Instant::now();
    let e1 = register(&mut st, "w1", &[5], t0);
    register(&mut st, "w2", &[5], t0);
    register(&mut st, "w3", &[], t0);
    let drain = |st: &mut MasterState| {
        st.on_heartbeat(
            Heartbeat {
                name: "w1".into(),
                epoch: e1,
                draining: true,
                ..Default::default()
            },
            t0,
        )
    };
    // The first draining heartbeat is told at once, not after a tick.
    let r = drain(&mut st);
    assert!(r.stop.unsafe_to_stop && r.stop.blocks_to_copy == 1, "{r:?}");
    assert_eq!(state(&st, "w1").0, AdminState::Draining);
    st.on_tick(t0);
    let reps = replications(&take_all(&mut st));
    assert_eq!(reps.len(), 1);
    assert_eq!(reps[0].2, vec!["w3".to_string()]);
    let e3 = st.cluster.get("w3").unwrap().epoch;
    heartbeat(&mut st, "w3", e3, &[5], t0);
    let r = drain(&mut st);
    assert_eq!(r.stop, Default::default(), "{r:?}");
    assert!(st.blocks.decommissioned().is_empty());
    // Its next incarnation is a normal worker again.
    register(&mut st, "w1", &[5], t0);
    st.on_tick(t0);
    assert_eq!(state(&st, "w1").0, AdminState::Normal);
    let _ = std::fs::remove_dir_all(&d);
}

/// A worker holding the only counted replica of a block that wants more
/// is unsafe to stop (its `/readyz` says so), until the copy is made; a
/// block of replication 1 makes no worker unsafe.
#[test]
fn the_only_holder_of_a_block_is_unsafe_to_stop() {
    let d = dir("sole");
    let mut st = master(&d, &[("/a", 5, 2), ("/one", 6, 1)]);
    let t0 = Instant::now();
    let e1 = register(&mut st, "w1", &[5], t0);
    let e2 = register(&mut st, "w2", &[6], t0);
    st.on_tick(t0);
    assert!(heartbeat(&mut st, "w1", e1, &[], t0).stop.unsafe_to_stop);
    assert!(!heartbeat(&mut st, "w2", e2, &[], t0).stop.unsafe_to_stop);
    heartbeat(&mut st, "w2", e2, &[5], t0);
    st.on_tick(t0);
    assert!(!heartbeat(&mut st, "w1", e1, &[], t0).stop.unsafe_to_stop);
    let _ = std::fs::remove_dir_all(&d);
}

/// The set is in the edit log: a restarted master still decommissions
/// w1, and a recommission is as durable. A dead (or never seen) worker is
/// decommissioned at once; an unknown name is refused.
#[test]
fn the_decommission_set_survives_a_master_restart() {
    let d = dir("durable");
    let t0 = Instant::now();
    {
        let mut st = master(&d, &[]);
        st.decommission("w1", true, t0).unwrap();
        st.decommission("w3", true, t0).unwrap();
        st.decommission("w3", false, t0).unwrap();
        let e = st.decommission("w9", true, t0).unwrap_err();
        assert!(matches!(e, MasterError::NotFound(_)), "{e}");
        assert_eq!(state(&st, "w1").0, AdminState::Decommissioned);
    }
    let mut st = MasterState::open(config(&d), t0).unwrap();
    let set: Vec<&String> = st.blocks.decommissioned().iter().collect();
    assert_eq!(set, vec!["w1"]);
    // Not registered yet with the restarted master; its namespace is
    // empty, so the master is out of safe mode at once and w1 can hold
    // nothing: decommissioned (with blocks in the namespace, safe mode
    // would keep it decommissioning until it registered).
    assert_eq!(state(&st, "w1"), (AdminState::Decommissioned, 0));
    // Back, it is decommissioning until counted, and gets no task.
    register(&mut st, "w1", &[], t0);
    assert_eq!(st.cluster_view(t0).nodes[0].free_map_slots, 0);
    st.decommission("w1", false, t0).unwrap();
    drop(st);
    let mut st = MasterState::open(config(&d), t0).unwrap();
    assert!(st.blocks.decommissioned().is_empty());
    // Decommissioned, then gone from the cluster file (scaled away): it
    // can still be taken out of the set, and not put back.
    st.decommission("w4", true, t0).unwrap();
    drop(st);
    let mut st = MasterState::open(config_of(&d, &WORKERS[..3]), t0).unwrap();
    assert!(st.decommission("w4", true, t0).is_err());
    assert_eq!(
        st.decommission("w4", false, t0).unwrap().state,
        AdminState::Normal
    );
    assert!(st.blocks.decommissioned().is_empty());
    let _ = std::fs::remove_dir_all(&d);
}
