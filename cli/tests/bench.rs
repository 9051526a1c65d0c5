//! `mr bench` end to end on a real loopback cluster: a small matrix over
//! every workload, its CSV with every column, the reports and plots, a
//! sweep, the cache resize it relies on, and bad options refused.

mod support;

use std::collections::HashMap;
use support::{Cluster, Opts};

fn cluster(name: &str) -> Cluster {
    Cluster::start(
        name,
        Opts {
            workers: 4,
            racks: 2,
            block_size: "256KiB",
            replication: 2,
            ..Opts::default()
        },
    )
}

/// The columns the issue names, each of which a row must carry.
const COLUMNS: &[&str] = &[
    "workload",
    "scheduler",
    "rep",
    "input_bytes",
    "maps",
    "reduces",
    "exec_time_s",
    "cache_local",
    "node_local",
    "cache_rack_local",
    "rack_local",
    "off_rack",
    "bytes_cache",
    "bytes_local",
    "bytes_remote",
    "bytes_remote_rack",
    "bytes_remote_off_rack",
    "bytes_shuffle",
    "map_response_mean_s",
    "map_response_p95_s",
    "workers",
    "config",
];

fn read_csv(path: &std::path::Path) -> Vec<HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines
        .map(|l| {
            // The config column is last and may be quoted; nothing else is.
            let mut f: Vec<String> = l
                .splitn(header.len(), ',')
                .map(|s| s.trim_matches('"').to_string())
                .collect();
            f.resize(header.len(), String::new());
            header.iter().cloned().zip(f).collect()
        })
        .collect()
}

