//! `mr config init`: the cluster file it writes loads with the project's
//! config loader and says what the flags said; bad flags and an existing
//! file are refused with errors naming them.

use common::config::ClusterConfig;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mr-cfg-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn mr(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mr"))
        .args(args)
        .env_remove("MR_CONFIG")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_written_file_loads_and_round_trips_the_flags() {
    let d = scratch("round-trip");
    let out = d.join("cluster.toml");
    let text = init_with_every_flag(&d, &out);
    every_flag_loads_back(&d, &out);
    replaced_only_with_force(&out, &text);
    std::fs::remove_dir_all(&d).unwrap();
}

/// `mr config init` with every flag, into `out`; the file's text.
fn init_with_every_flag(d: &Path, out: &Path) -> String {
    let (ok, stdout, err) = mr(&[
        "config",
        "init",
        "--out",
        s(out),
        "--comment",
        "written by the test",
        "--token",
        "sekrit",
        "--master",
        "127.0.0.1:7070",
        "--http",
        "127.0.0.1:7080",
        "--master-dir",
        s(&d.join("master")),
        "--block-size",
        "16MiB",
        "--replication",
        "2",
        "--scan-interval",
        "1h",
        "--heartbeat",
        "250ms",
        "--dead-after",
        "7",
        "--scheduler",
        "delay",
        "--speculative",
        "--network",
        "emulated-lan",
        "--network-comment",
        "what the test built",
        "--host-rate",
        "200mbit",
        "--uplink-rate",
        "50mbit",
        "--cache",
        "32MiB",
        "--workers-dir",
        s(d),
        "--worker",
        "name=w1,addr=127.0.0.1:7101,rack=r1",
        "--worker",
        "name=w2,addr=127.0.0.1:7102,rack=r2,slots=4,cache=1GiB,data_dir=/srv/w2",
        "--worker",
        "name=w3,addr=127.0.0.1:7103,rack=r1,map_slots=3,reduce_slots=1",
    ]);
    assert!(ok, "{err}");
    assert!(stdout.contains("3 workers"), "{stdout}");
    let text = std::fs::read_to_string(out).unwrap();
    assert!(text.starts_with("# written by the test\n"), "{text}");
    assert!(
        text.contains("# what the test built\n[network]\n"),
        "{text}"
    );
    text
}

/// The file `init_with_every_flag` wrote loads with every flag's value.
fn every_flag_loads_back(d: &Path, out: &Path) {
    let c = ClusterConfig::load(out).unwrap();
    assert_eq!(c.token, "sekrit");
    assert_eq!(c.master.addr, "127.0.0.1:7070");
    assert_eq!(c.master.http_addr.as_deref(), Some("127.0.0.1:7080"));
    assert_eq!(c.master.data_dir, d.join("master"));
    assert_eq!(c.dfs.block_size, 16 << 20);
    assert_eq!(c.dfs.replication, 2);
    assert_eq!(c.dfs.scan_interval, Duration::from_secs(3600));
    assert_eq!(c.heartbeat.interval, Duration::from_millis(250));
    assert_eq!(c.heartbeat.dead_after, 7);
    assert_eq!(c.scheduler.name, "delay");
    assert!(c.scheduler.speculative);
    assert_eq!(c.network.kind, "emulated-lan");
    assert_eq!(c.network.host_rate, "200mbit");
    assert_eq!(c.network.uplink_rate, "50mbit");
    assert!(c.tls.is_none());
    let w: Vec<_> = c
        .workers
        .iter()
        .map(|w| {
            (
                w.name.as_str(),
                w.addr.as_str(),
                w.rack.as_str(),
                w.map_slots,
                w.reduce_slots,
                w.cache,
                w.data_dir.clone(),
            )
        })
        .collect();
    assert_eq!(
        w,
        vec![
            ("w1", "127.0.0.1:7101", "r1", 2, 2, 32 << 20, d.join("w1")),
            (
                "w2",
                "127.0.0.1:7102",
                "r2",
                4,
                4,
                1 << 30,
                "/srv/w2".into()
            ),
            ("w3", "127.0.0.1:7103", "r1", 3, 1, 32 << 20, d.join("w3")),
        ]
    );
}

/// An existing file is replaced only with --force, with a new token, and
/// stays private; the check mode reads it.
fn replaced_only_with_force(out: &Path, text: &str) {
    // Not over an existing file without --force; with it, a new token.
    let again = [
        "config",
        "init",
        "--out",
        s(out),
        "--master",
        "127.0.0.1:7070",
        "--master-dir",
        "/m",
    ];
    // It holds the token: only its owner may read it, replaced or not.
    let mode = |p: &Path| {
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(p).unwrap().permissions())
            & 0o777
    };
    assert_eq!(mode(out), 0o600);
    std::fs::set_permissions(out, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let (ok, _, err) = mr(&again);
    assert!(!ok);
    assert!(err.contains("exists: pass --force"), "{err}");
    assert_eq!(std::fs::read_to_string(out).unwrap(), text);
    let (ok, _, err) = mr(&[&again[..], &["--force"]].concat());
    assert!(ok, "{err}");
    assert_eq!(mode(out), 0o600, "a replaced file is made private too");
    let c = ClusterConfig::load(out).unwrap();
    assert_eq!(c.token.len(), 32, "a random token: {}", c.token);
    assert!(c.workers.is_empty());
    // Left out: the loader's defaults, and no section a launcher did not ask for.
    assert_eq!(c.dfs.block_size, 64 << 20);
    assert_eq!(c.heartbeat.dead_after, 5);
    let text = std::fs::read_to_string(out).unwrap();
    assert!(
        !text.contains("[scheduler]") && !text.contains("[network]"),
        "{text}"
    );
    // The check mode (no --master) reads the file --config names.
    let (ok, stdout, err) = mr(&["-c", s(out), "config", "init"]);
    assert!(ok && stdout.contains("valid"), "{stdout}{err}");
}

#[test]
fn bad_values_are_refused_naming_their_flag_and_nothing_is_written() {
    let d = scratch("bad");
    let out = d.join("cluster.toml");
    let base = [
        "config",
        "init",
        "--out",
        s(&out),
        "--master-dir",
        "/m",
        "--workers-dir",
        "/w",
    ];
    let cases: &[(&[&str], &str)] = &[
        (&["--master", "localhost"], "--master"),
        (
            &["--master", "127.0.0.1:1", "--http", "127.0.0.1:1"],
            "--http",
        ),
        (
            &["--master", "127.0.0.1:1", "--block-size", "huge"],
            "--block-size",
        ),
        (
            &["--master", "127.0.0.1:1", "--block-size", "1KiB"],
            "--block-size",
        ),
        (
            &["--master", "127.0.0.1:1", "--replication", "0"],
            "--replication",
        ),
        (
            &["--master", "127.0.0.1:1", "--heartbeat", "1ms"],
            "--heartbeat",
        ),
        (
            &["--master", "127.0.0.1:1", "--dead-after", "1"],
            "--dead-after",
        ),
        (
            &["--master", "127.0.0.1:1", "--uplink-rate", "fast"],
            "--uplink-rate",
        ),
        (
            &["--master", "127.0.0.1:1", "--scheduler", "nope"],
            "--scheduler",
        ),
        (
            &["--master", "127.0.0.1:1", "--worker", "name=w1,rack=r1"],
            "addr",
        ),
        (
            &[
                "--master",
                "127.0.0.1:1",
                "--worker",
                "name=w1,addr=x,rack=r1",
            ],
            "--worker",
        ),
        (
            &[
                "--master",
                "127.0.0.1:1",
                "--worker",
                "name=w1,addr=127.0.0.1:2,rack=r1,colour=blue",
            ],
            "colour",
        ),
        (
            &[
                "--master",
                "127.0.0.1:1",
                "--worker",
                "name=w1,addr=127.0.0.1:2,rack=r1",
                "--worker",
                "name=w1,addr=127.0.0.1:3,rack=r1",
            ],
            "appears twice",
        ),
        (
            &["--worker", "name=w1,addr=127.0.0.1:2,rack=r1"],
            "--master",
        ),
    ];
    for (extra, want) in cases {
        let (ok, _, err) = mr(&[&base[..], extra].concat());
        assert!(!ok, "{extra:?} was accepted");
        assert!(err.contains(want), "{extra:?}: {err}");
        assert!(!out.exists(), "{extra:?} wrote a file");
    }
    std::fs::remove_dir_all(&d).unwrap();
}
