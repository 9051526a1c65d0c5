//! Several metadata directories written alike: a copy lost, behind, failed
//! or corrupt, and what the master does about each.

use super::*;
use crate::blocks::editlog::FULL_DIRS;
use crate::blocks::namespace::{FileMeta, FILE_MODE};
use crate::blocks::Blocks;
use common::config::ClusterConfig;
use protocol::BlockInfo;
use std::fs;
use std::time::Instant;

/// A cluster file with `data_dir` = `root/m` and `data_dirs` = [`root/copy`].
fn config(tag: &str) -> (ClusterConfig, PathBuf, PathBuf, PathBuf) {
    let root = std::env::temp_dir().join(format!(
        "mr-journal-{tag}-{}-{}",
        std::process::id(),
        fastrand::u64(..)
    ));
    let (m, copy) = (root.join("m"), root.join("copy"));
    let toml = format!(
        "token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = {m:?}\n\
         data_dirs = [{copy:?}]\n"
    );
    (ClusterConfig::parse(&toml).unwrap(), root, m, copy)
}

/// A cluster file whose only metadata directory is `dir`.
fn alone(dir: &Path) -> ClusterConfig {
    let toml = format!("token = \"t\"\n[master]\naddr = \"127.0.0.1:7070\"\ndata_dir = {dir:?}\n");
    ClusterConfig::parse(&toml).unwrap()
}

fn open(cfg: &ClusterConfig) -> Blocks {
    let mut b = Blocks::open(cfg, Instant::now()).unwrap();
    b.set_free_space_probe(Box::new(|_| Ok(u64::MAX)));
    b
}

