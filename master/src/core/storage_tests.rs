//! The master's storage guarantees across a restart: safe mode, the
//! quarantine of unknown blocks, corrupt replicas (the last one kept),
//! missing blocks, fsck, and the reserved `/_staging/`.

use super::*;
use crate::blocks::files::CreateFile;
use crate::blocks::namespace::{Edit, FileMeta};
use protocol::{BlockInfo, Heartbeat};
use std::path::PathBuf;
use std::time::Duration;

fn config(dir: &std::path::Path) -> ClusterConfig {
    let mut toml = format!(
        "token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = {:?}\n",
        dir.join("m")
    );
    for (i, w) in ["w1", "w2", "w3"].iter().enumerate() {
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

/// A master restarted over a namespace of `files` (path, block, replication).
fn restarted(tag: &str, files: &[(&str, u64, u32)]) -> (MasterState, PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "mr-storage-{tag}-{}-{}",
        std::process::id(),
        fastrand::u64(..)
    ));
    let cfg = config(&dir);
    {
        let mut st = MasterState::open(cfg.clone(), Instant::now()).unwrap();
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
    }
    (MasterState::open(cfg, Instant::now()).unwrap(), dir)
}

fn register(st: &mut MasterState, name: &str, blocks: &[u64], now: Instant) -> Registered {
    st.on_register(
        Registration {
            protocol_version: common::PROTOCOL_VERSION,
            name: name.into(),
            addr: format!("{name}:1"),
            rack: if name == "w1" { "r1" } else { "r2" }.into(),
            map_slots: 1,
            reduce_slots: 1,
            blocks: blocks.iter().map(|&id| meta(id)).collect(),
            ..Default::default()
        },
        now,
    )
    .unwrap()
}

/// An empty heartbeat, so that the worker stays alive at `now`.
fn beat(st: &mut MasterState, name: &str, epoch: u64, now: Instant) {
    st.on_heartbeat(
        Heartbeat {
            name: name.into(),
            epoch,
            ..Default::default()
        },
        now,
    );
}

fn replicates(cmds: &[Command]) -> Vec<u64> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Replicate { block, .. } => Some(block.id),
            _ => None,
        })
        .collect()
}

fn deletes(cmds: &[Command]) -> Vec<u64> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::DeleteBlock(id) => Some(*id),
            _ => None,
        })
        .collect()
}

