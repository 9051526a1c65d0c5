//! Leases (`lease.rs`): a writer that goes silent loses its path to the
//! next create past the soft limit, to the master's tick past the hard
//! limit, or to `recover-lease` at once; its file is closed at the blocks
//! workers acknowledged, in file order, and the close survives a restart.

use super::lease::Outcome;
use crate::blocks::files::{AddBlock, CompleteFile, CompletedBlock, CreateFile};
use crate::core::MasterState;
use crate::error::MasterError;
use common::config::ClusterConfig;
use protocol::{BlockInfo, Command, Heartbeat, Registration};
use rpc::auth::{Identity, Role};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The cluster's block size (`[dfs] block_size`).
const B: u64 = 64 << 10;

struct Fixture {
    st: MasterState,
    cfg: ClusterConfig,
    _dir: TempDir,
    t0: Instant,
    /// Worker name → epoch.
    epochs: Vec<(String, u64)>,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fixture(tag: &str) -> Fixture {
    let dir = std::env::temp_dir().join(format!(
        "mr-lease-{tag}-{}-{}",
        std::process::id(),
        fastrand::u64(..)
    ));
    let mut toml = format!(
        "token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = {:?}\n\
         lease_soft = \"60s\"\nlease_hard = \"1h\"\n[dfs]\nblock_size = \"64KiB\"\nreplication = 2\n",
        dir.join("m")
    );
    for (i, w) in ["w1", "w2"].iter().enumerate() {
        toml += &format!(
            "[[workers]]\nname = \"{w}\"\naddr = \"127.0.0.1:{}\"\ndata_dir = \"/x{w}\"\n",
            7101 + i
        );
    }
    let cfg = ClusterConfig::parse(&toml).unwrap();
    let t0 = Instant::now();
    let mut st = MasterState::open(cfg.clone(), t0).unwrap();
    let epochs = ["w1", "w2"]
        .iter()
        .map(|w| {
            let r = st
                .on_register(
                    Registration {
                        protocol_version: common::PROTOCOL_VERSION,
                        name: w.to_string(),
                        addr: format!("{w}:1"),
                        rack: "r1".into(),
                        map_slots: 1,
                        reduce_slots: 1,
                        ..Default::default()
                    },
                    t0,
                )
                .unwrap();
            (w.to_string(), r.epoch)
        })
        .collect();
    Fixture {
        st,
        cfg,
        _dir: TempDir(dir),
        t0,
        epochs,
    }
}

impl Fixture {
    fn at(&self, secs: u64) -> Instant {
        self.t0 + Duration::from_secs(secs)
    }

    fn epoch(&self, w: &str) -> u64 {
        self.epochs.iter().find(|(n, _)| n == w).unwrap().1
    }

    fn create(&mut self, path: &str, owner: &str, overwrite: bool, now: Instant) -> u64 {
        self.try_create(path, owner, overwrite, now)
            .unwrap_or_else(|e| panic!("create {path}: {e}"))
    }

    fn try_create(
        &mut self,
        path: &str,
        owner: &str,
        overwrite: bool,
        now: Instant,
    ) -> Result<u64, MasterError> {
        self.st
            .create_file(
                CreateFile {
                    path: path.into(),
                    overwrite,
                    owner: owner.into(),
                    ..Default::default()
                },
                now,
            )
            .map(|c| c.lease)
    }

    /// A block allocated to the write, placed at `offset` by its writer.
    fn alloc(&mut self, path: &str, lease: u64, offset: Option<u64>, now: Instant) -> u64 {
        self.st
            .add_block(
                AddBlock {
                    path: path.into(),
                    lease,
                    offset,
                    ..Default::default()
                },
                now,
            )
            .unwrap()
            .block_id
    }

    /// `worker` reports a finalized replica of `id`, `len` bytes long;
    /// returns what the answer tells it.
    fn report(&mut self, worker: &str, id: u64, len: u64, now: Instant) -> Vec<Command> {
        let meta = self.meta(id, len);
        let epoch = self.epoch(worker);
        self.st
            .on_heartbeat(
                Heartbeat {
                    name: worker.into(),
                    epoch,
                    blocks_added: vec![meta],
                    ..Default::default()
                },
                now,
            )
            .commands
    }

    fn meta(&self, id: u64, len: u64) -> BlockInfo {
        BlockInfo {
            id,
            len,
            crc32c: id as u32,
            generation: self.st.blocks().ns().generation,
        }
    }