fn add_file(path: &str, id: u64) -> Edit {
    Edit::AddFile {
        path: path.into(),
        file: FileMeta {
            mode: FILE_MODE,
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

fn put(b: &mut Blocks, path: &str) {
    let id = b.allocate_block_id().unwrap();
    b.commit(add_file(path, id)).unwrap();
}

fn names(ns: &Namespace) -> Vec<String> {
    ns.files.keys().cloned().collect()
}

/// What `dir` holds, read without writing: its txid, generation and files.
fn held(dir: &Path) -> (u64, u64, Vec<String>) {
    let l = editlog::load(dir).unwrap();
    (l.txid, l.ns.generation, names(&l.ns))
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn set_full(dirs: &[&Path]) {
    FULL_DIRS.with(|d| *d.borrow_mut() = dirs.iter().map(|p| p.to_path_buf()).collect());
}

/// (a) The disk under `data_dir` replaced while the master was stopped:
/// the start fills it from the other copy, and both then hold every edit.
#[test]
fn an_emptied_directory_is_filled_from_the_others_at_open() {
    let (cfg, root, m, copy) = config("emptied");
    {
        let mut b = open(&cfg);
        for p in ["/a", "/b", "/c"] {
            put(&mut b, p);
        }
    }
    fs::remove_dir_all(&m).unwrap();
    fs::create_dir_all(&m).unwrap();
    let b = open(&cfg);
    assert_eq!(names(b.ns()), ["/a", "/b", "/c"]);
    drop(b);
    let (in_m, in_copy) = (held(&m), held(&copy));
    assert_eq!(in_m.2, ["/a", "/b", "/c"]);
    assert!(in_m.0 > 0);
    assert_eq!(in_m, in_copy);
    let _ = fs::remove_dir_all(&root);
}

/// (b) `data_dir` put back from an older copy: the newer copy wins
/// although it comes second, and the old one is rewritten from it.
#[test]
fn a_directory_behind_is_rewritten_from_the_newest() {
    let (cfg, root, m, copy) = config("behind");
    {
        let mut b = open(&cfg);
        put(&mut b, "/a");
    }
    let old = root.join("old");
    copy_dir(&m, &old);
    {
        let mut b = open(&cfg);
        put(&mut b, "/b");
        put(&mut b, "/c");
    }
    fs::remove_dir_all(&m).unwrap();
    fs::rename(&old, &m).unwrap();
    assert_eq!(held(&m).2, ["/a"], "the older copy is in data_dir");
    let b = open(&cfg);
    assert_eq!(names(b.ns()), ["/a", "/b", "/c"]);
    drop(b);
    assert_eq!(held(&m), held(&copy));
    assert_eq!(held(&m).2, ["/a", "/b", "/c"]);
    let _ = fs::remove_dir_all(&root);
}

/// (c) One directory's disk fails a write: the edit is still acknowledged
/// and applied, `/healthz` names the failed directory while the other
/// takes edits, a tick while the disk is still full leaves it failed, and
/// once the disk has room a tick restores it; it then holds every edit on
/// its own.
#[test]
fn a_failed_directory_is_skipped_then_restored_with_every_edit() {
    let (cfg, root, m, copy) = config("onefails");
    let mut b = open(&cfg);
    put(&mut b, "/a");
    set_full(&[&copy]);
    put(&mut b, "/b");
    assert!(b.ns().files.contains_key("/b"));
    let h = b.health();
    assert_eq!(h.len(), 1, "{h:?}");
    assert!(
        h[0].contains(&format!("edit log is failed in {}", copy.display())),
        "{h:?}"
    );
    assert!(
        h[0].contains("the other metadata directories take"),
        "{h:?}"
    );
    put(&mut b, "/c");
    b.check_resources();
    assert_eq!(b.health().len(), 1, "restored while its disk is still full");
    set_full(&[]);
    b.check_resources();
    assert!(b.health().is_empty(), "{:?}", b.health());
    put(&mut b, "/d");
    drop(b);
    for dir in [&copy, &m] {
        let b = open(&alone(dir));
        assert_eq!(
            names(b.ns()),
            ["/a", "/b", "/c", "/d"],
            "{} on its own",
            dir.display()
        );
    }
    let _ = fs::remove_dir_all(&root);
}

/// (d) Every directory fails the write: the edit is refused and not
/// applied, `/healthz` names both; once there is room the next edit
/// restores them first and is taken by both.
#[test]
fn an_edit_no_directory_took_is_refused() {
    let (cfg, root, m, copy) = config("allfail");
    let mut b = open(&cfg);
    put(&mut b, "/a");
    let ids = [
        b.allocate_block_id().unwrap(),
        b.allocate_block_id().unwrap(),
    ];
    set_full(&[&m, &copy]);
    let e = b.commit(add_file("/b", ids[0])).unwrap_err().to_string();
    assert!(
        e.contains("the edit is refused: no metadata directory took it"),
        "{e}"
    );
    assert!(
        !b.ns().files.contains_key("/b"),
        "a refused edit was applied"
    );
    assert!(b.commit(add_file("/b", ids[0])).is_err(), "still full");
    let h = b.health();
    assert_eq!(h.len(), 2, "{h:?}");
    for (p, dir) in h.iter().zip([&m, &copy]) {
        assert!(p.contains(&dir.display().to_string()), "{p}");
        assert!(p.contains("as in every metadata directory"), "{p}");
    }
    set_full(&[]);
    b.commit(add_file("/c", ids[1])).unwrap();
    assert!(b.health().is_empty(), "{:?}", b.health());
    drop(b);
    for dir in [&m, &copy] {
        assert_eq!(held(dir).2, ["/a", "/c"], "{}", dir.display());
    }
    let _ = fs::remove_dir_all(&root);
}

/// (e) A corrupt copy (a flipped snapshot byte; a log corrupt in the
/// middle) refuses the start, naming it and the copies the operator can
/// start from; the good copy is left as it was. Moving the corrupt one
/// aside then starts from the other, which fills its place.
#[test]
fn a_corrupt_directory_refuses_the_start_naming_it() {
    for (tag, file, at) in [("snap", "fsimage", None), ("log", "edits.log", Some(19))] {
        let (cfg, root, m, copy) = config(&format!("corrupt-{tag}"));
        {
            let mut b = open(&cfg);
            put(&mut b, "/a");
            put(&mut b, "/b");
        }
        let before = held(&m);
        let path = copy.join(file);
        let mut bytes = fs::read(&path).unwrap();
        // Inside the first record's payload, with intact records after it;
        // or the snapshot's last byte.
        let at = at.unwrap_or(bytes.len() - 1);
        bytes[at] ^= 0x20;
        fs::write(&path, bytes).unwrap();
        let e = match Blocks::open(&cfg, Instant::now()) {
            Ok(_) => panic!("{tag}: started on a corrupt copy"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains(&format!(
                "metadata directory {} cannot be loaded",
                copy.display()
            )),
            "{tag}: {e}"
        );
        assert!(
            e.contains(&format!("directories ({}) hold copies", m.display())),
            "{tag}: {e}"
        );
        assert!(
            e.contains("move") && e.contains("--recover truncate"),
            "{tag}: {e}"
        );
        assert_eq!(held(&m), before, "{tag}: the good copy was written");

        fs::rename(&copy, root.join("copy.bad")).unwrap();
        let b = open(&cfg);
        assert_eq!(names(b.ns()), ["/a", "/b"], "{tag}");
        drop(b);
        assert_eq!(held(&copy), held(&m), "{tag}");
        let _ = fs::remove_dir_all(&root);
    }
}

/// `--recover truncate` cuts every directory's log; a directory cut back
/// is then behind, so the start takes the intact copy and loses nothing.
#[test]
fn recover_truncate_applies_to_every_directory() {
    let (cfg, root, m, copy) = config("truncate");
    {
        let mut b = open(&cfg);
        for p in ["/a", "/b", "/c"] {
            put(&mut b, p);
        }
    }
    let path = copy.join("edits.log");
    let mut bytes = fs::read(&path).unwrap();
    bytes[19] ^= 0x20;
    fs::write(&path, bytes).unwrap();
    let done = recover_truncate(&cfg.master.metadata_dirs()).unwrap();
    assert_eq!(done[0], Recovered::Nothing);
    assert!(
        matches!(done[1], Recovered::Truncated { .. }),
        "{:?}",
        done[1]
    );
    let b = open(&cfg);
    assert_eq!(names(b.ns()), ["/a", "/b", "/c"]);
    drop(b);
    assert_eq!(held(&copy), held(&m));
    let _ = fs::remove_dir_all(&root);
}

/// A directory below the reserve puts the master in safe mode, named; a
/// failed directory is not restored while its disk is below it, and is
/// once it is not.
#[test]
fn each_directory_is_held_to_the_reserve() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let (cfg, root, m, copy) = config("reserve");
    let mut b = open(&cfg);
    let copy_free = Arc::new(AtomicU64::new(1 << 30));
    let (f, c) = (copy_free.clone(), copy.clone());
    b.set_free_space_probe(Box::new(move |d| {
        Ok(if d == c {
            f.load(Ordering::SeqCst)
        } else {
            1 << 30
        })
    }));
    put(&mut b, "/a");
    set_full(&[&copy]);
    put(&mut b, "/b");
    set_full(&[]);
    copy_free.store(1 << 20, Ordering::SeqCst);
    b.check_resources();
    let e = b.check_writable("create /x").unwrap_err().to_string();
    assert!(
        e.contains(&format!(
            "metadata disk ({}) has 1.0 MiB free",
            copy.display()
        )),
        "{e}"
    );
    assert!(!e.contains(&format!("({})", m.display())), "{e}");
    let h = b.health();
    assert_eq!(h.len(), 2, "the failed directory and the low disk: {h:?}");
    copy_free.store(1 << 30, Ordering::SeqCst);
    b.check_resources();
    assert!(b.health().is_empty(), "{:?}", b.health());
    assert!(b.check_writable("create /x").is_ok());
    drop(b);
    assert_eq!(held(&copy).2, ["/a", "/b"]);
    let _ = fs::remove_dir_all(&root);
}
