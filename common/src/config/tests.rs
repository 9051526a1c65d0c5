use super::*;

const BASE: &str = r#"
token = "t"
[master]
addr = "127.0.0.1:7070"
data_dir = "/tmp/m"
[[workers]]
name = "w1"
addr = "127.0.0.1:7101"
data_dir = "/tmp/w1"
cache = "1MiB"
"#;

/// The default task timeout stands beside any heartbeat interval (a
/// cluster of 600 s heartbeats once refused to start), and is never
/// less than two intervals in effect.
#[test]
fn the_task_timeout_in_effect_outlasts_two_heartbeats() {
    let c = ClusterConfig::parse(&format!("{BASE}\n[heartbeat]\ninterval = \"600s\"\n")).unwrap();
    assert_eq!(c.task_timeout(), Duration::from_secs(1200));
    let c = ClusterConfig::parse(&format!("{BASE}\n[jobs]\ntask_timeout = \"2s\"\n")).unwrap();
    assert_eq!(c.task_timeout(), Duration::from_secs(2));
    let c = ClusterConfig::parse(&format!("{BASE}\n[jobs]\ntask_timeout = \"0s\"\n")).unwrap();
    assert!(c.task_timeout().is_zero());
    assert!(ClusterConfig::parse(&format!("{BASE}\n[dfs]\nstream_timeout = \"0s\"\n")).is_err());
}

#[test]
fn debug_never_prints_a_token_and_users_are_checked() {
    let text = format!(
        "{}\n[[users]]\nname = \"ann\"\ntoken = \"ann-secret\"\nrole = \"user\"\n",
        BASE.replace(
            "token = \"t\"",
            "token = \"adm-secret\"\nworker_token = \"wrk-secret\""
        )
    );
    let c = ClusterConfig::parse(&text).unwrap();
    assert_eq!(c.users.len(), 1);
    assert_eq!(c.worker_secret(), "wrk-secret");
    let shown = format!("{c:?} {c:#?}");
    assert!(!shown.contains("secret"), "{shown}");
    assert!(shown.contains("ann"));
    let dup = text.replace("ann-secret", "adm-secret");
    assert!(ClusterConfig::parse(&dup)
        .unwrap_err()
        .to_string()
        .contains("another's token"));
    let reserved = text.replace("name = \"ann\"", "name = \"admin\"");
    assert!(ClusterConfig::parse(&reserved)
        .unwrap_err()
        .to_string()
        .contains("reserved"));
    let role = text.replace("role = \"user\"", "role = \"root\"");
    assert!(ClusterConfig::parse(&role).is_err());
}

#[test]
fn addresses_may_be_dns_names_as_orchestrators_give() {
    let named = BASE
        .replace("127.0.0.1:7070", "mr-master:7070")
        .replace("127.0.0.1:7101", "mr-worker-0.mr-worker.mr.svc:7100");
    let c = ClusterConfig::parse(&named).unwrap();
    assert_eq!(c.master.addr, "mr-master:7070");
    assert_eq!(c.workers[0].addr, "mr-worker-0.mr-worker.mr.svc:7100");
    for bad in [
        "mr-master",
        "mr-master:",
        "mr-master:70700",
        "-bad:7070",
        "a..b:7070",
        "under_score:7070",
        "10.0.0.300:7070",
        ":7070",
    ] {
        let text = BASE.replace("127.0.0.1:7070", bad);
        assert!(ClusterConfig::parse(&text).is_err(), "{bad} was accepted");
    }
}

#[test]
fn defaults() {
    let c = ClusterConfig::parse(BASE).unwrap();
    assert_eq!(c.dfs.block_size, 64 << 20);
    assert_eq!(c.dfs.replication, 3);
    assert_eq!(c.heartbeat.interval, Duration::from_secs(1));
    assert_eq!(c.workers[0].cache, 1 << 20);
    assert_eq!(c.workers[0].map_slots, 2);
    assert_eq!(c.master.http_addr, None);
}

