//! Unit tests of the edit log: replay, snapshots, and every kind of
//! corruption and torn write it must refuse or salvage.
use super::*;
use crate::blocks::namespace::FileMeta;
use protocol::BlockInfo;

fn add(path: &str, id: u64) -> Edit {
    Edit::AddFile {
        path: path.into(),
        file: FileMeta {
            mode: crate::blocks::namespace::FILE_MODE,
            owner: String::new(),
            replication: 3,
            block_size: 64,
            blocks: vec![BlockInfo {
                id,
                len: 5,
                crc32c: 9,
                generation: 0,
            }],
            mtime_ms: 1,
        },
    }
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mr-editlog-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    d
}

fn names(ns: &Namespace) -> Vec<String> {
    ns.files.keys().cloned().collect()
}

const SIX: [&str; 6] = ["/a", "/b", "/c", "/d", "/e", "/f"];

/// A log of six acknowledged puts (no snapshot in between: the fsimage
/// is empty, txid 0); returns the byte offset where each record starts
/// and the log's length.
fn six_puts(dir: &Path) -> (Vec<usize>, usize) {
    let (mut log, mut ns) = EditLog::open(dir, 100).unwrap();
    for (i, p) in SIX.iter().enumerate() {
        let e = add(p, i as u64);
        log.append(&e).unwrap();
        ns.apply(&e);
        log.maybe_checkpoint(&ns).unwrap();
    }
    drop(log);
    let bytes = fs::read(dir.join(LOG)).unwrap();
    let mut starts = Vec::new();
    let mut o = LOG_MAGIC.len();
    while o < bytes.len() {
        starts.push(o);
        o += HEADER + u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap()) as usize;
    }
    assert_eq!(starts.len(), 6);
    (starts, bytes.len())
}

fn flip(path: &Path, at: usize) {
    let mut b = fs::read(path).unwrap();
    b[at] ^= 0x20;
    fs::write(path, b).unwrap();
}

fn backups(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".corrupt-"))
        .collect();
    v.sort();
    v
}

#[test]
fn replays_and_snapshots() {
    let dir = tmpdir("replay");
    {
        let (mut log, mut ns) = EditLog::open(&dir, 3).unwrap();
        for (i, p) in ["/a", "/b", "/c", "/d", "/e"].iter().enumerate() {
            let e = add(p, i as u64);
            log.append(&e).unwrap();
            ns.apply(&e);
            log.maybe_checkpoint(&ns).unwrap();
        }
        let e = Edit::Delete {
            paths: vec!["/b".into()],
            dirs: vec![],
        };
        log.append(&e).unwrap();
    }
    let (_, ns) = EditLog::open(&dir, 3).unwrap();
    assert_eq!(names(&ns), vec!["/a", "/c", "/d", "/e"]);
    // And again: the start's own checkpoint lost nothing.
    let (_, ns) = EditLog::open(&dir, 3).unwrap();
    assert_eq!(names(&ns), vec!["/a", "/c", "/d", "/e"]);
    fs::remove_dir_all(&dir).unwrap();
}