    /// Every worker heartbeats at `now`, so that a tick then finds them alive.
    fn beat_all(&mut self, now: Instant) {
        for (w, epoch) in self.epochs.clone() {
            self.st.on_heartbeat(
                Heartbeat {
                    name: w,
                    epoch,
                    ..Default::default()
                },
                now,
            );
        }
    }

    fn deletes(&mut self, worker: &str) -> Vec<u64> {
        let epoch = self.epoch(worker);
        let mut ids: Vec<u64> = self
            .st
            .take_commands(worker, epoch)
            .commands
            .into_iter()
            .filter_map(|c| match c {
                Command::DeleteBlock(id) => Some(id),
                _ => None,
            })
            .collect();
        ids.sort();
        ids
    }

    /// The file's blocks as (id, len), in file order.
    fn blocks_of(&self, path: &str) -> Vec<(u64, u64)> {
        self.st.blocks().ns().files[path]
            .blocks
            .iter()
            .map(|b| (b.id, b.len))
            .collect()
    }

    fn open_writes(&self) -> Vec<String> {
        self.st.blocks().open_writes()
    }
}

/// A writer that put two full blocks on w1 and went silent: HDFS's soft
/// limit lets another client's create take the path only once it has been
/// silent for `lease_soft`; before, the refusal says when.
#[test]
fn a_create_past_the_soft_limit_recovers_the_silent_writers_lease() {
    let mut f = fixture("soft");
    let t = f.at(0);
    let lease = f.create("/f", "ann", false, t);
    for i in 0..2 {
        let id = f.alloc("/f", lease, Some(i * B), f.at(i));
        f.report("w1", id, B, f.at(i));
    }
    // Silent since second 1: within the soft limit the path stays ann's.
    let e = f.try_create("/f", "bob", false, f.at(31)).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, MasterError::AlreadyExists(_)), "{e:?}");
    assert!(m.contains("being written by another client"), "{m}");
    assert!(m.contains("may be recovered in 30.0s"), "{m}");
    assert_eq!(f.open_writes(), vec!["/f"]);
    // Past it, bob's create recovers ann's lease: her two blocks are the
    // file now, so a create without overwrite says so.
    let e = f.try_create("/f", "bob", false, f.at(61)).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, MasterError::AlreadyExists(_)), "{e:?}");
    assert!(m.contains("/f already exists"), "{m}");
    assert!(
        m.contains("the previous writer's lease was recovered"),
        "{m}"
    );
    assert!(m.contains("closed at 131072 bytes in 2 blocks"), "{m}");
    assert!(f.open_writes().is_empty());
    let st = f.st.blocks().file_status("/f", f.st.cluster()).unwrap();
    assert_eq!((st.size, st.owner.as_str()), (2 * B, "ann"));
    assert!(st.blocks.iter().all(|b| b.replicas[0].name == "w1"));

    // With overwrite, the create past the soft limit goes through at once.
    let lease = f.create("/g", "ann", false, f.at(100));
    let id = f.alloc("/g", lease, Some(0), f.at(100));
    f.report("w2", id, 10, f.at(100));
    assert!(f.try_create("/g", "ann", true, f.at(159)).is_err());
    f.create("/g", "ann", true, f.at(160));
    assert_eq!(f.blocks_of("/g"), vec![(id, 10)]);
    assert_eq!(f.open_writes(), vec!["/g"], "the new write is open");
}

/// A writer slower than the soft limit per block keeps its path by
/// renewing (`RenewLease`, every half soft limit, as HDFS's clients): a
/// renewal counts as hearing from it, and a renewal under a lease that is
/// gone fails.
#[test]
fn a_renewed_lease_is_kept_past_the_soft_limit() {
    let mut f = fixture("renew");
    let lease = f.create("/r", "ann", false, f.at(0));
    assert_eq!(f.st.blocks().renew_every(), Duration::from_secs(30));
    for secs in [30, 60, 90] {
        f.st.renew_lease("/r", lease, f.at(secs)).unwrap();
    }
    let e = f.try_create("/r", "bob", true, f.at(140)).unwrap_err();
    assert!(
        e.to_string().contains("being written by another client"),
        "{e}"
    );
    assert_eq!(f.open_writes(), vec!["/r"]);
    assert!(f.st.renew_lease("/r", lease + 1, f.at(140)).is_err());
    assert!(f.st.renew_lease("/other", lease, f.at(140)).is_err());
    // Silent past the soft limit since its last renewal: taken over.
    f.create("/r", "bob", true, f.at(151));
    assert!(matches!(
        f.st.renew_lease("/r", lease, f.at(152)),
        Err(MasterError::FailedPrecondition(_))
    ));
}

