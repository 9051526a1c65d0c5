//! The block side across crashes: ids never handed out twice, and a
//! durable edit never reported as failed.

use super::namespace::{Edit, FileMeta};
use super::Blocks;
use crate::cluster::Outbox;
use common::config::ClusterConfig;
use protocol::BlockInfo;
use std::path::PathBuf;
use std::time::Instant;

fn config(tag: &str, snapshot_every: u64) -> (ClusterConfig, PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "mr-durability-{tag}-{}-{}",
        std::process::id(),
        fastrand::u64(..)
    ));
    let toml = format!(
        "token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = {:?}\n\
         snapshot_every = {snapshot_every}\n",
        dir.join("m")
    );
    (ClusterConfig::parse(&toml).unwrap(), dir)
}

fn put(b: &mut Blocks, path: &str) -> u64 {
    let id = b.allocate_block_id().unwrap();
    b.commit(Edit::AddFile {
        path: path.into(),
        file: FileMeta {
            mode: crate::blocks::namespace::FILE_MODE,
            owner: String::new(),
            replication: 1,
            block_size: 4096,
            blocks: vec![BlockInfo {
                id,
                len: 3000,
                crc32c: 7,
                generation: b.ns.generation,
            }],
            mtime_ms: 1,
        },
    })
    .unwrap();
    id
}