#[test]
fn a_small_matrix_validates_every_run_and_writes_every_output() {
    let c = cluster("bench-matrix");
    let out = c.dir.join("results");
    let o = out.to_str().unwrap();
    let r = c.mr(&[
        "bench",
        "--workloads",
        "wordcount,sort,terasort,mixed",
        "--schedulers",
        "fifo,lsap",
        "--size",
        "2MiB",
        "--block-size",
        "256KiB",
        "--reps",
        "1",
        "--reducers",
        "2",
        "--jobs",
        "3",
        "--mean-interarrival",
        "200ms",
        "--out",
        o,
        "--quiet",
    ]);
    assert!(
        r.status.success(),
        "mr bench failed: {}\n{}",
        String::from_utf8_lossy(&r.stderr),
        c.logs_tail()
    );
    let rows = read_csv(&out.join("results.csv"));
    // 3 single-job workloads × 2 schedulers, and 3 mixed jobs × 2.
    assert_eq!(rows.len(), 12, "{rows:?}");
    for row in &rows {
        for col in COLUMNS {
            assert!(
                row.get(*col).is_some_and(|v| !v.is_empty()),
                "column {col} missing or empty in {row:?}"
            );
        }
        let n = |k: &str| row[k].parse::<u64>().unwrap();
        let levels: u64 = [
            "cache_local",
            "node_local",
            "cache_rack_local",
            "rack_local",
            "off_rack",
        ]
        .iter()
        .map(|k| n(k))
        .sum();
        assert_eq!(levels, n("maps"), "every map has one level: {row:?}");
        assert_eq!(
            n("bytes_remote"),
            n("bytes_remote_rack") + n("bytes_remote_off_rack")
        );
        assert_eq!(n("workers"), 4);
        assert!(row["exec_time_s"].parse::<f64>().unwrap() > 0.0);
        assert!(row["config"].contains("policy="), "{}", row["config"]);
    }
    let count = |w: &str, s: &str| {
        rows.iter()
            .filter(|r| r["workload"] == w && r["scheduler"] == s)
            .count()
    };
    for w in ["wordcount", "sort", "terasort"] {
        assert_eq!(count(w, "fifo"), 1);
        assert_eq!(count(w, "lsap"), 1);
    }
    assert_eq!(count("mixed", "fifo"), 3);
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    for w in [
        "## wordcount",
        "## sort",
        "## terasort",
        "## mixed",
        "| lsap |",
        "cores",
    ] {
        assert!(summary.contains(w), "summary lacks {w}:\n{summary}");
    }
    assert!(!summary.contains("Failed runs"), "{summary}");
    let hibench = std::fs::read_to_string(out.join("hibench.report")).unwrap();
    assert!(hibench.starts_with("Type"));
    assert_eq!(hibench.lines().count(), 13);
    for png in ["job-time.png", "locality.png"] {
        let b = std::fs::read(out.join(png)).unwrap();
        assert!(b.starts_with(b"\x89PNG"), "{png} is not a PNG");
    }
    // Every validated job's task history is kept, and calibrates the
    // simulator's model.
    let hist = out.join("history");
    assert_eq!(std::fs::read_dir(&hist).unwrap().count(), 12);
    let r = c.mr(&["sim", "calibrate", "--history", hist.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let model: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let compute: f64 = ["map_fixed_s", "compute_s_per_mib", "compute_s_per_out_mib"]
        .iter()
        .map(|k| model[k].as_f64().unwrap())
        .sum();
    assert!(compute > 0.0, "{model}");
    assert_eq!(model["bandwidth"].as_array().unwrap().len(), 5);
    // The benchmark puts back the policy it found.
    let s = c.mr_ok(&["admin", "scheduler", "show"]);
    assert!(s.starts_with("scheduler: fifo"), "{s}");
    // Outputs are cleaned up; inputs stay for the next run.
    let ls = c.mr_ok(&["fs", "ls", "/bench"]);
    assert!(
        ls.contains("/bench/input") && !ls.contains("/bench/out/"),
        "{ls}"
    );
}

#[test]
fn a_maps_sweep_and_cache_resize() {
    let c = cluster("bench-sweep");
    let out = c.dir.join("sweep");
    let r = c.mr(&[
        "bench",
        "sweep",
        "maps",
        "--values",
        "2,4",
        "--schedulers",
        "fifo",
        "--block-size",
        "256KiB",
        "--reps",
        "1",
        "--reducers",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let rows = read_csv(&out.join("sweep-maps.csv"));
    let maps: Vec<&str> = rows.iter().map(|r| r["maps"].as_str()).collect();
    assert_eq!(maps, ["2", "4"]);
    assert!(rows.iter().all(|r| r["sweep"] == "maps"));
    let md = std::fs::read_to_string(out.join("sweep-maps.md")).unwrap();
    assert!(md.contains("| fifo |"), "{md}");
    assert!(std::fs::read(out.join("sweep-maps.png"))
        .unwrap()
        .starts_with(b"\x89PNG"));

    // mr cache resize: the master's view changes at once, for one worker.
    let told = c.mr_ok(&["cache", "resize", "1MiB", "--worker", "w2"]);
    assert!(told.contains("w2"), "{told}");
    let st = c.status();
    let cap: HashMap<String, u64> = st["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["name"].as_str().unwrap().to_string(),
                w["cache_capacity_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(cap["w2"], 1 << 20);
    assert_eq!(cap["w1"], 8 << 20);
    assert!(!c
        .mr(&["cache", "resize", "1MiB", "--worker", "nobody"])
        .status
        .success());
}

#[test]
fn bad_options_are_refused_before_anything_runs() {
    let c = cluster("bench-bad");
    for (args, want) in [
        (&["bench", "--workloads", "grep"][..], "unknown workload"),
        (&["bench", "--schedulers", "nope"][..], "nope"),
        (&["bench", "--reps", "0"][..], "--reps"),
        (&["bench", "--cache", "hot"][..], "cold, cold-os or warm"),
        (&["bench", "sweep", "racks"][..], "unknown sweep"),
        (
            &["bench", "sweep", "maps", "--values", "0"][..],
            "map count",
        ),
        (&["bench", "paper", "late"][..], "unknown paper"),
        (&["bench", "paper", "lsap", "--reps", "0"][..], "--reps"),
    ] {
        let r = c.mr(args);
        assert!(!r.status.success(), "{args:?} succeeded");
        let e = String::from_utf8_lossy(&r.stderr);
        assert!(e.contains(want), "{args:?}: {e}");
    }
    // Nothing was generated.
    let ls = c.mr_ok(&["fs", "ls", "/"]);
    assert!(!ls.contains("/bench"), "{ls}");
}

/// `mr bench paper all --quick`: every paper's experiment end to end on
/// real jobs (one tiny run per cell), each report with its tables beside
/// the paper's, its CSV and its plot, and the simulator calibrated on the
/// runs' history.
#[test]
fn every_paper_experiment_runs_end_to_end_in_quick_mode() {
    let c = cluster("bench-paper");
    let out = c.dir.join("papers");
    let r = c.mr(&[
        "bench",
        "paper",
        "all",
        "--quick",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(
        r.status.success(),
        "mr bench paper failed: {}\n{}",
        String::from_utf8_lossy(&r.stderr),
        c.logs_tail()
    );
    for (name, labels, pngs) in [
        (
            "clqlmrs",
            &["fifo", "delay", "acl", "clqlmrs"][..],
            &["clqlmrs"][..],
        ),
        (
            "hybsmrp",
            &["fifo", "fair", "hybsmrp", "hybsmrp-sjf"][..],
            &["hybsmrp-wordcount", "hybsmrp-terasort"][..],
        ),
        (
            "matchmaking",
            &["fifo", "delay", "matchmaking"][..],
            &["matchmaking"][..],
        ),
        ("lsap", &["fifo", "lsap"][..], &["lsap"][..]),
        (
            "compat-nb",
            &["capacity", "compat-nb"][..],
            &["compat-nb"][..],
        ),
        (
            "simulator-vs-lan",
            &["fifo", "atlas", "compat-nb"][..],
            &[][..],
        ),
    ] {
        let md = std::fs::read_to_string(out.join(format!("{name}.md"))).unwrap();
        assert!(!md.contains("Failed cells"), "{name}: {md}");
        assert!(
            md.contains("## Beside the paper") || md.contains("## Rankings"),
            "{name}: {md}"
        );
        let rows = read_csv(&out.join(format!("{name}.csv")));
        for l in labels {
            assert!(
                rows.iter().any(|r| r["scheduler"] == *l
                    && (r["sweep"] == name || format!("{}-vs-lan", r["sweep"]) == name)),
                "{name}: no row of {l}"
            );
        }
        for p in pngs {
            assert!(
                std::fs::read(out.join(format!("{p}.png")))
                    .unwrap()
                    .starts_with(b"\x89PNG"),
                "{p}.png"
            );
            assert!(md.contains(&format!("]({p}.png)")), "{name}: {md}");
        }
    }
    // The LSAP experiment stored its inputs with 3 replicas.
    let rows = read_csv(&out.join("lsap.csv"));
    assert!(rows.iter().all(|r| r["workload"] == "wordcount"));
    let ls = c.mr_ok(&["fs", "ls", "/bench/input"]);
    assert!(ls.contains("-r3"), "{ls}");
    let md = std::fs::read_to_string(out.join("simulator-vs-lan.md")).unwrap();
    assert!(md.contains("Spearman"), "{md}");
    // --reuse makes a report again from its rows, running nothing.
    let before = std::fs::read_to_string(out.join("lsap.csv")).unwrap();
    let o = out.to_str().unwrap();
    c.mr_ok(&[
        "bench", "paper", "lsap", "--reuse", "--quick", "--out", o, "--quiet",
    ]);
    let md = std::fs::read_to_string(out.join("lsap.md")).unwrap();
    assert!(
        md.contains("Written by") && md.contains("report made again"),
        "{md}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("lsap.csv")).unwrap(),
        before
    );
    // Caches and policy put back.
    let st = c.status();
    assert!(st["workers"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w["cache_capacity_bytes"].as_u64() == Some(8 << 20)));
    assert!(c.mr_ok(&["admin", "scheduler", "show"]).contains("fifo"));
}

/// Every field `mr bench master --json` promises.
const MASTER_FIELDS: &[&str] = &[
    "workers",
    "heartbeat_interval_ms",
    "duration_s",
    "heartbeats",
    "heartbeats_failed",
    "heartbeats_per_s",
    "heartbeat_p50_ms",
    "heartbeat_p99_ms",
    "heartbeat_max_ms",
    "launches",
    "launches_per_s",
    "task_reports",
    "jobs_submitted",
    "jobs_succeeded",
    "sched_decision_mean_ms",
    "lock_holds_max_ms",
    "master_rss_mib",
    "master_rss_idle_mib",
    "bytes_per_worker",
    "blocks",
    "blocks_per_s",
    "bytes_per_block",
    "startup_s",
    "safemode_exit_s",
    "policy",
    "commit",
    "machine",
];

/// `mr bench master`: the real `mr-master` (beside `mr`) under 50 emulated
/// workers, a namespace of 2000 blocks and two small WordCount jobs kept
/// flowing for 3 s, then restarted. Only counts are checked, and timings
/// only for being there: the machine may be busy.
#[test]
fn bench_master_measures_the_real_master_under_emulated_workers() {
    let mr = std::path::PathBuf::from(env!("CARGO_BIN_EXE_mr"));
    assert!(
        mr.with_file_name("mr-master").exists(),
        "mr-master is missing beside {}: build the daemons first with `cargo build --workspace --bins` (scripts/test.sh does)",
        mr.display()
    );
    let trace = std::env::temp_dir().join(format!("mr-bench-trace-{}.csv", std::process::id()));
    let run = |args: &[&str]| {
        std::process::Command::new(&mr)
            .args(["-q", "bench", "master"])
            .args(args)
            .env_remove("MR_BIN_DIR")
            .output()
            .unwrap()
    };
    for (args, want) in [
        (&["--workers", "0"][..], "--workers must be at least 1"),
        (
            &["--heartbeat", "0s"][..],
            "--heartbeat must be at least 10ms",
        ),
    ] {
        let r = run(args);
        assert!(!r.status.success(), "{args:?} succeeded");
        let e = String::from_utf8_lossy(&r.stderr);
        assert!(e.contains(want), "{args:?}: {e}");
    }
    let r = run(&[
        "--workers",
        "50",
        "--heartbeat",
        "200ms",
        "--blocks",
        "2000",
        "--jobs",
        "2",
        "--tasks-per-job",
        "10",
        "--duration",
        "3s",
        "--json",
        "--latency-trace",
        trace.to_str().unwrap(),
    ]);
    assert!(
        r.status.success(),
        "mr bench master failed: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    for k in MASTER_FIELDS {
        assert!(v.get(*k).is_some(), "{k} missing: {v:#}");
    }
    let n = |k: &str| {
        v[k].as_f64()
            .unwrap_or_else(|| panic!("{k} is not a number: {v:#}"))
    };
    assert_eq!(n("workers"), 50.0);
    assert_eq!(n("heartbeat_interval_ms"), 200.0);
    assert_eq!(n("heartbeats_failed"), 0.0, "{v:#}");
    assert!(n("heartbeats") > 0.0, "{v:#}");
    // Two jobs of 10 maps and a reduce start in the window's first beats.
    assert!(n("launches") >= 20.0, "{v:#}");
    assert!(n("jobs_succeeded") >= 2.0, "{v:#}");
    assert_eq!(n("jobs_failed"), 0.0, "{v:#}");
    assert_eq!(n("blocks"), 2000.0);
    assert!(n("blocks_per_s") > 0.0);
    assert!(n("startup_s") > 0.0);
    assert!(n("safemode_exit_s") >= n("startup_s"), "{v:#}");
    // The blocks were reported again after the restart (the threshold).
    assert!(n("safemode_total_blocks") >= 2000.0, "{v:#}");
    assert!(
        n("safemode_reported_blocks") >= 0.999 * n("safemode_total_blocks"),
        "{v:#}"
    );
    assert!(n("master_rss_idle_mib") > 0.0);
    assert!(n("heartbeat_p50_ms") <= n("heartbeat_p99_ms"));
    assert!(n("heartbeat_p99_ms") <= n("heartbeat_max_ms"));
    let locks = v["lock_holds_max_ms"].as_object().unwrap();
    assert!((1..=5).contains(&locks.len()), "{v:#}");
    assert_eq!(v["policy"], "fifo");
    assert!(v["machine"]["cores"].as_u64().unwrap() >= 1);
    // The trace holds every heartbeat counted, second by second.
    let csv = std::fs::read_to_string(&trace).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("second,heartbeats,p50_ms,p99_ms,max_ms"));
    let beats: f64 = lines
        .map(|l| l.split(',').nth(1).unwrap().parse::<f64>().unwrap())
        .sum();
    assert_eq!(beats, n("heartbeats"), "{csv}");
    let _ = std::fs::remove_file(&trace);
}