/// Nobody asks for the path again: the master's tick closes the file once
/// its writer has been silent for `lease_hard`, and not before. A new block
/// renews the lease.
#[test]
fn the_tick_recovers_a_lease_past_the_hard_limit_and_no_sooner() {
    let mut f = fixture("hard");
    let lease = f.create("/h", "ann", false, f.at(0));
    let a = f.alloc("/h", lease, Some(0), f.at(0));
    f.report("w1", a, B, f.at(0));
    // The second block renews the lease at second 600.
    let b = f.alloc("/h", lease, Some(B), f.at(600));
    f.report("w2", b, 5, f.at(600));
    for secs in [61, 3600, 600 + 3599] {
        let now = f.at(secs);
        f.beat_all(now);
        f.st.on_tick(now);
        assert_eq!(f.open_writes(), vec!["/h"], "recovered at {secs}s");
    }
    let now = f.at(600 + 3600);
    f.beat_all(now);
    f.st.on_tick(now);
    assert!(f.open_writes().is_empty());
    assert_eq!(f.blocks_of("/h"), vec![(a, B), (b, 5)]);
    // Its blocks are the namespace's now: re-replicated to factor 2.
    let st = f.st.blocks().file_status("/h", f.st.cluster()).unwrap();
    assert_eq!(st.size, B + 5);
    assert_eq!(f.st.blocks().under_replicated(), 2);
}

/// The file ends at its last complete block in file order: blocks are
/// allocated out of order and retried under new ids, so their offsets, not
/// their ids, place them; a hole (a block no worker finalized) ends the
/// file even if later blocks are stored, and those are deleted.
#[test]
fn recovery_keeps_the_longest_acknowledged_prefix_in_file_order() {
    let mut f = fixture("prefix");
    let t = f.at(0);
    let lease = f.create("/p", "ann", false, t);
    // Allocation order: 1st block second, a failed attempt at the third
    // place, its retry, a fourth block stored, and the third place's hole.
    let second = f.alloc("/p", lease, Some(B), t);
    let first = f.alloc("/p", lease, Some(0), t);
    let failed = f.alloc("/p", lease, Some(2 * B), t);
    let retry = f.alloc("/p", lease, Some(2 * B), t);
    let hole = f.alloc("/p", lease, Some(3 * B), t);
    let after_hole = f.alloc("/p", lease, Some(4 * B), t);
    let unplaced = f.alloc("/p", lease, None, t);
    for (id, len) in [(second, B), (first, B), (retry, B), (after_hole, 7)] {
        f.report("w1", id, len, t);
    }
    f.report("w2", unplaced, B, t);
    f.deletes("w1");
    f.deletes("w2");
    let r = f.st.recover_lease("/p", f.at(5)).unwrap();
    assert_eq!(
        r.outcome,
        Outcome::Closed {
            bytes: 3 * B,
            blocks: 3
        }
    );
    assert_eq!(
        (r.holder.as_str(), r.silent),
        ("ann", Duration::from_secs(5))
    );
    assert_eq!(f.blocks_of("/p"), vec![(first, B), (second, B), (retry, B)]);
    // What is not the file goes, as an abandon's blocks do.
    assert_eq!(f.deletes("w1"), vec![after_hole]);
    assert_eq!(f.deletes("w2"), vec![unplaced]);
    // The failed attempt and the hole are forgotten too: a late replica
    // of either is no block of the namespace's.
    for id in [failed, hole] {
        let cmds = f.report("w2", id, B, t);
        assert!(cmds.contains(&Command::QuarantineBlock(id)), "{cmds:?}");
    }
    // The first block's only replica lost: nothing is acknowledged from
    // the start, whatever follows.
    let lease = f.create("/q", "ann", false, t);
    let a = f.alloc("/q", lease, Some(0), t);
    let b = f.alloc("/q", lease, Some(B), t);
    f.report("w1", a, B, t);
    f.report("w2", b, B, t);
    let epoch = f.epoch("w1");
    f.st.on_heartbeat(
        Heartbeat {
            name: "w1".into(),
            epoch,
            blocks_removed: vec![a],
            ..Default::default()
        },
        t,
    );
    let r = f.st.recover_lease("/q", t).unwrap();
    assert_eq!(r.outcome, Outcome::Removed);
}

