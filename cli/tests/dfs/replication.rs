//! Replicas: rack-aware placement, a dead worker or pipeline target, a
//! restarted master.

use super::*;

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
