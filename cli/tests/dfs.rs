//! Cluster core, end to end: real master and worker processes on loopback.

mod support;

use serde_json::Value;
use std::collections::HashSet;
use std::io::Write;
use std::process::{ChildStdin, Command, Stdio};
use std::time::Duration;
use support::{random_bytes, write_file, Cluster, Opts};

fn replicas(b: &Value) -> Vec<String> {
    b["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn all_blocks_have(c: &Cluster, path: &str, n: usize, excluded: &str) -> bool {
    let st = c.stat(path);
    st["blocks"].as_array().unwrap().iter().all(|b| {
        let r = replicas(b);
        r.len() == n && !r.iter().any(|w| w == excluded)
    })
}

#[test]
fn put_get_round_trip_with_rack_aware_replicas() {
    let c = Cluster::start("roundtrip", Opts::default());
    let data = random_bytes(50_000_000, 1);
    let local = write_file(&c.dir, "in.bin", &data);
    c.mr_ok(&["fs", "put", local.to_str().unwrap(), "/data/in.bin"]);
    let out = c.dir.join("out.bin");
    c.mr_ok(&["fs", "get", "/data/in.bin", out.to_str().unwrap()]);
    assert!(
        std::fs::read(&out).unwrap() == data,
        "get returned other bytes"
    );

    let st = c.stat("/data/in.bin");
    assert_eq!(st["size"], 50_000_000);
    let racks = c.racks();
    let blocks = st["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 48); // 50 MB in 1 MiB blocks
    for b in blocks {
        let r = replicas(b);
        assert_eq!(r.len(), 3, "block {b}");
        let distinct: HashSet<&String> = r.iter().collect();
        assert_eq!(distinct.len(), 3);
        let rs: HashSet<&String> = r.iter().map(|w| &racks[w]).collect();
        assert_eq!(rs.len(), 2, "replicas of {b} must span both racks");
    }
    let ls = c.mr_ok(&["fs", "ls", "/data"]);
    assert!(ls.contains("/data/in.bin"), "{ls}");
    let cat = c.mr(&["fs", "cat", "/data/in.bin"]);
    assert!(cat.status.success() && cat.stdout == data);

    // Without --force an existing file is kept; with it, replaced.
    let small = write_file(&c.dir, "small", b"hello\n");
    let again = c.mr(&["fs", "put", small.to_str().unwrap(), "/data/in.bin"]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    c.mr_ok(&["fs", "put", "-f", small.to_str().unwrap(), "/data/in.bin"]);
    assert_eq!(c.mr_ok(&["fs", "cat", "/data/in.bin"]), "hello\n");
    c.mr_ok(&["fs", "rm", "/data"]);
    assert!(!c.mr(&["fs", "stat", "/data/in.bin"]).status.success());
}

#[test]
fn dead_worker_is_detected_and_blocks_are_rereplicated() {
    let mut c = Cluster::start(
        "rereplicate",
        Opts {
            workers: 5,
            ..Opts::default()
        },
    );
    let data = random_bytes(6 << 20, 2);
    let local = write_file(&c.dir, "in.bin", &data);
    c.mr_ok(&["fs", "put", local.to_str().unwrap(), "/f"]);
    // Pick a worker that holds some replica.
    let st = c.stat("/f");
    let victim = replicas(&st["blocks"][0])[0].clone();
    c.kill(&victim);
    c.wait_for(
        "the killed worker to be dead",
        Duration::from_secs(20),
        |c| c.worker_state(&victim) == "dead",
    );
    c.wait_for("re-replication", Duration::from_secs(30), |c| {
        all_blocks_have(c, "/f", 3, &victim)
    });
    let out = c.dir.join("out.bin");
    c.mr_ok(&["fs", "get", "/f", out.to_str().unwrap()]);
    assert!(std::fs::read(&out).unwrap() == data);

    // It comes back: it registers again and is alive; extra replicas are trimmed.
    c.start_proc(&victim);
    c.wait_for("the worker to rejoin", Duration::from_secs(20), |c| {
        c.worker_state(&victim) == "alive"
    });
    c.wait_for("excess replicas trimmed", Duration::from_secs(30), |c| {
        all_blocks_have(c, "/f", 3, "")
    });
}

/// A block's pipeline broken in the middle: the writer's own worker w1
/// heads it, and the only worker of the other rack, w2, the second target
/// placement picks, is dead but not yet declared so. w1 answers that w2
/// failed, the writer tries the block again without w2, and the put
/// succeeds with every block on w1 and w3 (issue 27).
#[test]
fn a_dead_second_target_breaks_the_pipeline_and_the_block_goes_elsewhere() {
    let mut c = Cluster::start(
        "pipeline",
        Opts {
            workers: 3,
            replication: 2,
            // w2 stays live in the master's eyes for the whole put.
            heartbeat: "1s",
            dead_after: 60,
            ..Opts::default()
        },
    );
    assert_eq!(c.racks()["w2"], "r2");
    assert_eq!(c.racks()["w1"], c.racks()["w3"]);
    c.kill("w2");
    let cfg = common::config::ClusterConfig::load(&c.config).unwrap();
    let data = bytes::Bytes::from(random_bytes(3 << 20, 7));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let opts = rpc::dfs::PutOptions {
        replication: 2,
        writer: "w1".into(),
        ..Default::default()
    };
    let n = rt
        .block_on(async {
            let dfs = rpc::dfs::Dfs::connect(&cfg)?;
            dfs.put_bytes("/pipeline.bin", data.clone(), &opts).await
        })
        .unwrap();
    assert_eq!(n, 3 << 20);
    let st = c.stat("/pipeline.bin");
    let blocks = st["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 3);
    for b in blocks {
        let mut r = replicas(b);
        r.sort();
        assert_eq!(r, ["w1", "w3"], "block {b}");
    }
    let log = std::fs::read_to_string(c.dir.join("w1.log")).unwrap();
    assert!(
        log.contains("pipeline broken downstream") && log.contains("w2"),
        "w1 never reported the broken pipeline: {}",
        c.logs_tail()
    );
    let out = c.dir.join("out.bin");
    c.mr_ok(&["fs", "get", "/pipeline.bin", out.to_str().unwrap()]);
    assert!(
        std::fs::read(&out).unwrap() == data,
        "get returned other bytes"
    );
}

#[test]
fn master_restart_keeps_every_file() {
    let mut c = Cluster::start("restart", Opts::default());
    let mut files = Vec::new();
    for i in 0..5u64 {
        let data = random_bytes(300_000 * (i as usize + 1), 10 + i);
        let local = write_file(&c.dir, &format!("f{i}"), &data);
        let path = format!("/dir{}/f{i}", i % 2);
        c.mr_ok(&["fs", "put", local.to_str().unwrap(), &path]);
        files.push((path, data));
    }
    c.mr_ok(&["fs", "rm", "/dir0/f2"]);
    files.retain(|(p, _)| p != "/dir0/f2");
    c.kill("master");
    c.start_proc("master");
    c.wait_alive(4, Duration::from_secs(30));
    let ls = c.json(&["fs", "ls", "/dir1", "--json"]);
    assert_eq!(ls.as_array().unwrap().len(), 2);
    assert!(!c.mr(&["fs", "stat", "/dir0/f2"]).status.success());
    for (path, data) in &files {
        let out = c.dir.join("out");
        c.mr_ok(&["fs", "get", path, out.to_str().unwrap()]);
        assert!(
            &std::fs::read(&out).unwrap() == data,
            "{path} differs after restart"
        );
    }
}

#[test]
fn corrupt_replica_is_detected_and_replaced() {
    let c = Cluster::start(
        "corrupt",
        Opts {
            scan_interval: "500ms",
            ..Opts::default()
        },
    );
    let data = random_bytes(3 << 20, 3);
    let local = write_file(&c.dir, "in.bin", &data);
    c.mr_ok(&["fs", "put", local.to_str().unwrap(), "/f"]);
    let st = c.stat("/f");
    let b0 = &st["blocks"][0];
    let id = b0["id"].as_u64().unwrap();
    let holders = replicas(b0);
    // Flip one byte in two of the three replicas: any read order must still
    // return the right bytes.
    for w in &holders[..2] {
        let p = c.block_file(w, id);
        let mut bytes = std::fs::read(&p).unwrap();
        bytes[1000] ^= 0x01;
        std::fs::write(&p, bytes).unwrap();
    }
    let out = c.dir.join("out.bin");
    c.mr_ok(&["fs", "get", "/f", out.to_str().unwrap()]);
    assert!(
        std::fs::read(&out).unwrap() == data,
        "read returned corrupt bytes"
    );
    // Detected (by the read or the scanner), dropped and re-replicated.
    c.wait_for(
        "the corrupt replicas to be replaced",
        Duration::from_secs(30),
        |c| {
            let st = c.stat("/f");
            let r = replicas(&st["blocks"][0]);
            r.len() == 3
                && r.iter().all(|w| {
                    std::fs::read(c.block_file(w, id))
                        .map(|b| {
                            crc32c::crc32c(&b) == st["blocks"][0]["crc32c"].as_u64().unwrap() as u32
                        })
                        .unwrap_or(false)
                })
        },
    );
}

/// The only replica of a block rots: a read fails with a clear error
/// rather than returning wrong bytes, and the worker keeps the replica (it
/// used to delete it at the first failed read, destroying the last copy).
#[test]
fn a_corrupt_last_replica_fails_reads_clearly_and_is_kept() {
    let c = Cluster::start(
        "lastcopy",
        Opts {
            workers: 2,
            replication: 1,
            ..Opts::default()
        },
    );
    let data = random_bytes(200_000, 5);
    let local = write_file(&c.dir, "in.bin", &data);
    c.mr_ok(&["fs", "put", local.to_str().unwrap(), "/f"]);
    let st = c.stat("/f");
    let b0 = &st["blocks"][0];
    let id = b0["id"].as_u64().unwrap();
    let holder = replicas(b0).remove(0);
    let p = c.block_file(&holder, id);
    let mut bytes = std::fs::read(&p).unwrap();
    bytes[1000] ^= 0x01;
    std::fs::write(&p, &bytes).unwrap();
    for args in [&["fs", "cat", "/f"][..], &["fs", "get", "/f", "-"][..]] {
        let out = c.mr(args);
        assert!(!out.status.success(), "{args:?} returned rotten bytes");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            // The first read finds the rot; once reported, the master
            // hands the corrupt copy to no reader and says so.
            err.contains(&format!("block {id}"))
                && (err.contains("CRC32C") || err.contains("mr admin fsck")),
            "{args:?}: {err}"
        );
    }
    assert_eq!(
        std::fs::read(&p).unwrap(),
        bytes,
        "the last replica was deleted"
    );
}

/// A replica whose own meta file agrees with its bytes but not with the
/// namespace (a stale copy under the same id, as a reused block id leaves)
/// is refused when read, reported, and replaced by a good copy: every read
/// is checked against the CRC the master holds (it used to be served, and
/// only the client's own check kept it out, silently, for ever).
#[test]
fn a_stale_replica_is_refused_reported_and_replaced() {
    let mut c = Cluster::start(
        "stale",
        Opts {
            workers: 2,
            replication: 2,
            ..Opts::default()
        },
    );
    let data = random_bytes(200_000, 6);
    let local = write_file(&c.dir, "in.bin", &data);
    c.mr_ok(&["fs", "put", local.to_str().unwrap(), "/f"]);
    let st = c.stat("/f");
    let id = st["blocks"][0]["id"].as_u64().unwrap();
    let victim = replicas(&st["blocks"][0]).remove(0);
    c.kill(&victim);
    let stale = random_bytes(data.len(), 7);
    let p = c.block_file(&victim, id);
    std::fs::write(&p, &stale).unwrap();
    let mut meta = (stale.len() as u64).to_le_bytes().to_vec();
    meta.extend_from_slice(&crc32c::crc32c(&stale).to_le_bytes());
    let mut mp = p.clone().into_os_string();
    mp.push(".meta");
    std::fs::write(&mp, meta).unwrap();
    c.start_proc(&victim);
    c.wait_alive(2, Duration::from_secs(30));
    c.wait_for(
        "the stale replica to be replaced",
        Duration::from_secs(30),
        |c| {
            // Caches dropped, so that each read picks a replica afresh.
            let _ = c.mr(&["cache", "rm", "/f"]);
            let out = c.dir.join("out.bin");
            c.mr_ok(&["fs", "get", "/f", out.to_str().unwrap()]);
            assert!(
                std::fs::read(&out).unwrap() == data,
                "a read returned wrong bytes"
            );
            replicas(&c.stat("/f")["blocks"][0]).len() == 2
                && std::fs::read(&p).is_ok_and(|b| b == data)
        },
    );
}

/// `mr admin safemode` and `mr admin fsck` on a real cluster: safe mode
/// ends by itself on an empty namespace, enter/leave by hand, and while
/// it is on a put, an rm and a job submission are refused with the reason
/// and the way out, reads going on; a healthy file passes fsck, and a
/// single-replica block whose copy is corrupt is listed missing with its
/// file, fsck then exiting non-zero. Heartbeats are slow so that the put's
/// "added" is still unsent when the corrupt read is reported: sent after
/// it, it must not make the copy good again.
#[test]
fn safemode_and_fsck_from_the_cli() {
    let c = Cluster::start(
        "fsck",
        Opts {
            heartbeat: "2s",
            dead_after: 4,
            ..Opts::default()
        },
    );
    c.wait_for("safe mode to end", Duration::from_secs(30), |c| {
        c.json(&["admin", "safemode", "get", "--json"])["safe_mode"] == false
    });
    let early = write_file(&c.dir, "early.txt", b"written before safe mode\n");
    let early = early.to_str().unwrap();
    c.mr_ok(&["fs", "put", early, "/early"]);
    let s = c.json(&["admin", "safemode", "enter", "--json"]);
    assert!(s["safe_mode"] == true && s["manual"] == true, "{s}");
    for (args, what) in [
        (vec!["fs", "put", early, "/late"], "cannot create /late"),
        (vec!["fs", "rm", "/early"], "cannot delete /early"),
        (
            vec![
                "job",
                "submit",
                "wordcount",
                "--input",
                "/early",
                "--output",
                "/wc",
            ],
            "cannot submit a job writing /wc",
        ),
    ] {
        let o = c.mr(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} went through in safe mode");
        assert!(
            err.contains(&format!("{what}: the master is in safe mode"))
                && err.contains("mr admin safemode leave"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(
        c.mr_ok(&["fs", "cat", "/early"]),
        "written before safe mode\n"
    );
    assert!(!c.mr(&["fs", "stat", "/late"]).status.success());
    let s = c.json(&["admin", "safemode", "leave", "--json"]);
    assert_eq!(s["safe_mode"], false, "{s}");
    c.mr_ok(&["fs", "rm", "/early"]);
    let data = random_bytes(100_000, 5);
    let local = write_file(&c.dir, "one.bin", &data);
    c.mr_ok(&[
        "fs",
        "put",
        local.to_str().unwrap(),
        "/one",
        "--replication",
        "1",
    ]);
    let f = c.json(&["admin", "fsck", "--json"]);
    assert!(f["healthy"] == true && f["total_blocks"] == 1, "{f}");
    let st = c.stat("/one");
    let id = st["blocks"][0]["id"].as_u64().unwrap();
    let holder = replicas(&st["blocks"][0])[0].clone();
    let p = c.block_file(&holder, id);
    let mut bytes = std::fs::read(&p).unwrap();
    bytes[10] ^= 0x01;
    std::fs::write(&p, bytes).unwrap();
    let out = c.dir.join("one.out");
    let _ = c.mr(&["fs", "get", "/one", out.to_str().unwrap()]);
    if let Ok(got) = std::fs::read(&out) {
        assert!(got.is_empty() || got == data, "wrong bytes returned");
    }
    let missing = |c: &Cluster| {
        let o = c.mr(&["admin", "fsck", "--json"]);
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
        !o.status.success()
            && v["missing"][0]["block_id"] == id
            && v["missing"][0]["files"] == serde_json::json!(["/one"])
    };
    c.wait_for(
        "the block to be listed missing",
        Duration::from_secs(30),
        missing,
    );
    // The holder's next heartbeat carries whatever it had not reported:
    // the block stays missing after it.
    let beat = |c: &Cluster| {
        let v = c.json(&["cluster", "status", "--json"]);
        let w = v["workers"].as_array().unwrap().iter();
        w.filter(|w| w["name"] == holder.as_str())
            .map(|w| w["last_heartbeat_ms"].as_u64().unwrap())
            .next()
            .unwrap()
    };
    let seen = beat(&c);
    c.wait_for("a heartbeat of the holder", Duration::from_secs(30), |c| {
        beat(c) > seen
    });
    assert!(missing(&c), "the corrupt copy was taken for good again");
}

#[test]
fn wrong_token_and_bad_paths_are_refused() {
    let c = Cluster::start(
        "refuse",
        Opts {
            workers: 2,
            replication: 2,
            ..Opts::default()
        },
    );
    let bad = c.dir.join("bad.toml");
    let text = std::fs::read_to_string(&c.config).unwrap();
    std::fs::write(&bad, text.replace(&c.token, "not-the-token")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mr"))
        .arg("--config")
        .arg(&bad)
        .args(["fs", "ls", "/"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("wrong cluster token"), "{err}");

    let local = write_file(&c.dir, "x", b"x");
    for path in ["/a/../b", "relative/path", "/"] {
        let out = c.mr(&["fs", "put", local.to_str().unwrap(), path]);
        assert!(!out.status.success(), "{path} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("error"), "{err}");
    }
    let out = c.mr(&["fs", "put", local.to_str().unwrap(), "/a/../b"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains(".."));
    // Nothing was created by the refusals.
    assert_eq!(
        c.json(&["fs", "ls", "/", "--json"])
            .as_array()
            .unwrap()
            .len(),
        0
    );
    let out = c.mr(&[
        "fs",
        "put",
        local.to_str().unwrap(),
        "/x",
        "--block-size",
        "1KiB",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("block size"));
    let out = c.mr(&[
        "fs",
        "put",
        local.to_str().unwrap(),
        "/x",
        "--replication",
        "0",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("replication"));
}

#[test]
fn lru_evicts_by_bytes_pins_survive_floods_and_restarts() {
    let mut c = Cluster::start(
        "lru",
        Opts {
            workers: 1,
            racks: 1,
            replication: 1,
            block_size: "256KiB",
            cache: "768KiB",
            ..Opts::default()
        },
    );
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        let f = write_file(&c.dir, name, &random_bytes(512 << 10, 4 + i as u64));
        c.mr_ok(&["fs", "put", f.to_str().unwrap(), &format!("/{name}")]);
    }
    let count = |c: &Cluster, p: &str, field: &str| -> usize {
        c.stat(p)["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| !b[field].as_array().unwrap().is_empty())
            .count()
    };
    let cached = |c: &Cluster, p: &str| count(c, p, "cached_on");
    let used = |c: &Cluster| {
        c.status()["workers"][0]["cache_used_bytes"]
            .as_u64()
            .unwrap()
    };
    // Reads fill the LRU: 6 blocks of 256 KiB into 768 KiB keep the last 3.
    let read = |c: &Cluster, p: &str| assert!(c.mr(&["fs", "cat", p]).status.success());
    for p in ["/a", "/b", "/c"] {
        read(&c, p);
    }
    c.wait_for("the LRU full, /a evicted", Duration::from_secs(10), |c| {
        used(c) == 768 << 10 && cached(c, "/a") == 0 && cached(c, "/c") == 2
    });

    // A pin: both blocks of /a, never evicted by a flood of reads.
    let out: serde_json::Value =
        serde_json::from_str(&c.mr_ok(&["cache", "add", "/a", "--json"])).unwrap();
    assert_eq!(
        (out["blocks"].as_u64(), out["bytes"].as_u64()),
        (Some(2), Some(512 << 10))
    );
    assert_eq!(out["workers"], serde_json::json!(["w1"]));
    c.wait_for("/a pinned and cached", Duration::from_secs(10), |c| {
        cached(c, "/a") == 2
            && count(c, "/a", "pinned_on") == 2
            && c.status()["workers"][0]["cache_pinned_bytes"] == 512 << 10
    });
    for _ in 0..3 {
        for p in ["/b", "/c"] {
            read(&c, p);
        }
    }
    c.wait_for("the flood reported", Duration::from_secs(10), |c| {
        used(c) == 768 << 10 && cached(c, "/c") == 1
    });
    assert_eq!(
        cached(&c, "/a"),
        2,
        "a flood of reads evicted a pinned block"
    );

    // A pin that does not fit beside the others is refused, all or nothing.
    let out = c.mr(&["cache", "add", "/b"]);
    assert!(
        !out.status.success(),
        "a pin beyond the capacity was accepted"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fits in the cache of no worker"), "{err}");
    assert_eq!(count(&c, "/b", "pinned_on"), 0);
    // ... and so is a resize below the pinned bytes.
    let out = c.mr(&["cache", "resize", "256KiB"]);
    assert!(
        !out.status.success(),
        "a resize below the pins was accepted"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("pins"));

    // A restart empties the worker's cache: the master pins /a again.
    c.kill("w1");
    c.start_proc("w1");
    c.wait_alive(1, Duration::from_secs(20));
    c.wait_for(
        "/a pinned again after the restart",
        Duration::from_secs(15),
        |c| cached(c, "/a") == 2 && count(c, "/a", "pinned_on") == 2,
    );

    // rm unpins and drops: the blocks are evictable and gone.
    c.mr_ok(&["cache", "rm", "/a"]);
    c.wait_for("/a unpinned and dropped", Duration::from_secs(10), |c| {
        cached(c, "/a") == 0
            && count(c, "/a", "pinned_on") == 0
            && c.status()["workers"][0]["cache_pinned_bytes"] == 0
    });
}

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

/// The lease tests' block size: the smallest the cluster allows.
const LEASE_BLOCK: usize = 64 << 10;

/// The namespace's blocks, and every worker's stored blocks (those of
/// files being written too).
fn stored_blocks(c: &Cluster) -> (u64, Vec<u64>) {
    let s = c.status();
    let per_worker = s["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["blocks"].as_u64().unwrap())
        .collect();
    (s["blocks"].as_u64().unwrap(), per_worker)
}

/// `mr fs put - PATH` as a child reading a pipe the test feeds with
/// `data` (four whole blocks) and keeps open, so that the put waits for
/// more once it has sent them; SIGKILLed once every worker (each holds a
/// replica of every block) reports three blocks besides the namespace's.
/// The put has two blocks in flight, the third starting once the first is
/// done and the fourth once the second is: any three a worker stored hold
/// the first two, so a recovery keeps two to four blocks. The pipe is
/// returned, open until the caller drops it.
fn killed_put_midway(c: &Cluster, path: &str, data: &[u8]) -> ChildStdin {
    // Blocks of replaced files are deleted after the fact: counted until
    // then, they would pass for the put's.
    c.wait_for(
        "every worker to store the namespace's blocks and no others",
        Duration::from_secs(30),
        |c| {
            let (ns, stored) = stored_blocks(c);
            stored.iter().all(|&n| n == ns)
        },
    );
    let mut put = Command::new(env!("CARGO_BIN_EXE_mr"))
        .arg("--config")
        .arg(&c.config)
        .args(["fs", "put", "-", path])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut pipe = put.stdin.take().unwrap();
    pipe.write_all(data).unwrap();
    pipe.flush().unwrap();
    c.wait_for(
        &format!("three blocks of {path} stored on every worker"),
        Duration::from_secs(30),
        |c| {
            let (ns, stored) = stored_blocks(c);
            stored.iter().all(|&n| n >= ns + 3)
        },
    );
    put.kill().unwrap();
    put.wait().unwrap();
    pipe
}

/// What a recovery closed `path` at must be whole blocks of what the put
/// was fed, in order, the first two at least (see `killed_put_midway`).
fn assert_acknowledged_prefix(c: &Cluster, path: &str, data: &[u8]) -> usize {
    let got = c.dir.join(format!("got-{}", path.replace('/', "_")));
    c.mr_ok(&["fs", "get", path, got.to_str().unwrap()]);
    let got = std::fs::read(&got).unwrap();
    let n = got.len();
    assert!(
        n.is_multiple_of(LEASE_BLOCK) && (2..=4).contains(&(n / LEASE_BLOCK)),
        "{path} closed at {n} bytes, not 2 to 4 whole blocks"
    );
    assert!(got == data[..n], "{path}: not the put's first {n} bytes");
    n
}

/// Issue 39: a put killed mid-write held its path until the master
/// restarted. Past `lease_soft` of silence the next create of the path
/// recovers the lease (HDFS's soft limit): `put -f` then replaces the
/// file, and a plain put finds the dead writer's acknowledged blocks as
/// the file and says so.
#[test]
fn a_killed_puts_lease_is_taken_over_after_the_soft_limit() {
    let c = Cluster::start(
        "lease-soft",
        Opts {
            workers: 2,
            racks: 1,
            block_size: "64KiB",
            replication: 2,
            master_toml: "lease_soft = \"2s\"",
            ..Opts::default()
        },
    );
    let data = random_bytes(4 * LEASE_BLOCK, 51);
    let other = random_bytes(100_000, 52);
    let local = write_file(&c.dir, "other.bin", &other);
    let local = local.to_str().unwrap();

    let _pipe = killed_put_midway(&c, "/lease/a", &data);
    // Refused while the dead writer is within its soft limit (saying
    // when it may be taken over), then taken over.
    c.wait_for(
        "put -f of /lease/a to succeed",
        Duration::from_secs(30),
        |c| {
            let out = c.mr(&["fs", "put", "-f", local, "/lease/a"]);
            if out.status.success() {
                return true;
            }
            let e = String::from_utf8_lossy(&out.stderr);
            assert!(
                e.contains("being written by another client") && e.contains("may be recovered in"),
                "{e}"
            );
            false
        },
    );
    assert!(c.mr(&["fs", "cat", "/lease/a"]).stdout == other);

    let _pipe = killed_put_midway(&c, "/lease/b", &data);
    let mut last = String::new();
    c.wait_for(
        "a put of /lease/b to find its dead writer's file",
        Duration::from_secs(30),
        |c| {
            let out = c.mr(&["fs", "put", local, "/lease/b"]);
            assert!(!out.status.success(), "a put over the dead writer's file");
            last = String::from_utf8_lossy(&out.stderr).into_owned();
            !last.contains("being written by another client")
        },
    );
    assert!(
        last.contains("already exists")
            && last.contains("the previous writer's lease was recovered")
            && last.contains("closed at"),
        "{last}"
    );
    assert_acknowledged_prefix(&c, "/lease/b", &data);

    // A live writer slower than the soft limit keeps its path: its client
    // renews the lease every half soft limit (HDFS's LeaseRenewer).
    c.wait_for(
        "every worker to store the namespace's blocks and no others",
        Duration::from_secs(30),
        |c| {
            let (ns, stored) = stored_blocks(c);
            stored.iter().all(|&n| n == ns)
        },
    );
    let mut put = Command::new(env!("CARGO_BIN_EXE_mr"))
        .arg("--config")
        .arg(&c.config)
        .args(["fs", "put", "-", "/lease/slow"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = put.stdin.take().unwrap();
    // Two blocks: the put sends a block once the next one is read (two in
    // flight), so the first is stored while the put waits for more.
    let head = 2 * LEASE_BLOCK + 1000;
    pipe.write_all(&data[..head]).unwrap();
    pipe.flush().unwrap();
    c.wait_for(
        "the slow put's first block on every worker",
        Duration::from_secs(30),
        |c| {
            let (ns, stored) = stored_blocks(c);
            stored.iter().all(|&n| n > ns)
        },
    );
    let taken = |c: &Cluster| {
        let out = c.mr(&["fs", "put", "-f", local, "/lease/slow"]);
        let e = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            !out.status.success() && e.contains("being written by another client"),
            "the slow put's path was taken: {e}"
        );
    };
    taken(&c);
    // The soft limit is a span of time, so time must pass: 2.5 of them,
    // with no block written meanwhile.
    std::thread::sleep(Duration::from_secs(5));
    taken(&c);
    pipe.write_all(&data[head..]).unwrap();
    drop(pipe);
    let out = put.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(c.mr(&["fs", "cat", "/lease/slow"]).stdout == data);
}

/// `mr admin recover-lease` closes a killed put's file at once, long
/// before the soft limit: what the workers acknowledged reads back byte
/// for byte, what they did not is gone; a put killed before its first
/// block leaves nothing.
#[test]
fn recover_lease_closes_a_killed_put_at_its_acknowledged_blocks() {
    let c = Cluster::start(
        "lease-recover",
        Opts {
            workers: 2,
            racks: 1,
            block_size: "64KiB",
            replication: 2,
            ..Opts::default()
        },
    );
    let data = random_bytes(4 * LEASE_BLOCK, 53);
    let _pipe = killed_put_midway(&c, "/lease/c", &data);
    let r = c.json(&["admin", "recover-lease", "/lease/c", "--json"]);
    assert_eq!(r["outcome"], "closed", "{r}");
    let n = assert_acknowledged_prefix(&c, "/lease/c", &data);
    assert_eq!(r["bytes"].as_u64(), Some(n as u64), "{r}");
    assert_eq!(r["blocks"].as_u64(), Some((n / LEASE_BLOCK) as u64), "{r}");
    assert_eq!(c.stat("/lease/c")["size"].as_u64(), Some(n as u64));
    let again = c.mr_ok(&["admin", "recover-lease", "/lease/c"]);
    assert_eq!(again.trim(), "/lease/c: no open write");

    // A put that has created its file and waits for its first block.
    let mut put = Command::new(env!("CARGO_BIN_EXE_mr"))
        .arg("--config")
        .arg(&c.config)
        .args(["fs", "put", "-", "/lease/d"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut pipe = put.stdin.take().unwrap();
    pipe.write_all(b"not a whole block").unwrap();
    pipe.flush().unwrap();
    let mut said = String::new();
    c.wait_for(
        "the put's create of /lease/d",
        Duration::from_secs(30),
        |c| {
            said = c.mr_ok(&["admin", "recover-lease", "/lease/d"]);
            !said.contains("no open write")
        },
    );
    assert!(
        said.contains("lease recovered") && said.contains("removed, nothing was acknowledged"),
        "{said}"
    );
    put.kill().unwrap();
    put.wait().unwrap();
    drop(pipe);
    assert!(!c.mr(&["fs", "stat", "/lease/d"]).status.success());
}