/// A write with no block acknowledged leaves nothing visible, and frees
/// its path; a path with no open write is said to have none.
#[test]
fn a_write_with_no_acknowledged_block_is_removed() {
    let mut f = fixture("empty");
    let lease = f.create("/e", "ann", false, f.at(0));
    let id = f.alloc("/e", lease, Some(0), f.at(0));
    let r = f.st.recover_lease("/e", f.at(1)).unwrap();
    assert_eq!(r.outcome, Outcome::Removed);
    assert!(f.open_writes().is_empty());
    assert!(matches!(
        f.st.blocks().file_status("/e", f.st.cluster()),
        Err(MasterError::NotFound(_))
    ));
    // Its block is no longer the write's: a late replica is quarantined.
    let cmds = f.report("w1", id, B, f.at(2));
    assert!(cmds.contains(&Command::QuarantineBlock(id)), "{cmds:?}");
    assert_eq!(
        f.st.recover_lease("/e", f.at(2)).unwrap().outcome,
        Outcome::NoOpenWrite
    );
    f.create("/e", "bob", false, f.at(3));
}

/// Only the writer or an admin may recover a write (it would publish or,
/// with an overwrite, replace another's partial file), and no one a
/// task's: its job ends it, and only the hard limit overrides that.
#[test]
fn who_may_recover_and_a_tasks_write_waits_for_the_hard_limit() {
    let mut f = fixture("who");
    f.create("/w", "ann", false, f.at(0));
    let id = |name: &str, role| Identity {
        name: name.into(),
        role,
        worker: false,
    };
    let blocks = f.st.blocks();
    assert!(blocks.may_recover("/w", &id("ann", Role::User)).is_ok());
    assert!(blocks.may_recover("/w", &id("admin", Role::Admin)).is_ok());
    assert!(blocks
        .may_recover("/nothing", &id("bob", Role::User))
        .is_ok());
    let e = blocks
        .may_recover("/w", &id("bob", Role::User))
        .unwrap_err();
    assert!(matches!(e, MasterError::PermissionDenied(_)), "{e:?}");
    assert!(e.to_string().contains("being written by \"ann\""), "{e}");

    let lease =
        f.st.create_file(
            CreateFile {
                path: "/out/part-00000".into(),
                writer: "w1".into(),
                owner: "worker".into(),
                ..Default::default()
            },
            f.at(0),
        )
        .unwrap()
        .lease;
    let b = f.alloc("/out/part-00000", lease, Some(0), f.at(0));
    f.report("w1", b, 3, f.at(0));
    let e = f.st.recover_lease("/out/part-00000", f.at(61)).unwrap_err();
    assert!(e.to_string().contains("a task on worker w1"), "{e}");
    let e = f
        .try_create("/out/part-00000", "ann", true, f.at(3000))
        .unwrap_err();
    assert!(e.to_string().contains("a task of a running job"), "{e}");
    let now = f.at(3600);
    f.beat_all(now);
    f.st.on_tick(now);
    assert!(f.open_writes().is_empty());
    assert_eq!(f.blocks_of("/out/part-00000"), vec![(b, 3)]);
}

/// Recovery with overwrite replaces the old file as a complete would, and
/// what it closed is in the edit log: a restarted master has the file.
#[test]
fn a_recovered_file_replaces_the_old_one_and_survives_a_restart() {
    let mut f = fixture("restart");
    let lease = f.create("/r", "ann", false, f.at(0));
    let old = f.alloc("/r", lease, Some(0), f.at(0));
    let meta = f.meta(old, 9);
    f.st.complete_file(CompleteFile {
        path: "/r".into(),
        lease,
        blocks: vec![CompletedBlock {
            block: Some(meta),
            stored_on: vec!["w2".into()],
        }],
    })
    .unwrap();
    let lease = f.create("/r", "ann", true, f.at(1));
    let a = f.alloc("/r", lease, Some(0), f.at(1));
    let b = f.alloc("/r", lease, Some(B), f.at(1));
    f.report("w1", a, B, f.at(1));
    f.report("w1", b, 100, f.at(1));
    f.deletes("w2");
    let r = f.st.recover_lease("/r", f.at(2)).unwrap();
    assert_eq!(
        r.outcome,
        Outcome::Closed {
            bytes: B + 100,
            blocks: 2
        }
    );
    assert_eq!(f.deletes("w2"), vec![old], "the old file's block goes");
    let want = f.st.blocks().ns().files["/r"].clone();
    assert_eq!(want.owner, "ann");
    // The master killed (dropped, no sync) and started again: it reads the
    // file from its edit log.
    let Fixture { st, cfg, _dir, .. } = f;
    drop(st);
    let reopened = MasterState::open(cfg, Instant::now()).unwrap();
    let got = &reopened.blocks().ns().files["/r"];
    assert_eq!(got, &want);
    assert_eq!(got.size(), B + 100);
    assert!(reopened.blocks().open_writes().is_empty());
}