#[test]
fn lease_limits_default_to_hdfs_and_are_checked() {
    let c = ClusterConfig::parse(BASE).unwrap();
    assert_eq!(c.master.lease_soft, Duration::from_secs(60));
    assert_eq!(c.master.lease_hard, Duration::from_secs(3600));
    let with = |soft: &str, hard: &str| {
        BASE.replace(
            "data_dir = \"/tmp/m\"",
            &format!("data_dir = \"/tmp/m\"\nlease_soft = \"{soft}\"\nlease_hard = \"{hard}\""),
        )
    };
    let c = ClusterConfig::parse(&with("2s", "10s")).unwrap();
    assert_eq!(
        (c.master.lease_soft, c.master.lease_hard),
        (Duration::from_secs(2), Duration::from_secs(10))
    );
    let e = ClusterConfig::parse(&with("10s", "2s")).unwrap_err();
    assert!(e.to_string().contains("lease_soft"), "{e}");
    assert!(ClusterConfig::parse(&with("0s", "2s")).is_err());
    assert!(ClusterConfig::parse(&with("2s", "2s")).is_ok());
}

#[test]
fn speculative_is_off_by_default_and_parsed() {
    assert!(!ClusterConfig::parse(BASE).unwrap().scheduler.speculative);
    let on = format!("{BASE}[scheduler]\nspeculative = true\n");
    assert!(ClusterConfig::parse(&on).unwrap().scheduler.speculative);
    let typo = format!("{BASE}[scheduler]\nspeculation = true\n");
    assert!(
        ClusterConfig::parse(&typo).is_err(),
        "unknown fields are refused"
    );
}

#[test]
fn http_addr() {
    let with = |a: &str| {
        BASE.replace(
            "data_dir = \"/tmp/m\"",
            &format!("data_dir = \"/tmp/m\"\nhttp_addr = \"{a}\""),
        )
    };
    let c = ClusterConfig::parse(&with("127.0.0.1:7080")).unwrap();
    assert_eq!(c.master.http_addr.as_deref(), Some("127.0.0.1:7080"));
    let e = ClusterConfig::parse(&with("nowhere")).unwrap_err();
    assert!(e.to_string().contains("http_addr"), "{e}");
    let e = ClusterConfig::parse(&with("127.0.0.1:7070")).unwrap_err();
    assert!(e.to_string().contains("own port"), "{e}");
}

#[test]
fn refuses_bad_fields() {
    let e = ClusterConfig::parse(&BASE.replace("\"t\"", "\"\"")).unwrap_err();
    assert!(e.to_string().contains("token"));
    let e = ClusterConfig::parse(&format!("{BASE}\n[dfs]\nblock_size = \"1KiB\"\n")).unwrap_err();
    assert!(e.to_string().contains("block size"), "{e}");
    let e = ClusterConfig::parse(&format!("{BASE}\nbogus = 1\n")).unwrap_err();
    assert!(e.to_string().contains("bogus"), "{e}");
    let dup = format!(
        "{BASE}\n[[workers]]\nname = \"w1\"\naddr = \"127.0.0.1:7102\"\ndata_dir = \"/x\"\n"
    );
    assert!(ClusterConfig::parse(&dup)
        .unwrap_err()
        .to_string()
        .contains("twice"));
}