#[test]
fn after_a_restart_unknown_blocks_are_quarantined_and_nothing_moves_in_safe_mode() {
    let (mut st, dir) = restarted("safe", &[("/f", 5, 2), ("/g", 6, 2)]);
    let t0 = Instant::now();
    // w1 holds /f's block and one the namespace does not know (an older
    // or lost fsimage's); /g's holder has not registered yet.
    let r = register(&mut st, "w1", &[5, 99], t0);
    assert!(r.delete_blocks.is_empty(), "{:?}", r.delete_blocks);
    let e2 = register(&mut st, "w2", &[], t0).epoch;
    let w1 = st.cluster.take_commands("w1");
    assert!(w1.contains(&Command::QuarantineBlock(99)), "{w1:?}");
    assert!(deletes(&w1).is_empty(), "{w1:?}");
    // Long after the heartbeat expiry: half the blocks reported, below the
    // 0.999 threshold, so /f's block is not re-replicated yet.
    let later = t0 + Duration::from_secs(3600);
    beat(&mut st, "w1", r.epoch, later);
    beat(&mut st, "w2", e2, later);
    st.on_tick(later);
    let s = st.safe_mode(SafeModeAction::Get, later);
    assert!(s.on && !s.manual, "{s:?}");
    assert_eq!((s.reported_blocks, s.total_blocks), (1, 2));
    for w in ["w1", "w2"] {
        let c = st.cluster.take_commands(w);
        assert!(replicates(&c).is_empty() && deletes(&c).is_empty(), "{c:?}");
    }
    let fsck = st.blocks.fsck();
    assert!(fsck.safe_mode);
    assert_eq!(fsck.missing.len(), 1);
    assert_eq!(fsck.missing[0].block_id, 6);
    assert_eq!(fsck.missing[0].files, vec!["/g".to_string()]);
    assert_eq!(fsck.under_replicated[0].block_id, 5);
    // The operator leaves it: /f's block gets its second replica.
    assert!(!st.safe_mode(SafeModeAction::Leave, later).on);
    st.on_tick(later);
    assert_eq!(replicates(&st.cluster.take_commands("w1")), vec![5]);
    // Entered by hand, it stays until left by hand.
    let s = st.safe_mode(SafeModeAction::Enter, later);
    assert!(s.on && s.manual);
    st.on_tick(later + Duration::from_secs(3600));
    assert!(st.safe_mode(SafeModeAction::Get, later).on);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn safe_mode_ends_by_itself_once_the_blocks_are_reported() {
    let (mut st, dir) = restarted("auto", &[("/f", 5, 1)]);
    let t0 = Instant::now();
    let e = register(&mut st, "w1", &[5], t0).epoch;
    let later = t0 + Duration::from_secs(3600);
    beat(&mut st, "w1", e, later);
    st.on_tick(later);
    assert!(!st.safe_mode(SafeModeAction::Get, later).on);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_corrupt_replica_goes_only_after_a_good_copy_and_the_last_one_is_kept() {
    let (mut st, dir) = restarted("corrupt", &[("/f", 5, 2)]);
    let t0 = Instant::now();
    register(&mut st, "w1", &[5], t0);
    register(&mut st, "w2", &[5], t0);
    let e3 = register(&mut st, "w3", &[], t0).epoch;
    st.safe_mode(SafeModeAction::Leave, t0);
    st.report_bad_block("w1", 5, "checksum mismatch");
    st.on_tick(t0);
    // Copied from the good replica, the corrupt one still there.
    assert_eq!(replicates(&st.cluster.take_commands("w2")), vec![5]);
    let w1 = st.cluster.take_commands("w1");
    assert!(
        replicates(&w1).is_empty() && deletes(&w1).is_empty(),
        "{w1:?}"
    );
    let fsck = st.blocks.fsck();
    assert_eq!(fsck.corrupt.len(), 1);
    assert_eq!(fsck.corrupt[0].corrupt_on, vec!["w1".to_string()]);
    let f = st.blocks.file_status("/f", &st.cluster).unwrap();
    assert!(f.blocks[0].replicas.iter().all(|r| r.name != "w1"));
    // The new copy lands on w3: now the corrupt one goes.
    st.on_heartbeat(
        Heartbeat {
            name: "w3".into(),
            epoch: e3,
            blocks_added: vec![meta(5)],
            ..Default::default()
        },
        t0,
    );
    st.on_tick(t0);
    assert_eq!(deletes(&st.cluster.take_commands("w1")), vec![5]);
    assert!(st.blocks.fsck().is_healthy());
    // Both good copies turn out corrupt: the last one is kept and listed,
    // and never handed to a reader as good.
    st.report_bad_block("w2", 5, "checksum mismatch");
    st.report_bad_block("w3", 5, "checksum mismatch");
    for _ in 0..3 {
        st.on_tick(t0 + Duration::from_secs(60));
    }
    for w in ["w2", "w3"] {
        let c = st.cluster.take_commands(w);
        assert!(deletes(&c).is_empty(), "{w}: {c:?}");
    }
    let fsck = st.blocks.fsck();
    assert_eq!(fsck.missing.len(), 1);
    assert_eq!(fsck.missing[0].corrupt_on.len(), 2);
    assert_eq!(fsck.missing[0].files, vec!["/f".to_string()]);
    assert!(st.blocks.file_status("/f", &st.cluster).unwrap().blocks[0]
        .replicas
        .is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn user_paths_under_staging_are_refused() {
    let (mut st, dir) = restarted("staging", &[]);
    for p in ["/_staging/mine", "/_staging/job-x/part", "/_staging"] {
        let e = st
            .create_file(
                CreateFile {
                    path: p.into(),
                    ..Default::default()
                },
                Instant::now(),
            )
            .expect_err(p);
        assert!(e.to_string().contains("/_staging"), "{p}: {e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Safe mode (issue 39, item 8) refuses the clients' writes and deletes,
/// and job submissions, with an error that says why and names `mr admin
/// safemode leave`; reads go on, an abandon is let through, and leaving it
/// lets everything through again.
#[test]
fn safe_mode_refuses_writes_and_deletes_and_serves_reads() {
    use crate::blocks::files::{AddBlock, CompleteFile};
    use crate::jobs::submit::SubmitJob;
    let (mut st, dir) = restarted("refuse", &[("/f", 5, 1)]);
    let t0 = Instant::now();
    assert!(st.safe_mode(SafeModeAction::Get, t0).on);
    let refused = |r: Result<()>, what: &str| {
        let e = r.expect_err(what);
        let m = e.to_string();
        assert!(
            matches!(e, MasterError::FailedPrecondition(_)),
            "{what}: {e:?}"
        );
        assert!(
            m.starts_with(&format!("cannot {what}: the master is in safe mode")),
            "{m}"
        );
        assert!(m.contains("mr admin safemode leave"), "{m}");
        m
    };
    // After a start: the reason is the unreported blocks.
    let create = |path: &str| CreateFile {
        path: path.into(),
        ..Default::default()
    };
    let m = refused(
        st.create_file(create("/new"), t0).map(|_| ()),
        "create /new",
    );
    assert!(m.contains("0 of 1 reported"), "{m}");
    refused(st.delete("/f").map(|_| ()), "delete /f");
    let job = SubmitJob {
        job: "wordcount".into(),
        inputs: vec!["/f".into()],
        output: "/out".into(),
        reducers: 1,
        ..Default::default()
    };
    refused(
        st.on_submit(job.clone(), t0).map(|_| ()),
        "submit a job writing /out",
    );
    // Reads go on.
    assert!(st.blocks.ns().files.contains_key("/f"));
    assert_eq!(st.blocks.file_status("/f", &st.cluster).unwrap().size, 100);
    assert_eq!(st.blocks.list("/").unwrap().len(), 1);
    // A write begun before an operator entered safe mode cannot go on,
    // and may be abandoned.
    register(&mut st, "w1", &[5], t0);
    st.safe_mode(SafeModeAction::Leave, t0);
    let lease = st.create_file(create("/w"), t0).unwrap().lease;
    let s = st.safe_mode(SafeModeAction::Enter, t0);
    assert!(s.on && s.manual);
    let m = refused(
        st.add_block(
            AddBlock {
                path: "/w".into(),
                lease,
                ..Default::default()
            },
            t0,
        )
        .map(|_| ()),
        "add a block to /w",
    );
    assert!(m.contains("An operator entered it"), "{m}");
    refused(
        st.complete_file(CompleteFile {
            path: "/w".into(),
            lease,
            blocks: vec![],
        }),
        "complete /w",
    );
    refused(st.delete("/f").map(|_| ()), "delete /f");
    st.abandon_file("/w", lease).unwrap();
    assert!(st.blocks.ns().files.contains_key("/f"));
    // Left: writes, deletes and jobs are taken again.
    st.safe_mode(SafeModeAction::Leave, t0);
    let lease = st.create_file(create("/w"), t0).unwrap().lease;
    st.complete_file(CompleteFile {
        path: "/w".into(),
        lease,
        blocks: vec![],
    })
    .unwrap();
    assert_eq!(st.delete("/w").unwrap(), 1);
    st.on_submit(job, t0).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A master started on an empty namespace has no block to wait for: it
/// takes writes at once, without the heartbeat expiry's wait.
#[test]
fn an_empty_namespace_takes_writes_at_once() {
    let (mut st, dir) = restarted("empty", &[]);
    let t0 = Instant::now();
    assert!(!st.safe_mode(SafeModeAction::Get, t0).on);
    st.create_file(
        CreateFile {
            path: "/first".into(),
            ..Default::default()
        },
        t0,
    )
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A known-corrupt replica stays corrupt across a master restart (issue
/// 39, item 8): not handed to readers, not counted towards the block's
/// replicas, listed by fsck; and once its worker reports it deleted, the
/// mark is gone for good, the next restart included.
#[test]
fn a_corrupt_mark_survives_a_master_restart() {
    let (mut st, dir) = restarted("corrupt-restart", &[("/f", 5, 2)]);
    let t0 = Instant::now();
    register(&mut st, "w1", &[5], t0);
    register(&mut st, "w2", &[5], t0);
    st.safe_mode(SafeModeAction::Leave, t0);
    st.report_bad_block("w1", 5, "checksum mismatch");
    assert_eq!(
        st.blocks.fsck().corrupt[0].corrupt_on,
        vec!["w1".to_string()]
    );
    // Killed (no sync, no checkpoint) and started again on the same data.
    drop(st);
    let mut st = MasterState::open(config(&dir), t0).unwrap();
    let e1 = register(&mut st, "w1", &[5], t0).epoch;
    register(&mut st, "w2", &[5], t0);
    let f = st.blocks.file_status("/f", &st.cluster).unwrap();
    let names: Vec<&str> = f.blocks[0]
        .replicas
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(
        names,
        vec!["w2"],
        "the corrupt replica is handed to readers"
    );
    let fsck = st.blocks.fsck();
    assert!(!fsck.is_healthy());
    assert_eq!(fsck.corrupt.len(), 1, "{fsck:?}");
    assert_eq!(fsck.corrupt[0].block_id, 5);
    assert_eq!(fsck.corrupt[0].live, 1);
    assert_eq!(fsck.corrupt[0].corrupt_on, vec!["w1".to_string()]);
    assert_eq!(st.blocks.under_replicated(), 1);
    // Every other node holds a copy: the corrupt one makes room, and w1
    // reports it deleted.
    st.safe_mode(SafeModeAction::Leave, t0);
    st.on_tick(t0);
    assert_eq!(deletes(&st.cluster.take_commands("w1")), vec![5]);
    st.on_heartbeat(
        Heartbeat {
            name: "w1".into(),
            epoch: e1,
            blocks_removed: vec![5],
            ..Default::default()
        },
        t0,
    );
    drop(st);
    let mut st = MasterState::open(config(&dir), t0).unwrap();
    register(&mut st, "w2", &[5], t0);
    let fsck = st.blocks.fsck();
    assert!(
        fsck.corrupt.is_empty() && fsck.missing.is_empty(),
        "{fsck:?}"
    );
    assert_eq!(fsck.under_replicated[0].corrupt_on, Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Trimming an excess replica keeps the good copy (issue 39, item 8): a
/// block of replication 1 with a good copy on w2 and a known-corrupt one
/// on w1, seen again after a master restart. The corrupt one is deleted,
/// the good one kept; before, the restarted master took both for good and
/// trimmed w2's, the good one, by rack.
#[test]
fn an_excess_trim_deletes_the_corrupt_copy_and_keeps_the_good_one() {
    let (mut st, dir) = restarted("trim", &[("/f", 5, 1)]);
    let t0 = Instant::now();
    register(&mut st, "w1", &[5], t0);
    register(&mut st, "w2", &[5], t0);
    st.safe_mode(SafeModeAction::Leave, t0);
    st.report_bad_block("w1", 5, "checksum mismatch");
    drop(st);
    let mut st = MasterState::open(config(&dir), t0).unwrap();
    register(&mut st, "w1", &[5], t0);
    register(&mut st, "w2", &[5], t0);
    st.safe_mode(SafeModeAction::Leave, t0);
    st.on_tick(t0);
    let w2 = st.cluster.take_commands("w2");
    assert!(deletes(&w2).is_empty(), "the good copy was trimmed: {w2:?}");
    assert_eq!(deletes(&st.cluster.take_commands("w1")), vec![5]);
    let f = st.blocks.file_status("/f", &st.cluster).unwrap();
    let names: Vec<&str> = f.blocks[0]
        .replicas
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(names, vec!["w2"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A worker that registers with the files of jobs this master does not
/// know (they ran before its restart, which failed them) is told to clean
/// them up: map outputs are not left on workers for ever (issue 39).
#[test]
fn the_files_of_jobs_the_master_does_not_know_are_swept_at_registration() {
    let (mut st, dir) = restarted("sweep", &[]);
    let t0 = Instant::now();
    st.on_register(
        Registration {
            protocol_version: common::PROTOCOL_VERSION,
            name: "w1".into(),
            addr: "w1:1".into(),
            rack: "r1".into(),
            map_slots: 1,
            reduce_slots: 1,
            job_dirs: vec![41, 42],
            ..Default::default()
        },
        t0,
    )
    .unwrap();
    let cleanups: Vec<u64> = st
        .cluster
        .take_commands("w1")
        .iter()
        .filter_map(|c| match c {
            Command::CleanupJob(id) => Some(*id),
            _ => None,
        })
        .collect();
    assert_eq!(cleanups, vec![41, 42]);
    let _ = std::fs::remove_dir_all(&dir);
}
