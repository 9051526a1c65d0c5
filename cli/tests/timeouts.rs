//! The task timeout on a real loopback cluster (issue 39): an attempt
//! whose progress stops while its worker goes on heartbeating is killed at
//! `[jobs] task_timeout` and tried again on another worker; one that never
//! progresses anywhere ends the job with an error that says so.

mod support;

use serde_json::Value;
use std::time::Duration;
use support::{write_file, Cluster, Opts};

fn opts() -> Opts {
    Opts {
        workers: 3,
        racks: 1,
        block_size: "256KiB",
        replication: 2,
        extra_toml: "[jobs]\ntask_timeout = \"2s\"\n",
        ..Opts::default()
    }
}

/// The job's attempt records, from its history.
fn attempts(c: &Cluster, id: &str) -> Vec<Value> {
    let out = c.mr(&["job", "history", id]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "task")
        .collect()
}

#[test]
fn a_stalled_attempt_moves_at_the_task_timeout_and_one_stalled_everywhere_ends_the_job() {
    let c = Cluster::start("timeouts", opts());
    let src = write_file(&c.dir, "in.txt", b"a b c\nb c\nc\n");
    c.mr_ok(&["fs", "put", src.to_str().unwrap(), "/in"]);

    // Held: the attempt sits in its slot, reading nothing, as on a frozen
    // disk, while its worker heartbeats.
    let release = c.dir.join("release");
    let hold = format!("hold_maps={}", release.display());
    let id = c.mr_ok(&[
        "job",
        "submit",
        "wordcount",
        "--input",
        "/in",
        "--output",
        "/out",
        "--param",
        &hold,
    ]);
    let id = id.trim().to_string();
    c.wait_for("a map attempt to time out", Duration::from_secs(60), |c| {
        let v = c.json(&["job", "status", &id, "--json"]);
        v["progress"]["map_attempts_failed"].as_u64() >= Some(1)
    });
    // Let the next attempt (held too, elsewhere) go: the job ends well.
    std::fs::write(&release, b"").unwrap();
    let done = c.json(&["job", "wait", &id, "--json"]);
    assert_eq!(done["state"], "succeeded", "{done}");
    let maps: Vec<Value> = attempts(&c, &id)
        .into_iter()
        .filter(|a| a["kind"] == "map")
        .collect();
    let failed = maps.iter().find(|a| a["state"] == "failed").unwrap();
    let won = maps.iter().find(|a| a["state"] == "succeeded").unwrap();
    assert_ne!(
        failed["node"], won["node"],
        "the next attempt avoids the stalled worker: {maps:?}"
    );
    let out = String::from_utf8(c.output("/out")).unwrap();
    assert!(out.contains("c\t3") && out.contains("b\t2"), "{out}");

    // A Streaming mapper that sleeps, whatever worker it runs on: every
    // attempt is killed at the timeout (its own per-job timeout is the
    // default, 600 s), and the job fails saying why; no slot stays taken.
    let v: Value = serde_json::from_slice(
        &c.mr(&[
            "job",
            "run",
            "streaming",
            "--input",
            "/in",
            "--output",
            "/sleepy",
            "--mapper",
            "sleep 600",
            "--json",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(v["state"], "failed", "{v}");
    assert!(v["error"].as_str().unwrap().contains("task_timeout"), "{v}");
    c.wait_for("every slot to be free", Duration::from_secs(30), |c| {
        c.status()["workers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["free_map_slots"] == w["map_slots"])
    });
}