/// Several metadata directories: `data_dir` first, none by default;
/// the same directory twice, or one inside another, is refused with
/// both named.
#[test]
fn metadata_dirs_are_distinct_and_not_nested() {
    assert!(ClusterConfig::parse(BASE)
        .unwrap()
        .master
        .data_dirs
        .is_empty());
    let with = |dirs: &str| {
        BASE.replace(
            "data_dir = \"/tmp/m\"",
            &format!("data_dir = \"/tmp/m\"\ndata_dirs = {dirs}"),
        )
    };
    let c = ClusterConfig::parse(&with(r#"["/b/m", "/c/m"]"#)).unwrap();
    assert_eq!(
        c.master.metadata_dirs(),
        [
            PathBuf::from("/tmp/m"),
            PathBuf::from("/b/m"),
            PathBuf::from("/c/m")
        ]
    );
    // Siblings sharing a prefix are not nested.
    assert!(ClusterConfig::parse(&with(r#"["/tmp/m2"]"#)).is_ok());
    for (dirs, both) in [
        (r#"["/tmp/m"]"#, ["/tmp/m", "/tmp/m"]),
        (r#"["/tmp/m/"]"#, ["/tmp/m", "/tmp/m/"]),
        (r#"["/b", "/c", "/b"]"#, ["/b", "/b"]),
        (r#"["/b", "/b/./"]"#, ["/b", "/b/./"]),
    ] {
        let e = ClusterConfig::parse(&with(dirs)).unwrap_err().to_string();
        assert!(e.contains("the same directory"), "{dirs}: {e}");
        assert!(e.contains(both[0]) && e.contains(both[1]), "{dirs}: {e}");
    }
    for (dirs, inner, outer) in [
        (r#"["/tmp/m/copy"]"#, "/tmp/m/copy", "/tmp/m"),
        (r#"["/tmp"]"#, "/tmp/m", "/tmp"),
        (r#"["/b/c", "/b"]"#, "/b/c", "/b"),
    ] {
        let e = ClusterConfig::parse(&with(dirs)).unwrap_err().to_string();
        assert!(
            e.contains(&format!("{inner} is inside {outer}")),
            "{dirs}: {e}"
        );
    }
}

/// The scanner's first pass and throttle are settings, and a rate that
/// would never finish (or never pause) is refused by name.
#[test]
fn scanner_keys_are_parsed_and_bounded() {
    let c = ClusterConfig::parse(BASE).unwrap();
    assert_eq!(c.dfs.scan_first_delay, Duration::from_secs(60));
    assert_eq!(c.dfs.scan_rate, 16 << 20);
    let set = |k: &str| format!("{BASE}[dfs]\n{k}\n");
    let c = ClusterConfig::parse(&set("scan_first_delay = \"5s\"\nscan_rate = \"1MiB\"")).unwrap();
    assert_eq!(c.dfs.scan_first_delay, Duration::from_secs(5));
    assert_eq!(c.dfs.scan_rate, 1 << 20);
    for bad in [
        "scan_rate = \"0\"",
        "scan_rate = \"1KiB\"",
        "scan_rate = \"1TiB\"",
    ] {
        let e = ClusterConfig::parse(&set(bad)).unwrap_err();
        assert!(e.to_string().contains("dfs.scan_rate"), "{bad}: {e}");
    }
    let e = ClusterConfig::parse(&set("scan_interval = \"0s\"")).unwrap_err();
    assert!(e.to_string().contains("scan_interval"), "{e}");
}

/// Slot counts a worker could not honour are refused at load.
#[test]
fn slot_counts_are_bounded() {
    let with = |m: u32, r: u32| {
        BASE.replace(
            "cache = \"1MiB\"",
            &format!("cache = \"1MiB\"\nmap_slots = {m}\nreduce_slots = {r}"),
        )
    };
    assert!(ClusterConfig::parse(&with(0, 1)).is_ok());
    let e = ClusterConfig::parse(&with(0, 0)).unwrap_err();
    assert!(e.to_string().contains("no slots"), "{e}");
    let e = ClusterConfig::parse(&with(10_000, 2)).unwrap_err();
    assert!(e.to_string().contains("256"), "{e}");
}

/// An oversized `shuffle_memory` or sort buffer gets a clear error.
#[test]
fn shuffle_memory_and_sort_buffer_are_bounded() {
    assert_eq!(parse_shuffle_memory("300KiB").unwrap(), 300 << 10);
    let e = parse_shuffle_memory("1TiB").unwrap_err();
    assert!(e.contains("shuffle_memory") && e.contains("4GiB"), "{e}");
    assert!(parse_shuffle_memory("1KiB").is_err());
    assert!(parse_shuffle_memory("lots")
        .unwrap_err()
        .contains("bad shuffle_memory"));
    assert!(validate_sort_buffer(64 << 20).is_ok());
    assert!(validate_sort_buffer(4 << 30).unwrap_err().contains("4GiB"));
    assert!(validate_sort_buffer(1 << 10).is_err());
}
