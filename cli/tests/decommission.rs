//! Decommissioning end to end (issue 39, item 7): workers taken out of
//! service one after another at replication 2, by `mr admin decommission
//! --wait` or by a graceful stop (SIGTERM), lose no block when they are
//! then killed.

mod support;

use serde_json::Value;
use std::time::Duration;
use support::{random_bytes, write_file, Cluster, Opts};

fn opts() -> Opts {
    Opts {
        workers: 4,
        replication: 2,
        extra_toml: "[[users]]\nname = \"ann\"\ntoken = \"ann-decom-token\"\nrole = \"user\"\n",
        ..Opts::default()
    }
}

fn replicas(b: &Value) -> Vec<String> {
    b["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn worker(c: &Cluster, name: &str) -> Value {
    c.status()["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == name)
        .unwrap()
        .clone()
}

/// The file's blocks' replica lists.
fn placement(c: &Cluster, path: &str) -> Vec<Vec<String>> {
    c.stat(path)["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(replicas)
        .collect()
}

/// Waits until both are dead: then fsck must find every block (`mr admin
/// fsck` succeeds), the file reads back whole, and the blocks get back to
/// their replication factor (at once when `whole`: nothing of theirs was
/// counted any more when they went).
fn check_nothing_lost(c: &Cluster, gone: [&str; 2], path: &str, data: &[u8], whole: bool) {
    c.wait_for(
        "both stopped workers to be dead",
        Duration::from_secs(30),
        |c| gone.iter().all(|w| c.worker_state(w) == "dead"),
    );
    let f = c.json(&["admin", "fsck", "--json"]);
    assert_eq!(f["missing"], serde_json::json!([]), "{f}");
    if whole {
        assert_eq!(f["under_replicated"], serde_json::json!([]), "{f}");
    }
    c.wait_for("every block re-replicated", Duration::from_secs(30), |c| {
        c.json(&["admin", "fsck", "--json"])["under_replicated"] == serde_json::json!([])
    });
    let cat = c.mr(&["fs", "cat", path]);
    assert!(
        cat.status.success(),
        "{}",
        String::from_utf8_lossy(&cat.stderr)
    );
    assert!(cat.stdout == data, "cat returned other bytes");
}

#[test]
fn decommissioned_workers_are_killed_without_losing_a_block() {
    let mut c = Cluster::start("decom", opts());
    let data = random_bytes(6_000_000, 39);
    let local = write_file(&c.dir, "in.bin", &data);
    c.mr_ok(&["fs", "put", local.to_str().unwrap(), "/f"]);
    let before = placement(&c, "/f");
    assert_eq!(before.len(), 6);
    let held = |w: &str| before.iter().any(|r| r.iter().any(|x| x == w));

    // Only an admin decommissions.
    let refused = c.mr_as("ann-decom-token", &["admin", "decommission", "w1"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("permission denied"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert_eq!(worker(&c, "w1")["admin_state"], "normal");

    let out = c.mr(&["admin", "decommission", "w1", "--wait"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}\n{}", c.logs_tail());
    assert!(stdout.contains("w1 is decommissioned"), "{stdout}");
    if held("w1") {
        assert!(
            stderr.contains("w1: decommissioning,")
                && stderr.contains("blocks still under-replicated elsewhere"),
            "no progress on stderr: {stderr}"
        );
    }
    let w1 = worker(&c, "w1");
    assert!(
        w1["state"] == "alive"
            && w1["admin_state"] == "decommissioned"
            && w1["blocks_under_replicated"] == 0,
        "{w1}"
    );
    let text = c.mr_ok(&["cluster", "status"]);
    assert!(text.contains("alive, decommissioned"), "{text}");
    // Still a source: w1's replicas are neither trimmed nor hidden, and
    // each of its blocks has two replicas besides.
    for (b, r) in placement(&c, "/f").iter().enumerate() {
        let others = r.iter().filter(|w| *w != "w1").count();
        assert!(others >= 2, "block {b}: {r:?}");
        assert_eq!(
            r.contains(&"w1".to_string()),
            before[b].contains(&"w1".to_string())
        );
    }

    let v = c.json(&["admin", "decommission", "w2", "--wait", "--json"]);
    assert_eq!(v["admin_state"], "decommissioned", "{v}");
    for r in placement(&c, "/f") {
        assert!(
            r.contains(&"w3".into()) && r.contains(&"w4".into()),
            "{r:?}"
        );
    }
    c.kill("w1");
    c.kill("w2");
    check_nothing_lost(&c, ["w1", "w2"], "/f", &data, true);
    // A dead worker stays decommissioned until recommissioned.
    assert_eq!(worker(&c, "w1")["admin_state"], "decommissioned");
    let v = c.json(&["admin", "recommission", "w1", "--json"]);
    assert_eq!(v["admin_state"], "normal", "{v}");
    assert!(!c.mr(&["admin", "decommission", "w9"]).status.success());
}

/// A graceful stop drains: the SIGTERM'd worker waits until the master
/// has copied its blocks, so the other holder of a block can be killed
/// right after it exits. Two workers sharing a block are chosen, so that
/// a stop without the drain loses that block.
#[test]
fn a_sigterm_drains_the_workers_blocks_before_it_exits() {
    let mut c = Cluster::start("decom-term", opts());
    let data = random_bytes(6_000_000, 40);
    let local = write_file(&c.dir, "in.bin", &data);
    c.mr_ok(&["fs", "put", local.to_str().unwrap(), "/f"]);
    c.wait_for("safe mode to end", Duration::from_secs(30), |c| {
        c.json(&["admin", "safemode", "get", "--json"])["safe_mode"] == false
    });
    let pair = placement(&c, "/f")[0].clone();
    let (first, second) = (pair[0].clone(), pair[1].clone());
    c.terminate(&first, Duration::from_secs(60));
    c.kill(&second);
    // `second` was a normal worker: its blocks are re-replicated from the
    // copies the drain made.
    check_nothing_lost(&c, [first.as_str(), second.as_str()], "/f", &data, false);
}
