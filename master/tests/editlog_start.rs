//! The `mr-master` binary on a data directory whose edit log is corrupt in
//! the middle: it refuses to start (non-zero exit, the offset, the last good
//! txid and the way out on stderr), and `--recover truncate` starts it with
//! the records before the corruption.

use master::blocks::editlog::EditLog;
use master::blocks::namespace::{Edit, FileMeta, Namespace};
use protocol::BlockInfo;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_mr-master");

fn add(path: &str, id: u64) -> Edit {
    Edit::AddFile {
        path: path.into(),
        file: FileMeta {
            mode: master::blocks::namespace::FILE_MODE,
            owner: String::new(),
            replication: 1,
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

/// A data directory holding six acknowledged puts, a cluster file pointing
/// at it, and the byte offset where the fourth record starts.
fn corrupt_dir(tag: &str) -> (PathBuf, PathBuf, PathBuf, u64) {
    let dir = std::env::temp_dir().join(format!("mr-editlog-start-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let data = dir.join("master");
    let mut offsets = Vec::new();
    {
        let (mut log, mut ns) = EditLog::open(&data, 100).unwrap();
        for (i, p) in ["/a", "/b", "/c", "/d", "/e", "/f"].iter().enumerate() {
            offsets.push(std::fs::metadata(data.join("edits.log")).unwrap().len());
            let e = add(p, i as u64);
            log.append(&e).unwrap();
            ns.apply(&e);
        }
    }
    // One byte flipped inside the fourth record's payload.
    let log = data.join("edits.log");
    let mut b = std::fs::read(&log).unwrap();
    b[offsets[3] as usize + 20] ^= 0x01;
    std::fs::write(&log, b).unwrap();
    let config = dir.join("cluster.toml");
    std::fs::write(
        &config,
        format!(
            "token = \"t\"\n\n[master]\naddr = \"127.0.0.1:0\"\ndata_dir = \"{}\"\n",
            data.display()
        ),
    )
    .unwrap();
    (dir, config, data, offsets[3])
}

fn files(data: &Path) -> Vec<String> {
    let (_, ns): (_, Namespace) = EditLog::open(data, 100).unwrap();
    ns.files.keys().cloned().collect()
}

#[test]
fn refuses_to_start_on_a_log_corrupt_in_the_middle() {
    let (dir, config, data, offset) = corrupt_dir("refuse");
    let before = std::fs::read(data.join("edits.log")).unwrap();
    let out = Command::new(BIN)
        .arg("--config")
        .arg(&config)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "it started:\n{stderr}");
    for needle in [
        &format!("{}", data.join("edits.log").display()),
        &format!("byte offset {offset}"),
        "last good txid is 3",
        "--recover truncate",
    ] {
        assert!(stderr.contains(needle), "no {needle:?} in:\n{stderr}");
    }
    assert_eq!(
        std::fs::read(data.join("edits.log")).unwrap(),
        before,
        "refusing changed the log"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn recover_truncate_starts_with_the_records_before() {
    let (dir, config, data, offset) = corrupt_dir("recover");
    let mut child = Command::new(BIN)
        .arg("--config")
        .arg(&config)
        .args(["--recover", "truncate"])
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Reads stderr on a thread so that a master that neither listens nor
    // exits fails the test instead of hanging it.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = String::new();
        for line in BufReader::new(stderr).lines() {
            let line = line.unwrap_or_default();
            seen.push_str(&line);
            seen.push('\n');
            if line.contains("mr-master listening") {
                let _ = tx.send((true, seen.clone()));
            }
        }
        let _ = tx.send((false, seen));
    });
    let (listening, log) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the master listens or exits within 60 s");
    let _ = child.kill();
    let _ = child.wait();
    assert!(listening, "it did not start:\n{log}");
    assert!(log.contains("edit log truncated"), "{log}");
    assert!(log.contains(&format!("offset={offset}")), "{log}");
    let backups: Vec<_> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("edits.log.corrupt-"))
        .collect();
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert_eq!(files(&data), vec!["/a", "/b", "/c"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn help_teaches_recover() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(help.contains("--recover <MODE>"), "{help}");
    assert!(help.contains("truncate"), "{help}");
}