/// The issue's reproduction: one byte flipped a third of the way into
/// the log used to leave 1 of 6 files with only a warning.
#[test]
fn byte_flipped_mid_log_refuses_then_recover_truncate_keeps_the_records_before() {
    let dir = tmpdir("midflip");
    let (starts, len) = six_puts(&dir);
    let at = len / 3;
    let bad = starts.iter().rposition(|&s| s <= at).unwrap();
    assert!(bad < 5, "the flip is not in the last record");
    flip(&dir.join(LOG), at);
    let original = fs::read(dir.join(LOG)).unwrap();

    let err = EditLog::open(&dir, 100).err().expect("refuses to start");
    let msg = err.to_string();
    match &err {
        EditLogError::CorruptLog {
            path,
            offset,
            last_good_txid,
            ..
        } => {
            assert_eq!(path, &dir.join(LOG));
            assert_eq!(*offset, starts[bad] as u64);
            assert_eq!(*last_good_txid, bad as u64);
        }
        other => panic!("wrong error: {other}"),
    }
    assert!(
        msg.contains(&format!("byte offset {}", starts[bad])),
        "{msg}"
    );
    assert!(msg.contains(&format!("last good txid is {bad}")), "{msg}");
    assert!(msg.contains("--recover truncate"), "{msg}");
    assert!(msg.contains("edits.log"), "{msg}");
    // Refusing touched nothing.
    assert_eq!(fs::read(dir.join(LOG)).unwrap(), original);
    assert!(backups(&dir).is_empty());

    let r = recover_truncate(&dir).unwrap();
    let Recovered::Truncated {
        offset,
        last_good_txid,
        dropped_records,
        backup,
        ..
    } = r
    else {
        panic!("nothing truncated: {r:?}")
    };
    assert_eq!(offset, starts[bad] as u64);
    assert_eq!(last_good_txid, bad as u64);
    assert_eq!(dropped_records, (5 - bad) as u64);
    assert_eq!(
        fs::read(&backup).unwrap(),
        original,
        "the backup is the original"
    );
    assert_eq!(fs::metadata(dir.join(LOG)).unwrap().len(), offset);

    let (_, ns) = EditLog::open(&dir, 100).unwrap();
    assert_eq!(names(&ns), SIX[..bad].to_vec());
    // Recovering again finds nothing to do.
    assert_eq!(recover_truncate(&dir).unwrap(), Recovered::Nothing);
    fs::remove_dir_all(&dir).unwrap();
}

