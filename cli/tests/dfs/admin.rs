//! `mr admin safemode` and `fsck`, and what the master refuses.

use super::*;

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
