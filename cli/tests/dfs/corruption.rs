//! Rotten replicas: found by the scanner or a read, refused, replaced.

use super::*;

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