/// Every single byte of every record but the last, flipped: refused, at
/// that record's offset.
#[test]
fn every_byte_flipped_before_the_last_record_refuses() {
    let dir = tmpdir("everyflip");
    let (starts, _) = six_puts(&dir);
    let pristine = fs::read(dir.join(LOG)).unwrap();
    for at in LOG_MAGIC.len()..starts[5] {
        let mut b = pristine.clone();
        b[at] ^= 0x01;
        let rec = starts.iter().rposition(|&s| s <= at).unwrap();
        let s = scan(&b, 0);
        assert!(
            matches!(s.end, End::Corrupt { offset, .. } if offset == starts[rec]),
            "byte {at}: {:?}",
            s.end
        );
        assert_eq!(s.last_good_txid, rec as u64);
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn byte_flipped_in_last_record_payload_is_dropped_with_a_backup() {
    let dir = tmpdir("lastflip");
    let (starts, len) = six_puts(&dir);
    // A payload byte, and separately the stored checksum.
    for at in [len - 10, starts[5] + 5] {
        let _ = fs::remove_dir_all(&dir);
        let (_, _) = six_puts(&dir);
        flip(&dir.join(LOG), at);
        let (_, ns) = EditLog::open(&dir, 100).unwrap();
        assert_eq!(names(&ns), SIX[..5].to_vec(), "flip at {at}");
        assert_eq!(backups(&dir).len(), 1);
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// A flipped byte that shortens the last record's length leaves bytes
/// after it, which a crash never does: refused.
#[test]
fn last_record_length_shortened_refuses() {
    let dir = tmpdir("lastlen");
    let (starts, _) = six_puts(&dir);
    let mut b = fs::read(dir.join(LOG)).unwrap();
    let o = starts[5];
    let len = u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    b[o..o + 4].copy_from_slice(&(len - 1).to_le_bytes());
    fs::write(dir.join(LOG), b).unwrap();
    let err = EditLog::open(&dir, 100).err().expect("refuses");
    assert!(
        matches!(err, EditLogError::CorruptLog { offset, last_good_txid: 5, .. } if offset == starts[5] as u64),
        "{err}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// Bit rot in the second-to-last record, then a crash tearing the last
/// one: the torn tail does not excuse the acknowledged record before it.
#[test]
fn corrupt_record_before_a_torn_tail_refuses() {
    let dir = tmpdir("rot-torn");
    let (starts, len) = six_puts(&dir);
    let mut b = fs::read(dir.join(LOG)).unwrap();
    b[starts[4] + 12] ^= 0x04;
    b.truncate(len - 7);
    fs::write(dir.join(LOG), b).unwrap();
    let err = EditLog::open(&dir, 100).err().expect("refuses");
    assert!(
        matches!(err, EditLogError::CorruptLog { offset, last_good_txid: 4, .. } if offset == starts[4] as u64),
        "{err}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// A last record with a matching checksum was written whole, even if
/// this version cannot read it (an edit of a newer version): refused,
/// not dropped as torn.
#[test]
fn whole_but_unreadable_last_record_refuses() {
    let dir = tmpdir("unknown-op");
    let (starts, _) = six_puts(&dir);
    let mut b = fs::read(dir.join(LOG)).unwrap();
    b.truncate(starts[5]);
    let payload = br#"{"txid":6,"edit":{"op":"from_the_future"}}"#;
    b.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    b.extend_from_slice(&crc32c::crc32c(payload).to_le_bytes());
    b.extend_from_slice(payload);
    fs::write(dir.join(LOG), b).unwrap();
    let err = EditLog::open(&dir, 100).err().expect("refuses");
    assert!(
        matches!(err, EditLogError::CorruptLog { offset, last_good_txid: 5, .. } if offset == starts[5] as u64),
        "{err}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn torn_write_of_every_length_keeps_every_record_before() {
    let dir = tmpdir("torn");
    let (starts, len) = six_puts(&dir);
    let pristine = fs::read(dir.join(LOG)).unwrap();
    for cut in starts[5]..len {
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(LOG), &pristine[..cut]).unwrap();
        let (_, ns) = EditLog::open(&dir, 100).unwrap();
        assert_eq!(names(&ns), SIX[..5].to_vec(), "cut at {cut}");
        // The dropped tail did not survive the start's checkpoint.
        let (_, ns) = EditLog::open(&dir, 100).unwrap();
        assert_eq!(names(&ns), SIX[..5].to_vec(), "cut at {cut}, reopened");
    }
    // Zeros where the last record's blocks were never written.
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let mut b = pristine.clone();
    b[starts[5]..].fill(0);
    fs::write(dir.join(LOG), b).unwrap();
    let (_, ns) = EditLog::open(&dir, 100).unwrap();
    assert_eq!(names(&ns), SIX[..5].to_vec());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn torn_write_after_a_snapshot_keeps_everything_before() {
    let dir = tmpdir("tornsnap");
    let (mut log, mut ns) = EditLog::open(&dir, 4).unwrap();
    for (i, p) in SIX.iter().enumerate() {
        let e = add(p, i as u64);
        log.append(&e).unwrap();
        ns.apply(&e);
        log.maybe_checkpoint(&ns).unwrap();
    }
    drop(log);
    let b = fs::read(dir.join(LOG)).unwrap();
    fs::write(dir.join(LOG), &b[..b.len() - 3]).unwrap();
    let (_, ns) = EditLog::open(&dir, 4).unwrap();
    assert_eq!(names(&ns), SIX[..5].to_vec());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn byte_flipped_in_snapshot_refuses_even_with_recover() {
    let dir = tmpdir("snapflip");
    six_puts(&dir);
    // Fold the log into the snapshot.
    drop(EditLog::open(&dir, 100).unwrap());
    let snap = dir.join(SNAPSHOT);
    let len = fs::metadata(&snap).unwrap().len() as usize;
    for at in [3, 10, 17, len / 2, len - 1] {
        let pristine = fs::read(&snap).unwrap();
        flip(&snap, at);
        let err = EditLog::open(&dir, 100).err().expect("refuses");
        assert!(
            matches!(&err, EditLogError::CorruptSnapshot { path, .. } if *path == snap),
            "flip at {at}: {err}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains("fsimage") && msg.contains("cannot repair"),
            "{msg}"
        );
        assert!(matches!(
            recover_truncate(&dir),
            Err(EditLogError::CorruptSnapshot { .. })
        ));
        fs::write(&snap, pristine).unwrap();
    }
    let (_, ns) = EditLog::open(&dir, 100).unwrap();
    assert_eq!(names(&ns), SIX.to_vec());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn old_format_is_refused_not_read_as_empty() {
    let dir = tmpdir("oldfmt");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join(LOG),
        "{\"txid\":1,\"edit\":{\"op\":\"delete\",\"paths\":[\"/x\"]}}\n",
    )
    .unwrap();
    let err = EditLog::open(&dir, 100).err().expect("refuses");
    assert!(matches!(err, EditLogError::Format { .. }), "{err}");
    assert!(err.to_string().contains("earlier version"), "{err}");
    assert!(matches!(
        recover_truncate(&dir),
        Err(EditLogError::Format { .. })
    ));

    fs::remove_file(dir.join(LOG)).unwrap();
    fs::write(dir.join(OLD_SNAPSHOT), "{\"txid\":3,\"namespace\":{}}").unwrap();
    let err = EditLog::open(&dir, 100).err().expect("refuses");
    assert!(
        matches!(&err, EditLogError::Format { path, .. } if path.ends_with(OLD_SNAPSHOT)),
        "{err}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn txid_gap_is_corruption() {
    let dir = tmpdir("gap");
    let (starts, _) = six_puts(&dir);
    // Cut record 3 (txid 3) out whole: every frame is intact, the txids
    // are not.
    let b = fs::read(dir.join(LOG)).unwrap();
    let mut cut = b[..starts[2]].to_vec();
    cut.extend_from_slice(&b[starts[3]..]);
    fs::write(dir.join(LOG), cut).unwrap();
    let err = EditLog::open(&dir, 100).err().expect("refuses");
    assert!(
        matches!(err, EditLogError::CorruptLog { offset, last_good_txid: 2, .. } if offset == starts[2] as u64),
        "{err}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn failed_append_poisons_the_log() {
    let dir = tmpdir("poison");
    let (mut log, _) = EditLog::open(&dir, 100).unwrap();
    log.append(&add("/a", 1)).unwrap();
    // A read-only handle makes the next write fail.
    log.file = File::open(dir.join(LOG)).unwrap();
    assert!(log.append(&add("/b", 2)).is_err());
    assert!(log.failed.is_some());
    assert!(
        log.append(&add("/b", 2)).is_err(),
        "nothing more before a recovery"
    );
    drop(log);
    let (_, ns) = EditLog::open(&dir, 100).unwrap();
    assert_eq!(names(&ns), vec!["/a"]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn missing_snapshot_with_edits_is_its_own_error_never_an_empty_namespace() {
    let dir = tmpdir("nosnap");
    {
        // Snapshots at start and after every 2 edits: the log's first
        // record then follows a snapshot, as on any real master.
        let (mut log, mut ns) = EditLog::open(&dir, 2).unwrap();
        for (i, p) in ["/a", "/b", "/c"].iter().enumerate() {
            let e = add(p, i as u64);
            log.append(&e).unwrap();
            ns.apply(&e);
            log.maybe_checkpoint(&ns).unwrap();
        }
    }
    fs::remove_file(dir.join(SNAPSHOT)).unwrap();
    let log_before = fs::read(dir.join(LOG)).unwrap();
    for err in [
        EditLog::open(&dir, 2).err().expect("refused"),
        recover_truncate(&dir).expect_err("refused"),
    ] {
        assert!(matches!(err, EditLogError::MissingSnapshot { .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.contains("missing"), "{msg}");
        assert!(!msg.contains("--recover truncate"), "{msg}");
    }
    assert_eq!(fs::read(dir.join(LOG)).unwrap(), log_before);
    fs::remove_dir_all(&dir).unwrap();
}

/// Records from before owners were kept still load (as the admin's files),
/// and a job's commit gives its parts to the job's owner.
#[test]
fn records_without_owners_load_and_a_commit_sets_the_owner() {
    let old = r#"{"op":"add_file","path":"/a","file":{"replication":1,"block_size":64,"blocks":[],"mtime_ms":1}}"#;
    let e: Edit = serde_json::from_str(old).unwrap();
    let mut ns = Namespace::default();
    ns.apply(&e);
    assert_eq!(ns.files["/a"].owner, "");
    let old_commit = r#"{"op":"commit","renames":[["/a","/b"]],"add":[],"delete":[]}"#;
    ns.apply(&serde_json::from_str(old_commit).unwrap());
    assert_eq!(ns.files["/b"].owner, "");
    let commit = Edit::Commit {
        renames: vec![("/b".into(), "/c".into())],
        add: vec![],
        delete: vec![],
        owner: "ann".into(),
    };
    let text = serde_json::to_string(&commit).unwrap();
    ns.apply(&serde_json::from_str(&text).unwrap());
    assert_eq!(ns.files["/c"].owner, "ann");
    // An owner travels through the log; none is written when there is none.
    assert!(!serde_json::to_string(&add("/x", 1))
        .unwrap()
        .contains("owner"));
}
