//! The block cache: bytes-bounded LRU eviction and pins.

use super::*;

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