/// Issue 28's reproduction: `snapshot_every = 4`, eight files put, the
/// master killed and started, more files put: no new block may take the id
/// of an acknowledged one (it took id 8 before the fix).
#[test]
fn block_ids_are_not_handed_out_again_after_a_crash() {
    let (cfg, dir) = config("ids", 4);
    let mut used = Vec::new();
    {
        let mut b = Blocks::open(&cfg, Instant::now()).unwrap();
        for i in 0..8 {
            used.push(put(&mut b, &format!("/before/{i}")));
        }
        // Dropped without a sync or a checkpoint: a SIGKILL.
    }
    let mut b = Blocks::open(&cfg, Instant::now()).unwrap();
    assert_eq!(b.ns.files.len(), 8);
    for i in 0..8 {
        let id = put(&mut b, &format!("/after/{i}"));
        assert!(!used.contains(&id), "block id {id} handed out twice");
        used.push(id);
    }
    // And again across a second restart, now with reservations in the log.
    drop(b);
    let mut b = Blocks::open(&cfg, Instant::now()).unwrap();
    let id = put(&mut b, "/third");
    assert!(!used.contains(&id), "block id {id} handed out twice");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A checkpoint that fails after the edit is durable: `commit` says the
/// edit stands, and the log refuses later edits rather than write them to
/// an unlinked file that the next start never reads.
#[test]
fn a_failed_checkpoint_neither_fails_a_durable_edit_nor_loses_later_ones() {
    let (cfg, dir) = config("ckpt", 3);
    let mut acked = Vec::new();
    {
        let mut b = Blocks::open(&cfg, Instant::now()).unwrap();
        put(&mut b, "/a");
        acked.push("/a".to_string());
        // Txid 1 reserved ids, 2 added /a: the next commit reaches
        // `snapshot_every`; its new log's rename
        // happens, then the directory fsync fails.
        super::editlog::FAIL_AFTER_RENAME.with(|f| f.set(true));
        let id = b.allocate_block_id().unwrap();
        let r = b.commit(Edit::AddFile {
            path: "/b".into(),
            file: FileMeta {
                mode: crate::blocks::namespace::FILE_MODE,
                owner: String::new(),
                replication: 1,
                block_size: 4096,
                blocks: vec![BlockInfo {
                    id,
                    len: 10,
                    crc32c: 1,
                    generation: 0,
                }],
                mtime_ms: 1,
            },
        });
        assert!(r.is_ok(), "a durable edit was reported failed: {r:?}");
        acked.push("/b".to_string());
        for p in ["/c", "/d", "/e"] {
            let r = b.commit(Edit::Delete {
                paths: vec![],
                dirs: vec![],
            });
            if r.is_ok() {
                // Anything acknowledged now must survive the restart.
                let id = b.allocate_block_id();
                if let Ok(id) = id {
                    let ok = b
                        .commit(Edit::AddFile {
                            path: p.into(),
                            file: FileMeta {
                                mode: crate::blocks::namespace::FILE_MODE,
                                owner: String::new(),
                                replication: 1,
                                block_size: 4096,
                                blocks: vec![BlockInfo {
                                    id,
                                    len: 10,
                                    crc32c: 1,
                                    generation: 0,
                                }],
                                mtime_ms: 1,
                            },
                        })
                        .is_ok();
                    if ok {
                        acked.push(p.to_string());
                    }
                }
            }
        }
    }
    let b = Blocks::open(&cfg, Instant::now()).unwrap();
    for p in &acked {
        assert!(b.ns.files.contains_key(p), "acknowledged {p} lost");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 28 point 1: a replica with the block's id, length and CRC but
/// another generation stamp (a stale copy) is never counted as the block,
/// and the worker is told to quarantine it; the master's generation rises
/// at every open and survives it (before the fix, the stale replica was
/// counted as live).
#[test]
fn a_replica_of_another_generation_is_not_the_block() {
    let (cfg, dir) = config("generation", 100);
    let (id, first) = {
        let mut b = Blocks::open(&cfg, Instant::now()).unwrap();
        let first = b.ns.generation;
        assert!(first >= 1);
        (put(&mut b, "/f"), first)
    };
    let mut b = Blocks::open(&cfg, Instant::now()).unwrap();
    assert!(
        b.ns.generation > first,
        "the generation rises at every open"
    );
    assert_eq!(b.ns.files["/f"].blocks[0].generation, first);
    let good = b.ns.files["/f"].blocks[0];
    let stale = BlockInfo {
        generation: first + 1,
        ..good
    };
    let quarantine = |w: &str| vec![(w.to_string(), protocol::Command::QuarantineBlock(id))];
    let mut out = Outbox::default();
    let (stored, unknown) = b.full_report("w1", &[stale], &[], &mut out);
    assert_eq!((stored, unknown), (0, 1));
    assert_eq!(out.into_commands(), quarantine("w1"));
    assert_eq!(b.locations.count(id), 0);
    let mut out = Outbox::default();
    let stored = b.incremental_report("w2", &[stale], &[], &[], &[], &mut out);
    assert_eq!(stored, 0);
    assert_eq!(out.into_commands(), quarantine("w2"));
    let mut out = Outbox::default();
    let (stored, unknown) = b.full_report("w3", &[good], &[], &mut out);
    assert_eq!((stored, unknown), (1, 0));
    assert!(out.into_commands().is_empty());
    assert_eq!(b.locations.count(id), 1);
    let _ = std::fs::remove_dir_all(dir);
}

fn add_file(path: &str, id: u64) -> Edit {
    Edit::AddFile {
        path: path.into(),
        file: FileMeta {
            mode: crate::blocks::namespace::FILE_MODE,
            owner: String::new(),
            replication: 1,
            block_size: 4096,
            blocks: vec![BlockInfo {
                id,
                len: 10,
                crc32c: 1,
                generation: 0,
            }],
            mtime_ms: 1,
        },
    }
}

/// A full disk fails an edit-log write halfway: the edit is refused and
/// not applied, later edits are refused while the disk stays full, and once
/// space is back the log rolls to a fresh one and takes edits again (it
/// stayed failed until a restart before); a restart then replays exactly
/// the acknowledged edits.
#[test]
fn a_full_disk_refuses_the_edit_then_the_log_resumes_and_replays_cleanly() {
    let (cfg, dir) = config("full", 1000);
    let ids = {
        let mut b = Blocks::open(&cfg, Instant::now()).unwrap();
        let a = put(&mut b, "/a");
        let ids = [
            b.allocate_block_id().unwrap(),
            b.allocate_block_id().unwrap(),
        ];
        super::editlog::DISK_FULL.with(|d| d.set(true));
        let r = b.commit(add_file("/b", ids[0]));
        assert!(
            r.is_err(),
            "an edit the disk could not take was acknowledged"
        );
        assert!(!b.ns.files.contains_key("/b"), "a refused edit was applied");
        assert!(b.commit(add_file("/b", ids[0])).is_err(), "disk still full");
        let h = b.health();
        assert!(h.iter().any(|p| p.contains("edit log is failed")), "{h:?}");
        b.check_resources(); // a tick while full changes nothing
        assert!(!b.health().is_empty());
        super::editlog::DISK_FULL.with(|d| d.set(false));
        b.commit(add_file("/c", ids[1]))
            .expect("the log resumes once space is back");
        assert!(b.health().is_empty(), "{:?}", b.health());
        put(&mut b, "/d");
        assert!(b.ns.files.contains_key("/c"));
        let _ = a;
        ids
    };
    let leftovers: Vec<_> = std::fs::read_dir(dir.join("m"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let b = Blocks::open(&cfg, Instant::now()).unwrap();
    let mut files: Vec<_> = b.ns.files.keys().cloned().collect();
    files.sort();
    assert_eq!(files, ["/a", "/c", "/d"]);
    assert_eq!(b.ns.files["/c"].blocks[0].id, ids[1]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tick that finds the resume possible does it without waiting for a
/// write, so `/healthz` clears by itself.
#[test]
fn a_tick_resumes_a_failed_log_once_space_is_back() {
    let (cfg, dir) = config("tickresume", 1000);
    let mut b = Blocks::open(&cfg, Instant::now()).unwrap();
    b.set_free_space_probe(Box::new(|_| Ok(u64::MAX)));
    super::editlog::DISK_FULL.with(|d| d.set(true));
    assert!(b
        .commit(Edit::Delete {
            paths: vec![],
            dirs: vec![]
        })
        .is_err());
    super::editlog::DISK_FULL.with(|d| d.set(false));
    assert!(!b.health().is_empty());
    b.check_resources();
    assert!(b.health().is_empty(), "{:?}", b.health());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Below `reserved_space` the master enters safe mode by itself and says
/// why in every refusal; an operator's leave does not end that, space does;
/// and space coming back does not end a safe mode an operator entered.
#[test]
fn below_the_reserve_safe_mode_holds_until_space_is_back() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let (cfg, dir) = config("reserve", 1000);
    assert_eq!(cfg.master.reserved_space, 100 << 20, "the default");
    let mut b = Blocks::open(&cfg, Instant::now()).unwrap();
    let free = Arc::new(AtomicU64::new(1 << 30));
    let f = free.clone();
    b.set_free_space_probe(Box::new(move |_| Ok(f.load(Ordering::SeqCst))));
    b.check_resources();
    assert!(b.check_writable("create /x").is_ok());
    assert!(b.health().is_empty());

    free.store(5 << 20, Ordering::SeqCst);
    b.check_resources();
    let err = b.check_writable("create /x").unwrap_err().to_string();
    assert!(
        err.contains("cannot create /x: the master is in safe mode"),
        "{err}"
    );
    assert!(
        err.contains("has 5.0 MiB free, below reserved_space 100.0 MiB"),
        "{err}"
    );
    let s = b.safe_mode_status();
    assert!(s.on && !s.manual, "{s:?}");
    assert!(s.low_resources.is_some());
    assert!(b
        .health()
        .iter()
        .any(|p| p.contains("below reserved_space")));
    b.leave_safe_mode();
    assert!(
        b.check_writable("create /x").is_err(),
        "a leave does not free the disk"
    );

    free.store(1 << 30, Ordering::SeqCst);
    b.check_resources();
    assert!(b.check_writable("create /x").is_ok());
    assert!(!b.safe_mode_status().on);
    assert!(b.health().is_empty());

    b.enter_safe_mode();
    free.store(1, Ordering::SeqCst);
    b.check_resources();
    free.store(1 << 30, Ordering::SeqCst);
    b.check_resources();
    assert!(b.safe_mode_status().on, "an operator's safe mode stays");
    b.leave_safe_mode();
    assert!(b.check_writable("create /x").is_ok());
    let _ = std::fs::remove_dir_all(&dir);
}
