//! Launch on submit and results pushed, on a real loopback cluster: a job
//! runs and its end reaches `mr job run` without any heartbeat.

mod support;

use serde_json::Value;
use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{write_file, Cluster, Opts};

/// Each worker's last heartbeat, as the master recorded it.
fn last_heartbeats(c: &Cluster) -> HashMap<String, u64> {
    c.status()["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["name"].as_str().unwrap().to_string(),
                w["last_heartbeat_ms"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Heartbeats ten minutes apart: a worker registers at once, then sends
/// its first heartbeat ten minutes later, long after the test. The job
/// must launch its map and its reduces, and `mr job run` must see its end,
/// with no heartbeat at all: the master offers the idle workers' slots when
/// work appears, wakes each worker's long poll to hand it the launches, and
/// answers the client's wait when the job ends. Before, every launch waited
/// for the next heartbeat of a worker that could take it (here ten
/// minutes) and the client polled. The master's record of each worker's
/// last heartbeat (its registration) is the witness that none came.
#[test]
fn a_job_runs_and_its_end_reaches_the_client_with_no_heartbeat() {
    let c = Cluster::start(
        "launch-no-heartbeat",
        Opts {
            workers: 3,
            racks: 2,
            replication: 2,
            block_size: "1MiB",
            heartbeat: "600s",
            ..Opts::default()
        },
    );
    let before = last_heartbeats(&c);
    let text = b"to be or not to be\nthat is the question\n".repeat(100);
    let f = write_file(&c.dir, "in.txt", &text);
    c.mr_ok(&["fs", "put", f.to_str().unwrap(), "/in.txt"]);
    let t = Instant::now();
    let mut run = Command::new(env!("CARGO_BIN_EXE_mr"))
        .arg("--config")
        .arg(&c.config)
        .args([
            "-q",
            "job",
            "run",
            "wordcount",
            "--input",
            "/in.txt",
            "--output",
            "/out",
            "--reducers",
            "3",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The old code needs a heartbeat ten minutes away; a minute is plenty
    // for a debug build on a loaded machine.
    while run.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(60) {
            let _ = run.kill();
            panic!(
                "the job did not end within a minute: it waits for a heartbeat\n{}",
                c.logs_tail()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = run.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        c.logs_tail()
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(v["maps"], 1);
    assert_eq!(v["reduces"], 3);
    assert_eq!(
        last_heartbeats(&c),
        before,
        "a heartbeat came during the test: it proves nothing"
    );
    let counts: usize = ["/out/part-00000", "/out/part-00001", "/out/part-00002"]
        .iter()
        .map(|p| c.mr_ok(&["fs", "cat", p]).lines().count())
        .sum();
    assert_eq!(counts, 8, "one line per distinct word");
}
