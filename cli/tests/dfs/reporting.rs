//! What the commands report: resources, globs, `--json`.

use super::*;

/// The registration carries a first resource sample: with heartbeats 30 s
/// apart, status right after start shows real memory, not zeros.
#[test]
fn a_new_worker_reports_its_resources_at_once() {
    let c = Cluster::start(
        "first-sample",
        Opts {
            workers: 2,
            racks: 1,
            heartbeat: "30s",
            ..Opts::default()
        },
    );
    for w in c.status()["workers"].as_array().unwrap() {
        let r = &w["resources"];
        assert!(r["mem_total_bytes"].as_u64().unwrap() > 0, "{w}");
        assert!(!r["cpu_per_core_pct"].as_array().unwrap().is_empty(), "{w}");
    }
}

/// Globs in `fs cat|ls|get|rm`, `fs cat DIR` as its `part-*` files in
/// order, and `--json` on put, get and rm.
#[test]
fn globs_and_directory_cat() {
    let c = Cluster::start(
        "globs",
        Opts {
            workers: 2,
            racks: 1,
            replication: 1,
            ..Opts::default()
        },
    );
    for (name, body) in [
        ("part-00001", "b\n"),
        ("part-00000", "a\n"),
        ("_SUCCESS", ""),
    ] {
        let f = write_file(&c.dir, name, body.as_bytes());
        let v: serde_json::Value = serde_json::from_str(&c.mr_ok(&[
            "fs",
            "put",
            f.to_str().unwrap(),
            &format!("/out/{name}"),
            "--json",
        ]))
        .unwrap();
        assert_eq!(v["bytes"].as_u64(), Some(body.len() as u64));
    }
    assert_eq!(c.mr_ok(&["fs", "cat", "/out/part-*"]), "a\nb\n");
    assert_eq!(
        c.mr_ok(&["fs", "cat", "/out"]),
        "a\nb\n",
        "cat DIR: its parts in order"
    );
    assert_eq!(c.mr_ok(&["fs", "cat", "/out/part-0000[1]"]), "b\n");
    let ls = c.json(&["fs", "ls", "/out/part-?????", "--json"]);
    assert_eq!(ls.as_array().unwrap().len(), 2);
    let out = c.mr(&["fs", "cat", "/out/nothing-*"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no file matches"));

    let dest = c.dir.join("got");
    std::fs::create_dir_all(&dest).unwrap();
    let v: serde_json::Value = serde_json::from_str(&c.mr_ok(&[
        "fs",
        "get",
        "/out/part-*",
        dest.to_str().unwrap(),
        "--json",
    ]))
    .unwrap();
    assert_eq!(v["files"].as_array().unwrap().len(), 2);
    assert_eq!(std::fs::read(dest.join("part-00001")).unwrap(), b"b\n");

    let v: serde_json::Value =
        serde_json::from_str(&c.mr_ok(&["fs", "rm", "/out/part-*", "--json"])).unwrap();
    assert_eq!(v["files_deleted"], 2);
    let out = c.mr(&["fs", "cat", "/out"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no part-* files"));
}

/// `--json` on the commands that report something besides files and jobs.
#[test]
fn reporting_commands_speak_json() {
    let c = Cluster::start(
        "json",
        Opts {
            workers: 1,
            racks: 1,
            replication: 1,
            ..Opts::default()
        },
    );
    let h = c.json(&["cluster", "health", "--json"]);
    assert_eq!(
        (h["up"].as_bool(), h["workers_alive"].as_u64()),
        (Some(true), Some(1))
    );
    // What the launch scripts wait with: enough workers, or a clear error.
    let h = c.json(&[
        "cluster",
        "health",
        "--workers",
        "1",
        "--wait",
        "5s",
        "--json",
    ]);
    assert_eq!(h["workers_alive"].as_u64(), Some(1));
    let r = c.mr(&["cluster", "health", "--workers", "2", "--wait", "500ms"]);
    let e = String::from_utf8_lossy(&r.stderr);
    assert!(
        !r.status.success() && e.contains("not healthy after") && e.contains("only 1 of 2"),
        "{e}"
    );
    let s = c.json(&[
        "admin",
        "scheduler",
        "set",
        "delay",
        "node_wait=2",
        "--json",
    ]);
    assert_eq!(s["name"], "delay");
    assert_eq!(
        c.json(&["admin", "scheduler", "show", "--json"])["name"],
        "delay"
    );
    let names = c.json(&["admin", "scheduler", "list", "--json"]);
    assert!(names.as_array().unwrap().iter().any(|n| n == "fifo"));
    let sc = c.json(&["sim", "scenario", "list", "--json"]);
    assert!(sc
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["name"] == "lsap-fig3"));
}
